"""The scheduler's kept orders, against the plain structures they replaced.

* :class:`RunningEnds` keeps ``(end, seq)`` order in two parallel lists (floats and seqs):
  ties of the end must still come in ``seq`` order, since the spare cores of a reservation
  depend on it (worked by hand below).
* A candidate bucket keeps its distinct predicted run times with a count each: its shortest
  one (``preds[0]``, the reservation test) must follow the jobs that leave.
* ``SchedJob`` reads a job's user and real run time only when a predictor asks.
"""

from __future__ import annotations

import random
from bisect import bisect_left, insort
from types import SimpleNamespace

from hdeeprm.scheduling.backfilling import SchedJob, job_facts
from hdeeprm.scheduling.candidates import CandidateIndex
from hdeeprm.scheduling.profile import RunningEnds


def test_ties_of_the_end_come_in_seq_order() -> None:
    ends = RunningEnds()
    ends.add(5, 10.0, 4)
    ends.add(2, 10.0, 3)
    ends.add(9, 5.0, 1)
    ends.add(7, 10.0, 2)
    assert ends.ends == [(5.0, 9), (10.0, 2), (10.0, 5), (10.0, 7)]
    # 5 cores needed, none free: 1 core at t=5 (seq 9), 1 + 3 = 4 at t=10 (seq 2), then
    # 4 + 4 = 8 (seq 5): reserved at t=10 with 8 - 5 = 3 spare. Seq 7's 2 cores are not
    # counted: in (end, seq) order it comes after seq 5.
    assert ends.shadow(5, 0, 0.0) == (10.0, 3)
    ends.remove(5, 10.0)
    # 1, then 4 (seq 2), then 6 (seq 7): t=10 with 1 spare.
    assert ends.shadow(5, 0, 0.0) == (10.0, 1)
    assert ends.expired(10.0) == [9, 2, 7]
    assert ends.ends == []
    assert ends.shadow(1, 0, 0.0) == (float("inf"), 0)


def test_running_ends_match_sorted_pairs() -> None:
    """Random adds (many tied ends), removals, overdue jobs and expiries, against a sorted
    list of ``(end, seq)`` pairs, the structure before: same order, same reservations."""
    rng = random.Random(6)
    ends = RunningEnds()
    pairs: list[tuple[float, int]] = []
    cores: dict[int, int] = {}
    filed: dict[int, float] = {}
    overdue: dict[int, int] = {}
    now, seq = 0.0, 0
    for _ in range(3000):
        action = rng.random()
        if action < 0.5 or not filed:
            end = now + rng.choice([1.0, 2.0, 5.0, 5.0, 10.0, 7.5])
            seq += rng.randint(1, 3) if rng.random() < 0.8 else -rng.randint(0, seq)
            seq = abs(seq)
            while seq in cores:
                seq += 1
            res = rng.randint(1, 8)
            ends.add(seq, end, res)
            insort(pairs, (end, seq))
            cores[seq], filed[seq] = res, end
        elif action < 0.8:
            victim = rng.choice(sorted(filed))
            end = filed.pop(victim)
            ends.remove(victim, end)
            if victim in overdue:
                del overdue[victim]
            else:
                del pairs[bisect_left(pairs, (end, victim))]
            del cores[victim]
        else:
            now += rng.choice([0.5, 1.0, 2.5])
            expired = ends.expired(now)
            expected = [s for e, s in pairs if e <= now]
            assert expired == expected
            pairs = [(e, s) for e, s in pairs if e > now]
            for s in expired:  # every other one overdue, the others filed again later
                if s % 2:
                    ends.mark_overdue(s)
                    overdue[s] = cores[s]
                else:
                    end = now + 3.0
                    ends.add(s, end, cores[s])
                    insort(pairs, (end, s))
                    filed[s] = end
        assert ends.ends == pairs
        need, free = rng.randint(1, 40), rng.randint(0, 6)
        avail = free + sum(overdue.values())
        expected = (now, avail - need) if avail >= need else (float("inf"), 0)
        if avail < need:
            for end, s in pairs:
                avail += cores[s]
                if avail >= need:
                    expected = (end, avail - need)
                    break
        assert ends.shadow(need, free, now) == expected


