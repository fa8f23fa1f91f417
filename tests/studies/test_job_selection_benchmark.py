"""studies/job_selection_lublin's command on the real lublin_256 trace with a tiny budget: the
warm start clones F1 before PPO and prints how well it agrees; bad warm-start options stop it
before any work."""

from __future__ import annotations

import re

import pytest
from trace_files import trace_path

from studies.job_selection_lublin import job_selection_benchmark as bench


def test_warm_start_options_are_checked_first(capsys) -> None:
    with pytest.raises(SystemExit):
        bench.main(["--warm-start", "F1"])  # the sb3 trainer has no warm start
    assert "--warm-start needs --trainer hdeeprm" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--trainer", "hdeeprm", "--warm-start", "F1", "--warm-windows", "0"])
    assert "--warm-windows must be >= 1" in capsys.readouterr().err


@pytest.mark.slow
def test_a_warm_started_agent_agrees_with_f1(capsys) -> None:
    trace_path("lublin_256.swf.gz")
    argv = ["--trainer", "hdeeprm", "--modes", "backfill", "--timesteps", "256"]
    argv += ["--n-steps", "128", "--eval-windows", "1", "--no-heuristics", "--log-features"]
    argv += ["--warm-start", "F1", "--warm-windows", "2", "--warm-epochs", "30"]
    argv += ["--warm-lr", "3e-3", "--critic-warmup", "1"]
    assert bench.main(argv) == 0
    out = capsys.readouterr().out
    found = re.search(r"F1's (\d+) picks on 2 training windows .* agreement ([0-9.]+)", out)
    assert found is not None, out
    assert int(found[1]) > 100  # two 1,024-job windows: hundreds of picks
    assert float(found[2]) > 0.5  # far above a uniform choice among the visible jobs
    row = re.search(r"^PPO\s+(\d+\.\d+)\s.*\s(\d+\.\d)\s+(\d+)$", out, re.M)
    assert row is not None and "worst wait h" in out, out
    # one window: its mean bounded slowdown is at least 1 and at most its worst
    assert 1.0 <= float(row[1]) <= int(row[3]) + 0.5 and float(row[2]) >= 0.0


def test_snapshot_options_are_checked_first(capsys) -> None:
    with pytest.raises(SystemExit):
        bench.main(["--snapshots", "2"])  # the sb3 trainer keeps no snapshots
    assert "--snapshots needs --trainer hdeeprm" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--trainer", "hdeeprm", "--validation-windows", "0"])
    assert "must be >= 1" in capsys.readouterr().err


@pytest.mark.slow
def test_the_snapshot_kept_is_the_best_on_validation_and_plays_the_test(capsys) -> None:
    """Two snapshots judged on a validation sequence drawn apart from the test one: the one
    with the lower mean is kept, and the PPO row is that network's (its test mean, printed
    again by --report-snapshots, is the row's)."""
    trace_path("lublin_256.swf.gz")
    argv = ["--trainer", "hdeeprm", "--rlscheduler", "--modes", "backfill"]
    argv += ["--timesteps", "512", "--n-steps", "128", "--envs", "2", "--batch", "128"]
    argv += ["--eval-windows", "1", "--no-heuristics", "--snapshots", "2"]
    argv += ["--validation-windows", "1", "--report-snapshots"]
    assert bench.main(argv) == 0
    out = capsys.readouterr().out
    line = re.search(
        r"snapshots on the validation windows starting at jobs \[(\d+)\]: (.*); "
        r"(update \d of 2) kept",
        out,
    )
    assert line is not None, out
    tests = re.search(r"test windows start at jobs \[(\d+)\]", out)
    assert tests is not None and tests[1] != line[1]  # not the test sequence
    scores = dict(re.findall(r"(update \d of 2): ([0-9.]+)", line[2]))
    assert len(scores) == 2
    assert line[3] == min(scores, key=lambda name: (float(scores[name]), name))
    row = re.search(r"^PPO\s+([0-9.]+)", out, re.M)
    reported = dict(re.findall(r"\(not used for the choice\) (update \d of 2): ([0-9.]+)", out))
    assert row is not None and reported[line[3]] == row[1]


def test_guard_options_are_checked_first(capsys) -> None:
    with pytest.raises(SystemExit):
        bench.main(["--max-wait", "-1"])
    assert "--max-wait must be non-negative hours" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--max-wait", "72", "--rlscheduler"])
    assert "RLScheduler's protocol has no starvation guard" in capsys.readouterr().err


@pytest.mark.slow
def test_a_zero_guard_makes_every_picker_first_come_first_served(capsys) -> None:
    """``--max-wait 0`` without backfilling: every job starves once seen, so every guarded
    row, the trained agent's included, is FCFS's; the heuristics without the guard are
    printed apart."""
    trace_path("lublin_256.swf.gz")
    argv = ["--trainer", "hdeeprm", "--modes", "plain", "--timesteps", "256"]
    argv += ["--n-steps", "128", "--eval-windows", "1", "--max-wait", "0"]
    assert bench.main(argv) == 0
    out = capsys.readouterr().out
    assert "starvation guard: a job that has waited 0 h is protected" in out
    means = dict(re.findall(r"^(\S+(?: \(no guard\))?)\s+(\d+\.\d+)\s", out, re.M))
    guarded = ["FCFS", "SJF", "WFP3", "UNICEP", "F1", "PPO"]
    assert {means[name] for name in guarded} == {means["FCFS (no guard)"]}, out
    assert means["F1 (no guard)"] != means["FCFS (no guard)"]


def test_runs_need_snapshots(capsys) -> None:
    with pytest.raises(SystemExit):
        bench.main(["--trainer", "hdeeprm", "--runs", "2"])
    assert "--runs must be >= 1, and above 1 only with --snapshots" in capsys.readouterr().err


@pytest.mark.slow
def test_two_runs_are_chosen_among_together(capsys) -> None:
    """``--runs 2 --snapshots 2``: four networks, two per run, judged on the validation
    windows; the kept one is the lowest of the four, and the PPO row plays it."""
    trace_path("lublin_256.swf.gz")
    argv = ["--trainer", "hdeeprm", "--rlscheduler", "--modes", "backfill"]
    argv += ["--timesteps", "256", "--n-steps", "64", "--envs", "2", "--batch", "64"]
    argv += ["--eval-windows", "1", "--no-heuristics", "--snapshots", "2", "--runs", "2"]
    argv += ["--validation-windows", "1", "--report-snapshots"]
    assert bench.main(argv) == 0
    out = capsys.readouterr().out
    assert "512 training steps (2 runs)" in out, out
    line = re.search(
        r"snapshots on the validation windows starting at jobs \[\d+\]: (.*); "
        r"(run \d update \d of 2) kept",
        out,
    )
    assert line is not None, out
    scores = dict(re.findall(r"(run \d update \d of 2): ([0-9.]+)", line[1]))
    assert sorted(scores) == [f"run {k} update {u} of 2" for k in (1, 2) for u in (1, 2)]
    assert line[2] == min(scores, key=lambda name: (float(scores[name]), name))
    row = re.search(r"^PPO\s+([0-9.]+)", out, re.M)
    reported = dict(
        re.findall(r"\(not used for the choice\) (run \d update \d of 2): ([0-9.]+)", out)
    )
    assert row is not None and reported[line[2]] == row[1]
