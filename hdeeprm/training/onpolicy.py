"""What every on-policy trainer of hdeeprm shares: config, rollouts, GAE, updates, logs, files.

:class:`OnPolicyTrainer` is the loop of CleanRL's ``ppo.py`` with the algorithm's parts left
to subclasses (:class:`~hdeeprm.training.ppo.PPOTrainer`,
:class:`~hdeeprm.training.twostep.TwoStepPPO`)::

    for each update:
        anneal the learning rates                        (OnPolicyConfig.anneal_lr)
        collect num_steps decisions from num_envs envs   (subclass: _act, _observe)
        GAE advantages over the rollout                  (gae)
        epochs of clipped-objective minibatch updates    (subclass: _optimize -> ppo_epochs)
        log a row (CSV, TensorBoard, history), hooks     (UpdateLog, _after_update)

Environments are a Gymnasium vector environment that resets a finished episode inside the
same ``step`` (:func:`build_vector_env`). Rewards are scaled by the running standard
deviation of the discounted return (:func:`scale_by_return_std`); a truncated episode is
bootstrapped with the critic's value of its last observation.

Same config, seed and environments give the same weights bit for bit: weights come from
``seed`` (the subclass builds them under :func:`seeded`), actions are sampled with a private
``torch.Generator`` (:func:`gumbel_sample`) and minibatches are shuffled with a private NumPy
generator. Checkpoints are plain state dicts (``torch.save``), read back with
``torch.load(weights_only=True)`` (:func:`read_checkpoint_file`).

TensorBoard scalars carry Stable-Baselines3's names where the quantity is the same
(:data:`SB3_TAGS`, e.g. ``train/value_loss``, ``rollout/ep_rew_mean``, ``time/fps``); the
rest goes under ``hdeeprm/`` (:func:`tensorboard_tag`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, cast

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from hdeeprm._atomic import atomic_open, write_text
from hdeeprm._gc import heap_frozen
from hdeeprm.errors import InputError

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self needs Python 3.11

VECTOR_KINDS = ("sync", "async", "shared", "ray")
#: The trainer's own CPU per decision (policy step, bookkeeping, updates) in environment
#: decisions, measured on Gaia windows (docs/learning.md, "Performance"): with
#: ``vector="shared"`` the trainer's process steps fewer environments than a worker by this
#: much (4 environments, 1 worker: 1 here and 3 in the worker).
TRAINER_COST = 0.4


# --- config ----------------------------------------------------------------------------------
@dataclass
class OnPolicyConfig:
    """Hyperparameters every on-policy trainer has (subclasses add their own and may change
    the defaults). Every field is a key of ``pybatsim.agent.params`` for the trainers that
    ``hdeeprm-launch`` runs."""

    #: Decision steps to train for, over all environments (``learn()``'s default).
    total_timesteps: int = 200_000
    #: Environments stepped together; each rollout has ``num_envs * num_steps`` decisions.
    num_envs: int = 4
    #: Decisions collected per environment between two updates (episodes may end inside).
    num_steps: int = 512
    #: ``"sync"``: environments in this process; ``"async"``: one subprocess each;
    #: ``"shared"``: this process and worker processes, several environments each, over
    #: shared memory (:class:`hdeeprm.environment.vector.SharedMemoryVectorEnv`, made to use
    #: a few cores with little overhead); ``"ray"``: in Ray actors (``RayVectorEnv``, the
    #: ``ray`` extra), on the Ray cluster ``ray.init`` connects to (a local one is started
    #: when none is running). The results are the same whichever is used.
    vector: str = "sync"
    #: With ``vector="ray"``: environments per actor (one actor is one worker process).
    envs_per_actor: int = 1
    #: Adam step size, linearly annealed to 0 over ``total_timesteps`` when ``anneal_lr``.
    learning_rate: float = 3e-4
    anneal_lr: bool = True
    #: Discount and GAE lambda. Episodes are thousands of decisions long.
    gamma: float = 0.99
    gae_lambda: float = 0.95
    #: Minibatches per epoch and epochs per rollout.
    num_minibatches: int = 8
    update_epochs: int = 4
    #: Normalise advantages within each minibatch.
    norm_adv: bool = True
    #: Clipping range of the probability ratio (and of the value change when ``clip_vloss``).
    clip_coef: float = 0.2
    clip_vloss: bool = True
    #: Entropy bonus and value-loss weights.
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    #: Gradient-norm clipping.
    max_grad_norm: float = 0.5
    #: Stop an update's epochs early once the approximate KL exceeds this (None: never).
    target_kl: float | None = None
    #: Width of the hidden layers.
    hidden: int = 64
    #: Scale rewards by the running standard deviation of the discounted return (rewards of
    #: different objectives differ by orders of magnitude: slowdown ~1e-3, energy ~1e6 J).
    normalize_reward: bool = True
    #: Seed of weights, action sampling, minibatch order and environment resets.
    seed: int = 0
    #: Threads torch computes with in this process (``torch.set_num_threads``; 0: leave the
    #: setting alone, torch's default being one per core). The networks are small: one thread
    #: is several times faster than one per core on a small or busy machine, and leaves the
    #: other cores to the environments. The trainer records the count in ``torch_threads``.
    torch_threads: int = 1

    #: Name in error messages ("unknown PPO parameter").
    KIND: ClassVar[str] = "on-policy"
    #: Order of the fields in :meth:`as_dict` (checkpoints); fields not listed follow.
    FIELD_ORDER: ClassVar[tuple[str, ...]] = ()
    #: Fields that are integers >= 1, integers >= 0, numbers in ``[low, high]`` (None: no
    #: bound), booleans; subclasses extend them.
    POSITIVE: ClassVar[tuple[str, ...]] = (
        "total_timesteps",
        "num_envs",
        "num_steps",
        "num_minibatches",
        "update_epochs",
        "hidden",
    )
    NATURAL: ClassVar[tuple[str, ...]] = ("seed", "torch_threads")
    NUMBERS: ClassVar[tuple[tuple[str, float | None, float | None], ...]] = (
        ("learning_rate", 0.0, None),
        ("gamma", 0.0, 1.0),
        ("gae_lambda", 0.0, 1.0),
        ("clip_coef", 0.0, None),
        ("ent_coef", 0.0, None),
        ("vf_coef", 0.0, None),
        ("max_grad_norm", 0.0, None),
    )
    BOOLS: ClassVar[tuple[str, ...]] = (
        "anneal_lr",
        "norm_adv",
        "clip_vloss",
        "normalize_reward",
    )

    @property
    def batch_size(self) -> int:
        return self.num_envs * self.num_steps

    @property
    def minibatch_size(self) -> int:
        return self.batch_size // self.num_minibatches

    def as_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (what checkpoints store), in :attr:`FIELD_ORDER`."""
        values = dataclasses.asdict(self)
        ordered = {name: values.pop(name) for name in self.FIELD_ORDER if name in values}
        return {**ordered, **values}

    def validate(self, where: str = "params", source: str | None = None) -> Self:
        """Raise :class:`InputError` naming the first bad field; return ``self``."""

        def bad(key: str, expected: str) -> InputError:
            value = getattr(self, key)
            return InputError(f"expected {expected}, got {value!r}", source, f"{where}.{key}")

        for names, low in ((self.POSITIVE, 1), (self.NATURAL, 0)):
            for key in names:
                value = getattr(self, key)
                if isinstance(value, bool) or not isinstance(value, int) or value < low:
                    raise bad(key, f"an integer >= {low}")
        for key, lo, hi in self.NUMBERS:
            value = getattr(self, key)
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            ok = ok and math.isfinite(value)
            ok = ok and (lo is None or value >= lo) and (hi is None or value <= hi)
            if not ok:
                low_s = "-inf" if lo is None else f"{lo:g}"
                high_s = "inf" if hi is None else f"{hi:g}"
                raise bad(key, f"a number in [{low_s}, {high_s}]")
        if self.learning_rate <= 0:
            raise bad("learning_rate", "a number > 0")
        if self.target_kl is not None and (
            isinstance(self.target_kl, bool)
            or not isinstance(self.target_kl, (int, float))
            or not self.target_kl > 0
        ):
            raise bad("target_kl", "a number > 0 or null")
        for key in self.BOOLS:
            if not isinstance(getattr(self, key), bool):
                raise bad(key, "true or false")
        if self.vector not in VECTOR_KINDS:
            raise bad("vector", "one of " + ", ".join(VECTOR_KINDS))
        if (
            not isinstance(self.envs_per_actor, int)
            or isinstance(self.envs_per_actor, bool)
            or self.envs_per_actor < 1
        ):
            raise bad("envs_per_actor", "a whole number >= 1")
        self._validate_more(bad)
        if self.batch_size % self.num_minibatches:
            raise InputError(
                f"num_envs x num_steps ({self.batch_size}) must be a multiple of "
                f"num_minibatches ({self.num_minibatches})",
                source,
                f"{where}.num_minibatches",
            )
        return self

    def _validate_more(self, bad: Callable[[str, str], InputError]) -> None:
        """The subclass's own checks; ``bad(key, expected)`` is the error to raise."""

    @classmethod
    def from_params(
        cls, params: dict[str, Any], where: str = "params", source: str | None = None
    ) -> Self:
        """Build from a JSON object; unknown keys and bad values are :class:`InputError`."""
        names = [f.name for f in dataclasses.fields(cls)]
        for key in params:
            if key not in names:
                hint = difflib.get_close_matches(key, names, n=1)
                extra = f" (did you mean '{hint[0]}'?)" if hint else ""
                raise InputError(
                    f"unknown {cls.KIND} parameter '{key}'{extra}; allowed: {', '.join(names)}",
                    source,
                    f"{where}.{key}",
                )
        values = dict(params)
        # JSON has one number type: accept 3e-4 and 1 alike for float fields.
        for f in dataclasses.fields(cls):
            if f.name in values and f.type in ("float", "float | None"):
                v = values[f.name]
                if isinstance(v, int) and not isinstance(v, bool):
                    values[f.name] = float(v)
        return cls(**values).validate(where, source)


