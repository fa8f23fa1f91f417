"""Sweeps and vector environments on a local Ray instance (skipped when Ray is not installed).

One Ray instance with 2 CPUs serves the whole module and is shut down at its end.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from gymnasium.vector import SyncVectorEnv
from sweep_helpers import deterministic, folder_files, synthetic_sweep

from hdeeprm.sweep import RayBackend, SerialBackend, load_sweep, results_frame, run_sweep

ray = pytest.importorskip("ray")

REPO = Path(__file__).resolve().parents[2]
LEARNING = REPO / "thesis_experiments" / "learning"


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    from hdeeprm._ray import ensure_ray

    owned = ensure_ray(num_cpus=2)
    try:
        yield
    finally:
        if owned:
            ray.shutdown()


def test_sweep_on_ray_equals_serial(tmp_path: Path, local_ray: None) -> None:
    path = synthetic_sweep(tmp_path, nb_jobs=40)
    serial = load_sweep(path, tmp_path / "serial")
    on_ray = load_sweep(path, tmp_path / "ray")
    backend = RayBackend(workers=2)
    assert backend.workers == 2
    a = results_frame(serial, run_sweep(serial, SerialBackend()).records)
    b = results_frame(on_ray, run_sweep(on_ray, backend).records)
    assert (b["status"] == "done").all(), b["error"].tolist()
    pd.testing.assert_frame_equal(deterministic(a), deterministic(b))
    assert folder_files(tmp_path / "serial") == folder_files(tmp_path / "ray")
    assert ray.is_initialized()  # a backend that joined Ray leaves it running


def _env_fns(tmp_path: Path, n: int) -> list:
    from hdeeprm.environment.vector.ray import hdeeprm_env_fns

    return hdeeprm_env_fns(
        LEARNING / "options.json",
        n,
        output_dir=tmp_path / "env",
        custom_workload=LEARNING / "workload.json",
    )


def test_ray_vector_env_equals_sync_vector_env(tmp_path: Path, local_ray: None) -> None:
    """Same seeds and actions: same observations, rewards, ends and infos, bit for bit,
    across episode ends (next-step autoreset)."""
    from hdeeprm.environment.vector.ray import RayVectorEnv

    fns = _env_fns(tmp_path, 3)
    remote = RayVectorEnv(fns, envs_per_actor=2)  # actors of 2 and 1 environments
    local = SyncVectorEnv(fns)
    try:
        assert remote.num_actors == 2 and remote.num_envs == 3
        assert remote.observation_space == local.observation_space
        assert remote.action_space == local.action_space
        obs_r, info_r = remote.reset(seed=11)
        obs_l, info_l = local.reset(seed=11)
        np.testing.assert_array_equal(obs_r, obs_l)
        rng = np.random.default_rng(0)
        ended = 0
        for _ in range(120):
            actions = rng.integers(0, remote.single_action_space.n, 3)
            got, want = remote.step(actions), local.step(actions)
            for a, b in zip(got[:4], want[:4]):
                np.testing.assert_array_equal(a, b)
            assert got[4].keys() == want[4].keys()
            for key in want[4]:
                np.testing.assert_array_equal(got[4][key], want[4][key])
            ended += int(want[2].sum())
        assert ended >= 3  # several episodes ended and were reset in the actors
        assert remote.get_attr("steps") == local.get_attr("steps")
        assert remote.call("reward") == local.call("reward")
        # A partial reset touches only the masked environment.
        mask = np.array([False, False, True])
        obs_r, _ = remote.reset(seed=[None, None, 5], options={"reset_mask": mask})
        obs_l, _ = local.reset(seed=[None, None, 5], options={"reset_mask": mask.copy()})
        np.testing.assert_array_equal(obs_r, obs_l)
    finally:
        remote.close()
        local.close()
    assert remote.closed


def test_step_async_then_wait(tmp_path: Path, local_ray: None) -> None:
    from hdeeprm.environment.vector.ray import RayVectorEnv

    env = RayVectorEnv(_env_fns(tmp_path, 2), envs_per_actor=1)
    try:
        env.reset(seed=0)
        env.step_async(np.array([0, 1]))
        with pytest.raises(RuntimeError, match="twice"):
            env.step_async(np.array([0, 1]))
        obs, rewards, terminated, truncated, _ = env.step_wait()
        assert obs.shape == (2, env.single_observation_space.shape[0])
        assert rewards.dtype == np.float64 and terminated.dtype == np.bool_
        assert not truncated.any()
    finally:
        env.close()


def test_cli_ray_flag_before_the_file(tmp_path: Path, local_ray: None) -> None:
    """``hdeeprm-sweep --ray sweep.json`` runs on Ray (the file is not taken as an address)."""
    from click.testing import CliRunner

    from hdeeprm.cli.sweep import main

    path = synthetic_sweep(tmp_path, nb_jobs=20)
    result = CliRunner().invoke(main, ["--ray", str(path), "--no-plots"])
    assert result.exit_code == 0, result.output
    assert "backend ray with 2 worker(s)" in result.output
    table = pd.read_csv(tmp_path / "out" / "results.csv")
    assert (table["status"] == "done").all() and len(table) == 6


def test_more_actors_than_cpus_is_an_error_not_a_hang(tmp_path: Path, local_ray: None) -> None:
    from hdeeprm.environment.vector.ray import RayVectorEnv

    with pytest.raises(ValueError, match=r"3 actor\(s\) x 1 CPU need more than the cluster's 2"):
        RayVectorEnv(_env_fns(tmp_path, 3), envs_per_actor=1)


def test_same_step_autoreset_carries_final_observations(tmp_path: Path, local_ray: None) -> None:
    """``SameStep`` mode: the ended episode's final observation and info come back in the
    infos of the step that ended it, at the right environment index, as in SyncVectorEnv."""
    from hdeeprm.environment.vector.ray import RayVectorEnv

    fns = _env_fns(tmp_path, 3)
    remote = RayVectorEnv(fns, envs_per_actor=2, autoreset_mode="SameStep")
    local = SyncVectorEnv(fns, autoreset_mode="SameStep")
    try:
        remote.reset(seed=4)
        local.reset(seed=4)
        rng = np.random.default_rng(1)
        for _ in range(10):
            actions = rng.integers(0, remote.single_action_space.n, 3)
            got, want = remote.step(actions), local.step(actions)
            np.testing.assert_array_equal(got[0], want[0])
            np.testing.assert_array_equal(got[2], want[2])
            if want[2].any():
                break
        assert want[2].any()
        np.testing.assert_array_equal(got[4]["_final_obs"], want[4]["_final_obs"])
        for i in np.flatnonzero(want[4]["_final_obs"]):
            np.testing.assert_array_equal(got[4]["final_obs"][i], want[4]["final_obs"][i])
        assert set(got[4]["final_info"]) == set(want[4]["final_info"])
        np.testing.assert_array_equal(
            got[4]["final_info"]["objective"], want[4]["final_info"]["objective"]
        )
    finally:
        remote.close()
        local.close()


def test_ppo_trainer_on_ray_actors_learns_as_in_process(tmp_path: Path, local_ray: None) -> None:
    """The project's PPO trainer collects its rollouts from Ray actors (two environments in
    each of two actors, thesis 5.4 scenario) and ends with the same weights, bit for bit, as
    with the same environments in this process."""
    import torch

    from hdeeprm.training.ppo import PPOConfig, PPOTrainer

    def weights(steps: int = 128, **kw: object) -> dict:
        config = PPOConfig(num_envs=4, num_steps=16, num_minibatches=2, hidden=8, seed=3, **kw)
        trainer = PPOTrainer(config, _env_fns(tmp_path, 4))
        if steps:
            trainer.learn(steps)
        trainer.close()
        return trainer.model.state_dict()

    local, remote = weights(vector="sync"), weights(vector="ray", envs_per_actor=2)
    untrained = weights(0, vector="sync")
    assert any(not torch.equal(local[key], untrained[key]) for key in local)  # it did learn
    for key in local:
        assert torch.equal(local[key], remote[key]), key
