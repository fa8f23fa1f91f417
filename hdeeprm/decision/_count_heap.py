"""``high_cores``'s ordering: a heap of plain ints, one per processor.

``high_cores`` ranks processors by ``(-free cores, lowest free core)``. Both are small ints,
and the lowest free core names its processor, so an entry packs the pair into one int,
``(most cores - free cores) * number of cores + lowest free core``, which orders as the pair
does. The C heap then compares ints, not 4-tuples (one comparison instead of three calls
each, and no tuple to build per entry); it is the same lazy heap as the other changing-key
policies' (:class:`hdeeprm.decision.resource_manager._ProcessorHeap`): entries are lower
bounds of their processor's current value (taking cores only lowers its free cores and
raises its lowest free core), checked against the pool when they reach the top and re-sifted
when too low; a release marks its processors, which get a fresh entry before the next pick
when their live one no longer bounds them. A processor's live entry is the one ``live``
holds (equal ints are the same entry, so no version is needed: an equal stale copy is either
re-sifted or dropped as stale once the first copy moved).
"""

from __future__ import annotations

import heapq

from hdeeprm.decision._pick import PickByAllocating
from hdeeprm.decision.resources import MEM_TOL, CorePool


class CoreCountHeap(PickByAllocating):
    """Processors with a free core, ordered by ``(-free cores, lowest free core)`` as packed
    ints, lazily invalidated; picks what ``high_cores``' processor ranking picks."""

    __slots__ = ("pool", "kind", "dirty", "heap", "limit", "live", "scale", "most")

    def __init__(self, pool: CorePool) -> None:
        self.pool = pool
        self.kind = "high_cores"
        #: Processors released since the last refresh.
        self.dirty: set[int] = set()
        pool.gain_listeners.append(self.dirty)
        #: ``value = (most - free cores) * scale + lowest free core``: ``scale`` exceeds every
        #: core id and ``most`` every processor's core count, so values order as the pairs.
        self.scale = max(pool.nb_cores, 1)
        self.most = max((len(cores) for cores in pool.proc_cores), default=0)
        #: Per processor: its live entry (-1: none, the processor was found full).
        self.live: list[int] = [-1] * len(pool.proc_cores)
        self.heap: list[int] = []
        #: Rebuilt when the heap holds this many entries (stale ones included).
        self.limit = 16 * len(pool.proc_cores) + 64
        self.rebuild()

    def value(self, proc: int) -> int:
        """The packed ``(-free cores, lowest free core)`` of ``proc`` now (it has a free core)."""
        members = self.pool.proc_free[proc]
        return (self.most - len(members)) * self.scale + members[0]

    def rebuild(self) -> None:
        free = self.pool.proc_free
        most, scale = self.most, self.scale
        self.live = live = [-1] * len(free)
        heap: list[int] = []
        for p, members in enumerate(free):
            if members:
                live[p] = entry = (most - len(members)) * scale + members[0]
                heap.append(entry)
        heapq.heapify(heap)
        self.heap = heap
        self.dirty.clear()

    def refresh(self) -> None:
        """Push a current entry for every processor released since the last refresh that
        has a free core and whose live entry is above its current value (its older entry
        becomes stale)."""
        dirty = self.dirty
        if not dirty:
            return
        if len(self.heap) + len(dirty) > self.limit:
            self.rebuild()
            return
        heap, free, live = self.heap, self.pool.proc_free, self.live
        most, scale = self.most, self.scale
        push = heapq.heappush
        for p in dirty:
            members = free[p]
            if members:
                value = (most - len(members)) * scale + members[0]
                if live[p] > value or live[p] < 0:
                    live[p] = value
                    push(heap, value)
        dirty.clear()

    def allocate(
        self, job_id: str | None, res: int, mem: float, mem_bw: float, taken: list[int]
    ) -> int | None:
        """Take cores for up to ``res`` tasks of ``job_id`` as one pick at a time would
        (appended to ``taken``, in pick order), each pick taking the run of cores its
        processor provably wins in a row. With ``job_id`` ``None``: take nothing, return the
        best processor (``None`` if none has a free core and the memory).

        As ``_ProcessorHeap.allocate``: the top entry, once it equals its processor's current
        value, is the best processor; those ranked before it whose node lacks the memory are
        set aside for the pick and pushed back. Its run: the smaller child of the top bounds
        every other entry, and taking the chosen processor's cores changes no other value, so
        it wins while its node has the memory and its value after the cores taken stays below
        that bound."""
        if self.dirty:
            self.refresh()
        pool, heap, live = self.pool, self.heap, self.live
        free, node_free_mem, proc_node = pool.proc_free, pool.node_free_mem, pool.proc_node
        core_proc = pool.core_proc
        most, scale = self.most, self.scale
        take, take_run = pool.take, pool.take_run
        need = mem - MEM_TOL
        pop, push, heapreplace = heapq.heappop, heapq.heappush, heapq.heapreplace
        while len(taken) < res:
            aside: list[int] | None = None  # set aside: valid, not for this job's memory
            while heap:
                entry = heap[0]
                p = core_proc[entry % scale]
                if live[p] != entry:
                    pop(heap)  # stale: a fresher entry exists (or none: the processor was full)
                    continue
                members = free[p]
                if not members:
                    pop(heap)  # the processor is full: its live entry is dropped
                    live[p] = -1
                    continue
                spare = node_free_mem[proc_node[p]]
                if spare < need:
                    if aside is None:
                        aside = [pop(heap)]  # valid, but not for this job: keep it
                    else:
                        aside.append(pop(heap))
                    continue
                n = len(members)
                value = (most - n) * scale + members[0]
                if value != entry:  # cores were taken: its true place
                    live[p] = value
                    heapreplace(heap, value)
                    continue
                break
            else:  # no processor has a free core and the memory
                if aside is not None:
                    for entry in aside:
                        push(heap, entry)
                return None
            if job_id is None:
                if aside is not None:
                    for entry in aside:
                        push(heap, entry)
                return p
            # p is the best processor; its run
            count = res - len(taken)
            if n < count:
                count = n
            run = 1
            if count > 1:
                size = len(heap)
                bound = -1  # none: no other entry
                if size > 2:
                    bound = heap[1] if heap[1] < heap[2] else heap[2]
                elif size == 2:
                    bound = heap[1]
                # after ``run`` takes: n - run free cores, members[run] the lowest
                step = (most - n + 1) * scale
                if bound < 0 or step + members[1] < bound:
                    left = spare
                    while run < count:
                        left -= mem  # the node's free memory after ``run`` takes
                        if left < need:
                            break
                        if bound >= 0 and not step + members[run] < bound:
                            break
                        run += 1
                        step += scale
            if aside is not None:
                for entry in aside:
                    push(heap, entry)
            if run == 1:  # the common case on a levelling policy: the cheaper call
                core = members[0]
                take(core, job_id, mem, mem_bw)
                taken.append(core)
            else:
                taken.extend(take_run(p, run, job_id, mem, mem_bw))
            if self.dirty:  # only a negative memory could (never job records)
                self.refresh()
                heap, live = self.heap, self.live
        return None
