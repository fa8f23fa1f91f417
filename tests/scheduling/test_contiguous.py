"""EASY on contiguous core ranges (``hosts: "contiguous"``, pybatsim's ``easyBackfill``):
hand-worked free ranges, reservations and schedules.

Jobs are ``(id, submit, cores, real run time, requested time)`` with ``delay`` profiles; core
ids are the platform's (one-core nodes, so a range of cores is a range of Batsim hosts).
"""

from __future__ import annotations

import csv
from pathlib import Path
from types import SimpleNamespace

import pytest
from sched_helpers import homogeneous, run

from hdeeprm.errors import InputError
from hdeeprm.scheduling import BackfillScheduler, parse_scheduler
from hdeeprm.scheduling.contiguous import INF, ContiguousCores, FreeRanges

CONTIGUOUS = {"preset": "easy", "hosts": "contiguous"}


def spans(ranges: FreeRanges) -> list[tuple[int, int, bool]]:
    return [(s.lo, s.hi, s.low_first) for s in ranges.spans]


def allocations(tmp: Path) -> dict[str, str]:
    with open(tmp / "out_jobs.csv") as handle:
        return {row["job_id"]: row["allocated_resources"] for row in csv.DictReader(handle)}


# --- free ranges ----------------------------------------------------------------------------
def test_jobs_take_the_first_wide_enough_range_from_its_low_end() -> None:
    ranges = FreeRanges(10)
    assert ranges.take(ranges.first_fit(3), 3) == (0, 2)
    assert ranges.take(ranges.first_fit(2), 2) == (3, 4)
    assert spans(ranges) == [(5, 9, True)]
    assert ranges.first_fit(6) is None


def test_a_range_that_grew_at_its_high_end_fills_from_there() -> None:
    # [0-3] and [4-9] busy. [0-3] ends: a new range, filled from its low end. [4-9] ends: it
    # joins [0-3] on the left, so the merged [0-9] fills from the high end, next to the cores
    # that just ended: a 2-core job takes 8-9.
    ranges = FreeRanges(10)
    ranges.take(ranges.first_fit(4), 4)
    ranges.take(ranges.first_fit(6), 6)
    assert ranges.release(0, 3) is ranges.spans[0]
    assert spans(ranges) == [(0, 3, True)]
    ranges.release(4, 9)
    assert spans(ranges) == [(0, 9, False)]
    assert ranges.take(ranges.first_fit(2), 2) == (8, 9)


def test_merges_set_the_side_a_range_fills_from() -> None:
    # Cores 0, 1, 2-4, 5-6, 7-9 busy. 0 ends: new range, low end first. 1 ends: joins [0] on
    # the left -> [0-1], high end first. 5-6 ends: a new range. 2-4 ends: joins both -> [0-6],
    # keeping the left range's side. 7-9 ends: joins on the left -> high end first.
    ranges = FreeRanges(10)
    for n in (1, 1, 3, 2, 3):
        ranges.take(ranges.first_fit(n), n)
    ranges.release(0, 0)
    assert spans(ranges) == [(0, 0, True)]
    ranges.release(1, 1)
    assert spans(ranges) == [(0, 1, False)]
    ranges.release(5, 6)
    assert spans(ranges) == [(0, 1, False), (5, 6, True)]
    ranges.release(2, 4)
    assert spans(ranges) == [(0, 6, False)]
    ranges.release(7, 9)
    assert spans(ranges) == [(0, 9, False)]
    # Joining on the right makes a range fill from its low end again: 0-3, 4-6, 7-9 busy;
    # 4-6 ends (new), 7-9 ends (joins on the left: high end first), 0-3 ends (joins on the
    # right: low end first).
    ranges = FreeRanges(10)
    for n in (4, 3, 3):
        ranges.take(ranges.first_fit(n), n)
    ranges.release(4, 6)
    ranges.release(7, 9)
    assert spans(ranges) == [(4, 9, False)]
    ranges.release(0, 3)
    assert spans(ranges) == [(0, 9, True)]


