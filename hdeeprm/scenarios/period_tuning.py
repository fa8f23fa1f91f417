"""Simulation-based choice of EASY's ordering per policy period (seed ``001``, sections 6.3.1
and 6.3.2, "Simulated Feedback" and "Noisy Simulated Feedback").

At the end of each policy period, the jobs *submitted* during it are simulated with every
ordering, from an empty system until it empties again (the thesis's boundary choice); the cost
of ordering ``i`` in period ``t`` is the jobs' summed waiting time ``w(t; P_i)`` (eq. 6.2),
optionally multiplied by a noise factor drawn uniformly in ``[1 - noise, 1 + noise]`` (6.5,
the thesis uses 0.2). The costs accumulate with a decay ``lambda`` (eq. 6.3; 1 in the thesis)
and the next period uses the ordering of lowest accumulated cost (6.4). Before any feedback,
the environment's initial choice is used.

It drives :class:`~hdeeprm.environment.heuristic_selection.HeuristicSelectionEnv` with a
``period``: each step is one period. When periods without queued jobs were skipped, the jobs
submitted since the previous decision are simulated together.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import replace
from typing import Any

import numpy as np

from hdeeprm.decision import ActionSpace, FixedPair, WorkloadManager
from hdeeprm.environment.heuristic_selection import HeuristicSelectionEnv
from hdeeprm.scheduling import BackfillScheduler
from hdeeprm.simulation import Engine, run
from hdeeprm.workload.model import Workload


class SimulatedFeedback:
    """Accumulated simulated costs per ordering; the lowest is chosen (eqs. 6.3-6.7).

    Args:
        nb_arms: number of orderings.
        decay: ``lambda`` (1: every past period counts alike).
        noise: relative noise on each simulated cost (0: exact simulation).
        seed: seeds the noise.
        initial: the choice before any feedback.
    """

    def __init__(
        self, nb_arms: int, decay: float = 1.0, noise: float = 0.0, seed: int = 0, initial: int = 0
    ) -> None:
        if not 0.0 < decay <= 1.0:
            raise ValueError(f"decay must be in (0, 1], got {decay}")
        if not 0.0 <= noise < 1.0:
            raise ValueError(f"noise must be in [0, 1), got {noise}")
        self.cost = np.zeros(nb_arms)
        self.periods = 0
        self.decay = decay
        self.noise = noise
        self.initial = initial
        self.rng = np.random.default_rng(seed)

    def choose(self) -> int:
        """The ordering of lowest accumulated cost (ties to the lowest index)."""
        return self.initial if not self.periods else int(np.argmin(self.cost))

    def observe(self, costs: np.ndarray) -> None:
        """One period's simulated cost of every ordering."""
        costs = np.asarray(costs, dtype=float)
        if self.noise:
            costs = costs * self.rng.uniform(1.0 - self.noise, 1.0 + self.noise, len(costs))
        self.cost = self.cost * self.decay + costs
        self.periods += 1


def simulate_waits(env: HeuristicSelectionEnv, workload: Workload) -> np.ndarray:
    """Summed waiting time of ``workload``'s jobs under each of ``env``'s choices, each from
    an empty platform with ``env``'s EASY configuration and core policy."""
    costs = np.zeros(len(env.choices))
    if not workload.jobs:
        return costs
    actions = ActionSpace([("first", env.core_policy)], void=False)
    for i, (primary, backfill) in enumerate(env.choices):
        config = replace(env.config, primary=primary, backfill=backfill)
        manager = WorkloadManager(
            env.inputs.platform,
            actions,
            FixedPair(actions, ("first", env.core_policy)),
            scheduler=BackfillScheduler(config),
        )
        engine = Engine(env.sim_platform, workload)
        run(engine, manager)
        # Every job is taken to have started: a rejected one (no start time) raises TypeError.
        costs[i] = math.fsum(
            j.start_time - j.subtime  # type: ignore[operator]
            for j in engine.finished_jobs
        )
    return costs


def play_simulated_feedback(
    env: HeuristicSelectionEnv,
    tuner: SimulatedFeedback,
    *,
    seed: int | None = None,
    window: int | None = None,
) -> dict[str, Any]:
    """One episode driven by ``tuner`` (``env`` must have a ``period``); returns the final
    ``info`` plus ``steps``."""
    if env.period is None:
        raise ValueError("simulation-based tuning needs an environment with a period")
    options = {"window": window} if window is not None else None
    _, info = env.reset(seed=seed, options=options)
    episode = env.windows.workload_at(env.window[0])
    subtimes = [job.subtime for job in episode.jobs]
    last: int | None = None
    steps = 0
    while not env.finished:
        now_period = env.current_period
        if last is not None:
            lo = bisect_left(subtimes, env.period_start(last))
            hi = bisect_left(subtimes, env.period_start(now_period))
            part = Workload(episode.nb_res, episode.jobs[lo:hi], episode.profiles, episode.name)
            tuner.observe(simulate_waits(env, part))
        _, _, terminated, truncated, info = env.step(tuner.choose())
        steps += 1
        last = now_period
        if terminated or truncated:
            break
    info = dict(info)
    info["steps"] = steps
    return info
