"""Engine behaviours that follow Batsim 4.2.1 exactly: walltime ties, zero-speed warnings,
decision delays (checked against a real Batsim in tests/batsim/)."""

from __future__ import annotations

import logging

import pytest
from sim_helpers import GF, thesis_platform, types, workload

from hdeeprm.errors import SimulationError
from hdeeprm.simulation import (
    COMPLETED_SUCCESSFULLY,
    COMPLETED_WALLTIME_REACHED,
    JOB_COMPLETED,
    Engine,
    ExecuteJob,
    SimPlatform,
)


def _run_both(*jobs: tuple) -> dict[str, tuple[str, float]]:
    """Start every job at t = 0 on its own host; final state and finish time by job name."""
    engine = Engine(SimPlatform.homogeneous(len(jobs), [GF], [10], [30]), workload(*jobs))
    engine.start()
    engine.proceed([])
    engine.proceed([ExecuteJob(f"w0!{job[0]}", [i]) for i, job in enumerate(jobs)])
    while not engine.finished:
        engine.proceed([])
    return {job.name: (job.state, job.finish_time) for job in engine.finished_jobs}


def test_run_time_equal_to_walltime_is_killed_as_batsim() -> None:
    # Batsim runs a delay job to completion only if delay < walltime, and kills a ptask whose
    # wait_for(walltime) times out at the instant its work ends.
    ends = _run_both(
        ("tie", 0, 1, "delay", 10.0, 10.0),
        ("below", 0, 1, "delay", 9.999999, 10.0),
        ("flops_tie", 0, 1, "parallel_homogeneous", 5 * GF, 5.0),  # 5 s at 1 GFLOPS
        ("no_walltime", 0, 1, "delay", 10.0),
    )
    assert ends == {
        "tie": (COMPLETED_WALLTIME_REACHED, 10.0),
        "below": (COMPLETED_SUCCESSFULLY, 9.999999),
        "flops_tie": (COMPLETED_WALLTIME_REACHED, 5.0),
        "no_walltime": (COMPLETED_SUCCESSFULLY, 10.0),
    }


def test_walltime_tie_decided_on_durations_not_end_times() -> None:
    # The rule compares delay with walltime, so a delay below its walltime completes even when
    # both end times round to the same float (at 1e16 the spacing of doubles is 2 s).
    start, delay, walltime = 1e16, 0.5, 0.9
    assert start + delay == start + walltime
    engine = Engine(
        SimPlatform.homogeneous(1, [GF], [10], [30]),
        workload(("j", start, 1, "delay", delay, walltime)),
    )
    engine.start()
    engine.proceed([])
    done = engine.proceed([ExecuteJob("w0!j", [0])])
    assert types(done) == [JOB_COMPLETED]
    assert done.events[0].data["job_state"] == COMPLETED_SUCCESSFULLY


def test_job_on_zero_speed_hosts_is_named_in_a_warning(caplog) -> None:
    platform = thesis_platform(nb_cores=3, pstate=3)
    engine = Engine(platform, workload(("c", 0, 2, "parallel_homogeneous", GF)))
    engine.start()
    engine.proceed([])
    with (
        caplog.at_level(logging.WARNING, logger="hdeeprm.simulation"),
        pytest.raises(SimulationError, match="deadlock"),
    ):
        engine.proceed([ExecuteJob("w0!c", [0, 2])])
    (record,) = caplog.records
    text = record.getMessage()
    assert "job w0!c started on 2 host(s) whose current P-state has speed 0" in text
    assert "0 (cor_0, P3), 2 (cor_2, P3)" in text and "--initial-pstate" in text


def test_decision_delays_as_batsim() -> None:
    """A scheduler answering later than the message (Batsim's REQ-REP actor sleeps until each
    decision's timestamp, then until the reply's now): decisions at their timestamps, the
    events of the meantime held and sent together at the reply's now."""
    engine = Engine(
        SimPlatform.homogeneous(2, [GF], [10], [30]),
        workload(("a", 0, 1, "delay", 1.0), ("b", 0.5, 1, "delay", 1.0)),
    )
    engine.start()
    first = engine.proceed([])
    assert (first.now, types(first)) == (0.0, ["JOB_SUBMITTED"])
    # Decide a at 0.2, be ready at 0.7: b's submission (0.5) waits for 0.7.
    second = engine.proceed_timed([(0.2, ExecuteJob("w0!a", [0]))], 0.7)
    assert second.now == 0.7
    assert [(e.timestamp, e.type) for e in second.events] == [
        (0.5, "JOB_SUBMITTED"),
        (0.5, "NO_MORE_STATIC_JOB_TO_SUBMIT"),
    ]
    # Decide b at 0.7, ready at 1.5: a's completion (0.2 + 1) is held until 1.5.
    third = engine.proceed_timed([(0.7, ExecuteJob("w0!b", [1]))], 1.5)
    assert third.now == 1.5
    assert [(e.timestamp, e.type) for e in third.events] == [(1.2, JOB_COMPLETED)]
    fourth = engine.proceed([])
    assert (fourth.now, types(fourth)) == (1.7, [JOB_COMPLETED])
    a, b = engine.jobs["w0!a"], engine.jobs["w0!b"]
    assert (a.start_time, a.finish_time, b.start_time, b.finish_time) == (0.2, 1.2, 0.7, 1.7)
    # Energy: 2 hosts idle at 10 W for 1.7 s, plus 20 W extra while each job runs (1 s each).
    assert engine.consumed_energy == pytest.approx(10 * 2 * 1.7 + 20 * 2)
    assert types(engine.proceed([])) == ["SIMULATION_ENDS"]


def test_decision_delay_without_events_moves_to_the_next_instant() -> None:
    platform = SimPlatform.homogeneous(1, [GF], [10], [30])
    engine = Engine(platform, workload(("a", 0, 1, "delay", 2.0)))
    engine.start()
    engine.proceed([])
    # Ready at 0.005 with nothing happening meanwhile: the next message is a's completion.
    done = engine.proceed_timed([(0.0, ExecuteJob("w0!a", [0]))], 0.005)
    assert (done.now, types(done)) == (2.0, [JOB_COMPLETED])


def test_apply_at_a_later_time_and_next_time() -> None:
    # The timing model's way through a delay: ask when the engine's next instant is, apply a
    # decision at a later time that does not pass it, and refuse one that does.
    platform = SimPlatform.homogeneous(2, [GF], [10], [30])
    engine = Engine(platform, workload(("a", 0, 1, "delay", 1.0), ("b", 0.5, 1, "delay", 1.0)))
    engine.start()
    engine.proceed([])  # a submitted at 0
    assert engine.next_time() == 0.5  # b's submission
    engine.apply_at(0.2, [ExecuteJob("w0!a", [0])])
    assert engine.now == 0.2 and engine.jobs["w0!a"].start_time == 0.2
    assert engine.next_time() == 0.5
    with pytest.raises(SimulationError, match="events at 0.5 come first"):
        engine.apply_at(0.7, [])
    submitted = engine.proceed([])
    assert (submitted.now, types(submitted)[0]) == (0.5, "JOB_SUBMITTED")
    engine.apply_at(0.3, [ExecuteJob("w0!b", [1])])  # in the past: at now
    assert engine.jobs["w0!b"].start_time == 0.5
    while not engine.finished:
        engine.proceed([])
    # 2 hosts idle at 10 W for 1.5 s, plus 20 W extra while each job runs (1 s each).
    assert engine.consumed_energy == pytest.approx(10 * 2 * 1.5 + 20 * 2)
