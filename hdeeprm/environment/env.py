"""The Gymnasium environment: one episode is one full simulation of the workload.

A *step* is one decision point of the workload manager (thesis 3.2.2): the agent picks a
policy pair (or void), the environment applies it until the chosen job no longer fits, then
runs the simulation to the next decision point, forwarding the decisions owed meanwhile
(rejections, P-state changes of released cores). The reward of the step measures that
action's consequences over that span (see :mod:`hdeeprm.environment.reward`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TypeVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from hdeeprm.decision import ActionSpace, WorkloadManager
from hdeeprm.environment.episodes import Episodes, EpisodeWindows
from hdeeprm.environment.objective_reward import ObjectiveReward
from hdeeprm.environment.observation import ObservationBuilder, Observer
from hdeeprm.environment.reward import RewardMeter, episode_objective
from hdeeprm.errors import SimulationError
from hdeeprm.inputs import ExperimentInputs, prepare_inputs
from hdeeprm.logs import set_level
from hdeeprm.options import Options, load_options
from hdeeprm.simulation import Engine, write_outputs
from hdeeprm.simulation.events import Decision
from hdeeprm.simulation.service_time import ServiceTimeModel

_Env = TypeVar("_Env", bound="HeterogeneousClusterEnv")


def action_space_from_options(options: Options) -> ActionSpace:
    """The action space the options enable: the selected pairs (all 36 if none) + void."""
    return ActionSpace(options.env.selection, void=options.env.void)


class HeterogeneousClusterEnv(gym.Env[np.ndarray, np.int64]):
    """Workload management of a heterogeneous cluster as a Gymnasium environment.

    Built from prepared inputs, it reads and writes no input file: :meth:`from_options` is the
    path that prepares them from an options file first (and the one ``gymnasium.make`` takes).
    The job-selection and heuristic-selection environments derive from this class and take the
    same ``inputs`` and keywords.

    Args:
        inputs: the run's prepared inputs (:func:`hdeeprm.inputs.prepare_inputs`); their options'
            ``pybatsim.env`` block sets objective, actions, observation and queue sensitivity.
        trace: record the Batsim time series so :meth:`write_outputs` can write them (slower;
            can also be switched per episode with ``reset(options={"trace": True})``).
        split: which jobs episodes run on: ``"train"`` (a window sampled per episode from
            ``episodes.train_jobs``; the default when the options have an ``episodes`` block),
            ``"eval"`` (the fixed windows of ``episodes.eval_jobs``; ``reset(options={"window":
            k})`` picks one, else they come in turn), ``"val"`` (the same with the validation
            windows of ``episodes.val_jobs``, a range of the training part) or ``"all"`` (the
            whole workload; the default without ``episodes``). See
            :mod:`hdeeprm.environment.episodes`.
        log_level: level of the ``hdeeprm`` logger (default: the options' ``log_level``).
            The environment installs no handler: records go wherever the application's
            logging sends them (nowhere by default); repeated warnings are aggregated unless
            the options set ``log_detail``.

    Spaces: ``Discrete(len(actions))`` and ``Box(0, 1, (n,), float32)`` with ``n`` given by
    the observation type (see :mod:`hdeeprm.environment.observation`). ``terminated`` is true
    when the simulation ends; ``truncated`` is never set. ``info`` holds the simulation time and
    running counters (see :meth:`info`).
    """

    #: ``ansi``: one line of counters; ``rgb_array``: the cores as an image (one row of
    #: squares per node, busy cores orange). Gymnasium's ``make`` builds ``human``,
    #: ``ansi_list`` and ``rgb_array_list`` on them.
    metadata: dict[str, Any] = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        inputs: ExperimentInputs,
        *,
        trace: bool = False,
        split: str | None = None,
        render_mode: str | None = None,
        log_level: str | None = None,
    ) -> None:
        self.inputs = inputs
        self.options = inputs.options
        set_level(log_level if log_level is not None else self.options.log_level)
        env_opts = self.options.env
        self.objective = env_opts.objective
        self.actions = action_space_from_options(self.options)
        self.action_names = self.actions.names
        self.sim_platform = inputs.sim_platform
        episodes = env_opts.episodes
        if split is None:
            split = "train" if episodes is not None else "all"
        source = str(self.options.source) if self.options.source else None
        capacity = (len(inputs.platform.cores), inputs.platform.reference_speed * 1e9)
        self.windows: Episodes = EpisodeWindows(inputs.workload, episodes, split, source, capacity)
        self.split = split
        #: ``(first, last)`` job indices (inclusive) of the current episode's window.
        self.window: tuple[int, int] = (0, len(inputs.workload.jobs) - 1)
        #: Index of the current fixed window (``None`` outside ``split="eval"`` / ``"val"``).
        self.eval_window: int | None = None
        self.trace = trace
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be None, 'ansi' or 'rgb_array', got {render_mode!r} "
                "(gymnasium.make also accepts 'human', 'ansi_list' and 'rgb_array_list')"
            )
        self.render_mode = render_mode
        # A manager exists from the start so the spaces can be sized; reset() replaces it.
        self.manager = self._new_manager(self.options.seed)
        self._observer = self._make_observer(self.manager)
        self.observation_space = spaces.Box(0.0, 1.0, (self._observer.size,), np.float32)
        self.action_space = spaces.Discrete(len(self.actions))
        self._nb_actions = len(self.actions)
        self.engine: Engine | None = None
        #: CuSH's locality penalties (:mod:`hdeeprm.simulation.service_time`) for the episodes
        #: reset from now on: the options' ``service_time``; ``None`` (default): durations as
        #: the profiles say.
        self.service_time: ServiceTimeModel | None = ServiceTimeModel.from_settings(
            inputs.platform, self.options.service_time
        )
        self.reward_kind = env_opts.reward
        self._meter: RewardMeter | ObjectiveReward | None = None
        self._obs = np.zeros(self._observer.size, dtype=np.float32)
        self._mask: np.ndarray | None = None
        self._reward = 0.0
        self._done = True
        self.steps = 0
        self.total_reward = 0.0

    @classmethod
    def from_options(
        cls: type[_Env],
        options: str | os.PathLike[str] | Options,
        output_dir: str | os.PathLike[str] | None = None,
        custom_workload: str | os.PathLike[str] | None = None,
        **kwargs: Any,
    ) -> _Env:
        """Prepare the inputs an options file describes, then build the environment.

        The preparing path: generates (or reuses) the run folder's inputs with
        :func:`~hdeeprm.inputs.prepare_inputs`.

        Args:
            options: an options file (path) or loaded :class:`~hdeeprm.options.Options`.
            output_dir: the run folder where inputs are generated (default: the options' folder).
            custom_workload: a Batsim workload JSON replacing the options' trace (``-cw``).
            kwargs: the environment's own keywords (``split``, ``trace``...).
        """
        if not isinstance(options, Options):
            options = load_options(options)
        return cls(prepare_inputs(options, output_dir, custom_workload=custom_workload), **kwargs)

    # --- construction helpers ---------------------------------------------------------
    def _new_manager(self, seed: int) -> WorkloadManager:
        return WorkloadManager(
            self.inputs.platform, self.actions, seed=seed, log_detail=self.options.log_detail
        )

    def _make_observer(self, manager: WorkloadManager) -> Observer:
        env_opts = self.options.env
        return ObservationBuilder(
            env_opts.observation, manager, self.inputs.job_limits, env_opts.queue_sensitivity
        )

    @property
    def observation_size(self) -> int:
        return self._observer.size

    @property
    def action_size(self) -> int:
        return len(self.actions)

    @property
    def nb_eval_windows(self) -> int:
        """Number of fixed windows ``reset(options={"window": k})`` selects: the validation
        windows with ``split="val"``, otherwise the evaluation windows (0 without
        ``eval_jobs``)."""
        return self.windows.nb_eval_windows

    # --- Gymnasium API ----------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a new simulation and run it to the first decision point.

        The first reset without a seed uses the options' seed. ``options={"trace": bool}``
        switches output recording for this episode; ``options={"window": k}`` selects
        fixed window ``k`` (``split="eval"`` or ``"val"``). The train split draws its window
        from ``np_random``; a fixed window's random policies are seeded from ``eval_seed`` (or
        ``val_seed``) and ``k`` alone. ``options={"window": k, "workload": w}`` plays the
        :class:`~hdeeprm.workload.Workload` ``w`` in place of window ``k``'s jobs, with the
        window's seeds: a what-if version of the window (a planner's view of it, say).
        """
        if seed is None and self._np_random is None:
            seed = self.options.seed
        super().reset(seed=seed)
        options = options or {}
        unknown = set(options) - {"trace", "window", "workload"}
        if unknown:
            raise ValueError(
                f"unknown reset option(s) {', '.join(sorted(unknown))}; allowed: trace, "
                "window, workload"
            )
        if "workload" in options and options.get("window") is None:
            raise ValueError('reset option "workload" needs a fixed "window" (its seeds)')
        if "trace" in options:
            self.trace = bool(options["trace"])
        first, self.eval_window = self.windows.choose(self.np_random, options.get("window"))
        workload = self.windows.workload_at(first)
        self.window = (first, first + len(workload.jobs) - 1)
        if "workload" in options:
            workload = options["workload"]
        manager_seed = int(self.np_random.integers(0, 2**63 - 1))
        if self.eval_window is not None:
            manager_seed = self.windows.eval_seed_of(self.eval_window)
        self.manager = self._new_manager(manager_seed)
        self._observer = self._make_observer(self.manager)
        # The manager ignores RESOURCE_STATE_CHANGED and objective rewards do not move
        # within an instant, so those confirmations are not sent; the thesis rewards keep
        # them (their rate is refreshed after every message that is not a decision point).
        self.engine = Engine(
            self.sim_platform,
            workload,
            trace=self.trace,
            service_time=self.service_time,
            state_change_events=self.reward_kind == "thesis",
        )
        if self.reward_kind == "thesis":
            self._meter = RewardMeter(self.objective, self.manager, self.engine)
        else:
            self._meter = ObjectiveReward(
                self.objective,
                self.manager,
                self.engine,
                len(workload.jobs),
                min(job.subtime for job in workload.jobs),
            )
        self.steps = 0
        self.total_reward = 0.0
        self._reward = 0.0
        message = self.engine.start()
        if self.manager.ingest(message):
            self._done = False
        else:
            self._done = not self._run(self.manager.flush())
        self._obs = self._observer.build()
        self._mask = None
        return self._obs.copy(), self.info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Apply ``action`` at the current decision point and run to the next one."""
        if self.engine is None:
            raise SimulationError("step() before reset()")
        if self._done:
            raise SimulationError("the simulation has ended: call reset() to start a new one")
        if type(action) is not int or not 0 <= action < self._nb_actions:
            if isinstance(action, np.ndarray) and action.shape == (1,):
                action = action[0]
            if not self.action_space.contains(action):
                raise SimulationError(
                    f"action {action!r} is outside the action space (0..{len(self.actions) - 1})"
                )
        meter = self._meter
        assert meter is not None
        decisions = self.manager.act(int(action))
        meter.start()
        done = self._done = not self._run(decisions)
        reward = self._reward = float(meter.reward())
        self.steps += 1
        self.total_reward += reward
        obs = self._obs = self._observer.build()
        self._mask = None
        return obs.copy(), reward, done, False, self.info()

    def _run(self, decisions: list[Decision]) -> bool:
        """Proceed until a decision point (True) or the end of the simulation (False)."""
        engine, manager, meter = self.engine, self.manager, self._meter
        assert engine is not None and meter is not None
        # Objective rewards follow the jobs as they come and go: nothing to refresh.
        refresh = type(meter) is not ObjectiveReward
        while not engine.finished:
            message = engine.proceed(decisions)
            meter.advance(message.now)
            if manager.ingest(message):
                return True
            decisions = manager.flush()
            if refresh:
                meter.refresh()
        return False

    def render(self) -> str | np.ndarray | None:
        if self.render_mode == "rgb_array":
            return self._cores_image()
        if self.render_mode != "ansi":
            return None
        info = self.info()
        return (
            f"t={info['time']:.3f} queue={info['queue_size']} running={info['running_jobs']} "
            f"busy={info['busy_cores']} energy={info['energy']:.1f}J"
        )

    def _cores_image(self, scale: int = 4) -> np.ndarray:
        """``(nodes * scale, widest node * scale, 3)`` uint8: each core a square, busy
        orange, idle grey, black where a node has fewer cores than the widest one."""
        pool = self.manager.pool
        width = max(len(cores) for cores in pool.node_cores)
        state = np.zeros((len(pool.node_cores), width), dtype=np.intp)  # 0: no core
        for node, cores in enumerate(pool.node_cores):
            state[node, : len(cores)] = [2 if pool.core_job[c] is not None else 1 for c in cores]
        colours = np.array([[0, 0, 0], [190, 190, 190], [235, 125, 30]], dtype=np.uint8)
        return colours[state].repeat(scale, axis=0).repeat(scale, axis=1)

    # --- thesis verbs (hdeeprm.agents.Agent.observe / rewarded) -------------------------
    def observation(self) -> np.ndarray:
        """The current observation (no side effect; may be called any number of times)."""
        return self._obs.copy()

    def reward(self) -> float:
        """The reward of the last step (0 before the first one)."""
        return self._reward

    # --- reporting --------------------------------------------------------------------
    @property
    def finished(self) -> bool:
        """Whether the current simulation has ended."""
        return self._done

    def info(self) -> dict[str, Any]:
        """Simulation time and running counters of the current episode."""
        # Read per step: plain attributes and lengths rather than the properties that wrap
        # them (the same values).
        manager, engine = self.manager, self.engine
        queued = len(manager.job_queue.jobs)
        running = len(manager.running)
        pool = manager.pool
        info: dict[str, Any] = {
            "time": manager.now,
            "queue_size": queued,
            "running_jobs": running,
            "active_jobs": queued + running,
            "busy_cores": pool.nb_cores - pool.free_count,
            "energy": engine.consumed_energy if engine is not None else 0.0,
            "submitted": manager.nb_submitted,
            "completed": manager.nb_completed,
            "rejected": len(manager.rejected),
            "decisions": manager.nb_decisions,
            "steps": self.steps,
            "window": self.window,
            "action_mask": self.action_masks(),
        }
        if self._meter is not None and self.steps:
            info["span"] = self._meter.span
        if self._done and engine is not None and engine.finished:
            info["objective"] = self.objective_value()
        return info

    def action_masks(self) -> np.ndarray:
        """Valid actions now (bool per action): pairs whose chosen job can start now, and void
        (see :meth:`~hdeeprm.decision.WorkloadManager.action_mask`). The name is the one
        sb3-contrib's ``MaskablePPO`` calls."""
        mask = self._mask
        if mask is None:
            if self._done:
                mask = np.ones(len(self.actions), dtype=bool)
            else:
                # The manager's own array (read only here): copied once, below.
                mask = self.manager.shared_action_mask()
            self._mask = mask  # one computation per state (info and MaskablePPO both ask)
        return mask.copy()

    def objective_value(self) -> float:
        """The objective over the finished simulation (see ``episode_objective``)."""
        if self.engine is None:
            raise SimulationError("no simulation yet: call reset()")
        meter = self._meter
        if (
            type(meter) is ObjectiveReward
            and meter.episode_value is not None
            and meter.engine is self.engine
            and meter.objective == self.objective
        ):
            return meter.episode_value  # the same function of the same ended simulation
        return episode_objective(self.objective, self.engine, self.manager.pool.nb_cores)

    def write_outputs(self, output_dir: str | os.PathLike[str] | None = None) -> dict[str, Path]:
        """Write the Batsim output files of the current episode (needs ``trace``)."""
        if self.engine is None:
            raise SimulationError("no simulation yet: call reset()")
        if not self.trace:
            raise SimulationError(
                "this episode was not traced: reset(options={'trace': True}) to record outputs"
            )
        return write_outputs(self.engine, output_dir or self.inputs.output_dir)


class GymEntryPoint:
    """``gymnasium.make``'s entry point of an environment class.

    ``gymnasium.make(id, options=..., output_dir=..., custom_workload=..., **kwargs)`` prepares
    the inputs (:meth:`HeterogeneousClusterEnv.from_options`); ``inputs=...`` builds from
    prepared ones. ``metadata`` is the class's, so ``gymnasium.make`` knows its render modes.
    """

    def __init__(self, env_class: type[HeterogeneousClusterEnv]) -> None:
        self.env_class = env_class

    @property
    def metadata(self) -> dict[str, Any]:
        return self.env_class.metadata

    def __call__(
        self,
        options: str | os.PathLike[str] | Options | None = None,
        output_dir: str | os.PathLike[str] | None = None,
        custom_workload: str | os.PathLike[str] | None = None,
        *,
        inputs: ExperimentInputs | None = None,
        **kwargs: Any,
    ) -> HeterogeneousClusterEnv:
        if inputs is not None:
            return self.env_class(inputs, **kwargs)
        if options is None:
            raise TypeError("give options (a path or an Options) or prepared inputs")
        return self.env_class.from_options(options, output_dir, custom_workload, **kwargs)
