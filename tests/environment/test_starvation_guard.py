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
    nothing runs to t = 2, where J1 has waited 1 s and does not fit (1 core free): it is
    reserved at A's requested end (t = 100, 1 core spare) and only jobs that may backfill
    around it are offered. J2 (4 cores) and J3 (2 cores) do not fit: nothing to offer, the
    environment runs on to t = 4, where J4 (1 core, ends by 9 <= 100) may start, or nothing.
    When A ends at 50, J1 fits and is the only choice; then J2 starves and J3 still waits."""
    env = make_env(tmp_path, backfill=True, max_wait=0.5)
    env.reset(seed=0)
    _, _, _, _, info = env.step(0)
    assert info["time"] == 1.0
    assert info["action_mask"].tolist() == [True] + [False] * 5 + [True]
    _, _, _, _, info = env.step(NOTHING)
    assert info["time"] == 4.0 and names(env) == ["J1", "J2", "J3", "J4"]
    assert info["action_mask"].tolist() == [False, False, False, True, False, False, True]
    _, _, _, _, info = env.step(0)  # J1 is masked: played as do nothing, to A's end
    assert info["invalid_actions"] == 1
    assert info["time"] == 50.0 and names(env) == ["J1", "J2", "J3", "J4"]
    assert info["action_mask"].tolist() == ONLY_SLOT_0
    _, _, _, _, info = env.step(0)  # J1 starts (3 cores, 50-56); J2 starves, reserved at 56
    assert names(env) == ["J2", "J3", "J4"]
    # 1 core free: J4 fits and ends by 50 + 5 <= 56; J3 (2 cores) does not fit.
    assert info["time"] == 50.0
    assert info["action_mask"].tolist() == [False, False, True, False, False, False, True]
    assert times(env)["A"] == (0.0, 50.0)


def wide_jobs() -> list:
    """A holds the two 4.4 GFLOPS cores of 4 until 200e9 / 4.4e9 = 45.45 s (requested 100 s);
    W (4 cores) arrives at 1; S (2 cores, requests 2 s) and L (2 cores, requests 500 s) at 2."""
    extra = {"mem": 100.0, "mem_bw": 4.0}
    return [
        ("A", 0.0, 2, 200e9, {**extra, "req_time": 100.0}),
        ("W", 1.0, 4, 40e9, {**extra, "req_time": 10.0}),
        ("S", 2.0, 2, 8e9, {**extra, "req_time": 2.0}),
        ("L", 2.0, 2, 8e9, {**extra, "req_time": 500.0}),
    ]


def test_backfill_guard_refuses_the_jobs_that_would_delay_it(tmp_path) -> None:
    """At t = 2 W has waited 1 s (bound 0.5 s) and does not fit (2 cores free): it is reserved
    at A's requested end, t = 100, with no core spare. S fits and ends by 4 <= 100; L fits but
    would end at 502 on the cores W needs: refused. Without the guard all three may be
    picked."""
    free = make_env(tmp_path / "free", wide_jobs(), backfill=True)
    free.reset(seed=0)
    free.step(0)
    _, _, _, _, info = free.step(NOTHING)
    assert info["time"] == 2.0 and names(free) == ["W", "S", "L"]
    assert info["action_mask"].tolist() == [True, True, True, False, False, False, True]
    env = make_env(tmp_path / "guarded", wide_jobs(), backfill=True, max_wait=0.5)
    env.reset(seed=0)
    env.step(0)
    _, _, _, _, info = env.step(NOTHING)
    assert info["time"] == 2.0 and names(env) == ["W", "S", "L"]
    assert info["action_mask"].tolist() == [False, True, False, False, False, False, True]
    # The last valid slot each time: S at 2, then nothing until W may start.
    done = False
    while not done:
        _, _, done, _, info = env.step(last_valid(env))
    got = times(env)
    # W starts when A ends, before L, which waits for W whatever the picks.
    assert got["W"][0] == got["A"][1] == pytest.approx(200e9 / 4.4e9)
    assert got["L"][0] >= got["W"][1]
    assert got["S"][0] == 2.0


@pytest.mark.parametrize("backfill", [False, True])
def test_a_zero_bound_keeps_the_oldest_job_first(tmp_path, backfill) -> None:
    """With max_wait = 0 every visible job starves once seen. Without backfilling, whatever
    the picker, jobs start as FCFS starts them; with backfilling, the oldest job is EASY's
    reserved head and FCFS, which backfills in submission order, is exactly the unguarded
    environment's EASY (its own backfilling pass)."""
    jobs = random_jobs(60, seed=5)
    fcfs = make_env(tmp_path / "fcfs", jobs, queue_slots=8, backfill=backfill)
    run_episode(fcfs, HeuristicPicker("FCFS"), seed=1)
    expected = times(fcfs)
    rng = np.random.default_rng(3)

    def random_valid(env) -> int:
        return int(rng.choice(np.flatnonzero(env.action_masks())))

    pickers = [HeuristicPicker("FCFS")]
    if not backfill:
        pickers += [HeuristicPicker(name) for name in BASELINES] + [random_valid, last_valid]
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