def _job(seq: int, pred: float) -> SimpleNamespace:
    return SimpleNamespace(seq=seq, res=2, mem=100.0, run_pred=pred)


def test_bucket_shortest_prediction_follows_removals() -> None:
    index = CandidateIndex(["FCFS"])
    jobs = [_job(0, 30.0), _job(1, 10.0), _job(2, 10.0), _job(3, 20.0)]
    for job in jobs:
        index.add(job)
    (bucket,) = index.up_to(2)
    assert bucket.preds == [10.0, 20.0, 30.0]
    assert bucket.keys["FCFS"] == [(0, 0), (1, 1), (2, 2), (3, 3)]
    index.remove(jobs[1])  # one of the two 10 s jobs: 10 s is still the shortest
    assert bucket.preds == [10.0, 20.0, 30.0]
    index.remove(jobs[2])
    assert bucket.preds == [20.0, 30.0]
    assert bucket.keys["FCFS"] == [(0, 0), (3, 3)]
    index.remove(jobs[3])
    index.remove(jobs[0])
    assert index.up_to(2) == [] and not index.buckets


def test_user_and_run_time_read_when_asked() -> None:
    profile = SimpleNamespace(type="delay", delay=42.0, extra={"user": 7})
    job = SimpleNamespace(spec=SimpleNamespace(extra={}), profile=profile)
    record = SimpleNamespace(seq=3, subtime=1.0, res=2, mem=0.0, job=job)
    lazy = SchedJob(record, 100.0)
    assert (lazy.user, lazy.actual) == job_facts(record) == (7, 42.0)
    given = SchedJob(record, 100.0, None, 5.0)  # given values stay
    assert (given.user, given.actual) == (None, 5.0)
    unknown = SchedJob(SimpleNamespace(seq=4, subtime=1.0, res=1, job=None), 10.0)
    assert unknown.user is None and unknown.actual != unknown.actual  # NaN: unknown


def test_bucket_lists_from_their_head() -> None:
    """Jobs leaving from the front move the head (no list shift), others are deleted; the
    live part ``keys[name][heads[name]:]`` is always the bucket's jobs in order, in FCFS and
    in a static ordering (SPF: predicted time, then seq), against plain sorted lists."""
    rng = random.Random(14)
    index = CandidateIndex(["FCFS", "SPF"])
    live: dict[int, SimpleNamespace] = {}
    moved = compacted = 0
    for seq in range(4000):
        job = SimpleNamespace(
            seq=seq, res=2, mem=100.0, run_pred=rng.choice([5.0, 10.0, 60.0]), pred=0.0
        )
        job.pred = job.run_pred
        index.add(job)
        live[seq] = job
        while live and rng.random() < 0.45:
            # mostly the oldest (what backfilling starts), sometimes any
            gone = min(live) if rng.random() < 0.8 else rng.choice(list(live))
            (bucket,) = index.up_to(2)
            before = dict(bucket.heads)
            index.remove(live.pop(gone))
            if live:
                moved += bucket.heads["FCFS"] == before["FCFS"] + 1
                compacted += bucket.heads["FCFS"] < before["FCFS"]
        if live:
            (bucket,) = index.up_to(2)
            fcfs, spf = bucket.keys["FCFS"], bucket.keys["SPF"]
            assert fcfs[bucket.heads["FCFS"] :] == [(s, s) for s in sorted(live)]
            assert spf[bucket.heads["SPF"] :] == sorted((j.pred, s) for s, j in live.items())
            assert bucket.preds[0] == min(j.run_pred for j in live.values())
    assert moved > 100 and compacted > 3  # both paths were taken
