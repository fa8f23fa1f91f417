"""Refusals proven by the fit capacity carry over to later passes, moved by the jobs that end;
a size refused before is counted before ``start`` is asked.

While no job ends the platform only fills up, so the fit capacity of every size is at most what
it was when a request was refused: the scheduler keeps those refusals from pass to pass
(``BackfillScheduler.carry_refusals``); a job ending moves them by twice its tasks, or drops
those of less memory per task than it had (``_carried_refusals``). A job whose
memory per task was refused before is measured by ``start.capacity`` first
(``BackfillScheduler.count_first``): ``start`` accepts exactly the requests within it, so a
refusal costs one count. These tests work three passes out by hand and replay random queues
with both on and both off: the same jobs start at the same instants, with fewer questions.
"""

from __future__ import annotations

import random

import pytest
from test_candidates import record
from test_refusal_capacity import SPECS, Nodes, replay_random_queue

from hdeeprm.scheduling import BackfillScheduler, parse_scheduler


class CountedNodes(Nodes):
    """:class:`Nodes` whose ``start.capacity`` also records each size it is asked about."""

    def __init__(self, nodes: int, cores: int, memory: float) -> None:
        super().__init__(nodes, cores, memory, capacity=True)
        self.counted: list[float] = []
        count = self.capacity

        def capacity(mem: float) -> int:
            self.counted.append(mem)
            return count(mem)

        self.start.capacity = capacity  # type: ignore[attr-defined]


def test_refusals_carry_over_and_move_when_a_job_ends() -> None:
    # Two nodes of 4 cores and 1,000 MB; every pass walks the whole queue (no fresh walks).
    # t=0: A (3 tasks of 300 MB, predicted 100 s) starts on node 0: 1 core, 100 MB left there.
    # t=1: H (8 cores, no memory) waits (5 free): the head, reserved at t=100, no spare core.
    #   B (4 tasks of 400 MB, 10 s): asked, refused; capacity(400) = min(1, 100 // 400) +
    #   min(4, 1000 // 400) = 0 + 2 = 2, so requests of 3+ tasks of 400+ MB are refused.
    #   D (2 tasks of 450 MB, 50 s): asked, ends by t=100, starts on node 1 (2 cores, 100 MB
    #   left there).
    # t=2: E (3 tasks of 600 MB) arrives; no job ended: B and E are ruled out by (3, 400)
    #   without a question or a count (3 free cores, 1 + 2).
    # t=3: A ends (node 0: 4 cores, 1,000 MB again): H, 6 cores free, is reserved at D's
    #   predicted end (t=51), which B (t=13) ends by. A freed 3 tasks of 300 <= 400 MB: the
    #   carried refusal moves to (3 + 2 x 3, 400) = (9, 400), which no longer covers B (4
    #   tasks). B's size was refused before, so B is counted first: capacity(400) = min(4, 2)
    #   + min(2, 0) = 2 < 4, refused without asking start, which again rules out E (3 >= 3,
    #   600 >= 400).
    nodes = CountedNodes(2, 4, 1000.0)
    sched = BackfillScheduler(parse_scheduler("easy"))
    sched.fresh_walks = False
    a = record(0, 3, 100.0, mem=300.0)
    sched.submitted(a, 0.0)
    sched.schedule(0.0, nodes.free, nodes.start)
    for seq, res, req, mem in [(1, 8, 10.0, 0.0), (2, 4, 10.0, 400.0), (4, 2, 50.0, 450.0)]:
        sched.submitted(record(seq, res, req, mem=mem), 1.0)
    nodes.asked.clear()
    sched.schedule(1.0, nodes.free, nodes.start)
    assert nodes.asked == ["j2", "j4"]
    assert nodes.counted == [400.0]  # after B's refusal (the count of _refused_from)
    assert set(sched.running) == {0, 4}

    sched.submitted(record(5, 3, 10.0, mem=600.0), 2.0)
    nodes.asked.clear()
    nodes.counted.clear()
    sched.schedule(2.0, nodes.free, nodes.start)
    assert nodes.asked == [] and nodes.counted == []

    nodes.end("j0")
    sched.completed(a, 3.0)
    sched.schedule(3.0, nodes.free, nodes.start)
    assert nodes.asked == [] and nodes.counted == [400.0]
    assert set(sched.queue) == {1, 2, 5}
    assert nodes.cores == [4, 2] and nodes.memory == [1000.0, 100.0]


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: str(spec))
def test_carried_refusals_change_no_start(spec: object) -> None:
    """Random queues on 6 nodes of 8 cores and 4,000 MB, jobs ending at random times: the same
    jobs start at the same instants with refusals carried over and counted first as without,
    and ``start`` is asked fewer times."""

    def replay(carry: bool) -> tuple[list[tuple[float, str]], int]:
        nodes = CountedNodes(6, 8, 4000.0)
        sched = BackfillScheduler(parse_scheduler(spec))
        sched.carry_refusals = sched.count_first = carry
        mems = [0.0, 250.0, 400.0, 500.0, 900.0, 1300.0, 2000.0, 3000.0]
        return replay_random_queue(sched, nodes, random.Random(11), mems, per_instant=3)

    (carried, asked), (plain, asked_plain) = replay(True), replay(False)
    assert carried == plain
    assert len(carried) == 300
    assert asked < asked_plain
