"""Episodes as windows of the workload: options, train sampling, fixed evaluation windows."""

from __future__ import annotations

import math

import numpy as np
import pytest
from rl_helpers import random_jobs, write_options, write_workload

from hdeeprm.environment import HeterogeneousClusterEnv
from hdeeprm.environment.episodes import job_work, load_weights, window_loads, window_workload
from hdeeprm.errors import InputError
from hdeeprm.options import EpisodeOptions, load_options
from hdeeprm.workload import Workload
from hdeeprm.workload.model import JobSpec, Profile

EPISODES = {"window_jobs": 5, "train_jobs": [0, 20], "eval_jobs": [20, 40], "eval_windows": 3}


def make_env(tmp_path, episodes=EPISODES, split=None, **kwargs) -> HeterogeneousClusterEnv:
    options = write_options(tmp_path / "opt", episodes=episodes, void=True, **kwargs)
    workload = write_workload(tmp_path / "wl", random_jobs(40, seed=2))
    return HeterogeneousClusterEnv.from_options(options, tmp_path / "run", workload, split=split)


def run_episode(env, seed=None, options=None, action_seed=0):
    obs, info = env.reset(seed=seed, options=options)
    rng = np.random.default_rng(action_seed)
    rewards, done = [], False
    while not done:
        obs, reward, done, _, info = env.step(int(rng.integers(env.action_space.n)))
        rewards.append(reward)
    return info, rewards


def test_options_block_parsed_with_defaults(tmp_path) -> None:
    path = write_options(tmp_path, episodes={"window_jobs": 4, "train_jobs": [0, 10]})
    env = load_options(path).env
    assert env.episodes == EpisodeOptions(4, (0, 10), None, 8, 0)
    assert env.reward == "objective"


@pytest.mark.parametrize(
    ("episodes", "where", "fragment"),
    [
        ({"train_jobs": [0, 10]}, "episodes.window_jobs", "missing"),
        ({"window_jobs": 4}, "episodes.train_jobs", "missing"),
        ({"window_jobs": 0, "train_jobs": [0, 10]}, "episodes.window_jobs", ">= 1"),
        ({"window_jobs": 4, "train_jobs": [0, 3]}, "episodes.train_jobs", "fewer than"),
        ({"window_jobs": 4, "train_jobs": [5, 5]}, "episodes.train_jobs", "start < end"),
        ({"window_jobs": 4, "train_jobs": "0-10"}, "episodes.train_jobs", "[start, end]"),
        (
            {"window_jobs": 4, "train_jobs": [0, 10], "eval_jobs": [8, 20]},
            "episodes.eval_jobs",
            "overlaps train_jobs",
        ),
        ({"window_jobs": 4, "train_jobs": [0, 10], "eval_seed": -1}, "episodes.eval_seed", ">= 0"),
        ({"window_jobs": 4, "train_jobs": [0, 10], "windows": 2}, "episodes.windows", "unknown"),
        (
            {"window_jobs": 4, "train_jobs": [0, 10], "eval_jobs": [10, 20], "val_jobs": [5, 12]},
            "episodes.val_jobs",
            "overlaps eval_jobs",
        ),
        ({"window_jobs": 4, "train_jobs": [0, 9], "val_jobs": [0, 3]}, "val_jobs", "fewer"),
        ({"window_jobs": 4, "train_jobs": [0, 9], "val_windows": 0}, "val_windows", ">= 1"),
        ({"window_jobs": 4, "train_jobs": [0, 10], "val_seed": -2}, "episodes.val_seed", ">= 0"),
    ],
)
def test_bad_episodes_name_the_key(tmp_path, episodes, where, fragment) -> None:
    path = write_options(tmp_path, episodes=episodes)
    with pytest.raises(InputError) as err:
        load_options(path)
    assert "pybatsim.env." in str(err.value) and where in str(err.value)
    assert fragment in str(err.value)


def test_ranges_past_the_workload_and_missing_blocks(tmp_path) -> None:
    with pytest.raises(InputError, match=r"eval_jobs: \[20, 60\) goes past the end.*40 jobs"):
        make_env(tmp_path / "a", {**EPISODES, "eval_jobs": [20, 60]})
    with pytest.raises(InputError, match="needs eval_jobs"):
        make_env(tmp_path / "b", {"window_jobs": 5, "train_jobs": [0, 20]}, split="eval")
    options = write_options(tmp_path / "c")
    workload = write_workload(tmp_path / "wl", random_jobs(10, seed=2))
    with pytest.raises(InputError, match="needs an episodes block"):
        HeterogeneousClusterEnv.from_options(options, tmp_path / "run", workload, split="train")
    with pytest.raises(ValueError, match="split must be one of"):
        HeterogeneousClusterEnv.from_options(options, tmp_path / "run", workload, split="test")


