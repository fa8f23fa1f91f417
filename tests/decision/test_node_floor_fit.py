"""``WorkloadManager.fits_now`` answered from per-size counts kept incrementally
(:class:`hdeeprm.decision.fit.NodeFloorFit`): the same answers as the scan of every node it
replaces, and a recount of only the nodes changed since a size was last asked."""

from __future__ import annotations

import random

from decision_helpers import hetero_platform

from hdeeprm.decision import CorePool
from hdeeprm.decision.fit import NodeFloorFit
from hdeeprm.decision.resources import MEM_TOL


def _scan(pool: CorePool, mem: float) -> int:
    """The former ``fits_now`` loop, summed over every node (counts below 0 count as 0)."""
    total = 0
    for node in range(len(pool.node_cores)):
        free = len(pool.node_cores[node]) - pool.node_busy[node]
        if free:
            total += max(0, min(free, int((pool.node_free_mem[node] + MEM_TOL) // mem)))
    return total


def test_counts_match_a_scan_of_every_node_under_random_churn() -> None:
    pool = CorePool(hetero_platform())
    fit = NodeFloorFit(pool)
    draw = random.Random(11)
    sizes = [100.0, 2000.0, 3999.0, 4000.0, 7000.0, 16000.0, 0.1 + 0.2]
    running: list[list[int]] = []
    for step in range(400):
        free = list(pool.free_cores)
        if free and (not running or draw.random() < 0.6):
            core = draw.choice(free)
            node = pool.core_node[core]
            mem = draw.choice([0.0, 1000.0, 2500.0, 0.3]) if pool.node_free_mem[node] > 2600 else 0
            pool.take(core, f"j{step}", mem, 0.0)
            pool.settle([core], float(step))
            running.append([core])
        elif running:
            pool.release(running.pop(draw.randrange(len(running))), float(step))
        mem = draw.choice(sizes)
        assert fit.tasks(mem) == _scan(pool, mem)
    pool.reset()
    for mem in sizes:
        assert fit.tasks(mem) == _scan(pool, mem)


def test_a_size_asked_again_recounts_only_the_changed_nodes() -> None:
    # hetero_platform: node 0 (16,000 MB, cores 0-1), node 1 (8,000 MB, cores 2-6), node 2
    # (64,000 MB, cores 7-8). Tasks of 4,000 MB: 2 + 2 + 2 = 6.
    pool = CorePool(hetero_platform())
    fit = NodeFloorFit(pool)
    assert fit.tasks(4000.0) == 6
    assert fit.nb_builds == 1
    pool.take(2, "a", 4000.0, 0.0)  # node 1: 4,000 MB left, 4 free cores -> 1 task
    pool.settle([2], 1.0)
    assert fit.tasks(4000.0) == 5
    pool.release([2], 2.0)
    assert fit.tasks(4000.0) == 6
    assert fit.nb_builds == 1  # caught up from the change log, never rebuilt
    assert fit.tasks(1000.0) == 9  # one free core each: every core
    assert fit.nb_builds == 2


def test_change_log_stays_bounded_and_idle_without_questions() -> None:
    pool = CorePool(hetero_platform())
    fit = NodeFloorFit(pool)
    assert fit.log not in pool.node_change_listeners  # nobody asked: nothing recorded
    assert fit.tasks(4000.0) == 6
    assert fit.log in pool.node_change_listeners
    for step in range(3 * fit.limit):  # never asked again: compacted, then dropped
        pool.take(7, "a", 100.0, 0.0)
        pool.release([7], float(step))
        assert len(fit.log.nodes) <= fit.limit
    assert fit.sizes == {}
    assert fit.log not in pool.node_change_listeners
    assert fit.tasks(4000.0) == _scan(pool, 4000.0)


def test_fits_answers_as_the_scan_and_keeps_only_refused_sizes() -> None:
    pool = CorePool(hetero_platform())
    fit = NodeFloorFit(pool)
    draw = random.Random(5)
    sizes = [100.0, 2000.0, 3999.0, 4000.0, 7000.0, 16000.0, 0.1 + 0.2]
    running: list[list[int]] = []
    answers = set()
    for step in range(400):
        free = list(pool.free_cores)
        if free and (not running or draw.random() < 0.6):
            core = draw.choice(free)
            node = pool.core_node[core]
            mem = draw.choice([0.0, 1000.0, 2500.0, 0.3]) if pool.node_free_mem[node] > 2600 else 0
            pool.take(core, f"j{step}", mem, 0.0)
            pool.settle([core], float(step))
            running.append([core])
        elif running:
            pool.release(running.pop(draw.randrange(len(running))), float(step))
        mem, res = draw.choice(sizes), draw.randint(1, 10)
        answer = fit.fits(res, mem)
        assert answer == (_scan(pool, mem) >= res), (step, mem, res)
        answers.add(answer)
    assert answers == {True, False}
    # By hand on the idle platform: 4,000 MB tasks, 2 + 2 + 2 = 6 (see above). Three are
    # found by node 1 (2 + 2), so nothing is counted or kept; seven never fit: kept.
    fresh = NodeFloorFit(CorePool(hetero_platform()))
    assert fresh.fits(3, 4000.0) and fresh.nb_builds == 0 and fresh.sizes == {}
    assert not fresh.fits(7, 4000.0) and fresh.nb_builds == 1 and 4000.0 in fresh.sizes
    assert fresh.fits(6, 4000.0) and fresh.nb_builds == 1  # answered from the kept counts
