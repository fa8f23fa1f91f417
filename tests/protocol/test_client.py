"""The Batsim client against a scripted fake Batsim: the normal flow and every failure.

Every wait is bounded (timeouts of a few seconds at most) and every test checks that the
process has been stopped, so none of them can hang or leave a process behind.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zmq
from protocol_helpers import fake_batsim_exe

from hdeeprm.protocol import (
    BatsimExitedError,
    BatsimNotFoundError,
    BatsimSimulation,
    EndpointInUseError,
    PeerTimeoutError,
    ProtocolError,
)
from hdeeprm.protocol.client import find_executable
from hdeeprm.simulation import (
    JOB_COMPLETED,
    JOB_SUBMITTED,
    NO_MORE_STATIC_JOB_TO_SUBMIT,
    SIMULATION_BEGINS,
    SIMULATION_ENDS,
    FirstFitFCFS,
)


def _sim(tmp_path: Path, executable: Path | str | None = None, **kwargs) -> BatsimSimulation:
    """A simulation of the fake Batsim (or of ``executable``) with a 5 s timeout."""
    if executable is None:
        executable = fake_batsim_exe(tmp_path)
    return BatsimSimulation(
        tmp_path / "platform.xml",
        [tmp_path / "workload.json"],
        tmp_path / "out" / "run",
        executable=executable,
        timeout=kwargs.pop("timeout", 5.0),
        **kwargs,
    )


def _drive(sim: BatsimSimulation) -> list:
    scheduler = FirstFitFCFS()
    messages = [sim.start()]
    while not sim.finished:
        messages.append(sim.proceed(scheduler.handle(messages[-1])))
    return messages


def test_normal_run_relays_both_ways(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_BATSIM_MODE", "normal")
    with _sim(tmp_path) as sim:
        messages = _drive(sim)
    assert sim.returncode == 0
    kinds = [[e.type for e in m.events] for m in messages]
    assert kinds == [
        [SIMULATION_BEGINS],
        [JOB_SUBMITTED, NO_MORE_STATIC_JOB_TO_SUBMIT],
        [JOB_COMPLETED],
        [SIMULATION_ENDS],
    ]
    assert [m.now for m in messages] == [0.0, 0.0, 5.0, 5.0]
    job = messages[1].events[0].data["job"]
    assert (job.id, job.name, job.res, job.subtime, job.profile.cpu) == (
        "62b680!job0",
        "job0",
        1,
        0.0,
        5e9,
    )
    done = messages[2].events[0].data
    assert done["job"] is job and done["alloc"] == (0,)
    # Batsim's flags: -p, -w, -e the export prefix, -s the bound endpoint, -E for energy.
    argv = json.loads((tmp_path / "out" / "run_argv.json").read_text())
    assert argv[:6] == [
        "-p",
        str(tmp_path / "platform.xml"),
        "-w",
        str(tmp_path / "workload.json"),
        "-e",
        str(tmp_path / "out" / "run"),
    ]
    assert argv[6] == "-s" and argv[7].startswith("tcp://127.0.0.1:") and argv[8] == "-E"
    assert argv[7] == sim.endpoint
    # The scheduler's replies as the fake saw them: empty, EXECUTE_JOB, empty, empty.
    replies = json.loads((tmp_path / "out" / "run_replies.json").read_text())
    assert [len(r["events"]) for r in replies] == [0, 1, 0, 0]
    assert replies[2]["now"] == 5.0


def test_each_run_takes_its_own_free_port(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_BATSIM_MODE", "normal")
    first, second = _sim(tmp_path), _sim(tmp_path)
    try:
        first.start()
        second.start()
        assert first.endpoint != second.endpoint
    finally:
        first.stop()
        second.stop()
    assert first.returncode is not None and second.returncode is not None


def test_batsim_exiting_early_reports_code_and_output(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_BATSIM_MODE", "exit")
    sim = _sim(tmp_path)
    with pytest.raises(BatsimExitedError) as info:  # noticed by polling, not by the timeout
        sim.start()
    assert info.value.returncode == 3
    assert "exited with code 3 before the simulation ended" in str(info.value)
    assert "fatal: simulated Batsim failure" in info.value.output_tail
    assert sim.returncode == 3


def test_silent_batsim_times_out_and_is_stopped(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_BATSIM_MODE", "silent")
    sim = _sim(tmp_path, timeout=0.5)
    with pytest.raises(PeerTimeoutError, match="no message from .* within 0.5 s"):
        sim.start()
    assert sim.returncode is not None  # the fake was terminated, not left sleeping


def test_garbage_is_a_protocol_error(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_BATSIM_MODE", "garbage")
    sim = _sim(tmp_path)
    with pytest.raises(ProtocolError, match="not a JSON message.*Batsim 5"):
        sim.start()
    assert sim.returncode is not None


def test_non_zero_exit_after_the_end(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_BATSIM_MODE", "bad_exit")
    sim = _sim(tmp_path)
    _drive(sim)
    with pytest.raises(BatsimExitedError, match="exited with code 5 after the simulation"):
        sim.close()
    assert sim.returncode == 5


def test_missing_executable(tmp_path: Path) -> None:
    with pytest.raises(BatsimNotFoundError, match="not found on PATH.*--batsim PATH"):
        _sim(tmp_path, "batsim-does-not-exist-here").start()
    with pytest.raises(BatsimNotFoundError, match="does not exist"):
        find_executable(tmp_path / "nowhere" / "batsim")
    plain = tmp_path / "not-executable"
    plain.write_text("#!/bin/sh\n")
    with pytest.raises(BatsimNotFoundError, match="is not an executable file"):
        find_executable(plain)


def test_endpoint_in_use(tmp_path: Path) -> None:
    context = zmq.Context()
    taken = context.socket(zmq.REP)
    try:
        port = taken.bind_to_random_port("tcp://127.0.0.1")
        sim = _sim(tmp_path, endpoint=f"tcp://127.0.0.1:{port}")
        with pytest.raises(EndpointInUseError, match="address already in use"):
            sim.start()
        assert sim.process is None  # nothing was started
    finally:
        taken.close(linger=0)
        context.term()


def test_proceed_after_the_end_and_close_before_it(tmp_path: Path, monkeypatch) -> None:
    from hdeeprm.errors import SimulationError

    monkeypatch.setenv("FAKE_BATSIM_MODE", "normal")
    sim = _sim(tmp_path)
    sim.start()
    with pytest.raises(SimulationError, match="before SIMULATION_ENDS"):
        sim.close()
    assert sim.returncode is not None
    with pytest.raises(SimulationError, match="before start"):
        _sim(tmp_path).proceed([])
