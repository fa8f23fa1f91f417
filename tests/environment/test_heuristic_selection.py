"""Choosing EASY's queue ordering as the action: hand-worked schedules, skipped passes,
periods, rewards that add up to AVEbsld, pickling, vector environments and PPO.

Scenario (4 cores, ``delay`` profiles: a job runs exactly its run time; requested = run):

* A (4 cores, 10 s) at t = 0 starts at once (alone in the queue: not shown to the agent).
* B (2 cores, 5 s) at 1, C (3 cores, 20 s) at 2, D (1 core, 2 s) at 3: no core is free, so
  these passes are not shown either. At t = 10 A ends: 6 cores queued for 4 free, and D
  fits: the first (and only) decision.
* FCFS: B starts (2 left), C (3) is the head, reserved at B's end, 15, with 4 - 3 = 1 extra
  core; D (1 core, ends 12 <= 15) is backfilled. C runs 15-35.
  AVEbsld (tau 10 s): A 1, B (15 - 1) / 10 = 1.4, C (35 - 2) / 20 = 1.65, D 1: 5.05 / 4.
* LQF (largest cores first): C starts (1 left), B is the head, reserved at C's end, 30; D is
  backfilled (ends 12). B runs 30-35. A 1, C (30 - 2) / 20 = 1.4, B (35 - 1) / 10 = 3.4,
  D 1: 6.8 / 4.

``TWICE`` repeats the four jobs 40 s later (the first group is done by 35 under both
orderings), so there are two decisions (t = 10 and t = 50) and a switch between them gives
each half the schedule of the ordering chosen for it.
"""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
from rl_helpers import write_options

from hdeeprm.environment import (
    HEURISTIC_SELECTION_ID,
    THESIS_ORDERINGS,
    HeuristicSelectionEnv,
    heuristic_selection_factories,
)
from hdeeprm.environment.reward import bounded_slowdown
from hdeeprm.scheduling.bandit import EpsilonGreedyBandit, play_bandit

JOBS = [("A", 0, 4, 10, 10), ("B", 1, 2, 5, 5), ("C", 2, 3, 20, 20), ("D", 3, 1, 2, 2)]
TWICE = JOBS + [(j + "2", s + 40, r, run, req) for j, s, r, run, req in JOBS]
FCFS_STARTS = {"A": 0, "B": 10, "C": 15, "D": 10}
LQF_STARTS = {"A": 0, "B": 30, "C": 10, "D": 10}


