"""The resource manager: picks the cores a job runs on, by a core policy.

Cores are picked one at a time and the policy is re-evaluated after every pick, because each
pick changes the state the policies read (free cores, free memory, bandwidth demand). Only free
cores whose node still has the task's memory free are candidates. A job gets all its cores or
none: a failed attempt is rolled back and leaves the pool as it was.

Every policy except ``random`` ranks *processors* by ``(primary key, lowest free core id)`` and
takes the lowest free core of the best processor; the second component is the tie-break
"lowest core id" (SPEC section 5 and ``docs/decision.md``). Primary keys:

* ``high_gflops``: ``-peak GFLOPS per core`` (static: the speed a free core delivers once a
  job starts on it);
* ``low_power``: ``watts per core at full load`` (static: processor power / cores);
* ``high_cores``: ``-free cores of the processor``;
* ``high_mem``: ``-free memory of the node`` (MB);
* ``high_mem_bw``: ``-(bandwidth - demand)`` of the processor (GB/s, may go negative).

Once an attempt for a task size has failed, :class:`~hdeeprm.decision.fit.FitIndex` watches that
size (free cores and free memory per node, kept incrementally) and says exactly whether a job of
that size can be placed before any core is picked: a job blocked on memory while cores are free
is attempted again only once it fits, not at every decision point. ``random`` is the exception:
its attempts consume seeded draws, so it still attempts, to keep its runs reproducible as they
were.

Static keys (``high_gflops``, ``low_power``) rank the processors once; a max tree over that
ranking, holding an upper bound of each processor's node free memory (``-inf`` when the
processor is full; exact after a release, only too high after cores were taken, and set right
once a processor it offers is found ineligible), finds the best processor whose node has the
task's memory in O(log P). Since core ids are assigned
processor by processor, "lowest free core id" orders tied processors as their first core id
does, so the ranking never changes. Dynamic keys keep a heap with entries that are *lower
bounds* of their processor's ``(key, lowest free core)``: taking cores only worsens a key, so it
tells the heaps nothing; the top entry is checked against the pool and re-sifted when it was too
low. Changes that can improve a key mark the processor dirty: a release and, for
``high_mem_bw``, a demand its search placed from a running sum. Before the next pick the heap
pushes one fresh entry per dirty processor whose live entry no longer bounds it, and discards
stale entries as they surface. ``high_mem_bw`` (and any other key) uses
:class:`_ProcessorHeap` (version-stamped tuples); ``high_mem`` ranks nodes instead
(:class:`~hdeeprm.decision._node_heap.NodeHeap`: a node's processors share its key, so the best
processor holds the lowest free core of the best node), and ``high_cores`` packs its pairs into
ints (:class:`~hdeeprm.decision._count_heap.CoreCountHeap`). For ``high_mem`` the best node has
the most memory, so when it lacks the task's memory no node has it; ``high_cores`` and
``high_mem_bw`` set aside the processors better ranked but whose node lacks the memory (only on
attempts that succeed). A pick costs O(changed processors x log P), never a scan of the
platform. Each pick also takes the run of cores the chosen processor (or node) provably wins in
a row: the same cores, in the same order, as one pick at a time.
"""

from __future__ import annotations

import heapq
from bisect import insort
from collections.abc import Callable
from functools import partial
from itertools import chain
from typing import final

import numpy as np

from hdeeprm.decision._count_heap import CoreCountHeap
from hdeeprm.decision._node_heap import NodeHeap
from hdeeprm.decision._pick import PickByAllocating, child_bound
from hdeeprm.decision._random import UniformStream
from hdeeprm.decision._segment import NEG_INF, MaxTree
from hdeeprm.decision.actions import CORE_POLICIES
from hdeeprm.decision.fit import FitIndex
from hdeeprm.decision.resources import MEM_TOL, CorePool

