"""EASY whose queue orderings are learned online, from simulated feedback on the jobs just seen.

Seed ``001`` (sections 6.3.1-6.3.2) chooses EASY's primary ordering per period by re-simulating
the period's jobs under every candidate ordering and keeping the cheapest so far. This is a
full-information online learner (follow the leader over the candidates, with a decay): at
the end of each period of ``period`` seconds, the jobs *submitted* during it are replayed on
an empty platform under each candidate (primary, backfilling) pair, each candidate's cost
(the summed bounded slowdowns, or waits, of those jobs) is added to its decayed total, and
the next period runs the candidate of lowest total. Before any feedback, the first
candidate runs. Only the past is read: nothing of a job is used before it was submitted,
and its run time only once the period it was submitted in has ended (like any log).

EASY's reservation for the head of the queue holds throughout: whatever the ordering, no
backfilled job delays the head's reservation. The scheduler wraps
:class:`~hdeeprm.scheduling.BackfillScheduler` and switches its orderings with
:meth:`~hdeeprm.scheduling.BackfillScheduler.use_orderings`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from hdeeprm.comparison.replay import replay
from hdeeprm.comparison.setting import TraceSetting
from hdeeprm.decision.job_queue import JobRecord
from hdeeprm.environment.episodes import shifted_jobs
from hdeeprm.scheduling import BackfillScheduler, SchedulerConfig
from hdeeprm.scheduling.jobs import StartJob
from hdeeprm.workload.model import JobSpec, Workload

#: What a period's replay charges a candidate.
COSTS = ("bsld", "wait")


@dataclass(frozen=True)
class OnlineTuning:
    """The learner's settings (what training windows choose).

    Attributes:
        candidates: ``(primary, backfill)`` ordering pairs; the first runs until the first
            period ends.
        period: seconds between two choices.
        decay: weight of the past totals at each period (1: every period counts alike).
        cost: ``"bsld"`` (summed bounded slowdowns, tau 10 s) or ``"wait"`` (summed waits).
    """

    candidates: tuple[tuple[str, str], ...]
    period: float = 86400.0
    decay: float = 1.0
    cost: str = "bsld"

    def __post_init__(self) -> None:
        if not self.candidates:
            raise ValueError("online tuning needs at least one candidate")
        if not (0 < self.period < math.inf):
            raise ValueError(f"period must be positive seconds, got {self.period!r}")
        if not 0 < self.decay <= 1:
            raise ValueError(f"decay must be in (0, 1], got {self.decay!r}")
        if self.cost not in COSTS:
            raise ValueError(f"cost must be one of {', '.join(COSTS)}, got {self.cost!r}")

    def describe(self) -> str:
        pairs = " ".join(f"{p}/{b}" for p, b in self.candidates)
        return (
            f"period {self.period / 3600:g} h, decay {self.decay:g}, cost {self.cost}, "
            f"candidates {pairs}"
        )


class OnlineTunedEasy:
    """A :class:`~hdeeprm.decision.workload_manager.SchedulingStrategy` for one window.

    Args:
        setting: the platform the period replays run on.
        workload: the window being played (the replays take its jobs' specifications).
        base: EASY's configuration (predictor, correction, variant); its orderings are
            replaced by the candidates'.
        tuning: candidates, period, decay and cost.
    """

    def __init__(
        self, setting: TraceSetting, workload: Workload, base: SchedulerConfig, tuning: OnlineTuning
    ) -> None:
        self.setting = setting
        self.tuning = tuning
        self.configs = [replace(base, primary=p, backfill=b) for p, b in tuning.candidates]
        names = {name for pair in tuning.candidates for name in pair}
        self.inner = BackfillScheduler(self.configs[0], orderings=sorted(names))
        self._specs = {f"{workload.name}!{job.id}": job for job in workload.jobs}
        self._template = workload
        self.totals = np.zeros(len(self.configs))
        self.choice = 0
        #: Index of the candidate in force in each period so far (for reports and tests).
        self.history: list[int] = []
        self._boundary = tuning.period
        self._period_jobs: list[JobSpec] = []

    def reset(self) -> None:
        self.inner.reset()
        self.totals[:] = 0.0
        self.choice = 0
        self.history.clear()
        self._boundary = self.tuning.period
        self._period_jobs.clear()
        self.inner.use_orderings(*self.tuning.candidates[0])

    # --- the strategy -------------------------------------------------------------------
    def submitted(self, record: JobRecord, now: float) -> None:
        self._advance(now)
        self._period_jobs.append(self._specs[record.id])
        self.inner.submitted(record, now)

    def completed(self, record: JobRecord, now: float) -> None:
        self._advance(now)
        self.inner.completed(record, now)

    def schedule(self, now: float, free: Callable[[], int], start: StartJob) -> None:
        self._advance(now)
        self.inner.schedule(now, free, start)

    # --- learning -----------------------------------------------------------------------
    def _advance(self, now: float) -> None:
        """Close every period that ended by ``now``: learn from its jobs, choose again."""
        while now >= self._boundary:
            self.history.append(self.choice)
            if self._period_jobs:
                self.totals = self.totals * self.tuning.decay + self.period_costs(self._period_jobs)
                self._period_jobs = []
                best = int(np.argmin(self.totals))  # ties: the earliest candidate
                if best != self.choice:
                    self.choice = best
                    self.inner.use_orderings(*self.tuning.candidates[best])
            self._boundary += self.tuning.period

    def period_costs(self, jobs: Sequence[JobSpec]) -> np.ndarray:
        """Each candidate's cost on ``jobs`` replayed alone from an empty platform."""
        template = self._template
        part = Workload(template.nb_res, shifted_jobs(jobs), template.profiles, template.name)
        costs = np.empty(len(self.configs))
        for i, config in enumerate(self.configs):
            score = replay(self.setting, part, BackfillScheduler(config))
            per_job = score.mean_bsld if self.tuning.cost == "bsld" else score.mean_wait
            costs[i] = per_job * score.nb_jobs
        return costs
