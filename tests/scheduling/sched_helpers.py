"""Hand-built homogeneous platforms and delay workloads for the backfilling tests."""

from __future__ import annotations

import csv
from pathlib import Path

from decision_helpers import make_platform

from hdeeprm.decision import ActionSpace, FixedPair, WorkloadManager
from hdeeprm.platform import write_platform_xml
from hdeeprm.platform.hierarchy import Platform
from hdeeprm.scheduling import BackfillScheduler, SchedulerConfig, parse_scheduler
from hdeeprm.simulation import simulate
from hdeeprm.workload.model import JobSpec, Profile, Workload

#: (id, submit time, cores, real run time, requested time[, user])
Job = tuple


def homogeneous(nb_cores: int, memory_gb: float = 64.0) -> Platform:
    """``nb_cores`` one-core nodes of 1 GFLOPS, bandwidth never over-subscribed."""
    return make_platform([(memory_gb, [(1.0, 1.0, 1000.0, 10.0, 1)]) for _ in range(nb_cores)])


def workload(jobs: list[Job], nb_res: int) -> Workload:
    """Delay profiles: a job runs exactly its real run time wherever it is placed."""
    specs, profiles = [], {}
    for job in jobs:
        jid, subtime, res, run, req = job[:5]
        extra: dict = {"req_time": float(req), "mem": 0.0, "mem_bw": 0.0}
        spec_extra = {"user": job[5]} if len(job) > 5 else {}
        profiles[jid] = Profile(jid, "delay", delay=float(run), extra=extra)
        specs.append(JobSpec(jid, float(subtime), res, jid, extra=spec_extra))
    return Workload(nb_res, specs, profiles, "w0")


def run(
    platform: Platform,
    jobs: list[Job],
    scheduler: str | dict | SchedulerConfig | BackfillScheduler,
    tmp: Path,
    pair: str = "first-high_gflops",
) -> tuple[dict[str, float], BackfillScheduler]:
    """Simulate; return each job's start time (by id) and the scheduler."""
    if isinstance(scheduler, BackfillScheduler):
        sched = scheduler
    else:
        config = scheduler if isinstance(scheduler, SchedulerConfig) else parse_scheduler(scheduler)
        sched = BackfillScheduler(config)
    xml = tmp / "platform.xml"
    write_platform_xml(platform, xml)
    actions = ActionSpace()
    manager = WorkloadManager(platform, actions, FixedPair(actions, pair), scheduler=sched)
    wl = workload(jobs, len(platform.cores))
    simulate(xml, wl, manager, tmp)
    starts = {}
    with open(tmp / "out_jobs.csv") as handle:
        for row in csv.DictReader(handle):
            starts[row["job_id"]] = float(row["starting_time"])
    return starts, sched
