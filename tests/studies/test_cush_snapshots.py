"""studies/cush_two_step's agent command with a tiny budget: the snapshot played on the held-out
sets is the one with the lowest mean NTAT on the training sets held out to choose it, and bad
combinations of options stop it before any work."""

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