def test_limit_offers_the_part_outside_the_reservation_unlimited_then_undoes_it() -> None:
    # Free [0-4] and [8-9]; reservation of cores 3-8 with 50 s to go. [0-4] holds the first
    # reserved core (3): it is limited to 50 s and filled from its high end, and its part
    # outside the reservation, [0-2], follows it, unlimited, filled from the low end. [8-9]
    # holds the last reserved core (8): limited, [9-9] unlimited after it, from the high end.
    ranges = FreeRanges(10)
    ranges.take(ranges.first_fit(10), 10)
    ranges.release(0, 4)
    ranges.release(8, 9)
    marks = ranges.limit(3, 8, 50.0)
    assert [(s.lo, s.hi, s.low_first, s.length) for s in ranges.spans] == [
        (0, 4, False, 50.0),
        (0, 2, True, INF),
        (8, 9, True, 50.0),
        (9, 9, False, INF),
    ]
    # A 100 s job of 2 cores may only go to the unlimited [0-2]: takes 0-1, and the limited
    # range it shares cores with shrinks to [2-4].
    assert ranges.take(ranges.first_fit(2, 100.0), 2) == (0, 1)
    assert (ranges.spans[0].lo, ranges.spans[0].hi) == (2, 4)
    # A 30 s job of 3 cores fits the limited [2-4], from its high end: 2-4; [2-2] is gone.
    assert ranges.take(ranges.first_fit(3, 30.0), 3) == (2, 4)
    assert [(s.lo, s.hi) for s in ranges.spans] == [(8, 9), (9, 9)]
    ranges.unlimit(marks)
    assert [(s.lo, s.hi, s.low_first, s.length) for s in ranges.spans] == [(8, 9, True, INF)]


def test_reservation_frees_running_jobs_by_predicted_end_until_a_range_is_wide_enough() -> None:
    # 6 cores: A 0-1 (ends 50), B 2-3 (ends 20), C 4-5 (ends 20, started after B). A 4-core
    # job: B frees 2-3 (2 cores), C frees 4-5, joining it on the left: [2-5] (high end first)
    # fits at 20, all of it.
    cores = ContiguousCores(6)
    for seq, (n, end) in enumerate([(2, 50.0), (2, 20.0), (2, 20.0)]):
        lo, hi = cores.ranges.take(cores.ranges.first_fit(n), n)
        cores.started(seq, lo, hi, end)
    assert cores.reservation(4) == (2, 5, 20.0)
    # A 5-core job needs A too: 0-1 joins [2-5] on the right, so [0-5] fills from its low
    # end: 0-4 at 50.
    assert cores.reservation(5) == (0, 4, 50.0)
    # The reservation works on a copy: nothing is free.
    assert cores.ranges.spans == []


# --- schedules ------------------------------------------------------------------------------
FRAGMENTED = [
    ("1", 0, 1, 10, 10),
    ("2", 0, 1, 100, 100),
    ("3", 0, 1, 10, 10),
    ("4", 0, 1, 100, 100),
    ("5", 1, 2, 50, 50),
    ("6", 2, 1, 20, 20),
]


def test_contiguous_easy_waits_for_a_range_where_counting_cores_would_start(
    tmp_path: Path,
) -> None:
    # 4 cores: 1..4 take cores 0, 1, 2, 3 at t = 0. At 10, 1 and 3 end: cores 0 and 2 free,
    # not adjacent. 5 (2 cores) is the head: reserved by freeing 2 (ends 100): [0-2], cores
    # 0-1 at 100. [0] holds the first reserved core: limited to 90 s, so 6 (20 s) backfills on
    # core 0 at 10 (ends 30). 5 starts at 100 when 2 and 4 end, on 0-1.
    starts, _ = run(homogeneous(4), FRAGMENTED, CONTIGUOUS, tmp_path)
    assert starts == {"1": 0, "2": 0, "3": 0, "4": 0, "5": 100, "6": 10}
    allocs = allocations(tmp_path)
    assert [allocs[j] for j in "123456"] == ["0", "1", "2", "3", "0-1", "0"]


