"""hdeeprm-sweep: grid expansion, validation, runs checked by hand, resume and failures.

Window runs use the learning platform (thesis 5.4.1): processor A, 2 cores at 4 GFLOPS, and
processor B, 2 cores at 4.4 GFLOPS, reference speed (4 + 4 + 4.4 + 4.4) / 4 = 4.2 GFLOPS.
The SWF trace below has three one-core jobs running 10 s, submitted at 0, 5 and 20 s. The
window {start_job: 1, nb_jobs: 2} keeps jobs 2 and 3, shifted by the first kept submission
(5 s): submitted at 0 and 15 s. They never overlap, so on a 4.4 GFLOPS core (high_gflops) each
takes 10 x 4.2 / 4.4 s and the makespan is 15 + 42 / 4.4 = 24.5454... s; on a 4 GFLOPS core
(low_power) each takes 10.5 s: makespan 25.5 s, mean waiting 0.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from sweep_helpers import (
    LEARNING_PLATFORM,
    REPO,
    TRACE,
    deterministic,
    folder_files,
    synthetic_sweep,
    trace_sweep,
)
from sweep_helpers import write_json as _write

from hdeeprm.analysis.metrics import summarize_run
from hdeeprm.cli.sweep import main
from hdeeprm.errors import InputError
from hdeeprm.experiment.run import run_classic
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import load_options
from hdeeprm.sweep import (
    RESULT_FILE,
    ProcessBackend,
    SerialBackend,
    load_sweep,
    read_result,
    results_frame,
    run_sweep,
    write_table,
)
from hdeeprm.sweep.table import _summary


# --- expansion and validation -------------------------------------------------------------
def test_expansion_order_names_and_shared_inputs(tmp_path: Path) -> None:
    path = trace_sweep(
        tmp_path,
        ["shortest-high_gflops", "shortest-low_power"],
        window=[{"start_job": 0, "nb_jobs": 3}, {"start_job": 1, "nb_jobs": 2}],
        seed=[1, 2],
    )
    sweep = load_sweep(path)
    assert sweep.output_dir == tmp_path / "sweep"
    assert sweep.axes == ("window", "seed", "policy_pair")
    assert [r.run_id for r in sweep.runs[:3]] == [
        "window=0-3__seed=1__pair=shortest-high_gflops",
        "window=0-3__seed=1__pair=shortest-low_power",
        "window=0-3__seed=2__pair=shortest-high_gflops",
    ]
    assert len(sweep.runs) == 8
    # Inputs depend on window and seed, not on the pair: 4 folders, 2 runs each.
    assert len(sweep.inputs_dirs) == 4
    assert sweep.runs[0].inputs_dir == sweep.runs[1].inputs_dir
    assert sweep.runs[0].inputs_dir == str(tmp_path / "sweep" / "inputs" / "window=0-3__seed=1")
    run = sweep.runs[-1]
    assert run.options["start_job"] == 1 and run.options["nb_jobs"] == 2
    assert run.options["seed"] == 2
    assert run.options["workload_file_path"] == str(tmp_path / "tiny.swf")
    assert run.load_options().agent.policy_pair == "shortest-low_power"


def test_all_pairs(tmp_path: Path) -> None:
    path = trace_sweep(tmp_path, ["shortest-high_gflops"])
    doc = json.loads(path.read_text())
    doc["grid"]["policy_pair"] = "all"
    _write(path, doc)
    assert len(load_sweep(path).runs) == 36


@pytest.mark.parametrize(
    ("grid", "where", "expected"),
    [
        ({"policy_pair": ["shortest-fast"]}, "grid.policy_pair[0]", "JOBPOLICY-COREPOLICY"),
        ({"seeds": [1]}, "grid.seeds", "unknown axis 'seeds'"),
        ({"seed": []}, "grid.seed", "non-empty list"),
        ({"seed": [1, -2]}, "grid.seed[1]", "integer >= 0"),
        ({"window": [{"start": 1}]}, "grid.window[0].start", "allowed keys: start_job, nb_jobs"),
        ({"window": [{"nb_jobs": 0}]}, "grid.window[0].nb_jobs", "integer >= 1"),
        ({"platform": ["nowhere.json"]}, "grid.platform[0]", "file not found"),
        ({"objective": ["makespan"]}, "grid.objective", "only change LEARNING runs"),
        ({"seed": [1, 1]}, "grid.seed[1]", "same run-folder name"),
    ],
)
def test_grid_errors_name_the_key(tmp_path: Path, grid: dict, where: str, expected: str) -> None:
    trace_sweep(tmp_path, ["shortest-high_gflops"])
    path = _write(tmp_path / "sweep.json", {"options": "options.json", "grid": grid})
    with pytest.raises(InputError) as err:
        load_sweep(path)
    assert err.value.where == where
    assert expected in err.value.message
    assert err.value.path == str(path)


def test_file_errors(tmp_path: Path) -> None:
    trace_sweep(tmp_path, ["shortest-high_gflops"])
    bad = _write(tmp_path / "a.json", {"options": "options.json", "grid": {}, "extra": 1})
    with pytest.raises(InputError, match="unknown key 'extra'"):
        load_sweep(bad)
    missing = _write(tmp_path / "b.json", {"grid": {"seed": [1]}})
    with pytest.raises(InputError) as err:
        load_sweep(missing)
    assert err.value.where == "options"
    inline = _write(
        tmp_path / "c.json",
        {
            "options": {"seed": 1, "platform_file_path": str(LEARNING_PLATFORM), "pybatsim": {}},
            "grid": {"seed": [1]},
        },
    )
    with pytest.raises(InputError) as err:
        load_sweep(inline)
    assert err.value.where == "options.pybatsim.agent"


def test_cli_user_mistake_exits_2_without_traceback(tmp_path: Path) -> None:
    trace_sweep(tmp_path, ["shortest-high_gflops"])
    path = _write(tmp_path / "sweep.json", {"options": "options.json", "grid": {"sed": [1]}})
    result = CliRunner().invoke(main, [str(path)])
    assert result.exit_code == 2
    assert "grid.sed: unknown axis 'sed'" in result.output
    assert "Traceback" not in result.output


# --- runs -----------------------------------------------------------------------------------
def test_window_runs_worked_by_hand(tmp_path: Path) -> None:
    path = trace_sweep(
        tmp_path,
        ["shortest-high_gflops", "shortest-low_power"],
        window=[{"start_job": 1, "nb_jobs": 2}],
    )
    result = CliRunner().invoke(main, [str(path), "-j", "1", "-q", "--no-plots"])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(tmp_path / "sweep" / "results.csv")
    assert list(table["status"]) == ["done", "done"]
    assert list(table["policy_pair"]) == ["shortest-high_gflops", "shortest-low_power"]
    assert list(table["start_job"]) == [1, 1] and list(table["nb_jobs"]) == [2, 2]
    assert list(table["jobs_ran"]) == [2, 2]
    assert table["makespan"][0] == pytest.approx(
        15 + 42 / 4.4, abs=1e-6
    )  # out_jobs.csv: 6 decimals
    assert table["makespan"][1] == pytest.approx(25.5, abs=1e-6)
    assert list(table["mean_waiting"]) == [0.0, 0.0]
    jobs = pd.read_csv(tmp_path / "sweep" / "runs" / table["run_id"][1] / "out_jobs.csv")
    assert sorted(jobs["job_id"].astype(str)) == ["2", "3"]


def test_rows_equal_single_launches(tmp_path: Path) -> None:
    """Every row holds what running the run's options alone gives."""
    sweep = load_sweep(synthetic_sweep(tmp_path))
    result = run_sweep(sweep, SerialBackend())
    table = results_frame(sweep, result.records)
    for run, row in zip(sweep.runs, table.itertuples()):
        options = load_options(Path(run.run_dir) / "options.json")
        inputs = prepare_inputs(options, tmp_path / "alone" / run.run_id)
        alone = run_classic(inputs, tmp_path / "alone" / run.run_id).metrics
        assert (tmp_path / "alone" / run.run_id / "out_jobs.csv").read_bytes() == (
            Path(run.run_dir) / "out_jobs.csv"
        ).read_bytes()
        # The table reads the Batsim outputs back, as hdeeprm-metrics (times to 1e-6 s).
        assert row.makespan == pytest.approx(alone.makespan, abs=1e-6)
        assert row.mean_waiting == pytest.approx(alone.mean_waiting, abs=1e-6)
        assert row.energy_j == pytest.approx(alone.energy_j, abs=1e-6)
        assert row.decisions == alone.decisions
        assert row.nb_completed == alone.nb_completed


