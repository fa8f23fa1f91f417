"""The same experiment in-process and over ZeroMQ (hdeeprm's decision system as a Batsim client
of ``hdeeprm-sim``) gives byte-identical outputs; ``hdeeprm-launch --simulator batsim``."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from protocol_helpers import fake_batsim_exe, hdeeprm_sim_exe

from hdeeprm.cli.launch import main
from hdeeprm.experiment.run import run_classic
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import load_options
from hdeeprm.protocol.experiment import run_classic_batsim

#: A small heterogeneous cluster (52 cores of three node types) under a 150-job Lublin
#: workload of up to 32 cores: queues build up, so policies and P-states matter.
PLATFORM = {
    "clusters": [
        {
            "id": "mini",
            "nodes": [
                {"type": "Bullx B500 (0)", "number": 2},
                {"type": "Dell R720", "number": 1},
                {"type": "Bullx B505 (1)", "number": 1},
            ],
            "local_links": [{"type": "InfiniBand QDR", "latency": "1.5us"}],
        }
    ],
    "global_links": [{"type": "Gigabit Ethernet 1000BASE-T", "latency": "125us"}],
}
OUTPUTS = (
    "out_jobs.csv",
    "out_schedule.csv",
    "out_machine_states.csv",
    "out_pstate_changes.csv",
    "out_consumed_energy.csv",
    "hdeeprm_mem_bw_overutilization.csv",
    "insights.log",
)


def _options(folder: Path, pair: str = "random-random") -> Path:
    (folder / "mini.json").write_text(json.dumps(PLATFORM))
    doc = {
        "seed": 3,
        "platform_file_path": "mini.json",
        "synthetic_workload": {"model": "lublin", "nb_jobs": 150, "nb_cores": 32},
        "pybatsim": {
            "log_level": "INFO",
            "env": {"objective": "avg_job_slowdown"},
            "agent": {"type": "CLASSIC", "policy_pair": pair},
        },
    }
    path = folder / "options.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize(
    "pair",
    ["random-random", "shortest-high_gflops", "low_mem_bw-high_mem_bw", "first-low_power"],
)
def test_in_process_and_protocol_runs_are_identical(tmp_path: Path, pair: str) -> None:
    options = load_options(_options(tmp_path, pair))
    inputs = prepare_inputs(options, tmp_path / "inputs", log=lambda _: None)
    embedded = run_classic(inputs, tmp_path / "embedded")
    remote = run_classic_batsim(
        inputs, tmp_path / "remote", executable=hdeeprm_sim_exe(tmp_path), timeout=20
    )
    for name in OUTPUTS:
        assert (tmp_path / "embedded" / name).read_bytes() == (
            tmp_path / "remote" / name
        ).read_bytes(), name
    jobs = pd.read_csv(tmp_path / "remote" / "out_jobs.csv")
    assert len(jobs) == 150 and (jobs["final_state"] == "COMPLETED_SUCCESSFULLY").all()
    assert (jobs["waiting_time"] > 0).any()  # there was a queue to decide on
    # The summary figures agree (the remote ones are read back from Batsim's CSV files,
    # written with 6 decimals).
    a, b = embedded.metrics, remote.metrics
    assert (b.nb_jobs, b.nb_completed, b.decisions) == (a.nb_jobs, a.nb_completed, a.decisions)
    assert b.makespan == pytest.approx(a.makespan, abs=1e-6)
    assert b.energy_j == pytest.approx(a.energy_j, rel=1e-9)
    assert b.mean_waiting == pytest.approx(a.mean_waiting, abs=1e-6)
    assert b.over_subscriptions == a.over_subscriptions
    assert (tmp_path / "remote" / "batsim.log").is_file()
    assert not list((tmp_path / "remote").glob(".batsim-*"))  # working folder cleaned up


def test_launch_with_batsim_option(tmp_path: Path) -> None:
    options = _options(tmp_path, "shortest-high_gflops")
    runner = CliRunner()
    embedded = runner.invoke(main, [str(options), "-o", str(tmp_path / "a"), "-q"])
    remote = runner.invoke(
        main,
        [str(options), "-o", str(tmp_path / "b"), "-q", "--simulator", "batsim"]
        + ["--batsim", str(hdeeprm_sim_exe(tmp_path)), "--batsim-timeout", "20"],
    )
    assert embedded.exit_code == 0, embedded.output
    assert remote.exit_code == 0, remote.output
    assert "== shortest-high_gflops ==" in remote.output
    jobs_a = (tmp_path / "a" / "out_jobs.csv").read_bytes()
    assert jobs_a == (tmp_path / "b" / "out_jobs.csv").read_bytes()


def test_launch_reports_batsim_failures(tmp_path: Path, monkeypatch) -> None:
    options = _options(tmp_path)
    runner = CliRunner()
    missing = runner.invoke(
        main, [str(options), "-o", str(tmp_path / "m"), "--batsim", str(tmp_path / "nope")]
    )
    assert missing.exit_code == 2 and "does not exist" in missing.output
    assert not (tmp_path / "m" / "out_jobs.csv").exists()

    monkeypatch.setenv("FAKE_BATSIM_MODE", "exit")
    crashed = runner.invoke(
        main,
        [str(options), "-o", str(tmp_path / "c"), "-q", "--batsim", str(fake_batsim_exe(tmp_path))],
    )
    assert crashed.exit_code == 2
    assert "exited with code 3" in crashed.output and "simulated Batsim failure" in crashed.output
    assert not (tmp_path / "c" / "out_jobs.csv").exists()  # no partial outputs
    log = tmp_path / "c" / "batsim.log"
    assert "simulated Batsim failure" in log.read_text()
    # The message names the log where it is after the run, not the removed working folder.
    assert f"full output in {log}" in " ".join(crashed.output.split())
    assert not list((tmp_path / "c").glob(".batsim-*"))

    usage = runner.invoke(main, [str(options), "--simulator", "embedded", "--batsim", "x"])
    assert usage.exit_code == 2 and "--batsim is for --simulator batsim" in usage.output


def test_learning_agents_are_refused_on_batsim(tmp_path: Path) -> None:
    options = _options(tmp_path)
    doc = json.loads(options.read_text())
    doc["pybatsim"]["agent"] = {"type": "LEARNING", "run": "train"}
    options.write_text(json.dumps(doc))
    result = CliRunner().invoke(main, [str(options), "--simulator", "batsim", "-a", "x.py"])
    assert result.exit_code == 2 and "CLASSIC agents only" in result.output


def test_batsim_timing_under_the_workload_manager(tmp_path: Path) -> None:
    # hdeeprm-sim --batsim-timing under hdeeprm's workload manager, which switches cores out of
    # P3 (speed 0) and between P-states while jobs run. The timing model times a job at its
    # speed when it starts; a job sped up afterwards once ran SimGrid's modelled clock ahead
    # to that first end, past later submissions (IndexError in the submitter). Now it ends
    # at the engine's instant: every job runs, as in-process.
    options = load_options(_options(tmp_path, "random-random"))
    inputs = prepare_inputs(options, tmp_path / "inputs", log=lambda _: None)
    exe = hdeeprm_sim_exe(tmp_path, batsim_timing=True)
    run_classic_batsim(inputs, tmp_path / "remote", executable=exe, timeout=20)
    jobs = pd.read_csv(tmp_path / "remote" / "out_jobs.csv")
    assert len(jobs) == 150 and (jobs["final_state"] == "COMPLETED_SUCCESSFULLY").all()
    assert (jobs["finish_time"] >= jobs["starting_time"]).all()
