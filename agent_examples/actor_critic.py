"""Actor-critic (thesis 3.2.2): the REINFORCE pipeline as actor plus a separate critic.

The critic is a second network sharing only the input layer with the actor; its scalar output
estimates the (normalised) return of a state. The actor learns from the advantage
``return - value`` and the critic from the Huber loss against the return; both losses are
summed and minimised together at the end of each episode. (The original HDeepRM actor-critic
crashed on its first decision: its ``process`` method never ran the forward pass. Here the
base classes run both passes at every decision.)
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hdeeprm.agents import PolicyLearningAgent, ValueLearningAgent


class ActorCriticAgent(PolicyLearningAgent, ValueLearningAgent):
    """Shared input layer; actor: 3 x LeakyReLU(hidden) -> softmax; critic: 3 x
    LeakyReLU(hidden) -> one value."""

    def __init__(self, gamma: float, hidden: int, action_size: int, observation_size: int) -> None:
        super().__init__(gamma)
        self.input = nn.Linear(observation_size, hidden)
        self.actor_hidden_0 = nn.Linear(hidden, hidden)
        self.actor_hidden_1 = nn.Linear(hidden, hidden)
        self.actor_hidden_2 = nn.Linear(hidden, hidden)
        self.actor_output = nn.Linear(hidden, action_size)
        self.critic_hidden_0 = nn.Linear(hidden, hidden)
        self.critic_hidden_1 = nn.Linear(hidden, hidden)
        self.critic_hidden_2 = nn.Linear(hidden, hidden)
        self.critic_output = nn.Linear(hidden, 1)

    def forward(self, observation: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Action probabilities and state value, as in the thesis's figure 3.1."""
        if not isinstance(observation, torch.Tensor):
            observation = self.as_tensor(observation)
        return self.forward_policy(observation), self.forward_value(observation)

    def forward_policy(self, observation: torch.Tensor) -> torch.Tensor:
        out = F.leaky_relu(self.input(observation))
        out = F.leaky_relu(self.actor_hidden_0(out))
        out = F.leaky_relu(self.actor_hidden_1(out))
        out = F.leaky_relu(self.actor_hidden_2(out))
        return F.softmax(self.actor_output(out), dim=1)

    def forward_value(self, observation: torch.Tensor) -> torch.Tensor:
        out = F.leaky_relu(self.input(observation))
        out = F.leaky_relu(self.critic_hidden_0(out))
        out = F.leaky_relu(self.critic_hidden_1(out))
        out = F.leaky_relu(self.critic_hidden_2(out))
        return self.critic_output(out)