# --- numerics --------------------------------------------------------------------------------
class ReturnStats:
    """Running variance of the discounted return, in plain floats (updated every step)."""

    def __init__(self) -> None:
        self.mean = 0.0
        self.var = 1.0
        self.count = 1e-4

    def update(self, batch: np.ndarray) -> None:
        values = batch.tolist()  # a handful of floats: plain Python beats NumPy's overhead
        n = float(len(values))
        b_mean = sum(values) / n
        b_var = sum((v - b_mean) ** 2 for v in values) / n
        delta = b_mean - self.mean
        total = self.count + n
        m2 = self.var * self.count + b_var * n + delta * delta * self.count * n / total
        self.mean += delta * n / total
        self.var = m2 / total
        self.count = total

    def state(self) -> dict[str, float]:
        return {"mean": self.mean, "var": self.var, "count": self.count}

    def load(self, state: dict[str, float]) -> None:
        self.mean, self.var, self.count = (
            float(state["mean"]),
            float(state["var"]),
            float(state["count"]),
        )


def scale_by_return_std(
    reward: np.ndarray,
    ended: np.ndarray,
    returns: np.ndarray,
    stats: ReturnStats,
    gamma: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Rewards divided by the running std of the discounted return (one stream per
    environment, restarted where an episode ``ended``); returns ``(scaled, new returns)``."""
    returns = returns * gamma + reward
    stats.update(returns)
    returns[ended] = 0.0
    std = math.sqrt(stats.var + 1e-8)
    return (reward / std).astype(np.float32), returns


def gumbel_sample(
    logits: torch.Tensor, generator: torch.Generator, uniform: torch.Tensor | None = None
) -> torch.Tensor:
    """Categorical sampling from ``logits`` with the caller's own generator (Gumbel-max), so
    that sampling never touches torch's global random state.

    ``uniform``: the ``torch.rand(logits.shape, generator=generator)`` draw made beforehand
    (a slice of one larger draw gives the same numbers: the generator fills a tensor
    serially); it is overwritten.
    """
    if uniform is None:
        uniform = torch.rand(logits.shape, generator=generator)
    u = uniform.clamp_(1e-20, 1.0)
    return (logits - u.log_().neg_().log_()).argmax(dim=-1)  # in place: -log(-log(u))


def gae(
    rewards: np.ndarray,
    values: np.ndarray,
    starts: np.ndarray,
    next_value: np.ndarray,
    next_start: np.ndarray,
    gamma: float,
    lam: float,
) -> np.ndarray:
    """Generalised advantage estimates of a ``(steps, envs)`` rollout.

    ``starts[t]`` is 1 where observation ``t`` begins a new episode (so nothing flows back
    across it); ``next_value``/``next_start`` describe the observation after the rollout.
    """
    adv = np.zeros_like(rewards)
    last = np.zeros(rewards.shape[1], dtype=rewards.dtype)
    n = len(rewards)
    for t in reversed(range(n)):
        if t == n - 1:
            nonterminal, nv = 1.0 - next_start, next_value
        else:
            nonterminal, nv = 1.0 - starts[t + 1], values[t + 1]
        delta = rewards[t] + gamma * nv * nonterminal - values[t]
        last = delta + gamma * lam * nonterminal * last
        adv[t] = last
    return adv


def explained_variance(returns: torch.Tensor, values: torch.Tensor) -> float:
    """How much of the returns' variance the critic's values explain (1: all; NaN when the
    returns are constant)."""
    var_y = float(returns.var())
    return math.nan if var_y == 0 else 1.0 - float((returns - values).var()) / var_y


def layer(inputs: int, outputs: int, gain: float) -> nn.Linear:
    """A linear layer with orthogonal weights of ``gain`` and zero biases (CleanRL's init)."""
    out = nn.Linear(inputs, outputs)
    nn.init.orthogonal_(out.weight, gain)
    nn.init.zeros_(out.bias)
    return out


@contextlib.contextmanager
def seeded(seed: int) -> Iterator[None]:
    """Build weights from ``seed`` without touching torch's global random state outside."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


# --- environments ----------------------------------------------------------------------------
def build_vector_env(
    env_fns: Sequence[Callable[[], gym.Env]],
    kind: str,
    envs_per_actor: int = 1,
    num_workers: int | None = None,
    full_info: bool = False,
) -> gym.vector.VectorEnv:
    """A vector environment that resets finished episodes within the same ``step`` call.

    ``kind="shared"``: ``num_workers`` worker processes. With ``"shared"`` and ``"sync"``,
    ``info`` holds the action mask at every step and the rest when an episode ends, unless
    ``full_info`` (the trainers read nothing else, and batching the rest costs time).
    """
    mode = gym.vector.AutoresetMode.SAME_STEP
    if kind == "shared":
        from hdeeprm.environment import vector

        n = len(env_fns)
        workers = vector.default_workers(n) if num_workers is None else num_workers
        return vector.SharedMemoryVectorEnv(
            env_fns,
            num_workers=workers,
            in_main=vector.caller_share(n, workers, TRAINER_COST),
            autoreset_mode=mode,
            full_info=full_info,
        )
    if kind == "ray":
        from hdeeprm.environment.vector.ray import RayVectorEnv

        return RayVectorEnv(list(env_fns), envs_per_actor=envs_per_actor, autoreset_mode=mode)
    if kind == "sync":
        from hdeeprm.environment.vector.sync import FastInfoSyncVectorEnv

        return FastInfoSyncVectorEnv(list(env_fns), autoreset_mode=mode, full_info=full_info)
    if kind == "async":
        return gym.vector.AsyncVectorEnv(list(env_fns), autoreset_mode=mode, context="fork")
    raise ValueError(f"vector must be one of {VECTOR_KINDS}, got {kind!r}")


class _HasGetAttr(Protocol):
    def get_attr(self, name: str) -> tuple[Any, ...]: ...


def first_env_attr(envs: gym.vector.VectorEnv, name: str) -> Any:
    """Attribute ``name`` of the first sub-environment of a :func:`build_vector_env` result.

    Each of those classes has ``get_attr``; Gymnasium's ``VectorEnv`` base class does not
    declare it.
    """
    return cast(_HasGetAttr, envs).get_attr(name)[0]


def flat_observation_size(envs: gym.vector.VectorEnv) -> int:
    """Number of values in one sub-environment's observation (its space needs a shape)."""
    shape = envs.single_observation_space.shape
    if shape is None:
        raise ValueError(
            f"the observation space has no fixed shape: {envs.single_observation_space}"
        )
    return int(np.prod(shape))


# --- checkpoints -----------------------------------------------------------------------------
def read_checkpoint_file(
    path: str | os.PathLike[str], fmt: str, version: int, not_ours: str
) -> dict[str, Any]:
    """Load a checkpoint with ``weights_only=True`` and check its format tag and version;
    :class:`InputError` naming the file otherwise (``not_ours``: the wrong-format message)."""
    file = Path(path)
    if not file.is_file():
        raise InputError("model file not found", str(file))
    try:
        state = torch.load(file, weights_only=True, map_location="cpu")
    except Exception as exc:  # noqa: BLE001 - any unreadable file is the same user error
        raise InputError(f"not a readable PyTorch checkpoint: {exc}", str(file)) from None
    if not isinstance(state, dict) or state.get("format") != fmt:
        raise InputError(not_ours, str(file))
    if state.get("version") != version:
        raise InputError(
            f"checkpoint version {state.get('version')} is not supported (expected {version})",
            str(file),
        )
    return state


def shape_mismatch(saved: dict[str, Any], current: dict[str, Any]) -> str | None:
    """The first tensor whose shape differs between a saved and a current state dict, said
    with the layer width (the ``hidden`` option) when that is what differs; ``None`` if all
    shapes agree."""
    for name, tensor in current.items():
        old = saved.get(name)
        if old is None or tuple(old.shape) == tuple(tensor.shape):
            continue
        # A 2-D weight is (out, in): the hidden width is the side not shared by both.
        widths = {d for d in tuple(old.shape) if d not in tuple(tensor.shape)}
        mine = {d for d in tuple(tensor.shape) if d not in tuple(old.shape)}
        if len(widths) == 1 and len(mine) == 1:
            return (
                f"the model's layers are {widths.pop()} wide, this run asks for {mine.pop()} "
                "(option hidden, pybatsim.agent.hidden): set hidden to the model's width or "
                "train a new model"
            )
        return (
            f"layer {name} is {tuple(old.shape)} in the model, {tuple(tensor.shape)} here "
            "(option hidden, pybatsim.agent.hidden, or another agent class?)"
        )
    return None


def write_checkpoint_file(path: str | os.PathLike[str], state: dict[str, Any]) -> Path:
    """Write ``state`` (plain containers and tensors, never pickled objects) atomically, so an
    interrupted save never leaves a half-written model where a finished one was."""
    target = Path(path)
    with atomic_open(target, "wb") as handle:
        torch.save(state, handle)
    return target


# --- logging ---------------------------------------------------------------------------------
#: TensorBoard names of Stable-Baselines3's PPO for the same quantities (row key -> tag).
SB3_TAGS = {
    "return": "rollout/ep_rew_mean",
    "episode_length": "rollout/ep_len_mean",
    "policy_loss": "train/policy_gradient_loss",
    "value_loss": "train/value_loss",
    "entropy": "train/entropy_loss",  # written negated, as SB3's loss term
    "approx_kl": "train/approx_kl",
    "clip_fraction": "train/clip_fraction",
    "loss": "train/loss",
    "explained_variance": "train/explained_variance",
    "learning_rate": "train/learning_rate",
    "clip_range": "train/clip_range",
    "steps_per_s": "time/fps",
}
#: Row keys that are no scalar of their own (the x axis is ``steps``). ``val_*`` keys are
#: left out too: the validator writes its scalars itself.
NOT_SCALARS = ("update", "steps")


def tensorboard_tag(key: str, main: str = "") -> tuple[str, float]:
    """The TensorBoard tag of row ``key`` and the sign its value is written with.

    ``main`` is the prefix of the main policy's keys (``"job_"`` for the two-step agent's job
    selector): those, with the prefix dropped, and the prefix-free keys take SB3's name when
    there is one; everything else goes under ``hdeeprm/``.
    """
    name = key[len(main) :] if main and key.startswith(main) else key
    if name in SB3_TAGS:
        return SB3_TAGS[name], (-1.0 if name == "entropy" else 1.0)
    return f"hdeeprm/{key}", 1.0


class UpdateLog:
    """The per-update CSV (rewritten atomically) and optional TensorBoard scalars."""

    def __init__(
        self,
        path: Path | None,
        columns: Sequence[str],
        tensorboard: bool | None,
        main: str = "",
        config: OnPolicyConfig | None = None,
    ) -> None:
        self.path = path
        self.header = list(columns)
        self.rows: list[list[str]] = []
        self.main = main
        self.writer = None
        if path is not None and tensorboard is not False:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except Exception as exc:  # noqa: BLE001 - optional feature
                if tensorboard:
                    raise InputError(
                        "TensorBoard logging asked for but tensorboard is not installed "
                        "(pip install 'hdeeprm[rl]')"
                    ) from exc
            else:
                self.writer = SummaryWriter(log_dir=str(path.parent / "tensorboard"))
                if config is not None:
                    # The hyperparameters, and the thread count that sets the speed.
                    record = {**config.as_dict(), "torch_num_threads": torch.get_num_threads()}
                    text = json.dumps(record, indent=1)
                    self.writer.add_text("hdeeprm/config", f"```\n{text}\n```")
        self._last = 0.0

    def add(self, row: dict[str, float], force: bool = False) -> None:
        self.rows.append([_fmt(row.get(c, math.nan)) for c in self.header])
        if self.writer is not None:
            step = int(row["steps"])
            for key, value in row.items():
                if key in NOT_SCALARS or key.startswith("val_") or math.isnan(value):
                    continue
                tag, sign = tensorboard_tag(key, self.main)
                self.writer.add_scalar(tag, sign * value, step)
        now = time.perf_counter()
        if force or now - self._last > 2.0:
            self.flush()
            self._last = now

    def flush(self) -> None:
        if self.path is None or not self.rows:
            return
        lines = [",".join(self.header)] + [",".join(r) for r in self.rows]
        write_text(self.path, "\n".join(lines) + "\n")
        if self.writer is not None:
            self.writer.flush()

    def close(self) -> None:
        self.flush()
        if self.writer is not None:
            self.writer.close()


def _fmt(value: float) -> str:
    if isinstance(value, int) or (
        isinstance(value, float) and value.is_integer() and abs(value) < 1e15
    ):
        return str(int(value))
    return repr(float(value))


# --- the trainer -----------------------------------------------------------------------------
@dataclass
class Rollout:
    """One rollout's ``(steps, envs, ...)`` arrays; ``extra`` holds a subclass's own."""

    obs: np.ndarray
    actions: np.ndarray
    logprobs: np.ndarray
    rewards: np.ndarray
    dones: np.ndarray
    values: np.ndarray
    masks: np.ndarray
    extra: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)

    @classmethod
    def zeros(cls, steps: int, envs: int, obs_size: int, actions: int) -> Rollout:
        def z(dtype: Any) -> np.ndarray:
            return np.zeros((steps, envs), dtype=dtype)

        return cls(
            np.zeros((steps, envs, obs_size), dtype=np.float32),
            z(np.int64),
            z(np.float32),
            z(np.float32),
            z(np.float32),
            z(np.float32),
            np.ones((steps, envs, actions), dtype=bool),
        )


class OnPolicyTrainer:
    """The on-policy loop (module docstring); subclasses give the networks and the losses.

    A subclass builds its networks (under :func:`seeded`) after ``super().__init__`` and
    implements :meth:`_act`, :meth:`_observe`, :meth:`_values`, :meth:`_optimize`,
    :meth:`_optimizers` and :meth:`log_columns`.
    """

    #: Checkpoint format tag, version and the message for a file of another format.
    CHECKPOINT_FORMAT: ClassVar[str]
    CHECKPOINT_VERSION: ClassVar[int]
    NOT_OURS: ClassVar[str]
    #: Prefix of the main policy's row keys (:func:`tensorboard_tag`).
    MAIN_KEYS: ClassVar[str] = ""
    #: File name of the per-update CSV in ``run_dir``.
    LOG_FILE: ClassVar[str] = "training_log.csv"
    NO_ENVS: ClassVar[str] = "this trainer has no environments (built for predict only)"

    def __init__(
        self,
        config: OnPolicyConfig,
        env_fns: Sequence[Callable[[], gym.Env]] | None,
        *,
        run_dir: str | os.PathLike[str] | None = None,
        tensorboard: bool | None = None,
        num_workers: int | None = None,
        full_info: bool = False,
    ) -> None:
        self.config = config.validate()
        self.envs: gym.vector.VectorEnv | None = None
        if env_fns is not None:
            if len(env_fns) != config.num_envs:
                raise ValueError(
                    f"{len(env_fns)} environment factories for num_envs={config.num_envs}"
                )
            self.envs = build_vector_env(
                env_fns, config.vector, config.envs_per_actor, num_workers, full_info
            )
        self.run_dir = None if run_dir is None else Path(run_dir)
        self.tensorboard = tensorboard
        if config.torch_threads:
            torch.set_num_threads(config.torch_threads)
        #: Threads torch computes with (recorded: it changes speed, never results).
        self.torch_threads = torch.get_num_threads()
        self.generator = torch.Generator().manual_seed(config.seed)
        self.rng = np.random.default_rng(config.seed)
        self.ret_rms = ReturnStats()
        self.global_step = 0
        self.updates = 0
        self.episodes = 0
        #: One dict per update: counters, episode statistics, losses, timings.
        self.history: list[dict[str, float]] = []
        self._next_obs: np.ndarray | None = None
        self._next_mask: np.ndarray | None = None
        self._returns = np.zeros(config.num_envs)
        self._ep_return = np.zeros(config.num_envs)
        self._ep_length = np.zeros(config.num_envs, dtype=np.int64)

    # --- what subclasses give ------------------------------------------------------------------
    def _new_rollout(self) -> Rollout:
        """Empty rollout arrays (a subclass adds its own to ``extra``)."""
        raise NotImplementedError

    def _observe(self, obs: np.ndarray, info: dict[str, Any]) -> None:
        """Keep the observation (and masks) the next :meth:`_act` decides on."""
        raise NotImplementedError

    def _act(self, rollout: Rollout, step: int) -> np.ndarray:
        """Sample actions for ``self._next_obs``, store them, their log-probabilities and the
        values at ``step``, and return the vector environment's action."""
        raise NotImplementedError

    def _after_step(self, rollout: Rollout, step: int, info: dict[str, Any], ended: Any) -> None:
        """Anything else a step's ``info`` holds for the update (default: nothing)."""

    def _values(self, obs: np.ndarray) -> np.ndarray:
        """The critic's values of a batch of observations."""
        raise NotImplementedError

    def _optimize(self, rollout: Rollout, adv: np.ndarray, ret: np.ndarray) -> dict[str, float]:
        """Update the networks from a rollout and its advantages and returns; the log's
        values."""
        raise NotImplementedError

    def _optimizers(self) -> list[tuple[torch.optim.Optimizer, float]]:
        """Each optimiser and its initial step size (annealed together)."""
        raise NotImplementedError

    def log_columns(self) -> list[str]:
        """Columns of the per-update CSV."""
        raise NotImplementedError

    def _before_learn(self) -> None:
        """Checks before training starts (default: none)."""

    def _after_update(self, row: dict[str, float], last: bool, log: UpdateLog) -> None:
        """After each update, before the row is logged (e.g. validation; default: nothing)."""

    # --- training ------------------------------------------------------------------------------
    def reset_envs(self) -> None:
        """Start an episode in every environment (seeded with ``seed + i``). The first
        :meth:`learn` does it; calling it before (e.g. to time training apart from the first
        episodes' set-up) changes nothing else."""
        if self.envs is None:
            raise RuntimeError(self.NO_ENVS)
        obs, info = self.envs.reset(seed=self.config.seed)
        self._observe(np.array(obs, dtype=np.float32), info)

    def learn(
        self,
        total_timesteps: int | None = None,
        *,
        callback: Callable[[dict[str, float]], Any] | None = None,
        progress: bool = False,
    ) -> Self:
        """Train for ``total_timesteps`` decisions (default: the config's), in whole rollouts.

        ``callback`` receives each update's row (also appended to :attr:`history`); returning
        ``False`` stops training. ``progress`` shows a progress bar on a terminal.
        """
        if self.envs is None:
            raise RuntimeError(self.NO_ENVS)
        cfg = self.config
        self._before_learn()
        total = cfg.total_timesteps if total_timesteps is None else int(total_timesteps)
        n_updates = max(1, total // cfg.batch_size)
        rollout = self._new_rollout()
        if self._next_obs is None:
            self.reset_envs()
        next_done = np.zeros(cfg.num_envs, dtype=np.float32)
        log_path = None if self.run_dir is None else self.run_dir / self.LOG_FILE
        log = UpdateLog(log_path, self.log_columns(), self.tensorboard, self.MAIN_KEYS, cfg)
        from tqdm import tqdm

        quiet = not progress or not sys.stderr.isatty()
        bar = tqdm(total=n_updates * cfg.batch_size, disable=quiet, unit="step")
        # The inputs, networks and environments alive now stay out of the full collections
        # that the episodes' turnover brings about (hdeeprm._gc.heap_frozen).
        try:
            with heap_frozen():
                for update in range(n_updates):
                    t0 = time.perf_counter()
                    frac = 1.0 - update / n_updates if cfg.anneal_lr else 1.0
                    for optimizer, rate in self._optimizers():
                        for group in optimizer.param_groups:
                            group["lr"] = rate * frac
                    next_done, episodes = self._collect(rollout, next_done)
                    self.global_step += cfg.batch_size
                    t_roll = time.perf_counter()
                    assert self._next_obs is not None  # set by reset_envs, kept by _collect
                    next_value = self._values(self._next_obs)
                    adv = gae(
                        rollout.rewards,
                        rollout.values,
                        rollout.dones,
                        next_value,
                        next_done,
                        cfg.gamma,
                        cfg.gae_lambda,
                    )
                    stats = self._optimize(rollout, adv, adv + rollout.values)
                    self.updates += 1
                    elapsed = time.perf_counter() - t0
                    row = {
                        "update": self.updates,
                        "steps": self.global_step,
                        "episodes": self.episodes,
                        **episodes,
                        **stats,
                        "learning_rate": cfg.learning_rate * frac,
                        "clip_range": cfg.clip_coef,
                        "steps_per_s": cfg.batch_size / elapsed,
                        "rollout_s": t_roll - t0,
                    }
                    last = update == n_updates - 1
                    self._after_update(row, last, log)
                    self.history.append(row)
                    log.add(row, force=last)
                    bar.update(cfg.batch_size)
                    if callback is not None and callback(row) is False:
                        break
        finally:
            bar.close()
            log.close()
        return self

    def _collect(
        self, rollout: Rollout, next_done: np.ndarray
    ) -> tuple[np.ndarray, dict[str, float]]:
        """Fill ``rollout`` with ``num_steps`` decisions of every environment; which episodes
        end at the last step, and the finished episodes' mean return, length and objective."""
        assert self.envs is not None
        cfg = self.config
        returns: list[float] = []
        lengths: list[int] = []
        objectives: list[float] = []
        for step in range(cfg.num_steps):
            rollout.obs[step] = self._next_obs
            rollout.dones[step] = next_done
            if self._next_mask is not None:
                rollout.masks[step] = self._next_mask
            action = self._act(rollout, step)
            obs, reward, term, trunc, info = self.envs.step(action)
            reward = np.asarray(reward, dtype=np.float64)
            ended = term | trunc
            self._ep_return += reward
            self._ep_length += 1
            rollout.rewards[step] = self._scale_rewards(reward, ended)
            self._after_step(rollout, step, info, ended)
            if ended.any():
                final = info.get("final_info", {})
                for i in np.flatnonzero(ended):
                    returns.append(float(self._ep_return[i]))
                    lengths.append(int(self._ep_length[i]))
                    self._ep_return[i] = 0.0
                    self._ep_length[i] = 0
                    if "objective" in final and final.get("_objective", ended)[i]:
                        objectives.append(float(final["objective"][i]))
                self.episodes += int(ended.sum())
                # A cut episode (truncated) still has a future: bootstrap it.
                cut = np.flatnonzero(np.logical_and(trunc, np.logical_not(term)))
                if len(cut):
                    final_obs = np.stack([info["final_obs"][i] for i in cut])
                    values = self._values(final_obs.astype(np.float32))
                    rollout.rewards[step, cut] += cfg.gamma * values
            next_done = ended.astype(np.float32)
            self._observe(obs, info)

        def mean(values: list[float] | list[int]) -> float:
            return float(np.mean(values)) if values else math.nan

        return next_done, {
            "return": mean(returns),
            "episode_length": mean(lengths),
            "objective": mean(objectives),
        }

    def _scale_rewards(self, reward: np.ndarray, ended: np.ndarray) -> np.ndarray:
        """Divide by the running std of the discounted return (per environment stream)."""
        if not self.config.normalize_reward:
            return reward.astype(np.float32)
        scaled, self._returns = scale_by_return_std(
            reward, ended, self._returns, self.ret_rms, self.config.gamma
        )
        return scaled

    def ppo_epochs(
        self,
        net: nn.Module,
        optimizer: torch.optim.Optimizer,
        logits_fn: Callable[[torch.Tensor], torch.Tensor],
        value_fn: Callable[[torch.Tensor], torch.Tensor],
        act: torch.Tensor,
        old_logp: torch.Tensor,
        adv: torch.Tensor,
        ret: torch.Tensor,
        old_val: torch.Tensor,
        ent_coef: float,
        fit_policy: bool = True,
    ) -> dict[str, float]:
        """``update_epochs`` epochs of the clipped objective over minibatches of the samples
        (``logits_fn``/``value_fn`` take minibatch indices); without ``fit_policy``, the value
        loss alone. The last minibatch's losses and the mean clip fraction."""
        cfg = self.config
        n = len(act)
        mb = max(1, n // cfg.num_minibatches)
        stats = dict.fromkeys(("policy_loss", "value_loss", "entropy", "approx_kl", "loss"), 0.0)
        clip_fracs: list[float] = []
        params = list(net.parameters())  # clipped at every minibatch: walk the modules once
        net.train()
        for _epoch in range(cfg.update_epochs):
            order = torch.from_numpy(self.rng.permutation(n))
            for start in range(0, n, mb):
                idx = order[start : start + mb]
                logp_all = torch.log_softmax(logits_fn(idx), -1)
                new_logp = logp_all.gather(1, act[idx, None])[:, 0]
                entropy = -(logp_all.exp() * logp_all.clamp(min=-1e8)).sum(-1).mean()
                log_ratio = new_logp - old_logp[idx]
                ratio = log_ratio.exp()
                with torch.no_grad():
                    approx_kl = ((ratio - 1) - log_ratio).mean()
                    clip_fracs.append(float(((ratio - 1.0).abs() > cfg.clip_coef).float().mean()))
                m_adv = adv[idx]
                if cfg.norm_adv and len(idx) > 1:
                    m_adv = (m_adv - m_adv.mean()) / (m_adv.std() + 1e-8)
                pg_loss = torch.max(
                    -m_adv * ratio,
                    -m_adv * ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef),
                ).mean()
                new_v = value_fn(idx)
                if cfg.clip_vloss:
                    v_old = old_val[idx]
                    v_clip = v_old + (new_v - v_old).clamp(-cfg.clip_coef, cfg.clip_coef)
                    v_loss = (
                        0.5
                        * torch.max(
                            (new_v - ret[idx]).square(), (v_clip - ret[idx]).square()
                        ).mean()
                    )
                else:
                    v_loss = 0.5 * (new_v - ret[idx]).square().mean()
                if fit_policy:
                    loss = pg_loss - ent_coef * entropy + cfg.vf_coef * v_loss
                else:
                    loss = cfg.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
                optimizer.step()
                stats = {
                    "policy_loss": pg_loss.item(),
                    "value_loss": v_loss.item(),
                    "entropy": entropy.item(),
                    "approx_kl": approx_kl.item(),
                    "loss": loss.item(),
                }
            if cfg.target_kl is not None and stats["approx_kl"] > cfg.target_kl:
                break
        net.eval()
        stats["clip_fraction"] = float(np.mean(clip_fracs)) if clip_fracs else 0.0
        return stats

    # --- persistence ---------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """Everything :meth:`save` writes: plain containers and tensors only."""
        raise NotImplementedError

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the checkpoint atomically (``torch.save`` of state dicts, never a pickle of
        objects)."""
        return write_checkpoint_file(path, self.state())

    @classmethod
    def read_checkpoint(cls, path: str | os.PathLike[str]) -> dict[str, Any]:
        """Load and check a checkpoint of this trainer (``weights_only=True``);
        :class:`InputError` if the file is not one."""
        return read_checkpoint_file(
            path, cls.CHECKPOINT_FORMAT, cls.CHECKPOINT_VERSION, cls.NOT_OURS
        )

    def close(self) -> None:
        if self.envs is not None:
            self.envs.close()
            self.envs = None