def test_cores_spare_at_the_reservation_may_be_used(tmp_path) -> None:
    """W now needs 3 cores: at its reservation (t = 100) one core is spare, so a 1-core job
    that would end long after (B, 500 s requested) may start now, while the 2-core L may
    not; S, ending in time, may."""
    extra = {"mem": 100.0, "mem_bw": 4.0}
    jobs = [
        ("A", 0.0, 2, 200e9, {**extra, "req_time": 100.0}),
        ("W", 1.0, 3, 40e9, {**extra, "req_time": 10.0}),
        ("S", 2.0, 2, 8e9, {**extra, "req_time": 2.0}),
        ("L", 2.0, 2, 8e9, {**extra, "req_time": 500.0}),
        ("B", 2.0, 1, 8e9, {**extra, "req_time": 500.0}),
    ]
    env = make_env(tmp_path, jobs, backfill=True, max_wait=0.5)
    env.reset(seed=0)
    env.step(0)
    _, _, _, _, info = env.step(NOTHING)
    assert info["time"] == 2.0 and names(env) == ["W", "S", "L", "B"]
    assert info["action_mask"].tolist() == [False, True, False, True, False, False, True]
    # B starts on the spare core; with 1 core free nothing else fits, so the environment runs
    # on to B's end (8e9 / 4e9 = 2 s, at 4): S may start then (ends by 6 <= 100), L still not.
    _, _, _, _, info = env.step(3)
    assert info["time"] == 4.0 and names(env) == ["W", "S", "L"]
    assert times(env)["B"] == (2.0, 4.0)
    assert info["action_mask"].tolist() == [False, True, False, False, False, False, True]


def test_the_agent_sees_how_near_each_job_is_to_the_guard(tmp_path) -> None:
    """With max_wait = 5 s each slot gains min(1, wait / 5) after the job's 6 features: at
    t = 4, J1-J4 have waited 3, 2, 1, 0 s. A bound of 0 shows 1 for every job; without the
    guard the layout is unchanged."""
    env = make_env(tmp_path, max_wait=5.0)
    env.reset(seed=0)
    obs, *_ = env.step(0)
    assert env.job_width == 7
    assert env.observation_space.shape == (SLOTS * 7 + 3,)
    jobs = obs[: SLOTS * 7].reshape(SLOTS, 7)
    assert jobs[:4, 6].tolist() == pytest.approx([0.6, 0.4, 0.2, 0.0])
    assert not jobs[4:].any()
    zero = make_env(tmp_path / "zero", max_wait=0.0)
    zero.reset(seed=0)
    obs, *_ = zero.step(0)  # A starts; the next state shows the jobs queued then
    shown = len(zero.visible_jobs)
    assert shown and obs[: SLOTS * 7].reshape(SLOTS, 7)[:shown, 6].tolist() == [1.0] * shown
    assert make_env(tmp_path / "none").job_width == 6
