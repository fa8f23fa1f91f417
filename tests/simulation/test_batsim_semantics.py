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
