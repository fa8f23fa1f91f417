"""CuSH's two-step agent: GPU observation, job-set episodes, and learning on the tiny platform.

The tiny GPU platform (tests/gpu_helpers.py) has nodes A, B, C of 2 cores each and 4, 2 and 0
GPUs (6 cores, 6 GPUs). With the default service-time model (compute 0.5, network 1.0):

* a network job of 2 cores + 5 GPUs needs at least 2 nodes and can use 3: depth-first packs
  it on 2 (spread 0, penalty 1.0: it runs twice its time), breadth-first spreads it over 3
  (spread 1, no penalty);
* a compute job of 2 cores + 2 GPUs fits on node A: depth-first there (spread 0, no penalty),
  breadth-first over 3 nodes (spread 1, penalty 0.5).

So the better policy depends on the job's workload type, which the observation shows.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from gpu_helpers import TINY

from hdeeprm.environment.job_pickers import CushPicker
from hdeeprm.scenarios.cush import CushScenario
from hdeeprm.scenarios.cush_agent import (
    CushEnvFactory,
    JobSetEpisodes,
    merged_jobsets,
    play_jobset,
    prepare_agent_inputs,
)
from hdeeprm.training.twostep import TwoStepConfig, TwoStepPPO
from hdeeprm.workload.model import JobSpec, Profile, Workload

REPO = Path(__file__).resolve().parents[2]
SIERRA = REPO / "platform_examples" / "cush_sierra.json"


def _jobset(jobs: list[tuple[str, float, int, int, str, float]]) -> Workload:
    """``(id, submit, cores, gpus, workload type, seconds)`` per job."""
    specs = [
        JobSpec(i, t, res, i, extra={"gpus": gpus, "workload_type": kind})
        for i, t, res, gpus, kind, _ in jobs
    ]
    profiles = {i: Profile(i, "delay", delay=sec, extra={"req_time": sec}) for i, *_, sec in jobs}
    return Workload(6, specs, profiles)


def _tiny(tmp_path: Path) -> tuple[CushScenario, Path]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    return CushScenario(path), path


def test_gpu_observation_by_hand(tmp_path: Path) -> None:
    scenario, platform = _tiny(tmp_path)
    # X: 1 core + 2 GPUs, network, 10 s; Y: 2 cores + 3 GPUs, compute, 5 s; both at 0.
    jobs = _jobset([("X", 0.0, 1, 2, "network", 10.0), ("Y", 0.0, 2, 3, "compute", 5.0)])
    inputs = prepare_agent_inputs(scenario, platform, [jobs], tmp_path / "run")
    env = CushEnvFactory(inputs, (jobs,), "eval", queue_slots=2)()
    # Per slot 6 + (GPUs / 6, network); cluster: 3 node types x 2, GPU types A and B, hidden.
    assert env.job_width == 8
    assert env.observation_space.shape == (2 * 8 + 3 * 2 + 2 + 1,)
    obs, _ = env.reset(options={"window": 0})
    slots = obs[:16].reshape(2, 8)
    # max_time 10 s, max_core 2: X = (0, 1, 0.5, ., ., fits, 2/6, 1), Y = (0, .5, 1, ..., 3/6, 0)
    assert slots[0, [0, 1, 2, 5]].tolist() == [0.0, 1.0, 0.5, 1.0]
    assert slots[0, 6:] == pytest.approx([2 / 6, 1.0])
    assert slots[1, [0, 1, 2, 5]].tolist() == [0.0, 0.5, 1.0, 1.0]
    assert slots[1, 6:] == pytest.approx([0.5, 0.0])
    assert obs[16:].tolist() == [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0]
    # X depth-first: 1 core and 2 GPUs of node A. Y (2 + 3) still fits: same instant.
    obs, _, done, _, info = env.step((0, 0))
    assert not done and info["time"] == 0.0
    (x,) = env.manager.running.values()
    assert len(x.gpu_alloc) == 2 and {env.manager.gpu_pool.gpu_node[g] for g in x.gpu_alloc} == {0}
    assert obs[:8].reshape(8)[6:] == pytest.approx([0.5, 0.0])  # Y now in slot 0
    # Cluster: free cores A 1/2, B 1, C 1 (memory all free); free GPUs A 2/4, B 2/2.
    assert obs[16:22][0::2].tolist() == [0.5, 1.0, 1.0]
    assert obs[22:24].tolist() == [0.5, 1.0]


def test_cpu_platforms_keep_their_observation(tmp_path: Path) -> None:
    from environment.test_job_selection import make_env

    env = make_env(tmp_path)
    assert env.job_width == 6 and env._cluster.nb_gpu_types == 0


def test_jobset_episodes_replay_the_scenario(tmp_path: Path) -> None:
    """An episode is a whole job set: a CuSH heuristic played in the environment gives the
    scenario runner's NTAT, wait and penalty exactly."""
    scenario = CushScenario(SIERRA, time_unit=10.0)
    sets = [scenario.jobset(seed) for seed in (10_000, 10_001)]
    inputs = prepare_agent_inputs(scenario, SIERRA, sets, tmp_path)
    env = CushEnvFactory(inputs, tuple(sets), "eval")()
    assert env.nb_eval_windows == 2
    for k, jobs in enumerate(sets):
        for p, name in enumerate(("DF", "BF")):
            picker = CushPicker("SJF")
            got = play_jobset(env, lambda e, pk=picker, p=p: (pk(e), p), k, 10.0)
            assert got == scenario.run(jobs, "SJF", name)
    # Train episodes draw among the sets; eval needs a window in range.
    episodes = JobSetEpisodes(sets, "train")
    firsts = {episodes.choose(np.random.default_rng(s), None)[0] for s in range(20)}
    assert firsts == {0, 1}
    with pytest.raises(ValueError, match="does not exist"):
        JobSetEpisodes(sets, "eval").choose(np.random.default_rng(0), 2)
    assert len(merged_jobsets(sets).jobs) == 40


