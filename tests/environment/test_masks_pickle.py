"""Action masks (void and infeasible pairs), MaskablePPO, and pickling after every policy."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from rl_helpers import random_jobs, write_options, write_workload

from hdeeprm.environment import HeterogeneousClusterEnv

# On the 4-core learning platform: A takes 3 cores at t=0; at t=1, B (2 cores) and C (1 core)
# arrive with one core free. B is first (submission order), shortest (5 s), lowest memory;
# C is smallest and lowest bandwidth.
MASK_JOBS = [
    ("A", 0.0, 3, 42e9, {"req_time": 20.0, "mem": 100.0, "mem_bw": 4.0}),
    ("B", 1.0, 2, 4.2e9, {"req_time": 5.0, "mem": 100.0, "mem_bw": 8.0}),
    ("C", 1.0, 1, 4.2e9, {"req_time": 10.0, "mem": 200.0, "mem_bw": 4.0}),
]


def test_action_mask_by_hand(tmp_path) -> None:
    options = write_options(tmp_path / "opt", void=True)
    env = HeterogeneousClusterEnv.from_options(
        options, tmp_path / "run", write_workload(tmp_path, MASK_JOBS)
    )
    _, info = env.reset(seed=0)
    assert info["action_mask"].all()  # A alone fits whatever the pair
    _, _, _, _, info = env.step(env.action_names.index("first-high_gflops"))
    assert info["time"] == 1.0 and info["queue_size"] == 2
    mask = dict(zip(env.action_names, info["action_mask"]))
    valid_jobs = {"random", "smallest", "low_mem_bw"}  # B does not fit on the one free core
    for name, valid in mask.items():
        job_policy = name.split("-")[0]
        assert valid == (name == "void" or job_policy in valid_jobs), name
    assert np.array_equal(env.action_masks(), info["action_mask"])
    assert info["action_mask"].dtype == bool and info["action_mask"].shape == (37,)
    # Only void: the mask of an action space without void, where nothing fits, is all True.
    _, _, _, _, info = env.step(env.action_names.index("smallest-random"))  # C starts
    assert info["queue_size"] == 1 and not info["action_mask"][:-1].any()


def test_mask_predicts_whether_a_pair_starts_a_job(tmp_path) -> None:
    options = write_options(tmp_path / "opt", void=False)
    env = HeterogeneousClusterEnv.from_options(
        options, tmp_path / "run", write_workload(tmp_path, random_jobs(80, seed=4))
    )
    _, info = env.reset(seed=3)
    rng = np.random.default_rng(3)
    checked = {True: 0, False: 0}
    done = False
    while not done:
        mask = info["action_mask"]
        action = int(rng.integers(env.action_space.n))
        before = env.manager.nb_started
        _, _, done, _, info = env.step(action)
        started = env.manager.nb_started > before
        if mask.all() and not started:
            continue  # nothing fits: every action is allowed and starts nothing
        if env.actions[action].job_policy == "random":
            assert mask[action] or not started  # a random pick may take a job that waits
        else:
            assert mask[action] == started
            checked[started] += 1
    assert checked[True] > 10 and checked[False] > 10


def test_pickle_after_every_policy(tmp_path) -> None:
    options = write_options(tmp_path / "opt", void=True, observation="normal")
    env = HeterogeneousClusterEnv.from_options(
        options, tmp_path / "run", write_workload(tmp_path, random_jobs(60, seed=8))
    )
    env.reset(seed=0)
    for action in range(env.action_space.n):  # every job and core policy, and void
        if env.finished:
            env.reset()
        env.step(action)
    clone = pickle.loads(pickle.dumps(env))
    rng = np.random.default_rng(1)
    while not env.finished:
        action = int(rng.integers(env.action_space.n))
        a = env.step(action)
        b = clone.step(action)
        assert a[1] == b[1] and np.array_equal(a[0], b[0]) and a[2] == b[2]
        assert np.array_equal(a[4]["action_mask"], b[4]["action_mask"])
    assert clone.finished and clone.objective_value() == env.objective_value()


def test_maskable_ppo_trains_unmodified(tmp_path) -> None:
    contrib = pytest.importorskip("sb3_contrib")
    options = write_options(tmp_path / "opt", observation="small", void=True)
    env = HeterogeneousClusterEnv.from_options(
        options, tmp_path / "run", write_workload(tmp_path, random_jobs(20, seed=1))
    )
    model = contrib.MaskablePPO(
        "MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu"
    )
    model.learn(total_timesteps=32)
    obs, info = env.reset(seed=0)
    for _ in range(10):
        mask = env.action_masks()
        action, _ = model.predict(obs, action_masks=mask, deterministic=True)
        assert mask[int(action)]
        obs, _, done, _, info = env.step(int(action))
        if done:
            break


def test_queue_observation_by_hand(tmp_path) -> None:
    import math

    options = write_options(tmp_path / "opt", void=True, observation="queue")
    env = HeterogeneousClusterEnv.from_options(
        options, tmp_path / "run", write_workload(tmp_path, MASK_JOBS)
    )
    # 21 minimal + queue length + 8 head jobs x 6 + 2 processor types x 2
    assert env.observation_size == 74
    env.reset(seed=0)
    obs, *_ = env.step(env.action_names.index("first-high_gflops"))  # A: cores 2, 3, then 0
    max_time, max_core, max_mem, max_bw = env._observer.limits
    log_t = math.log1p(max_time)
    expected = [math.log1p(2) / math.log1p(10_000)]
    expected += [0.0, 2 / max_core, math.log1p(5) / log_t, 100 / max_mem, 8 / max_bw, 0.0]  # B
    expected += [0.0, 1 / max_core, math.log1p(10) / log_t, 200 / max_mem, 4 / max_bw, 1.0]  # C
    expected += [0.0] * 36
    # 4 GFLOPS processor: core 1 free of 2, 4 of 32 GB/s used; 4.4 GFLOPS one: full, 8 used
    expected += [0.5, 28 / 32, 0.0, 24 / 32]
    np.testing.assert_allclose(obs[21:], np.array(expected, dtype=np.float32), rtol=1e-6)
    assert env.observation_space.contains(obs)


def test_masks_handed_out_are_copies(tmp_path) -> None:
    """The manager keeps one array per combination of valid job policies and shares it between
    states (``shared_action_mask``); every mask handed to a caller is its own copy, so writing
    into one changes neither the manager's nor the next state's."""
    options = write_options(tmp_path / "opt", void=True)
    env = HeterogeneousClusterEnv.from_options(
        options, tmp_path / "run", write_workload(tmp_path, MASK_JOBS)
    )
    env.reset(seed=0)
    _, _, _, _, info = env.step(env.action_names.index("first-high_gflops"))
    shared = env.manager.shared_action_mask()
    assert shared is env.manager.shared_action_mask()  # cached, not rebuilt
    # B (2 cores) does not fit on the one free core: first, shortest and low_mem pairs invalid.
    expected = [
        name == "void" or name.split("-")[0] in {"random", "smallest", "low_mem_bw"}
        for name in env.action_names
    ]
    for mask in (info["action_mask"], env.action_masks(), env.manager.action_mask()):
        assert mask is not shared and mask.tolist() == expected
        mask[:] = False
    assert shared.tolist() == expected
    assert env.action_masks().tolist() == expected and info["action_mask"].sum() == 0
