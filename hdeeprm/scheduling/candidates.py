"""Queued jobs grouped by request, so a backfilling walk visits only jobs that could start.

EASY's backfilling walk (:mod:`.backfilling`) goes through the queue in an ordering and starts
every job that fits now; on a loaded platform most queued jobs cannot: they need more cores
than are free, or the cores and memory of a job the resource manager already refused in this
pass, or they would end after the head's reservation while needing more than the spare cores.
Visiting each of them costs the same as visiting a job that starts, so the walk grew with the
queue (RICC: a queue of hundreds of jobs, about 240 visits per decision point, three in four
wasted).

Every one of those reasons depends on the job only through its cores, its memory per task and
its predicted run time. So the queue is kept in *buckets*, one per ``(cores, memory per task)``
pair (RICC's first 50,000 jobs: 139 pairs), each holding its jobs in every ordering the
scheduler keeps sorted, and its predicted run times sorted. A walk
(:meth:`~hdeeprm.scheduling.backfilling.BackfillScheduler._backfill_indexed`) merges the
buckets' lists in the ordering (a heap with one entry per bucket, so jobs come out in exactly
the queue's order) and, before taking a bucket's next job, checks whether the bucket can still
hold a startable job; a bucket that cannot is dropped for the rest of the walk with all its
jobs. The walk's state only tightens (fewer free cores, fewer spare cores, more refusals), so a
dropped bucket would have yielded nothing: the walk starts exactly the jobs a visit of every
queued job would, in the same order. The requests are also kept sorted by cores, so a walk
starts from only those needing at most the free cores (on a loaded platform, few), without
looking at the others.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterable
from typing import Protocol

from hdeeprm.scheduling.orderings import Orderable, static_key


class SchedJob(Orderable, Protocol):
    """What the index reads of a backfilling scheduler's job."""

    mem: float
    run_pred: float


def _key(name: str, job: SchedJob) -> float:
    """A job's sort key in a static ordering; ``FCFS`` is the submission number (the queue's
    insertion order), ties in the others are broken by it."""
    return job.seq if name == "FCFS" else static_key(name)(job)


#: A bucket's list drops its gone entries once there are this many and they are at least
#: half of it.
_COMPACT = 32


class Bucket:
    """Queued jobs of one ``(cores, memory per task)`` request."""

    __slots__ = ("res", "mem", "keys", "heads", "preds", "counts")

    def __init__(self, res: int, mem: float, orderings: Iterable[str]) -> None:
        self.res = res
        self.mem = mem
        #: Per ordering, the ``(key, submission number)`` of its jobs, ascending, from
        #: ``heads[name]`` on: entries before it are of jobs gone. The jobs that start are
        #: mostly a bucket's first (its jobs all ask for the same cores and memory, so the
        #: first that fits is usually the oldest): moving the head costs nothing, where
        #: deleting the first entry moved the whole list.
        self.keys: dict[str, list[tuple[float, int]]] = {name: [] for name in orderings}
        self.heads: dict[str, int] = dict.fromkeys(self.keys, 0)
        #: The distinct predicted run times of its jobs, ascending (``preds[0]``: the
        #: shortest), and how many jobs have each: jobs of one request often share their
        #: requested time, so a job's arrival or start moves a shorter list, or none.
        self.preds: list[float] = []
        self.counts: dict[float, int] = {}


class CandidateIndex:
    """Queued jobs by ``(cores, memory per task)``, in every static ordering of ``orderings``
    (canonical names: :func:`~hdeeprm.scheduling.orderings.canonical`)."""

    def __init__(self, orderings: Iterable[str]) -> None:
        self.orderings = tuple(dict.fromkeys(orderings))
        self.buckets: dict[tuple[int, float], Bucket] = {}
        #: The requests ``(cores, memory per task)`` of :attr:`buckets`, ascending, and their
        #: buckets in the same order (a walk's buckets are a slice of it: no lookup each).
        self._slots: list[tuple[int, float]] = []
        self._ordered: list[Bucket] = []

    def clear(self) -> None:
        self.buckets.clear()
        self._slots.clear()
        self._ordered.clear()

    def __contains__(self, name: str) -> bool:
        return name in self.orderings

    def add(self, job: SchedJob) -> None:
        """File a queued job (``seq``, ``res``, ``mem``, ``run_pred`` and the keys' fields)."""
        slot = (job.res, job.mem)
        bucket = self.buckets.get(slot)
        if bucket is None:
            bucket = self.buckets[slot] = Bucket(job.res, job.mem, self.orderings)
            i = bisect_left(self._slots, slot)
            self._slots.insert(i, slot)
            self._ordered.insert(i, bucket)
        heads = bucket.heads
        for name in self.orderings:
            insort(bucket.keys[name], (_key(name, job), job.seq), heads[name])
        pred, counts = job.run_pred, bucket.counts
        count = counts.get(pred)
        if count is None:
            counts[pred] = 1
            insort(bucket.preds, pred)
        else:
            counts[pred] = count + 1

    def remove(self, job: SchedJob) -> None:
        """Forget a job filed by :meth:`add` (its keys and prediction unchanged since)."""
        slot = (job.res, job.mem)
        bucket = self.buckets[slot]
        heads = bucket.heads
        for name in self.orderings:
            lst = bucket.keys[name]
            head = heads[name]
            i = bisect_left(lst, (_key(name, job), job.seq), head)
            if i == head:
                head += 1
                if head >= _COMPACT and 2 * head >= len(lst):  # amortised: drop the gone
                    del lst[:head]
                    head = 0
                heads[name] = head
            else:
                del lst[i]
        pred, counts = job.run_pred, bucket.counts
        count = counts[pred]
        if count > 1:
            counts[pred] = count - 1
            return
        del counts[pred]
        preds = bucket.preds
        del preds[bisect_left(preds, pred)]
        if not preds:
            del self.buckets[slot]
            slots = self._slots
            i = bisect_left(slots, slot)
            del slots[i]
            del self._ordered[i]

    def up_to(self, most: int) -> list[Bucket]:
        """The buckets whose jobs need at most ``most`` cores, by ascending request (where a
        backfilling walk starts: :meth:`BackfillScheduler._backfill_indexed`)."""
        return self._ordered[: bisect_right(self._slots, (most, math.inf))]
