"""Whether a job can be placed now, answered from incrementally kept aggregates.

A job of ``res`` tasks needing ``mem`` MB each fits exactly when the nodes can hold ``res``
tasks: a node holds ``min(free cores, tasks its free memory admits)``, and nodes are
independent, so the total over nodes decides (whatever the core policy, since every policy picks
among the same eligible cores). Once an attempt of a size has failed, the resource manager asks
this before picking any core, so a job blocked on memory while cores are free costs a few
comparisons per decision point instead of a full pick-and-roll-back.

Kept for a few watched task sizes (least recently asked dropped first), refreshed lazily from
one shared log of the nodes the pool reports as changed, only when that size is asked about:
each node's task count and their sum.
"""

from __future__ import annotations

from hdeeprm.decision.change_log import ChangeLog
from hdeeprm.decision.resources import MEM_TOL, CorePool

#: Task sizes whose per-node counts are kept at once. Heads of the queue repeat (a blocked job is
#: asked about at every decision point), and traces use few distinct sizes (RICC: 54).
MAX_TRACKED = 8
#: Slack on the number of tasks a node's memory admits. Rounding may only make the estimate
#: larger, so a "no" is always right (a rare "yes" the picks then disprove is rolled back).
_SLACK = 1e-9


class _SizeTracker:
    """For one task size: each node's task count, their total, and the change log position
    they are current at."""

    __slots__ = ("mem", "need", "counts", "total", "pos", "resets")

    def __init__(self, pool: CorePool, mem: float, log: ChangeLog) -> None:
        self.mem = mem
        self.need = mem - MEM_TOL
        self.counts = [self.tasks(pool, node) for node in range(len(pool.node_cores))]
        self.total = sum(self.counts)
        self.pos = log.end
        self.resets = log.resets

    def tasks(self, pool: CorePool, node: int) -> int:
        """Tasks of this size ``node`` can take now: the pick loop's test, solved in closed form
        (task ``j`` fits while ``free memory - j x mem >= mem - MEM_TOL``)."""
        free = len(pool.node_cores[node]) - pool.node_busy[node]
        if not free:
            return 0
        spare = pool.node_free_mem[node] - self.need
        if spare < 0.0:
            return 0
        if self.mem <= 0.0:
            return free
        count = int(spare / self.mem + _SLACK) + 1
        return count if count < free else free

    def catch_up(self, pool: CorePool, log: ChangeLog) -> None:
        """Recount the nodes changed since :attr:`pos` (each once). A native pool runs the
        same loop compiled (``Pool.size_catch_up``, the same counts and total); this one is
        the reference, and runs for inputs the compiled loop declines."""
        start = self.pos - log.base
        if start < len(log.nodes):
            kernel = pool.kernel
            if kernel is not None:
                total = kernel.size_catch_up(
                    self.counts,
                    log.nodes,
                    start,
                    pool.node_cores,
                    pool.node_busy,
                    pool.node_free_mem,
                    self.need,
                    self.mem,
                    self.total,
                )
                if total is not NotImplemented:
                    self.total = total
                    self.pos = log.end
                    return
            # :meth:`tasks` inlined (the same arithmetic): this loop runs for every node
            # change while a size is watched.
            counts, total, need, mem = self.counts, self.total, self.need, self.mem
            node_cores, node_busy, node_free_mem = (
                pool.node_cores,
                pool.node_busy,
                pool.node_free_mem,
            )
            for node in set(log.nodes[start:]):
                free = len(node_cores[node]) - node_busy[node]
                if not free:
                    count = 0
                else:
                    spare = node_free_mem[node] - need
                    if spare < 0.0:
                        count = 0
                    elif mem <= 0.0:
                        count = free
                    else:
                        count = int(spare / mem + _SLACK) + 1
                        if count > free:
                            count = free
                total += count - counts[node]
                counts[node] = count
            self.total = total
        self.pos = log.end


