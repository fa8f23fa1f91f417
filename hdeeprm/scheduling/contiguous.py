"""Contiguous cores for EASY: the machine as pybatsim's ``easyBackfill`` sees it.

pybatsim 3.2.1's ``easyBackfill``, the EASY scheduler of Batsim's ecosystem, gives every job
one *contiguous range of core ids* ("jobs as rectangles"), where the literature's EASY (and
hdeeprm's ``hosts: "any"``) only counts free cores. The two differ whenever the free cores are
fragmented: a job that has enough free cores but no free range of that width waits. Scheduler
option ``hosts: "contiguous"`` reproduces ``easyBackfill`` (docs/scheduling.md): same start
times and the same core ranges on KTH-SP2 and Gaia (``benchmarks/fidelity/easy_equivalence.py``).

Its rules, re-stated here (each is tested on hand-worked schedules in
``tests/scheduling/test_contiguous.py``):

* **Free ranges.** The free cores are kept as ranges in id order. A job takes the *first*
  range wide enough, from its low end, or from its high end when the range last grew by a
  job ending just below it (a range that grew at its high end fills from the high end, one
  that grew at its low end or is new fills from the low end: jobs are packed next to the job
  that just ended). A job ending merges its cores with the free neighbours.
* **Reservation.** The head job is reserved by freeing the running jobs one by one in order
  of predicted end (ties: the order they started) on a copy of the ranges, until the range the
  last one freed (merged with its neighbours) is wide enough; the head's reserved cores are the
  ones it would take in that range, from the end the range fills from; the shadow time is that
  job's predicted end.
* **Backfilling.** The free ranges that hold the first or the last reserved core are *time
  limited*: a job placed there must be predicted to end by the shadow time (``<=``). The part of
  such a range outside the reservation is offered as a separate, unlimited range, right after
  the limited one, the two sharing cores (taking from one shrinks the other). A free range
  lying strictly inside the reservation, touching neither end, stays unlimited (as in
  ``easyBackfill``: a long job placed there may delay the head). After the walk the unlimited
  parts are dropped and the limited ranges fill from the low end again.
* **When.** The reservation and backfilling happen only when a job other than the head is
  waiting (so the ranges' fill ends change only then, as in ``easyBackfill``).

Costs: every operation is linear in the number of free ranges (at most half the cores); the
reservation copies the ranges and frees running jobs until the head fits.
"""

from __future__ import annotations

import math
from bisect import insort
from collections.abc import Iterator

INF = math.inf


class Span:
    """A range ``[lo, hi]`` of free core ids, filled from the low end when ``low_first``;
    ``length`` is how long a job placed there may run (s, infinite outside backfilling);
    ``link`` the range sharing its cores during backfilling."""

    __slots__ = ("lo", "hi", "length", "low_first", "link", "listed")

    def __init__(self, lo: int, hi: int, low_first: bool = True, length: float = INF) -> None:
        self.lo = lo
        self.hi = hi
        self.length = length
        self.low_first = low_first
        self.link: Span | None = None
        self.listed = True

    @property
    def size(self) -> int:
        return self.hi - self.lo + 1

    def carve(self, n: int) -> tuple[int, int]:
        """The ``n`` cores a job would take here (first and last id), without taking them."""
        if self.low_first:
            return self.lo, self.lo + n - 1
        return self.hi - n + 1, self.hi

    def __repr__(self) -> str:
        side = "low" if self.low_first else "high"
        return f"Span({self.lo}-{self.hi}, {side} first, length {self.length})"


