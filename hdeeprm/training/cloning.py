"""Behaviour cloning into :class:`~hdeeprm.training.twostep.TwoStepPPO`'s job selector: a
warm start from a rule.

PPO's job selector starts near the uniform policy. Where one rule is already good, it must
rediscover that rule from the rewards before it can improve on it, and within a training
budget it may not. The usual remedy is to clone the rule first and let reinforcement learning
move from there: :func:`picker_demonstrations` records a picker's decisions on whole episodes,
:func:`clone_job_selector` fits the kernel network's logits to them (cross-entropy over the
allowed actions), and ``agent.learn(...)`` continues with PPO from the cloned weights;
:func:`clone_rule` does both on training windows and returns a :class:`WarmStart` record.

A two-step agent (CuSH's, ``policies=[...]``) clones its job selector the same way: the
demonstrations are played with a fixed policy (``policy=``) and the policy selector is left
untrained, for PPO to learn.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hdeeprm._atomic import atomic_open
from hdeeprm.errors import InputError


@dataclass(frozen=True)
class Demonstrations:
    """Decisions to imitate: ``observations`` ``(n, d)`` float32, ``masks`` ``(n, A)`` bool
    (the actions allowed at each decision), ``actions`` ``(n,)`` int64 (the teacher's)."""

    observations: np.ndarray
    masks: np.ndarray
    actions: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.actions)
        if self.observations.ndim != 2 or len(self.observations) != n:
            raise ValueError(f"observations must be (n={n}, d), got {self.observations.shape}")
        if self.masks.ndim != 2 or len(self.masks) != n:
            raise ValueError(f"masks must be (n={n}, actions), got {self.masks.shape}")
        if n and not self.masks[np.arange(n), self.actions].all():
            raise ValueError("a demonstrated action is masked out at its own decision")

    def __len__(self) -> int:
        return len(self.actions)

    @staticmethod
    def concat(parts: Sequence[Demonstrations]) -> Demonstrations:
        """All ``parts`` as one set, in order."""
        if not parts:
            raise ValueError("no demonstrations to join")
        return Demonstrations(
            np.concatenate([p.observations for p in parts]),
            np.concatenate([p.masks for p in parts]),
            np.concatenate([p.actions for p in parts]),
        )

    def save(self, path: str | Path) -> Path:
        """Write a ``.npz`` atomically (plain arrays: read back without pickle)."""
        target = Path(path)
        with atomic_open(target, "wb") as handle:
            np.savez(handle, observations=self.observations, masks=self.masks, actions=self.actions)
        return target

    @classmethod
    def load(cls, path: str | Path) -> Demonstrations:
        """Read a file written by :meth:`save`; :class:`InputError` naming it otherwise."""
        file = Path(path)
        try:
            with np.load(file, allow_pickle=False) as data:
                return cls(data["observations"], data["masks"], data["actions"])
        except (OSError, KeyError, ValueError) as exc:
            raise InputError(f"not a demonstrations file: {exc}", str(file)) from None


def picker_demonstrations(
    env: Any,
    picker: Callable[[Any], int],
    seeds: Sequence[int],
    *,
    policy: int | None = None,
    windows: Sequence[int] | None = None,
) -> Demonstrations:
    """``picker``'s decisions on one whole episode of ``env`` (a
    :class:`~hdeeprm.environment.JobSelectionEnv`) per reset seed of ``seeds`` (on the
    ``train`` split each seed draws a window): the observation, the action mask and the
    picker's action at every step. A step where the picker asks for a masked action (which
    the environment plays as do nothing) is not a decision to imitate and is left out.

    A two-step environment needs ``policy``, the index of the policy that places every
    chosen job. ``windows`` plays these windows (``reset(options={"window": k})``, an
    ``eval``-split environment) instead of drawing by ``seeds``: the sets are then known."""
    two_step = getattr(env, "policies", None) is not None
    if two_step and policy is None:
        raise ValueError("a two-step environment needs the policy that places the jobs")
    episodes: list[dict[str, Any]] = (
        [{"seed": int(seed)} for seed in seeds]
        if windows is None
        else [{"options": {"window": int(k)}} for k in windows]
    )
    observations: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    actions: list[int] = []
    for episode in episodes:
        obs, _ = env.reset(**episode)
        done = env.finished
        while not done:
            mask = np.asarray(env.action_masks(), dtype=bool)
            action = int(picker(env))
            if mask[action]:
                observations.append(np.asarray(obs, dtype=np.float32))
                masks.append(mask)
                actions.append(action)
            obs, _, done, _, _ = env.step((action, policy) if two_step else action)
    width = env.observation_space.shape[0]
    return Demonstrations(
        np.asarray(observations, dtype=np.float32).reshape(len(actions), width),
        np.asarray(masks, dtype=bool).reshape(len(actions), -1),
        np.asarray(actions, dtype=np.int64),
    )


