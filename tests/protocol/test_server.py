"""The protocol server (``hdeeprm-sim``) against a scheduler scripted in the test.

The server runs in a thread; the test binds the REP socket, as a Batsim scheduler does, and
answers each message. Every wait is bounded by a short timeout.
"""

from __future__ import annotations

import gc
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import zmq
from click.testing import CliRunner
from protocol_helpers import THESIS_XML, free_port

from hdeeprm.cli.sim import export_location, main, serve
from hdeeprm.errors import InputError, SimulationError
from hdeeprm.protocol import PeerTimeoutError, ProtocolError, ProtocolServer
from hdeeprm.simulation import Engine, load_platform_xml
from hdeeprm.workload.model import load_workload

#: Thesis 4.1.4's workload: one job of 5e9 flops at t = 0.
WORKLOAD = {
    "nb_res": 2,
    "jobs": [{"id": "job0", "subtime": 0, "res": 1, "profile": "A"}],
    "profiles": {"A": {"type": "parallel_homogeneous", "cpu": 5e9, "com": 0}},
}


class Scheduler:
    """A REP socket on a free port, answering with ``answer(message) -> reply events``."""

    def __init__(self) -> None:
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.REP)
        self.socket.setsockopt(zmq.LINGER, 0)
        port = self.socket.bind_to_random_port("tcp://127.0.0.1")
        self.endpoint = f"tcp://127.0.0.1:{port}"
        self.received: list[dict[str, Any]] = []

    def recv(self, timeout_ms: int = 5000) -> dict[str, Any]:
        assert self.socket.poll(timeout_ms), "no message from the server"
        message = json.loads(self.socket.recv())
        self.received.append(message)
        return message

    def play(
        self, answer: Callable[[dict[str, Any]], list[dict[str, Any]] | bytes], limit: int = 50
    ) -> None:
        for _ in range(limit):
            message = self.recv()
            reply = answer(message)
            if isinstance(reply, bytes):
                self.socket.send(reply)
                return
            self.socket.send_string(json.dumps({"now": message["now"], "events": reply}))
            if any(e["type"] == "SIMULATION_ENDS" for e in message["events"]):
                return

    def close(self) -> None:
        self.socket.close(linger=0)
        self.context.term()


def _inputs(tmp_path: Path) -> tuple[Path, Path]:
    platform = tmp_path / "platform.xml"
    platform.write_text(THESIS_XML)
    workload = tmp_path / "workload.json"
    workload.write_text(json.dumps(WORKLOAD))
    return platform, workload


def _server(
    tmp_path: Path, endpoint: str, timeout: float = 5.0, transport: str = "builtin"
) -> ProtocolServer:
    platform, workload = _inputs(tmp_path)
    engine = Engine(load_platform_xml(platform), load_workload(workload))
    return ProtocolServer(
        engine,
        endpoint,
        timeout=timeout,
        workload_paths={"w0": str(workload)},
        transport=transport,
    )