class FreeRanges:
    """The free cores of a line of ``nb_cores`` cores as :class:`Span` s in id order."""

    __slots__ = ("spans",)

    def __init__(self, nb_cores: int) -> None:
        self.spans: list[Span] = [Span(0, nb_cores - 1)] if nb_cores > 0 else []

    def copy(self) -> FreeRanges:
        out = FreeRanges(0)
        out.spans = [Span(s.lo, s.hi, s.low_first) for s in self.spans]
        return out

    @property
    def free(self) -> int:
        return sum(s.size for s in self.spans)

    def first_fit(self, n: int, duration: float = -INF) -> Span | None:
        """The first range (in order) with ``n`` cores where a job of ``duration`` may run."""
        for span in self.spans:
            if span.size >= n and duration <= span.length:
                return span
        return None

    def _drop(self, span: Span) -> None:
        if span.listed:
            span.listed = False
            spans = self.spans
            for i, s in enumerate(spans):
                if s is span:
                    del spans[i]
                    return

    def take(self, span: Span, n: int) -> tuple[int, int]:
        """Give ``n`` cores of ``span`` to a job (shrinking a linked range too)."""
        lo, hi = span.carve(n)
        link = span.link
        if span.low_first:
            span.lo = hi + 1
            if link is not None and link.lo <= hi:
                link.lo = hi + 1
        else:
            span.hi = lo - 1
            if link is not None and link.hi >= lo:
                link.hi = lo - 1
        if span.size <= 0:
            self._drop(span)
        if link is not None and link.listed and link.size <= 0:
            self._drop(link)
        return lo, hi

    def release(self, lo: int, hi: int) -> Span:
        """Free cores ``[lo, hi]`` (merged with free neighbours); returns their range."""
        spans = self.spans
        i = 0
        while i < len(spans) and spans[i].lo <= lo:
            i += 1
        left = spans[i - 1] if i > 0 else None
        right = spans[i] if i < len(spans) else None
        joins_left = left is not None and left.hi + 1 == lo
        joins_right = right is not None and right.lo - 1 == hi
        if joins_left and joins_right:
            assert left is not None and right is not None
            left.hi = right.hi
            right.listed = False
            del spans[i]
            return left
        if joins_left:
            assert left is not None
            left.hi = hi
            left.low_first = False  # pack the next job next to the one that just ended
            return left
        if joins_right:
            assert right is not None
            right.lo = lo
            right.low_first = True
            return right
        span = Span(lo, hi)
        spans.insert(i, span)
        return span

    def limit(self, first: int, last: int, length: float) -> tuple[Span | None, ...]:
        """Time-limit the ranges holding cores ``first`` and ``last`` of a reservation to
        ``length`` s, each with its unlimited part outside the reservation (see the module
        doc); returns what :meth:`unlimit` undoes."""
        low_extra = low_limited = high_extra = high_limited = None
        for span in list(self.spans):
            if span.lo == first:
                low_limited = span
                span.length = length
            elif span.lo < first <= span.hi:
                low_extra = self._extra_after(span, span.lo, first - 1, True)
                span.low_first = False
                low_limited = span
                span.length = length
            if span.hi == last:
                high_limited = span
                span.length = length
            elif span.lo <= last < span.hi:
                high_extra = self._extra_after(span, last + 1, span.hi, False)
                span.low_first = True
                high_limited = span
                span.length = length
                break
        return low_extra, low_limited, high_extra, high_limited

    def _extra_after(self, span: Span, lo: int, hi: int, low_first: bool) -> Span:
        extra = Span(lo, hi, low_first)
        extra.link = span
        span.link = extra
        spans = self.spans
        for i, s in enumerate(spans):
            if s is span:
                spans.insert(i + 1, extra)
                break
        return extra

    def unlimit(self, marks: tuple[Span | None, ...]) -> None:
        """Undo :meth:`limit` after the backfilling walk."""
        low_extra, low_limited, high_extra, high_limited = marks
        for extra, limited in ((low_extra, low_limited), (high_extra, high_limited)):
            if extra is not None:
                if extra.link is not None:
                    extra.link.link = None
                extra.link = None
                self._drop(extra)
            if limited is not None:
                limited.length = INF
                limited.low_first = True


class ContiguousCores:
    """The free ranges plus the running jobs' ranges by predicted end (ties: start order)."""

    __slots__ = ("ranges", "running", "where", "_counter")

    def __init__(self, nb_cores: int) -> None:
        self.ranges = FreeRanges(nb_cores)
        #: ``(predicted end, start counter, seq)``, sorted.
        self.running: list[tuple[float, int, int]] = []
        #: seq -> (predicted end, start counter, lo, hi)
        self.where: dict[int, tuple[float, int, int, int]] = {}
        self._counter = 0

    def started(self, seq: int, lo: int, hi: int, end: float) -> None:
        self._counter += 1
        insort(self.running, (end, self._counter, seq))
        self.where[seq] = (end, self._counter, lo, hi)

    def ended(self, seq: int) -> None:
        end, counter, lo, hi = self.where.pop(seq)
        self.ranges.release(lo, hi)
        self.running.remove((end, counter, seq))

    def moved(self, seq: int, end: float) -> None:
        """A running job's predicted end changed (a correction)."""
        old, counter, lo, hi = self.where[seq]
        self.running.remove((old, counter, seq))
        insort(self.running, (end, counter, seq))
        self.where[seq] = (end, counter, lo, hi)

    def ranges_of_running(self) -> Iterator[tuple[float, int, int]]:
        where = self.where
        for end, _, seq in self.running:
            _, _, lo, hi = where[seq]
            yield end, lo, hi

    def reservation(self, need: int) -> tuple[int, int, float]:
        """First and last reserved core and the shadow time for a job of ``need`` cores."""
        trial = self.ranges.copy()
        for end, lo, hi in self.ranges_of_running():
            span = trial.release(lo, hi)
            if span.size >= need:
                first, last = span.carve(need)
                return first, last, end
        raise ValueError(f"{need} contiguous cores are never free")  # rejected at submission