class FitIndex:
    """Exact "can this job be placed now" for the task sizes it was told to watch.

    The resource manager watches a size once an attempt with it has failed: jobs that fit are
    never slowed down by the index, and a blocked job is re-attempted only once its size fits.
    The watched sizes share one log of changed nodes (one list append per change, whatever the
    number of sizes; it used to be one set insertion per size) and each recounts the nodes
    changed since it was last current, only when asked about (or when the log is compacted).
    """

    def __init__(self, pool: CorePool) -> None:
        self.pool = pool
        self.tracked: dict[float, _SizeTracker] = {}
        #: Compact the log beyond this many entries (a few times the node count).
        self.log = ChangeLog(self, 4 * len(pool.node_cores) + 256)
        self.listening = False

    def _listen(self, on: bool) -> None:
        listeners = self.pool.node_change_listeners
        if on and not self.listening:
            listeners.append(self.log)
        elif not on and self.listening:
            listeners[:] = [s for s in listeners if s is not self.log]
        self.listening = on

    def rebuild(self) -> None:
        """Forget every watched size (after :meth:`CorePool.reset`)."""
        self.tracked.clear()
        self._listen(False)
        self.log.base += len(self.log.nodes)
        self.log.nodes.clear()

    def watch(self, mem: float) -> None:
        """Keep per-node counts for tasks of ``mem`` MB from now on (least recently asked
        size dropped beyond :data:`MAX_TRACKED`)."""
        tracked = self.tracked
        if mem in tracked:
            return
        if len(tracked) >= MAX_TRACKED:
            tracked.pop(next(iter(tracked)))
        self._listen(True)
        tracked[mem] = _SizeTracker(self.pool, mem, self.log)

    def fits(self, res: int, mem: float) -> bool:
        """Whether ``res`` tasks of ``mem`` MB each can be placed now; exact (up to a
        rounding-level "yes" at the boundary) for a watched size, ``True`` for any other
        size the free core count allows."""
        if res > self.pool.free_count:
            return False
        tracked = self.tracked
        tracker = tracked.pop(mem, None)
        if tracker is None:
            return True
        tracked[mem] = tracker  # most recently asked last
        log = self.log
        if tracker.resets != log.resets:  # the pool was reset under it: count again
            tracker = tracked[mem] = _SizeTracker(self.pool, mem, log)
        elif tracker.pos != log.end:
            tracker.catch_up(self.pool, log)
        return tracker.total >= res

    def compact(self) -> None:
        """Bring every watched size up to date and empty the log (it stays bounded however
        long no size is asked about)."""
        log, pool = self.log, self.pool
        for tracker in self.tracked.values():
            if tracker.resets == log.resets:
                tracker.catch_up(pool, log)
        log.base += len(log.nodes)
        log.nodes.clear()


