"""What the core pool, the core policies and the fit counts compute, written plainly.

:class:`~hdeeprm.decision.resources.CorePool`,
:class:`~hdeeprm.decision.resource_manager.ResourceManager` and the fit counts of
:mod:`hdeeprm.decision.fit` run millions of times on a whole trace, so they keep lazy heaps,
trees, change logs and running sums, and take whole runs of cores at once. This module states
the same public behaviour without any of that: every question is answered by a scan of the
platform, every pick is one core, every settle recomputes its processors from scratch. It is
slow and only meant to be read and to check the fast code against (the property tests compare
the two bit for bit after every step).

The contract, in short:

* **Take** (one core to one task): the core leaves its processor's free list and the free-core
  list, its processor's demand gains the task's bandwidth (a running sum, ``demand +=
  mem_bw``), its node's free memory loses the task's memory (``free -= mem``).
* **Give** (one core back): the core is appended to the free-core list and inserted in its
  processor's sorted free list; the processor's demand loses the core's bandwidth (running);
  its node's free memory gains the core's memory, or is the node's exact capacity once none of
  its cores is busy.
* **Settle** (after every core taken or freed since the last settle, once the job is placed,
  rolled back or ended): each touched processor's demand is summed again from its cores'
  bandwidths **in core order, starting from 0.0** (``((0.0 + bw[c0]) + bw[c1]) + ...``, a
  free core's bandwidth being 0.0), so rounding never accumulates; it is over-subscribed when
  the demand exceeds its bandwidth by more than :data:`~hdeeprm.decision.resources.BW_REL_TOL`
  relatively; its busy cores are then in P1 if over-subscribed else P0, its free cores in P2
  if a core is busy else P3. Processors are settled in ascending id order; an episode of
  over-subscription opens or closes, at the settle's time, when a processor's state changes.
* **Release** (a job ends, or an attempt is rolled back): a give per core, in the order given,
  then a settle of those cores.
* **Drain**: every core whose P-state differs from the one last drained, grouped by P-state
  (P0 to P3), ascending core ids in each group.
* **Allocation** by a core policy: one core per task, picked one at a time, each pick
  re-evaluating the policy on the current state (running demands included): the eligible
  cores are the free ones whose node has at least ``mem - MEM_TOL`` MB free; every policy but
  ``random`` ranks the processors with an eligible core by ``(key, lowest free core id)`` and
  takes the lowest free core of the first. When a task finds no core, the cores taken are
  released in pick order (a rolled-back attempt) and the job is refused.

What a settle demands of its caller (what the workload and resource managers always do): the
cores it is given are every core taken or freed since the previous settle. The fast pool only
updates the cores it is given and the processors' states, relying on the others being settled.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from hdeeprm.decision._random import UniformStream
from hdeeprm.decision.fit import _SLACK, MAX_TRACKED
from hdeeprm.decision.resources import BW_REL_TOL, MEM_TOL
from hdeeprm.platform.hierarchy import (
    INITIAL_PSTATE,
    P0,
    P1,
    P2,
    P3,
    PSTATE_POWER_FRACTION,
    PSTATE_SPEED_FRACTION,
    Platform,
)
from hdeeprm.simulation.events import HostIds, SetResourceState


class ReferencePool:
    """The core pool's state and operations, plainly (see the module docstring).

    The attributes have the names and meaning of
    :class:`~hdeeprm.decision.resources.CorePool`'s, so both can be compared directly.
    Over-subscription episodes are a plain list of ``[processor, start, end or None]``.
    """

    def __init__(self, platform: Platform, *, free_order: bool = True) -> None:
        self.platform = platform
        self.nb_cores = len(platform.cores)
        self.core_proc = [core.processor.id for core in platform.cores]
        self.core_node = [core.processor.node.id for core in platform.cores]
        self.core_peak = [core.peak_gflops for core in platform.cores]
        self.core_power = [core.power for core in platform.cores]
        self.proc_cores = [[core.id for core in proc.cores] for proc in platform.processors]
        self.proc_node = [proc.node.id for proc in platform.processors]
        self.proc_mem_bw = [float(proc.mem_bw) for proc in platform.processors]
        self.node_procs = [[proc.id for proc in node.processors] for node in platform.nodes]
        self.node_cores = [
            [core for proc in self.node_procs[node.id] for core in self.proc_cores[proc]]
            for node in platform.nodes
        ]
        self.node_capacity = [node.memory_mb for node in platform.nodes]
        #: Whether the free-core list is kept from the start; else it is first built, in
        #: ascending core order, when read (the fast pool's ``free_order=False``).
        self.free_order = free_order
        self.reset()

    def reset(self) -> None:
        """Every core free and in the initial P-state (P3), no demand, every node's memory
        free, no episode."""
        self.pstate = [INITIAL_PSTATE] * self.nb_cores
        #: The P-state of each core as last drained.
        self.emitted = [INITIAL_PSTATE] * self.nb_cores
        self.core_job: list[str | None] = [None] * self.nb_cores
        self.core_mem = [0.0] * self.nb_cores
        self.core_bw = [0.0] * self.nb_cores
        self.proc_demand = [0.0] * len(self.proc_cores)
        self.node_free_mem = list(self.node_capacity)
        self.over = [False] * len(self.proc_cores)
        self.episodes: list[list] = []
        self._free_cores: list[int] | None = list(range(self.nb_cores)) if self.free_order else None

    # --- what is derived from the per-core state ---------------------------------------
    @property
    def proc_free(self) -> list[list[int]]:
        """Each processor's free cores, ascending."""
        return [[c for c in cores if self.core_job[c] is None] for cores in self.proc_cores]

    @property
    def proc_busy(self) -> list[int]:
        return [sum(self.core_job[c] is not None for c in cores) for cores in self.proc_cores]

    @property
    def node_busy(self) -> list[int]:
        return [sum(self.core_job[c] is not None for c in cores) for cores in self.node_cores]

    @property
    def free_count(self) -> int:
        return sum(job is None for job in self.core_job)

    @property
    def free_cores(self) -> list[int]:
        """Every free core in the order the ``random`` policy draws from: appended when given
        back; a core taken is replaced in its slot by the last one of the list."""
        if self._free_cores is None:
            self._free_cores = [c for c in range(self.nb_cores) if self.core_job[c] is None]
            self.free_order = True  # kept from now on, across resets too
        return self._free_cores

    @property
    def free_index(self) -> list[int]:
        """Each core's position in :attr:`free_cores` (-1: busy)."""
        index = [-1] * self.nb_cores
        for position, core in enumerate(self.free_cores):
            index[core] = position
        return index

    @property
    def over_subscribed(self) -> list[int]:
        return [proc for proc, over in enumerate(self.over) if over]

    def speeds(self) -> list[float]:
        """Every core's speed (GFLOPS): peak x its P-state's speed fraction."""
        return [
            peak * PSTATE_SPEED_FRACTION[state] for peak, state in zip(self.core_peak, self.pstate)
        ]

    def powers(self) -> list[float]:
        """Every core's power (W): its power x its P-state's power fraction."""
        return [
            power * PSTATE_POWER_FRACTION[state]
            for power, state in zip(self.core_power, self.pstate)
        ]

    def core_order_sum(self, proc: int) -> float:
        """``proc``'s demand as a settle sums it: from 0.0, each core's bandwidth in core
        order (a free core's is 0.0)."""
        demand = 0.0
        for core in self.proc_cores[proc]:
            demand += self.core_bw[core]
        return demand

    # --- operations --------------------------------------------------------------------
    def take(self, core: int, job_id: str, mem: float, mem_bw: float) -> None:
        """Give free ``core`` to a task of ``job_id`` (capacities only: no settle)."""
        if self._free_cores is not None:
            free = self._free_cores
            slot = free.index(core)
            last = free.pop()
            if last != core:
                free[slot] = last
        self.core_job[core] = job_id
        self.core_mem[core] = mem
        self.core_bw[core] = mem_bw
        self.proc_demand[self.core_proc[core]] += mem_bw
        self.node_free_mem[self.core_node[core]] -= mem

    def take_run(self, proc: int, count: int, job_id: str, mem: float, mem_bw: float) -> list[int]:
        """:meth:`take` of the ``count`` lowest free cores of ``proc``, ascending."""
        cores = self.proc_free[proc][:count]
        for core in cores:
            self.take(core, job_id, mem, mem_bw)
        return cores

    def give(self, core: int) -> None:
        """Free ``core`` (capacities only: no settle)."""
        if self._free_cores is not None:
            self._free_cores.append(core)
        proc, node = self.core_proc[core], self.core_node[core]
        self.core_job[core] = None
        self.proc_demand[proc] -= self.core_bw[core]
        if any(self.core_job[c] is not None for c in self.node_cores[node]):
            self.node_free_mem[node] += self.core_mem[core]
        else:
            self.node_free_mem[node] = self.node_capacity[node]
        self.core_mem[core] = 0.0
        self.core_bw[core] = 0.0

    def settle(self, cores: Iterable[int], now: float) -> None:
        """Recompute the demand, over-subscription and P-states of the processors of
        ``cores`` (every core taken or freed since the last settle), in ascending order."""
        for proc in sorted({self.core_proc[core] for core in cores}):
            demand = self.core_order_sum(proc)
            self.proc_demand[proc] = demand
            limit = self.proc_mem_bw[proc] + BW_REL_TOL * max(self.proc_mem_bw[proc], 1.0)
            over = demand > limit
            busy = [c for c in self.proc_cores[proc] if self.core_job[c] is not None]
            running = P1 if over else P0
            idle = P2 if busy else P3
            for core in self.proc_cores[proc]:
                self.pstate[core] = running if self.core_job[core] is not None else idle
            if over != self.over[proc]:
                self.over[proc] = over
                if over:
                    self.episodes.append([proc, now, None])
                else:
                    for episode in self.episodes:
                        if episode[0] == proc and episode[2] is None:
                            episode[2] = now

    def settle_taken(self, taken: dict[int, list[int]], now: float) -> None:
        """:meth:`settle` of cores grouped by processor."""
        self.settle([core for cores in taken.values() for core in cores], now)

    def release(self, cores: Iterable[int], now: float) -> None:
        """Free a job's cores: :meth:`give` each, in the order given, then :meth:`settle`."""
        cores = list(cores)
        for core in cores:
            self.give(core)
        self.settle(cores, now)

    def drain(self) -> list[SetResourceState]:
        """The cores whose P-state changed since the last drain, one decision per P-state
        (ascending), ascending core ids in each."""
        groups: list[list[int]] = [[], [], [], []]
        for core in range(self.nb_cores):
            if self.pstate[core] != self.emitted[core]:
                self.emitted[core] = self.pstate[core]
                groups[self.pstate[core]].append(core)
        return [
            SetResourceState(HostIds(cores), state) for state, cores in enumerate(groups) if cores
        ]

    def close_episodes(self, now: float) -> None:
        """End every open episode at ``now`` (the end of the simulation)."""
        for episode in self.episodes:
            if episode[2] is None:
                episode[2] = now


