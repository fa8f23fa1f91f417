"""SharedMemoryVectorEnv: the same steps as Gymnasium's SyncVectorEnv whatever the number of
workers, both autoreset modes, info contents, call/get_attr/set_attr, errors naming the
environment, and a real hdeeprm environment stepped in workers."""

from __future__ import annotations

import functools
import os
import signal

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from rl_helpers import THESIS_DIR

from hdeeprm.environment.vector import SharedMemoryVectorEnv, caller_share, split_groups
from hdeeprm.errors import VectorEnvError


class Countdown(gym.Env):
    """Episodes of 2-5 steps (drawn from ``np_random``); the observation is the step and a
    random number; action ``a`` pays ``a * step``; odd actions are masked at odd steps; the
    last step's info has ``objective`` (the episode's return). ``fail_at`` makes step number
    ``fail_at`` raise."""

    observation_space = spaces.Box(0.0, 10.0, (2,), np.float32)
    action_space = spaces.Discrete(4)

    def __init__(self, fail_at: int | None = None) -> None:
        self.fail_at = fail_at
        self.label = "countdown"
        self.t = self.length = 0
        self.total = 0.0
        self.calls = 0

    def _obs(self) -> np.ndarray:
        return np.array([self.t, self.np_random.random()], np.float32)

    def _info(self) -> dict:
        mask = np.ones(4, bool)
        if self.t % 2:
            mask[1::2] = False
        return {"action_mask": mask, "t": self.t}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t, self.total = 0, 0.0
        self.length = int(self.np_random.integers(2, 6))
        return self._obs(), self._info()

    def step(self, action):
        self.calls += 1
        if self.fail_at is not None and self.calls == self.fail_at:
            raise RuntimeError(f"boom at call {self.calls}")
        self.t += 1
        reward = float(int(action) * self.t)
        self.total += reward
        done = self.t >= self.length
        info = self._info()
        if done:
            info["objective"] = self.total
        return self._obs(), reward, done, False, info

    def twice(self, x: int) -> int:
        return 2 * x


def factories(n: int, **kw) -> list:
    return [functools.partial(Countdown, **kw) for _ in range(n)]


def play(envs: gym.vector.VectorEnv, steps: int = 40) -> list:
    """Everything a trainer reads, for ``steps`` steps of fixed pseudo-random allowed actions."""
    rng = np.random.default_rng(7)
    obs, info = envs.reset(seed=11)
    out = [obs, info["action_mask"]]
    for _ in range(steps):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in info["action_mask"]])
        obs, reward, term, trunc, info = envs.step(actions)
        out += [obs, reward, term, trunc, info["action_mask"], info["_action_mask"]]
        if "final_info" in info:
            final = info["final_info"]
            out += [final["objective"], final["_objective"], info["_final_obs"]]
            out += [info["final_obs"][i] for i in np.flatnonzero(info["_final_obs"])]
        if "objective" in info:  # next_step: the last step's own info
            out += [info["objective"], info["_objective"]]
    envs.close()
    return out


def assert_same(a: list, b: list) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
        assert np.asarray(x).dtype == np.asarray(y).dtype


def test_groups_split_the_environments() -> None:
    # 4 environments, 1 worker: 2 in the calling process, 2 in the worker
    assert split_groups(4, 1, None) == [range(0, 2), range(2, 4)]
    assert split_groups(5, 1, None) == [range(0, 2), range(2, 5)]
    assert split_groups(4, 3, None) == [range(0, 1), range(1, 2), range(2, 3), range(3, 4)]
    assert split_groups(5, 2, 0) == [range(0, 0), range(0, 3), range(3, 5)]
    assert split_groups(3, 0, None) == [range(0, 3)]


def test_caller_share_balances_a_trainer_against_the_workers() -> None:
    # no work of its own: an even share, rounded down
    assert [caller_share(n, 1) for n in (2, 4, 5)] == [1, 2, 2]
    # a trainer costing 0.4 environment decisions per decision, 1 worker: the caller's load
    # k + 0.4 n against the worker's n - k; 4 environments: k = 1 gives 2.6 against 3
    # (k = 2: 3.6 against 2); 8: k = 2 gives 5.2 against 6 (k = 3: 6.2 against 5)
    assert [caller_share(n, 1, 0.4) for n in (2, 4, 6, 8)] == [1, 1, 2, 2]
    # 2 workers for 4 environments: the caller only trains (1.6 against 2 per worker)
    assert caller_share(4, 2, 0.4) == 0
    assert caller_share(3, 0, 0.4) == 3


@pytest.mark.parametrize("mode", [AutoresetMode.SAME_STEP, AutoresetMode.NEXT_STEP])
def test_same_steps_as_sync_whatever_the_workers(mode) -> None:
    reference = play(SyncVectorEnv(factories(4), autoreset_mode=mode))
    for workers, in_main in [(0, None), (1, None), (2, 0), (3, None)]:
        envs = SharedMemoryVectorEnv(
            factories(4), num_workers=workers, in_main=in_main, autoreset_mode=mode
        )
        assert envs.num_workers == workers and len(envs.processes) == workers
        assert envs.metadata["autoreset_mode"] is mode
        assert_same(play(envs), reference)


