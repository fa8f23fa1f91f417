"""``hdeeprm-launch --simulator batsim`` on a real Batsim reproduces the embedded engine: same
allocations and final states, times within 1 us (the generated links have latency 0; Batsim
prints 6 decimals and SimGrid's ptask accounting of a job re-paced by P-state changes can end
it a fraction of a microsecond apart, which flips the last printed digit of a few jobs),
energy within 1e-9 relative (marked ``batsim``)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from trace_files import PLATFORM_EXAMPLES, find, trace_path

from benchmarks.fidelity.batsim_runs import jobs_differences
from hdeeprm.cli.launch import main

pytestmark = pytest.mark.batsim


def _options(folder: Path, pair: str, workload: dict) -> Path:
    doc = {
        "seed": 7,
        "platform_file_path": str(PLATFORM_EXAMPLES / "gaia.json"),
        **workload,
        "pybatsim": {
            "log_level": "WARNING",
            "env": {"objective": "avg_job_slowdown"},
            "agent": {"type": "CLASSIC", "policy_pair": pair},
        },
    }
    path = folder / "options.json"
    path.write_text(json.dumps(doc))
    return path


SYNTHETIC = {"synthetic_workload": {"model": "lublin", "nb_jobs": 400, "nb_cores": 1024}}
GAIA = {
    "workload_file_path": str(find("UniLu-Gaia-2014-1.swf.gz") or "UniLu-Gaia-2014-1.swf.gz"),
    "nb_jobs": 400,
    "start_job": 4,
}


@pytest.mark.parametrize(
    ("pair", "workload"),
    [
        ("shortest-high_gflops", SYNTHETIC),
        ("first-low_power", SYNTHETIC),
        ("random-random", SYNTHETIC),
        ("shortest-high_gflops", GAIA),
    ],
    ids=["lublin-shortest-high_gflops", "lublin-first-low_power", "lublin-random", "gaia"],
)
def test_launch_on_batsim_matches_embedded(
    tmp_path: Path, batsim_exe: Path, pair: str, workload: dict
) -> None:
    if workload is GAIA:
        trace_path("UniLu-Gaia-2014-1.swf.gz")  # skips, saying how to get it, when absent
    options = _options(tmp_path, pair, workload)
    runner = CliRunner()
    embedded = runner.invoke(main, [str(options), "-o", str(tmp_path / "e"), "-q"])
    real = runner.invoke(
        main, [str(options), "-o", str(tmp_path / "b"), "-q", "--batsim", str(batsim_exe)]
    )
    assert embedded.exit_code == 0, embedded.output
    assert real.exit_code == 0, real.output
    e, b = tmp_path / "e", tmp_path / "b"
    assert jobs_differences(b / "out_jobs.csv", e / "out_jobs.csv", time_tol=1e-6) == {}
    jobs = pd.read_csv(b / "out_jobs.csv")
    assert len(jobs) == 400
    if workload is SYNTHETIC:
        assert (jobs["waiting_time"] > 0).any()  # there was a queue to decide on
    sched_b, sched_e = pd.read_csv(b / "out_schedule.csv"), pd.read_csv(e / "out_schedule.csv")
    counts = ["nb_jobs_success", "nb_jobs_killed", "nb_machine_switches"]
    if workload is SYNTHETIC:
        # On the trace, jobs submitted in the same second reach the workload manager in one
        # message here and in two on Batsim (see docs/batsim.md, message grouping), so it
        # groups their P-state changes differently: same changes, other grouping.
        counts.append("nb_grouped_switches")
    for column in counts:
        assert sched_b[column][0] == sched_e[column][0], column
    assert sched_b["makespan"][0] == pytest.approx(sched_e["makespan"][0], abs=1.5e-6)
    energy_b, energy_e = sched_b["consumed_joules"][0], sched_e["consumed_joules"][0]
    assert energy_b == pytest.approx(energy_e, rel=1e-9)
    # Same P-state changes, at the same times to the microsecond (Batsim's internal messages
    # cost SimGrid's loopback 1e-10 s each: its changes at t = 0 are logged at 4e-10...).
    pst_b = pd.read_csv(b / "out_pstate_changes.csv")
    pst_e = pd.read_csv(e / "out_pstate_changes.csv")
    if workload is not SYNTHETIC:
        return
    assert pst_b[["machine_id", "new_pstate"]].equals(pst_e[["machine_id", "new_pstate"]])
    # (both print it with %g, 6 significant digits)
    assert ((pst_b["time"] - pst_e["time"]).abs() <= 1e-6 + 1e-5 * pst_e["time"]).all()
