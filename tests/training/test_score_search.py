"""The cross-entropy method: convergence on a known minimum, elitism, determinism, and the
windows objective on a small job-selection environment."""

from __future__ import annotations

import numpy as np
import pytest
from rl_helpers import random_jobs, write_options, write_workload

from hdeeprm.environment import HeuristicPicker, JobSelectionEnv, ScorePicker
from hdeeprm.environment.job_pickers import run_episode
from hdeeprm.training.score_search import CEMConfig, cem_search, windows_objective

TARGET = np.array([2.0, -1.0, 0.5])


def quadratic(w: np.ndarray) -> float:
    return float(np.sum((w - TARGET) ** 2))


def test_cem_finds_a_known_minimum_and_counts_its_evaluations() -> None:
    config = CEMConfig(iterations=25, population=20, elite=5, init_std=1.0, seed=3)
    calls = []

    def objective(w: np.ndarray) -> float:
        calls.append(w.copy())
        return quadratic(w)

    result = cem_search(objective, [0.0, 0.0, 0.0], config)
    # Start: |TARGET|^2 = 4 + 1 + 0.25.
    assert result.start_value == pytest.approx(5.25)
    assert result.value < 0.01
    assert np.allclose(result.weights, TARGET, atol=0.1)
    # 1 (start) + per iteration: 20 samples and the refitted mean.
    assert result.evaluations == len(calls) == 1 + 25 * 21
    best = [row["best_value"] for row in result.history]
    assert best == sorted(best, reverse=True)  # never worse
    assert result.value == best[-1] == min(quadratic(w) for w in calls)


def test_cem_never_returns_worse_than_its_start() -> None:
    """Every sample is worse than the start (a spike at the start): the start is returned."""
    start = np.array([1.0, 0.0])

    def spike(w: np.ndarray) -> float:
        return 0.0 if np.array_equal(w, start) else 1.0 + float(np.sum(np.abs(w)))

    result = cem_search(spike, start, CEMConfig(iterations=3, population=4, elite=2))
    assert result.value == 0.0 and np.array_equal(result.weights, start)


def test_cem_is_deterministic_per_seed() -> None:
    config = CEMConfig(iterations=4, population=6, elite=2, seed=11)
    a = cem_search(quadratic, [0.0, 0.0, 0.0], config)
    b = cem_search(quadratic, [0.0, 0.0, 0.0], config)
    c = cem_search(quadratic, [0.0, 0.0, 0.0], CEMConfig(iterations=4, population=6, elite=2))
    assert np.array_equal(a.weights, b.weights) and a.history == b.history
    assert not np.array_equal(a.weights, c.weights)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"iterations": 0}, "at least 1"),
        ({"population": 3, "elite": 5}, "elite must be between 1 and population"),
        ({"init_std": 0.0}, "init_std must be positive"),
    ],
)
def test_bad_config(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        CEMConfig(**kwargs)


def test_windows_objective_matches_whole_episodes(tmp_path) -> None:
    """Two evaluation windows of 20 jobs; each window's value is its episode's objective."""
    episodes = {"window_jobs": 20, "train_jobs": [0, 30], "eval_jobs": [30, 60], "eval_windows": 2}
    options = write_options(tmp_path / "opt", episodes=episodes)
    workload = write_workload(tmp_path, random_jobs(60, seed=8))
    env = JobSelectionEnv.from_options(
        options, tmp_path / "run", workload, queue_slots=8, split="eval"
    )
    values = windows_objective(env, ScorePicker([1, 0, 0, 0, 0]), [0, 1])
    episodes_sqf = [run_episode(env, HeuristicPicker("SQF"), window=k) for k in (0, 1)]
    assert values == [e["objective"] for e in episodes_sqf]
    assert min(values) >= 1.0 and values[0] != values[1]
