"""Snapshots of an agent's acting networks during training, and the choice of one after it.

PPO's greedy policy moves from update to update, so the final weights are one draw among
many. :class:`SnapshotKeeper` is a callback for ``learn(..., callback=...)`` of the on-policy
trainers (:class:`~hdeeprm.training.twostep.TwoStepPPO`, :class:`~hdeeprm.training.ppo.
PPOTrainer`) that copies the networks an agent acts with at evenly spaced updates (the last at
the end); :func:`choose_snapshot` then plays each on data the caller chooses, windows of the
training part, never the held-out ones, and loads the best into the agent. It is
:class:`~hdeeprm.training.validation.Validator`'s rule (a strictly better score replaces the
best, so ties keep the earlier snapshot) for agents without an options file, decided after
training: the weights trained are the same with and without it, bit for bit.

:func:`train_runs` trains several agents for one seed, one after the other, and pools their
snapshots, so that the choice can also pass over a run that stayed on a plateau; the seed's
result is still one agent.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

#: The attributes holding the networks an agent acts with, in the order they are looked for:
#: TwoStepPPO's job and policy selectors, PPOTrainer's actor-critic. ``None`` ones are skipped.
ACTING_NETWORKS = ("job_net", "policy_net", "model")


def acting_state(agent: Any, networks: Sequence[str] = ACTING_NETWORKS) -> dict[str, Any]:
    """A copy of the weights of ``agent``'s acting networks: ``{attribute: state_dict}``."""
    state = {}
    for name in networks:
        net = getattr(agent, name, None)
        if isinstance(net, torch.nn.Module):
            state[name] = {k: v.detach().clone() for k, v in net.state_dict().items()}
    if not state:
        raise TypeError(f"{type(agent).__name__} has none of the networks {list(networks)}")
    return state


def load_acting_state(agent: Any, state: dict[str, Any]) -> None:
    """Put weights copied by :func:`acting_state` back into ``agent``."""
    for name, weights in state.items():
        getattr(agent, name).load_state_dict(weights)


@dataclass(frozen=True)
class Snapshot:
    """Weights kept during training, named by when (``"update 48 of 384"``, ``"clone"``)."""

    name: str
    state: dict[str, Any]


class SnapshotKeeper:
    """``learn`` callback: :func:`acting_state` after updates ``round(U * k / count)``, ``k =
    1 .. count``, of the ``U = total_timesteps // batch_size`` updates training makes (the
    last at the end). :meth:`add` keeps one by hand (e.g. the network right after cloning a
    rule, before PPO)."""

    def __init__(self, agent: Any, total_timesteps: int, count: int) -> None:
        if count < 1:
            raise ValueError(f"count must be >= 1, got {count}")
        self.agent = agent
        self.updates = max(1, total_timesteps // agent.config.batch_size)
        self.marks = {max(1, round(self.updates * k / count)) for k in range(1, count + 1)}
        self.kept: list[Snapshot] = []
        self._done = 0

    def add(self, name: str) -> None:
        """Keep the agent's weights now, as ``name``."""
        self.kept.append(Snapshot(name, acting_state(self.agent)))

    def __call__(self, _row: dict[str, float]) -> None:
        self._done += 1
        if self._done in self.marks:
            self.add(f"update {self._done} of {self.updates}")


@dataclass(frozen=True)
class Choice:
    """What :func:`choose_snapshot` kept, and every candidate's score (lower is better)."""

    name: str
    score: float
    scores: tuple[tuple[str, float], ...]

    def line(self, on: str) -> str:
        """One line for a log: each candidate's score and the one kept."""
        listed = ", ".join(f"{name}: {score:.2f}" for name, score in self.scores)
        return f"snapshots on {on}: {listed}; {self.name} kept"


def choose_snapshot(agent: Any, kept: Sequence[Snapshot], score: Callable[[Any], float]) -> Choice:
    """Load each snapshot into ``agent``, score it with ``score(agent)`` (lower is better; a
    NaN never wins), and leave the best loaded: the earliest of equal scores."""
    if not kept:
        raise ValueError("no snapshot to choose from")
    scores = []
    best = 0
    for k, snapshot in enumerate(kept):
        load_acting_state(agent, snapshot.state)
        value = float(score(agent))
        scores.append((snapshot.name, value))
        if not math.isnan(value) and (math.isnan(scores[best][1]) or value < scores[best][1]):
            best = k
    load_acting_state(agent, kept[best].state)
    return Choice(kept[best].name, scores[best][1], tuple(scores))


#: Run ``k`` (from 0) of :func:`train_runs` trains with seed ``seed + RUN_SEED_STRIDE * k``.
RUN_SEED_STRIDE = 1000


def run_seed(seed: int, k: int) -> int:
    """The training seed of run ``k`` (from 0) of a seed's :func:`train_runs`."""
    return seed + RUN_SEED_STRIDE * k


def train_runs(
    train_one: Callable[[int], tuple[Any, list[Snapshot]]], seed: int, runs: int
) -> tuple[Any, list[Snapshot], int]:
    """Train ``runs`` agents with ``train_one(run seed) -> (agent, its snapshots)``, run ``k``
    with :func:`run_seed` ``(seed, k)``; return the first agent (the one a choice loads into),
    every run's snapshots (named ``"run k+1 <name>"`` when ``runs > 1``) and the steps of all
    runs. The other agents are closed once their snapshots are kept. One run is
    ``train_one(seed)`` itself, names unchanged."""
    if runs < 1:
        raise ValueError(f"runs must be >= 1, got {runs}")
    agent, kept = train_one(seed)
    steps = int(agent.global_step)
    if runs == 1:
        return agent, kept, steps
    kept = [Snapshot(f"run 1 {s.name}", s.state) for s in kept]
    for k in range(1, runs):
        other, snapshots = train_one(run_seed(seed, k))
        kept += [Snapshot(f"run {k + 1} {s.name}", s.state) for s in snapshots]
        steps += int(other.global_step)
        other.close()
    return agent, kept, steps
