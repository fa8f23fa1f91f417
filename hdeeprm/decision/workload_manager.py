"""The workload manager: the decision system the simulator talks to (thesis 3.1.4, 4.1.4).

It turns simulator messages into state changes and, at decision points, applies an action
(a job policy and a core policy) until the chosen job cannot be placed:

* ``SIMULATION_BEGINS`` (re)builds the resource state;
* ``JOB_SUBMITTED`` enqueues the job, or rejects it if it can never run on this platform;
* ``JOB_COMPLETED`` (finished, walltime reached or killed) releases its cores and recomputes
  P-states;
* ``REQUESTED_CALL`` (the wake-up a void action may ask for) re-opens decisions;
* ``RESOURCE_STATE_CHANGED`` needs nothing.

A message is a *decision point* when the queue is not empty and something changed: new jobs,
freed cores or a requested call. Without a ``scheduler`` there is no backfilling: the job the
policy chooses blocks the queue until it fits; with one (:mod:`hdeeprm.scheduling`), it
chooses the jobs and the action's core policy places them.

Two ways to drive it:

* :meth:`WorkloadManager.handle` does everything for the in-process engine loop, asking its
  agent (``observe``/``decide``) at decision points;
* :meth:`WorkloadManager.ingest` (is this a decision point?), :meth:`WorkloadManager.act` and
  :meth:`WorkloadManager.flush` let a Gymnasium environment stop at decision points and hand the
  choice to a learning agent.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, cast

import numpy as np

from hdeeprm.decision.actions import LOCALITY_POLICIES, Action, ActionSpace
from hdeeprm.decision.fit import NodeFloorFit
from hdeeprm.decision.fixed_pair import FixedPair
from hdeeprm.decision.gpus import GpuPool, LocalityAllocator
from hdeeprm.decision.job_queue import FINISHED, REJECTED, RUNNING, JobQueue, JobRecord
from hdeeprm.decision.oversubscription import OverSubscriptionRecord
from hdeeprm.decision.resource_manager import ResourceManager
from hdeeprm.decision.resources import INSIGHTS, MEM_TOL, CorePool
from hdeeprm.errors import InputError, SimulationError
from hdeeprm.logs import WarningTally
from hdeeprm.platform.hierarchy import Platform
from hdeeprm.scheduling.jobs import StartJob
from hdeeprm.simulation import events as ev
from hdeeprm.simulation.engine import SimJob
from hdeeprm.simulation.events import (
    CallMeLater,
    Decision,
    ExecuteJob,
    HostIds,
    Message,
    RejectJob,
)

LOG = logging.getLogger("hdeeprm.decision")

# Event types read as module globals in the per-message loop (one lookup, not two).
_JOB_SUBMITTED, _JOB_COMPLETED, _REQUESTED_CALL, _RESOURCE_STATE_CHANGED = (
    ev.JOB_SUBMITTED,
    ev.JOB_COMPLETED,
    ev.REQUESTED_CALL,
    ev.RESOURCE_STATE_CHANGED,
)


class StartHook(StartJob, Protocol):
    """The workload manager's :class:`StartJob`, with two shortcuts a scheduler may use:
    ``capacity`` is :meth:`WorkloadManager.fit_capacity`; ``counted(record)`` places a job of
    no GPUs that ``capacity`` just admitted, without asking again whether it fits."""

    capacity: Callable[[float], int]
    counted: Callable[[JobRecord], bool]


class JobListener(Protocol):
    """Told about every accepted submission, start and completion (e.g. an environment's
    reward bookkeeping): :attr:`WorkloadManager.job_listeners`."""

    def submitted(self, record: JobRecord) -> None: ...

    def started(self, record: JobRecord) -> None: ...

    def completed(self, record: JobRecord) -> None: ...


class SchedulingStrategy(Protocol):
    """A queue scheduler the workload manager delegates job selection to (e.g.
    :class:`hdeeprm.scheduling.BackfillScheduler`): told of submissions and completions, asked
    at decision points to start jobs through ``start`` (:class:`StartHook`)."""

    def reset(self) -> None: ...

    def submitted(self, record: JobRecord, now: float) -> None: ...

    def completed(self, record: JobRecord, now: float) -> None: ...

    def schedule(self, now: float, free: Callable[[], int], start: StartJob) -> None: ...


class DecidingAgent(Protocol):
    """What :meth:`WorkloadManager.handle` needs from an agent (thesis verbs)."""

    def observe(self, env: Any) -> Any: ...

    def decide(self, observation: Any) -> int: ...


def _number(value: Any, job_id: str, name: str) -> float:
    if isinstance(value, bool):
        value = None
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if math.isnan(number) or number < 0:
        raise InputError(
            f"job {job_id!r}: profile field '{name}' must be a non-negative number, got {value!r}",
            where=f"profiles.{name}",
        )
    return number


def job_record(job: Any, seq: int, profiles: Mapping[str, Any] | None = None) -> JobRecord:
    """Read what the decision system may know about an engine job.

    Accepts the engine's ``SimJob`` or a :class:`~hdeeprm.workload.model.JobSpec`: it reads
    ``id``, ``subtime``, ``res``, ``walltime`` and the profile's extra fields ``req_time``,
    ``mem`` (MB per task) and ``mem_bw`` (GB/s per task). The profile is the job's ``profile``
    attribute when it is an object, else looked up by name in ``profiles``. Missing ``mem`` and
    ``mem_bw`` count as 0; a missing ``req_time`` falls back to the walltime, then infinity.
    """
    if type(job) is SimJob:
        return _sim_job_record(job, seq)
    return _plain_job_record(job, seq, profiles)


def _plain_job_record(job: Any, seq: int, profiles: Mapping[str, Any] | None = None) -> JobRecord:
    """:func:`job_record` of any job, read through ``getattr`` (the statement of what
    :func:`_sim_job_record` reads directly)."""
    spec = getattr(job, "spec", job)
    job_id = str(getattr(job, "id", None) or spec.id)
    subtime = getattr(job, "subtime", None)
    if subtime is None:
        subtime = spec.subtime
    res = getattr(job, "res", None)
    if res is None:
        res = spec.res
    profile = getattr(job, "profile", None)
    if isinstance(profile, str) or profile is None:
        profile = getattr(spec, "profile", profile)
        if isinstance(profile, str):
            profile = (profiles or {}).get(profile)
    extra = getattr(profile, "extra", None) or {}
    walltime = getattr(job, "walltime", None)
    if walltime is None:
        walltime = getattr(spec, "walltime", None)
    req_time = extra.get("req_time")
    if req_time is not None:
        req_time = _number(req_time, job_id, "req_time")
    elif walltime is not None and walltime > 0:
        req_time = float(walltime)
    else:
        req_time = math.inf
    mem = _number(extra.get("mem", 0.0), job_id, "mem")
    mem_bw = _number(extra.get("mem_bw", 0.0), job_id, "mem_bw")
    record = JobRecord(job_id, seq, float(subtime), int(res), req_time, mem, mem_bw, job)
    job_extra = getattr(spec, "extra", None)
    if job_extra:  # the optional GPU fields of the job (hdeeprm.workload.model)
        record.gpus = int(job_extra.get("gpus", 0))
        record.workload_type = job_extra.get("workload_type")
    return record


def _sim_job_record(job: SimJob, seq: int) -> JobRecord:
    """:func:`job_record` of the engine's own job (what every in-process submission is): the
    same record as :func:`_plain_job_record`, fields read directly (its profile is an object,
    never a name) and numbers already non-negative floats taken without conversion (one
    call per submitted job on a whole trace)."""
    spec = job.spec
    job_id = job.id
    extra = job.profile.extra or {}
    # A request is taken as it is when it is already a non-negative float (NaN fails the
    # comparison), else through _number's conversion and checks.
    req_time = extra.get("req_time")
    if req_time is not None:
        if type(req_time) is not float or not req_time >= 0.0:
            req_time = _number(req_time, job_id, "req_time")
    else:
        walltime = spec.walltime
        req_time = float(walltime) if walltime is not None and walltime > 0 else math.inf
    mem = extra.get("mem", 0.0)
    if type(mem) is not float or not mem >= 0.0:
        mem = _number(mem, job_id, "mem")
    mem_bw = extra.get("mem_bw", 0.0)
    if type(mem_bw) is not float or not mem_bw >= 0.0:
        mem_bw = _number(mem_bw, job_id, "mem_bw")
    record = JobRecord(job_id, seq, float(spec.subtime), int(spec.res), req_time, mem, mem_bw, job)
    job_extra = spec.extra
    if job_extra:  # the optional GPU fields of the job (hdeeprm.workload.model)
        record.gpus = int(job_extra.get("gpus", 0))
        record.workload_type = job_extra.get("workload_type")
    return record


def _may_draw_random(actions: ActionSpace, agent: Any) -> bool:
    """Whether the core pool must keep the ``random`` policy's free-core list from the start:
    not for an agent that always answers one action whose core policy is another one
    (:class:`FixedPair`, the exact class: a subclass may decide otherwise). Should such a
    manager draw anyway, the pool builds the list then."""
    if type(agent) is FixedPair:
        return actions[agent.action].core_policy == "random"
    return True


class WorkloadManager:
    """Job queue + resource manager + core pool, driven by simulator messages.

    Args:
        platform: the resource hierarchy the simulator runs.
        actions: the action space; all 36 pairs + void by default.
        agent: chooses actions in :meth:`handle` (anything with ``observe`` and ``decide``,
            e.g. :class:`FixedPair`); not needed when driving with
            :meth:`ingest` / :meth:`act`.
        seed: seeds the ``random`` job and core policies (independent streams).
        profiles: profiles by name, for engines whose jobs name their profile instead of
            carrying it.
        void_wakeup: seconds after which a void action asks to be called again when nothing
            else could wake the decision system (no running job, no job left to submit).
        scheduler: a queue scheduler (backfilling, :mod:`hdeeprm.scheduling`) that chooses
            which jobs start at a decision point; the action's core policy still places them
            and its job policy is not used. ``None``: the action's job policy picks jobs until
            one does not fit (no backfilling).
        log_detail: log every repeated warning (each over-subscription start and end, each
            rejection) instead of the first one and a summary at the end of the simulation.
    """

    #: ``RESOURCE_STATE_CHANGED`` needs nothing (P-states are the manager's own), so the
    #: in-process loop (:func:`hdeeprm.simulation.run`) does not send them.
    wants_state_changes = False

    def __init__(
        self,
        platform: Platform,
        actions: ActionSpace | None = None,
        agent: DecidingAgent | None = None,
        *,
        seed: int = 0,
        profiles: Mapping[str, Any] | None = None,
        void_wakeup: float = 1.0,
        scheduler: SchedulingStrategy | None = None,
        log_detail: bool = False,
    ) -> None:
        if void_wakeup <= 0:
            raise ValueError("void_wakeup must be positive")
        self.platform = platform
        self.actions = actions if actions is not None else ActionSpace()
        self.agent = agent
        self.seed = seed
        self.profiles = profiles
        self.void_wakeup = float(void_wakeup)
        self.scheduler = scheduler
        self.pool = CorePool(
            platform, log_detail=log_detail, free_order=_may_draw_random(self.actions, agent)
        )
        self._rejections = WarningTally(
            LOG,
            "jobs rejected",
            "t=%.6f job %s rejected: %d task(s) of %.3f MB can never fit on this platform "
            "(%d cores, largest node %.3f MB)",
            detail=log_detail,
        )
        job_rng, core_rng = self._streams(seed)
        self.job_queue = JobQueue(job_rng)
        #: The scheduler's list of queued jobs (the same object for the manager's lifetime:
        #: the scheduler clears it in place), read directly on the per-message path.
        self._queued = self.job_queue.jobs
        #: The actions by index (a tuple: no method call per decision).
        self._action_list = tuple(self.actions)
        self.resource_manager = ResourceManager(self.pool, core_rng)
        self._floor_fit = NodeFloorFit(self.pool)
        #: GPUs (their own structure; empty on GPU-less platforms) and the allocator of jobs
        #: that need GPUs or ask for a locality policy.
        self.gpu_pool = GpuPool(platform)
        self.locality = LocalityAllocator(self.pool, self.gpu_pool)
        self._node_slots = [
            (len(cores), capacity)
            for cores, capacity in zip(self.pool.node_cores, self.pool.node_capacity)
        ]
        self._max_node_mem = max(self.pool.node_capacity, default=0.0)
        #: Tasks up to this size fit on every core of every node at once (fast accept, while
        #: no running task needs more).
        self._mem_every_core = min(
            (capacity / cores for cores, capacity in self._node_slots if cores),
            default=0.0,
        )
        #: Objects told about every accepted submission (``submitted(record)``), start
        #: (``started(record)``) and completion (``completed(record)``), e.g. an environment's
        #: reward bookkeeping; kept across resets.
        self.job_listeners: list[JobListener] = []
        #: A queue scheduler's ``free`` and ``start`` per core policy (:meth:`_delegate`),
        #: and the list ``start`` appends the jobs it started to.
        self._hooks: dict[str, tuple[Callable[[], int], StartHook]] = {}
        self._starting: list[JobRecord] = []
        self._mask_groups: list[tuple[str | None, np.ndarray]] | None = None
        #: Action masks by the bits of their valid job policy groups (built on first use).
        self._masks: dict[int, np.ndarray] = {}
        self._void_bits = 0
        self._all_bits = 0
        self._reset_counters()

    # --- state ------------------------------------------------------------------------
    def _reset_counters(self) -> None:
        self.now = 0.0
        #: Running jobs by id.
        self.running: dict[str, JobRecord] = {}
        #: Running jobs whose tasks need more memory than a node's per-core share (while there
        #: is none, every free core has at least that share free: the fits_now fast accept).
        self._big_running = 0
        self.nb_submitted = 0
        self.nb_started = 0
        self.nb_completed = 0
        #: Ids of the jobs rejected at submission because they can never run.
        self.rejected: list[str] = []
        #: Decision points at which an action was applied.
        self.nb_decisions = 0
        #: How many times each action (by index) was applied.
        self.action_counts: list[int] = [0] * len(self.actions)
        self.no_more_jobs = False
        self.ended = False
        self._pending: list[Decision] = []
        self._changed = False
        self._wakeup_at: float | None = None
        self._can_fit_cache: dict[tuple[int, float], bool] = {}
        self._rejections.reset()

    @staticmethod
    def _streams(seed: int) -> tuple[np.random.Generator, np.random.Generator]:
        """Independent generators for the random job and core policies."""
        job_seed, core_seed = np.random.SeedSequence(seed).spawn(2)
        return np.random.default_rng(job_seed), np.random.default_rng(core_seed)

    def reset(self, seed: int | None = None) -> None:
        """Back to the start of a simulation: empty queue, idle platform, zeroed counters.

        With ``seed``, the random policies restart from that seed (an environment's
        ``reset(seed=...)``); without it their streams continue, so successive episodes of one
        manager differ but a whole sequence of episodes is reproducible.
        """
        if seed is not None:
            self.seed = seed
            job_rng, core_rng = self._streams(seed)
            self.job_queue.reseed(job_rng)
            self.resource_manager.reseed(core_rng)
        self.pool.reset()
        self.gpu_pool.reset()
        self.resource_manager.reset()
        self.job_queue.clear()
        if self.scheduler is not None:
            self.scheduler.reset()
        self._reset_counters()

    @property
    def queue(self) -> JobQueue:
        return self.job_queue

    @property
    def queue_size(self) -> int:
        return len(self.job_queue)

    @property
    def active_jobs(self) -> int:
        """Jobs running now."""
        return len(self.running)

    @property
    def busy_cores(self) -> int:
        return self.pool.busy_count

    @property
    def episodes(self) -> OverSubscriptionRecord:
        """Bandwidth over-subscription episodes, read as ``[processor id, start, end]`` (end
        ``None`` while still open)."""
        return self.pool.episodes

    def stats(self) -> dict[str, Any]:
        """Counters for the launcher and for learning (a plain dict, JSON-ready)."""
        return {
            "now": self.now,
            "queue_size": self.queue_size,
            "active_jobs": self.active_jobs,
            "busy_cores": self.busy_cores,
            "submitted": self.nb_submitted,
            "started": self.nb_started,
            "completed": self.nb_completed,
            "rejected": len(self.rejected),
            "decisions": self.nb_decisions,
            "actions": dict(zip(self.actions.names, self.action_counts)),
            "over_subscription_episodes": len(self.pool.episodes),
            **(getattr(self.scheduler, "stats", dict)()),
        }

    # --- pickling -----------------------------------------------------------------------
    # --- action mask --------------------------------------------------------------------
    def fits_now(self, res: int, mem: float, gpus: int = 0) -> bool:
        """Whether ``res`` tasks of ``mem`` MB each (and ``gpus`` GPUs) can start now.

        Whatever core policy places them, each task takes one free core of a node with
        ``mem`` MB free, so the job fits iff ``res <= sum over nodes of min(free cores,
        free memory // mem)``: the same answer for every core policy. The sum is kept per task
        size refused once and updated from the nodes changed since it was last asked
        (:class:`~hdeeprm.decision.fit.NodeFloorFit`), not recomputed over every node; another
        size is answered by a pass over the nodes that stops once ``res`` tasks are found. GPUs may
        be on any node (:mod:`hdeeprm.decision.gpus`), so they fit iff that many are free.
        """
        pool = self.pool
        if res > pool.free_count or gpus > self.gpu_pool.free_count:
            return False
        if mem <= 0.0 or (mem <= self._mem_every_core and not self._big_running):
            return True
        return self._floor_fit.fits(res, mem)

    def fits_now_many(
        self, jobs: Sequence[JobRecord], res: np.ndarray, mem: np.ndarray, gpus: np.ndarray
    ) -> np.ndarray:
        """``[fits_now(j.res, j.mem, j.gpus) for j in jobs]`` as a bool array, given the jobs'
        ``res``, ``mem`` and ``gpus`` as arrays: a job picker asks it for every visible job at
        every event. The core and GPU counts and the memory shortcut are compared at once;
        only the jobs they leave open ask :meth:`fits_now` itself (the per-node memory fit)."""
        fits = (res <= self.pool.free_count) & (gpus <= self.gpu_pool.free_count)
        easy = mem <= 0.0
        if not self._big_running:
            easy |= mem <= self._mem_every_core
        open_ = fits & ~easy
        if open_.any():
            fits_now = self.fits_now
            for i in np.flatnonzero(open_).tolist():
                job = jobs[i]
                fits[i] = fits_now(job.res, job.mem, job.gpus)
        return fits

    def fit_capacity(self, mem: float) -> int:
        """The most tasks of ``mem`` MB each (``mem > 0``, no GPUs) that can start now:
        ``fits_now(res, mem)`` is exactly ``res <= fit_capacity(mem)``. It only shrinks as jobs
        start and as ``mem`` grows, so a scheduler that was refused a job can rule out every
        request of at least ``fit_capacity(mem) + 1`` tasks of at least ``mem`` MB until a job
        ends, without asking (``start.capacity`` of :meth:`_delegate`)."""
        if mem <= self._mem_every_core and not self._big_running:
            return self.pool.free_count
        return self._floor_fit.tasks(mem)

    def action_mask(self) -> np.ndarray:
        """Which actions may be chosen now (bool per action of the action space).

        A pair is valid when the job its job policy chooses can start now (the ``random`` job
        policy: when some queued job can); void is always valid. When nothing is valid (no
        queued job fits and there is no void action) every action is, since each then does
        the same: start nothing. Computing the mask draws no random number and changes no
        decision.
        """
        return self.shared_action_mask().copy()

    def shared_action_mask(self) -> np.ndarray:
        """:meth:`action_mask` without the copy: the manager's own array, shared by every
        state with the same valid groups, which the caller must not modify (an
        environment copies it once for its caller)."""
        groups = self._mask_groups
        if groups is None:
            groups = self._mask_groups = self._group_actions()
        masks = self._masks
        scheduler = self.job_queue
        ordered = scheduler.sorted
        if ordered is not None and ordered[1]:  # tracked and the queue is not empty
            # Quick answers from the sorted requests: every queued job fits, or none does.
            free = self.pool.free_count
            if (
                ordered[1][-1] <= free
                and ordered[2][-1] <= self._mem_every_core
                and not self._big_running
                and not self.gpu_pool.nb_gpus
            ):
                return masks[self._all_bits]
            if ordered[1][0] > free:
                return masks[self._void_bits]
        # One bit per job policy group whose job fits; each combination's mask built once.
        bits, bit = 0, 1
        for policy, _ in groups:
            if policy is None or self._policy_fits(policy):
                bits |= bit
            bit <<= 1
        mask = masks.get(bits)
        if mask is None:
            mask = masks[bits] = self._mask_of(bits)
        return mask

    def _mask_of(self, bits: int) -> np.ndarray:
        """The mask in which the action groups whose bit is set are valid (every action when
        none is: each then does the same, start nothing)."""
        mask = np.zeros(len(self.actions), dtype=bool)
        for i, (_, indices) in enumerate(self._mask_groups or ()):
            if bits >> i & 1:
                mask[indices] = True
        if not mask.any():
            mask[:] = True
        return mask

    def _group_actions(self) -> list[tuple[str | None, np.ndarray]]:
        """Action indices by job policy (void under ``None``): one feasibility test each."""
        by_policy: dict[str | None, list[int]] = {}
        for i, action in enumerate(self.actions):
            by_policy.setdefault(action.job_policy, []).append(i)
        groups = [(policy, np.array(idx)) for policy, idx in by_policy.items()]
        # Masks by the bits of their valid groups (see action_mask), and the bits of "no
        # queued job fits": void alone (every action when there is no void).
        self._void_bits = sum(1 << i for i, (policy, _) in enumerate(groups) if policy is None)
        self._all_bits = (1 << len(groups)) - 1
        self._mask_groups = groups
        self._masks = {bits: self._mask_of(bits) for bits in (self._void_bits, self._all_bits)}
        return groups

    def _policy_fits(self, policy: str) -> bool:
        scheduler = self.job_queue
        if policy != "random":
            job = scheduler.peek(policy)
            return job is not None and self.fits_now(job.res, job.mem, job.gpus)
        smallest = scheduler.peek("smallest")
        if smallest is None or smallest.res > self.pool.free_count:
            return False
        if self.fits_now(smallest.res, smallest.mem, smallest.gpus):
            return True
        return any(self.fits_now(job.res, job.mem, job.gpus) for job in scheduler.jobs)

    # --- message intake ---------------------------------------------------------------
    def can_ever_run(self, res: int, mem: float) -> bool:
        """Whether ``res`` tasks of ``mem`` MB each fit on the whole idle platform."""
        if res > self.pool.nb_cores:
            return False
        if mem <= self._mem_every_core:
            return True
        if mem > self._max_node_mem + MEM_TOL:
            return False
        key = (res, mem)
        cached = self._can_fit_cache.get(key)
        if cached is None:
            total = 0
            for cores, capacity in self._node_slots:
                total += min(cores, int((capacity + MEM_TOL) // mem))
            cached = self._can_fit_cache[key] = total >= res
        return cached

    def ingest(self, message: Message) -> bool:
        """Apply a message's events to the state; return whether it is a decision point."""
        self.now = message.now
        for event in message.events:
            kind = event.type
            if kind == _JOB_SUBMITTED:
                self._submit(event.data["job"])
            elif kind == _JOB_COMPLETED:  # success, walltime reached or killed
                self._complete(event.data["job"])
            elif kind == _RESOURCE_STATE_CHANGED:
                # Nothing to do: P-states are already ours. Tested third: a classic run gets
                # one such confirmation per P-state decision (about half its messages).
                pass
            elif kind == _REQUESTED_CALL:
                if self._wakeup_at is not None and self._wakeup_at <= self.now:
                    self._wakeup_at = None
                self._changed = True
            elif kind == ev.SIMULATION_BEGINS:
                self._begin(event.data)
            elif kind == ev.NO_MORE_STATIC_JOB_TO_SUBMIT:
                self.no_more_jobs = True
            elif kind == ev.SIMULATION_ENDS:
                self.pool.close_episodes(self.now)
                self._rejections.summarise()
                self.ended = True
            elif kind == ev.JOB_KILLED:
                # Nothing to do: it only acknowledges a KillJobs (each killed job came with its
                # own JOB_COMPLETED, which released it).
                pass
            else:
                LOG.debug("ignoring event %s at t=%s", kind, self.now)
        # Also a decision point when nothing would happen any more unless the decision system
        # acts (no job runs, none is left to submit, no call pending): e.g. after a void
        # action, the last submission was rejected; else the simulation would deadlock.
        point = bool(self._queued) and (
            self._changed or (not self.running and self.no_more_jobs and self._wakeup_at is None)
        )
        self._changed = False
        return point

    def _begin(self, data: Mapping[str, Any]) -> None:
        self.reset()
        nb = data.get("nb_resources")
        if nb is not None and nb != self.pool.nb_cores:
            raise SimulationError(
                f"the simulator has {nb} compute resources but the platform given to the "
                f"workload manager has {self.pool.nb_cores} cores"
            )

    def _submit(self, job: Any) -> None:
        if type(job) is SimJob:  # what every in-process submission is
            record = _sim_job_record(job, self.nb_submitted)
        else:
            record = job_record(job, self.nb_submitted, self.profiles)
        self.nb_submitted += 1
        too_many_gpus = record.gpus > self.gpu_pool.nb_gpus
        if too_many_gpus or not (
            # can_ever_run's first answers inline: a task within every core's memory share
            (record.mem <= self._mem_every_core and record.res <= self.pool.nb_cores)
            or self.can_ever_run(record.res, record.mem)
        ):
            record.state = REJECTED
            self.rejected.append(record.id)
            self._pending.append(RejectJob(record.id))
            if too_many_gpus and LOG.isEnabledFor(logging.WARNING):
                LOG.warning(
                    "t=%.6f job %s rejected: it asks for %d GPU(s), the platform has %d",
                    self.now,
                    record.id,
                    record.gpus,
                    self.gpu_pool.nb_gpus,
                )
            elif LOG.isEnabledFor(logging.WARNING):
                self._rejections(
                    self.now,
                    record.id,
                    record.res,
                    record.mem,
                    self.pool.nb_cores,
                    self._max_node_mem,
                )
            return
        self.job_queue.push(record)
        if self.scheduler is not None:
            self.scheduler.submitted(record, self.now)
        self._changed = True
        for listener in self.job_listeners:
            listener.submitted(record)

    def _complete(self, job: Any) -> None:
        job_id = job.id if type(job) is SimJob else str(getattr(job, "id", job))
        record = self.running.pop(job_id, None)
        if record is None:
            raise SimulationError(f"job {job_id!r} completed but it is not running")
        record.state = FINISHED
        self.nb_completed += 1
        if record.mem > self._mem_every_core:
            self._big_running -= 1
        self.pool.release(record.alloc, self.now)
        if record.gpu_alloc:
            self.gpu_pool.release(record.gpu_alloc)
        if self.scheduler is not None:
            self.scheduler.completed(record, self.now)
        self._changed = True
        for listener in self.job_listeners:
            listener.completed(record)

    # --- decisions --------------------------------------------------------------------
    def flush(self) -> list[Decision]:
        """Decisions owed to the simulator outside a decision point (rejections, P-state
        changes from releases)."""
        decisions = self._pending
        if not decisions:  # the usual case: no rejection owed, drain's own list will do
            # a fresh list the caller owns; only a list of P-state changes for the checker
            return self.pool.drain()  # type: ignore[return-value]
        self._pending = []
        decisions.extend(self.pool.drain())
        return decisions

    def resolve(self, action: int | str | Action) -> tuple[int, Action]:
        """Index and :class:`Action` of an action given by index, name or object."""
        if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
            index = int(action)
            if not 0 <= index < len(self.actions):
                raise SimulationError(
                    f"action {index} is outside the action space (0..{len(self.actions) - 1})"
                )
        else:
            # a bool too (an int for the checker): index() refuses it as an unknown action
            index = self.actions.index(action)  # type: ignore[arg-type]
        return index, self.actions[index]

    def act(self, action: int | str | Action) -> list[Decision]:
        """Apply ``action`` at the current decision point; return every decision now owed.

        The policy pair is applied repeatedly: pick a job by the job policy, cores by the core
        policy, until the chosen job cannot be placed or the queue is empty. The void action
        starts nothing.
        """
        actions = self._action_list
        if type(action) is int and 0 <= action < len(actions):  # an index (environments)
            index, chosen = action, actions[action]
        else:
            index, chosen = self.resolve(action)
        self.nb_decisions += 1
        self.action_counts[index] += 1
        decisions = self._pending
        self._pending = []
        started: list[JobRecord] = []
        job_policy, core_policy = chosen.job_policy, chosen.core_policy
        if job_policy is None or core_policy is None:  # void (both are None)
            self._void_wakeup(decisions)
        elif self.scheduler is not None:
            self._delegate(self.scheduler, core_policy, started)
        else:
            scheduler, queued = self.job_queue, self._queued
            # _place inline for jobs without GPUs under a core policy (one call less a job)
            allocate = None if core_policy in LOCALITY_POLICIES else self.resource_manager.allocate
            while queued:
                job = scheduler.peek(job_policy)
                if job is None:  # never: the queue is not empty
                    break
                if allocate is None or job.gpus:
                    if not self._place(job, core_policy):
                        break
                else:
                    alloc = allocate(job.id, job.res, job.mem, job.mem_bw, core_policy, self.now)
                    if alloc is None:
                        break
                    self._mark_running(job, alloc)
                started.append(job)
        if started:
            self._announce(started)
        # P-states first, so every host already runs at its new speed when its job starts.
        decisions.extend(self.pool.drain())
        # Host ids sorted here, once, as HostIds: the engine then neither re-checks their types
        # nor sorts them (job.alloc keeps the pick order, which releases follow).
        for job in started:
            decisions.append(ExecuteJob(job.id, HostIds(sorted(job.alloc)), job.gpu_alloc))
        if INSIGHTS.isEnabledFor(logging.INFO):
            INSIGHTS.info(
                "t=%.6f decision: queue=%d action=%s started=%s",
                self.now,
                len(self.job_queue) + len(started),
                chosen.name,
                ", ".join(f"{job.id}->{list(job.alloc)}" for job in started) or "none",
            )
        return decisions

    def _delegate(
        self, scheduler: SchedulingStrategy, core_policy: str, started: list[JobRecord]
    ) -> None:
        """Let the queue scheduler choose the jobs; place each with ``core_policy`` (the
        started ones are appended to ``started``)."""
        hooks = self._hooks.get(core_policy)
        if hooks is None:
            hooks = self._hooks[core_policy] = self._scheduler_hooks(core_policy)
        self._starting = started
        scheduler.schedule(self.now, *hooks)

    def _scheduler_hooks(self, core_policy: str) -> tuple[Callable[[], int], StartHook]:
        """The ``free()`` and ``start(record[, cores])`` a queue scheduler is given, made once
        per core policy (not at every decision point: two closures and a function attribute
        each time); ``start`` appends to the list of the current :meth:`_delegate`."""
        pool, place, fits = self.pool, self._place, self.fits_now

        def start(job: JobRecord, cores: Sequence[int] | None = None) -> bool:
            if (job.mem > 0 or job.gpus) and not fits(job.res, job.mem, job.gpus):
                return False  # cheap refusal: a failed allocation attempt costs far more
            if not (place(job, core_policy) if cores is None else self._place_on(job, cores)):
                return False
            self._starting.append(job)
            return True

        def counted(job: JobRecord) -> bool:
            # start() for a job of no GPUs that fit_capacity just admitted (res <=
            # fit_capacity(mem) is exactly fits_now(res, mem)): not asked again
            if not place(job, core_policy):
                return False
            self._starting.append(job)
            return True

        def free() -> int:
            return pool.free_count

        hook = cast(StartHook, start)  # a function carrying the two shortcuts as attributes
        hook.capacity = self.fit_capacity
        hook.counted = counted
        return free, hook

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the scheduler hooks (closures; made again on first use)."""
        state = self.__dict__.copy()
        state["_hooks"] = {}
        state["_starting"] = []
        return state

    def start_job(self, job: JobRecord, core_policy: str) -> bool:
        """Start one queued ``job`` now on cores chosen by ``core_policy`` (agents that pick
        jobs themselves, :mod:`hdeeprm.environment.job_selection`); ``False`` if it cannot
        be placed now. The caller owes the simulator :meth:`flush` followed by an
        ``ExecuteJob(job.id, job.alloc)`` per started job."""
        if not self._place(job, core_policy):
            return False
        self._announce([job])
        return True

    def _place(self, job: JobRecord, core_policy: str) -> bool:
        """Allocate cores to a queued job and mark it running (the one place jobs start)."""
        if job.gpus or core_policy in LOCALITY_POLICIES:
            alloc = self._place_with_gpus(job, core_policy)
        else:
            alloc = self.resource_manager.allocate(
                job.id, job.res, job.mem, job.mem_bw, core_policy, self.now
            )
        if alloc is None:
            return False
        self._mark_running(job, alloc)
        return True

    def _place_on(self, job: JobRecord, cores: Sequence[int]) -> bool:
        """Start a queued job on exactly ``cores`` (one per task), if they are free and their
        nodes have the memory (a scheduler choosing the cores itself, e.g. contiguous ones)."""
        pool = self.pool
        if len(cores) != job.res or job.gpus > self.gpu_pool.free_count:
            return False
        per_node: dict[int, int] = {}
        for core in cores:
            if pool.core_job[core] is not None:
                return False
            node = pool.core_node[core]
            per_node[node] = per_node.get(node, 0) + 1
        if job.mem > 0:
            for node, count in per_node.items():
                if pool.node_free_mem[node] + MEM_TOL < count * job.mem:
                    return False
        for core in cores:
            pool.take(core, job.id, job.mem, job.mem_bw)
        pool.settle(cores, self.now)
        if job.gpus:
            job.gpu_alloc = tuple(self.locality.gpus_near(cores, job.gpus, job.id))
        self._mark_running(job, cores)
        return True

    def _mark_running(self, job: JobRecord, alloc: Sequence[int]) -> None:
        self.job_queue.remove(job)
        job.state = RUNNING
        job.alloc = tuple(alloc)
        job.start = self.now
        self.running[job.id] = job
        if job.mem > self._mem_every_core:
            self._big_running += 1

    def _place_with_gpus(self, job: JobRecord, policy: str) -> list[int] | None:
        """Cores (returned) and GPUs (``job.gpu_alloc``) for a job that needs GPUs or asks
        for a locality policy (:mod:`hdeeprm.decision.gpus`); ``None``: nothing changed."""
        if job.gpus > self.gpu_pool.free_count:
            return None
        locality = self.locality
        if policy in LOCALITY_POLICIES:
            plan = locality.plan(policy, job.res, job.gpus, job.mem)
            if plan is None:
                return None
            alloc: list[int] | None = locality.take_cores(
                plan, job.id, job.mem, job.mem_bw, self.now
            )
            job.gpu_alloc = tuple(locality.take_gpus(plan, job.id))
            return alloc
        alloc = self.resource_manager.allocate(
            job.id, job.res, job.mem, job.mem_bw, policy, self.now
        )
        if alloc is not None:
            job.gpu_alloc = tuple(locality.gpus_near(alloc, job.gpus, job.id))
        return alloc

    def _announce(self, started: list[JobRecord]) -> None:
        """Count the jobs just started and tell the job listeners (rewards), whoever chose
        them: the policy pair, a queue scheduler or a job-picking agent."""
        self.nb_started += len(started)
        for listener in self.job_listeners:
            for job in started:
                listener.started(job)

    def _void_wakeup(self, decisions: list[Decision]) -> None:
        """After a void action, make sure some event will come back (else the queue would
        wait forever): ask for a call when no job runs and none is left to submit."""
        if self.running or not self.no_more_jobs or self._wakeup_at is not None:
            return
        self._wakeup_at = self.now + self.void_wakeup
        decisions.append(CallMeLater(self._wakeup_at))

    def handle(self, message: Message) -> list[Decision]:
        """The whole reply to one simulator message (in-process engine loop)."""
        if not self.ingest(message):
            return self.flush()
        agent = self.agent
        if type(agent) is FixedPair:  # classic runs: the same index, no observe/decide calls
            return self.act(agent.action)
        if agent is None:
            raise SimulationError("decision point reached but the workload manager has no agent")
        return self.act(agent.decide(agent.observe(self)))
