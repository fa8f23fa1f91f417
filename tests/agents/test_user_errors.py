"""An exception inside a user's agent method is reported as the user's mistake: one
InputError naming the class, the method, the exception and the user's own line."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
import torch
from torch import nn

from hdeeprm.agents import PolicyLearningAgent, ValueLearningAgent
from hdeeprm.errors import InputError, SimulationError

HERE = str(Path(__file__).resolve())


class Critic(PolicyLearningAgent, ValueLearningAgent):
    def __init__(self) -> None:
        super().__init__(0.99)
        self.layer = nn.Linear(3, 2)

    def forward_policy(self, observation: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.layer(observation), dim=1)

    def forward_value(self, observation: torch.Tensor) -> torch.Tensor:
        return observation.sum() / 0 + [][1]  # the failing line


class Chooser(Critic):
    def decide(self, observation):  # noqa: ANN001, ANN201
        if observation is None:
            raise KeyboardInterrupt
        if isinstance(observation, str):
            raise SimulationError("hdeeprm's own error")
        return super().decide(observation)


def line_of(cls: type, text: str) -> int:
    lines, first = inspect.getsourcelines(cls)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_forward_value_raising_names_class_method_and_line() -> None:
    with pytest.raises(InputError) as caught:
        Critic().decide(torch.zeros(3))
    error = caught.value
    assert error.path == HERE
    assert error.where == f"line {line_of(Critic, 'the failing line')}"
    assert error.message.startswith("agent Critic.forward_value raised IndexError(")


def test_an_overridden_decide_passes_the_inner_error_through() -> None:
    """Chooser.decide calls the wrapped forward_value: the innermost method is named."""
    with pytest.raises(
        InputError, match=r"line [0-9]+: agent Critic\.forward_value raised IndexError"
    ):
        Chooser().decide(torch.zeros(3))


def test_ctrl_c_and_hdeeprm_errors_are_not_rewritten() -> None:
    with pytest.raises(KeyboardInterrupt):
        Chooser().decide(None)
    with pytest.raises(SimulationError, match="hdeeprm's own error"):
        Chooser().decide("x")


def test_a_value_only_agent_is_told_it_cannot_decide() -> None:
    class OnlyValue(ValueLearningAgent):
        def forward_value(self, observation: torch.Tensor) -> torch.Tensor:
            return observation.sum().reshape(1, 1)

    with pytest.raises(InputError) as caught:
        OnlyValue().decide(torch.zeros(3))
    assert caught.value.where == "class OnlyValue"
    assert "does not implement decide" in caught.value.message


def test_forward_value_of_the_wrong_shape() -> None:
    class Wide(ValueLearningAgent):
        def forward_value(self, observation: torch.Tensor) -> torch.Tensor:
            return observation

    with pytest.raises(InputError, match=r"forward_value returned \(1, 3\): expected"):
        Wide().evaluate(torch.zeros(3))
