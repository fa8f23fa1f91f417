"""The compiled recounts of the fit counts (``Pool.floor_catch_up`` and ``Pool.size_catch_up``
in ``hdeeprm/decision/_pool_kernels.c``) against the Python loops they mirror,
:meth:`hdeeprm.decision.fit._FloorCounts.catch_up` (the workload manager's ``fits_now``) and
:meth:`hdeeprm.decision.fit._SizeTracker.catch_up` (the resource manager's fit index): every
count, total and log position the same, floats compared bit for bit.

For each: random takes, releases, resets and questions on a native pool and a reference pool,
each with its own fit counts; random figures given straight to the recount (any float, ints,
ids out of range: what the C declines, the Python runs); and hand-worked cases. For the first,
also any two doubles through one node, where the count is Python's ``//`` itself (CPython's
floor division, whose quotient is not ``floor(x / y)``: ``1.0 // 0.1 == 9.0``).

Skipped only when the kernel is not built (or was built from another version of its source),
and then failed instead under ``HDEEPRM_REQUIRE_KERNELS=1``; ``HDEEPRM_PURE_PYTHON`` is lifted
for the pools made here, so the kernel is tested either way.
"""

from __future__ import annotations

import math
import struct
from types import SimpleNamespace
from typing import Any

from decision_helpers import make_platform
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kernel_helpers import kernel_allowed, play_on_both, require_kernel

from hdeeprm.decision import CorePool
from hdeeprm.decision.change_log import ChangeLog
from hdeeprm.decision.fit import _SLACK, FitIndex, NodeFloorFit, _FloorCounts, _SizeTracker
from hdeeprm.decision.resources import MEM_TOL

_module = require_kernel()

PROPERTY = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _bits(value: Any) -> Any:
    """A float as its type and 64 bits (``0.0`` and ``-0.0`` differ, so do NaNs), else as is."""
    if isinstance(value, float):
        return ("float", struct.pack("<d", value))
    return (type(value).__name__, value)


def _same_total(native: float, reference: float) -> bool:
    """Bit for bit; a NaN only as a NaN (which NaN the sum keeps depends on the order of the
    nodes, a set's in Python, the log's in C; no real count is ever NaN)."""
    if (
        isinstance(native, float)
        and isinstance(reference, float)
        and math.isnan(native)
        and math.isnan(reference)
    ):
        return True
    return _bits(native) == _bits(reference)


def _kernel() -> Any:
    """The compiled kernel of a native pool (its recount only reads the lists it is given)."""
    with kernel_allowed():
        pool = CorePool(make_platform([(1.0, [(2.0, 1.0, 1.0, 80.0, 1)])]), native=True)
    assert pool.native
    return pool.kernel


def test_the_kernel_counts_with_the_pool_tolerance() -> None:
    assert _module is not None
    assert _module.MEM_TOL == MEM_TOL


# --- the fit counts of two pools under the same random operations ----------------------------

MEMS = [0.0, 0.3, 0.1 + 0.2, 300.0, 1000.0, 2560.0, 3333.3, 4000.0, 4096.5, 7000.0]
SIZES = [0.1, 0.3, 0.1 + 0.2, 999.9999, 1000.0, 2000.0, 3999.0, 4000.0, 3333.3, 7000.0, 16000.0]

processor = st.tuples(st.just(2.0), st.just(1.0), st.just(10.0), st.just(80.0), st.integers(1, 6))
node = st.tuples(
    st.sampled_from([1.0, 4.0, 7.9999, 8.0, 16.0]), st.lists(processor, min_size=1, max_size=2)
)
platforms = st.lists(node, min_size=1, max_size=6)


def _fit_state(fit: NodeFloorFit) -> Any:
    return [
        (
            _bits(mem),
            [_bits(c) for c in counts.counts],
            _bits(counts.total),
            counts.pos,
            counts.resets,
            counts.asked,
        )
        for mem, counts in fit.sizes.items()
    ] + [fit.log.nodes, fit.log.base, fit.log.resets, fit.nb_builds, fit.listening]