def write_delay_workload(folder, jobs, nb_res: int = 4):
    """``(id, submit, cores, run, requested)`` jobs with delay profiles (exact run times)."""
    profiles = {
        jid: {
            "type": "delay",
            "delay": float(run),
            "req_time": float(req),
            "mem": 0.0,
            "mem_bw": 0.0,
        }
        for jid, _, _, run, req in jobs
    }
    raw = {
        "nb_res": nb_res,
        "jobs": [{"id": j, "subtime": float(s), "res": r, "profile": j} for j, s, r, _, _ in jobs],
        "profiles": profiles,
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "workload.json"
    path.write_text(json.dumps(raw))
    return path


def random_delay_jobs(n: int, seed: int) -> list[tuple]:
    """A loaded 4-core stream: jobs often queue, so orderings differ."""
    rng = np.random.default_rng(seed)
    jobs, t = [], 0.0
    for i in range(n):
        t += float(rng.exponential(3.0))
        req = float(rng.uniform(2.0, 40.0))
        run = round(req * rng.uniform(0.3, 1), 3)
        jobs.append((str(i), round(t, 3), int(rng.integers(1, 5)), run, req))
    return jobs


def make_env(tmp_path, jobs=JOBS, **kwargs) -> HeuristicSelectionEnv:
    options = write_options(tmp_path / "opt", observation="queue")
    workload = write_delay_workload(tmp_path / "wl", jobs)
    kwargs.setdefault("choices", ["FCFS", "LQF"])
    return HeuristicSelectionEnv.from_options(options, tmp_path / "run", workload, **kwargs)


def starts(env: HeuristicSelectionEnv) -> dict[str, float]:
    return {j.id.split("!")[-1]: j.start_time for j in env.engine.finished_jobs}


def play(env, actions, seed=0):
    _, info = env.reset(seed=seed)
    times, total, k = [info["time"]], 0.0, 0
    while not env.finished:
        _, reward, _, _, info = env.step(actions[min(k, len(actions) - 1)])
        total += reward
        times.append(info["time"])
        k += 1
    return times, total, info


def avebsld(env) -> float:
    jobs = env.engine.finished_jobs
    return sum(bounded_slowdown(j.subtime, j.start_time, j.finish_time) for j in jobs) / len(jobs)


@pytest.mark.parametrize(
    ("action", "expected", "objective"),
    [(0, FCFS_STARTS, 5.05 / 4), (1, LQF_STARTS, 6.8 / 4)],
)
def test_the_chosen_ordering_decides_the_schedule_by_hand(
    tmp_path, action, expected, objective
) -> None:
    env = make_env(tmp_path)
    assert env.action_names == ["FCFS", "LQF"] and env.action_space.n == 2
    _, info = env.reset(seed=0)
    # The first state shown is A's end at t = 10 (earlier passes cannot depend on the order).
    assert info["time"] == 10.0 and info["queue_size"] == 3 and info["choice"] == "FCFS"
    assert info["action_mask"].tolist() == [True, True]
    _, reward, done, _, info = env.step(action)
    assert done and env.steps == 1
    assert starts(env) == expected
    assert info["objective"] == pytest.approx(objective, rel=1e-12)
    assert reward == pytest.approx(-objective, rel=1e-12)
    assert info["finished_jobs"] == 3  # B, C and D finished during the step; A before it
    assert env.choice_counts == [1 - action, action]


def test_switching_orderings_between_decisions_by_hand(tmp_path) -> None:
    env = make_env(tmp_path, TWICE)
    times, total, info = play(env, [0, 1])
    assert times == [10.0, 50.0, 75.0]  # decisions at A's and A2's ends, then the end
    expected = dict(FCFS_STARTS)
    expected.update({j + "2": t + 40 for j, t in LQF_STARTS.items()})
    assert starts(env) == expected
    assert info["objective"] == pytest.approx((5.05 + 6.8) / 8, rel=1e-12)
    assert total == pytest.approx(-info["objective"], rel=1e-12)
    # The other way round.
    play(env, [1, 0])
    expected = dict(LQF_STARTS)
    expected.update({j + "2": t + 40 for j, t in FCFS_STARTS.items()})
    assert starts(env) == expected


@pytest.mark.parametrize(("period", "decisions"), [(100.0, [10.0]), (45.0, [10.0, 50.0])])
def test_a_choice_holds_for_its_period(tmp_path, period, decisions) -> None:
    # Periods start at the window's first submission (t = 0). With 100 s both decision
    # passes are in the first period: one choice (LQF) governs both halves.
    env = make_env(tmp_path, TWICE, period=period)
    times, total, info = play(env, [1, 0])
    assert times[:-1] == decisions
    s = starts(env)
    if len(decisions) == 1:
        assert s["B"] == 30 and s["B2"] == 70  # LQF in both halves
    else:
        assert s["B"] == 30 and s["B2"] == 50  # LQF, then FCFS
    assert total == pytest.approx(-info["objective"], rel=1e-12)


@pytest.mark.parametrize("period", [None, 60.0])
def test_rewards_add_up_to_minus_avebsld(tmp_path, period) -> None:
    env = make_env(
        tmp_path,
        random_delay_jobs(80, seed=3),
        choices=None,
        period=period,
        scheduler={"preset": "easy", "theta": 100},
    )
    assert env.action_names == list(THESIS_ORDERINGS)
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=1)
    total = 0.0
    while not env.finished:
        _, reward, _, _, info = env.step(int(rng.integers(env.action_space.n)))
        total += reward
    expected = avebsld(env)
    assert expected > 1.5 and env.steps > 5  # jobs waited, choices were asked for
    assert total == pytest.approx(-expected, rel=1e-9)
    assert info["objective"] == pytest.approx(expected, rel=1e-12)


def test_orderings_change_the_outcome_and_runs_are_deterministic(tmp_path) -> None:
    env = make_env(tmp_path, random_delay_jobs(80, seed=3), choices=["FCFS", "SPF", "LPF"])
    results = []
    for action in range(3):
        play(env, [action])
        results.append(avebsld(env))
        play(env, [action])
        assert avebsld(env) == results[-1]
    assert len(set(results)) == 3


