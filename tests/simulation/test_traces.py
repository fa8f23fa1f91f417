"""The engine's time series (hdeeprm.simulation.traces) read as the lists of tuples they
replace: rows, indexing, iteration, equality, on thesis 4.1.4 worked by hand.

Thesis 4.1.4 (docs/simulation.md): two cores in P3 (5 W idle each: wattmin 10 W); at t = 0 core
0 goes to P0 (100 W idle: wattmin 10 - 5 + 100 = 105 W) and core 1 to P2 (25 W: 105 - 5 + 25 =
125 W), the job starts on core 0 and runs 5 s; at t = 5 both go back to P3 (wattmin 10 W).
Energy at t = 5: core 0 100 W x 5 s + core 1 25 W x 5 s = 625 J.
"""

from __future__ import annotations

import pytest
from sim_helpers import GF, thesis_platform, workload
from test_state_change_events import BlindScheduler

from hdeeprm.simulation import Engine, run
from hdeeprm.simulation.traces import EnergyTrace, MachineStateTrace, PstateTrace

PSTATE_ROWS = [
    (0.0, (0, 1), 3),  # the initial states
    (0.0, (0,), -1),  # each switch: a transition row, then the new state
    (0.0, (0,), 0),
    (0.0, (1,), -1),
    (0.0, (1,), 2),
    (5.0, (0, 1), -1),
    (5.0, (0, 1), 3),
]
ENERGY_ROWS = [
    (0.0, 0.0, "p", 10.0),  # before and after each switch
    (0.0, 0.0, "p", 105.0),
    (0.0, 0.0, "p", 105.0),
    (0.0, 0.0, "p", 125.0),
    (0.0, 0.0, "s", 125.0),  # the job starts
    (5.0, 625.0, "e", 125.0),  # ... and ends
    (5.0, 625.0, "p", 125.0),
    (5.0, 625.0, "p", 10.0),
]
MACHINE_ROWS = [(0.0, 2, 0), (0.0, 2, 0), (0.0, 1, 1), (5.0, 2, 0), (5.0, 2, 0)]


def _engine() -> Engine:
    engine = Engine(thesis_platform(), workload(("job0", 0, 1, "parallel_homogeneous", 5 * GF)))
    run(engine, BlindScheduler())
    return engine


def test_rows_as_worked_by_hand() -> None:
    engine = _engine()
    assert list(engine.pstate_trace) == PSTATE_ROWS
    assert list(engine.energy_trace) == ENERGY_ROWS
    assert list(engine.machine_state_trace) == MACHINE_ROWS
    # Compared with lists of tuples, indexed from either end, sized like them.
    assert engine.pstate_trace == PSTATE_ROWS and engine.energy_trace == ENERGY_ROWS
    assert engine.machine_state_trace == MACHINE_ROWS
    assert engine.pstate_trace[2] == (0.0, (0,), 0) and engine.pstate_trace[-1] == PSTATE_ROWS[-1]
    assert engine.energy_trace[-3] == (5.0, 625.0, "e", 125.0)
    assert engine.machine_state_trace[2] == (0.0, 1, 1)
    assert (len(engine.pstate_trace), len(engine.energy_trace)) == (7, 8)
    with pytest.raises(IndexError):
        engine.machine_state_trace[5]
    # The two rows of a switch share one copy of its ids: 2 + 1 + 1 + 2 ids, not 10.
    assert engine.pstate_trace.hosts == [0, 1, 0, 1, 0, 1]
    # Two runs give equal records; a different one does not.
    assert engine.pstate_trace == _engine().pstate_trace
    assert engine.energy_trace != EnergyTrace()


def test_records_built_by_hand() -> None:
    pstates = PstateTrace()
    pstates.add(1.5, (3, 4), 2)
    pstates.add(2.0, (), 0)
    assert list(pstates) == [(1.5, (3, 4), 2), (2.0, (), 0)] and len(pstates) == 2
    states = MachineStateTrace()
    states.values.extend((1.0, 3, 1))
    assert states == [(1.0, 3, 1)] and repr(states) == "MachineStateTrace([(1.0, 3, 1)])"
    states.clear()
    assert list(states) == [] and states == []
    pstates.clear()
    assert pstates == [] and pstates.hosts == []
