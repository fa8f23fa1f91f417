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

from hdeeprm.decision.actions import Action, ActionSpace
from hdeeprm.decision.fixed_pair import FixedPair


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
        raise NotImplementedError

    def alter(self, action: int, env: Environment) -> Any:
        """Apply ``action`` to the environment; returns whatever its ``step`` returns."""
        return env.step(action)

    def rewarded(self, env: Environment) -> float:
        """Ask the environment for the last action's reward and record it."""
        reward = float(env.reward())
        self.rewards.append(reward)
        return reward


class ClassicAgent(Agent):
    """A fixed policy pair: always the same action, whatever it observes.

    Args:
        actions: the action space the workload manager uses.
        policy_pair: the pair as a name (``"shortest-high_gflops"``), a (job, core) tuple or an
            :class:`~hdeeprm.decision.actions.Action`; ``"void"`` is allowed when enabled.

    The original HDeepRM always answered action 0 whatever the options said; this agent
    answers the position of *its* pair in the action space.
    """

    def __init__(self, actions: ActionSpace, policy_pair: str | tuple[str, str] | Action) -> None:
        super().__init__()
        fixed = FixedPair(actions, policy_pair)
        self.actions = actions
        self.action = fixed.action
        self.policy_pair = fixed.policy_pair

    def observe(self, env: Any) -> None:
        """A classic agent needs no observation (saves building one at every decision)."""
        return None

    def decide(self, observation: Any = None) -> int:
        return self.action

    def extra_repr(self) -> str:
        return f"policy_pair={self.policy_pair!r}, action={self.action}"