def test_observation_and_choice_one_hot(tmp_path) -> None:
    env = make_env(tmp_path)
    obs, _ = env.reset(seed=0)
    base = env.observation_space.shape[0] - 2
    assert obs[base:].tolist() == [1.0, 0.0]  # FCFS in force
    # queue length 3 at index 21 of the queue observation: log(1 + 3) / log(1 + 10,000).
    assert obs[21] == pytest.approx(np.log(4) / np.log(10_001), rel=1e-6)
    assert env.observation_space.contains(obs)


def test_pickled_env_continues_bit_for_bit(tmp_path) -> None:
    env = make_env(tmp_path, random_delay_jobs(60, seed=4), choices=None)
    rng = np.random.default_rng(5)
    env.reset(seed=2)
    for _ in range(5):
        env.step(int(rng.integers(12)))
    clone = pickle.loads(pickle.dumps(env))
    while not env.finished:
        action = int(rng.integers(12))
        a, b = env.step(action), clone.step(action)
        assert a[1] == b[1] and np.array_equal(a[0], b[0]) and a[2] == b[2]
    assert clone.objective_value() == env.objective_value()


def test_registration_check_env_and_bad_arguments(tmp_path) -> None:
    import gymnasium
    from gymnasium.utils.env_checker import check_env

    env = make_env(tmp_path, random_delay_jobs(30, seed=1))
    check_env(env, skip_render_check=True)
    made = gymnasium.make(
        HEURISTIC_SELECTION_ID,
        options=write_options(tmp_path / "o2"),
        output_dir=tmp_path / "run2",
        custom_workload=write_delay_workload(tmp_path / "w2", JOBS),
        choices=["FCFS", "SPF/FCFS", "LQF/SPF"],
    )
    _, info = made.reset(seed=0)
    # A choice whose backfilling ordering is the preset's (FCFS) is named by its primary.
    assert made.unwrapped.action_names == ["FCFS", "SPF", "LQF/SPF"]
    assert info["action_mask"].shape == (3,)
    with pytest.raises(ValueError, match=r"choices\[1\]: unknown ordering 'SJF'"):
        make_env(tmp_path / "b1", choices=["FCFS", "SJF"])
    with pytest.raises(ValueError, match="repeats"):
        make_env(tmp_path / "b2", choices=["FCFS", "FCFS/FCFS"])
    with pytest.raises(ValueError, match="period"):
        make_env(tmp_path / "b3", period=0)
    with pytest.raises(ValueError, match="core policy"):
        make_env(tmp_path / "b4", core_policy="fastest")


def test_ppo_trains_on_a_vector_env_and_factories_pickle(tmp_path) -> None:
    from hdeeprm.training.ppo import PPOConfig, PPOTrainer

    options = write_options(tmp_path / "opt", observation="queue")
    workload = write_delay_workload(tmp_path / "wl", random_delay_jobs(60, seed=7))
    env = HeuristicSelectionEnv.from_options(
        options, tmp_path / "run", workload
    )  # prepares the inputs
    factories = heuristic_selection_factories(2, inputs=env.inputs, choices=["FCFS", "SPF"])
    # Subprocess vector environments (vector="async") pickle the factories: a copy builds an
    # environment that plays the same episode.
    copy = pickle.loads(pickle.dumps(factories[0]))()
    direct = factories[0]()
    assert play(copy, [1])[:2] == play(direct, [1])[:2]
    weights = []
    for _ in range(2):
        config = PPOConfig(
            num_envs=2,
            num_steps=32,
            num_minibatches=2,
            update_epochs=1,
            total_timesteps=128,
            seed=0,
        )
        trainer = PPOTrainer(config, factories)
        trainer.learn()
        assert trainer.global_step == 128 and trainer.action_names == ["FCFS", "SPF"]
        weights.append([p.detach().clone() for p in trainer.model.parameters()])
        trainer.close()
    assert all(np.array_equal(a.numpy(), b.numpy()) for a, b in zip(*weights))


