"""Proximal Policy Optimisation (PPO, Schulman et al. 2017) over vectorised environments.

Read top to bottom like CleanRL's ``ppo.py``: the hyperparameters (:class:`PPOConfig`, with
documented defaults), the network (:class:`ActorCritic`), then :class:`PPOTrainer`. Its
:meth:`~PPOTrainer.learn` is the loop of :class:`~hdeeprm.training.onpolicy.OnPolicyTrainer`:
collect ``num_steps`` decisions from each of ``num_envs`` environments (a Gymnasium
``SyncVectorEnv`` in-process or ``AsyncVectorEnv`` in subprocesses; episodes end and restart
inside a rollout), compute GAE advantages, then run ``update_epochs`` epochs of minibatch
updates with the clipped objective, advantage normalisation, an entropy bonus, a (clipped)
value loss and gradient-norm clipping. This module gives the network, how it acts and what
it learns from.

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

Same config, seed and environments give the same weights bit for bit. Checkpoints are plain
state dicts (``torch.save``), loaded with ``torch.load(weights_only=True)``. The run folder
gets ``training_log.csv`` (:data:`PPO_LOG_COLUMNS`, then ``freq_<action>``) and TensorBoard
scalars under Stable-Baselines3's names (:data:`~hdeeprm.training.onpolicy.SB3_TAGS`).

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import gymnasium as gym
import numpy as np
import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812

from hdeeprm.errors import InputError
from hdeeprm.training.onpolicy import (
    TRAINER_COST,
    VECTOR_KINDS,
    OnPolicyConfig,
    OnPolicyTrainer,
    ReturnStats,
    Rollout,
    UpdateLog,
    build_vector_env,
    explained_variance,
    first_env_attr,
    flat_observation_size,
    gae,
    gumbel_sample,
    read_checkpoint_file,
    scale_by_return_std,
    seeded,
    shape_mismatch,
    write_checkpoint_file,
)
from hdeeprm.training.onpolicy import layer as _layer

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


@dataclass
class PPOConfig(OnPolicyConfig):
    """PPO hyperparameters: :class:`~hdeeprm.training.onpolicy.OnPolicyConfig`'s and these.
    Every field is a key of ``pybatsim.agent.params``."""

    #: With ``vector="shared"``: worker processes (None: one per available core but this
    #: process's; 0: all environments in this process).
    num_workers: int | None = None
    #: Running mean/variance normalisation of observations.
    normalize_observation: bool = True
    #: Use ``info["action_mask"]`` when the environment provides it.
    use_action_mask: bool = True
    #: Name of the action (policy pair) the initial policy favours; None: uniform.
    prior_action: str | None = None
    #: Initial probability of ``prior_action``.
    prior_probability: float = 0.5
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

    KIND: ClassVar[str] = "PPO"
    # Checkpoints list the fields in this order, so the same run writes the same bytes.
    FIELD_ORDER: ClassVar[tuple[str, ...]] = (
        "total_timesteps",
        "num_envs",
        "num_steps",
        "vector",
        "num_workers",
        "envs_per_actor",
        "learning_rate",
        "anneal_lr",
        "gamma",
        "gae_lambda",
        "num_minibatches",
        "update_epochs",
        "norm_adv",
        "clip_coef",
        "clip_vloss",
        "ent_coef",
        "vf_coef",
        "max_grad_norm",
        "target_kl",
        "hidden",
        "normalize_observation",
        "normalize_reward",
        "use_action_mask",
        "prior_action",
        "prior_probability",
        "seed",
        "torch_threads",
    )
    NATURAL: ClassVar[tuple[str, ...]] = (*OnPolicyConfig.NATURAL, "eval_every")
    NUMBERS: ClassVar[tuple[tuple[str, float | None, float | None], ...]] = (
        *OnPolicyConfig.NUMBERS,
        ("prior_probability", 0.0, 1.0),
    )
    BOOLS: ClassVar[tuple[str, ...]] = (
        *OnPolicyConfig.BOOLS,
        "normalize_observation",
        "use_action_mask",
    )

    def _validate_more(self, bad: Callable[[str, str], InputError]) -> None:
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


# --- the network -----------------------------------------------------------------------------
class RunningMeanStd(nn.Module):
    """Mean and variance of everything seen so far (parallel-variance merge); saved buffers."""

    #: The registered buffers (declared: ``nn.Module.__getattr__`` is typed ``Tensor | Module``).
    mean: torch.Tensor
    var: torch.Tensor
    count: torch.Tensor

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

    def _linears(self) -> tuple[tuple[torch.Tensor, torch.Tensor], ...]:
        """Weight and bias of the actor's three layers, then the critic's: the parameters
        themselves, which the optimiser and ``load_state_dict`` change in place."""
        if self._layers is None:
            self._layers = tuple(
                (m.weight, m.bias)
                for net in (self.actor, self.critic)
                for m in net
                if isinstance(m, nn.Linear)
            )
        return self._layers

    def actor_of(self, x: torch.Tensor) -> torch.Tensor:
        """``actor(x)`` of normalised inputs: the same operations on the layers' tensors,
        without the module calls, which cost more than these small products."""
        (w0, b0), (w1, b1), (w2, b2) = self._linears()[:3]
        return F.linear(torch.tanh(F.linear(torch.tanh(F.linear(x, w0, b0)), w1, b1)), w2, b2)

    def critic_of(self, x: torch.Tensor) -> torch.Tensor:
        """``critic(x)`` of normalised inputs, as :meth:`actor_of` computes ``actor(x)``."""
        (w0, b0), (w1, b1), (w2, b2) = self._linears()[3:]
        return F.linear(torch.tanh(F.linear(torch.tanh(F.linear(x, w0, b0)), w1, b1)), w2, b2)

    def act(
        self,
        obs: np.ndarray,
        mask: np.ndarray | None,
        generator: torch.Generator,
        uniform: torch.Tensor | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One rollout step for a batch: sampled actions, their log-probabilities and the
        values, as NumPy arrays (``uniform``: :func:`gumbel_sample`'s pre-drawn noise).

        The same operations as :meth:`logits_and_value` and :func:`gumbel_sample` (so the
        same numbers bit for bit), through :meth:`actor_of` and :meth:`critic_of`. A ``mask``
        that allows every action changes no logit, so it is not applied.
        """
        with torch.inference_mode():
            x = self.normalized(torch.from_numpy(obs))
            logits = self.actor_of(x)
            if mask is not None and not mask.all():
                logits = logits.masked_fill(torch.from_numpy(~mask), -1e9)
            value = self.critic_of(x)
            action = gumbel_sample(logits, generator, uniform)
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
    rows = mask.any(axis=1)
    if not rows.all():
        mask[~rows] = True
    return mask


