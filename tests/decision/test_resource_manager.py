"""Core policies and P-states on hand-built heterogeneous platforms (see decision_helpers)."""

from __future__ import annotations

import numpy as np
import pytest
from decision_helpers import hetero_platform, learning_platform, make_platform

from hdeeprm.decision import CorePool, ResourceManager
from hdeeprm.platform.hierarchy import P0, P1, P2, P3
from hdeeprm.simulation.events import SetResourceState


def _manager(platform=None, seed: int = 0) -> tuple[CorePool, ResourceManager]:
    pool = CorePool(platform or hetero_platform())
    return pool, ResourceManager(pool, np.random.default_rng(seed))


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("high_gflops", [2]),  # processor 1: 4.4 GFLOPS, the fastest
        ("low_power", [4]),  # processor 2: 90 W / 3 cores = 30 W, the most frugal
        ("high_cores", [4]),  # processor 2: 3 free cores
        ("high_mem", [7]),  # node 2: 64,000 MB
        ("high_mem_bw", [4]),  # processor 2: 48 GB/s
    ],
)
def test_single_core_choice_on_idle_platform(policy: str, expected: list[int]) -> None:
    _, manager = _manager()
    assert manager.allocate("j", 1, 1000.0, 8.0, policy, 0.0) == expected


def test_high_gflops_consolidates_in_static_peak_order() -> None:
    _, manager = _manager()
    # 4.4 (cores 2, 3) > 4.0 (cores 7, 8) > 3.0 (cores 4, 5, 6) > 2.0 (cores 0, 1)
    assert manager.allocate("j", 6, 0.0, 0.0, "high_gflops", 0.0) == [2, 3, 7, 8, 4, 5]


def test_low_power_consolidates_in_static_watts_order() -> None:
    _, manager = _manager()
    # 30 W (4, 5, 6) < 40 W (7, 8) < 50 W (0, 1) < 60 W (2, 3)
    assert manager.allocate("j", 6, 0.0, 0.0, "low_power", 0.0) == [4, 5, 6, 7, 8, 0]


def test_high_cores_reevaluates_after_each_pick() -> None:
    _, manager = _manager()
    # pick 1: proc 2 has 3 free -> core 4; now every processor has 2 free: lowest free core
    # id wins -> core 0 (proc 0); then procs 1, 2, 3 have 2 free, lowest id core 2.
    assert manager.allocate("j", 3, 0.0, 0.0, "high_cores", 0.0) == [4, 0, 2]


def test_high_mem_follows_node_free_memory() -> None:
    _, manager = _manager()
    # node 2: 64000 -> core 7 (54000 left), still the most -> core 8 (44000 left, node full of
    # tasks), then node 0 (16000) beats node 1 (8000) -> core 0.
    assert manager.allocate("j", 3, 10000.0, 0.0, "high_mem", 0.0) == [7, 8, 0]


def test_high_mem_bw_spreads_one_job_over_two_processors() -> None:
    pool, manager = _manager()
    # free GB/s: p0 16, p1 20, p2 48, p3 12 -> core 4 (p2 now 48 - 30 = 18);
    # then p1 (20) is the best -> core 2, whose demand 30 exceeds 20.
    assert manager.allocate("j", 2, 0.0, 30.0, "high_mem_bw", 0.0) == [4, 2]
    assert pool.proc_demand == [0.0, 30.0, 30.0, 0.0]
    assert pool.proc_free_bw(1) == -10.0
    # p1 over-subscribed: core 2 runs in P1, core 3 idles in P2; p2 fine: core 4 P0, 5-6 P2.
    assert pool.pstate == [P3, P3, P1, P2, P0, P2, P2, P3, P3]
    assert pool.drain() == [
        SetResourceState((4,), P0),
        SetResourceState((2,), P1),
        SetResourceState((3, 5, 6), P2),
    ]
    # the next task goes to p2 again (18 free) over p0 (16), p3 (12) and p1 (-10)
    assert manager.allocate("k", 1, 0.0, 3.0, "high_mem_bw", 0.0) == [5]
    # then p0 (16) beats p2 (48 - 33 = 15)
    assert manager.allocate("m", 1, 0.0, 1.0, "high_mem_bw", 0.0) == [0]


def test_candidates_need_node_memory() -> None:
    pool, manager = _manager()
    # 20000 MB per task: only node 2 (64000) qualifies, for both of its cores.
    assert manager.allocate("a", 2, 20000.0, 0.0, "high_gflops", 0.0) == [7, 8]
    assert pool.node_free_mem[2] == 24000.0
    # a third such task fits nowhere: the attempt fails and changes nothing
    before = (list(pool.proc_free[2]), list(pool.node_free_mem), pool.free_count)
    assert manager.allocate("b", 1, 20000.0, 0.0, "high_gflops", 0.0) is None
    assert manager.allocate("b", 3, 10000.0, 0.0, "high_mem", 0.0) is None  # 2 fit, not 3
    assert (list(pool.proc_free[2]), list(pool.node_free_mem), pool.free_count) == before
    assert pool.drain() == [SetResourceState((7, 8), P0)]  # only job a's cores moved


