"""Every bad decision raises SimulationError with a useful message and changes nothing."""

from __future__ import annotations

import pytest
from sim_helpers import GF, thesis_platform, types, workload

from hdeeprm.errors import SimulationError
from hdeeprm.simulation import (
    RESOURCE_STATE_CHANGED,
    CallMeLater,
    Engine,
    ExecuteJob,
    KillJobs,
    RejectJob,
    SetResourceState,
)


@pytest.fixture
def engine() -> Engine:
    """Two cores at t = 5: job "run" running on core 0, "wait" submitted, "done" finished,
    "later" not submitted yet (t = 100)."""
    engine = Engine(
        thesis_platform(pstate=0),
        workload(
            ("done", 0, 1, "delay", 1.0),
            ("run", 0, 1, "delay", 50.0),
            ("wait", 0, 1, "delay", 1.0),
            ("later", 100, 1, "delay", 1.0),
        ),
    )
    engine.start()
    engine.proceed([])
    engine.proceed([ExecuteJob("w0!done", [1]), ExecuteJob("w0!run", [0]), CallMeLater(5.0)])
    engine.proceed([])  # t = 5
    assert engine.now == 5.0
    return engine


@pytest.mark.parametrize(
    ("decision", "message"),
    [
        (ExecuteJob("w0!nope", [1]), "EXECUTE_JOB: unknown job 'w0!nope'"),
        (ExecuteJob("w0!later", [1]), "unknown job 'w0!later' .*not submitted yet"),
        (ExecuteJob("w0!run", [1]), "job 'w0!run' is RUNNING"),
        (ExecuteJob("w0!done", [1]), "job 'w0!done' is COMPLETED_SUCCESSFULLY"),
        (ExecuteJob("w0!wait", [0]), "host 0 is busy running job 'w0!run'"),
        (ExecuteJob("w0!wait", [2]), r"host 2 does not exist \(resource ids are 0..1\)"),
        (ExecuteJob("w0!wait", [-1]), "host -1 does not exist"),
        (ExecuteJob("w0!wait", []), "empty allocation for job 'w0!wait'"),
        (ExecuteJob("w0!wait", [1, 1]), "duplicate hosts"),
        (ExecuteJob("w0!wait", ["1"]), "host id '1' is not an integer"),
        (SetResourceState([0], 4), r"unknown P-state 4 for host 0 \('cor_0' has P-states 0..3\)"),
        (SetResourceState([0], -1), "unknown P-state -1"),
        (SetResourceState([5], 0), "host 5 does not exist"),
        (SetResourceState([], 0), "empty set of resources"),
        (SetResourceState([0], "P1"), "P-state 'P1' is not an integer"),
        (RejectJob("w0!run"), "REJECT_JOB: job 'w0!run' is RUNNING"),
        (RejectJob("w0!nope"), "REJECT_JOB: unknown job"),
        (KillJobs(["w0!nope"]), "KILL_JOB: unknown job 'w0!nope'"),
        (KillJobs(["w0!run", "w0!wait"]), "KILL_JOB: job 'w0!wait' is SUBMITTED"),
        (CallMeLater(4.0), r"asked to be called at t=4.0, which is not after now \(t=5.0\)"),
        (CallMeLater(5.0), "not after now"),
        (CallMeLater(float("nan")), "not a finite number"),
        ("EXECUTE_JOB", "unknown decision 'EXECUTE_JOB'"),
    ],
)
def test_bad_decision_is_refused_and_changes_nothing(
    engine: Engine, decision: object, message: str
) -> None:
    before = (
        engine.pstates,
        engine.power,
        {jid: (job.state, job.alloc) for jid, job in engine.jobs.items()},
    )
    with pytest.raises(SimulationError, match=message):
        engine.proceed([decision])  # type: ignore[list-item]
    after = (
        engine.pstates,
        engine.power,
        {jid: (job.state, job.alloc) for jid, job in engine.jobs.items()},
    )
    assert after == before
    # The engine is still usable: the next good decision works.
    assert types(engine.proceed([SetResourceState([1], 1)])) == [RESOURCE_STATE_CHANGED]


def test_protocol_misuse() -> None:
    engine = Engine(thesis_platform(), workload(("a", 0, 1, "parallel_homogeneous", GF)))
    with pytest.raises(SimulationError, match="before start"):
        engine.proceed([])
    engine.start()
    with pytest.raises(SimulationError, match="start\\(\\) called twice"):
        engine.start()
    engine.proceed([])
    engine.proceed([RejectJob("w0!a")])
    assert engine.finished
    with pytest.raises(SimulationError, match="the simulation has ended"):
        engine.proceed([])


def test_waiting_job_with_nothing_scheduled_is_a_deadlock() -> None:
    engine = Engine(thesis_platform(), workload(("a", 0, 1, "delay", 1.0)))
    engine.start()
    engine.proceed([])
    with pytest.raises(SimulationError, match="1 submitted job\\(s\\) still wait") as err:
        engine.proceed([])
    # The first waiting job is named, with its request and why it does not run.
    assert str(err.value).endswith(
        "; job w0!a waits, asking for 1 host(s) (2 host(s) are free: the decision system "
        "never started it)"
    )


def test_strict_allocation_size() -> None:
    engine = Engine(
        thesis_platform(pstate=0),
        workload(("a", 0, 1, "delay", 1.0), ("t", 0, 1, "parallel_homogeneous_total", GF)),
        strict_allocation_size=True,
    )
    engine.start()
    engine.proceed([])
    with pytest.raises(SimulationError, match="requested 1 hosts, got 2"):
        engine.proceed([ExecuteJob("w0!a", [0, 1])])
    # parallel_homogeneous_total may use any number of hosts, as in Batsim.
    engine.proceed([ExecuteJob("w0!t", [0, 1])])
    assert engine.jobs["w0!t"].alloc == (0, 1)
