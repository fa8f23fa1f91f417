"""The compiled core pool kernel (``hdeeprm/decision/_pool_kernels.c``) against the Python
reference it mirrors (``CorePool(native=False)``): on random small platforms and random
sequences of allocations under every core policy, releases, direct takes and settles, drains,
resets and lazily built free-core lists, a native pool and a reference pool (each with its own
resource manager) give the same answers and hold the same state after every operation, every
float compared bit for bit (its type and ``float.hex``), sets compared in iteration order.

Skipped only when the kernel is not built (or was built from another version of its source),
and then failed instead under ``HDEEPRM_REQUIRE_KERNELS=1``;
``HDEEPRM_PURE_PYTHON`` is lifted for the pools made here, so the kernel is tested either way.
"""

from __future__ import annotations

import os
import pickle
import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from decision_helpers import make_platform
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kernel_helpers import kernel_allowed, require_kernel

from hdeeprm import _native
from hdeeprm.decision import CorePool, ResourceManager, resource_manager
from hdeeprm.decision.actions import CORE_POLICIES
from hdeeprm.decision.change_log import ChangeLog
from hdeeprm.decision.resource_manager import _RankedTree
from hdeeprm.decision.resources import MEM_TOL

_module = require_kernel()

PROPERTY = settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

#: Per-task memory (MB) and bandwidth (GB/s): sums that round, tiny terms, tasks larger than
#: some nodes (1 to 16 GB), bandwidths that over-subscribe 0.6 to 12 GB/s processors.
MEMS = [0.0, 0.1, 0.3, 300.0, 1000.0, 2560.0, 3333.3, 4096.5, 7000.0, 20000.0]
BANDWIDTHS = [0.0, 0.1, 0.2, 0.3, 0.07, 0.15000000000000002, 1e-17, 0.45, 1.3, 2.2, 8.0]

processor = st.tuples(
    st.sampled_from([2.0, 2.2]),
    st.sampled_from([1.0, 2.0]),
    st.sampled_from([0.6, 1.0, 2.5, 12.0]),
    st.sampled_from([80.0, 90.0, 100.0]),
    st.integers(1, 6),
)
node = st.tuples(
    st.sampled_from([1.0, 4.0, 10.0, 16.0]), st.lists(processor, min_size=1, max_size=3)
)
platforms = st.lists(node, min_size=1, max_size=5)


class _Owner:
    """Owner of a test change log: compacting drops the entries (what the fit indexes keep
    is not the point here, only that both pools feed their logs alike)."""

    def __init__(self) -> None:
        self.log: ChangeLog | None = None
        self.compactions = 0

    def compact(self) -> None:
        assert self.log is not None
        self.compactions += 1
        self.log.base += len(self.log.nodes)
        self.log.nodes.clear()


def _pair(
    nodes: list[Any], free_order: bool, seed: int
) -> tuple[tuple[CorePool, ResourceManager, _Owner], tuple[CorePool, ResourceManager, _Owner]]:
    made = []
    for native in (True, False):
        with kernel_allowed():
            pool = CorePool(make_platform(nodes), free_order=free_order, native=native)
        assert pool.native is native
        # Listeners of every kind beside the resource manager's own.
        pool.gain_listeners.append(set())
        pool.node_gain_listeners.append(set())
        pool.demand_listeners.append(set())
        owner = _Owner()
        owner.log = ChangeLog(owner, 8)
        pool.node_change_listeners.append(owner.log)
        made.append((pool, ResourceManager(pool, np.random.default_rng(seed)), owner))
    return made[0], made[1]


def _exact(values: Any) -> Any:
    """Floats as (type, hex): ``0.0`` and ``-0.0`` differ, so do a float and an int."""
    if isinstance(values, float):
        return (type(values).__name__, values.hex())
    if isinstance(values, (list, tuple)):
        return [_exact(v) for v in values]
    return values


def _tally(tally: Any) -> Any:
    return (tally.count, _exact(list(tally.first)), _exact(list(tally.last)))


