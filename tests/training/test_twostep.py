"""TwoStepPPO: CuSH's job selector and policy selector trained together on JobSelectionEnv.

The platform is the 4-core learning one (cores 0-1 at 4.0 GFLOPS, 2-3 at 4.4): a job placed
by ``low_power`` runs on slow cores, one placed by ``high_gflops`` on fast ones while they
are free, so the policy selector's reward (0 or -0.1) tells the two apart.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from rl_helpers import random_jobs, write_options, write_workload

from hdeeprm.environment import JobSelectionEnv
from hdeeprm.errors import InputError
from hdeeprm.training.twostep import KernelJobNet, TwoStepConfig, TwoStepPPO

POLICIES = ["low_power", "high_gflops"]


def _factories(tmp_path, n=2, jobs=None, **kwargs):
    options = write_options(tmp_path / "opt")
    workload = write_workload(tmp_path, jobs or random_jobs(40, seed=3))
    kwargs.setdefault("queue_slots", 8)
    return [
        (
            lambda i=i: JobSelectionEnv.from_options(
                options, tmp_path / f"run{i}", workload, **kwargs
            )
        )
        for i in range(n)
    ]


def _config(**kwargs) -> TwoStepConfig:
    base = {"num_envs": 2, "num_steps": 64, "num_minibatches": 2, "update_epochs": 2}
    return TwoStepConfig(**{**base, **kwargs})


def _weights(agent: TwoStepPPO) -> list[torch.Tensor]:
    nets = [agent.job_net] + ([agent.policy_net] if agent.policy_net is not None else [])
    return [t.clone() for net in nets for t in net.state_dict().values()]


def test_kernel_scores_a_job_the_same_in_any_slot() -> None:
    torch.manual_seed(0)
    net = KernelJobNet(slots=4, width=6, context=3, hidden=8, critic=8, nothing_bias=-3.0)
    job = torch.tensor([0.1, 0.2, 0.3, 0.0, 0.0, 1.0])
    other = torch.tensor([0.5, 0.1, 0.2, 0.0, 0.0, 1.0])
    context = torch.tensor([0.5, 0.4, 0.0])
    a = torch.cat([job, other, torch.zeros(12), context]).unsqueeze(0)
    b = torch.cat([torch.zeros(6), other, torch.zeros(6), job, context]).unsqueeze(0)
    la, lb = net.logits(a)[0], net.logits(b)[0]
    assert torch.allclose(la[0], lb[3]) and torch.allclose(la[1], lb[1])
    # Do nothing and the value see the set of jobs, not their slots.
    assert torch.allclose(la[4], lb[4]) and torch.allclose(net.value(a), net.value(b))
    assert la[4].item() == pytest.approx(-3.0, abs=0.1)  # the do-nothing prior


def test_slot_order_bias_breaks_ties_towards_the_earliest_slot() -> None:
    torch.manual_seed(0)
    plain = KernelJobNet(slots=4, width=6, context=3, hidden=8, critic=8, nothing_bias=-3.0)
    torch.manual_seed(0)
    ordered = KernelJobNet(4, 6, 3, 8, 8, -3.0, slot_order_bias=0.25)
    job = torch.tensor([0.0, 0.2, 0.3, 0.0, 0.0, 1.0])
    # the same job in slots 1 and 3 (a job array): equal scores without the bias
    obs = torch.cat([torch.zeros(6), job, torch.zeros(6), job, torch.tensor([0.5, 0.4, 0.0])])
    lp, lo = plain.logits(obs.unsqueeze(0))[0], ordered.logits(obs.unsqueeze(0))[0]
    assert lp[1].item() == lp[3].item()
    # with it, slot i loses 0.25 * i: slot 1 by 0.25, slot 3 by 0.75, do nothing untouched
    assert lo[1].item() == pytest.approx(lp[1].item() - 0.25, abs=1e-6)
    assert lo[3].item() == pytest.approx(lp[3].item() - 0.75, abs=1e-6)
    assert lo[4].item() == lp[4].item() and lo[1] > lo[3]
    # a constant, not a weight: checkpoints of both have the same keys
    assert plain.state_dict().keys() == ordered.state_dict().keys()


@pytest.mark.parametrize("policies", [None, POLICIES])
def test_same_seed_same_weights_and_save_load(tmp_path, policies) -> None:
    runs = []
    for k in range(2):
        agent = TwoStepPPO(_config(), _factories(tmp_path / str(k), policies=policies))
        agent.learn(256)
        runs.append(agent)
    a, b = runs
    assert all(torch.equal(x, y) for x, y in zip(_weights(a), _weights(b)))
    assert len(a.history) == 2 and a.history[-1]["steps"] == 256
    other = TwoStepPPO(_config(seed=1), _factories(tmp_path / "s1", policies=policies))
    other.learn(256)
    assert not all(torch.equal(x, y) for x, y in zip(_weights(a), _weights(other)))
    # Save and load: an act-only agent that acts alike.
    path = a.save(tmp_path / "agent.pt")
    loaded = TwoStepPPO.load(path)
    env = _factories(tmp_path / "eval", 1, policies=policies)[0]()
    env.reset(seed=4)
    while not env.finished:
        action = a.act(env)
        assert np.array_equal(np.asarray(action), np.asarray(loaded.act(env)))
        env.step(action)
    for agent in (a, b, other):
        agent.close()


def test_shared_vector_trains_as_sync(tmp_path) -> None:
    """Per-step infos (policy masks and rewards) travel with ``vector="shared"`` too: the same
    weights as in-process environments, with the two-step (MultiDiscrete) actions."""
    runs = []
    for k, vector in enumerate(["sync", "shared"]):
        agent = TwoStepPPO(_config(vector=vector), _factories(tmp_path / str(k), policies=POLICIES))
        agent.learn(128)
        agent.close()
        runs.append(_weights(agent))
    assert all(torch.equal(x, y) for x, y in zip(*runs))


def test_policy_selector_learns_the_fast_cores(tmp_path) -> None:
    # One-core jobs arriving slowly: a fast core is almost always free, so high_gflops earns
    # 0 and low_power -0.1. The policy selector starts uniform and must learn high_gflops.
    jobs = [
        (f"J{i}", 2.0 * i, 1, 4e9, {"req_time": 2.0, "mem": 10.0, "mem_bw": 1.0}) for i in range(30)
    ]
    agent = TwoStepPPO(
        _config(policy_learning_rate=3e-3, num_steps=128),
        _factories(tmp_path, jobs=jobs, policies=POLICIES),
    )
    agent.learn(1024)
    first, last = agent.history[0], agent.history[-1]
    assert first["policy_reward"] < -0.02  # about half the jobs on slow cores at first
    assert last["policy_reward"] > first["policy_reward"]
    env = _factories(tmp_path / "e", 1, jobs=jobs, policies=POLICIES)[0]()
    _, info = env.reset(seed=0)
    rewards = []
    while not env.finished:
        _, _, _, _, info = env.step(agent.act(env))
        if info["policy"] >= 0:
            rewards.append(info["policy_reward"])
    assert len(rewards) == 30 and max(rewards) == 0.0 and np.mean(rewards) > -0.02
    agent.close()


def test_one_policy_or_one_step_has_no_policy_selector(tmp_path) -> None:
    single = TwoStepPPO(_config(), _factories(tmp_path / "a", policies=["high_gflops"]))
    assert single.policy_net is None and single.two_step
    plain = TwoStepPPO(_config(), _factories(tmp_path / "b"))
    assert plain.policy_net is None and not plain.two_step
    plain.learn(128)
    assert plain.history[-1]["steps"] == 128 and "policy_reward" not in plain.history[-1]
    single.close()
    plain.close()


def test_bad_config_and_checkpoint_are_input_errors(tmp_path) -> None:
    with pytest.raises(InputError, match="num_minibatches"):
        TwoStepConfig(num_envs=2, num_steps=5, num_minibatches=4).validate()
    with pytest.raises(InputError, match="gamma"):
        TwoStepConfig(gamma=1.5).validate()
    with pytest.raises(InputError, match="not found"):
        TwoStepPPO.load(tmp_path / "missing.pt")
    junk = tmp_path / "junk.pt"
    torch.save({"format": "other"}, junk)
    with pytest.raises(InputError, match="two-step"):
        TwoStepPPO.load(junk)
    agent = TwoStepPPO(_config(), _factories(tmp_path / "a", policies=POLICIES))
    path = agent.save(tmp_path / "m.pt")
    agent.close()
    with pytest.raises(InputError, match="trained for"):
        TwoStepPPO.load(path, _factories(tmp_path / "b", queue_slots=4, policies=POLICIES))


def test_critic_warmup_fits_the_critic_alone_first(tmp_path) -> None:
    agent = TwoStepPPO(_config(critic_warmup=2), _factories(tmp_path))

    def split(net) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        state = net.state_dict()
        critic = [state[k].clone() for k in state if k.startswith("critic")]
        policy = [state[k].clone() for k in state if not k.startswith("critic")]
        return critic, policy

    critic0, policy0 = split(agent.job_net)
    agent.learn(256)  # two updates of 2 x 64 steps: the critic only
    assert agent.updates == 2
    critic2, policy2 = split(agent.job_net)
    assert all(torch.equal(a, b) for a, b in zip(policy0, policy2, strict=True))
    assert not all(torch.equal(a, b) for a, b in zip(critic0, critic2, strict=True))
    agent.learn(128)  # the third update fits the policy too
    _, policy3 = split(agent.job_net)
    assert not all(torch.equal(a, b) for a, b in zip(policy2, policy3, strict=True))
    agent.close()
    with pytest.raises(InputError, match="critic_warmup"):
        _config(critic_warmup=-1).validate()


def test_training_log_and_tensorboard(tmp_path) -> None:
    """With a run folder: ``training_log.csv`` with one row per update, and TensorBoard
    scalars with SB3's names for the job selector, ``hdeeprm/`` for the policy selector."""
    pytest.importorskip("tensorboard")
    from test_ppo import tensorboard_scalars

    from hdeeprm.training.twostep import TWOSTEP_LOG_COLUMNS

    run = tmp_path / "run"
    agent = TwoStepPPO(
        _config(), _factories(tmp_path, policies=POLICIES), run_dir=run, tensorboard=True
    )
    agent.learn(256)
    agent.close()
    lines = (run / "training_log.csv").read_text().splitlines()
    assert lines[0].split(",") == list(TWOSTEP_LOG_COLUMNS) and len(lines) == 3
    assert lines[2].split(",")[1] == "256"
    scalars = tensorboard_scalars(run / "tensorboard")
    assert {"train/value_loss", "train/policy_gradient_loss", "time/fps"} <= set(scalars)
    assert {"hdeeprm/policy_value_loss", "hdeeprm/policy_reward", "hdeeprm/do_nothing"} <= set(
        scalars
    )
    assert scalars["train/value_loss"] == [
        pytest.approx(r["job_value_loss"]) for r in agent.history
    ]
