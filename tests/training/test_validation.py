"""Validation during PPO training: the best checkpoint by hand, on the thesis 5.4 scenario,
independence of training from validation, and ``eval_every`` through ``hdeeprm-launch``."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from rl_helpers import THESIS_DIR, random_jobs, write_options, write_workload

from hdeeprm.cli.launch import main as launch_main
from hdeeprm.errors import InputError
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import load_options
from hdeeprm.training import evaluate as ev
from hdeeprm.training.ppo import PPOConfig, PPOTrainer, inputs_factories
from hdeeprm.training.validation import (
    STATISTICS,
    VALIDATION_COLUMNS,
    ValidationResult,
    Validator,
    beats_reference,
    count_wins,
    selection_key,
)


class TwoWindows:
    """One-decision episodes on two fixed windows; the objective (a cost) of window ``k`` with
    action ``a`` is ``COST[k] * (a + 1)``."""

    objective = "avg_job_slowdown"
    nb_eval_windows = 2
    COST = (2.0, 4.0)

    def reset(self, *, seed=None, options=None):
        self.k = options["window"]
        job = SimpleNamespace(subtime=0.0, start_time=0.0, finish_time=1.0)
        self.engine = SimpleNamespace(finished_jobs=[job])
        return np.zeros(1, np.float32), {}

    def step(self, action):
        info = {"objective": self.COST[self.k] * (action + 1)}
        return np.zeros(1, np.float32), 0.0, True, False, info


class Scripted:
    """A trainer stand-in whose greedy action is set by the test."""

    def __init__(self) -> None:
        self.action, self.updates, self.global_step = 0, 0, 0

    def predict(self, obs, deterministic=True, action_mask=None):
        return np.array(self.action)

    def state(self, validation=None):
        return {"action": torch.tensor(self.action), "objective": validation.objective}


def test_best_checkpoint_by_hand(tmp_path) -> None:
    validator = Validator(TwoWindows(), tmp_path)
    trainer = Scripted()
    # greedy actions 1, 0, 2, 0 -> mean costs (2*2 + 4*2)/2 = 6, 3, 9, 3 (a tie is not better)
    for update, action in enumerate((1, 0, 2, 0), start=1):
        trainer.action, trainer.updates, trainer.global_step = action, update, 10 * update
        validator.validate(trainer)
    assert [r.objective for r in validator.history] == [6.0, 3.0, 9.0, 3.0]
    assert [r.best for r in validator.history] == [True, True, False, False]
    assert validator.best.update == 2 and validator.best.windows == (2.0, 4.0)
    best = torch.load(tmp_path / "best_model.pt", weights_only=True)
    assert int(best["action"]) == 0 and best["objective"] == 3.0
    rows = list(csv.DictReader((tmp_path / "validation_log.csv").open()))
    assert list(rows[0]) == [*VALIDATION_COLUMNS, "w0", "w1"]
    assert [(r["update"], r["steps"], r["objective"], r["best"]) for r in rows] == [
        ("1", "10", "6.0", "1"),
        ("2", "20", "3.0", "1"),
        ("3", "30", "9.0", "0"),
        ("4", "40", "3.0", "0"),
    ]
    assert rows[2]["w0"] == "6.0" and rows[2]["w1"] == "12.0"


@pytest.fixture(scope="module")
def thesis_inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("thesis")
    options = load_options(THESIS_DIR / "options.json")
    return prepare_inputs(options, folder, custom_workload=THESIS_DIR / "workload.json")


def thesis_config(**kw) -> PPOConfig:
    base = dict(num_envs=2, num_steps=16, num_minibatches=2, hidden=16, seed=1)
    base.update(kw)
    return PPOConfig(learning_rate=3e-3, prior_action="shortest-low_power", **base)


def test_validation_keeps_the_best_checkpoint_on_the_thesis_scenario(thesis_inputs, tmp_path):
    """Thesis 5.4 (makespan; the pairs give 5.25 s, 6.36 s or 7 s, docs/learning.md): the
    greedy policy starts on the 7 s pair; the best validated checkpoint plays 5.25 s."""
    from hdeeprm.environment import HeterogeneousClusterEnv

    config = thesis_config(eval_every=3)
    val_env = HeterogeneousClusterEnv(inputs=thesis_inputs)
    trainer = PPOTrainer(
        config,
        inputs_factories(thesis_inputs, 2),
        run_dir=tmp_path,
        val_env=val_env,
        tensorboard=False,
    )
    trainer.learn(32 * 20)  # 20 updates: validations after 3, 6, ..., 18 and 20
    trainer.close()
    history = trainer.validator.history
    assert [r.update for r in history] == [3, 6, 9, 12, 15, 18, 20]
    assert {round(r.objective, 2) for r in history} <= {5.25, 6.36, 7.0}
    assert round(history[0].objective, 2) == 7.0  # still the prior's pair
    assert trainer.validator.best.objective == pytest.approx(5.25)
    # the first checkpoint reaching 5.25 is kept (a tie later is not better)
    first_best = next(r for r in history if r.objective == min(h.objective for h in history))
    assert trainer.validator.best == first_best and first_best.update < 20
    best = PPOTrainer.load(tmp_path / "best_model.pt")
    assert best.updates == first_best.update
    state = torch.load(tmp_path / "best_model.pt", weights_only=True)
    assert state["validation"]["objective"] == first_best.objective
    replay = ev.evaluate(val_env, {"model": ev.model_policy(best)})
    assert replay[0].objective == first_best.objective
    rows = list(csv.DictReader((tmp_path / "training_log.csv").open()))
    assert len(rows) == 20


def test_training_is_the_same_with_and_without_validation(thesis_inputs) -> None:
    from hdeeprm.environment import HeterogeneousClusterEnv

    plain = PPOTrainer(thesis_config(), inputs_factories(thesis_inputs, 2))
    plain.learn(128)
    validated = PPOTrainer(
        thesis_config(eval_every=1),
        inputs_factories(thesis_inputs, 2),
        val_env=HeterogeneousClusterEnv(inputs=thesis_inputs),
    )
    validated.learn(128)
    assert len(validated.validator.history) == 4
    a, b = plain.model.state_dict(), validated.model.state_dict()
    for key in a:
        assert torch.equal(a[key], b[key]), key
    with pytest.raises(ValueError, match="needs a validation environment"):
        PPOTrainer(thesis_config(eval_every=2), inputs_factories(thesis_inputs, 2)).learn(32)
    with pytest.raises(InputError, match="eval_every"):
        PPOConfig.from_params({"eval_every": -1})


def test_launch_validates_on_val_windows_and_names_missing_val_jobs(tmp_path: Path) -> None:
    runner = CliRunner()
    workload = write_workload(tmp_path / "wl", random_jobs(40, seed=2))
    params = {
        "total_timesteps": 64,
        "num_envs": 2,
        "num_steps": 16,
        "num_minibatches": 2,
        "eval_every": 1,
    }
    agent = {"type": "LEARNING", "algorithm": "ppo", "hidden": 8, "lr": 0.001, "params": params}
    episodes = {"window_jobs": 5, "train_jobs": [0, 30], "eval_jobs": [30, 40]}
    options = write_options(
        tmp_path / "run",
        objective="avg_job_slowdown",
        agent=agent,
        episodes={**episodes, "val_jobs": [0, 30], "val_windows": 2},
    )
    result = runner.invoke(launch_main, [str(options), "-cw", str(workload), "-q"])
    assert result.exit_code == 0, result.output
    assert "best validation: avg_job_slowdown" in result.output
    rows = list(csv.DictReader((tmp_path / "run" / "validation_log.csv").open()))
    assert [r["update"] for r in rows] == ["1", "2"] and "w1" in rows[0]
    assert (tmp_path / "run" / "best_model.pt").is_file()

    options = write_options(tmp_path / "bad", agent=agent, episodes=episodes)
    result = runner.invoke(launch_main, [str(options), "-cw", str(workload), "-q"])
    assert result.exit_code == 2
    assert "pybatsim.env.episodes.val_jobs" in result.output and "Traceback" not in result.output
    raw = json.loads(options.read_text())
    assert raw["pybatsim"]["env"]["episodes"] == episodes  # the user's file is untouched


class TableWindows:
    """One-decision episodes on three fixed windows; ``TABLE[a][k]`` is the objective (a
    cost) of action ``a`` on window ``k``."""

    objective = "avg_job_slowdown"
    nb_eval_windows = 3
    action_names = ["a0", "a1", "a2", "a3"]
    TABLE = (
        (1.0, 1.0, 10.0),  # mean 4, median 1, wins against a1: 2
        (2.0, 2.0, 2.0),  # the reference: mean 2, median 2
        (0.5, 3.0, 3.0),  # mean 13/6, median 3, 1 win
        (1.5, 1.5, 2.0),  # mean 5/3, median 1.5, 2 wins (a tie with a0, better mean)
    )

    def reset(self, *, seed=None, options=None):
        self.k = options["window"]
        job = SimpleNamespace(subtime=0.0, start_time=0.0, finish_time=1.0)
        self.engine = SimpleNamespace(finished_jobs=[job])
        return np.zeros(1, np.float32), {}

    def step(self, action):
        info = {"objective": self.TABLE[action][self.k]}
        return np.zeros(1, np.float32), 0.0, True, False, info


@pytest.mark.parametrize(
    ("statistic", "marks", "best_action"),
    [
        ("mean", [True, False, False, True], 3),  # 2; 4, 13/6 not below 2; 5/3
        ("median", [True, True, False, False], 0),  # 2; 1; 3; 1.5 not below 1
        ("wins", [True, True, False, True], 3),  # 0; 2; 1; 2 wins with mean 5/3 < 4
    ],
)
def test_validation_statistics_by_hand(statistic, marks, best_action, tmp_path) -> None:
    validator = Validator(TableWindows(), tmp_path, statistic=statistic, reference="a1")
    assert validator.reference == (2.0, 2.0, 2.0)  # the pair played once on the 3 windows
    trainer = Scripted()
    for update, action in enumerate((1, 0, 2, 3), start=1):
        trainer.action, trainer.updates, trainer.global_step = action, update, update
        validator.validate(trainer)
    assert [r.best for r in validator.history] == marks
    assert [r.wins for r in validator.history] == [0, 2, 1, 2]
    assert [r.median for r in validator.history] == [2.0, 1.0, 3.0, 1.5]
    best = torch.load(tmp_path / "best_model.pt", weights_only=True)
    assert int(best["action"]) == best_action
    rows = list(csv.DictReader((tmp_path / "validation_log.csv").open()))
    assert [r["wins"] for r in rows] == ["0", "2", "1", "2"]


def test_selection_key_orders_seeds_and_needs_a_reference() -> None:
    def result(objective, median, wins):
        return ValidationResult(1, 1, objective, median, 0.0, 0.0, (), True, wins)

    a, b, c = result(4.0, 1.0, 2), result(2.0, 2.0, 0), result(5 / 3, 1.5, 2)
    pick = {
        s: min((a, b, c), key=lambda r: selection_key(r, s, "avg_job_slowdown")) for s in STATISTICS
    }
    assert pick == {"mean": c, "median": a, "wins": c}
    # utilisation is maximised: the higher mean wins
    assert (
        max(a.objective, c.objective)
        == min((a, c), key=lambda r: selection_key(r, "mean", "avg_utilization")).objective
    )
    with pytest.raises(ValueError, match="needs a reference"):
        selection_key(result(1.0, 1.0, None), "wins", "avg_job_slowdown")
    assert count_wins((1.0, 3.0), (2.0, 3.0), "avg_job_slowdown") == 1  # a tie is no win
    assert count_wins((1.0, 3.0), (2.0, 2.0), "avg_utilization") == 1


def test_validation_statistic_options_are_checked(thesis_inputs) -> None:
    from hdeeprm.environment import HeterogeneousClusterEnv

    with pytest.raises(InputError, match="params.val_statistic"):
        PPOConfig.from_params({"val_statistic": "mode"})
    with pytest.raises(InputError, match="params.val_reference"):
        PPOConfig.from_params({"val_statistic": "wins"})
    with pytest.raises(ValueError, match="needs a reference"):
        Validator(TableWindows(), statistic="wins")
    with pytest.raises(ValueError, match="4 reference values for 3"):
        Validator(TableWindows(), statistic="wins", reference=(1.0, 2.0, 3.0, 4.0))
    config = thesis_config(eval_every=1, val_statistic="wins", val_reference="no-such_pair")
    with pytest.raises(InputError, match="params.val_reference"):
        PPOTrainer(
            config,
            inputs_factories(thesis_inputs, 2),
            val_env=HeterogeneousClusterEnv(inputs=thesis_inputs),
        )
    # through the trainer: the thesis scenario's pairs give 5.25, 6.36 or 7 s (one window)
    config = thesis_config(eval_every=2, val_statistic="wins", val_reference="shortest-low_power")
    trainer = PPOTrainer(
        config,
        inputs_factories(thesis_inputs, 2),
        val_env=HeterogeneousClusterEnv(inputs=thesis_inputs),
    )
    trainer.learn(32 * 6)
    trainer.close()
    reference = trainer.validator.reference
    assert len(reference) == 1 and round(reference[0], 2) in {5.25, 6.36, 7.0}
    for r in trainer.validator.history:
        assert r.wins == int(r.objective < reference[0])


def test_beats_reference_by_hand() -> None:
    """Against the pair (2, 2, 2): a0 (1, 1, 10) loses on the mean, wins on the median and
    on windows (2 won, 1 lost); a3 (1.5, 1.5, 2) wins on all three (2 won, 0 lost)."""
    reference = (2.0, 2.0, 2.0)

    def result(values):
        values = tuple(values)
        mean, median = sum(values) / 3, sorted(values)[1]
        return ValidationResult(1, 1, mean, median, 0.0, 0.0, values, True, None)

    a0, a3 = result(TableWindows.TABLE[0]), result(TableWindows.TABLE[3])
    decide = {s: beats_reference(a0, reference, s, "avg_job_slowdown") for s in STATISTICS}
    assert decide == {"mean": False, "median": True, "wins": True}
    assert all(beats_reference(a3, reference, s, "avg_job_slowdown") for s in STATISTICS)
    # one window won, one lost, one tied: not ahead
    assert not beats_reference(result((1.0, 3.0, 2.0)), reference, "wins", "avg_job_slowdown")


def test_launch_validates_by_wins_on_disjoint_windows(tmp_path: Path) -> None:
    """``val_jobs`` disjoint from ``train_jobs`` (the jobs just before ``eval_jobs``) and the
    ``wins`` statistic, through ``hdeeprm-launch``: the log counts wins against the pair, and
    the pair's own figures are those of ``hdeeprm-evaluate``'s fixed pair on those windows."""
    runner = CliRunner()
    workload = write_workload(tmp_path / "wl", random_jobs(40, seed=2))
    params = {
        "total_timesteps": 64,
        "num_envs": 2,
        "num_steps": 16,
        "num_minibatches": 2,
        "eval_every": 1,
        "val_statistic": "wins",
        "val_reference": "shortest-high_gflops",
    }
    agent = {"type": "LEARNING", "algorithm": "ppo", "hidden": 8, "lr": 0.001, "params": params}
    episodes = {
        "window_jobs": 5,
        "train_jobs": [0, 20],
        "val_jobs": [20, 30],
        "val_windows": 3,
        "eval_jobs": [30, 40],
    }
    options = write_options(
        tmp_path / "run", objective="avg_job_slowdown", agent=agent, episodes=episodes
    )
    result = runner.invoke(launch_main, [str(options), "-cw", str(workload), "-q"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader((tmp_path / "run" / "validation_log.csv").open()))
    assert [r["update"] for r in rows] == ["1", "2"]
    from hdeeprm.environment import HeterogeneousClusterEnv

    inputs = prepare_inputs(load_options(options), tmp_path / "run", custom_workload=workload)
    env = HeterogeneousClusterEnv(inputs=inputs, split="val")
    assert all(20 <= s <= 25 for s in env.windows.val_starts)
    index = env.action_names.index("shortest-high_gflops")
    pair = [r.objective for r in ev.evaluate(env, {"pair": ev.fixed_policy(index)})]
    for row in rows:
        values = [float(row[f"w{k}"]) for k in range(3)]
        assert int(row["wins"]) == sum(v < p for v, p in zip(values, pair, strict=True))
    best = [r for r in rows if r["best"] == "1"]
    assert best[0] is rows[0]  # the first validation is always the best so far

    params["val_reference"] = "no-such_pair"
    options = write_options(tmp_path / "bad", agent=agent, episodes=episodes)
    result = runner.invoke(launch_main, [str(options), "-cw", str(workload), "-q"])
    assert result.exit_code == 2
    assert "params.val_reference" in result.output and "Traceback" not in result.output
