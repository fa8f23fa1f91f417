"""Per-window headroom of fixed pairs: single best pair against the per-window oracle."""

from __future__ import annotations

import pytest

from hdeeprm.training.evaluate import WindowResult
from studies.ppo_policy_pairs.headroom import format_headroom, headroom


def rows(table: dict[str, list[float]]) -> list[WindowResult]:
    return [
        WindowResult(name, w, value, value, value, 10, 0.1)
        for name, values in table.items()
        for w, value in enumerate(values)
    ]


def test_oracle_against_single_pair_by_hand() -> None:
    # a: 1, 4, 1 (mean 2); b: 1, 2, 5 (mean 8/3); c: 1, 3, 1 (mean 5/3: the single best)
    # oracle per window: 1 (idle), 2 (b), 1 (a ties c: c, the single pair) -> mean 4/3
    result = headroom(rows({"a": [1, 4, 1], "b": [1, 2, 5], "c": [1, 3, 1]}), "avg_job_slowdown")
    assert result.single_pair == "c"
    assert result.single_mean == pytest.approx(5 / 3)
    assert result.oracle_mean == pytest.approx(4 / 3)
    assert result.gain == pytest.approx((5 / 3 - 4 / 3) / (5 / 3))  # 20%
    assert [w.best_pair for w in result.windows] == ["c", "b", "c"]
    assert [w.busy for w in result.windows] == [False, True, True]
    assert result.busy_windows == 2
    assert result.switching_windows == 1  # only window 1: b (2) beats c (3)
    assert result.windows[1].spread == pytest.approx((4 - 2) / 2)
    text = format_headroom(result, starts=[0, 100, 200])
    assert "per-window best pair in hindsight 1.33333 (20.00% better)" in text
    assert "2 of 3 windows busy" in text


def test_a_tie_with_the_single_pair_names_the_single_pair() -> None:
    # b is the single best pair (mean 1.5 < 2); on window 0 a ties it (1 = 1) and would come
    # first by name, but there is nothing to switch to: the window's best pair is b
    result = headroom(rows({"a": [1, 3], "b": [1, 2]}), "avg_job_slowdown")
    assert result.single_pair == "b"
    assert [w.best_pair for w in result.windows] == ["b", "b"]
    assert result.switching_windows == 0 and result.gain == 0


def test_maximised_objective_takes_the_largest() -> None:
    result = headroom(rows({"a": [0.5, 0.9], "b": [0.7, 0.6]}), "avg_utilization")
    assert result.single_pair == "a"  # mean 0.7 > 0.65
    assert result.oracle_mean == pytest.approx(0.8)
    assert result.switching_windows == 1


def test_pairs_filter_and_missing_results_are_errors() -> None:
    table = rows({"a": [2, 2], "b": [1, 3], "random": [0.5, 0.5]})
    assert headroom(table, "avg_job_slowdown", pairs=["a", "b"]).oracle_mean == 1.5
    with pytest.raises(ValueError, match="b has no result on window 1"):
        headroom(table[:-3], "avg_job_slowdown", pairs=["a", "b"])
    with pytest.raises(ValueError, match="at least one pair"):
        headroom([], "avg_job_slowdown")
