"""Hand-worked schedules of every backfilling variant on small homogeneous platforms.

Jobs are ``(id, submit, cores, real run time, requested time)``; profiles are ``delay`` so a
job runs exactly its real run time. Each expected start time is worked out in the comments.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from decision_helpers import hetero_platform
from sched_helpers import homogeneous, run, workload

from hdeeprm.decision import ActionSpace, FixedPair, WorkloadManager
from hdeeprm.platform import write_platform_xml
from hdeeprm.scheduling import BackfillScheduler, HeuristicTriple, SchedulerConfig, parse_scheduler
from hdeeprm.simulation import simulate


def test_easy_backfills_a_job_that_ends_before_the_reservation(tmp_path: Path) -> None:
    # 4 cores. 1 starts at 0 (2 cores until 10). 2 needs 4: head, shadow 10, no extra core.
    # 3 (2 cores, 5 s) at t=2 ends at 7 <= 10: backfilled. 4 (1 core, 20 s) at t=3: no core
    # free; at t=7 it would end at 27 > 10 and there is no extra core: waits. 2 starts at 10,
    # 4 when 2 ends (14).
    jobs = [("1", 0, 2, 10, 10), ("2", 1, 4, 4, 4), ("3", 2, 2, 5, 5), ("4", 3, 1, 20, 20)]
    starts, sched = run(homogeneous(4), jobs, "easy", tmp_path)
    assert starts == {"1": 0, "2": 10, "3": 2, "4": 14}
    assert sched.nb_backfilled == 1


def test_easy_extra_cores_are_consumed(tmp_path: Path) -> None:
    # 4 cores. 1: 2 cores until 10. 2 (3 cores) is the head: shadow 10, 2 + 2 - 3 = 1 extra.
    # 3 and 4 (1 core, 100 s) arrive together at t=2: 3 takes the extra core (ends after 10),
    # 4 would delay 2 (no extra core left): waits. 2 starts at 10 on the 3 free cores, 4 at 15.
    jobs = [
        ("1", 0, 2, 10, 10),
        ("2", 1, 3, 5, 5),
        ("3", 2, 1, 100, 100),
        ("4", 2, 1, 100, 100),
    ]
    starts, _ = run(homogeneous(4), jobs, "easy", tmp_path)
    assert starts == {"1": 0, "2": 10, "3": 2, "4": 15}


@pytest.mark.parametrize(
    ("scheduler", "expected"),
    [
        # FCFS backfilling: 3 first; it ends at 2 + 8 = 10 <= shadow 10 (boundary included);
        # then no core is free; 4 waits for 2 (10..15).
        ("easy", {"1": 0, "2": 10, "3": 2, "4": 15}),
        # SJBF: 4 (3 s) first, backfilled; 3 would end at 5 + 8 = 13 > 10 when 4 ends: waits.
        ("easy-sjbf", {"1": 0, "2": 10, "3": 15, "4": 2}),
        # explicit backfill ordering SPF on plain EASY is the same heuristic
        ({"variant": "easy", "backfill": "SPF"}, {"1": 0, "2": 10, "3": 15, "4": 2}),
    ],
)
def test_backfilling_order_easy_vs_sjbf(tmp_path: Path, scheduler, expected) -> None:
    # 4 cores. 1: 3 cores until 10. 2 (4 cores) is the head: shadow 10, no extra core.
    jobs = [("1", 0, 3, 10, 10), ("2", 1, 4, 5, 5), ("3", 2, 1, 8, 8), ("4", 2, 1, 3, 3)]
    starts, _ = run(homogeneous(4), jobs, scheduler, tmp_path)
    assert starts == expected


@pytest.mark.parametrize(
    ("scheduler", "expected"),
    [
        # requested times: 1 is believed to run until 20, so 2 is reserved at 20 and 3 (ends
        # 12) is backfilled at 2. 1 ends early at 5: the reservation moves to 3's predicted end,
        # 12; 4 (2 cores, 6 s) at t=6 ends at 12 <= 12: backfilled. 2 starts at 12.
        ("easy", {"1": 0, "2": 12, "3": 2, "4": 6}),
        # clairvoyant: 2 is reserved at 5, 3 (ends 12) cannot be backfilled; 2 runs 5..10,
        # then 3 and 4 start together at 10.
        ("easy-clairvoyant", {"1": 0, "2": 5, "3": 10, "4": 10}),
    ],
)
def test_reservation_moves_when_a_job_ends_early(tmp_path: Path, scheduler, expected) -> None:
    jobs = [("1", 0, 2, 5, 20), ("2", 1, 4, 5, 5), ("3", 2, 2, 10, 10), ("4", 6, 2, 6, 6)]
    starts, _ = run(homogeneous(4), jobs, scheduler, tmp_path)
    assert starts == expected


class FixedPredictor:
    """Predictions given per job id (capped at the request by the test's choice of values)."""

    def __init__(self, predictions: dict[str, float]) -> None:
        self.predictions = predictions

    def predict(self, job, now: float) -> float:
        return self.predictions[job.record.id.split("!")[-1]]

    def observe(self, job, run_time: float, now: float) -> None:
        pass

    def started(self, job, now: float) -> None:
        pass


@pytest.mark.parametrize(
    ("correction", "expected", "corrections"),
    [
        # 1 (predicted 10 s) is still running at t=20: its prediction becomes the request
        # (1000): shadow 1000. 3 (ends 20 + 30 = 50) and 4 (ends 30 + 60 = 90) backfill.
        ("requested", {"1": 0, "2": 100, "3": 20, "4": 30}, 1),
        # +60 s: 1 is predicted to end at 70; 3 (50 <= 70) backfills, 4 (90 > 70) does not
        # and starts when 2 (100..110) ends.
        ("incremental", {"1": 0, "2": 100, "3": 20, "4": 110}, 1),
        # doubling: 10 -> 20 (ends 20, not after t=20) -> 40: shadow 40; neither 3 (50) nor 4
        # (90) backfills; both start at 110.
        ("doubling", {"1": 0, "2": 100, "3": 110, "4": 110}, 2),
    ],
)
def test_corrections_of_an_underpredicted_job(
    tmp_path: Path, correction: str, expected: dict, corrections: int
) -> None:
    # 6 cores. 1: 4 cores, really 100 s, predicted 10. 2 (6 cores) is the head from t=1.
    jobs = [
        ("1", 0, 4, 100, 1000),
        ("2", 1, 6, 10, 1000),
        ("3", 20, 2, 5, 1000),
        ("4", 30, 2, 5, 1000),
    ]
    predictor = FixedPredictor({"1": 10, "2": 10, "3": 30, "4": 60})
    config = SchedulerConfig(HeuristicTriple(correction=correction))
    sched = BackfillScheduler(config, predictor=predictor)
    starts, _ = run(homogeneous(6), jobs, sched, tmp_path)
    assert starts == expected
    assert sched.nb_corrections == corrections


@pytest.mark.parametrize(
    ("scheduler", "expected"),
    [
        # EASY protects only the head (2): 4 takes the extra core at t=1 and runs until 31,
        # so 3 (4 cores), second in the queue, waits for it.
        ("easy", {"1": 0, "2": 10, "3": 31, "4": 1}),
        # conservative: 2 booked [10, 20), 3 booked [20, 30); 4 (1 core, 30 s) would overlap
        # 3's booking, so it is booked at 30 and starts then.
        ("conservative", {"1": 0, "2": 10, "3": 20, "4": 30}),
    ],
)
def test_conservative_protects_every_queued_job(tmp_path: Path, scheduler, expected) -> None:
    jobs = [
        ("1", 0, 2, 10, 10),
        ("2", 1, 3, 10, 10),
        ("3", 1, 4, 10, 10),
        ("4", 1, 1, 30, 30),
    ]
    starts, _ = run(homogeneous(4), jobs, scheduler, tmp_path)
    assert starts == expected


def test_conservative_booking_moves_earlier_when_a_job_ends_early(tmp_path: Path) -> None:
    # 4 cores. 1 (4 cores) believed until 100, really ends at 10. 2 (2 cores, 20 s) and 3
    # (2 cores, 50 s) are booked at 100 and 100. 1 ends at 10: both start at once.
    jobs = [("1", 0, 4, 10, 100), ("2", 1, 2, 20, 20), ("3", 2, 2, 50, 50)]
    starts, _ = run(homogeneous(4), jobs, "conservative", tmp_path)
    assert starts == {"1": 0, "2": 10, "3": 10}


@pytest.mark.parametrize(
    ("theta", "first"),
    [
        # at t=100, 2 waited 99 s and 3 98 s: with theta = 98.5 only 2 is overdue and goes
        # first (100..150), 3 at 150; with theta = 99.5 neither is, SPF puts 3 first.
        (98.5, "2"),
        (99.5, "3"),
        (None, "3"),
        (0, "2"),  # both overdue: FCFS among them
    ],
)
def test_starvation_threshold(tmp_path: Path, theta, first: str) -> None:
    jobs = [("1", 0, 2, 100, 100), ("2", 1, 2, 50, 50), ("3", 2, 2, 10, 10)]
    scheduler = {"primary": "SPF", "theta": theta}
    starts, _ = run(homogeneous(2), jobs, scheduler, tmp_path)
    if first == "2":
        assert starts == {"1": 0, "2": 100, "3": 150}
    else:
        assert starts == {"1": 0, "2": 110, "3": 100}


@pytest.mark.parametrize(
    ("primary", "order"),
    [
        ("FCFS", ["2", "3", "4"]),
        ("LCFS", ["4", "3", "2"]),
        ("SPF", ["3", "4", "2"]),
        ("LPF", ["2", "4", "3"]),
        ("SAF", ["3", "4", "2"]),
    ],
)
def test_primary_orderings_on_one_core(tmp_path: Path, primary: str, order: list[str]) -> None:
    # One core busy until 10; 2 (30 s), 3 (5 s), 4 (10 s) queue behind it and run one after
    # the other in the primary order.
    jobs = [("1", 0, 1, 10, 10), ("2", 1, 1, 30, 30), ("3", 2, 1, 5, 5), ("4", 3, 1, 10, 10)]
    starts, _ = run(homogeneous(1), jobs, {"primary": primary}, tmp_path)
    t = 10.0
    runs = {"2": 30, "3": 5, "4": 10}
    for jid in order:
        assert starts[jid] == t
        t += runs[jid]


def test_ave2_predictions_from_the_users_history(tmp_path: Path) -> None:
    # 2 cores. a (10 s) and b (30 s) of user 7 run first and teach AVE2 its mean, 20 s.
    jobs = [
        ("a", 0, 1, 10, 1000, 7),
        ("b", 0, 1, 30, 1000, 7),
        ("c", 40, 1, 5, 1000, 7),
        ("d", 50, 1, 5, 1000, 8),
    ]
    predictions: dict[str, float] = {}

    class Spy(BackfillScheduler):
        def submitted(self, record, now):
            super().submitted(record, now)
            predictions[record.id.split("!")[-1]] = self.queue[record.seq].pred

    sched = Spy(
        SchedulerConfig(HeuristicTriple("ave2", "incremental", "easy-sjbf"), backfill="SPF")
    )
    run(homogeneous(2), jobs, sched, tmp_path)
    # a, b: no history (requested 1000); c: mean(10, 30) = 20; d: user 8 has none.
    assert predictions == {"a": 1000, "b": 1000, "c": 20, "d": 1000}


def test_heterogeneous_memory_and_core_policy(tmp_path: Path) -> None:
    # decision_helpers.hetero_platform: node 0 (16,000 MB) cores 0-1 at 2 GFLOPS; node 1
    # (8,000 MB) cores 2-3 at 4.4 and 4-6 at 3.0; node 2 (64,000 MB) cores 7-8 at 4.0.
    # 1 (7 cores) takes the fastest cores by high_gflops: 2, 3, 7, 8, 4, 5, 6; 0 and 1 stay
    # free. 2 (2 tasks of 9,000 MB) has the cores but not the memory (node 0 holds one task):
    # it is the head, reserved "now" (the profile counts cores only) with no spare core, so
    # 3 (1 core, ends at 5) cannot backfill: a job predicted to end after "now" would delay
    # it. At 10, 2 goes to node 2 (cores 7, 8: node 1 lacks the memory) and 3 to core 2.
    jobs = [("1", 0, 7, 10, 10), ("2", 1, 2, 5, 5), ("3", 2, 1, 3, 3)]
    wl = workload(jobs, 9)
    wl.profiles["2"].extra["mem"] = 9000.0
    platform = hetero_platform()
    write_platform_xml(platform, tmp_path / "platform.xml")
    actions = ActionSpace()
    manager = WorkloadManager(
        platform,
        actions,
        FixedPair(actions, "first-high_gflops"),
        scheduler=BackfillScheduler(parse_scheduler("easy")),
    )
    simulate(tmp_path / "platform.xml", wl, manager, tmp_path)
    with open(tmp_path / "out_jobs.csv") as handle:
        rows = {r["job_id"]: r for r in csv.DictReader(handle)}
    assert {k: float(r["starting_time"]) for k, r in rows.items()} == {"1": 0, "2": 10, "3": 10}
    assert rows["1"]["allocated_resources"] == "2-8"
    assert rows["2"]["allocated_resources"] == "7-8"
    assert rows["3"]["allocated_resources"] == "2"
