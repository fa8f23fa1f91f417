"""Proximal Policy Optimisation (PPO, Schulman et al. 2017) over vectorised environments.

Read top to bottom like CleanRL's ``ppo.py``: the hyperparameters (:class:`PPOConfig`, with
documented defaults), the network (:class:`ActorCritic`), then :class:`PPOTrainer`, whose
:meth:`~PPOTrainer.learn` is one loop: collect ``num_steps`` decisions from each of
``num_envs`` environments (a Gymnasium ``SyncVectorEnv`` in-process or ``AsyncVectorEnv`` in
subprocesses; episodes end and restart inside a rollout), compute GAE advantages, then run
``update_epochs`` epochs of minibatch updates with the clipped objective, advantage
normalisation, an entropy bonus, a (clipped) value loss and gradient-norm clipping.

What makes it fit hdeeprm's environment:

* **Observation normalisation** by running mean and variance (frozen during a rollout and its
  update, refreshed between updates, saved with the model).
* **Reward scaling** by the running standard deviation of the discounted return (rewards of
  different objectives differ by orders of magnitude: slowdown ~1e-3, energy ~1e6 J).
* **Action masks** from ``info["action_mask"]`` when the environment provides one: infeasible
  pairs get no probability, in rollouts, updates and :meth:`~PPOTrainer.predict`.
* **A prior**: ``prior_action`` names a policy pair the initial policy favours with
  probability ``prior_probability`` (e.g. the best fixed pair on the training windows), so the
  greedy policy starts from a good rule instead of an arbitrary one and learning refines it.

Same config, seed and environments give the same weights bit for bit: weights come from
``seed``, actions are sampled with a private ``torch.Generator`` and minibatches are shuffled
with a private NumPy generator. Checkpoints are plain state dicts (``torch.save``), loaded
with ``torch.load(weights_only=True)``.

Example::

    from hdeeprm.training.ppo import PPOConfig, PPOTrainer, env_factories
    trainer = PPOTrainer(PPOConfig(num_envs=4), env_factories("options.json", 4))
    trainer.learn(100_000)
    trainer.save("ppo.pt")
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812

from hdeeprm._atomic import atomic_open, write_text
from hdeeprm.errors import InputError

#: Format tag and version of PPO checkpoints.
CHECKPOINT_FORMAT = "hdeeprm-ppo"
CHECKPOINT_VERSION = 1
#: Per-update log written in the run folder.
PPO_LOG_FILE = "training_log.csv"
#: Leading columns of the per-update log; ``freq_<action>`` columns follow.
PPO_LOG_COLUMNS = (
    "update",
    "steps",
    "episodes",
    "return",
    "objective",
    "policy_loss",
    "value_loss",
    "entropy",
    "approx_kl",
    "clip_fraction",
    "explained_variance",
    "learning_rate",
    "steps_per_s",
)
VECTOR_KINDS = ("sync", "async", "shared", "ray")
#: The trainer's own CPU per decision (policy step, bookkeeping, updates) in environment
#: decisions, measured on Gaia windows (docs/learning.md, "Performance"): with
#: ``vector="shared"`` the trainer's process steps fewer environments than a worker by this
#: much (4 environments, 1 worker: 1 here and 3 in the worker).
TRAINER_COST = 0.4


@dataclass
class PPOConfig:
    """PPO hyperparameters. Every field is a key of ``pybatsim.agent.params``."""

    #: Decision steps to train for, over all environments (``learn()``'s default).
    total_timesteps: int = 200_000
    #: Environments stepped together; each rollout has ``num_envs * num_steps`` decisions.
    num_envs: int = 4
    #: Decisions collected per environment between two updates (episodes may end inside).
    num_steps: int = 512
    #: ``"sync"``: environments in this process; ``"async"``: one subprocess each;
    #: ``"shared"``: this process and ``num_workers`` worker processes, several environments
    #: each, over shared memory (:class:`hdeeprm.environment.vector.SharedMemoryVectorEnv`,
    #: made to use a few cores with little overhead); ``"ray"``: in Ray actors
    #: (:class:`hdeeprm.sweep.RayVectorEnv`, the ``ray`` extra), on the Ray cluster
    #: ``ray.init`` connects to (a local one is started when none is running). The results
    #: are the same whichever is used.
    vector: str = "sync"
    #: With ``vector="shared"``: worker processes (None: one per available core but this
    #: process's; 0: all environments in this process).
    num_workers: int | None = None
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
    #: Width of the two hidden layers of the actor and of the critic.
    hidden: int = 64
    #: Running mean/variance normalisation of observations.
    normalize_observation: bool = True
    #: Scale rewards by the running standard deviation of the discounted return.
    normalize_reward: bool = True
    #: Use ``info["action_mask"]`` when the environment provides it.
    use_action_mask: bool = True
    #: Name of the action (policy pair) the initial policy favours; None: uniform.
    prior_action: str | None = None
    #: Initial probability of ``prior_action``.
    prior_probability: float = 0.5
    #: Seed of weights, action sampling, minibatch order and environment resets.
    seed: int = 0
    #: Torch threads (small networks: 1 is fastest and leaves the cores to environments).
    torch_threads: int = 1
    #: Environment split the trainer's factories build (``"train"``, ``"eval"``, ``"all"``;
    #: None: the environment's default, ``"train"`` when the options have episode windows).
    split: str | None = None
    #: Validate the greedy policy every this many updates (and after the last one) on the
    #: trainer's validation environment, keeping the best checkpoint; 0: never.
    #: See :mod:`hdeeprm.training.validation`.
    eval_every: int = 0
    #: What makes a validated checkpoint better: ``"mean"``, ``"median"`` over the windows,
    #: or ``"wins"`` (windows better than ``val_reference``, ties by the mean).
    val_statistic: str = "mean"
    #: Action name of the fixed pair validation counts wins against (needed by ``"wins"``;
    #: with another statistic the win count is only logged).
    val_reference: str | None = None

    @property
    def batch_size(self) -> int:
        return self.num_envs * self.num_steps

    @property
    def minibatch_size(self) -> int:
        return self.batch_size // self.num_minibatches

    def validate(self, where: str = "params", source: str | None = None) -> PPOConfig:
        """Raise :class:`InputError` naming the first bad field; return ``self``."""

        def bad(key: str, expected: str) -> InputError:
            value = getattr(self, key)
            return InputError(f"expected {expected}, got {value!r}", source, f"{where}.{key}")

        for key in (
            "total_timesteps",
            "num_envs",
            "num_steps",
            "num_minibatches",
            "update_epochs",
            "hidden",
            "torch_threads",
        ):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise bad(key, "an integer >= 1")
        for key in ("seed", "eval_every"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise bad(key, "an integer >= 0")
        for key, low, high in (
            ("learning_rate", 0.0, None),
            ("gamma", 0.0, 1.0),
            ("gae_lambda", 0.0, 1.0),
            ("clip_coef", 0.0, None),
            ("ent_coef", 0.0, None),
            ("vf_coef", 0.0, None),
            ("max_grad_norm", 0.0, None),
            ("prior_probability", 0.0, 1.0),
        ):
            value = getattr(self, key)
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            ok = ok and math.isfinite(value) and value >= low and (high is None or value <= high)
            if not ok:
                rng = f"[{low:g}, {'inf' if high is None else f'{high:g}'}]"
                raise bad(key, f"a number in {rng}")
        if self.learning_rate <= 0:
            raise bad("learning_rate", "a number > 0")
        if self.target_kl is not None and (
            isinstance(self.target_kl, bool)
            or not isinstance(self.target_kl, (int, float))
            or not self.target_kl > 0
        ):
            raise bad("target_kl", "a number > 0 or null")
        for key in (
            "anneal_lr",
            "norm_adv",
            "clip_vloss",
            "normalize_observation",
            "normalize_reward",
            "use_action_mask",
        ):
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
        if self.num_workers is not None and (
            not isinstance(self.num_workers, int)
            or isinstance(self.num_workers, bool)
            or not 0 <= self.num_workers < self.num_envs
        ):
            raise bad(
                "num_workers",
                f"a whole number from 0 to num_envs - 1 ({self.num_envs - 1}) or null",
            )
        if self.split not in (None, "train", "eval", "all"):
            raise bad("split", "one of train, eval, all or null")
        if self.prior_action is not None and not isinstance(self.prior_action, str):
            raise bad("prior_action", "an action name such as 'shortest-high_gflops' or null")
        if self.val_statistic not in ("mean", "median", "wins"):
            raise bad("val_statistic", "one of mean, median, wins")
        if self.val_reference is not None and not isinstance(self.val_reference, str):
            raise bad("val_reference", "an action name such as 'shortest-high_gflops' or null")
        if self.val_statistic == "wins" and self.val_reference is None:
            raise bad(
                "val_reference", "an action name (val_statistic 'wins' counts wins against it)"
            )
        if self.batch_size % self.num_minibatches:
            raise InputError(
                f"num_envs x num_steps ({self.batch_size}) must be a multiple of "
                f"num_minibatches ({self.num_minibatches})",
                source,
                f"{where}.num_minibatches",
            )
        return self

    @classmethod
    def from_params(
        cls, params: dict[str, Any], where: str = "params", source: str | None = None
    ) -> PPOConfig:
        """Build from a JSON object; unknown keys and bad values are :class:`InputError`."""
        names = [f.name for f in dataclasses.fields(cls)]
        for key in params:
            if key not in names:
                import difflib

                hint = difflib.get_close_matches(key, names, n=1)
                extra = f" (did you mean '{hint[0]}'?)" if hint else ""
                raise InputError(
                    f"unknown PPO parameter '{key}'{extra}; allowed: {', '.join(names)}",
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


# --- running statistics ----------------------------------------------------------------------
class RunningMeanStd(nn.Module):
    """Mean and variance of everything seen so far (parallel-variance merge); saved buffers."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        super().__init__()
        self.register_buffer("mean", torch.zeros(shape, dtype=torch.float64))
        self.register_buffer("var", torch.ones(shape, dtype=torch.float64))
        self.register_buffer("count", torch.tensor(1e-4, dtype=torch.float64))

    def update(self, batch: np.ndarray) -> None:
        batch = np.asarray(batch, dtype=np.float64).reshape(-1, *self.mean.shape)
        if not len(batch):
            return
        b_mean = torch.from_numpy(batch.mean(axis=0))
        b_var = torch.from_numpy(batch.var(axis=0))
        n = float(len(batch))
        delta = b_mean - self.mean
        total = self.count + n
        m2 = self.var * self.count + b_var * n + delta.square() * self.count * n / total
        self.mean.copy_(self.mean + delta * n / total)
        self.var.copy_(m2 / total)
        self.count.fill_(float(total))


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