#: Heap entry: (primary key, lowest free core id, entry version, processor id).
_Entry = tuple[float, int, int, int]
#: Processors short of the job's memory a static-key allocation walks past in rank order
#: before it searches the tree (``_RankedTree.allocate``).
_OPEN_MISSES = 16
#: Processors back in ``open`` (``_RankedTree.allocate``) are merged in by one sort of the
#: list when they are more than 1/48 of it, else by one insort each: the sort reads the whole
#: list, an insort shifts half of it (``timeit``: 100 ranks and 16 back, 0.7 us against
#: 1.8 us; 800 ranks and 8 back, 4.0 us against 1.6 us).
_SORT_BACK = 48


def _minus_free_cores(pool: CorePool, p: int) -> float:
    return -len(pool.proc_free[p])


def _minus_node_free_mem(pool: CorePool, p: int) -> float:
    return -pool.node_free_mem[pool.proc_node[p]]


def _bandwidth_headroom_deficit(pool: CorePool, p: int) -> float:
    return pool.proc_demand[p] - pool.proc_mem_bw[p]


class _ProcessorHeap(PickByAllocating):
    """Processors with a free core, ordered by one policy's key, lazily invalidated."""

    __slots__ = ("pool", "primary", "kind", "dirty", "heap", "limit", "version", "live")

    def __init__(
        self,
        pool: CorePool,
        primary: Callable[[int], float],
        kind: str | None = None,
    ) -> None:
        self.pool = pool
        self.primary = primary
        #: The core policy whose key ``primary`` computes (``high_mem_bw``), whose runs
        #: ``allocate`` replays (``None``: an unknown key, runs of one pick). ``high_cores``
        #: and ``high_mem`` have their own heaps (``_count_heap``, ``_node_heap``).
        self.kind = kind
        self.dirty: set[int] = set()
        # Entries are lower bounds: taking cores only worsens a key, so only the changes that
        # can improve one are heard (see _best).
        pool.gain_listeners.append(self.dirty)
        if kind != "high_mem_bw":
            # An unknown key may read the node's free memory (which a mate's release raises)
            # or the bandwidth demand, which settle sums again (the sum in core order may
            # round below the running one). high_mem_bw needs only the processors whose entry
            # it placed from a running sum (see allocate).
            pool.node_gain_listeners.append(self.dirty)
            pool.demand_listeners.append(self.dirty)
        #: Per processor: the version of its one current entry; older entries are stale.
        self.version = [0] * len(pool.proc_cores)
        #: Per processor: its live entry (``None`` once dropped because it was full), so that
        #: a dirty processor whose entry is still a lower bound is not pushed again.
        self.live: list[_Entry | None] = [None] * len(pool.proc_cores)
        self.heap: list[_Entry] = []
        #: Rebuild from scratch when stale entries outnumber live ones this much (a rebuild
        #: costs a pass over the processors; the heap being deeper costs a level or two).
        self.limit = 16 * len(pool.proc_cores) + 64
        self.rebuild()

    def rebuild(self) -> None:
        free = self.pool.proc_free
        self.version = version = [v + 1 for v in self.version]
        procs = [p for p in range(len(free)) if free[p]]
        self.heap = [(key, free[p][0], version[p], p) for p, key in zip(procs, self._keys(procs))]
        live: list[_Entry | None] = [None] * len(free)
        self.live = live
        for entry in self.heap:
            live[entry[3]] = entry
        heapq.heapify(self.heap)
        self.dirty.clear()

    def _keys(self, procs: list[int]) -> list[float]:
        """The primary keys of ``procs``, as ``primary`` computes them (inlined for the known
        policies: one comprehension instead of a call per processor)."""
        pool, kind = self.pool, self.kind
        if kind == "high_mem_bw":
            demand, mem_bw = pool.proc_demand, pool.proc_mem_bw
            return [demand[p] - mem_bw[p] for p in procs]
        return [self.primary(p) for p in procs]

    def refresh(self) -> None:
        """Push a current entry for every processor changed since the last refresh that has
        a free core and whose live entry is no longer a lower bound of its current ``(key,
        lowest free core)`` (older entries become stale; a full processor's are dropped as
        they surface).

        A change heard here may have worsened the key (``high_mem_bw`` hears every demand
        summed again, after takes too; a node's other processors may have lost cores): the
        live entry then still bounds it from below, which is all the heap needs, so it
        stays (about half of the changes on the Gaia windows of ``benchmarks/speed/env_steps.py``).
        """
        dirty = self.dirty
        if not dirty:
            return
        if len(self.heap) + len(dirty) > self.limit:
            self.rebuild()
            return
        heap, version, free, live = self.heap, self.version, self.pool.proc_free, self.live
        push = heapq.heappush
        procs = [p for p in dirty if free[p]]
        for p, key in zip(procs, self._keys(procs)):
            first = free[p][0]
            entry = live[p]
            if entry is not None and (entry[0] < key or (entry[0] == key and entry[1] <= first)):
                continue  # still a lower bound
            v = version[p] = version[p] + 1
            entry = live[p] = (key, first, v, p)
            push(heap, entry)
        dirty.clear()

    def allocate(
        self, job_id: str | None, res: int, mem: float, mem_bw: float, taken: list[int]
    ) -> int | None:
        """Take cores for up to ``res`` tasks of ``job_id`` as one pick at a time would
        (appended to ``taken``, in pick order), each pick taking the run of cores its
        processor provably wins in a row. With ``job_id`` ``None``: take nothing, return
        the best processor (``None`` if none has a free core and the memory).

        The best processor: an entry's ``(key, lowest free core)`` is a lower bound of its
        processor's current one: exact when pushed, it only grows as cores are taken (fewer
        free cores, less node memory, more demand, a higher lowest free core), and every
        change that could lower it (a release, a demand summed again) pushes a fresh entry.
        So the top entry, once checked against its processor's current figures (and
        re-sifted if it was too low), is the best one: taking cores needs no notification and
        no push.

        The run: when the best entry is on top, every other entry is in the subtree of one of
        its two children, so the smaller child bounds them all from below (stale entries
        included, which can only make the bound lower, never wrong). Taking cores from the
        chosen processor ``p`` never makes another processor better: ``high_mem_bw`` keys of
        the others do not change, lowest free core ids do not change,
        and a processor short of memory stays short (those set aside by the search are ranked
        before ``p`` but stay ineligible). So the bound stays a lower bound of every other
        candidate during the run, and ``p`` wins the next pick while it still has a free
        core, its node the memory, and its own ``(key, lowest free core)`` after the cores
        taken so far (replayed in :meth:`CorePool.take`'s float order) ranks strictly before
        the bound (core ids are unique, so ranks never tie). The run ends at the first pick
        that test does not prove; the next pick ranks again from the heap.

        The whole allocation in one loop: it picks about eight times per job on the Gaia
        windows of ``benchmarks/speed/env_steps.py`` (runs are about one core long), where a call
        per pick and its locals cost about as much as the pick.
        """
        if self.dirty:
            self.refresh()
        pool, heap, version, live = self.pool, self.heap, self.version, self.live
        primary, kind = self.primary, self.kind
        # high_mem_bw: processors whose entry was placed below from the demand as it stands,
        # a running sum once cores were taken: settle sums it again in core order, which may
        # round below it, so they are checked at the next refresh. Any other entry stays a
        # lower bound through settles: its demand was a settled sum, and taking cores only
        # adds non-negative terms to the sum in core order, which rounding never lowers
        # (a release, which can lower it, marks the processor anyway).
        placed: list[int] | None = [] if kind == "high_mem_bw" else None
        free = pool.proc_free
        node_free_mem, proc_node = pool.node_free_mem, pool.proc_node
        demand, proc_mem_bw = pool.proc_demand, pool.proc_mem_bw
        take, take_run = pool.take, pool.take_run
        need = mem - MEM_TOL
        pop, push, heapreplace = heapq.heappop, heapq.heappush, heapq.heapreplace
        while len(taken) < res:
            aside: list[_Entry] | None = None  # set aside: valid, not for this job's memory
            while heap:
                entry = heap[0]
                p = entry[3]
                members = free[p]
                if entry[2] != version[p]:
                    pop(heap)  # stale: a fresher entry exists
                    continue
                if not members:
                    pop(heap)  # the processor is full: its live entry is dropped
                    live[p] = None
                    continue
                spare = node_free_mem[proc_node[p]]
                if spare < need:
                    if aside is None:
                        aside = [pop(heap)]  # valid, but not for this job: keep it
                    else:
                        aside.append(pop(heap))
                    continue
                # primary(p), inlined for high_mem_bw (the same values: see _keys)
                key = demand[p] - proc_mem_bw[p] if kind == "high_mem_bw" else primary(p)
                first = members[0]
                if key != entry[0] or first != entry[1]:  # cores were taken: its true place
                    entry = live[p] = (key, first, entry[2], p)
                    heapreplace(heap, entry)
                    if placed is not None:
                        placed.append(p)
                    continue
                break
            else:  # no processor has a free core and the memory
                if aside is not None:
                    for entry in aside:
                        push(heap, entry)
                if placed:
                    self.dirty.update(placed)
                return None
            if job_id is None:
                if aside is not None:
                    for entry in aside:
                        push(heap, entry)
                return p
            # p is the best processor; its run
            n = len(members)
            count = res - len(taken)
            if n < count:
                count = n
            run = 1
            if count > 1 and kind is not None:
                bound = child_bound(heap)
                left = spare
                dem, mem_bw_p = demand[p], proc_mem_bw[p]
                while run < count:
                    left -= mem  # the node's free memory after ``run`` takes
                    dem += mem_bw  # the processor's demand after ``run`` takes
                    if left < need:
                        break
                    if bound is not None and not (dem - mem_bw_p, members[run]) < bound:
                        break
                    run += 1
            if aside is not None:
                for entry in aside:
                    push(heap, entry)
            if run == 1:  # the common case on levelling policies: the cheaper call
                core = members[0]
                take(core, job_id, mem, mem_bw)
                taken.append(core)
            else:
                taken.extend(take_run(p, run, job_id, mem, mem_bw))
            if self.dirty:  # only a negative demand or memory could (never job records)
                self.refresh()
                heap, version, live = self.heap, self.version, self.live
        if placed:
            self.dirty.update(placed)
        return None


