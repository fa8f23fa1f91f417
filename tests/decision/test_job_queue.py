"""The six job selection policies on a small queue, worked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hdeeprm.decision import JobQueue, JobRecord


def _queue(seed: int = 0) -> tuple[JobQueue, dict[str, JobRecord]]:
    # id  subtime req_time res mem  mem_bw
    # a   0       100      4   500  10
    # b   1        50      2   900   4
    # c   2        50      1   300  20
    # d   3       200      1   200   4
    rows = [
        ("a", 0, 100, 4, 500, 10),
        ("b", 1, 50, 2, 900, 4),
        ("c", 2, 50, 1, 300, 20),
        ("d", 3, 200, 1, 200, 4),
    ]
    scheduler = JobQueue(np.random.default_rng(seed))
    jobs = {}
    for seq, (jid, sub, req, res, mem, bw) in enumerate(rows):
        jobs[jid] = JobRecord(jid, seq, sub, res, req, mem, bw)
        scheduler.push(jobs[jid])
    return scheduler, jobs


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("first", "a"),  # lowest subtime 0
        ("shortest", "b"),  # req_time 50 for b and c: b was submitted first
        ("smallest", "c"),  # 1 core for c and d: c first
        ("low_mem", "d"),  # 200 MB
        ("low_mem_bw", "b"),  # 4 GB/s for b and d: b first
    ],
)
def test_policy_choice(policy: str, expected: str) -> None:
    scheduler, _ = _queue()
    assert scheduler.peek(policy).id == expected
    assert len(scheduler) == 4  # peeking leaves the job queued


def test_choices_follow_removals_and_arrivals() -> None:
    scheduler, jobs = _queue()
    for policy in ("first", "shortest", "smallest", "low_mem", "low_mem_bw"):
        scheduler.peek(policy)  # build every heap, so removals are lazy everywhere
    scheduler.remove(jobs["b"])
    assert scheduler.peek("shortest").id == "c"  # next 50 s job
    assert scheduler.peek("low_mem_bw").id == "d"  # next 4 GB/s job
    scheduler.remove(jobs["a"])
    assert scheduler.peek("first").id == "c"
    late = JobRecord("e", 4, 4.0, 1, 1.0, 100.0, 1.0)
    scheduler.push(late)
    assert [scheduler.peek(p).id for p in ("first", "shortest", "low_mem", "low_mem_bw")] == [
        "c",
        "e",
        "e",
        "e",
    ]
    for jid in ("c", "d"):
        scheduler.remove(jobs[jid])
    scheduler.remove(late)
    assert scheduler.peek("first") is None and not scheduler


def test_missing_requested_time_sorts_last() -> None:
    scheduler = JobQueue(np.random.default_rng(0))
    scheduler.push(JobRecord("x", 0, 0.0, 1, math.inf))
    scheduler.push(JobRecord("y", 1, 0.0, 1, 3600.0))
    assert scheduler.peek("shortest").id == "y"


def test_random_is_uniform_and_reproducible_under_a_seed() -> None:
    def draws(seed: int) -> list[str]:
        scheduler, _ = _queue(seed)
        return [scheduler.peek("random").id for _ in range(400)]

    first = draws(7)
    assert first == draws(7)
    assert first != draws(8)
    counts = {jid: first.count(jid) for jid in "abcd"}
    assert all(60 < n < 140 for n in counts.values()), counts  # ~100 each of 400


def test_unknown_policy() -> None:
    scheduler, _ = _queue()
    with pytest.raises(ValueError, match="unknown job policy"):
        scheduler.peek("longest")


def test_head_is_the_first_k_in_submission_order_after_removals() -> None:
    import numpy as np

    from hdeeprm.decision.job_queue import JobQueue, JobRecord

    rng = np.random.default_rng(0)
    scheduler = JobQueue(np.random.default_rng(1))
    queued: list[JobRecord] = []
    for seq in range(300):
        job = JobRecord(str(seq), seq, float(seq // 3), int(rng.integers(1, 9)))
        scheduler.push(job)
        queued.append(job)
        if rng.random() < 0.4:  # remove a random queued job (middle or head)
            victim = queued.pop(int(rng.integers(len(queued))))
            scheduler.remove(victim)
        if seq % 7 == 0:
            scheduler.peek("first")
        expected = sorted(queued, key=lambda j: (j.subtime, j.seq))[:8]
        assert scheduler.head(8) == expected
    assert scheduler.head(0) == [] and len(scheduler.head(1000)) == len(queued)