def fit_index_tasks(pool: ReferencePool, mem: float) -> int:
    """Tasks of ``mem`` MB the nodes can take now, as the resource manager's fit index counts
    them: on each node, the tasks ``j = 0, 1, ...`` for which ``free memory - j x mem >= mem -
    MEM_TOL``, solved in closed form (``int(spare / mem + 1e-9) + 1`` with ``spare = free
    memory - (mem - MEM_TOL)``), at most its free cores."""
    total = 0
    busy = pool.node_busy
    for node, cores in enumerate(pool.node_cores):
        free = len(cores) - busy[node]
        spare = pool.node_free_mem[node] - (mem - MEM_TOL)
        if not free or spare < 0.0:
            continue
        if mem <= 0.0:
            total += free
        else:
            total += min(free, int(spare / mem + _SLACK) + 1)
    return total


def floor_fit_tasks(pool: ReferencePool, mem: float) -> int:
    """Tasks of ``mem`` MB (``> 0``) the nodes can take now, as the workload manager's
    ``fits_now`` counts them (:class:`~hdeeprm.decision.fit.NodeFloorFit`): on each node with
    a free core, ``min(free cores, (free memory + MEM_TOL) // mem)``, never below 0."""
    total = 0
    busy = pool.node_busy
    for node, cores in enumerate(pool.node_cores):
        free = len(cores) - busy[node]
        if free:
            total += max(0, min(free, int((pool.node_free_mem[node] + MEM_TOL) // mem)))
    return total


class ReferenceManager:
    """The core policies' allocations on a :class:`ReferencePool`, one pick at a time.

    Keys (smaller ranks first; ties broken by the processor's lowest free core id):

    * ``high_gflops``: minus the peak GFLOPS of the processor's first core;
    * ``low_power``: the power of the processor's first core;
    * ``high_cores``: minus the processor's free cores;
    * ``high_mem``: minus its node's free memory (MB);
    * ``high_mem_bw``: its demand (a running sum during an allocation) minus its bandwidth;
    * ``random``: no key; a uniform draw (:class:`~hdeeprm.decision._random.UniformStream`)
      among the free cores (:attr:`ReferencePool.free_cores`), up to 8 times until the core
      drawn is eligible; then one draw weighted by each eligible node's free cores (nodes in
      id order), the core being that many places into the node's free cores (processor by
      processor, each ascending).

    Refusals without an attempt: a job wanting more cores than are free; and, for every
    policy but ``random``, a job whose task size is *watched* (an attempt with it failed, the
    :data:`~hdeeprm.decision.fit.MAX_TRACKED` most recently asked sizes are kept) and for which
    :func:`fit_index_tasks` is below its task count. A refusal changes nothing; a failed
    attempt takes and releases cores (which may round the nodes' free memory).
    """

    def __init__(self, pool: ReferencePool, rng: np.random.Generator) -> None:
        self.pool = pool
        self.uniform = UniformStream(rng)
        #: Watched task sizes, least recently asked first.
        self.watched: list[float] = []
        self.nb_attempts = 0
        self.nb_refused = 0

    def reset(self) -> None:
        self.watched.clear()
        self.nb_attempts = 0
        self.nb_refused = 0

    def _key(self, policy: str, proc: int) -> float:
        pool = self.pool
        if policy == "high_gflops":
            return -pool.core_peak[pool.proc_cores[proc][0]]
        if policy == "low_power":
            return pool.core_power[pool.proc_cores[proc][0]]
        if policy == "high_cores":
            return -len(pool.proc_free[proc])
        if policy == "high_mem":
            return -pool.node_free_mem[pool.proc_node[proc]]
        if policy == "high_mem_bw":
            return pool.proc_demand[proc] - pool.proc_mem_bw[proc]
        raise ValueError(f"unknown core policy {policy!r}")

    def pick(self, policy: str, mem: float) -> int | None:
        """The core ``policy`` chooses now for a task of ``mem`` MB, or ``None``."""
        pool = self.pool
        if policy == "random":
            return self._pick_random(mem)
        best: tuple[float, int] | None = None
        for proc, free in enumerate(pool.proc_free):
            if free and pool.node_free_mem[pool.proc_node[proc]] >= mem - MEM_TOL:
                rank = (self._key(policy, proc), free[0])
                if best is None or rank < best:
                    best = rank
        return None if best is None else best[1]

    def _pick_random(self, mem: float) -> int | None:
        pool = self.pool
        free_cores = pool.free_cores
        if not free_cores:
            return None
        for _ in range(8):
            core = free_cores[self.uniform.below(len(free_cores))]
            if pool.node_free_mem[pool.core_node[core]] >= mem - MEM_TOL:
                return core
        busy = pool.node_busy
        eligible = [
            (node, len(cores) - busy[node])
            for node, cores in enumerate(pool.node_cores)
            if len(cores) > busy[node] and pool.node_free_mem[node] >= mem - MEM_TOL
        ]
        if not eligible:
            return None
        r = self.uniform.below(sum(free for _, free in eligible))
        chosen = eligible[-1][0]
        for node, free in eligible:
            if r < free:
                chosen = node
                break
            r -= free
        node_free = [c for proc in pool.node_procs[chosen] for c in pool.proc_free[proc]]
        return node_free[r]

    def fits(self, res: int, mem: float) -> bool:
        """The fit index's answer: no when more cores than are free are asked for; for a
        watched size (then the most recently asked), whether :func:`fit_index_tasks`
        reaches ``res``; yes otherwise."""
        if res > self.pool.free_count:
            return False
        if mem not in self.watched:
            return True
        self.watched.remove(mem)
        self.watched.append(mem)
        return fit_index_tasks(self.pool, mem) >= res

    def _watch(self, mem: float) -> None:
        if mem in self.watched:
            return
        if len(self.watched) >= MAX_TRACKED:
            del self.watched[0]
        self.watched.append(mem)

    def allocate(
        self, job_id: str, res: int, mem: float, mem_bw: float, policy: str, now: float
    ) -> list[int] | None:
        """Cores for all ``res`` tasks of a job in pick order, the pool then settled; or
        ``None`` (refused, or the attempt rolled back)."""
        pool = self.pool
        if res > pool.free_count:
            return None
        if policy != "random" and not self.fits(res, mem):
            self.nb_refused += 1
            return None
        self.nb_attempts += 1
        taken: list[int] = []
        for _ in range(res):
            core = self.pick(policy, mem)
            if core is None:
                pool.release(taken, now)
                if policy != "random":
                    self._watch(mem)
                return None
            pool.take(core, job_id, mem, mem_bw)
            taken.append(core)
        pool.settle(taken, now)
        return taken


def episodes_of(record: Iterable[list]) -> list[tuple[int, str, str | None]]:
    """Episodes ``[processor, start, end or None]`` with times as ``float.hex`` (bit for bit)."""
    return [
        (int(proc), float(start).hex(), None if end is None else float(end).hex())
        for proc, start, end in record
    ]


__all__ = [
    "ReferenceManager",
    "ReferencePool",
    "episodes_of",
    "fit_index_tasks",
    "floor_fit_tasks",
]
