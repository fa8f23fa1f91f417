"""SWF trace to Batsim workload, with hdeeprm's extra profile fields (SPEC section 3).

Every kept job gets its own profile (named after the job) because its fields are per job:

* ``cpu``: real flops per core = recorded run time (SWF field 4) x reference speed (GFLOPS) x 1e9;
  the simulator alone sees it.
* ``req_time``: requested time (field 9, s), falling back to the run time when unknown.
* ``req_ops``: ``req_time`` x reference speed x 1e9: what the decision system believes.
* ``mem``: requested memory per processor (field 10, KB) / 1000 = MB, falling back to used
  memory (field 7), then 0 when both are unknown.
* ``mem_bw``: GB/s drawn uniformly from ``mem_bw_range`` (default [4, 24]; runs fit it to the
  platform, see :mod:`hdeeprm.workload.bandwidth`) with ``numpy.random.default_rng(seed)``, one
  draw per kept job in window order, rounded to 0.01 GB/s.

``res`` is the requested processors (field 8), falling back to allocated processors (field 5).
Each job also carries ``user`` (SWF field 12, omitted when unknown) as an extra *job* field:
Batsim passes unknown job fields through untouched, and the AVE2 and regression predictors of
:mod:`hdeeprm.scheduling` need it.
Jobs that can never run are dropped and counted by reason (:data:`DROP_REASONS`):

* ``unknown_submit_time``: submit time negative (-1): the job cannot be placed in time;
* ``unknown_run_time``: run time negative (-1): there is no work to simulate;
* ``zero_run_time``: run time 0 (kept with ``keep_zero_run_time=True``): no work to simulate, its
  stretch/slowdown in ``out_jobs.csv`` would be a division by zero, and Batsim's own converter
  drops these too (``run_time > 0``), so default counts match Batsim's;
* ``no_processors``: neither requested nor allocated processors is positive;
* ``too_many_cores``: more cores than ``max_cores`` (the platform).

``start`` skips that many *usable* jobs, then ``nb_jobs`` usable jobs are kept (a contiguous
window in file order); reading stops as soon as the window is full, so the counts in the
summary cover the lines read up to there. Times are shifted so the first kept job arrives at 0.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from hdeeprm._gc import gc_paused
from hdeeprm.errors import InputError
from hdeeprm.workload.limits import (
    JobLimits,
    job_limits_path,
    save_job_limits,
)
from hdeeprm.workload.model import JobSpec, Profile, Workload
from hdeeprm.workload.swf import SwfJob, SwfReader

#: Why a job was dropped, in the order the checks run (a job counts under its first reason).
DROP_REASONS: tuple[str, ...] = (
    "unknown_submit_time",
    "unknown_run_time",
    "zero_run_time",
    "no_processors",
    "too_many_cores",
)
#: Profile types the converter can emit.
PROFILE_TYPES: tuple[str, ...] = ("parallel_homogeneous", "delay")
#: Range of the synthetic memory bandwidth draw, GB/s (thesis 3.1.3: 5%-75% of 32-51.2 GB/s).
MEM_BW_RANGE: tuple[float, float] = (4.0, 24.0)


def _seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.3f}"


class UsableJob(NamedTuple):
    """A job that passed the filters, with the fallbacks already applied (trace times).

    A named tuple: immutable, and about four times cheaper to create than a frozen dataclass
    (whole traces keep hundreds of thousands)."""

    job_number: int
    submit_time: float
    run_time: float
    res: int
    req_time: float
    mem: float  # MB per processor
    user: int = -1  # SWF field 12; -1 when unknown


@dataclass(slots=True)
class ConversionSummary:
    """What a conversion read, kept and dropped, and which fallbacks it used."""

    source: str
    jobs_read: int = 0
    skipped: int = 0
    kept: int = 0
    dropped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(DROP_REASONS, 0))
    req_time_from_run_time: int = 0
    mem_from_used_memory: int = 0
    mem_unknown: int = 0
    res_from_allocated: int = 0
    first_submit: float | None = None
    last_submit: float | None = None
    stopped_early: bool = False

    @property
    def dropped_total(self) -> int:
        """Number of dropped jobs, all reasons together."""
        return sum(self.dropped.values())

    def __str__(self) -> str:
        lines = [
            f"{self.source}: read {self.jobs_read} jobs"
            + (" (stopped once the window was full)" if self.stopped_early else "")
            + f", kept {self.kept}, skipped {self.skipped} usable before the window,"
            + f" dropped {self.dropped_total}"
        ]
        reasons = [f"{r.replace('_', ' ')} {n}" for r, n in self.dropped.items() if n]
        if reasons:
            lines.append("  dropped: " + ", ".join(reasons))
        lines.append(
            "  fallbacks among kept jobs: "
            f"requested time from run time {self.req_time_from_run_time}, "
            f"memory from used memory {self.mem_from_used_memory}, "
            f"memory unknown (0 MB) {self.mem_unknown}, "
            f"cores from allocated {self.res_from_allocated}"
        )
        if self.first_submit is not None and self.last_submit is not None:
            first, last = self.first_submit, self.last_submit
            lines.append(
                f"  submit times in the trace: first {_seconds(first)} s, last {_seconds(last)} s"
                f" (span {_seconds(last - first)} s, shifted to start at 0)"
            )
        return "\n".join(lines)


@dataclass(slots=True)
class ConversionResult:
    """A converted workload with its job limits, summary and the trace's header comments."""

    workload: Workload
    limits: JobLimits
    summary: ConversionSummary
    header: list[str] = field(default_factory=list)

    def save(self, workload_path: str | os.PathLike[str]) -> None:
        """Write ``workload.json`` at ``workload_path`` and ``job_limits.json`` beside it."""
        self.workload.save(workload_path)
        save_job_limits(self.limits, job_limits_path(workload_path))


