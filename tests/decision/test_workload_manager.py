"""The workload manager on fake simulator messages."""

from __future__ import annotations

import logging

import pytest
from decision_helpers import (
    begins,
    completed,
    hetero_platform,
    job,
    learning_platform,
    make_platform,
    msg,
    submitted,
)

from hdeeprm.decision import ActionSpace, FixedPair, WorkloadManager
from hdeeprm.errors import InputError, SimulationError
from hdeeprm.platform.hierarchy import P0, P1, P2, P3
from hdeeprm.simulation import events as ev
from hdeeprm.simulation.events import CallMeLater, ExecuteJob, RejectJob, SetResourceState


def _manager(platform=None, pair: str = "first-high_gflops", **kw) -> WorkloadManager:
    actions = ActionSpace()
    manager = WorkloadManager(
        platform or hetero_platform(), actions, FixedPair(actions, pair), **kw
    )
    assert manager.handle(begins(manager.pool.nb_cores)) == []
    return manager


def test_thesis_4_1_4_event_flow() -> None:
    platform = make_platform([(16.0, [(1.0, 1.0, 24.0, 20.0, 2)])])
    manager = _manager(platform)
    j0 = job("job0", mem=8000.0, mem_bw=2.0)
    # submission -> decision point: execute on core 0, core 0 to P0, core 1 to P2 (P-states
    # first so the job starts at full speed)
    assert manager.handle(submitted(0.0, j0)) == [
        SetResourceState((0,), P0),
        SetResourceState((1,), P2),
        ExecuteJob("job0", (0,)),
    ]
    assert (
        manager.handle(
            msg(
                0.0,
                (ev.RESOURCE_STATE_CHANGED, {"resources": (0,), "state": 0}),
                (ev.NO_MORE_STATIC_JOB_TO_SUBMIT, {}),
            )
        )
        == []
    )
    assert manager.no_more_jobs
    assert manager.handle(completed(5.0, j0)) == [SetResourceState((0, 1), P3)]
    assert manager.handle(msg(5.0, (ev.SIMULATION_ENDS, {}))) == []
    assert manager.stats()["completed"] == 1 and manager.nb_decisions == 1


def test_policy_pair_applied_until_the_chosen_job_blocks() -> None:
    # 2 cores; "first": a (1 core) runs; b (2 cores) is next and blocks c (1 core): no
    # backfilling even though one core is free.
    manager = _manager(make_platform([(8.0, [(1.0, 1.0, 50.0, 10.0, 2)])]), "first-high_gflops")
    a, b, c = job("a"), job("b", 2), job("c")
    out = manager.handle(submitted(0.0, a, b, c))
    assert [d for d in out if isinstance(d, ExecuteJob)] == [ExecuteJob("a", (0,))]
    assert manager.queue_size == 2 and manager.active_jobs == 1 and manager.busy_cores == 1
    out = manager.handle(completed(3.0, a))
    assert [d for d in out if isinstance(d, ExecuteJob)] == [ExecuteJob("b", (0, 1))]
    out = manager.handle(completed(4.0, b))
    assert [d for d in out if isinstance(d, ExecuteJob)] == [ExecuteJob("c", (0,))]


def test_shortest_fills_the_platform_then_stops() -> None:
    # 2 cores; shortest picks c (5 s), a (10 s), then b (20 s) finds no core.
    manager = _manager(make_platform([(8.0, [(1.0, 1.0, 50.0, 10.0, 2)])]), "shortest-high_cores")
    a, b, c = job("a", req_time=10.0), job("b", req_time=20.0), job("c", req_time=5.0)
    out = manager.handle(submitted(0.0, a, b, c))
    assert [d for d in out if isinstance(d, ExecuteJob)] == [
        ExecuteJob("c", (0,)),
        ExecuteJob("a", (1,)),
    ]
    assert out[0] == SetResourceState((0, 1), P0)


