"""Whole real traces as Batsim workloads with walltimes, for pybatsim's schedulers (EASY
backfilling needs walltimes; hdeeprm's conversion sets none).

A job's walltime is the requested time the trace recorded; a job whose requested time is
unknown (SWF -1, where the conversion falls back on the run time) gets none (-1), as otherwise
its walltime would equal its run time and Batsim would kill it (docs/batsim.md).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from hdeeprm.platform import load_platform, write_platform_xml
from hdeeprm.workload import convert_swf
from hdeeprm.workload.swf import SwfReader


def recorded_requested_times(swf: Path) -> dict[str, float]:
    """Job number -> requested time, for the jobs whose trace line records one."""
    return {
        str(rec.job_number): float(rec.requested_time)
        for rec in SwfReader(str(swf))
        if rec.requested_time > 0
    }


#: Submission times are shifted by this much: pybatsim's scheduler API (``batsim.sched``)
#: refuses to allocate at t = 0 (``Allocation`` asserts ``start_time > 0``).
OFFSET = 1.0


def trace_inputs(
    swf: Path, platform_json: Path, folder: Path, profile_type: str, nb_jobs: int | None = None
) -> tuple[Path, Path, int]:
    """Write ``platform.xml`` (cores starting in P0, for schedulers that do not manage
    P-states) and ``workload.json`` (submissions from t = 1) into ``folder``; return their
    paths and the job count."""
    folder.mkdir(parents=True, exist_ok=True)
    platform = load_platform(platform_json)
    xml = folder / "platform.xml"
    write_platform_xml(platform, xml, initial_pstate=0)
    result = convert_swf(
        swf,
        reference_speed=platform.reference_speed,
        max_cores=len(platform.cores),
        seed=1,
        nb_jobs=nb_jobs,
        profile_type=profile_type,
    )
    requested = recorded_requested_times(swf)
    workload = result.workload
    workload.jobs[:] = [
        dataclasses.replace(spec, subtime=spec.subtime + OFFSET, walltime=requested.get(spec.id))
        for spec in workload.jobs
    ]
    path = folder / "workload.json"
    workload.save(path)
    return xml, path, len(workload.jobs)
