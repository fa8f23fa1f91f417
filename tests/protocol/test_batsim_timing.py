"""Batsim 4.2.1's grouping of one instant's events into messages (``BatsimTiming``), on
hand-built cases whose sub-nanosecond timeline is worked out below (1 host whose route to the
master host runs at 40 MB/s: a completion travels 2.5e-8 s; an internal message on the master
host 1e-10 s; SimGrid ends a sleep due within 1e-9 s of the current step with it)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pandas as pd
import pytest
import zmq

from hdeeprm.cli.sim import serve
from hdeeprm.errors import InputError
from hdeeprm.protocol.batsim_timing import BatsimTiming, batsim_double, completion_bandwidths
from hdeeprm.simulation import Engine, SimPlatform
from hdeeprm.simulation.events import (
    JOB_COMPLETED,
    JOB_SUBMITTED,
    NO_MORE_STATIC_JOB_TO_SUBMIT,
    SIMULATION_ENDS,
    ExecuteJob,
    Message,
    SetResourceState,
)
from hdeeprm.workload.model import JobSpec, Profile, Workload

ROUTE = 40e6  # bytes/s: KTH-SP2's node links


def _workload(*jobs: tuple[str, float, float]) -> Workload:
    """Delay jobs ``(id, subtime, delay)`` on one host each."""
    specs = [JobSpec(jid, sub, 1, jid, None) for jid, sub, _ in jobs]
    profiles = {jid: Profile(jid, "delay", delay=delay) for jid, _, delay in jobs}
    return Workload(0, specs, profiles, "w0")


def _label(message: Message) -> list[str]:
    short = {
        JOB_SUBMITTED: "S",
        JOB_COMPLETED: "C",
        NO_MORE_STATIC_JOB_TO_SUBMIT: "N",
        "RESOURCE_STATE_CHANGED": "P",
    }
    return [
        short[e.type] + (":" + e.data["job_id"].split("!")[1] if "job_id" in e.data else "")
        for e in message.events
    ]


def _fcfs(nb_hosts: int, jobs: Workload, timing: bool) -> list[tuple[float, list[str]]]:
    """Serve ``jobs`` to a FCFS scheduler (one host per job, in submission order), through
    Batsim's timing or the engine's one message per instant; return every message."""
    engine = Engine(SimPlatform.homogeneous(nb_hosts, [1e9]), jobs)
    sim = BatsimTiming(engine, [ROUTE] * nb_hosts) if timing else engine
    sim.start()
    queue: list[str] = []
    free = list(range(nb_hosts))
    messages = []
    message = sim.proceed([])
    while message.events[0].type != SIMULATION_ENDS:
        messages.append((message.now, _label(message)))
        for event in message.events:
            if event.type == JOB_SUBMITTED:
                queue.append(event.data["job_id"])
            elif event.type == JOB_COMPLETED:
                free += event.data["alloc"]
        decisions = []
        while queue and free:
            decisions.append(ExecuteJob(queue.pop(0), [free.pop(0)]))
        message = sim.proceed(decisions)
    return messages


def test_submission_and_completion_in_one_step_travel_together_submission_first() -> None:
    # a (submitted at 1) starts when its EXECUTE_JOB reaches the server: 1 + 2e-10 (the
    # submitter woke at 1, its message took 1e-10, the decision another 1e-10); it is due at
    # 10 + 2e-10. The submitter wakes at 10 + 1e-10 (its previous message took 1e-10): a's
    # remaining 1e-10 < 1e-9, so a ends in the same step; the submitter posts first, the
    # server receives b's submission at 10 + 2e-10 while a's completion waits in the mailbox,
    # so it sends nothing until that arrives (10 + 2e-10 + 2.5e-8): one message, b first.
    jobs = _workload(("a", 1.0, 9.0), ("b", 10.0, 1.0))
    assert _fcfs(1, jobs, timing=True) == [
        (1.0, ["S:a"]),
        (10.0, ["S:b", "C:a", "N"]),
        (11.0, ["C:b"]),
    ]
    # The engine's own rule: completions first.
    assert _fcfs(1, jobs, timing=False)[1] == (10.0, ["C:a", "S:b", "N"])


def test_completion_more_than_a_nanosecond_late_comes_in_a_second_message() -> None:
    # c and a are submitted at 1; c runs first (start 1 + 2e-10, due 6 + 2e-10). c's
    # completion reaches the server 2.5e-8 later, a starts 1e-10 after that message:
    # a is due at 10 + 2.5e-8 + 3e-10. b's submission arrives at 10 + 2e-10, a's sleep still
    # has 2.5e-8 to go (> 1e-9): Batsim sends [b] alone, then the bye (posted once b's
    # submission was received, 1e-10 later), then [a's completion]. Since the host is busy, b
    # starts only after that third message.
    jobs = _workload(("c", 1.0, 5.0), ("a", 1.0, 4.0), ("b", 10.0, 1.0))
    assert _fcfs(1, jobs, timing=True) == [
        (1.0, ["S:c", "S:a"]),
        (6.0, ["C:c"]),
        (10.0, ["S:b"]),
        (10.0, ["N"]),
        (10.0, ["C:a"]),
        (11.0, ["C:b"]),
    ]
    assert _fcfs(1, jobs, timing=False)[2] == (10.0, ["C:a", "S:b", "N"])


def test_the_last_submission_and_the_bye_travel_apart() -> None:
    # The submitter's bye (NOTIFY no_more_static_job_to_submit) is posted once its last
    # submission is received, after the server has already sent that submission alone.
    jobs = _workload(("a", 1.0, 2.0))
    assert _fcfs(1, jobs, timing=True) == [(1.0, ["S:a"]), (1.0, ["N"]), (3.0, ["C:a"])]


def test_queued_completions_are_received_one_transfer_after_another() -> None:
    # Two jobs end in the same step: their completions cross the network one after the other
    # (the server takes one message at a time), in start order, then go out together.
    jobs = _workload(("a", 1.0, 4.0), ("b", 1.0, 4.0), ("c", 2.0, 1.0))
    messages = _fcfs(2, jobs, timing=True)
    assert (5.0, ["C:a", "C:b"]) in messages


def _delayed_fcfs(
    nb_hosts: int, jobs: Workload, delay: float, split: bool = False
) -> tuple[list[tuple[float, list[str]]], dict[str, tuple[float, float]]]:
    """As ``_fcfs`` through Batsim's timing, with a scheduler that takes ``delay`` seconds to
    decide whenever it starts jobs (pybatsim's ``consume_time``; with ``split``, a further
    ``delay`` before each next job); return every message and each job's reported
    (start, finish)."""
    engine = Engine(SimPlatform.homogeneous(nb_hosts, [1e9]), jobs)
    sim = BatsimTiming(engine, [ROUTE] * nb_hosts)
    sim.start()
    queue: list[str] = []
    free = list(range(nb_hosts))
    messages = []
    message = sim.proceed([])
    while message.events[0].type != SIMULATION_ENDS:
        messages.append((message.now, _label(message)))
        for event in message.events:
            if event.type == JOB_SUBMITTED:
                queue.append(event.data["job_id"])
            elif event.type == JOB_COMPLETED:
                free += event.data["alloc"]
        decisions, stamps = [], []
        when = message.now
        while queue and free:
            when += delay if (split or not decisions) else 0.0
            decisions.append(ExecuteJob(queue.pop(0), [free.pop(0)]))
            stamps.append(when)
        message = sim.proceed(decisions, stamps, when)
    sim.report_times()
    times = {j.id.split("!")[1]: (j.start_time, j.finish_time) for j in engine.finished_jobs}
    return messages, times


def test_delayed_decisions_start_jobs_at_their_timestamps() -> None:
    # 2 hosts, 0.5 s to decide. At 1 [a]: the reply starts a at 1.5 (the REQ-REP actor sleeps
    # until then; the server starts a when it receives its EXECUTE_JOB, 1.5 + 1e-10). b is
    # submitted at 2 (then the bye, held: the scheduler is busy again); the reply starts b at
    # 2.5, when a ends (2.5 + 1e-10): the REQ-REP actor posts first, b starts, and a's
    # completion (2.5e-8 on the network) reaches the server before SCHED_READY, so it goes out
    # with the bye at 2.5. b ends at 3.5.
    jobs = _workload(("a", 1.0, 1.0), ("b", 2.0, 1.0))
    messages, times = _delayed_fcfs(2, jobs, 0.5)
    assert messages == [(1.0, ["S:a"]), (2.0, ["S:b"]), (2.5, ["N", "C:a"]), (3.5, ["C:b"])]
    assert times["a"] == pytest.approx((1.5, 2.5), abs=1e-9)
    assert times["b"] == pytest.approx((2.5, 3.5), abs=1e-9)
    assert times["a"][0] > 1.5  # SimGrid's clock: 1.5 + 1e-10


def test_a_delayed_timestamp_is_slept_to_as_batsims_rapidjson_reads_it() -> None:
    # 1 host, 0.122 s to decide. a is submitted at 1: SimGrid's clock is 1.0000000001 when the
    # server sends the message (the submitter's hello and message, 1e-10 each: 1e-10 +
    # (1 - 1e-10) = 1.0, + 1e-10). pybatsim answers at 1.0 + 0.122, the double Python prints
    # 1.1219999999999999 (17 digits). RapidJSON reads that text as 11219999999999999 (in an
    # integer: it was below 2^53 before the last digit), rounds it to a double (even integers
    # only above 2^53, a tie: 11220000000000000) and divides by 1e16: 1.122, one ulp above
    # what Python reads. The REQ-REP actor sleeps 1.122 - 1.0000000001 = 0.1219999999000001
    # s, so the clock is 1.122, and a starts when its EXECUTE_JOB arrives 1e-10 later:
    # 1.1220000001000001. Sleeping to Python's value gives 1.1220000001, one ulp earlier: on
    # whole Gaia (parallel_homogeneous, delayed filler) such ulps moved 5 of 26 finish times
    # in their 6th printed decimal.
    assert batsim_double(1.0 + 0.122) == 1.122 != 1.0 + 0.122
    jobs = _workload(("a", 1.0, 1.0))
    messages, times = _delayed_fcfs(1, jobs, 0.122)
    assert messages == [(1.0, ["S:a"]), (1.122, ["N"]), (2.122, ["C:a"])]
    assert times["a"] == (1.1220000001000001, 2.1220000001)
    clock = 1e-10 + (1.0 - 1e-10) + 1e-10
    assert clock + (1.122 - clock) + 1e-10 == 1.1220000001000001
    assert clock + ((1.0 + 0.122) - clock) + 1e-10 == 1.1220000001  # Python's reading


def test_a_job_ending_on_simgrids_clock_before_its_nominal_instant_ends_there() -> None:
    # 2 hosts. a (4 s) is submitted at 1 and starts at 1.0000000002 (the submitter's message,
    # then the EXECUTE_JOB, 1e-10 each): its sleep is due at 5.0000000002. b is submitted at
    # 5 - 5e-11 = 4.99999999995, nominally before a's end (5.0): the submitter, which woke at
    # 1.0 and posted for 1e-10, sleeps 4.99999999995 - 1.0 and wakes at 5.00000000005. a's
    # sleep then has 1.5e-10 left, below 1e-9: SimGrid ends it in that step. a's completion
    # is posted behind b's submission (2.5e-8 on the network), the bye after b's submission
    # is received: one message [S:b, C:a, N] at 5.0, and a ended at 5.00000000005. The
    # engine reaches a's end (5.0) only after b's submission: the model reveals it when the
    # sleep ends (before: a's end went out alone, after the bye, at a clock 5e-10 later).
    jobs = _workload(("a", 1.0, 4.0), ("b", 5.0 - 5e-11, 1.0))
    assert 5.0 - 5e-11 == 4.99999999995 and 1.0000000001 + (4.99999999995 - 1.0) == 5.00000000005
    messages, times = _delayed_fcfs(2, jobs, 0.0)
    assert messages == [(1.0, ["S:a"]), (5.0, ["S:b", "C:a", "N"]), (6.0, ["C:b"])]
    assert times["a"] == (1.0000000002, 5.00000000005)


def test_events_of_the_delay_wait_for_the_scheduler() -> None:
    # 2 hosts, the scheduler takes 1 s per job: at 1 [a, b], EXECUTE a at 2, EXECUTE b at 3,
    # ready at 3. a (0.5 s) ends at 2.5 and c is submitted at 2.7 while the scheduler still
    # "thinks": both are held, then sent together at 3 in the order the server received them
    # (the bye after c). The engine's instants of the meantime go on: a really ended at 2.5.
    jobs = _workload(("a", 1.0, 0.5), ("b", 1.0, 1.0), ("c", 2.7, 1.0))
    messages, times = _delayed_fcfs(2, jobs, 1.0, split=True)
    assert messages == [
        (1.0, ["S:a", "S:b"]),
        (3.0, ["C:a", "S:c", "N"]),
        (4.0, ["C:b"]),
        (5.0, ["C:c"]),
    ]
    assert times["a"] == pytest.approx((2.0, 2.5), abs=1e-9)
    assert times["b"] == pytest.approx((3.0, 4.0), abs=1e-9)
    # c on a's host, 1 s after the message at 3.
    assert times["c"] == pytest.approx((4.0, 5.0), abs=1e-9)


def test_a_job_sped_up_by_a_pstate_change_ends_when_the_engine_ends_it() -> None:
    # One host with two P-states (1 and 0.5 Gflop/s), in the slow one. a (1 Gflop) starts at 1:
    # the model times it at that speed, due at 3. At 2 (b's submission) the scheduler
    # switches the host to P0: a's last 0.5 Gflop take 0.5 s, so the engine ends it at 2.5.
    # Its completion goes out at 2.5 (the model's sleep is cut to the engine's instant,
    # instead of running SimGrid's clock to 3 and every later event with it).
    specs = [JobSpec("a", 1.0, 1, "a", None), JobSpec("b", 2.0, 1, "b", None)]
    profiles = {
        "a": Profile("a", "parallel_homogeneous", cpu=1e9),
        "b": Profile("b", "delay", delay=1.0),
    }
    platform = SimPlatform.homogeneous(1, [1e9, 5e8], [1.0, 1.0], [2.0, 2.0], pstate=1)
    engine = Engine(platform, Workload(0, specs, profiles, "w0"))
    sim = BatsimTiming(engine, [ROUTE])
    sim.start()
    seen = []
    message = sim.proceed([])
    while message.events[0].type != SIMULATION_ENDS:
        seen.append((message.now, _label(message)))
        decisions: list = []
        labels = _label(message)
        if "S:a" in labels:
            decisions = [ExecuteJob("w0!a", [0])]
        elif "S:b" in labels:
            decisions = [SetResourceState([0], 0)]
        elif "C:a" in labels:
            decisions = [ExecuteJob("w0!b", [0])]
        message = sim.proceed(decisions)
    assert seen == [
        (1.0, ["S:a"]),
        (2.0, ["S:b"]),
        (2.0, ["N"]),
        (2.0, ["P"]),  # RESOURCE_STATE_CHANGED, Batsim's acknowledgement
        (2.5, ["C:a"]),
        (3.5, ["C:b"]),
    ]
    sim.report_times()
    a = engine.jobs["w0!a"]
    assert a.finish_time == pytest.approx(2.5, abs=1e-9)


def test_a_parallel_task_ends_in_simgrid_l07_arithmetic() -> None:
    # a: 49 Gflop on one 1 Gflop/s host, submitted at 1, starts at 1 + 3e-10 (the submitter's
    # message, the EXECUTE_JOB, each 1e-10). SimGrid's L07 gives it the rate r = 1e9 / 49e9 =
    # 0.02040816326530612 (fraction of the task per second) and remains 1. Two more steps of
    # 1e-10 s (the REQ-REP actor's messages) each take r x 1e-10 off: 0.9999999999979592, then
    # 0.9999999999959184 at 1.0000000005; the next step is remains / r = 48.9999999998 s, so it
    # ends at 1.0000000005 + 48.9999999998 = 50.000000000300005. Timed in seconds instead
    # (49 s, -1e-10, -1e-10, then the rest) it would end at 50.0000000003, one ulp earlier:
    # on long traces such ulps decide the 6th printed decimal (63 Gaia jobs before).
    specs = [JobSpec("a", 1.0, 1, "a", None)]
    profiles = {"a": Profile("a", "parallel_homogeneous", cpu=49e9)}
    engine = Engine(SimPlatform.homogeneous(1, [1e9]), Workload(0, specs, profiles, "w0"))
    sim = BatsimTiming(engine, [ROUTE])
    sim.start()
    message = sim.proceed([])
    while message.events[0].type != SIMULATION_ENDS:
        started = message.events[0].type == JOB_SUBMITTED
        message = sim.proceed([ExecuteJob("w0!a", [0])] if started else [])
    assert sim.report_times() == 1
    a = engine.jobs["w0!a"]
    assert a.start_time == 1.0000000003
    assert a.finish_time == 50.000000000300005
    assert 1.0000000005 + (49.0 - 1e-10 - 1e-10) == 50.0000000003  # the seconds arithmetic


def test_workload_numbers_as_batsims_rapidjson_reads_them() -> None:
    # "9009118315789.475" (a Gaia job's flops): RapidJSON builds 9009118315789475 in an
    # integer (it was below 2^53 before the last digit), converts it to a double: 2^53 <
    # it, so even integers only, a tie between ...474 and ...476 rounded to even: ...476; then
    # divides by 1e3: 9009118315789.476 rounds to the double printed 9009118315789.477, one
    # ulp (2^-9) above the correctly rounded 9009118315789.475 Python reads.
    assert batsim_double(9009118315789.475) == 9009118315789.477
    assert 9009118315789.477 - 9009118315789.475 == 2.0**-9
    # Exact when the significand and the power of ten are exact doubles:
    for value in (5e9, 0.1, 123.456, 3514575380210527.0, 1e16, 1.5e-7, 86400.0, 0.0):
        assert batsim_double(value) == value
    assert batsim_double(-9009118315789.475) == -9009118315789.477


def test_parallel_tasks_sharing_steps_each_keep_their_own_fraction() -> None:
    # a (49 Gflop) and b (3 Gflop) on hosts 0 and 1, both submitted at 1 and started by one
    # reply. b (rate 1/3) ends after its own remains / rate; a keeps losing r x delta at every
    # step of b's run, end and completion message, which split a's time without moving its
    # end by more than the arithmetic's ulps: 49 s and 3 s to within 1e-12 s.
    specs = [JobSpec("a", 1.0, 1, "a", None), JobSpec("b", 1.0, 1, "b", None)]
    profiles = {
        "a": Profile("a", "parallel_homogeneous", cpu=49e9),
        "b": Profile("b", "parallel_homogeneous", cpu=3e9),
    }
    engine = Engine(SimPlatform.homogeneous(2, [1e9]), Workload(0, specs, profiles, "w0"))
    sim = BatsimTiming(engine, [ROUTE, ROUTE])
    sim.start()
    message = sim.proceed([])
    while message.events[0].type != SIMULATION_ENDS:
        started = message.events[0].type == JOB_SUBMITTED
        decisions = [ExecuteJob("w0!a", [0]), ExecuteJob("w0!b", [1])] if started else []
        message = sim.proceed(decisions)
    sim.report_times()
    a, b = engine.jobs["w0!a"], engine.jobs["w0!b"]
    assert b.finish_time - b.start_time == pytest.approx(3.0, abs=1e-12)
    assert a.finish_time - a.start_time == pytest.approx(49.0, abs=1e-12)
    assert a.start_time < b.start_time  # the server handles a's EXECUTE_JOB first


def test_same_results_as_the_engine_whatever_the_grouping() -> None:
    # Grouping changes what a scheduler sees, not the simulation: with a scheduler whose
    # decisions do not depend on it, jobs start and end at the same times.
    jobs = _workload(("a", 1.0, 9.0), ("b", 10.0, 1.0), ("c", 10.0, 3.0))
    assert [m[0] for m in _fcfs(1, jobs, timing=True)][-1] == 14.0


def test_completion_bandwidths_of_a_generated_platform(tmp_path: Path) -> None:
    xml = tmp_path / "platform.xml"
    xml.write_text(
        """<?xml version="1.0"?>
