"""``high_mem`` ranks nodes (:class:`hdeeprm.decision._node_heap.NodeHeap`) and ``high_cores``
packs its entries into ints (:class:`hdeeprm.decision._count_heap.CoreCountHeap`): the same
cores, in the same order, as ranking every processor after every core taken."""

from __future__ import annotations

import random

import numpy as np
import pytest
from decision_helpers import make_platform
from test_lazy_core_orderings import _scan

from hdeeprm.decision import CorePool, ResourceManager
from hdeeprm.platform.hierarchy import Cluster, Core, Node, Platform, Processor


def _recording(pool: CorePool) -> list[tuple[int, int]]:
    """Record the pool's runs as (processor, cores) (``take`` is a run of one)."""
    runs: list[tuple[int, int]] = []
    take, take_run = pool.take, pool.take_run

    def one(core: int, *args: object) -> None:
        runs.append((pool.core_proc[core], 1))
        take(core, *args)  # type: ignore[arg-type]

    def many(proc: int, count: int, *args: object) -> list[int]:
        runs.append((proc, count))
        return take_run(proc, count, *args)  # type: ignore[arg-type]

    pool.take, pool.take_run = one, many  # type: ignore[method-assign]
    return runs


def test_high_mem_runs_through_a_node_in_core_order() -> None:
    # Node 0: 64 GB, processors 0 (cores 0-3) and 1 (cores 4-7); node 1: 16 GB, processor 2
    # (cores 8-11). Six tasks of 1,000 MB: node 0 leads (-64000, core 0) and, after each
    # take, still has 63,000 ... 59,000 MB, far above node 1's 16,000 (its entry (-16000, 8)
    # bounds the run): cores 0-3 of processor 0, then, its cores gone, cores 4 and 5 of its
    # node-mate: two runs and no other pick.
    platform = make_platform(
        [
            (64.0, [(2.0, 1.0, 16.0, 100.0, 4), (2.0, 1.0, 16.0, 100.0, 4)]),
            (16.0, [(2.0, 1.0, 16.0, 100.0, 4)]),
        ]
    )
    pool = CorePool(platform)
    rm = ResourceManager(pool, np.random.default_rng(0))
    runs = _recording(pool)
    assert rm.allocate("a", 6, 1000.0, 0.0, "high_mem", 0.0) == [0, 1, 2, 3, 4, 5]
    assert runs == [(0, 4), (1, 2)]
    heap = rm._heap("high_mem")
    # One entry per node: node 0's is its figure before the job (a lower bound of
    # (-58000, 6)), node 1's exact.
    assert sorted(entry[:2] for entry in heap.heap) == [(-64000.0, 0), (-16000.0, 8)]
    # Node 0 has 58,000 MB left: 59,000 MB tasks go nowhere (the best node lacks it).
    assert heap.pick(59000.0) is None
    assert heap.pick(58000.0) == 6


def test_high_cores_entries_are_packed_pairs() -> None:
    # Processors of 4, 2 and 4 cores (ids 0-3, 4-5, 6-9): most = 4 cores, scale = 10 cores,
    # value = (4 - free) * 10 + lowest free core: 0, 24 and 6. Three tasks: processor 0 (0),
    # whose value becomes 11 (3 free, core 1); processor 2 (6), then 17; processor 0 again
    # (11 < 17): cores 0, 6, 1.
    platform = make_platform(
        [
            (64.0, [(2.0, 1.0, 16.0, 100.0, 4), (2.0, 1.0, 16.0, 100.0, 2)]),
            (64.0, [(2.0, 1.0, 16.0, 100.0, 4)]),
        ]
    )
    pool = CorePool(platform)
    rm = ResourceManager(pool, np.random.default_rng(0))
    heap = rm._heap("high_cores")
    assert (heap.most, heap.scale) == (4, 10)
    assert sorted(heap.heap) == [0, 6, 24]
    assert rm.allocate("a", 3, 0.0, 0.0, "high_cores", 0.0) == [0, 6, 1]
    # Processor 0's entry is still the 11 it was picked at: a lower bound of its 22 now (two
    # free cores, core 2); processor 2's was re-sifted to 17 when processor 0 overtook it.
    assert (heap.live[0], heap.value(0)) == (11, 22)
    assert (heap.live[2], heap.value(2)) == (17, 17)
    # Releasing core 0 gives processor 0 back three free cores from core 0: value 10 < 11,
    # so a fresh entry is pushed at the next pick, which it wins.
    pool.release([0], 1.0)
    assert heap.pick(0.0) == 0
    assert heap.live[0] == 10


def _interleaved_platform() -> Platform:
    """Two nodes whose processors' cores interleave (core ids alternate between a node's
    processors), which the platform files never give but the pool allows: a node's lowest
    free core must then be found over all its processors."""
    link = {"type": "10G", "bandwidth": "10GBps", "latency": "1us"}
    cluster = Cluster(0, "c0", local_links=[dict(link)])
    platform = Platform(clusters=[cluster], global_links=[dict(link)])
    for memory_gb, sizes in ((16.0, (3, 2)), (32.0, (2, 3, 1))):
        node = Node(len(platform.nodes), "node", cluster, "DDR", memory_gb)
        cluster.nodes.append(node)
        platform.nodes.append(node)
        procs = []
        for _ in sizes:
            proc = Processor(
                len(platform.processors), "proc", node, "CPU", "x", 2.0, 1.0, 16.0, 10.0, 100.0
            )
            node.processors.append(proc)
            platform.processors.append(proc)
            procs.append(proc)
        left = list(sizes)
        while any(left):
            for i, proc in enumerate(procs):
                if left[i]:
                    left[i] -= 1
                    core = Core(len(platform.cores), f"cor_{len(platform.cores)}", proc)
                    proc.cores.append(core)
                    platform.cores.append(core)
    return platform


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_high_mem_on_interleaved_cores_picks_what_a_scan_picks(seed: int) -> None:
    pool = CorePool(_interleaved_platform())
    assert pool.proc_cores[0] == [0, 2, 4] and pool.proc_cores[1] == [1, 3]
    rm = ResourceManager(pool, np.random.default_rng(0))
    draw = random.Random(seed)
    running: list[list[int]] = []
    for step in range(300):
        if running and (draw.random() < 0.4 or pool.free_count == 0):
            pool.release(running.pop(draw.randrange(len(running))), float(step))
        else:
            res = draw.choice([1, 2, 3, 5, 8])
            mem = draw.choice([0.0, 1000.0, 3000.0, 6000.0])
            policy = draw.choice(["high_mem", "high_cores", "high_gflops"])
            # one pick at a time, each checked against the scan, then the whole allocation
            want: list[int] = []
            for _ in range(res):
                core = _scan(pool, "high_mem", mem)
                if core is None:
                    break
                assert rm.pick("high_mem", mem) == core, (seed, step)
                pool.take(core, "probe", mem, 0.0)
                want.append(core)
            if want:
                pool.release(want, float(step))
            got = rm.allocate(str(step), res, mem, 0.0, policy, float(step))
            if policy == "high_mem":
                assert got == (want if len(want) == res else None), (seed, step, res, mem)
            if got is not None:
                running.append(got)
