"""Learning agents: the thesis's agent API for deep reinforcement learning (thesis 4.2.2).

* :class:`LearningAgent`: reward history, discounted and normalised returns
  (:meth:`~LearningAgent.transform_rewards`), the episode loss and its reset.
* :class:`PolicyLearningAgent`: ``forward_policy(observation) -> probabilities``; deciding
  samples an action with a seeded generator and keeps its log-probability; policy loss
  ``-log p(a) x return`` (thesis eq. 3.3).
* :class:`ValueLearningAgent`: ``forward_value(observation) -> value``; Huber value loss
  (thesis eq. 3.4). Combine both for actor-critic: ``class AC(PolicyLearningAgent,
  ValueLearningAgent)``; the actor then learns from the advantage ``return - value``.

Subclasses only define layers and the forward methods; the thesis's minimal agent (appendix
G) works as written, even though its constructor never calls ``super().__init__()``: the torch
module machinery is set up before any subclass constructor runs.

Returns are normalised with running statistics over every return seen so far (kept in the
state dict, so they survive ``-im``/``-om``) rather than within the episode: an episode of a
single decision (thesis 5.4) normalised on its own always gives 0 and nothing is learnt, and
very short episodes give a noisy scale (seed 003, section 3.1).
"""

from __future__ import annotations

import functools
import inspect
import math
import os
import traceback
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from hdeeprm.agents.base import Agent
from hdeeprm.errors import HDeepRMError, InputError, SimulationError

#: Added to standard deviations before dividing by them.
EPS = 1e-8
#: Normalisation modes of :meth:`LearningAgent.transform_rewards`.
NORMALIZATIONS = ("running", "episode", "none")


def source_file(cls: type) -> str | None:
    """The file defining ``cls`` (an agent loaded with ``-a``), for error messages."""
    try:
        return inspect.getsourcefile(cls)
    except TypeError:  # classes built at run time
        return None


#: Methods a user's agent class defines whose exceptions are reported as the user's mistake.
USER_METHODS = ("decide", "forward_policy", "forward_value")


def _user_frame(exc: BaseException, file: str | None) -> tuple[int, str] | None:
    """Line number and source text of the deepest frame of ``exc`` inside ``file``."""
    found = None
    if file is None:
        return None
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.realpath(frame.filename) == os.path.realpath(file):
            found = (frame.lineno or 0, (frame.line or "").strip())
    return found


def agent_code_error(cls: type, method: str, exc: BaseException) -> InputError:
    """The one-line :class:`InputError` for an exception raised inside a user's agent method:
    names the class, the method, the exception and the user's own line."""
    file = source_file(cls)
    frame = _user_frame(exc, file)
    message = f"agent {cls.__name__}.{method} raised {exc!r}"
    if frame is None:
        return InputError(message, file, f"class {cls.__name__}")
    line, text = frame
    if text:
        message += f" in `{text}`"
    return InputError(message, file, f"line {line}")


def _reported(cls: type, method: str, function: Any) -> Any:
    """``function`` (a user's method) with its exceptions turned into :func:`agent_code_error`
    (hdeeprm's own errors and Ctrl-C pass through as they are)."""

    @functools.wraps(function)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return function(self, *args, **kwargs)
        except HDeepRMError:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure of user code is the user's
            raise agent_code_error(cls, method, exc) from exc

    call._hdeeprm_reported = True  # type: ignore[attr-defined]
    return call


def _not_implemented(agent: Any, method: str, expected: str) -> InputError:
    name = type(agent).__name__
    return InputError(
        f"agent {name} does not implement {method}: {expected}",
        source_file(type(agent)),
        f"class {name}",
    )


