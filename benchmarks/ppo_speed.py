"""End-to-end PPO training throughput on Gaia windows, beside the environments alone.

Usage: ``python benchmarks/ppo_speed.py [--steps N] [--num-envs N] [--window-jobs N]
[--vector sync|async|both] [--profile]``

For each vector kind: (1) the vector environment stepped with uniformly random allowed
actions (what the environments cost), (2) :class:`PPOTrainer` training for the same number of
decisions (environments + batched policy forward + updates). Prints decisions per second of
both, so the trainer's own overhead is the difference. ``--profile`` prints a cProfile of the
training run. The issue's goal is >= 3,000 decisions/s end to end on 2 cores.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import logging
import pstats
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from hdeeprm.experiment import prepare_inputs
from hdeeprm.options import options_from_json
from hdeeprm.training.ppo import (
    PPOConfig,
    PPOTrainer,
    build_vector_env,
    env_factories,
    inputs_factories,
)

REPO = Path(__file__).resolve().parent.parent
TRACE = REPO.parent / "shared" / "traces" / "UniLu-Gaia-2014-1.swf.gz"
PLATFORM = REPO / "platform_examples" / "gaia.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=16384)
    parser.add_argument("--num-envs", type=int, default=4)
    parser.add_argument("--window-jobs", type=int, default=4000)
    parser.add_argument("--vector", choices=["sync", "async", "both"], default="both")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    if not TRACE.is_file():
        print(f"trace not found: {TRACE}", file=sys.stderr)
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
    kinds = ["sync", "async"] if args.vector == "both" else [args.vector]
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
                if kind == "sync"
                else env_factories(path, args.num_envs, output_dir=tmp, split="train")
            )
            envs = build_vector_env(fns, kind)
            rng = np.random.default_rng(0)
            _, info = envs.reset(seed=1)
            t0 = time.perf_counter()
            for _ in range(args.steps // args.num_envs):
                mask = info["action_mask"]
                actions = [int(rng.choice(np.flatnonzero(m))) for m in mask]
                _, _, _, _, info = envs.step(np.array(actions))
            env_rate = args.steps / (time.perf_counter() - t0)
            envs.close()
            config = PPOConfig(
                num_envs=args.num_envs, num_steps=1024, vector=kind, seed=1, split="train"
            )
            trainer = PPOTrainer(config, fns)
            profiler = cProfile.Profile() if args.profile else None
            t0 = time.perf_counter()
            if profiler:
                profiler.enable()
            trainer.learn(args.steps)
            if profiler:
                profiler.disable()
            rate = trainer.global_step / (time.perf_counter() - t0)
            trainer.close()
            print(
                f"  {kind:5}: environments alone {env_rate:7,.0f} decisions/s; "
                f"PPO training end to end {rate:7,.0f} decisions/s"
            )
            if profiler:
                pstats.Stats(profiler).sort_stats("tottime").print_stats(20)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
