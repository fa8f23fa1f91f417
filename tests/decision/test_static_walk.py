"""The static-key core policies (``high_gflops``, ``low_power``) allocate by walking the ranks of
the processors that may have a free core (``_RankedTree.open``) and go on in the max tree only
after too many processors short of memory. On random states, where other policies also take
and release cores (so the walk meets processors that became full behind its back), every
allocation must give exactly the cores, in the same order, that re-ranking every processor
after each core taken gives (the policy's definition), whether the sweep stays in the walk or
moves to the tree."""

from __future__ import annotations

import random

import numpy as np
import pytest
from test_heap_runs import _platform

from hdeeprm.decision import CorePool, ResourceManager
from hdeeprm.decision import resource_manager as rm_module
from hdeeprm.decision.resources import MEM_TOL


def _best_core(pool: CorePool, policy: str, mem: float) -> int | None:
    """The lowest free core of the best processor with the memory, by a scan (the definition:
    ``(static key, lowest free core)``, lowest first)."""
    best: tuple[float, int] | None = None
    for p, members in enumerate(pool.proc_free):
        if not members or pool.node_free_mem[pool.proc_node[p]] < mem - MEM_TOL:
            continue
        first = members[0]
        key = -pool.core_peak[first] if policy == "high_gflops" else pool.core_power[first]
        if best is None or (key, first) < best:
            best = (key, first)
    return None if best is None else best[1]


def _by_definition(
    pool: CorePool, policy: str, job_id: str, res: int, mem: float, mem_bw: float, now: float
) -> list[int] | None:
    """One core at a time, each the scan's best; rolled back when the job does not fit."""
    taken: list[int] = []
    for _ in range(res):
        core = _best_core(pool, policy, mem)
        if core is None:
            pool.release(taken, now)
            return None
        pool.take(core, job_id, mem, mem_bw)
        taken.append(core)
    pool.settle(taken, now)
    return taken


@pytest.mark.parametrize("sort_back", [0, 48, 10**9])  # insorts only, either, one sort only
@pytest.mark.parametrize("misses", [1, 2, 16])
@pytest.mark.parametrize("policy", ["high_gflops", "low_power"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_walk_takes_the_cores_the_definition_takes(
    policy: str, seed: int, misses: int, sort_back: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rm_module, "_OPEN_MISSES", misses)
    monkeypatch.setattr(rm_module, "_SORT_BACK", sort_back)
    pool, ref_pool = CorePool(_platform()), CorePool(_platform())
    rm = ResourceManager(pool, np.random.default_rng(0))
    ref = ResourceManager(ref_pool, np.random.default_rng(0))
    draw = random.Random(seed)
    running: list[list[int]] = []
    walked = 0
    for step in range(500):
        now = float(step)
        if running and (draw.random() < 0.35 or pool.free_count == 0):
            cores = running.pop(draw.randrange(len(running)))
            pool.release(cores, now)
            ref_pool.release(cores, now)
            continue
        res = draw.choice([1, 1, 2, 3, 4, 5, 7, 9, 12])
        mem = draw.choice([0.0, 0.0, 500.0, 1000.0, 2000.0, 4000.0, 7000.0, 12000.0])
        mem_bw = draw.choice([0.0, 0.5, 1.0, 2.0, 3.5])
        if draw.random() < 0.3:
            # Another policy takes cores, the same ones in both pools: processors the walk
            # lists may be full when it meets them.
            other = draw.choice(["high_cores", "high_mem", "random"])
            got = rm.allocate(str(step), res, mem, mem_bw, other, now)
            want = ref.allocate(str(step), res, mem, mem_bw, other, now)
        else:
            got = rm.allocate(str(step), res, mem, mem_bw, policy, now)
            if res > ref_pool.free_count or not ref.fit.fits(res, mem):
                want = None
            else:
                want = _by_definition(ref_pool, policy, str(step), res, mem, mem_bw, now)
                if want is None:
                    ref.fit.watch(mem)
            walked += got is not None
        assert got == want, (policy, seed, misses, step, res, mem)
        if got is not None:
            running.append(got)
        assert pool.core_job == ref_pool.core_job
        assert pool.node_free_mem == ref_pool.node_free_mem
        assert pool.pstate == ref_pool.pstate
        walk = rm._heap(policy)
        # Every processor with a free core is in the walk, or heard of since (gained).
        for p, members in enumerate(pool.proc_free):
            if members:
                assert walk.listed[p] or p in walk.gained, (step, p)
        assert walk.open == sorted(walk.open)
        assert all(walk.listed[walk.order[r]] for r in walk.open)
    assert walked > 50
    if misses == 1:  # the tree took over the sweep (a processor short of memory was met)
        assert rm._heap(policy).nb_tree > 0
