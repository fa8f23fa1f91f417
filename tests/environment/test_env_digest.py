"""Pinned results of the environment on Gaia windows (skipped without ../shared).

Speed work on the engine, the decision system or the environment must leave every
observation, reward, ``info`` entry (the action mask included), per-job and per-host energy
and output file identical bit for bit. The digests were produced before the envspeed branch
(commit b935c73); ``benchmarks/speed/env_digest.py`` prints the same kind of digests for the
benchmark's own four 4,000-job windows.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hdeeprm._digest import feed, feed_random_episode
from hdeeprm.environment import HeterogeneousClusterEnv
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import options_from_json

REPO = Path(__file__).resolve().parents[2]

#: (observation, objective, traced) -> SHA-256 of one episode on a 1,500-job window drawn
#: from the first 6,000 Gaia jobs, random actions (seed 5).
DIGESTS = {
    (
        "minimal",
        "avg_job_slowdown",
        False,
    ): "29a814463c839267f22cd30a2f4b83665d4ff96c57692d10ce9fe72e81e3c10b",
    ("normal", "edp", True): "81f4bbe3b9dccecda99368596e1f873b78d73ccec2f0747ba2a49e9e8ce600fa",
}


def episode_digest(trace: Path, tmp: Path, observation: str, objective: str, traced: bool) -> str:
    raw: dict[str, Any] = {
        "seed": 5,
        "nb_jobs": 6000,
        "workload_file_path": str(trace),
        "platform_file_path": str(REPO / "platform_examples" / "gaia.json"),
        "pybatsim": {
            "env": {"objective": objective, "observation": observation},
            "agent": {"type": "LEARNING"},
        },
    }
    inputs = prepare_inputs(options_from_json(raw, tmp / "options.json"), tmp)
    raw["pybatsim"]["env"]["episodes"] = {"window_jobs": 1500, "train_jobs": [0, 6000]}
    options = options_from_json(raw, tmp / "options.json")
    env = HeterogeneousClusterEnv(inputs=dataclasses.replace(inputs, options=options))
    digest = hashlib.sha256()
    feed_random_episode(digest, env, np.random.default_rng(5), seed=5, options={"trace": traced})
    if traced:
        for name, path in sorted(env.write_outputs(tmp / "out").items()):
            feed(digest, name)
            digest.update(Path(path).read_bytes())
    return digest.hexdigest()


@pytest.mark.parametrize(("observation", "objective", "traced"), sorted(DIGESTS))
def test_gaia_window_digest(
    gaia_trace: Path, tmp_path: Path, observation: str, objective: str, traced: bool
) -> None:
    insights = logging.getLogger("hdeeprm.insights")
    level = insights.level
    insights.setLevel(logging.ERROR)  # over-subscription warnings are not what is checked
    try:
        digest = episode_digest(gaia_trace, tmp_path, observation, objective, traced)
    finally:
        insights.setLevel(level)
    assert digest == DIGESTS[observation, objective, traced]
