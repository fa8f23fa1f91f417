"""RLScheduler's protocol (Zhang et al., SC'20), for like-for-like comparisons with its figures.

Three rules of RLScheduler's job-picking environment differ from hdeeprm's defaults:

* **Visible queue**: up to ``Q`` queued jobs are shown in submission order; beyond ``Q``, the
  visible jobs alternate between the shortest requested times first and the fewest requested
  cores first (ties to the earliest submitted), skipping repeats, until ``Q`` are shown
  (:func:`rlscheduler_visible`).
* **Backfilling**: the picked job's reservation is computed once, when it is picked, from
  the running jobs' requested times; until it starts, queued jobs in submission order start
  if they fit now and end, by their requested time, strictly before that reservation. There
  is no "spare cores" rule: a job that would end after the reservation never backfills.
* **Sequences**: 1,024-job test sequences (256 for training) start anywhere in the trace
  (the start is drawn uniformly from ``[L, n - L - 1)`` for length ``L`` of ``n`` jobs); no
  part is held out. :func:`rlscheduler_starts` draws them.

``JobSelectionEnv(rlscheduler=True)`` applies the first two.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

import numpy as np


class _Queued(Protocol):
    seq: int
    subtime: float
    res: int
    req_time: float


J = TypeVar("J", bound=_Queued)


def rlscheduler_visible(queue: Sequence[J], slots: int) -> list[J]:
    """The jobs RLScheduler shows of ``queue`` (in submission order) with ``slots`` slots."""
    if len(queue) <= slots:
        return list(queue)
    shortest = sorted(queue, key=lambda j: (j.req_time, j.subtime))[:slots]
    smallest = sorted(queue, key=lambda j: (j.res, j.subtime))[:slots]
    shown: list[J] = []
    seen: set[int] = set()
    for pair in zip(shortest, smallest):
        for job in pair:
            if job.seq not in seen and len(shown) < slots:
                seen.add(job.seq)
                shown.append(job)
        if len(shown) == slots:
            break
    return shown


def rlscheduler_starts(nb_jobs: int, length: int, count: int, seed: int) -> list[int]:
    """``count`` sequence starts drawn as RLScheduler draws them (uniform in
    ``[length, nb_jobs - length - 1)``), with a seeded generator; in draw order."""
    if nb_jobs - length - 1 <= length:
        raise ValueError(f"a trace of {nb_jobs} jobs holds no {length}-job sequence this way")
    rng = np.random.default_rng(seed)
    return [int(s) for s in rng.integers(length, nb_jobs - length - 1, size=count)]
