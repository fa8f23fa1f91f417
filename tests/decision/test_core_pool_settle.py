"""The core pool's incremental ``settle``: after any sequence of placements and releases, the
P-states, demands and drained decisions are those of the rule applied from scratch (SPEC
section 2): running cores P0 (P1 while their processor's bandwidth is over-subscribed), idle
cores P2 while another core of their processor runs, else P3."""

from __future__ import annotations

import random

import numpy as np
from decision_helpers import hetero_platform

from hdeeprm.decision import CorePool, ResourceManager
from hdeeprm.decision.resources import INITIAL_PSTATE
from hdeeprm.platform.hierarchy import P0, P1, P2, P3


def _from_scratch(pool: CorePool) -> tuple[list[int], list[float]]:
    """P-state of every core and demand of every processor, recomputed from the jobs."""
    states = [INITIAL_PSTATE] * pool.nb_cores
    demands = []
    for proc, members in enumerate(pool.proc_cores):
        demand = 0.0
        for c in members:
            if pool.core_job[c] is not None:
                demand += pool.core_bw[c]
        demands.append(demand)
        busy = any(pool.core_job[c] is not None for c in members)
        over = demand > pool._bw_limit[proc]
        for c in members:
            if pool.core_job[c] is None:
                states[c] = P2 if busy else P3
            else:
                states[c] = P1 if over else P0
    return states, demands


def test_settle_matches_the_rule_under_random_churn() -> None:
    # hetero_platform: processors of 2 / 2 / 3 / 2 cores with 16 / 20 / 48 / 12 GB/s, so 10
    # GB/s tasks over-subscribe some processors (P1) and not others.
    pool = CorePool(hetero_platform())
    manager = ResourceManager(pool, np.random.default_rng(0))
    emitted = [INITIAL_PSTATE] * pool.nb_cores  # what the simulator was told
    draw = random.Random(11)
    running: list[str] = []
    seen = set()
    for step in range(600):
        if running and draw.random() < 0.45:
            job_id = running.pop(draw.randrange(len(running)))
            pool.release([c for c in range(pool.nb_cores) if pool.core_job[c] == job_id], step)
        else:
            policy = draw.choice(
                ["high_gflops", "low_power", "high_cores", "high_mem", "high_mem_bw", "random"]
            )
            job_id = str(step)
            bw = draw.choice([0.0, 4.0, 10.0, 30.0])
            if manager.allocate(job_id, draw.randint(1, 4), 1000.0, bw, policy, step):
                running.append(job_id)
        states, demands = _from_scratch(pool)
        assert pool.pstate == states, step
        assert pool.proc_demand == demands, step
        assert pool.proc_busy == [
            sum(pool.core_job[c] is not None for c in members) for members in pool.proc_cores
        ]
        for decision in pool.drain():  # net changes only, ascending ids, one per state
            assert list(decision.resources) == sorted(decision.resources)
            for core in decision.resources:
                assert emitted[core] != decision.state
                emitted[core] = decision.state
        assert emitted == pool.pstate, step
        seen.update(pool.pstate)
    assert seen == {P0, P1, P2, P3}  # every transition kind was exercised
