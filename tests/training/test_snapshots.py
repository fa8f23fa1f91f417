"""Snapshots during training and the choice of one after it (hdeeprm.training.snapshots).

The marks and choices are worked out by hand on a stand-in agent whose one weight says which
snapshot is loaded; a real TwoStepPPO run checks that keeping snapshots changes no weight.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch
from rl_helpers import random_jobs, write_options, write_workload

from hdeeprm.environment import JobSelectionEnv
from hdeeprm.training.snapshots import (
    SnapshotKeeper,
    acting_state,
    choose_snapshot,
    load_acting_state,
    train_runs,
)
from hdeeprm.training.twostep import TwoStepConfig, TwoStepPPO


class _Agent:
    """One network with one weight, set by hand; no policy selector (``None``: skipped)."""

    def __init__(self, batch_size: int) -> None:
        self.config = SimpleNamespace(batch_size=batch_size)
        self.job_net = torch.nn.Linear(1, 1, bias=False)
        self.policy_net = None
        self.set(0.0)

    def set(self, value: float) -> None:
        with torch.no_grad():
            self.job_net.weight.fill_(value)

    @property
    def value(self) -> float:
        return float(self.job_net.weight.item())


def _train_one(log: list):
    """A stand-in training: the agent's weight is its seed, 10 steps, two snapshots (weights
    seed and seed + 0.5); ``log`` records each seed and each agent."""

    def train(seed: int):
        agent = _Agent(batch_size=1)
        agent.global_step, agent.closed = 10 + seed % 7, False
        agent.close = lambda: setattr(agent, "closed", True)
        keeper = SnapshotKeeper(agent, total_timesteps=2, count=2)
        for value in (seed, seed + 0.5):
            agent.set(float(value))
            keeper({})
        log.append((seed, agent))
        return agent, keeper.kept

    return train


def test_several_runs_pool_their_snapshots_into_the_first_agent() -> None:
    log: list = []
    agent, kept, steps = train_runs(_train_one(log), seed=3, runs=3)
    # seeds 3, 1003, 2003 (stride 1,000); steps 10 + seed % 7: 13 + 12 + 11
    assert [seed for seed, _ in log] == [3, 1003, 2003] and steps == 13 + 12 + 11
    assert agent is log[0][1] and not agent.closed
    assert [a.closed for _, a in log[1:]] == [True, True]
    names = [s.name for s in kept]
    assert names == [f"run {k} update {u} of 2" for k in (1, 2, 3) for u in (1, 2)]
    weights = [s.state["job_net"]["weight"].item() for s in kept]
    assert weights == [3.0, 3.5, 1003.0, 1003.5, 2003.0, 2003.5]
    # the choice loads any run's snapshot into the first agent
    choice = choose_snapshot(agent, kept, lambda a: abs(a.value - 1003.5))
    assert choice.name == "run 2 update 2 of 2" and agent.value == 1003.5
    # one run: train_one(seed) itself, names unchanged
    _, kept, steps = train_runs(_train_one([]), seed=3, runs=1)
    assert [s.name for s in kept] == ["update 1 of 2", "update 2 of 2"] and steps == 13
    with pytest.raises(ValueError, match="runs must be >= 1"):
        train_runs(_train_one([]), seed=0, runs=0)


def test_snapshots_are_taken_at_evenly_spaced_updates_and_copied() -> None:
    # 1,000 steps in batches of 100: 10 updates; 3 snapshots after updates 3, 7 and 10
    # (round(10 / 3), round(20 / 3), 10), each a copy that later training does not touch.
    agent = _Agent(batch_size=100)
    keeper = SnapshotKeeper(agent, total_timesteps=1000, count=3)
    assert keeper.marks == {3, 7, 10}
    for update in range(1, 11):
        agent.set(float(update))
        keeper({})
    assert [s.name for s in keeper.kept] == ["update 3 of 10", "update 7 of 10", "update 10 of 10"]
    assert [s.state["job_net"]["weight"].item() for s in keeper.kept] == [3.0, 7.0, 10.0]
    assert set(keeper.kept[0].state) == {"job_net"}  # policy_net is None: not kept
    # one snapshot is the last update; more snapshots than updates keep each update once
    assert SnapshotKeeper(agent, 1000, 1).marks == {10}
    assert SnapshotKeeper(agent, 250, 5).marks == {1, 2}


def test_the_lowest_score_is_loaded_and_ties_keep_the_earlier() -> None:
    agent = _Agent(batch_size=10)
    keeper = SnapshotKeeper(agent, total_timesteps=40, count=4)
    keeper.add("clone")  # by hand, before any update
    for weight in (5.0, 2.0, 9.0, 2.0):
        agent.set(weight)
        keeper({})
    # score = the loaded weight, so the snapshots score 0 (clone), 5, 2, 9, 2
    seen: list[float] = []

    def score(a: _Agent) -> float:
        seen.append(a.value)
        return a.value if a.value else math.nan  # the clone's NaN never wins

    choice = choose_snapshot(agent, keeper.kept, score)
    assert seen == [0.0, 5.0, 2.0, 9.0, 2.0]
    assert choice.name == "update 2 of 4" and choice.score == 2.0  # not the equal update 4
    assert agent.value == 2.0  # left loaded
    assert choice.scores[0][0] == "clone" and math.isnan(choice.scores[0][1])
    assert choice.line("the validation windows").endswith("update 2 of 4 kept")


def test_bad_uses_say_what_is_wrong() -> None:
    agent = _Agent(batch_size=10)
    with pytest.raises(ValueError, match="count must be >= 1"):
        SnapshotKeeper(agent, 100, 0)
    with pytest.raises(ValueError, match="no snapshot"):
        choose_snapshot(agent, [], lambda a: 0.0)
    with pytest.raises(TypeError, match="has none of the networks"):
        acting_state(object())


def _factories(tmp_path, n: int = 2):
    options = write_options(tmp_path / "opt")
    workload = write_workload(tmp_path, random_jobs(40, seed=3))
    return [
        (
            lambda i=i: JobSelectionEnv.from_options(
                options, tmp_path / f"run{i}", workload, queue_slots=8
            )
        )
        for i in range(n)
    ]


def test_keeping_snapshots_changes_no_trained_weight(tmp_path) -> None:
    config = TwoStepConfig(num_envs=2, num_steps=64, num_minibatches=2, update_epochs=2, seed=4)
    plain = TwoStepPPO(config, _factories(tmp_path / "a"))
    plain.learn(512)
    kept = TwoStepPPO(config, _factories(tmp_path / "b"))
    keeper = SnapshotKeeper(kept, 512, 2)
    kept.learn(512, callback=keeper)
    final = acting_state(plain)
    assert [s.name for s in keeper.kept] == ["update 2 of 4", "update 4 of 4"]
    for name, weights in final.items():
        for key, tensor in weights.items():
            assert torch.equal(tensor, getattr(kept, name).state_dict()[key])
            assert torch.equal(tensor, keeper.kept[-1].state[name][key])  # the last is the end
    # loading the first snapshot back changes the acting weights, and the last restores them
    first = keeper.kept[0].state["job_net"]
    assert any(not torch.equal(t, first[k]) for k, t in final["job_net"].items())
    load_acting_state(kept, keeper.kept[0].state)
    assert all(torch.equal(t, kept.job_net.state_dict()[k]) for k, t in first.items())
    load_acting_state(kept, keeper.kept[-1].state)
    assert all(torch.equal(t, kept.job_net.state_dict()[k]) for k, t in final["job_net"].items())
    plain.close()
    kept.close()


def test_ppo_trainer_snapshots_its_actor_critic() -> None:
    """PPOTrainer acts with ``model``: it is what a snapshot holds, and loading the first one
    back makes the trainer act as it did then."""
    from test_ppo import Bandit, small_config

    from hdeeprm.training.ppo import PPOTrainer

    trainer = PPOTrainer(small_config(), [Bandit, Bandit])
    keeper = SnapshotKeeper(trainer, 256, 2)  # 4 updates of 64 steps: after 2 and 4
    trainer.learn(256, callback=keeper)
    assert [s.name for s in keeper.kept] == ["update 2 of 4", "update 4 of 4"]
    assert set(keeper.kept[0].state) == {"model"}
    load_acting_state(trainer, keeper.kept[0].state)
    now = trainer.model.state_dict()
    assert all(torch.equal(t, now[k]) for k, t in keeper.kept[0].state["model"].items())
    trainer.close()