def test_window_slices_and_shifts_in_memory(tmp_path) -> None:
    env = make_env(tmp_path, split="all")
    whole = env.inputs.workload
    window = window_workload(whole, 7, 5)
    assert [j.id for j in window.jobs] == [j.id for j in whole.jobs[7:12]]
    assert window.jobs[0].subtime == 0.0
    gaps = [b.subtime - a.subtime for a, b in zip(whole.jobs[7:11], whole.jobs[8:12])]
    assert [b.subtime - a.subtime for a, b in zip(window.jobs, window.jobs[1:])] == gaps
    assert window.profiles is whole.profiles
    assert whole.jobs[7].subtime > 0  # the loaded workload is untouched


def test_train_split_samples_windows_from_the_train_range(tmp_path) -> None:
    env = make_env(tmp_path)
    assert env.split == "train"
    firsts = []
    for episode in range(12):
        _, info = env.reset(seed=5 if episode == 0 else None)
        first, last = info["window"]
        assert first >= 0 and last == first + 4 and last < 20
        assert info["time"] == 0.0  # shifted: the window's first job comes at t = 0
        firsts.append(first)
    assert len(set(firsts)) > 3
    env2 = make_env(tmp_path / "again")
    assert [env2.reset(seed=5 if i == 0 else None)[1]["window"][0] for i in range(12)] == firsts
    info, _ = run_episode(env, seed=1)
    assert info["completed"] + info["rejected"] == 5


def test_eval_windows_are_fixed_and_independent_of_history(tmp_path) -> None:
    env = make_env(tmp_path, split="eval")
    assert env.nb_eval_windows == 3
    starts = env.windows.eval_starts
    assert starts == sorted(starts) and all(20 <= s <= 35 for s in starts)
    # A fresh environment that first ran many episodes sees the same window 1, bit for bit.
    fresh_info, fresh_rewards = run_episode(env, options={"window": 1})
    other = make_env(tmp_path / "other", split="eval")
    for k in (2, 0, 2, 1, 0):
        run_episode(other, options={"window": k}, action_seed=k)
    info, rewards = run_episode(other, options={"window": 1})
    assert info["window"] == fresh_info["window"] == (starts[1], starts[1] + 4)
    assert rewards == fresh_rewards
    # Without a window they come in turn.
    seen = [env.reset()[1]["window"][0] for _ in range(3)]
    assert sorted(seen) == starts
    with pytest.raises(ValueError, match="window 3 does not exist"):
        env.reset(options={"window": 3})
    train = make_env(tmp_path / "train")
    with pytest.raises(ValueError, match="needs split='eval'"):
        train.reset(options={"window": 0})
    with pytest.raises(ValueError, match="unknown reset option"):
        train.reset(options={"windw": 0})


def test_all_split_is_the_whole_workload(tmp_path) -> None:
    env = make_env(tmp_path, split="all")
    info, _ = run_episode(env, seed=0)
    assert info["window"] == (0, 39)
    assert info["completed"] + info["rejected"] == 40


VAL = {**EPISODES, "val_jobs": [0, 20], "val_windows": 4, "val_seed": 3}


def test_val_split_has_its_own_fixed_windows_from_the_training_part(tmp_path) -> None:
    env = make_env(tmp_path, VAL, split="val")
    assert env.nb_eval_windows == 4  # the validation windows in this split
    starts = env.windows.val_starts
    # drawn like the evaluation windows (same formula), from val_jobs and val_seed
    expected = sorted(int(s) for s in np.random.default_rng(3).integers(0, 16, size=4))
    assert starts == expected and all(0 <= s <= 15 for s in starts)
    evaluation = make_env(tmp_path / "e", VAL, split="eval")
    assert env.windows.eval_starts == evaluation.windows.eval_starts != starts
    # Window k and its random policies depend on val_seed and k alone.
    first_info, first_rewards = run_episode(env, options={"window": 2})
    other = make_env(tmp_path / "other", VAL, split="val")
    run_episode(other, options={"window": 0}, action_seed=5)
    info, rewards = run_episode(other, options={"window": 2})
    assert info["window"] == first_info["window"] == (starts[2], starts[2] + 4)
    assert rewards == first_rewards
    with pytest.raises(ValueError, match="window 4 does not exist: there are 4 validation"):
        env.reset(options={"window": 4})
    with pytest.raises(InputError, match="needs val_jobs"):
        make_env(tmp_path / "none", EPISODES, split="val")