def state(pool: CorePool) -> dict[str, Any]:
    """Every piece of a pool's dynamic state, floats exact, sets in iteration order."""
    episodes = pool.episodes
    return {
        "pstate": pool.pstate,
        "emitted": pool.emitted,
        "core_job": pool.core_job,
        "core_mem": _exact(pool.core_mem),
        "core_bw": _exact(pool.core_bw),
        "proc_free": pool.proc_free,
        "proc_busy": pool.proc_busy,
        "proc_demand": _exact(pool.proc_demand),
        "node_free_mem": _exact(pool.node_free_mem),
        "node_busy": pool.node_busy,
        "free_count": pool.free_count,
        "free_order": pool._free_order,
        "free_cores": pool._free_cores,
        "free_index": pool._free_index,
        "over": pool._over,
        "run_state": pool._run_state,
        "idle_state": pool._idle_state,
        "open_episode": list(pool._open_episode.items()),
        "episodes": (
            episodes.procs.tobytes(),
            episodes.starts.tobytes(),
            episodes.ends.tobytes(),
        ),
        "changed": list(pool._changed),
        "gain": [list(s) for s in pool.gain_listeners],
        "node_gain": [list(s) for s in pool.node_gain_listeners],
        "demand": [list(s) for s in pool.demand_listeners],
        "logs": [(log.nodes, log.base, log.resets) for log in pool.node_change_listeners],
        "over_starts": _tally(pool.over_starts),
        "over_ends": _tally(pool.over_ends),
    }


def _manager_state(rm: ResourceManager) -> Any:
    """What the resource manager's structures hold (the walks' lists, the ranked trees'
    slots, the fit counts)."""
    out = []
    for name, heap in sorted(rm._heaps.items()):
        if isinstance(heap, _RankedTree):
            out.append((name, list(heap.open), list(heap.listed), heap.nb_tree))
            out.append((name, list(heap.gained), list(heap.dirty)))
            out.append((name, heap.tree.size, _exact(heap.tree.tree)))
    return (out, rm.nb_attempts, rm.nb_refused)


class Driver:
    """One random sequence of operations applied to a native and a reference pool."""

    def __init__(self, nodes: list[Any], free_order: bool, seed: int) -> None:
        (self.pool, self.rm, self.owner), (self.ref, self.ref_rm, self.ref_owner) = _pair(
            nodes, free_order, seed
        )
        self.running: list[list[int]] = []
        #: The operations drawn from (weighted by repetition).
        self.kinds = ["allocate"] * 5 + ["release"] * 3
        self.kinds += ["take_run", "take", "drain", "read", "reset"]
        #: The core policies allocations are drawn from (weighted by repetition).
        self.policies = list(CORE_POLICIES)
        self.now = 0.0
        self.ops = 0

    def check(self) -> None:
        assert self.pool.native and not self.ref.native
        assert state(self.pool) == state(self.ref), self.ops
        assert _manager_state(self.rm) == _manager_state(self.ref_rm), self.ops
        assert self.owner.compactions == self.ref_owner.compactions

    def step(self, draw: Any) -> None:
        """One operation; ``draw(choices)`` picks one element of a list."""
        self.ops += 1
        self.now += draw([0.0, 0.5, 1.0, 3.25])
        pool, ref = self.pool, self.ref
        kind = draw(self.kinds)
        if kind == "release" and not self.running:
            kind = "allocate"
        if kind == "allocate":
            res = draw([1, 1, 2, 3, 4, 5, 7, 9, 12])
            mem, mem_bw = draw(MEMS), draw(BANDWIDTHS)
            policy = draw(self.policies)
            job = f"j{self.ops}"
            got = self.rm.allocate(job, res, mem, mem_bw, policy, self.now)
            want = self.ref_rm.allocate(job, res, mem, mem_bw, policy, self.now)
            assert got == want, (self.ops, policy)
            if got is not None:
                self.running.append(got)
        elif kind == "release":
            cores = self.running.pop(draw(list(range(len(self.running)))))
            if draw([False, True]):  # any order, even across processors and nodes
                cores = cores[::-1]
            pool.release(cores, self.now)
            CorePool.release(ref, list(cores), self.now)
        elif kind == "take_run":  # take_run and settle_taken directly, several processors
            procs = [p for p, free in enumerate(ref.proc_free) if free]
            if not procs:
                return
            mem, mem_bw = draw(MEMS), draw(BANDWIDTHS)
            taken: dict[int, list[int]] = {}
            for proc in sorted(set(draw(procs) for _ in range(draw([1, 2, 3])))):
                count = draw(list(range(1, len(ref.proc_free[proc]) + 1)))
                job = f"t{self.ops}"
                got = pool.take_run(proc, count, job, mem, mem_bw)
                assert got == CorePool.take_run(ref, proc, count, job, mem, mem_bw)
                taken[proc] = got
            pool.settle_taken(taken, self.now)
            CorePool.settle_taken(ref, {p: list(c) for p, c in taken.items()}, self.now)
            self.running.append([c for cores in taken.values() for c in cores])
        elif kind == "take":  # take and settle directly: free cores in any order
            free = [c for c in range(ref.nb_cores) if ref.core_job[c] is None]
            if not free:
                return
            mem, mem_bw = draw(MEMS), draw(BANDWIDTHS)
            cores = sorted(set(draw(free) for _ in range(draw([1, 2, 3, 5]))))
            if draw([False, True]):
                cores.reverse()
            for core in cores:
                pool.take(core, f"c{self.ops}", mem, mem_bw)
                CorePool.take(ref, core, f"c{self.ops}", mem, mem_bw)
            pool.settle(cores, self.now)
            CorePool.settle(ref, list(cores), self.now)
            self.running.append(cores)
        elif kind == "drain":
            assert pool.drain() == CorePool.drain(ref)
        elif kind == "read":  # builds the free-core list of a lazy pool (rebinds the kernel)
            assert pool.free_cores == ref.free_cores
            assert pool.free_index == ref.free_index
        else:
            pool.reset()
            ref.reset()
            self.rm.reset()
            self.ref_rm.reset()
            self.running.clear()
        self.check()


