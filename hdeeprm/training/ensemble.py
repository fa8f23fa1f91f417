"""An ensemble of PPO policies: average the members' action probabilities, act on the average.

Why: on the Gaia benchmark (docs/learning.md) PPO's greedy policy moves from update to
update and from seed to seed (five seeds' final models 0.3-4.6% better than the best fixed pair
on held-out windows, a sixth 36% worse), and choosing one checkpoint on a few validation
windows picks lucky draws. Averaging the probabilities of K independently trained policies (or
of a run's last checkpoints) is a variance reduction that needs no choice: an action is taken
only when the members, together, prefer it.

For an observation ``o`` and allowed actions ``A`` (the action mask), member ``k`` gives
``p_k(a | o) = softmax(logits_k(o))`` with masked actions at probability 0 (the same masking as
:meth:`~hdeeprm.training.ppo.PPOTrainer.predict`); the ensemble's distribution is
``p(a | o) = sum_k w_k p_k(a | o)`` with weights ``w_k`` summing to 1 (equal by default), and
its greedy action is the most probable allowed action (ties: the lowest index, as
``argmax``). Sampling (``deterministic=False``) draws from ``p`` with the ensemble's own seeded
generator. With one member the greedy action is the member's.

A *quorum vote* (``quorum=q, fallback=f``) acts otherwise when greedy: each member votes for
its own greedy action, and the most voted action (ties: the lowest index) is taken only if at
least ``q`` members voted for it; otherwise the ensemble plays ``f`` (a fixed pair), or the
mean's greedy action where ``f`` is masked out. Why: students imitating a teacher agree where
the teacher's lesson is clear and choose arbitrarily, each after its seed, in situations their
training did not cover (docs/learning.md); a vote leaves the fallback only where they agree.
Sampling ignores the quorum.

An ensemble is saved as one file of plain containers and tensors (``torch.save``; read with
``torch.load(..., weights_only=True)``): the members' weights and observation statistics, not
their optimisers. :func:`load_policy` reads either a PPO checkpoint or an ensemble, so
``hdeeprm-evaluate --model`` and :mod:`hdeeprm.training.evaluate` take both.

Example::

    from hdeeprm.training.ensemble import PolicyEnsemble
    ensemble = PolicyEnsemble.from_checkpoints(["seed_7/final_model.pt", "seed_8/final_model.pt"])
    ensemble.save("ensemble.pt")
    action = ensemble.predict(observation, action_mask=info["action_mask"])
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch

from hdeeprm.errors import InputError
from hdeeprm.training.ppo import (
    CHECKPOINT_FORMAT,
    ActorCritic,
    PPOTrainer,
    read_checkpoint_file,
    write_checkpoint_file,
)

#: Format tag and version of ensemble files.
ENSEMBLE_FORMAT = "hdeeprm-ppo-ensemble"
ENSEMBLE_VERSION = 1


class PolicyEnsemble:
    """K actor networks over the same observation and action spaces, acting on their mean
    action probabilities.

    Args:
        models: the members' networks (:class:`~hdeeprm.training.ppo.ActorCritic`; only the
            actor and the observation normalisation are used).
        action_names: the action space every member was trained for.
        observation_size: observation values every member expects.
        weights: one non-negative weight per member (normalised to sum 1; default equal).
        use_action_mask: apply ``action_mask`` when given (as the members' trainers do).
        seed: seed of the sampling generator (``predict(deterministic=False)`` only).
        sources: where each member came from (file and update), for reports.
        quorum: votes an action needs to be taken when greedy (``None``: act on the mean).
        fallback: the action (index) played when no action has ``quorum`` votes.
    """

    def __init__(
        self,
        models: Sequence[ActorCritic],
        action_names: Sequence[str],
        observation_size: int,
        *,
        weights: Sequence[float] | None = None,
        use_action_mask: bool = True,
        seed: int = 0,
        sources: Sequence[str] | None = None,
        quorum: int | None = None,
        fallback: int | None = None,
    ) -> None:
        if not models:
            raise ValueError("an ensemble needs at least one member")
        n = len(action_names)
        for i, model in enumerate(models):
            out = model.actor[-1].out_features
            inp = model.actor[0].in_features
            if out != n or inp != observation_size:
                raise ValueError(
                    f"member {i} maps {inp} observation values to {out} actions; the ensemble "
                    f"has {observation_size} and {n}"
                )
        if weights is None:
            weights = [1.0] * len(models)
        if len(weights) != len(models):
            raise ValueError(f"{len(weights)} weights for {len(models)} members")
        w = np.asarray(weights, dtype=np.float64)
        if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError(f"weights must be non-negative and not all 0, got {list(weights)}")
        self.models = list(models)
        for model in self.models:
            model.eval()
        self.action_names = list(action_names)
        self.observation_size = int(observation_size)
        self.weights = w / w.sum()
        if (quorum is None) != (fallback is None):
            raise ValueError("a quorum vote needs both quorum and fallback")
        if quorum is not None and not 1 <= quorum <= len(models):
            raise ValueError(f"quorum must be 1..{len(models)} (the members), got {quorum}")
        if fallback is not None and not 0 <= fallback < n:
            raise ValueError(f"fallback must be an action index 0..{n - 1}, got {fallback}")
        self.quorum = None if quorum is None else int(quorum)
        self.fallback = None if fallback is None else int(fallback)
        self.use_action_mask = use_action_mask
        self.seed = seed
        self.generator = np.random.default_rng(seed)
        self.sources = list(sources) if sources is not None else [""] * len(models)

    # --- building ----------------------------------------------------------------------------
    @classmethod
    def from_trainers(
        cls,
        trainers: Sequence[PPOTrainer],
        *,
        weights: Sequence[float] | None = None,
        seed: int = 0,
        sources: Sequence[str] | None = None,
        quorum: int | None = None,
        fallback: int | None = None,
    ) -> PolicyEnsemble:
        """The trainers' current networks (copied: later training does not change them)."""
        if not trainers:
            raise ValueError("an ensemble needs at least one member")
        first = trainers[0]
        for t in trainers[1:]:
            if t.action_names != first.action_names or t.observation_size != first.observation_size:
                raise ValueError(
                    "ensemble members must share the action space and observation size: "
                    f"{first.action_names} ({first.observation_size}) vs {t.action_names} "
                    f"({t.observation_size})"
                )
        models = [
            _copy_model(t.model, t.observation_size, len(t.action_names), t.config.hidden)
            for t in trainers
        ]
        return cls(
            models,
            first.action_names,
            first.observation_size,
            weights=weights,
            use_action_mask=first.config.use_action_mask,
            seed=seed,
            sources=sources,
            quorum=quorum,
            fallback=fallback,
        )

    @classmethod
    def from_checkpoints(
        cls,
        paths: Sequence[str | os.PathLike[str]],
        *,
        weights: Sequence[float] | None = None,
        seed: int = 0,
    ) -> PolicyEnsemble:
        """Members from PPO checkpoint files (``PPOTrainer.save``, ``best_model.pt``)."""
        trainers = [PPOTrainer.load(p) for p in paths]
        try:
            return cls.from_trainers(
                trainers, weights=weights, seed=seed, sources=[str(p) for p in paths]
            )
        except ValueError as exc:
            raise InputError(str(exc), str(paths[-1])) from None

    # --- acting ------------------------------------------------------------------------------
    def probabilities(
        self, observation: np.ndarray, action_mask: np.ndarray | None = None
    ) -> np.ndarray:
        """The weighted mean of the members' action probabilities, shape ``(batch, actions)``
        (float64; masked actions 0 whenever some action is allowed)."""
        total, _ = self._probabilities(observation, action_mask)
        return total

    def _probabilities(
        self, observation: np.ndarray, action_mask: np.ndarray | None
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """The mean probabilities (as :meth:`probabilities`) and each member's own."""
        obs = torch.as_tensor(np.asarray(observation, dtype=np.float32))
        if obs.ndim == 1:
            obs = obs.unsqueeze(0)
        mask = None
        if action_mask is not None and self.use_action_mask:
            mask = torch.as_tensor(np.asarray(action_mask, dtype=bool)).reshape(obs.shape[0], -1)
        total = np.zeros((obs.shape[0], len(self.action_names)), dtype=np.float64)
        members = []
        with torch.no_grad():
            for weight, model in zip(self.weights, self.models):
                probs = torch.softmax(model.logits(obs, mask), dim=-1).double().numpy()
                members.append(probs)
                total += weight * probs
        if mask is not None:
            allowed = mask.numpy()
            some = allowed.any(axis=1)
            total[some] = np.where(allowed[some], total[some], 0.0)
        return total, members

    def predict(
        self,
        observation: np.ndarray,
        deterministic: bool = True,
        action_mask: np.ndarray | None = None,
    ) -> np.ndarray:
        """Actions for one observation (a 0-d array) or a batch, as ``PPOTrainer.predict``:
        greedy on the mean probabilities (or the quorum vote), or sampled from them."""
        single = np.asarray(observation).ndim == 1
        probs, members = self._probabilities(observation, action_mask)
        if deterministic and self.quorum is not None:
            action = self._vote(probs, members, action_mask)
        elif deterministic:
            action = probs.argmax(axis=1)
        else:
            cum = np.cumsum(probs, axis=1)
            u = self.generator.random(probs.shape[0]) * cum[:, -1]
            action = np.minimum((cum <= u[:, None]).sum(axis=1), probs.shape[1] - 1)
        return action[0] if single else action

    def _vote(
        self, probs: np.ndarray, members: list[np.ndarray], action_mask: np.ndarray | None
    ) -> np.ndarray:
        """The quorum vote of each row: the most voted of the members' greedy actions if it
        has ``quorum`` votes, else the fallback (the mean's greedy action if it is masked)."""
        n = probs.shape[1]
        votes = np.zeros(probs.shape, dtype=np.int64)
        rows = np.arange(probs.shape[0])
        for member in members:
            votes[rows, member.argmax(axis=1)] += 1
        action = votes.argmax(axis=1)  # ties: the lowest index
        agreed = votes[rows, action] >= self.quorum
        fallback = np.full(probs.shape[0], self.fallback)
        if action_mask is not None and self.use_action_mask:
            allowed = np.asarray(action_mask, dtype=bool).reshape(probs.shape[0], n)
            blocked = ~allowed[rows, fallback] & allowed.any(axis=1)
            fallback = np.where(blocked, probs.argmax(axis=1), fallback)
        return np.where(agreed, action, fallback)

    # --- saving ------------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """Everything :meth:`save` writes: plain containers and tensors only."""
        return {
            "format": ENSEMBLE_FORMAT,
            "version": ENSEMBLE_VERSION,
            "action_names": list(self.action_names),
            "observation_size": self.observation_size,
            "use_action_mask": self.use_action_mask,
            "seed": self.seed,
            "weights": [float(w) for w in self.weights],
            "sources": list(self.sources),
            "quorum": self.quorum,
            "fallback": self.fallback,
            "members": [
                {"hidden": _hidden(m), "normalize": bool(m.normalize), "model": m.state_dict()}
                for m in self.models
            ],
        }

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the ensemble atomically (state dicts, never a pickle of objects)."""
        return write_checkpoint_file(path, self.state())

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> PolicyEnsemble:
        """An ensemble saved by :meth:`save` (``weights_only=True``); :class:`InputError`
        naming the file if it is not one."""
        state = read_checkpoint_file(
            path,
            ENSEMBLE_FORMAT,
            ENSEMBLE_VERSION,
            "not an ensemble of hdeeprm (saved by PolicyEnsemble.save)",
        )
        return cls.from_state(state, str(path))

    @classmethod
    def from_state(cls, state: dict[str, Any], source: str | None = None) -> PolicyEnsemble:
        try:
            names = list(state["action_names"])
            size = int(state["observation_size"])
            models = []
            for member in state["members"]:
                model = ActorCritic(size, len(names), int(member["hidden"]))
                model.load_state_dict(member["model"])
                model.normalize = bool(member["normalize"])
                model._refresh()
                models.append(model)
            return cls(
                models,
                names,
                size,
                weights=state["weights"],
                use_action_mask=bool(state["use_action_mask"]),
                seed=int(state["seed"]),
                sources=state.get("sources"),
                quorum=state.get("quorum"),
                fallback=state.get("fallback"),
            )
        except (KeyError, TypeError, ValueError, RuntimeError) as exc:
            raise InputError(f"malformed ensemble file: {exc}", source) from None


def _hidden(model: ActorCritic) -> int:
    return int(cast(torch.nn.Linear, model.actor[0]).out_features)  # the actor's first layer


def _copy_model(
    model: ActorCritic, observation_size: int, actions: int, hidden: int
) -> ActorCritic:
    copy = ActorCritic(observation_size, actions, hidden)
    copy.load_state_dict(model.state_dict())
    copy.normalize = model.normalize
    copy._refresh()
    return copy


def load_policy(path: str | os.PathLike[str]) -> PPOTrainer | PolicyEnsemble:
    """A PPO checkpoint or an ensemble file, whichever ``path`` is: both have ``predict``,
    ``action_names`` and ``observation_size``, so evaluation treats them alike."""
    try:
        tag = torch.load(Path(path), weights_only=True, map_location="cpu").get("format")
    except Exception:  # noqa: BLE001 - PPOTrainer.load reports unreadable files by name
        tag = CHECKPOINT_FORMAT
    if tag == ENSEMBLE_FORMAT:
        return PolicyEnsemble.load(path)
    return PPOTrainer.load(path)


__all__ = ["ENSEMBLE_FORMAT", "ENSEMBLE_VERSION", "PolicyEnsemble", "load_policy"]
