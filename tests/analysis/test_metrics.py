"""hdeeprm-metrics: figures worked out by hand, read by column name, and the CLI."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from handmade import JOB_HEADER, make_run, write_jobs

from hdeeprm.analysis import RunFolderError, ended_job_metrics, job_metrics, summarize_run
from hdeeprm.analysis.metrics import format_table, plot_metrics, summarize_runs, unique_labels
from hdeeprm.analysis.plots import save_figure
from hdeeprm.cli.metrics import main

# Ran jobs (wait, run, turnaround = wait + run):
#   1: 0, 100, 100   2: 0, 4, 4   3: 90, 5, 95   4: 0, 40, 40   (job 5 rejected: left out)
# slowdown = turn / run: 1, 1, 19, 1 -> mean 22 / 4 = 5.5, max 19
# bounded = max(turn / max(run, 10), 1): 1, max(4/10, 1) = 1, 95/10 = 9.5, 1
#   -> mean 12.5 / 4 = 3.125, max 9.5
# waiting mean 90 / 4 = 22.5; turnaround mean (100 + 4 + 95 + 40) / 4 = 239 / 4 = 59.75
# makespan = last finish = 105; energy 7,200,000 J / 3.6e6 = 2 kWh
EXPECTED = {
    "nb_jobs": 5,
    "nb_ran": 4,
    "makespan": 105.0,
    "mean_waiting": 22.5,
    "mean_turnaround": 59.75,
    "mean_slowdown": 5.5,
    "max_slowdown": 19.0,
    "mean_bounded_slowdown": 3.125,
    "max_bounded_slowdown": 9.5,
}


def _check(summary) -> None:
    for key, value in EXPECTED.items():
        assert getattr(summary.jobs, key) == pytest.approx(value, abs=1e-12), key
    assert summary.energy_j == 7_200_000.0
    assert summary.energy_kwh == pytest.approx(2.0)


def test_metrics_by_hand(run_dir: Path) -> None:
    _check(summarize_run(run_dir))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_columns_are_read_by_name_not_position(run_dir: Path, seed: int) -> None:
    order = list(np.random.default_rng(seed).permutation(len(JOB_HEADER.split(","))))
    write_jobs(run_dir / "out_jobs.csv", order)
    # Shuffle out_schedule.csv too, with extra columns in front.
    (run_dir / "out_schedule.csv").write_text(
        "nb_jobs,makespan,zz,consumed_joules\n5,105.0,x,7200000.0\n"
    )
    _check(summarize_run(run_dir))


def test_zero_length_job_and_bounded_threshold() -> None:
    # A zero-length job has slowdown 1 (not inf); a 2 s job that waited 8 s has slowdown
    # (8 + 2) / 2 = 5 but bounded slowdown max(10 / max(2, 10), 1) = 1.
    metrics = job_metrics([0.0, 0.0], [5.0, 8.0], [5.0, 10.0])
    assert metrics.max_slowdown == 5.0
    assert metrics.mean_slowdown == 3.0  # (1 + 5) / 2
    assert metrics.mean_bounded_slowdown == 1.0
    assert metrics.makespan == 10.0


def test_ended_jobs_give_the_figures_of_their_times() -> None:
    """Jobs as ``Engine.finished_jobs`` holds them: one submitted at 0 that waited 30 s and
    ran 20 s (bounded slowdown 50 / 20 = 2.5), one submitted at 10 that started at once and
    ran 5 s (max(5 / 10, 1) = 1). Mean 1.75, worst wait 30 s."""
    from types import SimpleNamespace

    def ended(subtime: float, start: float, finish: float) -> SimpleNamespace:
        spec = SimpleNamespace(subtime=subtime)
        return SimpleNamespace(spec=spec, start_time=start, finish_time=finish)

    metrics = ended_job_metrics([ended(0.0, 30.0, 50.0), ended(10.0, 10.0, 15.0)])
    assert metrics.mean_bounded_slowdown == 1.75
    assert metrics.max_bounded_slowdown == 2.5
    assert metrics.max_waiting == 30.0
    assert metrics == job_metrics([0.0, 10.0], [30.0, 10.0], [50.0, 15.0])


def test_no_job_ran_gives_zeros() -> None:
    metrics = job_metrics([1.0], [float("nan")], [float("nan")])
    assert (metrics.nb_jobs, metrics.nb_ran, metrics.makespan, metrics.mean_slowdown) == (
        1,
        0,
        0.0,
        0.0,
    )


def test_matches_the_launcher(tmp_path: Path) -> None:
    """Same figures as hdeeprm-launch prints for the same run (up to the CSV's 6 decimals)."""
    from hdeeprm.experiment.run import run_classic
    from hdeeprm.inputs import prepare_inputs
    from hdeeprm.options import load_options

    profile = {"type": "parallel_homogeneous", "cpu": 21e9, "com": 0, "mem": 10, "mem_bw": 4}
    jobs = [
        {"id": "1", "subtime": 0, "res": 3, "profile": "p"},
        {"id": "2", "subtime": 0, "res": 2, "profile": "p"},
        {"id": "3", "subtime": 1, "res": 1, "profile": "p"},
        {"id": "4", "subtime": 2, "res": 4, "profile": "p"},
    ]
    workload = tmp_path / "custom.json"
    workload.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": {"p": profile}}))
    options = tmp_path / "options.json"
    options.write_text(
        json.dumps(
            {
                "seed": 1,
                "nb_resources": 4,
                "platform_file_path": str(
                    Path(__file__).resolve().parents[2] / "platform_examples/learning.json"
                ),
                "pybatsim": {
                    "env": {"objective": "makespan"},
                    "agent": {"type": "CLASSIC", "policy_pair": "first-high_gflops"},
                },
            }
        )
    )
    inputs = prepare_inputs(load_options(options), tmp_path / "run", custom_workload=workload)
    launcher = run_classic(inputs).metrics
    ours = summarize_run(tmp_path / "run")
    assert ours.jobs.nb_ran == launcher.nb_completed == 4
    assert launcher.mean_waiting > 0  # the run really queued jobs
    assert ours.energy_j == pytest.approx(launcher.energy_j, abs=1e-5)
    for key in (
        "makespan",
        "mean_waiting",
        "mean_turnaround",
        "mean_slowdown",
        "max_slowdown",
        "mean_bounded_slowdown",
    ):
        assert getattr(ours.jobs, key) == pytest.approx(getattr(launcher, key), rel=1e-6), key
    # And hdeeprm-clean knows every file the run wrote: the folder ends up empty.
    from hdeeprm.analysis.clean import execute, plan_clean

    written = {p.name for p in (tmp_path / "run").iterdir()}
    assert {"out_jobs.csv", "insights.log", "hdeeprm_mem_bw_overutilization.csv"} <= written
    execute(plan_clean(tmp_path / "run"))
    assert list((tmp_path / "run").iterdir()) == []


def test_missing_and_malformed_files(tmp_path: Path, run_dir: Path) -> None:
    with pytest.raises(RunFolderError, match="does not exist"):
        summarize_run(tmp_path / "nope")
    (run_dir / "out_schedule.csv").unlink()
    with pytest.raises(RunFolderError, match=r"has no out_schedule\.csv: run hdeeprm-launch"):
        summarize_run(run_dir)
    other = make_run(tmp_path / "bad")
    text = (other / "out_jobs.csv").read_text().replace("finish_time", "end_time", 1)
    (other / "out_jobs.csv").write_text(text)
    with pytest.raises(RunFolderError, match=r"out_jobs\.csv, line 1: missing column\(s\) finish"):
        summarize_run(other)
    text = (other / "out_jobs.csv").read_text().replace("end_time", "finish_time", 1)
    (other / "out_jobs.csv").write_text(text.replace("20.000000,1,", "twenty,1,", 1))
    with pytest.raises(RunFolderError, match=r"line 4: column 'submission_time'.*'twenty'"):
        summarize_run(other)
    # A row with an extra field would make pandas shift the columns: refused, line named.
    lines = (other / "out_jobs.csv").read_text().replace("twenty", "20.000000").splitlines()
    lines[2] += ",extra"
    (other / "out_jobs.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(RunFolderError, match=r"line 3: 18 fields where the header has 17"):
        summarize_run(other)


def test_labels_are_unique_folder_names(tmp_path: Path) -> None:
    paths = [tmp_path / "a" / "run_000", tmp_path / "b" / "run_000", tmp_path / "c"]
    assert unique_labels(paths) == ["a/run_000", "b/run_000", "c"]


def test_table_and_bars(tmp_path: Path) -> None:
    first = make_run(tmp_path / "gflops", training=False)
    second = make_run(tmp_path / "mem_bw", training=False)
    (second / "out_schedule.csv").write_text("consumed_joules,makespan\n3600000,105\n")
    summaries = summarize_runs([first, second])
    table = format_table(summaries).splitlines()
    assert table[0].split() == ["metric", "gflops", "mem_bw"]
    assert table[3].split() == ["energy", "(J)", "7,200,000", "3,600,000"]
    assert table[4].split() == ["energy", "(kWh)", "2.00", "1.00"]
    # Columns are aligned: every row is as long as the header line.
    assert len({len(line) for line in table[:2]}) == 1
    fig = plot_metrics(summaries)
    assert fig.get_suptitle() == "Metrics comparison"
    energy = fig.axes[0]
    assert energy.get_title() == "energy"
    assert [p.get_height() for p in energy.patches] == pytest.approx([2.0, 1.0])
    out = tmp_path / "m.png"
    save_figure(fig, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000


def test_cli_formats_and_errors(tmp_path: Path) -> None:
    run = make_run(tmp_path / "one", training=False)
    runner = CliRunner()
    result = runner.invoke(main, [str(run), "--format", "csv"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.output)))
    assert rows[0]["run"] == "one" and float(rows[0]["mean_bounded_slowdown"]) == 3.125
    result = runner.invoke(main, [str(run), "--format", "json"])
    record = json.loads(result.output)["runs"][0]
    assert record["max_slowdown"] == 19.0 and record["energy_kwh"] == 2.0
    saved = tmp_path / "bars.png"
    result = runner.invoke(main, [str(run), str(run), "-s", str(saved)])
    assert result.exit_code == 0 and saved.stat().st_size > 10_000
    assert "5.500" in result.output  # mean slowdown in the table
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(main, [str(run), str(empty)])
    assert result.exit_code == 2
    assert f"run folder {empty} has no out_jobs.csv: run hdeeprm-launch first" in result.output
    assert "Traceback" not in result.output
    # A folder of run folders (a sweep, -nr repetitions): named as such, its runs listed.
    result = runner.invoke(main, [str(tmp_path)])
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        f"error: {tmp_path}: a folder of 1 run folder(s), not a run folder: pass the run "
        f"folders, e.g. hdeeprm-metrics {tmp_path}/* (they are: {run})"
    ]