def test_random_is_reproducible_and_respects_memory() -> None:
    def picks(seed: int, mem: float) -> list[int]:
        _, manager = _manager(seed=seed)
        return [manager.allocate(str(i), 1, mem, 0.0, "random", 0.0)[0] for i in range(6)]

    first = picks(3, 0.0)
    assert first == picks(3, 0.0)
    assert sorted(first) != first or first != picks(4, 0.0)
    assert len(set(first)) == 6  # six distinct free cores
    # 20000 MB only fits on node 2 (cores 7, 8), twice
    _, manager = _manager(seed=5)
    got = {manager.allocate(str(i), 1, 20000.0, 0.0, "random", 0.0)[0] for i in range(2)}
    assert got == {7, 8}
    assert manager.allocate("x", 1, 20000.0, 0.0, "random", 0.0) is None


def test_random_core_draws_are_uniform() -> None:
    pool, manager = _manager(seed=9)
    counts = [0] * 9
    for i in range(1800):
        core = manager.allocate(str(i), 1, 0.0, 0.0, "random", 0.0)[0]
        counts[core] += 1
        pool.release([core], 0.0)
    assert all(150 < n < 250 for n in counts), counts  # 200 expected per core
    # the exact fallback (used when memory rules most free cores out) draws only eligible ones
    exact = {manager._pick_random_exact(20000.0) for _ in range(50)}
    assert exact == {7, 8}


def test_heaps_stay_consistent_through_releases() -> None:
    pool, manager = _manager()
    first = manager.allocate("a", 2, 0.0, 0.0, "high_gflops", 0.0)
    assert first == [2, 3]
    assert manager.allocate("b", 1, 0.0, 0.0, "high_gflops", 1.0) == [7]
    pool.release(first, 2.0)
    # cores 2 and 3 are free again and the fastest
    assert manager.allocate("c", 1, 0.0, 0.0, "high_gflops", 3.0) == [2]
    assert manager.allocate("d", 1, 0.0, 0.0, "high_cores", 3.0) == [4]
    assert pool.free_count == 9 - 3


def test_pstates_of_thesis_4_1_4() -> None:
    # 1 node (16 GB), 1 dual-core processor (1 GFLOPS per core, 24 GB/s); one job of 8 GB and
    # 2 GB/s on the first core.
    pool, manager = _manager(make_platform([(16.0, [(1.0, 1.0, 24.0, 20.0, 2)])]))
    assert pool.pstate == [P3, P3]
    assert manager.allocate("job0", 1, 8000.0, 2.0, "high_gflops", 0.0) == [0]
    assert pool.drain() == [SetResourceState((0,), P0), SetResourceState((1,), P2)]
    assert pool.drain() == []
    assert pool.node_free_mem == [8000.0]
    assert pool.core_speed(0) == 1.0 and pool.core_speed(1) == 0.0
    assert pool.current_power(0) == 10.0 and pool.current_power(1) == 2.5  # 25% of 10 W
    pool.release([0], 5.0)
    assert pool.drain() == [SetResourceState((0, 1), P3)]
    assert pool.node_free_mem == [16000.0]
    assert pool.powers().tolist() == [0.5, 0.5]  # 5% of 10 W each


@pytest.mark.parametrize(
    ("policy", "cores", "states"),
    [
        # both 24 GB/s jobs on one 32 GB/s processor: 48 > 32 -> both P1
        ("low_power", [0, 1], [P1, P1, P3, P3]),  # 40 W/core (80 W) < 50 W/core (100 W)
        ("high_gflops", [2, 3], [P3, P3, P1, P1]),  # 4.4 > 4.0 GFLOPS
        # spreading: both processors have 32 GB/s free -> core 0; then 32 > 8 -> core 2
        ("high_mem_bw", [0, 2], [P0, P2, P0, P2]),
    ],
)
def test_thesis_5_4_scenario(policy: str, cores: list[int], states: list[int]) -> None:
    pool, manager = _manager(learning_platform())
    got = [manager.allocate(f"j{i}", 1, 0.0, 24.0, policy, 0.0)[0] for i in range(2)]
    assert got == cores
    assert pool.pstate == states
    over = [p for p in range(2) if states[2 * p] == P1]
    assert pool.over_subscribed == over
    assert [e[0] for e in pool.episodes] == over


def test_over_subscription_episodes_and_net_changes() -> None:
    pool, manager = _manager(learning_platform())
    a = manager.allocate("a", 1, 0.0, 24.0, "low_power", 0.0)
    b = manager.allocate("b", 1, 0.0, 24.0, "low_power", 0.0)
    assert pool.episodes == [[0, 0.0, None]]
    assert pool.drain() == [SetResourceState((0, 1), P1)]  # cores 2, 3 stay in P3
    pool.release(a, 6.0)  # 24 <= 32: episode over, core 1 back to P0, core 0 to P2
    assert pool.episodes == [[0, 0.0, 6.0]]
    # core 0 re-used at the same instant (24 + 4 = 28 <= 32): its P2 is never emitted, the
    # simulator sees P1 -> P0 for both cores
    assert manager.allocate("c", 1, 0.0, 4.0, "low_power", 6.0) == a
    assert pool.drain() == [SetResourceState((0, 1), P0)]
    pool.release(b, 7.0)
    pool.release(a, 8.0)
    pool.close_episodes(9.0)
    assert pool.drain() == [SetResourceState((0, 1), P3)]