def test_same_table_and_folders_on_serial_and_processes(tmp_path: Path) -> None:
    path = synthetic_sweep(tmp_path)
    serial = load_sweep(path, tmp_path / "serial")
    parallel = load_sweep(path, tmp_path / "processes")
    a = results_frame(serial, run_sweep(serial, SerialBackend()).records)
    b = results_frame(parallel, run_sweep(parallel, ProcessBackend(2)).records)
    pd.testing.assert_frame_equal(deterministic(a), deterministic(b))
    assert (a["status"] == "done").all()
    assert folder_files(tmp_path / "serial") == folder_files(tmp_path / "processes")


def test_resume_recomputes_only_unfinished_runs(tmp_path: Path) -> None:
    sweep = load_sweep(synthetic_sweep(tmp_path))
    first = run_sweep(sweep, SerialBackend())
    assert first.reused == 0 and not first.failed
    # Interrupted sweep: one run never finished (no result.json), another left half-written.
    lost = Path(sweep.runs[4].run_dir)
    (lost / RESULT_FILE).unlink()
    (lost / "out_jobs.csv").write_text("partial")
    stamps = {
        r.run_id: os.stat(Path(r.run_dir) / RESULT_FILE).st_mtime_ns
        for r in sweep.runs
        if r.run_id != sweep.runs[4].run_id
    }
    calls: list[str] = []

    class Counting(SerialBackend):
        def submit(self, fn, *args):  # type: ignore[no-untyped-def]
            calls.append(fn.__name__)
            return super().submit(fn, *args)

    again = run_sweep(load_sweep(tmp_path / "sweep.json"), Counting())
    assert again.reused == 5
    assert calls == ["prepare_task", "run_task"]
    for run_id, stamp in stamps.items():
        assert os.stat(Path(sweep.output_dir) / "runs" / run_id / RESULT_FILE).st_mtime_ns == stamp
    a = results_frame(sweep, first.records)
    b = results_frame(sweep, again.records)
    pd.testing.assert_frame_equal(deterministic(a), deterministic(b))
    # Changing the base options invalidates the finished runs they produced.
    doc = json.loads((tmp_path / "options.json").read_text())
    doc["synthetic_workload"]["nb_jobs"] = 50
    _write(tmp_path / "options.json", doc)
    changed = run_sweep(load_sweep(tmp_path / "sweep.json"), SerialBackend())
    assert changed.reused == 0
    assert all(r["metrics"]["jobs_ran"] == 50 for r in changed.records)