@PROPERTY
@given(
    nodes=platforms,
    asked=st.lists(st.sampled_from(SIZES), min_size=1, max_size=3, unique=True),
    ops=st.lists(
        st.tuples(
            st.sampled_from(["take"] * 4 + ["release"] * 3 + ["ask"] * 3 + ["fits", "reset"]),
            st.integers(0, 10**6),
            st.sampled_from(MEMS),
        ),
        min_size=30,
        max_size=200,
    ),
)
def test_native_and_reference_fit_counts_agree(
    nodes: list[Any], asked: list[float], ops: list[Any]
) -> None:
    """A few task sizes asked about again and again between takes and releases: each time,
    the counts caught up from the log (the kernel's work) are the reference's."""
    made = []
    for native in (True, False):
        with kernel_allowed():
            pool = CorePool(make_platform(nodes), native=native)
        assert pool.native is native
        made.append((pool, NodeFloorFit(pool)))
    (pool, fit), (ref, ref_fit) = made
    running: list[list[int]] = []
    for step, (kind, pick, mem) in enumerate(ops):
        size = asked[pick % len(asked)]
        if play_on_both((pool, ref), (kind, pick, mem), step, running):
            pass
        elif kind == "fits":
            res = 1 + pick % 12
            assert fit.fits(res, size) == ref_fit.fits(res, size)
        else:
            assert fit.tasks(size) == ref_fit.tasks(size)
        assert _fit_state(fit) == _fit_state(ref_fit), step
    for size in asked:
        assert fit.tasks(size) == ref_fit.tasks(size)
    assert _fit_state(fit) == _fit_state(ref_fit)


# --- random figures given straight to the recount ----------------------------------------------

#: Free memory (MB): boundaries of the test ``(free + MEM_TOL) // mem``, a tolerance short of
#: or past a multiple, negative, huge, ints (``int + float`` in Python), and the odd float.
free_mems = st.one_of(
    st.sampled_from(
        [0.0, -MEM_TOL, -2e-6, 1.0 - MEM_TOL, 4000.0 - MEM_TOL, 7999.999999, 8000.0, 0.3, 1e300]
    ),
    st.floats(-1e4, 7e4),
    st.integers(-5, 70000),
    st.floats(allow_nan=True, allow_infinity=True),
)
counts_ = st.sampled_from([0.0, 1.0, 2.0, 5.0, -0.0])