# --- the trainer -----------------------------------------------------------------------------
class PPOTrainer(OnPolicyTrainer):
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

    CHECKPOINT_FORMAT = CHECKPOINT_FORMAT
    CHECKPOINT_VERSION = CHECKPOINT_VERSION
    NOT_OURS = (
        "not a PPO checkpoint of hdeeprm (saved by PPOTrainer.save or "
        "hdeeprm-launch -om with algorithm 'ppo')"
    )
    LOG_FILE = PPO_LOG_FILE
    config: PPOConfig

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
        super().__init__(
            config,
            env_fns,
            run_dir=run_dir,
            tensorboard=tensorboard,
            num_workers=config.num_workers,
        )
        if self.envs is not None:
            obs_size = flat_observation_size(self.envs)
            action_names = list(first_env_attr(self.envs, "action_names"))
        elif spaces is not None:
            obs_size, action_names = spaces[0], list(spaces[1])
        else:
            raise ValueError("give env_fns, or spaces for a predict-only trainer")
        self.observation_size = obs_size
        self.action_names = action_names
        with seeded(config.seed):
            self.model = ActorCritic(obs_size, len(action_names), config.hidden)
        self.model.normalize = config.normalize_observation
        if config.prior_action is not None:
            self._apply_prior(config.prior_action, config.prior_probability)
        self.optimizer = torch.optim.Adam(
            self.model.parameters(), lr=config.learning_rate, eps=1e-5
        )
        #: The current rollout's pre-drawn Gumbel noise (:meth:`_act`), from its step
        #: ``_uniform_first`` on.
        self._uniform: torch.Tensor | None = None
        self._uniform_first = 0
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
            logits_layer = cast(nn.Linear, self.model.actor[-1])  # made by _layer
            logits_layer.bias[self.action_names.index(name)] = bias

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

    # --- training: what PPO adds to the on-policy loop ---------------------------------------
    def log_columns(self) -> list[str]:
        return [*PPO_LOG_COLUMNS, *(f"freq_{a}" for a in self.action_names)]

    def _optimizers(self) -> list[tuple[torch.optim.Optimizer, float]]:
        return [(self.optimizer, self.config.learning_rate)]

    def _before_learn(self) -> None:
        if self.config.eval_every and self.validator is None:
            raise ValueError("eval_every > 0 needs a validation environment (val_env=...)")

    def _new_rollout(self) -> Rollout:
        cfg = self.config
        n_actions = len(self.action_names)
        return Rollout.zeros(cfg.num_steps, cfg.num_envs, self.observation_size, n_actions)

    def _observe(self, obs: np.ndarray, info: dict[str, Any]) -> None:
        self._next_obs = obs.astype(np.float32, copy=False)
        if self.config.use_action_mask:
            self._next_mask = _mask_from(info, self.config.num_envs, len(self.action_names))

    def _act(self, rollout: Rollout, step: int) -> np.ndarray:
        """Sample with the rollout's Gumbel noise, drawn from :attr:`generator` at its first
        step in one call (the same numbers as a draw per step: nothing else draws from the
        generator during a rollout), which saves a generator call per step."""
        assert self._next_obs is not None  # set by reset_envs before the first step
        if step == 0 or self._uniform is None:
            shape = (rollout.actions.shape[0] - step, *rollout.masks.shape[1:])
            self._uniform = torch.rand(shape, generator=self.generator)
            self._uniform_first = step
        act, rollout.logprobs[step], rollout.values[step] = self.model.act(
            self._next_obs,
            self._next_mask,
            self.generator,
            self._uniform[step - self._uniform_first],
        )
        rollout.actions[step] = act
        return act

    def _values(self, obs: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return self.model.value(torch.from_numpy(obs)).numpy()

    def _optimize(self, rollout: Rollout, adv: np.ndarray, ret: np.ndarray) -> dict[str, float]:
        model = self.model
        b_obs = torch.from_numpy(rollout.obs.reshape(-1, self.observation_size))
        masks = rollout.masks
        b_mask = None if masks.all() else torch.from_numpy(masks.reshape(-1, masks.shape[-1]))
        b_ret = torch.from_numpy(ret.reshape(-1))
        b_val = torch.from_numpy(rollout.values.reshape(-1))
        with torch.no_grad():
            # Normalised once, not twice per minibatch: it is elementwise, so a minibatch's
            # rows are what logits() and value() compute from its observations.
            b_x = model.normalized(b_obs)

        def logits_fn(idx: torch.Tensor) -> torch.Tensor:
            out = model.actor_of(b_x[idx])
            return out if b_mask is None else out.masked_fill(~b_mask[idx], -1e9)

        stats = self.ppo_epochs(
            model,
            self.optimizer,
            logits_fn,
            lambda idx: model.critic_of(b_x[idx]).squeeze(-1),
            torch.from_numpy(rollout.actions.reshape(-1)),
            torch.from_numpy(rollout.logprobs.reshape(-1)),
            torch.from_numpy(adv.reshape(-1)),
            b_ret,
            b_val,
            self.config.ent_coef,
        )
        stats["explained_variance"] = explained_variance(b_ret, b_val)
        if self.config.normalize_observation:
            model.obs_rms.update(rollout.obs.reshape(-1, self.observation_size))
            model._refresh()
        actions = rollout.actions
        freq = np.bincount(actions.ravel(), minlength=len(self.action_names)) / actions.size
        for name, f in zip(self.action_names, freq):
            stats[f"freq_{name}"] = float(f)
        return stats

    def _after_update(self, row: dict[str, float], last: bool, log: UpdateLog) -> None:
        """Validate every ``eval_every`` updates and after the last one."""
        every = self.config.eval_every
        if every and (self.updates % every == 0 or last):
            assert self.validator is not None
            row["val_objective"] = self.validator.validate(self, log.writer).objective

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
            "config": self.config.as_dict(),
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
        mismatch = shape_mismatch(state["model"], self.model.state_dict())
        if mismatch is not None:
            raise InputError(mismatch, source, "model")
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
        super().close()
        if self.validator is not None:
            self.validator.close()


__all__ = [
    "CHECKPOINT_FORMAT",
    "PPO_LOG_COLUMNS",
    "TRAINER_COST",
    "VECTOR_KINDS",
    "ActorCritic",
    "EnvFactory",
    "PPOConfig",
    "PPOTrainer",
    "ReturnStats",
    "build_vector_env",
    "env_factories",
    "gae",
    "gumbel_sample",
    "inputs_factories",
    "read_checkpoint_file",
    "scale_by_return_std",
    "write_checkpoint_file",
]
