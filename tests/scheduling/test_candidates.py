"""The backfilling walk visits only requests that could start (work counted, not timed).

A hand-built queue on a 12-core platform: job A (8 cores, requested 100 s) runs from t=0, so 4
cores are free; the head H needs 12 cores, so its reservation is at t=100 with 0 spare cores.
Behind it, 200 jobs of 8 cores (more than are free), 200 jobs of 2 cores and 500 MB per task
(the resource manager refuses them: say the free cores' nodes lack the memory), 200 jobs of
2 cores, no memory, requested 1,000 s (they would end after t=100 and there is no spare core),
and last E (1 core, 10 s): the only job that can backfill. Visiting every queued job costs
601 visits per decision point; the walk over the candidate index visits 2 (the first
memory-refused job, which drops its request, and E), then 1 at each later decision point.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from hdeeprm.scheduling import BackfillScheduler, parse_scheduler
from hdeeprm.scheduling.candidates import CandidateIndex

NB_CORES = 12


def record(seq: int, res: int, req: float, mem: float = 0.0) -> SimpleNamespace:
    return SimpleNamespace(
        id=f"j{seq}", seq=seq, subtime=float(seq), res=res, mem=mem, req_time=req, job=None
    )


class Platform:
    """Free cores, and a resource manager that refuses tasks of 500 MB or more."""

    def __init__(self) -> None:
        self.free_cores = NB_CORES
        self.attempts: list[str] = []

    def free(self) -> int:
        return self.free_cores

    def start(self, job: SimpleNamespace) -> bool:
        self.attempts.append(job.id)
        if job.mem >= 500.0 or job.res > self.free_cores:
            return False
        self.free_cores -= job.res
        return True


def queue(sched: BackfillScheduler, platform: Platform, start=None) -> None:
    sched.submitted(record(0, 8, 100.0), 0.0)  # A
    sched.schedule(0.0, platform.free, start or platform.start)
    assert platform.free_cores == 4
    jobs = [record(1, 12, 50.0)]  # H
    jobs += [record(2 + i, 8, 10.0) for i in range(200)]
    jobs += [record(202 + i, 2, 10.0, mem=500.0) for i in range(200)]
    jobs += [record(402 + i, 2, 1000.0) for i in range(200)]
    jobs.append(record(602, 1, 10.0))  # E
    for job in jobs:
        sched.submitted(job, 0.0)


@pytest.mark.parametrize("preset", ["easy", "easy-sjbf", "easy++"])
def test_index_starts_what_a_full_scan_starts(monkeypatch: pytest.MonkeyPatch, preset: str) -> None:
    """Same jobs started in the same order with and without the index, pass after pass."""

    def replay(scan: bool) -> list[tuple[float, str]]:
        with monkeypatch.context() as patch:
            if scan:
                patch.setattr(CandidateIndex, "__contains__", lambda self, name: False)
            sched = BackfillScheduler(parse_scheduler(preset))
            platform = Platform()
            log: list[tuple[float, str]] = []
            running: dict[str, tuple[float, SimpleNamespace]] = {}
            now = 0.0

            def start(job: SimpleNamespace) -> bool:
                if platform.start(job):
                    log.append((now, job.id))
                    running[job.id] = (now + min(job.req_time, 7.0 * (1 + job.seq % 5)), job)
                    return True
                return False

            queue(sched, platform, start)
            now = 1.0
            while running or len(sched.queue) > 200:  # the memory-refused jobs never start
                for jid, (end, job) in sorted(running.items()):
                    if end <= now:
                        del running[jid]
                        platform.free_cores += job.res
                        sched.completed(job, now)
                sched.schedule(now, platform.free, start)
                now += 3.0
            return log

    indexed, scanned = replay(False), replay(True)
    assert indexed == scanned
    # Every job but the 200 refused for memory started (A, H, 200 + 200 + E).
    assert len(indexed) == 403