def clone_job_selector(
    agent: Any,
    demos: Demonstrations,
    *,
    epochs: int = 10,
    batch_size: int = 256,
    learning_rate: float = 1e-3,
    seed: int = 0,
) -> list[float]:
    """Fit ``agent``'s job selector (a ``TwoStepPPO``'s) to ``demos`` in place; the
    mean cross-entropy of each epoch.

    Only the job selector's scoring layers learn (its critic and a two-step agent's policy
    selector are left for PPO), with their own Adam optimiser (the agent's is untouched) and
    their own shuffling generator: the same agent, demonstrations and arguments give the same
    weights bit for bit."""
    if epochs < 1 or batch_size < 1 or not learning_rate > 0.0:
        raise ValueError(
            f"epochs and batch_size must be >= 1 and learning_rate > 0, got {epochs}, "
            f"{batch_size}, {learning_rate}"
        )
    if len(demos) == 0:
        raise ValueError("no demonstrations to clone")
    net = agent.job_net
    if demos.observations.shape[1] != agent.observation_size:
        raise ValueError(
            f"demonstrations of {demos.observations.shape[1]} features, the agent observes "
            f"{agent.observation_size}"
        )
    params = [p for name, p in net.named_parameters() if not name.startswith("critic")]
    optimizer = torch.optim.Adam(params, lr=learning_rate)
    generator = torch.Generator().manual_seed(seed)
    obs = torch.from_numpy(demos.observations)
    mask = torch.from_numpy(demos.masks)
    target = torch.from_numpy(demos.actions)
    losses: list[float] = []
    for _ in range(epochs):
        order = torch.randperm(len(target), generator=generator)
        total = 0.0
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            logits = net.logits(obs[rows], mask[rows])
            loss = torch.nn.functional.cross_entropy(logits, target[rows])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(rows)
        losses.append(total / len(target))
    return losses


def agreement(agent: Any, demos: Demonstrations) -> float:
    """Fraction of ``demos``' decisions where ``agent``'s greedy action is the demonstrated
    one."""
    if len(demos) == 0:
        return float("nan")
    chosen = np.asarray(agent.predict(demos.observations, demos.masks, deterministic=True))
    if chosen.ndim == 2:  # two steps: (slot, policy) pairs, the slot is the job selector's
        chosen = chosen[:, 0]
    return float(np.mean(chosen == demos.actions))


@dataclasses.dataclass(frozen=True)
class WarmStart:
    """A warm start's record: the rule cloned, its demonstrated decisions (``picks``) on
    ``windows`` training windows, the cross-entropy of the first and the last of ``epochs``,
    and the clone's agreement with those decisions, also on the ``choices`` alone (the
    decisions that allowed two actions or more: one allowed action is agreed with by any
    network)."""

    rule: str
    picks: int
    windows: int
    epochs: int
    first_loss: float
    last_loss: float
    agreement: float
    choices: int
    choice_agreement: float

    def line(self) -> str:
        return (
            f"warm start: {self.rule}'s {self.picks} picks on {self.windows} training windows "
            f"cloned in {self.epochs} epochs, cross-entropy {self.first_loss:.4f} -> "
            f"{self.last_loss:.4f}, agreement {self.agreement:.4f} ({self.choice_agreement:.4f} "
            f"on the {self.choices} picks among two actions or more)"
        )


def clone_rule(
    agent: Any,
    env: Any,
    picker: Callable[[Any], int],
    rule: str,
    *,
    seed: int,
    windows: int,
    epochs: int = 20,
    learning_rate: float = 1e-3,
) -> WarmStart:
    """Clone ``picker``'s decisions (the rule named ``rule``) on ``windows`` training windows
    of ``env`` into ``agent``'s job selector (:func:`clone_job_selector`, shuffled by
    ``seed``). The windows are drawn by reset seeds of their own, ``10_000 + 100 * seed + i``:
    never the seeds PPO's environments are reset with."""
    if windows < 1:
        raise ValueError(f"windows must be >= 1, got {windows}")
    first = 10_000 + 100 * seed
    demos = picker_demonstrations(env, picker, range(first, first + windows))
    losses = clone_job_selector(agent, demos, epochs=epochs, learning_rate=learning_rate, seed=seed)
    choices = demos.masks.sum(axis=1) >= 2
    among = Demonstrations(
        demos.observations[choices], demos.masks[choices], demos.actions[choices]
    )
    return WarmStart(
        rule,
        len(demos),
        windows,
        epochs,
        losses[0],
        losses[-1],
        agreement(agent, demos),
        len(among),
        agreement(agent, among),
    )


__all__ = [
    "Demonstrations",
    "WarmStart",
    "agreement",
    "clone_job_selector",
    "clone_rule",
    "picker_demonstrations",
]
