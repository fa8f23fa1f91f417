"""The job-selection environment's starvation guard (``max_wait``), worked by hand on the
scenario of ``test_job_selection``: A takes 3 of 4 cores at t = 0 and ends at 50 s (requested
100 s); J1-J4 (3, 4, 2, 1 cores) arrive at t = 1, 2, 3, 4; without a guard J4 may start at t = 4.
"""

from __future__ import annotations

import numpy as np
import pytest
from rl_helpers import random_jobs
from test_job_selection import NOTHING, SLOTS, make_env, names, times

from hdeeprm.environment import BASELINES, HeuristicPicker
from hdeeprm.environment.backfill_choice import BackfillChoiceEnv
from hdeeprm.environment.job_pickers import run_episode

ONLY_SLOT_0 = [True] + [False] * SLOTS


def last_valid(env) -> int:
    """A picker the guard has to stop: the last valid job slot, else do nothing."""
    mask = env.action_masks()
    slots = np.flatnonzero(mask[:NOTHING])
    return int(slots[-1]) if len(slots) else NOTHING


def test_below_the_bound_the_choice_is_free(tmp_path) -> None:
    env = make_env(tmp_path, max_wait=5.0)
    env.reset(seed=0)
    _, _, _, _, info = env.step(0)
    # t = 4: J1 waited 3 s < 5 s: the mask is the unguarded one, J4 may start.
    assert info["time"] == 4.0
    assert info["action_mask"].tolist() == [False, False, False, True, False, False, True]
    _, _, _, _, info = env.step(3)
    assert times(env)["J4"] == (4.0, 7.0)
    # Nothing else fits until A ends at 50, where J1 has waited 49 s: J1 alone is offered,
    # though J2 and J3 fit the 4 free cores as well.
    assert info["time"] == 50.0 and names(env) == ["J1", "J2", "J3"]
    assert info["action_mask"].tolist() == ONLY_SLOT_0


def test_plain_guard_waits_for_the_starving_job(tmp_path) -> None:
    """max_wait = 3 s: at t = 4 J1 has waited exactly 3 s, so J4 may not jump it. J1 fits
    only when A ends at 50: the environment runs on to 50 and offers J1 alone. Then every job
    left has waited longer than 3 s, so they start in submission order, each when it fits:
    J1 50-56 (3 cores, 24e9 / 4e9), J2 56-66 (4 cores, 40e9 / 4e9), J3 and J4 at 66."""
    env = make_env(tmp_path, max_wait=3.0)
    env.reset(seed=0)
    _, _, _, _, info = env.step(0)
    assert info["time"] == 50.0 and names(env) == ["J1", "J2", "J3", "J4"]
    assert info["action_mask"].tolist() == ONLY_SLOT_0
    done, starts = False, []
    while not done:
        starts.append((info["time"], names(env)[0]))
        _, _, done, _, info = env.step(last_valid(env))
    assert starts == [(50.0, "J1"), (56.0, "J2"), (66.0, "J3"), (66.0, "J4")]
    got = times(env)
    assert got["J1"] == pytest.approx((50.0, 56.0))
    assert got["J2"] == pytest.approx((56.0, 66.0))
    assert got["J3"][0] == got["J4"][0] == 66.0
    assert env.invalid_actions == 0


def test_backfill_guard_reserves_the_starving_job(tmp_path) -> None:
    """With backfilling and max_wait = 0.5 s: at t = 1 J1 has just arrived (free choice); doing
    nothing runs to t = 2, where J1 has waited 1 s: it alone may be picked (do nothing too is
    masked). Picked, it is reserved as EASY reserves it: J4 backfills at 4, J1 starts at 50;
    there J2 (waited 48 s) is the only choice, though J3 is smaller."""
    env = make_env(tmp_path, backfill=True, max_wait=0.5)
    env.reset(seed=0)
    _, _, _, _, info = env.step(0)
    assert info["time"] == 1.0
    assert info["action_mask"].tolist() == [True] + [False] * 5 + [True]
    _, _, _, _, info = env.step(NOTHING)
    assert info["time"] == 2.0 and names(env) == ["J1", "J2"]
    assert info["action_mask"].tolist() == ONLY_SLOT_0
    _, _, _, _, info = env.step(1)  # J2 is masked: played as the only valid slot, J1
    assert info["invalid_actions"] == 1
    assert info["time"] == 50.0 and names(env) == ["J2", "J3"]
    assert times(env)["J4"] == (4.0, 7.0)
    assert info["action_mask"].tolist() == ONLY_SLOT_0
    env.step(0)  # J2 reserved at J1's requested end: 50 + 6 = 56
    assert times(env)["J1"] == pytest.approx((50.0, 56.0))


@pytest.mark.parametrize("backfill", [False, True])
def test_a_zero_bound_is_first_come_first_served(tmp_path, backfill) -> None:
    """With max_wait = 0 every visible job starves as soon as it is seen, so whatever the
    picker, jobs start as FCFS starts them without the guard (plain: strictly in order; with
    backfilling: EASY around the oldest job)."""
    jobs = random_jobs(60, seed=5)
    fcfs = make_env(tmp_path / "fcfs", jobs, queue_slots=8, backfill=backfill)
    run_episode(fcfs, HeuristicPicker("FCFS"), seed=1)
    expected = times(fcfs)
    rng = np.random.default_rng(3)

    def random_valid(env) -> int:
        return int(rng.choice(np.flatnonzero(env.action_masks())))

    pickers = [HeuristicPicker(name) for name in BASELINES] + [random_valid, last_valid]
    for picker in pickers:
        env = make_env(tmp_path / "guarded", jobs, queue_slots=8, backfill=backfill, max_wait=0)
        result = run_episode(env, picker, seed=1)
        assert times(env) == expected
        assert result["objective"] == pytest.approx(fcfs.objective_value(), rel=1e-12)
        assert result["return"] == pytest.approx(-result["objective"], rel=1e-9)


@pytest.mark.parametrize("bad", [-1.0, float("inf"), float("nan"), "60", True])
def test_bad_bounds_are_refused(tmp_path, bad) -> None:
    with pytest.raises(ValueError, match="max_wait must be non-negative seconds"):
        make_env(tmp_path, max_wait=bad)


def test_the_guard_is_refused_where_it_cannot_hold(tmp_path) -> None:
    with pytest.raises(ValueError, match="not available with rlscheduler"):
        make_env(tmp_path, rlscheduler=True, max_wait=60.0)
    with pytest.raises(ValueError, match="EASY's reservation is its guard"):
        BackfillChoiceEnv(None, max_wait=0)
