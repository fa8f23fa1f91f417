"""The environments as Stable-Baselines3 and sb3-contrib take them: by id, in subprocesses."""

from __future__ import annotations

import numpy as np
import pytest
from rl_helpers import random_jobs, write_options, write_workload

import hdeeprm.environment as henv

sb3 = pytest.importorskip("stable_baselines3")
sb3_contrib = pytest.importorskip("sb3_contrib")
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402
from stable_baselines3.common.vec_env import SubprocVecEnv  # noqa: E402

pytestmark = pytest.mark.slow

#: Rollout length per worker: 4 workers x 128 = 512 steps per update.
N_STEPS = 128
TIMESTEPS = 4096


@pytest.fixture
def env_kwargs(tmp_path) -> dict[str, str]:
    """A 4-core platform and 20 jobs with a void action (short episodes, many resets)."""
    options = write_options(tmp_path / "opt", observation="small", void=True)
    workload = write_workload(tmp_path / "wl", random_jobs(20, seed=1))
    return {"options": str(options), "custom_workload": str(workload)}


def subproc_envs(env_id: str, env_kwargs: dict[str, str], **vec_env_kwargs: str):
    # make_vec_env asks for render_mode="rgb_array" unless env_kwargs name one.
    return make_vec_env(
        env_id,
        n_envs=4,
        seed=0,
        env_kwargs=env_kwargs,
        vec_env_cls=SubprocVecEnv,
        vec_env_kwargs=vec_env_kwargs,
    )


def test_ppo_learns_on_four_subprocess_workers_built_by_id(env_kwargs) -> None:
    # SubprocVecEnv's default start method is a forkserver: its workers know the ids because
    # importing hdeeprm.environment put it in the server's preload list.
    venv = subproc_envs(henv.ENV_ID, env_kwargs)
    try:
        assert venv.num_envs == 4 and venv.render_mode == "rgb_array"
        venv.reset()
        # The learning platform: one node of 4 cores, 4 x 4 pixels each.
        assert [image.shape for image in venv.get_images()] == [(4, 16, 3)] * 4
        model = sb3.PPO(
            "MlpPolicy", venv, n_steps=N_STEPS, batch_size=128, n_epochs=2, seed=0, device="cpu"
        )
        model.learn(total_timesteps=TIMESTEPS)
        assert model.num_timesteps >= TIMESTEPS
        actions, _ = model.predict(venv.reset(), deterministic=True)
        assert actions.shape == (4,)
    finally:
        venv.close()


def test_maskable_ppo_never_takes_a_masked_action(env_kwargs) -> None:
    from sb3_contrib.common.maskable.utils import get_action_masks

    venv = subproc_envs(henv.ENV_ID, env_kwargs)
    try:
        model = sb3_contrib.MaskablePPO(
            "MlpPolicy", venv, n_steps=N_STEPS, batch_size=128, n_epochs=2, seed=0, device="cpu"
        )
        model.learn(total_timesteps=TIMESTEPS)
        obs = venv.reset()
        for _ in range(50):
            masks = get_action_masks(venv)
            actions, _ = model.predict(obs, action_masks=masks, deterministic=False)
            assert masks[np.arange(4), actions].all()
            obs, _, _, _ = venv.step(actions)
    finally:
        venv.close()


def test_spawned_workers_resolve_the_module_qualified_id(env_kwargs) -> None:
    # A spawned worker imports only what it unpickles: the id names the module to import.
    venv = subproc_envs(f"hdeeprm.environment:{henv.ENV_ID}", env_kwargs, start_method="spawn")
    try:
        assert venv.reset().shape == (4, 24)
    finally:
        venv.close()