class LearningAgent(Agent):
    """Base of every trainable agent.

    Args:
        gamma: discount factor of future rewards, in [0, 1].
        normalize: how returns are normalised before the loss: ``"running"`` (default; mean
            and standard deviation of every return seen in training), ``"episode"`` (the
            thesis's: this episode's returns only) or ``"none"``.
    """

    # Declared for the checker: a torch module's unknown attributes read as tensors or modules.
    gamma: float
    normalize: str
    generator: torch.Generator
    deterministic: bool
    return_count: torch.Tensor
    return_mean: torch.Tensor
    return_m2: torch.Tensor
    rewards: list[float]
    _learning_init_called: bool

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Wrap the decision methods a user's class defines (any class outside hdeeprm), so an
        exception inside them names the class, the method and the user's line."""
        super().__init_subclass__(**kwargs)
        if cls.__module__.split(".")[0] == "hdeeprm":
            return
        for method in USER_METHODS:
            function = cls.__dict__.get(method)
            if callable(function) and not getattr(function, "_hdeeprm_reported", False):
                setattr(cls, method, _reported(cls, method, function))

    def decide(self, observation: Any) -> int:
        """Pick an action index (policy agents sample their policy)."""
        raise _not_implemented(
            self,
            "decide",
            "an agent with only a value head (forward_value) cannot choose actions; extend "
            "PolicyLearningAgent too and define forward_policy, or define decide(observation)",
        )

    def __new__(cls, *args: Any, **kwargs: Any) -> LearningAgent:
        self = super().__new__(cls)
        # Set up the torch module before the subclass constructor assigns layers, so that
        # constructors that never call super().__init__() (thesis appendix G) still work.
        Agent.__init__(self)
        self.gamma = 0.99
        self.normalize = "running"
        self._learning_init_called = False
        self.generator = torch.Generator().manual_seed(0)
        #: Pick the most probable action instead of sampling (evaluation).
        self.deterministic = False
        self.register_buffer("return_count", torch.zeros((), dtype=torch.float64))
        self.register_buffer("return_mean", torch.zeros((), dtype=torch.float64))
        self.register_buffer("return_m2", torch.zeros((), dtype=torch.float64))
        self._init_episode()
        return self

    def __init__(self, gamma: float = 0.99, normalize: str = "running") -> None:
        # Module state was set up in __new__; calling Agent.__init__ again would drop layers a
        # subclass assigned before calling us.
        if not 0.0 <= gamma <= 1.0:
            raise ValueError(f"gamma must be in [0, 1], got {gamma}")
        if normalize not in NORMALIZATIONS:
            raise ValueError(f"normalize must be one of {NORMALIZATIONS}, got {normalize!r}")
        self.gamma = float(gamma)
        self.normalize = normalize
        self._learning_init_called = True

    # --- episode state ------------------------------------------------------------------
    def _init_episode(self) -> None:
        self.rewards = []
        #: Log-probabilities of the actions taken (policy agents).
        self.log_probs: list[torch.Tensor] = []
        #: Value estimates of the observed states (value agents).
        self.values: list[torch.Tensor] = []
        #: Action probability vectors, one per decision (for logs).
        self.probabilities: list[np.ndarray] = []

    def reset_episode(self) -> None:
        """Forget the episode's rewards, log-probabilities and values (call before each one)."""
        self._init_episode()

    def seed(self, seed: int) -> None:
        """Seed the generator used to sample actions."""
        self.generator.manual_seed(int(seed) & 0xFFFF_FFFF_FFFF_FFFF)

    # --- returns ------------------------------------------------------------------------
    def discounted_returns(self) -> np.ndarray:
        """``G_t = r_t + gamma G_{t+1}`` for every step of the episode (float64)."""
        rewards = np.asarray(self.rewards, dtype=np.float64)
        returns = np.empty_like(rewards)
        acc = 0.0
        gamma = self.gamma
        for t in range(len(rewards) - 1, -1, -1):
            acc = rewards[t] + gamma * acc
            returns[t] = acc
        return returns

    def transform_rewards(self, *, update: bool | None = None) -> torch.Tensor:
        """Discounted returns of the episode, normalised (see ``normalize``), float32.

        With the running normalisation, ``update`` (default: the module is in training mode)
        folds this episode's returns into the statistics first.
        """
        returns = self.discounted_returns()
        if self.normalize == "episode" and len(returns) > 1:
            returns = (returns - returns.mean()) / (returns.std() + EPS)
        elif self.normalize == "episode":
            returns = np.zeros_like(returns)
        elif self.normalize == "running":
            if self.training if update is None else update:
                self._update_return_stats(returns)
            count = float(self.return_count)
            mean = float(self.return_mean)
            std = math.sqrt(float(self.return_m2) / count) if count > 1 else 0.0
            returns = (returns - mean) / (std + EPS) if std > 0 else returns - mean
        return torch.as_tensor(returns, dtype=torch.float32)

    def _update_return_stats(self, returns: np.ndarray) -> None:
        """Chan et al.'s parallel update of the running mean and sum of squared deviations."""
        n = len(returns)
        if n == 0:
            return
        count, mean, m2 = (
            float(self.return_count),
            float(self.return_mean),
            float(self.return_m2),
        )
        batch_mean = float(returns.mean())
        batch_m2 = float(((returns - batch_mean) ** 2).sum())
        total = count + n
        delta = batch_mean - mean
        self.return_mean.fill_(mean + delta * n / total)
        self.return_m2.fill_(m2 + batch_m2 + delta * delta * count * n / total)
        self.return_count.fill_(total)

    def advantages(self, returns: torch.Tensor) -> torch.Tensor:
        """What the policy gradient multiplies: the returns (critics subtract their value)."""
        return returns

    # --- loss ---------------------------------------------------------------------------
    def loss_terms(self, returns: torch.Tensor) -> list[torch.Tensor]:
        """Loss contributions of each learning component (cooperative across mixins)."""
        return []

    def loss(self) -> torch.Tensor:
        """The episode's loss (a scalar tensor; 0 without decisions)."""
        if not self.rewards:
            return torch.zeros(())
        returns = self.transform_rewards()
        terms = self.loss_terms(returns)
        if not terms:
            raise NotImplementedError(
                f"{type(self).__name__} defines no loss: extend PolicyLearningAgent or "
                "ValueLearningAgent, or override loss()"
            )
        return torch.stack([term.reshape(()) for term in terms]).sum()

    def configure_optimizer(self, lr: float) -> torch.optim.Optimizer:
        """The optimiser training uses (Adam over every parameter); override to change it."""
        params = [p for p in self.parameters() if p.requires_grad]
        if not params:
            raise SimulationError(f"{type(self).__name__} has no trainable parameters")
        return torch.optim.Adam(params, lr=lr)

    def action_probabilities(self) -> np.ndarray:
        """Mean probability of each action over the episode's decisions (empty if none)."""
        if not self.probabilities:
            return np.zeros(0)
        return np.mean(np.stack(self.probabilities), axis=0)

    # --- helpers ------------------------------------------------------------------------
    @staticmethod
    def as_tensor(observation: Any) -> torch.Tensor:
        """An observation as a float32 batch of one: shape ``(1, n)``."""
        tensor = torch.as_tensor(np.asarray(observation), dtype=torch.float32)
        return tensor.reshape(1, -1)

    def record(self, observation: torch.Tensor) -> None:
        """Hook run on each decided observation (critics store their value estimate)."""