@PROPERTY
@given(
    data=st.data(),
    nb_nodes=st.integers(1, 8),
    mem=st.one_of(
        st.sampled_from([0.1, 0.3, 0.1 + 0.2, 1000.0, 3333.3, 4000.0, 1e-300, 1e300, -4000.0]),
        st.floats(1e-3, 1e5),
    ),
    odd=st.booleans(),
)
def test_figures_given_straight_to_the_recount(
    data: st.DataObject, nb_nodes: int, mem: Any, odd: bool
) -> None:
    """Any figures, and in half the cases (``odd``) inputs the kernel declines: a task size
    that is an int or zero, a count or core count that is an int, an id or a start out of
    range or negative."""
    nodes_ = st.integers(0, nb_nodes - 1)
    sizes = data.draw(
        st.lists(
            st.sampled_from([0.0, 1.0, 2.0, 4.0, 16.0, 1024.0]),
            min_size=nb_nodes,
            max_size=nb_nodes,
        )
    )
    busy = data.draw(
        st.lists(
            st.integers(0, 16) | st.sampled_from([0.0, 1.0, 2.5]),
            min_size=nb_nodes,
            max_size=nb_nodes,
        )
    )
    free_mem = data.draw(st.lists(free_mems, min_size=nb_nodes, max_size=nb_nodes))
    counts: list[Any] = data.draw(st.lists(counts_, min_size=nb_nodes, max_size=nb_nodes))
    if odd:
        nodes_ = st.one_of(nodes_, st.sampled_from([-1, nb_nodes, nb_nodes + 3]))
        at = data.draw(st.integers(0, nb_nodes - 1))
        what = data.draw(st.sampled_from(["mem", "size", "count", "ids"]))
        if what == "mem":
            mem = data.draw(st.sampled_from([0.0, -0.0, 1000]))
        elif what == "size":
            sizes[at] = 4
        elif what == "count":
            counts[at] = 2
    log_nodes = data.draw(st.lists(nodes_, min_size=1, max_size=40))
    base = data.draw(st.integers(0, 3))
    pos = base + data.draw(st.integers(-1 if odd else 0, len(log_nodes)))
    total = data.draw(st.sampled_from([0.0, 3.0, float(sum(counts)), -1.0]))
    outcomes = []
    for kernel in (_kernel(), None):
        target = SimpleNamespace(kernel=kernel, node_busy=list(busy), node_free_mem=list(free_mem))
        fc = _FloorCounts.__new__(_FloorCounts)
        fc.mem, fc.counts, fc.total, fc.pos = mem, list(counts), total, pos
        log = SimpleNamespace(nodes=list(log_nodes), base=base)
        try:
            fc.catch_up(target, log, list(sizes))  # type: ignore[arg-type]
        except (ArithmeticError, IndexError) as error:
            outcomes.append(type(error))
            continue
        outcomes.append(([_bits(c) for c in fc.counts], fc.total, fc.pos))
    native_out, reference_out = outcomes
    if isinstance(reference_out, type):
        assert native_out is reference_out
        return
    assert native_out[0] == reference_out[0]
    assert _same_total(native_out[1], reference_out[1])
    assert native_out[2] == reference_out[2]


# --- Python's floor division, through one node -------------------------------------------------


def _one_node(free_mem: float, mem: float, size: float = 1e308) -> tuple[float, float]:
    """The count and total of one node with ``size`` free cores, recounted by the kernel:
    ``min(size, (free_mem + MEM_TOL) // mem)``, 0.0 below zero."""
    counts = [7.0]
    total = _kernel().floor_catch_up(counts, [0, 0], 0, [size], [0], [free_mem], mem, 7.0)
    return counts[0], total


def _python_count(free_mem: float, mem: float, size: float = 1e308) -> float:
    count = (free_mem + MEM_TOL) // mem
    if count > size:
        count = size
    elif count < 0.0:
        count = 0.0
    return count


@PROPERTY
@given(
    free_mem=st.floats(allow_nan=True, allow_infinity=True),
    mem=st.floats(allow_nan=True, allow_infinity=True).filter(lambda m: m != 0.0),
)
def test_the_count_is_pythons_floor_division(free_mem: float, mem: float) -> None:
    count, total = _one_node(free_mem, mem)
    expected = _python_count(free_mem, mem)
    assert _bits(count) == _bits(expected) or (math.isnan(count) and math.isnan(expected))
    assert _same_total(total, 7.0 + (expected - 7.0) if expected != 7.0 else 7.0)


@PROPERTY
@given(
    quotient=st.integers(0, 2**20),
    mem=st.floats(1e-6, 1e6),
    ulps=st.integers(-3, 3),
)
def test_the_count_at_whole_quotients(quotient: int, mem: float, ulps: int) -> None:
    """Free memory a few units in the last place either side of a whole number of tasks,
    where ``floor(x / y)`` and ``x // y`` part."""
    free_mem = quotient * mem - MEM_TOL
    for _ in range(abs(ulps)):
        free_mem = math.nextafter(free_mem, math.copysign(math.inf, ulps))
    count, _ = _one_node(free_mem, mem)
    assert _bits(count) == _bits(_python_count(free_mem, mem))


