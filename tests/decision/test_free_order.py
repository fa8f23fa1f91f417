"""The core pool keeps the ``random`` policy's free-core list only for a decision system that
may draw from it (``CorePool(free_order=...)``): a fixed pair with another core policy does
not, and everything else the pool holds stays the same, bit for bit."""

from __future__ import annotations

import random

from decision_helpers import hetero_platform, pool_state

from hdeeprm.decision import ActionSpace, CorePool, FixedPair, WorkloadManager


def test_the_list_follows_takes_and_releases_as_worked_by_hand() -> None:
    # Nine free cores [0..8]. take(1): core 1's slot gets the last core, 8 -> [0,8,2,...,7];
    # take(2): its slot gets 7 -> [0,8,7,3,4,5,6]; release([2, 1]) appends them in that order.
    pool = CorePool(hetero_platform())
    pool.take(1, "a", 0.0, 0.0)
    pool.take(2, "a", 0.0, 0.0)
    assert pool.free_cores == [0, 8, 7, 3, 4, 5, 6]
    pool.release([2, 1], 1.0)
    assert pool.free_cores == [0, 8, 7, 3, 4, 5, 6, 2, 1]
    assert [pool.free_index[c] for c in pool.free_cores] == list(range(9))
    # Without the list kept, the first read builds it in ascending order (here after the
    # same takes and release: every core is free again).
    lazy = CorePool(hetero_platform(), free_order=False)
    lazy.take(1, "a", 0.0, 0.0)
    lazy.take(2, "a", 0.0, 0.0)
    lazy.release([2, 1], 1.0)
    assert lazy.free_cores == list(range(9))
    # ... and keeps it from then on.
    lazy.take(4, "b", 0.0, 0.0)
    assert lazy.free_cores == [0, 1, 2, 3, 8, 5, 6, 7]
    assert lazy.free_index[4] == -1 and lazy.free_index[8] == 4


def test_every_other_figure_is_the_same_with_or_without_the_list() -> None:
    rng = random.Random(7)
    kept, lazy = CorePool(hetero_platform()), CorePool(hetero_platform(), free_order=False)
    jobs: dict[str, list[int]] = {}
    for step in range(400):
        free = [c for c in range(kept.nb_cores) if kept.core_job[c] is None]
        if free and (not jobs or rng.random() < 0.55):
            job = f"j{step}"
            mem, bw = rng.choice([0.0, 700.3, 1500.7]), rng.choice([0.0, 2.1, 7.7])
            core = rng.choice(free)
            proc = kept.core_proc[core]
            count = rng.randint(1, len(kept.proc_free[proc]))
            cores: list[int]
            if count > 1:
                cores = kept.take_run(proc, count, job, mem, bw)
                assert lazy.take_run(proc, count, job, mem, bw) == cores
            else:
                cores = [core]
                kept.take(core, job, mem, bw)
                lazy.take(core, job, mem, bw)
            kept.settle(cores, float(step))
            lazy.settle(cores, float(step))
            jobs[job] = cores
        else:
            job = rng.choice(sorted(jobs))
            cores = jobs.pop(job)
            rng.shuffle(cores)
            kept.release(cores, float(step))
            lazy.release(tuple(cores), float(step))
        assert pool_state(kept, free_list=False) == pool_state(lazy, free_list=False)
    # Built on first read: the same free cores, ascending, and a consistent index.
    assert lazy.free_cores == sorted(kept.free_cores)
    assert all(lazy.free_index[c] == i for i, c in enumerate(lazy.free_cores))
    assert all(lazy.free_index[c] == -1 for c in range(lazy.nb_cores) if lazy.core_job[c])


def test_only_a_fixed_pair_with_another_core_policy_goes_without() -> None:
    platform, actions = hetero_platform(), ActionSpace()

    def keeps(agent: object) -> bool:
        return WorkloadManager(platform, actions, agent).pool._free_order

    assert not keeps(FixedPair(actions, "shortest-high_gflops"))
    assert not keeps(FixedPair(actions, "first-high_mem"))
    assert keeps(FixedPair(actions, "shortest-random"))
    assert keeps(FixedPair(actions, "first-random"))
    assert keeps(None)  # driven by act(): any action may come


def test_a_manager_that_draws_after_all_gets_the_list_then() -> None:
    platform, actions = hetero_platform(), ActionSpace()
    manager = WorkloadManager(platform, actions, FixedPair(actions, "shortest-high_gflops"))
    pool = manager.pool
    assert pool._free_cores is None
    core = manager.resource_manager.pick("random", 0.0)
    assert core in range(pool.nb_cores) and pool.free_cores == list(range(pool.nb_cores))
