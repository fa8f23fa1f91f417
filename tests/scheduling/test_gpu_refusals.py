"""A job refused for want of GPUs must not make EASY refuse a same-sized job without GPUs."""

from __future__ import annotations

from types import SimpleNamespace

from hdeeprm.scheduling import BackfillScheduler, parse_scheduler


def _record(seq: int, res: int, gpus: int, req: float = 100.0) -> SimpleNamespace:
    spec = SimpleNamespace(extra={}, profile=SimpleNamespace(type="delay", delay=req, extra={}))
    return SimpleNamespace(
        seq=seq, id=f"w0!{seq}", subtime=0.0, res=res, mem=0.0, gpus=gpus, req_time=req, job=spec
    )


def test_gpu_refusal_does_not_block_cpu_only_job() -> None:
    # 4 free cores, no free GPU: job 0 (1 core, 1 GPU) cannot start; job 1 (1 core, no GPU)
    # fits and must be backfilled in the same pass.
    sched = BackfillScheduler(parse_scheduler("easy"))
    sched.reset()
    jobs = [_record(0, 1, 1), _record(1, 1, 0)]
    for job in jobs:
        sched.submitted(job, 0.0)
    free_cores = [4]
    asked: list[int] = []

    def start(record: SimpleNamespace) -> bool:
        asked.append(record.seq)
        if record.gpus:
            return False
        free_cores[0] -= record.res
        return True

    sched.schedule(0.0, lambda: free_cores[0], start)
    assert asked == [0, 1]
    assert free_cores[0] == 3


def test_cpu_only_refusal_still_shortcuts_bigger_jobs() -> None:
    # Job 0 (2 cores, no GPU) is refused by the resource manager (memory, say); job 1
    # (3 cores, no GPU) needs at least as much, so it is refused without an attempt.
    sched = BackfillScheduler(parse_scheduler("easy"))
    sched.reset()
    for job in (_record(0, 2, 0), _record(1, 3, 0)):
        sched.submitted(job, 0.0)
    asked: list[int] = []

    def start(record: SimpleNamespace) -> bool:
        asked.append(record.seq)
        return False

    sched.schedule(0.0, lambda: 4, start)
    assert asked == [0]
