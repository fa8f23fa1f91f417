"""The agent chooses what EASY backfills (``hdeeprm/BackfillChoice-v0``): RLBackfilling's setting.

EASY stays the scheduler and its reservation the safety net; learning only decides the order
in which jobs backfill. At every decision point the environment itself starts the first queued
job in EASY's primary ordering (the *head*; submission order by default) while it fits. When it
does not, the head is reserved as EASY reserves it (at the earliest time enough cores are
predicted free by the running jobs, :meth:`hdeeprm.scheduling.profile.RunningEnds.shadow`), and
the **candidates** are the other queued jobs that EASY may start now: they fit, and either are
predicted to end by the reservation or use only cores spare at that time. Starting a candidate
can never delay the head's predicted start (free and spare cores only shrink): no job waits
longer than under EASY's guarantee, which holds as far as the predictions do.

Predictions are the users' requested times by default; ``predictor`` and ``correction`` take
those of another EASY variant (AVE2, the E-Loss regression; corrections of the jobs that outlive
them), kept as :class:`~hdeeprm.scheduling.BackfillScheduler` keeps them
(:class:`~hdeeprm.scheduling.predicted.PredictedEnds`): they order the queue, make the
reservation and decide which jobs end by it.

* **Action**: one of the first ``queue_slots`` candidates in submission order (slot ``i``).
  As EASY, a candidate always starts: *do nothing* (the last action) is masked, unless
  ``wait=True`` allows it (backfill no more now, let time run to the next event). After a
  start the environment starts heads again and offers the new candidates; when none is left
  the simulation runs on by itself, so every step is a real choice.
* **Observation, reward, episodes**: :class:`~hdeeprm.environment.job_selection.JobSelectionEnv`'s
  (the slots hold the candidates, and the last feature counts the queued jobs that are not
  candidates; with a predictor, a job's ``req_time`` feature is its predicted run time, what
  its place in the queue and in the reservation depend on); the rewards add up to minus the
  episode's mean bounded slowdown.
* **The rules as agents**: always slot 0 is EASY (first come, first backfilled); the candidate
  with the shortest predicted run time is EASY-SJBF (:func:`easy_pick`, :func:`sjbf_pick`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hdeeprm.decision.job_queue import JobRecord
from hdeeprm.environment.job_selection import _NO_SEQS, JobSelectionEnv, _JobTable
from hdeeprm.errors import SimulationError
from hdeeprm.scheduling.config import PREDICTORS, HeuristicTriple
from hdeeprm.scheduling.corrections import CORRECTIONS
from hdeeprm.scheduling.orderings import ORDERINGS, sort_key
from hdeeprm.scheduling.predicted import PredictedEnds


class BackfillChoiceEnv(JobSelectionEnv):
    """Choose which job EASY backfills next, or none (module docstring).

    Takes :class:`~hdeeprm.environment.job_selection.JobSelectionEnv`'s arguments except
    ``backfill`` (always on, and the agent's), ``policies``, ``rlscheduler`` and ``max_wait``
    (EASY's reservation is the guard here); ``wait``
    allows doing nothing while candidates wait (an agent can then refuse to backfill: on
    lublin_256 two seeds of five learned to, and did worse than no backfilling at all);
    ``ordering``, ``predictor`` and ``correction`` are those of the EASY variant the agent
    backfills for (module docstring).
    """

    def __init__(
        self,
        inputs: Any,
        *,
        wait: bool = False,
        ordering: str = "FCFS",
        predictor: str = "requested",
        correction: str = "requested",
        **kwargs: Any,
    ) -> None:
        if kwargs.get("max_wait") is not None:
            raise ValueError(
                f"BackfillChoiceEnv does not take max_wait={kwargs['max_wait']!r}: EASY's "
                "reservation is its guard"
            )
        for key in ("backfill", "policies", "rlscheduler"):
            if kwargs.get(key):
                raise ValueError(f"BackfillChoiceEnv does not take {key}={kwargs[key]!r}")
            kwargs.pop(key, None)
        if ordering not in ORDERINGS:
            raise ValueError(
                f"unknown ordering {ordering!r}; expected one of {', '.join(ORDERINGS)}"
            )
        if predictor not in PREDICTORS:
            raise ValueError(
                f"unknown predictor {predictor!r}; expected one of {', '.join(PREDICTORS)}"
            )
        if correction not in CORRECTIONS:
            raise ValueError(
                f"unknown correction {correction!r}; expected one of {', '.join(CORRECTIONS)}"
            )
        #: The predictor and correction of the reservations (``variant`` is not read).
        self.triple = HeuristicTriple(predictor, correction)
        #: ``predicted(job)``: the run time predicted for a queued job at its submission
        #: (the requested time, or the episode's predictor's, set at each reset).
        self.predicted: Callable[[JobRecord], float] = _requested
        super().__init__(inputs, backfill=True, **kwargs)
        self.wait = bool(wait)
        #: EASY's primary ordering (:mod:`hdeeprm.scheduling.orderings`, read with the
        #: predicted run times): the head is the first queued job in it.
        self.ordering = ordering
        #: The reserved head of the last offer (None: every head started) and its reservation.
        self.head: JobRecord | None = None
        self.shadow = float("nan")
        #: EASY's pass at this instant: (head, time, reservation, spare cores, the started
        #: list and how many of its jobs the spare cores count).
        self._pass: tuple[JobRecord, float, float, int, list[JobRecord], int] | None = None

    def _current_mask(self) -> np.ndarray:
        """The candidates' slots; do nothing only with ``wait`` (or once the episode ended).
        Masked once, when the state's mask is first computed (it is kept until the state
        changes)."""
        fresh = self._mask is None
        mask = super()._current_mask()
        if fresh and not self.wait and not self._done and self._visible:
            mask[self.do_nothing] = False
        return mask

    def _running_ends(self, manager: Any) -> Any:
        """Requested ends (the parent's, the fast path), or the variant's predictions."""
        if self.triple.predictor == "requested":
            self.predicted = _requested
            return super()._running_ends(manager)
        ends = PredictedEnds(self.triple, lambda: manager.now)
        self.predicted = self._planned_time = ends.predicted
        return ends

    def _wait_for(self, job: JobRecord, core_policy: str) -> None:
        raise SimulationError(f"candidate {job.id} did not fit: candidates fit by definition")

    def _settle(self) -> None:
        """Start heads while they fit, then offer the candidates; run on while there are none."""
        while not self._done:
            head = self._start_heads()
            if head is not None and self._offer(head):
                break
            self._proceed()
        if self._done:
            self._visible = []
            self._seqs = _NO_SEQS
            self._fits[:] = False
            self.head = None
        self._seen = -1  # the parent's cached view of the queue does not apply here
        self._obs = self._observer.build()
        self._mask = None

    def _head(self) -> JobRecord:
        """The first queued job in the primary ordering (the oldest with FCFS)."""
        queue = self.manager.job_queue
        if self.ordering == "FCFS":
            return queue.head(1)[0]
        key, predicted = sort_key(self.ordering, self.manager.now), self.predicted
        return min(queue.head(len(queue)), key=lambda job: key(_Ordered(job, predicted(job))))

    def _start_heads(self) -> JobRecord | None:
        """EASY's first step: the first queued jobs in the primary ordering start, in order,
        while each fits; the first that does not (None: the queue emptied)."""
        manager, started = self.manager, self._started
        queue = manager.job_queue
        while len(queue):
            head = self._head()
            if not (
                manager.fits_now(head.res, head.mem, head.gpus)
                and manager.start_job(head, self.core_policy)
            ):
                return head
            started.append(head)
        return None

    def _offer(self, head: JobRecord) -> bool:
        """The candidates around the reserved ``head`` as the visible jobs; False when none."""
        manager = self.manager
        queue = manager.job_queue
        free = manager.pool.free_count
        if len(queue) < 2 or not free:
            return False
        jobs = queue.head(len(queue))
        now = manager.now
        shadow, extra = self._reservation(head, free, now)
        fits_now, limit, predicted = manager.fits_now, self.queue_slots, self.predicted
        candidates = []
        for job in jobs:
            if job is not head and (
                job.res <= free
                and (now + predicted(job) <= shadow or job.res <= extra)
                and fits_now(job.res, job.mem, job.gpus)
            ):
                candidates.append(job)
                if len(candidates) == limit:
                    break
        if not candidates:
            return False
        self.head, self.shadow = head, shadow
        n = len(candidates)
        self._visible = candidates
        table = self._table
        table.update()
        seqs = self._seqs = np.fromiter((j.seq for j in candidates), np.intp, n)
        values = self._vis_values = table.values.take(seqs, axis=0)
        self._vis_res = values[:, _JobTable.RES]
        self._min_res = float(np.minimum.reduce(self._vis_res))
        self._fits[:n] = True
        self._fits[n:] = False
        self._any_fits = True
        return True

    def _reservation(self, head: JobRecord, free: int, now: float) -> tuple[float, int]:
        """The head's reservation and the cores spare then, made once per instant as EASY's
        pass makes it: later offers at the same instant keep the reservation and take from
        the spare cores what each backfilled job that ends after it uses (recomputing would
        count a job ending exactly at the reservation after the head's cores, not before)."""
        started, kept = self._started, self._pass
        if kept is not None and kept[0] is head and kept[1] == now and kept[4] is started:
            shadow, extra, counted = kept[2], kept[3], kept[5]
            predicted = self.predicted
            for job in started[counted:]:
                if now + predicted(job) > shadow:
                    extra -= job.res
        else:
            shadow, extra = self._ends.shadow(head.res, free, now)
        self._pass = (head, now, shadow, extra, started, len(started))
        return shadow, extra


def _requested(job: JobRecord) -> float:
    return job.req_time


class _Ordered:
    """A queued job as an ordering reads it (:class:`~hdeeprm.scheduling.orderings.Orderable`)
    with its predicted run time."""

    __slots__ = ("seq", "subtime", "res", "pred")

    def __init__(self, job: JobRecord, pred: float) -> None:
        self.seq, self.subtime, self.res, self.pred = job.seq, job.subtime, job.res, pred


def easy_pick(env: BackfillChoiceEnv) -> int:
    """EASY: the oldest candidate backfills first."""
    return 0


def sjbf_pick(env: BackfillChoiceEnv) -> int:
    """EASY-SJBF: the candidate with the shortest predicted run time (the oldest among
    equals)."""
    predicted = env.predicted
    return int(np.argmin([predicted(job) for job in env.visible_jobs]))


__all__ = ["BackfillChoiceEnv", "easy_pick", "sjbf_pick"]