def _memory_run(count: int, spare: float, mem: float, need: float) -> int:
    """How many of ``count`` cores of one node its ``spare`` MB admit for tasks of ``mem`` MB
    (at least one: the caller checked the first), tested as the pick loop does, in take's
    float order: ``spare`` less ``mem`` per core taken must stay ``>= need``."""
    spare -= mem
    run = 1
    while run < count and spare >= need:
        spare -= mem
        run += 1
    return run


@final  # exact-type checks (``type(structure) is _RankedTree``) then narrow for the checker
class _RankedTree:
    """Processors in a static order; the best one whose node has the memory, in O(log P).

    Allocations first walk :attr:`open`, the ranks of the processors that may have a free
    core, in ascending order: when the job's memory fits on most nodes, the best processor
    is one of the first few, and the tree is neither brought up to date nor searched. Only
    after :data:`_OPEN_MISSES` processors of the walk lacked the memory does the sweep go on
    in the tree (refreshed then), in O(log P) per processor.
    """

    __slots__ = ("pool", "order", "rank", "dirty", "tree", "gained", "open", "listed", "nb_tree")

    def __init__(self, pool: CorePool, key: list[float]) -> None:
        self.pool = pool
        cores = pool.proc_cores
        self.order = sorted(
            (p for p in range(len(cores)) if cores[p]), key=lambda p: (key[p], cores[p][0])
        )
        self.rank = [-1] * len(cores)
        for r, p in enumerate(self.order):
            self.rank[p] = r
        #: Processors whose slot may be too low (a release gave cores or memory back), or is
        #: known to be too high (found ineligible): set right by the next refresh. Slots are
        #: upper bounds otherwise (taking cores only lowers a processor's value, and tells
        #: the tree nothing).
        self.dirty: set[int] = set()
        pool.gain_listeners.append(self.dirty)
        pool.node_gain_listeners.append(self.dirty)
        #: Processors that may have got a free core back since the last allocation (releases):
        #: put back in :attr:`open` by the next one.
        self.gained: set[int] = set()
        pool.gain_listeners.append(self.gained)
        #: Allocations whose sweep went on in the tree (the walk of ``open`` missed too often).
        self.nb_tree = 0
        self.rebuild()

    def rebuild(self) -> None:
        free, node_free_mem, proc_node = (
            self.pool.proc_free,
            self.pool.node_free_mem,
            self.pool.proc_node,
        )
        self.tree = MaxTree(
            [node_free_mem[proc_node[p]] if free[p] else NEG_INF for p in self.order]
        )
        self.dirty.clear()
        #: Ascending ranks of every processor with a free core (and of some full ones, taken
        #: by other policies since: dropped when the walk meets them). A processor only gets
        #: a free core back through a release, which ``gained`` hears.
        self.open: list[int] = [r for r, p in enumerate(self.order) if free[p]]
        #: Per processor: whether its rank is in ``open``.
        self.listed: list[bool] = [bool(members) for members in free]
        self.gained.clear()

    def pick(self, mem: float) -> int | None:
        """Lowest free core of the best processor whose node has ``mem`` MB free."""
        proc, _ = self.pick_run(mem, 1)
        return None if proc is None else self.pool.proc_free[proc][0]

    def refresh(self) -> None:
        """Bring the tree up to date with the processors changed since the last refresh, in
        one bottom-up pass (:meth:`MaxTree.set_many`)."""
        dirty = self.dirty
        if not dirty:
            return
        pool, rank = self.pool, self.rank
        free, node_free_mem, proc_node = pool.proc_free, pool.node_free_mem, pool.proc_node
        slots, values = [], []
        for p in dirty:
            r = rank[p]
            if r >= 0:
                slots.append(r)
                values.append(node_free_mem[proc_node[p]] if free[p] else NEG_INF)
        dirty.clear()
        self.tree.set_many(slots, values)

    def pick_run(self, mem: float, limit: int) -> tuple[int | None, int]:
        """The best processor whose node has ``mem`` MB free, and how many of the next (up to
        ``limit``) one-at-a-time picks it would win in a row (see :meth:`_run`)."""
        self.refresh()
        pool, tree, order = self.pool, self.tree, self.order
        free, node_free_mem, proc_node = pool.proc_free, pool.node_free_mem, pool.proc_node
        need = mem - MEM_TOL
        r = tree.leftmost_at_least(need)
        while r is not None:  # slots are upper bounds: check the processor it offers
            proc = order[r]
            if free[proc] and node_free_mem[proc_node[proc]] >= need:
                return proc, self._run(proc, mem, limit)
            self.dirty.add(proc)
            r = tree.leftmost_from(r + 1, need)
        return None, 0

    def _run(self, proc: int, mem: float, limit: int) -> int:
        """Taking a core from the best processor changes nothing about the processors ranked
        before it (still full, or on a node still short of memory) and not its rank, so it stays
        the best while it has a free core and its node the memory: its run is the number of
        tasks the node's free memory admits (the pick loop's test, replayed in the same float
        order as :meth:`CorePool.take`), capped by its free cores and ``limit``."""
        pool = self.pool
        count = min(limit, len(pool.proc_free[proc]))
        if mem > 0.0 and count > 1:
            need = mem - MEM_TOL
            left = pool.node_free_mem[pool.proc_node[proc]] - mem
            run = 1
            while run < count and left >= need:
                left -= mem
                run += 1
            count = run
        return count

    def allocate(
        self, job_id: str, res: int, mem: float, mem_bw: float, taken: dict[int, list[int]]
    ) -> int:
        """Cores for up to ``res`` tasks, in the order one pick at a time would take them, put
        in ``taken`` by processor (in pick order); returns how many were taken.

        The processors chosen one after the other have increasing ranks (a pick never makes a
        better-ranked processor eligible again), so one left-to-right sweep finds them. It
        walks :attr:`open` (every processor with a free core is in it), checking each one
        against the pool: the first that has a free core and the memory is the best, as the
        tree would say. After :data:`_OPEN_MISSES` processors short of memory, the rest of
        the sweep goes through the tree (:meth:`_tree_sweep`). The run per processor is
        :meth:`_run`, inlined: this loop runs once per processor a job gets (RICC: about 13
        per job).
        """
        pool, order = self.pool, self.order
        free, node_free_mem, proc_node = pool.proc_free, pool.node_free_mem, pool.proc_node
        ranks, listed = self.open, self.listed
        gained = self.gained
        if gained:
            back = [p for p in gained if not listed[p] and free[p]]
            gained.clear()
            if back:
                rank = self.rank
                for p in back:
                    listed[p] = True
                if len(back) * _SORT_BACK > len(ranks):
                    # a short list: one sort merges them in (it is one sorted run already)
                    ranks.extend(map(rank.__getitem__, back))
                    ranks.sort()
                else:  # a long one (about 800 ranks late in RICC): an insort each
                    for p in back:
                        insort(ranks, rank[p])
        take_run = pool.take_run
        need = mem - MEM_TOL
        left = res
        misses = _OPEN_MISSES
        i = 0
        while i < len(ranks):
            r = ranks[i]
            proc = order[r]
            members = free[proc]
            if not members:  # full (another policy took its cores): out of the walk
                del ranks[i]
                listed[proc] = False
                continue
            spare = node_free_mem[proc_node[proc]]
            if spare >= need:
                count = len(members)
                if left < count:
                    count = left
                if mem > 0.0 and count > 1:
                    count = _memory_run(count, spare, mem, need)
                taken[proc] = take_run(proc, count, job_id, mem, mem_bw)
                left -= count
                if members:  # the same list, less the cores just taken
                    i += 1
                else:
                    del ranks[i]
                    listed[proc] = False
                if not left:
                    break
                continue
            misses -= 1
            if not misses:
                self.nb_tree += 1
                left = self._tree_sweep(r + 1, job_id, left, mem, mem_bw, taken)
                break
            i += 1
        return res - left

    def _tree_sweep(
        self,
        start: int,
        job_id: str,
        left: int,
        mem: float,
        mem_bw: float,
        taken: dict[int, list[int]],
    ) -> int:
        """The sweep from rank ``start`` on, through the tree; returns the tasks still
        without a core.

        The tree is brought up to date first; cores taken since (this sweep's) only make its
        values too high, so it never skips an eligible processor, and a processor it offers is
        checked against the pool before use (and marked for the next refresh when it no
        longer qualifies).

        The reference of the compiled sweep (``tree_sweep`` in ``_pool_kernels.c``, reached
        through ``Pool.ranked_allocate`` on a native pool), which reads :attr:`tree`'s slots
        directly and refreshes it as :meth:`refresh` does (``refresh_tree``), so that a native
        pool's ranked allocation makes no Python call per sweep or per processor the tree
        offers. Changes here, in :meth:`refresh` or in :meth:`MaxTree.set_many` go there too;
        the kernel's property tests compare both, the tree's slots included."""
        self.refresh()
        pool, tree, order = self.pool, self.tree, self.order
        free, node_free_mem, proc_node = pool.proc_free, pool.node_free_mem, pool.proc_node
        take_run, leftmost_from = pool.take_run, tree.leftmost_from
        need = mem - MEM_TOL
        r = leftmost_from(start, need)
        while r is not None:
            proc = order[r]
            members = free[proc]
            if members:
                spare = node_free_mem[proc_node[proc]]
                if spare >= need:
                    count = len(members)
                    if left < count:
                        count = left
                    if mem > 0.0 and count > 1:
                        count = _memory_run(count, spare, mem, need)
                    taken[proc] = take_run(proc, count, job_id, mem, mem_bw)
                    left -= count
                    if not left:
                        break
                    r = leftmost_from(r + 1, need)
                    continue
            self.dirty.add(proc)
            r = leftmost_from(r + 1, need)
        return left