@PROPERTY
@given(platforms, st.booleans(), st.integers(0, 2**16), st.data())
def test_native_pool_matches_the_reference(
    nodes: list[Any], free_order: bool, seed: int, data: st.DataObject
) -> None:
    driver = Driver(nodes, free_order, seed)
    driver.check()
    for _ in range(data.draw(st.integers(5, 60))):
        driver.step(lambda choices: data.draw(st.sampled_from(choices)))


@contextmanager
def open_misses(n: int) -> Iterator[None]:
    """The ranked walk goes on in the tree after ``n`` processors short of memory (both pools
    read the resource manager's constant): the small platforms drawn here have fewer
    processors than the default, so their sweeps would never reach the tree."""
    saved = resource_manager._OPEN_MISSES
    resource_manager._OPEN_MISSES = n
    try:
        yield
    finally:
        resource_manager._OPEN_MISSES = saved


#: The static-key policies (the ranked tree) drawn most, the others mixed in.
RANKED_HEAVY = ["high_gflops", "low_power"] * 4 + list(CORE_POLICIES)


@PROPERTY
@given(platforms, st.booleans(), st.integers(0, 2**16), st.integers(1, 3), st.data())
def test_tree_sweep_matches_the_reference(
    nodes: list[Any], free_order: bool, seed: int, misses: int, data: st.DataObject
) -> None:
    """Allocations whose ranked walk goes on in the tree (the compiled sweep on the native
    pool, ``_RankedTree._tree_sweep`` on the reference) leave both pools, walks and trees
    alike."""
    with open_misses(misses):
        driver = Driver(nodes, free_order, seed)
        driver.policies = RANKED_HEAVY
        driver.check()
        for _ in range(data.draw(st.integers(5, 60))):
            driver.step(lambda choices: data.draw(st.sampled_from(choices)))


def test_the_tree_sweep_runs_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    """The random sequences reach the sweep through the tree, and on the native pool it runs
    in the kernel, the tree's refresh included: the Python sweep is called by the reference
    pool only, as often as its tree counts sweeps, while both count the same, and the
    native pool's trees are never refreshed in Python."""
    calls = {True: 0, False: 0}
    refreshes = {True: 0, False: 0}
    python_sweep, python_refresh = _RankedTree._tree_sweep, _RankedTree.refresh

    def counted(tree: _RankedTree, *args: Any) -> int:
        calls[tree.pool.native] += 1
        return python_sweep(tree, *args)

    def counted_refresh(tree: _RankedTree) -> None:
        refreshes[tree.pool.native] += 1
        python_refresh(tree)

    monkeypatch.setattr(_RankedTree, "_tree_sweep", counted)
    monkeypatch.setattr(_RankedTree, "refresh", counted_refresh)
    sweeps = 0
    for seed in range(4):
        with open_misses(1 + seed % 3):
            driver = Driver(ricc_like(), seed % 2 == 0, seed)
            driver.policies = RANKED_HEAVY
            driver.kinds.remove("reset")
            draw = random.Random(seed)
            for _ in range(300):
                driver.step(draw.choice)
        trees = [h for h in driver.ref_rm._heaps.values() if isinstance(h, _RankedTree)]
        sweeps += sum(tree.nb_tree for tree in trees)
    assert sweeps > 50
    assert calls == {True: 0, False: sweeps}
    assert refreshes[True] == 0 and refreshes[False] >= sweeps


