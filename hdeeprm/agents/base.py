"""Agents: who chooses the action at each decision point (thesis 4.2.2, SPEC section 7).

Every agent speaks the thesis's four verbs:

* ``observe(env)``: ask the environment for an observation;
* ``decide(observation)``: pick an action index;
* ``alter(action, env)``: apply the action to the environment;
* ``rewarded(env)``: ask for the reward of the last action and keep it in ``rewards``.

``env`` is anything providing ``observation()``, ``step(action)`` and ``reward()`` (the
Gymnasium environment of :mod:`hdeeprm.environment`, or a stand-in in tests). The in-process
engine loop (:meth:`hdeeprm.decision.WorkloadManager.handle`) only calls ``observe`` and
``decide``.
"""

from __future__ import annotations

from typing import Any, Protocol

from torch import nn


class Environment(Protocol):
    """The environment surface the agent verbs need."""

    def observation(self) -> Any: ...

    def step(self, action: int) -> Any: ...

    def reward(self) -> float: ...


class Agent(nn.Module):
    """Base of every agent: a torch module (so learning agents carry parameters) with the
    thesis verbs. Subclasses implement :meth:`decide`."""

    def __init__(self) -> None:
        super().__init__()
        #: Rewards received, one per decision, in order.
        self.rewards: list[float] = []

    def observe(self, env: Environment) -> Any:
        """The environment's current observation."""
        return env.observation()

    def decide(self, observation: Any) -> int:
        """The index of the action to take given ``observation``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement decide(observation)")

    def alter(self, action: int, env: Environment) -> Any:
        """Apply ``action`` to the environment; returns whatever its ``step`` returns."""
        return env.step(action)

    def rewarded(self, env: Environment) -> float:
        """Ask the environment for the last action's reward and record it."""
        reward = float(env.reward())
        self.rewards.append(reward)
        return reward
