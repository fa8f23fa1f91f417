"""Job limits: the largest request of any job, used to scale observations into [0, 1].

Thesis 4.1.2: a real workload manager takes these from its configuration; hdeeprm derives them
from the converted workload instead. They are stored as ``job_limits.json`` beside
``workload.json`` (plain JSON, never pickle)::

    {"max_time": 432000.0, "max_core": 160, "max_mem": 38558.72, "max_mem_bw": 23.99}

Units: ``max_time`` seconds (requested time), ``max_core`` cores, ``max_mem`` MB per core,
``max_mem_bw`` GB/s. A limit of 0 means no job asks for that resource (consumers must not
divide by it blindly).
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from hdeeprm._atomic import write_json
from hdeeprm._jsonfile import read_json
from hdeeprm.errors import InputError
from hdeeprm.workload.model import Workload

#: File name of the limits written beside a workload.
JOB_LIMITS_FILENAME = "job_limits.json"
_KEYS = ("max_time", "max_core", "max_mem", "max_mem_bw")


@dataclass(frozen=True, slots=True)
class JobLimits:
    """Upper bounds of job requests: requested time (s), cores, memory (MB), bandwidth (GB/s)."""

    max_time: float
    max_core: int
    max_mem: float
    max_mem_bw: float

    def __post_init__(self) -> None:
        for key in _KEYS:
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InputError(f"job limit {key} must be a number, got {value!r}")
            if not math.isfinite(value) or value < 0:
                raise InputError(f"job limit {key} must be finite and >= 0, got {value!r}")
        if not isinstance(self.max_core, int) or self.max_core < 1:
            raise InputError(f"job limit max_core must be an integer >= 1, got {self.max_core!r}")

    def to_json(self) -> dict[str, Any]:
        """Plain JSON form (the four keys)."""
        return asdict(self)

    @classmethod
    def from_json(cls, raw: Any, path: str = "<job limits>") -> JobLimits:
        """Validate a parsed ``job_limits.json`` document; errors name the file and key."""
        if not isinstance(raw, dict):
            raise InputError("expected a JSON object with " + ", ".join(_KEYS), path)
        unknown = sorted(set(raw) - set(_KEYS))
        if unknown:
            raise InputError(
                f"unknown key(s) {', '.join(unknown)}; expected " + ", ".join(_KEYS), path
            )
        values: dict[str, Any] = {}
        for key in _KEYS:
            if key not in raw:
                raise InputError(f"missing key '{key}'", path)
            value = raw[key]
            ok = not isinstance(value, bool) and isinstance(value, (int, float))
            if not ok or not math.isfinite(value) or value < 0:
                raise InputError(f"expected a finite number >= 0, got {value!r}", path, key)
            values[key] = value
        core = values["max_core"]
        if float(core) != int(core) or int(core) < 1:
            raise InputError(f"expected an integer >= 1, got {core!r}", path, "max_core")
        return cls(
            float(values["max_time"]),
            int(core),
            float(values["max_mem"]),
            float(values["max_mem_bw"]),
        )


def _extra_number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0.0
    return float(value)


def compute_job_limits(
    workload: Workload, source: str | os.PathLike[str] | None = None
) -> JobLimits:
    """Limits over every job of ``workload``.

    Requested time comes from the profile's ``req_time``, falling back to the job's
    ``walltime`` and then to a ``delay`` profile's delay, so hand-written custom workloads
    (``-cw``) without hdeeprm's extra fields still get usable limits. Missing ``mem`` /
    ``mem_bw`` count as 0. ``source``, the workload's file, is named if it has no jobs.
    """
    if not workload.jobs:
        raise InputError(
            'the workload has no jobs (its "jobs" list is empty): give a workload with at '
            "least one job",
            source,
        )
    max_time = max_mem = max_mem_bw = 0.0
    max_core = 0
    profiles = workload.profiles
    for job in workload.jobs:
        profile = profiles[job.profile]
        extra = profile.extra
        req_time = extra.get("req_time")
        if req_time is None:
            req_time = job.walltime if job.walltime is not None else profile.delay
        max_time = max(max_time, _extra_number(req_time))
        max_core = max(max_core, job.res)
        max_mem = max(max_mem, _extra_number(extra.get("mem", 0.0)))
        max_mem_bw = max(max_mem_bw, _extra_number(extra.get("mem_bw", 0.0)))
    return JobLimits(max_time, max_core, max_mem, max_mem_bw)


def job_limits_path(workload_path: str | os.PathLike[str]) -> Path:
    """Where the limits of ``workload_path`` live: ``job_limits.json`` in the same folder."""
    return Path(workload_path).resolve().parent / JOB_LIMITS_FILENAME


def save_job_limits(limits: JobLimits, path: str | os.PathLike[str]) -> None:
    """Write ``limits`` as JSON, atomically."""
    write_json(path, limits.to_json(), indent=2)


def load_job_limits(path: str | os.PathLike[str]) -> JobLimits:
    """Read and validate a ``job_limits.json`` file."""
    spath = os.fspath(path)
    raw = read_json(spath, "job limits file")
    return JobLimits.from_json(raw, spath)
