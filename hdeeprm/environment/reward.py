"""Rewards of the six objectives (SPEC section 6, thesis 3.2.4) and when they are measured.

Timing (seed 003, section 3.2.1): an action's consequences unfold *after* it is applied, so
the reward of the action taken at decision time ``t0`` is measured over the span from ``t0``
to the next decision point ``t1`` (or to the end of the simulation for the last action):

* ``energy_consumption``: ``-E``, the energy the platform consumed during ``[t0, t1]`` (J);
* ``edp``: ``-E * (t1 - t0)``, energy-delay product of that span (J s);
* the four *rate* objectives are quantities of the state, averaged over ``[t0, t1]`` weighted
  by time (the state changes at every job completion inside the span):

  - ``avg_job_slowdown``: ``-sum(1 / requested time)`` over active (queued + running) jobs;
  - ``avg_job_completion``: ``-(number of active jobs)``;
  - ``avg_utilization``: number of busy cores;
  - ``makespan``: sum of the cores' current speeds (GFLOPS).

  When the span is empty (the next decision point comes at the same instant) the rate reward
  is the value right after the action.

The thesis evaluated the rate rewards at the instant of the action. Averaging over the span
keeps their scale (jobs, cores, GFLOPS) but also sees what the action caused later: in the
thesis 5.4 scenario the spread placement reads 8.0 GFLOPS (two jobs of 21 GFLOP done in
5.25 s) rather than the instantaneous 8.4, and consolidations 6.6 and 6.0 as in the thesis.
"""

from __future__ import annotations

import math

from hdeeprm.decision import WorkloadManager
from hdeeprm.simulation import Engine

#: Objectives whose reward is a state quantity averaged over the span.
RATE_OBJECTIVES = ("avg_job_slowdown", "avg_job_completion", "avg_utilization", "makespan")
#: Objectives whose reward integrates energy over the span.
ENERGY_OBJECTIVES = ("energy_consumption", "edp")
OBJECTIVES = RATE_OBJECTIVES + ENERGY_OBJECTIVES
#: Objectives only the potential-based rewards know (job-selection environment); not options
#: values of ``pybatsim.env.objective``.
EXTRA_OBJECTIVES = ("avg_bounded_slowdown",)
#: Seconds below which a run counts as this long in the bounded slowdown (RLScheduler's tau).
BSLD_TAU = 10.0


def _inverse_requested(manager: WorkloadManager) -> float:
    total = 0.0
    for job in manager.job_queue.jobs:
        req = job.req_time
        if 0.0 < req < math.inf:
            total += 1.0 / req
    for job in manager.running.values():
        req = job.req_time
        if 0.0 < req < math.inf:
            total += 1.0 / req
    return total


def rate_value(objective: str, manager: WorkloadManager) -> float:
    """Current value of a rate objective's reward (see the module docstring)."""
    if objective == "avg_utilization":
        return float(manager.busy_cores)
    if objective == "makespan":
        return float(manager.pool.speeds().sum())
    if objective == "avg_job_completion":
        return -float(manager.queue_size + manager.active_jobs)
    if objective == "avg_job_slowdown":
        return -_inverse_requested(manager)
    raise ValueError(f"{objective!r} is not a rate objective; expected one of {RATE_OBJECTIVES}")


class RewardMeter:
    """Measures one action's reward over the span up to the next decision point.

    Call :meth:`start` right after the action was applied (the manager's state is the one the
    action created), :meth:`advance` with the time of every message that follows, then
    :meth:`refresh` after the message was applied (the new state holds from that time on),
    and :meth:`reward` once the next decision point (or the end) is reached.
    """

    def __init__(self, objective: str, manager: WorkloadManager, engine: Engine) -> None:
        if objective not in OBJECTIVES:
            raise ValueError(f"unknown objective {objective!r}; expected one of {OBJECTIVES}")
        self.objective = objective
        self.manager = manager
        self.engine = engine
        self._rate = objective in RATE_OBJECTIVES
        self.t0 = self.t = engine.now
        self.e0 = engine.consumed_energy
        self.first = self.value = 0.0
        self.integral = 0.0

    def start(self) -> None:
        self.t0 = self.t = self.engine.now
        self.e0 = self.engine.consumed_energy
        self.integral = 0.0
        if self._rate:
            self.first = self.value = rate_value(self.objective, self.manager)

    def advance(self, now: float) -> None:
        if self._rate and now > self.t:
            self.integral += self.value * (now - self.t)
        self.t = max(self.t, now)

    def refresh(self) -> None:
        if self._rate:
            self.value = rate_value(self.objective, self.manager)

    @property
    def span(self) -> float:
        return self.t - self.t0

    def energy(self) -> float:
        """Energy consumed since :meth:`start` (J)."""
        return self.engine.consumed_energy - self.e0

    def reward(self) -> float:
        span = self.span
        if self._rate:
            return self.integral / span if span > 0 else self.first
        energy = self.energy()
        if self.objective == "energy_consumption":
            return -energy
        return -energy * span


def bounded_slowdown(submit: float, start: float, finish: float, tau: float = BSLD_TAU) -> float:
    """``max((finish - submit) / max(run, tau), 1)``: a job's bounded slowdown."""
    return max((finish - submit) / max(finish - start, tau), 1.0)


def episode_objective(objective: str, engine: Engine, nb_cores: int) -> float:
    """The objective's value over a finished simulation (what the rewards stand for).

    ``avg_job_slowdown``: mean (finish - submit) / (finish - start) over jobs that ran
    (jobs of zero run time count 1); ``avg_job_completion``: mean finish - submit;
    ``avg_utilization``: mean fraction of busy cores from the first submission to the last
    completion; ``makespan``: last completion - first submission (s); ``energy_consumption``:
    total energy (J); ``edp``: total energy x makespan (J s); ``avg_bounded_slowdown``: mean
    max((finish - submit) / max(run, tau), 1) with tau = :data:`BSLD_TAU` (Feitelson's
    bounded slowdown, RLScheduler's metric).
    """
    # (submit, start, finish, cores) of the jobs that ran
    ran: list[tuple[float, float, float, int]] = [
        (j.subtime, start, finish, len(j.alloc))
        for j in engine.finished_jobs
        if (start := j.start_time) is not None and (finish := j.finish_time) is not None
    ]
    jobs = engine.finished_jobs
    first = min((j.subtime for j in jobs), default=0.0)
    last = max((finish for _, _, finish, _ in ran), default=first)
    makespan = max(0.0, last - first)
    if objective == "makespan":
        return makespan
    if objective == "energy_consumption":
        return engine.consumed_energy
    if objective == "edp":
        return engine.consumed_energy * makespan
    if not ran:
        return 0.0
    if objective == "avg_job_completion":
        return math.fsum(finish - sub for sub, _, finish, _ in ran) / len(ran)
    if objective == "avg_job_slowdown":
        total = 0.0
        for sub, start, finish, _ in ran:
            run = finish - start
            total += (finish - sub) / run if run > 0 else 1.0
        return total / len(ran)
    if objective == "avg_bounded_slowdown":
        return math.fsum(bounded_slowdown(sub, start, finish) for sub, start, finish, _ in ran) / (
            len(ran)
        )
    if objective == "avg_utilization":
        busy = math.fsum(cores * (finish - start) for _, start, finish, cores in ran)
        return busy / (nb_cores * makespan) if makespan > 0 else 0.0
    raise ValueError(f"unknown objective {objective!r}; expected one of {OBJECTIVES}")