def test_memory_capacity_refusal_and_rejection() -> None:
    manager = _manager(hetero_platform(), "first-high_gflops")
    # big: 60000 MB fits only on node 2 (64000): core 7 (4 GFLOPS; node 1 lacks the memory)
    big = job("big", mem=60000.0)
    # wait: 20000 MB fits node 2 only, which has 4000 MB left: waits with 8 cores free
    wait = job("wait", mem=20000.0)
    # never: 3 x 20000 MB: node 2 holds 2, nodes 0 and 1 none -> can never run
    never = job("never", 3, mem=20000.0)
    huge = job("huge", mem=65000.0)  # larger than every node
    wide = job("wide", 10)  # more cores than the platform (9)
    out = manager.handle(submitted(0.0, big, wait, never, huge, wide))
    assert out[:3] == [RejectJob("never"), RejectJob("huge"), RejectJob("wide")]
    assert [d for d in out if isinstance(d, ExecuteJob)] == [ExecuteJob("big", (7,))]
    assert manager.rejected == ["never", "huge", "wide"] and manager.queue_size == 1
    out = manager.handle(completed(10.0, big))
    assert [d for d in out if isinstance(d, ExecuteJob)] == [ExecuteJob("wait", (7,))]


def test_rejection_outside_a_decision_point_is_flushed() -> None:
    manager = _manager(hetero_platform())
    assert manager.handle(submitted(0.0, job("wide", 10))) == [RejectJob("wide")]
    assert manager.nb_decisions == 0


def test_void_action_schedules_nothing_and_the_next_event_decides_again() -> None:
    manager = _manager(learning_platform(), "void")
    a = job("a")
    assert manager.handle(submitted(0.0, a)) == []
    assert manager.queue_size == 1 and manager.nb_decisions == 1
    # Nothing runs and no job is left to submit: a decision point although nothing changed
    # (else nothing would ever happen again); the void asks to be called back.
    out = manager.handle(msg(1.0, (ev.NO_MORE_STATIC_JOB_TO_SUBMIT, {})))
    assert out == [CallMeLater(2.0)]
    assert manager.act("void") == []  # one wake-up pending is enough
    manager.agent = FixedPair(manager.actions, "void")
    assert not manager.ingest(msg(1.5, (ev.RESOURCE_STATE_CHANGED, {})))  # the call is pending
    assert manager.ingest(msg(2.0, (ev.REQUESTED_CALL, {})))
    assert manager.act("first-high_gflops") == [
        SetResourceState((2,), P0),
        SetResourceState((3,), P2),
        ExecuteJob("a", (2,)),
    ]
    assert manager.action_counts[manager.actions.index("void")] == 3


def test_ingest_act_split_for_environments() -> None:
    manager = WorkloadManager(learning_platform(), ActionSpace(void=True), seed=1)
    assert not manager.ingest(begins(4))
    a, b = job("a", mem_bw=24.0), job("b", mem_bw=24.0)
    assert manager.ingest(submitted(0.0, a, b))
    out = manager.act("shortest-low_power")
    # both on the 80 W processor: 48 > 32 GB/s -> both P1
    assert out == [SetResourceState((0, 1), P1), ExecuteJob("a", (0,)), ExecuteJob("b", (1,))]
    assert manager.episodes == [[0, 0.0, None]]
    assert not manager.ingest(completed(6.667, a))  # queue empty: not a decision point
    assert manager.flush() == [SetResourceState((1,), P0), SetResourceState((0,), P2)]
    assert manager.episodes == [[0, 0.0, 6.667]]
    with pytest.raises(SimulationError, match="outside the action space"):
        manager.act(37)
    with pytest.raises(SimulationError, match="no agent"):
        manager.handle(submitted(7.0, job("c")))


def test_simulation_begins_resets_and_checks_size() -> None:
    manager = _manager(learning_platform())
    manager.handle(submitted(0.0, job("a"), job("b")))
    assert manager.busy_cores == 2
    manager.handle(begins(4))
    assert manager.busy_cores == 0 and manager.queue_size == 0 and manager.pool.pstate == [P3] * 4
    assert manager.handle(submitted(0.0, job("a")))[-1] == ExecuteJob("a", (2,))
    with pytest.raises(SimulationError, match="5 compute resources"):
        manager.handle(begins(5))


def test_bad_profile_values_and_unknown_completions() -> None:
    manager = _manager(learning_platform())
    with pytest.raises(InputError, match="'mem_bw' must be a non-negative number"):
        manager.handle(submitted(0.0, job("a", mem_bw=-1.0)))
    with pytest.raises(SimulationError, match="not running"):
        manager.handle(completed(1.0, job("ghost")))


