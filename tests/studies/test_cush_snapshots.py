"""studies/cush_two_step's agent command with a tiny budget: the snapshot played on the held-out
sets is the one with the lowest mean NTAT on the training sets held out to choose it (among
every run's, with ``--runs``), and bad combinations of options stop it before any work."""

from __future__ import annotations

import re

import pytest

from studies.cush_two_step import cush_agent


def test_snapshot_options_are_checked_first(capsys) -> None:
    for argv in (
        ["--snapshots", "2"],
        ["--choose-sets", "5"],
        ["--snapshots", "2", "--choose-sets", "5", "--validation", "5"],
        ["--snapshots", "0"],
    ):
        with pytest.raises(SystemExit):
            cush_agent.main(argv)
        assert "--snapshots" in capsys.readouterr().err
    for argv in (["--runs", "2"], ["--runs", "0"]):
        with pytest.raises(SystemExit):
            cush_agent.main(argv)
        assert "--runs must be >= 1" in capsys.readouterr().err


@pytest.mark.slow
def test_the_snapshot_kept_has_the_lowest_ntat_on_the_choice_sets(capsys) -> None:
    argv = ["--steps", "1024", "--train-sets", "30", "--sets", "4", "--choose-sets", "4"]
    argv += ["--snapshots", "2", "--warm-start", "SJF", "--warm-sets", "4"]
    cush_agent.main(argv)
    out = capsys.readouterr().out
    assert "trained 1024 steps on 26 job sets (seeds 0..25)" in out
    line = re.search(r"snapshots on the 4 sets 26\.\.29 \(NTAT\): (.*); (.*) kept", out)
    assert line is not None, out
    scores = re.findall(r"(clone|update \d of 2): ([0-9.]+)", line[1])
    assert [name for name, _ in scores] == ["clone", "update 1 of 2", "update 2 of 2"]
    best = min(scores, key=lambda pair: float(pair[1]))  # the earliest among equals
    assert line[2] == best[0]


def test_runs_are_chosen_among_together(capsys) -> None:
    """Two runs (seeds 0 and 1000), each cloned then trained: the six networks are compared
    on the choice sets, and the lowest (the earliest among equals) plays."""
    argv = ["--steps", "512", "--train-sets", "24", "--sets", "2", "--choose-sets", "3"]
    argv += ["--snapshots", "2", "--warm-start", "SJF", "--warm-sets", "3", "--runs", "2"]
    argv += ["--num-steps", "128"]
    cush_agent.main(argv)
    out = capsys.readouterr().out
    assert "2 runs of 512 steps on 21 job sets (seeds 0..20)" in out
    assert "run 1 (seed 0): warm start" in out and "run 2 (seed 1000): warm start" in out
    line = re.search(r"snapshots on the 3 sets 21\.\.23 \(NTAT\): (.*); (.*) kept", out)
    assert line is not None, out
    scores = re.findall(r"(run \d (?:clone|update \d of 2)): ([0-9.]+)", line[1])
    names = [
        f"run {k} {what}" for k in (1, 2) for what in ("clone", "update 1 of 2", "update 2 of 2")
    ]
    assert [name for name, _ in scores] == names
    assert line[2] == min(scores, key=lambda pair: float(pair[1]))[0]
    assert "training budget:" in out and "(2 run(s) and the choice)" in out
