"""The core pool: the decision system's dynamic view of the platform.

The static hierarchy (:mod:`hdeeprm.platform.hierarchy`) is flattened into per-core,
per-processor and per-node lists indexed by id, because the resource manager reads these values
millions of times on a whole trace and list indexing is the cheapest access Python offers.

State kept here (SPEC section 2, thesis 3.1.2):

* per core: its P-state, the job it serves, the memory (MB) and bandwidth (GB/s) of its task;
* per processor: its free cores (sorted ids), busy cores and memory bandwidth demand;
* per node: its free memory (MB) and busy cores.

Allocation happens in two steps so the resource manager can re-evaluate its policy after every
core it picks: :meth:`CorePool.take` moves one core to a job (capacities change at once), and
:meth:`CorePool.settle` recomputes the bandwidth demand and the P-states of the touched
processors once the whole job is placed (or rolled back). P-state changes accumulate until
:meth:`CorePool.drain` turns them into the net
:class:`~hdeeprm.simulation.events.SetResourceState` decisions, one per target state, so a core
released and re-allocated at one instant causes no spurious switch.
"""

from __future__ import annotations

import logging
from bisect import insort
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from hdeeprm import _native
from hdeeprm.decision.oversubscription import _OPEN, OverSubscriptionRecord
from hdeeprm.logs import WarningTally
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

if TYPE_CHECKING:
    from hdeeprm.decision.change_log import ChangeLog

INSIGHTS = logging.getLogger("hdeeprm.insights")

#: Relative tolerance when comparing a bandwidth demand with a processor's capacity, so a sum
#: such as 0.1 + 0.2 does not over-subscribe a 0.3 GB/s processor by rounding alone.
BW_REL_TOL = 1e-9
#: Absolute tolerance (MB) when checking that a task's memory fits in a node's free memory.
MEM_TOL = 1e-6


#: The methods the compiled kernel provides (its ``Pool`` type), bound per pool.
_NATIVE_METHODS = ("take", "take_run", "settle", "settle_taken", "release", "drain")
_KERNELS = "hdeeprm.decision._pool_kernels"


def _kernel_module(native: bool | None) -> Any:
    """The compiled pool kernels for ``CorePool(native=...)``: ``None`` when not used."""
    return _native.choose(_KERNELS, native, "CorePool")


def _core_order_sum(members: list[int], core_bw: list[float]) -> float:
    """A processor's bandwidth demand: its cores' bandwidths summed in core order from 0.0
    (a free core's is 0.0, which leaves a sum unchanged, so no core is tested for being
    busy)."""
    demand = 0.0
    for core in members:
        demand += core_bw[core]
    return demand


class _Layout:
    """What a platform fixes for every core pool built on it: the pool's static views (ids
    as in :class:`CorePool`), computed once per platform (``Platform.derived``) so that an
    environment's reset builds none of them again. Shared between pools: never written."""

    def __init__(self, platform: Platform) -> None:
        cores, procs, nodes = platform.cores, platform.processors, platform.nodes
        self.nb_cores = len(cores)
        self.core_proc: list[int] = [core.processor.id for core in cores]
        self.core_node: list[int] = [core.processor.node.id for core in cores]
        self.core_peak: list[float] = [core.peak_gflops for core in cores]
        self.core_power: list[float] = [core.power for core in cores]
        self.proc_cores: list[list[int]] = [[core.id for core in p.cores] for p in procs]
        self.proc_node: list[int] = [p.node.id for p in procs]
        self.proc_mem_bw: list[float] = [float(p.mem_bw) for p in procs]
        self.node_procs: list[list[int]] = [[p.id for p in n.processors] for n in nodes]
        self.node_cores: list[list[int]] = [
            [c for p in n.processors for c in self.proc_cores[p.id]] for n in nodes
        ]
        self.node_capacity: list[float] = [n.memory_mb for n in nodes]
        #: Demand above which a processor is over-subscribed (capacity + relative tolerance).
        self.bw_limit: list[float] = [bw + BW_REL_TOL * max(bw, 1.0) for bw in self.proc_mem_bw]
        self.peak_arr = np.asarray(self.core_peak, dtype=float)
        self.power_arr = np.asarray(self.core_power, dtype=float)
        self.peak_arr.flags.writeable = False
        self.power_arr.flags.writeable = False
        #: Every processor has 4 cores (RICC): the settles sum demands unrolled. A flag, not a
        #: ``len`` test per processor, which cost other platforms (Gaia: +0.6% instructions).
        self.quad = all(len(cores) == 4 for cores in self.proc_cores)


