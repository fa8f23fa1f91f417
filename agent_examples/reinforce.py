"""REINFORCE (thesis 3.2.2): one dense pipeline, input + 3 hidden layers + softmax output.

Copy this file to start your own policy-gradient agent. hdeeprm passes the constructor the
arguments it declares: ``gamma`` and ``hidden`` from the options' agent block,
``observation_size`` and ``action_size`` from the environment (and any ``params`` key).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hdeeprm.agents import PolicyLearningAgent


class ReinforceAgent(PolicyLearningAgent):
    """Policy network: observation -> 3 x LeakyReLU(hidden) -> softmax over actions."""

    def __init__(self, gamma: float, hidden: int, action_size: int, observation_size: int) -> None:
        super().__init__(gamma)
        self.input = nn.Linear(observation_size, hidden)
        self.hidden_0 = nn.Linear(hidden, hidden)
        self.hidden_1 = nn.Linear(hidden, hidden)
        self.hidden_2 = nn.Linear(hidden, hidden)
        self.output = nn.Linear(hidden, action_size)

    def forward_policy(self, observation: torch.Tensor) -> torch.Tensor:
        out = F.leaky_relu(self.input(observation))
        out = F.leaky_relu(self.hidden_0(out))
        out = F.leaky_relu(self.hidden_1(out))
        out = F.leaky_relu(self.hidden_2(out))
        return F.softmax(self.output(out), dim=1)