def test_worked_examples() -> None:
    # 1.0 / 0.1 rounds up to 10.0, but 1.0 is just short of ten tenths: 1.0 // 0.1 == 9.0.
    assert (1.0 - MEM_TOL) + MEM_TOL == 1.0
    assert _one_node(1.0 - MEM_TOL, 0.1, size=16.0) == (9.0, 9.0)
    # Exactly two 4,000 MB tasks (the tolerance covers a free memory a hair short of it).
    assert _one_node(8000.0, 4000.0, size=4.0) == (2.0, 2.0)
    assert _one_node(7999.9999995, 4000.0, size=4.0) == (2.0, 2.0)
    assert _one_node(7999.99999, 4000.0, size=4.0) == (1.0, 1.0)
    # Capped at the free cores; negative free memory counts nothing; NaN stays NaN.
    assert _one_node(1e6, 1000.0, size=4.0) == (4.0, 4.0)
    assert _one_node(-500.0, 1000.0, size=4.0) == (0.0, 0.0)
    count, total = _one_node(math.nan, 1000.0, size=4.0)
    assert math.isnan(count) and math.isnan(total)


def test_a_full_node_counts_zero_and_each_node_is_recounted_once() -> None:
    # Three nodes of 4, 2 and 1 cores, 1000 MB tasks; counts before 1.0, 2.0, 5.0 (total 8.0).
    # From position 1 of the log: node 0 (three times: counted once) and node 1; node 2 only
    # before it (not recounted).
    kernel = _kernel()
    counts = [1.0, 2.0, 5.0]
    lists = ([4.0, 2.0, 1.0], [1, 2, 0], [3000.0, 9000.0, 200.0])  # sizes, busy, free memory
    total = kernel.floor_catch_up(counts, [2, 0, 1, 0, 0], 1, *lists, 1000.0, 8.0)
    # node 0: 3 free cores, 3000 MB: 3.0 (+2.0); node 1: full: 0.0 (-2.0); node 2 kept.
    assert counts == [3.0, 0.0, 5.0]
    assert total == 8.0
    # Nothing past the end of the log: the total as given.
    assert kernel.floor_catch_up(counts, [0], 1, *lists, 1000.0, 8.0) == 8.0
    assert kernel.floor_catch_up(counts, [2], 0, *lists, 1000.0, 8.0) == 3.0
    assert counts == [3.0, 0.0, 0.0]


def test_inputs_the_kernel_does_not_mirror_are_left_to_python() -> None:
    kernel = _kernel()
    counts = [0.0, 0.0]
    sizes, busy, free_mem = [1.0, 1.0], [0, 0], [5000.0, 5000.0]
    for args in [
        (counts, [0], 0, sizes, busy, free_mem, 0.0, 0.0),  # mem 0: Python raises
        (counts, [0], 0, sizes, busy, free_mem, 1000, 0.0),  # an int mem
        (counts, [0], 0, sizes, busy, free_mem, 1000.0, 0),  # an int total
        (counts, [2], 0, sizes, busy, free_mem, 1000.0, 0.0),  # a node out of range
        (counts, [-1], 0, sizes, busy, free_mem, 1000.0, 0.0),  # Python counts from the end
        (counts, [0], -1, sizes, busy, free_mem, 1000.0, 0.0),  # likewise
        ([0, 0.0], [0], 0, sizes, busy, free_mem, 1000.0, 0.0),  # a count that is an int
        (counts, [0], 0, [1, 1.0], busy, free_mem, 1000.0, 0.0),  # a size that is an int
        (counts, [0], 0, sizes, ["0", 0], free_mem, 1000.0, 0.0),  # a busy count not a number
        (counts, [0], 0, sizes, [10**400, 0], free_mem, 1000.0, 0.0),  # too large a float
        (counts, [True], 0, sizes, busy, free_mem, 1000.0, 0.0),  # an id that is not an int
        (counts, (0,), 0, sizes, busy, free_mem, 1000.0, 0.0),  # not a list
        (counts, [0], 0, sizes, busy, tuple(free_mem), 1000.0, 0.0),  # likewise
    ]:
        assert kernel.floor_catch_up(*args) is NotImplemented, args
    assert counts == [0.0, 0.0]
    # An int free memory is what ``int + float`` gives in Python: converted, then counted.
    free_mem = [2000, 1000.0]
    assert kernel.floor_catch_up(counts, [0, 1], 0, [4.0, 4.0], busy, free_mem, 1000.0, 0.0) == 3.0
    assert counts == [2.0, 1.0]
    # A full node's memory is not read (the Python does not read it either).
    assert kernel.floor_catch_up(counts, [0], 0, sizes, [1, 0], ["?", 0.0], 1000.0, 3.0) == 1.0
    assert counts == [0.0, 1.0]


