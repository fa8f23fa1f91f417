"""The rollout teacher: the rollout algorithm and DAgger's labels by hand on an additive toy
problem, and on the 4-core learning platform its guarantees (never worse than the base pair,
deterministic, the recorded trajectory replays to the reported value)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gymnasium import spaces
from rl_helpers import random_jobs, write_options, write_workload

from hdeeprm.environment import HeterogeneousClusterEnv
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import load_options
from hdeeprm.training import evaluate as ev
from studies.imitation.rollout import RolloutTeacher

#: Per-decision costs of actions 0 (the base), 1 and 2 on the toy window; the episode's
#: objective is their sum.
COSTS = np.array(
    [
        [1.0, 1.0, 1.0, 1.0, 1.0],
        [0.0, 3.0, 0.0, 0.0, 5.0],
        [2.0, 0.0, 1.0, 2.0, 0.0],
    ]
)


class AdditiveWindow:
    """Five decisions; the objective is the sum of ``COSTS[action, t]`` (a cost). The
    observation is the decision's index."""

    action_space = spaces.Discrete(3)

    def reset(self, *, seed=None, options=None):
        self.t, self.total = 0, 0.0
        return np.array([0.0], np.float32), {}

    @property
    def finished(self) -> bool:
        return self.t == COSTS.shape[1]

    def action_masks(self) -> np.ndarray:
        return np.ones(3, bool)

    def step(self, action):
        self.total += COSTS[action, self.t]
        self.t += 1
        return np.array([float(self.t)], np.float32), 0.0, self.finished, False, {}

    def objective_value(self) -> float:
        return self.total


def test_rollout_algorithm_by_hand() -> None:
    teacher = RolloutTeacher(AdditiveWindow(), base=0, candidates=[1, 2], segment=2)
    result = teacher.improve(0)
    # base everywhere: 5. Segment [0, 1], then base: base 5, action 1 0+3+1+1+1 = 6, action 2
    # 2+0+1+1+1 = 5 (a tie keeps the base). Segment [2, 3] after 0, 0: base 5, action 1
    # 1+1+0+0+1 = 3, action 2 1+1+1+2+1 = 6 -> 1 (gain 2). Segment [4] after 0, 0, 1, 1:
    # base 3, action 1 2+0+0+5 = 7, action 2 2+0+0+0 = 2 -> 2 (gain 1). Final 2.
    assert result.base_value == 5.0 and result.value == 2.0
    assert result.segment_actions == (0, 1, 2) and result.segment_gains == (0.0, 2.0, 1.0)
    assert result.demonstrations.actions.tolist() == [0, 0, 1, 1, 2]
    assert result.demonstrations.observations[:, 0].tolist() == [0, 1, 2, 3, 4]
    # 1 base episode + 3 segments x 3 candidates + 1 recorded replay
    assert result.episodes == 11 and result.decisions == 55
    assert result.improvement == pytest.approx(-0.6)


def test_dagger_labels_the_students_states_by_hand() -> None:
    teacher = RolloutTeacher(AdditiveWindow(), base=0, candidates=[1, 2], segment=2)
    result = teacher.relabel(0, lambda obs, mask: 1)  # the student always plays action 1
    # the student's own episode: 0+3+0+0+5 = 8. From its state after 0 decisions: base 5,
    # action 1 6, action 2 5 -> base. After 1, 1 (cost 3): base 3+1+1+1 = 6, action 1
    # 3+0+0+1 = 4, action 2 3+1+2+1 = 7 -> 1. After 1, 1, 1, 1 (cost 3): base 4, action 1 8,
    # action 2 3 -> 2.
    assert result.value == 8.0 and result.base_value == 5.0
    assert result.segment_actions == (0, 1, 2) and result.segment_gains == (0.0, 2.0, 1.0)
    assert result.demonstrations.actions.tolist() == [0, 0, 1, 1, 2]


def test_a_maximised_objective_and_the_tolerance() -> None:
    # maximising the same sums: action 1 on [0, 1] gives 6 > 5 (gain 1) ...
    teacher = RolloutTeacher(AdditiveWindow(), base=0, candidates=[1, 2], segment=2, maximize=True)
    result = teacher.improve(0)
    assert result.segment_actions[0] == 1 and result.value >= 6.0
    # ... unless gains below 25% of the base's value are ignored: 1/5 = 20% -> the base
    strict = RolloutTeacher(
        AdditiveWindow(), base=0, candidates=[1, 2], segment=2, maximize=True, tolerance=0.25
    )
    assert strict.improve(0).segment_actions[0] == 0


def test_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="segment"):
        RolloutTeacher(AdditiveWindow(), base=0, candidates=[1], segment=0)
    with pytest.raises(ValueError, match="outside the action space"):
        RolloutTeacher(AdditiveWindow(), base=0, candidates=[3])
    with pytest.raises(ValueError, match="tolerance"):
        RolloutTeacher(AdditiveWindow(), base=0, candidates=[1], tolerance=-1.0)
    # the base is always a candidate, first, and candidates are not repeated
    assert RolloutTeacher(AdditiveWindow(), base=2, candidates=[1, 2, 1]).candidates == (2, 1)


@pytest.fixture(scope="module")
def small_env(tmp_path_factory) -> HeterogeneousClusterEnv:
    tmp = tmp_path_factory.mktemp("rollout")
    workload = write_workload(tmp / "wl", random_jobs(60, seed=5))
    episodes = {"window_jobs": 30, "train_jobs": [0, 60], "val_jobs": [0, 60], "val_windows": 2}
    # the student's action space is the teacher's candidates: one job policy, every core policy
    selection = [{"shortest": ["high_gflops", "high_mem_bw", "low_power", "high_cores"]}]
    options = write_options(
        tmp / "run", objective="avg_job_slowdown", episodes=episodes, selection=selection
    )
    inputs = prepare_inputs(load_options(options), tmp / "run", custom_workload=Path(workload))
    return HeterogeneousClusterEnv(inputs=inputs, split="val")


def test_on_a_real_platform_never_worse_than_the_pair_and_deterministic(small_env) -> None:
    names = small_env.action_names
    base = names.index("shortest-high_gflops")
    candidates = list(range(len(names)))
    teacher = RolloutTeacher(small_env, base, candidates, segment=5)
    for window in (0, 1):
        result = teacher.improve(window)
        pair = ev.evaluate(small_env, {"pair": ev.fixed_policy(base)}, windows=[window])[0]
        assert result.base_value == pair.objective
        # the cost-improvement property; on these windows strictly (2.293 -> 2.074 and
        # 2.208 -> 1.864 when this test was written)
        assert result.value < result.base_value
        demos = result.demonstrations
        # the recorded decisions replay to the reported value, with the same observations
        value, actions, observations, _ = teacher.play(
            window, demos.actions.tolist(), base, record=True
        )
        assert value == result.value and actions == demos.actions.tolist()
        np.testing.assert_array_equal(np.asarray(observations), demos.observations)
        again = RolloutTeacher(small_env, base, candidates, segment=5).improve(window)
        assert again.value == result.value and again.segment_actions == result.segment_actions
        np.testing.assert_array_equal(again.demonstrations.observations, demos.observations)
        assert demos.masks[np.arange(len(demos)), demos.actions].all()
