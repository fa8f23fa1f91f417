"""``high_mem``'s ordering: a heap of *nodes*, not of processors.

``high_mem`` ranks processors by ``(-free memory of their node, lowest free core)``. Every
processor of a node has the same key (the node's free memory, the same float), so among them
the one with the lowest free core wins, and that core is the node's lowest free core. The best
processor is therefore the one holding the lowest free core of the best node by ``(-free
memory, lowest free core)``: one entry per node gives exactly the same picks as one per
processor, with fewer entries (Gaia: 153 nodes against 342 processors) and without the
node-mates' entries that every take from a node left too low (each re-sifted when it surfaced).

Entries are *lower bounds* of their node's current ``(key, lowest free core)``, as in the
processor heaps of :mod:`hdeeprm.decision.resource_manager`: taking cores only lowers a node's
free memory and raises its lowest free core, so it tells the heap nothing; the top entry is
checked against the pool and re-sifted when too low. A node can only gain (memory or a lower
free core) when one of its cores is released, so the heap hears the processors released (the
pool's ``gain_listeners``) and refreshes their nodes before the next pick.
"""

from __future__ import annotations

import heapq

from hdeeprm.decision._pick import PickByAllocating, child_bound
from hdeeprm.decision.resources import MEM_TOL, CorePool

#: Heap entry: (-free memory of the node, its lowest free core id, entry version, node id).
_Entry = tuple[float, int, int, int]