<platform version="4.1"><zone id="main" routing="Full">
 <zone id="master" routing="Full"><host id="master_host" speed="1Gf"/></zone>
 <zone id="clu_0" routing="Full"><router id="rou_0"/>
  <link id="udl_0" bandwidth="40MBps" latency="0s"/>
  <host id="cor_00" speed="1Gf"/>
  <route src="cor_00" dst="rou_0"><link_ctn id="udl_0"/></route>
  <host id="cor_01" speed="1Gf"/>
 </zone>
 <link id="glob_0" bandwidth="1Gbps" latency="0s"/>
 <zoneRoute src="clu_0" dst="master" gw_src="rou_0" gw_dst="master_host">
  <link_ctn id="glob_0"/></zoneRoute>
</zone></platform>"""
    )
    bandwidths = completion_bandwidths(xml)
    # cor_00: min(40 MB/s, 1 Gb/s = 125 MB/s); cor_01 has no route of its own: its zone's.
    assert bandwidths["cor_00"] == 40e6
    assert bandwidths["cor_01"] == 125e6
    xml.write_text(xml.read_text().replace('bandwidth="1Gbps"', 'bandwidth="fast"'))
    with pytest.raises(InputError, match="fast"):
        completion_bandwidths(xml)


ONE_HOST_XML = """<?xml version="1.0"?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1"><zone id="main" routing="Full">
 <zone id="master" routing="Full"><host id="master_host" speed="1Gf"/></zone>
 <zone id="clu_0" routing="Full"><router id="rou_0"/>
  <link id="udl_0" bandwidth="40MBps" latency="0s" sharing_policy="SPLITDUPLEX"/>
  <host id="cor_0" speed="1Gf"/>
  <route src="cor_0" dst="rou_0" symmetrical="NO"><link_ctn id="udl_0" direction="UP"/></route>
 </zone>
 <link id="glob_0" bandwidth="1Gbps" latency="0s" sharing_policy="SPLITDUPLEX"/>
 <zoneRoute src="clu_0" dst="master" gw_src="rou_0" gw_dst="master_host" symmetrical="NO">
  <link_ctn id="glob_0" direction="UP"/></zoneRoute>
