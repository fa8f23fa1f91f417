"""Rewards that add up to the objective (``pybatsim.env.reward = "objective"``, the default).

Each objective has a *potential* ``Phi(t)``: a running, normalised value of the objective so
far, 0 at the start of the episode and equal to the episode's objective (exactly, as
:func:`~hdeeprm.environment.reward.episode_objective` computes it) once the simulation has
ended. A step's reward is the potential's change over the step's span, negated for the costs:

    r_k = -(Phi(t_k) - Phi(t_{k-1}))   (utilisation: +)

so the rewards of an episode telescope to ``-objective`` (``+`` utilisation) up to float
rounding: ``sum(r) == -episode objective / unit``. Every cost is credited over the span where
it accrues, not at the end (dense), and the last step carries the difference between the
running estimate and the exact final value (the estimate's error: only slowdown has one).

===================  ==================================================  ==================
objective            Phi(t) while running                                unit (return =)
===================  ==================================================  ==================
avg_job_slowdown     [sum of final slowdowns of the finished jobs +      per job: -mean
                     sum over queued jobs of (t - submit) / req_time +   slowdown
                     sum over running jobs of (start - submit) /
                     req_time] / N
avg_bounded_slowdown as avg_job_slowdown, with max(req_time, tau) and      per job: -mean
                     max(run, tau) for req_time and run, and each        bounded slowdown
                     final value at least 1 (job-selection env only)
avg_job_completion   [sum of turnarounds of the finished jobs + sum      per job, hours:
                     over queued jobs of (t - submit) + sum over         -mean turnaround/h
                     running jobs of (start - submit + req_time)]
                     / N / 3600
avg_utilization      busy core-seconds / (cores x (t - t_first))         fraction: +mean
                                                                         utilisation
makespan             (t - t_first) / 3600                                hours: -makespan/h
energy_consumption   E(t) / (P_max x 3600)                               platform-hours at
                                                                         full power
edp                  E(t) x (t - t_first) / (P_max x 3600 x 3600)        that x hours
===================  ==================================================  ==================

``N`` is the number of jobs of the episode (rejected jobs, which never run, are not in the
objective: the last step corrects for them), ``t_first`` the first submission (0 in a window),
``P_max`` the platform's power with every core at full load (sum of the cores' P0 watts), and
``E(t)`` the energy consumed so far.

Slowdown and turnaround credit a job's *wait* while it waits, and the rest of its cost when
it is known: a queued job accrues ``1 / req_time`` of slowdown per second (the thesis's own
signal, integrated instead of time-averaged) or 1 s of turnaround per second; the step that
starts it stops that accrual (so starting the jobs whose waiting costs most pays at once) and,
for turnaround, books its requested time as the expected run; when it completes, the estimate
is replaced by the real value: slowdown ``(finish - submit) / run`` (``1`` for a zero-length
job, the definition of ``hdeeprm-metrics``), turnaround ``finish - submit``. A job without a
finite requested time accrues no slowdown while queued (its real slowdown comes at
completion).

Costs are kept incrementally (sums updated at each submission and completion, integrals
advanced at each message): a step costs O(events), never a scan of the active jobs.
"""

from __future__ import annotations

import math

from hdeeprm.decision import WorkloadManager
from hdeeprm.decision.job_queue import JobRecord
from hdeeprm.environment.reward import (
    BSLD_TAU,
    EXTRA_OBJECTIVES,
    OBJECTIVES,
    bounded_slowdown,
    episode_objective,
)
from hdeeprm.simulation import Engine

#: Seconds per time unit of the time-based objectives' rewards (hours).
TIME_UNIT = 3600.0
#: Objectives to maximise: their rewards add up to ``+objective``.
MAXIMISED = ("avg_utilization",)
_INF = math.inf