def _check_int(name: str, value: object, minimum: int, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}, got {value!r}")


def select_jobs(
    records: Iterable[SwfJob],
    *,
    max_cores: int,
    nb_jobs: int | None = None,
    start: int = 0,
    keep_zero_run_time: bool = False,
    source: str = "<records>",
) -> tuple[list[UsableJob], ConversionSummary]:
    """Filter SWF records into the window of usable jobs (the rules in the module docstring).

    Shared by the converter and ``hdeeprm-jobstat`` so both see exactly the same jobs. Returns
    the kept jobs with trace (unshifted) times and the summary; raises :class:`InputError` when
    no usable job is left.
    """
    _check_int("max_cores", max_cores, 1)
    _check_int("nb_jobs", nb_jobs, 1, allow_none=True)
    _check_int("start", start, 0)
    summary = ConversionSummary(source=source)
    dropped = summary.dropped
    kept: list[UsableJob] = []
    append = kept.append
    to_skip = start
    read = 0
    req_fallback = used_mem = mem_unknown = res_fallback = 0
    iterator: Iterator[SwfJob] = iter(records)
    try:
        for rec in iterator:
            read += 1
            run = rec.run_time
            if rec.submit_time < 0:
                dropped["unknown_submit_time"] += 1
                continue
            if run < 0:
                dropped["unknown_run_time"] += 1
                continue
            if run == 0 and not keep_zero_run_time:
                dropped["zero_run_time"] += 1
                continue
            res = rec.requested_processors
            res_from_alloc = False
            if res <= 0:
                res = rec.allocated_processors
                res_from_alloc = True
                if res <= 0:
                    dropped["no_processors"] += 1
                    continue
            if res > max_cores:
                dropped["too_many_cores"] += 1
                continue
            if to_skip:
                to_skip -= 1
                summary.skipped += 1
                continue
            req = rec.requested_time
            if req <= 0:
                req = run
                req_fallback += 1
            mem = rec.requested_memory
            if mem > 0:
                mem /= 1000.0
            elif rec.used_memory >= 0:
                mem = rec.used_memory / 1000.0
                used_mem += 1
            else:
                mem = 0.0
                mem_unknown += 1
            res_fallback += res_from_alloc
            append(UsableJob(rec.job_number, rec.submit_time, run, res, req, mem, int(rec.user_id)))
            if nb_jobs is not None and len(kept) == nb_jobs:
                summary.stopped_early = True
                break
    finally:
        close = getattr(iterator, "close", None)
        if close is not None:
            close()
    summary.jobs_read = read
    summary.kept = len(kept)
    summary.req_time_from_run_time = req_fallback
    summary.mem_from_used_memory = used_mem
    summary.mem_unknown = mem_unknown
    summary.res_from_allocated = res_fallback
    if not kept:
        where = f"after skipping {start} usable jobs" if start else "in the whole trace"
        reasons = ", ".join(f"{r} {n}" for r, n in dropped.items() if n) or "none"
        raise InputError(
            f"no usable job {where} (read {read} jobs; dropped: {reasons}; max_cores={max_cores})",
            source,
        )
    submits = [job.submit_time for job in kept]
    summary.first_submit = min(submits)
    summary.last_submit = max(submits)
    return kept, summary


