"""The record of memory-bandwidth over-subscription episodes, kept compactly.

A whole loaded trace produces millions of episodes (RICC: about 1.6 million): one Python list
per episode cost about 100 bytes each, a few hundred MB on such a run. The record keeps the
three columns in typed arrays instead (4 + 8 + 8 bytes per episode) and still reads like the
list of ``[processor id, start, end]`` it replaced (``end`` is ``None`` while the episode is
open), so callers index, iterate and compare it as before.

:func:`merged_spans` (the rows of ``hdeeprm_mem_bw_overutilization.csv``) sorts and merges the
columns with numpy instead of sorting a list of lists.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

#: ``end`` of an episode still open (no real end time is NaN).
_OPEN = math.nan


class OverSubscriptionRecord:
    """Episodes ``[processor id, start, end or None]`` in order of start, as typed columns.

    The core pool's settles append and end episodes in the columns directly (what
    :meth:`open` and :meth:`close` do, inlined: millions of episodes on RICC)."""

    __slots__ = ("procs", "starts", "ends")

    def __init__(self) -> None:
        self.procs = array("i")
        self.starts = array("d")
        self.ends = array("d")

    def open(self, proc: int, now: float) -> int:
        """Start an episode of ``proc`` at ``now``; return its index (to :meth:`close` it)."""
        self.procs.append(proc)
        self.starts.append(now)
        self.ends.append(_OPEN)
        return len(self.ends) - 1

    def close(self, index: int, now: float) -> None:
        """End episode ``index`` at ``now``."""
        self.ends[index] = now

    def clear(self) -> None:
        del self.procs[:], self.starts[:], self.ends[:]

    def __len__(self) -> int:
        return len(self.procs)

    def __getitem__(self, index: int) -> list[Any]:
        end = self.ends[index]
        return [self.procs[index], self.starts[index], None if end != end else end]

    def __iter__(self) -> Iterator[list[Any]]:
        for proc, start, end in zip(self.procs, self.starts, self.ends):
            yield [proc, start, None if end != end else end]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, OverSubscriptionRecord):
            other = list(other)
        if not isinstance(other, (list, tuple)):
            return NotImplemented
        return list(self) == [list(e) for e in other]

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"OverSubscriptionRecord({list(self)!r})"


def merged_spans(
    episodes: OverSubscriptionRecord | Sequence[Sequence[Any]],
) -> list[tuple[int, float, float | None]]:
    """Over-subscription episodes with back-to-back ones of a processor merged.

    A processor whose job ends while another starts at the same instant ends one episode and
    starts the next at that instant; as spans of time they are one. Merging keeps every
    instant a processor was over-subscribed (figures, shares of time) and drops the rows that
    only repeat an instant. Spans come in order of start, then processor id (then record
    order).
    """
    return [row for rows in span_rows(episodes, len(episodes) or 1) for row in rows]


def span_rows(
    episodes: OverSubscriptionRecord | Sequence[Sequence[Any]], chunk: int = 65536
) -> Iterator[list[tuple[int, float, float | None]]]:
    """The rows of :func:`merged_spans`, ``chunk`` at a time (a writer never holds them all).

    Vectorised: ordered by processor, then start (stable), an episode joins the span before
    it exactly when it is the same processor's and starts when the previous episode ended
    (an open episode ends at NaN, which equals nothing).
    """
    if isinstance(episodes, OverSubscriptionRecord):
        procs = np.frombuffer(episodes.procs, dtype=np.int32).astype(np.int64)
        starts = np.frombuffer(episodes.starts, dtype=np.float64)
        ends = np.frombuffer(episodes.ends, dtype=np.float64)
    else:
        procs = np.array([int(e[0]) for e in episodes], dtype=np.int64)
        starts = np.array([float(e[1]) for e in episodes], dtype=np.float64)
        ends = np.array([_OPEN if e[2] is None else float(e[2]) for e in episodes])
    n = len(procs)
    if not n:
        return
    order = np.lexsort((np.arange(n), starts, procs))  # by processor, start, record order
    p, s, e = procs[order], starts[order], ends[order]
    joins = np.zeros(n, dtype=bool)
    joins[1:] = (p[1:] == p[:-1]) & (e[:-1] == s[1:])
    heads = np.flatnonzero(~joins)
    # A span ends where the next span begins: its last episode is the one before that head.
    lasts = np.empty_like(heads)
    lasts[:-1] = heads[1:] - 1
    lasts[-1] = n - 1
    span_proc, span_start, span_end = p[heads], s[heads], e[lasts]
    final = np.lexsort((order[heads], span_proc, span_start))  # start, processor, record order
    span_proc, span_start, span_end = span_proc[final], span_start[final], span_end[final]
    del order, p, s, e, joins, heads, lasts, final
    for at in range(0, len(span_proc), chunk):
        part = slice(at, at + chunk)
        yield [
            (proc, start, None if end != end else end)
            for proc, start, end in zip(
                span_proc[part].tolist(), span_start[part].tolist(), span_end[part].tolist()
            )
        ]


__all__ = ["OverSubscriptionRecord", "merged_spans", "span_rows"]