# --- the thesis's bandit (section 6.3.3) -----------------------------------------------------
def test_bandit_estimates_follow_eq_6_8_by_hand() -> None:
    bandit = EpsilonGreedyBandit(4, epsilon=0.0, decay=0.5, seed=0)
    # Every period first decays all summed costs by lambda = 0.5, then adds the used arm's.
    bandit.update(0, 40.0, 2)  # cost [40, 0, 0, 0], jobs [2, 0, 0, 0]
    bandit.update(1, 10.0, 2)  # [20, 10, 0, 0], [2, 2, 0, 0]
    bandit.update(2, 30.0, 2)  # [10, 5, 30, 0], [2, 2, 2, 0]
    assert bandit.greedy() == 3  # untried
    bandit.update(3, 0.0, 0)  # a period where no job finished: [5, 2.5, 15, 0], no estimate
    bandit.update(1, 50.0, 3)  # [2.5, 51.25, 7.5, 0], [2, 5, 2, 0]
    assert bandit.cost.tolist() == [2.5, 51.25, 7.5, 0.0]
    est = bandit.estimates()
    assert est[:3].tolist() == [1.25, 10.25, 3.75] and np.isnan(est[3])
    assert bandit.greedy() == 0 and bandit.pulls.tolist() == [1, 2, 1, 1]


def test_bandit_exploits_the_cheapest_arm_and_explores_with_epsilon() -> None:
    bandit = EpsilonGreedyBandit(4, epsilon=0.0, seed=1)
    costs = [5.0, 2.0, 9.0, 4.0]
    for _ in range(4):
        arm = bandit.select()
        bandit.update(arm, costs[arm] * 10, 10)
    assert sorted(bandit.pulls.tolist()) == [1, 1, 1, 1]  # each untried arm once first
    assert bandit.estimates().tolist() == costs
    assert all(bandit.select() == 1 for _ in range(20))
    explorer = EpsilonGreedyBandit(4, epsilon=1.0, seed=2)
    assert len({explorer.select() for _ in range(50)}) == 4


def test_bandit_drives_the_environment(tmp_path) -> None:
    env = make_env(tmp_path, random_delay_jobs(80, seed=3), choices=None, period=50.0)
    bandit = EpsilonGreedyBandit(len(env.choices), epsilon=0.1, seed=0)
    env.reset(seed=0)
    before = env.manager.nb_completed  # jobs finished before the first decision
    info = play_bandit(env, bandit, seed=0)
    assert info["steps"] == bandit.pulls.sum() > 3
    assert bandit.jobs.sum() == 80 - before  # every later completion is fed back once
    again = EpsilonGreedyBandit(len(env.choices), epsilon=0.1, seed=0)
    assert play_bandit(env, again, seed=0)["objective"] == info["objective"]
    assert again.state() == bandit.state()


# --- simulation-based tuning (sections 6.3.1-6.3.2) ------------------------------------------
def test_simulated_feedback_switches_to_the_cheaper_ordering_by_hand(tmp_path) -> None:
    from hdeeprm.scenarios.period_tuning import SimulatedFeedback, play_simulated_feedback

    # 45 s periods: decisions at t = 10 (period 0) and t = 50 (period 1). The tuner starts on
    # LQF (initial=1). At t = 50 it simulates the jobs submitted in [0, 45) (all eight: the
    # second group arrives at 40-43) from an empty platform; each group waits FCFS B 9 + C 13
    # + D 7 = 29 s, LQF B 29 + C 8 + D 7 = 44 s, so the second half runs FCFS.
    env = make_env(tmp_path, TWICE, period=45.0)
    tuner = SimulatedFeedback(2, initial=1)
    info = play_simulated_feedback(env, tuner, seed=0)
    assert info["steps"] == 2 and tuner.cost.tolist() == [58.0, 88.0]
    expected = dict(LQF_STARTS)
    expected.update({j + "2": t + 40 for j, t in FCFS_STARTS.items()})
    assert starts(env) == expected
    noisy = SimulatedFeedback(2, noise=0.2, seed=3)
    noisy.observe([29.0, 44.0])
    assert 0.8 * 29 <= noisy.cost[0] <= 1.2 * 29 and 0.8 * 44 <= noisy.cost[1] <= 1.2 * 44
    with pytest.raises(ValueError, match="period"):
        play_simulated_feedback(make_env(tmp_path / "np", JOBS), tuner)