def _run_in_thread(target: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    outcome: dict[str, Any] = {}

    def body() -> None:
        try:
            outcome["result"] = target()
        except BaseException as exc:  # noqa: BLE001 (handed to the test)
            outcome["error"] = exc

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return thread, outcome


def _ev(kind: str, data: dict[str, Any], t: float = 0.0) -> dict[str, Any]:
    return {"timestamp": t, "type": kind, "data": data}


def thesis_answers(message: dict[str, Any]) -> list[dict[str, Any]]:
    """Thesis 4.1.4's decisions: job0 on core 0 in P0, core 1 in P2; both to P3 at the end."""
    kinds = [e["type"] for e in message["events"]]
    t = message["now"]
    if "JOB_SUBMITTED" in kinds:
        return [
            _ev("EXECUTE_JOB", {"job_id": "w0!job0", "alloc": "0"}, t),
            _ev("SET_RESOURCE_STATE", {"resources": "0", "state": "0"}, t),
            _ev("SET_RESOURCE_STATE", {"resources": "1", "state": "2"}, t),
        ]
    if "JOB_COMPLETED" in kinds:
        return [_ev("SET_RESOURCE_STATE", {"resources": "0-1", "state": "3"}, t)]
    return []


@pytest.mark.parametrize("transport", ["builtin", "pyzmq"])
def test_thesis_4_1_4_over_the_wire(tmp_path: Path, transport: str) -> None:
    scheduler = Scheduler()
    try:
        server = _server(tmp_path, scheduler.endpoint, transport=transport)
        thread, outcome = _run_in_thread(server.run)
        scheduler.play(thesis_answers)
        thread.join(5.0)
    finally:
        scheduler.close()
    assert not thread.is_alive() and "error" not in outcome, outcome
    got = [(m["now"], [e["type"] for e in m["events"]]) for m in scheduler.received]
    assert got == [
        (0.0, ["SIMULATION_BEGINS"]),
        (0.0, ["JOB_SUBMITTED", "NOTIFY"]),
        (0.0, ["RESOURCE_STATE_CHANGED", "RESOURCE_STATE_CHANGED"]),
        (5.0, ["JOB_COMPLETED"]),  # 5e9 flops at 1e9 flops/s
        (5.0, ["RESOURCE_STATE_CHANGED"]),
        (5.0, ["SIMULATION_ENDS"]),
    ]
    begins = scheduler.received[0]["events"][0]["data"]
    assert begins["nb_resources"] == 2 and begins["workloads"] == {
        "w0": str(tmp_path / "workload.json")
    }
    assert [r["name"] for r in begins["compute_resources"]] == ["cor_0", "cor_1"]
    submitted = scheduler.received[1]["events"]
    assert submitted[0]["data"] == {
        "job_id": "w0!job0",
        "job": {"id": "w0!job0", "subtime": 0.0, "res": 1, "profile": "A"},
    }
    assert submitted[1]["data"] == {"type": "no_more_static_job_to_submit"}
    changed = [e["data"] for e in scheduler.received[2]["events"]]
    assert changed == [{"resources": "0", "state": "0"}, {"resources": "1", "state": "2"}]
    completed = scheduler.received[3]["events"][0]["data"]
    assert completed == {
        "job_id": "w0!job0",
        "job_state": "COMPLETED_SUCCESSFULLY",
        "return_code": 0,
        "alloc": "0",
    }
    # Energy (docs/simulation.md): core 0 at 100 W and core 1 at 25 W for 5 s = 625 J.
    assert server.engine.consumed_energy == pytest.approx(625.0)
    stats = outcome["result"]
    assert (stats.messages, stats.events) == (6, 8)


def test_scheduler_clock_is_reported_back(tmp_path: Path) -> None:
    """pybatsim answers with ``now`` + 1e-21 s; Batsim then reports that time as ``now``."""
    scheduler = Scheduler()

    def answers(message: dict[str, Any]) -> list[dict[str, Any]]:
        return thesis_answers(message)

    try:
        server = _server(tmp_path, scheduler.endpoint)
        thread, outcome = _run_in_thread(server.run)
        first = scheduler.recv()
        assert first["now"] == 0.0
        scheduler.socket.send_string(json.dumps({"now": 1e-21, "events": []}))
        second = scheduler.recv()
        assert second["now"] == 1e-21  # the scheduler's clock, events still at t = 0
        assert second["events"][0]["timestamp"] == 0.0
        scheduler.socket.send_string(
            json.dumps({"now": 1e-21, "events": answers({"now": 1e-21, **second})})
        )
        scheduler.play(thesis_answers)
        thread.join(5.0)
    finally:
        scheduler.close()
    assert "error" not in outcome, outcome
    job = server.engine.jobs["w0!job0"]
    assert (job.start_time, job.finish_time) == (0.0, 5.0)


def test_scheduling_delays_are_simulated_as_batsim(tmp_path: Path) -> None:
    """A reply whose ``now`` is later (pybatsim's fillerSched answers 5 ms later): events of
    the meantime are held and sent at that time, decisions apply at their timestamps."""
    scheduler = Scheduler()
    try:
        server = _server(tmp_path, scheduler.endpoint)
        thread, outcome = _run_in_thread(server.run)
        first = scheduler.recv()
        assert first["now"] == 0.0
        scheduler.socket.send_string(json.dumps({"now": 0.005, "events": []}))
        second = scheduler.recv()
        # The submissions of t = 0 arrive when the scheduler is ready again, at 0.005.
        assert second["now"] == 0.005
        assert {e["timestamp"] for e in second["events"]} == {0.0}
        reply = {"now": 0.005, "events": thesis_answers(second)}
        scheduler.socket.send_string(json.dumps(reply))
        scheduler.play(thesis_answers)
        thread.join(5.0)
    finally:
        scheduler.close()
    assert "error" not in outcome, outcome
    job = server.engine.jobs["w0!job0"]
    assert (job.start_time, job.finish_time) == (0.005, 5.005)


def test_decisions_after_the_replys_now_are_refused(tmp_path: Path) -> None:
    scheduler = Scheduler()
    try:
        server = _server(tmp_path, scheduler.endpoint)
        thread, outcome = _run_in_thread(server.run)
        scheduler.recv()
        late = {"timestamp": 2.0, "type": "CALL_ME_LATER", "data": {"timestamp": 9.0}}
        scheduler.socket.send_string(json.dumps({"now": 1.0, "events": [late]}))
        thread.join(5.0)
    finally:
        scheduler.close()
    error = outcome["error"]
    assert isinstance(error, ProtocolError)
    assert "timestamped 2.0, after the reply's now (1.0)" in str(error)


def test_silent_scheduler_times_out(tmp_path: Path) -> None:
    scheduler = Scheduler()
    try:
        server = _server(tmp_path, scheduler.endpoint, timeout=0.3)
        thread, outcome = _run_in_thread(server.run)
        scheduler.recv()  # ... and never answer
        thread.join(5.0)
    finally:
        scheduler.close()
    assert not thread.is_alive()
    assert isinstance(outcome["error"], PeerTimeoutError)
    assert "within 0.3 s" in str(outcome["error"])


@pytest.mark.parametrize("transport", ["builtin", "pyzmq"])
def test_absent_scheduler_times_out(tmp_path: Path, transport: str) -> None:
    server = _server(tmp_path, f"tcp://127.0.0.1:{free_port()}", timeout=0.3, transport=transport)
    with pytest.raises(PeerTimeoutError, match="no message from the scheduler"):
        server.run()


def test_unknown_transport_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown transport 'zeromq'"):
        _server(tmp_path, "tcp://127.0.0.1:28000", transport="zeromq")


@pytest.mark.parametrize(
    ("reply", "error", "match"),
    [
        (b"garbage", ProtocolError, "reply 1: not a JSON message"),
        (
            json.dumps(
                {"now": 0, "events": [_ev("EXECUTE_JOB", {"job_id": "w0!nope", "alloc": "0"})]}
            ).encode(),
            SimulationError,
            "w0!nope",
        ),
        # Nesting and host ids are bounded before anything is built from them.
        (
            b'{"now": 0, "events": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
            ProtocolError,
            "reply 1: JSON nested 100,001 levels deep",
        ),
        (
            json.dumps(
                {"now": 0, "events": [_ev("EXECUTE_JOB", {"job_id": "w0!job0", "alloc": "0-2e9"})]}
            ).encode(),
            ProtocolError,
            "bad interval '0-2e9'",
        ),
        (
            json.dumps(
                {
                    "now": 0,
                    "events": [_ev("EXECUTE_JOB", {"job_id": "w0!job0", "alloc": "0-2000000000"})],
                }
            ).encode(),
            ProtocolError,
            "reply 1.events[0].data.alloc: host id 2,000,000,000 in '0-2000000000' is out of range",
        ),
    ],
)
def test_bad_replies_stop_the_server(tmp_path: Path, reply: bytes, error: type, match: str) -> None:
    scheduler = Scheduler()
    try:
        server = _server(tmp_path, scheduler.endpoint)
        thread, outcome = _run_in_thread(server.run)
        scheduler.recv()
        scheduler.socket.send(reply)
        thread.join(5.0)
    finally:
        scheduler.close()
    assert isinstance(outcome["error"], error)
    assert match in str(outcome["error"])


def test_serve_writes_batsim_outputs_at_the_export_prefix(tmp_path: Path) -> None:
    platform, workload = _inputs(tmp_path)
    scheduler = Scheduler()
    prefix = str(tmp_path / "results" / "exp1")
    frozen: list[int] = []

    def run() -> str:
        out = serve(platform, [workload], prefix, scheduler.endpoint, timeout=5.0, freeze_heap=True)
        frozen.append(gc.get_freeze_count())
        return out

    gc.unfreeze()  # an earlier test's freeze, if any
    try:
        thread, outcome = _run_in_thread(run)
        scheduler.play(thesis_answers)
        thread.join(10.0)
    finally:
        scheduler.close()
    assert "error" not in outcome, outcome
    assert "1 jobs, makespan 5 s, energy 625 J" in outcome["result"]
    jobs = pd.read_csv(tmp_path / "results" / "exp1_jobs.csv")
    assert jobs["finish_time"].tolist() == [5.0] and jobs["workload_name"].tolist() == ["w0"]
    for kind in ("schedule", "machine_states", "pstate_changes", "consumed_energy"):
        assert (tmp_path / "results" / f"exp1_{kind}.csv").is_file()
    assert export_location("out") == (Path("."), "out_")
    assert frozen == [0], "serving froze the heap and left it frozen"


def test_cli_errors(tmp_path: Path) -> None:
    platform, workload = _inputs(tmp_path)
    runner = CliRunner()
    missing = runner.invoke(main, ["-p", str(tmp_path / "none.xml"), "-w", str(workload)])
    assert missing.exit_code == 2 and "none.xml" in missing.output
    bad = tmp_path / "bad.json"
    bad.write_text('{"jobs": [], "profiles": {}')
    result = runner.invoke(main, ["-p", str(platform), "-w", str(bad)])
    assert result.exit_code == 2 and "bad.json" in result.output and "invalid JSON" in result.output
    absent = runner.invoke(
        main,
        ["-p", str(platform), "-w", str(workload), "-s", f"tcp://127.0.0.1:{free_port()}"]
        + ["--timeout", "0.2", "-e", str(tmp_path / "x")],
    )
    assert absent.exit_code == 1 and "no message from the scheduler" in absent.output
    assert not list(tmp_path.glob("x_*.csv"))  # nothing half-done on failure
