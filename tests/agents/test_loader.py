"""The -a AGENT.py loader: construction from options and its errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from hdeeprm.agents import PolicyLearningAgent, build_agent, load_agent_class
from hdeeprm.errors import InputError

REPO = Path(__file__).resolve().parents[2]
OPTIONS = {"gamma": 0.95, "hidden": 4, "lr": 0.01, "params": {}}

HEADER = """
import torch
from torch import nn
from hdeeprm.agents import PolicyLearningAgent, ValueLearningAgent
"""


def agent_file(tmp_path: Path, body: str, name: str = "agent.py") -> Path:
    path = tmp_path / name
    path.write_text(HEADER + body)
    return path


def test_examples_load_and_receive_options() -> None:
    for name, cls_name in [
        ("reinforce.py", "ReinforceAgent"),
        ("actor_critic.py", "ActorCriticAgent"),
    ]:
        agent = build_agent(
            REPO / "agent_examples" / name, OPTIONS, observation_size=21, action_size=5
        )
        assert type(agent).__name__ == cls_name
        assert agent.gamma == 0.95 and agent._learning_init_called
        assert agent.input.in_features == 21 and agent.input.out_features == 4


def test_only_accepted_arguments_and_params(tmp_path: Path) -> None:
    path = agent_file(
        tmp_path,
        """
class Agent(PolicyLearningAgent):
    def __init__(self, action_size, width=3, lr=None):
        super().__init__()
        self.seen = (action_size, width, lr)
        self.layer = nn.Linear(1, action_size)

    def forward_policy(self, observation):
        return torch.softmax(self.layer(observation[:, :1]), dim=1)
""",
    )
    options = {**OPTIONS, "params": {"width": 7}}
    agent = build_agent(path, options, observation_size=9, action_size=2)
    assert agent.seen == (2, 7, 0.01)
    assert agent.gamma == 0.99  # it called super().__init__() without gamma: its choice
    with pytest.raises(InputError, match=r"'depth' are not arguments of Agent.__init__"):
        build_agent(path, {**OPTIONS, "params": {"depth": 2}}, observation_size=9, action_size=2)


def test_helper_base_classes_are_fine(tmp_path: Path) -> None:
    path = agent_file(
        tmp_path,
        """
class Base(PolicyLearningAgent):
    pass

class Concrete(Base):
    def __init__(self, action_size):
        super().__init__()
        self.layer = nn.Linear(1, action_size)
""",
    )
    assert load_agent_class(path).__name__ == "Concrete"
    assert issubclass(load_agent_class(path), PolicyLearningAgent)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("x = (", "syntax error"),
        ("raise RuntimeError('boom')", "importing the agent file failed: RuntimeError: boom"),
        ("class NotAnAgent:\n    pass\n", "defines no learning agent"),
        (
            "class A(PolicyLearningAgent):\n    pass\nclass B(ValueLearningAgent):\n    pass\n",
            r"several learning agents \(A, B\)",
        ),
        (
            "class A(PolicyLearningAgent):\n    def __init__(self, depth):\n        pass\n",
            "needs argument 'depth'",
        ),
        (
            "class A(PolicyLearningAgent):\n    def __init__(self):\n        1 / 0\n",
            "constructing A failed: ZeroDivisionError",
        ),
    ],
)
def test_loader_errors_name_the_file(tmp_path: Path, body: str, message: str) -> None:
    path = agent_file(tmp_path, body)
    with pytest.raises(InputError, match=message) as info:
        build_agent(path, OPTIONS, observation_size=3, action_size=2)
    assert info.value.path == str(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="agent file not found"):
        load_agent_class(tmp_path / "nope.py")
