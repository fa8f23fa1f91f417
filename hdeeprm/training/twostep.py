"""CuSH's two-step agent on :class:`~hdeeprm.environment.JobSelectionEnv`, trained with PPO.

CuSH (Domeniconi et al. 2019) splits a scheduling decision in two: a **job selector** picks
one of the ``Q`` visible jobs or do nothing, then a **policy selector** picks the allocation
policy that places the chosen job. Each is its own network with its own reward, and both
are trained together from the same experience. Here:

* the job selector is a *kernel* network (RLScheduler's idea, :class:`KernelJobNet`): one
  small MLP embeds and scores every visible job alike from its features and the cluster's,
  so a job scores the same in any slot and the network does not grow with ``Q``; do nothing
  is scored from the cluster and the mean job embedding. Its reward is the environment's
  (potential-based, adding up to minus the episode's average bounded slowdown), with GAE
  over the episode;
* the policy selector (:class:`PolicyNet`) is an MLP over the chosen job's features and the
  cluster's, giving one logit per policy of the environment's ``policies`` list, masked by
  ``info["policy_mask"]`` of the chosen slot. Its reward is ``info["policy_reward"]`` (minus
  the service-time stretch of the placement,
  :func:`hdeeprm.environment.job_selection.placement_reward`), immediate: a contextual
  bandit (advantage = reward - value), as CuSH's per-job service-time reward;
* one rollout feeds both: the environment takes the pair ``(slot, policy)`` in one step (its
  two-step action); the policy selector learns only from steps that chose a job.

With one step (``policies=None``) or one policy there is no policy selector: this is then
the project's PPO for plain job selection (the RLScheduler benchmark). It reuses
:mod:`hdeeprm.training.ppo`'s GAE, return scaling and vector environments (SAME_STEP
autoreset, ``sync``/``async``/``ray``). Same config, seed and environments give the same
weights bit for bit (private ``torch.Generator`` and NumPy generator). Checkpoints are state
dicts (``torch.save``) read back with ``torch.load(weights_only=True)``.

Example::

    from hdeeprm.training.twostep import TwoStepConfig, TwoStepPPO, job_selection_factories
    fns = job_selection_factories(inputs, 2, split="train", policies=["high_gflops", "low_power"])
    agent = TwoStepPPO(TwoStepConfig(num_envs=2), fns)
    agent.learn(50_000)
    action = agent.act(env)  # (slot, policy index) for one JobSelectionEnv
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

from hdeeprm.errors import InputError
from hdeeprm.training.ppo import (
    VECTOR_KINDS,
    ReturnStats,
    _layer,
    build_vector_env,
    gae,
    gumbel_sample,
    read_checkpoint_file,
    scale_by_return_std,
    write_checkpoint_file,
)

#: Format tag and version of two-step checkpoints.
CHECKPOINT_FORMAT = "hdeeprm-twostep-ppo"
CHECKPOINT_VERSION = 1


@dataclass
class TwoStepConfig:
    """Hyperparameters of both selectors (``policy_*``: the policy selector's own)."""

    #: Decision steps to train for, over all environments (``learn()``'s default).
    total_timesteps: int = 100_000
    #: Environments stepped together; a rollout has ``num_envs * num_steps`` decisions.
    num_envs: int = 2
    num_steps: int = 1024
    #: ``"sync"``, ``"async"`` or ``"ray"`` (see :class:`hdeeprm.training.ppo.PPOConfig`).
    vector: str = "sync"
    envs_per_actor: int = 1
    #: Adam step sizes, linearly annealed to 0 over the run when ``anneal_lr``.
    learning_rate: float = 3e-4
    policy_learning_rate: float = 1e-3
    anneal_lr: bool = True
    #: The job selector's discount and GAE lambda (the policy selector's reward is immediate).
    gamma: float = 0.99
    gae_lambda: float = 0.95
    num_minibatches: int = 4
    update_epochs: int = 4
    clip_coef: float = 0.2
    #: Entropy bonuses: none for the job selector (its do-nothing prior would wash out).
    ent_coef: float = 0.0
    policy_ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    #: Width of the kernel's job embedding, of the critic's layers, of the policy selector.
    hidden: int = 32
    critic_hidden: int = 64
    policy_hidden: int = 32
    #: Initial logit of do nothing (negative: an untrained agent rarely lets time run while
    #: jobs fit; the job scores start near 0).
    nothing_bias: float = -3.0
    #: Subtracted from the ``i``-th visible job's logit times ``i``. The slots are in
    #: submission order and the kernel scores a job the same in any slot, so equal jobs
    #: (a job array submitted at one instant) tie; a positive value breaks ties towards the
    #: earliest submitted, as the heuristic pickers do (0: no position at all, RLScheduler's).
    slot_order_bias: float = 0.0
    #: Updates at the start of training that fit the job selector's critic only (its policy
    #: loss is left out). A warm-started selector (:mod:`studies.imitation.picker_cloning`)
    #: has a good policy and an untrained critic; the critic's first advantages are noise,
    #: and policy steps taken on them undo the warm start.
    critic_warmup: int = 0
    #: Scale the job selector's rewards by the running std of the discounted return.
    normalize_reward: bool = True
    seed: int = 0
    torch_threads: int = 1

    @property
    def batch_size(self) -> int:
        return self.num_envs * self.num_steps

    def validate(self) -> TwoStepConfig:
        """Raise :class:`InputError` naming the first bad field; return ``self``."""
        for key in (
            "total_timesteps",
            "num_envs",
            "num_steps",
            "num_minibatches",
            "update_epochs",
            "hidden",
            "critic_hidden",
            "policy_hidden",
            "torch_threads",
            "envs_per_actor",
        ):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"expected an integer >= 1, got {value!r}", None, key)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise InputError(f"expected an integer >= 0, got {self.seed!r}", None, "seed")
        for key, low, high in (
            ("learning_rate", 0.0, None),
            ("policy_learning_rate", 0.0, None),
            ("gamma", 0.0, 1.0),
            ("gae_lambda", 0.0, 1.0),
            ("clip_coef", 0.0, None),
            ("ent_coef", 0.0, None),
            ("policy_ent_coef", 0.0, None),
            ("vf_coef", 0.0, None),
            ("max_grad_norm", 0.0, None),
            ("nothing_bias", None, None),
            ("slot_order_bias", 0.0, None),
        ):
            value = getattr(self, key)
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            ok = ok and math.isfinite(value)
            ok = ok and (low is None or value >= low) and (high is None or value <= high)
            if not ok:
                raise InputError(f"expected a finite number in range, got {value!r}", None, key)
        warmup = self.critic_warmup
        if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
            raise InputError(f"expected an integer >= 0, got {warmup!r}", None, "critic_warmup")
        if self.batch_size % self.num_minibatches:
            raise InputError(
                f"num_envs x num_steps ({self.batch_size}) must be a multiple of "
                f"num_minibatches ({self.num_minibatches})",
                None,
                "num_minibatches",
            )
        if self.vector not in VECTOR_KINDS:
            raise InputError(f"expected one of {', '.join(VECTOR_KINDS)}", None, "vector")
        return self


