"""hdeeprm-visual: the time series by hand, every figure, and the CLI's errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from handmade import MEM_PER_CORE, make_run

from hdeeprm.analysis import series as ts
from hdeeprm.analysis.plots import TITLES, VISUALIZATIONS, job_memory, save_figure, visualize
from hdeeprm.analysis.runfolder import RunFolder, RunFolderError
from hdeeprm.cli import visual as visual_cli

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _series_at(series: ts.Series, times: list[float]) -> list[float]:
    return ts.at(series, np.array(times)).tolist()


def test_utilization_and_queue_by_hand(run_dir: Path) -> None:
    jobs = RunFolder(run_dir).jobs
    # Busy cores: [0,4) jobs 1+2 = 4; [4,20) job 1 = 2; [20,60) + job 4 = 3; [60,100) 2;
    # at 100 job 1 ends and job 3 (4 cores) starts: 4 until 105, then 0.
    times, values = ts.busy_cores(jobs)
    assert times.tolist() == [0, 4, 20, 60, 100, 105]
    assert values.tolist() == [4, 2, 3, 2, 4, 0]
    # Queue: job 3 waits [10, 100) with 4 cores; job 4 starts on arrival (never queued);
    # rejected job 5 is not counted.
    assert _series_at(ts.queue_cores(jobs), [0, 10, 20, 99.9, 100]) == [0, 4, 4, 4, 0]
    assert ts.time_average(*ts.queue_cores(jobs), 0.0, 105.0) == pytest.approx(4 * 90 / 105)


# evalys 4.0.7 renames a column with inplace=True, deprecated in pandas 3.1.
@pytest.mark.filterwarnings("ignore:The inplace keyword")
def test_series_match_evalys_compute_load(run_dir: Path) -> None:
    evalys_jobset = pytest.importorskip("evalys.jobset")
    jobset = evalys_jobset.JobSet.from_csv(str(run_dir / "out_jobs.csv"))
    jobs = RunFolder(run_dir).jobs
    for ours, theirs in (
        (ts.busy_cores(jobs), jobset.utilisation),
        (ts.queue_cores(jobs), jobset.queue),
    ):
        points = theirs.index.to_numpy(dtype=float)
        assert ts.at(ours, points).tolist() == theirs["load"].astype(float).tolist()


def test_core_bubbles_by_hand(run_dir: Path) -> None:
    jobs = RunFolder(run_dir).jobs
    times, idle, requested = ts.core_bubbles(jobs, 4)
    # Job 3 waits on [10, 100): idle = 4 - busy = 2 on [10,20), 1 on [20,60), 2 on [60,100).
    assert ts.at((times, idle), np.array([5, 10, 20, 60, 100])).tolist() == [0, 2, 1, 2, 0]
    # Core-seconds lost: 2 x 10 + 1 x 40 + 2 x 40 = 140.
    assert ts.time_average(times, idle, 0.0, 105.0) * 105 == pytest.approx(140.0)
    assert ts.at((times, requested), np.array([50.0])).tolist() == [4]


def test_memory_series_by_hand(run_dir: Path) -> None:
    run = RunFolder(run_dir)
    memory = job_memory(run)
    # mem per core x cores, in out_jobs.csv order (1, 2, 4, 3, 5).
    assert memory.tolist() == [1000 * 2, 500 * 2, 3000 * 1, 250 * 4, 100 * 8]
    assert MEM_PER_CORE["p4"] == 3000
    jobs = run.jobs
    ran = jobs.ran
    used = ts.step_series(jobs.start[ran], jobs.finish[ran], memory[ran])
    # [0,4) 2000 + 1000; [4,20) 2000; [20,60) 2000 + 3000; [60,100) 2000; [100,105) 1000.
    assert _series_at(used, [0, 4, 20, 60, 100, 105]) == [3000, 2000, 5000, 2000, 1000, 0]
    assert sum(node.memory_gb for node in run.hierarchy.nodes) == 32.0


def test_overutilization_spans(run_dir: Path) -> None:
    procs, starts, ends = RunFolder(run_dir).overutilization
    assert procs.tolist() == [0, 1] and starts.tolist() == [0.0, 20.0]
    assert ends[0] == 50.0 and np.isnan(ends[1])  # still over-subscribed at the end


@pytest.mark.parametrize("name", list(VISUALIZATIONS))
def test_every_visualization_makes_a_titled_png(run_dir: Path, tmp_path: Path, name: str) -> None:
    fig = visualize(name, run_dir)
    assert fig.get_suptitle() == TITLES[name]
    assert any(ax.get_xlabel() for ax in fig.axes) and any(ax.get_ylabel() for ax in fig.axes)
    out = tmp_path / f"{name}.png"
    save_figure(fig, out)
    data = out.read_bytes()
    assert data[:8] == PNG_MAGIC
    assert len(data) > 15_000  # 1000 x 600 with content; an empty canvas is ~5 KB
    assert not list(tmp_path.glob(".tmp-*"))  # written atomically, nothing left behind


def test_time_axes_have_units(run_dir: Path) -> None:
    fig = visualize("utilization", run_dir)
    assert fig.axes[0].get_xlabel() == "time (s)"
    assert visualize("lifecycle", run_dir).axes[-1].get_xlabel() == "time (s)"
    from hdeeprm.analysis.plots import time_unit

    assert time_unit(3600) == (1.0, "s")
    assert time_unit(50 * 3600) == (3600.0, "h")
    assert time_unit(30 * 86400) == (86400.0, "days")


def test_gantt_labels(run_dir: Path) -> None:
    labelled = visualize("gantt", run_dir).axes[0]
    assert sorted(t.get_text() for t in labelled.texts) == ["1", "2", "3", "4"]
    # One rectangle per allocated interval: 0-1, 2-3, 2, 0-3 (the rejected job has none).
    assert len(labelled.collections[0].get_paths()) == 4
    plain = visualize("gantt_no_label", run_dir).axes[0]
    assert len(plain.texts) == 0


def test_lifecycle_counts_rejected_arrivals(run_dir: Path) -> None:
    fig = visualize("lifecycle", run_dir)
    completion, start, arrival = fig.axes
    assert len(arrival.collections[0].get_offsets()) == 5
    assert len(start.collections[0].get_offsets()) == 4
    assert len(completion.collections[0].get_offsets()) == 4


def test_action_preferences_lines(run_dir: Path) -> None:
    fig = visualize("action_preferences", run_dir)
    lines = fig.axes[0].get_lines()
    assert [line.get_label() for line in lines] == ["first-high_gflops", "shortest-high_mem_bw"]
    assert lines[1].get_ydata().tolist() == [0.5, 0.6, 0.8, 0.9]


def test_learning_figures_need_a_training_log(tmp_path: Path) -> None:
    run = make_run(tmp_path / "classic", training=False)
    for name in ("losses", "rewards", "action_preferences"):
        with pytest.raises(
            RunFolderError, match="has no training_log.csv: it is written by a learning run"
        ):
            visualize(name, run)


def test_cli_saves_and_reports_errors(run_dir: Path, tmp_path: Path, monkeypatch) -> None:
    runner = CliRunner()
    out = tmp_path / "q.png"
    result = runner.invoke(
        visual_cli.main, [str(run_dir), "queue_size", "-s", str(out), "--size", "8x5"]
    )
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:8] == PNG_MAGIC
    # RUN_DIR defaults to the current folder.
    monkeypatch.chdir(run_dir)
    result = runner.invoke(visual_cli.main, ["utilization", "-s", str(tmp_path / "u.png")])
    assert result.exit_code == 0, result.output
    # Missing file: exit 2, the file named, no traceback.
    (run_dir / "out_jobs.csv").unlink()
    result = runner.invoke(visual_cli.main, [str(run_dir), "gantt", "-s", str(tmp_path / "g.png")])
    assert result.exit_code == 2
    assert f"run folder {run_dir} has no out_jobs.csv: run hdeeprm-launch first" in result.output
    assert "Traceback" not in result.output
    # No display and no -s: told to save.
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr(visual_cli.sys, "platform", "linux")
    result = runner.invoke(visual_cli.main, [str(run_dir), "gantt"])
    assert result.exit_code == 2 and "-s FILE" in result.output
    result = runner.invoke(visual_cli.main, [str(run_dir), "nonsense", "-s", "x.png"])
    assert result.exit_code == 2 and "queue_size" in result.output
    result = runner.invoke(visual_cli.main, [str(run_dir), "gantt", "-s", str(tmp_path / "x.doc")])
    assert result.exit_code == 2 and "unknown image format 'doc'" in result.output


def test_cli_names_match_the_plots() -> None:
    assert visual_cli.NAMES == tuple(VISUALIZATIONS) == tuple(TITLES)


def test_cli_shows_a_window_when_a_display_exists(run_dir: Path, monkeypatch) -> None:
    import matplotlib
    import matplotlib.pyplot as plt

    matplotlib.use("Agg")  # plt.show() is then a no-op: the path runs without a screen
    monkeypatch.setattr(visual_cli, "has_display", lambda: True)
    shown: list[str] = []
    monkeypatch.setattr(plt, "show", lambda: shown.append(plt.gcf().get_suptitle()))
    try:
        result = CliRunner().invoke(visual_cli.main, [str(run_dir), "core_bubbles"])
        assert result.exit_code == 0, result.output
        assert shown == ["Core bubbles"]
    finally:
        plt.close("all")
