"""The learned score ordering ``SCORE(a,b,c)``: names, keys, special cases and a hand-worked
EASY schedule where its aging term decides."""

from __future__ import annotations

import math
import pickle
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sched_helpers import homogeneous, run

from hdeeprm.errors import InputError
from hdeeprm.scheduling import BackfillScheduler, parse_scheduler
from hdeeprm.scheduling.orderings import (
    canonical,
    is_ordering,
    score_name,
    sort_key,
    static_key,
)


class _Job:
    def __init__(self, seq: int, subtime: float, res: int, pred: float) -> None:
        self.seq, self.subtime, self.res, self.pred = seq, subtime, res, pred


def test_names_are_canonical_and_exact() -> None:
    assert canonical("SCORE(1, 0.5, -0.1)") == "SCORE(1.0,0.5,-0.1)"
    assert canonical(" SCORE( 2 ,1e-3,0 ) ") == "SCORE(2.0,0.001,0.0)"
    assert canonical("SPF") == "SPF"
    weights = [0.1 + 0.2, -1 / 3, 1e-17]
    name = score_name(weights)
    assert canonical(name) == name
    assert [float(x) for x in name[6:-1].split(",")] == weights  # the same floats back


@pytest.mark.parametrize(
    "bad", ["SCORE(1,2)", "SCORE(1,2,3,4)", "SCORE(a,b,c)", "score(1,2,3)", "SCORE(1,nan,0)", "X"]
)
def test_bad_names_are_refused_with_the_expected_form(bad: str) -> None:
    assert not is_ordering(bad)
    with pytest.raises(ValueError, match=r"SCORE\(a,b,c\)|finite|numbers"):
        canonical(bad)


def test_options_name_the_key_of_a_bad_score() -> None:
    config = parse_scheduler({"primary": "SCORE(1, 0, 10)"})
    assert config.primary == "SCORE(1.0,0.0,10.0)"
    with pytest.raises(InputError, match=r"scheduler\.primary.*SCORE\(a,b,c\)"):
        parse_scheduler({"primary": "SCORE(1, 0)"})
    with pytest.raises(InputError, match=r"scheduler\.backfill"):
        parse_scheduler({"backfill": 3})


def test_key_worked_by_hand() -> None:
    # p = 1024 s (log2 10), q = 8 cores (log2 3), submitted at 7200 s (2 h):
    # 0.5 x 10 + 2 x 3 - 1.5 x 2 = 8; a run time under 1 s counts as 1 s (log2 0).
    key = static_key("SCORE(0.5, 2, -1.5)")
    assert key(_Job(0, 7200.0, 8, 1024.0)) == 8.0
    assert key(_Job(0, 0.0, 1, 0.25)) == 0.0


# Whole seconds, as traces give them: distinct ones keep distinct keys (log2 of integers up
# to 1e7 differ by far more than a rounding step; s / 3600 likewise).
jobs = st.lists(
    st.tuples(
        st.integers(0, 10**8).map(float),
        st.integers(1, 4096),
        st.integers(1, 10**7).map(float),
    ),
    min_size=1,
    max_size=40,
)


def _order(name: str, rows: list[tuple[float, int, float]]) -> list[int]:
    views = [_Job(i, s, q, p) for i, (s, q, p) in enumerate(rows)]
    return [j.seq for j in sorted(views, key=sort_key(name, 0.0))]


@given(jobs)
def test_fixed_orderings_as_special_cases(rows: list[tuple[float, int, float]]) -> None:
    assert _order("SCORE(0,0,1)", rows) == _order("FCFS", rows)
    assert _order("SCORE(1,0,0)", rows) == _order("SPF", rows)
    assert _order("SCORE(0,1,0)", rows) == _order("SQF", rows)
    # SAF up to jobs of equal area, which the rounding of log2 may put either way.
    areas = [p * q for _, q, p in rows]
    if len(set(areas)) == len(areas):
        assert _order("SCORE(1,1,0)", rows) == _order("SAF", rows)


@pytest.mark.parametrize(("c", "first"), [(10.0, "2"), (6.0, "3")])
def test_aging_weight_decides_a_hand_worked_schedule(tmp_path: Path, c: float, first: str) -> None:
    # One core busy with job 1 until 7200 s. Job 2 (4096 s, log2 12) is submitted at 1 s,
    # job 3 (16 s, log2 4) at 3601 s. At 7200 s the keys of SCORE(1,0,c) are
    #   job 2: 12 + c x 1/3600,  job 3: 4 + c x 3601/3600,
    # so job 2 goes first iff 12 - 4 < c (3601 - 1) / 3600 = c: c = 10 favours the older
    # job 2 (starts 7200, job 3 at 7200 + 4096 = 11296); c = 6 starts job 3 at 7200 and
    # job 2 at 7216.
    jobs_ = [("1", 0, 1, 7200, 7200), ("2", 1, 1, 4096, 4096), ("3", 3601, 1, 16, 16)]
    starts, _ = run(homogeneous(1), jobs_, {"primary": f"SCORE(1, 0, {c})"}, tmp_path)
    if first == "2":
        assert starts == {"1": 0, "2": 7200, "3": 11296}
    else:
        assert starts == {"1": 0, "2": 7216, "3": 7200}


def test_score_orderings_switch_and_pickle() -> None:
    config = parse_scheduler({"primary": "SPF"})
    sched = BackfillScheduler(config, orderings=["SCORE(1,1,0.5)"])
    sched.use_orderings("SCORE(1, 1, 0.5)")  # any spelling of a kept score
    assert sched.primary == "SCORE(1.0,1.0,0.5)"
    with pytest.raises(ValueError, match="was not named"):
        sched.use_orderings("SCORE(2,1,0.5)")
    copy = pickle.loads(pickle.dumps(sched))  # keys are looked up by name, not kept
    assert copy.primary == sched.primary
    assert math.isclose(static_key(copy.primary)(_Job(0, 3600.0, 2, 2.0)), 1 + 1 + 0.5)


def test_heuristic_selection_choices_take_score_orderings() -> None:
    from hdeeprm.environment.heuristic_selection import parse_choices

    pairs = parse_choices(["SPF", "SCORE(1, 0, 0.2)/SPF"], "FCFS")
    assert pairs == [("SPF", "FCFS"), ("SCORE(1.0,0.0,0.2)", "SPF")]
    with pytest.raises(ValueError, match=r"choices\[1\].*SCORE\(a,b,c\)"):
        parse_choices(["SPF", "SCORE(1,0)"], "FCFS")