def test_failed_runs_are_reported_and_retried(tmp_path: Path) -> None:
    path = trace_sweep(tmp_path, ["shortest-high_gflops", "first-high_gflops"])
    (tmp_path / "broken.swf").write_text("1 0 0 10\nthis is not SWF\n")
    doc = json.loads(path.read_text())
    doc["grid"]["trace"] = ["tiny.swf", "broken.swf"]
    doc["grid"] = {"trace": doc["grid"].pop("trace"), **doc["grid"]}
    _write(path, doc)
    result = CliRunner().invoke(main, [str(path), "-j", "1", "--no-plots"])
    assert result.exit_code == 1, result.output
    assert "2 of 4 run(s) failed" in result.output
    table = pd.read_csv(tmp_path / "sweep" / "results.csv")
    assert [Path(t).name for t in table["trace"]] == ["tiny.swf"] * 2 + ["broken.swf"] * 2
    assert list(table["status"]) == ["done", "done", "failed", "failed"]
    assert table["error"][2].startswith("inputs: InputError: ")
    assert "broken.swf" in table["error"][2]
    assert list(table["jobs_ran"][:2]) == [3, 3]
    # Fix the trace: only the failed runs run again.
    (tmp_path / "broken.swf").write_text(TRACE)
    finished = sorted((tmp_path / "sweep" / "runs").glob(f"*/{RESULT_FILE}"))
    stamps = [os.stat(f).st_mtime_ns for f in finished]
    result = CliRunner().invoke(main, [str(path), "-j", "1", "--no-plots"])
    assert result.exit_code == 0, result.output
    assert len(finished) == 2 and [os.stat(f).st_mtime_ns for f in finished] == stamps
    table = pd.read_csv(tmp_path / "sweep" / "results.csv")
    assert list(table["status"]) == ["done"] * 4
    assert table["error"].isna().all()


