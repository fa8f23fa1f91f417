"""The core pool's shortcuts keep its sums bit for bit: a 4-core processor's bandwidth demand,
summed with the loop unrolled, is still the sum in core order (not in the order the cores were
taken); the fit counts, kept as floats, still answer whole numbers equal to a scan of every
node. Floats are compared by ``hex``."""

from __future__ import annotations

import random

from decision_helpers import churn_keeps_demand_exact, make_platform

from hdeeprm.decision import CorePool
from hdeeprm.decision.fit import NodeFloorFit
from hdeeprm.decision.resources import MEM_TOL
from hdeeprm.platform.hierarchy import P0, P2, P3


def _quad_platform() -> CorePool:
    """Two nodes of 10 GB (10,000 MB), each with one 4-core processor of 0.6 GB/s (cores
    0-3 and 4-7)."""
    return CorePool(
        make_platform(
            [
                (10.0, [(2.0, 2.0, 0.6, 80.0, 4)]),
                (10.0, [(2.0, 2.0, 0.6, 80.0, 4)]),
            ]
        )
    )


def test_four_core_demand_is_the_sum_in_core_order() -> None:
    pool = _quad_platform()
    # Taken in the order cores 2, 1, 0 with 0.3, 0.2 and 0.1 GB/s: the running sum in that
    # order is (0.3 + 0.2) + 0.1 = 0.6, but in core order (((0.0 + 0.1) + 0.2) + 0.3) + 0.0
    # = 0.6000000000000001 (0.1 + 0.2 = 0.30000000000000004): the settle must give the latter.
    pool.take(2, "c", 0.0, 0.3)
    pool.take(1, "b", 0.0, 0.2)
    pool.take(0, "a", 0.0, 0.1)
    running = 0.3 + 0.2 + 0.1
    assert running.hex() == (0.6).hex()
    pool.settle([2, 1, 0], 1.0)
    assert pool.proc_demand[0].hex() == (0.6000000000000001).hex()
    # Limit 0.6 + 1e-9: not over-subscribed; busy cores P0, the free one P2.
    assert pool.over_subscribed == []
    assert pool.pstate[:4] == [P0, P0, P0, P2]
    # Core 1 freed: ((0.0 + 0.1) + 0.0) + 0.3 + 0.0 = 0.4.
    pool.release([1], 2.0)
    assert pool.proc_demand[0].hex() == (0.4).hex()
    assert pool.pstate[:4] == [P0, P2, P0, P2]
    # Every core freed: 0.0 and the whole processor idle (P3).
    pool.release([0, 2], 3.0)
    assert pool.proc_demand[0] == 0.0 and pool.pstate[:4] == [P3] * 4


def test_four_core_demand_matches_the_loop_on_random_takes_and_releases() -> None:
    churn_keeps_demand_exact(_quad_platform(), seed=3, steps=500, most=3)


def test_fit_counts_are_whole_numbers_equal_to_a_scan() -> None:
    pool = _quad_platform()
    fit = NodeFloorFit(pool)
    draw = random.Random(8)
    sizes = [1000.0, 2500.0, 2560.0, 3333.3, 0.1 + 0.2, 10240.0]
    running: list[list[int]] = []
    for step in range(300):
        free = list(pool.free_cores)
        if free and (not running or draw.random() < 0.6):
            core = draw.choice(free)
            node = pool.core_node[core]
            mem = draw.choice([0.0, 1000.0, 2560.0, 0.3, 3333.3])
            if pool.node_free_mem[node] - mem < 0.0:
                mem = 0.0
            pool.take(core, f"j{step}", mem, 0.0)
            pool.settle([core], float(step))
            running.append([core])
        elif running:
            pool.release(running.pop(draw.randrange(len(running))), float(step))
        mem = draw.choice(sizes)
        scan = 0
        for node, cores in enumerate(pool.node_cores):
            left = len(cores) - pool.node_busy[node]
            if left:
                scan += max(0, min(left, int((pool.node_free_mem[node] + MEM_TOL) // mem)))
        got = fit.tasks(mem)
        assert type(got) is int and got == scan, (step, mem)
        assert fit.fits(scan, mem) and not fit.fits(scan + 1, mem)
    # By hand on the idle platform (10,000 MB and 4 cores per node): 2,500 MB tasks, 4 per
    # node, 8 in all; 2,560 MB tasks, 10,000 // 2,560 = 3 per node, 6 in all.
    pool.reset()
    assert fit.tasks(2500.0) == 8 and fit.tasks(2560.0) == 6