# --- the network -----------------------------------------------------------------------------
def gumbel_sample(logits: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Categorical sampling from ``logits`` with the caller's own generator (Gumbel-max), so
    that sampling never touches torch's global random state."""
    u = torch.rand(logits.shape, generator=generator).clamp_(1e-20, 1.0)
    return (logits - u.log_().neg_().log_()).argmax(dim=-1)  # in place: -log(-log(u))


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


def write_checkpoint_file(path: str | os.PathLike[str], state: dict[str, Any]) -> Path:
    """Write ``state`` (plain containers and tensors, never pickled objects) atomically, so an
    interrupted save never leaves a half-written model where a finished one was."""
    target = Path(path)
    with atomic_open(target, "wb") as handle:
        torch.save(state, handle)
    return target


def _layer(inputs: int, outputs: int, gain: float) -> nn.Linear:
    layer = nn.Linear(inputs, outputs)
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)
    return layer


class ActorCritic(nn.Module):
    """Separate tanh MLPs for the policy logits and the state value, on normalised inputs."""

    def __init__(self, observation_size: int, action_size: int, hidden: int) -> None:
        super().__init__()
        self.obs_rms = RunningMeanStd((observation_size,))
        root2 = math.sqrt(2.0)
        self.actor = nn.Sequential(
            _layer(observation_size, hidden, root2),
            nn.Tanh(),
            _layer(hidden, hidden, root2),
            nn.Tanh(),
            _layer(hidden, action_size, 0.01),
        )
        self.critic = nn.Sequential(
            _layer(observation_size, hidden, root2),
            nn.Tanh(),
            _layer(hidden, hidden, root2),
            nn.Tanh(),
            _layer(hidden, 1, 1.0),
        )
        self.normalize = True
        self._layers: tuple[tuple[torch.Tensor, torch.Tensor], ...] | None = None
        self._refresh()

    def _refresh(self) -> None:
        """Cache float32 normalisation constants (the buffers change only between updates)."""
        self._mean = self.obs_rms.mean.float()
        self._scale = torch.rsqrt(self.obs_rms.var.float() + 1e-8)

    def normalized(self, obs: torch.Tensor) -> torch.Tensor:
        if not self.normalize:
            return obs
        return ((obs - self._mean) * self._scale).clamp_(-10.0, 10.0)

    def logits(self, obs: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        out = self.actor(self.normalized(obs))
        if mask is not None:
            out = out.masked_fill(~mask, -1e9)
        return out

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.critic(self.normalized(obs)).squeeze(-1)

    def logits_and_value(
        self, obs: torch.Tensor, mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Both heads from one normalisation of ``obs`` (the rollout's per-step call)."""
        x = self.normalized(obs)
        out = self.actor(x)
        if mask is not None:
            out = out.masked_fill(~mask, -1e9)
        return out, self.critic(x).squeeze(-1)

    def act(
        self, obs: np.ndarray, mask: np.ndarray | None, generator: torch.Generator
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One rollout step for a batch: sampled actions, their log-probabilities and the
        values, as NumPy arrays.

        The same operations as :meth:`logits_and_value` and :func:`gumbel_sample` (so the
        same numbers bit for bit), called on the layers' tensors directly: the module call
        machinery costs more than these small matrix products.
        """
        if self._layers is None:
            self._layers = tuple(
                (m.weight, m.bias)
                for net in (self.actor, self.critic)
                for m in net
                if isinstance(m, nn.Linear)
            )
        (aw0, ab0), (aw1, ab1), (aw2, ab2), (cw0, cb0), (cw1, cb1), (cw2, cb2) = self._layers
        with torch.inference_mode():
            x = self.normalized(torch.from_numpy(obs))
            logits = F.linear(
                torch.tanh(F.linear(torch.tanh(F.linear(x, aw0, ab0)), aw1, ab1)), aw2, ab2
            )
            if mask is not None:
                logits = logits.masked_fill(torch.from_numpy(~mask), -1e9)
            value = F.linear(
                torch.tanh(F.linear(torch.tanh(F.linear(x, cw0, cb0)), cw1, cb1)), cw2, cb2
            )
            action = gumbel_sample(logits, generator)
            logp = torch.log_softmax(logits, -1).gather(1, action[:, None])[:, 0]
        return action.numpy(), logp.numpy(), value.squeeze(-1).numpy()


# --- environments ----------------------------------------------------------------------------
@dataclass(frozen=True)
class EnvFactory:
    """A picklable recipe for one environment (``AsyncVectorEnv`` builds it in a subprocess).

    ``options`` is an options-file path; inputs are prepared (or reused) in ``output_dir``.
    ``split`` is the environment's (None: its default).
    """

    options: str
    output_dir: str | None = None
    custom_workload: str | None = None
    split: str | None = None

    def __call__(self) -> gym.Env:
        from hdeeprm.environment import HeterogeneousClusterEnv

        return HeterogeneousClusterEnv.from_options(
            self.options, self.output_dir, self.custom_workload, split=self.split
        )


def env_factories(
    options: str | os.PathLike[str],
    num_envs: int,
    *,
    output_dir: str | os.PathLike[str] | None = None,
    custom_workload: str | os.PathLike[str] | None = None,
    split: str | None = None,
) -> list[EnvFactory]:
    """``num_envs`` identical factories (each environment gets its own seed at reset)."""
    return [
        EnvFactory(
            os.fspath(options),
            None if output_dir is None else os.fspath(output_dir),
            None if custom_workload is None else os.fspath(custom_workload),
            split,
        )
        for _ in range(num_envs)
    ]


def inputs_factories(
    inputs: Any, num_envs: int, split: str | None = None
) -> list[Callable[[], gym.Env]]:
    """Factories sharing already prepared inputs (in-process ``SyncVectorEnv``, or
    ``AsyncVectorEnv`` with the ``fork`` start method)."""
    from hdeeprm.environment import HeterogeneousClusterEnv

    return [(lambda: HeterogeneousClusterEnv(inputs=inputs, split=split)) for _ in range(num_envs)]


def build_vector_env(
    env_fns: Sequence[Callable[[], gym.Env]],
    kind: str,
    envs_per_actor: int = 1,
    num_workers: int | None = None,
    full_info: bool = False,
) -> gym.vector.VectorEnv:
    """A vector environment that resets finished episodes within the same ``step`` call.

    ``kind="shared"``: ``num_workers`` worker processes; its ``info`` holds the action mask
    at every step and the rest when an episode ends, unless ``full_info``.
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
        return gym.vector.SyncVectorEnv(list(env_fns), autoreset_mode=mode)
    if kind == "async":
        return gym.vector.AsyncVectorEnv(list(env_fns), autoreset_mode=mode, context="fork")
    raise ValueError(f"vector must be one of {VECTOR_KINDS}, got {kind!r}")


def _mask_from(info: dict[str, Any], n: int, size: int) -> np.ndarray | None:
    """The ``(n, size)`` boolean action mask of a vector ``info``, or None without one."""
    mask = info.get("action_mask")
    if mask is None:
        return None
    mask = np.asarray(mask, dtype=bool).reshape(n, size)
    present = info.get("_action_mask")
    if present is not None and not np.all(present):
        mask = mask.copy()
        mask[~np.asarray(present, dtype=bool)] = True
    # A row with nothing allowed would have no distribution: allow everything there.
    mask[~mask.any(axis=1)] = True
    return mask


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


# --- logging ---------------------------------------------------------------------------------
class UpdateLog:
    """``training_log.csv`` (rewritten atomically) and optional TensorBoard scalars."""

    def __init__(
        self, run_dir: Path | None, action_names: list[str], tensorboard: bool | None
    ) -> None:
        self.path = None if run_dir is None else Path(run_dir) / PPO_LOG_FILE
        self.header = [*PPO_LOG_COLUMNS, *(f"freq_{a}" for a in action_names)]
        self.rows: list[list[str]] = []
        self.action_names = action_names
        self.writer = None
        if run_dir is not None and tensorboard is not False:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except Exception as exc:  # noqa: BLE001 - optional feature
                if tensorboard:
                    raise InputError(
                        "TensorBoard logging asked for but tensorboard is not installed "
                        "(pip install 'hdeeprm[rl]')"
                    ) from exc
            else:
                self.writer = SummaryWriter(log_dir=str(Path(run_dir) / "tensorboard"))
        self._last = 0.0

    def add(self, row: dict[str, float], frequencies: np.ndarray, force: bool = False) -> None:
        values = [row[c] for c in PPO_LOG_COLUMNS]
        self.rows.append([_fmt(v) for v in values] + [_fmt(float(f)) for f in frequencies])
        if self.writer is not None:
            step = int(row["steps"])
            for key in PPO_LOG_COLUMNS[3:]:
                if not math.isnan(row[key]):
                    self.writer.add_scalar(f"ppo/{key}", row[key], step)
            for name, f in zip(self.action_names, frequencies):
                self.writer.add_scalar(f"actions/{name}", float(f), step)
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
class PPOTrainer:
    """PPO with an SB3-like surface: ``learn``, ``predict``, ``save``, ``load``.

    Args:
        config: hyperparameters (validated).
        env_fns: environment factories, one per vector slot (``len == config.num_envs``);
            ``None`` gives a trainer that can only ``predict`` (e.g. after :meth:`load`).
        run_dir: folder for ``training_log.csv`` and ``tensorboard/`` (None: no logs).
        tensorboard: write TensorBoard scalars (None: when tensorboard is importable).
        spaces: ``(observation_size, action_names)`` when ``env_fns`` is None.
        val_env: the validation environment (or a factory) that ``eval_every`` plays on,
            e.g. ``HeterogeneousClusterEnv(..., split="val")``; see
            :mod:`hdeeprm.training.validation`. The best checkpoint goes to
            ``run_dir/best_model.pt`` and :attr:`validator`.
    """

    def __init__(
        self,
        config: PPOConfig,
        env_fns: Sequence[Callable[[], gym.Env]] | None = None,
        *,
        run_dir: str | os.PathLike[str] | None = None,
        tensorboard: bool | None = None,
        spaces: tuple[int, list[str]] | None = None,
        val_env: Any = None,
    ) -> None:
        self.config = config.validate()
        self.envs: gym.vector.VectorEnv | None = None
        if env_fns is not None:
            if len(env_fns) != config.num_envs:
                raise ValueError(
                    f"{len(env_fns)} environment factories for num_envs={config.num_envs}"
                )
            self.envs = build_vector_env(
                env_fns, config.vector, config.envs_per_actor, config.num_workers
            )
            obs_size = int(np.prod(self.envs.single_observation_space.shape))
            action_names = list(self.envs.get_attr("action_names")[0])
        elif spaces is not None:
            obs_size, action_names = spaces[0], list(spaces[1])
        else:
            raise ValueError("give env_fns, or spaces for a predict-only trainer")
        self.observation_size = obs_size
        self.action_names = action_names
        self.run_dir = None if run_dir is None else Path(run_dir)
        self.tensorboard = tensorboard
        torch.set_num_threads(config.torch_threads)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(config.seed)
            self.model = ActorCritic(obs_size, len(action_names), config.hidden)
        self.model.normalize = config.normalize_observation
        if config.prior_action is not None:
            self._apply_prior(config.prior_action, config.prior_probability)
        self.optimizer = torch.optim.Adam(
            self.model.parameters(), lr=config.learning_rate, eps=1e-5
        )
        self.generator = torch.Generator().manual_seed(config.seed)
        self.rng = np.random.default_rng(config.seed)
        self.ret_rms = ReturnStats()
        self.global_step = 0
        self.updates = 0
        self.episodes = 0
        self._next_obs: np.ndarray | None = None
        self._next_mask: np.ndarray | None = None
        self._returns = np.zeros(config.num_envs)
        self._ep_return = np.zeros(config.num_envs)
        self.validator = None
        if val_env is not None:
            from hdeeprm.training.validation import Validator

            self.validator = Validator(
                val_env,
                self.run_dir,
                statistic=config.val_statistic,
                reference=config.val_reference,
            )

    def _apply_prior(self, name: str, probability: float) -> None:
        if name not in self.action_names:
            raise InputError(
                f"prior_action {name!r} is not an action of this environment; "
                f"actions: {', '.join(self.action_names)}",
                None,
                "params.prior_action",
            )
        n = len(self.action_names)
        if n < 2 or probability <= 1.0 / n:
            return
        p = min(probability, 1.0 - 1e-6)
        bias = math.log(p * (n - 1) / (1.0 - p))  # softmax of [bias, 0, ..., 0] gives p
        with torch.no_grad():
            self.model.actor[-1].bias[self.action_names.index(name)] = bias

    # --- acting ------------------------------------------------------------------------------
    def predict(
        self,
        observation: np.ndarray,
        deterministic: bool = True,
        action_mask: np.ndarray | None = None,
    ) -> np.ndarray:
        """Actions for one observation (returns a 0-d array) or a batch of them."""
        obs = torch.as_tensor(np.asarray(observation, dtype=np.float32))
        single = obs.ndim == 1
        if single:
            obs = obs.unsqueeze(0)
        mask = None
        if action_mask is not None and self.config.use_action_mask:
            mask = torch.as_tensor(np.asarray(action_mask, dtype=bool)).reshape(obs.shape[0], -1)
        with torch.no_grad():
            logits = self.model.logits(obs, mask)
            action = logits.argmax(dim=-1) if deterministic else self._sample(logits)
        out = action.numpy()
        return out[0] if single else out

    def _sample(self, logits: torch.Tensor) -> torch.Tensor:
        return gumbel_sample(logits, self.generator)

    # --- training ----------------------------------------------------------------------------
    def reset_envs(self) -> None:
        """Start an episode in every environment (seeded with ``seed + i``). The first
        :meth:`learn` does it; calling it before (e.g. to time training apart from the first
        episodes' set-up) changes nothing else."""
        if self.envs is None:
            raise RuntimeError("this trainer has no environments (built for predict only)")
        cfg = self.config
        obs, info = self.envs.reset(seed=cfg.seed)
        self._next_obs = obs.astype(np.float32)
        n_env, size = cfg.num_envs, len(self.action_names)
        self._next_mask = _mask_from(info, n_env, size) if cfg.use_action_mask else None

    def learn(
        self,
        total_timesteps: int | None = None,
        *,
        callback: Callable[[dict[str, float]], Any] | None = None,
        progress: bool = False,
    ) -> PPOTrainer:
        """Train for ``total_timesteps`` decisions (default: the config's), in whole rollouts.

        ``callback`` receives each update's log row; returning ``False`` stops training.
        """
        if self.envs is None:
            raise RuntimeError("this trainer has no environments (built for predict only)")
        cfg = self.config
        if cfg.eval_every and self.validator is None:
            raise ValueError("eval_every > 0 needs a validation environment (val_env=...)")
        total = cfg.total_timesteps if total_timesteps is None else int(total_timesteps)
        n_updates = max(1, total // cfg.batch_size)
        n_env, n_steps, size = cfg.num_envs, cfg.num_steps, len(self.action_names)
        obs_buf = np.zeros((n_steps, n_env, self.observation_size), dtype=np.float32)
        act_buf = np.zeros((n_steps, n_env), dtype=np.int64)
        logp_buf = np.zeros((n_steps, n_env), dtype=np.float32)
        rew_buf = np.zeros((n_steps, n_env), dtype=np.float32)
        done_buf = np.zeros((n_steps, n_env), dtype=np.float32)
        val_buf = np.zeros((n_steps, n_env), dtype=np.float32)
        mask_buf = np.ones((n_steps, n_env, size), dtype=bool)
        if self._next_obs is None:
            self.reset_envs()
        next_done = np.zeros(n_env, dtype=np.float32)
        log = UpdateLog(self.run_dir, self.action_names, self.tensorboard)
        from tqdm import tqdm

        bar = tqdm(total=n_updates * cfg.batch_size, disable=not progress, unit="step")
        model = self.model
        generator = self.generator
        try:
            for update in range(n_updates):
                t0 = time.perf_counter()
                lr = cfg.learning_rate
                if cfg.anneal_lr:
                    lr *= 1.0 - update / n_updates
                for group in self.optimizer.param_groups:
                    group["lr"] = lr
                finished_returns: list[float] = []
                objectives: list[float] = []
                for step in range(n_steps):
                    obs_np = self._next_obs
                    mask_np = self._next_mask
                    obs_buf[step] = obs_np
                    done_buf[step] = next_done
                    if mask_np is not None:
                        mask_buf[step] = mask_np
                    act, logp_buf[step], val_buf[step] = model.act(obs_np, mask_np, generator)
                    act_buf[step] = act
                    obs, reward, term, trunc, info = self.envs.step(act)
                    reward = np.asarray(reward, dtype=np.float64)
                    ended = term | trunc
                    self._ep_return += reward
                    rew_buf[step] = self._scale_rewards(reward, ended)
                    if ended.any():
                        final = info.get("final_info", {})
                        for i in np.flatnonzero(ended):
                            finished_returns.append(float(self._ep_return[i]))
                            self._ep_return[i] = 0.0
                            if "objective" in final and final.get("_objective", ended)[i]:
                                objectives.append(float(final["objective"][i]))
                        self.episodes += int(ended.sum())
                        # A cut episode (truncated) still has a future: bootstrap it.
                        cut = np.flatnonzero(np.logical_and(trunc, np.logical_not(term)))
                        if len(cut):
                            final_obs = np.stack([info["final_obs"][i] for i in cut])
                            with torch.no_grad():
                                v = model.value(torch.from_numpy(final_obs.astype(np.float32)))
                            rew_buf[step, cut] += cfg.gamma * v.numpy()
                    next_done = ended.astype(np.float32)
                    self._next_obs = obs.astype(np.float32, copy=False)
                    self._next_mask = _mask_from(info, n_env, size) if cfg.use_action_mask else None
                self.global_step += cfg.batch_size
                t_roll = time.perf_counter()
                stats = self._update(
                    obs_buf,
                    act_buf,
                    logp_buf,
                    rew_buf,
                    done_buf,
                    val_buf,
                    mask_buf if self._next_mask is not None or cfg.use_action_mask else None,
                    next_done,
                )
                if cfg.normalize_observation:
                    model.obs_rms.update(obs_buf.reshape(-1, self.observation_size))
                    model._refresh()
                self.updates += 1
                elapsed = time.perf_counter() - t0
                freq = np.bincount(act_buf.ravel(), minlength=size) / act_buf.size
                row = {
                    "update": self.updates,
                    "steps": self.global_step,
                    "episodes": self.episodes,
                    "return": float(np.mean(finished_returns)) if finished_returns else math.nan,
                    "objective": float(np.mean(objectives)) if objectives else math.nan,
                    **stats,
                    "learning_rate": lr,
                    "steps_per_s": cfg.batch_size / elapsed,
                    "rollout_s": t_roll - t0,
                }
                last = update == n_updates - 1
                if cfg.eval_every and (self.updates % cfg.eval_every == 0 or last):
                    assert self.validator is not None
                    row["val_objective"] = self.validator.validate(self, log.writer).objective
                log.add(row, freq, force=last)
                bar.update(cfg.batch_size)
                if callback is not None and callback(row) is False:
                    break
        finally:
            bar.close()
            log.close()
        return self

    def _scale_rewards(self, reward: np.ndarray, ended: np.ndarray) -> np.ndarray:
        """Divide by the running std of the discounted return (per environment stream)."""
        if not self.config.normalize_reward:
            return reward.astype(np.float32)
        scaled, self._returns = scale_by_return_std(
            reward, ended, self._returns, self.ret_rms, self.config.gamma
        )
        return scaled

    def _update(
        self,
        obs_buf: np.ndarray,
        act_buf: np.ndarray,
        logp_buf: np.ndarray,
        rew_buf: np.ndarray,
        done_buf: np.ndarray,
        val_buf: np.ndarray,
        mask_buf: np.ndarray | None,
        next_done: np.ndarray,
    ) -> dict[str, float]:
        cfg = self.config
        model = self.model
        with torch.no_grad():
            next_value = model.value(torch.from_numpy(self._next_obs)).numpy()
        adv = gae(rew_buf, val_buf, done_buf, next_value, next_done, cfg.gamma, cfg.gae_lambda)
        ret = adv + val_buf

        b_obs = torch.from_numpy(obs_buf.reshape(-1, self.observation_size))
        b_act = torch.from_numpy(act_buf.reshape(-1))
        b_logp = torch.from_numpy(logp_buf.reshape(-1))
        b_adv = torch.from_numpy(adv.reshape(-1))
        b_ret = torch.from_numpy(ret.reshape(-1))
        b_val = torch.from_numpy(val_buf.reshape(-1))
        b_mask = (
            None
            if mask_buf is None or mask_buf.all()
            else torch.from_numpy(mask_buf.reshape(-1, mask_buf.shape[-1]))
        )
        batch = cfg.batch_size
        mb = cfg.minibatch_size
        clip_fracs: list[float] = []
        pg_l = v_l = ent_l = kl = 0.0
        model.train()
        for _epoch in range(cfg.update_epochs):
            order = torch.from_numpy(self.rng.permutation(batch))
            for start in range(0, batch, mb):
                idx = order[start : start + mb]
                logits = model.logits(b_obs[idx], None if b_mask is None else b_mask[idx])
                logp_all = torch.log_softmax(logits, -1)
                new_logp = logp_all.gather(1, b_act[idx, None])[:, 0]
                probs = logp_all.exp()
                entropy = -(probs * logp_all.clamp(min=-1e8)).sum(-1).mean()
                log_ratio = new_logp - b_logp[idx]
                ratio = log_ratio.exp()
                with torch.no_grad():
                    approx_kl = ((ratio - 1) - log_ratio).mean()
                    clip_fracs.append(float(((ratio - 1.0).abs() > cfg.clip_coef).float().mean()))
                m_adv = b_adv[idx]
                if cfg.norm_adv and len(idx) > 1:
                    m_adv = (m_adv - m_adv.mean()) / (m_adv.std() + 1e-8)
                pg_loss = torch.max(
                    -m_adv * ratio,
                    -m_adv * ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef),
                ).mean()
                new_v = model.value(b_obs[idx])
                if cfg.clip_vloss:
                    v_clip = b_val[idx] + (new_v - b_val[idx]).clamp(-cfg.clip_coef, cfg.clip_coef)
                    v_loss = (
                        0.5
                        * torch.max(
                            (new_v - b_ret[idx]).square(), (v_clip - b_ret[idx]).square()
                        ).mean()
                    )
                else:
                    v_loss = 0.5 * (new_v - b_ret[idx]).square().mean()
                loss = pg_loss - cfg.ent_coef * entropy + cfg.vf_coef * v_loss
                self.optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
                self.optimizer.step()
                pg_l, v_l, ent_l, kl = (
                    pg_loss.item(),
                    v_loss.item(),
                    entropy.item(),
                    approx_kl.item(),
                )
            if cfg.target_kl is not None and kl > cfg.target_kl:
                break
        model.eval()
        var_y = float(b_ret.var())
        explained = math.nan if var_y == 0 else 1.0 - float((b_ret - b_val).var()) / var_y
        return {
            "policy_loss": pg_l,
            "value_loss": v_l,
            "entropy": ent_l,
            "approx_kl": kl,
            "clip_fraction": float(np.mean(clip_fracs)) if clip_fracs else 0.0,
            "explained_variance": explained,
        }

    # --- persistence ---------------------------------------------------------------------------
    def state(self, validation: Any = None) -> dict[str, Any]:
        """Everything :meth:`save` writes: plain containers and tensors only.

        ``validation`` (a :class:`~hdeeprm.training.validation.ValidationResult`) is recorded
        under ``"validation"`` (update, steps, objective) for a best checkpoint.
        """
        record = None
        if validation is not None:
            record = {
                "update": int(validation.update),
                "steps": int(validation.steps),
                "objective": float(validation.objective),
            }
        return {
            "format": CHECKPOINT_FORMAT,
            "version": CHECKPOINT_VERSION,
            "config": dataclasses.asdict(self.config),
            "action_names": list(self.action_names),
            "observation_size": self.observation_size,
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "ret_rms": self.ret_rms.state(),
            "global_step": self.global_step,
            "updates": self.updates,
            "episodes": self.episodes,
            "validation": record,
        }

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the checkpoint atomically (``torch.save`` of state dicts, never a pickle of
        objects)."""
        return write_checkpoint_file(path, self.state())

    @staticmethod
    def read_checkpoint(path: str | os.PathLike[str]) -> dict[str, Any]:
        """Load and check a PPO checkpoint (``weights_only=True``); :class:`InputError` if not."""
        return read_checkpoint_file(
            path,
            CHECKPOINT_FORMAT,
            CHECKPOINT_VERSION,
            "not a PPO checkpoint of hdeeprm (saved by PPOTrainer.save or "
            "hdeeprm-launch -om with algorithm 'ppo')",
        )

    def load_state(self, state: dict[str, Any], source: str | None = None) -> None:
        """Restore weights, optimiser and counters; the spaces must match."""
        if list(state["action_names"]) != self.action_names:
            raise InputError(
                "the model was trained for other actions: "
                f"{', '.join(state['action_names'])}; this environment has "
                f"{', '.join(self.action_names)}",
                source,
            )
        if int(state["observation_size"]) != self.observation_size:
            raise InputError(
                f"the model expects {state['observation_size']} observation values, this "
                f"environment gives {self.observation_size} (another observation type?)",
                source,
            )
        self.model.load_state_dict(state["model"])
        self.model._refresh()
        self.optimizer.load_state_dict(state["optimizer"])
        self.ret_rms.load(state["ret_rms"])
        self.global_step = int(state["global_step"])
        self.updates = int(state["updates"])
        self.episodes = int(state["episodes"])

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        env_fns: Sequence[Callable[[], gym.Env]] | None = None,
        **kwargs: Any,
    ) -> PPOTrainer:
        """A trainer from a checkpoint: its config, weights and counters."""
        state = cls.read_checkpoint(path)
        config = PPOConfig(**state["config"])
        if env_fns is not None and len(env_fns) != config.num_envs:
            config = dataclasses.replace(config, num_envs=len(env_fns))
        spaces = (int(state["observation_size"]), list(state["action_names"]))
        trainer = cls(config, env_fns, spaces=spaces, **kwargs)
        trainer.load_state(state, str(path))
        return trainer

    def close(self) -> None:
        if self.envs is not None:
            self.envs.close()
            self.envs = None
        if self.validator is not None:
            self.validator.close()
