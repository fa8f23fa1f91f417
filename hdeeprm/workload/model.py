"""In-memory model of a Batsim workload (``workload.json``) and its loader.

This is the contract between the workload pipeline (which writes these files) and the
simulation engine (which reads them). Field names follow Batsim 4.x: jobs carry ``id``,
``subtime``, ``res``, ``profile`` and optional ``walltime``; profiles carry ``type`` plus the
type's fields (``delay`` for ``delay``; ``cpu`` and ``com`` for ``parallel_homogeneous`` and
``parallel_homogeneous_total``). hdeeprm's extra profile fields (``req_time``, ``req_ops``,
``mem``, ``mem_bw``) are kept in :attr:`Profile.extra` and passed through untouched.

Jobs may carry two optional hdeeprm fields (Batsim ignores unknown job fields): ``gpus``, the
GPUs the job needs in total (a non-negative integer, 0 when absent), and ``workload_type``,
``"compute"`` or ``"network"`` (CuSH's compute- and network-intensive jobs, read by the
service-time model; absent: no locality effect). Both are validated when the file is loaded.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

from hdeeprm._jsonfile import read_json
from hdeeprm.errors import InputError, path_argument

#: Values of a job's optional ``workload_type`` field (see :mod:`hdeeprm.simulation.service_time`).
WORKLOAD_TYPES = ("compute", "network")

#: Profile types the embedded engine can execute.
SUPPORTED_PROFILE_TYPES = ("delay", "parallel_homogeneous", "parallel_homogeneous_total")


@dataclass(slots=True)
class Profile:
    """How a job computes. ``cpu`` is flops per core (``parallel_homogeneous``) or in total
    (``parallel_homogeneous_total``); ``delay`` is seconds (``delay``)."""

    name: str
    type: str
    delay: float | None = None
    cpu: float | None = None
    com: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def req_time(self) -> float | None:
        """User-requested time in seconds (hdeeprm extra field), if present."""
        value = self.extra.get("req_time")
        return None if value is None else float(value)

    def to_json(self) -> dict[str, Any]:
        """The Batsim JSON form of this profile."""
        out: dict[str, Any] = {"type": self.type}
        if self.type == "delay":
            out["delay"] = self.delay
        else:
            out["cpu"] = self.cpu
            out["com"] = self.com
        out.update(self.extra)
        return out


@dataclass(slots=True)
class JobSpec:
    """A job as the workload file describes it (static: no simulation state)."""

    id: str
    subtime: float
    res: int
    profile: str
    walltime: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def gpus(self) -> int:
        """GPUs requested in total (hdeeprm extra job field; 0 when absent)."""
        return int(self.extra.get("gpus", 0))

    @property
    def workload_type(self) -> str | None:
        """``"compute"``, ``"network"`` or ``None`` (hdeeprm extra job field)."""
        return self.extra.get("workload_type")

    def to_json(self) -> dict[str, Any]:
        """The Batsim JSON form of this job."""
        out: dict[str, Any] = {
            "id": self.id,
            "subtime": self.subtime,
            "res": self.res,
            "profile": self.profile,
        }
        if self.walltime is not None:
            out["walltime"] = self.walltime
        out.update(self.extra)
        return out


@dataclass(slots=True)
class Workload:
    """A Batsim workload: jobs sorted by submission time and the profiles they reference."""

    nb_res: int
    jobs: list[JobSpec]
    profiles: dict[str, Profile]
    name: str = "w0"
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The Batsim JSON form of this workload."""
        out: dict[str, Any] = {"nb_res": self.nb_res}
        out.update(self.extra)
        out["jobs"] = [job.to_json() for job in self.jobs]
        out["profiles"] = {name: prof.to_json() for name, prof in self.profiles.items()}
        return out

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the workload as Batsim JSON, atomically."""
        from hdeeprm._atomic import write_json

        write_json(path, self.to_json())


#: hdeeprm's numeric profile fields (read by the decision system) and their units.
PROFILE_NUMBERS = {"req_time": "seconds", "req_ops": "flops", "mem": "MB", "mem_bw": "GB/s"}
#: Of those, the ones that may be infinite (an unknown request: the decision system reads it so).
MAY_BE_INFINITE = ("req_time", "req_ops")


def _number(
    value: Any,
    path: str,
    where: str,
    *,
    minimum: float | None = 0.0,
    unit: str = "",
    infinite: bool = False,
) -> float:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not number or math.isnan(value) or (math.isinf(value) and not infinite):
        hint = f" in {unit}" if unit else ""
        if isinstance(value, str):
            hint += ", without quotes or unit"
        kind = "a number" if infinite else "a finite number"
        raise InputError(f"expected {kind}{hint}, got {value!r}", path, where)
    if minimum is not None and value < minimum:
        raise InputError(f"expected a number >= {minimum:g}, got {value!r}", path, where)
    return float(value)


def parse_profile(name: str, raw: Any, path: str, where: str) -> Profile:
    """Validate one profile entry; raise :class:`InputError` naming ``where`` if malformed."""
    if not isinstance(raw, dict):
        raise InputError(f"expected an object, got {type(raw).__name__}", path, where)
    ptype = raw.get("type")
    if ptype not in SUPPORTED_PROFILE_TYPES:
        raise InputError(
            f"unsupported profile type {ptype!r}; expected one of "
            + ", ".join(SUPPORTED_PROFILE_TYPES),
            path,
            f"{where}.type",
        )
    extra = {k: v for k, v in raw.items() if k not in ("type", "delay", "cpu", "com")}
    for key, unit in PROFILE_NUMBERS.items():
        if key in extra and not _plain_number(extra[key]):
            infinite = key in MAY_BE_INFINITE
            _number(extra[key], path, f"{where}.{key}", unit=unit, infinite=infinite)
    if ptype == "delay":
        if "delay" not in raw:
            raise InputError("missing field 'delay' (seconds)", path, where)
        return Profile(
            name, ptype, delay=_number(raw["delay"], path, f"{where}.delay"), extra=extra
        )
    if "cpu" not in raw:
        raise InputError("missing field 'cpu' (flops)", path, where)
    return Profile(
        name,
        ptype,
        cpu=_number(raw["cpu"], path, f"{where}.cpu"),
        com=_number(raw.get("com", 0), path, f"{where}.com"),
        extra=extra,
    )


def _check_gpu_fields(extra: dict[str, Any], path: str, where: str) -> None:
    """Validate a job's optional ``gpus`` and ``workload_type`` fields."""
    if "gpus" in extra:
        gpus = extra["gpus"]
        if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 0:
            raise InputError(
                f"expected a non-negative integer (GPUs in total), got {gpus!r}",
                path,
                f"{where}.gpus",
            )
    if "workload_type" in extra and extra["workload_type"] not in WORKLOAD_TYPES:
        raise InputError(
            f"expected one of {', '.join(WORKLOAD_TYPES)}, got {extra['workload_type']!r}",
            path,
            f"{where}.workload_type",
        )


