"""The job queue and the six job selection policies, "which job next?" (SPEC section 5).

Every policy but ``random`` is "lowest key first, ties by submission order":

* ``first``: submission time;
* ``shortest``: requested time (``req_time``; the walltime when absent, else infinity);
* ``smallest``: requested cores;
* ``low_mem``: memory per task (MB);
* ``low_mem_bw``: memory bandwidth per task (GB/s).

Each such policy has its own heap of ``(key, submission number)``, built the first time the
policy is used; removed jobs are deleted lazily (dropped when they reach the top). New jobs go
to one submission log, and a heap takes in the jobs logged since it was last used when it is
used next, only those still queued: a job that starts before a policy is asked again never
enters that policy's heap. Peeking is O(log n) amortised; the queue is never sorted as a whole.
Entries hold numbers only (the job is found by its submission number), which the garbage
collector stops tracking.
``random`` draws uniformly from the queue with the queue's seeded generator.

The first ``k`` jobs in submission order (:meth:`JobQueue.head`, a job picker's visible queue)
come from an insertion-ordered dictionary of the queued jobs while jobs arrive in that order
(the simulator submits them in time order): a slice, no heap walk. A job pushed out of order
(an earlier submission time) switches :meth:`~JobQueue.head` to the heap walk
(:meth:`~JobQueue.head_walk`, the reference) until the queue is cleared.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left, insort
from dataclasses import dataclass, field
from itertools import islice
from operator import attrgetter
from typing import Any

import numpy as np

from hdeeprm.decision._random import UniformStream
from hdeeprm.decision.actions import JOB_POLICIES

QUEUED, RUNNING, FINISHED, REJECTED = 0, 1, 2, 3


@dataclass(slots=True, eq=False)
class JobRecord:
    """What the decision system knows about a job (never its real run time)."""

    id: str
    #: Submission order (0, 1, 2, ...): the deterministic tie-break of every policy.
    seq: int
    subtime: float
    res: int
    req_time: float = math.inf
    mem: float = 0.0
    mem_bw: float = 0.0
    #: The engine's job object, passed back untouched.
    job: Any = None
    state: int = QUEUED
    alloc: tuple[int, ...] = ()
    start: float = math.nan
    extra: dict[str, Any] = field(default_factory=dict)
    #: GPUs requested in total, the job's workload type (``compute``/``network``/``None``) and
    #: the GPU ids it got (:mod:`hdeeprm.decision.gpus`).
    gpus: int = 0
    workload_type: str | None = None
    gpu_alloc: tuple[int, ...] = ()


#: Each policy's key (attribute getters: one C call per job, no Python frame).
_KEYS = {
    "first": attrgetter("subtime"),
    "shortest": attrgetter("req_time"),
    "smallest": attrgetter("res"),
    "low_mem": attrgetter("mem"),
    "low_mem_bw": attrgetter("mem_bw"),
}


#: The requested resources :meth:`JobQueue.track_sorted` keeps sorted, in order.
SORTED_FIELDS = ("req_time", "res", "mem", "mem_bw")
#: Cap of sorted requested times (an unknown, infinite one sorts last and stays finite).
_CAP = 1e300


def _value(job: JobRecord, field_index: int) -> float:
    if field_index == 0:
        return min(job.req_time, _CAP)
    return getattr(job, SORTED_FIELDS[field_index])


class JobQueue:
    """Owns the job queue and answers "which job next?" for a job policy.

    Args:
        rng: draws for the ``random`` policy.
    """

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self._uniform = UniformStream(rng)
        # Insertion-ordered list with swap-removal: O(1) uniform draws and removals.
        self._jobs: list[JobRecord] = []
        self._pos: dict[int, int] = {}
        self._heaps: dict[str, list[tuple[Any, int]]] = {}
        #: Jobs pushed since the oldest heap was last fed, and per heap how far in this log it
        #: has been fed.
        self._log: list[JobRecord] = []
        self._fed: dict[str, int] = {}
        #: While exactly one policy has a heap (a fixed pair's run): that heap and its key,
        #: fed at every push instead of through the log (no feeding step at each peek).
        self._only: tuple[list[tuple[Any, int]], Any] | None = None
        #: Per requested resource, the queued jobs' values in ascending order (see
        #: :meth:`track_sorted`); ``None`` until someone asks for them.
        self.sorted: tuple[list[float], ...] | None = None
        #: The queued jobs by submission number, in push order; while every push came in
        #: (submission time, number) order (``_in_order``), that is :meth:`head`'s order.
        self._order: dict[int, JobRecord] = {}
        self._in_order = True
        self._last_key: tuple[float, int] | None = None
        #: Bumped by every push, removal and clear: a reader that saw the same count saw the
        #: same queue (a job picker's visible jobs, read again only when it moved).
        self.changes = 0

    def track_sorted(self) -> tuple[list[float], ...]:
        """Keep the queued jobs' requested time, cores, memory and bandwidth sorted, each in
        its own ascending list, updated at every push and removal (O(log n) search plus a
        memmove) so observations read order statistics without sorting the queue each step.
        Requested times are capped at 1e300 (an infinite one sorts last, stays finite)."""
        if self.sorted is None:
            self.sorted = tuple(
                sorted(_value(job, i) for job in self._jobs) for i in range(len(SORTED_FIELDS))
            )
        return self.sorted

    def __len__(self) -> int:
        return len(self._jobs)

    def __bool__(self) -> bool:
        return bool(self._jobs)

    @property
    def jobs(self) -> list[JobRecord]:
        """The queued jobs (order unspecified; do not mutate)."""
        return self._jobs

    def reseed(self, rng: np.random.Generator) -> None:
        """Draw the ``random`` policy from ``rng`` from now on."""
        self.rng = rng
        self._uniform = UniformStream(rng)

    def clear(self) -> None:
        self._jobs.clear()
        self._pos.clear()
        self._heaps.clear()
        self._log.clear()
        self._fed.clear()
        self._only = None
        if self.sorted is not None:
            for values in self.sorted:
                values.clear()
        self._order.clear()
        self._in_order = True
        self._last_key = None
        self.changes += 1

    def push(self, job: JobRecord) -> None:
        """Enqueue a submitted job."""
        job.state = QUEUED
        self.changes += 1
        self._pos[job.seq] = len(self._jobs)
        self._jobs.append(job)
        if self._in_order:
            key = (job.subtime, job.seq)
            last = self._last_key
            if last is not None and not last < key:  # an earlier job after a later one
                self._in_order = False
                self._order.clear()
            else:
                self._last_key = key
                self._order[job.seq] = job
        only = self._only
        if only is not None:  # one heap: straight in (peek drops it once it has started)
            heapq.heappush(only[0], (only[1](job), job.seq))
        elif self._heaps:
            self._log.append(job)  # each heap takes it in when next used, if still queued
        tracked = self.sorted
        if tracked is not None:
            req = job.req_time
            insort(tracked[0], _CAP if req > _CAP else req)  # min(req, _CAP), no call
            insort(tracked[1], job.res)
            insort(tracked[2], job.mem)
            insort(tracked[3], job.mem_bw)

    def remove(self, job: JobRecord) -> None:
        """Take ``job`` out of the queue (it is starting); O(1), heaps are cleaned lazily."""
        index = self._pos.pop(job.seq)
        self.changes += 1
        if self._in_order:
            del self._order[job.seq]
        last = self._jobs.pop()
        if last is not job:
            self._jobs[index] = last
            self._pos[last.seq] = index
        tracked = self.sorted
        if tracked is not None:
            times, cores, mems, bws = tracked
            req = job.req_time
            req = _CAP if req > _CAP else req  # min(req, _CAP), no call
            del times[bisect_left(times, req)]
            del cores[bisect_left(cores, job.res)]
            del mems[bisect_left(mems, job.mem)]
            del bws[bisect_left(bws, job.mem_bw)]

    def peek(self, policy: str) -> JobRecord | None:
        """The job ``policy`` selects now, left in the queue; ``None`` if the queue is empty."""
        jobs = self._jobs
        if not jobs:
            return None
        if policy == "random":
            return jobs[self._uniform.below(len(jobs))]
        heap = self._heaps.get(policy)
        # _current's checks, its common case (nothing to feed, not stale) inline.
        if heap is None or self._fed[policy] != len(self._log) or len(heap) > 2 * len(jobs) + 64:
            heap = self._current(policy)
        pos = self._pos
        seq = heap[0][1]
        if seq not in pos:
            pop = heapq.heappop
            while seq not in pos:  # lazily drop jobs removed since they were pushed
                pop(heap)
                seq = heap[0][1]
        return jobs[pos[seq]]

    def _current(self, policy: str) -> list[tuple[Any, int]]:
        """``policy``'s heap, fed with the jobs logged since its last use that are still
        queued (or rebuilt when stale entries outnumber the queue)."""
        heap = self._heaps.get(policy)
        if heap is None or len(heap) > 2 * len(self._jobs) + 64:
            return self._build(policy)
        log, fed = self._log, self._fed
        start = fed[policy]
        end = len(log)
        if start < end:
            key, pos, push = _KEYS[policy], self._pos, heapq.heappush
            for i in range(start, end):
                job = log[i]
                if job.seq in pos:
                    push(heap, (key(job), job.seq))
            fed[policy] = end
            if end >= 256:  # drop the log's head that every heap has taken in (amortised)
                low = min(fed.values())
                if low:
                    del log[:low]
                    for name in fed:
                        fed[name] -= low
        return heap

    def head(self, k: int) -> list[JobRecord]:
        """The first ``k`` queued jobs in submission order (the ``first`` policy's order:
        submission time, then submission number), left in the queue.

        While jobs were pushed in that order, the first ``k`` of the insertion-ordered
        dictionary (asked at every step of a job picker: a slice, not a walk); otherwise
        :meth:`head_walk`."""
        if self._in_order:
            return list(islice(self._order.values(), k)) if k > 0 else []
        return self.head_walk(k)

    def head_seqs(self, k: int) -> np.ndarray:
        """The submission numbers of :meth:`head`'s jobs, in its order (``intp``): read from
        the ordered dictionary's keys, without visiting the records."""
        if self._in_order:
            count = min(k, len(self._order)) if k > 0 else 0
            return np.fromiter(islice(self._order.keys(), count), np.intp, count)
        head = self.head_walk(k)
        return np.fromiter((job.seq for job in head), np.intp, len(head))

    def head_walk(self, k: int) -> list[JobRecord]:
        """:meth:`head` by the ``first`` policy's heap, whatever the push order (the
        reference :meth:`head` agrees with).

        A best-first walk down the ``first`` heap from its root: O(k log k) plus the removed
        jobs met on the way, never a scan of the queue.
        """
        if not self._jobs or k <= 0:
            return []
        heap = self._current("first")
        pos = self._pos
        jobs = self._jobs
        size = len(heap)
        out: list[JobRecord] = []
        frontier = [(heap[0][0], heap[0][1], 0)]
        pop, push = heapq.heappop, heapq.heappush
        while frontier and len(out) < k:
            _, seq, i = pop(frontier)
            if seq in pos:
                out.append(jobs[pos[seq]])
            for child in (2 * i + 1, 2 * i + 2):
                if child < size:
                    entry = heap[child]
                    push(frontier, (entry[0], entry[1], child))
        return out

    def _build(self, policy: str) -> list[tuple[Any, int]]:
        try:
            key = _KEYS[policy]
        except KeyError:
            raise ValueError(
                f"unknown job policy {policy!r}; expected one of {JOB_POLICIES}"
            ) from None
        heap = [(key(job), job.seq) for job in self._jobs]
        heapq.heapify(heap)
        heaps = self._heaps
        heaps[policy] = heap
        self._fed[policy] = len(self._log)
        # One heap: fed directly from now on (the log is empty: nothing was logged while
        # there was no heap or only this one). A second heap: both fed through the log.
        self._only = (heap, key) if len(heaps) == 1 else None
        return heap