# --- networks ----------------------------------------------------------------------------------
class KernelJobNet(nn.Module):
    """Job selector: per-job scores from one shared MLP, do nothing, and a state value.

    The observation is ``slots x width`` job features, then ``context`` cluster features
    (:class:`~hdeeprm.environment.JobSelectionEnv`'s layout); an empty slot is all zeros and
    a present job requests at least one core (feature 2 > 0).
    """

    def __init__(
        self,
        slots: int,
        width: int,
        context: int,
        hidden: int,
        critic: int,
        nothing_bias: float,
        slot_order_bias: float = 0.0,
    ) -> None:
        super().__init__()
        self.slots, self.width, self.context = slots, width, context
        # a constant (a buffer, not a weight): the tie-break of TwoStepConfig.slot_order_bias
        self.register_buffer(
            "order",
            -float(slot_order_bias) * torch.arange(slots, dtype=torch.float32),
            persistent=False,  # rebuilt from the config: checkpoints keep their keys
        )
        root2 = math.sqrt(2.0)
        self.embed = nn.Sequential(
            _layer(width + context, hidden, root2),
            nn.Tanh(),
            _layer(hidden, hidden, root2),
            nn.Tanh(),
        )
        self.score = _layer(hidden, 1, 0.01)
        self.nothing = nn.Sequential(
            _layer(context + hidden, hidden, root2), nn.Tanh(), _layer(hidden, 1, 0.01)
        )
        with torch.no_grad():
            self.nothing[-1].bias.fill_(nothing_bias)
        self.critic_embed = nn.Sequential(_layer(width + context, hidden, root2), nn.Tanh())
        self.critic = nn.Sequential(
            _layer(context + hidden + 1, critic, root2),
            nn.Tanh(),
            _layer(critic, critic, root2),
            nn.Tanh(),
            _layer(critic, 1, 1.0),
        )

    def _split(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        jobs = obs[:, : self.slots * self.width].reshape(-1, self.slots, self.width)
        context = obs[:, self.slots * self.width :]
        both = torch.cat([jobs, context.unsqueeze(1).expand(-1, self.slots, -1)], dim=2)
        present = (jobs[:, :, 2:3] > 0).float()
        return both, context, present

    @staticmethod
    def _pool(x: torch.Tensor, present: torch.Tensor) -> torch.Tensor:
        return (x * present).sum(1) / present.sum(1).clamp(min=1.0)

    def logits(self, obs: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        both, context, present = self._split(obs)
        embedded = self.embed(both)
        scores = self.score(embedded).squeeze(2) + self.order
        nothing = self.nothing(torch.cat([context, self._pool(embedded, present)], dim=1))
        out = torch.cat([scores, nothing], dim=1)
        return out if mask is None else out.masked_fill(~mask, -1e9)

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        both, context, present = self._split(obs)
        pooled = self._pool(self.critic_embed(both), present)
        count = present.sum(1) / self.slots
        return self.critic(torch.cat([context, pooled, count], dim=1)).squeeze(-1)


class PolicyNet(nn.Module):
    """Policy selector: logits over the policies and a value, from the chosen job's features
    and the cluster's (a fully connected network, as CuSH's)."""

    def __init__(self, inputs: int, nb_policies: int, hidden: int) -> None:
        super().__init__()
        root2 = math.sqrt(2.0)
        self.actor = nn.Sequential(
            _layer(inputs, hidden, root2),
            nn.Tanh(),
            _layer(hidden, hidden, root2),
            nn.Tanh(),
            _layer(hidden, nb_policies, 0.01),
        )
        self.critic = nn.Sequential(
            _layer(inputs, hidden, root2), nn.Tanh(), _layer(hidden, 1, 1.0)
        )

    def logits(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        out = self.actor(x)
        return out if mask is None else out.masked_fill(~mask, -1e9)

    def value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x).squeeze(-1)


# --- environments ------------------------------------------------------------------------------
@dataclass(frozen=True)
class JobSelectionFactory:
    """A recipe for one :class:`~hdeeprm.environment.JobSelectionEnv` on prepared inputs
    (in-process, or ``async`` with the ``fork`` start method)."""

    inputs: Any
    split: str | None = "train"
    kwargs: tuple[tuple[str, Any], ...] = ()

    def __call__(self) -> gym.Env:
        from hdeeprm.environment import JobSelectionEnv

        return JobSelectionEnv(inputs=self.inputs, split=self.split, **dict(self.kwargs))


def job_selection_factories(
    inputs: Any, num_envs: int, split: str | None = "train", **kwargs: Any
) -> list[JobSelectionFactory]:
    """``num_envs`` factories; ``kwargs`` go to ``JobSelectionEnv`` (``queue_slots``,
    ``backfill``, ``policies``, ``core_policy``)."""
    if "policies" in kwargs and kwargs["policies"] is not None:
        kwargs["policies"] = tuple(kwargs["policies"])
    frozen = tuple(sorted(kwargs.items()))
    return [JobSelectionFactory(inputs, split, frozen) for _ in range(num_envs)]


def _final_or_now(info: dict[str, Any], key: str, ended: np.ndarray, default: Any) -> np.ndarray:
    """``info[key]`` per environment, taken from ``final_info`` where an episode just ended
    (SAME_STEP autoreset puts the reset's info in ``info``)."""
    values = np.array(info.get(key, default), copy=True)
    if ended.any():
        final = info.get("final_info", {})
        if key in final:
            present = final.get(f"_{key}", ended)
            for i in np.flatnonzero(ended):
                if present[i]:
                    values[i] = final[key][i]
    return values


# --- the trainer -------------------------------------------------------------------------------
class TwoStepPPO:
    """Job selector and policy selector trained together with PPO (module docstring).

    Args:
        config: hyperparameters (validated).
        env_fns: ``JobSelectionEnv`` factories, one per vector slot; None gives an agent that
            can only act (``spaces`` then describes the environment).
        spaces: ``{"slots", "width", "context", "policies"}`` when ``env_fns`` is None.
    """

    def __init__(
        self,
        config: TwoStepConfig,
        env_fns: Sequence[Callable[[], gym.Env]] | None = None,
        *,
        spaces: dict[str, Any] | None = None,
    ) -> None:
        self.config = config.validate()
        self.envs: gym.vector.VectorEnv | None = None
        if env_fns is not None:
            if len(env_fns) != config.num_envs:
                raise ValueError(
                    f"{len(env_fns)} environment factories for num_envs={config.num_envs}"
                )
            # Every step's info (policy masks and rewards) is needed: ``full_info``.
            self.envs = build_vector_env(
                env_fns, config.vector, config.envs_per_actor, full_info=True
            )
            slots = int(self.envs.get_attr("queue_slots")[0])
            size = int(np.prod(self.envs.single_observation_space.shape))
            policies = self.envs.get_attr("policies")[0]
            width = int(self.envs.get_attr("job_width")[0])
            spaces = {
                "slots": slots,
                "width": width,
                "context": size - slots * width,
                "policies": None if policies is None else list(policies),
            }
        elif spaces is None:
            raise ValueError("give env_fns, or spaces for an act-only agent")
        self.spaces = dict(spaces)
        slots, width, context = spaces["slots"], spaces["width"], spaces["context"]
        self.slots, self.width, self.context = slots, width, context
        self.policies: list[str] | None = spaces["policies"]
        self.two_step = self.policies is not None
        self.observation_size = slots * width + context
        torch.set_num_threads(config.torch_threads)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(config.seed)
            self.job_net = KernelJobNet(
                slots,
                width,
                context,
                config.hidden,
                config.critic_hidden,
                config.nothing_bias,
                config.slot_order_bias,
            )
            # One policy is no choice: no policy selector to train.
            self.policy_net = (
                PolicyNet(width + context, len(self.policies), config.policy_hidden)
                if self.two_step and len(self.policies) > 1
                else None
            )
        self.job_opt = torch.optim.Adam(
            self.job_net.parameters(), lr=config.learning_rate, eps=1e-5
        )
        self.policy_opt = (
            None
            if self.policy_net is None
            else torch.optim.Adam(
                self.policy_net.parameters(), lr=config.policy_learning_rate, eps=1e-5
            )
        )
        self.generator = torch.Generator().manual_seed(config.seed)
        self.rng = np.random.default_rng(config.seed)
        self.ret_rms = ReturnStats()
        self.global_step = 0
        self.updates = 0
        self.episodes = 0
        #: One dict per update: steps, episodes, mean objective of finished episodes, losses.
        self.history: list[dict[str, float]] = []
        self._next: tuple[np.ndarray, np.ndarray, np.ndarray | None] | None = None
        self._returns = np.zeros(config.num_envs)

    # --- acting ----------------------------------------------------------------------------
    def _policy_input(self, obs: torch.Tensor, slot: torch.Tensor) -> torch.Tensor:
        """The chosen job's features (zeros for do nothing) and the cluster's."""
        jobs = obs[:, : self.slots * self.width].reshape(-1, self.slots, self.width)
        padded = torch.cat([jobs, torch.zeros_like(jobs[:, :1])], dim=1)  # do nothing's row
        chosen = padded[torch.arange(len(obs)), slot]
        return torch.cat([chosen, obs[:, self.slots * self.width :]], dim=1)

    @staticmethod
    def _policy_rows(pmask: np.ndarray, slot: np.ndarray) -> np.ndarray:
        """The policy mask of each chosen slot (all True for do nothing: nothing to place)."""
        rows = np.ones((len(slot), pmask.shape[2]), dtype=bool)
        chosen = slot < pmask.shape[1]
        rows[chosen] = pmask[np.flatnonzero(chosen), slot[chosen]]
        rows[~rows.any(axis=1)] = True
        return rows

    def _sample(self, logits: torch.Tensor) -> torch.Tensor:
        return gumbel_sample(logits, self.generator)

    def predict(
        self,
        observation: np.ndarray,
        action_mask: np.ndarray | None = None,
        policy_mask: np.ndarray | None = None,
        deterministic: bool = True,
    ) -> np.ndarray:
        """Actions for a batch of observations: slots ``(n,)``, or ``(n, 2)`` pairs with two
        steps (a single observation gives a single action)."""
        obs = torch.as_tensor(np.asarray(observation, dtype=np.float32))
        single = obs.ndim == 1
        if single:
            obs = obs.unsqueeze(0)
        mask = None if action_mask is None else torch.as_tensor(action_mask).reshape(len(obs), -1)
        with torch.no_grad():
            logits = self.job_net.logits(obs, mask)
            slot = logits.argmax(-1) if deterministic else self._sample(logits)
            if not self.two_step:
                out = slot.numpy()
                return out[0] if single else out
            policy = torch.zeros_like(slot)
            if self.policy_net is not None:
                rows = None
                if policy_mask is not None:
                    pm = np.asarray(policy_mask, dtype=bool).reshape(len(obs), self.slots, -1)
                    rows = torch.from_numpy(self._policy_rows(pm, slot.numpy()))
                plog = self.policy_net.logits(self._policy_input(obs, slot), rows)
                policy = plog.argmax(-1) if deterministic else self._sample(plog)
        out = torch.stack([slot, policy], dim=1).numpy()
        return out[0] if single else out

    def act(self, env: Any, deterministic: bool = True) -> Any:
        """The action for one ``JobSelectionEnv``'s current state (evaluation loops)."""
        pmask = env.policy_masks() if self.two_step else None
        action = self.predict(env.observation(), env.action_masks(), pmask, deterministic)
        return action if self.two_step else int(action)

    # --- training --------------------------------------------------------------------------
    def _observe(self, obs: np.ndarray, info: dict[str, Any], ended: np.ndarray) -> None:
        n = self.config.num_envs
        mask = np.asarray(info["action_mask"], dtype=bool).reshape(n, self.slots + 1).copy()
        mask[~mask.any(axis=1)] = True
        pmask = None
        if self.two_step:
            pmask = np.asarray(info["policy_mask"], dtype=bool).reshape(n, self.slots, -1)
        self._next = (obs.astype(np.float32), mask, pmask)

    def learn(
        self,
        total_timesteps: int | None = None,
        *,
        callback: Callable[[dict[str, float]], Any] | None = None,
    ) -> TwoStepPPO:
        """Train both selectors for ``total_timesteps`` decisions, in whole rollouts.

        ``callback`` receives each update's row (see :attr:`history`); ``False`` stops."""
        if self.envs is None:
            raise RuntimeError("this agent has no environments (built to act only)")
        cfg = self.config
        total = cfg.total_timesteps if total_timesteps is None else int(total_timesteps)
        n_updates = max(1, total // cfg.batch_size)
        n_env, n_steps, size = cfg.num_envs, cfg.num_steps, self.observation_size
        obs_buf = np.zeros((n_steps, n_env, size), dtype=np.float32)
        mask_buf = np.ones((n_steps, n_env, self.slots + 1), dtype=bool)
        act_buf = np.zeros((n_steps, n_env), dtype=np.int64)
        logp_buf = np.zeros((n_steps, n_env), dtype=np.float32)
        rew_buf = np.zeros((n_steps, n_env), dtype=np.float32)
        done_buf = np.zeros((n_steps, n_env), dtype=np.float32)
        val_buf = np.zeros((n_steps, n_env), dtype=np.float32)
        psm = self.policy_net is not None
        if psm:
            nb_p = len(self.policies)
            pin_buf = np.zeros((n_steps, n_env, self.width + self.context), dtype=np.float32)
            prow_buf = np.ones((n_steps, n_env, nb_p), dtype=bool)
            pact_buf = np.zeros((n_steps, n_env), dtype=np.int64)
            plogp_buf = np.zeros((n_steps, n_env), dtype=np.float32)
            prew_buf = np.zeros((n_steps, n_env), dtype=np.float32)
            pval_buf = np.zeros((n_steps, n_env), dtype=np.float32)
            pvalid_buf = np.zeros((n_steps, n_env), dtype=bool)
        if self._next is None:
            obs, info = self.envs.reset(seed=cfg.seed)
            self._observe(obs, info, np.zeros(n_env, dtype=bool))
        next_done = np.zeros(n_env, dtype=np.float32)
        for update in range(n_updates):
            t0 = time.perf_counter()
            frac = 1.0 - update / n_updates if cfg.anneal_lr else 1.0
            for group in self.job_opt.param_groups:
                group["lr"] = cfg.learning_rate * frac
            if self.policy_opt is not None:
                for group in self.policy_opt.param_groups:
                    group["lr"] = cfg.policy_learning_rate * frac
            objectives: list[float] = []
            for step in range(n_steps):
                obs_np, mask_np, pmask_np = self._next
                obs_buf[step], mask_buf[step], done_buf[step] = obs_np, mask_np, next_done
                with torch.no_grad():
                    obs_t = torch.from_numpy(obs_np)
                    logits = self.job_net.logits(obs_t, torch.from_numpy(mask_np))
                    value = self.job_net.value(obs_t)
                    slot = self._sample(logits)
                    logp = torch.log_softmax(logits, -1).gather(1, slot[:, None])[:, 0]
                    slot_np = slot.numpy()
                    act_buf[step], logp_buf[step], val_buf[step] = slot_np, logp, value
                    action: np.ndarray = slot_np
                    if self.two_step:
                        policy = np.zeros(n_env, dtype=np.int64)
                        if psm:
                            rows = self._policy_rows(pmask_np, slot_np)
                            pin = self._policy_input(obs_t, slot)
                            plog = self.policy_net.logits(pin, torch.from_numpy(rows))
                            p = self._sample(plog)
                            policy = p.numpy()
                            pin_buf[step], prow_buf[step], pact_buf[step] = pin, rows, policy
                            plogp_buf[step] = torch.log_softmax(plog, -1).gather(1, p[:, None])[
                                :, 0
                            ]
                            pval_buf[step] = self.policy_net.value(pin)
                            pvalid_buf[step] = slot_np < self.slots
                        action = np.stack([slot_np, policy], axis=1)
                obs, reward, term, trunc, info = self.envs.step(action)
                ended = np.logical_or(term, trunc)
                rew_buf[step] = self._scale(np.asarray(reward, dtype=np.float64), ended)
                if psm:
                    prew_buf[step] = _final_or_now(info, "policy_reward", ended, np.zeros(n_env))
                if ended.any():
                    final = info.get("final_info", {})
                    for i in np.flatnonzero(ended):
                        if "objective" in final and final.get("_objective", ended)[i]:
                            objectives.append(float(final["objective"][i]))
                    self.episodes += int(ended.sum())
                next_done = ended.astype(np.float32)
                self._observe(obs, info, ended)
            self.global_step += cfg.batch_size
            row = self._update_jobs(
                obs_buf, mask_buf, act_buf, logp_buf, rew_buf, done_buf, val_buf, next_done
            )
            if psm:
                valid = pvalid_buf.reshape(-1)
                row.update(
                    self._update_policies(
                        pin_buf.reshape(-1, pin_buf.shape[-1])[valid],
                        prow_buf.reshape(-1, nb_p)[valid],
                        pact_buf.reshape(-1)[valid],
                        plogp_buf.reshape(-1)[valid],
                        prew_buf.reshape(-1)[valid],
                        pval_buf.reshape(-1)[valid],
                    )
                )
            self.updates += 1
            row.update(
                update=self.updates,
                steps=self.global_step,
                episodes=self.episodes,
                objective=float(np.mean(objectives)) if objectives else math.nan,
                steps_per_s=cfg.batch_size / (time.perf_counter() - t0),
            )
            self.history.append(row)
            if callback is not None and callback(row) is False:
                break
        return self

    def _scale(self, reward: np.ndarray, ended: np.ndarray) -> np.ndarray:
        """Divide by the running std of the discounted return (as ``PPOTrainer``)."""
        if not self.config.normalize_reward:
            return reward.astype(np.float32)
        scaled, self._returns = scale_by_return_std(
            reward, ended, self._returns, self.ret_rms, self.config.gamma
        )
        return scaled

    def _ppo_epochs(
        self,
        net: nn.Module,
        optimizer: torch.optim.Optimizer,
        logits_fn: Callable[[torch.Tensor], torch.Tensor],
        value_fn: Callable[[torch.Tensor], torch.Tensor],
        n: int,
        act: torch.Tensor,
        old_logp: torch.Tensor,
        adv: torch.Tensor,
        ret: torch.Tensor,
        old_val: torch.Tensor,
        ent_coef: float,
        fit_policy: bool = True,
    ) -> dict[str, float]:
        """Clipped-objective epochs over minibatches of ``n`` samples (shared by both);
        without ``fit_policy``, the value loss alone (``critic_warmup``)."""
        cfg = self.config
        mb = max(1, n // cfg.num_minibatches)
        stats = {"policy_loss": 0.0, "value_loss": 0.0, "entropy": 0.0, "approx_kl": 0.0}
        for _ in range(cfg.update_epochs):
            order = torch.from_numpy(self.rng.permutation(n))
            for start in range(0, n, mb):
                idx = order[start : start + mb]
                logp_all = torch.log_softmax(logits_fn(idx), -1)
                new_logp = logp_all.gather(1, act[idx, None])[:, 0]
                entropy = -(logp_all.exp() * logp_all.clamp(min=-1e8)).sum(-1).mean()
                log_ratio = new_logp - old_logp[idx]
                ratio = log_ratio.exp()
                m_adv = adv[idx]
                if len(idx) > 1:
                    m_adv = (m_adv - m_adv.mean()) / (m_adv.std() + 1e-8)
                pg = torch.max(
                    -m_adv * ratio, -m_adv * ratio.clamp(1 - cfg.clip_coef, 1 + cfg.clip_coef)
                ).mean()
                new_v = value_fn(idx)
                v_clip = old_val[idx] + (new_v - old_val[idx]).clamp(-cfg.clip_coef, cfg.clip_coef)
                v_loss = (
                    0.5
                    * torch.max((new_v - ret[idx]).square(), (v_clip - ret[idx]).square()).mean()
                )
                loss = cfg.vf_coef * v_loss
                if fit_policy:
                    loss = pg - ent_coef * entropy + loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
                optimizer.step()
                with torch.no_grad():
                    kl = ((ratio - 1) - log_ratio).mean()
                stats = {
                    "policy_loss": pg.item(),
                    "value_loss": v_loss.item(),
                    "entropy": entropy.item(),
                    "approx_kl": kl.item(),
                }
        return stats

    def _update_jobs(
        self,
        obs_buf: np.ndarray,
        mask_buf: np.ndarray,
        act_buf: np.ndarray,
        logp_buf: np.ndarray,
        rew_buf: np.ndarray,
        done_buf: np.ndarray,
        val_buf: np.ndarray,
        next_done: np.ndarray,
    ) -> dict[str, float]:
        cfg, net = self.config, self.job_net
        with torch.no_grad():
            next_value = net.value(torch.from_numpy(self._next[0])).numpy()
        adv = gae(rew_buf, val_buf, done_buf, next_value, next_done, cfg.gamma, cfg.gae_lambda)
        ret = adv + val_buf
        b_obs = torch.from_numpy(obs_buf.reshape(-1, self.observation_size))
        b_mask = torch.from_numpy(mask_buf.reshape(-1, self.slots + 1))
        stats = self._ppo_epochs(
            net,
            self.job_opt,
            lambda idx: net.logits(b_obs[idx], b_mask[idx]),
            lambda idx: net.value(b_obs[idx]),
            len(b_obs),
            torch.from_numpy(act_buf.reshape(-1)),
            torch.from_numpy(logp_buf.reshape(-1)),
            torch.from_numpy(adv.reshape(-1)),
            torch.from_numpy(ret.reshape(-1)),
            torch.from_numpy(val_buf.reshape(-1)),
            cfg.ent_coef,
            fit_policy=self.updates >= cfg.critic_warmup,
        )
        freq = float(np.mean(act_buf == self.slots))
        return {**{f"job_{k}": v for k, v in stats.items()}, "do_nothing": freq}

    def _update_policies(
        self,
        pin: np.ndarray,
        rows: np.ndarray,
        act: np.ndarray,
        logp: np.ndarray,
        rew: np.ndarray,
        val: np.ndarray,
    ) -> dict[str, float]:
        """A contextual bandit: advantage = immediate reward - value."""
        if not len(act):
            return {}
        net = self.policy_net
        b_in, b_rows = torch.from_numpy(np.ascontiguousarray(pin)), torch.from_numpy(rows)
        stats = self._ppo_epochs(
            net,
            self.policy_opt,
            lambda idx: net.logits(b_in[idx], b_rows[idx]),
            lambda idx: net.value(b_in[idx]),
            len(act),
            torch.from_numpy(act),
            torch.from_numpy(logp),
            torch.from_numpy(rew - val),
            torch.from_numpy(rew),
            torch.from_numpy(val),
            self.config.policy_ent_coef,
        )
        out = {f"policy_{k}": v for k, v in stats.items()}
        out["policy_reward"] = float(rew.mean())
        return out

    # --- persistence -----------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """Everything :meth:`save` writes: plain containers and tensors only."""
        return {
            "format": CHECKPOINT_FORMAT,
            "version": CHECKPOINT_VERSION,
            "config": dataclasses.asdict(self.config),
            "spaces": dict(self.spaces),
            "job_net": self.job_net.state_dict(),
            "job_opt": self.job_opt.state_dict(),
            "policy_net": None if self.policy_net is None else self.policy_net.state_dict(),
            "policy_opt": None if self.policy_opt is None else self.policy_opt.state_dict(),
            "ret_rms": self.ret_rms.state(),
            "counters": [self.global_step, self.updates, self.episodes],
        }

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the checkpoint atomically (state dicts, never a pickle of objects)."""
        return write_checkpoint_file(path, self.state())

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], env_fns: Sequence[Callable[[], gym.Env]] | None = None
    ) -> TwoStepPPO:
        """An agent from a checkpoint (``weights_only=True``); :class:`InputError` if the file
        is not one, or was trained for other spaces than ``env_fns``' environments."""
        state = read_checkpoint_file(
            path,
            CHECKPOINT_FORMAT,
            CHECKPOINT_VERSION,
            "not a two-step PPO checkpoint of hdeeprm (TwoStepPPO.save)",
        )
        file = Path(path)
        config = TwoStepConfig(**state["config"])
        if env_fns is not None and len(env_fns) != config.num_envs:
            config = dataclasses.replace(config, num_envs=len(env_fns))
        agent = cls(config, env_fns, spaces=None if env_fns is not None else state["spaces"])
        if agent.spaces != state["spaces"]:
            raise InputError(
                f"the model was trained for {state['spaces']}, these environments are "
                f"{agent.spaces}",
                str(file),
            )
        agent.job_net.load_state_dict(state["job_net"])
        agent.job_opt.load_state_dict(state["job_opt"])
        if agent.policy_net is not None:
            agent.policy_net.load_state_dict(state["policy_net"])
            agent.policy_opt.load_state_dict(state["policy_opt"])
        agent.ret_rms.load(state["ret_rms"])
        agent.global_step, agent.updates, agent.episodes = (int(v) for v in state["counters"])
        return agent

    def close(self) -> None:
        if self.envs is not None:
            self.envs.close()
            self.envs = None