def _locality_sets() -> tuple[Workload, ...]:
    """Jobs one at a time (each ends before the next arrives), network and compute mixed."""
    out = []
    for k in range(6):
        jobs = []
        for i in range(4):
            network = (i + k) % 2 == 0
            gpus = 5 if network else 2
            jobs.append((f"J{i}", 30.0 * i, 2, gpus, "network" if network else "compute", 10.0))
        out.append(_jobset(jobs))
    return tuple(out)


def _agent(tmp_path: Path, seed: int = 0) -> tuple[TwoStepPPO, CushEnvFactory]:
    scenario, platform = _tiny(tmp_path)
    sets = _locality_sets()
    inputs = prepare_agent_inputs(scenario, platform, sets, tmp_path / "run")
    config = TwoStepConfig(
        num_envs=2,
        num_steps=64,
        num_minibatches=2,
        update_epochs=4,
        seed=seed,
        policy_learning_rate=3e-3,
    )
    agent = TwoStepPPO(config, [CushEnvFactory(inputs, sets, "train") for _ in range(2)])
    return agent, CushEnvFactory(inputs, sets, "eval")


def test_policy_selector_learns_the_lower_penalty_policy(tmp_path: Path) -> None:
    agent, factory = _agent(tmp_path)
    agent.learn(1024)
    first, last = agent.history[0], agent.history[-1]
    # At first about half the placements pay a penalty (mean reward well below 0).
    assert first["policy_reward"] < -0.15 and last["policy_reward"] > first["policy_reward"]
    env = factory()
    chosen: dict[str, set[int]] = {"network": set(), "compute": set()}
    for k in range(6):
        env.reset(options={"window": k})
        while not env.finished:
            slot, policy = agent.act(env)
            kind = env.visible_jobs[slot].workload_type
            _, _, _, _, info = env.step((slot, policy))
            chosen[kind].add(info["policy"])
            assert info["policy_reward"] == 0.0  # no penalty paid
    assert chosen == {"network": {1}, "compute": {0}}  # breadth-first, depth-first
    agent.close()


def test_same_seed_same_agent(tmp_path: Path) -> None:
    weights = []
    for k in range(2):
        agent, _ = _agent(tmp_path / str(k))
        agent.learn(128)
        weights.append([t.clone() for t in agent.policy_net.state_dict().values()])
        weights[-1] += [t.clone() for t in agent.job_net.state_dict().values()]
        agent.close()
    assert all(torch.equal(a, b) for a, b in zip(*weights))


def test_warm_start_clones_sjf_into_the_job_selector(tmp_path: Path) -> None:
    """SJF's job choices, placed breadth-first, recorded on two training sets replay SJF BF
    exactly; cloned, they set the job selector only (the policy selector stays as built)."""
    from hdeeprm.training.cloning import agreement, clone_job_selector, picker_demonstrations

    scenario = CushScenario(SIERRA, time_unit=10.0)
    sets = tuple(scenario.jobset(seed) for seed in (0, 1))
    inputs = prepare_agent_inputs(scenario, SIERRA, sets, tmp_path)
    env = CushEnvFactory(inputs, sets, "eval")()
    with pytest.raises(ValueError, match="needs the policy"):
        picker_demonstrations(env, CushPicker("SJF"), (), windows=[0])
    demos = picker_demonstrations(env, CushPicker("SJF"), (), policy=1, windows=[0, 1])
    assert len(demos) == 40 and not (demos.actions == env.do_nothing).any()  # one per job
    for k, jobs in enumerate(sets):  # replaying the recorded choices is SJF BF
        recorded = iter(demos.actions[20 * k : 20 * k + 20].tolist())
        got = play_jobset(env, lambda e, r=recorded: (next(r), 1), k, 10.0)
        assert got == scenario.run(jobs, "SJF", "BF")
    config = TwoStepConfig(num_envs=1, num_steps=64, seed=0)
    agents = [TwoStepPPO(config, [CushEnvFactory(inputs, sets, "train")]) for _ in range(2)]
    policy_before = [t.clone() for t in agents[0].policy_net.state_dict().values()]
    for agent in agents:
        losses = clone_job_selector(agent, demos, epochs=100, batch_size=16, learning_rate=1e-2)
        assert losses[-1] < 0.2 * losses[0]
    assert agreement(agents[0], demos) > 0.9
    after = list(agents[0].policy_net.state_dict().values())
    assert all(torch.equal(a, b) for a, b in zip(policy_before, after))
    # same agent, demonstrations and arguments: the same job selector bit for bit
    pairs = zip(*(a.job_net.state_dict().values() for a in agents))
    assert all(torch.equal(a, b) for a, b in pairs)
    for agent in agents:
        agent.close()