class PolicyLearningAgent(LearningAgent):
    """A policy-gradient agent: subclasses implement :meth:`forward_policy`."""

    def forward_policy(self, observation: torch.Tensor) -> torch.Tensor:
        """Action probabilities for a ``(1, n)`` observation batch: shape ``(1, actions)``."""
        raise _not_implemented(
            self,
            "forward_policy",
            "a PolicyLearningAgent defines forward_policy(observation) returning a tensor of "
            "probabilities, shape (1, actions)",
        )

    def forward(self, observation: Any) -> torch.Tensor:
        """Action probabilities (``agent(observation)``)."""
        if not isinstance(observation, torch.Tensor):
            observation = self.as_tensor(observation)
        return self.forward_policy(observation)

    def decide(self, observation: Any) -> int:
        """Sample an action from the policy (or take the most probable when
        ``deterministic``); keep its log-probability for the loss."""
        obs = self.as_tensor(observation)
        raw = self.forward_policy(obs)
        if not isinstance(raw, torch.Tensor):
            name = type(self).__name__
            raise InputError(
                f"{name}.forward_policy returned a {type(raw).__name__}: expected a "
                "torch.Tensor of probabilities, shape (1, actions) (apply softmax to the "
                "last layer)",
                source_file(type(self)),
                f"class {name}",
            )
        #: Shape of the last policy output, as returned (for error messages).
        self.policy_shape = tuple(raw.shape)
        probs = raw.reshape(-1)
        detached = probs.detach()
        if (
            detached.numel() == 0
            or not bool(torch.isfinite(detached).all())
            or bool((detached < 0).any())
            or not float(detached.sum()) > 0
        ):
            name = type(self).__name__
            raise InputError(
                f"{name}.forward_policy returned {detached.tolist()[:12]} (shape "
                f"{self.policy_shape}): expected non-negative, finite probabilities that do "
                "not all vanish (apply softmax to the last layer)",
                source_file(type(self)),
                f"class {name}",
            )
        if self.deterministic:
            action = int(torch.argmax(detached))
        else:
            action = int(torch.multinomial(detached, 1, generator=self.generator))
        self.log_probs.append(torch.log(probs[action].clamp_min(1e-30)))
        self.probabilities.append(detached.numpy().astype(np.float64, copy=True))
        self.record(obs)
        return action

    def policy_loss(self, returns: torch.Tensor) -> torch.Tensor:
        """``sum_t -log p(a_t | o_t) x A_t`` (thesis eq. 3.3, with ``A`` the advantages)."""
        if len(self.log_probs) != len(returns):
            raise SimulationError(
                f"{len(self.log_probs)} decisions but {len(returns)} rewards in the episode: "
                "reward every decision exactly once"
            )
        log_probs = torch.stack(self.log_probs)
        return -(log_probs * self.advantages(returns)).sum()

    def loss_terms(self, returns: torch.Tensor) -> list[torch.Tensor]:
        return [*super().loss_terms(returns), self.policy_loss(returns)]