class NodeHeap(PickByAllocating):
    """Nodes with a free core, ordered by ``(-free memory, lowest free core)``, lazily
    invalidated; picks what ``high_mem``'s processor ranking picks (module docstring)."""

    __slots__ = ("pool", "kind", "dirty", "heap", "limit", "version", "live", "procs", "low")

    def __init__(self, pool: CorePool) -> None:
        self.pool = pool
        self.kind = "high_mem"
        #: Processors released since the last refresh (the pool speaks processors); their
        #: nodes are refreshed. A node's memory only grows through a release of one of its
        #: cores, so the processor listeners are enough.
        self.dirty: set[int] = set()
        pool.gain_listeners.append(self.dirty)
        cores = pool.proc_cores
        #: Per node: its processors with cores, by lowest core id, and per processor that
        #: id, so that the node's lowest free core is found without reading every processor
        #: when their cores do not interleave (the usual layout: one core range each).
        self.procs: list[list[int]] = [
            sorted((q for q in procs if cores[q]), key=lambda q: cores[q][0])
            for procs in pool.node_procs
        ]
        self.low: list[int] = [members[0] if members else -1 for members in cores]
        nb_nodes = len(pool.node_procs)
        self.version = [0] * nb_nodes
        self.live: list[_Entry | None] = [None] * nb_nodes
        self.heap: list[_Entry] = []
        #: Rebuilt when the heap holds this many entries (stale ones included).
        self.limit = 16 * nb_nodes + 64
        self.rebuild()

    def _first(self, node: int) -> tuple[int, int]:
        """The node's lowest free core and its processor (``-1, -1``: the node is full)."""
        free, low = self.pool.proc_free, self.low
        first = proc = -1
        for q in self.procs[node]:
            if first >= 0 and low[q] > first:
                break  # this processor's cores (and the next ones') are all above it
            members = free[q]
            if members and (first < 0 or members[0] < first):
                first, proc = members[0], q
        return first, proc

    def rebuild(self) -> None:
        node_free_mem = self.pool.node_free_mem
        self.version = version = [v + 1 for v in self.version]
        live: list[_Entry | None] = [None] * len(version)
        self.live = live
        heap: list[_Entry] = []
        for node in range(len(version)):
            first, _ = self._first(node)
            if first >= 0:
                entry = live[node] = (-node_free_mem[node], first, version[node], node)
                heap.append(entry)
        heapq.heapify(heap)
        self.heap = heap
        self.dirty.clear()

    def refresh(self) -> None:
        """Push a current entry for every node of a processor released since the last
        refresh whose live entry no longer bounds its ``(key, lowest free core)`` from
        below (older entries become stale; a full node's are dropped as they surface)."""
        dirty = self.dirty
        if not dirty:
            return
        proc_node = self.pool.proc_node
        nodes = {proc_node[p] for p in dirty}
        dirty.clear()
        if len(self.heap) + len(nodes) > self.limit:
            self.rebuild()
            return
        heap, version, live = self.heap, self.version, self.live
        node_free_mem, free, low, procs_of = (
            self.pool.node_free_mem,
            self.pool.proc_free,
            self.low,
            self.procs,
        )
        push = heapq.heappush
        for node in nodes:
            first = -1  # the node's lowest free core (_first, inlined: one call per node less)
            for q in procs_of[node]:
                if first >= 0 and low[q] > first:
                    break
                members = free[q]
                if members and (first < 0 or members[0] < first):
                    first = members[0]
            if first < 0:
                continue
            key = -node_free_mem[node]
            entry = live[node]
            if entry is not None and (entry[0] < key or (entry[0] == key and entry[1] <= first)):
                continue  # still a lower bound
            v = version[node] = version[node] + 1
            entry = live[node] = (key, first, v, node)
            push(heap, entry)

    def allocate(
        self, job_id: str | None, res: int, mem: float, mem_bw: float, taken: list[int]
    ) -> int | None:
        """Take cores for up to ``res`` tasks of ``job_id`` as one pick at a time would
        (appended to ``taken``, in pick order). With ``job_id`` ``None``: take nothing,
        return the best processor (``None`` if no node has a free core and the memory).

        The best node: the top entry once it matches its node's current figures (re-sifted
        when it was too low). Its memory is then the most any node with a free core has, so
        when it lacks ``mem`` no node has it.

        Its run: every other entry lies under one of the top's two children, so the smaller
        child bounds every other node's ``(key, lowest free core)`` from below (stale entries
        only lower it), and taking the best node's cores changes no other node. The node
        keeps winning while it has the memory and its ``(key, next free core)`` after the
        cores taken (its free memory replayed in :meth:`CorePool.take`'s float order) ranks
        strictly before that bound. Within the node its cores go in ascending id order: a
        processor's run stops at a node-mate's lower free core, and the mate's run follows
        under the same test."""
        if self.dirty:
            self.refresh()
        pool, heap, version, live = self.pool, self.heap, self.version, self.live
        free, node_free_mem = pool.proc_free, pool.node_free_mem
        procs_of, low = self.procs, self.low
        take, take_run = pool.take, pool.take_run
        need = mem - MEM_TOL
        pop, heapreplace = heapq.heappop, heapq.heapreplace
        while len(taken) < res:
            while heap:
                entry = heap[0]
                node = entry[3]
                if entry[2] != version[node]:
                    pop(heap)  # stale: a fresher entry exists
                    continue
                # the node's lowest free core and its processor (_first, inlined)
                first = proc = -1
                for q in procs_of[node]:
                    if first >= 0 and low[q] > first:
                        break
                    members = free[q]
                    if members and (first < 0 or members[0] < first):
                        first, proc = members[0], q
                if first < 0:
                    pop(heap)  # the node is full: its live entry is dropped
                    live[node] = None
                    continue
                spare = node_free_mem[node]
                if -spare != entry[0] or first != entry[1]:  # cores were taken: its true place
                    entry = live[node] = (-spare, first, entry[2], node)
                    heapreplace(heap, entry)
                    continue
                break
            else:  # no node has a free core
                return None
            if spare < need:  # the node with the most memory lacks it: so do all others
                return None
            if job_id is None:
                return proc
            bound = child_bound(heap)
            left = spare
            while True:  # runs of the node's processors, in ascending core order
                members = free[proc]
                mates_first = -1  # the lowest free core of the node's other processors
                for q in procs_of[node]:
                    if q != proc:
                        others = free[q]
                        if others and (mates_first < 0 or others[0] < mates_first):
                            mates_first = others[0]
                count = res - len(taken)
                if len(members) < count:
                    count = len(members)
                run = 1
                go_on = True  # whether the node's next core (a mate's) may still be proven
                while run < count:
                    left -= mem  # the node's free memory after ``run`` takes
                    if left < need:
                        go_on = False
                        break
                    core = members[run]
                    if 0 <= mates_first < core:
                        break  # a node-mate's lower core is next
                    if bound is not None and not (-left, core) < bound:
                        go_on = False
                        break
                    run += 1
                if run == 1:
                    core = members[0]
                    take(core, job_id, mem, mem_bw)
                    taken.append(core)
                else:
                    taken.extend(take_run(proc, run, job_id, mem, mem_bw))
                if not go_on or mates_first < 0 or len(taken) >= res:
                    break
                # The mate's lowest free core is the node's next one: proven when the node,
                # after these takes, still has the memory and ranks before the bound.
                left = node_free_mem[node]
                if left < need or (bound is not None and not (-left, mates_first) < bound):
                    break
                proc = pool.core_proc[mates_first]
            if self.dirty:  # only a negative memory could (never job records)
                self.refresh()
                heap, version, live = self.heap, self.version, self.live
        return None
