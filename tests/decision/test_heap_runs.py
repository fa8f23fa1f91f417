"""The changing-key core policies take runs of cores from one processor at once
(``_ProcessorHeap.pick_run``): on random states, the cores must be exactly those, in the same
order, that picking one core at a time gives, and the pools must end identical."""

from __future__ import annotations

import random

import numpy as np
import pytest
from decision_helpers import make_platform

from hdeeprm.decision import CorePool, ResourceManager


def _platform():
    # Equal processors on equal nodes (key ties, broken by core id), processors of several
    # sizes and bandwidths, nodes of little and much memory (16 to 64 GB).
    return make_platform(
        [
            (16.0, [(2.0, 1.0, 16.0, 100.0, 4), (2.0, 1.0, 16.0, 100.0, 4)]),
            (16.0, [(2.0, 1.0, 16.0, 100.0, 4), (2.0, 1.0, 16.0, 100.0, 4)]),
            (8.0, [(2.2, 2.0, 20.0, 120.0, 6), (1.5, 2.0, 48.0, 90.0, 3)]),
            (64.0, [(2.0, 2.0, 12.0, 80.0, 8)]),
            (
                32.0,
                [(2.0, 2.0, 24.0, 80.0, 2), (2.0, 2.0, 24.0, 80.0, 5), (1.0, 1.0, 6.0, 50.0, 1)],
            ),
        ]
    )


def _one_at_a_time(
    rm: ResourceManager, job_id: str, res: int, mem: float, mem_bw: float, policy: str, now: float
) -> list[int] | None:
    """What allocation did before runs: re-rank after every core taken."""
    pool = rm.pool
    if res > pool.free_count or not rm.fit.fits(res, mem):
        return None
    taken: list[int] = []
    for _ in range(res):
        core = rm.pick(policy, mem)
        if core is None:
            break
        pool.take(core, job_id, mem, mem_bw)
        taken.append(core)
    if len(taken) < res:
        pool.release(taken, now)
        rm.fit.watch(mem)
        return None
    pool.settle(taken, now)
    return taken


@pytest.mark.parametrize("policy", ["high_cores", "high_mem", "high_mem_bw"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_runs_pick_the_cores_one_at_a_time_picks(policy: str, seed: int) -> None:
    runs_pool, ref_pool = CorePool(_platform()), CorePool(_platform())
    runs = ResourceManager(runs_pool, np.random.default_rng(0))
    ref = ResourceManager(ref_pool, np.random.default_rng(0))
    draw = random.Random(seed)
    running: list[tuple[str, list[int]]] = []
    multi_core_runs = 0
    for step in range(400):
        if running and (draw.random() < 0.4 or runs_pool.free_count == 0):
            job_id, cores = running.pop(draw.randrange(len(running)))
            runs_pool.release(cores, float(step))
            ref_pool.release(cores, float(step))
            continue
        res = draw.choice([1, 1, 2, 3, 4, 5, 7, 9, 12])
        mem = draw.choice([0.0, 0.0, 500.0, 1000.0, 2000.0, 2000.0, 4000.0, 7000.0])
        mem_bw = draw.choice([0.0, 0.5, 1.0, 2.0, 2.0, 3.5, 8.0])
        got = runs.allocate(str(step), res, mem, mem_bw, policy, float(step))
        want = _one_at_a_time(ref, str(step), res, mem, mem_bw, policy, float(step))
        assert got == want, (policy, seed, step, res, mem, mem_bw)
        if got is not None:
            running.append((str(step), got))
            procs = [runs_pool.core_proc[c] for c in got]
            multi_core_runs += any(a == b for a, b in zip(procs, procs[1:], strict=False))
        assert runs_pool.core_job == ref_pool.core_job
        assert runs_pool.node_free_mem == ref_pool.node_free_mem
        assert runs_pool.proc_demand == ref_pool.proc_demand
        assert runs_pool.proc_free == ref_pool.proc_free
    assert multi_core_runs > 20  # the states exercised runs, not only single picks
