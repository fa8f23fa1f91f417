"""``CorePool.settle_taken`` keeps the bandwidth demand ``take_run`` summed on a processor that
was wholly free (the same sum, bit for bit, as the settle's sum in core order) and sums it
again otherwise: awkward bandwidths (sums that round) give the same pool as the generic
core-by-core path, with and without the free-core list."""

from __future__ import annotations

import random

import numpy as np
import pytest
from decision_helpers import make_platform, pool_state

from hdeeprm.decision import CorePool, ResourceManager
from hdeeprm.decision.fit import NodeFloorFit
from hdeeprm.platform.hierarchy import P0, P2


def _platform():  # type: ignore[no-untyped-def]
    # Two nodes: a 4-core (RICC-like) and a 6-core (Gaia-like) processor of 1.0 GB/s, then a
    # 3-core one of 0.5 GB/s (the generic sum) and a 4-core one of 0.25 GB/s; 10 GB each.
    return make_platform(
        [
            (10.0, [(2.0, 1.0, 1.0, 100.0, 4), (2.0, 1.0, 1.0, 100.0, 6)]),
            (10.0, [(1.5, 1.0, 0.5, 90.0, 3), (1.0, 1.0, 0.25, 80.0, 4)]),
        ]
    )


def test_hand_worked_kept_and_summed_demands() -> None:
    pool = CorePool(_platform())
    manager = ResourceManager(pool, np.random.default_rng(0))
    # 3 tasks of 0.1 GB/s on the wholly free 4-core processor (cores 0-2):
    # ((0.0 + 0.1) + 0.1) + 0.1 = 0.30000000000000004, kept from take_run; the settle's sum in
    # core order adds core 3's +0.0 to it, the same float.
    assert manager.allocate("a", 3, 0.0, 0.1, "high_gflops", 0.0) == [0, 1, 2]
    assert pool.proc_demand[0] == 0.30000000000000004
    assert [pool.pstate[c] for c in range(4)] == [P0, P0, P0, P2]
    # One task of 0.2 GB/s on core 3: the processor was not wholly free, so summed again in
    # core order: 0.0 + 0.1 + 0.1 + 0.1 + 0.2 = 0.5 (the running sum would also say 0.5).
    assert manager.allocate("b", 1, 0.0, 0.2, "high_gflops", 1.0) == [3]
    assert pool.proc_demand[0] == 0.5
    # Release "a": 0.0 + 0.0 + 0.0 + 0.0 + 0.2 = 0.2 (summed; the running sum would not be).
    pool.release((0, 1, 2), 2.0)
    assert pool.proc_demand[0] == 0.2


@pytest.mark.parametrize("free_order", [True, False])
def test_random_allocations_match_the_core_by_core_path(free_order: bool) -> None:
    # free_order=False: the classic runs' pool (no free-core list for the random policy).
    fast = CorePool(_platform(), free_order=free_order)
    slow = CorePool(_platform())
    manager = ResourceManager(fast, np.random.default_rng(0))
    fits = NodeFloorFit(fast)
    draw = random.Random(11)
    bandwidths = [0.1, 0.2, 0.3, 0.07, 1e-17, 0.15000000000000002, 0.0, 0.13]
    running: dict[str, list[int]] = {}
    kept = 0
    for step in range(1500):
        now = float(step)
        if running and draw.random() < 0.45:
            job_id = draw.choice(sorted(running))
            cores = running.pop(job_id)
            fast.release(tuple(cores), now)
            for core in cores:
                slow.give(core)
            slow.settle(cores, now)
        else:
            res = draw.randint(1, 9)
            mem = draw.choice([0.0, 1000.0, 2500.0])
            bw = draw.choice(bandwidths)
            if res > fast.free_count or (mem > 0.0 and not fits.fits(res, mem)):
                continue
            busy_before = list(fast.proc_busy)
            cores = manager.allocate(
                f"j{step}", res, mem, bw, draw.choice(["high_gflops", "low_power"]), now
            )
            assert cores is not None, step
            kept += sum(1 for p in {fast.core_proc[c] for c in cores} if not busy_before[p])
            for core in cores:
                slow.take(core, f"j{step}", mem, bw)
            slow.settle(cores, now)
            running[f"j{step}"] = cores
        assert pool_state(fast, free_list=False) == pool_state(slow, free_list=False), step
    assert kept > 200  # many allocations took a wholly free processor (the kept demand)
