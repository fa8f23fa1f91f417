"""The core policies' ordered structures are lazy: the changing-key heaps hold lower bounds of
their processors' keys (taking cores pushes nothing; releases and demand sums do), checked
against the pool when they reach the top; the static-key trees hold upper bounds of each
processor's node free memory, checked when offered. On random states reached by every core
policy (so each structure also sees the other policies' allocations, releases and rolled-back
attempts), the core each policy picks must be the one a scan of every processor gives."""

from __future__ import annotations

import random

import numpy as np
import pytest
from test_heap_runs import _platform

from hdeeprm.decision import CorePool, ResourceManager
from hdeeprm.decision.actions import CORE_POLICIES
from hdeeprm.decision.resources import MEM_TOL

DYNAMIC = ("high_cores", "high_mem", "high_mem_bw")
STATIC = ("high_gflops", "low_power")


def _scan(pool: CorePool, policy: str, mem: float) -> int | None:
    """The best processor's lowest free core by a scan of every processor (the definition)."""
    best: tuple[float, int] | None = None
    for p, members in enumerate(pool.proc_free):
        if not members or pool.node_free_mem[pool.proc_node[p]] < mem - MEM_TOL:
            continue
        if policy == "high_gflops":
            key = -pool.core_peak[members[0]]
        elif policy == "low_power":
            key = pool.core_power[members[0]]
        elif policy == "high_cores":
            key = -len(members)
        elif policy == "high_mem":
            key = -pool.node_free_mem[pool.proc_node[p]]
        else:
            key = pool.proc_demand[p] - pool.proc_mem_bw[p]
        if best is None or (key, members[0]) < best:
            best = (key, members[0])
    return None if best is None else best[1]


def _check_lower_bounds(heap) -> None:
    """The heap's invariant: every processor with a free core has one live entry (or is
    marked dirty), whose (key, lowest free core) is at most the processor's current one.
    ``high_mem``'s heap holds nodes: each node with a free core has one, at most its
    ``(-free memory, lowest free core)``, unless one of its processors is marked dirty."""
    pool = heap.pool
    if heap.kind == "high_cores":  # packed ints: (most - free cores) * scale + lowest free core
        for p, members in enumerate(pool.proc_free):
            if members and p not in heap.dirty:
                assert heap.live[p] in heap.heap, p
                assert heap.live[p] <= heap.value(p), p
        return
    live = {entry[3]: entry for entry in heap.heap if entry[2] == heap.version[entry[3]]}
    if heap.kind == "high_mem":
        for node, procs in enumerate(pool.node_procs):
            firsts = [pool.proc_free[q][0] for q in procs if pool.proc_free[q]]
            if not firsts or any(q in heap.dirty for q in procs):
                continue
            entry = live[node]
            assert (entry[0], entry[1]) <= (-pool.node_free_mem[node], min(firsts)), node
        return
    for p, members in enumerate(pool.proc_free):
        if not members or p in heap.dirty:
            continue
        entry = live[p]
        assert (entry[0], entry[1]) <= (heap.primary(p), members[0]), (heap.kind, p)


def _check_upper_bounds(tree) -> None:
    """The static-key tree's invariant: each slot, once refreshed, is at least its processor's
    node free memory (``-inf`` only for a full processor)."""
    pool = tree.pool
    tree.refresh()
    for r, p in enumerate(tree.order):
        value = tree.tree.tree[tree.tree.size + r]
        true = pool.node_free_mem[pool.proc_node[p]] if pool.proc_free[p] else float("-inf")
        assert value >= true, (p, value, true)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_lazy_heaps_pick_what_a_scan_picks(seed: int) -> None:
    pool = CorePool(_platform())
    rm = ResourceManager(pool, np.random.default_rng(seed))
    draw = random.Random(seed)
    running: list[list[int]] = []
    rebuilds = {policy: 0 for policy in DYNAMIC}
    for policy in DYNAMIC:
        # rebuild often (the platform has 12 processors on 5 nodes; high_mem's heap holds nodes)
        rm._heap(policy).limit = 12 if policy == "high_mem" else 30
    for step in range(600):
        if running and (draw.random() < 0.4 or pool.free_count == 0):
            pool.release(running.pop(draw.randrange(len(running))), float(step))
        else:
            res = draw.choice([1, 1, 2, 3, 4, 5, 7, 9, 12, 40])  # 40 > 37 cores: rolled back
            mem = draw.choice([0.0, 0.0, 500.0, 1000.0, 2000.0, 4000.0, 7000.0])
            mem_bw = draw.choice([0.0, 0.1, 0.3, 0.7, 1.3, 2.2, 3.5, 8.0])  # sums that round
            policy = draw.choice(CORE_POLICIES)
            got = rm.allocate(str(step), res, mem, mem_bw, policy, float(step))
            if got is not None:
                running.append(got)
        for policy in DYNAMIC:
            heap = rm._heap(policy)
            _check_lower_bounds(heap)
            lives = heap.live  # a rebuild makes a new list
            for mem in (0.0, 1000.0, 3000.0, 9000.0):
                assert rm.pick(policy, mem) == _scan(pool, policy, mem), (seed, step, policy, mem)
            rebuilds[policy] += heap.live is not lives
        for policy in STATIC:
            tree = rm._heap(policy)
            for mem in (0.0, 1000.0, 3000.0, 9000.0):
                assert rm.pick(policy, mem) == _scan(pool, policy, mem), (seed, step, policy, mem)
            _check_upper_bounds(tree)
    # The heaps were rebuilt from scratch along the way (stale entries outnumbered live ones).
    assert all(count > 0 for count in rebuilds.values()), rebuilds
