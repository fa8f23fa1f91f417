"""A fixed policy pair: the agent of classic runs, without torch.

A plain class rather than a torch module (:class:`hdeeprm.agents.Agent`), so that a worker
replaying a trace never pays torch's import (about 1.5 s per process). The workload manager
answers its action without calling it at each decision point.
"""

from __future__ import annotations

from typing import Any

from hdeeprm.decision.actions import Action, ActionSpace
from hdeeprm.errors import InputError


class FixedPair:
    """Always the same action: the position of ``policy_pair`` in ``actions``.

    Args:
        actions: the action space the workload manager uses.
        policy_pair: a name (``"shortest-high_gflops"``), a (job, core) tuple or an
            :class:`~hdeeprm.decision.actions.Action`; ``"void"`` when enabled.

    Raises:
        InputError: the pair is not in the action space (``where="agent.policy_pair"``).
    """

    def __init__(self, actions: ActionSpace, policy_pair: str | tuple[str, str] | Action) -> None:
        self.actions = actions
        try:
            self.action = actions.index(policy_pair)
        except InputError as exc:
            raise InputError(exc.message, where="agent.policy_pair") from None
        self.policy_pair = actions[self.action].name

    def observe(self, env: Any) -> None:
        """A fixed pair needs no observation (saves building one at every decision)."""
        return None

    def decide(self, observation: Any = None) -> int:
        return self.action

    def __repr__(self) -> str:
        return f"FixedPair(policy_pair={self.policy_pair!r}, action={self.action})"