def test_a_native_pool_recounts_in_c() -> None:
    """The fit of a native pool goes through the kernel (counted by a stand-in), of a
    reference pool never."""
    calls = []

    class Counting:
        def __init__(self, kernel: Any) -> None:
            self.kernel = kernel

        def floor_catch_up(self, *args: Any) -> Any:
            calls.append(args[2])
            return self.kernel.floor_catch_up(*args)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.kernel, name)

    with kernel_allowed():
        pool = CorePool(make_platform([(8.0, [(2.0, 1.0, 10.0, 80.0, 4)])] * 2))
    assert pool.native
    pool.kernel = Counting(pool.kernel)
    fit = NodeFloorFit(pool)
    assert fit.tasks(1000.0) == 8
    pool.take(0, "a", 5000.0, 0.0)  # node 0: 3 free cores, 3000 MB: 3 tasks; node 1: 4
    pool.settle([0], 0.0)
    assert fit.tasks(1000.0) == 7 and calls == [0]
    ref = CorePool(make_platform([(8.0, [(2.0, 1.0, 10.0, 80.0, 4)])] * 2), native=False)
    assert ref.kernel is None
    ref_fit = NodeFloorFit(ref)
    assert ref_fit.tasks(1000.0) == 8
    ref.take(0, "a", 5000.0, 0.0)
    ref.settle([0], 0.0)
    assert ref_fit.tasks(1000.0) == 7 and calls == [0]


# --- the resource manager's fit index (``Pool.size_catch_up``) ---------------------------------


def test_the_kernel_uses_the_index_slack() -> None:
    assert _module is not None
    assert _module.FIT_SLACK == _SLACK


def _index_state(index: FitIndex) -> Any:
    return [
        (_bits(mem), [_bits(c) for c in t.counts], _bits(t.total), t.pos, t.resets)
        for mem, t in index.tracked.items()
    ] + [index.log.nodes, index.log.base, index.log.resets, index.listening]


@PROPERTY
@given(
    nodes=platforms,
    watched=st.lists(st.sampled_from(MEMS), min_size=1, max_size=3, unique=True),
    ops=st.lists(
        st.tuples(
            st.sampled_from(
                ["take"] * 4 + ["release"] * 3 + ["fits"] * 3 + ["watch", "compact", "reset"]
            ),
            st.integers(0, 10**6),
            st.sampled_from(MEMS),
        ),
        min_size=30,
        max_size=200,
    ),
)
def test_native_and_reference_fit_indexes_agree(
    nodes: list[Any], watched: list[float], ops: list[Any]
) -> None:
    """The index's watched sizes asked about between takes and releases, as the resource
    manager does after a failed attempt: the counts caught up are the reference's."""
    made = []
    for native in (True, False):
        with kernel_allowed():
            pool = CorePool(make_platform(nodes), native=native)
        assert pool.native is native
        made.append((pool, FitIndex(pool)))
    (pool, index), (ref, ref_index) = made
    running: list[list[int]] = []
    for step, (kind, pick, mem) in enumerate(ops):
        size = watched[pick % len(watched)]
        if play_on_both((pool, ref), (kind, pick, mem), step, running):
            pass
        elif kind == "watch":
            index.watch(size)
            ref_index.watch(size)
        elif kind == "compact":
            index.compact()
            ref_index.compact()
        else:
            res = 1 + pick % 12
            assert index.fits(res, size) == ref_index.fits(res, size)
        assert _index_state(index) == _index_state(ref_index), step