def _plain_number(value: Any) -> bool:
    """Whether ``value`` is a finite non-negative int or float (the fast path of checks)."""
    kind = type(value)
    return (kind is float or kind is int) and 0 <= value < math.inf


def _job_error(jid: str, message: str, path: str, where: str) -> InputError:
    return InputError(f"job {jid!r}: {message}", path, where)


def _parse_job(
    jraw: Any,
    path: str,
    index: int,
    profiles: dict[str, Profile],
    bad_profiles: dict[str, InputError],
    seen: set[str],
) -> JobSpec:
    """Validate one job entry; every error names the job (its id once known) and the key."""
    if not isinstance(jraw, dict):
        raise InputError(
            f"expected a job object, got {type(jraw).__name__}", path, f"jobs[{index}]"
        )
    if "id" not in jraw:
        raise InputError("missing field 'id'", path, f"jobs[{index}]")
    raw_id = jraw["id"]
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)) or raw_id == "":
        raise InputError(
            f"expected a job id (a non-empty string or an integer), got {raw_id!r}",
            path,
            f"jobs[{index}].id",
        )
    jid = str(raw_id)
    for key in ("subtime", "res", "profile"):
        if key not in jraw:
            raise _job_error(jid, f"missing field '{key}'", path, f"jobs[{index}]")
    if jid in seen:
        raise _job_error(jid, f"duplicate job id {jid!r}", path, f"jobs[{index}].id")
    seen.add(jid)
    subtime = jraw["subtime"]
    if not _plain_number(subtime):
        try:
            _number(subtime, path, "", unit="seconds")
        except InputError as exc:
            raise _job_error(jid, exc.message, path, f"jobs[{index}].subtime") from None
    res = jraw["res"]
    if type(res) is not int or res < 1:
        message = f"expected a positive integer (cores), got {res!r}"
        raise _job_error(jid, message, path, f"jobs[{index}].res")
    pname = jraw["profile"]
    if type(pname) is not str or pname not in profiles:
        if isinstance(pname, str) and pname in bad_profiles:
            first = bad_profiles[pname]
            raise InputError(
                f"job {jid!r} uses profile {pname!r}: {first.message}", path, first.where
            )
        message = f"unknown profile {pname!r}; expected the name of a profile of 'profiles'"
        raise _job_error(jid, message, path, f"jobs[{index}].profile")
    walltime = jraw.get("walltime")
    if walltime is not None and walltime != -1:
        if not _plain_number(walltime):
            try:
                _number(walltime, path, "", unit="seconds")
            except InputError as exc:
                raise _job_error(jid, exc.message, path, f"jobs[{index}].walltime") from None
        if walltime <= 0:
            message = "walltime must be positive (or -1 for none)"
            raise _job_error(jid, message, path, f"jobs[{index}].walltime")
        walltime = float(walltime)
    else:
        walltime = None
    extra = {
        k: v for k, v in jraw.items() if k not in ("id", "subtime", "res", "profile", "walltime")
    }
    if extra:
        try:
            _check_gpu_fields(extra, path, f"jobs[{index}]")
        except InputError as exc:
            raise _job_error(jid, exc.message, path, exc.where or "") from None
        for key in PROFILE_NUMBERS:
            if key in extra:  # hdeeprm would ignore it there: a silent mistake
                raise _job_error(
                    jid,
                    f"{key} is read from the job's profile, not from the job: move it to "
                    f"profiles.{pname}.{key}",
                    path,
                    f"jobs[{index}].{key}",
                )
    return JobSpec(jid, float(subtime), res, pname, walltime, extra)


