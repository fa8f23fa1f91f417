"""studies/learned_backfilling end to end on the real traces, with a tiny budget: the rules'
rows equal EASY's and EASY-SJBF's, every seed is reported, the results file is complete and an
existing one is never overwritten."""

from __future__ import annotations

import json

import pytest
from trace_files import trace_path

from studies.learned_backfilling import backfill_choice


@pytest.mark.slow
def test_a_tiny_run_reports_every_seed(tmp_path, capsys) -> None:
    trace_path("lublin_256.swf.gz")  # skips, saying how to get it, when a trace is absent
    trace_path("KTH-SP2-1996-2.1-cln.swf.gz")
    out = tmp_path / "results.json"
    argv = ["--seeds", "0", "1", "--timesteps", "256", "--n-steps", "128", "--eval-windows", "1"]
    assert backfill_choice.main([*argv, "--out", str(out)]) == 0
    results = json.loads(out.read_text())
    for test in ("lublin_256 held-out", "KTH-SP2 (transfer)"):
        r = results["tests"][test]
        assert set(r["rules"]) == {"EASY", "EASY-SJBF"}
        assert set(r["seeds"]) == {"0", "1"}
        for row in [*r["rules"].values(), *r["seeds"].values()]:
            assert row["mean_bsld"] >= 1.0 and row["max_bsld"] >= row["mean_bsld"]
            assert len(row["per_window"]) == 1
    printed = capsys.readouterr().out
    assert printed.count("agent seed") == 4  # two seeds on two tests
    with pytest.raises(SystemExit):
        backfill_choice.main([*argv, "--out", str(out)])
