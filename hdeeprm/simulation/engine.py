"""The embedded Batsim-compatible discrete-event engine.

A pull API mirrors Batsim's request/reply protocol, so a Gymnasium environment can stop at any
decision point and a ZeroMQ bridge can later be put in front of it::

    engine = Engine(platform, workload)
    message = engine.start()                    # SIMULATION_BEGINS
    while not engine.finished:
        message = engine.proceed(decide(message))

**Core.** A heap of ``(time, priority, seq, payload, version)`` entries in the SimPy style: the
sequence number breaks ties deterministically, and an entry whose ``version`` no longer matches
its job's (the job was re-paced or ended) is stale and skipped when popped, never searched for.
The payload is a number (a job's submission index, or a call's time), so entries hold no object
for the cyclic garbage collector to track.
Static submissions are not put in the heap: they are read from one list merged and sorted by
submission time, which costs nothing per event.

**One instant, one message.** ``proceed(decisions)`` applies the decisions at ``now``, then moves
to the next instant that has events and returns all of them in this fixed order:

1. ``JOB_COMPLETED`` (successes, walltime kills, kills), in the order the engine processed them;
2. ``JOB_KILLED`` (one per ``KillJobs`` decision);
3. ``RESOURCE_STATE_CHANGED`` (one per ``SetResourceState`` decision, in decision order);
4. ``JOB_SUBMITTED`` (submission time, then workload order, then file order), followed by
   ``NO_MORE_STATIC_JOB_TO_SUBMIT`` with the last submission;
5. ``REQUESTED_CALL`` (one per ``CallMeLater``).

Events caused by decisions (state-change confirmations, kills, completions of zero-length jobs)
happen at ``now`` and so arrive in a new message with the same timestamp, as in Batsim.
``SIMULATION_ENDS`` follows Batsim 4.x: it comes alone, in the first message after everything
is over: every static job submitted and finished (or rejected), no job running and no pending
``CallMeLater`` (pending calls are delivered first; they keep the simulation alive).

**Execution model.** ``delay`` jobs last ``delay`` seconds whatever the speed.
``parallel_homogeneous`` jobs compute ``cpu`` flops on every allocated host and
``parallel_homogeneous_total`` jobs ``cpu / len(alloc)``; both progress at the pace of their
slowest host, and are re-paced exactly (remaining work carried over) when a P-state change
alters that pace. A host whose speed is (near) zero (at most :data:`STALL_FRACTION` of its
fastest P-state) stalls its job until it speeds up again.

**Energy.** Each host draws its current P-state's idle power, or its full power while a task
runs on it. The engine keeps the platform's total power as a running sum updated on every
change, and integrates it exactly (piecewise constant) when time advances; per-job and
per-host energies are integrated the same way, lazily.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import math
import operator
from collections import Counter
from collections.abc import Mapping, Sequence
from types import MappingProxyType, ModuleType
from typing import Any

from hdeeprm import _native
from hdeeprm.errors import InputError, SimulationError
from hdeeprm.simulation.events import (
    COMPLETED_KILLED,
    COMPLETED_SUCCESSFULLY,
    COMPLETED_WALLTIME_REACHED,
    JOB_COMPLETED,
    JOB_KILLED,
    JOB_SUBMITTED,
    NO_MORE_STATIC_JOB_TO_SUBMIT,
    REJECTED,
    REQUESTED_CALL,
    RESOURCE_STATE_CHANGED,
    SIMULATION_BEGINS,
    SIMULATION_ENDS,
    CallMeLater,
    Decision,
    Event,
    ExecuteJob,
    HostIds,
    KillJobs,
    Message,
    RejectJob,
    SetResourceState,
)
from hdeeprm.simulation.platform_xml import SimPlatform
from hdeeprm.simulation.service_time import ServiceTimeModel
from hdeeprm.simulation.traces import (
    KIND_END,
    KIND_PSTATE,
    KIND_START,
    EnergyTrace,
    MachineStateTrace,
    PstateTrace,
)
from hdeeprm.workload.model import JobSpec, Profile, Workload

#: Per host, a value in one P-state: a list over all hosts, or a mapping over some of them.
_PerHost = Sequence[float] | Mapping[int, float]
#: Each host's (idle W, full W, speed) in one P-state.
_StateTable = tuple[_PerHost, _PerHost, _PerHost]

# --- job states (Batsim's names) ------------------------------------------------------------
NOT_SUBMITTED = "NOT_SUBMITTED"
SUBMITTED = "SUBMITTED"
RUNNING = "RUNNING"
#: States a job ends in.
FINAL_STATES = frozenset(
    {COMPLETED_SUCCESSFULLY, COMPLETED_WALLTIME_REACHED, COMPLETED_KILLED, REJECTED}
)
#: Every state by name: the engine compares states by identity, so an unpickled job gets
#: these very objects back (see :meth:`SimJob.__setstate__`).
_STATES = {s: s for s in (NOT_SUBMITTED, SUBMITTED, RUNNING, *FINAL_STATES)}

# --- heap priorities at one instant (lower first) -------------------------------------------
# A walltime reached at the very instant the job's work ends wins, as in Batsim 4.2.1 (a delay
# job runs to completion only if ``delay < walltime``; a ptask still running when its
# ``wait_for(walltime)`` times out is killed): such a job ends COMPLETED_WALLTIME_REACHED.
_WALLTIME = 0
_COMPLETE = 1
_CALL = 2

#: Re-pacing marker: the job's slowest host is unknown without a pass over its hosts (speeds
#: are never negative).
_RESCAN = -1.0

#: Jobs on at least this many hosts count their hosts by speed once their pace has had to
#: be found again by a pass over their hosts: later such finds read the smallest count's key.
#: (Counting costs more than a pass over a few hosts, and narrow jobs are the many.)
PACES_FROM = 48

#: Stalled-job warnings logged per simulation, and hosts named in each.
MAX_STALL_WARNINGS = 10
MAX_HOSTS_NAMED = 8
LOG = logging.getLogger("hdeeprm.simulation")

#: A P-state whose speed is at most this fraction of the host's fastest P-state counts as
#: speed 0: a job on such a host is stalled until the host speeds up again. (SimGrid refuses
#: speed 0, so platform generators write tiny speeds such as 1e-6 GFLOPS for idle P-states.)
STALL_FRACTION = 1e-6

#: The compiled per-host loops of :class:`Engine` (:mod:`hdeeprm._native`).
KERNELS = "hdeeprm.simulation._engine_kernels"


def _kernels(native: bool | None) -> ModuleType | None:
    """The compiled loops an engine built with ``native`` runs (:func:`hdeeprm._native.choose`)."""
    return _native.choose(KERNELS, native, "Engine", SimulationError)


def _effective_speeds(speeds: tuple[float, ...]) -> tuple[float, ...]:
    top = max(speeds, default=0.0)
    return tuple(s if s > STALL_FRACTION * top else 0.0 for s in speeds)


class _HostTables:
    """What a platform's hosts fix for every engine built on it, computed once per platform
    (``SimPlatform.derived``) so that an environment's reset builds none of it again. Shared
    between engines: never written (the engine copies the initial per-host lists)."""

    def __init__(self, platform: SimPlatform) -> None:
        hosts = platform.hosts
        self.speeds = [_effective_speeds(h.speeds) for h in hosts]
        self.min_pstates = min((len(sp) for sp in self.speeds), default=0)
        self.idle_w = [h.idle_watts or (0.0,) * h.nb_pstates for h in hosts]
        self.full_w = [h.full_watts or (0.0,) * h.nb_pstates for h in hosts]
        #: Each host's initial P-state, and its speed and powers in it.
        self.pstate = [h.pstate for h in hosts]
        self.speed = [sp[h.pstate] for sp, h in zip(self.speeds, hosts)]
        self.idle = [w[h.pstate] for w, h in zip(self.idle_w, hosts)]
        self.full = [w[h.pstate] for w, h in zip(self.full_w, hosts)]
        #: :meth:`Engine._state_table`'s lists, by P-state, as engines first need them.
        self.by_state: dict[int, tuple[list[float], list[float], list[float]]] = {}
        #: ``SIMULATION_BEGINS``' ``compute_resources``: Batsim's dicts, as read-only mappings.
        self.resources = tuple(
            MappingProxyType(
                {
                    "id": h.id,
                    "name": h.name,
                    "state": "idle",
                    "properties": MappingProxyType(dict(h.properties)),
                }
            )
            for h in hosts
        )


def _host_tables(platform: SimPlatform) -> _HostTables:
    return platform.derived.view(_HostTables, lambda: _HostTables(platform))


#: Transition marker Batsim writes in ``out_pstate_changes.csv`` before switching to a
#: computation P-state.
PSTATE_TRANSITION = -1


class JobView:
    """Read-only figures every job object derives from its :class:`JobSpec` (``spec``).

    Shared by the engine's :class:`SimJob` and the protocol client's ``BatsimJob`` so that a
    decision system reads the same attributes whichever simulator it talks to.
    """

    __slots__ = ()
    spec: JobSpec

    @property
    def name(self) -> str:
        """The job id inside its workload (Batsim's ``job_id`` column)."""
        return self.spec.id

    @property
    def subtime(self) -> float:
        return self.spec.subtime

    @property
    def res(self) -> int:
        """Number of hosts requested."""
        return self.spec.res

    @property
    def walltime(self) -> float | None:
        return self.spec.walltime


class SimJob(JobView):
    """A job inside the simulation: its static description plus its dynamic state.

    ``id`` is Batsim's ``"{workload}!{job id}"``. ``state`` is one of ``NOT_SUBMITTED``,
    ``SUBMITTED``, ``RUNNING`` or a final state (:data:`FINAL_STATES`). ``alloc`` is the tuple
    of host ids it runs (ran) on, ``energy`` the joules its hosts consumed while it ran
    (Batsim's ``consumed_energy``; up to date once the job has ended).
    """

    __slots__ = (
        "id",
        "workload",
        "spec",
        "profile",
        "state",
        "start_time",
        "finish_time",
        "alloc",
        "energy",
        "_delay",
        "_total",
        "_work",
        "_rate",
        "_last",
        "_version",
        "_power",
        "_e_last",
        "_kill_requested",
        "gpus",
        "service_factor",
        "_index",
        "_paces",
    )

    def __init__(self, workload: str, spec: JobSpec, profile: Profile) -> None:
        self.id = f"{workload}!{spec.id}"
        self.workload = workload
        self.spec = spec
        self.profile = profile
        self.state = NOT_SUBMITTED
        self.start_time: float | None = None
        self.finish_time: float | None = None
        self.alloc: tuple[int, ...] = ()
        self.energy = 0.0
        self._delay = profile.type == "delay"
        self._total = 0.0  # work to do: seconds (delay) or flops per host
        self._work = 0.0  # work left at time _last
        self._rate = 0.0  # work units per second
        self._last = 0.0
        self._version = 0
        self._power = 0.0  # watts drawn by the job's hosts
        self._e_last = 0.0
        self._kill_requested = False
        #: GPU ids it got (hdeeprm's GPU model) and what the service-time model multiplied
        #: its work by (1.0 without a model).
        self.gpus: tuple[int, ...] = ()
        self.service_factor = 1.0
        #: Submission index in its engine (heap entries name the job by it); -1 until then.
        self._index = -1
        #: How many of its hosts run at each speed, kept from the first time its pace had to
        #: be found again (a host that may have been the slowest sped up) until it ends: that
        #: pace is then the smallest key, instead of a pass over all its hosts each time.
        self._paces: Counter[float] | None = None

    def __setstate__(self, state: tuple[Any, dict[str, Any]]) -> None:
        """Restore a pickled job (environments sent to subprocesses), its state being the
        module's own string object, since the engine tests states with ``is``."""
        for name, value in state[1].items():
            object.__setattr__(self, name, value)
        self.state = _STATES.get(self.state, self.state)

    @property
    def execution_time(self) -> float | None:
        if self.start_time is None or self.finish_time is None:
            return None
        return self.finish_time - self.start_time

    @property
    def waiting_time(self) -> float | None:
        return None if self.start_time is None else self.start_time - self.spec.subtime

    def progress(self, now: float) -> float:
        """Fraction of the job's work done at ``now`` (1 once completed successfully)."""
        if self.state == COMPLETED_SUCCESSFULLY:
            return 1.0
        if self.start_time is None or self._total <= 0:
            return 0.0
        left = self._work
        if self.state == RUNNING:
            left -= self._rate * (now - self._last)
        return min(1.0, max(0.0, 1.0 - left / self._total))

    def __repr__(self) -> str:
        return f"SimJob({self.id!r}, state={self.state}, alloc={self.alloc})"


def _host_ids(hosts: Any, verb: str) -> tuple[int, ...]:
    """``hosts`` as a tuple of Python ints (accepting NumPy integers), or SimulationError."""
    ids = tuple(hosts)
    for host in ids:
        if type(host) is not int:
            try:
                return tuple(operator.index(h) for h in ids)
            except TypeError:
                raise SimulationError(f"{verb}: host id {host!r} is not an integer") from None
    return ids


def _order_submissions(
    workloads: Sequence[Workload],
) -> tuple[list[float], list[JobSpec], list[Workload]]:
    """Every static job by submission time (ties keep workload then file order: a stable
    sort), as three parallel lists: times, jobs and their workloads. Plain lists, no tuple per
    job: the cyclic garbage collector has nothing per job to track."""
    times = [spec.subtime for wl in workloads for spec in wl.jobs]
    specs = [spec for wl in workloads for spec in wl.jobs]
    owners = [wl for wl in workloads for _ in wl.jobs]
    if times != sorted(times):  # one workload in file order is already sorted
        order = sorted(range(len(times)), key=times.__getitem__)
        times = [times[i] for i in order]
        specs = [specs[i] for i in order]
        owners = [owners[i] for i in order]
    return times, specs, owners


class Engine:
    """The discrete-event simulation of one platform running one or more workloads.

    Args:
        platform: the compute hosts (see :func:`~hdeeprm.simulation.load_platform_xml`).
        workloads: one workload or several; their names (``Workload.name``) must differ.
        trace: record what the output files need (``out_*.csv``); switch it off in training
            episodes that never write outputs.
        strict_allocation_size: reject an ``ExecuteJob`` whose allocation size differs from
            the job's ``res`` (except ``parallel_homogeneous_total``), as Batsim does when no
            custom mapping is given. Off by default: any non-empty allocation is accepted.
        service_time: a :class:`~hdeeprm.simulation.service_time.ServiceTimeModel`: each job
            with a ``workload_type`` has its work multiplied by the model's factor for its
            allocation (cores and GPUs). ``None`` (default): durations as the profiles say.
        state_change_events: send a ``RESOURCE_STATE_CHANGED`` event per ``SetResourceState``
            (Batsim's confirmation, in a message of its own at the same instant). Off for an
            embedded decision system that ignores them (the Gymnasium environment): that
            round trip costs a message per switch and tells it nothing. Messages then differ
            only by those events; states, times, energies and outputs are the same.
        host_energies: keep each host's energy (:meth:`host_energy`). No output file reads
            them (the total energy, the jobs' energies and every ``out_*.csv`` are kept
            either way, bit for bit): a run that only writes outputs switches them off and
            saves a closing per host at every start, end and P-state switch (about 26
            million on the whole RICC trace with EASY).
        native: run the per-host loops of job starts, ends and P-state switches compiled
            (:mod:`hdeeprm._native`; the same results bit for bit). ``None`` (default): when
            built and not disabled by ``HDEEPRM_PURE_PYTHON``; ``False``: never (the Python
            reference); ``True``: always (:class:`SimulationError` if not built).
    """

    def __init__(
        self,
        platform: SimPlatform,
        workloads: Workload | Sequence[Workload],
        *,
        trace: bool = True,
        strict_allocation_size: bool = False,
        service_time: ServiceTimeModel | None = None,
        state_change_events: bool = True,
        host_energies: bool = True,
        native: bool | None = None,
    ) -> None:
        if isinstance(workloads, Workload):
            workloads = [workloads]
        names = [wl.name for wl in workloads]
        if len(set(names)) != len(names):
            raise InputError(f"workload names must be unique, got {names}")
        for wl in workloads:
            for index, spec in enumerate(wl.jobs):
                if spec.profile not in wl.profiles:
                    raise InputError(
                        f"job {spec.id!r} uses unknown profile {spec.profile!r}",
                        wl.name,
                        f"jobs[{index}].profile",
                    )
        self.platform = platform
        self.workloads: list[Workload] = list(workloads)
        self._trace = trace
        self._strict = strict_allocation_size
        self._service_time = service_time
        self._rsc_events = state_change_events
        self._native_request = native
        #: The compiled per-host loops, or None for the Python ones (not pickled: a copy
        #: finds them again in its process, see __setstate__).
        self._kernels = _kernels(native)
        #: Busy GPU ids and their jobs (GPUs are not hosts: the engine only checks that no GPU
        #: serves two jobs at once and records who had which).
        self._gpu_job: dict[int, SimJob] = {}

        hosts = platform.hosts
        self._n = len(hosts)
        tables = _host_tables(platform)
        self._speeds = tables.speeds
        #: P-states every host has (P-state ids below this need no per-host check).
        self._min_pstates = tables.min_pstates
        self._idle_w = tables.idle_w
        self._full_w = tables.full_w
        self._pstate = list(tables.pstate)
        self._cur_speed = list(tables.speed)
        self._cur_idle = list(tables.idle)
        self._cur_full = list(tables.full)
        #: Per P-state every host has: each host's (idle W, full W, speed) in it, as three
        #: lists built on first use (one index per figure in a switch instead of two).
        self._state_tables = tables.by_state
        self._host_job: list[SimJob | None] = [None] * self._n
        self._host_energies = host_energies
        self._host_energy = [0.0] * self._n
        self._host_since = [0.0] * self._n
        self._state_since = [0.0] * self._n

        self._now = 0.0
        self._energy = 0.0
        self._power = math.fsum(self._cur_idle)
        self._wattmin = self._power

        self._sub_times, self._sub_specs, self._sub_owners = _order_submissions(self.workloads)
        self._sub_idx = 0
        #: Submitted jobs by submission index: heap entries name a job by its index, so that
        #: they hold numbers only (which the garbage collector does not track).
        self._submitted: list[SimJob] = []
        self._nomore_sent = False
        self._heap: list[tuple[float, int, int, float | int, int]] = []
        self._seq = 0
        self.jobs: dict[str, SimJob] = {}
        self._nb_waiting = 0
        self._nb_running = 0
        self._nb_calls = 0
        self._nb_computing = 0
        self._imm_completed: list[Event] = []
        self._imm_killed: list[Event] = []
        self._imm_rsc: list[Event] = []
        #: Jobs whose hosts changed speed at this instant, each with the slowest speed of its
        #: hosts so far (its new pace), or :data:`_RESCAN` when a host that may have been the
        #: slowest sped up (then only a pass over its hosts tells).
        self._dirty: dict[SimJob, float] = {}
        self._started = False
        self._ended = False
        self._warned_stalls = 0
        self.nb_events = 0
        self.nb_messages = 0

        # --- what outputs need (Batsim's tracers) ---
        #: Jobs in the order they ended (completed, killed or rejected).
        self.finished_jobs: list[SimJob] = []
        #: ``(time, total energy J, 's'|'e'|'p', wattmin W)`` rows of out_consumed_energy.csv.
        self.energy_trace = EnergyTrace()
        #: ``(time, host ids, new P-state)`` rows of out_pstate_changes.csv.
        self.pstate_trace = PstateTrace()
        #: ``(time, nb_idle, nb_computing)`` rows of out_machine_states.csv.
        self.machine_state_trace = MachineStateTrace()
        # Their arrays, extended directly on the hot paths (:mod:`.traces`: typed columns,
        # no object per row for the garbage collector to track).
        self._energy_rows = self.energy_trace.values
        self._machine_rows = self.machine_state_trace.values
        self._pstate_rows = self.pstate_trace.values
        self._pstate_hosts = self.pstate_trace.hosts
        self.nb_grouped_switches = 0
        self.nb_machine_switches = 0
        self.time_idle = 0.0
        self.time_computing = 0.0
        self.energy_first_submission: float | None = None
        self.energy_last_completion = 0.0

    def __getstate__(self) -> dict[str, Any]:
        """The engine's attributes but its kernels (a module does not pickle): a copy finds
        them again in its own process (environments travel to subprocesses pickled)."""
        state = self.__dict__.copy()
        state["_kernels"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        # An engine pickled before the native option existed: the default.
        self._kernels = _kernels(self.__dict__.setdefault("_native_request", None))

    # --- read-only views --------------------------------------------------------------------
    @property
    def native(self) -> bool:
        """Whether the per-host loops run compiled (see the constructor's ``native``)."""
        return self._kernels is not None

    @property
    def now(self) -> float:
        """Current simulation time (s)."""
        return self._now

    @property
    def started(self) -> bool:
        return self._started

    @property
    def finished(self) -> bool:
        """True once ``SIMULATION_ENDS`` has been returned."""
        return self._ended

    @property
    def state_change_events(self) -> bool:
        """Whether each ``SetResourceState`` is confirmed by a ``RESOURCE_STATE_CHANGED``
        event (see the constructor). Settable until :meth:`start`, so the loop that drives
        the engine can drop them for a decision system that says it ignores them
        (:func:`hdeeprm.simulation.run`)."""
        return self._rsc_events

    @state_change_events.setter
    def state_change_events(self, value: bool) -> None:
        if self._started:
            raise SimulationError(
                "state_change_events can only be set before start(): the messages already "
                "sent depend on it"
            )
        self._rsc_events = bool(value)

    @property
    def consumed_energy(self) -> float:
        """Energy consumed by every compute host from time 0 to ``now`` (J)."""
        return self._energy

    @property
    def power(self) -> float:
        """Current total power of the compute hosts (W)."""
        return self._power

    @property
    def nb_hosts(self) -> int:
        return self._n

    @property
    def pstates(self) -> tuple[int, ...]:
        """Current P-state of every host, by resource id."""
        return tuple(self._pstate)

    def pstate(self, host: int) -> int:
        return self._pstate[host]

    def host_speed(self, host: int) -> float:
        """Current speed of ``host`` (flops/s; near-zero speeds read 0, see STALL_FRACTION)."""
        return self._cur_speed[host]

    def host_job(self, host: int) -> SimJob | None:
        """The job running on ``host``, if any."""
        return self._host_job[host]

    def host_energy(self) -> list[float]:
        """Energy consumed by each host from time 0 to ``now`` (J), by resource id."""
        if not self._host_energies:
            raise SimulationError(
                "per-host energies are not kept by this engine: build it with "
                "Engine(..., host_energies=True) (the default) to read host_energy()"
            )
        now = self._now
        return [
            e
            + (self._cur_full[h] if self._host_job[h] is not None else self._cur_idle[h])
            * (now - self._host_since[h])
            for h, e in enumerate(self._host_energy)
        ]

    def job_energy(self, job: SimJob) -> float:
        """Energy consumed so far by a running or ended job's hosts during its run (J)."""
        if job.state == RUNNING:
            return job.energy + job._power * (self._now - job._e_last)
        return job.energy

    # --- protocol -----------------------------------------------------------------------------
    def start(self) -> Message:
        """Begin the simulation: return the ``SIMULATION_BEGINS`` message at time 0."""
        if self._started:
            raise SimulationError("start() called twice")
        self._started = True
        if self._trace:
            by_state: dict[int, list[int]] = {}
            for host, state in enumerate(self._pstate):
                by_state.setdefault(state, []).append(host)
            for state in sorted(by_state):
                self.pstate_trace.add(0.0, tuple(by_state[state]), state)
        hosts = self.platform.hosts
        data = {
            "nb_resources": self._n,
            "nb_compute_resources": self._n,
            "nb_storage_resources": 0,
            "allow_time_sharing_on_compute": False,
            "allow_time_sharing_on_storage": False,
            "resources": tuple(hosts),
            "compute_resources": list(_host_tables(self.platform).resources),
            "storage_resources": [],
            "workloads": {wl.name: wl for wl in self.workloads},
            "profiles": {wl.name: wl.profiles for wl in self.workloads},
            "platform": self.platform,
        }
        return self._message(0.0, [Event(0.0, SIMULATION_BEGINS, data)])

    def proceed(self, decisions: Sequence[Decision] = ()) -> Message:
        """Apply ``decisions`` at ``now``, advance to the next instant with events, return them.

        Each decision is validated before it changes anything, so a bad one raises
        :class:`SimulationError` and leaves the engine as it was after the previous decision.
        """
        if self._ended or not self._started:
            self._check_running()
        # _apply and _next_message inlined (one message per call of the decision loop: four
        # calls less each), switches tested first (the commonest decision).
        for decision in decisions:
            kind = type(decision)
            # kind is the decision's exact type, which the checker does not carry over to it
            if kind is SetResourceState:
                self._set_state(decision)  # type: ignore[arg-type]
            elif kind is ExecuteJob:
                self._execute(decision)  # type: ignore[arg-type]
            else:
                self._apply((decision,))
        if self._dirty:
            self._repace()
        when = self._next_time()
        if when == math.inf:
            return self._next_message()  # the end, or a deadlock to explain
        if when > self._now:
            self._energy += self._power * (when - self._now)
            self._now = when
        events = self._collect(when)
        self.nb_messages += 1
        self.nb_events += len(events)
        return Message(when, events)

    def apply(self, decisions: Sequence[Decision]) -> None:
        """Apply ``decisions`` at ``now`` without advancing; ``proceed(())`` advances later.

        For a bridge that hands one instant's events out in several messages (Batsim's
        timing, ``hdeeprm.protocol.batsim_timing``): the replies to the first ones take
        effect at once, as in :meth:`proceed`.
        """
        self._check_running()
        self._apply(decisions)

    def next_time(self) -> float:
        """When the next instant with events is: ``now`` while events of ``now`` remain,
        ``inf`` when nothing is scheduled. For bridges that interleave their own instants
        (a scheduler's delayed decisions, ``hdeeprm.protocol.batsim_timing``)."""
        if self._dirty:
            self._repace()
        return self._next_time()

    def apply_at(self, when: float, decisions: Sequence[Decision]) -> None:
        """Advance to ``when`` and apply ``decisions`` there (``now`` if ``when`` has passed).

        Nothing may happen in between: ``when`` must not be after :meth:`next_time`.
        """
        self._check_running()
        if when > self._now:
            if self.next_time() < when:
                raise SimulationError(
                    f"apply_at({when!r}): events at {self._next_time()!r} come first"
                )
            self._energy += self._power * (when - self._now)
            self._now = when
        self._apply(decisions)

    def proceed_timed(
        self, decisions: Sequence[tuple[float, Decision]], ready_at: float
    ) -> Message:
        """Batsim's scheduling delays: apply each ``(timestamp, decision)`` at its timestamp
        (or now, if that has passed) and return the next message no earlier than
        ``ready_at``, the reply's ``now``.

        As Batsim 4.2.1 does, events that happen while the scheduler "thinks" (up to and
        including ``ready_at``) are held back and sent together at ``ready_at``, each with its
        own timestamp; without such events the next message is the next instant with events.
        Timestamps must not decrease and ``ready_at`` must not precede them.
        """
        self._check_running()
        held: list[Event] = []
        for when, decision in decisions:
            if when > self._now:
                self._hold_until(when, held)
            self._apply((decision,))
        if ready_at > self._now:
            self._hold_until(ready_at, held)
        if not held:
            return self._next_message()
        if self._dirty:
            self._repace()
        if self._next_time() == self._now:  # events caused by the last decisions
            held += self._collect(self._now)
        return self._message(self._now, held)

    def _hold_until(self, until: float, held: list[Event]) -> None:
        """Advance the clock to ``until``, collecting every event up to it into ``held``."""
        while True:
            if self._dirty:
                self._repace()
            when = self._next_time()
            if when > until:
                break
            if when > self._now:
                self._energy += self._power * (when - self._now)
                self._now = when
            held += self._collect(when)
        self._energy += self._power * (until - self._now)
        self._now = until

    def _check_running(self) -> None:
        if not self._started:
            raise SimulationError("proceed() before start()")
        if self._ended:
            raise SimulationError("the simulation has ended (SIMULATION_ENDS was sent)")

    def _apply(self, decisions: Sequence[Decision]) -> None:
        for decision in decisions:
            if type(decision) is ExecuteJob:
                self._execute(decision)
            elif type(decision) is SetResourceState:
                self._set_state(decision)
            elif type(decision) is CallMeLater:
                self._call_me_later(decision)
            elif type(decision) is RejectJob:
                self._reject(decision)
            elif type(decision) is KillJobs:
                self._kill(decision)
            else:
                raise SimulationError(f"unknown decision {decision!r}")

    def _next_message(self) -> Message:
        if self._dirty:
            self._repace()
        when = self._next_time()
        if when == math.inf:
            if self._is_over():
                self._ended = True
                return self._message(self._now, [Event(self._now, SIMULATION_ENDS, {})])
            raise SimulationError(self._deadlock_reason())
        if when > self._now:
            self._energy += self._power * (when - self._now)
            self._now = when
        return self._message(when, self._collect(when))

    # --- time ---------------------------------------------------------------------------------
    def _message(self, when: float, events: list[Event]) -> Message:
        self.nb_messages += 1
        self.nb_events += len(events)
        return Message(when, events)

    def _next_time(self) -> float:
        if self._imm_completed or self._imm_killed or self._imm_rsc:
            return self._now
        if not self._nomore_sent and self._sub_idx == len(self._sub_times):
            return self._now
        heap = self._heap
        submitted = self._submitted
        while heap:  # drop stale entries on top (_is_stale inlined: a test per message)
            entry = heap[0]
            prio = entry[1]
            if prio == _CALL:
                break
            job = submitted[entry[3]]  # type: ignore[index]  # a job's entry: its int index
            if job.state is RUNNING and (prio != _COMPLETE or job._version == entry[4]):
                break
            heapq.heappop(heap)
        when = heap[0][0] if heap else math.inf
        if self._sub_idx < len(self._sub_times):
            when = min(when, self._sub_times[self._sub_idx])
        return when

    def _push(self, when: float, prio: int, payload: float | int, version: int) -> None:
        """Schedule an event: ``payload`` is a job's submission index (completion, walltime)
        or the time a call was asked for."""
        self._seq += 1
        heapq.heappush(self._heap, (when, prio, self._seq, payload, version))

    def _is_over(self) -> bool:
        return (
            self._nomore_sent
            and self._nb_waiting == 0
            and self._nb_running == 0
            and self._nb_calls == 0
        )

    def _deadlock_reason(self, named: int = 3) -> str:
        """Why the simulation cannot go on, naming the first waiting and stalled jobs, what
        they ask for and why they do not run (called once, when it stops)."""
        stalled_jobs = sorted(
            {job for job in self._host_job if job is not None and job._rate <= 0.0},
            key=lambda job: job._index,
        )
        free = sum(1 for job in self._host_job if job is None)
        details = []
        waiting = (job for job in self._submitted if job.state is SUBMITTED)
        for job in itertools.islice(waiting, named):
            if job.res > self._n:
                why = f"more hosts than the platform's {self._n}: reject it"
            elif job.res > free:
                why = f"only {free} of {self._n} host(s) are free and nothing running will end"
            else:
                why = f"{free} host(s) are free: the decision system never started it"
            details.append(f"job {job.id} waits, asking for {job.res} host(s) ({why})")
        speed = self._cur_speed
        for job in stalled_jobs[:named]:
            hosts = [h for h in job.alloc if speed[h] <= 0.0][:MAX_HOSTS_NAMED]
            pstates = ", ".join(f"{h} (P{self._pstate[h]})" for h in hosts)
            details.append(
                f"job {job.id} runs on host(s) at speed 0: {pstates} (set a computing P-state)"
            )
        return (
            f"deadlock at t={self._now:g}: nothing is scheduled any more, but "
            f"{self._nb_waiting} submitted job(s) still wait for EXECUTE_JOB or REJECT_JOB and "
            f"{len(stalled_jobs)} running job(s) are stalled on zero-speed hosts; the decision "
            "system must start, reject or kill them, or ask for a CALL_ME_LATER"
            + "".join(f"; {d}" for d in details)
        )

    def _collect(self, when: float) -> list[Event]:
        completed = self._imm_completed
        killed = self._imm_killed
        changed = self._imm_rsc
        self._imm_completed, self._imm_killed, self._imm_rsc = [], [], []
        calls: list[Event] = []
        heap = self._heap
        pop = heapq.heappop
        submitted = self._submitted
        while heap and heap[0][0] <= when:
            _, prio, _, payload, version = pop(heap)
            if prio == _COMPLETE:
                job = submitted[payload]  # type: ignore[index]  # a job's entry: its int index
                if job.state is RUNNING and job._version == version:
                    completed.append(self._end(job, COMPLETED_SUCCESSFULLY))
            elif prio == _WALLTIME:
                job = submitted[payload]  # type: ignore[index]  # a job's entry: its int index
                if job.state is RUNNING:
                    completed.append(self._end(job, COMPLETED_WALLTIME_REACHED))
            else:
                self._nb_calls -= 1
                calls.append(Event(when, REQUESTED_CALL, {"requested_at": payload}))
        events = completed
        if killed:
            events += killed
        if changed:
            events += changed
        times = self._sub_times
        nsubs = len(times)
        idx = self._sub_idx
        if idx < nsubs and times[idx] <= when:
            jobs = self.jobs
            specs, owners, submitted = self._sub_specs, self._sub_owners, self._submitted
            if self.energy_first_submission is None:
                self.energy_first_submission = self._energy
            while idx < nsubs and times[idx] <= when:
                spec = specs[idx]
                wl = owners[idx]
                job = SimJob(wl.name, spec, wl.profiles[spec.profile])
                job.state = SUBMITTED
                job._index = idx
                submitted.append(job)
                idx += 1
                jobs[job.id] = job
                events.append(Event(when, JOB_SUBMITTED, {"job_id": job.id, "job": job}))
            self._nb_waiting += idx - self._sub_idx
            self._sub_idx = idx
        if idx == nsubs and not self._nomore_sent:
            self._nomore_sent = True
            events.append(Event(when, NO_MORE_STATIC_JOB_TO_SUBMIT, {}))
        if calls:
            events += calls
        return events

    # --- job life cycle -------------------------------------------------------------------------
    def _job(self, job_id: str, verb: str) -> SimJob:
        job = self.jobs.get(job_id)
        if job is None:
            raise SimulationError(
                f"{verb}: unknown job {job_id!r} (not in any workload, or not submitted yet; "
                "ids are 'workload!job')"
            )
        return job

    def _execute(self, decision: ExecuteJob) -> None:
        job = self._job(decision.job_id, "EXECUTE_JOB")
        if job.state is not SUBMITTED:
            raise SimulationError(
                f"EXECUTE_JOB: job {job.id!r} is {job.state}; only a submitted job that has "
                "not started yet can be executed"
            )
        alloc = decision.alloc
        hosts: tuple[int, ...]
        checked = None
        if self._kernels is not None and type(alloc) is not HostIds:
            # The conversion and the checks below, compiled: the sorted ids when all is well,
            # else None (then the Python below converts, or names the faulty host).
            checked = self._kernels.free_alloc(alloc, self._host_job)
        if checked is not None:
            alloc = hosts = checked
        else:
            if type(alloc) is HostIds:  # ascending ints, no duplicates: nothing to convert
                hosts = alloc
            else:
                alloc = _host_ids(alloc, "EXECUTE_JOB")
                # Batsim allocations are sets (interval sets on the wire): ascending ids, so
                # that the float sums over a job's hosts do not depend on the order a decision
                # listed them in.
                hosts = tuple(sorted(alloc))
            if not alloc:
                raise SimulationError(f"EXECUTE_JOB: empty allocation for job {job.id!r}")
            host_job = self._host_job
            n = self._n
            # The checks in C (range from the ends, busy hosts, duplicates); the loop below
            # only finds which host to name when one fails.
            if hosts[0] < 0 or hosts[-1] >= n or any(map(host_job.__getitem__, hosts)):
                for host in alloc:
                    if not 0 <= host < n:
                        raise SimulationError(
                            f"EXECUTE_JOB: job {job.id!r}: host {host} does not exist "
                            f"(resource ids are 0..{n - 1})"
                        )
                    other = host_job[host]
                    if other is not None:
                        raise SimulationError(
                            f"EXECUTE_JOB: job {job.id!r}: host {host} is busy running job "
                            f"{other.id!r}"
                        )
            if type(alloc) is not HostIds and len(set(hosts)) != len(hosts):
                raise SimulationError(f"EXECUTE_JOB: job {job.id!r}: duplicate hosts in {alloc}")
        if (
            self._strict
            and len(alloc) != job.spec.res
            and job.profile.type != "parallel_homogeneous_total"
        ):
            raise SimulationError(
                f"EXECUTE_JOB: job {job.id!r} requested {job.spec.res} hosts, got {len(alloc)}"
            )
        if decision.gpus:
            self._take_gpus(job, decision.gpus)
        self._start(job, hosts)

    def _take_gpus(self, job: SimJob, gpus: Sequence[int]) -> None:
        ids = tuple(sorted(_host_ids(gpus, "EXECUTE_JOB")))
        if len(set(ids)) != len(ids):
            raise SimulationError(f"EXECUTE_JOB: job {job.id!r}: duplicate GPUs in {ids}")
        for gpu in ids:
            other = self._gpu_job.get(gpu)
            if other is not None:
                raise SimulationError(
                    f"EXECUTE_JOB: job {job.id!r}: GPU {gpu} is busy running job {other.id!r}"
                )
        for gpu in ids:
            self._gpu_job[gpu] = job
        job.gpus = ids

    def _start(self, job: SimJob, alloc: tuple[int, ...]) -> None:
        now = self._now
        host_job = self._host_job
        cur_full = self._cur_full
        cur_idle = self._cur_idle
        host_energy = self._host_energy
        host_since = self._host_since
        state_since = self._state_since
        full_sum = 0.0
        delta = 0.0
        idle_closed = 0.0
        slowest: float | None = None
        sums: Any = NotImplemented
        if self._kernels is not None:  # the loop below, compiled; the slowest speed too
            speeds = None if job._delay else self._cur_speed
            sums = self._kernels.start_hosts(
                job, alloc, now, host_job, cur_idle, cur_full, host_energy, host_since,
                state_since, self._host_energies, speeds,
            )  # fmt: skip
        if sums is not NotImplemented:
            full_sum, delta, idle_closed, slowest = sums
        elif self._host_energies:
            for host in alloc:
                host_job[host] = job
                idle = cur_idle[host]
                full = cur_full[host]
                since = host_since[host]
                # A host switched at this very instant (a decision system sets a job's
                # P-states just before starting it) has nothing to add: idle x 0.0 adds +0.0.
                if since != now:
                    host_energy[host] += idle * (now - since)
                    host_since[host] = now
                idle_closed += now - state_since[host]
                state_since[host] = now
                full_sum += full
                delta += full - idle
        else:  # the same sums, without the per-host energies
            for host in alloc:
                host_job[host] = job
                full = cur_full[host]
                idle_closed += now - state_since[host]
                state_since[host] = now
                full_sum += full
                delta += full - cur_idle[host]
        self._power += delta
        self.time_idle += idle_closed
        self._nb_computing += len(alloc)
        self._nb_waiting -= 1
        self._nb_running += 1
        job.state = RUNNING
        job.start_time = now
        job.alloc = alloc
        job._power = full_sum
        job._e_last = now
        profile = job.profile
        if job._delay:
            work = float(profile.delay or 0.0)
            rate = 1.0
        else:
            work = float(profile.cpu or 0.0)
            if profile.type == "parallel_homogeneous_total":
                work /= len(alloc)
            speed = self._cur_speed
            rate = slowest if slowest is not None else min(map(speed.__getitem__, alloc))
        model = self._service_time
        if model is not None and job.spec.extra:
            factor = model.factor(job.spec.workload_type, alloc, job.gpus)
            job.service_factor = factor
            work *= factor
        job._total = work
        job._work = work
        job._rate = rate
        job._last = now
        walltime = job.spec.walltime
        if walltime is not None:
            if not job._delay:
                self._push(now + walltime, _WALLTIME, job._index, 0)
            elif not work < walltime:
                # Batsim compares the durations themselves (``delay < walltime``), not the end
                # times, which rounding could make equal: a delay job's fate is known now.
                self._push(now + walltime, _WALLTIME, job._index, 0)
                work = math.inf
        if work <= 0.0:
            self._push(now, _COMPLETE, job._index, job._version)
        elif rate > 0.0 and work != math.inf:
            self._push(now + work / rate, _COMPLETE, job._index, job._version)
        elif rate <= 0.0 and not job._delay:
            self._warn_stalled(job)
        if self._trace:
            self._energy_rows.extend((now, self._energy, KIND_START, self._wattmin))
            computing = self._nb_computing
            self._machine_rows.extend((now, self._n - computing, computing))

    def _warn_stalled(self, job: SimJob) -> None:
        """A computation started on a host whose current P-state has speed 0 never progresses
        until the host is switched to a computing P-state: say so (third-party schedulers
        that do not manage P-states hit this on hdeeprm's platforms, whose cores start in P3;
        see ``hdeeprm-sim --initial-pstate``)."""
        if self._warned_stalls >= MAX_STALL_WARNINGS:
            return
        self._warned_stalls += 1
        speed = self._cur_speed
        stalled = [h for h in job.alloc if speed[h] <= 0.0]
        hosts = self.platform.hosts
        names = ", ".join(
            f"{h} ({hosts[h].name}, P{self._pstate[h]})" for h in stalled[:MAX_HOSTS_NAMED]
        )
        more = len(stalled) - MAX_HOSTS_NAMED
        LOG.warning(
            "t=%s: job %s started on %d host(s) whose current P-state has speed 0: %s%s; it "
            "will not progress until they are set to a computing P-state (SET_RESOURCE_STATE), "
            "or start the hosts in one (hdeeprm-sim --initial-pstate 0)%s",
            repr(self._now),
            job.id,
            len(stalled),
            names,
            f" and {more} more" if more > 0 else "",
            " [no further such warnings]" if self._warned_stalls == MAX_STALL_WARNINGS else "",
        )

    def _end(self, job: SimJob, state: str) -> Event:
        """Finish a running job now in ``state``; return its ``JOB_COMPLETED`` event."""
        now = self._now
        host_job = self._host_job
        cur_full = self._cur_full
        cur_idle = self._cur_idle
        host_energy = self._host_energy
        host_since = self._host_since
        state_since = self._state_since
        delta = 0.0
        busy_closed = 0.0
        # Every host of the job has been computing since the job started (its state_since
        # is the start time itself): the span each closes is this one.
        busy = now - job.start_time  # type: ignore[operator]  # a running job has started
        if job.gpus:
            for gpu in job.gpus:
                del self._gpu_job[gpu]
        sums: Any = NotImplemented
        if self._kernels is not None:  # the loop below, compiled
            sums = self._kernels.end_hosts(
                job.alloc, now, busy, host_job, cur_idle, cur_full, host_energy, host_since,
                state_since, self._host_energies,
            )  # fmt: skip
        if sums is not NotImplemented:
            delta, busy_closed = sums
        elif self._host_energies:
            for host in job.alloc:
                host_job[host] = None
                full = cur_full[host]
                host_energy[host] += full * (now - host_since[host])
                host_since[host] = now
                busy_closed += busy
                state_since[host] = now
                delta += full - cur_idle[host]
        else:  # the same sums, without the per-host energies
            for host in job.alloc:
                host_job[host] = None
                busy_closed += busy
                state_since[host] = now
                delta += cur_full[host] - cur_idle[host]
        self._power -= delta
        self.time_computing += busy_closed
        self._nb_computing -= len(job.alloc)
        self._nb_running -= 1
        if state != COMPLETED_SUCCESSFULLY:
            job._work -= job._rate * (now - job._last)
            job._last = now
        else:
            job._work = 0.0
        job.energy += job._power * (now - job._e_last)
        job._e_last = now
        job._version += 1
        job._paces = None
        job.state = state
        job.finish_time = now
        self.finished_jobs.append(job)
        self.energy_last_completion = self._energy
        if self._trace:
            self._energy_rows.extend((now, self._energy, KIND_END, self._wattmin))
            computing = self._nb_computing
            self._machine_rows.extend((now, self._n - computing, computing))
        return Event(
            now,
            JOB_COMPLETED,
            {"job_id": job.id, "job": job, "job_state": state, "alloc": job.alloc},
        )

    def _repace(self) -> None:
        """Recompute the pace of every job whose hosts changed speed at this instant."""
        now = self._now
        speed = self._cur_speed
        for job, rate in self._dirty.items():
            if job.state is not RUNNING:
                continue
            if rate == _RESCAN:
                paces = job._paces
                if paces is not None:
                    rate = min(paces)
                elif len(job.alloc) < PACES_FROM:
                    rate = min(map(speed.__getitem__, job.alloc))
                else:
                    paces = job._paces = Counter(map(speed.__getitem__, job.alloc))
                    rate = min(paces)
            if rate == job._rate:
                continue
            work = job._work - job._rate * (now - job._last)
            job._work = work if work > 0.0 else 0.0
            job._last = now
            job._rate = rate
            job._version += 1
            if rate > 0.0:
                self._push(now + job._work / rate, _COMPLETE, job._index, job._version)
        self._dirty.clear()

    def _reject(self, decision: RejectJob) -> None:
        job = self._job(decision.job_id, "REJECT_JOB")
        if job.state is not SUBMITTED:
            raise SimulationError(
                f"REJECT_JOB: job {job.id!r} is {job.state}; only a submitted job that has "
                "not started can be rejected"
            )
        job.state = REJECTED
        self._nb_waiting -= 1
        self.finished_jobs.append(job)

    def _kill(self, decision: KillJobs) -> None:
        targets: list[SimJob] = []
        seen: set[str] = set()
        for job_id in decision.job_ids:
            job = self._job(job_id, "KILL_JOB")
            if job.state is SUBMITTED or job.state is NOT_SUBMITTED:
                raise SimulationError(
                    f"KILL_JOB: job {job.id!r} is {job.state} (not started); only running or "
                    "finished jobs can be killed; use REJECT_JOB for a waiting job"
                )
            if not job._kill_requested and job.id not in seen:
                seen.add(job.id)
                targets.append(job)
        if not targets:
            return
        now = self._now
        progress: dict[str, float] = {}
        really: list[SimJob] = []
        for job in targets:
            job._kill_requested = True
            if job.state is RUNNING:
                progress[job.id] = job.progress(now)
                self._imm_completed.append(self._end(job, COMPLETED_KILLED))
                really.append(job)
        self._imm_killed.append(
            Event(
                now,
                JOB_KILLED,
                {
                    "job_ids": tuple(job.id for job in targets),
                    "jobs": tuple(really),
                    "job_progress": progress,
                },
            )
        )

    # --- other decisions --------------------------------------------------------------------------
    def _set_state(self, decision: SetResourceState) -> None:
        hosts = decision.resources
        if type(hosts) is not HostIds:  # else ascending ints already
            hosts = tuple(sorted(_host_ids(hosts, "SET_RESOURCE_STATE")))  # a set, as on the wire
        if not hosts:
            raise SimulationError("SET_RESOURCE_STATE: empty set of resources")
        state = decision.state
        if type(state) is not int:
            try:
                state = operator.index(state)
            except TypeError:
                raise SimulationError(
                    f"SET_RESOURCE_STATE: P-state {decision.state!r} is not an integer"
                ) from None
        # Fast path: a state every host has (its tables are cached) and ids in range need no
        # per-host check.
        tables: _StateTable | None = self._state_tables.get(state)
        if tables is None or hosts[0] < 0 or hosts[-1] >= self._n:
            tables = self._checked_tables(state, hosts)
        idle_s, full_s, speed_s = tables
        now = self._now
        trace = self._trace
        host_job = self._host_job
        pstate = self._pstate
        cur_speed = self._cur_speed
        cur_idle = self._cur_idle
        cur_full = self._cur_full
        host_energy = self._host_energy
        host_since = self._host_since
        keep = self._host_energies
        dirty = self._dirty
        sums: Any = NotImplemented
        if self._kernels is not None and type(idle_s) is list:  # the loop below, compiled
            sums = self._kernels.switch_hosts(
                hosts, state, now, idle_s, full_s, speed_s, pstate, cur_speed, cur_idle,
                cur_full, host_job, host_energy, host_since, dirty, keep, trace,
            )  # fmt: skip
        if sums is not NotImplemented:
            d_power, d_wattmin = sums
        else:
            d_power = 0.0
            d_wattmin = 0.0
            # The float operations of one host at a time, in host order (results bit for bit).
            # Without a trace nothing reads wattmin (only the energy rows do): not summed; without
            # per-host energies (keep), nothing is closed per host.
            for host in hosts:
                old_idle = cur_idle[host]
                new_idle = idle_s[host]
                job = host_job[host]
                if job is None:
                    # An idle host: power and wattmin both change by its idle watts. One that
                    # changed at this very instant (its job just ended) adds idle x 0.0 = +0.0.
                    if keep:
                        since = host_since[host]
                        if since != now:
                            host_energy[host] += old_idle * (now - since)
                        host_since[host] = now
                    change = new_idle - old_idle
                    d_power += change
                    if trace:
                        d_wattmin += change
                    cur_full[host] = full_s[host]
                else:
                    old_p = cur_full[host]
                    new_full = full_s[host]
                    if job._e_last != now:  # once per job and instant (later: adds 0 J)
                        job.energy += job._power * (now - job._e_last)
                        job._e_last = now
                    job._power += new_full - old_p
                    new_speed = speed_s[host]
                    old_speed = cur_speed[host]
                    if new_speed != old_speed and not job._delay:
                        paces = job._paces
                        if paces is not None:  # its hosts by speed: move this one
                            left = paces[old_speed] - 1
                            if left:
                                paces[old_speed] = left
                            else:
                                del paces[old_speed]
                            paces[new_speed] = paces.get(new_speed, 0) + 1
                        # The job's pace is the slowest of its hosts: while no host that may be
                        # the slowest speeds up, the slowest speed so far is the new pace.
                        slowest = dirty.get(job, job._rate)
                        if slowest != _RESCAN:
                            if new_speed < old_speed:
                                if new_speed < slowest:
                                    slowest = new_speed
                            elif old_speed <= slowest:
                                slowest = _RESCAN
                        dirty[job] = slowest
                    if keep:
                        host_energy[host] += old_p * (now - host_since[host])
                        host_since[host] = now
                    d_power += new_full - old_p
                    if trace:
                        d_wattmin += new_idle - old_idle
                    cur_full[host] = new_full
                pstate[host] = state
                cur_speed[host] = speed_s[host]
                cur_idle[host] = new_idle
        self._power += d_power
        self.nb_grouped_switches += 1
        self.nb_machine_switches += len(hosts)
        if trace:
            # Batsim logs an energy row before switching (with the old wattmin) and one after
            # (the new wattmin, when the last machine of the request has switched); the two
            # P-state rows (transition, then the new state) share one copy of the host ids.
            wattmin = self._wattmin
            energy = self._energy
            self._wattmin = new_wattmin = wattmin + d_wattmin
            self._energy_rows.extend(
                (now, energy, KIND_PSTATE, wattmin, now, energy, KIND_PSTATE, new_wattmin)
            )
            ids = self._pstate_hosts
            first = len(ids)
            ids.extend(hosts)
            end = len(ids)
            self._pstate_rows.extend((now, PSTATE_TRANSITION, first, end, now, state, first, end))
            computing = self._nb_computing
            self._machine_rows.extend((now, self._n - computing, computing))
        if self._rsc_events:
            self._imm_rsc.append(
                Event(now, RESOURCE_STATE_CHANGED, {"resources": hosts, "state": state})
            )

    def _checked_tables(self, state: int, hosts: tuple[int, ...]) -> _StateTable:
        """Check that every host of a ``SET_RESOURCE_STATE`` exists and has P-state ``state``;
        return its (idle W, full W, speed) tables (see :meth:`_state_table`)."""
        n = self._n
        speeds = self._speeds
        for host in hosts:
            if not 0 <= host < n:
                raise SimulationError(
                    f"SET_RESOURCE_STATE: host {host!r} does not exist "
                    f"(resource ids are 0..{n - 1})"
                )
            if not 0 <= state < len(speeds[host]):
                raise SimulationError(
                    f"SET_RESOURCE_STATE: unknown P-state {state} for host {host} "
                    f"({self.platform.hosts[host].name!r} has P-states 0..{len(speeds[host]) - 1})"
                )
        return self._state_table(state, hosts)

    def _state_table(self, state: int, hosts: tuple[int, ...]) -> _StateTable:
        """Each host's (idle W, full W, speed) in ``state``: cached lists when every host has
        the state, else mappings over ``hosts`` only (already checked to have it)."""
        if 0 <= state < self._min_pstates:
            table = (
                [w[state] for w in self._idle_w],
                [w[state] for w in self._full_w],
                [sp[state] for sp in self._speeds],
            )
            self._state_tables[state] = table
            return table
        return (
            {h: self._idle_w[h][state] for h in hosts},
            {h: self._full_w[h][state] for h in hosts},
            {h: self._speeds[h][state] for h in hosts},
        )

    def _call_me_later(self, decision: CallMeLater) -> None:
        when = decision.timestamp
        if not isinstance(when, (int, float)) or not math.isfinite(when):
            raise SimulationError(f"CALL_ME_LATER: timestamp {when!r} is not a finite number")
        if when <= self._now:
            raise SimulationError(
                f"CALL_ME_LATER: asked to be called at t={when!r}, which is not after "
                f"now (t={self._now!r}); the time asked for must be in the future"
            )
        self._nb_calls += 1
        self._push(float(when), _CALL, float(when), 0)
