"""Throughput of the RL environment and of a training run.

Usage: ``python benchmarks/speed/env_steps.py [--window-jobs N] [--windows W] [--observation KIND]
[--objective OBJ] [--episodes E] [--trace PATH] [--repeat R]``

1. The issue-12 configuration: decision steps per second of ``HeterogeneousClusterEnv`` on
   windows of N = 4,000 jobs of the whole Gaia trace (``episodes`` block, train split over all
   51,899 jobs), the full Gaia platform (``platform_examples/gaia.json``, 2,280 cores),
   ``minimal`` observation, objective rewards, uniformly random actions over the 36 pairs;
   W windows (default 4) drawn from seed 1. Printed per window and overall, with the action
   mask in ``info`` (always computed) and the insights logger at ERROR (the bandwidth
   over-subscription warnings would otherwise go to stderr). Input preparation (SWF
   conversion of the whole trace) is timed separately. ``--repeat R`` runs the same windows
   and actions R times and keeps each window's smallest CPU time (on a shared machine, other
   processes only ever add to it).
2. Training throughput of the REINFORCE example on the thesis 5.4 scenario: episodes/s and
   decision steps/s over E episodes (with updates).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from hdeeprm.environment import HeterogeneousClusterEnv
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import load_options, options_from_json
from hdeeprm.training import run_learning

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common
import common  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TRACE = common.trace_default(common.GAIA)
THESIS = REPO / "thesis_experiments" / "learning"


def gaia_steps(
    trace: Path,
    window_jobs: int,
    windows: int,
    observation: str,
    objective: str,
    seed: int = 1,
    repeat: int = 1,
) -> None:
    logging.getLogger("hdeeprm.insights").setLevel(logging.ERROR)
    raw = {
        "seed": seed,
        "workload_file_path": str(trace),
        "platform_file_path": str(REPO / "platform_examples" / "gaia.json"),
        "pybatsim": {
            "env": {
                "objective": objective,
                "observation": observation,
            },
            "agent": {"type": "LEARNING"},
        },
    }
    with tempfile.TemporaryDirectory() as tmp:
        options = options_from_json(raw, Path(tmp) / "options.json")
        t0 = time.perf_counter()
        inputs = prepare_inputs(options, tmp)
        # Windows over every converted job (known once the trace is converted).
        raw["pybatsim"]["env"]["episodes"] = {
            "window_jobs": window_jobs,
            "train_jobs": [0, len(inputs.workload.jobs)],
        }
        options = options_from_json(raw, Path(tmp) / "options.json")
        env = HeterogeneousClusterEnv(inputs=dataclasses.replace(inputs, options=options))
        t1 = time.perf_counter()
        n = env.action_space.n
        print(
            f"Gaia platform (2,280 cores), {len(inputs.workload.jobs):,} jobs converted in "
            f"{t1 - t0:.2f} s; {window_jobs}-job windows, {observation} observation "
            f"({env.observation_size} values), objective {objective}, {n} actions, random"
            + (f"; best of {repeat} runs per window" if repeat > 1 else "")
        )
        # Per window: (CPU s, wall s) of its fastest run, steps, job range, simulated time.
        best: list[tuple[float, float]] = [(math.inf, math.inf)] * windows
        shown: list[tuple[int, tuple[int, int], float]] = [(0, (0, 0), 0.0)] * windows
        for _ in range(repeat):
            rng = np.random.default_rng(seed)  # the same windows and actions every time
            for episode in range(windows):
                t2, c2 = time.perf_counter(), time.process_time()
                _, info = env.reset(seed=seed if episode == 0 else None)
                steps, done = 0, False
                while not done:
                    _, _, done, _, info = env.step(int(rng.integers(n)))
                    steps += 1
                t3, c3 = time.perf_counter(), time.process_time()
                best[episode] = min(best[episode], (c3 - c2, t3 - t2))
                shown[episode] = (steps, info["window"], info["time"])
        total_steps, total_time, total_cpu = 0, 0.0, 0.0
        for (cpu, wall), (steps, (first, last), simulated) in zip(best, shown, strict=True):
            total_steps += steps
            total_time += wall
            total_cpu += cpu
            print(
                f"  window jobs {first:>6}-{last:>6}: {steps:>6} steps in {wall:6.2f} s -> "
                f"{steps / wall:>8,.0f} steps/s wall, {steps / cpu:>8,.0f} per CPU s "
                f"(simulated {simulated:,.0f} s)"
            )
    if not total_steps:  # --windows 0: set-up only (the baseline of an instruction count)
        return
    print(
        f"  overall: {total_steps} steps in {total_time:.2f} s -> "
        f"{total_steps / total_time:,.0f} steps/s wall, {total_steps / total_cpu:,.0f} per CPU "
        "second (resets included; per CPU second is the figure to compare on a shared machine)"
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
    parser.add_argument("--window-jobs", type=int, default=4000, help="jobs per window")
    parser.add_argument("--windows", type=int, default=4, help="windows (episodes) to run")
    parser.add_argument("--trace", type=Path, default=TRACE, help="the Gaia SWF trace")
    parser.add_argument(
        "--observation", default="minimal", choices=["minimal", "small", "normal", "queue"]
    )
    parser.add_argument("--objective", default="avg_job_slowdown")
    parser.add_argument("--episodes", type=int, default=350, help="REINFORCE episodes (0: skip)")
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs of the windows; keep each one's fastest"
    )
    args = parser.parse_args()
    if args.trace.is_file():
        gaia_steps(
            args.trace,
            args.window_jobs,
            args.windows,
            args.observation,
            args.objective,
            repeat=args.repeat,
        )
    else:
        print(f"skipping the Gaia benchmark: {common.missing_message(args.trace.name)}")
    if args.episodes:
        training(args.episodes)


if __name__ == "__main__":
    raise SystemExit(main())
