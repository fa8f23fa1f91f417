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
the project's PPO for plain job selection (the RLScheduler benchmark). The loop, GAE, return
scaling, vector environments (``sync``/``async``/``shared``/``ray``), logs and checkpoint files
are :class:`~hdeeprm.training.onpolicy.OnPolicyTrainer`'s; this module gives the two networks,
how they act and what each learns from. Same config, seed and environments give the same
weights bit for bit. Checkpoints are state dicts (``torch.save``) read back with
``torch.load(weights_only=True)``.

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, cast

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from hdeeprm.errors import InputError
from hdeeprm.training.onpolicy import (
    OnPolicyConfig,
    OnPolicyTrainer,
    Rollout,
    explained_variance,
    first_env_attr,
    flat_observation_size,
    gumbel_sample,
    seeded,
)
from hdeeprm.training.onpolicy import layer as _layer

#: Format tag and version of two-step checkpoints.
CHECKPOINT_FORMAT = "hdeeprm-twostep-ppo"
CHECKPOINT_VERSION = 1
#: Columns of ``training_log.csv`` (``job_``: the job selector; ``policy_``: the policy
#: selector, empty without one or without a chosen job in the rollout).
TWOSTEP_LOG_COLUMNS = (
    "update",
    "steps",
    "episodes",
    "return",
    "objective",
    *(
        f"{net}_{key}"
        for net in ("job", "policy")
        for key in ("policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction")
    ),
    "job_explained_variance",
    "do_nothing",
    "policy_reward",
    "learning_rate",
    "steps_per_s",
)


@dataclass
class TwoStepConfig(OnPolicyConfig):
    """Hyperparameters of both selectors: :class:`~hdeeprm.training.onpolicy.OnPolicyConfig`'s
    (the job selector's; the policy selector's reward is immediate, so ``gamma`` and
    ``gae_lambda`` are the job selector's alone) and ``policy_*``, the policy selector's own."""

    total_timesteps: int = 100_000
    num_envs: int = 2
    num_steps: int = 1024
    num_minibatches: int = 4
    #: Entropy bonuses: none for the job selector (its do-nothing prior would wash out).
    ent_coef: float = 0.0
    policy_ent_coef: float = 0.01
    policy_learning_rate: float = 1e-3
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
    #: loss is left out). A warm-started selector (:mod:`hdeeprm.training.cloning`)
    #: has a good policy and an untrained critic; the critic's first advantages are noise,
    #: and policy steps taken on them undo the warm start.
    critic_warmup: int = 0

    KIND: ClassVar[str] = "two-step PPO"
    POSITIVE: ClassVar[tuple[str, ...]] = (
        *OnPolicyConfig.POSITIVE,
        "critic_hidden",
        "policy_hidden",
    )
    NATURAL: ClassVar[tuple[str, ...]] = (*OnPolicyConfig.NATURAL, "critic_warmup")
    NUMBERS: ClassVar[tuple[tuple[str, float | None, float | None], ...]] = (
        *OnPolicyConfig.NUMBERS,
        ("policy_learning_rate", 0.0, None),
        ("policy_ent_coef", 0.0, None),
        ("nothing_bias", None, None),
        ("slot_order_bias", 0.0, None),
    )