class _FloorCounts:
    """For one task size: each node's ``min(free cores, (free memory + MEM_TOL) // mem)`` (0
    without a free core, never negative), their total, and the change log position they are
    current at. Counts and total are floats holding whole numbers (exact): the counting loops
    then run on floats alone, which CPython specialises (mixing ints and floats is slower)."""

    __slots__ = ("mem", "counts", "total", "pos", "resets", "asked")

    def __init__(self, pool: CorePool, mem: float, log: ChangeLog, sizes: list[float]) -> None:
        self.mem = mem
        node_busy, node_free_mem = pool.node_busy, pool.node_free_mem
        counts: list[float] = []
        total = 0.0
        for node, size in enumerate(sizes):
            free = size - node_busy[node]
            count = min(free, (node_free_mem[node] + MEM_TOL) // mem) if free else 0.0
            if not count > 0.0:
                count = 0.0
            counts.append(count)
            total += count
        self.counts = counts
        self.total = total
        self.pos = log.end
        self.resets = log.resets
        self.asked = True

    def catch_up(self, pool: CorePool, log: ChangeLog, sizes: list[float]) -> None:
        """Recount the nodes changed since :attr:`pos` (each once); ``sizes``: cores per node,
        as floats.

        The loop runs for every node change while a size is kept (RICC with EASY: about 40
        million times), so it keeps the floor as the float ``//`` gives it and the free cores
        as floats: no ``int()`` call per node, and float operations CPython specialises;
        :meth:`NodeFloorFit.tasks` converts the total once. A native pool runs the same loop
        compiled (``Pool.floor_catch_up``, the same counts and total bit for bit); this one is
        the reference, and runs for inputs the compiled loop declines."""
        nodes = log.nodes
        start = self.pos - log.base
        if start < len(nodes):
            kernel = pool.kernel
            if kernel is not None:
                total = kernel.floor_catch_up(
                    self.counts,
                    nodes,
                    start,
                    sizes,
                    pool.node_busy,
                    pool.node_free_mem,
                    self.mem,
                    self.total,
                )
                if total is not NotImplemented:
                    self.total = total
                    self.pos = log.base + len(nodes)
                    return
            mem, counts, total, tol = self.mem, self.counts, self.total, MEM_TOL
            node_busy, node_free_mem = pool.node_busy, pool.node_free_mem
            for node in set(nodes[start:]):
                free = sizes[node] - node_busy[node]
                if free:
                    count = (node_free_mem[node] + tol) // mem
                    if count > free:
                        count = free
                    elif count < 0.0:
                        count = 0.0
                    old = counts[node]
                    if count != old:  # most recounts find the same count: no write
                        total += count - old
                        counts[node] = count
                else:  # a full node counts zero
                    old = counts[node]
                    if old:
                        total -= old
                        counts[node] = 0.0
            self.total = total
        self.pos = log.base + len(nodes)


class NodeFloorFit:
    """The workload manager's "can ``res`` tasks of ``mem`` MB start now" (``fits_now``), kept
    incrementally: the same per-node formula, ``min(free cores, (free memory + MEM_TOL) //
    mem)`` summed over nodes, so the same answers as a scan of every node, bit for bit.

    Per task size asked about, the per-node counts and their total are kept and brought up to
    date only when that size is asked again, from a log of the nodes changed since (one list
    append per change, whatever the number of sizes). A size not asked since the last
    compaction of the log is dropped (rebuilt in one pass over the nodes if asked again); while
    no size is kept, the log is not listening at all (a run that never asks costs nothing).
    """

    def __init__(self, pool: CorePool) -> None:
        self.pool = pool
        #: Compact the log beyond this many entries (a few times the node count).
        self.limit = 4 * len(pool.node_cores) + 256
        self.log = ChangeLog(self, self.limit)
        self.listening = False
        self.sizes: dict[float, _FloorCounts] = {}
        #: Cores per node, as floats (the counts' arithmetic stays in floats).
        self.node_sizes = [float(len(cores)) for cores in pool.node_cores]
        #: Full recounts (a size asked for the first time, after a reset, or after being
        #: dropped): what a scan of every node would cost each time.
        self.nb_builds = 0

    def tasks(self, mem: float) -> int:
        """Tasks of ``mem`` MB (``mem > 0``) the nodes can take now, summed over nodes."""
        log, pool = self.log, self.pool
        if not self.listening:
            pool.node_change_listeners.append(log)
            self.listening = True
        counts = self.sizes.get(mem)
        if counts is None or counts.resets != log.resets:
            counts = self.sizes[mem] = _FloorCounts(pool, mem, log, self.node_sizes)
            self.nb_builds += 1
        else:
            counts.asked = True
            if counts.pos != log.base + len(log.nodes):
                counts.catch_up(pool, log, self.node_sizes)
        return int(counts.total)

    def fits(self, res: int, mem: float) -> bool:
        """Whether ``tasks(mem) >= res`` (``mem > 0``), the same answer, without keeping counts
        for a size that fits: a kept size answers from its counts; another is answered by a
        pass over the nodes that stops as soon as ``res`` tasks are found (the per-node counts
        are never negative) and is only kept when it does not fit (a blocked job is asked
        about again and again; most sizes that fit are asked once, their job then starts)."""
        counts = self.sizes.get(mem)
        if counts is not None and counts.resets == self.log.resets:
            return self.tasks(mem) >= res
        node_busy, node_free_mem, tol = self.pool.node_busy, self.pool.node_free_mem, MEM_TOL
        total = 0.0
        for node, size in enumerate(self.node_sizes):
            free = size - node_busy[node]
            if free:
                count = (node_free_mem[node] + tol) // mem
                if count > free:
                    count = free
                if count > 0.0:
                    total += count
                    if total >= res:
                        return True
        return self.tasks(mem) >= res  # keeps the size (and says no)

    def compact(self) -> None:
        """Bring the sizes asked since the last compaction up to date, drop the others, and
        empty the log (which stops listening when no size is left)."""
        log, pool = self.log, self.pool
        kept: dict[float, _FloorCounts] = {}
        for mem, counts in self.sizes.items():
            if counts.asked and counts.resets == log.resets:
                counts.catch_up(pool, log, self.node_sizes)
                counts.asked = False
                kept[mem] = counts
        self.sizes = kept
        log.base += len(log.nodes)
        log.nodes.clear()
        if not kept and self.listening:
            listeners = pool.node_change_listeners
            listeners[:] = [s for s in listeners if s is not log]
            self.listening = False