def test_failing_run_writes_error_and_spares_the_others(tmp_path: Path) -> None:
    """A run that fails while simulating (its run folder is a file) does not stop the rest."""
    sweep = load_sweep(synthetic_sweep(tmp_path, nb_jobs=20))
    blocked = Path(sweep.runs[1].run_dir)
    blocked.parent.mkdir(parents=True)
    blocked.write_text("in the way")
    result = run_sweep(sweep, SerialBackend())
    assert [r["status"] for r in result.records] == ["done", "failed"] + ["done"] * 4
    assert result.records[1]["error"].startswith("FileExistsError")
    table = results_frame(sweep, result.records)
    written = write_table(table, sweep.output_dir)
    assert written[0].name == "results.csv"
    back = pd.read_csv(written[0])
    assert back["status"][1] == "failed" and back["error"][1].startswith("FileExistsError")


def test_plot_written(tmp_path: Path) -> None:
    path = trace_sweep(tmp_path, ["shortest-high_gflops", "shortest-low_power"])
    result = CliRunner().invoke(main, [str(path), "-j", "1", "-q"])
    assert result.exit_code == 0, result.output
    png = tmp_path / "sweep" / "metrics.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The plot is drawn from the records, which hold exactly what hdeeprm-metrics reads.
    sweep = load_sweep(path)
    for run in sweep.runs:
        record = read_result(run)
        assert _summary(sweep, record) == summarize_run(run.run_dir, run.run_id)


def test_learning_sweep_over_objectives(tmp_path: Path) -> None:
    """LEARNING runs: objectives are an axis; each run trains and saves its own model.

    Thesis 5.4.1 scenario (one decision per episode): the makespan objective's value is the
    makespan of the last episode's schedule, read back from the run's out_jobs.csv."""
    scenario = REPO / "thesis_experiments" / "learning"
    path = _write(
        tmp_path / "sweep.json",
        {
            "options": str(scenario / "options.json"),
            "custom_workload": str(scenario / "workload.json"),
            "agent_file": str(REPO / "agent_examples" / "reinforce.py"),
            "episodes": 2,
            "grid": {"objective": ["makespan", "energy_consumption"]},
        },
    )
    sweep = load_sweep(path)
    result = run_sweep(sweep, SerialBackend())
    table = results_frame(sweep, result.records)
    assert list(table["status"]) == ["done", "done"], table["error"].tolist()
    assert list(table["episodes"]) == [2, 2]
    assert table["objective_value"][0] == pytest.approx(table["makespan"][0], abs=1e-6)
    assert table["objective_value"][1] == pytest.approx(table["energy_j"][1], rel=1e-9)
    for run in sweep.runs:
        assert (Path(run.run_dir) / "model.pt").is_file()
        assert (Path(run.run_dir) / "training_log.csv").is_file()
    bad = _write(
        tmp_path / "bad.json",
        {
            "options": str(scenario / "options.json"),
            "agent_file": str(REPO / "agent_examples" / "reinforce.py"),
            "grid": {"seed": [1]},
        },
    )
    with pytest.raises(InputError) as err:
        load_sweep(bad)
    assert err.value.where == "options" and "no workload" in err.value.message