# --- networks ----------------------------------------------------------------------------------
class KernelJobNet(nn.Module):
    """Job selector: per-job scores from one shared MLP, do nothing, and a state value.

    The observation is ``slots x width`` job features, then ``context`` cluster features
    (:class:`~hdeeprm.environment.JobSelectionEnv`'s layout); an empty slot is all zeros and
    a present job requests at least one core (feature 2 > 0).
    """

    #: The registered buffer (declared: ``nn.Module.__getattr__`` is typed ``Tensor | Module``).
    order: torch.Tensor

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
            cast(nn.Linear, self.nothing[-1]).bias.fill_(nothing_bias)  # made by _layer
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
    (in-process, or ``async`` with the ``fork`` start method); with ``backfill_choice``, a
    :class:`~hdeeprm.environment.BackfillChoiceEnv` (the agent picks what EASY backfills)."""

    inputs: Any
    split: str | None = "train"
    kwargs: tuple[tuple[str, Any], ...] = ()
    backfill_choice: bool = False

    def __call__(self) -> gym.Env:
        from hdeeprm.environment import BackfillChoiceEnv, JobSelectionEnv

        cls = BackfillChoiceEnv if self.backfill_choice else JobSelectionEnv
        return cls(inputs=self.inputs, split=self.split, **dict(self.kwargs))


def job_selection_factories(
    inputs: Any,
    num_envs: int,
    split: str | None = "train",
    *,
    backfill_choice: bool = False,
    **kwargs: Any,
) -> list[JobSelectionFactory]:
    """``num_envs`` factories; ``kwargs`` go to ``JobSelectionEnv`` (``queue_slots``,
    ``backfill``, ``policies``, ``core_policy``), or to ``BackfillChoiceEnv`` with
    ``backfill_choice``."""
    if "policies" in kwargs and kwargs["policies"] is not None:
        kwargs["policies"] = tuple(kwargs["policies"])
    frozen = tuple(sorted(kwargs.items()))
    return [JobSelectionFactory(inputs, split, frozen, backfill_choice) for _ in range(num_envs)]


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
class TwoStepPPO(OnPolicyTrainer):
    """Job selector and policy selector trained together with PPO (module docstring).

    Args:
        config: hyperparameters (validated).
        env_fns: ``JobSelectionEnv`` factories, one per vector slot; None gives an agent that
            can only act (``spaces`` then describes the environment).
        spaces: ``{"slots", "width", "context", "policies"}`` when ``env_fns`` is None.
        run_dir: folder for ``training_log.csv`` (:data:`TWOSTEP_LOG_COLUMNS`) and
            ``tensorboard/`` (None: no files; :attr:`history` has every row either way).
        tensorboard: write TensorBoard scalars (None: when tensorboard is importable).
    """

    CHECKPOINT_FORMAT = CHECKPOINT_FORMAT
    CHECKPOINT_VERSION = CHECKPOINT_VERSION
    NOT_OURS = "not a two-step PPO checkpoint of hdeeprm (TwoStepPPO.save)"
    NO_ENVS = "this agent has no environments (built to act only)"
    MAIN_KEYS = "job_"
    config: TwoStepConfig

    def __init__(
        self,
        config: TwoStepConfig,
        env_fns: Sequence[Callable[[], gym.Env]] | None = None,
        *,
        spaces: dict[str, Any] | None = None,
        run_dir: str | os.PathLike[str] | None = None,
        tensorboard: bool | None = None,
    ) -> None:
        # Every step's info (policy masks and rewards) is needed: ``full_info``.
        super().__init__(config, env_fns, run_dir=run_dir, tensorboard=tensorboard, full_info=True)
        if self.envs is not None:
            slots = int(first_env_attr(self.envs, "queue_slots"))
            size = flat_observation_size(self.envs)
            policies = first_env_attr(self.envs, "policies")
            width = int(first_env_attr(self.envs, "job_width"))
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
        with seeded(config.seed):
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
            self.policy_net: PolicyNet | None = None
            if self.policies is not None and len(self.policies) > 1:
                self.policy_net = PolicyNet(
                    width + context, len(self.policies), config.policy_hidden
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
        #: Policy masks of the current observations (set by _observe with two steps).
        self._next_pmask = np.ones((0, 0, 0), dtype=bool)

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

    # --- training: what the two selectors add to the on-policy loop ----------------------
    def log_columns(self) -> list[str]:
        return list(TWOSTEP_LOG_COLUMNS)

    def _optimizers(self) -> list[tuple[torch.optim.Optimizer, float]]:
        out: list[tuple[torch.optim.Optimizer, float]] = [(self.job_opt, self.config.learning_rate)]
        if self.policy_opt is not None:
            out.append((self.policy_opt, self.config.policy_learning_rate))
        return out

    def _new_rollout(self) -> Rollout:
        cfg = self.config
        shape = (cfg.num_steps, cfg.num_envs)
        rollout = Rollout.zeros(*shape, self.observation_size, self.slots + 1)
        if self.policy_net is not None:
            assert self.policies is not None  # a policy selector is built only for policies
            # The policy selector's samples: input, mask row, action, log-prob, reward, value,
            # and whether a job was chosen (do nothing places nothing: not a sample).
            rollout.extra = {
                "input": np.zeros((*shape, self.width + self.context), dtype=np.float32),
                "rows": np.ones((*shape, len(self.policies)), dtype=bool),
                "actions": np.zeros(shape, dtype=np.int64),
                "logprobs": np.zeros(shape, dtype=np.float32),
                "rewards": np.zeros(shape, dtype=np.float32),
                "values": np.zeros(shape, dtype=np.float32),
                "valid": np.zeros(shape, dtype=bool),
            }
        return rollout

    def _observe(self, obs: np.ndarray, info: dict[str, Any]) -> None:
        n = self.config.num_envs
        mask = np.asarray(info["action_mask"], dtype=bool).reshape(n, self.slots + 1).copy()
        mask[~mask.any(axis=1)] = True
        self._next_obs, self._next_mask = obs.astype(np.float32), mask
        if self.two_step:
            self._next_pmask = np.asarray(info["policy_mask"], dtype=bool).reshape(
                n, self.slots, -1
            )

    def _act(self, rollout: Rollout, step: int) -> np.ndarray:
        assert self._next_obs is not None and self._next_mask is not None
        with torch.no_grad():
            obs_t = torch.from_numpy(self._next_obs)
            logits = self.job_net.logits(obs_t, torch.from_numpy(self._next_mask))
            value = self.job_net.value(obs_t)
            slot = self._sample(logits)
            logp = torch.log_softmax(logits, -1).gather(1, slot[:, None])[:, 0]
            slot_np = slot.numpy()
            rollout.actions[step], rollout.logprobs[step] = slot_np, logp
            rollout.values[step] = value
            if not self.two_step:
                return slot_np
            policy = np.zeros(self.config.num_envs, dtype=np.int64)
            if self.policy_net is not None:
                x = rollout.extra
                rows = self._policy_rows(self._next_pmask, slot_np)
                pin = self._policy_input(obs_t, slot)
                plog = self.policy_net.logits(pin, torch.from_numpy(rows))
                p = self._sample(plog)
                policy = p.numpy()
                x["input"][step], x["rows"][step], x["actions"][step] = pin, rows, policy
                x["logprobs"][step] = torch.log_softmax(plog, -1).gather(1, p[:, None])[:, 0]
                x["values"][step] = self.policy_net.value(pin)
                x["valid"][step] = slot_np < self.slots
        return np.stack([slot_np, policy], axis=1)

    def _after_step(self, rollout: Rollout, step: int, info: dict[str, Any], ended: Any) -> None:
        if self.policy_net is not None:
            zeros = np.zeros(self.config.num_envs)
            rollout.extra["rewards"][step] = _final_or_now(info, "policy_reward", ended, zeros)

    def _values(self, obs: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return self.job_net.value(torch.from_numpy(obs)).numpy()

    def _optimize(self, rollout: Rollout, adv: np.ndarray, ret: np.ndarray) -> dict[str, float]:
        cfg, net = self.config, self.job_net
        b_obs = torch.from_numpy(rollout.obs.reshape(-1, self.observation_size))
        b_mask = torch.from_numpy(rollout.masks.reshape(-1, self.slots + 1))
        b_ret = torch.from_numpy(ret.reshape(-1))
        b_val = torch.from_numpy(rollout.values.reshape(-1))
        stats = self.ppo_epochs(
            net,
            self.job_opt,
            lambda idx: net.logits(b_obs[idx], b_mask[idx]),
            lambda idx: net.value(b_obs[idx]),
            torch.from_numpy(rollout.actions.reshape(-1)),
            torch.from_numpy(rollout.logprobs.reshape(-1)),
            torch.from_numpy(adv.reshape(-1)),
            b_ret,
            b_val,
            cfg.ent_coef,
            fit_policy=self.updates >= cfg.critic_warmup,
        )
        stats["explained_variance"] = explained_variance(b_ret, b_val)
        row = {f"job_{k}": v for k, v in stats.items()}
        row["do_nothing"] = float(np.mean(rollout.actions == self.slots))
        if self.policy_net is not None:
            x = rollout.extra
            valid = x["valid"].reshape(-1)

            def samples(key: str) -> np.ndarray:
                a = x[key]
                return a.reshape(-1, *a.shape[2:])[valid]

            row.update(
                self._update_policies(
                    samples("input"),
                    samples("rows"),
                    samples("actions"),
                    samples("logprobs"),
                    samples("rewards"),
                    samples("values"),
                )
            )
        return row

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
        net, opt = self.policy_net, self.policy_opt
        assert net is not None and opt is not None  # called only with a policy selector
        b_in, b_rows = torch.from_numpy(np.ascontiguousarray(pin)), torch.from_numpy(rows)
        stats = self.ppo_epochs(
            net,
            opt,
            lambda idx: net.logits(b_in[idx], b_rows[idx]),
            lambda idx: net.value(b_in[idx]),
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
            "config": self.config.as_dict(),
            "spaces": dict(self.spaces),
            "job_net": self.job_net.state_dict(),
            "job_opt": self.job_opt.state_dict(),
            "policy_net": None if self.policy_net is None else self.policy_net.state_dict(),
            "policy_opt": None if self.policy_opt is None else self.policy_opt.state_dict(),
            "ret_rms": self.ret_rms.state(),
            "counters": [self.global_step, self.updates, self.episodes],
        }

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], env_fns: Sequence[Callable[[], gym.Env]] | None = None
    ) -> TwoStepPPO:
        """An agent from a checkpoint (``weights_only=True``); :class:`InputError` if the file
        is not one, or was trained for other spaces than ``env_fns``' environments."""
        state = cls.read_checkpoint(path)
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
        if agent.policy_opt is not None:
            agent.policy_opt.load_state_dict(state["policy_opt"])
        agent.ret_rms.load(state["ret_rms"])
        agent.global_step, agent.updates, agent.episodes = (int(v) for v in state["counters"])
        return agent
