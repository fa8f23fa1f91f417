"""Resets reuse what the platform fixes: an environment builds a new engine and core pool per
episode, but the per-host tables and per-core ids they read are derived once per platform,
shared, and never written by a run."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from rl_helpers import random_jobs, write_options, write_workload

from hdeeprm._derived import Derived
from hdeeprm.decision.resources import _Layout
from hdeeprm.environment import HeterogeneousClusterEnv
from hdeeprm.simulation.engine import Engine, _HostTables


def _same(shared: object, fresh: object) -> None:
    for name, value in vars(fresh).items():
        mine = getattr(shared, name)
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(mine, value)
        elif name != "by_state":
            assert mine == value, name


def test_episodes_share_the_platform_views_and_never_write_them(tmp_path) -> None:
    options = write_options(tmp_path / "opt", observation="minimal", void=True)
    workload = write_workload(tmp_path / "wl", random_jobs(40, seed=5))
    env = HeterogeneousClusterEnv.from_options(options, tmp_path / "run", workload)
    rng = np.random.default_rng(0)
    pools, engines = [], []
    for episode in range(3):
        env.reset(seed=0 if episode == 0 else None)
        pools.append(env.manager.pool)
        engines.append(env.engine)
        done = False
        while not done:
            _, _, done, _, _ = env.step(int(rng.integers(env.action_space.n)))
    assert len({id(p) for p in pools}) == 3 and len({id(e) for e in engines}) == 3
    assert all(p.core_proc is pools[0].core_proc for p in pools)
    assert all(e._speeds is engines[0]._speeds for e in engines)
    # after three episodes of random actions (P-state switches included), the shared views
    # are still what a fresh derivation gives
    layout = env.inputs.platform.derived[_Layout]
    _same(layout, _Layout(env.inputs.platform))
    tables = env.sim_platform.derived[_HostTables]
    _same(tables, _HostTables(env.sim_platform))
    assert tables.by_state, "the episodes switched P-states"
    for state, (idle, full, speed) in tables.by_state.items():
        assert idle == [w[state] for w in tables.idle_w]
        assert full == [w[state] for w in tables.full_w]
        assert speed == [s[state] for s in tables.speeds]


def test_simulation_begins_resources_are_read_only(tmp_path) -> None:
    options = write_options(tmp_path / "opt", observation="minimal")
    workload = write_workload(tmp_path / "wl", random_jobs(4, seed=1))
    env = HeterogeneousClusterEnv.from_options(options, tmp_path / "run", workload)
    env.reset(seed=0)
    engine = Engine(env.sim_platform, env.engine.workloads)
    # an engine and its platform still pickle (environments travel to subprocesses); the
    # copies derive their own views again
    copied = pickle.loads(pickle.dumps(engine))
    assert env.sim_platform.derived and copied.platform.derived == {}
    resources = engine.start().events[0].data["compute_resources"]
    host = env.sim_platform.hosts[0]
    assert resources[0] == {
        "id": 0,
        "name": host.name,
        "state": "idle",
        "properties": dict(host.properties),
    }
    with pytest.raises(TypeError):
        resources[0]["state"] = "sleeping"  # type: ignore[index]
    with pytest.raises(TypeError):
        resources[0]["properties"]["role"] = "storage"  # type: ignore[index]
    assert copied.start().events[0].data["compute_resources"] == resources


def test_derived_views_are_built_once_and_left_out_of_copies() -> None:
    derived = Derived()
    built: list[int] = []
    assert derived.view("k", lambda: built.append(1) or len(built)) == 1
    assert derived.view("k", lambda: built.append(1) or len(built)) == 1
    assert built == [1]
    assert pickle.loads(pickle.dumps(derived)) == {}
    assert copy.deepcopy(derived) == {} and type(copy.deepcopy(derived)) is Derived