class ObjectiveReward:
    """Potential-based rewards of one episode (see the module docstring).

    Args:
        objective: one of :data:`~hdeeprm.environment.reward.OBJECTIVES`.
        manager: the episode's workload manager (reports submissions and completions).
        engine: the episode's engine (time, energy, finished jobs).
        nb_jobs: jobs in the episode (the per-job normalisation ``N``).
        t_first: time of the first submission.
    """

    def __init__(
        self,
        objective: str,
        manager: WorkloadManager,
        engine: Engine,
        nb_jobs: int,
        t_first: float = 0.0,
    ) -> None:
        known = OBJECTIVES + EXTRA_OBJECTIVES
        if objective not in known:
            raise ValueError(f"unknown objective {objective!r}; expected one of {known}")
        self.objective = objective
        self.manager = manager
        self.engine = engine
        self.nb_jobs = max(1, nb_jobs)
        self.t_first = t_first
        self.sign = 1.0 if objective in MAXIMISED else -1.0
        pool = manager.pool
        self.p_max = math.fsum(pool.core_power) or 1.0
        self.nb_cores = pool.nb_cores
        #: Bounded slowdown: slowdown with times below ``tau`` counted as ``tau``.
        self._bounded = objective == "avg_bounded_slowdown"
        self._slowdown = objective == "avg_job_slowdown" or self._bounded
        #: Smallest run / requested time a slowdown divides by (0: plain slowdown).
        self._floor = BSLD_TAU if self._bounded else 0.0
        self._turnaround = objective == "avg_job_completion"
        self._busy = objective == "avg_utilization"
        self.t = engine.now
        self.t0 = self.t
        #: Jobs submitted and not yet completed (queued or running), and those queued.
        self.active = 0
        self.queued = 0
        #: Sum of 1 / req_time over queued jobs with a finite positive requested time.
        self.rate = 0.0
        #: Integral over time of ``rate`` (slowdown) or of ``queued`` (turnaround) or of the
        #: busy cores (utilisation).
        self.integral = 0.0
        #: Jumps of the estimate: slowdown, at completion (real slowdown - credited wait);
        #: turnaround, ``req_time`` at start and (run - req_time) at completion.
        self.correction = 0.0
        self.previous = 0.0
        #: The episode's objective (:func:`episode_objective`) once :meth:`final` has
        #: computed it over the ended simulation (``None`` before).
        self.episode_value: float | None = None
        manager.job_listeners.append(self)

    # --- workload manager listener ---------------------------------------------------
    def submitted(self, record: JobRecord) -> None:
        self.active += 1
        self.queued += 1
        if self._slowdown:
            req, floor = record.req_time, self._floor
            if floor > req:  # max(req, floor) without the call
                req = floor
            if 0.0 < req < _INF:
                self.rate += 1.0 / req

    def started(self, record: JobRecord) -> None:
        """A job leaves the queue: its wait is known, and so is its estimate."""
        self.queued -= 1
        if self._slowdown:
            req, floor = record.req_time, self._floor
            if floor > req:  # max(req, floor) without the call
                req = floor
            if 0.0 < req < _INF:
                self.rate -= 1.0 / req
            if not self.queued:
                self.rate = 0.0  # no drift from adding and removing many terms
        elif self._turnaround:
            req = record.req_time
            if req < math.inf:
                self.correction += req  # expected run, settled at completion

    def completed(self, record: JobRecord) -> None:
        self.active -= 1
        finish = self.t
        submit = record.subtime
        start = getattr(record.job, "start_time", None)
        if start is None:
            start = record.start
        run = finish - start
        req = record.req_time
        if self._slowdown:
            if self._bounded:
                real = bounded_slowdown(submit, start, finish)
                req = max(req, self._floor)
            else:
                real = (finish - submit) / run if run > 0 else 1.0
            if 0.0 < req < math.inf:
                real -= (start - submit) / req  # the wait already credited
            self.correction += real
        elif self._turnaround:
            # Turnaround = wait (credited while queued) + run; the start credited ``req``.
            self.correction += run - (req if req < math.inf else 0.0)

    # --- environment loop ------------------------------------------------------------
    def start(self) -> None:
        """A step starts (the action was just applied)."""
        self.t0 = self.t

    def advance(self, now: float) -> None:
        """Time moves to ``now`` under the state in force since the last call."""
        dt = now - self.t
        if dt > 0.0:
            if self._slowdown:
                self.integral += self.rate * dt
            elif self._turnaround:
                self.integral += self.queued * dt
            elif self._busy:
                pool = self.manager.pool
                self.integral += (pool.nb_cores - pool.free_count) * dt
            self.t = now

    def refresh(self) -> None:
        """Nothing to do: the sums follow submissions and completions as they happen."""

    @property
    def span(self) -> float:
        return self.t - self.t0

    def potential(self) -> float:
        """The normalised objective so far (exact once the simulation has ended)."""
        engine = self.engine
        if engine.finished:
            return self.final()
        objective = self.objective
        elapsed = self.t - self.t_first
        if self._slowdown:
            return (self.integral + self.correction) / self.nb_jobs
        if self._turnaround:
            return (self.integral + self.correction) / self.nb_jobs / TIME_UNIT
        if self._busy:
            return self.integral / (self.nb_cores * elapsed) if elapsed > 0 else 0.0
        if objective == "makespan":
            return elapsed / TIME_UNIT
        energy = engine.consumed_energy / (self.p_max * TIME_UNIT)
        if objective == "energy_consumption":
            return energy
        return energy * elapsed / TIME_UNIT

    def final(self) -> float:
        """The episode's objective in reward units (:func:`episode_objective` scaled)."""
        value = self.episode_value
        if value is None:
            value = episode_objective(self.objective, self.engine, self.nb_cores)
            if self.engine.finished:  # final: kept (a pass over every job of the episode)
                self.episode_value = value
        return value * self.scale(self.objective, self.p_max)

    @staticmethod
    def scale(objective: str, p_max: float) -> float:
        """Reward units per objective unit: ``return = -objective x scale`` (``+`` for
        utilisation)."""
        if objective in ("avg_job_slowdown", "avg_bounded_slowdown", "avg_utilization"):
            return 1.0
        if objective in ("avg_job_completion", "makespan"):
            return 1.0 / TIME_UNIT
        if objective == "energy_consumption":
            return 1.0 / (p_max * TIME_UNIT)
        return 1.0 / (p_max * TIME_UNIT * TIME_UNIT)

    def reward(self) -> float:
        """The potential's change since the previous reward, signed."""
        now = self.potential()
        change = now - self.previous
        self.previous = now
        return self.sign * change
