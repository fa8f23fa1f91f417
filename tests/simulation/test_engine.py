"""Engine semantics, checked against numbers worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest
from sim_helpers import GF, THESIS_SPEEDS, drain, thesis_platform, types, workload

from hdeeprm.simulation import (
    COMPLETED_KILLED,
    COMPLETED_SUCCESSFULLY,
    COMPLETED_WALLTIME_REACHED,
    JOB_COMPLETED,
    JOB_KILLED,
    JOB_SUBMITTED,
    NO_MORE_STATIC_JOB_TO_SUBMIT,
    REJECTED,
    REQUESTED_CALL,
    RESOURCE_STATE_CHANGED,
    SIMULATION_BEGINS,
    SIMULATION_ENDS,
    CallMeLater,
    Engine,
    ExecuteJob,
    FirstFitFCFS,
    HostIds,
    KillJobs,
    RejectJob,
    SetResourceState,
    SimPlatform,
    run,
)


def test_thesis_4_1_4_event_flow_times_and_energy() -> None:
    # One dual-core processor, 1 GFLOPS per core in P0, one job of 5e9 flops at t = 0.
    engine = Engine(thesis_platform(), workload(("job0", 0, 1, "parallel_homogeneous", 5 * GF)))
    begins = engine.start()
    assert types(begins) == [SIMULATION_BEGINS] and begins.now == 0
    assert begins.events[0].data["nb_resources"] == 2
    assert [r["name"] for r in begins.events[0].data["compute_resources"]] == ["cor_0", "cor_1"]

    submitted = engine.proceed([])
    assert submitted.now == 0
    assert types(submitted) == [JOB_SUBMITTED, NO_MORE_STATIC_JOB_TO_SUBMIT]
    job = submitted.events[0].data["job"]
    assert job.id == "w0!job0" and submitted.events[0].data["job_id"] == "w0!job0"

    # D.3: the job on core 0 (P0), core 1 idle next to it (P2).
    confirmed = engine.proceed(
        [ExecuteJob(job.id, [0]), SetResourceState([0], 0), SetResourceState([1], 2)]
    )
    assert confirmed.now == 0
    assert types(confirmed) == [RESOURCE_STATE_CHANGED, RESOURCE_STATE_CHANGED]
    assert [(e.data["resources"], e.data["state"]) for e in confirmed.events] == [
        ((0,), 0),
        ((1,), 2),
    ]
    assert engine.pstates == (0, 2)

    # 5e9 flops / 1e9 flops/s = 5 s.
    completed = engine.proceed([])
    assert completed.now == 5.0 and types(completed) == [JOB_COMPLETED]
    assert completed.events[0].data["job_state"] == COMPLETED_SUCCESSFULLY
    assert completed.events[0].data["alloc"] == (0,)
    assert (job.start_time, job.finish_time, job.state) == (0.0, 5.0, COMPLETED_SUCCESSFULLY)

    released = engine.proceed([SetResourceState([0, 1], 3)])
    assert (released.now, types(released)) == (5.0, [RESOURCE_STATE_CHANGED])
    ends = engine.proceed([])
    assert (ends.now, types(ends)) == (5.0, [SIMULATION_ENDS]) and engine.finished
    # Energy: core 0 in P0 100 W x 5 s = 500 J, core 1 in P2 25 W x 5 s = 125 J -> 625 J.
    assert engine.consumed_energy == pytest.approx(625.0)
    assert job.energy == pytest.approx(500.0)
    assert engine.host_energy() == pytest.approx([500.0, 125.0])
    # Both cores back in P3: 2 x 5 W.
    assert engine.power == pytest.approx(10.0)


def two_job_engine(cpu_b: float) -> tuple[Engine, list]:
    engine = Engine(
        thesis_platform(pstate=0),
        workload(
            ("a", 0, 1, "parallel_homogeneous", 5 * GF),
            ("b", 0, 1, "parallel_homogeneous", cpu_b),
        ),
    )
    engine.start()
    engine.proceed([])
    first = engine.proceed([ExecuteJob("w0!a", [0]), ExecuteJob("w0!b", [1]), CallMeLater(2.0)])
    return engine, [first]


def test_pstate_change_mid_run_repaces_both_jobs() -> None:
    # Both cores in P0 (1 GFLOPS); at t = 2 the processor goes to P1 (0.75 GFLOPS).
    engine, (call,) = two_job_engine(cpu_b=3 * GF)
    assert (call.now, types(call)) == (2.0, [REQUESTED_CALL])
    assert call.events[0].data["requested_at"] == 2.0
    messages = drain(engine, [SetResourceState([0, 1], 1)])
    completions = [
        (m.now, e.data["job_id"]) for m in messages for e in m.events if e.type == JOB_COMPLETED
    ]
    # a: 2e9 done by t = 2, 3e9 left at 0.75e9 flops/s -> 4 s more -> t = 6.
    # b: 2e9 done by t = 2, 1e9 left at 0.75e9 flops/s -> 4/3 s more -> t = 10/3.
    assert completions[0][1] == "w0!b" and completions[0][0] == pytest.approx(10 / 3)
    assert completions[1] == (pytest.approx(6.0), "w0!a")
    # P0 and P1 both draw 100 W per core: a 100 W x 6 s, b 100 W x 10/3 s.
    a, b = engine.jobs["w0!a"], engine.jobs["w0!b"]
    assert a.energy == pytest.approx(600.0)
    assert b.energy == pytest.approx(1000 / 3)
    # Core 1 idles in P1 from 10/3 to 6 at 100 W: total 2 x 100 W x 6 s = 1200 J.
    assert engine.consumed_energy == pytest.approx(1200.0)


def test_repacing_changes_energy_with_a_custom_power_table() -> None:
    # Same run with P1 drawing 60 W (computing) and 40 W (idle) per core instead.
    platform = SimPlatform.homogeneous(
        2, THESIS_SPEEDS, (100, 40, 25, 5), (100, 60, 25, 5), name_format="c{}"
    )
    engine = Engine(
        platform,
        workload(
            ("a", 0, 1, "parallel_homogeneous", 5 * GF), ("b", 0, 1, "parallel_homogeneous", 3 * GF)
        ),
    )
    engine.start()
    engine.proceed([])
    engine.proceed([ExecuteJob("w0!a", [0]), ExecuteJob("w0!b", [1]), CallMeLater(2.0)])
    drain(engine, [SetResourceState([0, 1], 1)])
    # a: 100 W x 2 s + 60 W x 4 s = 440 J.  b: 100 W x 2 s + 60 W x 4/3 s = 280 J.
    # Core 1 idle in P1 from 10/3 to 6: 40 W x 8/3 s = 320/3 J.
    assert engine.jobs["w0!a"].energy == pytest.approx(440.0)
    assert engine.jobs["w0!b"].energy == pytest.approx(280.0)
    assert engine.consumed_energy == pytest.approx(440 + 280 + 320 / 3)
    assert sum(engine.host_energy()) == pytest.approx(engine.consumed_energy)


def test_delay_job_ignores_speed() -> None:
    engine = Engine(thesis_platform(pstate=0), workload(("d", 0, 1, "delay", 10.0)))
    engine.start()
    engine.proceed([])
    call = engine.proceed([ExecuteJob("w0!d", [0]), CallMeLater(3.0)])
    assert call.now == 3.0
    done = engine.proceed([SetResourceState([0], 1)])  # confirmation at t = 3
    assert types(done) == [RESOURCE_STATE_CHANGED]
    done = engine.proceed([])
    # 10 s of delay whatever the P-state.
    assert (done.now, types(done)) == (10.0, [JOB_COMPLETED])


def test_parallel_homogeneous_total_splits_the_work() -> None:
    engine = Engine(
        SimPlatform.homogeneous(4, [2 * GF]),
        workload(("t", 0, 4, "parallel_homogeneous_total", 8 * GF)),
    )
    engine.start()
    engine.proceed([])
    done = engine.proceed([ExecuteJob("w0!t", [0, 1, 2, 3])])
    # 8e9 / 4 hosts = 2e9 flops each at 2e9 flops/s -> 1 s.
    assert (done.now, types(done)) == (1.0, [JOB_COMPLETED])


def test_slowest_host_paces_the_job_and_repacing_follows_the_new_slowest() -> None:
    # Host 0: 2 GFLOPS. Host 1: 1 GFLOPS in P0, 4 GFLOPS in P1.
    platform = SimPlatform.from_hosts(
        [("fast", [2 * GF], 0, [], []), ("slow", [1 * GF, 4 * GF], 0, [], [])]
    )
    engine = Engine(platform, workload(("j", 0, 2, "parallel_homogeneous", 4 * GF)))
    engine.start()
    engine.proceed([])
    call = engine.proceed([ExecuteJob("w0!j", [0, 1]), CallMeLater(1.0)])
    assert call.now == 1.0
    messages = drain(engine, [SetResourceState([1], 1)])
    done = [m for m in messages if JOB_COMPLETED in types(m)][0]
    # 1 s at 1 GFLOPS (slowest) = 1e9 done; 3e9 left at 2 GFLOPS (now the slowest) = 1.5 s.
    assert done.now == pytest.approx(2.5)
    # Without the change it would have taken 4e9 / 1e9 = 4 s.


def test_zero_speed_host_stalls_its_job_until_it_speeds_up() -> None:
    engine = Engine(
        thesis_platform(pstate=2), workload(("j", 0, 1, "parallel_homogeneous", 5 * GF))
    )
    engine.start()
    engine.proceed([])
    call = engine.proceed([ExecuteJob("w0!j", [0]), CallMeLater(10.0)])
    assert call.now == 10.0 and engine.jobs["w0!j"].progress(10.0) == 0.0
    messages = drain(engine, [SetResourceState([0], 0)])
    done = [m for m in messages if JOB_COMPLETED in types(m)][0]
    assert done.now == pytest.approx(15.0)  # stalled 10 s, then 5e9 / 1e9


def test_stalled_job_with_nothing_else_scheduled_is_a_deadlock() -> None:
    engine = Engine(thesis_platform(pstate=3), workload(("j", 0, 1, "parallel_homogeneous", 1.0)))
    engine.start()
    engine.proceed([])
    with pytest.raises(Exception, match=r"deadlock at t=0.*1 running job\(s\) are stalled") as err:
        engine.proceed([ExecuteJob("w0!j", [0])])
    assert str(err.value).endswith(
        "; job w0!j runs on host(s) at speed 0: 0 (P3) (set a computing P-state)"
    )


def test_simultaneous_events_arrive_together_in_a_fixed_order() -> None:
    engine = Engine(
        SimPlatform.homogeneous(2, [GF]),
        workload(
            ("a", 0, 1, "delay", 5.0),
            ("b", 0, 1, "delay", 5.0),
            ("c", 5, 1, "delay", 1.0),
            ("d", 5, 1, "delay", 1.0),
        ),
    )
    engine.start()
    first = engine.proceed([])
    assert types(first) == [JOB_SUBMITTED, JOB_SUBMITTED]  # more jobs to come: no NOTIFY yet
    at5 = engine.proceed([ExecuteJob("w0!a", [0]), ExecuteJob("w0!b", [1]), CallMeLater(5.0)])
    assert at5.now == 5.0
    assert types(at5) == [
        JOB_COMPLETED,
        JOB_COMPLETED,
        JOB_SUBMITTED,
        JOB_SUBMITTED,
        NO_MORE_STATIC_JOB_TO_SUBMIT,
        REQUESTED_CALL,
    ]
    assert [e.data["job_id"] for e in at5.events[:4]] == ["w0!a", "w0!b", "w0!c", "w0!d"]


def test_immediate_events_come_in_a_new_message_at_the_same_time() -> None:
    engine = Engine(
        SimPlatform.homogeneous(3, [GF]),
        workload(("long", 0, 1, "delay", 50.0), ("zero", 1, 1, "delay", 0.0)),
    )
    engine.start()
    engine.proceed([])
    at1 = engine.proceed([ExecuteJob("w0!long", [0])])
    assert at1.now == 1.0 and types(at1) == [JOB_SUBMITTED, NO_MORE_STATIC_JOB_TO_SUBMIT]
    same = engine.proceed(
        [ExecuteJob("w0!zero", [1]), KillJobs(["w0!long"]), SetResourceState([2], 0)]
    )
    # Completions (the kill's first, then the zero-length job), JOB_KILLED, state change.
    assert same.now == 1.0
    assert types(same) == [JOB_COMPLETED, JOB_COMPLETED, JOB_KILLED, RESOURCE_STATE_CHANGED]
    assert [e.data["job_state"] for e in same.events[:2]] == [
        COMPLETED_KILLED,
        COMPLETED_SUCCESSFULLY,
    ]
    zero = engine.jobs["w0!zero"]
    assert zero.start_time == zero.finish_time == 1.0
    assert types(engine.proceed([])) == [SIMULATION_ENDS]


def test_empty_workload() -> None:
    engine = Engine(thesis_platform(), workload())
    assert types(engine.start()) == [SIMULATION_BEGINS]
    notify = engine.proceed([])
    assert (notify.now, types(notify)) == (0.0, [NO_MORE_STATIC_JOB_TO_SUBMIT])
    ends = engine.proceed([])
    assert (ends.now, types(ends)) == (0.0, [SIMULATION_ENDS])
    # Two P3 cores at 5 W for no time at all.
    assert engine.consumed_energy == 0.0


def test_walltime_kills_the_job_as_batsim_reports_it() -> None:
    engine = Engine(
        SimPlatform.homogeneous(2, [GF], [10], [30]),
        workload(("late", 0, 1, "delay", 100.0, 10.0), ("early", 0, 1, "delay", 4.0, 10.0)),
    )
    engine.start()
    engine.proceed([])
    early = engine.proceed([ExecuteJob("w0!late", [0]), ExecuteJob("w0!early", [1])])
    assert early.now == 4.0
    assert early.events[0].data["job_state"] == COMPLETED_SUCCESSFULLY
    late = engine.proceed([])
    # Walltime 10 s reached: reported as a completion, not as a kill.
    assert late.now == 10.0 and types(late) == [JOB_COMPLETED]
    assert late.events[0].data["job_state"] == COMPLETED_WALLTIME_REACHED
    assert engine.jobs["w0!late"].execution_time == 10.0
    # The early job's walltime event is stale: nothing more happens.
    assert types(engine.proceed([])) == [SIMULATION_ENDS]
    # Energy: host 0 at 30 W for 10 s; host 1 at 30 W for 4 s then 10 W for 6 s.
    assert engine.consumed_energy == pytest.approx(300 + 120 + 60)


def test_reject() -> None:
    engine = Engine(thesis_platform(), workload(("r", 0, 1, "delay", 1.0)))
    engine.start()
    engine.proceed([])
    # No event acknowledges a rejection; the simulation is then over.
    ends = engine.proceed([RejectJob("w0!r")])
    assert types(ends) == [SIMULATION_ENDS]
    job = engine.jobs["w0!r"]
    assert job.state == REJECTED and job.start_time is None
    assert engine.finished_jobs == [job]


def test_kill_reports_progress_and_accepts_finished_jobs() -> None:
    engine = Engine(
        SimPlatform.homogeneous(2, [GF], [10], [30]),
        workload(("a", 0, 1, "delay", 10.0), ("b", 0, 1, "delay", 1.0)),
    )
    engine.start()
    engine.proceed([])
    b_done = engine.proceed([ExecuteJob("w0!a", [0]), ExecuteJob("w0!b", [1]), CallMeLater(4.0)])
    assert (b_done.now, types(b_done)) == (1.0, [JOB_COMPLETED])
    assert types(engine.proceed([])) == [REQUESTED_CALL]
    ack = engine.proceed([KillJobs(["w0!a", "w0!b", "w0!a"])])
    assert ack.now == 4.0 and types(ack) == [JOB_COMPLETED, JOB_KILLED]
    killed = ack.events[1].data
    # b had already completed at t = 1: listed, not really killed. a was 4/10 done.
    assert killed["job_ids"] == ("w0!a", "w0!b")
    assert [job.id for job in killed["jobs"]] == ["w0!a"]
    assert killed["job_progress"] == {"w0!a": pytest.approx(0.4)}
    a = engine.jobs["w0!a"]
    assert (a.state, a.finish_time, a.energy) == (COMPLETED_KILLED, 4.0, pytest.approx(120.0))
    # Killing it again is ignored, as Batsim discards repeated kill requests.
    assert types(engine.proceed([KillJobs(["w0!a"])])) == [SIMULATION_ENDS]


def test_pending_call_keeps_the_simulation_alive() -> None:
    engine = Engine(thesis_platform(pstate=0), workload(("a", 0, 1, "delay", 5.0)))
    engine.start()
    engine.proceed([])
    done = engine.proceed([ExecuteJob("w0!a", [0]), CallMeLater(20.0), CallMeLater(20.0)])
    assert done.now == 5.0 and types(done) == [JOB_COMPLETED]
    calls = engine.proceed([])
    assert (calls.now, types(calls)) == (20.0, [REQUESTED_CALL, REQUESTED_CALL])
    ends = engine.proceed([])
    assert (ends.now, types(ends)) == (20.0, [SIMULATION_ENDS])
    # Core 0 at 100 W for 20 s, core 1 in P0 idle at 100 W for 20 s.
    assert engine.consumed_energy == pytest.approx(4000.0)


def test_numpy_ids_are_accepted() -> None:
    engine = Engine(thesis_platform(pstate=0), workload(("a", 0, 2, "delay", 1.0)))
    engine.start()
    engine.proceed([])
    done = engine.proceed(
        [ExecuteJob("w0!a", np.array([1, 0])), SetResourceState(np.arange(2), np.int64(1))]
    )
    assert types(done) == [RESOURCE_STATE_CHANGED]
    # Allocations are sets, kept in ascending order (as Batsim's interval sets).
    assert engine.jobs["w0!a"].alloc == (0, 1) and engine.pstates == (1, 1)
    assert all(type(h) is int for h in engine.jobs["w0!a"].alloc)


def test_several_workloads_get_their_own_ids() -> None:
    engine = Engine(
        thesis_platform(pstate=0),
        [
            workload(("1", 3, 1, "delay", 1.0), name="x"),
            workload(("1", 3, 1, "delay", 1.0), name="y"),
        ],
    )
    engine.start()
    at3 = engine.proceed([])
    assert at3.now == 3.0
    assert [e.data.get("job_id") for e in at3.events] == ["x!1", "y!1", None]
    with pytest.raises(Exception, match="workload names must be unique"):
        Engine(thesis_platform(), [workload(name="x"), workload(name="x")])


def test_first_fit_fcfs_uses_lowest_free_ids_and_rejects_impossible_jobs() -> None:
    engine = Engine(
        SimPlatform.homogeneous(4, [GF]),
        workload(
            ("a", 0, 2, "delay", 10.0),
            ("big", 0, 5, "delay", 1.0),
            ("b", 1, 1, "delay", 3.0),
            ("c", 2, 3, "delay", 1.0),
        ),
    )
    run(engine, FirstFitFCFS())
    jobs = engine.jobs
    assert jobs["w0!a"].alloc == (0, 1)
    assert jobs["w0!big"].state == REJECTED
    assert jobs["w0!b"].alloc == (2,) and jobs["w0!b"].start_time == 1.0
    # c needs 3 hosts: 3 and 2 free once b ends at t = 4, then 0 and 1 at t = 10.
    assert jobs["w0!c"].start_time == 10.0 and jobs["w0!c"].alloc == (0, 1, 2)
    assert engine.now == 11.0


def test_without_state_change_events_the_same_flow_skips_the_confirmations() -> None:
    # The thesis 4.1.4 run again, the engine told not to confirm P-state switches (the
    # Gymnasium environment's setting): the switches still happen, no RESOURCE_STATE_CHANGED
    # message comes, and times and energies are the same (625 J, worked out above).
    engine = Engine(
        thesis_platform(),
        workload(("job0", 0, 1, "parallel_homogeneous", 5 * GF)),
        state_change_events=False,
    )
    engine.start()
    submitted = engine.proceed([])
    job = submitted.events[0].data["job"]
    completed = engine.proceed(
        [ExecuteJob(job.id, [0]), SetResourceState([0], 0), SetResourceState([1], 2)]
    )
    assert engine.pstates == (0, 2) and engine.nb_grouped_switches == 2
    assert completed.now == 5.0 and types(completed) == [JOB_COMPLETED]
    ends = engine.proceed([SetResourceState([0, 1], 3)])
    assert (ends.now, types(ends)) == (5.0, [SIMULATION_ENDS]) and engine.finished
    assert engine.pstates == (3, 3)
    assert engine.consumed_energy == pytest.approx(625.0)
    assert job.energy == pytest.approx(500.0)
    assert engine.host_energy() == pytest.approx([500.0, 125.0])
    assert engine.nb_messages == 4  # begins, submitted, completed, ends (6 with confirmations)


def test_host_ids_from_the_core_pool_skip_the_checks_with_the_same_result() -> None:
    # HostIds (ascending ints, the core pool's P-state decisions) and a plain unsorted list
    # switch the same hosts: same P-states, energy and trace rows.
    def run_with(resources) -> tuple:
        engine = Engine(thesis_platform(), workload(("j", 0, 1, "parallel_homogeneous", 5 * GF)))
        engine.start()
        engine.proceed([])
        engine.proceed([SetResourceState(resources, 0), ExecuteJob("w0!j", [0])])
        drain(engine, [])
        return engine.pstates, engine.consumed_energy, engine.pstate_trace

    assert run_with(HostIds([0, 1])) == run_with([1, 0])
    assert run_with(HostIds([0, 1]))[0] == (0, 0)
    # Both hosts in P0 for 5 s (100 W each): 1,000 J.
    assert run_with(HostIds([0, 1]))[1] == pytest.approx(1000.0)