@PROPERTY
@given(
    data=st.data(),
    nb_nodes=st.integers(1, 8),
    mem=st.sampled_from([0.0, -1.0, MEM_TOL, 0.3, 0.1 + 0.2, 1000.0, 3333.3, 4000.0, 1e-300])
    | st.floats(allow_nan=True, allow_infinity=True),
    odd=st.booleans(),
)
def test_index_figures_given_straight_to_the_recount(
    data: st.DataObject, nb_nodes: int, mem: float, odd: bool
) -> None:
    """Any figures, and in half the cases (``odd``) inputs the kernel declines: a count or
    busy count that is a float or beyond any platform, a node's cores not in a list, an id or
    a start out of range or negative."""
    nodes_ = st.integers(0, nb_nodes - 1)
    cores: list[Any] = [
        list(range(k))
        for k in data.draw(st.lists(st.integers(0, 6), min_size=nb_nodes, max_size=nb_nodes))
    ]
    busy: list[Any] = data.draw(st.lists(st.integers(0, 7), min_size=nb_nodes, max_size=nb_nodes))
    free_mem = data.draw(st.lists(free_mems, min_size=nb_nodes, max_size=nb_nodes))
    counts: list[Any] = data.draw(st.lists(st.integers(0, 6), min_size=nb_nodes, max_size=nb_nodes))
    if odd:
        nodes_ = st.one_of(nodes_, st.sampled_from([-1, nb_nodes, nb_nodes + 3]))
        at = data.draw(st.integers(0, nb_nodes - 1))
        what = data.draw(st.sampled_from(["count", "busy", "huge", "cores", "ids"]))
        if what == "count":
            counts[at] = 2.0
        elif what == "busy":
            busy[at] = 1.0
        elif what == "huge":
            busy[at] = -(2**50)
        elif what == "cores":
            cores[at] = tuple(cores[at])
    log_nodes = data.draw(st.lists(nodes_, min_size=1, max_size=40))
    base = data.draw(st.integers(0, 3))
    pos = base + data.draw(st.integers(-1 if odd else 0, len(log_nodes)))
    total = data.draw(st.sampled_from([0, 3, sum(c for c in counts if isinstance(c, int))]))
    outcomes = []
    for kernel in (_kernel(), None):
        target = SimpleNamespace(
            kernel=kernel, node_cores=cores, node_busy=list(busy), node_free_mem=list(free_mem)
        )
        tracker = _SizeTracker.__new__(_SizeTracker)
        tracker.mem, tracker.need = mem, mem - MEM_TOL
        tracker.counts, tracker.total, tracker.pos = list(counts), total, pos
        log = ChangeLog(SimpleNamespace(compact=lambda: None), 10**6)
        log.nodes, log.base = list(log_nodes), base
        try:
            tracker.catch_up(target, log)  # type: ignore[arg-type]
        except (ArithmeticError, ValueError, IndexError) as error:
            outcomes.append(type(error))
            continue
        outcomes.append(([_bits(c) for c in tracker.counts], _bits(tracker.total), tracker.pos))
    assert outcomes[0] == outcomes[1]


