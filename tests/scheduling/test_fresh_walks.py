"""Passes after submissions alone walk only the new jobs (work counted, not timed).

When no job ended, no prediction was corrected and the orderings did not change since the
last EASY pass, and the primary walk stops at the same head with no more free cores, no later
reservation and no more spare cores, every job queued at the last pass is turned down again:
the backfilling walk visits only the jobs submitted since. These tests count the visits on
hand-built queues, check a case where ties of predicted ends at the shadow time give more
spare cores (so the whole queue must be walked), and replay staggered submissions with and
without the rule: the same jobs start at the same instants.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from test_candidates import Platform, queue, record

from hdeeprm.scheduling import BackfillScheduler, parse_scheduler


def test_a_pass_after_a_submission_visits_only_the_new_job() -> None:
    # test_candidates' queue: A (8 cores) runs, H (12 cores) waits with its reservation at
    # t=100 and no spare core; behind it 600 jobs that cannot start, then E (1 core, 10 s),
    # backfilled at t=1 (3 cores left free).
    sched = BackfillScheduler(parse_scheduler("easy"))
    platform = Platform()
    queue(sched, platform)
    sched.schedule(1.0, platform.free, platform.start)
    assert platform.free_cores == 3
    walks, examined = sched.nb_full_walks, sched.nb_examined
    # t=2: F (1 core, 10 s) arrives; it ends at 12 <= 100: backfilled. Only F is visited.
    platform.attempts.clear()
    sched.submitted(record(603, 1, 10.0), 2.0)
    sched.schedule(2.0, platform.free, platform.start)
    assert platform.attempts == ["j603"]
    assert sched.nb_examined == examined + 1
    assert (sched.nb_full_walks, sched.nb_fresh_walks) == (walks, 1)
    assert platform.free_cores == 2
    # t=3, nothing new: nothing visited, nothing attempted.
    platform.attempts.clear()
    sched.schedule(3.0, platform.free, platform.start)
    assert platform.attempts == []
    assert sched.nb_examined == examined + 1
    assert (sched.nb_full_walks, sched.nb_fresh_walks) == (walks, 2)
    # F ends at t=12: a completion loosens the platform, so the next pass walks the queue
    # (j202 is refused for memory again, which drops its request; nothing else fits).
    platform.free_cores += 1
    sched.completed(record(603, 1, 10.0), 12.0)
    platform.attempts.clear()
    sched.schedule(12.0, platform.free, platform.start)
    assert platform.attempts == ["j202"]
    assert (sched.nb_full_walks, sched.nb_fresh_walks) == (walks + 1, 2)


def test_the_same_pass_walks_the_whole_queue_without_the_rule() -> None:
    sched = BackfillScheduler(parse_scheduler("easy"))
    sched.fresh_walks = False
    platform = Platform()
    queue(sched, platform)
    sched.schedule(1.0, platform.free, platform.start)
    platform.attempts.clear()
    sched.submitted(record(603, 1, 10.0), 2.0)
    sched.schedule(2.0, platform.free, platform.start)
    # j202 (memory) is tried again before F: one more attempt, and a walk of the index.
    assert platform.attempts == ["j202", "j603"]
    assert sched.nb_fresh_walks == 0


@pytest.mark.parametrize("fresh_walks", [True, False])
def test_ties_at_the_shadow_time_give_spare_cores_to_an_older_job(fresh_walks: bool) -> None:
    # 10 cores. t=0: A (4 cores) and B (3 cores), both predicted to end at 100, start: 3
    # free. H (7 cores) is the head: counting ends from the earliest, 3 + A's 4 = 7 at t=100:
    # shadow 100, 0 spare. O (1 core, 1,000 s) would end after 100 and there is no spare
    # core: waits. C (2 cores, 100 s) ends at 100 <= 100: backfilled, 1 core left free.
    # t=10: D (1 core, 1,000 s) arrives. Now 1 + A's 4 = 5 < 7, so B's end (also t=100) is
    # counted too: 1 + 4 + 3 = 8, shadow 100 with 1 spare core. The older O takes it
    # (FCFS), and D, with no free core left, waits. A walk of the new job alone would have
    # started D instead: the rule sees more spare cores than at the last pass and walks all.
    sched = BackfillScheduler(parse_scheduler("easy"))
    sched.fresh_walks = fresh_walks
    free = [10]
    started: list[tuple[float, str]] = []
    now = 0.0

    def start(job: SimpleNamespace) -> bool:
        if job.res > free[0]:
            return False
        free[0] -= job.res
        started.append((now, job.id))
        return True

    for seq, res, req in [(0, 4, 100.0), (1, 3, 100.0), (2, 7, 50.0), (3, 1, 1000.0)]:
        sched.submitted(record(seq, res, req), 0.0)
    sched.submitted(record(4, 2, 100.0), 0.0)
    sched.schedule(0.0, lambda: free[0], start)
    assert started == [(0.0, "j0"), (0.0, "j1"), (0.0, "j4")]
    now = 10.0
    sched.submitted(record(5, 1, 1000.0), 10.0)
    sched.schedule(10.0, lambda: free[0], start)
    assert started[3:] == [(10.0, "j3")]
    assert free[0] == 0
    assert sched.nb_fresh_walks == 0


SPECS = [
    "easy",
    "easy-sjbf",
    "easy++",
    {"variant": "easy", "primary": "SPF", "backfill": "LAF"},
    {"variant": "easy", "primary": "LEXP", "backfill": "SEXP"},
    {"variant": "easy", "backfill": "WFP3"},
    {"preset": "easy", "theta": 30.0},
]


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: str(spec))
def test_fresh_walks_start_what_full_walks_start(spec: object) -> None:
    """Staggered submissions on a 12-core platform whose resource manager places tasks of
    500 MB only with 4 more cores free than they need (node memory): the same jobs start at
    the same instants with and without the rule, and the rule did skip walks (except with a
    threshold, which turns it off)."""

    def replay(fresh_walks: bool) -> tuple[list[tuple[float, str]], BackfillScheduler]:
        sched = BackfillScheduler(parse_scheduler(spec))
        sched.fresh_walks = fresh_walks
        platform = Platform()
        log: list[tuple[float, str]] = []
        running: dict[str, tuple[float, SimpleNamespace]] = {}
        now = 0.0

        def start(job: SimpleNamespace) -> bool:
            need = job.res + (4 if job.mem >= 500.0 else 0)  # monotone, as a real platform
            if need <= platform.free_cores:
                platform.free_cores -= job.res
                log.append((now, job.id))
                running[job.id] = (now + min(job.req_time, 5.0 + 3.0 * (job.seq % 7)), job)
                return True
            return False

        jobs = []
        for seq in range(160):  # cores 1..12 (1..8 with memory), requests 10..90 s
            res = 1 + (seq * 5) % (8 if seq % 9 == 4 else 12)
            mem = 500.0 if seq % 9 == 4 else 0.0
            jobs.append(record(seq, res, 10.0 + 10.0 * (seq * 7 % 9), mem=mem))
        arrivals = {seq: 2.0 * seq // 3 for seq in range(160)}  # often several per instant
        while running or jobs or sched.queue:
            for jid, (end, job) in sorted(running.items()):
                if end <= now:
                    del running[jid]
                    platform.free_cores += job.res
                    sched.completed(job, now)
            while jobs and arrivals[jobs[0].seq] <= now:
                job = jobs.pop(0)
                job.subtime = arrivals[job.seq]
                sched.submitted(job, now)
            sched.schedule(now, platform.free, start)
            now += 1.0
        return log, sched

    fresh, sched = replay(True)
    full, reference = replay(False)
    assert fresh == full
    assert len(fresh) == 160
    assert reference.nb_fresh_walks == 0
    if isinstance(spec, dict) and spec.get("theta") is not None:
        assert sched.nb_fresh_walks == 0
    else:
        assert sched.nb_fresh_walks > 0
        assert sched.nb_examined < reference.nb_examined


def test_a_head_reserved_now_for_memory_lets_only_new_jobs_be_walked() -> None:
    # 12 cores, the resource manager refuses tasks of 500 MB. t=0: A (8 cores, 100 s) starts,
    # 4 free. H (2 cores, 500 MB) has the cores but not the memory: the head, reserved "now"
    # with 4 - 2 = 2 spare cores, so only jobs of at most 2 cores may start (none ends by
    # "now"). O (3 cores, 10 s) waits. t=5: F (1 core, 10 s) arrives: the walk visits only F,
    # which takes a spare core; O is not tried again.
    sched = BackfillScheduler(parse_scheduler("easy"))
    platform = Platform()
    sched.submitted(record(0, 8, 100.0), 0.0)
    sched.submitted(record(1, 2, 50.0, mem=500.0), 0.0)
    sched.submitted(record(2, 3, 10.0), 0.0)
    sched.schedule(0.0, platform.free, platform.start)
    assert platform.attempts == ["j0", "j1"]  # O (3 > 2 spare cores) is not even tried
    assert platform.free_cores == 4
    platform.attempts.clear()
    sched.submitted(record(3, 1, 10.0), 5.0)
    examined = sched.nb_examined
    sched.schedule(5.0, platform.free, platform.start)
    assert platform.attempts == ["j1", "j3"]  # H tried again (head), then F only
    assert sched.nb_examined == examined + 1
    assert sched.nb_fresh_walks == 1
    assert platform.free_cores == 3
