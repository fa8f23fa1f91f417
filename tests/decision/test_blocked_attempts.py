"""A job blocked on memory while cores are free is not re-attempted at every decision point.

Counts allocation attempts (``ResourceManager.nb_attempts``: allocations that started picking
cores) and refusals by the fit index (``nb_refused``), never time.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from decision_helpers import begins, completed, hetero_platform, job, make_platform, submitted

from hdeeprm.decision import ActionSpace, CorePool, FixedPair, ResourceManager, WorkloadManager
from hdeeprm.decision._segment import MaxTree
from hdeeprm.decision.resource_manager import _ProcessorHeap
from hdeeprm.decision.resources import MEM_TOL
from hdeeprm.simulation.events import ExecuteJob


def _starts(decisions) -> list[tuple[str, tuple[int, ...]]]:
    return [(d.job_id, tuple(d.alloc)) for d in decisions if isinstance(d, ExecuteJob)]


@pytest.mark.parametrize("nb_events", [5, 50])
def test_memory_blocked_job_is_attempted_once_until_memory_frees(nb_events: int) -> None:
    # One node of 10 GB = 10,000 MB, one processor of 4 identical cores.
    platform = make_platform([(10.0, [(1.0, 1.0, 100.0, 40.0, 4)])])
    actions = ActionSpace()
    manager = WorkloadManager(platform, actions, FixedPair(actions, "first-high_gflops"))
    rm = manager.resource_manager
    a = job("a", mem=8000.0)
    d = job("d", mem=0.0)
    b = job("b", mem=4000.0)  # 3 cores free but 10,000 - 8,000 = 2,000 MB < 4,000 MB
    manager.handle(begins(4))
    assert _starts(manager.handle(submitted(0.0, a))) == [("a", (0,))]
    assert _starts(manager.handle(submitted(0.5, d))) == [("d", (1,))]
    assert (rm.nb_attempts, rm.nb_refused) == (2, 0)
    # b's first attempt picks nothing (no node has 4,000 MB) and fails: attempt 3.
    assert _starts(manager.handle(submitted(1.0, b))) == []
    assert (rm.nb_attempts, rm.nb_refused) == (3, 0)
    # d ends: a core frees, no memory does; then nb_events submissions, each a decision point
    # where b (first come) is the chosen job. None attempts b again.
    assert _starts(manager.handle(completed(1.5, d))) == []
    fillers = [job(f"c{i}", mem=0.0) for i in range(nb_events)]
    for i, filler in enumerate(fillers):
        assert _starts(manager.handle(submitted(2.0 + i, filler))) == []
    assert (rm.nb_attempts, rm.nb_refused) == (3, 1 + nb_events)
    assert manager.nb_decisions == 4 + nb_events
    # a ends: 10,000 MB and 4 cores free, b fits: b, c0, c1, c2 start (attempts 4-7); c3 finds
    # no free core, which is known from the free count alone (neither attempted nor refused).
    starts = _starts(manager.handle(completed(100.0, a)))
    assert starts == [("b", (0,)), ("c0", (1,)), ("c1", (2,)), ("c2", (3,))]
    assert (rm.nb_attempts, rm.nb_refused) == (7, 1 + nb_events)


def _brute_tasks(pool: CorePool, mem: float) -> int:
    """Tasks of ``mem`` MB the pool can take now, by replaying the pick loop's test per node."""
    total = 0
    for node, cores in enumerate(pool.node_cores):
        free = len(cores) - pool.node_busy[node]
        left = pool.node_free_mem[node]
        while free and left >= mem - MEM_TOL:
            left -= mem
            free -= 1
            total += 1
    return total


def test_fit_index_agrees_with_the_pick_loop_under_random_churn() -> None:
    # hetero_platform: nodes of 16,000 / 8,000 / 64,000 MB with 2 / 5 / 2 cores.
    pool = CorePool(hetero_platform())
    rm = ResourceManager(pool, np.random.default_rng(0))
    sizes = [0.0, 1000.0, 3000.0, 4000.0, 7999.9999995, 8000.0, 16000.0, 20000.0]
    for mem in sizes:
        rm.fit.watch(mem)
    draw = random.Random(7)
    running: list[str] = []
    for step in range(400):
        if running and draw.random() < 0.4:
            job_id = running.pop(draw.randrange(len(running)))
            pool.release([c for c in range(pool.nb_cores) if pool.core_job[c] == job_id], step)
        else:
            res, mem = draw.randint(1, 4), draw.choice(sizes)
            expected = _brute_tasks(pool, mem) >= res
            assert rm.can_fit(res, mem) == expected, (step, res, mem)
            policy = draw.choice(["high_gflops", "low_power", "high_mem", "high_cores"])
            alloc = rm.allocate(str(step), res, mem, 1.0, policy, step)
            assert (alloc is not None) == expected
            if alloc:
                running.append(str(step))
    # The watched sizes share one change log, compacted (every size brought up to date) when
    # it grows past a few times the node count: that happened, and answers stayed exact.
    assert rm.fit.log.base > rm.fit.log.limit
    assert len(rm.fit.tracked) == len(sizes)
    pool.reset()
    rm.reset()
    for mem in sizes[:3]:
        rm.fit.watch(mem)
    for res in (6, 7, 9):  # 3,000 MB tasks on the idle platform: 2 + 2 + 2 = 6
        assert [rm.can_fit(res, mem) for mem in sizes[:3]] == [True, True, res <= 6]


def test_ranked_tree_picks_what_the_processor_heap_picks() -> None:
    # The static policies' max tree must choose exactly the core the version-stamped heap of
    # the dynamic policies would, for any memory need and any state.
    pool = CorePool(hetero_platform())
    rm = ResourceManager(pool, np.random.default_rng(0))
    draw = random.Random(3)
    for policy in ("high_gflops", "low_power"):
        reference = _ProcessorHeap(pool, rm._primary(policy))
        for step in range(300):
            mem = draw.choice([0.0, 2000.0, 5000.0, 9000.0, 30000.0])
            assert rm.pick(policy, mem) == reference.pick(mem), (policy, step, mem)
            free = [c for c in range(pool.nb_cores) if pool.core_job[c] is None]
            busy = [c for c in range(pool.nb_cores) if pool.core_job[c] is not None]
            if busy and (not free or draw.random() < 0.5):
                pool.release([draw.choice(busy)], step)
            else:
                core = draw.choice(free)
                node = pool.core_node[core]
                if pool.node_free_mem[node] >= mem - MEM_TOL:
                    pool.take(core, str(step), mem, 2.0)
                    pool.settle([core], step)


def test_max_tree_leftmost_and_updates() -> None:
    tree = MaxTree([1.0, 5.0, 3.0, float("-inf"), 5.0])
    assert tree.top == 5.0
    assert [tree.leftmost_at_least(x) for x in (0.0, 2.0, 4.0, 5.0, 6.0)] == [0, 1, 1, 1, None]
    tree.set(1, 0.0)  # slot 1 drops: the next 5.0 is slot 4
    assert tree.leftmost_at_least(4.0) == 4 and tree.leftmost_at_least(2.0) == 2
    tree.set(3, 9.0)
    assert tree.top == 9.0 and tree.leftmost_at_least(6.0) == 3