def small_workload(jobs: list[tuple[float, int, str, float]]) -> Workload:
    """jobs: (subtime, res, profile type, cpu or delay)."""
    profiles = {}
    specs = []
    for i, (sub, res, kind, value) in enumerate(jobs):
        if kind == "delay":
            profiles[f"p{i}"] = Profile(f"p{i}", "delay", delay=value)
        else:
            profiles[f"p{i}"] = Profile(f"p{i}", kind, cpu=value)
        specs.append(JobSpec(str(i), sub, res, f"p{i}"))
    return Workload(4, specs, profiles)


def test_job_work_and_window_loads_by_hand() -> None:
    # speed 2 flops/s per core; 4 cores
    wl = small_workload(
        [
            (0.0, 2, "parallel_homogeneous", 10.0),  # 2 x 10 / 2 = 10 core-s
            (5.0, 1, "delay", 6.0),  # 1 x 6 = 6 core-s
            (10.0, 4, "parallel_homogeneous_total", 8.0),  # 8 / 2 = 4 core-s
            (10.0, 1, "delay", 2.0),  # 2 core-s
        ]
    )
    assert job_work(wl, 2.0).tolist() == [10.0, 6.0, 4.0, 2.0]
    loads = window_loads(wl, 2, 4, 2.0)
    # [0,1]: 16 / (4 x 5) = 0.8; [1,2]: 10 / (4 x 5) = 0.5; [2,3]: span 0 with work: inf
    assert loads.tolist() == [0.8, 0.5, math.inf]
    assert window_loads(wl, 4, 4, 2.0).tolist() == [22 / 40]
    with pytest.raises(ValueError, match="window_jobs must be in 1..4"):
        window_loads(wl, 5, 4, 2.0)


def test_load_weights_by_hand() -> None:
    loads = np.array([0.8, 0.5, math.inf, 0.0, 0.2])
    # starts of [0, 5) with 2-job windows: 0..3; inf counts as the range's largest finite, 0.8
    p = load_weights(loads, (0, 5), 2, "o.json", "train_jobs")
    assert p.tolist() == pytest.approx([0.8 / 2.1, 0.5 / 2.1, 0.8 / 2.1, 0.0])
    # starts of [1, 5): 1..3, the largest finite load among them is 0.5
    assert load_weights(loads, (1, 5), 2, "o", "k").tolist() == pytest.approx([0.5, 0.5, 0.0])
    with pytest.raises(InputError, match="no window of \\[3, 5\\) has any work") as err:
        load_weights(loads, (3, 5), 2, "o.json", "val_jobs")
    assert "episodes.val_jobs" in str(err.value)


LOADED = {**VAL, "train_sampling": "load", "val_sampling": "load"}


def test_load_sampling_draws_windows_in_proportion_to_load(tmp_path) -> None:
    env = make_env(tmp_path, LOADED)
    episodes = env.options.env.episodes
    assert (episodes.train_sampling, episodes.val_sampling) == ("load", "load")
    cores = len(env.inputs.platform.cores)
    loads = window_loads(env.inputs.workload, 5, cores, env.inputs.platform.reference_speed * 1e9)
    p = loads[0:16] / loads[0:16].sum()
    # the first training draw is the environment's np_random choosing with these
    # probabilities (later resets also draw the manager's seeds from it); no window without
    # load is ever drawn, and the sequence follows the seed
    firsts = [env.reset(seed=4 if i == 0 else None)[1]["window"][0] for i in range(30)]
    assert firsts[0] == int(np.random.default_rng(4).choice(16, p=p))
    assert all(p[f] > 0 for f in firsts)
    again = make_env(tmp_path / "again", LOADED)
    assert [again.reset(seed=4 if i == 0 else None)[1]["window"][0] for i in range(30)] == firsts
    # validation windows: val_seed's generator choosing with the loads of val_jobs
    val = make_env(tmp_path / "v", LOADED, split="val")
    expected = sorted(int(i) for i in np.random.default_rng(3).choice(16, size=4, p=p))
    assert val.windows.val_starts == expected
    # evaluation windows stay uniform, and uniform sampling is unchanged
    uniform_eval = make_env(tmp_path / "u", VAL, split="eval")
    assert val.windows.eval_starts == uniform_eval.windows.eval_starts
    uniform = make_env(tmp_path / "w", VAL)
    rng = np.random.default_rng(4)
    first = uniform.reset(seed=4)[1]["window"][0]
    assert first == int(rng.integers(0, 16))
    with pytest.raises(InputError, match="train_sampling"):
        make_env(tmp_path / "bad", {**VAL, "train_sampling": "busy"})
