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
    assert re.search(r"^PPO\s+\d+\.\d+", out, re.M)