class ResourceManager:
    """Places jobs on cores of a :class:`CorePool` by core policy.

    Args:
        pool: the resource state it allocates from (shared with the workload manager).
        rng: draws for the ``random`` policy; a seeded generator makes runs reproducible.
    """

    def __init__(self, pool: CorePool, rng: np.random.Generator) -> None:
        self.pool = pool
        self.rng = rng
        self._uniform = UniformStream(rng)
        self._heaps: dict[str, _ProcessorHeap | CoreCountHeap | NodeHeap | _RankedTree] = {}
        self.fit = FitIndex(pool)
        #: Allocations that started picking cores, and those refused by the fit index alone.
        self.nb_attempts = 0
        self.nb_refused = 0
        # Static keys: one value per processor, computed once.
        self._neg_gflops = [
            -pool.core_peak[cores[0]] if cores else 0.0 for cores in pool.proc_cores
        ]
        self._power = [pool.core_power[cores[0]] if cores else 0.0 for cores in pool.proc_cores]

    def reseed(self, rng: np.random.Generator) -> None:
        """Draw the ``random`` policy from ``rng`` from now on."""
        self.rng = rng
        self._uniform = UniformStream(rng)

    def reset(self) -> None:
        """Rebuild the ordered structures (after the pool was reset); zero the counters."""
        for heap in self._heaps.values():
            heap.rebuild()
        self.fit.rebuild()
        self.nb_attempts = 0
        self.nb_refused = 0

    def _primary(self, policy: str) -> Callable[[int], float]:
        pool = self.pool
        if policy == "high_gflops":
            return self._neg_gflops.__getitem__
        if policy == "low_power":
            return self._power.__getitem__
        # Module-level functions bound with partial (not lambdas), so that a manager, and an
        # environment holding one, can be pickled (subprocess vector environments).
        if policy == "high_cores":
            return partial(_minus_free_cores, pool)
        if policy == "high_mem":
            return partial(_minus_node_free_mem, pool)
        if policy == "high_mem_bw":
            return partial(_bandwidth_headroom_deficit, pool)
        raise ValueError(f"unknown core policy {policy!r}; expected one of {CORE_POLICIES}")

    def _heap(self, policy: str) -> _ProcessorHeap | CoreCountHeap | NodeHeap | _RankedTree:
        heap = self._heaps.get(policy)
        if heap is None:  # built on first use, then kept current
            if policy == "high_gflops":
                heap = _RankedTree(self.pool, self._neg_gflops)
            elif policy == "low_power":
                heap = _RankedTree(self.pool, self._power)
            elif policy == "high_mem":
                heap = NodeHeap(self.pool)
            elif policy == "high_cores":
                heap = CoreCountHeap(self.pool)
            else:
                heap = _ProcessorHeap(self.pool, self._primary(policy), policy)
            self._heaps[policy] = heap
        return heap

    def can_fit(self, res: int, mem: float) -> bool:
        """Whether ``res`` tasks of ``mem`` MB each can be placed now, by any core policy, without
        touching a core: exact for a task size an attempt failed with before (cores and memory
        per node), otherwise only the free core count is checked."""
        return self.fit.fits(res, mem)

    def pick(self, policy: str, mem: float) -> int | None:
        """The core ``policy`` chooses now for one task needing ``mem`` MB, or ``None``."""
        if policy == "random":
            return self._pick_random(mem)
        return self._heap(policy).pick(mem)

    def _pick_random(self, mem: float) -> int | None:
        """Uniform over eligible cores (free, node memory enough).

        A few draws among all free cores first (rejection sampling: uniform over the eligible
        ones once accepted); when memory makes most free cores ineligible, an exact draw
        weighted by each eligible node's free cores.
        """
        pool = self.pool
        free_cores, n = pool.free_cores, len(pool.free_cores)
        if not n:
            return None
        need = mem - MEM_TOL
        node_free_mem, core_node, below = pool.node_free_mem, pool.core_node, self._uniform.below
        for _ in range(8):
            core = free_cores[below(n)]
            if node_free_mem[core_node[core]] >= need:
                return core
        return self._pick_random_exact(need)

    def _pick_random_exact(self, need: float) -> int | None:
        pool = self.pool
        eligible: list[tuple[int, int]] = []
        total = 0
        node_cores, node_busy, node_free_mem = pool.node_cores, pool.node_busy, pool.node_free_mem
        for node in range(len(node_cores)):
            free = len(node_cores[node]) - node_busy[node]
            if free and node_free_mem[node] >= need:
                eligible.append((node, free))
                total += free
        if not total:
            return None
        r = self._uniform.below(total)
        chosen = eligible[-1][0]
        for node, free in eligible:
            if r < free:
                chosen = node
                break
            r -= free
        for p in pool.node_procs[chosen]:
            members = pool.proc_free[p]
            if r < len(members):
                return members[r]
            r -= len(members)
        raise AssertionError("free core counts out of sync")  # pragma: no cover

    def allocate(
        self, job_id: str, res: int, mem: float, mem_bw: float, policy: str, now: float
    ) -> list[int] | None:
        """Cores for all ``res`` tasks of a job, in pick order, or ``None`` (nothing changed).

        On success the pool is settled (demands and P-states updated); the caller drains the
        P-state decisions.
        """
        pool = self.pool
        if res > pool.free_count:
            return None
        structure: _ProcessorHeap | CoreCountHeap | NodeHeap | _RankedTree | None = None
        if policy != "random":  # random's attempts consume seeded draws: always attempted
            if not self.fit.fits(res, mem):
                self.nb_refused += 1
                return None
            structure = self._heaps.get(policy)
            if structure is None:
                structure = self._heap(policy)
        self.nb_attempts += 1
        if type(structure) is _RankedTree:  # static key: whole runs per processor, one sweep
            runs: dict[int, list[int]] = {}
            kernel = pool.kernel  # the compiled walk when the pool is native
            if kernel is None:
                got = structure.allocate(job_id, res, mem, mem_bw, runs)
            else:
                got = kernel.ranked_allocate(
                    structure, job_id, res, mem, mem_bw, runs, _OPEN_MISSES, _SORT_BACK
                )
            if got < res:
                pool.release([c for cores in runs.values() for c in cores], now)  # roll back
                self.fit.watch(mem)  # from now on, attempted only when it fits
                return None
            pool.settle_taken(runs, now)
            if len(runs) == 1:
                return next(iter(runs.values()))
            return list(chain.from_iterable(runs.values()))
        taken: list[int] = []
        if structure is not None:  # changing key: runs the chosen processors provably win
            structure.allocate(job_id, res, mem, mem_bw, taken)
        else:
            pick = self._pick_random
            for _ in range(res):
                core = pick(mem)
                if core is None:
                    break
                pool.take(core, job_id, mem, mem_bw)
                taken.append(core)
        if len(taken) < res:  # roll back the cores taken
            pool.release(taken, now)
            if policy != "random":
                self.fit.watch(mem)  # from now on, attempted only when it fits
            return None
        pool.settle(taken, now)
        return taken
