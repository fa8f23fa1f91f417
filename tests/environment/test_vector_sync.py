"""FastInfoSyncVectorEnv: the same ``info`` as Gymnasium's ``_add_info`` (keys, order, dtypes,
values, masks), on random infos and on whole vector steps with autoresets."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from hypothesis import given, settings
from hypothesis import strategies as st
from test_vector import Countdown, factories

from hdeeprm.environment.vector.sync import FastInfoSyncVectorEnv


def assert_same_info(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert list(a) == list(b)
    for key in a:
        x, y = a[key], b[key]
        if isinstance(x, dict):
            assert_same_info(x, y)
            continue
        assert type(x) is type(y) and x.dtype == y.dtype and x.shape == y.shape
        if x.dtype != object:
            np.testing.assert_array_equal(x, y)  # NaN equals NaN here
            continue
        for u, v in zip(x, y):
            if isinstance(u, np.ndarray):
                np.testing.assert_array_equal(u, v)
            else:
                assert u == v or (u != u and v != v), key


values = st.one_of(
    st.integers(-5, 5),
    st.floats(allow_nan=True),
    st.booleans(),
    st.none(),
    st.tuples(st.integers(0, 9), st.integers(0, 9)),
    st.text(max_size=3),
    st.builds(np.float32, st.floats(-1, 1, width=32)),
    st.builds(lambda b: np.array(b, dtype=bool), st.lists(st.booleans(), min_size=3, max_size=3)),
)
keys = st.sampled_from(["time", "queue_size", "action_mask", "window", "objective", "final_obs"])
infos = st.dictionaries(keys, values, max_size=6)
nested = st.dictionaries(st.sampled_from(["final_info", "extra"]), infos, max_size=1)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), infos, nested), max_size=6))
def test_add_info_is_gymnasiums(parts: list) -> None:
    env = FastInfoSyncVectorEnv([Countdown for _ in range(3)])
    fast: dict[str, Any] = {}
    reference: dict[str, Any] = {}
    seen: dict[str, type] = {}
    for env_num, info, inner in parts:
        info = {**info, **inner}
        # Gymnasium assumes a key keeps its kind from one environment to the next
        flat = {**info, **{f"{k}/{j}": w for k, v in inner.items() for j, w in v.items()}}
        if any(seen.setdefault(k, type(v)) is not type(v) for k, v in flat.items()):
            continue
        fast = env._add_info(fast, info, env_num)
        reference = env._add_info_reference(reference, info, env_num)
    assert_same_info(fast, reference)
    env.close()


def test_whole_steps_are_gymnasiums() -> None:
    mode = AutoresetMode.SAME_STEP
    envs = [SyncVectorEnv(factories(3), autoreset_mode=mode)]
    envs.append(FastInfoSyncVectorEnv(factories(3), autoreset_mode=mode))
    rng = np.random.default_rng(0)
    ref_info, fast_info = (e.reset(seed=3)[1] for e in envs)
    assert_same_info(fast_info, ref_info)
    for _ in range(30):
        actions = rng.integers(0, 4, 3)
        ref, fast = (e.step(actions) for e in envs)
        for x, y in zip(ref[:4], fast[:4]):
            np.testing.assert_array_equal(x, y)
        assert_same_info(fast[4], ref[4])
    for e in envs:
        e.close()


def test_lean_steps_carry_what_trainers_read() -> None:
    """``full_info=False``: the same arrays as Gymnasium's steps, and of ``info`` the masks
    at every step and ``final_obs`` / ``final_info`` where episodes ended."""
    mode = AutoresetMode.SAME_STEP
    ref_env = SyncVectorEnv(factories(3), autoreset_mode=mode)
    lean_env = FastInfoSyncVectorEnv(factories(3), autoreset_mode=mode, full_info=False)
    rng = np.random.default_rng(1)
    ref_env.reset(seed=5)
    lean_env.reset(seed=5)
    ended = 0
    for _ in range(40):
        actions = rng.integers(0, 4, 3)
        ref, lean = ref_env.step(actions), lean_env.step(actions)
        for x, y in zip(ref[:4], lean[:4]):
            np.testing.assert_array_equal(x, y)
        info = lean[4]
        wanted = ["final_obs", "_final_obs", "final_info", "_final_info"]
        wanted = [k for k in wanted if k in ref[4]] + ["action_mask", "_action_mask"]
        assert list(info) == wanted
        assert_same_info(info, {k: ref[4][k] for k in wanted})
        ended += int(ref[2].sum())
    assert ended  # the episode ends were compared too
    ref_env.close()
    lean_env.close()
