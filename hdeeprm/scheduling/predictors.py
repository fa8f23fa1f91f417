"""Run-time predictors (thesis chapter 4): what the scheduler believes a job will run.

A predictor answers once per job, at submission (:meth:`Predictor.predict`), and learns from
every completion (:meth:`Predictor.observe`). Times are in seconds at the platform's reference
speed (the converter's ``req_time``); on a heterogeneous platform the real run time also
depends on where the job is placed, which no predictor sees.

* ``requested``: the user's requested time (standard EASY);
* ``clairvoyant``: the real run time at the reference speed (an upper bound on what prediction
  can give; read from the profile: ``delay``, or ``cpu`` flops over ``req_ops / req_time``);
* ``ave2``: AVE2(k), the mean of the last two run times of the job's user (Tsafrir et al.), the
  one run time when the user has one, the requested time when the user has none or the job has
  no user;
* ``regression``: the online regression of :mod:`hdeeprm.scheduling.regression` (E-Loss and the
  other loss/weight combinations).

Every prediction is capped at the requested time (a job never runs longer than that under a
walltime) and is at least 1 s.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Protocol


class PredictedJob(Protocol):
    """What predictors read from a job."""

    seq: int
    subtime: float
    res: int
    req: float

    @property
    def user(self) -> int | None:
        """The job's user id (``None``: unknown)."""

    @property
    def actual(self) -> float:
        """The real run time at the reference speed (NaN: unknown)."""


class Predictor(Protocol):
    """Predicts run times at submission; learns from completions."""

    def predict(self, job: PredictedJob, now: float) -> float: ...

    def observe(self, job: PredictedJob, run_time: float, now: float) -> None: ...

    def started(self, job: PredictedJob, now: float) -> None: ...


def _cap(value: float, req: float) -> float:
    if not math.isfinite(value):
        value = req
    return max(1.0, min(value, req)) if math.isfinite(req) else max(1.0, value)


class RequestedTime:
    """The user's requested time."""

    def predict(self, job: PredictedJob, now: float) -> float:
        return _cap(job.req, job.req)

    def observe(self, job: PredictedJob, run_time: float, now: float) -> None:
        pass

    def started(self, job: PredictedJob, now: float) -> None:
        pass


class Clairvoyant(RequestedTime):
    """The real run time (at the reference speed)."""

    def predict(self, job: PredictedJob, now: float) -> float:
        return _cap(job.actual, job.req)


class Ave2(RequestedTime):
    """Mean of the user's last two completed run times (EASY++'s predictor)."""

    def __init__(self) -> None:
        self._history: dict[int, deque[float]] = {}

    def predict(self, job: PredictedJob, now: float) -> float:
        runs = self._history.get(job.user) if job.user is not None else None
        if not runs:
            return _cap(job.req, job.req)
        return _cap(math.fsum(runs) / len(runs), job.req)

    def observe(self, job: PredictedJob, run_time: float, now: float) -> None:
        if job.user is None:
            return
        runs = self._history.get(job.user)
        if runs is None:
            runs = self._history[job.user] = deque(maxlen=2)
        runs.append(run_time)
