"""A teacher for imitation learning: the rollout algorithm over a fixed policy pair.

Reinforcement learning on Gaia never found what a per-state choice of pairs could gain
(``studies/ppo_policy_pairs/README.md``): one decision's effect on a 4,000-job window's
objective is too small and too delayed for PPO to see. Simulation can see it. On one fixed window,
the *base* policy (one action at every decision, the pair chosen on the training windows) is
improved segment by segment, Bertsekas's rollout algorithm:

    for each segment of ``segment`` decisions, in order:
        for each candidate action a:
            replay the decisions committed so far, play a for the segment, then the base
            policy to the end of the window; a's value is the episode's objective
        commit the best candidate for the segment (the base on a tie within ``tolerance``)

The simulation is deterministic, so at each segment the base candidate replays the previous
segment's winner exactly: the committed trajectory's objective never gets worse than the base
policy's (the rollout algorithm's cost-improvement property), and the teacher's result is
known exactly for every window it labels. Replaying from the start costs less than copying an
environment mid-window (a whole 4,000-job Gaia window replays in about 0.45 s of CPU; a deep
copy of the environment takes about 2 s).

The teacher sees the future of the window it simulates. What a student may learn from it is
only the mapping from the *observation* at each decision to the teacher's action
(:mod:`studies.imitation.imitation`); the student never simulates.

:meth:`RolloutTeacher.relabel` is the teacher for DAgger (Ross et al., 2011): the student plays
the window, and at every segment of *its* trajectory the candidates are compared from the
student's state (the student's decisions replayed, the candidate for the segment, the base
after it), so the student learns to recover from the states its own mistakes lead to.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from studies.imitation.imitation import Demonstrations

#: ``choose(observation, action_mask) -> action``: a policy the teacher replays (the student).
Policy = Callable[[np.ndarray, np.ndarray], int]


@dataclass(frozen=True)
class TeacherResult:
    """One window labelled by the teacher.

    ``demonstrations`` holds the states of the trajectory that was labelled (the teacher's own
    for :meth:`RolloutTeacher.improve`, the student's for :meth:`RolloutTeacher.relabel`) and,
    for each, the action the teacher chose for its segment (decisions where that action is
    masked out are left out). ``value`` is the objective of the
    teacher's trajectory (``improve``) or of the student's (``relabel``); ``base_value`` the
    base policy's on the same window.
    """

    window: int
    demonstrations: Demonstrations
    base_value: float
    value: float
    #: Per segment: the chosen action and its gain over the base candidate (objective units).
    segment_actions: tuple[int, ...]
    segment_gains: tuple[float, ...]
    #: Episodes and decisions simulated, and the CPU seconds they took.
    episodes: int
    decisions: int
    cpu_seconds: float

    @property
    def improvement(self) -> float:
        """Relative change of the objective against the base policy (negative: better, for a
        cost)."""
        return (self.value - self.base_value) / abs(self.base_value) if self.base_value else 0.0


def checked_candidates(
    env: Any, base: int, candidates: Sequence[int], segment: int, tolerance: float
) -> tuple[int, tuple[int, ...]]:
    """A rollout's base and candidates (the base first, no repeats), after checking them,
    ``segment`` and ``tolerance`` against ``env``'s action space (:class:`ValueError`)."""
    if segment < 1:
        raise ValueError(f"segment must be at least 1 decision, got {segment}")
    if tolerance < 0:
        raise ValueError(f"tolerance must be >= 0, got {tolerance}")
    n = int(env.action_space.n)
    for action in (base, *candidates):
        if not 0 <= int(action) < n:
            raise ValueError(f"action {action} is outside the action space (0..{n - 1})")
    ordered = [int(base)] + [int(a) for a in candidates if int(a) != int(base)]
    return int(base), tuple(dict.fromkeys(ordered))


class RolloutTeacher:
    """The rollout algorithm over a base action, on the fixed windows of an environment.

    Args:
        env: an environment with fixed windows (``reset(options={"window": k})``), e.g.
            :class:`~hdeeprm.environment.HeterogeneousClusterEnv` with ``split="val"``; it must
            be deterministic for a window (the environments of this package are).
        base: the base action (index), played wherever no candidate is better.
        candidates: the actions compared at each segment (the base is added if missing).
        segment: decisions per segment (one choice holds for a segment).
        maximize: the objective is to be maximised (utilisation); otherwise minimised.
        tolerance: a candidate replaces the base only if better by more than this relative
            margin (float noise and negligible gains keep the base).
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
    ) -> None:
        self.env = env
        self.base, self.candidates = checked_candidates(env, base, candidates, segment, tolerance)
        self.segment = int(segment)
        self.sign = -1.0 if maximize else 1.0
        self.tolerance = float(tolerance)
        self._episodes = 0
        self._decisions = 0

    # --- simulation --------------------------------------------------------------------
    def play(
        self,
        window: int,
        prefix: Sequence[int],
        then: int | Policy,
        *,
        record: bool = False,
    ) -> tuple[float, list[int], list[np.ndarray], list[np.ndarray]]:
        """One episode of ``window``: the decisions ``prefix``, then ``then`` (an action, or a
        policy of the observation and mask) to the end.

        Returns the episode's objective, every action taken and, with ``record``, the
        observation and action mask at each decision."""
        env = self.env
        obs, _ = env.reset(seed=0, options={"window": window})
        actions: list[int] = []
        observations: list[np.ndarray] = []
        masks: list[np.ndarray] = []
        fixed = then if isinstance(then, int) else None
        n_prefix = len(prefix)
        while not env.finished:
            n = len(actions)
            mask = env.action_masks() if record or fixed is None else None
            if n < n_prefix:
                action = int(prefix[n])
            elif fixed is not None:
                action = fixed
            else:
                action = int(then(obs, mask))  # type: ignore[operator]
            if record:
                observations.append(obs)
                masks.append(mask)
            obs, _, _, _, _ = env.step(action)
            actions.append(action)
        self._episodes += 1
        self._decisions += len(actions)
        return float(env.objective_value()), actions, observations, masks

    def _best_candidate(self, window: int, prefix: list[int]) -> tuple[int, float, int]:
        """The best action for the segment after ``prefix`` (base afterwards): (action, its
        gain over the base candidate, the length of its episode in decisions)."""
        seg = self.segment
        values: dict[int, tuple[float, int]] = {}
        for action in self.candidates:
            # the candidate for one segment, then the base: prefix + [a] * seg, then base
            value, played, _, _ = self.play(window, prefix + [action] * seg, self.base)
            values[action] = (value, len(played))
        base_value = values[self.base][0]
        best = min(self.candidates, key=lambda a: (self.sign * values[a][0], a != self.base))
        gain = self.sign * (base_value - values[best][0])
        if gain <= self.tolerance * abs(base_value):
            best, gain = self.base, 0.0
        return best, gain, values[best][1]

    def _result(
        self,
        window: int,
        trajectory: tuple[float, list[int], list[np.ndarray], list[np.ndarray]],
        labels: list[int],
        base_value: float,
        chosen: list[tuple[int, float]],
        since: tuple[int, int, float],
    ) -> TeacherResult:
        value, _, observations, masks = trajectory
        obs = np.asarray(observations, dtype=np.float32)
        allowed = np.asarray(masks, dtype=bool)
        actions = np.asarray(labels[: len(obs)], dtype=np.int64)
        # a decision whose label is masked out there is left out: a masked student cannot
        # take it (with candidates of one job policy this never happens: they share a mask)
        keep = allowed[np.arange(len(actions)), actions]
        demos = Demonstrations(obs[keep], allowed[keep], actions[keep])
        return TeacherResult(
            window=window,
            demonstrations=demos,
            base_value=base_value,
            value=value,
            segment_actions=tuple(a for a, _ in chosen),
            segment_gains=tuple(g for _, g in chosen),
            episodes=self._episodes - since[0],
            decisions=self._decisions - since[1],
            cpu_seconds=time.process_time() - since[2],
        )

    # --- labelling ---------------------------------------------------------------------
    def improve(self, window: int) -> TeacherResult:
        """The rollout algorithm on ``window``: the teacher's own trajectory, labelled."""
        since = (self._episodes, self._decisions, time.process_time())
        base_value, base_actions, _, _ = self.play(window, [], self.base)
        length = len(base_actions)
        committed: list[int] = []
        chosen: list[tuple[int, float]] = []
        while len(committed) < length:
            # the trajectory's length can change with the actions chosen: the winner's
            # episode (base after the segment) says how many decisions remain
            action, gain, length = self._best_candidate(window, committed)
            chosen.append((action, gain))
            committed += [action] * self.segment
        trajectory = self.play(window, committed, self.base, record=True)
        return self._result(window, trajectory, committed, base_value, chosen, since)

    def relabel(self, window: int, student: Policy) -> TeacherResult:
        """DAgger's labels on ``window``: the student's trajectory, each segment labelled with
        the best candidate from the student's state at the segment's start."""
        since = (self._episodes, self._decisions, time.process_time())
        base_value, _, _, _ = self.play(window, [], self.base)
        trajectory = self.play(window, [], student, record=True)
        actions = trajectory[1]
        labels: list[int] = []
        chosen: list[tuple[int, float]] = []
        for start in range(0, len(actions), self.segment):
            action, gain, _ = self._best_candidate(window, actions[:start])
            chosen.append((action, gain))
            labels += [action] * min(self.segment, len(actions) - start)
        return self._result(window, trajectory, labels, base_value, chosen, since)
