"""hdeeprm-clean removes exactly the files hdeeprm generated, and nothing else."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from hdeeprm.analysis import runfolder
from hdeeprm.analysis.clean import execute, plan_clean
from hdeeprm.cli.clean import main

GENERATED = [
    "out_jobs.csv",
    "out_schedule.csv",
    "out_machine_states.csv",
    "out_pstate_changes.csv",
    "out_consumed_energy.csv",
    "insights.log",
    "hdeeprm_mem_bw_overutilization.csv",
    "training_log.csv",
    "platform.xml",
    "res_hierarchy.json",
    "job_limits.json",
    ".hdeeprm_inputs.json",
    ".tmp-out_jobs.csv-x1y2",
]
USER = ["options.json", "notes.txt", "model.pt", "workload.json", "out_jobs.csv.bak"]


def _folder(root: Path) -> Path:
    """A run folder whose manifest records every generated input except workload.json
    (as after ``-cw``: the workload.json there is the user's hand-written one)."""
    root.mkdir()
    for name in GENERATED + USER:
        (root / name).write_text("x")
    manifest = {"platform.xml": {}, "res_hierarchy.json": {}, "job_limits.json": {}}
    (root / ".hdeeprm_inputs.json").write_text(json.dumps(manifest))
    for k in range(2):
        (root / f"run_{k:03d}").mkdir()
        for name in ("out_jobs.csv", "insights.log", ".tmp-insights-abc"):
            (root / f"run_{k:03d}" / name).write_text("x")
    (root / "run_001" / "plot.png").write_text("mine")
    (root / "models").mkdir()
    (root / "models" / "out_jobs.csv").write_text("not a run_NNN folder: untouched")
    return root


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def test_plan_lists_exactly_the_generated_files(tmp_path: Path) -> None:
    root = _folder(tmp_path / "run")
    plan = plan_clean(root)
    expected = set(GENERATED) | {
        f"run_{k:03d}/{n}"
        for k in range(2)
        for n in ("out_jobs.csv", "insights.log", ".tmp-insights-abc")
    }
    assert set(plan.describe()) == expected | {"run_000/"}
    kept = {str(p.relative_to(root)) for p, _ in plan.kept}
    assert kept == {"workload.json", "run_001"}
    assert _tree(root) >= expected  # planning removed nothing


def test_execute_keeps_user_files(tmp_path: Path) -> None:
    root = _folder(tmp_path / "run")
    before = _tree(root)
    assert execute(plan_clean(root)) == len(GENERATED) + 6 + 1
    assert _tree(root) == {
        *USER,
        "run_001",
        "run_001/plot.png",
        "models",
        "models/out_jobs.csv",
    }
    assert before > _tree(root)
    assert not plan_clean(root)  # nothing left to clean


def test_without_manifest_inputs_are_kept(tmp_path: Path) -> None:
    root = tmp_path / "hand"
    root.mkdir()
    for name in ("platform.xml", "workload.json", "out_jobs.csv"):
        (root / name).write_text("x")
    execute(plan_clean(root))
    assert _tree(root) == {"platform.xml", "workload.json"}


def test_cli_confirm_dry_run_and_yes(tmp_path: Path) -> None:
    root = _folder(tmp_path / "run")
    runner = CliRunner()
    result = runner.invoke(main, [str(root), "--dry-run"])
    assert result.exit_code == 0 and "dry run: nothing removed" in result.output
    assert (
        "  out_jobs.csv" in result.output
        and "options.json" not in result.output.split("generated file")[1]
    )
    result = runner.invoke(main, [str(root)], input="n\n")
    assert result.exit_code == 1 and (root / "out_jobs.csv").exists()
    result = runner.invoke(main, [str(root)], input="y\n")
    assert result.exit_code == 0 and not (root / "out_jobs.csv").exists()
    assert (root / "options.json").exists() and (root / "model.pt").exists()
    result = runner.invoke(main, [str(root), "--yes"])
    assert result.exit_code == 0 and "nothing to clean" in result.output
    result = runner.invoke(main, [str(tmp_path / "absent"), "--yes"])
    assert result.exit_code == 2 and "does not exist" in result.output


def test_file_names_match_the_writers() -> None:
    """The literal names used by the analysis tools are the ones the run code writes."""
    from hdeeprm.analysis.metrics import BOUNDED_SLOWDOWN_TAU
    from hdeeprm.experiment import run
    from hdeeprm.inputs import prepare as inputs
    from hdeeprm.training import LOG_COLUMNS, LOG_FILE

    assert runfolder.GENERATED_INPUTS == (
        inputs.PLATFORM_XML_FILE,
        inputs.HIERARCHY_FILE,
        inputs.WORKLOAD_FILE,
        inputs.JOB_LIMITS_FILE,
    )
    assert runfolder.MANIFEST_FILE == inputs.MANIFEST_FILE
    assert runfolder.INSIGHTS_FILE == run.INSIGHTS_FILE
    assert runfolder.OVERUTILIZATION_FILE == run.OVERUTILIZATION_FILE
    assert runfolder.TRAINING_LOG_FILE == LOG_FILE
    assert tuple(LOG_COLUMNS) == runfolder.TRAINING_COLUMNS
    assert BOUNDED_SLOWDOWN_TAU == run.BOUNDED_SLOWDOWN_TAU
