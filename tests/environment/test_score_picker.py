"""The linear job-scoring picker: scores by hand, SQF's weights, a memory tie-break.

Same 4-core scenario as ``test_job_selection.py``: at t = 4 the visible jobs are J1-J4
(cores 3, 4, 2, 1; requested 6, 10, 2, 5 s; waits 3, 2, 1, 0 s; memory 100 MB, bandwidth 4).
"""

from __future__ import annotations

import math

import pytest
from rl_helpers import random_jobs
from test_job_selection import NOTHING, _extra, make_env, names

from hdeeprm.environment import HeuristicPicker, ScorePicker
from hdeeprm.environment.job_pickers import SCORE_FEATURES, run_episode


def test_scores_by_hand(tmp_path) -> None:
    env = make_env(tmp_path)
    env.reset(seed=0)
    env.step(0)  # A starts; t = 4
    assert names(env) == ["J1", "J2", "J3", "J4"]
    j1 = env.visible_jobs[0]
    now = env.manager.now
    assert now == 4.0
    # log2(1 + x) of cores 3, memory 100, bandwidth 4, requested 6 s, wait 3 s.
    expected = [2.0, math.log2(101.0), math.log2(5.0), math.log2(7.0), 2.0]
    for i, value in enumerate(expected):
        weights = [0.0] * len(SCORE_FEATURES)
        weights[i] = 1.0
        assert ScorePicker(weights).score(j1, now) == pytest.approx(value, rel=1e-12)
    # Cores alone: J4 (1), J3 (2), J1 (3), J2 (4); J4 fits (1 core free) and is taken.
    assert ScorePicker([1, 0, 0, 0, 0]).rank(env) == [3, 2, 0, 1]
    assert ScorePicker([1, 0, 0, 0, 0])(env) == 3
    # Longest wait first (weight -1 on the wait): J1 (3 s), which does not fit: wait for it.
    assert ScorePicker([0, 0, 0, 0, -1]).rank(env) == [0, 1, 2, 3]
    assert ScorePicker([0, 0, 0, 0, -1])(env) == NOTHING
    # Cores first: the wait only breaks ties, and J1-J4 all differ in size.
    assert ScorePicker([0, 0, 0, 0, -1], cores_first=True).rank(env) == [3, 2, 0, 1]


def test_sqf_weights_play_sqf_to_the_decision(tmp_path) -> None:
    env = make_env(tmp_path, random_jobs(60, seed=3), queue_slots=8)
    sqf = run_episode(env, HeuristicPicker("SQF"))
    assert run_episode(env, ScorePicker([1, 0, 0, 0, 0])) == sqf
    assert run_episode(env, ScorePicker([0, 0, 0, 0, 0], cores_first=True)) == sqf
    # Random jobs of 1-3 cores tie often: a memory tie-break changes the schedule.
    assert run_episode(env, ScorePicker([0, 1, 0, 0, 0], cores_first=True)) != sqf


def test_memory_breaks_ties_between_jobs_of_equal_size(tmp_path) -> None:
    """A holds the 4 cores until t = 50; two 1-core jobs wait behind it, B (4,000 MB)
    submitted before C (100 MB). The first state shown is at t = 50, both fitting: cores alone
    rank them in submission order; a small memory weight puts C first."""
    jobs = [
        ("A", 0.0, 4, 200e9, _extra(100.0)),
        ("B", 1.0, 1, 12e9, {**_extra(5.0), "mem": 4000.0}),
        ("C", 2.0, 1, 12e9, _extra(5.0)),
    ]
    env = make_env(tmp_path, jobs)
    env.reset(seed=0)
    env.step(0)
    assert env.manager.now == pytest.approx(50.0) and names(env) == ["B", "C"]
    assert ScorePicker([1, 0, 0, 0, 0])(env) == 0
    assert ScorePicker([1, 0.01, 0, 0, 0])(env) == 1
    assert ScorePicker([0, 1, 0, 0, 0], cores_first=True)(env) == 1
    assert ScorePicker([0, -1, 0, 0, 0], cores_first=True)(env) == 0


@pytest.mark.parametrize("weights", [[1, 0, 0], [1, 0, 0, 0, math.nan]])
def test_bad_weights(weights) -> None:
    with pytest.raises(ValueError, match="5 finite numbers"):
        ScorePicker(weights)


def test_starvation_guard_ranks_long_waiters_first(tmp_path) -> None:
    """At t = 4, J1-J4 have waited 3, 2, 1 and 0 s. With ``max_wait`` 2 s, J1 and J2 have
    waited long enough: they rank first, longest wait first, then SQF's order of the rest
    (J4, J3). J1 does not fit (1 core free), so the picker waits for it."""
    env = make_env(tmp_path)
    env.reset(seed=0)
    env.step(0)
    sqf = [1, 0, 0, 0, 0]
    assert ScorePicker(sqf, max_wait=2.0).rank(env) == [0, 1, 3, 2]
    assert ScorePicker(sqf, max_wait=2.0)(env) == NOTHING
    assert ScorePicker(sqf, max_wait=3.0).rank(env) == [0, 3, 2, 1]
    assert ScorePicker(sqf, max_wait=3.5).rank(env) == [3, 2, 0, 1]  # nobody waited 3.5 s
    assert ScorePicker(sqf, max_wait=3.5)(env) == 3


def test_starvation_guard_bounds_the_worst_wait(tmp_path) -> None:
    """Random 1-3-core jobs: SQF alone lets 3-core jobs wait longest. A guard far above any
    wait changes nothing; a tight one lowers the worst wait."""
    jobs = random_jobs(60, seed=3)
    env = make_env(tmp_path, jobs, queue_slots=8)
    sqf = [1, 0, 0, 0, 0]

    def worst_wait(picker: ScorePicker) -> float:
        run_episode(env, picker)
        return max(j.start_time - j.subtime for j in env.engine.finished_jobs)

    plain = run_episode(env, ScorePicker(sqf))
    assert run_episode(env, ScorePicker(sqf, max_wait=1e9)) == plain
    unguarded = worst_wait(ScorePicker(sqf))
    assert worst_wait(ScorePicker(sqf, max_wait=0.0)) < unguarded


@pytest.mark.parametrize("bound", [-1.0, math.inf, math.nan, "1"])
def test_bad_starvation_bound(bound) -> None:
    with pytest.raises(ValueError, match="max_wait"):
        ScorePicker([1, 0, 0, 0, 0], max_wait=bound)