def test_counting_cores_starts_on_the_fragmented_cores(tmp_path: Path) -> None:
    # Same jobs, hosts "any" (the literature's EASY): at 10, 2 cores are free: 5 starts (cores
    # 0 and 2), 6 waits for a core: 5 ends at 60.
    starts, _ = run(homogeneous(4), FRAGMENTED, "easy", tmp_path)
    assert starts == {"1": 0, "2": 0, "3": 0, "4": 0, "5": 10, "6": 60}


def record(seq: int, res: int, req: float, subtime: float = 0.0) -> SimpleNamespace:
    """The workload manager's view of a job, as the scheduler reads it."""
    return SimpleNamespace(
        id=str(seq), seq=seq, subtime=subtime, res=res, mem=0.0, req_time=req, job=None
    )


@pytest.mark.parametrize(
    ("submission_first", "cores_of_3"), [(True, range(3, 4)), (False, range(0, 1))]
)
def test_one_pass_per_event_in_the_order_reported(
    submission_first: bool, cores_of_3: range
) -> None:
    # 4 cores: 1 (2 cores) on 0-1, 2 (1 core) on 2. At 10, 1 ends and 3 (1 core) arrives in
    # the same message. pybatsim decides after each event in the message's order (Batsim's,
    # which varies): submission first, 3 takes the only free core then, 3; completion first,
    # 0-1 are free and 3 takes the first range's low end, 0.
    sched = BackfillScheduler(parse_scheduler(CONTIGUOUS))
    placed: dict[int, range] = {}
    busy: set[int] = set()

    def start(rec: SimpleNamespace, cores: range) -> bool:
        placed[rec.seq] = cores
        busy.update(cores)
        return True

    def free() -> int:
        return 4 - len(busy)

    one, two, three = record(1, 2, 10), record(2, 1, 100), record(3, 1, 5, 10.0)
    sched.submitted(one, 0.0)
    sched.submitted(two, 0.0)
    sched.schedule(0.0, free, start)
    assert placed == {1: range(0, 2), 2: range(2, 3)}
    busy.difference_update(placed[1])
    if submission_first:
        sched.submitted(three, 10.0)
        sched.completed(one, 10.0)
    else:
        sched.completed(one, 10.0)
        sched.submitted(three, 10.0)
    sched.schedule(10.0, free, start)
    assert placed[3] == cores_of_3


def test_a_long_job_uses_cores_outside_the_reservation_only(tmp_path: Path) -> None:
    # 6 cores: 1 (3 cores, ends 10) on 0-2, 2 (1 core, ends 100) on 3; 4-5 free. 3 (4 cores)
    # is the head: freeing 1 gives [0-2] (3 cores, 3 is still busy): not enough; freeing 2
    # gives [0-5]: reserved 0-3 at 100 (the range [0-2] is new, low end first). Free [4-5]
    # holds no reserved core: unlimited. 4 (2 cores, 1000 s) backfills there at t = 2.
    jobs = [
        ("1", 0, 3, 10, 10),
        ("2", 0, 1, 100, 100),
        ("3", 1, 4, 5, 5),
        ("4", 2, 2, 1000, 1000),
    ]
    starts, _ = run(homogeneous(6), jobs, CONTIGUOUS, tmp_path)
    assert starts == {"1": 0, "2": 0, "3": 100, "4": 2}
    assert allocations(tmp_path)["4"] == "4-5"


def test_hosts_option_is_checked() -> None:
    assert parse_scheduler(CONTIGUOUS).hosts == "contiguous"
    assert parse_scheduler("easy").hosts == "any"
    with pytest.raises(InputError, match="hosts.*allowed values: any, contiguous"):
        parse_scheduler({"hosts": "torus"})
    with pytest.raises(InputError, match="conservative"):
        parse_scheduler({"preset": "conservative", "hosts": "contiguous"})
