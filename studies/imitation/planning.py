"""A teacher that plans only with what a scheduler knows: the rollout algorithm without
clairvoyance.

:class:`~studies.imitation.rollout.RolloutTeacher` compares its candidates on the window's
*real* future: the jobs that will arrive later and the actual run times of those that have
not ended. No observation holds either, and students cloned from it learn little of its gain
even on the windows it labelled (``studies/imitation/README.md``). :class:`PlanningTeacher`
runs the same rollout algorithm on a *planning view* of the window at each segment's first decision,
time ``t``:

* the jobs submitted by ``t`` only (no arrivals);
* jobs that ended by ``t`` as they ran (their end is known);
* jobs running or queued at ``t`` with their *requested* work (the profile's ``req_ops``, or
  ``req_time`` for a ``delay`` profile) in place of the actual one.

Played from the window's start with the decisions committed so far, the planning view
reaches the same state at ``t`` as the real window (the same jobs, decisions and ends before
``t``), which is checked on every segment: a segment whose planning view does not reach the
real observation (a job that has run past its requested work, say) keeps the base action and
is counted in :attr:`PlanResult.unsynced`. The candidates are ranked by the objective of the
planning view's episode (the known jobs only). The committed trajectory is then played on the
real window, which gives the teacher's true value; unlike the clairvoyant teacher it can be
worse than the base policy.

Its labels are a function of the state at each decision (the queue, the running jobs and
their requests), so a student with a rich enough observation can learn them exactly.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hdeeprm.simulation import FINAL_STATES
from hdeeprm.workload.model import JobSpec, Profile, Workload
from studies.imitation.imitation import Demonstrations
from studies.imitation.rollout import TeacherResult, checked_candidates

#: Prefix of the planning profiles' names (``plan!<profile>``).
PLAN_PREFIX = "plan!"
#: Suffix of the forecast jobs' ids in a planning view with an arrival forecast.
FORECAST_SUFFIX = "+fc"


@dataclass(frozen=True)
class PlanResult(TeacherResult):
    """One window labelled by the planning teacher: a
    :class:`~studies.imitation.rollout.TeacherResult` whose ``value`` is the committed
    trajectory's on the real window and whose ``segment_gains`` are the planned ones."""

    #: Segments whose planning view did not reach the real state (they kept the base).
    unsynced: int = 0


def requested_profile(profile: Profile) -> Profile:
    """``profile`` with the work its user requested in place of the actual work (unchanged
    if it records no request)."""
    req_ops = profile.extra.get("req_ops")
    if profile.type != "delay" and req_ops is not None:
        return Profile(
            PLAN_PREFIX + profile.name,
            profile.type,
            None,
            float(req_ops),
            profile.com,
            profile.extra,
        )
    req_time = profile.extra.get("req_time")
    if profile.type == "delay" and req_time is not None:
        return Profile(PLAN_PREFIX + profile.name, "delay", float(req_time), extra=profile.extra)
    return profile


def planning_view(window: Workload, now: float, ended: set[str], forecast: float = 0.0) -> Workload:
    """The jobs of ``window`` submitted by ``now``: those in ``ended`` as they are, the others
    with their requested work (:func:`requested_profile`).

    With ``forecast`` = ``H`` > 0 the view also holds an *arrival forecast*: the jobs submitted
    in ``(now - H, now]`` (of the window: fewer near its start) submitted again ``H`` seconds
    later, as they are if they have ended and with their request otherwise, under the ids
    ``<id>+fc`` (:data:`FORECAST_SUFFIX`). The recent past repeats itself: the forecast the
    thesis of seed 001 uses to choose EASY's ordering. Without it, a plan is blind to the
    jobs that will wait behind its choice."""
    profiles = dict(window.profiles)
    jobs: list[JobSpec] = []
    known: list[JobSpec] = []  # the submitted jobs as planned (for the forecast)
    for job in window.jobs:
        if job.subtime > now:
            break  # jobs are in submission order
        if job.id in ended:
            planned_job = job
        else:
            planned = requested_profile(window.profiles[job.profile])
            profiles.setdefault(planned.name, planned)
            planned_job = JobSpec(
                job.id, job.subtime, job.res, planned.name, job.walltime, job.extra
            )
        jobs.append(planned_job)
        known.append(planned_job)
    if forecast > 0.0:
        for job in known:
            again = job.subtime + forecast
            if job.subtime > now - forecast and again > now:
                jobs.append(
                    JobSpec(
                        job.id + FORECAST_SUFFIX,
                        again,
                        job.res,
                        job.profile,
                        job.walltime,
                        job.extra,
                    )
                )
    return Workload(window.nb_res, jobs, profiles, window.name, window.extra)


