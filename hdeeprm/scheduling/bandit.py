"""The thesis's epsilon-greedy bandit choosing EASY's reordering policy online (seed ``001``,
section 6.3.3, "Bandit Feedback").

Time is cut into *policy periods* of length Delta (one day or one week in the thesis); a
policy (arm) is chosen at the start of each period and applied during the whole period. Only
the arm in use gets feedback: the summed cost of the jobs that *finished* during the period
(the thesis uses their waiting times) and their number. The cost estimate of arm ``i`` after
``T`` periods is eq. 6.8:

    w(-> T; P_i) = sum_t 1(i, t) lambda^(T-1-t) w(t; P_i) / sum_t 1(i, t) l(t)

(the decayed sum of its period costs over the jobs it finished), and the next period's arm is
epsilon-greedy: with probability ``1 - epsilon`` the arm of lowest estimate, else one drawn
uniformly. The thesis uses ``epsilon = 0.1`` (leave-one-trace-out selection, Table 6.2),
``lambda = 1`` (no decay) and EASY(P, Theta = 40 h) over the 12 orderings of section 6.2.1.

What the thesis leaves open, and the choices made here: an arm never used has no estimate
(eq. 6.8 is 0/0); it is tried before any exploitation (untried arms in a random order), so the
greedy choice compares arms that all have data. A period where no job finished gives no
feedback (the estimate is unchanged). Ties go to the lowest index.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class EpsilonGreedyBandit:
    """Epsilon-greedy arm selection on normalised decayed costs (lower is better).

    Args:
        nb_arms: number of policies.
        epsilon: exploration probability.
        decay: ``lambda`` of eq. 6.8 (1: no decay).
        seed: seeds the bandit's own generator (exploration and the order of untried arms).
    """

    def __init__(
        self, nb_arms: int, epsilon: float = 0.1, decay: float = 1.0, seed: int = 0
    ) -> None:
        if nb_arms < 1:
            raise ValueError(f"nb_arms must be >= 1, got {nb_arms}")
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], got {epsilon}")
        if not 0.0 < decay <= 1.0:
            raise ValueError(f"decay must be in (0, 1], got {decay}")
        self.nb_arms = nb_arms
        self.epsilon = epsilon
        self.decay = decay
        self.rng = np.random.default_rng(seed)
        #: Decayed summed cost per arm (numerator of eq. 6.8).
        self.cost = np.zeros(nb_arms)
        #: Jobs finished under each arm (denominator of eq. 6.8).
        self.jobs = np.zeros(nb_arms)
        #: Periods each arm was chosen.
        self.pulls = np.zeros(nb_arms, dtype=np.int64)
        self._untried = [int(i) for i in self.rng.permutation(nb_arms)]

    def estimates(self) -> np.ndarray:
        """Eq. 6.8 per arm (NaN for an arm without feedback yet)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.jobs > 0, self.cost / np.maximum(self.jobs, 1e-300), np.nan)

    def greedy(self) -> int:
        """The arm of lowest estimate (untried arms first; ties to the lowest index)."""
        if self._untried:
            return self._untried[0]
        est = self.estimates()
        if np.isnan(est).all():
            return 0
        return int(np.nanargmin(est))

    def select(self) -> int:
        """The arm for the next period (epsilon-greedy)."""
        if self.epsilon > 0.0 and self.rng.random() < self.epsilon:
            return int(self.rng.integers(self.nb_arms))
        return self.greedy()

    def update(self, arm: int, cost: float, jobs: int) -> None:
        """Feedback of one period: ``arm`` was used, ``jobs`` finished at a summed ``cost``."""
        if not 0 <= arm < self.nb_arms:
            raise ValueError(f"arm {arm} outside 0..{self.nb_arms - 1}")
        self.pulls[arm] += 1
        if arm in self._untried:
            self._untried.remove(arm)
        if self.decay != 1.0:
            self.cost *= self.decay
        if jobs > 0:
            self.cost[arm] += cost
            self.jobs[arm] += jobs

    def copy(self) -> EpsilonGreedyBandit:
        """An independent copy (estimates, counts and generator state)."""
        other = EpsilonGreedyBandit(self.nb_arms, self.epsilon, self.decay)
        other.rng.bit_generator.state = self.rng.bit_generator.state
        other.cost, other.jobs, other.pulls = self.cost.copy(), self.jobs.copy(), self.pulls.copy()
        other._untried = list(self._untried)
        return other

    def state(self) -> dict[str, Any]:
        """JSON-ready state (estimates and counts) for logs."""
        return {
            "cost": self.cost.tolist(),
            "jobs": self.jobs.tolist(),
            "pulls": self.pulls.tolist(),
            "estimates": [None if np.isnan(v) else float(v) for v in self.estimates()],
        }


#: Per-step feedback the bandit reads from the environment's ``info``: cost key per measure.
FEEDBACK = {"wait": "finished_wait", "bsld": "finished_bsld"}


def play_bandit(
    env: Any,
    bandit: EpsilonGreedyBandit,
    *,
    seed: int | None = None,
    window: int | None = None,
    learn: bool = True,
    cost: str = "wait",
) -> dict[str, Any]:
    """One episode of :class:`~hdeeprm.environment.HeuristicSelectionEnv` driven by the
    bandit (each step is one policy period when the environment has a ``period``), updating
    it after each step with the jobs finished in that step (``cost``: their waits, the
    thesis's, or bounded slowdowns). ``learn=False`` plays greedily without updating.
    Returns the episode's ``info`` at the end plus ``steps``."""
    if cost not in FEEDBACK:
        raise ValueError(f"cost must be one of {', '.join(FEEDBACK)}, got {cost!r}")
    key = FEEDBACK[cost]
    options = {"window": window} if window is not None else None
    _, info = env.reset(seed=seed, options=options)
    steps = 0
    done = env.finished
    while not done:
        arm = bandit.select() if learn else bandit.greedy()
        _, _, terminated, truncated, info = env.step(arm)
        steps += 1
        if learn:
            bandit.update(arm, info[key], info["finished_jobs"])
        done = terminated or truncated
    info = dict(info)
    info["steps"] = steps
    return info
