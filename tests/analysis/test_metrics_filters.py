"""AVEbsld, max bsld and waits with the thesis's job-filtering options, worked by hand on the
hand-made run folder (see handmade.py: waits 0, 0, 90, 0; runs 100, 4, 5, 40; job 5 rejected)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hdeeprm.analysis import JobFilter, summarize_run
from hdeeprm.cli.metrics import main


def test_max_waiting(run_dir: Path) -> None:
    assert summarize_run(run_dir).jobs.max_waiting == 90.0


def test_tau(run_dir: Path) -> None:
    # tau = 4: bsld 100/100, 4/4, 95/5 = 19, 40/40 -> mean 22 / 4 = 5.5, max 19
    jobs = summarize_run(run_dir, job_filter=JobFilter(tau=4.0)).jobs
    assert jobs.mean_bounded_slowdown == pytest.approx(5.5)
    assert jobs.max_bounded_slowdown == pytest.approx(19.0)


def test_skip_first(run_dir: Path) -> None:
    # by submission: 1 (0), 2 (0), 3 (10), 4 (20), 5 (30): without 1 and 2, jobs 3 and 4 ran:
    # waits 90, 0 -> mean 45; bsld 9.5, 1 -> mean 5.25
    jobs = summarize_run(run_dir, job_filter=JobFilter(skip_first=2)).jobs
    assert (jobs.nb_jobs, jobs.nb_ran) == (3, 2)
    assert jobs.mean_waiting == pytest.approx(45.0)
    assert jobs.mean_bounded_slowdown == pytest.approx(5.25)


def test_exclude_overrun(run_dir: Path) -> None:
    # job 3 ran 5 s but requested 4 s: left out; the others requested more than they ran
    workload = json.loads((run_dir / "workload.json").read_text())
    for name, req in {"p1": 100, "p2": 10, "p3": 4, "p4": 40, "p5": 1}.items():
        workload["profiles"][name]["req_time"] = req
    (run_dir / "workload.json").write_text(json.dumps(workload))
    jobs = summarize_run(run_dir, job_filter=JobFilter(exclude_overrun=True)).jobs
    assert (jobs.nb_jobs, jobs.nb_ran) == (4, 3)
    assert jobs.mean_waiting == 0.0
    assert jobs.mean_bounded_slowdown == 1.0


def test_bad_filters() -> None:
    with pytest.raises(ValueError, match="tau"):
        JobFilter(tau=0.0)
    with pytest.raises(ValueError, match="skip_first"):
        JobFilter(skip_first=-1)


def test_cli_options(run_dir: Path) -> None:
    result = CliRunner().invoke(main, [str(run_dir), "--tau", "4", "--format", "json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)["runs"][0]
    assert record["mean_bounded_slowdown"] == pytest.approx(5.5)
    assert record["max_waiting"] == 90.0
    bad = CliRunner().invoke(main, [str(run_dir), "--tau", "0"])
    assert bad.exit_code == 2
