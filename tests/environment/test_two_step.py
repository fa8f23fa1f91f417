"""CuSH's two steps in the job-selection environment: the policy of each picked job.

On the 4-core learning platform cores 0 and 1 run at 4.0 GFLOPS (40 W) and cores 2 and 3 at
4.4 GFLOPS (50 W): ``high_gflops`` places a 1-core job on core 2 or 3, ``low_power`` on core
0 or 1. A job runs at its slowest core's speed, so the placement reward (minus the stretch
of the service time over the best possible, ``1 - 4.4 / slowest``) is 0 on a fast core and
``1 - 4.4 / 4.0 = -0.1`` as soon as one slow core is in the allocation.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from environment.test_job_selection import JOBS, _bsld, _extra, make_env, names, times
from rl_helpers import random_jobs

from hdeeprm.errors import SimulationError

POLICIES = ["high_gflops", "low_power"]
SLOW = 1.0 - 4.4 / 4.0


def test_the_chosen_policy_places_the_job_and_earns_its_reward(tmp_path) -> None:
    jobs = [("X", 0.0, 1, 12e9, _extra(5.0)), ("Y", 0.0, 1, 12e9, _extra(5.0))]
    env = make_env(tmp_path, jobs, policies=POLICIES)
    assert env.action_space.nvec.tolist() == [7, 2]
    _, info = env.reset(seed=0)
    assert names(env) == ["X", "Y"]
    assert info["policy"] == -1 and info["policy_reward"] == 0.0
    assert info["policy_mask"].tolist() == [[True, True]] * 2 + [[False, False]] * 4
    # X by low_power: a 4.0 GFLOPS core. Y still fits: same instant, job reward 0.
    _, reward, done, _, info = env.step((0, 1))
    assert not done and reward == 0.0 and info["time"] == 0.0
    assert info["policy"] == 1 and info["policy_reward"] == pytest.approx(SLOW)
    (x,) = env.manager.running.values()
    assert x.alloc in ((0,), (1,))
    # Y by high_gflops: a 4.4 GFLOPS core, the best placement (reward 0).
    _, _, done, _, info = env.step(np.array([0, 0]))
    assert done and info["policy"] == 0 and info["policy_reward"] == 0.0
    # The placement sets the service time: 12e9 / 4.0e9 = 3 s on a slow core, 12 / 4.4 fast.
    got = times(env)
    assert got["X"] == pytest.approx((0.0, 3.0))
    assert got["Y"] == pytest.approx((0.0, 12.0 / 4.4))
    assert env.invalid_actions == 0


def test_second_step_masks_follow_the_slots_and_bad_actions(tmp_path) -> None:
    env = make_env(tmp_path, policies=POLICIES)
    env.reset(seed=0)
    _, _, _, _, info = env.step((0, 0))  # A by high_gflops: 3 cores, one of them slow
    assert info["policy_reward"] == pytest.approx(SLOW)
    # t = 4: only J4 (slot 3) fits; its row allows every policy, the other rows none.
    assert info["time"] == 4.0 and names(env) == ["J1", "J2", "J3", "J4"]
    rows = info["policy_mask"]
    assert rows.tolist() == [[False, False]] * 3 + [[True, True]] + [[False, False]] * 2
    assert np.array_equal(rows, env.policy_masks())
    # Do nothing: no job placed, no policy chosen, no policy reward.
    _, _, _, _, info = env.step((6, 1))
    assert info["time"] == 50.0 and info["policy"] == -1 and info["policy_reward"] == 0.0
    # A masked slot plays as in one step (here: the first valid slot) and counts as invalid;
    # its policy is kept when the job it falls back to allows it.
    _, _, _, _, info = env.step((5, 1))
    assert info["invalid_actions"] == 1 and info["policy"] == 1
    assert next(iter(env.manager.running)).endswith("J1")
    for bad in (3, (0,), (0, 0, 0)):
        with pytest.raises(SimulationError, match="pair"):
            env.step(bad)
    with pytest.raises(SimulationError, match="policy index 2"):
        env.step((0, 2))
    with pytest.raises(SimulationError, match="not an integer"):
        env.step((0.5, 0))


def test_backfilled_reservation_starts_with_the_chosen_policy(tmp_path) -> None:
    env = make_env(tmp_path, backfill=True, policies=POLICIES)
    env.reset(seed=0)
    env.step((0, 0))  # A (3 cores) at t = 0; J1 arrives at t = 1
    # J1 (3 cores) does not fit: reserved until A ends at 50, J4 backfilled meanwhile (by the
    # environment's core_policy, high_gflops: core 3, the one left, is fast anyway).
    _, _, _, _, info = env.step((0, 1))
    assert info["time"] == 50.0 and info["policy"] == 1
    j1 = next(j for j in env.manager.running.values() if j.id.endswith("J1"))
    assert j1.start == 50.0 and set(j1.alloc) >= {0, 1}  # low_power takes the slow cores
    assert info["policy_reward"] == pytest.approx(SLOW)
    assert times(env)["J4"] == (4.0, 7.0)


def test_invalid_policies_are_refused(tmp_path) -> None:
    with pytest.raises(ValueError, match="fastest"):
        make_env(tmp_path / "a", policies=["high_gflops", "fastest"])
    with pytest.raises(ValueError, match="twice"):
        make_env(tmp_path / "b", policies=["low_power", "low_power"])
    with pytest.raises(ValueError, match="non-empty"):
        make_env(tmp_path / "c", policies=[])
    env = make_env(tmp_path / "d")
    with pytest.raises(SimulationError, match="one step"):
        env.policy_masks()


@pytest.mark.parametrize("backfill", [False, True])
def test_job_rewards_still_add_up_and_pickling_keeps_both_steps(tmp_path, backfill) -> None:
    env = make_env(
        tmp_path, random_jobs(60, seed=5), queue_slots=8, backfill=backfill, policies=POLICIES
    )
    rng = np.random.default_rng(2)
    _, info = env.reset(seed=1)
    total, done, steps, clone = 0.0, False, 0, None
    while not done:
        slot = int(rng.choice(np.flatnonzero(info["action_mask"])))
        action = (slot, int(rng.integers(2)))
        _, reward, done, _, info = env.step(action)
        if clone is not None:
            out = clone.step(action)
            assert out[1] == reward and out[4]["policy_reward"] == info["policy_reward"]
            assert np.array_equal(out[4]["policy_mask"], info["policy_mask"])
        total += reward
        steps += 1
        if steps == 10:
            clone = pickle.loads(pickle.dumps(env))
        if info["policy"] >= 0:
            assert SLOW - 1e-12 <= info["policy_reward"] <= 0.0
    assert total == pytest.approx(-_bsld(env.engine.finished_jobs), rel=1e-9)
    assert clone.objective_value() == env.objective_value()


def test_one_step_environment_is_unchanged(tmp_path) -> None:
    env = make_env(tmp_path, JOBS)
    _, info = env.reset(seed=0)
    assert env.policies is None and "policy_mask" not in info and "policy" not in info


def test_log_features_by_hand(tmp_path) -> None:
    env = make_env(tmp_path, log_features=True)
    env.reset(seed=0)
    obs, *_ = env.step(0)
    limits = env.inputs.job_limits
    assert env.job_width == 9 and obs.shape == (6 * 9 + 3,)
    jobs = obs[: 6 * 9].reshape(6, 9)
    # J1 at t = 4: waited 3 s, requested 6 s and 3 cores; the linear features are unchanged.
    assert jobs[0, :3] == pytest.approx(
        [3 / limits.max_time, 6 / limits.max_time, 3 / limits.max_core], rel=1e-6
    )
    log_t = np.log1p(limits.max_time)
    expected = [np.log1p(3) / log_t, np.log1p(6) / log_t, np.log1p(3) / np.log1p(limits.max_core)]
    assert jobs[0, 6:] == pytest.approx(expected, rel=1e-6)
    assert not jobs[4:].any() and env.observation_space.contains(obs)


def test_check_env_with_two_steps(tmp_path) -> None:
    from gymnasium.utils.env_checker import check_env

    env = make_env(tmp_path, random_jobs(20, seed=1), queue_slots=4, policies=POLICIES)
    check_env(env, skip_render_check=True)
    _, info = env.reset(seed=0)
    assert info["policy_mask"].shape == (4, 2) and env.action_space.contains(np.array([4, 1]))