class PlanningTeacher:
    """The rollout algorithm over ``base`` on planning views of the fixed windows of ``env``.

    Args: as :class:`~studies.imitation.rollout.RolloutTeacher` (``env`` must accept
    ``reset(options={"window": k, "workload": w})``, as
    :class:`~hdeeprm.environment.HeterogeneousClusterEnv` does), and ``forecast``: the
    horizon in seconds of the planning views' arrival forecast (:func:`planning_view`; 0, the
    default, plans with the submitted jobs only).
    """

    def __init__(
        self,
        env: Any,
        base: int,
        candidates: Sequence[int],
        *,
        segment: int = 200,
        maximize: bool = False,
        tolerance: float = 1e-9,
        forecast: float = 0.0,
    ) -> None:
        self.env = env
        self.base, self.candidates = checked_candidates(env, base, candidates, segment, tolerance)
        if not forecast >= 0.0:
            raise ValueError(f"forecast must be a horizon >= 0 seconds, got {forecast!r}")
        self.forecast = float(forecast)
        self.segment = int(segment)
        self.sign = -1.0 if maximize else 1.0
        self.tolerance = float(tolerance)
        self.episodes = 0
        self.decisions = 0

    def _play(
        self,
        window: int,
        actions: Sequence[int],
        then: int,
        workload: Workload | None = None,
        probe: int | None = None,
    ) -> tuple[float, np.ndarray | None]:
        """One episode of the window (or of ``workload`` in its place): ``actions``, then
        ``then`` to the end; its objective, and the observation at decision ``probe`` (``None``
        if the episode ends before it)."""
        env = self.env
        options: dict[str, Any] = {"window": window}
        if workload is not None:
            options["workload"] = workload
        obs, _ = env.reset(seed=0, options=options)
        seen = None
        n = 0
        while not env.finished:
            if n == probe:
                seen = obs
            obs, *_ = env.step(int(actions[n]) if n < len(actions) else then)
            n += 1
        self.episodes += 1
        self.decisions += n
        return float(env.objective_value()), seen

    def _state_at(self, window: int, actions: Sequence[int]) -> tuple[np.ndarray, Workload] | None:
        """The real window played through ``actions``: the observation and the planning view
        there (``None`` if the window ends first)."""
        env = self.env
        obs, _ = env.reset(seed=0, options={"window": window})
        for action in actions:
            if env.finished:
                return None
            obs, *_ = env.step(int(action))
        if env.finished:
            return None
        real = env.windows.workload_at(env.window[0])
        # the jobs whose end the simulation has reached (Batsim ids: "workload!job")
        ended = {
            job_id.split("!", 1)[-1]
            for job_id, job in env.engine.jobs.items()
            if job.state in FINAL_STATES
        }
        return obs, planning_view(real, env.manager.now, ended, self.forecast)

    def improve(self, window: int) -> PlanResult:
        """The planning teacher on ``window``: its trajectory on the real window, labelled."""
        since = (self.episodes, self.decisions, time.process_time())
        base_value, _ = self._play(window, [], self.base)
        committed: list[int] = []
        chosen: list[tuple[int, float]] = []
        unsynced = 0
        while True:
            state = self._state_at(window, committed)
            if state is None:  # the real window ends within the committed decisions
                break
            obs, view = state
            best, gain = self.base, 0.0
            # the base candidate first: its episode also shows whether the view reaches the
            # real state at this segment (the same decisions before it)
            seg = self.segment
            planned_base, seen = self._play(
                window, committed + [self.base] * seg, self.base, view, probe=len(committed)
            )
            if seen is not None and np.array_equal(seen, obs):
                values = {self.base: planned_base}
                for a in self.candidates[1:]:
                    values[a] = self._play(window, committed + [a] * seg, self.base, view)[0]
                top = min(self.candidates, key=lambda a: (self.sign * values[a], a != self.base))
                top_gain = self.sign * (planned_base - values[top])
                if top_gain > self.tolerance * abs(planned_base):
                    best, gain = top, top_gain
            else:
                unsynced += 1
            chosen.append((best, gain))
            committed += [best] * self.segment
        value, observations, masks, actions = self._record(window, committed)
        obs_arr = np.asarray(observations, dtype=np.float32)
        allowed = np.asarray(masks, dtype=bool)
        labels = np.asarray(actions, dtype=np.int64)
        keep = allowed[np.arange(len(labels)), labels]
        return PlanResult(
            window=window,
            demonstrations=Demonstrations(obs_arr[keep], allowed[keep], labels[keep]),
            base_value=base_value,
            value=value,
            segment_actions=tuple(a for a, _ in chosen),
            segment_gains=tuple(g for _, g in chosen),
            unsynced=unsynced,
            episodes=self.episodes - since[0],
            decisions=self.decisions - since[1],
            cpu_seconds=time.process_time() - since[2],
        )

    def _record(
        self, window: int, committed: Sequence[int]
    ) -> tuple[float, list[np.ndarray], list[np.ndarray], list[int]]:
        """The committed trajectory on the real window (the base after it): its objective,
        and the observation, mask and action of every decision."""
        env = self.env
        obs, _ = env.reset(seed=0, options={"window": window})
        observations, masks, actions = [], [], []
        while not env.finished:
            n = len(actions)
            action = int(committed[n]) if n < len(committed) else self.base
            observations.append(obs)
            masks.append(env.action_masks())
            actions.append(action)
            obs, *_ = env.step(action)
        self.episodes += 1
        self.decisions += len(actions)
        return float(env.objective_value()), observations, masks, actions
