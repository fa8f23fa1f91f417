"""End-to-end PPO training throughput on Gaia windows, beside the environments alone.

Usage: ``python benchmarks/speed/ppo_speed.py [--steps N] [--num-envs N] [--window-jobs N]
[--vector sync async shared] [--num-workers N] [--cores N] [--profile]``

For each vector kind: (1) the vector environment stepped with uniformly random allowed
actions (what the environments cost), (2) :class:`PPOTrainer` training for the same number of
decisions (environments + batched policy forward + updates), after the first episodes were
set up (``reset_envs``) as for (1). Prints decisions per second of both, in wall time and per
CPU second (this process plus the ``async``/``shared`` worker processes, read from
``/proc``), so the trainer's own overhead is the difference. On a shared machine the per CPU
second figures are the ones to compare. With worker processes it also prints each process's
CPU time during training and the wall-time bound they imply on ``--cores`` idle cores (each
process runs on one core at a time and all share the cores: decisions / max(the busiest
process, total / cores)). ``--profile`` prints a cProfile of the training run (main process
only). The issue's goal is >= 3,000 decisions/s end to end on 2 cores.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import logging
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import options_from_json
from hdeeprm.training.ppo import (
    PPOConfig,
    PPOTrainer,
    build_vector_env,
    env_factories,
    inputs_factories,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common
import common  # noqa: E402

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
REPO = Path(__file__).resolve().parents[2]
TRACE = common.trace_default(common.GAIA)
PLATFORM = REPO / "platform_examples" / "gaia.json"


def cpu_seconds(envs: object) -> list[float]:
    """CPU time of this process, then of each of the vector environment's worker processes."""
    times = [time.process_time()]
    for process in getattr(envs, "processes", ()):
        try:
            fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # not Linux, or the worker is gone: count this process only
            continue
        times.append((int(fields[11]) + int(fields[12])) / _TICK)  # utime + stime
    return times


def spent(envs: object, before: list[float]) -> list[float]:
    return [b - a for a, b in zip(before, cpu_seconds(envs))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=16384)
    parser.add_argument("--num-envs", type=int, default=4)
    parser.add_argument("--window-jobs", type=int, default=4000)
    parser.add_argument(
        "--vector",
        nargs="+",
        choices=["sync", "async", "shared"],
        default=["sync", "async", "shared"],
    )
    parser.add_argument("--num-workers", type=int, default=None)
    parser.add_argument("--cores", type=int, default=2, help="cores for the wall-time bound")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    if not TRACE.is_file():
        print(common.missing_message(common.GAIA), file=sys.stderr)
        return 1
    logging.getLogger("hdeeprm").setLevel(logging.ERROR)
    raw = {
        "seed": 1,
        "workload_file_path": str(TRACE),
        "platform_file_path": str(PLATFORM),
        "pybatsim": {
            "log_level": "ERROR",
            "env": {
                "objective": "avg_job_slowdown",
                "observation": "minimal",
                "episodes": {"window_jobs": args.window_jobs, "train_jobs": [0, 15000]},
            },
            "agent": {"type": "LEARNING", "algorithm": "ppo"},
        },
    }
    kinds = args.vector
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "options.json"
        path.write_text(json.dumps(raw))
        inputs = prepare_inputs(options_from_json(raw, path), tmp)
        print(
            f"Gaia windows of {args.window_jobs} jobs from [0, 15000), 2,280 cores, minimal "
            f"observation, {args.num_envs} environments, {args.steps} decisions"
        )
        for kind in kinds:
            fns = (
                inputs_factories(inputs, args.num_envs, "train")
                if kind != "async"
                else env_factories(path, args.num_envs, output_dir=tmp, split="train")
            )
            envs = build_vector_env(fns, kind, num_workers=args.num_workers)
            rng = np.random.default_rng(0)
            _, info = envs.reset(seed=1)
            t0, c0 = time.perf_counter(), cpu_seconds(envs)
            for _ in range(args.steps // args.num_envs):
                mask = info["action_mask"]
                actions = [int(rng.choice(np.flatnonzero(m))) for m in mask]
                _, _, _, _, info = envs.step(np.array(actions))
            env_wall = time.perf_counter() - t0
            env_cpu = sum(spent(envs, c0))
            envs.close()
            config = PPOConfig(
                num_envs=args.num_envs,
                num_steps=1024,
                vector=kind,
                seed=1,
                split="train",
                num_workers=args.num_workers if kind == "shared" else None,
            )
            trainer = PPOTrainer(config, fns)
            trainer.reset_envs()  # the first episodes' set-up, as for the environments alone
            profiler = cProfile.Profile() if args.profile else None
            t0, c0 = time.perf_counter(), cpu_seconds(trainer.envs)
            if profiler:
                profiler.enable()
            trainer.learn(args.steps)
            if profiler:
                profiler.disable()
            wall = time.perf_counter() - t0
            per_process = spent(trainer.envs, c0)
            cpu = sum(per_process)
            steps = trainer.global_step
            trainer.close()
            env_steps = args.steps // args.num_envs * args.num_envs
            print(
                f"  {kind:6}: environments alone {env_steps / env_wall:7,.0f} decisions/s wall, "
                f"{env_steps / env_cpu:7,.0f} per CPU s; PPO training end to end "
                f"{steps / wall:7,.0f} decisions/s wall, {steps / cpu:7,.0f} per CPU s "
                f"(trainer's own share of the CPU: {1 - (steps / cpu) / (env_steps / env_cpu):.0%})"
            )
            # Each process runs on one core at a time, and all of them share ``--cores``.
            bound = steps / max(max(per_process), cpu / min(args.cores, len(per_process)))
            shares = ", ".join(f"{c:.2f}" for c in per_process)
            print(
                f"          training CPU s per process (this one first): {shares}; on "
                f"{args.cores} idle cores at most {bound:,.0f} decisions/s wall"
            )
            if profiler:
                pstats.Stats(profiler).sort_stats("tottime").print_stats(20)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
