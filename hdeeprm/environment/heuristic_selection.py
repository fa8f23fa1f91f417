"""Choosing the EASY queue ordering as the action (``hdeeprm/HeuristicSelection-v0``).

The seed PhD thesis (``001``, chapters 5 and 6) tunes EASY backfilling by choosing its queue
*reordering policy* online, with a bandit or by simulation, and MARS (``004``) switches between
pre-built strategies. Here that choice is an environment's action: the workload manager runs
EASY (:class:`~hdeeprm.scheduling.BackfillScheduler`, any preset: predictor, correction,
variant, threshold ``theta``), and the agent picks which ordering (primary, and optionally
backfilling) it uses until the next decision point.

* **Action** ``Discrete(len(choices))``: ``choices`` are ``"P"`` (the primary ordering; the
  preset's backfilling ordering stays) or ``"P/B"`` (both) strings; the default is the
  thesis's 12 chapter-6 orderings as primary. ``env.action_names`` lists them. Every choice
  is always valid (``info["action_mask"]`` is all true).
* **Decision point** (``period``): ``None``, each scheduling pass of the workload manager
  (every submission or completion that leaves jobs queued); a number of seconds, the thesis's
  *policy period*: time is cut into periods of that length from the window's first submission,
  and the agent chooses at the first scheduling pass of each period, the choice holding for
  the rest of it (periods where nothing queues are skipped). In both modes a pass where the
  choice cannot matter is not shown: fewer than two queued jobs, every queued job fits in the
  free cores at once (all start, in any order), or none fits (none starts); the current choice
  is applied there (cores only: on nodes short of memory the order could still matter).
* **Reward**: the potential-based rewards of :mod:`hdeeprm.environment.objective_reward` for
  ``avg_bounded_slowdown`` (AVEbsld, tau = 10 s, the thesis's metric): an episode's rewards add
  up to minus its average bounded slowdown.
* **Observation**: the options' observation type (``queue`` recommended: queue length, head
  jobs and free cores) followed by a one-hot of the choice in force.
* **Episodes**: the options' ``pybatsim.env.episodes`` windows and splits, exactly as the
  other environments (shared code).
* ``info`` adds ``choice`` (the name in force) and, for the last step's span, the jobs that
  finished (``finished_jobs``), their summed waits (``finished_wait``, s) and bounded
  slowdowns (``finished_bsld``): the bandit feedback of thesis eq. 6.8.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from hdeeprm.decision import ActionSpace, WorkloadManager
from hdeeprm.decision.actions import CORE_POLICIES
from hdeeprm.decision.job_queue import JobRecord
from hdeeprm.environment.env import HeterogeneousClusterEnv
from hdeeprm.environment.reward import bounded_slowdown
from hdeeprm.errors import SimulationError
from hdeeprm.inputs import ExperimentInputs
from hdeeprm.scheduling import BackfillScheduler, SchedulerConfig, parse_scheduler
from hdeeprm.scheduling.orderings import canonical

#: The thesis's chapter-6 search space (section 6.2.1), in its order.
THESIS_ORDERINGS: tuple[str, ...] = (
    "FCFS",
    "LCFS",
    "SPF",
    "LPF",
    "LQF",
    "SQF",
    "LEXP",
    "SEXP",
    "LRF",
    "SRF",
    "LAF",
    "SAF",
)
#: The objective the rewards add up to.
OBJECTIVE = "avg_bounded_slowdown"


def parse_choices(choices: Sequence[str] | None, default_backfill: str) -> list[tuple[str, str]]:
    """``"P"`` or ``"P/B"`` strings to ``(primary, backfill)`` pairs (errors name the entry)."""
    if choices is None:
        choices = THESIS_ORDERINGS
    if isinstance(choices, str) or not len(choices):
        raise ValueError("choices must be a non-empty list of 'P' or 'P/B' ordering names")
    pairs: list[tuple[str, str]] = []
    for i, raw in enumerate(choices):
        parts = str(raw).split("/")
        if len(parts) > 2 or not all(parts):
            raise ValueError(f"choices[{i}]: expected 'P' or 'P/B', got {raw!r}")
        try:
            parts = [canonical(name) for name in parts]
        except ValueError as error:
            raise ValueError(f"choices[{i}]: {error}") from None
        pair = (parts[0], parts[1] if len(parts) == 2 else default_backfill)
        if pair in pairs:
            raise ValueError(f"choices[{i}]: {raw!r} repeats an earlier choice")
        pairs.append(pair)
    return pairs


class _StepJobs:
    """Job listener: queued cores (to skip passes where the order cannot matter) and the
    jobs finished since the last step (the bandit's feedback)."""

    def __init__(self, manager: WorkloadManager) -> None:
        self.manager = manager
        self.queued_cores = 0
        self.finished = 0
        self.wait = 0.0
        self.bsld = 0.0

    def clear(self) -> None:
        self.finished = 0
        self.wait = 0.0
        self.bsld = 0.0

    def submitted(self, record: JobRecord) -> None:
        self.queued_cores += record.res

    def started(self, record: JobRecord) -> None:
        self.queued_cores -= record.res

    def completed(self, record: JobRecord) -> None:
        start = record.start
        self.finished += 1
        self.wait += start - record.subtime
        self.bsld += bounded_slowdown(record.subtime, start, self.manager.now)


class _ChoiceObserver:
    """The options' observation followed by a one-hot of the choice in force."""

    def __init__(self, base: Any, env: HeuristicSelectionEnv) -> None:
        self.base = base
        self.env = env
        self.size = base.size + len(env.choices)

    def build(self) -> np.ndarray:
        obs = np.zeros(self.size, dtype=np.float32)
        obs[: self.base.size] = self.base.build()
        obs[self.base.size + self.env.choice] = 1.0
        return obs


class HeuristicSelectionEnv(HeterogeneousClusterEnv):
    """Choose EASY's queue ordering at each decision point (see the module docstring).

    Args:
        inputs, common: the prepared inputs and the keywords every environment takes
            (``trace``, ``split``, ``render_mode``, ``log_level``), as
            :class:`~hdeeprm.environment.env.HeterogeneousClusterEnv` (the options' objective,
            actions and reward keys are not used here).
        scheduler: the EASY configuration the orderings plug into: a preset name of
            :data:`hdeeprm.scheduling.PRESETS` or an options-style object
            (``{"preset": "easy", "theta": 144000}``); its primary ordering is overridden by
            each choice.
        choices: ``"P"`` / ``"P/B"`` ordering names (default: the thesis's 12).
        period: seconds of simulated time a choice holds (``None``: one scheduling pass).
        core_policy: the resource manager's core policy placing started jobs.
        initial: index of the choice in force before the first decision.
    """

    def __init__(
        self,
        inputs: ExperimentInputs,
        *,
        scheduler: str | dict[str, Any] | SchedulerConfig = "easy",
        choices: Sequence[str] | None = None,
        period: float | None = None,
        core_policy: str = "high_gflops",
        initial: int = 0,
        **common: Any,
    ) -> None:
        if core_policy not in CORE_POLICIES:
            raise ValueError(
                f"unknown core policy {core_policy!r}; expected one of {', '.join(CORE_POLICIES)}"
            )
        if period is not None and not (isinstance(period, (int, float)) and 0 < period < math.inf):
            raise ValueError(f"period must be positive seconds or None, got {period!r}")
        config = (
            scheduler
            if isinstance(scheduler, SchedulerConfig)
            else parse_scheduler(scheduler, "scheduler")
        )
        self.config = config
        self.choices = parse_choices(choices, config.backfill)
        if not 0 <= initial < len(self.choices):
            raise ValueError(f"initial must index choices (0..{len(self.choices) - 1})")
        self.initial = initial
        self.choice = initial
        self.period = None if period is None else float(period)
        self.core_policy = core_policy
        self._orderings = sorted({name for pair in self.choices for name in pair})
        self._pair = ActionSpace([("first", core_policy)], void=False)
        super().__init__(inputs, **common)
        self.objective = OBJECTIVE
        self.reward_kind = "objective"
        self.action_names = [p if b == config.backfill else f"{p}/{b}" for p, b in self.choices]
        self.action_space = spaces.Discrete(len(self.choices))
        self._nb_actions = len(self.choices)
        #: How many decisions chose each action in the current episode.
        self.choice_counts = [0] * len(self.choices)
        self._period_index = -1
        self._t_first = 0.0

    # --- shared machinery: the parent's reset builds manager and observer through these --
    def _new_manager(self, seed: int) -> WorkloadManager:
        self.scheduler = BackfillScheduler(self.config, orderings=self._orderings)
        manager = WorkloadManager(
            self.inputs.platform,
            self._pair,
            seed=seed,
            scheduler=self.scheduler,
            log_detail=self.options.log_detail,
        )
        self._jobs = _StepJobs(manager)
        manager.job_listeners.append(self._jobs)
        return manager

    def _make_observer(self, manager: WorkloadManager) -> _ChoiceObserver:
        return _ChoiceObserver(super()._make_observer(manager), self)

    @property
    def action_size(self) -> int:
        return len(self.choices)

    # --- Gymnasium API ----------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start an episode (the parent's ``reset``) and run to the first real choice."""
        self.choice = self.initial
        self.choice_counts = [0] * len(self.choices)
        self._period_index = -1
        super().reset(seed=seed, options=options)
        self._t_first = self.manager.now
        self._use(self.choice)
        self._settle()
        self._jobs.clear()
        self._obs = self._observer.build()
        self._mask = None
        return self._obs.copy(), self.info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Use ordering ``action`` until the next decision point and run to it."""
        if self.engine is None:
            raise SimulationError("step() before reset()")
        if self._done:
            raise SimulationError("the simulation has ended: call reset() to start a new one")
        if isinstance(action, np.ndarray) and action.shape in ((), (1,)):
            action = action.reshape(())[()]
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
            raise SimulationError(f"action {action!r} is not an integer")
        action = int(action)
        if not 0 <= action < self._nb_actions:
            raise SimulationError(f"action {action} is outside 0..{self._nb_actions - 1}")
        meter = self._meter
        assert meter is not None
        self._jobs.clear()
        self._use(action)
        self.choice_counts[action] += 1
        self._period_index = self._period_of(self.manager.now)
        meter.start()
        self._done = not self._run(self.manager.act(0))
        self._settle()
        self._reward = float(meter.reward())
        self.steps += 1
        self.total_reward += self._reward
        self._obs = self._observer.build()
        self._mask = None
        return self._obs.copy(), self._reward, self._done, False, self.info()

    # --- simulation ---------------------------------------------------------------------
    def _use(self, index: int) -> None:
        self.choice = index
        primary, backfill = self.choices[index]
        self.scheduler.use_orderings(primary, backfill)

    def _period_of(self, now: float) -> int:
        if self.period is None:
            return 0
        return int((now - self._t_first) // self.period)

    @property
    def current_period(self) -> int:
        """Index of the policy period the simulation is in (0 without a ``period``)."""
        return self._period_of(self.manager.now)

    def period_start(self, index: int) -> float:
        """Simulated time at which period ``index`` starts (needs a ``period``)."""
        if self.period is None:
            raise ValueError("this environment has no period")
        return self._t_first + index * self.period

    def _needs_choice(self) -> bool:
        """Whether the pass due now is shown to the agent (module docstring)."""
        manager = self.manager
        if manager.queue_size < 2:
            return False
        free = manager.pool.free_count
        if self._jobs.queued_cores <= free:
            return False  # every queued job starts, in any order
        smallest = manager.job_queue.peek("smallest")
        if smallest is None or smallest.res > free:
            return False  # no queued job starts, in any order
        return self.period is None or self._period_of(manager.now) > self._period_index

    def _settle(self) -> None:
        """Apply the choice in force at passes the agent is not asked about."""
        while not self._done and not self._needs_choice():
            self._done = not self._run(self.manager.act(0))

    # --- masks and reporting ------------------------------------------------------------
    def action_masks(self) -> np.ndarray:
        """Every choice is valid at every decision point."""
        return np.ones(len(self.choices), dtype=bool)

    def info(self) -> dict[str, Any]:
        """The parent's counters, the choice in force and the last step's finished jobs."""
        info = super().info()
        jobs = getattr(self, "_jobs", None)
        info["choice"] = self.action_names[self.choice] if hasattr(self, "action_names") else ""
        if jobs is not None:
            info["finished_jobs"] = jobs.finished
            info["finished_wait"] = jobs.wait
            info["finished_bsld"] = jobs.bsld
        return info


@dataclass(frozen=True)
class HeuristicSelectionFactory:
    """A picklable environment factory (``AsyncVectorEnv`` subprocesses, Ray actors)."""

    options: str | None = None
    output_dir: str | None = None
    split: str | None = None
    kwargs: tuple[tuple[str, Any], ...] = ()
    inputs: ExperimentInputs | None = None

    def __call__(self) -> HeuristicSelectionEnv:
        if self.inputs is not None:
            return HeuristicSelectionEnv(self.inputs, split=self.split, **dict(self.kwargs))
        if self.options is None:
            raise TypeError("give options (a path) or prepared inputs")
        return HeuristicSelectionEnv.from_options(
            self.options, self.output_dir, split=self.split, **dict(self.kwargs)
        )


def heuristic_selection_factories(
    num_envs: int,
    *,
    options: str | os.PathLike[str] | None = None,
    output_dir: str | os.PathLike[str] | None = None,
    inputs: ExperimentInputs | None = None,
    split: str | None = None,
    **kwargs: Any,
) -> list[Callable[[], HeuristicSelectionEnv]]:
    """``num_envs`` factories for :class:`~hdeeprm.training.ppo.PPOTrainer` (each environment
    gets its own seed at reset); ``kwargs`` go to :class:`HeuristicSelectionEnv`."""
    factory = HeuristicSelectionFactory(
        None if options is None else os.fspath(options),
        None if output_dir is None else os.fspath(output_dir),
        split,
        tuple(sorted(kwargs.items())),
        inputs,
    )
    return [factory] * num_envs