class CorePool:
    """Dynamic resource state built from a :class:`~hdeeprm.platform.hierarchy.Platform`.

    Ids are the hierarchy's (``platform.cores[i].id == i``, likewise processors and nodes), and
    core ids are Batsim resource ids.
    """

    def __init__(
        self,
        platform: Platform,
        *,
        log_detail: bool = False,
        free_order: bool = True,
        native: bool | None = None,
    ) -> None:
        self.platform = platform
        #: The compiled kernel module (:mod:`hdeeprm._native`): ``native=None`` uses it when it
        #: is built (and ``HDEEPRM_PURE_PYTHON`` unset), ``False`` never, ``True`` requires it.
        self._native_request = native
        self._kernels = _kernel_module(native)
        #: The compiled takes, releases, settles and drains bound to this pool's lists (``None``:
        #: the Python methods run); rebuilt whenever a list it holds is replaced.
        self.kernel: Any = None
        #: Keep :attr:`free_cores` (the ``random`` policy's draws) up to date at every take
        #: and release. ``False`` for a decision system that never draws (a fixed pair with
        #: another core policy): then the list is built, in ascending core order, the first
        #: time it is read, and kept from then on (about 2% of a classic Gaia replay's
        #: instructions, 5 of a take's and 2 of a release's steps per core).
        self._free_order = free_order
        # WARNING, as the original HDeepRM: the thesis experiments log at WARNING level. One
        # line per event only with log_detail; else the first one and a summary (hdeeprm.logs).
        self.over_starts = WarningTally(
            INSIGHTS,
            "bandwidth over-subscription starts",
            "t=%.6f bandwidth over-subscription starts on processor %d (%.3f > %.3f GB/s)",
            detail=log_detail,
        )
        self.over_ends = WarningTally(
            INSIGHTS,
            "bandwidth over-subscription ends",
            "t=%.6f bandwidth over-subscription ends on processor %d",
            detail=log_detail,
        )
        # --- static views (shared by every pool of this platform: never written) ---------
        layout = platform.derived.view(_Layout, lambda: _Layout(platform))
        self.nb_cores = layout.nb_cores
        self.core_proc = layout.core_proc
        self.core_node = layout.core_node
        self.core_peak = layout.core_peak
        self.core_power = layout.core_power
        self.proc_cores = layout.proc_cores
        self.proc_node = layout.proc_node
        self.proc_mem_bw = layout.proc_mem_bw
        self.node_procs = layout.node_procs
        self.node_cores = layout.node_cores
        self.node_capacity = layout.node_capacity
        self._bw_limit = layout.bw_limit
        self._peak_arr = layout.peak_arr
        self._power_arr = layout.power_arr
        #: Sets that receive the id of every processor that may now rank *better* in an
        #: ordering whose keys only worsen as cores are taken (the resource manager's heaps):
        #: its free cores grew (release). Taking cores tells them nothing (unless a task has
        #: negative memory or bandwidth, which job records never have).
        self.gain_listeners: list[set[int]] = []
        #: Sets that also receive every processor of a node whose free memory grew.
        self.node_gain_listeners: list[set[int]] = []
        #: Sets that receive every processor whose bandwidth demand was summed again (settle:
        #: the sum in core order may round below the running one).
        self.demand_listeners: list[set[int]] = []
        #: Change logs (:class:`hdeeprm.decision.change_log.ChangeLog`) that receive the id of every
        #: node whose free cores or free memory changed (the fit counts): a take appends to
        #: their ``nodes`` list directly (millions of times on a whole trace: no method call),
        #: a release calls ``update`` (which keeps the log bounded), a reset ``update`` with
        #: a ``range`` of every node.
        self.node_change_listeners: list[ChangeLog] = []
        self.reset()
        self._quad = layout.quad

    # --- lifecycle --------------------------------------------------------------------
    def reset(self) -> None:
        """Every core free and in P3; no demand; all memory free; no history."""
        n = self.nb_cores
        self.pstate: list[int] = [INITIAL_PSTATE] * n
        #: P-state the simulator was last told about (to emit net changes only).
        self.emitted: list[int] = [INITIAL_PSTATE] * n
        self.core_job: list[str | None] = [None] * n
        self.core_mem: list[float] = [0.0] * n
        self.core_bw: list[float] = [0.0] * n
        self.proc_free: list[list[int]] = list(map(list.copy, self.proc_cores))
        #: Every free core, in no particular order, and each core's position in it (-1: busy):
        #: O(1) uniform draws for the ``random`` policy.
        self._free_cores: list[int] | None = list(range(n)) if self._free_order else None
        self._free_index: list[int] | None = list(range(n)) if self._free_order else None
        self.proc_busy: list[int] = [0] * len(self.proc_cores)
        self.proc_demand: list[float] = [0.0] * len(self.proc_cores)
        self.node_free_mem: list[float] = list(self.node_capacity)
        self.node_busy: list[int] = [0] * len(self.node_capacity)
        self.free_count = n
        self._over: list[bool] = [False] * len(self.proc_cores)
        #: Per processor, the P-state of its running and of its idle cores at the last settle.
        self._run_state: list[int] = [P0] * len(self.proc_cores)
        self._idle_state: list[int] = [INITIAL_PSTATE] * len(self.proc_cores)
        self._open_episode: dict[int, int] = {}
        #: Bandwidth over-subscription episodes, read as ``[processor id, start, end or None]``
        #: (typed columns: millions of them on a whole loaded trace).
        self.episodes = OverSubscriptionRecord()
        self._changed: set[int] = set()
        self.over_starts.reset()
        self.over_ends.reset()
        for listener in self.gain_listeners + self.node_gain_listeners + self.demand_listeners:
            listener.update(range(len(self.proc_cores)))
        for change_log in self.node_change_listeners:
            change_log.update(range(len(self.node_capacity)))
        self._bind_native()

    # --- compiled kernel ----------------------------------------------------------------
    @property
    def native(self) -> bool:
        """Whether the compiled kernel runs this pool's takes, releases, settles and drains."""
        return self.kernel is not None

    def _bind_native(self) -> None:
        """Shadow the Python methods of :data:`_NATIVE_METHODS` with the kernel's, once; the
        kernel reads the pool's lists again wherever they are replaced (this is called
        there), so methods bound or wrapped by callers stay valid. A subclass's own version
        of a method stays."""
        if self._kernels is None:
            return
        if self.kernel is not None:
            self.kernel.refresh()
            return
        kernel = self._kernels.Pool(self, INSIGHTS, _OPEN, SetResourceState, HostIds, CorePool)
        self.kernel = kernel
        cls = type(self)
        for name in _NATIVE_METHODS:
            if getattr(cls, name) is getattr(CorePool, name):
                setattr(self, name, getattr(kernel, name))

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the kernel (a C object): the receiving side binds its own."""
        state = self.__dict__.copy()
        for name in (*_NATIVE_METHODS, "kernel", "_kernels"):
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.kernel = None
        self._kernels = _kernel_module(self._native_request)
        self._bind_native()

    @property
    def free_cores(self) -> list[int]:
        """Every free core, in no particular order (the order of takes and releases: the
        ``random`` policy draws from it), each one's position in :attr:`free_index`."""
        if self._free_cores is None:
            self._keep_free_order()
        return self._free_cores  # type: ignore[return-value]

    @property
    def free_index(self) -> list[int]:
        """Each core's position in :attr:`free_cores` (-1: busy)."""
        if self._free_index is None:
            self._keep_free_order()
        return self._free_index  # type: ignore[return-value]

    def _keep_free_order(self) -> None:
        """Build :attr:`free_cores` now (ascending ids) and keep it from now on."""
        core_job = self.core_job
        free = [c for c in range(self.nb_cores) if core_job[c] is None]
        index = [-1] * self.nb_cores
        for position, core in enumerate(free):
            index[core] = position
        self._free_cores, self._free_index = free, index
        self._free_order = True
        self._bind_native()

    # --- derived per-core figures -----------------------------------------------------
    @property
    def busy_count(self) -> int:
        return self.nb_cores - self.free_count

    def core_speed(self, core: int) -> float:
        """Current speed of ``core`` in GFLOPS (peak x P-state speed fraction)."""
        return self.core_peak[core] * PSTATE_SPEED_FRACTION[self.pstate[core]]

    def current_power(self, core: int) -> float:
        """Current power of ``core`` in watts (per-core power x P-state power fraction)."""
        return self.core_power[core] * PSTATE_POWER_FRACTION[self.pstate[core]]

    def pstates(self) -> np.ndarray:
        """Every core's P-state as an int array (for observations and rewards)."""
        return np.fromiter(self.pstate, dtype=np.int64, count=self.nb_cores)

    def speeds(self) -> np.ndarray:
        """Every core's current speed in GFLOPS."""
        return self._peak_arr * np.asarray(PSTATE_SPEED_FRACTION)[self.pstates()]

    def powers(self) -> np.ndarray:
        """Every core's current power in watts."""
        return self._power_arr * np.asarray(PSTATE_POWER_FRACTION)[self.pstates()]

    def proc_free_bw(self, proc: int) -> float:
        """Free memory bandwidth of ``proc`` in GB/s (negative while over-subscribed)."""
        return self.proc_mem_bw[proc] - self.proc_demand[proc]

    # --- allocation -------------------------------------------------------------------
    def take(self, core: int, job_id: str, mem: float, mem_bw: float) -> None:
        """Give free ``core`` to a task of ``job_id`` (capacities only; see :meth:`settle`)."""
        proc = self.core_proc[core]
        node = self.proc_node[proc]
        free = self.proc_free[proc]
        if free and free[0] == core:
            free.pop(0)
        else:
            free.remove(core)
        if self._free_order:
            free_cores, free_index = self._free_cores, self._free_index
            index, last = free_index[core], free_cores.pop()  # type: ignore[index,union-attr]
            if last != core:
                free_cores[index] = last  # type: ignore[index]
                free_index[last] = index  # type: ignore[index]
            free_index[core] = -1  # type: ignore[index]
        self.core_job[core] = job_id
        self.core_mem[core] = mem
        self.core_bw[core] = mem_bw
        self.proc_busy[proc] += 1
        self.proc_demand[proc] += mem_bw
        self.node_free_mem[node] -= mem
        self.node_busy[node] += 1
        self.free_count -= 1
        if mem < 0.0 or mem_bw < 0.0:  # a key could improve: not for job records
            self._gained([proc], node)
        for listener in self.node_change_listeners:
            listener.nodes.append(node)  # bounded: checked at each release

    def take_run(self, proc: int, count: int, job_id: str, mem: float, mem_bw: float) -> list[int]:
        """Give the ``count`` lowest free cores of ``proc`` to tasks of ``job_id``, in ascending
        order: the same state as ``count`` calls of :meth:`take` (floats summed in the same
        order), with one notification per listener instead of one per core."""
        free = self.proc_free[proc]
        cores = free[:count]
        del free[:count]
        node = self.proc_node[proc]
        core_job, core_mem, core_bw = self.core_job, self.core_mem, self.core_bw
        demand, free_mem = self.proc_demand[proc], self.node_free_mem[node]
        if self._free_order:
            free_cores, free_index = self._free_cores, self._free_index
            for core in cores:
                index, last = free_index[core], free_cores.pop()  # type: ignore[index,union-attr]
                if last != core:
                    free_cores[index] = last  # type: ignore[index]
                    free_index[last] = index  # type: ignore[index]
                free_index[core] = -1  # type: ignore[index]
                core_job[core] = job_id
                core_mem[core] = mem
                core_bw[core] = mem_bw
                demand += mem_bw
                free_mem -= mem
        else:  # the same without the free-core list
            for core in cores:
                core_job[core] = job_id
                core_mem[core] = mem
                core_bw[core] = mem_bw
                demand += mem_bw
                free_mem -= mem
        self.proc_demand[proc] = demand
        self.node_free_mem[node] = free_mem
        self.proc_busy[proc] += count
        self.node_busy[node] += count
        self.free_count -= count
        if mem < 0.0 or mem_bw < 0.0:  # a key could improve: not for job records
            self._gained([proc], node)
        for listener in self.node_change_listeners:
            listener.nodes.append(node)  # bounded: checked at each release
        return cores

    def give(self, core: int) -> None:
        """Free ``core`` (capacities only; see :meth:`settle`)."""
        proc = self.core_proc[core]
        node = self.proc_node[proc]
        insort(self.proc_free[proc], core)  # short list (one processor's cores), kept sorted
        if self._free_order:
            self._free_index[core] = len(self._free_cores)  # type: ignore[index,arg-type]
            self._free_cores.append(core)  # type: ignore[union-attr]
        self.core_job[core] = None
        self.proc_busy[proc] -= 1
        self.proc_demand[proc] -= self.core_bw[core]
        mem = self.core_mem[core]
        self.node_busy[node] -= 1
        before = self.node_free_mem[node]
        if self.node_busy[node]:
            self.node_free_mem[node] = before + mem
        else:  # idle node: exact capacity, whatever rounding the sums left
            self.node_free_mem[node] = self.node_capacity[node]
        self.core_mem[core] = 0.0
        self.core_bw[core] = 0.0
        self.free_count += 1
        for listener in self.gain_listeners:
            listener.add(proc)
        for change_log in self.node_change_listeners:
            change_log.add(node)
        if mem or self.node_free_mem[node] != before:
            for listener in self.node_gain_listeners:
                listener.update(self.node_procs[node])

    def _gained(self, procs: Iterable[int], node: int) -> None:
        for listener in self.gain_listeners + self.demand_listeners:
            listener.update(procs)
        for listener in self.node_gain_listeners:
            listener.update(self.node_procs[node])

    def settle(self, cores: Iterable[int], now: float) -> None:
        """Recompute the bandwidth demand and P-states of the processors of ``cores``.

        Demands are summed again from the per-core values in core order, so rounding never
        accumulates over a long simulation (a free core's bandwidth is 0.0, which leaves a sum
        unchanged, so every core is summed without testing whether it is busy). P-states: a
        processor's running cores are in its *running* state (P0, or P1 while over-subscribed)
        and its idle cores in its *idle* state (P2 while a core is busy, else P3). When the idle
        state changes, every free core switches; when the running state changes, every busy
        one; otherwise only ``cores`` (whose job changed since the last settle) can.
        """
        core_proc = self.core_proc
        touched: dict[int, list[int]] = {}
        for c in cores:
            proc = core_proc[c]
            group = touched.get(proc)
            if group is None:
                touched[proc] = [c]
            else:
                group.append(c)
        self._settle(touched, now)

    def settle_taken(self, taken: dict[int, list[int]], now: float) -> None:
        """:meth:`settle` for cores just taken, given by processor (``taken[proc]``: the cores
        taken from ``proc`` since the last settle, by one :meth:`take_run`, never none), so
        they are not grouped again: an allocation that goes processor by processor already
        has them so.

        A processor whose busy cores are all in its group was wholly free: its demand is
        already the settled sum and is not summed again (``take_run`` summed it from the 0.0
        of its last settle, lowest cores first, which is the sum in core order bit for bit:
        each free core adds +0.0, which leaves a sum unchanged). A core just taken was free
        and settled, so idle (P2 or P3): it differs from its processor's running state (P0
        or P1) and is switched without a comparison. When the running state changed, the
        loop over the busy cores switches the taken ones."""
        procs = sorted(taken) if len(taken) > 1 else list(taken)
        core_job, core_bw, pstate, changed = self.core_job, self.core_bw, self.pstate, self._changed
        proc_cores, proc_demand, proc_busy = self.proc_cores, self.proc_demand, self.proc_busy
        bw_limit, over_now = self._bw_limit, self._over
        run_state, idle_state, proc_free = self._run_state, self._idle_state, self.proc_free
        quad = self._quad
        log: bool | None = None
        for listener in self.demand_listeners:
            listener.update(procs)
        for proc in procs:
            group = taken[proc]
            if proc_busy[proc] == len(group):  # wholly free until now: the sum is kept
                demand = proc_demand[proc]
            else:
                if quad:  # unrolled: -2.1% instructions on the RICC pool replay
                    a, b, c, d = proc_cores[proc]
                    demand = 0.0 + core_bw[a] + core_bw[b] + core_bw[c] + core_bw[d]
                else:
                    demand = _core_order_sum(proc_cores[proc], core_bw)
                proc_demand[proc] = demand
            over = demand > bw_limit[proc]
            running = P1 if over else P0
            if idle_state[proc] != P2:  # a core is busy: the idle state is P2
                # Every free core was in the old idle state.
                idle_state[proc] = P2
                free = proc_free[proc]
                if free:  # none when a job took the whole processor
                    for c in free:
                        pstate[c] = P2
                    changed.update(free)
            if running != run_state[proc]:
                run_state[proc] = running
                for c in proc_cores[proc]:  # the taken cores among them
                    if core_job[c] is not None and pstate[c] != running:
                        pstate[c] = running
                        changed.add(c)
            else:
                for c in group:
                    pstate[c] = running
                changed.update(group)
            # Inlined, not _over_changed: +2.3% instructions on Gaia's pool replay
            if over != over_now[proc]:  # an episode opens or closes (RICC: millions)
                over_now[proc] = over
                if log is None:  # asked once per settle, only when an episode changes
                    log = INSIGHTS.isEnabledFor(logging.WARNING)
                    episodes = self.episodes  # OverSubscriptionRecord.open/close, inlined
                    open_episode = self._open_episode
                if over:
                    open_episode[proc] = len(episodes.ends)
                    episodes.procs.append(proc)
                    episodes.starts.append(now)
                    episodes.ends.append(_OPEN)
                    if log:
                        self.over_starts(now, proc, demand, self.proc_mem_bw[proc])
                else:
                    episodes.ends[open_episode.pop(proc)] = now
                    if log:
                        self.over_ends(now, proc)

    def _settle_freed(self, freed: dict[int, list[int]], now: float) -> None:
        """The end of :meth:`release`: the cores just freed, by processor, go back to their
        processors' free lists and busy counts, then are settled (:meth:`settle`). A core just
        freed was running, so it differs from its processor's idle state and is switched
        without a comparison; when the idle state changed, the loop over the free cores
        switches the freed ones."""
        procs = sorted(freed) if len(freed) > 1 else list(freed)
        core_job, core_bw, pstate, changed = self.core_job, self.core_bw, self.pstate, self._changed
        proc_cores, proc_demand, proc_busy = self.proc_cores, self.proc_demand, self.proc_busy
        bw_limit, over_now = self._bw_limit, self._over
        run_state, idle_state, proc_free = self._run_state, self._idle_state, self.proc_free
        quad = self._quad
        log: bool | None = None
        count = 0
        for listener in self.demand_listeners:
            listener.update(procs)
        for proc in procs:
            group = freed[proc]
            n = len(group)
            count += n
            proc_busy[proc] = busy_now = proc_busy[proc] - n
            free = proc_free[proc]
            free += group  # one extend per processor instead of an append per core
            free.sort()  # what insort per core gives: one processor's cores, sorted
            if busy_now:
                if quad:  # unrolled: -2.1% instructions on the RICC pool replay
                    a, b, c, d = proc_cores[proc]
                    demand = 0.0 + core_bw[a] + core_bw[b] + core_bw[c] + core_bw[d]
                else:
                    demand = _core_order_sum(proc_cores[proc], core_bw)
                idle = P2
            else:  # every core is free, with 0.0: the sum is 0.0
                demand = 0.0
                idle = P3
            proc_demand[proc] = demand
            over = demand > bw_limit[proc]
            if idle != idle_state[proc]:
                # Every free core was in the old idle state, or running until just now.
                idle_state[proc] = idle
                for c in free:
                    pstate[c] = idle
                changed.update(free)
            else:
                for c in group:
                    pstate[c] = idle
                changed.update(group)
            running = P1 if over else P0
            if running != run_state[proc]:
                run_state[proc] = running
                if busy_now:
                    for c in proc_cores[proc]:
                        if core_job[c] is not None and pstate[c] != running:
                            pstate[c] = running
                            changed.add(c)
            # Inlined, not _over_changed: +2.3% instructions on Gaia's pool replay
            if over != over_now[proc]:  # an episode opens or closes (RICC: millions)
                over_now[proc] = over
                if log is None:  # asked once per settle, only when an episode changes
                    log = INSIGHTS.isEnabledFor(logging.WARNING)
                    episodes = self.episodes  # OverSubscriptionRecord.open/close, inlined
                    open_episode = self._open_episode
                if over:
                    open_episode[proc] = len(episodes.ends)
                    episodes.procs.append(proc)
                    episodes.starts.append(now)
                    episodes.ends.append(_OPEN)
                    if log:
                        self.over_starts(now, proc, demand, self.proc_mem_bw[proc])
                else:
                    episodes.ends[open_episode.pop(proc)] = now
                    if log:
                        self.over_ends(now, proc)
        self.free_count += count

    def _settle(self, touched: dict[int, list[int]], now: float) -> None:
        """:meth:`settle` on cores grouped by processor, each taken or freed since the last
        settle."""
        procs = sorted(touched) if len(touched) > 1 else list(touched)
        core_job, core_bw, pstate, changed = self.core_job, self.core_bw, self.pstate, self._changed
        proc_cores, proc_demand, proc_busy = self.proc_cores, self.proc_demand, self.proc_busy
        bw_limit, over_now = self._bw_limit, self._over
        run_state, idle_state, proc_free = self._run_state, self._idle_state, self.proc_free
        quad = self._quad
        for listener in self.demand_listeners:
            listener.update(procs)
        for proc in procs:
            members = proc_cores[proc]
            if proc_busy[proc]:
                if quad:  # unrolled: -0.75% instructions on RICC's pool replay, high_cores
                    a, b, c, d = members
                    demand = 0.0 + core_bw[a] + core_bw[b] + core_bw[c] + core_bw[d]
                else:
                    demand = _core_order_sum(members, core_bw)
                idle = P2
            else:  # every core is free, with 0.0: the sum is 0.0
                demand = 0.0
                idle = P3
            proc_demand[proc] = demand
            over = demand > bw_limit[proc]
            running = P1 if over else P0
            if idle != idle_state[proc]:
                # Every free core was in the old idle state, or running until just now.
                idle_state[proc] = idle
                free = proc_free[proc]
                if free:
                    for c in free:
                        pstate[c] = idle
                    changed.update(free)
            if running != run_state[proc]:
                run_state[proc] = running
                for c in members:
                    if core_job[c] is not None and pstate[c] != running:
                        pstate[c] = running
                        changed.add(c)
            for c in touched[proc]:
                new = idle if core_job[c] is None else running
                if new != pstate[c]:
                    pstate[c] = new
                    changed.add(c)
            if over != over_now[proc]:
                self._over_changed(proc, over, demand, now)

    def _over_changed(self, proc: int, over: bool, demand: float, now: float) -> None:
        """``proc`` starts (``over``) or stops being over-subscribed at ``now``: its episode
        opens or closes (the logger is asked only then). Inlined in :meth:`settle_taken` and
        :meth:`_settle_freed`, where the call cost +2.3% instructions on Gaia's pool replay and
        +4.6% on RICC's (millions of episodes)."""
        self._over[proc] = over
        log = INSIGHTS.isEnabledFor(logging.WARNING)
        if over:
            self._open_episode[proc] = self.episodes.open(proc, now)
            if log:
                self.over_starts(now, proc, demand, self.proc_mem_bw[proc])
        else:
            self.episodes.close(self._open_episode.pop(proc), now)
            if log:
                self.over_ends(now, proc)

    def close_episodes(self, now: float) -> None:
        """End every open over-subscription episode at ``now`` (simulation end) and log the
        summaries of the aggregated warnings."""
        close = self.episodes.close
        for index in self._open_episode.values():
            close(index, now)
        self._open_episode.clear()
        self.over_starts.summarise()
        self.over_ends.summarise()

    def release(self, cores: Iterable[int], now: float) -> None:
        """Free the cores of a finished job and update P-states around them."""
        # give() per core, inlined: same float sums in the same order, but each listener hears
        # of a processor or node once, and the cores are grouped by processor for the settle
        # (a job's cores come in runs per processor). The processors' demands are not updated
        # here: the settle sums them again from the per-core values.
        core_proc, proc_node = self.core_proc, self.proc_node
        core_job = self.core_job
        core_mem, core_bw = self.core_mem, self.core_bw
        node_busy, node_free_mem, node_capacity = (
            self.node_busy,
            self.node_free_mem,
            self.node_capacity,
        )
        if self._free_order:
            # The free-core list gets the cores in release order, as give() per core would.
            if not isinstance(cores, (list, tuple)):
                cores = list(cores)
            free_cores, free_index = self._free_cores, self._free_index
            position = len(free_cores)  # type: ignore[arg-type]
            free_cores.extend(cores)  # type: ignore[union-attr]
            for core in cores:
                free_index[core] = position  # type: ignore[index]
                position += 1
        touched: dict[int, list[int]] = {}
        nodes: dict[int, None] = {}
        mem_nodes: dict[int, None] = {}
        last_proc = -1
        node = -1
        group: list[int] = []
        # The node of the current run in locals (busy cores, free memory, capacity, whether
        # its memory changed), written back when the run moves to another node and at the end.
        left, free_mem, capacity, gained = 0, 0.0, 0.0, False
        for core in cores:
            proc = core_proc[core]
            if proc != last_proc:  # a job's cores come in runs per processor
                last_proc = proc
                next_node = proc_node[proc]
                if next_node != node:
                    if node >= 0:
                        node_busy[node] = left
                        node_free_mem[node] = free_mem
                        if gained:
                            mem_nodes[node] = None
                    node = next_node
                    nodes[node] = None
                    left, free_mem = node_busy[node], node_free_mem[node]
                    capacity, gained = node_capacity[node], False
                group = touched.get(proc)  # type: ignore[assignment]
                if group is None:
                    group = touched[proc] = []
            group.append(core)
            core_job[core] = None
            mem = core_mem[core]
            core_mem[core] = 0.0
            core_bw[core] = 0.0
            # The node's free memory gains the core's, or is its exact capacity once the node
            # is idle (whatever rounding the sums left); it changed when the core had memory
            # (a sum with +0.0 or -0.0 is the same number) or the capacity differs from it.
            left -= 1
            if left:
                free_mem += mem
            else:
                if capacity != free_mem:
                    gained = True
                free_mem = capacity
            if mem:
                gained = True
        if node >= 0:
            node_busy[node] = left
            node_free_mem[node] = free_mem
            if gained:
                mem_nodes[node] = None
        # The processors' busy counts and free lists are updated by the settle, in its loop
        # over them (no listener reads them).
        for listener in self.gain_listeners:
            listener.update(touched)
        for change_log in self.node_change_listeners:
            change_log.update(nodes)
        if mem_nodes:
            node_procs = self.node_procs
            for listener in self.node_gain_listeners:
                for node in mem_nodes:
                    listener.update(node_procs[node])
        self._settle_freed(touched, now)

    def drain(self) -> list[SetResourceState]:
        """Net P-state changes since the last drain, one decision per target state.

        Decisions come in ascending state order with ascending core ids, so the output is a
        pure function of the state (deterministic).
        """
        changed = self._changed
        if not changed:
            return []
        groups: list[list[int]] = [[], [], [], []]  # by P-state (P0..P3)
        pstate, emitted = self.pstate, self.emitted
        for core in sorted(changed):
            state = pstate[core]
            if state != emitted[core]:
                emitted[core] = state
                groups[state].append(core)
        changed.clear()
        # Four tests instead of a comprehension (a frame and an enumerate per drain).
        p0, p1, p2, p3 = groups
        decisions = []
        if p0:
            decisions.append(SetResourceState(HostIds(p0), P0))
        if p1:
            decisions.append(SetResourceState(HostIds(p1), P1))
        if p2:
            decisions.append(SetResourceState(HostIds(p2), P2))
        if p3:
            decisions.append(SetResourceState(HostIds(p3), P3))
        return decisions

    @property
    def over_subscribed(self) -> list[int]:
        """Ids of the processors whose bandwidth is over-subscribed now."""
        return [p for p, over in enumerate(self._over) if over]


__all__ = ["BW_REL_TOL", "INSIGHTS", "MEM_TOL", "CorePool"]
