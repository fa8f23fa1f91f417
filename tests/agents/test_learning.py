"""The learning agent API: returns, losses, sampling, thesis appendix G."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from hdeeprm.agents import (
    LearningAgent,
    PolicyLearningAgent,
    ValueLearningAgent,
    build_agent,
)
from hdeeprm.errors import InputError, SimulationError

# Thesis appendix G, verbatim except the import path: note it never calls super().__init__().
APPENDIX_G = """
import torch.nn as nn
import torch.nn.functional as F
from hdeeprm.agents import PolicyLearningAgent

class MyLearningAgent(PolicyLearningAgent):

    def __init__(self, gamma, hidden, action_size, observation_size):
        self.input = nn.Linear(observation_size, hidden)
        self.output = nn.Linear(hidden, action_size)

    def forward_policy(self, observation):
        out_0 = F.leaky_relu(self.input(observation))
        return F.softmax(self.output(out_0), dim=1)
"""


class FixedPolicy(PolicyLearningAgent):
    """Probabilities softmax(logits), independent of the observation."""

    def __init__(self, probs: list[float], gamma: float = 0.99, normalize: str = "none") -> None:
        super().__init__(gamma, normalize)
        self.logits = nn.Parameter(torch.log(torch.tensor(probs)))

    def forward_policy(self, observation: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.logits, dim=0).expand(observation.shape[0], -1)


class FixedCritic(FixedPolicy, ValueLearningAgent):
    def __init__(self, probs: list[float], values: list[float]) -> None:
        super().__init__(probs)
        self._script = list(values)

    def forward_value(self, observation: torch.Tensor) -> torch.Tensor:
        value = self._script.pop(0)
        return torch.tensor([[value]], requires_grad=True)


def test_appendix_g_agent_works_as_written(tmp_path: Path) -> None:
    path = tmp_path / "my_agent.py"
    path.write_text(APPENDIX_G)
    agent = build_agent(
        path, {"gamma": 0.9, "hidden": 8, "lr": 0.01}, observation_size=21, action_size=5
    )
    assert type(agent).__name__ == "MyLearningAgent"
    assert agent.gamma == 0.9  # from the options although the constructor ignored it
    assert len(list(agent.parameters())) == 4  # two Linear layers registered
    action = agent.decide(np.full(21, 0.5, dtype=np.float32))
    assert 0 <= action < 5 and len(agent.log_probs) == 1
    agent.rewards.append(3.0)
    loss = agent.loss()
    loss.backward()
    assert agent.input.weight.grad is not None


def test_discounted_and_normalised_returns() -> None:
    agent = FixedPolicy([0.5, 0.5], gamma=0.5)
    agent.rewards = [1.0, 2.0, 4.0]
    # G2 = 4, G1 = 2 + 0.5 * 4 = 4, G0 = 1 + 0.5 * 4 = 3
    np.testing.assert_allclose(agent.transform_rewards().numpy(), [3.0, 4.0, 4.0])
    # episode: mean 11/3, population std sqrt(((-2/3)^2 + 2 (1/3)^2) / 3) = sqrt(2)/3
    agent.normalize = "episode"
    std = math.sqrt(2) / 3
    np.testing.assert_allclose(
        agent.transform_rewards().numpy(),
        [(3 - 11 / 3) / std, (4 - 11 / 3) / std, (4 - 11 / 3) / std],
        rtol=1e-5,
    )
    agent.rewards = [5.0]
    np.testing.assert_array_equal(agent.transform_rewards().numpy(), [0.0])  # one step: 0


def test_running_normalisation_across_episodes() -> None:
    agent = FixedPolicy([0.5, 0.5], gamma=0.5, normalize="running")
    agent.rewards = [1.0, 2.0, 4.0]
    first = agent.transform_rewards().numpy()  # statistics of [3, 4, 4]: same as episode
    std = math.sqrt(2) / 3
    np.testing.assert_allclose(first, [(3 - 11 / 3) / std, (1 / 3) / std, (1 / 3) / std], rtol=1e-5)
    agent.reset_episode()
    agent.rewards = [2.0]
    # all returns seen: 3, 4, 4, 2 -> mean 3.25; squared deviations .0625 + 2 x .5625 + 1.5625
    # = 2.75 -> std sqrt(2.75 / 4)
    (value,) = agent.transform_rewards().numpy()
    assert value == pytest.approx((2 - 3.25) / math.sqrt(2.75 / 4), rel=1e-5)
    assert float(agent.return_count) == 4.0
    # evaluation (eval mode) does not move the statistics
    agent.eval()
    agent.transform_rewards()
    assert float(agent.return_count) == 4.0
    assert set(agent.state_dict()) >= {"return_count", "return_mean", "return_m2"}


def test_policy_loss_by_hand() -> None:
    agent = FixedPolicy([0.25, 0.75], gamma=0.5)
    agent.deterministic = True
    assert agent.decide(np.zeros(3)) == 1
    assert agent.decide(np.zeros(3)) == 1
    agent.rewards = [1.0, 2.0]
    # returns: G1 = 2, G0 = 1 + 0.5 * 2 = 2 -> loss = -log(0.75) * 2 * 2
    loss = agent.loss()
    assert loss.item() == pytest.approx(-math.log(0.75) * 4, rel=1e-6)
    np.testing.assert_allclose(agent.action_probabilities(), [0.25, 0.75], rtol=1e-6)


def test_sampling_is_seeded() -> None:
    agent = FixedPolicy([0.2, 0.3, 0.5])
    agent.seed(42)
    first = [agent.decide(np.zeros(2)) for _ in range(50)]
    agent.seed(42)
    again = [agent.decide(np.zeros(2)) for _ in range(50)]
    assert first == again and len(set(first)) == 3


def test_value_loss_and_advantage_by_hand() -> None:
    agent = FixedCritic([0.5, 0.5], values=[0.5, 3.0])
    agent.gamma = 0.0
    agent.deterministic = True
    agent.decide(np.zeros(2))
    agent.decide(np.zeros(2))
    agent.rewards = [1.0, 1.0]  # gamma 0: returns 1, 1
    returns = agent.transform_rewards()
    # Huber: |0.5 - 1| < 1 -> 0.5 * 0.25 = 0.125; |3 - 1| = 2 -> 2 - 0.5 = 1.5
    assert agent.value_loss(returns).item() == pytest.approx(1.625)
    np.testing.assert_allclose(agent.advantages(returns).numpy(), [0.5, -2.0])
    # policy: -log(0.5) * (0.5 - 2.0); total = policy + value
    expected = -math.log(0.5) * (0.5 - 2.0) + 1.625
    assert agent.loss().item() == pytest.approx(expected, rel=1e-6)


def test_errors_are_clear() -> None:
    class NoSoftmax(PolicyLearningAgent):
        def __init__(self) -> None:
            super().__init__()
            self.layer = nn.Linear(2, 2)

        def forward_policy(self, observation: torch.Tensor) -> torch.Tensor:
            return torch.tensor([[-1.0, 2.0]])

    with pytest.raises(InputError, match="softmax"):
        NoSoftmax().decide(np.zeros(2))
    agent = FixedPolicy([0.5, 0.5])
    agent.decide(np.zeros(2))
    agent.rewards = [1.0, 2.0]
    with pytest.raises(SimulationError, match="reward every decision"):
        agent.loss()
    with pytest.raises(ValueError, match="gamma"):
        FixedPolicy([0.5, 0.5], gamma=1.5)
    assert float(LearningAgent().loss()) == 0.0  # no decisions: zero loss
