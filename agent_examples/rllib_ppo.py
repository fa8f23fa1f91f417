"""Train RLlib's PPO on hdeeprm's environment, with rollouts collected by Ray env runners.

The environment is registered with ``ray.tune.register_env``; RLlib then builds one copy per
sub-environment inside its env-runner actors (``--env-runners`` actors with
``--envs-per-runner`` environments each), on this machine or on every node of a Ray cluster
(``--address auto`` after ``ray start``). Written against Ray 2.60's new API stack
(``PPOConfig().environment(...).env_runners(...)``, ``build_algo``, ``train``).

RLlib pins ``gymnasium==1.2.2``; install it in its own virtual environment so the rest of your
setup keeps its Gymnasium::

    python -m venv --system-site-packages .venv-rllib
    .venv-rllib/bin/pip install "ray[rllib]"
    .venv-rllib/bin/python agent_examples/rllib_ppo.py --iterations 5

Defaults train on the thesis 5.4.1 learning scenario (4 cores, 5 actions, two jobs, one
decision per episode), where the ``high_mem_bw`` actions (one job per processor, no bandwidth
over-subscription) earn the highest return; ``--options`` and ``--custom-workload`` point it
at any other experiment.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SCENARIO = REPO / "thesis_experiments" / "learning"


def make_env(config: dict[str, Any]) -> Any:
    """The env creator RLlib calls in each env runner (``config`` is the ``env_config``)."""
    from hdeeprm.environment import HeterogeneousClusterEnv

    return HeterogeneousClusterEnv.from_options(
        config["options"], config["run_dir"], config.get("custom_workload")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--options", default=str(SCENARIO / "options.json"))
    parser.add_argument("--custom-workload", default=str(SCENARIO / "workload.json"))
    parser.add_argument("--run-dir", default="runs/rllib_ppo", help="generated inputs go here")
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--env-runners", type=int, default=2)
    parser.add_argument("--envs-per-runner", type=int, default=2)
    parser.add_argument("--address", default=None, help="Ray cluster (default: a local one)")
    args = parser.parse_args(argv)

    import ray
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.tune.registry import register_env

    from hdeeprm.inputs import prepare_inputs
    from hdeeprm.options import load_options

    options = Path(args.options).resolve()
    workload = Path(args.custom_workload).resolve() if args.custom_workload else None
    run_dir = Path(args.run_dir).resolve()
    # Generate the inputs once here: the env runners then only read them (no race).
    prepare_inputs(load_options(options), run_dir, custom_workload=workload)

    ray.init(address=args.address, include_dashboard=False)
    register_env("hdeeprm", make_env)
    env_config = {
        "options": str(options),
        "run_dir": str(run_dir),
        "custom_workload": None if workload is None else str(workload),
    }
    config = (
        PPOConfig()
        .environment("hdeeprm", env_config=env_config)
        .env_runners(
            num_env_runners=args.env_runners,
            num_envs_per_env_runner=args.envs_per_runner,
            num_cpus_per_env_runner=1,
        )
        .training(train_batch_size_per_learner=1000, minibatch_size=250, num_epochs=4, lr=3e-4)
        .debugging(seed=0)
    )
    algo = config.build_algo()
    try:
        for iteration in range(args.iterations):
            result = algo.train()
            runners = result.get("env_runners", {})
            print(
                f"iteration {iteration + 1}: episode return mean "
                f"{runners.get('episode_return_mean', float('nan')):.4g}, "
                f"episodes {runners.get('num_episodes', 0)}, "
                f"env steps {runners.get('num_env_steps_sampled_lifetime', 0)}"
            )
    finally:
        algo.stop()
        ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