def _number(name: str, value: object) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
    ):
        raise InputError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def _bandwidth(name: str, value: object) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        raise InputError(f"{name} must be a finite number >= 0 (GB/s), got {value!r}")
    return float(value)


def convert_records(
    records: Iterable[SwfJob],
    *,
    reference_speed: float | None,
    max_cores: int,
    seed: int,
    nb_jobs: int | None = None,
    start: int = 0,
    profile_type: str = "parallel_homogeneous",
    keep_zero_run_time: bool = False,
    source: str = "<records>",
    name: str = "w0",
    header: list[str] | None = None,
    mem_bw_range: tuple[float, float] = MEM_BW_RANGE,
    gpus_per_task: int = 0,
) -> ConversionResult:
    """Convert SWF records (from a file or a generator) into a Batsim :class:`Workload`.

    Args:
        records: SWF jobs in trace order.
        reference_speed: GFLOPS of the reference core (mean peak per core of the platform);
            required for ``parallel_homogeneous``; optional for ``delay`` (then no ``req_ops``).
        max_cores: cores of the platform; larger jobs are dropped; also the workload's
            ``nb_res``.
        seed: seed of the ``mem_bw`` draws.
        nb_jobs: size of the window of usable jobs (``None``: all).
        start: usable jobs skipped before the window.
        profile_type: ``parallel_homogeneous`` (flops) or ``delay`` (seconds = run time).
        keep_zero_run_time: keep jobs whose run time is 0 instead of dropping them.
        source: name used in messages and in the summary.
        name: workload name.
        header: SWF header lines to pass through in the result.
        mem_bw_range: bounds (GB/s) of the uniform ``mem_bw`` draws.
        gpus_per_task: SWF records no accelerators; with a positive value every job gets a
            ``gpus`` field of ``res x gpus_per_task`` (0, the default, writes no field: jobs
            need no GPU and the workload is unchanged).
    """
    if isinstance(gpus_per_task, bool) or not isinstance(gpus_per_task, int) or gpus_per_task < 0:
        raise InputError(f"gpus_per_task must be a non-negative integer, got {gpus_per_task!r}")
    if profile_type not in PROFILE_TYPES:
        raise InputError(
            f"unknown profile_type {profile_type!r}; expected one of " + ", ".join(PROFILE_TYPES)
        )
    if reference_speed is None:
        if profile_type != "delay":
            raise InputError("reference_speed (GFLOPS) is required for parallel_homogeneous")
        flops_per_second = None
    else:
        flops_per_second = _number("reference_speed", reference_speed) * 1e9
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise InputError(f"seed must be an integer, got {seed!r}")
    # No cyclic collection while a trace becomes job objects: they form no cycles, and on a
    # whole trace the collector would rescan the growing heap (a quarter of the conversion).
    with gc_paused():
        return _convert(
            records,
            flops_per_second,
            reference_speed=reference_speed,
            max_cores=max_cores,
            seed=seed,
            nb_jobs=nb_jobs,
            start=start,
            profile_type=profile_type,
            keep_zero_run_time=keep_zero_run_time,
            source=source,
            name=name,
            header=header,
            mem_bw_range=mem_bw_range,
            gpus_per_task=gpus_per_task,
        )


