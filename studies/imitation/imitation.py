"""Behaviour cloning: a policy network that imitates a teacher's decisions.

The student is the PPO trainer's own network (:class:`~hdeeprm.training.ppo.ActorCritic`, the
actor head), trained by cross-entropy on ``(observation, action mask, teacher action)``
triples, e.g. those of the rollout teacher (:mod:`studies.imitation.rollout`). It is returned
as a :class:`~hdeeprm.training.ppo.PPOTrainer`, so whatever takes a PPO model takes it:
``save``/``load`` (``weights_only=True``), ``predict``, ``hdeeprm-evaluate --model``, the
ensemble, and PPO itself for fine-tuning from the imitated policy.

:func:`bias_action` shifts the student's preference for one action (the base pair) by a
constant logit, the one knob that trades how readily it leaves the base policy; it is chosen
on training windows (see ``studies/imitation/imitation_benchmark.py``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from hdeeprm.environment.observation import HEAD_FEATURES, HEAD_JOBS, QUEUE_FEATURES
from hdeeprm.training.cloning import Demonstrations
from hdeeprm.training.ppo import PPOConfig, PPOTrainer

#: Smallest variance the student's input normaliser assumes (observations are in [0, 1]).
VAR_FLOOR = 1e-4


@dataclass(frozen=True)
class CloneConfig:
    """Hyperparameters of behaviour cloning."""

    #: Width of the actor's two hidden layers (the PPO network's ``hidden``).
    hidden: int = 64
    #: Passes over the demonstrations.
    epochs: int = 30
    batch_size: int = 256
    learning_rate: float = 1e-3
    #: L2 penalty (Adam's ``weight_decay``).
    weight_decay: float = 0.0
    #: Seeds the weights and the minibatch order.
    seed: int = 0
    #: Observation values the student must not use (indices): their input weights are held
    #: at 0, so the checkpoint still takes the whole observation. E.g. the ``queue``
    #: observation's head jobs (:func:`head_job_features`), whose meaning may not carry from
    #: the months a teacher labelled to later ones.
    ignore: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if any(i < 0 for i in self.ignore):
            raise ValueError(f"ignore holds observation indices (>= 0), got {self.ignore}")
        for name in ("hidden", "epochs", "batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if not self.learning_rate > 0:
            raise ValueError(f"learning_rate must be positive, got {self.learning_rate}")
        if self.weight_decay < 0:
            raise ValueError(f"weight_decay must be >= 0, got {self.weight_decay}")


def clone(
    demos: Demonstrations, action_names: Sequence[str], config: CloneConfig = CloneConfig()
) -> PPOTrainer:
    """A predict-only PPO trainer whose actor imitates ``demos`` (masked cross-entropy).

    The observation normaliser is set to the demonstrations' mean and variance (what PPO's
    running normaliser would converge to on these states; variances floored at
    :data:`VAR_FLOOR`) and frozen; the critic is left as
    initialised (PPO fine-tuning trains it)."""
    if len(demos) == 0:
        raise ValueError("no demonstrations to imitate")
    if demos.masks.shape[1] != len(action_names):
        raise ValueError(
            f"the demonstrations have {demos.masks.shape[1]} actions, the action space "
            f"{len(action_names)}"
        )
    ppo = PPOConfig(hidden=config.hidden, seed=config.seed, num_envs=1)
    trainer = PPOTrainer(ppo, None, spaces=(demos.observations.shape[1], list(action_names)))
    model = trainer.model
    obs = demos.observations.astype(np.float64)
    with torch.no_grad():
        model.obs_rms.mean.copy_(torch.from_numpy(obs.mean(axis=0)))
        # a value constant in the demonstrations tells nothing: a floor on its variance (std
        # 0.01 of the [0, 1] range) keeps an unseen value from saturating the input
        model.obs_rms.var.copy_(torch.from_numpy(np.maximum(obs.var(axis=0), VAR_FLOOR)))
        model.obs_rms.count.fill_(float(len(obs)))
    ignore = sorted(set(config.ignore))
    if ignore and ignore[-1] >= demos.observations.shape[1]:
        raise ValueError(
            f"ignore index {ignore[-1]} is outside the observation "
            f"({demos.observations.shape[1]} values)"
        )
    first = model.actor[0].weight
    with torch.no_grad():
        first[:, ignore] = 0.0
    model._refresh()
    x = model.normalized(torch.from_numpy(demos.observations.astype(np.float32)))
    masks = torch.from_numpy(demos.masks)
    targets = torch.from_numpy(demos.actions)
    optimizer = torch.optim.Adam(
        model.actor.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
    )
    generator = torch.Generator().manual_seed(config.seed)
    n = len(demos)
    for _ in range(config.epochs):
        order = torch.randperm(n, generator=generator)
        for i in range(0, n, config.batch_size):
            batch = order[i : i + config.batch_size]
            logits = model.actor(x[batch]).masked_fill(~masks[batch], -1e9)
            loss = F.cross_entropy(logits, targets[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if ignore:
                with torch.no_grad():
                    first[:, ignore] = 0.0
    model._layers = None
    return trainer


def head_job_features(observation_size: int) -> tuple[int, ...]:
    """The indices of the ``queue`` observation's head jobs (one job after another from index
    22), for :attr:`CloneConfig.ignore`; an error for a smaller observation."""
    first = QUEUE_FEATURES + 1
    last = first + HEAD_JOBS * HEAD_FEATURES
    if observation_size < last:
        raise ValueError(
            f"an observation of {observation_size} values has no head jobs (the queue "
            f"observation has them at {first}..{last - 1})"
        )
    return tuple(range(first, last))


def accuracy(trainer: PPOTrainer, demos: Demonstrations) -> float:
    """Fraction of ``demos`` where the greedy student takes the teacher's action."""
    predicted = trainer.predict(demos.observations, action_mask=demos.masks)
    return float(np.mean(np.asarray(predicted) == demos.actions))


def bias_action(trainer: PPOTrainer, action: str, logit: float) -> PPOTrainer:
    """A copy of ``trainer`` whose actor prefers ``action`` by ``logit`` more (0: unchanged).

    With a bias ``b`` the greedy student leaves ``action`` only where another action's
    probability exceeds ``e^b`` times ``action``'s."""
    if action not in trainer.action_names:
        raise ValueError(f"{action!r} is not an action: {', '.join(trainer.action_names)}")
    if not math.isfinite(logit):
        raise ValueError(f"the bias must be finite, got {logit}")
    config = dataclasses.replace(trainer.config, num_envs=1)
    copy = PPOTrainer(config, None, spaces=(trainer.observation_size, trainer.action_names))
    copy.model.load_state_dict(trainer.model.state_dict())
    with torch.no_grad():
        copy.model.actor[-1].bias[trainer.action_names.index(action)] += logit
    copy.model._refresh()
    return copy


def student_policy(trainer: PPOTrainer):
    """``choose(observation, mask) -> action``: the greedy student, for the teacher's
    :meth:`~studies.imitation.rollout.RolloutTeacher.relabel` and for evaluation."""

    def choose(observation: np.ndarray, mask: np.ndarray) -> int:
        return int(trainer.predict(observation, action_mask=mask))

    return choose
