"""``hdeeprm-launch`` with ``algorithm: ppo`` and ``hdeeprm-evaluate`` end to end."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rl_helpers import THESIS_DIR

from hdeeprm.cli.evaluate import main as evaluate_main
from hdeeprm.cli.launch import main as launch_main

PARAMS = {"total_timesteps": 64, "num_envs": 2, "num_steps": 16, "num_minibatches": 2}


def write_ppo_options(folder: Path, run: str = "train", params: dict | None = None) -> Path:
    raw = json.loads((THESIS_DIR / "options.json").read_text())
    raw["platform_file_path"] = str((THESIS_DIR / raw["platform_file_path"]).resolve())
    raw["pybatsim"]["agent"] = {
        "type": "LEARNING",
        "algorithm": "ppo",
        "run": run,
        "hidden": 8,
        "lr": 0.001,
        "params": PARAMS if params is None else params,
    }
    path = folder / "options.json"
    path.write_text(json.dumps(raw))
    return path


def test_launch_trains_saves_and_evaluates(tmp_path: Path) -> None:
    runner = CliRunner()
    options = write_ppo_options(tmp_path)
    workload = str(THESIS_DIR / "workload.json")
    model = tmp_path / "ppo.pt"
    result = runner.invoke(launch_main, [str(options), "-cw", workload, "-om", str(model), "-q"])
    assert result.exit_code == 0, result.output
    assert "ppo train: 64 decision steps, 2 update(s)" in result.output
    rows = list(csv.DictReader((tmp_path / "training_log.csv").open()))
    assert [int(r["steps"]) for r in rows] == [32, 64]
    assert model.is_file()

    write_ppo_options(tmp_path, run="evaluate")
    result = runner.invoke(launch_main, [str(options), "-cw", workload, "-im", str(model), "-q"])
    assert result.exit_code == 0, result.output
    assert "model" in result.output and (tmp_path / "evaluation.csv").is_file()

    out = tmp_path / "eval"
    result = runner.invoke(
        evaluate_main, [str(options), "-cw", workload, "--model", str(model), "-o", str(out), "-q"]
    )
    assert result.exit_code == 0, result.output
    assert "best fixed pairs (tied): first-high_mem_bw" in result.output
    assert " window 0: " not in result.output  # one line per window only with --verbose
    rows = list(csv.DictReader((out / "evaluation.csv").open()))
    assert {r["policy"] for r in rows} == {
        "model",
        "random",
        "shortest-high_gflops",
        "shortest-high_mem_bw",
        "shortest-low_power",
        "first-high_gflops",
        "first-high_mem_bw",
    }
    assert (out / "evaluation.png").is_file()


def test_launch_errors_name_the_key(tmp_path: Path) -> None:
    runner = CliRunner()
    workload = str(THESIS_DIR / "workload.json")
    options = write_ppo_options(tmp_path, params={"num_env": 2})
    result = runner.invoke(launch_main, [str(options), "-cw", workload])
    assert result.exit_code == 2
    assert "pybatsim.agent.params.num_env" in result.output and "num_envs" in result.output
    assert "Traceback" not in result.output

    options = write_ppo_options(tmp_path)
    result = runner.invoke(launch_main, [str(options), "-cw", workload, "-a", "agent.py"])
    assert result.exit_code == 2 and "built-in algorithm 'ppo'" in result.output
    result = runner.invoke(launch_main, [str(options), "-cw", workload, "-nr", "3"])
    assert result.exit_code == 2 and "total_timesteps" in result.output

    options = write_ppo_options(tmp_path, run="evaluate")
    result = runner.invoke(launch_main, [str(options), "-cw", workload])
    assert result.exit_code == 2 and "-im MODEL.pt" in result.output

    (tmp_path / "junk.pt").write_text("junk")
    result = runner.invoke(
        evaluate_main, [str(options), "-cw", workload, "--model", str(tmp_path / "junk.pt")]
    )
    assert result.exit_code == 2 and "junk.pt" in result.output


def test_evaluate_run_of_a_file_agent_is_greedy(tmp_path: Path) -> None:
    """``run: "evaluate"``: every episode takes the agent's most probable action."""
    import dataclasses

    from hdeeprm.inputs import prepare_inputs
    from hdeeprm.options import load_options
    from hdeeprm.training import run_learning

    options = load_options(THESIS_DIR / "options.json")
    options = dataclasses.replace(options, agent=dataclasses.replace(options.agent, run="evaluate"))
    inputs = prepare_inputs(options, tmp_path, custom_workload=THESIS_DIR / "workload.json")
    episodes = []
    result = run_learning(
        inputs,
        agent_file=Path(__file__).resolve().parents[2] / "agent_examples" / "reinforce.py",
        in_model=None,
        out_model=None,
        nb_runs=6,
        progress=False,
        write_outputs=False,
        tensorboard=False,
        on_episode=episodes.append,
    )
    assert len(result.episodes) == 6
    # one decision per episode, the same greedy one each time: identical objectives
    assert len({e.objective for e in episodes}) == 1
    probs = episodes[0].probabilities
    assert max(probs) < 1.0  # the policy itself is not deterministic; the choice is


@pytest.mark.parametrize("vector", ["async", "shared"])
def test_launch_async_vector(tmp_path: Path, vector: str) -> None:
    params = {**PARAMS, "vector": vector}
    options = write_ppo_options(tmp_path, params=params)
    result = CliRunner().invoke(
        launch_main, [str(options), "-cw", str(THESIS_DIR / "workload.json"), "-q"]
    )
    assert result.exit_code == 0, result.output
    assert "ppo train: 64 decision steps" in result.output
