"""The Gymnasium environment: contract, episodes, determinism, void, rewards by hand."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from rl_helpers import (
    THESIS_DIR,
    THESIS_SELECTION,
    random_jobs,
    write_options,
    write_workload,
)

import hdeeprm.environment as henv
from hdeeprm.environment import HeterogeneousClusterEnv
from hdeeprm.errors import SimulationError

# Thesis 5.4 jobs: one core, 24 GB/s, 5 s at the reference speed 4.2 GFLOPS = 21 GFLOP.
THESIS_EXTRA = {"req_time": 5.0, "mem": 1000.0, "mem_bw": 24.0}
THESIS_JOBS = [("1", 0.0, 1, 21e9, THESIS_EXTRA), ("2", 0.0, 1, 21e9, THESIS_EXTRA)]


def thesis_env(tmp_path, **kwargs) -> HeterogeneousClusterEnv:
    kwargs.setdefault("reward", "thesis")
    options = write_options(tmp_path / "opt", selection=THESIS_SELECTION, **kwargs)
    workload = write_workload(tmp_path / "wl", THESIS_JOBS)
    return HeterogeneousClusterEnv.from_options(options, tmp_path / "run", workload)


@pytest.mark.parametrize("observation", ["minimal", "small", "normal", "queue"])
def test_check_env_each_observation(tmp_path, observation) -> None:
    options = write_options(tmp_path / "opt", observation=observation, void=True)
    workload = write_workload(tmp_path / "wl", random_jobs(12, seed=3))
    env = HeterogeneousClusterEnv.from_options(options, tmp_path / "run", workload)
    # learning platform: 1 node, 2 processors (2 types), 4 cores -> 21, 21+1+2, 21+3+3*4,
    # 21+1+8*6+2*2
    sizes = {"minimal": 21, "small": 24, "normal": 36, "queue": 74}
    assert env.observation_space.shape == (sizes[observation],)
    assert env.action_space.n == 37  # all 36 pairs + void
    check_env(env, skip_render_check=True)


def test_gymnasium_make_registered(tmp_path) -> None:
    options = write_options(tmp_path / "opt", selection=THESIS_SELECTION)
    workload = write_workload(tmp_path / "wl", THESIS_JOBS)
    env = gymnasium.make(
        henv.ENV_ID, options=str(options), output_dir=tmp_path / "run", custom_workload=workload
    )
    obs, info = env.reset(seed=1)
    assert obs.dtype == np.float32 and obs.shape == (21,)
    assert info["queue_size"] == 2 and info["time"] == 0.0
    assert env.action_space.n == 5
    env.close()


@pytest.mark.parametrize(
    ("action", "reward", "makespan"),
    [
        # both on the 4.4 GFLOPS processor, over-subscribed (48 > 32 GB/s): 2 x 3.3 GFLOPS
        ("shortest-high_gflops", 6.6, 21 / 3.3),
        # spread: 21 GFLOP at 4 and at 4.4 GFLOPS -> 42 GFLOP over 5.25 s = 8.0 GFLOPS
        ("shortest-high_mem_bw", 8.0, 5.25),
        # both on the 4 GFLOPS (lower power) processor, over-subscribed: 2 x 3 GFLOPS
        ("shortest-low_power", 6.0, 7.0),
        ("first-high_mem_bw", 8.0, 5.25),
    ],
)
def test_thesis_5_4_single_step_rewards(tmp_path, action, reward, makespan) -> None:
    env = thesis_env(tmp_path)
    env.reset(seed=0)
    _, r, terminated, truncated, info = env.step(env.action_names.index(action))
    assert (terminated, truncated) == (True, False)
    assert r == pytest.approx(reward)
    assert info["time"] == pytest.approx(makespan)
    assert info["objective"] == pytest.approx(makespan)
    assert info["completed"] == 2 and info["steps"] == 1
    with pytest.raises(SimulationError, match="ended"):
        env.step(0)


def test_energy_rewards_over_the_span(tmp_path) -> None:
    env = thesis_env(tmp_path, objective="energy_consumption")
    env.reset(seed=0)
    _, r, *_ = env.step(0)  # shortest-high_gflops: cores 2, 3 in P1
    # cores 2, 3 at 100 W / 2 = 50 W each; cores 0, 1 in P3 at 5% of 40 W = 2 W each:
    # 104 W for 21 / 3.3 s = 661.818 J
    assert r == pytest.approx(-104 * 21 / 3.3)
    env = thesis_env(tmp_path / "edp", objective="edp")
    env.reset(seed=0)
    _, r, *_ = env.step(1)  # shortest-high_mem_bw: cores 0 and 2 in P0, 1 and 3 in P2
    # [0, 4.7727]: 40 + 10 + 50 + 12.5 = 112.5 W; [4.7727, 5.25]: 40 + 10 + 2.5 + 2.5 = 55 W
    energy = 112.5 * 21 / 4.4 + 55 * (5.25 - 21 / 4.4)  # 563.18 J
    assert r == pytest.approx(-energy * 5.25)


# Two decision points: A (1 core, 20 GFLOP, req 10 s) at t=0, B (1 core, 22 GFLOP, req 5 s) at
# t=2, action first-high_mem_bw: A on core 0 (4 GFLOPS, ends t=5), B on core 2 (4.4 GFLOPS,
# 22 / 4.4 = 5 s, ends t=7). Step 1 spans [0, 2], step 2 spans [2, 7].
TWO_JOBS = [
    ("A", 0.0, 1, 20e9, {"req_time": 10.0, "mem": 100.0, "mem_bw": 24.0}),
    ("B", 2.0, 1, 22e9, {"req_time": 5.0, "mem": 100.0, "mem_bw": 24.0}),
]


@pytest.mark.parametrize(
    ("objective", "rewards"),
    [
        # busy cores: 1 on [0,2]; 2 on [2,5] and 1 on [5,7] -> (2*3 + 1*2) / 5
        ("avg_utilization", [1.0, 8 / 5]),
        # GFLOPS: 4 on [0,2]; 8.4 on [2,5] and 4.4 on [5,7] -> (25.2 + 8.8) / 5
        ("makespan", [4.0, 6.8]),
        # active jobs: 1; then 2 on [2,5], 1 on [5,7]
        ("avg_job_completion", [-1.0, -8 / 5]),
        # 1/req: 0.1; then 0.1 + 0.2 on [2,5] and 0.2 on [5,7] -> (0.9 + 0.4) / 5
        ("avg_job_slowdown", [-0.1, -0.26]),
        # [0,2]: 40 (P0) + 10 (P2) + 2.5 + 2.5 (P3) = 55 W -> 110 J;
        # [2,5]: 40 + 10 + 50 + 12.5 = 112.5 W -> 337.5 J; [5,7]: 2 + 2 + 50 + 12.5 -> 133 J
        ("energy_consumption", [-110.0, -470.5]),
        ("edp", [-110.0 * 2, -470.5 * 5]),
    ],
)
def test_thesis_rewards_two_decisions_by_hand(tmp_path, objective, rewards) -> None:
    options = write_options(
        tmp_path / "opt",
        objective=objective,
        selection=[{"first": ["high_mem_bw"]}],
        reward="thesis",
    )
    env = HeterogeneousClusterEnv.from_options(
        options, tmp_path / "run", write_workload(tmp_path, TWO_JOBS)
    )
    _, info = env.reset(seed=0)
    assert info["queue_size"] == 1
    _, r1, done1, _, info1 = env.step(0)
    assert not done1 and info1["time"] == pytest.approx(2.0) and info1["span"] == 2.0
    _, r2, done2, _, info2 = env.step(0)
    assert done2 and info2["time"] == pytest.approx(7.0)
    assert [r1, r2] == pytest.approx(rewards)
    assert env.total_reward == pytest.approx(sum(rewards))


H = 3600.0
P_MAX = 180.0  # learning platform at full load: 40 + 40 + 50 + 50 W


@pytest.mark.parametrize(
    ("objective", "rewards"),
    [
        # Neither job waits, so no slowdown accrues; at the end the real slowdowns come:
        # A (5 - 0) / 5 = 1, B (7 - 2) / 5 = 1, mean 1
        ("avg_job_slowdown", [0.0, -1.0]),
        # A starts at once: its requested 10 s are booked as its expected turnaround (/ 2 jobs);
        # then the real turnarounds 5 and 5 (mean 5 s) replace A's 10 and B's booked 5: 0
        ("avg_job_completion", [-5 / H, 0.0]),
        # busy 1 of 4 cores over [0, 2]: 0.25; final (5 + 5) core-s / (4 x 7 s)
        ("avg_utilization", [0.25, 10 / 28 - 0.25]),
        ("makespan", [-2 / H, -5 / H]),
        # energies of the thesis test above, in platform-hours at full power
        ("energy_consumption", [-110 / (P_MAX * H), -470.5 / (P_MAX * H)]),
        ("edp", [-110 * 2 / (P_MAX * H * H), -(580.5 * 7 - 220) / (P_MAX * H * H)]),
    ],
)
def test_objective_rewards_two_decisions_by_hand(tmp_path, objective, rewards) -> None:
    options = write_options(
        tmp_path / "opt", objective=objective, selection=[{"first": ["high_mem_bw"]}]
    )
    env = HeterogeneousClusterEnv.from_options(
        options, tmp_path / "run", write_workload(tmp_path, TWO_JOBS)
    )
    env.reset(seed=0)
    _, r1, done1, _, _ = env.step(0)
    _, r2, done2, _, info = env.step(0)
    assert (done1, done2) == (False, True)
    assert [r1, r2] == pytest.approx(rewards, rel=1e-12, abs=1e-15)
    sign = 1.0 if objective == "avg_utilization" else -1.0
    scale = {"avg_job_completion": 1 / H, "makespan": 1 / H}.get(objective, 1.0)
    scale = {"energy_consumption": 1 / (P_MAX * H), "edp": 1 / (P_MAX * H * H)}.get(
        objective, scale
    )
    assert r1 + r2 == pytest.approx(sign * info["objective"] * scale, rel=1e-12)


def test_void_action_waits_and_rewards_idle_span(tmp_path) -> None:
    env = thesis_env(tmp_path, void=True)
    env.reset(seed=0)
    assert env.action_names[-1] == "void"
    # void with nothing running and no job left: the manager asks to be called 1 s later
    _, r, done, _, info = env.step(len(env.action_names) - 1)
    assert not done and info["time"] == pytest.approx(1.0) and r == 0.0  # no core computes
    _, r, done, _, info = env.step(1)  # spread from t=1: ends at 1 + 5.25
    assert done and info["time"] == pytest.approx(6.25) and r == pytest.approx(8.0)


def test_deterministic_under_seed(tmp_path) -> None:
    options = write_options(tmp_path / "opt", observation="normal", void=True)
    workload = write_workload(tmp_path / "wl", random_jobs(30, seed=5))
    env = HeterogeneousClusterEnv.from_options(options, tmp_path / "run", workload)

    def episode(seed: int) -> tuple[list[np.ndarray], list[float]]:
        obs, _ = env.reset(seed=seed)
        rng = np.random.default_rng(99)  # same action sequence every time
        observations, rewards = [obs], []
        done = False
        while not done:
            # mostly random-policy actions (they draw from the manager's seeded streams)
            action = 0 if rng.random() < 0.7 else int(rng.integers(env.action_space.n))
            obs, reward, done, _, _ = env.step(action)
            observations.append(obs)
            rewards.append(reward)
        return observations, rewards

    obs_a, rew_a = episode(11)
    obs_b, rew_b = episode(11)
    assert len(rew_a) > 5
    assert rew_a == rew_b
    assert all(np.array_equal(a, b) for a, b in zip(obs_a, obs_b, strict=True))
    obs_c, rew_c = episode(12)
    assert rew_c != rew_a or not all(
        np.array_equal(a, b) for a, b in zip(obs_a, obs_c, strict=False)
    )


@pytest.mark.parametrize("objective", ["avg_job_slowdown", "energy_consumption"])
def test_state_change_confirmations_change_nothing(tmp_path, monkeypatch, objective) -> None:
    # The environment asks its engine not to confirm P-state switches (objective rewards):
    # observations, rewards, masks, energies and every job's times and allocation must be
    # those of the same episode with Batsim's confirmations.
    options = write_options(tmp_path / "opt", objective=objective, observation="normal", void=True)
    workload = write_workload(tmp_path / "wl", random_jobs(40, seed=8))

    def episode() -> tuple[list, int]:
        env = HeterogeneousClusterEnv.from_options(options, tmp_path / "run", workload)
        obs, info = env.reset(seed=3)
        rng = np.random.default_rng(5)
        seen = [obs.tolist(), info["action_mask"].tolist()]
        done = False
        while not done:
            obs, reward, done, _, info = env.step(int(rng.integers(env.action_space.n)))
            seen += [obs.tolist(), reward, info["action_mask"].tolist(), info["energy"]]
        engine = env.engine
        seen += [
            (j.id, j.start_time, j.finish_time, j.alloc, j.energy) for j in engine.finished_jobs
        ]
        seen += [engine.host_energy(), engine.nb_machine_switches]
        return seen, engine.nb_messages

    fast, fast_messages = episode()
    confirming = henv.env.Engine

    def with_confirmations(*args, **kwargs):
        kwargs["state_change_events"] = True
        return confirming(*args, **kwargs)

    monkeypatch.setattr(henv.env, "Engine", with_confirmations)
    slow, slow_messages = episode()
    assert fast == slow
    assert len(fast) > 100 and fast_messages < slow_messages


def test_bad_actions_and_order(tmp_path) -> None:
    env = thesis_env(tmp_path)
    with pytest.raises(SimulationError, match="reset"):
        env.step(0)
    env.reset(seed=0)
    with pytest.raises(SimulationError, match="outside the action space"):
        env.step(5)
    assert env.observation().shape == (21,)
    assert env.reward() == 0.0


def test_outputs_of_a_traced_episode(tmp_path) -> None:
    env = thesis_env(tmp_path)
    env.reset(seed=0)
    env.step(0)
    with pytest.raises(SimulationError, match="not traced"):
        env.write_outputs(tmp_path / "out")
    env.reset(seed=0, options={"trace": True})
    env.step(1)
    paths = env.write_outputs(tmp_path / "out")
    jobs = (tmp_path / "out" / "out_jobs.csv").read_text().splitlines()
    assert len(jobs) == 3 and paths


def test_thesis_experiment_files_load(tmp_path) -> None:
    env = HeterogeneousClusterEnv.from_options(
        THESIS_DIR / "options.json", tmp_path, THESIS_DIR / "workload.json"
    )
    assert env.action_names == [
        "shortest-high_gflops",
        "shortest-high_mem_bw",
        "shortest-low_power",
        "first-high_gflops",
        "first-high_mem_bw",
    ]
    assert env.observation_size == 21 and env.objective == "makespan"


def test_stable_baselines3_ppo_trains(tmp_path) -> None:
    sb3 = pytest.importorskip("stable_baselines3")
    options = write_options(tmp_path / "opt", observation="small", void=True)
    workload = write_workload(tmp_path / "wl", random_jobs(20, seed=1))
    env = HeterogeneousClusterEnv.from_options(options, tmp_path / "run", workload)
    model = sb3.PPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=2, seed=0, device="cpu")
    model.learn(total_timesteps=256)
    obs, _ = env.reset(seed=0)
    action, _ = model.predict(obs, deterministic=True)
    assert env.action_space.contains(int(action))