def test_keep_files(tmp_path: Path) -> None:
    """Only the kept outputs reach the run folder; the metrics come from all of them."""
    path = trace_sweep(tmp_path, ["shortest-low_power"], window=[{"start_job": 1, "nb_jobs": 2}])
    doc = json.loads(path.read_text())
    doc["keep_files"] = ["out_jobs.csv"]
    _write(path, doc)
    sweep = load_sweep(path)
    result = run_sweep(sweep, SerialBackend())
    files = sorted(p.name for p in Path(sweep.runs[0].run_dir).iterdir())
    assert files == ["options.json", "out_jobs.csv", RESULT_FILE]
    metrics = result.records[0]["metrics"]
    assert metrics["makespan"] == pytest.approx(25.5, abs=1e-6)
    assert metrics["energy_j"] > 0  # from out_schedule.csv, read before it was dropped
    doc["keep_files"] = "out_jobs.csv"
    _write(path, doc)
    with pytest.raises(InputError) as err:
        load_sweep(path)
    assert err.value.where == "keep_files"


# --- output folder and stale inputs -----------------------------------------------------------
def test_output_folder_under_a_file_is_one_line_before_any_run(tmp_path: Path) -> None:
    path = trace_sweep(tmp_path, ["shortest-high_gflops"])
    (tmp_path / "afile").write_text("")
    result = CliRunner().invoke(main, [str(path), "-q", "-o", str(tmp_path / "afile" / "out")])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"error: {tmp_path / 'afile' / 'out'}: cannot write: Not a directory; a part of the path "
        "is a regular file, not a folder"
    ]


def test_edited_trace_or_platform_reruns_the_runs_that_read_it(tmp_path: Path) -> None:
    path = trace_sweep(tmp_path, ["shortest-high_gflops", "first-low_power"])
    first = run_sweep(load_sweep(path), SerialBackend())
    assert first.reused == 0 and not first.failed
    assert run_sweep(load_sweep(path), SerialBackend()).reused == 2
    # The third job now runs 30 s instead of 10: the makespan must change.
    trace = tmp_path / "tiny.swf"
    trace.write_text(TRACE.replace("3 20 0 10", "3 20 0 30"))
    again = run_sweep(load_sweep(path), SerialBackend())
    assert again.reused == 0
    old = {r["run_id"]: r["metrics"]["makespan"] for r in first.records}
    assert all(r["metrics"]["makespan"] > old[r["run_id"]] for r in again.records)
    # The same for the platform file (a copy, edited in place without changing its meaning).
    platform = tmp_path / "platform.json"
    platform.write_text(LEARNING_PLATFORM.read_text())
    doc = json.loads((tmp_path / "options.json").read_text())
    doc["platform_file_path"] = str(platform)
    _write(tmp_path / "options.json", doc)
    assert run_sweep(load_sweep(path), SerialBackend()).reused == 0
    assert run_sweep(load_sweep(path), SerialBackend()).reused == 2
    platform.write_text(LEARNING_PLATFORM.read_text() + "\n")
    assert run_sweep(load_sweep(path), SerialBackend()).reused == 0


def test_each_input_file_is_hashed_once_per_sweep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hdeeprm._manifest as manifest

    hashed: list[str] = []
    real = manifest.file_sha256

    def counting(path):  # type: ignore[no-untyped-def]
        hashed.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(manifest, "file_sha256", counting)
    path = trace_sweep(tmp_path, ["shortest-high_gflops", "first-low_power"], seed=[1, 2, 3])
    sweep = load_sweep(path)
    assert len(sweep.runs) == 6
    assert len(hashed) == len(set(hashed))
    assert str(tmp_path / "tiny.swf") in hashed and str(LEARNING_PLATFORM) in hashed


@pytest.mark.parametrize(
    ("function", "name"),
    [
        ("hdeeprm.options:load_options", "load_options(path): expected the path of an options"),
        ("hdeeprm.workload:load_workload", "load_workload(path): expected the path of a Batsim"),
        ("hdeeprm.sweep:load_sweep", "load_sweep(path): expected the path of a sweep file"),
    ],
)
def test_a_document_passed_for_a_path_names_the_argument(function: str, name: str) -> None:
    import importlib

    module, attribute = function.split(":")
    load = getattr(importlib.import_module(module), attribute)
    with pytest.raises(TypeError) as err:
        load({"seed": 1})
    assert str(err.value).startswith(name) and "got a dict" in str(err.value)
    assert "_from_json(" in str(err.value)
