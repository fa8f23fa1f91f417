"""RLScheduler's visible queue and sequence draws, by hand and as properties."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hdeeprm.environment.rlscheduler import rlscheduler_starts, rlscheduler_visible


@dataclass
class Job:
    seq: int
    subtime: float
    res: int
    req_time: float


def test_visible_by_hand() -> None:
    # seq: (res, req_time). Shortest first: 3 (5 s), 1 (10 s), 4 (20 s), 0 (50 s), 2 (90 s).
    # Fewest cores first: 2 (1), 0 (2), 4 (2), 1 (8), 3 (16).
    spec = [(2, 50), (8, 10), (1, 90), (16, 5), (2, 20)]
    queue = [Job(i, float(i), res, req) for i, (res, req) in enumerate(spec)]
    assert rlscheduler_visible(queue, 5) == queue  # all fit: submission order
    # Alternating 3, 2 | 1, 0 | then 4 from the shortest list.
    assert [j.seq for j in rlscheduler_visible(queue, 4)] == [3, 2, 1, 0]
    assert [j.seq for j in rlscheduler_visible(queue, 3)] == [3, 2, 1]
    assert [j.seq for j in rlscheduler_visible(queue, 1)] == [3]


jobs = st.lists(st.tuples(st.integers(1, 8), st.integers(1, 100)), min_size=0, max_size=40).map(
    lambda spec: [Job(i, float(i), r, float(t)) for i, (r, t) in enumerate(spec)]
)


@settings(max_examples=300, deadline=None)
@given(queue=jobs, slots=st.integers(1, 20))
def test_visible_properties(queue, slots) -> None:
    shown = rlscheduler_visible(queue, slots)
    assert len(shown) == min(slots, len(queue))
    assert len({j.seq for j in shown}) == len(shown)
    if len(queue) > slots:
        # The shortest and the smallest job are always shown first.
        assert shown[0].seq == min(queue, key=lambda j: (j.req_time, j.subtime)).seq
        half = (slots + 1) // 2
        shortest = sorted(queue, key=lambda j: (j.req_time, j.subtime))[:half]
        assert {j.seq for j in shortest} <= {j.seq for j in shown}


def test_starts() -> None:
    starts = rlscheduler_starts(10_000, 1024, 10, seed=0)
    assert starts == rlscheduler_starts(10_000, 1024, 10, seed=0)
    assert all(1024 <= s < 10_000 - 1024 - 1 for s in starts) and len(starts) == 10
    with pytest.raises(ValueError, match="no 1024-job sequence"):
        rlscheduler_starts(2048, 1024, 1, seed=0)