def test_missing_extra_fields_default() -> None:
    manager = _manager(learning_platform(), "shortest-high_gflops")
    out = manager.handle(
        submitted(0.0, job("a", req_time=None, mem=None, mem_bw=None), job("b", req_time=3.0))
    )
    # b (3 s) before a (no requested time: infinite)
    assert [d.job_id for d in out if isinstance(d, ExecuteJob)] == ["b", "a"]


def test_insights_logging(caplog: pytest.LogCaptureFixture) -> None:
    manager = _manager(learning_platform(), "shortest-low_power")
    with caplog.at_level(logging.INFO, logger="hdeeprm.insights"):
        manager.handle(submitted(0.0, job("a", mem_bw=24.0), job("b", mem_bw=24.0)))
        manager.handle(completed(2.0, job("a")))
    text = caplog.text
    assert "t=0.000000 decision: queue=2 action=shortest-low_power started=a->[0], b->[1]" in text
    assert "over-subscription starts on processor 0 (48.000 > 32.000 GB/s)" in text
    assert "t=2.000000 bandwidth over-subscription ends on processor 0" in text


def test_random_pairs_are_deterministic_under_a_seed() -> None:
    def run(seed: int) -> list[ExecuteJob]:
        manager = _manager(hetero_platform(), "random-random", seed=seed)
        out = manager.handle(submitted(0.0, *[job(str(i)) for i in range(12)]))
        return [d for d in out if isinstance(d, ExecuteJob)]

    first = run(11)
    assert first == run(11)
    assert len(first) == 9  # 12 one-core jobs, 9 cores
    assert sorted(c for d in first for c in d.alloc) == list(range(9))
    assert first != run(12)


def test_reset_with_a_seed_replays_an_episode() -> None:
    manager = _manager(hetero_platform(), "random-random", seed=3)
    jobs = [job(str(i)) for i in range(12)]
    episodes = []
    for seed in (5, None, 5):
        manager.reset(seed)
        out = manager.handle(submitted(0.0, *jobs))
        episodes.append([d for d in out if isinstance(d, ExecuteJob)])
    assert episodes[0] == episodes[2]  # same seed, same episode
    assert episodes[0] != episodes[1]  # streams continue without a seed


def test_killed_job_released_once() -> None:
    # the engine reports a kill as JOB_COMPLETED (COMPLETED_KILLED), then JOB_KILLED
    manager = _manager(make_platform([(8.0, [(1.0, 1.0, 100.0, 20.0, 2)])]))
    a = job("a")
    manager.handle(submitted(0.0, a))
    killed = msg(
        1.0,
        (ev.JOB_COMPLETED, {"job": a, "job_state": ev.COMPLETED_KILLED}),
        (ev.JOB_KILLED, {"job_ids": ["a"], "jobs": [a]}),
    )
    assert manager.handle(killed) == [SetResourceState((0, 1), P3)]
    assert manager.busy_cores == 0 and manager.nb_completed == 1


def test_fits_now_sees_memory_taken_by_a_big_task() -> None:
    """One node of 4 cores and 8,000 MB (2,000 MB per core). A running 1-task job holding
    7,000 MB leaves 3 free cores but only 1,000 MB: a 2,000 MB task no longer fits, although
    it is within the per-core share; a 1,000 MB one does. Once the big job ends, both fit."""
    from hdeeprm.decision.job_queue import JobRecord

    platform = make_platform([(8.0, [(2.0, 4.0, 10.0, 50.0, 4)])])
    manager = WorkloadManager(platform, ActionSpace(None), seed=0)
    big = JobRecord("w!big", 0, 0.0, res=1, req_time=100.0, mem=7000.0, mem_bw=1.0)
    manager.job_queue.push(big)
    assert manager.start_job(big, "high_gflops")
    assert manager.pool.free_count == 3
    assert not manager.fits_now(1, 2000.0)
    assert manager.fits_now(1, 1000.0)
    manager.now = 5.0
    manager._complete(big.id)
    assert manager.fits_now(3, 2000.0) and manager.fits_now(4, 2000.0)
