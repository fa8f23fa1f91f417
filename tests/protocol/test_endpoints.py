"""Malformed ZeroMQ endpoints: one clear error (exit code 2) before any process or file exists,
on both sides of the bridge (``hdeeprm-sim -s`` and a classic run on Batsim)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from protocol_helpers import THESIS_XML

from hdeeprm.cli.sim import main as sim_main
from hdeeprm.errors import InputError
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import options_from_json
from hdeeprm.protocol.experiment import run_classic_batsim
from hdeeprm.protocol.transport import check_endpoint

REPO = Path(__file__).resolve().parents[2]

MALFORMED = [
    "garbage",
    "tcp://",
    "tcp://localhost",
    "tcp://localhost:notaport",
    "tcp://localhost:0",
    "tcp://localhost:70000",
    "tcp://local host:28000",
    "udp://127.0.0.1:28000",
    "ipc://",
    "://28000",
]


@pytest.mark.parametrize("endpoint", MALFORMED)
def test_check_endpoint_names_the_option(endpoint: str) -> None:
    with pytest.raises(InputError) as caught:
        check_endpoint(endpoint, "-s/--socket-endpoint")
    assert caught.value.where == "-s/--socket-endpoint"
    assert repr(endpoint) in str(caught.value) and "tcp://127.0.0.1:28000" in str(caught.value)


@pytest.mark.parametrize(
    "endpoint", ["tcp://127.0.0.1:28000", "tcp://localhost:1", "tcp://[::1]:5", "ipc:///tmp/x"]
)
def test_well_formed_endpoints_pass(endpoint: str) -> None:
    assert check_endpoint(endpoint, connect=True) == endpoint


def test_wildcards_only_for_binding() -> None:
    assert check_endpoint("tcp://*:28000") == "tcp://*:28000"
    with pytest.raises(InputError, match="only works for binding"):
        check_endpoint("tcp://*:28000", connect=True)


@pytest.mark.parametrize("endpoint", [*MALFORMED, "tcp://*:28000"])
def test_hdeeprm_sim_exits_2_without_output(tmp_path: Path, endpoint: str) -> None:
    (tmp_path / "platform.xml").write_text(THESIS_XML)
    (tmp_path / "workload.json").write_text(json.dumps({"nb_res": 2, "jobs": [], "profiles": {}}))
    result = CliRunner().invoke(
        sim_main,
        [
            "-p", str(tmp_path / "platform.xml"),
            "-w", str(tmp_path / "workload.json"),
            "-e", str(tmp_path / "out"),
            "-s", endpoint,
            "--timeout", "1",
        ],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "-s/--socket-endpoint" in result.output and "malformed" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["platform.xml", "workload.json"]


def test_classic_batsim_run_refuses_before_starting(tmp_path: Path) -> None:
    options = options_from_json(
        {
            "seed": 1,
            "platform_file_path": str(REPO / "platform_examples" / "learning.json"),
            "pybatsim": {"agent": {"type": "CLASSIC", "policy_pair": "first-high_gflops"}},
        }
    )
    inputs = prepare_inputs(
        options,
        tmp_path / "run",
        custom_workload=REPO / "thesis_experiments" / "learning" / "workload.json",
    )
    before = sorted(p.name for p in (tmp_path / "run").iterdir())
    marker = tmp_path / "started"
    executable = tmp_path / "batsim"
    executable.write_text(f"#!/bin/sh\ntouch {marker}\n")
    executable.chmod(0o755)
    with pytest.raises(InputError, match="malformed ZeroMQ endpoint 'tcp://h:port'"):
        run_classic_batsim(inputs, executable=executable, endpoint="tcp://h:port")
    assert not marker.exists()  # no process was started
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == before
