"""``CorePool.settle_taken`` (the static core policies' allocations, cores grouped by processor)
and the grouped ``release`` leave the pool exactly as the core-by-core path did: the same
P-states and net decisions, demands and free memory bit for bit, the same episodes and the same
order of the free-core list the ``random`` policy draws from."""

from __future__ import annotations

import random

import numpy as np
from decision_helpers import hetero_platform

from hdeeprm.decision import CorePool, ResourceManager
from hdeeprm.decision.fit import NodeFloorFit


def _state(pool: CorePool) -> tuple:
    return (
        list(pool.pstate),
        list(pool.emitted),
        [x.hex() for x in pool.proc_demand],
        [x.hex() for x in pool.node_free_mem],
        list(pool.free_cores),
        list(pool.free_index),
        [list(f) for f in pool.proc_free],
        list(pool.proc_busy),
        list(pool.node_busy),
        list(pool.core_job),
        list(pool.episodes),
        pool.over_subscribed,
    )


def test_grouped_settle_and_release_match_core_by_core() -> None:
    # hetero_platform: four processors of 2 / 2 / 3 / 2 cores with 16 / 20 / 48 / 12 GB/s, so
    # 10 GB/s tasks over-subscribe some processors (P1 and episodes) and not others; 16 / 8 /
    # 64 GB nodes, so 3,000 MB tasks leave some cores without memory.
    fast = CorePool(hetero_platform())
    slow = CorePool(hetero_platform())
    manager = ResourceManager(fast, np.random.default_rng(0))
    fits = NodeFloorFit(fast)  # exact: no allocation below is rolled back
    draw = random.Random(5)
    running: dict[str, list[int]] = {}
    kinds = {"grouped": 0, "refused": 0, "release": 0}
    for step in range(800):
        now = float(step)
        if running and draw.random() < 0.45:
            job_id = draw.choice(sorted(running))
            cores = running.pop(job_id)
            fast.release(tuple(cores), now)
            for core in cores:  # the generic path: one give per core, then settle
                slow.give(core)
            slow.settle(cores, now)
            kinds["release"] += 1
        else:
            job_id = f"j{step}"
            res = draw.randint(1, 5)
            mem = draw.choice([0.0, 1000.0, 3000.0])
            bw = draw.choice([0.0, 4.0, 10.0])
            policy = draw.choice(["high_gflops", "low_power"])
            if res > fast.free_count or (mem > 0.0 and not fits.fits(res, mem)):
                # A rolled-back attempt leaves the free-core list in another order than no
                # attempt (as it always did): not what is compared here.
                kinds["refused"] += 1
                continue
            cores = manager.allocate(job_id, res, mem, bw, policy, now)
            assert cores is not None, step
            for core in cores:  # the generic path: one take per core, then settle
                slow.take(core, job_id, mem, bw)
            slow.settle(cores, now)
            running[job_id] = cores
            kinds["grouped"] += 1
        assert fast.drain() == slow.drain(), step
        assert _state(fast) == _state(slow), step
    assert kinds["grouped"] > 100 and kinds["release"] > 100 and kinds["refused"] > 10
    assert len(fast.episodes) > 20  # over-subscription episodes were opened and closed
