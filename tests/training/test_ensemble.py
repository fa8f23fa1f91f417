"""Ensembles of PPO policies: the averaging of known probabilities by hand, masks, weights,
one member = the member, save/load, sampling determinism, and evaluation like a model."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from hdeeprm.errors import InputError
from hdeeprm.training import evaluate as ev
from hdeeprm.training.ensemble import PolicyEnsemble, load_policy
from hdeeprm.training.ppo import ActorCritic, PPOConfig, PPOTrainer

NAMES = ["a-x", "b-x", "c-x"]


def constant_policy(probs: list[float], obs_size: int = 2) -> ActorCritic:
    """An actor whose logits are ``log(probs)`` whatever the observation: zero hidden
    weights and biases give tanh(0) = 0, so the output layer gives its bias alone."""
    model = ActorCritic(obs_size, len(probs), 4)
    model.normalize = False
    with torch.no_grad():
        for layer in model.actor:
            if isinstance(layer, torch.nn.Linear):
                layer.weight.zero_()
                layer.bias.zero_()
        model.actor[-1].bias.copy_(torch.log(torch.tensor(probs)))
    return model


def two_members(**kw) -> PolicyEnsemble:
    # member A prefers action 0 (0.6), member B action 1 (0.5)
    a = constant_policy([0.6, 0.3, 0.1])
    b = constant_policy([0.1, 0.5, 0.4])
    return PolicyEnsemble([a, b], NAMES, 2, **kw)


OBS = np.zeros(2, np.float32)


def test_mean_of_known_probabilities_by_hand() -> None:
    ens = two_members()
    # (0.6 + 0.1) / 2 = 0.35, (0.3 + 0.5) / 2 = 0.4, (0.1 + 0.4) / 2 = 0.25: action 1,
    # although member A alone would take action 0
    np.testing.assert_allclose(ens.probabilities(OBS), [[0.35, 0.4, 0.25]], atol=1e-7)
    assert int(ens.predict(OBS)) == 1
    # weights 0.8 / 0.2: 0.8*0.6 + 0.2*0.1 = 0.5, 0.8*0.3 + 0.2*0.5 = 0.34, 0.16: action 0
    weighted = two_members(weights=[4.0, 1.0])
    np.testing.assert_allclose(weighted.probabilities(OBS), [[0.5, 0.34, 0.16]], atol=1e-7)
    assert int(weighted.predict(OBS)) == 0


def test_masks_renormalise_each_member_before_averaging() -> None:
    ens = two_members()
    mask = np.array([False, True, True])
    # A on {1, 2}: 0.3/0.4 = 0.75, 0.25; B: 0.5/0.9 = 5/9, 4/9; mean (0.75 + 5/9)/2 = 0.65278
    p = ens.probabilities(OBS, mask)
    np.testing.assert_allclose(p, [[0.0, (0.75 + 5 / 9) / 2, (0.25 + 4 / 9) / 2]], atol=1e-7)
    assert p[0, 0] == 0.0 and int(ens.predict(OBS, action_mask=mask)) == 1
    # only action 2 allowed: it is taken even though both members rank it last
    assert int(ens.predict(OBS, action_mask=np.array([False, False, True]))) == 2
    # a batch with one mask row per observation
    batch = ens.predict(np.zeros((2, 2), np.float32), action_mask=np.array([[1, 0, 0], [0, 0, 1]]))
    assert batch.tolist() == [0, 2]


def test_one_member_acts_as_its_trainer() -> None:
    trainer = PPOTrainer(PPOConfig(seed=3, hidden=8), spaces=(5, NAMES))
    ens = PolicyEnsemble.from_trainers([trainer])
    obs = np.random.default_rng(0).normal(size=(200, 5)).astype(np.float32)
    masks = np.random.default_rng(1).random((200, 3)) < 0.7
    masks[:, 0] |= ~masks.any(axis=1)
    assert ens.predict(obs).tolist() == trainer.predict(obs).tolist()
    assert (
        ens.predict(obs, action_mask=masks).tolist() == trainer.predict(obs, True, masks).tolist()
    )
    # members are copies: changing the trainer afterwards leaves the ensemble as it was
    before = ens.probabilities(obs)
    with torch.no_grad():
        trainer.model.actor[-1].bias += 5.0 * torch.arange(3.0)
    np.testing.assert_array_equal(ens.probabilities(obs), before)


def test_members_must_share_the_spaces() -> None:
    with pytest.raises(ValueError, match="member 1"):
        PolicyEnsemble([constant_policy([0.4, 0.3, 0.3]), constant_policy([0.5, 0.5])], NAMES, 2)
    with pytest.raises(ValueError, match="weights"):
        two_members(weights=[1.0, -1.0])
    with pytest.raises(ValueError, match="at least one"):
        PolicyEnsemble([], NAMES, 2)


def test_save_load_and_load_policy(tmp_path) -> None:
    ens = two_members(weights=[3.0, 1.0], seed=5)
    path = ens.save(tmp_path / "ensemble.pt")
    again = load_policy(path)
    assert isinstance(again, PolicyEnsemble)
    assert again.action_names == NAMES and again.observation_size == 2 and again.seed == 5
    np.testing.assert_array_equal(again.probabilities(OBS), ens.probabilities(OBS))
    # a PPO checkpoint still loads as a trainer
    trainer = PPOTrainer(PPOConfig(seed=1, hidden=8), spaces=(2, NAMES))
    assert isinstance(load_policy(trainer.save(tmp_path / "ppo.pt")), PPOTrainer)
    # from_checkpoints: the members are the checkpoints' networks
    both = PolicyEnsemble.from_checkpoints([tmp_path / "ppo.pt", tmp_path / "ppo.pt"])
    obs = np.random.default_rng(2).normal(size=(50, 2)).astype(np.float32)
    assert both.predict(obs).tolist() == trainer.predict(obs).tolist()
    assert both.sources == [str(tmp_path / "ppo.pt")] * 2
    # a file of another kind is named in the error
    torch.save({"format": "hdeeprm-ppo-ensemble", "version": 1}, tmp_path / "bad.pt")
    with pytest.raises(InputError, match="malformed ensemble"):
        load_policy(tmp_path / "bad.pt")
    with pytest.raises(InputError, match="not an ensemble"):
        PolicyEnsemble.load(tmp_path / "ppo.pt")


def test_sampling_follows_the_mean_and_is_seeded() -> None:
    draws = two_members(seed=7).predict(np.zeros((20_000, 2), np.float32), deterministic=False)
    again = two_members(seed=7).predict(np.zeros((20_000, 2), np.float32), deterministic=False)
    assert draws.tolist() == again.tolist()
    freq = np.bincount(draws, minlength=3) / len(draws)
    # mean probabilities 0.35 / 0.4 / 0.25; 20,000 draws: standard error < 0.0035
    np.testing.assert_allclose(freq, [0.35, 0.4, 0.25], atol=0.015)
    masked = two_members(seed=7).predict(
        np.zeros((1000, 2), np.float32), False, np.tile([True, False, True], (1000, 1))
    )
    assert 1 not in masked.tolist()


class OneDecision:
    """One-decision episodes on two windows; window ``k`` with action ``a`` costs
    ``(k + 1) * (a + 1)``; action 2 is masked."""

    objective = "avg_job_slowdown"
    nb_eval_windows = 2

    def reset(self, *, seed=None, options=None):
        self.k = options["window"]
        job = SimpleNamespace(subtime=0.0, start_time=0.0, finish_time=1.0)
        self.engine = SimpleNamespace(finished_jobs=[job])
        return np.zeros(2, np.float32), {"action_mask": np.array([True, True, False])}

    def step(self, action):
        info = {"objective": float((self.k + 1) * (action + 1))}
        return np.zeros(2, np.float32), 0.0, True, False, info


def test_ensemble_evaluates_as_a_model() -> None:
    # mean of A and B with action 2 masked: A 2/3, 1/3; B 1/6, 5/6 -> 5/12 vs 7/12: action 1,
    # costs 1 * 2 = 2 and 2 * 2 = 4 (mean 3); member A alone: action 0, costs 1 and 2
    results = ev.evaluate(
        OneDecision(),
        {
            "ensemble": ev.model_policy(two_members()),
            "A": ev.model_policy(PolicyEnsemble([constant_policy([0.6, 0.3, 0.1])], NAMES, 2)),
        },
    )
    by = {s.policy: s.mean_objective for s in ev.summarize(results)}
    assert by == {"ensemble": 3.0, "A": 1.5}
    assert math.isclose(ev.summarize(results)[0].median_objective, 3.0)


def test_cli_evaluates_an_ensemble_file(tmp_path) -> None:
    """``hdeeprm-evaluate --model`` and ``hdeeprm-launch -im`` take an ensemble file: an
    ensemble of one trained model twice decides as the model, so the rows are the same."""
    import csv

    from click.testing import CliRunner
    from rl_helpers import THESIS_DIR
    from test_ppo_cli import write_ppo_options

    from hdeeprm.cli.evaluate import main as evaluate_main
    from hdeeprm.cli.launch import main as launch_main

    runner = CliRunner()
    options = write_ppo_options(tmp_path)
    workload = str(THESIS_DIR / "workload.json")
    model = tmp_path / "ppo.pt"
    result = runner.invoke(launch_main, [str(options), "-cw", workload, "-om", str(model), "-q"])
    assert result.exit_code == 0, result.output
    ensemble = PolicyEnsemble.from_checkpoints([model, model]).save(tmp_path / "ens.pt")
    objectives = {}
    for name, path in (("model", model), ("ensemble", ensemble)):
        out = tmp_path / name
        args = [str(options), "-cw", workload, "--model", str(path), "-o", str(out), "-q"]
        result = runner.invoke(evaluate_main, [*args, "--no-pairs", "--no-random", "--no-plot"])
        assert result.exit_code == 0, result.output
        rows = list(csv.DictReader((out / "evaluation.csv").open()))
        objectives[name] = [(r["window"], r["objective"], r["steps"]) for r in rows]
    assert objectives["ensemble"] == objectives["model"]
    write_ppo_options(tmp_path, run="evaluate")
    result = runner.invoke(launch_main, [str(options), "-cw", workload, "-im", str(ensemble), "-q"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "evaluation.csv").is_file()


def test_quorum_vote_worked_by_hand(tmp_path) -> None:
    # three members' greedy actions: A 0 (0.6), B 1 (0.5), C 1 (0.7); votes 1, 2, 0
    a = constant_policy([0.6, 0.3, 0.1])
    b = constant_policy([0.1, 0.5, 0.4])
    c = constant_policy([0.2, 0.7, 0.1])
    two = PolicyEnsemble([a, b, c], NAMES, 2, quorum=2, fallback=2)
    three = PolicyEnsemble([a, b, c], NAMES, 2, quorum=3, fallback=2)
    # action 1 has 2 votes: taken with quorum 2; with quorum 3 no action has 3: fallback 2
    assert int(two.predict(OBS)) == 1
    assert int(three.predict(OBS)) == 2
    # the mean alone: (0.6+0.1+0.2)/3 = 0.3, (0.3+0.5+0.7)/3 = 0.5, 0.2: action 1
    assert int(PolicyEnsemble([a, b, c], NAMES, 2).predict(OBS)) == 1
    # action 1 masked: A votes 0, B 2 (0.4 > 0.1), C 0 (0.2 > 0.1): action 0 has 2 votes
    mask = np.array([True, False, True])
    assert int(two.predict(OBS, action_mask=mask)) == 0
    # fallback 2 masked and no quorum of 3: the mean's greedy among {0, 1}: 0.3 vs 0.5 -> 1
    assert int(three.predict(OBS, action_mask=np.array([True, True, False]))) == 1
    # a batch votes row by row; sampling ignores the quorum (it samples the mean)
    batch = np.zeros((4, 2), np.float32)
    assert three.predict(batch).tolist() == [2, 2, 2, 2]
    assert set(three.predict(np.zeros((200, 2), np.float32), deterministic=False)) == {0, 1, 2}
    # saved and loaded with its quorum and fallback
    again = load_policy(three.save(tmp_path / "vote.pt"))
    assert isinstance(again, PolicyEnsemble)
    assert (again.quorum, again.fallback) == (3, 2)
    assert int(again.predict(OBS)) == 2
    # an ensemble file without the keys (written before votes existed) acts on the mean
    state = two_members().state()
    del state["quorum"], state["fallback"]
    assert PolicyEnsemble.from_state(state).quorum is None


def test_quorum_vote_needs_a_valid_quorum_and_fallback() -> None:
    a = constant_policy([0.6, 0.3, 0.1])
    with pytest.raises(ValueError, match="both quorum and fallback"):
        PolicyEnsemble([a, a], NAMES, 2, quorum=2)
    with pytest.raises(ValueError, match="quorum must be 1..2"):
        PolicyEnsemble([a, a], NAMES, 2, quorum=3, fallback=0)
    with pytest.raises(ValueError, match="fallback must be an action index 0..2"):
        PolicyEnsemble([a, a], NAMES, 2, quorum=1, fallback=3)
