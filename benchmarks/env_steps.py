"""Throughput of the RL environment and of a training run.

Usage: ``python benchmarks/env_steps.py [--nb-jobs N] [--observation KIND] [--objective OBJ]
[--episodes E]``

1. Decision steps per second of ``HeterogeneousClusterEnv`` on the Gaia trace and platform
   (2,280 cores) with uniformly random actions over the 36 policy pairs (first N jobs; all
   51,899 when N is 0). Input preparation (SWF conversion) is timed separately.
2. Training throughput of the REINFORCE example on the thesis 5.4 scenario: episodes/s and
   decision steps/s over E episodes (with updates).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from hdeeprm.environment import HeterogeneousClusterEnv
from hdeeprm.experiment import prepare_inputs
from hdeeprm.options import load_options, options_from_json
from hdeeprm.training import run_learning

REPO = Path(__file__).resolve().parent.parent
TRACE = REPO.parent / "shared" / "traces" / "UniLu-Gaia-2014-1.swf.gz"
THESIS = REPO / "thesis_experiments" / "learning"


def gaia_steps(nb_jobs: int, observation: str, objective: str, seed: int = 1) -> None:
    raw = {
        "seed": seed,
        "workload_file_path": str(TRACE),
        "platform_file_path": str(REPO / "platform_examples" / "gaia.json"),
        "pybatsim": {
            "env": {"objective": objective, "observation": observation},
            "agent": {"type": "LEARNING"},
        },
    }
    if nb_jobs:
        raw["nb_jobs"] = nb_jobs
    with tempfile.TemporaryDirectory() as tmp:
        options = options_from_json(raw, Path(tmp) / "options.json")
        t0 = time.perf_counter()
        inputs = prepare_inputs(options, tmp)
        env = HeterogeneousClusterEnv(inputs=inputs)
        t1 = time.perf_counter()
        rng = np.random.default_rng(seed)
        env.reset(seed=seed)
        steps = 0
        done = False
        n = env.action_space.n
        while not done:
            _, _, done, _, _ = env.step(int(rng.integers(n)))
            steps += 1
        t2 = time.perf_counter()
    jobs = len(inputs.workload.jobs)
    print(
        f"Gaia, {jobs} jobs, {observation} observation ({env.observation_size} values), "
        f"objective {objective}, {n} actions"
    )
    print(f"  inputs prepared in {t1 - t0:.2f} s")
    print(
        f"  episode: {steps} decision steps in {t2 - t1:.2f} s -> "
        f"{steps / (t2 - t1):,.0f} steps/s (simulated {env.info()['time']:,.0f} s)"
    )


def training(episodes: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        options = load_options(THESIS / "options.json")
        inputs = prepare_inputs(options, tmp, custom_workload=THESIS / "workload.json")
        t0 = time.perf_counter()
        result = run_learning(
            inputs,
            agent_file=REPO / "agent_examples" / "reinforce.py",
            in_model=None,
            out_model=None,
            nb_runs=episodes,
            progress=False,
            write_outputs=False,
            tensorboard=False,
        )
        wall = time.perf_counter() - t0
    loop = result.wall_time
    print(
        f"REINFORCE on thesis 5.4: {episodes} episodes, {result.total_steps} steps: "
        f"{wall:.2f} s in all ({wall - loop:.2f} s one-off setup: agent, optimiser import)"
    )
    print(
        f"  training loop {loop:.2f} s -> {episodes / loop:,.0f} episodes/s, "
        f"{result.total_steps / loop:,.0f} steps/s"
    )
    print("  " + result.summary().splitlines()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nb-jobs", type=int, default=0, help="first N Gaia jobs (0: all)")
    parser.add_argument("--observation", default="normal", choices=["minimal", "small", "normal"])
    parser.add_argument("--objective", default="avg_job_slowdown")
    parser.add_argument("--episodes", type=int, default=350)
    args = parser.parse_args()
    if TRACE.is_file():
        gaia_steps(args.nb_jobs, args.observation, args.objective)
    else:
        print(f"skipping the Gaia benchmark: {TRACE} not found")
    training(args.episodes)


if __name__ == "__main__":
    raise SystemExit(main())