def test_full_info_is_gymnasiums_info() -> None:
    mode = AutoresetMode.SAME_STEP
    sync = SyncVectorEnv(factories(3), autoreset_mode=mode)
    shared = SharedMemoryVectorEnv(factories(3), num_workers=1, autoreset_mode=mode, full_info=True)
    rng = np.random.default_rng(0)
    infos = [sync.reset(seed=3)[1], shared.reset(seed=3)[1]]
    for _ in range(12):
        actions = rng.integers(0, 4, 3)
        a, b = sync.step(actions)[4], shared.step(actions)[4]
        assert set(a) == set(b)
        for key in a:
            if key in ("final_info",):
                for sub in a[key]:
                    np.testing.assert_array_equal(a[key][sub], b[key][sub])
            elif key == "final_obs":
                for x, y in zip(a[key], b[key]):
                    np.testing.assert_array_equal(x, y)
            else:
                np.testing.assert_array_equal(a[key], b[key])
    assert set(infos[0]) == set(infos[1]) == {"action_mask", "_action_mask", "t", "_t"}
    sync.close()
    shared.close()


def test_default_info_has_the_mask_every_step_and_the_rest_at_episode_ends() -> None:
    envs = SharedMemoryVectorEnv(factories(2), num_workers=1, autoreset_mode="same_step")
    _, info = envs.reset(seed=0)
    assert set(info) == {"action_mask", "_action_mask", "t", "_t"}  # resets: whole infos
    seen_final = False
    for _ in range(6):
        _, _, term, _, info = envs.step(np.zeros(2, np.int64))
        assert info["action_mask"].shape == (2, 4) and info["_action_mask"].all()
        if term.any():
            seen_final = True
            assert set(info) == {
                "action_mask",
                "_action_mask",
                "final_obs",
                "_final_obs",
                "final_info",
                "_final_info",
            }
            assert np.array_equal(info["_final_info"], term)
        else:
            assert set(info) == {"action_mask", "_action_mask"}
    assert seen_final
    envs.close()


def test_call_get_attr_set_attr_and_reset_mask() -> None:
    envs = SharedMemoryVectorEnv(factories(3), num_workers=2, in_main=1)
    envs.reset(seed=0)
    assert envs.get_attr("label") == ("countdown",) * 3
    assert envs.call("twice", 21) == (42, 42, 42)
    envs.set_attr("label", ["a", "b", "c"])
    assert envs.get_attr("label") == ("a", "b", "c")
    envs.step(np.zeros(3, np.int64))
    obs, info = envs.reset(options={"reset_mask": np.array([False, True, False])})
    assert obs[1, 0] == 0.0  # environment 1 restarted
    assert np.array_equal(info["_t"], [False, True, False])
    with pytest.raises(ValueError, match="reset_mask"):
        envs.reset(options={"reset_mask": np.zeros(3, bool)})
    envs.close()
    assert envs.closed
    with pytest.raises(RuntimeError, match="closed"):
        envs.step(np.zeros(3, np.int64))


def test_errors_name_the_environment_its_process_and_the_method() -> None:
    fns = factories(3) + [functools.partial(Countdown, fail_at=2)]
    envs = SharedMemoryVectorEnv(fns, num_workers=1)  # environment 3 in the worker
    envs.reset(seed=0)
    envs.step(np.zeros(4, np.int64))
    with pytest.raises(VectorEnvError) as err:
        envs.step(np.zeros(4, np.int64))
    assert str(err.value) == (
        "environment 3 (worker process 1) raised RuntimeError in step: boom at call 2"
    )
    assert (err.value.env, err.value.worker, err.value.method) == (3, 1, "step")
    assert "boom at call 2" in err.value.remote_traceback
    envs.close()

    fns = [functools.partial(Countdown, fail_at=1)] + factories(1)
    envs = SharedMemoryVectorEnv(fns, num_workers=1)  # environment 0 in this process
    envs.reset(seed=0)
    with pytest.raises(VectorEnvError, match=r"environment 0 \(the calling process\)") as err:
        envs.step(np.zeros(2, np.int64))
    assert isinstance(err.value.__cause__, RuntimeError)
    envs.close()


def broken_factory() -> gym.Env:
    raise ValueError("no such options file")


def test_a_failing_factory_and_a_dead_worker_are_reported() -> None:
    with pytest.raises(VectorEnvError, match=r"environment 2 .* in __init__ \(the factory\): no"):
        SharedMemoryVectorEnv(factories(2) + [broken_factory], num_workers=1)
    envs = SharedMemoryVectorEnv(factories(2), num_workers=1)
    envs.reset(seed=0)
    os.kill(envs.processes[0].pid, signal.SIGKILL)
    envs.processes[0].join()
    with pytest.raises(VectorEnvError, match=r"worker process 1 \(environments 1-1\) died"):
        envs.step(np.zeros(2, np.int64))
    envs.close()


def test_spawned_workers_with_picklable_factories() -> None:
    reference = play(SyncVectorEnv(factories(2), autoreset_mode=AutoresetMode.SAME_STEP), 10)
    envs = SharedMemoryVectorEnv(
        factories(2), num_workers=1, autoreset_mode="same_step", context="spawn"
    )
    assert_same(play(envs, steps=10), reference)


def test_hdeeprm_environment_in_workers_steps_as_in_process(tmp_path) -> None:
    from hdeeprm.inputs import prepare_inputs
    from hdeeprm.options import load_options
    from hdeeprm.training.ppo import inputs_factories

    options = load_options(THESIS_DIR / "options.json")
    inputs = prepare_inputs(options, tmp_path, custom_workload=THESIS_DIR / "workload.json")
    mode = AutoresetMode.SAME_STEP
    reference = play(SyncVectorEnv(inputs_factories(inputs, 3), autoreset_mode=mode), 30)
    shared = SharedMemoryVectorEnv(inputs_factories(inputs, 3), num_workers=2, autoreset_mode=mode)
    assert shared.get_attr("action_names")[2] == shared.get_attr("action_names")[0]
    assert_same(play(shared, 30), reference)
