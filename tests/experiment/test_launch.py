"""hdeeprm-launch end to end on the thesis 5.4.1 scenario, with figures worked out by hand.

Learning platform (thesis 5.4.1): one node, processor A (2 cores, 4 GFLOPS/core, 80 W, 32 GB/s)
and processor B (2 cores, 4.4 GFLOPS/core, 100 W, 32 GB/s). Reference speed = mean peak =
(4 + 4 + 4.4 + 4.4) / 4 = 4.2 GFLOPS. Two one-core jobs at t = 0 needing 24 GB/s each and
5 s of work at the reference speed: cpu = 5 x 4.2e9 = 21e9 flops.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from hdeeprm.cli.launch import main
from hdeeprm.errors import InputError
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import load_options

REPO = Path(__file__).resolve().parents[2]
LEARNING_PLATFORM = REPO / "platform_examples" / "learning.json"


def _workload(path: Path) -> Path:
    profile = {
        "type": "parallel_homogeneous",
        "cpu": 21e9,
        "com": 0,
        "req_time": 5,
        "req_ops": 21e9,
        "mem": 1000,
        "mem_bw": 24,
    }
    doc = {
        "nb_res": 4,
        "jobs": [
            {"id": 1, "subtime": 0, "res": 1, "profile": "p1"},
            {"id": 2, "subtime": 0, "res": 1, "profile": "p2"},
        ],
        "profiles": {"p1": profile, "p2": dict(profile)},
    }
    path.write_text(json.dumps(doc))
    return path


def _options(folder: Path, pair: str, **extra) -> Path:
    doc = {
        "seed": 7,
        "nb_resources": 4,
        "platform_file_path": str(LEARNING_PLATFORM),
        "pybatsim": {
            "log_level": "INFO",
            "env": {"objective": "makespan"},
            "agent": {"type": "CLASSIC", "policy_pair": pair},
        },
    }
    doc.update(extra)
    path = folder / "options.json"
    path.write_text(json.dumps(doc))
    return path


def _launch(tmp_path: Path, pair: str) -> pd.DataFrame:
    options = _options(tmp_path, pair)
    workload = _workload(tmp_path / "custom.json")
    result = CliRunner().invoke(
        main, [str(options), "-cw", str(workload), "-o", str(tmp_path / "run"), "-q"]
    )
    assert result.exit_code == 0, result.output
    assert f"== {pair} ==" in result.output
    jobs = pd.read_csv(tmp_path / "run" / "out_jobs.csv").sort_values("job_id")
    return jobs.reset_index(drop=True)


@pytest.mark.parametrize(
    ("pair", "finish", "cores"),
    [
        # Both jobs on processor B (highest peak): 48 GB/s > 32 -> both in P1 at 0.75 x 4.4 =
        # 3.3 GFLOPS: 21e9 / 3.3e9 = 6.3636... s.
        ("shortest-high_gflops", (21 / 3.3, 21 / 3.3), ("2", "3")),
        # Both on processor A (lowest watts per core, 40 W < 50 W): P1 at 3 GFLOPS -> 7 s.
        ("shortest-low_power", (7.0, 7.0), ("0", "1")),
        # Spread: first pick ties at 32 GB/s free -> lowest id (core 0, A); then B has 32 free
        # against A's 8 -> core 2. A job: 21 / 4 = 5.25 s; B job: 21 / 4.4 = 4.7727... s.
        ("shortest-high_mem_bw", (5.25, 21 / 4.4), ("0", "2")),
    ],
)
def test_thesis_5_4_scenario_completion_times(tmp_path: Path, pair, finish, cores) -> None:
    jobs = _launch(tmp_path, pair)
    assert jobs["finish_time"].tolist() == pytest.approx(list(finish), rel=1e-6)
    assert jobs["allocated_resources"].astype(str).tolist() == list(cores)
    assert (jobs["final_state"] == "COMPLETED_SUCCESSFULLY").all()


def test_spreading_energy_by_hand(tmp_path: Path) -> None:
    _launch(tmp_path, "shortest-high_mem_bw")
    # [0, 4.7727): A core0 P0 40 W + core1 P2 10 W; B core2 P0 50 W + core3 P2 12.5 W = 112.5 W
    # [4.7727, 5.25): B idle -> P3 2 x 2.5 W; A unchanged 50 W -> 55 W
    t1 = 21 / 4.4
    expected = 112.5 * t1 + 55.0 * (5.25 - t1)
    schedule = pd.read_csv(tmp_path / "run" / "out_schedule.csv")
    assert schedule["consumed_joules"].iloc[0] == pytest.approx(expected, rel=1e-6)
    assert schedule["makespan"].iloc[0] == pytest.approx(5.25)


def test_run_folder_contents_and_insights(tmp_path: Path) -> None:
    _launch(tmp_path, "shortest-high_gflops")
    run = tmp_path / "run"
    for name in (
        "platform.xml",
        "res_hierarchy.json",
        "job_limits.json",
        "insights.log",
        "out_jobs.csv",
        "out_schedule.csv",
        "out_machine_states.csv",
        "out_pstate_changes.csv",
        "out_consumed_energy.csv",
        "hdeeprm_mem_bw_overutilization.csv",
    ):
        assert (run / name).is_file(), name
    assert not list(run.glob(".tmp-*")), "temporary files left behind"
    assert "decision" in (run / "insights.log").read_text()
    overuse = pd.read_csv(run / "hdeeprm_mem_bw_overutilization.csv")
    # Processor 1 (B) over-subscribed from 0 until both jobs end at 21 / 3.3 s.
    assert overuse["processor_id"].tolist() == [1]
    assert overuse["end"].iloc[0] == pytest.approx(21 / 3.3)


def test_bad_options_exit_2_with_the_key(tmp_path: Path) -> None:
    options = _options(tmp_path, "shortest-high_gflops")
    doc = json.loads(options.read_text())
    doc["pybatsim"]["env"]["objective"] = "throughput"
    options.write_text(json.dumps(doc))
    result = CliRunner().invoke(main, [str(options)])
    assert result.exit_code == 2
    assert "pybatsim.env.objective" in result.output and "allowed values" in result.output


def test_agent_file_with_classic_agent_is_refused(tmp_path: Path) -> None:
    options = _options(tmp_path, "shortest-high_gflops")
    result = CliRunner().invoke(main, [str(options), "-a", "agent.py"])
    assert result.exit_code == 2
    assert "-a is only for LEARNING agents" in result.output


def test_prepare_inputs_generates_reuses_and_regenerates(tmp_path: Path) -> None:
    lines: list[str] = []
    options_path = _options(tmp_path, "shortest-high_gflops", synthetic_workload={"nb_jobs": 30})
    first = prepare_inputs(load_options(options_path), tmp_path / "run", log=lines.append)
    assert first.generated == [
        "platform.xml",
        "res_hierarchy.json",
        "workload.json",
        "job_limits.json",
    ]
    assert len(first.workload.jobs) == 30
    again = prepare_inputs(load_options(options_path), tmp_path / "run", log=lines.append)
    assert again.generated == []
    # Changing nb_jobs must not silently reuse the old workload.
    options_path = _options(tmp_path, "shortest-high_gflops", synthetic_workload={"nb_jobs": 12})
    third = prepare_inputs(load_options(options_path), tmp_path / "run", log=lines.append)
    assert third.generated == ["workload.json", "job_limits.json"]
    assert len(third.workload.jobs) == 12
    assert any("parameters changed" in line for line in lines)


def test_nb_resources_must_match_the_platform(tmp_path: Path) -> None:
    options_path = _options(
        tmp_path, "shortest-high_gflops", nb_resources=64, synthetic_workload={"nb_jobs": 5}
    )
    with pytest.raises(InputError, match="nb_resources is 64 but learning.json has 4 cores"):
        prepare_inputs(load_options(options_path), tmp_path / "run")


def test_classic_runs_are_deterministic(tmp_path: Path) -> None:
    options = _options(tmp_path, "random-random", synthetic_workload={"nb_jobs": 40})
    texts = []
    for run in ("a", "b"):
        result = CliRunner().invoke(main, [str(options), "-o", str(tmp_path / run), "-q"])
        assert result.exit_code == 0, result.output
        texts.append((tmp_path / run / "out_jobs.csv").read_bytes())
    assert texts[0] == texts[1]