class ValueLearningAgent(LearningAgent):
    """A state-value estimator (a critic): subclasses implement :meth:`forward_value`."""

    def forward_value(self, observation: torch.Tensor) -> torch.Tensor:
        """Estimated return for a ``(1, n)`` observation batch: shape ``(1, 1)``."""
        raise _not_implemented(
            self,
            "forward_value",
            "a ValueLearningAgent defines forward_value(observation) returning a tensor of "
            "shape (1, 1)",
        )

    def record(self, observation: torch.Tensor) -> None:
        super().record(observation)
        value = self.forward_value(observation)
        if not isinstance(value, torch.Tensor) or value.numel() != 1:
            name = type(self).__name__
            got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
            raise InputError(
                f"{name}.forward_value returned {got}: expected a torch.Tensor of shape (1, 1)",
                source_file(type(self)),
                f"class {name}",
            )
        self.values.append(value.reshape(()))

    def evaluate(self, observation: Any) -> float:
        """Estimate and keep the value of ``observation`` (for agents that decide otherwise)."""
        self.record(self.as_tensor(observation))
        return float(self.values[-1].detach())

    def advantages(self, returns: torch.Tensor) -> torch.Tensor:
        if len(self.values) == len(returns) and self.values:
            return returns - torch.stack(self.values).detach()
        return super().advantages(returns)

    def value_loss(self, returns: torch.Tensor) -> torch.Tensor:
        """``sum_t Huber(v_t, G_t)`` with threshold 1 (thesis eq. 3.4)."""
        if len(self.values) != len(returns):
            raise SimulationError(
                f"{len(self.values)} value estimates but {len(returns)} rewards in the episode"
            )
        return F.smooth_l1_loss(torch.stack(self.values), returns, reduction="sum", beta=1.0)

    def loss_terms(self, returns: torch.Tensor) -> list[torch.Tensor]:
        return [*super().loss_terms(returns), self.value_loss(returns)]
