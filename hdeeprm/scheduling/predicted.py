"""Predicted run times and running ends for a scheduler that is not a :class:`BackfillScheduler`.

An environment in which an agent takes EASY's backfilling choices
(:mod:`hdeeprm.environment.backfill_choice`) still reserves the head job as the EASY variant
it stands in for does: with that variant's run-time predictor and correction.
:class:`PredictedEnds` is a job listener of the workload manager (``submitted``, ``started``,
``completed``) that keeps the same books as :class:`BackfillScheduler`: a prediction per job
at submission (what orderings and the backfilling test read), every completion observed by
the predictor, the running jobs' predicted ends, corrected lazily when they expire (at the
next reservation: nothing is decided in between, :mod:`.corrections`). With the ``requested``
predictor this is EASY's usual reservation by user estimates.
"""

from __future__ import annotations

from collections.abc import Callable

from hdeeprm.scheduling.backfilling import SchedJob, make_predictor
from hdeeprm.scheduling.config import HeuristicTriple, SchedulerConfig
from hdeeprm.scheduling.corrections import CORRECTIONS, advance
from hdeeprm.scheduling.jobs import QueuedJob
from hdeeprm.scheduling.profile import RunningEnds


class PredictedEnds:
    """A job listener: each job's predicted run time and the running jobs' predicted ends.

    Args:
        triple: the predictor and correction (``variant`` is not read).
        clock: the current time (the workload manager's ``now``): listeners are told of
            submissions and completions without it.
    """

    def __init__(self, triple: HeuristicTriple, clock: Callable[[], float]) -> None:
        if triple.correction not in CORRECTIONS:
            raise ValueError(
                f"unknown correction {triple.correction!r}; "
                f"expected one of {', '.join(CORRECTIONS)}"
            )
        self.triple = triple
        self.predictor = make_predictor(SchedulerConfig(triple))
        self.ends = RunningEnds()
        #: Queued and running jobs by submission number.
        self.jobs: dict[int, SchedJob] = {}
        #: Every job's prediction at submission, by submission number (kept after it ends:
        #: an observation may read a job's row after the job is gone).
        self.predictions: dict[int, float] = {}
        self._clock = clock
        #: Corrections applied to running jobs.
        self.nb_corrections = 0

    def submitted(self, record: QueuedJob) -> None:
        job = SchedJob(record, record.req_time)
        job.pred = job.run_pred = self.predictor.predict(job, self._clock())
        self.jobs[job.seq] = job
        self.predictions[job.seq] = job.pred

    def started(self, record: QueuedJob) -> None:
        job = self.jobs[record.seq]
        now = job.start = self._clock()
        self.predictor.started(job, now)
        self.ends.add(job.seq, now + job.run_pred, job.res)

    def completed(self, record: QueuedJob) -> None:
        job = self.jobs.pop(record.seq)
        now = self._clock()
        self.ends.remove(job.seq, job.predicted_end)
        self.predictor.observe(job, now - job.start, now)

    def predicted(self, record: QueuedJob) -> float:
        """The run time predicted for a job at its submission."""
        return self.predictions[record.seq]

    def shadow(self, need: int, free: int, now: float) -> tuple[float, int]:
        """EASY's reservation for ``need`` cores with ``free`` free now
        (:meth:`RunningEnds.shadow`), after correcting the running jobs that outlived their
        prediction; a job at its requested time counts as free now."""
        ends, name, jobs = self.ends, self.triple.correction, self.jobs
        for seq in ends.expired(now):
            job = jobs[seq]
            self.nb_corrections += advance(job, name, now)
            end = job.start + job.run_pred
            if end <= now:
                ends.mark_overdue(seq)
            else:
                ends.add(seq, end, job.res)
        return ends.shadow(need, free, now)


__all__ = ["PredictedEnds"]
