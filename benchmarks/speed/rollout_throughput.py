"""Rollout throughput of ``RayVectorEnv`` with 1 and 2 Ray workers, against a local vector env.

Usage: ``python benchmarks/speed/rollout_throughput.py [--envs 4] [--steps 1500] [--nb-jobs 2000]``

Sub-environments are ``HeterogeneousClusterEnv`` on the first ``--nb-jobs`` jobs of the Gaia
trace and platform (2,280 cores, 36 actions), stepped with uniformly random actions (episodes
end and are reset along the way). Prints environment steps per second for:

* ``sync``: Gymnasium's ``SyncVectorEnv`` in this process (no Ray);
* ``ray 1 worker``: one actor holding all ``--envs`` environments;
* ``ray 2 workers``: two actors holding half each;

then the Ray round trip alone: the same vector env over CartPole (a step costs ~10 us), which
isolates the per-call overhead that grouping several environments per actor amortises.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common
import common  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TRACE = common.trace_default(common.GAIA)


def measure(env, steps: int, seed: int = 0) -> float:
    """Environment steps per second over ``steps`` vector steps (after one warm-up step)."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    n = env.num_envs
    high = env.single_action_space.n
    env.step(rng.integers(0, high, n))
    start = time.perf_counter()
    for _ in range(steps):
        env.step(rng.integers(0, high, n))
    return steps * n / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=4)
    parser.add_argument("--steps", type=int, default=1500, help="vector steps per measurement")
    parser.add_argument("--nb-jobs", type=int, default=2000)
    args = parser.parse_args(argv)
    if not TRACE.is_file():
        print(common.missing_message(common.GAIA), file=sys.stderr)
        return 1
    import gymnasium as gym
    import ray
    from gymnasium.vector import SyncVectorEnv

    from hdeeprm._ray import ensure_ray
    from hdeeprm.environment.vector.ray import RayVectorEnv, hdeeprm_env_fns

    load = os.getloadavg()[0]
    print(
        f"{args.envs} environments, Gaia trace first {args.nb_jobs} jobs, {args.steps} vector "
        f"steps each; {os.cpu_count()} cores, load average {load:.2f} at start"
    )
    with tempfile.TemporaryDirectory() as tmp:
        options = {
            "seed": 1,
            "nb_jobs": args.nb_jobs,
            "workload_file_path": str(TRACE),
            "platform_file_path": str(REPO / "platform_examples" / "gaia.json"),
            "pybatsim": {
                "log_level": "ERROR",
                "env": {"objective": "avg_job_slowdown"},
                "agent": {"type": "LEARNING"},
            },
        }
        path = Path(tmp) / "options.json"
        path.write_text(json.dumps(options))
        fns = hdeeprm_env_fns(path, args.envs)

        sync = SyncVectorEnv(fns)
        rate_sync = measure(sync, args.steps)
        sync.close()
        print(f"sync (this process)      {rate_sync:9,.0f} env steps/s")

        ensure_ray(num_cpus=2)
        try:
            rates = {}
            for actors in (1, 2):
                per_actor = -(-args.envs // actors)
                env = RayVectorEnv(fns, envs_per_actor=per_actor)
                rates[actors] = measure(env, args.steps)
                env.close()
                print(
                    f"ray {actors} worker(s), {per_actor} env(s) each {rates[actors]:9,.0f} "
                    f"env steps/s ({rates[actors] / rate_sync:4.2f}x sync)"
                )
            print(f"speed-up 2 workers over 1: {rates[2] / rates[1]:4.2f}x")

            cartpole = [lambda: gym.make("CartPole-v1")] * args.envs
            local = SyncVectorEnv(cartpole)
            t_local = args.envs / measure(local, args.steps)
            local.close()
            for per_actor in (1, args.envs):
                env = RayVectorEnv(
                    cartpole, envs_per_actor=per_actor, num_cpus_per_actor=per_actor / args.envs
                )
                t_ray = args.envs / measure(env, args.steps)
                env.close()
                print(
                    f"ray round trip (CartPole, {per_actor} env(s) per actor): "
                    f"{(t_ray - t_local) * 1e3:6.3f} ms per vector step of {args.envs} envs"
                )
        finally:
            ray.shutdown()
    print(f"load average at end {os.getloadavg()[0]:.2f} (other processes compete for the cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
