"""The grouped paths of the core pool leave it exactly as the one-at-a-time paths do, in the
cases the trace replays rarely reach: ``CorePool.release`` of cores of several jobs and task
sizes interleaved across the processors of one node, and of one job sharing a node with
another, against ``give`` per core; ``MaxTree.set_many`` against a tree built afresh from the
same leaves. Floats are compared by ``hex``: bit for bit. (Pins the behaviour any faster
version of these paths must keep.)"""

from __future__ import annotations

import random

from decision_helpers import hetero_platform, pool_state

from hdeeprm.decision import CorePool
from hdeeprm.decision._segment import NEG_INF, MaxTree


def test_release_of_several_task_sizes_matches_give_per_core() -> None:
    # Jobs of 1,000.3 MB and 2,500.7 MB tasks on node 1 (processors 1 and 2, 8,000 MB), freed
    # in one call with their cores interleaved across both processors: the node's memory
    # must be given back one task at a time in release order (8,000 - 2 x 1,000.3 -
    # 2 x 2,500.7 = 2,398.0 MB left while busy), not grouped by processor.
    fast, slow = CorePool(hetero_platform()), CorePool(hetero_platform())
    for pool in (fast, slow):
        for core, job, mem, bw in [
            (2, "a", 1000.3, 3.0),
            (4, "b", 2500.7, 9.0),
            (3, "a", 1000.3, 3.0),
            (5, "b", 2500.7, 9.0),
            (7, "c", 100.0, 1.0),
        ]:
            pool.take(core, job, mem, bw)
        pool.settle([2, 3, 4, 5, 7], 0.0)
        pool.drain()
    cores = [4, 2, 5, 3]
    fast.release(cores, 1.0)
    for core in cores:
        slow.give(core)
    slow.settle(cores, 1.0)
    assert pool_state(fast) == pool_state(slow)
    assert fast.drain() == slow.drain()
    # Node 1 is idle again: its exact capacity, whatever the sums left.
    assert fast.node_free_mem[1] == 8000.0


def test_release_of_one_job_matches_give_per_core_on_a_shared_node() -> None:
    # One job's 1,333.3 MB tasks on both processors of node 1 and on node 2; another job keeps
    # core 6 busy, so node 1's memory is summed back task by task (not reset to capacity).
    fast, slow = CorePool(hetero_platform()), CorePool(hetero_platform())
    for pool in (fast, slow):
        for core in (2, 3, 4, 5, 7):
            pool.take(core, "a", 1333.3, 5.5)
        pool.take(6, "b", 10.0, 0.5)
        pool.settle([2, 3, 4, 5, 6, 7], 0.0)
        pool.drain()
    cores = [2, 3, 4, 5, 7]
    fast.release(tuple(cores), 2.0)
    for core in cores:
        slow.give(core)
    slow.settle(cores, 2.0)
    assert pool_state(fast) == pool_state(slow)
    assert fast.drain() == slow.drain()
    left = 8000.0
    for _ in range(4):
        left -= 1333.3
    left -= 10.0
    for _ in range(4):
        left += 1333.3
    assert fast.node_free_mem[1] == left


def test_set_many_matches_a_tree_built_from_the_same_leaves() -> None:
    draw = random.Random(11)
    leaves = [draw.choice([NEG_INF, 0.0, 500.0, 8000.0, 16000.0]) for _ in range(37)]
    tree = MaxTree(list(leaves))
    for _ in range(300):
        slots = draw.sample(range(len(leaves)), draw.randint(1, 6))
        values = [draw.choice([NEG_INF, 0.0, 250.5, 500.0, 8000.0, 16000.0]) for _ in slots]
        for slot, value in zip(slots, values):
            leaves[slot] = value
        tree.set_many(slots, values)
        assert tree.tree == MaxTree(list(leaves)).tree