</zone></platform>"""


def test_hdeeprm_sim_batsim_timing_over_the_wire(tmp_path: Path) -> None:
    # The second case above through serve(): a scheduler on a ZeroMQ socket gets Batsim's
    # messages, and out_jobs.csv reports Batsim's times (a started 2.5e-8 + 3e-10 s after 6).
    (tmp_path / "platform.xml").write_text(ONE_HOST_XML)
    doc = {
        "nb_res": 1,
        "jobs": [
            {"id": jid, "subtime": sub, "res": 1, "profile": jid}
            for jid, sub in (("c", 1), ("a", 1), ("b", 10))
        ],
        "profiles": {
            jid: {"type": "delay", "delay": d} for jid, d in (("c", 5), ("a", 4), ("b", 1))
        },
    }
    (tmp_path / "workload.json").write_text(json.dumps(doc))
    context = zmq.Context()
    socket = context.socket(zmq.REP)
    socket.setsockopt(zmq.LINGER, 0)
    endpoint = f"tcp://127.0.0.1:{socket.bind_to_random_port('tcp://127.0.0.1')}"
    done: list[str] = []
    thread = threading.Thread(
        target=lambda: done.append(
            serve(
                tmp_path / "platform.xml",
                [tmp_path / "workload.json"],
                str(tmp_path / "out"),
                endpoint,
                timeout=10,
                batsim_timing=True,
            )
        )
    )
    thread.start()
    seen, queue, free = [], [], [0]
    try:
        while True:
            assert socket.poll(10_000), "no message from hdeeprm-sim"
            message = json.loads(socket.recv())
            kinds = [e["type"] for e in message["events"]]
            seen.append((message["now"], kinds))
            for event in message["events"]:
                if event["type"] == "JOB_SUBMITTED":
                    queue.append(event["data"]["job_id"])
                elif event["type"] == "JOB_COMPLETED":
                    free.append(0)
            reply = []
            while queue and free:
                free.pop()
                reply.append(
                    {
                        "timestamp": message["now"],
                        "type": "EXECUTE_JOB",
                        "data": {"job_id": queue.pop(0), "alloc": "0"},
                    }
                )
            socket.send_string(json.dumps({"now": message["now"], "events": reply}))
            if "SIMULATION_ENDS" in kinds:
                break
    finally:
        thread.join(10)
        socket.close(linger=0)
        context.term()
    assert done
    assert seen[1:] == [
        (1.0, ["JOB_SUBMITTED", "JOB_SUBMITTED"]),
        (6.0, ["JOB_COMPLETED"]),
        (10.0, ["JOB_SUBMITTED"]),
        (10.0, ["NOTIFY"]),
        (10.0, ["JOB_COMPLETED"]),
        (11.0, ["JOB_COMPLETED"]),
        (11.0, ["SIMULATION_ENDS"]),
    ]
    jobs = pd.read_csv(tmp_path / "out_jobs.csv").set_index("job_id")
    assert jobs.loc["a", "starting_time"] == 6.0  # 6 + 2.53e-8 s, printed with 6 decimals
    assert jobs.loc["b", "starting_time"] == 10.0 and jobs.loc["b", "finish_time"] == 11.0
