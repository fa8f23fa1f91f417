"""Re-pacing of wide jobs: their hosts counted by speed give the same pace, bit for bit, as a
pass over all their hosts (``PACES_FROM``)."""

from __future__ import annotations

import pickle

import pytest
from sim_helpers import GF, workload

import hdeeprm.simulation.engine as engine_module
from hdeeprm.simulation import CallMeLater, Engine, ExecuteJob, SetResourceState, SimPlatform

#: P0 1 GFLOPS, P1 0.5 GFLOPS, P2 0.2 GFLOPS, P3 stalled (1e-6 GFLOPS counts as 0).
SPEEDS = (1 * GF, 0.5 * GF, 0.2 * GF, 1e-6 * GF)
IDLE = (10.0, 8.0, 4.0, 1.0)
FULL = (100.0, 80.0, 40.0, 10.0)
WIDTH = 48


def steps() -> list[tuple[float, list[SetResourceState]]]:
    """P-state changes of the job's hosts, each at its time (a CallMeLater wakes us)."""
    return [
        (2.0, [SetResourceState([5], 2)]),  # one host slows down: no pass needed
        (4.0, [SetResourceState([5], 0)]),  # the slowest speeds up: its pace is found again
        (5.0, [SetResourceState(range(10), 1)]),
        (6.0, [SetResourceState(range(5), 0)]),  # hosts 5-9 still pace it at P1
        (7.0, [SetResourceState(range(5, 10), 0)]),
        (8.0, [SetResourceState([40], 3)]),  # stalled ...
        (9.0, [SetResourceState([40], 0)]),  # ... and back
    ]


def started(paces_from: int, monkeypatch: pytest.MonkeyPatch) -> tuple[Engine, list, object]:
    """The engine with ``PACES_FROM`` set, one job of 1e10 flops per host started on all WIDTH
    hosts at t=0, a wake-up asked for the plan's first step; returns it, the plan and the
    engine's next message."""
    monkeypatch.setattr(engine_module, "PACES_FROM", paces_from)
    platform = SimPlatform.homogeneous(WIDTH, SPEEDS, IDLE, FULL, pstate=0)
    engine = Engine(
        platform,
        workload(("j", 0, WIDTH, "parallel_homogeneous", 10 * GF)),
        state_change_events=False,
    )
    engine.start()
    engine.proceed([])
    plan = steps()
    message = engine.proceed([ExecuteJob("w0!j", range(WIDTH)), CallMeLater(plan[0][0])])
    return engine, plan, message


def replay(
    paces_from: int, monkeypatch: pytest.MonkeyPatch
) -> tuple[Engine, list[float], list[bool]]:
    """One job of 1e10 flops per host on all WIDTH hosts; return the engine, the job's
    expected end after each step and whether its hosts were counted by speed then."""
    engine, plan, message = started(paces_from, monkeypatch)
    job = engine.jobs["w0!j"]
    ends = []
    counted = []
    for index, (when, decisions) in enumerate(plan):
        assert message.now == when
        wake = [CallMeLater(plan[index + 1][0])] if index + 1 < len(plan) else []
        engine.apply(decisions)
        engine.next_time()  # re-paces now
        ends.append(job._last + job._work / job._rate if job._rate > 0 else float("inf"))
        counted.append(job._paces is not None)
        message = engine.proceed(wake)
    while not engine.finished:
        engine.proceed([])
    return engine, ends, counted


def test_counted_paces_follow_the_slowest_host(monkeypatch: pytest.MonkeyPatch) -> None:
    engine, ends, counted = replay(engine_module.PACES_FROM, monkeypatch)
    # Counted from the first time the slowest host sped up (t=4) on.
    assert counted == [False] + [True] * 6
    job = engine.jobs["w0!j"]
    # t=2: 2e9 done at 1 GFLOPS, 8e9 left at 0.2 GFLOPS (host 5 in P2): 40 s -> 42.
    # t=4: 8e9 - 2 x 0.2e9 = 7.6e9 left at 1 GFLOPS again: 7.6 s -> 11.6.
    # t=5: 6.6e9 left at 0.5 GFLOPS (hosts 0-9 in P1): 13.2 s -> 18.2.
    # t=6: hosts 0-4 back in P0, hosts 5-9 still in P1: same pace, same end 18.2.
    # t=7: 6.6e9 - 2 x 0.5e9 = 5.6e9 left at 1 GFLOPS: 5.6 s -> 12.6.
    # t=8: 4.6e9 left, host 40 stalled: no end. t=9: 4.6 s at 1 GFLOPS -> 13.6.
    assert ends == pytest.approx([42.0, 11.6, 18.2, 18.2, 12.6, float("inf"), 13.6])
    assert job.finish_time == pytest.approx(13.6)
    assert job._paces is None  # let go when the job ended


def test_counting_gives_the_very_bits_of_a_pass_over_the_hosts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counted, counted_ends, _ = replay(1, monkeypatch)
    scanned, scanned_ends, never = replay(10**9, monkeypatch)
    assert not any(never)
    assert counted_ends == scanned_ends
    a, b = counted.jobs["w0!j"], scanned.jobs["w0!j"]
    assert (a.finish_time, a.energy) == (b.finish_time, b.energy)
    assert counted.consumed_energy == scanned.consumed_energy
    assert counted.host_energy() == scanned.host_energy()


def test_a_pickled_engine_keeps_its_counted_paces(monkeypatch: pytest.MonkeyPatch) -> None:
    # Environments travel to subprocesses pickled: the counts must come along, and the copy
    # must end exactly as the original (and as test_counted_paces_follow_the_slowest_host).
    engine, plan, _ = started(1, monkeypatch)
    for index in range(3):  # up to t=5: counted since t=4
        engine.proceed([*plan[index][1], CallMeLater(plan[index + 1][0])])
    assert engine.jobs["w0!j"]._paces == {0.5 * GF: 10, 1 * GF: WIDTH - 10}
    copy = pickle.loads(pickle.dumps(engine))
    for run in (engine, copy):
        for index in range(3, len(plan)):
            wake = [CallMeLater(plan[index + 1][0])] if index + 1 < len(plan) else []
            run.proceed([*plan[index][1], *wake])
        while not run.finished:
            run.proceed([])
    a, b = engine.jobs["w0!j"], copy.jobs["w0!j"]
    assert (a.finish_time, a.energy) == (b.finish_time, b.energy)
    assert a.finish_time == pytest.approx(13.6)
