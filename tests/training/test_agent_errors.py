"""A learning agent whose output does not fit the action space stops the run at its first
decision, naming the class, the file, the expected and the actual shape; Ctrl-C keeps the model
of the last finished episode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner
from rl_helpers import THESIS_DIR

from hdeeprm.cli.launch import main
from hdeeprm.errors import InputError, Interrupted
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import load_options
from hdeeprm.training import run_learning

REPO_AGENT = THESIS_DIR.parents[1] / "agent_examples" / "reinforce.py"

AGENT = """
import os

import torch
import torch.nn.functional as F
from torch import nn

from hdeeprm.agents import PolicyLearningAgent

CALLS = [0]


class {name}(PolicyLearningAgent):
    def __init__(self, gamma, action_size, observation_size):
        super().__init__(gamma)
        self.layer = nn.Linear(observation_size, action_size + {extra})

    def forward_policy(self, observation):
        CALLS[0] += 1
        if CALLS[0] == int(os.environ.get("STOP_AT_CALL", "0")):
            raise KeyboardInterrupt
        return F.softmax(self.layer(observation), dim=1)
"""


def agent_file(folder: Path, name: str = "WideAgent", extra: int = 2) -> Path:
    path = folder / f"{name.lower()}.py"
    path.write_text(AGENT.format(name=name, extra=extra))
    return path


def thesis_inputs(run: Path):
    return prepare_inputs(
        load_options(THESIS_DIR / "options.json"),
        run,
        custom_workload=THESIS_DIR / "workload.json",
    )


def test_wrong_number_of_probabilities(tmp_path: Path) -> None:
    path = agent_file(tmp_path)
    with pytest.raises(InputError) as caught:
        run_learning(
            thesis_inputs(tmp_path / "run"),
            agent_file=path,
            in_model=None,
            out_model=tmp_path / "model.pt",
            nb_runs=3,
            progress=False,
        )
    error = caught.value
    assert error.path == str(path)
    assert error.where == "class WideAgent"
    # Thesis 5.4 has 5 actions; the agent answers 7.
    assert "shape (1, 7)" in error.message and "expected shape (1, 5)" in error.message
    assert not (tmp_path / "run" / "training_log.csv").exists()
    assert not (tmp_path / "model.pt").exists()


def test_wrong_shape_through_the_launcher(tmp_path: Path) -> None:
    path = agent_file(tmp_path, "NarrowAgent", extra=-2)
    result = CliRunner().invoke(
        main,
        [
            str(THESIS_DIR / "options.json"),
            "-cw", str(THESIS_DIR / "workload.json"),
            "-a", str(path),
            "-o", str(tmp_path / "run"),
            "-nr", "2",
            "-q",
        ],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "NarrowAgent" in result.output and "(1, 3)" in result.output
    assert not (tmp_path / "run" / "training_log.csv").exists()


def test_decide_out_of_range(tmp_path: Path) -> None:
    path = tmp_path / "bad.py"
    path.write_text(
        "from torch import nn\n"
        "from hdeeprm.agents import LearningAgent\n"
        "class Stubborn(LearningAgent):\n"
        "    def __init__(self):\n"
        "        self.layer = nn.Linear(1, 1)\n"
        "    def decide(self, observation):\n"
        "        return 99\n"
    )
    with pytest.raises(InputError, match=r"Stubborn.decide returned 99: expected an action index"):
        run_learning(
            thesis_inputs(tmp_path / "run"),
            agent_file=path,
            in_model=None,
            out_model=None,
            nb_runs=1,
            progress=False,
        )


def test_ctrl_c_saves_the_last_finished_episode(tmp_path: Path, monkeypatch) -> None:
    path = agent_file(tmp_path, "FineAgent", extra=0)
    reference = tmp_path / "reference.pt"
    run_learning(
        thesis_inputs(tmp_path / "ref"),
        agent_file=path,
        in_model=None,
        out_model=reference,
        nb_runs=3,
        progress=False,
        write_outputs=False,
    )
    # One decision per episode in thesis 5.4: the 4th forward call is episode 3's first
    # decision. The module is imported afresh for the second run, so its counter restarts.
    monkeypatch.setenv("STOP_AT_CALL", "4")
    model = tmp_path / "model.pt"
    with pytest.raises(Interrupted) as caught:
        run_learning(
            thesis_inputs(tmp_path / "run"),
            agent_file=path,
            in_model=None,
            out_model=model,
            nb_runs=10,
            progress=False,
            write_outputs=False,
        )
    assert "as of episode 2 saved to" in caught.value.message
    saved = torch.load(model, weights_only=True)
    expected = torch.load(reference, weights_only=True)
    assert saved["episodes"] == expected["episodes"] == 3
    for key, value in expected["model"].items():
        assert torch.equal(saved["model"][key], value), key
    assert json.dumps(saved["optimizer"]["state"], default=str) == json.dumps(
        expected["optimizer"]["state"], default=str
    )
    rows = (tmp_path / "run" / "training_log.csv").read_text().splitlines()
    assert len(rows) == 1 + 3  # header + the finished episodes


def test_ctrl_c_through_the_launcher_says_what_was_saved(tmp_path: Path, monkeypatch) -> None:
    path = agent_file(tmp_path, "OtherAgent", extra=0)
    monkeypatch.setenv("STOP_AT_CALL", "3")
    result = CliRunner().invoke(
        main,
        [
            str(THESIS_DIR / "options.json"),
            "-cw", str(THESIS_DIR / "workload.json"),
            "-a", str(path),
            "-o", str(tmp_path / "run"),
            "-om", str(tmp_path / "m.pt"),
            "-nr", "5",
            "-q",
        ],
    )  # fmt: skip
    assert result.exit_code == 130, result.output
    assert f"model and optimiser as of episode 1 saved to {tmp_path / 'm.pt'}" in result.output
    assert torch.load(tmp_path / "m.pt", weights_only=True)["episodes"] == 2


def test_unwritable_model_path_fails_before_training(tmp_path: Path) -> None:
    (tmp_path / "plain").write_text("x")
    result = CliRunner().invoke(
        main,
        [
            str(THESIS_DIR / "options.json"),
            "-cw", str(THESIS_DIR / "workload.json"),
            "-a", str(REPO_AGENT),
            "-o", str(tmp_path / "run"),
            "-om", str(tmp_path / "plain" / "model.pt"),
            "-nr", "2",
            "-q",
        ],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "plain" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "run").exists()  # nothing ran
