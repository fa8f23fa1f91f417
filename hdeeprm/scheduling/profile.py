"""Predicted availability of cores over time: what reservations are computed on.

:class:`RunningEnds` keeps the running jobs sorted by predicted end (corrected lazily, see
:mod:`hdeeprm.scheduling.corrections`); :meth:`RunningEnds.shadow` answers EASY's question
"when will ``need`` cores be free, and how many spare ones then?" by walking the ends in order
from the earliest, and stops as soon as enough cores are counted. :class:`StepProfile` is the
free-core step function conservative backfilling books every queued job in.

**Cores only.** Reservations count cores, not memory or bandwidth: a job predicted to fit at a
time may still not be placeable then if node memory is fragmented. The scheduler never starts a
job the resource manager cannot place (allocation is tried, and a refused job simply waits), so
memory can only make a reservation optimistic (the head job starts later than reserved), never
make a backfilled job delay a reservation the profile promised. On a homogeneous platform
without memory limits, this is exactly the literature's EASY.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right


class RunningEnds:
    """Running jobs by predicted end, sorted by ``(end, seq)``, cores by ``seq``.

    The order is kept in two parallel lists, :attr:`times` (floats) and :attr:`seqs`: a
    search compares floats (no tuple built per job, no tuple comparisons), and ties of the
    end (jobs started together with the same request) are ordered by ``seq`` as the pairs
    would be."""

    __slots__ = ("times", "seqs", "cores", "overdue", "overdue_cores")

    def __init__(self) -> None:
        self.times: list[float] = []
        self.seqs: list[int] = []
        self.cores: dict[int, int] = {}
        #: Cores of jobs running past a prediction that can grow no more (the requested time):
        #: they may end at any instant, so they count as free "now" in reservations.
        self.overdue: dict[int, int] = {}
        #: Their sum (read at every reservation, so kept rather than summed each time).
        self.overdue_cores = 0

    @property
    def ends(self) -> list[tuple[float, int]]:
        """The ``(end, seq)`` pairs in order (a copy)."""
        return list(zip(self.times, self.seqs))

    def clear(self) -> None:
        self.times.clear()
        self.seqs.clear()
        self.cores.clear()
        self.overdue.clear()
        self.overdue_cores = 0

    def add(self, seq: int, end: float, res: int) -> None:
        times, seqs = self.times, self.seqs
        i = bisect_right(times, end)
        if i and times[i - 1] == end:  # ties of the end: sorted by seq, as the pairs
            i = bisect_left(seqs, seq, bisect_left(times, end, 0, i), i)
        times.insert(i, end)
        seqs.insert(i, seq)
        self.cores[seq] = res

    def remove(self, seq: int, end: float) -> None:
        """Forget a job (completed); ``end`` is the predicted end it was filed under."""
        cores = self.overdue.pop(seq, None)
        if cores is not None:
            self.overdue_cores -= cores
            del self.cores[seq]
            return
        times, seqs = self.times, self.seqs
        first = bisect_left(times, end)
        if first < len(times) and times[first] == end:
            if seqs[first] != seq:  # ties of the end: found among them by seq
                first = bisect_left(seqs, seq, first, bisect_right(times, end, first))
            if first < len(seqs) and seqs[first] == seq and times[first] == end:
                del times[first]
                del seqs[first]
        del self.cores[seq]

    def expired(self, now: float) -> list[int]:
        """Pop and return the jobs whose predicted end is ``<= now`` (to be corrected)."""
        times = self.times
        k = bisect_right(times, now)
        if not k:
            return []
        seqs = self.seqs
        out = seqs[:k]
        del times[:k]
        del seqs[:k]
        return out

    def mark_overdue(self, seq: int) -> None:
        cores = self.cores[seq]
        self.overdue[seq] = cores
        self.overdue_cores += cores

    def shadow(self, need: int, free: int, now: float) -> tuple[float, int]:
        """EASY's reservation for a job of ``need`` cores when ``free`` are free now: the
        earliest predicted time enough cores are free, and the cores spare at that time."""
        avail = free + self.overdue_cores
        if avail >= need:
            return now, avail - need
        cores = self.cores
        for end, seq in zip(self.times, self.seqs):
            avail += cores[seq]
            if avail >= need:
                return end, avail - need
        return math.inf, 0  # more cores than the platform: never (rejected at submission)


class StepProfile:
    """Free cores as a step function of time from ``now``: ``free[i]`` on
    ``[times[i], times[i + 1])``, the last step forever."""

    __slots__ = ("times", "free")

    def __init__(self, now: float, free: int, running: RunningEnds) -> None:
        times = [now]
        counts = [free + running.overdue_cores]
        cores = running.cores
        for end, seq in zip(running.times, running.seqs):
            if end > times[-1]:
                times.append(end)
                counts.append(counts[-1] + cores[seq])
            else:
                counts[-1] += cores[seq]
        self.times = times
        self.free = counts

    def earliest(self, need: int, duration: float) -> float:
        """The earliest breakpoint from which ``need`` cores stay free for ``duration``."""
        times, free = self.times, self.free
        n = len(times)
        i = 0
        while i < n:
            if free[i] < need:
                i += 1
                continue
            start = times[i]
            end = start + duration
            j = i + 1
            while j < n and times[j] < end:
                if free[j] < need:
                    break
                j += 1
            else:
                return start
            i = j + 1  # step j is too low: no start before it can work
        return math.inf

    def _split(self, t: float) -> int:
        """Index of the step starting exactly at ``t`` (inserted if needed)."""
        times = self.times
        i = bisect_right(times, t) - 1
        if times[i] == t:
            return i
        times.insert(i + 1, t)
        self.free.insert(i + 1, self.free[i])
        return i + 1

    def reserve(self, start: float, duration: float, need: int) -> None:
        """Book ``need`` cores on ``[start, start + duration)``."""
        i = self._split(start)
        end = start + duration
        k = self._split(end) if math.isfinite(end) else len(self.times)
        free = self.free
        for j in range(i, k):
            free[j] -= need
