"""Small scenarios for the RL tests: options and Batsim workloads written into a folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
LEARNING_PLATFORM = REPO / "platform_examples" / "learning.json"
THESIS_DIR = REPO / "thesis_experiments" / "learning"
#: Thesis 5.4 action selection (5 actions).
THESIS_SELECTION = [
    {"shortest": ["high_gflops", "high_mem_bw", "low_power"]},
    {"first": ["high_gflops", "high_mem_bw"]},
]


def write_options(
    folder: Path,
    *,
    objective: str = "makespan",
    observation: str = "minimal",
    selection: list[dict[str, list[str]]] | None = None,
    void: bool = False,
    sensitivity: float = 0.05,
    agent: dict[str, Any] | None = None,
    seed: int = 7,
    **env_extra: Any,
) -> Path:
    """Options for the 4-core learning platform; ``env_extra`` adds keys to the env block
    (``reward``, ``episodes``, ...)."""
    env: dict[str, Any] = {
        "objective": objective,
        "observation": observation,
        "queue_sensitivity": sensitivity,
        "actions": {"void": void},
        **env_extra,
    }
    if selection is not None:
        env["actions"]["selection"] = selection
    raw = {
        "seed": seed,
        "platform_file_path": str(LEARNING_PLATFORM),
        "pybatsim": {
            "env": env,
            "agent": agent
            or {"type": "LEARNING", "run": "train", "hidden": 16, "lr": 0.005, "gamma": 0.99},
        },
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "options.json"
    path.write_text(json.dumps(raw))
    return path


def write_workload(folder: Path, jobs: list[tuple[str, float, int, float, dict]]) -> Path:
    """jobs: (id, subtime, res, flops per core, extra profile fields)."""
    profiles = {
        f"p{jid}": {"type": "parallel_homogeneous", "cpu": cpu, "com": 0, **extra}
        for jid, _, _, cpu, extra in jobs
    }
    raw = {
        "nb_res": 4,
        "jobs": [
            {"id": jid, "subtime": sub, "res": res, "profile": f"p{jid}"}
            for jid, sub, res, _, _ in jobs
        ],
        "profiles": profiles,
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "workload.json"
    path.write_text(json.dumps(raw))
    return path


def random_jobs(n: int, seed: int) -> list[tuple[str, float, int, float, dict]]:
    """``n`` jobs on the 4-core learning platform with varied requests (deterministic)."""
    rng = np.random.default_rng(seed)
    jobs = []
    t = 0.0
    for i in range(n):
        t += float(rng.exponential(2.0))
        res = int(rng.integers(1, 4))
        req = float(rng.uniform(1.0, 10.0))
        run = req * float(rng.uniform(0.3, 1.0))
        extra = {
            "req_time": req,
            "mem": float(rng.uniform(100, 4000)),
            "mem_bw": float(rng.uniform(4, 24)),
        }
        jobs.append((str(i), round(t, 3), res, run * 4.2e9, extra))
    return jobs
