"""Corrections of a running job that outlives its predicted run time (thesis 4.3.2).

A correction returns the job's new predicted run time (from its start) given the current one
and how many corrections it already had; the scheduler applies corrections until the
predicted end is in the future, and never beyond the requested time:

* ``requested``: the requested time at once;
* ``incremental`` (Tsafrir et al., EASY++): the k-th correction adds the k-th step of 1 min,
  5 min, 15 min, 30 min, 1 h, 2 h, 5 h, 10 h, 20 h, 50 h, 100 h (the last step repeats);
* ``doubling`` (RECURSIVE DOUBLING): the prediction becomes twice the elapsed time, which at
  the moment of expiry is twice the previous prediction (at least +1 s, so a 0 s prediction
  moves).

Corrections are applied lazily, at the next decision point after the expiry: nothing is
decided between events, so the schedule is the same as correcting at the exact expiry instant,
and no extra simulator call is needed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: Increments of the INCREMENTAL correction, in seconds.
INCREMENTS: tuple[float, ...] = (
    60.0,
    300.0,
    900.0,
    1800.0,
    3600.0,
    7200.0,
    18000.0,
    36000.0,
    72000.0,
    180000.0,
    360000.0,
)


def _requested(pred: float, count: int, req: float) -> float:
    return req


def _incremental(pred: float, count: int, req: float) -> float:
    return pred + INCREMENTS[min(count, len(INCREMENTS) - 1)]


def _doubling(pred: float, count: int, req: float) -> float:
    return max(2.0 * pred, pred + 1.0)


#: ``correction(prediction, corrections so far, requested time) -> new prediction`` (uncapped).
CORRECTIONS: dict[str, Callable[[float, int, float], float]] = {
    "requested": _requested,
    "incremental": _incremental,
    "doubling": _doubling,
}


def correct(name: str, pred: float, count: int, req: float) -> float:
    """The new prediction after one correction, capped at the requested time ``req``."""
    return min(CORRECTIONS[name](pred, count, req), req)


def advance(job: Any, name: str, now: float) -> int:
    """Correct a running ``job`` (``start``, ``run_pred``, ``req``, ``corrections``) whose
    predicted end is ``<= now`` until that end is in the future or the prediction reached
    the requested time; returns how many corrections were applied."""
    pred, start, req, count = job.run_pred, job.start, job.req, job.corrections
    applied = 0
    while start + pred <= now and pred < req:
        pred = correct(name, pred, count + applied, req)
        applied += 1
    job.run_pred = pred
    job.corrections = count + applied
    return applied
