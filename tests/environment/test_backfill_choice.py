"""The agent chooses what EASY backfills (BackfillChoiceEnv): a hand-worked episode, and the two
rules as agents give exactly EASY's and EASY-SJBF's schedules.

The hand-worked scenario is test_job_selection.py's, on the 4-core learning platform: A takes 3
cores at t = 0 and runs 50 s (requested 100 s); J1 (3 cores, requested 6 s), J2 (4 cores, 10 s),
J3 (2 cores, 2 s) and J4 (1 core, 5 s, runs 3 s) arrive at t = 1, 2, 3, 4.
"""

from __future__ import annotations

import pytest
from rl_helpers import random_jobs, write_options, write_workload
from test_job_selection import JOBS, times

from hdeeprm.decision import ActionSpace, FixedPair, WorkloadManager
from hdeeprm.environment.backfill_choice import BackfillChoiceEnv, easy_pick, sjbf_pick
from hdeeprm.scheduling import PRESETS, BackfillScheduler
from hdeeprm.simulation import Engine, run

SLOTS = 6
NOTHING = SLOTS


def make_env(tmp_path, jobs=JOBS, **kwargs) -> BackfillChoiceEnv:
    options = write_options(tmp_path / "opt")
    workload = write_workload(tmp_path, jobs)
    kwargs.setdefault("queue_slots", SLOTS)
    return BackfillChoiceEnv.from_options(options, tmp_path / "run", workload, **kwargs)


def names(env: BackfillChoiceEnv) -> list[str]:
    return [job.id.split("!")[-1] for job in env.visible_jobs]


def test_the_first_choice_and_backfilling_it(tmp_path) -> None:
    env = make_env(tmp_path)
    _, info = env.reset(seed=0)
    # A started by itself at 0 (the head fits). J1 (3 cores, 1 free) is the head from t = 1,
    # reserved at A's requested end (t = 100, 1 + 3 cores, 1 spare); J2 and J3 do not fit; J4
    # (1 core, ends by 4 + 5 <= 100) is the first candidate, at t = 4.
    assert info["time"] == 4.0 and names(env) == ["J4"]
    assert env.head is not None and env.head.id.endswith("J1") and env.shadow == 100.0
    # As EASY, a candidate always starts: do nothing is masked (unless wait=True).
    assert info["action_mask"].tolist() == [True] + [False] * SLOTS
    # J4 backfills; then every job starts as a head (no further candidate): J1 when A ends at
    # 50, J2 when J1 ends at 56 (4 cores, 10 s), J3 after J2.
    _, _, done, _, _ = env.step(0)
    assert done
    got = times(env)
    assert got["J4"] == (4.0, 7.0)
    assert got["J1"] == pytest.approx((50.0, 56.0))
    assert got["J2"] == pytest.approx((56.0, 66.0))
    assert got["J3"][0] == pytest.approx(66.0)


def test_do_nothing_defers_the_backfill(tmp_path) -> None:
    env = make_env(tmp_path, wait=True)
    _, info = env.reset(seed=0)
    assert info["action_mask"].tolist() == [True] + [False] * (SLOTS - 1) + [True]
    _, _, done, _, info = env.step(NOTHING)
    # Nothing happens until A ends at 50: J1 starts (head, 3 cores), J2 (4 cores) becomes the
    # head, reserved at J1's requested end 56 with 0 spare; J4 ends by 50 + 5 <= 56: candidate.
    assert not done and info["time"] == 50.0 and names(env) == ["J4"]
    assert env.shadow == 56.0
    _, _, done, _, _ = env.step(0)
    assert done and times(env)["J4"] == (50.0, 53.0)


def _rule_schedule(env: BackfillChoiceEnv, preset: str) -> dict[str, float]:
    """Start times of the same window under hdeeprm's own EASY scheduler ``preset``."""
    inputs = env.inputs
    pair = ("first", env.core_policy)
    actions = ActionSpace([pair], void=False)
    manager = WorkloadManager(
        inputs.platform,
        actions,
        FixedPair(actions, pair),
        seed=1,
        scheduler=BackfillScheduler(PRESETS[preset]),
    )
    engine = Engine(inputs.sim_platform, inputs.workload)
    run(engine, manager)
    return {job.id: job.start_time for job in engine.finished_jobs}


@pytest.mark.parametrize(("pick", "preset"), [(easy_pick, "easy"), (sjbf_pick, "easy-sjbf")])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_the_rules_as_agents_are_easy_and_sjbf(tmp_path, pick, preset, seed) -> None:
    # Slots for every candidate: beyond them the agent sees only the oldest, and SJBF's
    # shortest could be hidden.
    env = make_env(tmp_path, jobs=random_jobs(60, seed), queue_slots=64)
    env.reset(seed=0)
    done, steps = env.finished, 0
    while not done:
        _, _, done, _, _ = env.step(pick(env))
        steps += 1
    assert steps > 0  # the window had choices to make
    got = {job.id: job.start_time for job in env.engine.finished_jobs}
    assert got == _rule_schedule(env, preset)


def test_refuses_the_arguments_it_decides_itself(tmp_path) -> None:
    with pytest.raises(ValueError, match="rlscheduler"):
        make_env(tmp_path, rlscheduler=True)
