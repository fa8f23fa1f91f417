"""End to end on the real Gaia trace (skipped when the trace is absent: docs/traces.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hdeeprm.environment import HeterogeneousClusterEnv
from hdeeprm.environment.observation import queue_statistics
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import options_from_json

REPO = Path(__file__).resolve().parents[2]


def test_gaia_first_jobs_random_actions(tmp_path: Path, gaia_trace: Path) -> None:
    raw = {
        "seed": 3,
        "nb_jobs": 300,
        "workload_file_path": str(gaia_trace),
        "platform_file_path": str(REPO / "platform_examples" / "gaia.json"),
        "pybatsim": {
            "env": {"objective": "edp", "observation": "normal", "actions": {"void": True}},
            "agent": {"type": "LEARNING"},
        },
    }
    options = options_from_json(raw, tmp_path / "options.json")
    env = HeterogeneousClusterEnv(inputs=prepare_inputs(options, tmp_path))
    # Gaia: 153 nodes, 342 processors, 2,280 cores -> 21 + 153 + 342 + 3 * 2280
    assert env.observation_size == 7356 and env.action_size == 37
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    done, steps = False, 0
    while not done:
        assert env.observation_space.contains(obs)
        obs, reward, done, _, info = env.step(int(rng.integers(37)))
        assert reward <= 0.0  # EDP of a span is never negative
        steps += 1
    assert info["completed"] + info["rejected"] == 300
    assert steps >= 100
    assert info["objective"] > 0


def test_quartiles_match_numpy() -> None:
    rng = np.random.default_rng(4)
    for n in (1, 2, 7, 50):
        values = rng.uniform(0, 10, (4, n))
        limits = np.array([10.0, 10.0, 10.0, 10.0])
        expected = np.quantile(values, [0, 0.25, 0.5, 0.75, 1], axis=1).T / 10
        np.testing.assert_allclose(queue_statistics(values, limits), expected.ravel())