def load_workload(path: str | os.PathLike[str], name: str = "w0") -> Workload:
    """Load and validate a Batsim workload JSON file.

    Jobs are returned sorted by submission time (stable, so equal times keep file order).
    Every error names the file and the JSON path of the bad entry.
    """
    spath = path_argument(
        path, "load_workload(path)", "a Batsim workload", "workload_from_json(raw, path)"
    )
    raw = read_json(spath, "workload file", reject_duplicates=False)
    return workload_from_json(raw, spath, name)


def workload_from_json(raw: Any, path: str = "<workload>", name: str = "w0") -> Workload:
    """Validate an already-parsed workload document (see :func:`load_workload`)."""
    if not isinstance(raw, dict):
        raise InputError("expected a JSON object with 'jobs' and 'profiles'", path)
    for key in ("jobs", "profiles"):
        if key not in raw:
            raise InputError(f"missing key '{key}'", path, key)
    if not isinstance(raw["profiles"], dict):
        raise InputError("expected an object mapping names to profiles", path, "profiles")
    if not isinstance(raw["jobs"], list):
        raise InputError("expected a list of jobs", path, "jobs")
    # A bad profile is reported with the first job that uses it (the job a user looks for).
    profiles: dict[str, Profile] = {}
    bad_profiles: dict[str, InputError] = {}
    for pname, praw in raw["profiles"].items():
        try:
            profiles[pname] = parse_profile(pname, praw, path, f"profiles.{pname}")
        except InputError as exc:
            bad_profiles[pname] = exc
    jobs: list[JobSpec] = []
    seen: set[str] = set()
    for index, jraw in enumerate(raw["jobs"]):
        jobs.append(_parse_job(jraw, path, index, profiles, bad_profiles, seen))
    if bad_profiles:  # profiles no job uses are still checked
        raise next(iter(bad_profiles.values()))
    jobs.sort(key=lambda j: j.subtime)
    nb_res = raw.get("nb_res", 0)
    if isinstance(nb_res, bool) or not isinstance(nb_res, int) or nb_res < 0:
        raise InputError(f"expected a non-negative integer, got {nb_res!r}", path, "nb_res")
    extra = {k: v for k, v in raw.items() if k not in ("nb_res", "jobs", "profiles")}
    return Workload(nb_res, jobs, profiles, name, extra)