def _convert(
    records: Iterable[SwfJob],
    flops_per_second: float | None,
    *,
    reference_speed: float | None,
    max_cores: int,
    seed: int,
    nb_jobs: int | None,
    start: int,
    profile_type: str,
    keep_zero_run_time: bool,
    source: str,
    name: str,
    header: list[str] | None,
    mem_bw_range: tuple[float, float],
    gpus_per_task: int,
) -> ConversionResult:
    """:func:`convert_records` once its arguments are checked."""
    kept, summary = select_jobs(
        records,
        max_cores=max_cores,
        nb_jobs=nb_jobs,
        start=start,
        keep_zero_run_time=keep_zero_run_time,
        source=source,
    )
    low, high = (
        _bandwidth("mem_bw_range[0]", mem_bw_range[0]),
        _bandwidth("mem_bw_range[1]", mem_bw_range[1]),
    )
    if not 0 <= low <= high:
        raise InputError(f"mem_bw_range must satisfy 0 <= low <= high, got {mem_bw_range!r}")
    mem_bw = np.round(np.random.default_rng(seed).uniform(low, high, size=len(kept)), 2).tolist()
    origin = summary.first_submit or 0.0
    jobs: list[JobSpec] = []
    profiles: dict[str, Profile] = {}
    seen: set[str] = set()
    # Limits taken on the way (what compute_job_limits finds: every value here is finite).
    max_time = max_mem = max_mem_bw = 0.0
    max_core = 0
    delay = profile_type == "delay"
    append = jobs.append
    for job, bw in zip(kept, mem_bw):
        jid = str(job.job_number)
        if jid in seen:
            raise InputError(f"duplicate SWF job number {jid}", source)
        seen.add(jid)
        req_time, mem, res = job.req_time, job.mem, job.res
        if flops_per_second is not None:
            extra = {
                "req_time": req_time,
                "req_ops": req_time * flops_per_second,
                "mem": mem,
                "mem_bw": bw,
            }
        else:
            extra = {"req_time": req_time, "mem": mem, "mem_bw": bw}
        if delay:
            profiles[jid] = Profile(jid, "delay", job.run_time, None, 0.0, extra)
        else:
            assert flops_per_second is not None
            profiles[jid] = Profile(
                jid, profile_type, None, job.run_time * flops_per_second, 0.0, extra
            )
        job_extra: dict[str, int] = {"user": job.user} if job.user >= 0 else {}
        if gpus_per_task:
            job_extra["gpus"] = res * gpus_per_task
        append(JobSpec(jid, job.submit_time - origin, res, jid, None, job_extra))
        if req_time > max_time:
            max_time = req_time
        if res > max_core:
            max_core = res
        if mem > max_mem:
            max_mem = mem
        if bw > max_mem_bw:
            max_mem_bw = bw
    jobs.sort(key=lambda j: j.subtime)
    workload_extra: dict[str, Any] = {
        "description": f"converted by hdeeprm from {os.path.basename(source)}",
        "conversion": {
            "source": os.path.basename(source),
            "reference_speed": reference_speed,
            "max_cores": max_cores,
            "nb_jobs": nb_jobs,
            "start": start,
            "seed": int(seed),
            "profile_type": profile_type,
            "mem_bw_range": [low, high],
            "time_origin": origin,
        },
    }
    if gpus_per_task:
        workload_extra["conversion"]["gpus_per_task"] = gpus_per_task
    workload = Workload(max_cores, jobs, profiles, name, workload_extra)
    limits = JobLimits(max_time, max_core, max_mem, max_mem_bw)
    return ConversionResult(workload, limits, summary, list(header or []))


def convert_swf(
    swf_path: str | os.PathLike[str],
    *,
    reference_speed: float | None,
    max_cores: int,
    seed: int,
    nb_jobs: int | None = None,
    start: int = 0,
    profile_type: str = "parallel_homogeneous",
    keep_zero_run_time: bool = False,
    name: str = "w0",
    mem_bw_range: tuple[float, float] = MEM_BW_RANGE,
    gpus_per_task: int = 0,
) -> ConversionResult:
    """Convert an SWF file (plain or gzip) into a Batsim workload; see :func:`convert_records`.

    Example: the first 1,000 usable Gaia jobs after the 4 early ones, for the 2,280-core Gaia
    platform: ``convert_swf(path, reference_speed=speed, max_cores=2280, seed=1, nb_jobs=1000,
    start=4)``; then ``result.save("workload.json")``.
    """
    path = os.fspath(swf_path)
    reader = SwfReader(path)
    result = convert_records(
        reader,
        reference_speed=reference_speed,
        max_cores=max_cores,
        seed=seed,
        nb_jobs=nb_jobs,
        start=start,
        profile_type=profile_type,
        keep_zero_run_time=keep_zero_run_time,
        source=path,
        name=name,
        mem_bw_range=mem_bw_range,
        gpus_per_task=gpus_per_task,
    )
    result.header = list(reader.header)
    return result
