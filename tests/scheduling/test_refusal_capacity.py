"""A refusal rules out every request the platform's capacity proves cannot start.

When the resource manager refuses a job of ``res`` tasks of ``mem`` MB, the scheduler asks
how many such tasks fit now (``start.capacity``, :meth:`WorkloadManager.fit_capacity`) and
rules out, for the rest of the pass, every request of more tasks than that with at least
``mem`` MB each, instead of only those of at least ``res`` tasks: the count only shrinks as
jobs start and as the memory per task grows. These tests work a pass out by hand, replay
queues on a node platform with and without the capacity (the same jobs start at the same
instants, with fewer questions), and check the workload manager's count against
``fits_now``.
"""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest
from decision_helpers import hetero_platform
from test_candidates import record

from hdeeprm.decision import ActionSpace, FixedPair, WorkloadManager
from hdeeprm.scheduling import BackfillScheduler, parse_scheduler


class Nodes:
    """Nodes of ``cores`` cores and ``memory`` MB each; tasks go first-fit, one per free core
    of a node with the task's memory free. ``capacity`` is the workload manager's count:
    the sum over nodes of ``min(free cores, free memory // mem)``."""

    def __init__(self, nodes: int, cores: int, memory: float, capacity: bool) -> None:
        self.cores = [cores] * nodes
        self.memory = [memory] * nodes
        self.asked: list[str] = []
        self.running: dict[str, list[tuple[int, int, float]]] = {}
        self.start: object = self._start
        if capacity:

            def start(job: SimpleNamespace) -> bool:
                return self._start(job)

            start.capacity = self.capacity  # type: ignore[attr-defined]
            self.start = start

    def free(self) -> int:
        return sum(self.cores)

    def capacity(self, mem: float) -> int:
        return sum(min(c, int(m // mem)) for c, m in zip(self.cores, self.memory))

    def _start(self, job: SimpleNamespace) -> bool:
        self.asked.append(job.id)
        if job.res > (self.capacity(job.mem) if job.mem > 0 else self.free()):
            return False
        left, taken = job.res, []
        for node, (c, m) in enumerate(zip(self.cores, self.memory)):
            n = min(c, int(m // job.mem) if job.mem > 0 else c, left)
            if n:
                self.cores[node] -= n
                self.memory[node] -= n * job.mem
                taken.append((node, n, n * job.mem))
                left -= n
            if not left:
                break
        self.running[job.id] = taken
        return True

    def end(self, job_id: str) -> None:
        for node, n, mem in self.running.pop(job_id):
            self.cores[node] += n
            self.memory[node] += mem


@pytest.mark.parametrize("capacity", [True, False])
def test_a_refusal_rules_out_what_the_capacity_proves(capacity: bool) -> None:
    # Two nodes of 4 cores and 1,000 MB. A (3 tasks of 300 MB) runs on node 0, leaving it
    # 1 core and 100 MB; node 1 has 4 cores and 1,000 MB: 5 cores free. H (8 cores) waits,
    # reserved at A's predicted end (t=100) with no spare core. Behind it, all short:
    # B (4 tasks of 400 MB): node 0 takes min(1, 100 // 400) = 0, node 1 min(4, 2) = 2:
    #   2 < 4, refused; with the capacity, every request of 3+ tasks of 400+ MB is ruled out.
    # C (3 tasks of 500 MB): 3 >= 3 and 500 >= 400: ruled out without asking (capacity);
    #   without it, only 4+ tasks of 400+ MB are, so C is asked (node 1: min(4, 2) = 2 < 3).
    # D (2 tasks of 450 MB): node 1 min(4, 2) = 2: asked in both cases, and it starts.
    nodes = Nodes(2, 4, 1000.0, capacity)
    sched = BackfillScheduler(parse_scheduler("easy"))
    sched.fresh_walks = False
    sched.submitted(record(0, 3, 100.0, mem=300.0), 0.0)  # A
    sched.schedule(0.0, nodes.free, nodes.start)
    assert nodes.cores == [1, 4] and nodes.memory == [100.0, 1000.0]
    for seq, res, mem in [(1, 8, 0.0), (2, 4, 400.0), (3, 3, 500.0), (4, 2, 450.0)]:
        sched.submitted(record(seq, res, 10.0, mem=mem), 0.0)
    nodes.asked.clear()
    sched.schedule(1.0, nodes.free, nodes.start)
    assert nodes.asked == (["j2", "j4"] if capacity else ["j2", "j3", "j4"])
    assert set(sched.running) == {0, 4}
    assert nodes.cores == [1, 2] and nodes.memory == [100.0, 100.0]


SPECS: list[object] = [
    "easy",
    "easy-sjbf",
    "easy++",
    "conservative",
    {"variant": "easy", "primary": "LEXP", "backfill": "SAF"},
    {"variant": "easy", "backfill": "WFP3"},
]


def replay_random_queue(
    sched: BackfillScheduler, nodes: Any, draw: random.Random, mems: list[float], per_instant: int
) -> tuple[list[tuple[float, str]], int]:
    """300 random jobs (``per_instant`` submitted per second, memory per task drawn from
    ``mems``) scheduled by ``sched`` on ``nodes`` (6 nodes of 8 cores and 4,000 MB) until all
    ended: the (instant, job) starts and how many start requests ``nodes`` was asked."""
    log: list[tuple[float, str]] = []
    ends: dict[str, tuple[float, SimpleNamespace]] = {}
    jobs = []
    for seq in range(300):
        res = draw.choice([1, 1, 2, 3, 4, 6, 8, 12, 16, 24])
        mem = draw.choice(mems)
        if mem and res > 6 * min(8, int(4000.0 // mem)):
            mem = 0.0  # could never start on the empty platform
        job = record(seq, res, float(draw.randrange(5, 80)), mem=mem)
        job.subtime = float(seq // per_instant)
        jobs.append(job)
    now = 0.0
    while jobs or ends:
        for jid, (end, job) in sorted(ends.items()):
            if end <= now:
                del ends[jid]
                nodes.end(jid)
                sched.completed(job, now)
        while jobs and jobs[0].subtime <= now:
            sched.submitted(jobs.pop(0), now)
        before = set(sched.running)
        sched.schedule(now, nodes.free, nodes.start)
        for seq in sorted(set(sched.running) - before):
            job = sched.running[seq].record
            log.append((now, job.id))
            ends[job.id] = (now + job.req_time * (0.3 + 0.1 * (seq % 8)), job)
        now += 1.0
    return log, len(nodes.asked)


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: str(spec))
def test_the_capacity_changes_no_start(spec: object) -> None:
    """Random queues of jobs with and without memory on 6 nodes of 8 cores and 4,000 MB:
    the same jobs start at the same instants with the capacity as without, and fewer are
    asked for."""

    def replay(capacity: bool) -> tuple[list[tuple[float, str]], int]:
        nodes = Nodes(6, 8, 4000.0, capacity)
        sched = BackfillScheduler(parse_scheduler(spec))
        mems = [0.0, 0.0, 250.0, 400.0, 500.0, 900.0, 1300.0, 2000.0]
        return replay_random_queue(sched, nodes, random.Random(7), mems, per_instant=2)

    (with_capacity, asked), (without, asked_without) = replay(True), replay(False)
    assert with_capacity == without
    assert len(with_capacity) == 300
    assert asked < asked_without


def test_fit_capacity_is_the_largest_request_fits_now_accepts() -> None:
    # hetero_platform: node 0 (16,000 MB, cores 0-1), node 1 (8,000 MB, cores 2-6), node 2
    # (64,000 MB, cores 7-8). Random takes and releases of cores with memory; at each state,
    # fits_now(res, mem) is exactly res <= fit_capacity(mem), and the count never grows with
    # the memory per task.
    actions = ActionSpace()
    manager = WorkloadManager(hetero_platform(), actions, FixedPair(actions, "first-high_gflops"))
    pool = manager.pool
    draw = random.Random(3)
    sizes = [500.0, 1000.0, 2500.0, 3999.0, 4000.0, 7000.0, 16000.0]
    taken: list[int] = []
    for step in range(300):
        free = list(pool.free_cores)
        if free and (not taken or draw.random() < 0.6):
            core = draw.choice(free)
            mem = (
                draw.choice([0.0, 1000.0, 3000.0])
                if pool.node_free_mem[pool.core_node[core]] > 3000
                else 0.0
            )
            pool.take(core, f"j{step}", mem, 0.0)
            pool.settle([core], float(step))
            taken.append(core)
        elif taken:
            pool.release([taken.pop(draw.randrange(len(taken)))], float(step))
        counts = [manager.fit_capacity(mem) for mem in sizes]
        assert counts == sorted(counts, reverse=True)
        for mem, most in zip(sizes, counts):
            for res in range(1, pool.free_count + 2):
                assert manager.fits_now(res, mem) == (res <= most)
