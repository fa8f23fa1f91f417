"""Pinned results of both on-policy trainers: short seeded runs must give these weights,
optimiser states and log rows bit for bit.

A digest changes when the numbers a run produces change (another sampling order, another
loss, another schedule); a pure restructuring of the trainers leaves them all equal. Timing
columns (``steps_per_s``) are left out: they are the only non-deterministic values.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from rl_helpers import THESIS_DIR, random_jobs, write_options, write_workload
from test_ppo import Bandit

from hdeeprm.environment import HeterogeneousClusterEnv, JobSelectionEnv
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import load_options
from hdeeprm.training.ppo import PPOConfig, PPOTrainer, inputs_factories
from hdeeprm.training.twostep import TwoStepConfig, TwoStepPPO

#: Values that depend on the machine's speed, not on the run.
TIMING = {"steps_per_s", "rollout_s"}
#: Pinned values of a two-step history row (rows may hold more).
TWOSTEP_KEYS = (
    "update",
    "steps",
    "episodes",
    "objective",
    "do_nothing",
    *(f"{net}_{k}" for net in ("job", "policy") for k in ("policy_loss", "value_loss")),
    *(f"{net}_{k}" for net in ("job", "policy") for k in ("entropy", "approx_kl")),
    "policy_reward",
)


def _feed(h: Any, value: Any) -> None:
    """Hash ``value`` by content: tensors by dtype, shape and bytes; containers recursively
    (dict keys sorted, so only values matter)."""
    if isinstance(value, torch.Tensor):
        t = value.detach().cpu().contiguous()
        h.update(f"T{t.dtype}{tuple(t.shape)}".encode())
        h.update(t.numpy().tobytes() if t.numel() else b"")
    elif isinstance(value, dict):
        h.update(b"{")
        for key in sorted(value, key=str):
            h.update(repr(key).encode())
            _feed(h, value[key])
        h.update(b"}")
    elif isinstance(value, (list, tuple)):
        h.update(b"[")
        for item in value:
            _feed(h, item)
        h.update(b"]")
    elif isinstance(value, float) and math.isnan(value):
        h.update(b"nan")
    else:
        h.update(repr(value).encode())


def digest(value: Any) -> str:
    h = hashlib.sha256()
    _feed(h, value)
    return h.hexdigest()[:16]


def ppo_digests(trainer: PPOTrainer, run_dir: Path) -> dict[str, str]:
    lines = (run_dir / "training_log.csv").read_text().splitlines()
    header = lines[0].split(",")
    keep = [i for i, c in enumerate(header) if c not in TIMING]
    rows = [[line.split(",")[i] for i in keep] for line in lines]
    out = {
        "model": digest(trainer.model.state_dict()),
        "optimizer": digest(trainer.optimizer.state_dict()),
        "counters": digest(
            [trainer.global_step, trainer.updates, trainer.episodes, trainer.ret_rms.state()]
        ),
        "log": digest(rows),
    }
    validation = run_dir / "validation_log.csv"
    if validation.exists():
        out["validation"] = digest(validation.read_text())
    return out


def twostep_digests(agent: TwoStepPPO) -> dict[str, str]:
    rows = [{k: row[k] for k in TWOSTEP_KEYS if k in row} for row in agent.history]
    nets = [agent.job_net.state_dict(), agent.job_opt.state_dict()]
    if agent.policy_net is not None:
        nets += [agent.policy_net.state_dict(), agent.policy_opt.state_dict()]
    return {
        "model": digest(nets),
        "counters": digest(
            [agent.global_step, agent.updates, agent.episodes, agent.ret_rms.state()]
        ),
        "log": digest(rows),
    }


@pytest.fixture(scope="module")
def thesis_inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("thesis")
    options = load_options(THESIS_DIR / "options.json")
    return prepare_inputs(options, folder, custom_workload=THESIS_DIR / "workload.json")


PPO_PINS = {
    "thesis": {
        "counters": "1ce27486770c9725",
        "log": "293a4bcba93aeb0c",
        "model": "8e309a73a1a61e16",
        "optimizer": "de86031100c735ab",
        "validation": "8d767b15bfc6ee0f",
    },
    "bandit": {
        "counters": "c2764b122745ab4d",
        "log": "4da13e6b58196e23",
        "model": "ed9014941558e40a",
        "optimizer": "7750b07b784c7cdd",
    },
}


def test_ppo_thesis_run_is_pinned(thesis_inputs, tmp_path) -> None:
    """Thesis 5.4 with a prior, observation and reward normalisation, validation every two
    updates."""
    config = PPOConfig(
        num_envs=2,
        num_steps=32,
        num_minibatches=4,
        update_epochs=3,
        hidden=16,
        seed=1,
        learning_rate=1e-3,
        prior_action="shortest-low_power",
        eval_every=2,
    )
    trainer = PPOTrainer(
        config,
        inputs_factories(thesis_inputs, 2),
        run_dir=tmp_path,
        tensorboard=False,
        val_env=HeterogeneousClusterEnv(inputs=thesis_inputs, split="all"),
    )
    trainer.learn(384)
    trainer.close()
    assert ppo_digests(trainer, tmp_path) == PPO_PINS["thesis"]


def test_ppo_bandit_run_is_pinned(tmp_path) -> None:
    """Masked actions, no normalisation, unclipped value loss, a fixed step size and an early
    stop on the approximate KL."""
    config = PPOConfig(
        num_envs=2,
        num_steps=32,
        num_minibatches=2,
        update_epochs=4,
        hidden=8,
        seed=3,
        learning_rate=0.01,
        anneal_lr=False,
        clip_vloss=False,
        normalize_observation=False,
        normalize_reward=False,
        target_kl=0.005,
    )
    trainer = PPOTrainer(config, [Bandit, Bandit], run_dir=tmp_path, tensorboard=False)
    trainer.learn(320)
    trainer.close()
    assert ppo_digests(trainer, tmp_path) == PPO_PINS["bandit"]


TWOSTEP_PINS = {
    "two-step": {
        "counters": "a0fde17b24653554",
        "log": "98ffd74911d1071c",
        "model": "3ab4cbbc0d53a49a",
    },
    "one-step": {
        "counters": "a88b358cd346c80a",
        "log": "b8d48e64414bf1eb",
        "model": "352958a48ab0bc68",
    },
}


def _job_factories(tmp_path: Path, policies: list[str] | None) -> list[Any]:
    options = write_options(tmp_path / "opt")
    workload = write_workload(tmp_path, random_jobs(40, seed=3))
    return [
        (
            lambda i=i: JobSelectionEnv.from_options(
                options, tmp_path / f"run{i}", workload, queue_slots=8, policies=policies
            )
        )
        for i in range(2)
    ]


@pytest.mark.parametrize(
    ("name", "policies", "extra"),
    [
        ("two-step", ["low_power", "high_gflops"], {"critic_warmup": 1, "slot_order_bias": 0.5}),
        ("one-step", None, {"ent_coef": 0.01, "normalize_reward": False}),
    ],
)
def test_twostep_run_is_pinned(tmp_path, name, policies, extra) -> None:
    config = TwoStepConfig(num_envs=2, num_steps=64, num_minibatches=2, update_epochs=2, **extra)
    agent = TwoStepPPO(config, _job_factories(tmp_path, policies))
    agent.learn(384)
    agent.close()
    assert twostep_digests(agent) == TWOSTEP_PINS[name]


def test_digest_reads_content_only() -> None:
    a = {"w": torch.ones(2), "n": [1, 2.5, float("nan")]}
    b = {"n": [1, 2.5, float("nan")], "w": torch.ones(2)}
    assert digest(a) == digest(b)
    assert digest(a) != digest({**a, "w": torch.ones(2, dtype=torch.float64)})
    assert digest(np.float64(1.0).item()) == digest(1.0)
