"""Validation of the experiment options file.

The format is the thesis's (appendix F), so the original options files keep working::

    {"seed": 20091995, "nb_resources": 64, "nb_jobs": 5000,
     "workload_file_path": "...swf", "platform_file_path": "...json",
     "pybatsim": {"log_level": "WARNING",
       "env": {"objective": "avg_utilization",
               "actions": {"selection": [{"shortest": ["high_gflops", "high_mem"]}],
                           "void": false},
               "observation": "small", "queue_sensitivity": 0.03},
       "agent": {"type": "LEARNING", "run": "train", "hidden": 128, "lr": 0.001,
                 "gamma": 0.95}}}

New optional keys: ``start_job`` (usable jobs skipped before the ``nb_jobs`` window),
``synthetic_workload`` (generate a Lublin-Feitelson workload instead of reading a trace),
``use_walltime`` (requested time becomes the Batsim walltime), ``mem_bw_range``, in the env block
``reward`` (``"objective"``, rewards that add up to the objective, or ``"thesis"``) and
``episodes`` (training and evaluation windows of the workload)::

    "episodes": {"window_jobs": 4000, "train_jobs": [0, 30000],
                 "eval_jobs": [30000, 51899], "eval_windows": 8, "eval_seed": 0,
                 "val_jobs": [0, 30000], "val_windows": 8, "val_seed": 0}

(job indices into the converted workload in submission order, ranges half-open ``[start, end)``;
``eval_jobs`` and ``val_jobs`` are optional, ``eval_windows``/``val_windows`` default to 8 and
``eval_seed``/``val_seed`` to 0; ``eval_jobs`` must overlap neither ``train_jobs`` nor
``val_jobs``; see ``docs/learning.md``) and, in the agent block, ``params`` (free-form
constructor arguments for a user's learning agent) and ``scheduler`` (a backfilling
scheduler for CLASSIC runs: a preset name such as ``"easy++"`` or an object, see
:func:`hdeeprm.scheduling.parse_scheduler` and ``docs/scheduling.md``), ``algorithm``
(``"ppo"``: the built-in PPO trainer instead of an agent file; ``params`` then holds its
hyperparameters) and ``run: "evaluate"`` (greedy decisions, no updates).

Everything is checked before a simulation starts; unknown or misspelt keys are errors, and every
error names the key (as a JSON path), the bad value and the allowed values. Relative paths are
resolved against the options file's folder.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hdeeprm._jsonfile import read_json
from hdeeprm.decision.actions import CORE_POLICIES, JOB_POLICIES, PLACEMENT_POLICIES
from hdeeprm.errors import InputError, path_argument
from hdeeprm.scheduling.config import SchedulerConfig, parse_scheduler
from hdeeprm.workload.budget import check_synthetic_size

_VAR = re.compile(r"\$(\{[^}]+\}|[A-Za-z_][A-Za-z0-9_]*)")

#: Objectives and their reward functions (SPEC section 6).
OBJECTIVES: tuple[str, ...] = (
    "avg_job_slowdown",
    "avg_job_completion",
    "avg_utilization",
    "makespan",
    "energy_consumption",
    "edp",
)
#: Thesis spellings accepted for compatibility, mapped to the canonical objective.
OBJECTIVE_ALIASES: dict[str, str] = {"avg_completion_time": "avg_job_completion"}
OBSERVATIONS: tuple[str, ...] = ("normal", "small", "minimal", "queue")
#: Reward definitions: ``objective`` (rewards add up to the episode's objective, the default)
#: or ``thesis`` (the thesis's per-step state quantities, for reproducing it).
REWARDS: tuple[str, ...] = ("objective", "thesis")
LOG_LEVELS: tuple[str, ...] = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
AGENT_TYPES: tuple[str, ...] = ("CLASSIC", "LEARNING")
RUN_TYPES: tuple[str, ...] = ("train", "test", "evaluate")
#: Built-in learning algorithms (``pybatsim.agent.algorithm``); without one, ``-a FILE``.
ALGORITHMS: tuple[str, ...] = ("ppo",)
SYNTHETIC_MODELS: tuple[str, ...] = ("lublin",)


@dataclass(frozen=True, slots=True)
class SyntheticWorkloadOptions:
    """Generate the workload with the Lublin-Feitelson (2003) model instead of reading a trace."""

    model: str = "lublin"
    nb_jobs: int = 1000
    nb_cores: int | None = None  # None: the platform's core count


@dataclass(frozen=True, slots=True)
class EpisodeOptions:
    """Episodes as windows of the workload (job indices in submission order, ``[start, end)``).

    Training samples one window of ``window_jobs`` consecutive jobs per episode from
    ``train_jobs``; evaluation uses ``eval_windows`` fixed windows drawn from ``eval_jobs`` with
    ``eval_seed`` only (so they never depend on how long training ran). Validation (choosing
    a checkpoint or a seed during training) uses ``val_windows`` fixed windows drawn from
    ``val_jobs`` with ``val_seed``: a range of the training part, never of ``eval_jobs``.
    """

    window_jobs: int
    train_jobs: tuple[int, int]
    eval_jobs: tuple[int, int] | None = None
    eval_windows: int = 8
    eval_seed: int = 0
    val_jobs: tuple[int, int] | None = None
    val_windows: int = 8
    val_seed: int = 0
    #: How training windows are drawn: ``"uniform"`` or ``"load"`` (weighted by offered load).
    train_sampling: str = "uniform"
    #: How the validation windows are drawn (``"uniform"`` or ``"load"``).
    val_sampling: str = "uniform"


@dataclass(frozen=True, slots=True)
class EnvOptions:
    """The environment block: objective, action space, observation, reward, episodes."""

    objective: str = "avg_utilization"
    #: Ordered (job policy, core policy) pairs; ``None`` means all 36 pairs.
    selection: tuple[tuple[str, str], ...] | None = None
    void: bool = False
    observation: str = "normal"
    queue_sensitivity: float = 0.05
    reward: str = "objective"
    episodes: EpisodeOptions | None = None

    @property
    def action_names(self) -> list[str]:
        """Names of the actions in action-space order, e.g. ``"shortest-high_gflops"``."""
        pairs = self.selection
        if pairs is None:
            pairs = tuple((j, c) for j in JOB_POLICIES for c in CORE_POLICIES)
        names = [f"{j}-{c}" for j, c in pairs]
        if self.void:
            names.append("void")
        return names


@dataclass(frozen=True, slots=True)
class AgentOptions:
    """The agent block. ``policy_pair`` is for CLASSIC agents; the rest for LEARNING ones."""

    type: str = "CLASSIC"
    policy_pair: str | None = None
    run: str = "train"
    hidden: int = 128
    lr: float = 0.001
    gamma: float = 0.99
    params: dict[str, Any] = field(default_factory=dict)
    #: A backfilling scheduler for CLASSIC runs (``None``: the pair's job policy, blocking).
    scheduler: SchedulerConfig | None = None
    #: A built-in algorithm (``"ppo"``) instead of an agent file; ``None``: ``-a FILE``.
    algorithm: str | None = None


@dataclass(frozen=True, slots=True)
class Options:
    """A validated options file. Paths are absolute."""

    seed: int
    nb_resources: int | None
    nb_jobs: int | None
    workload_file_path: Path | None
    platform_file_path: Path
    env: EnvOptions
    agent: AgentOptions
    log_level: str = "WARNING"
    #: Log every repeated warning instead of the first one and a summary (``pybatsim.log_detail``);
    #: also writes one over-subscription CSV row per episode instead of merged spans.
    log_detail: bool = False
    start_job: int = 0
    synthetic_workload: SyntheticWorkloadOptions | None = None
    use_walltime: bool = False
    #: GB/s per task; ``None``: fitted to the platform (:mod:`hdeeprm.workload.bandwidth`).
    mem_bw_range: tuple[float, float] | None = None
    #: GPUs per task given to converted and generated jobs (SWF records none; 0: no GPU).
    gpus_per_task: int = 0
    #: CuSH's locality penalties ``{"compute": ..., "network": ...}``
    #: (:mod:`hdeeprm.simulation.service_time`); ``None``: off.
    service_time: dict[str, float] | None = None
    #: The file these options came from (``None`` when built from a dict).
    source: Path | None = None

    @property
    def base_dir(self) -> Path:
        """The folder relative paths are resolved against."""
        return self.source.parent if self.source is not None else Path.cwd()


# --- validation helpers ---------------------------------------------------------------------
class _Checker:
    """Carries the file path so every error can name it."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, where: str, message: str) -> InputError:
        return InputError(message, self.path, where)

    def obj(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"expected a JSON object, got {_show(value)}")
        return value

    def keys(self, value: dict[str, Any], where: str, allowed: tuple[str, ...]) -> None:
        for key in value:
            if key not in allowed:
                hint = difflib.get_close_matches(key, allowed, n=1)
                extra = f" (did you mean '{hint[0]}'?)" if hint else ""
                raise self.fail(
                    _join(where, key),
                    f"unknown key '{key}'{extra}; allowed keys: {', '.join(allowed)}",
                )

    def choice(self, value: Any, where: str, allowed: tuple[str, ...]) -> str:
        if not isinstance(value, str) or value not in allowed:
            raise self.fail(where, f"got {_show(value)}; allowed values: {', '.join(allowed)}")
        return value

    def integer(self, value: Any, where: str, minimum: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(where, f"expected an integer, got {_show(value)}")
        if minimum is not None and value < minimum:
            raise self.fail(where, f"expected an integer >= {minimum}, got {value}")
        return value

    def number(
        self,
        value: Any,
        where: str,
        *,
        low: float | None = None,
        high: float | None = None,
        low_open: bool = False,
        high_open: bool = False,
    ) -> float:
        ok = not isinstance(value, bool) and isinstance(value, (int, float))
        if not ok or not math.isfinite(value):
            raise self.fail(where, f"expected a number, got {_show(value)}")
        below = low is not None and (value <= low if low_open else value < low)
        above = high is not None and (value >= high if high_open else value > high)
        if below or above:
            lo = "(" if low_open else "["
            hi = ")" if high_open else "]"
            rng = f"{lo}{'-inf' if low is None else f'{low:g}'}, "
            rng += f"{'inf' if high is None else f'{high:g}'}{hi}"
            raise self.fail(where, f"expected a number in {rng}, got {value!r}")
        return float(value)

    def boolean(self, value: Any, where: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(where, f"expected true or false, got {_show(value)}")
        return value


def _show(value: Any) -> str:
    return (
        json.dumps(value)
        if isinstance(value, (str, int, float, bool, type(None)))
        else (type(value).__name__)
    )


def _join(where: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{where}[{key}]"
    return f"{where}.{key}" if where else key


TOP_KEYS = (
    "seed",
    "nb_resources",
    "nb_jobs",
    "workload_file_path",
    "platform_file_path",
    "pybatsim",
    "start_job",
    "synthetic_workload",
    "use_walltime",
    "mem_bw_range",
    "gpus_per_task",
    "service_time",
)
#: Fields of the ``service_time`` object and their defaults.
SERVICE_TIME_FIELDS = {"compute": 0.5, "network": 1.0}
PYBATSIM_KEYS = ("log_level", "log_detail", "env", "agent")
ENV_KEYS = ("objective", "actions", "observation", "queue_sensitivity", "reward", "episodes")
EPISODES_KEYS = (
    "window_jobs",
    "train_jobs",
    "eval_jobs",
    "eval_windows",
    "eval_seed",
    "val_jobs",
    "val_windows",
    "val_seed",
    "train_sampling",
    "val_sampling",
)
#: Values of ``episodes.train_sampling`` and ``episodes.val_sampling``.
SAMPLINGS = ("uniform", "load")
ACTIONS_KEYS = ("selection", "void")
AGENT_KEYS = (
    "type",
    "policy_pair",
    "run",
    "hidden",
    "lr",
    "gamma",
    "params",
    "scheduler",
    "algorithm",
)
SYNTHETIC_KEYS = ("model", "nb_jobs", "nb_cores")


def _resolve(raw: str, base: Path) -> Path:
    """Expand ``~`` and ``$VARS``, then anchor relative paths at the options file's folder."""
    path = Path(os.path.expandvars(os.path.expanduser(raw)))
    return path if path.is_absolute() else (base / path).resolve()


def _missing_file(chk: _Checker, key: str, raw: str, resolved: Path, hint: str) -> InputError:
    unset = [name for name in _VAR.findall(raw) if name.strip("{}") not in os.environ]
    if unset:
        names = ", ".join(name.strip("{}") for name in unset)
        return chk.fail(key, f"environment variable {names} is not set (path {raw!r})")
    relative = [
        name.strip("{}")
        for name in _VAR.findall(raw)
        if not os.path.isabs(os.path.expanduser(os.environ[name.strip("{}")]))
    ]
    if relative:
        names = ", ".join(relative)
        hint += (
            f"; {names} holds a relative path, which is resolved against the options file's "
            f"folder like any relative path: give {names} as an absolute path "
            '(e.g. export HDEEPRM_TRACES="$PWD/../shared/traces")'
        )
    return chk.fail(key, f"file not found: {resolved}{hint}")


def _parse_selection(chk: _Checker, value: Any, where: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list) or not value:
        raise chk.fail(
            where,
            "expected a non-empty list like "
            '[{"shortest": ["high_gflops", "high_mem"]}, {"first": ["high_mem_bw"]}]',
        )
    pairs: list[tuple[str, str]] = []
    for index, entry in enumerate(value):
        here = _join(where, index)
        entry = chk.obj(entry, here)
        if not entry:
            raise chk.fail(here, "expected at least one job policy")
        for job_policy, core_policies in entry.items():
            key_where = _join(here, job_policy)
            if job_policy not in JOB_POLICIES:
                raise chk.fail(
                    key_where,
                    f"unknown job policy '{job_policy}'; allowed values: {', '.join(JOB_POLICIES)}",
                )
            if not isinstance(core_policies, list) or not core_policies:
                raise chk.fail(key_where, "expected a non-empty list of core policies")
            for cindex, core_policy in enumerate(core_policies):
                chk.choice(core_policy, _join(key_where, cindex), PLACEMENT_POLICIES)
                pair = (job_policy, core_policy)
                if pair in pairs:
                    raise chk.fail(
                        _join(key_where, cindex),
                        f"duplicate action '{job_policy}-{core_policy}'",
                    )
                pairs.append(pair)
    return tuple(pairs)


def _parse_env(chk: _Checker, raw: Any, where: str) -> EnvOptions:
    raw = chk.obj(raw, where)
    chk.keys(raw, where, ENV_KEYS)
    objective = raw.get("objective", "avg_utilization")
    objective = (
        OBJECTIVE_ALIASES.get(objective, objective) if isinstance(objective, str) else (objective)
    )
    objective = chk.choice(objective, _join(where, "objective"), OBJECTIVES)
    selection = None
    void = False
    if "actions" in raw:
        actions_where = _join(where, "actions")
        actions = chk.obj(raw["actions"], actions_where)
        chk.keys(actions, actions_where, ACTIONS_KEYS)
        if "selection" in actions:
            selection = _parse_selection(
                chk, actions["selection"], _join(actions_where, "selection")
            )
        if "void" in actions:
            void = chk.boolean(actions["void"], _join(actions_where, "void"))
    observation = chk.choice(
        raw.get("observation", "normal"),
        _join(where, "observation"),
        OBSERVATIONS,
    )
    sensitivity = chk.number(
        raw.get("queue_sensitivity", 0.05),
        _join(where, "queue_sensitivity"),
        low=0.0,
        low_open=True,
    )
    reward = chk.choice(raw.get("reward", "objective"), _join(where, "reward"), REWARDS)
    episodes = None
    if "episodes" in raw:
        episodes = _parse_episodes(chk, raw["episodes"], _join(where, "episodes"))
    return EnvOptions(objective, selection, void, observation, sensitivity, reward, episodes)


def _job_range(chk: _Checker, value: Any, where: str, window: int) -> tuple[int, int]:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or any(isinstance(v, bool) or not isinstance(v, int) for v in value)
    ):
        raise chk.fail(where, f"expected [start, end] job indices (integers), got {_show(value)}")
    start, end = value
    if start < 0 or end <= start:
        raise chk.fail(where, f"expected 0 <= start < end, got [{start}, {end}]")
    if end - start < window:
        raise chk.fail(
            where,
            f"the range [{start}, {end}) holds {end - start} jobs, fewer than "
            f"window_jobs = {window}",
        )
    return start, end


def _parse_episodes(chk: _Checker, raw: Any, where: str) -> EpisodeOptions:
    raw = chk.obj(raw, where)
    chk.keys(raw, where, EPISODES_KEYS)
    for key in ("window_jobs", "train_jobs"):
        if key not in raw:
            raise chk.fail(_join(where, key), "missing required key")
    window = chk.integer(raw["window_jobs"], _join(where, "window_jobs"), minimum=1)
    train = _job_range(chk, raw["train_jobs"], _join(where, "train_jobs"), window)
    evaluation = None
    if "eval_jobs" in raw:
        evaluation = _job_range(chk, raw["eval_jobs"], _join(where, "eval_jobs"), window)
        if evaluation[0] < train[1] and train[0] < evaluation[1]:
            raise chk.fail(
                _join(where, "eval_jobs"),
                f"[{evaluation[0]}, {evaluation[1]}) overlaps train_jobs "
                f"[{train[0]}, {train[1]}): evaluation must use jobs training never sees",
            )
    eval_windows = chk.integer(raw.get("eval_windows", 8), _join(where, "eval_windows"), 1)
    eval_seed = chk.integer(raw.get("eval_seed", 0), _join(where, "eval_seed"), 0)
    validation = None
    if "val_jobs" in raw:
        validation = _job_range(chk, raw["val_jobs"], _join(where, "val_jobs"), window)
        if evaluation is not None and (
            validation[0] < evaluation[1] and evaluation[0] < validation[1]
        ):
            raise chk.fail(
                _join(where, "val_jobs"),
                f"[{validation[0]}, {validation[1]}) overlaps eval_jobs "
                f"[{evaluation[0]}, {evaluation[1]}): validation must come from the training "
                "part, never from the held-out jobs",
            )
    val_windows = chk.integer(raw.get("val_windows", 8), _join(where, "val_windows"), 1)
    val_seed = chk.integer(raw.get("val_seed", 0), _join(where, "val_seed"), 0)
    train_sampling = chk.choice(
        raw.get("train_sampling", "uniform"), _join(where, "train_sampling"), SAMPLINGS
    )
    val_sampling = chk.choice(
        raw.get("val_sampling", "uniform"), _join(where, "val_sampling"), SAMPLINGS
    )
    return EpisodeOptions(
        window,
        train,
        evaluation,
        eval_windows,
        eval_seed,
        validation,
        val_windows,
        val_seed,
        train_sampling,
        val_sampling,
    )


def _parse_agent(chk: _Checker, raw: Any, where: str, env: EnvOptions) -> AgentOptions:
    raw = chk.obj(raw, where)
    chk.keys(raw, where, AGENT_KEYS)
    if "type" not in raw:
        raise chk.fail(_join(where, "type"), f"missing; allowed values: {', '.join(AGENT_TYPES)}")
    agent_type = chk.choice(raw["type"], _join(where, "type"), AGENT_TYPES)
    policy_pair = raw.get("policy_pair")
    if policy_pair is not None:
        pair_where = _join(where, "policy_pair")
        allowed = env.action_names
        if not isinstance(policy_pair, str) or policy_pair not in allowed:
            pretty = (
                ", ".join(allowed)
                if len(allowed) <= 12
                else (", ".join(allowed[:12]) + f", ... ({len(allowed)} in all)")
            )
            raise chk.fail(
                pair_where,
                f"got {_show(policy_pair)}; expected 'JOBPOLICY-COREPOLICY' from the action "
                f"space: {pretty}",
            )
    elif agent_type == "CLASSIC":
        raise chk.fail(
            _join(where, "policy_pair"),
            "missing: a CLASSIC agent needs a policy pair such as 'shortest-high_gflops'",
        )
    if agent_type == "CLASSIC" and policy_pair == "void":
        # Always answering void schedules nothing, ever: the simulation would never end.
        raise chk.fail(
            _join(where, "policy_pair"),
            "a CLASSIC agent cannot use the void action: it would never start a job and the "
            "run would never end; choose a pair such as 'shortest-high_gflops' (void is for "
            "LEARNING agents)",
        )
    run = chk.choice(raw.get("run", "train"), _join(where, "run"), RUN_TYPES)
    hidden = chk.integer(raw.get("hidden", 128), _join(where, "hidden"), 1)
    lr = chk.number(raw.get("lr", 0.001), _join(where, "lr"), low=0.0, low_open=True)
    gamma = chk.number(raw.get("gamma", 0.99), _join(where, "gamma"), low=0.0, high=1.0)
    params = chk.obj(raw.get("params", {}), _join(where, "params"))
    scheduler = None
    if raw.get("scheduler") is not None:
        swhere = _join(where, "scheduler")
        if agent_type != "CLASSIC":
            raise chk.fail(swhere, "a backfilling scheduler is only available to CLASSIC agents")
        scheduler = parse_scheduler(raw["scheduler"], swhere, chk.path)
    algorithm = raw.get("algorithm")
    if algorithm is not None:
        algorithm = chk.choice(algorithm, _join(where, "algorithm"), ALGORITHMS)
        if agent_type != "LEARNING":
            raise chk.fail(_join(where, "algorithm"), "is for LEARNING agents only")
    return AgentOptions(
        agent_type, policy_pair, run, hidden, lr, gamma, dict(params), scheduler, algorithm
    )


def options_from_json(
    raw: Any, path: str | os.PathLike[str] | None = None, *, check_files: bool = True
) -> Options:
    """Validate a parsed options document; ``path`` anchors relative paths and error messages.

    With ``check_files`` the platform file and the trace (unless a synthetic workload is asked
    for) must exist.
    """
    source = Path(path).resolve() if path is not None else None
    chk = _Checker(str(source) if source is not None else "<options>")
    base = source.parent if source is not None else Path.cwd()
    raw = chk.obj(raw, "")
    chk.keys(raw, "", TOP_KEYS)

    for required in ("seed", "platform_file_path", "pybatsim"):
        if required not in raw:
            raise chk.fail(required, "missing required key")
    seed = chk.integer(raw["seed"], "seed", 0)
    nb_resources = raw.get("nb_resources")
    if nb_resources is not None:
        nb_resources = chk.integer(nb_resources, "nb_resources", 1)
    nb_jobs = raw.get("nb_jobs")
    if nb_jobs is not None:
        nb_jobs = chk.integer(nb_jobs, "nb_jobs", 1)
    start_job = chk.integer(raw.get("start_job", 0), "start_job", 0)
    use_walltime = chk.boolean(raw.get("use_walltime", False), "use_walltime")

    mem_bw_range = None
    if "mem_bw_range" in raw:
        value = raw["mem_bw_range"]
        if not isinstance(value, list) or len(value) != 2:
            raise chk.fail("mem_bw_range", f"expected [low, high] in GB/s, got {_show(value)}")
        low = chk.number(value[0], "mem_bw_range[0]", low=0.0)
        high = chk.number(value[1], "mem_bw_range[1]", low=low)
        mem_bw_range = (low, high)

    gpus_per_task = chk.integer(raw.get("gpus_per_task", 0), "gpus_per_task", 0)
    service_time = None
    if "service_time" in raw:
        sraw = chk.obj(raw["service_time"], "service_time")
        chk.keys(sraw, "service_time", tuple(SERVICE_TIME_FIELDS))
        service_time = {
            name: chk.number(sraw.get(name, default), f"service_time.{name}", low=0.0)
            for name, default in SERVICE_TIME_FIELDS.items()
        }

    platform_raw = raw["platform_file_path"]
    if not isinstance(platform_raw, str) or not platform_raw:
        raise chk.fail("platform_file_path", "expected the path of a platform JSON file")
    platform_path = _resolve(platform_raw, base)
    if check_files and not platform_path.is_file():
        raise _missing_file(chk, "platform_file_path", platform_raw, platform_path, "")

    synthetic = None
    if "synthetic_workload" in raw:
        swhere = "synthetic_workload"
        sraw = chk.obj(raw[swhere], swhere)
        chk.keys(sraw, swhere, SYNTHETIC_KEYS)
        model = chk.choice(sraw.get("model", "lublin"), f"{swhere}.model", SYNTHETIC_MODELS)
        snb = chk.integer(sraw.get("nb_jobs", nb_jobs or 1000), f"{swhere}.nb_jobs", 1)
        ncores = sraw.get("nb_cores")
        if ncores is not None:
            ncores = chk.integer(ncores, f"{swhere}.nb_cores", 1)
        synthetic = SyntheticWorkloadOptions(model, snb, ncores)
        try:
            check_synthetic_size(snb)
        except InputError as exc:
            raise chk.fail(f"{swhere}.nb_jobs", exc.message) from None

    workload_path = None
    workload_raw = raw.get("workload_file_path", "")
    if not isinstance(workload_raw, str):
        raise chk.fail("workload_file_path", f"expected a path string, got {_show(workload_raw)}")
    if workload_raw:
        if synthetic is not None:
            raise chk.fail(
                "synthetic_workload",
                "give either workload_file_path or synthetic_workload, not both",
            )
        workload_path = _resolve(workload_raw, base)
        if check_files and not workload_path.is_file():
            raise _missing_file(
                chk,
                "workload_file_path",
                workload_raw,
                workload_path,
                " (point it at an SWF trace, plain or .gz)",
            )

    pyb = chk.obj(raw["pybatsim"], "pybatsim")
    chk.keys(pyb, "pybatsim", PYBATSIM_KEYS)
    log_level = pyb.get("log_level", "WARNING")
    log_level = chk.choice(
        log_level.upper() if isinstance(log_level, str) else log_level,
        "pybatsim.log_level",
        LOG_LEVELS,
    )
    log_detail = chk.boolean(pyb.get("log_detail", False), "pybatsim.log_detail")
    env = _parse_env(chk, pyb.get("env", {}), "pybatsim.env")
    if "agent" not in pyb:
        raise chk.fail("pybatsim.agent", "missing required key")
    agent = _parse_agent(chk, pyb["agent"], "pybatsim.agent", env)

    return Options(
        seed=seed,
        nb_resources=nb_resources,
        nb_jobs=nb_jobs,
        workload_file_path=workload_path,
        platform_file_path=platform_path,
        env=env,
        agent=agent,
        log_level=log_level,
        log_detail=log_detail,
        start_job=start_job,
        synthetic_workload=synthetic,
        use_walltime=use_walltime,
        mem_bw_range=mem_bw_range,
        gpus_per_task=gpus_per_task,
        service_time=service_time,
        source=source,
    )


def load_options(path: str | os.PathLike[str], *, check_files: bool = True) -> Options:
    """Read and validate an options file (see the module docstring for the format)."""
    spath = path_argument(
        path, "load_options(path)", "an options file", "options_from_json(doc, path)"
    )
    raw = read_json(spath, "options file")
    return options_from_json(raw, spath, check_files=check_files)
