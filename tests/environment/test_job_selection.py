"""Job selection as the action: masks, do nothing, backfilling, pickers, rewards, check_env.

The hand-worked scenario runs on the 4-core learning platform (cores of 4.4 and 4.0 GFLOPS;
``high_gflops`` takes the 4.4 ones first, and a job lasts its per-core flops over its slowest
core's speed). A takes 3 cores at t = 0 and runs 200e9 / 4e9 = 50 s (requested 100 s). J1-J4
arrive at t = 1, 2, 3, 4 while one core is free: only J4 (1 core) fits, so the first state
shown after A's start is at t = 4 (the environment runs on by itself while nothing fits).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from rl_helpers import random_jobs, write_options, write_workload

from hdeeprm.environment import BASELINES, JOB_SELECTION_ID, HeuristicPicker, JobSelectionEnv
from hdeeprm.environment.job_pickers import run_episode


def _extra(req: float) -> dict[str, float]:
    return {"req_time": req, "mem": 100.0, "mem_bw": 4.0}


JOBS = [
    ("A", 0.0, 3, 200e9, _extra(100.0)),
    ("J1", 1.0, 3, 24e9, _extra(6.0)),
    ("J2", 2.0, 4, 40e9, _extra(10.0)),
    ("J3", 3.0, 2, 8e9, _extra(2.0)),
    ("J4", 4.0, 1, 12e9, _extra(5.0)),
]
SLOTS = 6
NOTHING = SLOTS


def make_env(tmp_path, jobs=JOBS, **kwargs) -> JobSelectionEnv:
    options = write_options(tmp_path / "opt")
    workload = write_workload(tmp_path, jobs)
    kwargs.setdefault("queue_slots", SLOTS)
    return JobSelectionEnv.from_options(options, tmp_path / "run", workload, **kwargs)


def names(env: JobSelectionEnv) -> list[str]:
    return [job.id.split("!")[-1] for job in env.visible_jobs]


def times(env: JobSelectionEnv) -> dict[str, tuple[float, float]]:
    return {j.id.split("!")[-1]: (j.start_time, j.finish_time) for j in env.engine.finished_jobs}


def test_masks_and_do_nothing_by_hand(tmp_path) -> None:
    env = make_env(tmp_path)
    _, info = env.reset(seed=0)
    assert env.action_space.n == SLOTS + 1
    # t = 0: A alone; empty slots masked; do nothing valid (jobs are still to come).
    assert info["time"] == 0.0 and names(env) == ["A"]
    assert info["action_mask"].tolist() == [True] + [False] * 5 + [True]
    _, reward, done, _, info = env.step(0)
    # t = 4: J1-J3 need 3, 4, 2 cores with 1 free; J4 fits.
    assert info["time"] == 4.0 and names(env) == ["J1", "J2", "J3", "J4"]
    assert info["action_mask"].tolist() == [False, False, False, True, False, False, True]
    assert np.array_equal(env.action_masks(), info["action_mask"])
    # The queued jobs accrued 1 / max(req, 10 s) per second: J1 3 s, J2 2 s, J3 1 s, over 5 jobs.
    assert reward == pytest.approx(-(3 + 2 + 1) / 10 / 5)
    # Do nothing: time runs to the next event, A's completion at 50 s; now everything fits and
    # do nothing is masked (nothing runs, nothing is left to submit: it could never end).
    _, _, done, _, info = env.step(NOTHING)
    assert not done and info["time"] == 50.0
    assert info["action_mask"].tolist() == [True] * 4 + [False] * 3
    assert info["invalid_actions"] == 0
    # A masked action when do nothing is masked too plays the first valid slot (J1 starts).
    _, _, _, _, info = env.step(5)
    assert info["invalid_actions"] == 1 and names(env)[0] != "J1"
    assert env.manager.running and next(iter(env.manager.running)).endswith("J1")


def test_masked_action_plays_do_nothing(tmp_path) -> None:
    env = make_env(tmp_path)
    env.reset(seed=0)
    env.step(0)
    _, _, _, _, info = env.step(0)  # J1 does not fit at t = 4: played as do nothing
    assert info["time"] == 50.0 and info["invalid_actions"] == 1
    env.reset(seed=0)
    assert env.invalid_actions == 0


def test_observation_by_hand(tmp_path) -> None:
    env = make_env(tmp_path)
    env.reset(seed=0)
    obs, *_ = env.step(0)
    limits = env.inputs.job_limits
    jobs = obs[: SLOTS * 6].reshape(SLOTS, 6)
    # J1 at t = 4: waited 3 s, requested 6 s and 3 cores, 100 MB, 4 GB/s; does not fit.
    expected = [3 / limits.max_time, 6 / limits.max_time, 3 / limits.max_core]
    assert jobs[0, :3] == pytest.approx(expected, rel=1e-6)
    assert jobs[0, 5] == 0.0 and jobs[3, 5] == 1.0
    assert not jobs[4:].any()  # empty slots
    # One node type: 1 of 4 cores free; its memory minus A's 3 x 100 MB; nothing hidden.
    node_mb = env.manager.pool.node_capacity[0]
    assert obs[SLOTS * 6 :].tolist() == pytest.approx([0.25, (node_mb - 300) / node_mb, 0.0])
    assert env.observation_space.contains(obs)


def test_heuristic_order_on_a_tiny_queue(tmp_path) -> None:
    """At t = 4 (w = 3, 2, 1, 0 s; p = 6, 10, 2, 5 s; q = 3, 4, 2, 1 cores):

    * SJF: p = 2 (J3), 5 (J4), 6 (J1), 10 (J2);
    * WFP3, (w/p)^3 q largest first: J1 0.375, J3 0.25, J2 0.032, J4 0;
    * UNICEP, w / (log2(max(q, 2)) p) largest first: J3 0.5, J1 0.315, J2 0.1, J4 0;
    * F1, log10(p) q + 870 log10(s) lowest first: J1 2.33, J2 265.9, J3 415.7, J4 524.5.
    """
    env = make_env(tmp_path)
    env.reset(seed=0)
    env.step(0)
    ranks = {name: HeuristicPicker(name).rank(env) for name in BASELINES}
    assert ranks == {
        "FCFS": [0, 1, 2, 3],
        "SJF": [2, 3, 0, 1],
        "WFP3": [0, 2, 1, 3],
        "UNICEP": [2, 0, 1, 3],
        "F1": [0, 1, 2, 3],
    }
    # Without backfilling a picker waits for its first job when it does not fit...
    assert HeuristicPicker("FCFS")(env) == NOTHING
    # ... and takes it when it does (nothing else is ranked before it here).
    assert HeuristicPicker("LQF").rank(env)[0] == 1
    with pytest.raises(ValueError, match="unknown ordering"):
        HeuristicPicker("XYZ")


def test_backfilling_around_the_chosen_job(tmp_path) -> None:
    env = make_env(tmp_path, backfill=True)
    env.reset(seed=0)
    _, _, _, _, info = env.step(0)  # A starts; J1 arrives at t = 1
    assert info["time"] == 1.0 and names(env) == ["J1"]
    # J1 does not fit but may be chosen: it is reserved at A's requested end (t = 100, spare
    # 1 core); J4 (1 core, ends by 4 + 5 <= 100) is backfilled when it arrives at t = 4; J1
    # starts when A ends at 50 (3 cores: 24e9 / 4e9 = 6 s, ends at 56).
    assert info["action_mask"].tolist() == [True] + [False] * 5 + [True]
    _, _, _, _, info = env.step(0)
    assert info["time"] == 50.0 and names(env) == ["J2", "J3"]
    assert times(env)["J4"] == (4.0, 7.0)
    assert info["action_mask"].tolist() == [True, True] + [False] * 4 + [True]
    # J1 still runs at 50 and both J2 and J3 wait for cores, but both may be chosen.
    rewards = []
    _, r, _, _, info = env.step(1)  # J3 waits for J1 (ends 56), runs 8e9 / 4.4e9 s
    rewards.append(r)
    _, r, done, _, info = env.step(0)  # J2 waits for J3; 4 cores, 40e9 / 4e9 = 10 s
    rewards.append(r)
    assert done
    t3_end = 56.0 + 8e9 / 4.4e9
    got = times(env)
    assert got["J1"] == pytest.approx((50.0, 56.0))
    assert got["J3"] == pytest.approx((56.0, t3_end))
    assert got["J2"] == pytest.approx((t3_end, t3_end + 10.0))
    # Bounded slowdowns: A 1, J4 1 (run 3 s counts as 10 s: 0.3, bounded below by 1),
    # J1 (56 - 1) / 10, J3 (t3_end - 3) / 10, J2 (t3_end + 10 - 2) / 10.
    expected = (1 + 1 + 5.5 + (t3_end - 3) / 10 + (t3_end + 8) / 10) / 5
    assert env.objective_value() == pytest.approx(expected, rel=1e-12)
    assert info["objective"] == pytest.approx(expected, rel=1e-12)


def _bsld(jobs) -> float:
    """Mean bounded slowdown (tau = 10 s), written out here independently of hdeeprm."""
    values = [
        max((j.finish_time - j.subtime) / max(j.finish_time - j.start_time, 10.0), 1.0)
        for j in jobs
        if j.start_time is not None
    ]
    return sum(values) / len(values)


@pytest.mark.parametrize("backfill", [False, True])
def test_rewards_add_up_to_minus_the_bounded_slowdown(tmp_path, backfill) -> None:
    env = make_env(tmp_path, random_jobs(60, seed=5), queue_slots=8, backfill=backfill)
    rng = np.random.default_rng(2)
    _, info = env.reset(seed=1)
    total, done = 0.0, False
    while not done:
        valid = np.flatnonzero(info["action_mask"])
        action = int(rng.choice(valid))
        _, reward, done, _, info = env.step(action)
        total += reward
    expected = _bsld(env.engine.finished_jobs)
    assert expected > 1.0  # jobs waited
    assert total == pytest.approx(-expected, rel=1e-9)
    assert info["objective"] == pytest.approx(expected, rel=1e-12)


def test_rewards_add_up_to_minus_the_mean_slowdown(tmp_path) -> None:
    env = make_env(tmp_path, random_jobs(60, seed=5), queue_slots=8, objective="avg_job_slowdown")
    rng = np.random.default_rng(2)
    _, info = env.reset(seed=1)
    total, done = 0.0, False
    while not done:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        _, reward, done, _, info = env.step(action)
        total += reward
    # mean (finish - submit) / (finish - start), written out here independently of hdeeprm
    jobs = [j for j in env.engine.finished_jobs if j.start_time is not None]
    expected = sum((j.finish_time - j.subtime) / (j.finish_time - j.start_time) for j in jobs)
    expected /= len(jobs)
    assert expected > 1.0 and expected != pytest.approx(_bsld(env.engine.finished_jobs))
    assert total == pytest.approx(-expected, rel=1e-9)
    assert info["objective"] == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match="unknown objective 'makespan'"):
        make_env(tmp_path, objective="makespan")


def test_pickers_finish_episodes_deterministically(tmp_path) -> None:
    env = make_env(tmp_path, random_jobs(40, seed=6), queue_slots=8)
    results = [run_episode(env, HeuristicPicker(name)) for name in BASELINES]
    again = [run_episode(env, HeuristicPicker(name)) for name in BASELINES]
    assert results == again
    for result in results:
        assert result["return"] == pytest.approx(-result["objective"], rel=1e-9)
        assert result["objective"] >= 1.0


def test_check_env_and_registration(tmp_path) -> None:
    gymnasium = pytest.importorskip("gymnasium")
    from gymnasium.utils.env_checker import check_env

    env = make_env(tmp_path, random_jobs(20, seed=1), queue_slots=4)
    check_env(env, skip_render_check=True)
    made = gymnasium.make(
        JOB_SELECTION_ID,
        options=write_options(tmp_path / "o2"),
        output_dir=tmp_path / "run2",
        custom_workload=write_workload(tmp_path / "w2", random_jobs(20, seed=1)),
        queue_slots=4,
    )
    obs, info = made.reset(seed=0)
    assert obs.shape == (4 * 6 + 3,) and info["action_mask"].shape == (5,)
    with pytest.raises(ValueError, match="queue_slots"):
        make_env(tmp_path / "bad", queue_slots=0)
    with pytest.raises(ValueError, match="core policy"):
        make_env(tmp_path / "bad2", core_policy="fastest")


def test_vector_env_with_maskable_ppo(tmp_path) -> None:
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from stable_baselines3.common.vec_env import DummyVecEnv

    options = write_options(tmp_path / "opt")
    workload = write_workload(tmp_path, random_jobs(30, seed=3))

    def factory(i: int):
        return lambda: JobSelectionEnv.from_options(
            options, tmp_path / f"run{i}", workload, queue_slots=4, backfill=bool(i)
        )

    vec = DummyVecEnv([factory(0), factory(1)])
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy", vec, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu"
    )
    model.learn(64)
    assert model.num_timesteps >= 64
    obs = vec.reset()
    actions, _ = model.predict(obs, action_masks=vec.env_method("action_masks"))
    masks = vec.env_method("action_masks")
    assert all(masks[i][a] for i, a in enumerate(actions))
    assert math.isfinite(float(model.logger.name_to_value.get("train/loss", 0.0)))


# RLScheduler's backfilling (hdeeprm.environment.rlscheduler): A holds 2 of the 4 cores until
# its requested end at t = 100; J1 (3 cores) is picked at t = 1 and reserved there, with 1
# core spare. J2 (1 core, requested 200 s) would end after the reservation: EASY starts it on
# the spare core at t = 2, RLScheduler's rule never does. J3 (1 core, requested 50 s) ends
# before it: both start it at t = 3.
RLS_JOBS = [
    ("A", 0.0, 2, 400e9, _extra(100.0)),
    ("J1", 1.0, 3, 24e9, _extra(10.0)),
    ("J2", 2.0, 1, 12e9, _extra(200.0)),
    ("J3", 3.0, 1, 12e9, _extra(50.0)),
]


@pytest.mark.parametrize("rlscheduler", [False, True])
def test_rlscheduler_backfilling_rule(tmp_path, rlscheduler) -> None:
    env = make_env(tmp_path, RLS_JOBS, backfill=True, rlscheduler=rlscheduler)
    env.reset(seed=0)
    _, _, _, _, info = env.step(0)  # A starts; J1 arrives at t = 1
    assert info["time"] == 1.0 and names(env) == ["J1"]
    _, _, _, _, info = env.step(0)  # J1 reserved until A ends
    a_end = times(env)["A"][1]
    assert times(env)["J3"][0] == 3.0
    if rlscheduler:
        assert "J2" not in times(env) and names(env) == ["J2"]
        assert info["time"] == pytest.approx(a_end)
        # A job is visible: RLScheduler's agent must pick one (no do nothing).
        assert info["action_mask"].tolist() == [True] + [False] * 6
    else:
        assert times(env)["J2"][0] == 2.0
    while not env.finished:
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert times(env)["J1"][0] == pytest.approx(a_end)


def test_rlscheduler_visible_queue(tmp_path) -> None:
    """Q = 2 and four queued jobs at t = 4: RLScheduler shows the shortest (J3, 2 s) and the
    smallest (J4, 1 core), not the first two submitted; J4 fits, so the agent is asked now."""
    env = make_env(tmp_path, queue_slots=2, rlscheduler=True)
    env.reset(seed=0)
    _, _, _, _, info = env.step(0)
    assert info["time"] == 4.0 and names(env) == ["J3", "J4"]
    plain = make_env(tmp_path / "plain", queue_slots=2)
    plain.reset(seed=0)
    _, _, _, _, info = plain.step(0)  # J1 and J2 shown; neither fits until A ends
    assert info["time"] == 50.0 and names(plain) == ["J1", "J2"]


def test_reset_reuses_the_cluster_layout(tmp_path) -> None:
    """The per-node-type layout of the cluster features is computed once per platform and
    taken over by each new episode's view: the same values as a view computed afresh."""
    from hdeeprm.environment.job_selection import _ObservedCluster

    env = make_env(tmp_path)
    for seed in (0, 1):
        env.reset(seed=seed)
        env.step(NOTHING if env.action_masks()[NOTHING] else 0)
        fresh = _ObservedCluster(env.manager)
        for name in _ObservedCluster._LAYOUT:
            np.testing.assert_array_equal(getattr(env._cluster, name), getattr(fresh, name))
        assert env._cluster.pool is env.manager.pool
        fresh.mem_used = env._cluster.mem_used
        np.testing.assert_array_equal(env._cluster.features(), fresh.features())


def test_doing_nothing_before_a_last_job_that_is_rejected(tmp_path) -> None:
    """B needs more memory than any node has: it is rejected when it arrives at t = 5. Doing
    nothing at t = 0 let time run to it; then nothing would happen any more, so the environment
    stops there and A must be picked (do nothing is masked), instead of a deadlock."""
    jobs = [("A", 0.0, 1, 4e9, _extra(10.0)), ("B", 5.0, 2, 4e9, {**_extra(10.0), "mem": 1e9})]
    env = make_env(tmp_path, jobs=jobs)
    _, info = env.reset(seed=0)
    assert info["time"] == 0.0 and names(env) == ["A"]
    _, _, done, _, info = env.step(NOTHING)
    assert not done and info["time"] == 5.0 and names(env) == ["A"]
    assert info["action_mask"].tolist() == [True] + [False] * SLOTS
    _, _, done, _, _ = env.step(0)
    assert done and times(env)["A"] == (5.0, 5.0 + 4e9 / 4.4e9)  # on a 4.4 GFLOPS core