def test_a_tree_of_other_parts_sweeps_in_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tree whose dirty processors are not a plain set is swept by the Python sweep on the
    native pool too, with the same results."""

    class Dirty(set[int]):
        pass

    calls = {True: 0, False: 0}
    python_sweep = _RankedTree._tree_sweep

    def counted(tree: _RankedTree, *args: Any) -> int:
        calls[tree.pool.native] += 1
        return python_sweep(tree, *args)

    monkeypatch.setattr(_RankedTree, "_tree_sweep", counted)
    with open_misses(1):
        driver = Driver(ricc_like(), True, 11)
        for pool, rm in ((driver.pool, driver.rm), (driver.ref, driver.ref_rm)):
            tree = rm._heap("low_power")
            assert isinstance(tree, _RankedTree)
            dirty = Dirty(tree.dirty)
            for listeners in (pool.gain_listeners, pool.node_gain_listeners):
                listeners[:] = [dirty if x is tree.dirty else x for x in listeners]
            tree.dirty = dirty
        driver.policies = ["low_power"]
        driver.kinds.remove("reset")
        draw = random.Random(11)
        for _ in range(200):
            driver.step(draw.choice)
    assert calls[True] > 0 and calls[True] == calls[False]


def test_int_free_memory_compares_as_python() -> None:
    """Free memory held as ints (Python compares an int and a float exactly, not as the
    nearest double) gives the walk and the tree sweep of the reference: ``2**60 + 255`` MB
    is short of ``2.0**60 + 256`` MB, though its nearest double is not."""
    short, plenty = 2**60 + 255, 2**61
    with open_misses(1):
        driver = Driver(ricc_like(), True, 5)
        for pool, rm in ((driver.pool, driver.rm), (driver.ref, driver.ref_rm)):
            pool.node_free_mem[:] = [short] * 3 + [plenty] + [short] * 8
            rm._heap("high_gflops").rebuild()  # the tree's slots: the same ints
        for step, mem in enumerate([2.0**60 + 256, 2.0**60, 2.0**60 + 256]):
            job = f"i{step}"
            got = driver.rm.allocate(job, 6, mem, 0.0, "high_gflops", 1.0)
            assert got == driver.ref_rm.allocate(job, 6, mem, 0.0, "high_gflops", 1.0)
            driver.check()
        assert driver.ref_rm._heap("high_gflops").nb_tree > 0


def _replay(nodes: list[Any], seed: int, steps: int, free_order: bool = True) -> Driver:
    draw = random.Random(seed)
    driver = Driver(nodes, free_order, seed)
    for _ in range(steps):
        driver.step(draw.choice)
    return driver


def lublin_like() -> list[Any]:
    """Single-core nodes (lublin's platforms: one processor of one core per node)."""
    return [(2.0, [(2.0, 2.0, 1.0, 80.0, 1)]) for _ in range(24)]


def ricc_like() -> list[Any]:
    """RICC-like blades: two 4-core processors per node (the settles' unrolled sums)."""
    return [(12.0, [(2.93, 4.0, 2.5, 95.0, 4), (2.93, 4.0, 2.5, 95.0, 4)]) for _ in range(12)]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("platform", [lublin_like, ricc_like])
def test_hand_made_platforms(platform: Any, seed: int) -> None:
    driver = _replay(platform(), seed, 400, free_order=seed % 2 == 0)
    assert driver.ops == 400


def test_ricc_like_episodes_and_memory_limits_happen() -> None:
    """The random sequences reach what the kernel must mirror: over-subscription episodes,
    opened and closed, and refusals for memory."""
    driver = Driver(ricc_like(), True, 7)
    driver.kinds.remove("reset")
    draw = random.Random(7)
    for _ in range(600):
        driver.step(draw.choice)
    assert len(driver.pool.episodes) > 10
    assert driver.pool.over_ends.count > 0
    assert driver.rm.nb_refused + driver.rm.nb_attempts > 0


def test_constants_agree() -> None:
    assert _module is not None
    assert _module.MEM_TOL == MEM_TOL


def test_native_false_and_pure_python() -> None:
    platform = make_platform(ricc_like()[:2])
    assert not CorePool(platform, native=False).native
    with kernel_allowed():
        assert CorePool(platform).native
        assert CorePool(platform, native=True).native
    saved = os.environ.get(_native.PURE_PYTHON)
    os.environ[_native.PURE_PYTHON] = "1"
    try:
        assert not CorePool(platform).native
        with pytest.raises(RuntimeError, match="native=True"):
            CorePool(platform, native=True)
    finally:
        if saved is None:
            del os.environ[_native.PURE_PYTHON]
        else:
            os.environ[_native.PURE_PYTHON] = saved


def test_python_methods_stay_on_the_class() -> None:
    with kernel_allowed():
        pool = CorePool(make_platform(ricc_like()[:2]), native=True)
    for name in ("take", "take_run", "settle", "settle_taken", "release", "drain"):
        assert getattr(pool, name) is not getattr(CorePool, name)
        assert callable(CorePool.__dict__[name])


def test_unusual_arguments_go_to_the_python() -> None:
    """Integer memory and bandwidth (job records give floats) are stored as the Python
    stores them: the kernel hands such calls to the reference."""
    driver = Driver(ricc_like()[:2], True, 0)
    got = driver.pool.take_run(0, 2, "a", 100, 1)
    assert got == CorePool.take_run(driver.ref, 0, 2, "a", 100, 1)
    driver.pool.settle_taken({0: got}, 1)
    CorePool.settle_taken(driver.ref, {0: list(got)}, 1)
    driver.check()
    driver.pool.release(iter(got), 2)
    CorePool.release(driver.ref, iter(list(got)), 2)
    driver.check()


def test_taking_a_busy_core_raises_as_the_python() -> None:
    driver = Driver(ricc_like()[:2], True, 0)
    driver.pool.take(3, "a", 1.0, 1.0)
    CorePool.take(driver.ref, 3, "a", 1.0, 1.0)
    with pytest.raises(ValueError):
        driver.pool.take(3, "b", 1.0, 1.0)
    with pytest.raises(ValueError):
        CorePool.take(driver.ref, 3, "b", 1.0, 1.0)
    driver.check()


def test_methods_held_by_callers_survive_resets() -> None:
    """A caller may keep ``pool.release`` (or wrap it on the instance, as
    ``benchmarks/speed/pool_replay.py`` records calls): after a reset, or once the free-core
    list is built, it still acts on the pool's current lists, and the wrapper stays."""
    with kernel_allowed():
        pool = CorePool(make_platform(ricc_like()[:2]), free_order=False, native=True)
    ref = CorePool(make_platform(ricc_like()[:2]), free_order=False, native=False)
    take_run, release = pool.take_run, pool.release
    calls: list[str] = []

    def settle_taken(taken: dict[int, list[int]], now: float) -> None:
        calls.append("settle_taken")
        inner(taken, now)

    inner = pool.settle_taken
    pool.settle_taken = settle_taken  # type: ignore[method-assign]
    for step in range(3):
        pool.reset()
        ref.reset()
        if step == 2:
            assert pool.free_cores == ref.free_cores  # builds the list: a rebind
        got = take_run(1, 3, "a", 10.0, 1.5)
        assert got == CorePool.take_run(ref, 1, 3, "a", 10.0, 1.5)
        pool.settle_taken({1: got}, 1.0)
        CorePool.settle_taken(ref, {1: list(got)}, 1.0)
        assert state(pool) == state(ref)
        release(got[:2], 2.0)
        CorePool.release(ref, got[:2], 2.0)
        assert state(pool) == state(ref)
    assert calls == ["settle_taken"] * 3


def test_a_listener_error_propagates() -> None:
    class Boom(set[int]):
        def update(self, *others: Any) -> None:
            raise ZeroDivisionError("listener")

    with kernel_allowed():
        pool = CorePool(make_platform(ricc_like()[:2]), native=True)
    cores = pool.take_run(0, 2, "a", 10.0, 1.0)
    pool.settle_taken({0: cores}, 0.0)
    pool.gain_listeners.append(Boom())
    with pytest.raises(ZeroDivisionError, match="listener"):
        pool.release(cores, 1.0)


def test_pickled_pool_binds_its_own_kernel() -> None:
    driver = _replay(ricc_like()[:3], 3, 60)
    with kernel_allowed():  # the unpickled pool loads the kernel again
        copy = pickle.loads(pickle.dumps(driver.pool))
        twin = pickle.loads(pickle.dumps(driver.ref))
    assert copy.native and not twin.native
    copy.gain_listeners, twin.gain_listeners = [], []
    copy.node_change_listeners, twin.node_change_listeners = [], []
    copy._bind_native()
    free = [c for c in range(copy.nb_cores) if copy.core_job[c] is None][:3]
    if free:
        proc = copy.core_proc[free[0]]
        got = copy.take_run(proc, 1, "p", 1.0, 0.5)
        assert got == CorePool.take_run(twin, proc, 1, "p", 1.0, 0.5)
        copy.settle_taken({proc: got}, 99.0)
        CorePool.settle_taken(twin, {proc: list(got)}, 99.0)
    assert copy.drain() == twin.drain()
    assert state(copy) == state(twin)
