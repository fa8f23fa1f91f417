"""The in-process loop drops ``RESOURCE_STATE_CHANGED`` for a decision system that ignores them.

Thesis 4.1.4 again (docs/simulation.md, "Thesis 4.1.4 as a message trace"): one dual-core
processor at 1 GFLOPS in P0, 100 W per core in P0 and P1, 25 W in P2, 5 W in P3; one job of
5e9 flops at t = 0. The scheduler below answers as the thesis does: the job on core 0 (P0),
core 1 beside it (P2), then both to P3 when it ends. With confirmations the run is six
messages (begins, submitted, 2 confirmations, completed, 1 confirmation, ends); without them
four. Energy either way: core 0 100 W x 5 s = 500 J, core 1 25 W x 5 s = 125 J, 625 J.
"""

from __future__ import annotations

import pytest
from sim_helpers import GF, thesis_platform, workload

from hdeeprm.errors import SimulationError
from hdeeprm.simulation import (
    JOB_SUBMITTED,
    RESOURCE_STATE_CHANGED,
    Engine,
    ExecuteJob,
    Message,
    SetResourceState,
    run,
)
from hdeeprm.simulation.driver import wants_state_changes


class ThesisScheduler:
    """Thesis 4.1.4's replies; records every message type it is sent."""

    def __init__(self) -> None:
        self.seen: list[list[str]] = []

    def handle(self, message: Message) -> list:
        self.seen.append([event.type for event in message.events])
        for event in message.events:
            if event.type == JOB_SUBMITTED:
                return [
                    SetResourceState([0], 0),
                    SetResourceState([1], 2),
                    ExecuteJob(event.data["job_id"], [0]),
                ]
            if event.type == "JOB_COMPLETED":
                return [SetResourceState([0, 1], 3)]
        return []


class BlindScheduler(ThesisScheduler):
    """The same replies, declaring that it ignores confirmations."""

    wants_state_changes = False


def _run(scheduler: ThesisScheduler) -> Engine:
    engine = Engine(thesis_platform(), workload(("job0", 0, 1, "parallel_homogeneous", 5 * GF)))
    run(engine, scheduler)
    return engine


def test_confirmations_go_only_to_a_decision_system_that_wants_them() -> None:
    told, blind = ThesisScheduler(), BlindScheduler()
    assert wants_state_changes(told) and not wants_state_changes(blind)
    with_events, without = _run(told), _run(blind)
    assert with_events.nb_messages == 6 and without.nb_messages == 4
    assert sum(RESOURCE_STATE_CHANGED in kinds for kinds in told.seen) == 2
    assert not any(RESOURCE_STATE_CHANGED in kinds for kinds in blind.seen)
    assert [kinds for kinds in told.seen if RESOURCE_STATE_CHANGED not in kinds] == blind.seen
    for engine in (with_events, without):
        assert engine.pstates == (3, 3) and engine.now == 5.0
        assert engine.consumed_energy == 625.0
        assert engine.host_energy() == [500.0, 125.0]
        assert engine.nb_grouped_switches == 3 and engine.nb_machine_switches == 4
    assert with_events.pstate_trace == without.pstate_trace
    assert with_events.energy_trace == without.energy_trace


def test_the_setting_is_fixed_once_the_simulation_started() -> None:
    engine = Engine(thesis_platform(), workload(("job0", 0, 1, "delay", 1.0)))
    engine.state_change_events = False
    assert engine.state_change_events is False
    engine.start()
    with pytest.raises(SimulationError, match="before start"):
        engine.state_change_events = True