def test_index_worked_examples() -> None:
    # hetero_platform: node 0 (16,000 MB, 2 cores), node 1 (8,000 MB, 5 cores), node 2
    # (64,000 MB, 2 cores). Tasks of 4,000 MB: task j fits while free memory - j x 4,000 >=
    # 4,000 - MEM_TOL: 4 on node 0 (2 cores), 2 on node 1, 16 on node 2 (2 cores).
    kernel = _kernel()
    cores, busy = [[0, 1], [2, 3, 4, 5, 6], [7, 8]], [0, 0, 0]
    free_mem = [16000.0, 8000.0, 64000.0]
    counts = [0, 0, 0]
    args = (cores, busy, free_mem, 4000.0 - MEM_TOL, 4000.0)
    assert kernel.size_catch_up(counts, [1, 0, 2, 1], 0, *args, 0) == 6
    assert counts == [2, 2, 2]
    # Node 1 with 3,999.9 MB taken: 4,000.1 left, one task; node 0 full: none. The log from
    # position 2: node 0 before it is not recounted, node 1 twice counts once.
    busy[1], free_mem[1], busy[0] = 1, 8000.0 - 3999.9, 2
    assert kernel.size_catch_up(counts, [0, 0, 1, 1], 2, *args, 6) == 5
    assert counts == [2, 1, 2]
    assert kernel.size_catch_up(counts, [0], 0, *args, 5) == 3
    assert counts == [0, 1, 2]
    # Memory not asked for: every free core. Tasks of 1 MB: with 2e-6 MB less free, none (the
    # tolerance is 1e-6); with exactly 1 MB, one.
    assert kernel.size_catch_up(counts, [2], 0, cores, busy, free_mem, -MEM_TOL, 0.0, 3) == 3
    assert counts == [0, 1, 2]
    tiny = [0.0, 0.0, 1.0 - 2e-6]
    assert kernel.size_catch_up(counts, [2], 0, cores, busy, tiny, 1.0 - MEM_TOL, 1.0, 3) == 1
    assert counts == [0, 1, 0]
    one = [0.0, 0.0, 1.0]
    assert kernel.size_catch_up(counts, [2], 0, cores, busy, one, 1.0 - MEM_TOL, 1.0, 1) == 2
    assert counts == [0, 1, 1]


def test_index_inputs_the_kernel_does_not_mirror_are_left_to_python() -> None:
    kernel = _kernel()
    counts = [0, 0]
    cores, busy, free_mem = [[0], [1]], [0, 0], [5000.0, 5000.0]
    for args in [
        (counts, [0], 0, cores, busy, free_mem, 1000.0, 1000, 0),  # an int mem
        (counts, [0], 0, cores, busy, free_mem, 1000, 1000.0, 0),  # an int need
        (counts, [0], 0, cores, busy, free_mem, 1000.0, 1000.0, 0.0),  # a float total
        (counts, [0], 0, cores, busy, free_mem, 1000.0, 1000.0, 2**70),  # too large a total
        (counts, [2], 0, cores, busy, free_mem, 1000.0, 1000.0, 0),  # a node out of range
        (counts, [-1], 0, cores, busy, free_mem, 1000.0, 1000.0, 0),  # Python counts from the end
        (counts, [0], -1, cores, busy, free_mem, 1000.0, 1000.0, 0),  # likewise
        ([0.0, 0], [0], 0, cores, busy, free_mem, 1000.0, 1000.0, 0),  # a float count
        (counts, [0], 0, [(0,), [1]], busy, free_mem, 1000.0, 1000.0, 0),  # cores in a tuple
        (counts, [0], 0, cores, [0.0, 0], free_mem, 1000.0, 1000.0, 0),  # a float busy count
        (counts, [0], 0, cores, busy, [math.nan, 0.0], 1000.0, 1000.0, 0),  # int(nan) raises
        (counts, [0], 0, cores, busy, [math.inf, 0.0], 1000.0, 1000.0, 0),  # int(inf) too
        (counts, [0], 0, cores, busy, [1e300, 0.0], 1000.0, 1e-300, 0),  # a quotient too large
        (counts, [0], 0, cores, busy, free_mem, 1000.0, math.nan, 0),  # spare / nan: nan
        (counts, (0,), 0, cores, busy, free_mem, 1000.0, 1000.0, 0),  # not a list
    ]:
        assert kernel.size_catch_up(*args) is NotImplemented, args
    assert counts == [0, 0]
    # A full node's memory is not read (nor is it by the Python).
    assert kernel.size_catch_up(counts, [0, 1], 0, cores, [1, 0], ["?", 5000.0], 0.5, 1.0, 0) == 1
    assert counts == [0, 1]
