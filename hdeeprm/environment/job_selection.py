"""Job selection as the action (``hdeeprm/JobSelection-v0``): RLScheduler-style job picking.

Where :class:`~hdeeprm.environment.env.HeterogeneousClusterEnv` asks for a policy pair, this
environment asks, at each step, for **one job**: one of the first ``queue_slots`` queued jobs
in submission order (slot ``i``; the *visible* queue), or **do nothing** (the last action,
index ``queue_slots``), which lets time run to the next event (a submission or a completion).
The chosen job is placed at once by a fixed core policy of the resource manager
(``core_policy``, default ``high_gflops``).

* **Mask** (``info["action_mask"]`` and :meth:`JobSelectionEnv.action_masks`, the name
  sb3-contrib's ``MaskablePPO`` calls): empty slots are masked; without backfilling, so are
  visible jobs that do not fit now (:meth:`~hdeeprm.decision.WorkloadManager.fits_now`). Do
  nothing is masked only when it could never end (no running job and no job left to submit).
  A state where nothing but do nothing is valid is never shown: the environment runs the
  simulation on by itself until a visible job fits. A masked action is not an error (agents
  without masks, ``check_env``): it plays do nothing, or the first valid slot when do nothing
  is masked, and is counted in ``info["invalid_actions"]``.
* **Backfilling** (``backfill=True``): every visible job can be picked. A job that fits starts
  now; one that does not is *reserved* (EASY: at the earliest time enough cores are predicted
  free by the running jobs' requested times, :meth:`hdeeprm.scheduling.profile.RunningEnds.
  shadow`), and until it starts the other visible jobs are backfilled in submission order at
  each event: a job starts if it fits now and either ends (by its requested time) before the
  reservation or uses only cores spare at that time. The step ends when the chosen job starts.
* **Starvation guard** (``max_wait``, seconds; off by default): a learned picker may leave
  a job last for ever. When the oldest visible job (slot 0, the queue is in submission order)
  has waited at least ``max_wait`` at a decision, it *starves*, and the mask protects it.
  If it fits, it is the only valid action. If not: with backfilling it is reserved as EASY
  reserves its head (:meth:`~hdeeprm.scheduling.profile.RunningEnds.shadow`) and the valid
  actions are do nothing and the visible jobs EASY may backfill around it (they fit now and
  end, by their requested time, before the reservation, or use only cores spare then), so
  the agent keeps choosing among the jobs that cannot delay it; without backfilling the
  environment runs on by itself until it fits. Any picker that reads the mask obeys (the
  heuristics of :mod:`hdeeprm.environment.job_pickers` and the trainers do), and an agent
  trained with the guard learns with it. A starving job starts at the first decision point
  where it fits: its wait is bounded by ``max_wait``, plus the time to the next decision
  point, plus the time the platform needs to free its cores for it and for the starving
  jobs ahead of it (with backfilling, by the requested times of the jobs running).
* **Reward**: the potential-based rewards of :mod:`hdeeprm.environment.objective_reward` for
  ``avg_bounded_slowdown`` (tau = 10 s): the rewards of an episode add up to minus its average
  bounded slowdown. Steps at the same instant earn 0; time passing credits the waits.
* **Episodes**: the options' ``pybatsim.env.episodes`` windows, ``split`` and
  ``reset(options={"window": k})``, exactly as the policy-pair environment (shared code).
* **Two steps** (``policies=[...]``, CuSH's job selector then policy selector): the action is
  a pair ``(slot, p)``, ``MultiDiscrete([Q + 1, P])``: the job in ``slot`` is placed by core
  policy ``policies[p]`` (ignored with do nothing). ``info["policy_mask"]`` (``Q x P``) says
  which policies may place each slot's job; the second step's own reward,
  ``info["policy_reward"]``, is minus the service-time stretch of the placement
  (:func:`placement_reward`), minus CuSH's locality penalty ``p_j / t_j`` when the environment
  has a service-time model (``service_time``; :mod:`hdeeprm.simulation.service_time`). See
  :mod:`hdeeprm.training.twostep` for the two-network agent.

Observation (``Box(0, 1)``), ``queue_slots x 6`` job features then the cluster's:

* per slot: wait so far / ``max_time``, requested time / ``max_time``, requested cores /
  ``max_core``, memory / ``max_mem``, bandwidth / ``max_mem_bw`` (the job limits, clipped to
  1) and "fits now" (0 or 1); an empty slot is all zeros;
* per node type (platform order of first appearance): free cores and free memory, as
  fractions of that type's totals; on a GPU platform, then the free GPUs of each node type
  with GPUs (fraction); then the queued jobs beyond the visible ones,
  ``min(1, hidden / queue_slots)``.
* with the starvation guard, each slot then has one more feature (:data:`GUARD_FEATURES`,
  after the log features): ``min(1, wait / max_wait)``, how near the job is to the guard
  (the wait feature stops at ``max_time``, which may be far below ``max_wait``);
* on a GPU platform each slot ends with 2 more features (:data:`GPU_FEATURES`): requested
  GPUs / the platform's GPUs, and 1 for a ``network`` job (CuSH's view of a job: its
  locality penalty depends on both). CPU-only platforms keep the layout above.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from hdeeprm.decision.actions import PLACEMENT_POLICIES
from hdeeprm.decision.job_queue import JobRecord
from hdeeprm.environment.env import HeterogeneousClusterEnv
from hdeeprm.environment.rlscheduler import rlscheduler_visible
from hdeeprm.errors import SimulationError
from hdeeprm.inputs import ExperimentInputs
from hdeeprm.scheduling.profile import RunningEnds
from hdeeprm.simulation.events import Decision, ExecuteJob

#: No visible job.
_NO_SEQS = np.zeros(0, dtype=np.intp)
#: Default visible queue length (RLScheduler's MAX_QUEUE_SIZE).
DEFAULT_SLOTS = 128
#: Features per visible job.
JOB_FEATURES = ("wait", "req_time", "res", "mem", "mem_bw", "fits")
#: Features appended per visible job with ``log_features=True``.
LOG_FEATURES = ("log_wait", "log_req_time", "log_res")
#: Feature appended per visible job with the starvation guard (``max_wait``).
GUARD_FEATURES = ("guard_wait",)
#: Features appended last per visible job on a platform with GPUs (CuSH's job view).
GPU_FEATURES = ("gpus", "network")
#: The objective the rewards add up to by default.
OBJECTIVE = "avg_bounded_slowdown"
#: The objectives a job picker can be trained on (``objective=``): RLScheduler's bounded
#: slowdown, or the plain mean slowdown of HDeepRM's Gaia benchmark.
SLOWDOWN_OBJECTIVES = ("avg_bounded_slowdown", "avg_job_slowdown")


def placement_reward(pool: Any, alloc: Sequence[int]) -> float:
    """The policy selector's reward for a placement: ``1 - fastest / slowest``, where
    ``slowest`` is the peak GFLOPS of the slowest allocated core and ``fastest`` the fastest
    core of the platform: minus the stretch of the job's service time over the best possible
    one, since a job runs at its slowest core's speed (0 for an ideal placement, -0.1 for a
    job on 4.0 GFLOPS cores where 4.4 exist). CuSH rewards its policy selector with minus
    the service time; this is that, per unit of ideal service time, known at placement."""
    peak = pool.core_peak
    slowest = min(peak[c] for c in alloc)
    fastest = pool._peak_arr.max()
    return 0.0 if slowest <= 0.0 else float(1.0 - fastest / slowest)


class _ObservedCluster:
    """Free cores and memory per node type, read from the core pool's per-node counters;
    on a platform with GPUs, then the free GPUs of each node type that has GPUs."""

    #: What depends on the platform alone, taken from the previous episode's view of the same
    #: platform instead of computed again at each reset.
    _LAYOUT = (
        "nb_gpu_types",
        "group",
        "nb_types",
        "cores",
        "mem",
        "_has_mem",
        "_no_mem",
        "_cores_one",
        "_mem_one",
        "_mem_full",
    )

    def __init__(self, manager: Any, previous: _ObservedCluster | None = None) -> None:
        pool = manager.pool
        self.gpu_pool = manager.gpu_pool
        #: Whether a job with memory has started (set by the job table). Until then every
        #: node's free memory is its capacity (``x - 0.0`` and ``x + 0.0`` are ``x``), so the
        #: free-memory features are the ones computed here, with the same operations.
        self.mem_used = False
        self.pool = pool
        if previous is not None and previous.pool.platform is pool.platform:
            for name in self._LAYOUT:  # read only: shared, never written
                setattr(self, name, getattr(previous, name))
            return
        #: Node types with GPUs (one free-GPU feature each; 0 on a CPU-only platform).
        self.nb_gpu_types = len(self.gpu_pool.types)
        types: dict[str, int] = {}
        for node in pool.platform.nodes:
            types.setdefault(node.type, len(types))
        self.group = np.array([types[n.type] for n in pool.platform.nodes], dtype=np.intp)
        self.nb_types = len(types)
        self.cores = np.bincount(
            self.group, [len(c) for c in pool.node_cores], minlength=self.nb_types
        )
        self.mem = np.bincount(self.group, pool.node_capacity, minlength=self.nb_types)
        self._has_mem = self.mem > 0
        #: Every node type without memory: its free-memory feature is always 1.
        self._no_mem = not self._has_mem.any()
        self._cores_one, self._mem_one = float(self.cores[0]), float(self.mem[0])
        self._mem_full = np.divide(
            self.mem, self.mem, out=np.ones_like(self.mem), where=self._has_mem
        )

    @property
    def size(self) -> int:
        return 2 * self.nb_types + self.nb_gpu_types

    def features(self) -> np.ndarray:
        """Read at every step: one node type's busy cores are the pool's busy count (the sum
        of the nodes' counts, exact in floats), and types without memory need no sum."""
        pool = self.pool
        if self.nb_types == 1 and not self.nb_gpu_types:  # two Python floats, same IEEE ops
            free_cores = 1.0 - float(pool.nb_cores - pool.free_count) / self._cores_one
            if self._no_mem:
                return np.array((free_cores, 1.0))
            if not self.mem_used:
                return np.array((free_cores, self._mem_full[0]))
            mem_sum = np.bincount(self.group, pool.node_free_mem, minlength=1)
            return np.array((free_cores, float(mem_sum[0]) / self._mem_one))
        if self.nb_types == 1:
            busy = np.array([float(pool.nb_cores - pool.free_count)])
        else:
            busy = np.bincount(self.group, pool.node_busy, minlength=self.nb_types)
        out = np.empty(self.size)
        both = out[: 2 * self.nb_types]
        both[0::2] = 1.0 - busy / self.cores
        if self._no_mem:
            both[1::2] = 1.0
        elif not self.mem_used:
            both[1::2] = self._mem_full
        else:
            free_mem = np.bincount(self.group, pool.node_free_mem, minlength=self.nb_types)
            both[1::2] = np.divide(
                free_mem, self.mem, out=np.ones_like(free_mem), where=self._has_mem
            )
        if self.nb_gpu_types:
            out[2 * self.nb_types :] = self.gpu_pool.free_by_type()
        return out

    def features_reference(self) -> np.ndarray:
        """:meth:`features` as first written, sums over every node (the tests' reference)."""
        pool = self.pool
        busy = np.bincount(self.group, pool.node_busy, minlength=self.nb_types)
        free_mem = np.bincount(self.group, pool.node_free_mem, minlength=self.nb_types)
        out = np.empty(self.size)
        both = out[: 2 * self.nb_types]
        both[0::2] = 1.0 - busy / self.cores
        both[1::2] = np.divide(free_mem, self.mem, out=np.ones_like(free_mem), where=self.mem > 0)
        if self.nb_gpu_types:
            out[2 * self.nb_types :] = self.gpu_pool.free_by_type()
        return out


class _JobTable:
    """Job listener keeping, per submission number, what a step reads of a job that never
    changes while it waits: its submission time, requested time, cores, memory and GPUs
    (float64, exact for the integers), and its observation row's fixed columns (requested
    time, cores, memory, bandwidth, GPU features) already scaled and clipped; a step reads
    the visible jobs' rows by index instead of visiting each job. Filled in batches, when
    read (:meth:`update`)."""

    #: Columns of :attr:`values`.
    SUBTIME, REQ_TIME, RES, MEM, GPUS = range(5)

    def __init__(self, env: JobSelectionEnv) -> None:
        self.env = env
        self._pending: list[JobRecord] = []
        self.capacity = 0
        self.values = np.zeros((0, 5))
        self.rows = np.zeros((0, env.job_width), dtype=np.float32)
        #: Some job so far needs more than a core count test to fit (memory, NaN memory or
        #: GPUs): then the fit test asks the manager (:meth:`WorkloadManager.fits_now_many`).
        self.any_hard = False
        #: Every submission time so far is finite (the wait then needs no NaN/inf cleanup).
        self.finite = True

    def _grow(self, capacity: int) -> None:
        values = np.zeros((capacity, 5))
        rows = np.zeros((capacity, self.env.job_width), dtype=np.float32)
        old = self.capacity
        values[:old] = self.values
        rows[:old] = self.rows
        self.values, self.rows, self.capacity = values, rows, capacity

    def submitted(self, record: JobRecord) -> None:
        self._pending.append(record)

    def started(self, record: JobRecord) -> None:
        if record.mem != 0.0:
            self.env._cluster.mem_used = True

    def completed(self, record: JobRecord) -> None:
        pass

    def update(self) -> None:
        """Fill the rows of the jobs submitted since the last read: per value, the float64
        operations the observation applied to each job before (``x / scale``, ``NaN -> 0``,
        ``+inf -> 1``, then at most 1), in Python floats (the same IEEE operations), since
        a read finds one or two new jobs."""
        pending = self._pending
        if not pending:
            return
        env = self.env
        top = max(job.seq for job in pending) + 1
        if top > self.capacity:
            self._grow(max(top, 2 * self.capacity, 256))
        values, rows = self.values, self.rows
        _, s_req, s_res, s_mem, s_bw = env._scale.tolist()
        gpu_width = env.job_width if env._cluster.nb_gpu_types else 0
        max_gpus = env._max_gpus
        planned = env._planned_time
        for job in pending:
            seq, mem, gpus = job.seq, job.mem, job.gpus
            req = job.req_time if planned is None else planned(job)
            values[seq] = (job.subtime, req, job.res, mem, gpus)
            rows[seq, 1:5] = (
                _clip(req / s_req),
                _clip(job.res / s_res),
                _clip(mem / s_mem),
                _clip(job.mem_bw / s_bw),
            )
            if gpu_width:
                rows[seq, gpu_width - 2] = min(1.0, gpus / max_gpus)
                rows[seq, gpu_width - 1] = job.workload_type == "network"
            if not mem <= 0.0 or gpus != 0:
                self.any_hard = True
            if not math.isfinite(job.subtime):
                self.finite = False
        pending.clear()


def _guard_feature(wait: np.ndarray, max_wait: float) -> np.ndarray:
    """:data:`GUARD_FEATURES`: ``min(1, wait / max_wait)`` per job (1 for a bound of 0, and
    NaN -> 0, +inf -> 1 as the other features)."""
    if max_wait <= 0.0:
        return np.ones_like(wait)
    return np.minimum(np.nan_to_num(wait / max_wait, posinf=1.0), 1.0)


def _clip(value: float) -> float:
    """``min(nan_to_num(value, posinf=1.0), 1.0)`` on one float64 (NaN -> 0, +inf -> 1,
    -inf -> the most negative float), without a numpy call."""
    if value != value:
        return 0.0
    if value == -math.inf:
        return -sys.float_info.max
    return value if value < 1.0 else 1.0


class _RunningEnds:
    """Job listener keeping :class:`RunningEnds` (requested ends) for the reservations."""

    def __init__(self) -> None:
        self.ends = RunningEnds()

    def submitted(self, record: JobRecord) -> None:
        pass

    def started(self, record: JobRecord) -> None:
        self.ends.add(record.seq, record.start + record.req_time, record.res)

    def completed(self, record: JobRecord) -> None:
        self.ends.remove(record.seq, record.start + record.req_time)

    def shadow(self, need: int, free: int, now: float) -> tuple[float, int]:
        """EASY's reservation (:meth:`RunningEnds.shadow`), as the EASY scheduler makes it: a
        job still running at its requested end may end at any instant, so its cores count
        as free now (requested times are never corrected: it is overdue from then on)."""
        ends = self.ends
        for seq in ends.expired(now):
            ends.mark_overdue(seq)
        return ends.shadow(need, free, now)


class JobSelectionEnv(HeterogeneousClusterEnv):
    """Pick one visible queued job per step, or do nothing (see the module docstring).

    Args:
        inputs, common: the prepared inputs and the keywords every environment takes
            (``trace``, ``split``, ``render_mode``, ``log_level``), as
            :class:`~hdeeprm.environment.env.HeterogeneousClusterEnv` (the options' objective,
            actions, observation and reward keys are not used here).
        queue_slots: visible queued jobs ``Q`` (action space ``Discrete(Q + 1)``).
        core_policy: the resource manager's core policy that places chosen jobs.
        backfill: EASY-backfill the visible queue around a chosen job that does not fit.
        policies: core policies of the optional second step (CuSH's policy selector): the
            action becomes ``(slot, p)`` and the chosen job is placed by ``policies[p]``;
            jobs backfilled around a reserved one are still placed by ``core_policy``.
            None (default): one step, every chosen job placed by ``core_policy``.
        log_features: append per job ``log(1 + wait) / log(1 + max_time)``, the same for the
            requested time, and ``log(1 + res) / log(1 + max_core)`` (clipped to 1): a trace's
            requested times span seconds to days, and the linear features squash all short
            jobs near 0.
        objective: what the rewards add up to (minus it): ``avg_bounded_slowdown`` (default,
            tau = 10 s) or ``avg_job_slowdown`` (:data:`SLOWDOWN_OBJECTIVES`).
        rlscheduler: follow RLScheduler's rules (:mod:`hdeeprm.environment.rlscheduler`):
            beyond ``Q`` queued jobs, show the shortest and the smallest alternately; with
            ``backfill``, the picked job's reservation is fixed when it is picked and only
            jobs ending strictly before it backfill, from the whole queue in submission
            order; do nothing is offered only when no job is visible.
    """

    def __init__(
        self,
        inputs: ExperimentInputs,
        *,
        queue_slots: int = DEFAULT_SLOTS,
        core_policy: str = "high_gflops",
        backfill: bool = False,
        policies: Sequence[str] | None = None,
        log_features: bool = False,
        objective: str = OBJECTIVE,
        rlscheduler: bool = False,
        max_wait: float | None = None,
        **common: Any,
    ) -> None:
        if max_wait is not None:
            if (
                isinstance(max_wait, bool)
                or not isinstance(max_wait, (int, float))
                or not 0 <= max_wait < math.inf
            ):
                raise ValueError(f"max_wait must be non-negative seconds or None, got {max_wait!r}")
            if rlscheduler:
                raise ValueError(
                    "max_wait is not available with rlscheduler=True: RLScheduler's visible "
                    "queue may hide the oldest job, and its protocol has no guard"
                )
        if objective not in SLOWDOWN_OBJECTIVES:
            raise ValueError(
                f"unknown objective {objective!r} for job selection; expected one of "
                f"{', '.join(SLOWDOWN_OBJECTIVES)}"
            )
        if isinstance(queue_slots, bool) or not isinstance(queue_slots, int) or queue_slots < 1:
            raise ValueError(f"queue_slots must be an integer >= 1, got {queue_slots!r}")
        if core_policy not in PLACEMENT_POLICIES:
            raise ValueError(
                f"unknown core policy {core_policy!r}; expected one of "
                f"{', '.join(PLACEMENT_POLICIES)}"
            )
        if policies is not None:
            policies = tuple(policies)
            if not policies or isinstance(policies, str):
                raise ValueError("policies must be a non-empty list of core policy names")
            for name in policies:
                if name not in PLACEMENT_POLICIES:
                    raise ValueError(
                        f"unknown core policy {name!r} in policies; expected one of "
                        f"{', '.join(PLACEMENT_POLICIES)}"
                    )
            if len(set(policies)) != len(policies):
                raise ValueError(f"policies lists a core policy twice: {list(policies)}")
        #: The second step's core policies (None: one step).
        self.policies: tuple[str, ...] | None = policies
        self.queue_slots = queue_slots
        self.core_policy = core_policy
        self.log_features = bool(log_features)
        #: The starvation guard's bound in seconds (None: no guard).
        self.max_wait = None if max_wait is None else float(max_wait)
        #: Features per visible job (the observation's per-slot width; set with the platform
        #: in :meth:`_make_observer`: GPU platforms add :data:`GPU_FEATURES`).
        self.job_width = self._base_width()
        self.backfill = bool(backfill)
        self.rlscheduler = bool(rlscheduler)
        #: The run time the scheduler plans a queued job with, as the observation's
        #: ``req_time`` shows it (None: the requested time; a subclass predicting run times
        #: shows its predictions).
        self._planned_time: Callable[[JobRecord], float] | None = None
        super().__init__(inputs, **common)
        self.objective = objective
        self.reward_kind = "objective"
        limits = self.inputs.job_limits
        self._scale = np.array(
            [limits.max_time, limits.max_time, limits.max_core, limits.max_mem, limits.max_mem_bw],
            dtype=float,
        )
        self._scale[self._scale <= 0] = 1.0
        self._log_scale = np.log1p(self._scale[[0, 0, 2]])
        size = queue_slots * self.job_width + self._cluster.size + 1
        self.observation_space: spaces.Box = spaces.Box(0.0, 1.0, (size,), np.float32)
        if policies is None:
            self.action_space = spaces.Discrete(queue_slots + 1)
        else:
            # (job slot, policy) arrays: wider than the parent's declared int action type
            self.action_space = spaces.MultiDiscrete(  # type: ignore[assignment]
                [queue_slots + 1, len(policies)]
            )
        self._nb_actions = queue_slots + 1
        self.do_nothing = queue_slots
        self._obs = np.zeros(size, dtype=np.float32)
        self._visible: list[JobRecord] = []
        #: The visible jobs' submission numbers (rows of ``_table``), set with ``_visible``.
        self._seqs = _NO_SEQS
        self._fits = np.zeros(queue_slots, dtype=bool)
        self._any_fits = False
        #: The visible jobs' job table values and requested cores (a view of them), the
        #: smallest request (NaN: not read yet) and the free core count ``_fits`` was for.
        self._vis_values = np.zeros((0, 5))
        self._vis_res = self._vis_values[:, _JobTable.RES]
        self._min_res = math.nan
        self._free_seen = -1
        self._started: list[JobRecord] = []
        #: Under the guard, while slot 0 starves: the slots it allows (None: no starving job).
        self._allowed: np.ndarray | None = None
        #: Masked actions received this episode (each played as described in :meth:`step`).
        self.invalid_actions = 0
        #: Second step of the last step: policy index (-1: none) and its reward.
        self._policy = -1
        self._policy_reward = 0.0

    # --- shared machinery: the parent's reset builds the observer through this ------------
    def _make_observer(self, manager: Any) -> Any:
        """Called by the parent with each new manager: per-episode views of it."""
        self._cluster = _ObservedCluster(manager, getattr(self, "_cluster", None))
        base = self._base_width()
        self.job_width = base + (len(GPU_FEATURES) if self._cluster.nb_gpu_types else 0)
        self._max_gpus = max(1, manager.gpu_pool.nb_gpus)
        self._ends = self._running_ends(manager)
        manager.job_listeners.append(self._ends)
        self._table = _JobTable(self)
        manager.job_listeners.append(self._table)
        self._seen = -1  # a new queue: the visible jobs are read again
        return _Observer(self)

    def _base_width(self) -> int:
        """Features per visible job before the GPU ones: the job's, the log ones, the
        guard's."""
        return self._guard_column() + (len(GUARD_FEATURES) if self.max_wait is not None else 0)

    def _guard_column(self) -> int:
        """The per-slot index of :data:`GUARD_FEATURES` (with ``max_wait``): after the job's
        and the log features."""
        return len(JOB_FEATURES) + (len(LOG_FEATURES) if self.log_features else 0)

    def _running_ends(self, manager: Any) -> Any:
        """The job listener that keeps the running jobs' ends for reservations (``shadow``):
        requested times here."""
        return _RunningEnds()

    @property
    def observation_size(self) -> int:
        return int(self.observation_space.shape[0])

    @property
    def action_size(self) -> int:
        return self.queue_slots + 1

    # --- Gymnasium API ----------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode (see the parent's ``reset``) and run to the first real choice."""
        self._started = []
        self._visible = []
        self._seqs = _NO_SEQS
        self.invalid_actions = 0
        super().reset(seed=seed, options=options)
        self._settle()
        return self._obs.copy(), self.info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Start the job in slot ``action`` (or do nothing) and run to the next choice."""
        if self.engine is None:
            raise SimulationError("step() before reset()")
        if self._done:
            raise SimulationError("the simulation has ended: call reset() to start a new one")
        action, policy = self._parse(action)
        # Read only here: the array itself, not a copy (unless a subclass masks otherwise).
        if type(self).action_masks is JobSelectionEnv.action_masks:
            mask = self._current_mask()
        else:
            mask = self.action_masks()
        if not mask[action]:
            # A masked choice (an agent that ignores masks): do nothing, or, when that is
            # masked too, the first valid slot; counted in info["invalid_actions"].
            self.invalid_actions += 1
            action = self.do_nothing if mask[self.do_nothing] else int(np.flatnonzero(mask)[0])
        meter = self._meter
        assert meter is not None
        meter.start()
        self.manager.nb_decisions += 1
        self._policy, self._policy_reward = -1, 0.0
        if action == self.do_nothing:
            self._proceed()
        else:
            job = self._visible[action]
            core_policy = self.core_policy
            if self.policies is not None:
                allowed = self._policy_row(action)
                if not allowed[policy]:
                    self.invalid_actions += 1
                    policy = int(np.flatnonzero(allowed)[0])
                core_policy = self.policies[policy]
                self._policy = policy
            if not self.manager.start_job(job, core_policy):
                assert self.backfill, "a masked-in job must fit"
                self._wait_for(job, core_policy)
            self._started.append(job)
            if self.policies is not None:
                self._policy_reward = placement_reward(self.manager.pool, job.alloc)
                if self.service_time is not None:  # CuSH: minus the locality penalty p_j / t_j
                    self._policy_reward -= self.service_time.penalty(
                        job.workload_type, job.alloc, job.gpu_alloc
                    )
        self._settle()
        self._reward = float(meter.reward())
        self.steps += 1
        self.total_reward += self._reward
        return self._obs.copy(), self._reward, self._done, False, self.info()

    def _parse(self, action: Any) -> tuple[int, int]:
        """``(slot, policy index)`` from an integer (one step) or a pair (two steps)."""
        if type(action) is int and self.policies is None and 0 <= action < self._nb_actions:
            return action, 0  # a plain valid int: what the checks below would return
        if self.policies is None:
            if isinstance(action, np.ndarray) and action.shape in ((), (1,)):
                action = action.reshape(())[()]
            pair = (action, 0)
        else:
            values = np.asarray(action)
            if values.shape != (2,):
                raise SimulationError(
                    f"action {action!r} is not a pair (slot, policy index): the environment "
                    f"has two steps (policies={list(self.policies)})"
                )
            pair = tuple(values.tolist())
        for value in pair:
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise SimulationError(f"action {action!r} is not an integer")
        slot, policy = int(pair[0]), int(pair[1])
        if not 0 <= slot < self._nb_actions:
            raise SimulationError(f"action {slot} is outside 0..{self._nb_actions - 1}")
        if self.policies is not None and not 0 <= policy < len(self.policies):
            raise SimulationError(f"policy index {policy} is outside 0..{len(self.policies) - 1}")
        return slot, policy

    # --- simulation ---------------------------------------------------------------------
    def _decisions(self) -> list[Decision]:
        """Everything owed to the simulator: rejections, P-states, then the started jobs."""
        decisions = self.manager.flush()
        decisions.extend(ExecuteJob(job.id, job.alloc, job.gpu_alloc) for job in self._started)
        self._started = []
        return decisions

    def _proceed(self) -> None:
        """Send what is owed and run to the next decision point (or the end)."""
        self._done = not self._run(self._decisions())

    def _wait_for(self, job: JobRecord, core_policy: str) -> None:
        """Backfill around ``job`` at each event until it can start, then start it (placed
        by ``core_policy``)."""
        manager = self.manager
        if self.rlscheduler:
            # RLScheduler fixes the reservation once, from the requested times.
            shadow, _ = self._ends.shadow(job.res, manager.pool.free_count, manager.now)
        while True:
            if self.rlscheduler:
                self._backfill_before(job, shadow)
            else:
                self._backfill_around(job)
            self._proceed()
            if self._done:
                raise SimulationError(f"the simulation ended while job {job.id} was reserved")
            if manager.start_job(job, core_policy):
                return

    def _backfill_around(self, head: JobRecord) -> None:
        """EASY: start visible jobs that fit now and do not delay ``head``'s reservation.

        Free cores and the cores spare at the reservation only shrink during the pass, so a
        job with more cores than free now, or ending after the reservation with more cores
        than spare, is never started: those are ruled out at once, over the visible jobs'
        arrays, and the others tried in submission order as :meth:`_backfill_reference`
        tries every visible job."""
        manager, pool = self.manager, self.manager.pool
        free = pool.free_count
        if not free:
            return
        now = manager.now
        shadow, extra = self._ends.shadow(head.res, free, now)
        self._refresh_visible()
        visible = self._visible
        if not visible:
            return
        res = self._vis_res
        least = self._min_res
        if least != least:
            least = self._min_res = float(np.minimum.reduce(res))
        if least > free:  # no visible job has few enough cores
            return
        values = self._vis_values
        in_time = now + values[:, _JobTable.REQ_TIME] <= shadow
        maybe = (res <= free) & (in_time | (res <= extra))
        candidates = maybe.nonzero()[0].tolist()
        if not candidates:
            return
        started, core_policy = self._started, self.core_policy
        fits_now, start_job = manager.fits_now, manager.start_job
        for i in candidates:
            job = visible[i]
            free = pool.free_count
            if not free:
                break
            if job is head or job.res > free:
                continue
            on_time = bool(in_time[i])
            if not on_time and job.res > extra:
                continue
            if fits_now(job.res, job.mem, job.gpus) and start_job(job, core_policy):
                started.append(job)
                if not on_time:
                    extra -= job.res

    def _backfill_before(self, head: JobRecord, shadow: float) -> None:
        """RLScheduler's backfilling: every queued job, in submission order, that fits now
        and ends (by its requested time) strictly before ``head``'s fixed reservation."""
        manager = self.manager
        queue = manager.job_queue
        now = manager.now
        for job in queue.head(len(queue)):
            if not manager.pool.free_count:
                break
            if job is head or now + job.req_time >= shadow:
                continue
            if manager.fits_now(job.res, job.mem, job.gpus) and manager.start_job(
                job, self.core_policy
            ):
                self._started.append(job)

    def _backfill_reference(self, head: JobRecord) -> None:
        """:meth:`_backfill_around` as first written, every visible job in turn: the
        statement the fast pass is tested against."""
        manager, pool = self.manager, self.manager.pool
        shadow, extra = self._ends.shadow(head.res, pool.free_count, manager.now)
        now = manager.now
        for job in manager.job_queue.head(self.queue_slots):
            free = pool.free_count
            if not free:
                break
            if job is head or job.res > free:
                continue
            in_time = now + job.req_time <= shadow
            if not in_time and job.res > extra:
                continue
            fits = manager.fits_now(job.res, job.mem, job.gpus)
            if fits and manager.start_job(job, self.core_policy):
                self._started.append(job)
                if not in_time:
                    extra -= job.res

    def _settle(self) -> None:
        """Run on until the agent has a real choice (a visible job it may pick), then observe;
        while a job starves, a job the starvation guard allows."""
        guarded = self.max_wait is not None
        self._allowed = None
        while not self._done:
            self._look()
            if guarded and self._starving():
                allowed = self._allowed = self._guard_slots()
                if allowed.any():
                    break
                self._allowed = None
            elif self._any_fits or (self.backfill and self._visible):
                break
            self._proceed()
        if self._done:
            self._visible = []
            self._seqs = _NO_SEQS
            self._seen = -1
            self._fits[:] = False
        self._obs = self._observer.build()
        self._mask = None

    def _starving(self) -> bool:
        """Whether the guard holds the oldest visible job (slot 0): it waited ``max_wait``."""
        visible = self._visible
        wait = self.max_wait
        return wait is not None and bool(visible) and self.manager.now - visible[0].subtime >= wait

    def _guard_slots(self) -> np.ndarray:
        """The visible slots the guard lets the agent pick while slot 0 starves: slot 0 alone
        if it fits; else, with backfilling, the jobs EASY may backfill around its
        reservation; else none (the environment runs on)."""
        n = len(self._visible)
        fits = self._fits[:n]
        allowed = np.zeros(n, dtype=bool)
        if fits[0]:
            allowed[0] = True
        elif self.backfill:
            manager = self.manager
            now = manager.now
            shadow, extra = self._ends.shadow(self._visible[0].res, manager.pool.free_count, now)
            in_time = now + self._vis_values[:, _JobTable.REQ_TIME] <= shadow
            np.logical_and(fits, in_time | (self._vis_res <= extra), out=allowed)
            allowed[0] = False
        return allowed

    def _guard_slots_reference(self) -> np.ndarray:
        """:meth:`_guard_slots` job by job, from the records: the statement the array one is
        tested against."""
        visible, fits = self._visible, self._fits
        allowed = np.zeros(len(visible), dtype=bool)
        if fits[0]:
            allowed[0] = True
        elif self.backfill:
            manager = self.manager
            now = manager.now
            shadow, extra = self._ends.shadow(visible[0].res, manager.pool.free_count, now)
            planned = self._planned_time
            for i in range(1, len(visible)):
                job = visible[i]
                req = job.req_time if planned is None else planned(job)
                allowed[i] = bool(fits[i]) and (now + req <= shadow or job.res <= extra)
        return allowed

    def _refresh_visible(self) -> None:
        """The visible jobs, their submission numbers (job table rows) and requested cores,
        read again only when the queue moved since the last read (its change count)."""
        queue = self.manager.job_queue
        if queue.changes == self._seen:
            return
        self._seen = queue.changes
        if self.rlscheduler and len(queue) > self.queue_slots:
            visible = self._visible = rlscheduler_visible(queue.head(len(queue)), self.queue_slots)
            table = self._table
            table.update()
            seqs = self._seqs = np.fromiter((j.seq for j in visible), np.intp, len(visible))
        else:
            visible = self._visible = queue.head(self.queue_slots)
            if not visible:
                self._seqs = _NO_SEQS
                return
            table = self._table
            table.update()
            seqs = self._seqs = queue.head_seqs(self.queue_slots)
        values = table.values.take(seqs, axis=0)
        self._vis_values = values
        self._vis_res = values[:, _JobTable.RES]
        self._min_res = math.nan  # read when first needed
        self._free_seen = -1

    def _look(self) -> None:
        """The visible jobs and which of them fit now (``_fits``, ``_any_fits``). Without
        memory or GPU requests a job fits iff its cores are free: one comparison, redone
        only when the queue or the free core count moved."""
        self._refresh_visible()
        visible = self._visible
        n = len(visible)
        fits = self._fits
        if not n:
            fits[:] = False
            self._any_fits = False
            return
        manager = self.manager
        free = manager.pool.free_count
        if not self._table.any_hard:
            if free != self._free_seen:
                self._free_seen = free
                np.less_equal(self._vis_res, free, out=fits[:n])
                if n < self.queue_slots:
                    fits[n:] = False
                least = self._min_res
                if least != least:
                    least = self._min_res = float(np.minimum.reduce(self._vis_res))
                self._any_fits = least <= free
            return
        values = self._vis_values
        fits[:n] = manager.fits_now_many(
            visible,
            self._vis_res,
            values[:, _JobTable.MEM],
            values[:, _JobTable.GPUS],
        )
        fits[n:] = False
        self._any_fits = bool(fits[:n].any())

    def _look_reference(self) -> None:
        """:meth:`_look` as first written (every visible job asks :meth:`~hdeeprm.decision.
        WorkloadManager.fits_now`): the statement the fast one is tested against. It also
        sets what :meth:`_Observer.build_reference` reads."""
        manager = self.manager
        self._visible = manager.job_queue.head(self.queue_slots)
        fits = self._fits
        fits[:] = False
        for i, job in enumerate(self._visible):
            fits[i] = manager.fits_now(job.res, job.mem, job.gpus)
        self._any_fits = bool(fits.any())
        self._seen = -1  # the fast path's cached reads are stale

    # --- masks and reporting ------------------------------------------------------------
    @property
    def visible_jobs(self) -> list[JobRecord]:
        """The jobs in the slots now (slot ``i`` is ``visible_jobs[i]``)."""
        return list(self._visible)

    def info(self) -> dict[str, Any]:
        """The parent's counters, plus the masked actions received this episode."""
        info = super().info()
        info["invalid_actions"] = getattr(self, "invalid_actions", 0)
        if getattr(self, "policies", None) is not None:
            info["policy"] = self._policy
            info["policy_reward"] = self._policy_reward
            info["policy_mask"] = self.policy_masks()
        return info

    def policy_masks(self) -> np.ndarray:
        """The second step's mask, ``queue_slots x P``: row ``i`` tells which policies may
        place the job in slot ``i``. Every core policy places any job that fits (cores and
        per-node memory are tested the same way for all, :meth:`~hdeeprm.decision.
        WorkloadManager.fits_now`), so a row is the slot's first-step mask for every policy:
        all True for a job that may be chosen, all False for an empty or masked slot."""
        if self.policies is None:
            raise SimulationError("policy_masks(): this environment has one step (policies=None)")
        slots = self.action_masks()[: self.queue_slots]
        return np.repeat(slots[:, None], len(self.policies), axis=1)

    def _policy_row(self, slot: int) -> np.ndarray:
        return self.policy_masks()[slot]

    def action_masks(self) -> np.ndarray:
        """Valid actions now: slots holding a job that fits (any job, with backfilling) and
        do nothing unless it could never end; while a job starves, what the starvation guard
        allows (module docstring)."""
        return self._current_mask().copy()

    def _current_mask(self) -> np.ndarray:
        """:meth:`action_masks`' array itself, computed once per state (callers copy it or
        only read it)."""
        mask = self._mask
        if mask is None:
            mask = np.zeros(self._nb_actions, dtype=bool)
            if self._done:
                mask[:] = True
            else:
                n = len(self._visible)
                if self.backfill:
                    mask[:n] = True
                else:
                    mask[: self.queue_slots] = self._fits
                manager = self.manager
                mask[self.do_nothing] = bool(manager.running) or not manager.no_more_jobs
                if self.rlscheduler and n and mask[:n].any():
                    mask[self.do_nothing] = False  # RLScheduler's agent always picks a job
                allowed = self._allowed
                if allowed is not None:  # the guard (module docstring)
                    mask[:n] = allowed
                    if allowed[0]:  # the starving job fits: it, and nothing else
                        mask[self.do_nothing] = False
            self._mask = mask
        return mask


class _Observer:
    """The job-selection observation (module docstring), built into one reused array
    (:meth:`build`; the environment hands out copies of it)."""

    def __init__(self, env: JobSelectionEnv) -> None:
        self.env = env
        self._buf = np.zeros(self.size, dtype=np.float32)
        #: Job rows written by the last build (the rows past the visible jobs are zeros).
        self._rows = 0

    @property
    def size(self) -> int:
        env = self.env
        return env.queue_slots * env.job_width + env._cluster.size + 1

    def build(self) -> np.ndarray:
        """The fixed columns are the visible jobs' rows of the job table; the wait column is
        computed here, with the float64 operations the table applied to the fixed ones."""
        env = self.env
        width = env.job_width
        obs = self._buf
        visible = env._visible
        n = len(visible)
        if self._rows > n:  # slots emptied since the last build
            obs[n * width : self._rows * width] = 0.0
        self._rows = n
        if n:
            block = obs[: n * width].reshape(n, width)
            env._table.rows.take(env._seqs, axis=0, out=block)
            wait = env.manager.now - env._vis_values[:, _JobTable.SUBTIME]
            if env.log_features:
                raw = np.empty((n, 3))
                raw[:, 0] = wait
                raw[:, 1] = env._vis_values[:, _JobTable.REQ_TIME]
                raw[:, 2] = env._vis_res
                logs = np.log1p(np.maximum(raw, 0.0)) / env._log_scale
                block[:, 6:9] = np.minimum(np.nan_to_num(logs, posinf=1.0), 1.0)
            if env.max_wait is not None:
                block[:, env._guard_column()] = _guard_feature(wait, env.max_wait)
            wait /= env._scale[0]
            if not (env._table.finite and math.isfinite(env.manager.now)):
                wait = np.nan_to_num(wait, posinf=1.0)
            block[:, 0] = np.minimum(wait, 1.0)
            block[:, 5] = env._fits[:n]
        return self._finish(obs)

    def build_reference(self) -> np.ndarray:
        """:meth:`build` as first written (a row per visible job, from its record, and the
        cluster's sums over every node): the statement the fast one is tested against."""
        env = self.env
        slots, width = env.queue_slots, env.job_width
        obs = np.zeros(slots * width + env._cluster.size + 1, dtype=np.float32)
        visible = env._visible
        if visible:
            now = env.manager.now
            n = len(visible)
            raw = np.array(
                [(now - j.subtime, j.req_time, j.res, j.mem, j.mem_bw) for j in visible],
                dtype=float,
            )
            block = obs[: slots * width].reshape(slots, width)
            if env.log_features:
                logs = np.log1p(np.maximum(raw[:, [0, 1, 2]], 0.0)) / env._log_scale
                block[:n, 6:9] = np.minimum(np.nan_to_num(logs, posinf=1.0), 1.0)
            if env.max_wait is not None:
                block[:n, env._guard_column()] = _guard_feature(raw[:, 0].copy(), env.max_wait)
            raw = np.minimum(np.nan_to_num(raw / env._scale, posinf=1.0), 1.0)
            block[:n, :5] = raw
            block[:n, 5] = env._fits[:n]
            if env._cluster.nb_gpu_types:
                block[:n, width - 2] = [min(1.0, j.gpus / env._max_gpus) for j in visible]
                block[:n, width - 1] = [j.workload_type == "network" for j in visible]
        return self._finish(obs, env._cluster.features_reference())

    def _finish(self, obs: np.ndarray, cluster: np.ndarray | None = None) -> np.ndarray:
        """The cluster features and the hidden-queue feature, after the job rows."""
        env = self.env
        slots, width = env.queue_slots, env.job_width
        if cluster is None:
            cluster = env._cluster.features()
        start = slots * width
        obs[start : start + len(cluster)] = cluster
        hidden = env.manager.queue_size - len(env._visible)
        obs[-1] = min(1.0, max(hidden, 0) / slots)
        return obs
