"""The planning teacher: planning views worked out by hand, the rollout teacher recovered when
the planner knows everything, and on a trace with arrivals every view reaching the real state,
deterministically."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from rl_helpers import random_jobs, write_options, write_workload

from hdeeprm.environment import HeterogeneousClusterEnv
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import load_options
from hdeeprm.training import evaluate as ev
from hdeeprm.workload.model import JobSpec, Profile, Workload
from studies.imitation.planning import PlanningTeacher, planning_view, requested_profile
from studies.imitation.rollout import RolloutTeacher


def test_requested_profile_by_hand() -> None:
    # parallel_homogeneous: cpu 3e9 flops per core ran; the user asked for 8e9
    ran = Profile("p", "parallel_homogeneous", cpu=3e9, com=0.0, extra={"req_ops": 8e9})
    planned = requested_profile(ran)
    assert (planned.name, planned.type, planned.cpu, planned.com) == (
        "plan!p",
        "parallel_homogeneous",
        8e9,
        0.0,
    )
    # delay: 12 s ran, 30 s requested
    delay = requested_profile(Profile("d", "delay", delay=12.0, extra={"req_time": 30.0}))
    assert (delay.name, delay.delay) == ("plan!d", 30.0)
    # no request recorded: nothing to plan with but the profile itself
    bare = Profile("b", "parallel_homogeneous", cpu=1e9)
    assert requested_profile(bare) is bare


def test_planning_view_by_hand() -> None:
    profiles = {
        name: Profile(name, "parallel_homogeneous", cpu=cpu, extra={"req_ops": req})
        for name, cpu, req in (("pa", 1e9, 2e9), ("pb", 3e9, 5e9), ("pc", 4e9, 4e9))
    }
    jobs = [
        JobSpec("a", 0.0, 1, "pa"),
        JobSpec("b", 5.0, 2, "pb"),
        JobSpec("c", 10.0, 1, "pc"),
    ]
    window = Workload(4, jobs, profiles, "w")
    # at t = 5: a has ended (kept as it ran), b is known with its request, c not yet submitted
    view = planning_view(window, 5.0, {"a"})
    assert [(j.id, j.subtime, j.res, j.profile) for j in view.jobs] == [
        ("a", 0.0, 1, "pa"),
        ("b", 5.0, 2, "plan!pb"),
    ]
    assert view.profiles["plan!pb"].cpu == 5e9 and view.profiles["pb"].cpu == 3e9
    # at t = 10 nothing has ended: every known job planned with its request
    later = planning_view(window, 10.0, set())
    assert [j.profile for j in later.jobs] == ["plan!pa", "plan!pb", "plan!pc"]
    assert window.jobs[1].profile == "pb"  # the window itself is left as it was


def test_arrival_forecast_by_hand() -> None:
    profiles = {
        name: Profile(name, "parallel_homogeneous", cpu=cpu, extra={"req_ops": req})
        for name, cpu, req in (("pa", 1e9, 2e9), ("pb", 3e9, 5e9), ("pc", 4e9, 4e9))
    }
    jobs = [
        JobSpec("a", 0.0, 1, "pa", 60.0),
        JobSpec("b", 5.0, 2, "pb"),
        JobSpec("c", 10.0, 1, "pc"),
    ]
    window = Workload(4, jobs, profiles, "w")
    # at t = 10, horizon 8: the jobs submitted in (2, 10] are b and c; they come again at
    # 5 + 8 = 13 and 10 + 8 = 18, with their requests (neither has ended); a (at 0) is too old
    view = planning_view(window, 10.0, {"a"}, forecast=8.0)
    assert [(j.id, j.subtime, j.res, j.profile) for j in view.jobs] == [
        ("a", 0.0, 1, "pa"),
        ("b", 5.0, 2, "plan!pb"),
        ("c", 10.0, 1, "plan!pc"),
        ("b+fc", 13.0, 2, "plan!pb"),
        ("c+fc", 18.0, 1, "plan!pc"),
    ]
    # horizon 10 reaches a (0 > 10 - 10 is false: the interval is open) ... 10.5 does, as it ran
    assert [j.id for j in planning_view(window, 10.0, {"a"}, forecast=10.0).jobs][3:] == [
        "b+fc",
        "c+fc",
    ]
    wide = planning_view(window, 10.0, {"a"}, forecast=10.5)
    assert [(j.id, j.subtime, j.profile, j.walltime) for j in wide.jobs][3:4] == [
        ("a+fc", 10.5, "pa", 60.0)
    ]


def small_env(tmp: Path, jobs) -> HeterogeneousClusterEnv:
    workload = write_workload(tmp / "wl", jobs)
    episodes = {"window_jobs": 30, "train_jobs": [0, 60], "val_jobs": [0, 60], "val_windows": 2}
    selection = [{"shortest": ["high_gflops", "high_mem_bw", "low_power", "high_cores"]}]
    options = write_options(
        tmp / "run", objective="avg_job_slowdown", episodes=episodes, selection=selection
    )
    inputs = prepare_inputs(load_options(options), tmp / "run", custom_workload=Path(workload))
    return HeterogeneousClusterEnv(inputs=inputs, split="val")


def with_requests(jobs, exact: bool, at_zero: bool):
    """The jobs with ``req_ops`` (the run's own work if ``exact``, else the request at the
    platform's 4.2 GFLOPS reference speed), all submitted at 0 if ``at_zero``."""
    out = []
    for jid, sub, res, cpu, extra in jobs:
        req = cpu if exact else extra["req_time"] * 4.2e9
        out.append((jid, 0.0 if at_zero else sub, res, cpu, {**extra, "req_ops": req}))
    return out


def test_the_planner_is_the_rollout_teacher_when_it_knows_everything(tmp_path) -> None:
    # every job submitted at t = 0 with its exact work requested: each planning view is the
    # real window, so each segment's choice and the result are the clairvoyant teacher's
    env = small_env(tmp_path, with_requests(random_jobs(60, seed=5), exact=True, at_zero=True))
    names = env.action_names
    base = names.index("shortest-high_gflops")
    candidates = list(range(len(names)))
    for window in (0, 1):
        planned = PlanningTeacher(env, base, candidates, segment=5).improve(window)
        clairvoyant = RolloutTeacher(env, base, candidates, segment=5).improve(window)
        assert planned.unsynced == 0
        assert planned.segment_actions == clairvoyant.segment_actions
        assert planned.value == clairvoyant.value and planned.base_value == clairvoyant.base_value
        np.testing.assert_array_equal(
            planned.demonstrations.actions, clairvoyant.demonstrations.actions
        )


@pytest.fixture(scope="module")
def arrivals_env(tmp_path_factory) -> HeterogeneousClusterEnv:
    jobs = with_requests(random_jobs(60, seed=5), exact=False, at_zero=False)
    return small_env(tmp_path_factory.mktemp("planning"), jobs)


def test_with_arrivals_views_reach_the_real_state_deterministically(arrivals_env) -> None:
    env = arrivals_env
    names = env.action_names
    base = names.index("shortest-high_gflops")
    candidates = list(range(len(names)))
    blind = {}
    for window in (0, 1):
        result = PlanningTeacher(env, base, candidates, segment=5).improve(window)
        blind[window] = result
        assert result.unsynced == 0  # every view replays to the real observation
        pair = ev.evaluate(env, {"pair": ev.fixed_policy(base)}, windows=[window])[0]
        assert result.base_value == pair.objective
        # the recorded decisions replay on the real window to the reported value
        demos = result.demonstrations
        value, actions, _, _ = RolloutTeacher(env, base, candidates).play(
            window, demos.actions.tolist(), base, record=True
        )
        assert value == result.value and actions == demos.actions.tolist()
        again = PlanningTeacher(env, base, candidates, segment=5).improve(window)
        assert again.segment_actions == result.segment_actions and again.value == result.value
    # with an arrival forecast the views still replay to the real state (the forecast jobs
    # arrive after the segment's first decision), and the result is as deterministic; the
    # views' episodes are longer by the forecast jobs' decisions (about 10 jobs per 20 s)
    for window in (0, 1):
        ahead = PlanningTeacher(env, base, candidates, segment=5, forecast=20.0).improve(window)
        assert ahead.unsynced == 0 and ahead.base_value == blind[window].base_value
        assert ahead.decisions > blind[window].decisions
        again = PlanningTeacher(env, base, candidates, segment=5, forecast=20.0).improve(window)
        assert again.segment_actions == ahead.segment_actions and again.value == ahead.value
    # a what-if workload replaces a fixed window's jobs: it needs one (its seeds)
    with pytest.raises(ValueError, match="needs a fixed"):
        env.reset(options={"workload": env.windows.workload_at(0)})


def test_arguments_are_checked(arrivals_env) -> None:
    with pytest.raises(ValueError, match="segment"):
        PlanningTeacher(arrivals_env, 0, [1], segment=0)
    with pytest.raises(ValueError, match="tolerance"):
        PlanningTeacher(arrivals_env, 0, [1], tolerance=-1.0)
    with pytest.raises(ValueError, match="outside the action space"):
        PlanningTeacher(arrivals_env, 0, [99])
    with pytest.raises(ValueError, match="forecast"):
        PlanningTeacher(arrivals_env, 0, [1], forecast=-1.0)


def test_a_what_if_workload_equal_to_the_window_replays_it(arrivals_env) -> None:
    # the window's own jobs passed as a what-if workload: the same episode, bit for bit
    env = arrivals_env
    own = env.windows.workload_at(env.windows.val_starts[1])
    runs = []
    for options in ({"window": 1}, {"window": 1, "workload": own}):
        obs, _ = env.reset(seed=0, options=options)
        trace = [obs]
        while not env.finished:
            obs, *_ = env.step(2)  # shortest-low_power throughout
            trace.append(obs)
        runs.append((np.asarray(trace), env.objective_value()))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    assert runs[0][1] == runs[1][1]
