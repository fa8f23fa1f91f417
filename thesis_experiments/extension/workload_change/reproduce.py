"""Seed 003 sections 3.3.2 and 4.4.3: changing the workload once the agent has converged.

Usage::

    python thesis_experiments/extension/workload_change/reproduce.py [--platform basic_8]
        [--phase-episodes 400 550 200 350] [--seeds 3] [--mode continue reset]

The paper gives the agent no signal that the workload changed: it should notice from its
rewards (3.3.2). Two workloads of identical one-core jobs, all submitted at t = 0, objective
energy-delay product:

* ``basic_8`` (the paper's first experiment: four dual-core processors): 2 jobs of 5 s at
  24 GB/s (workload ``a``), then 2 jobs of 40 s at 4 GB/s (``b``); the paper changes at
  episodes 400, 950 and 1,150 of 1,500: a, b, a, b.
* ``hetero_2816``: the same with 128 jobs each and 1 s jobs in ``a``; one change, at episode
  400 of 1,000: a, b.

Modes: ``continue`` (the paper's: one agent throughout, its network, optimiser and running
return statistics kept across the change) and ``reset`` (a new agent per workload, for
reference). Prints each workload's five pairs played alone and, per phase, in how many seeds
the probability of that workload's optimal pairs stays above 0.9 to the end of the phase.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import common  # noqa: E402

OPTIONS = Path(__file__).resolve().parent / "options.json"
#: Per platform: the workloads in the paper's order and its episodes per phase.
SCHEDULES = {
    "basic_8": (("a", "b", "a", "b"), (400, 550, 200, 350)),
    "hetero_2816": (("a", "b"), (400, 600)),
}


def workload_file(platform: str, name: str) -> Path:
    cores = platform.rsplit("_", 1)[1]
    return common.HERE / "inputs" / f"change_{name}_{cores}.workload.json"


def fixed_pairs(platform: str) -> dict[str, dict[str, common.PairResult]]:
    """The five pairs played alone on each of the platform's two workloads."""
    options = common.scenario_options(OPTIONS, platform)
    return {
        name: common.run_fixed_pairs(
            options, workload_file(platform, name), common.temp_run_dir(f"change-{name}")
        )
        for name in dict.fromkeys(SCHEDULES[platform][0])
    }


def run_seed(
    platform: str, seed: int, mode: str, phase_episodes: int | list[int]
) -> list[common.TrainingRun]:
    """One seed through the platform's workload phases; one TrainingRun per phase."""
    names = SCHEDULES[platform][0]
    if isinstance(phase_episodes, int):
        phase_episodes = [phase_episodes] * len(names)
    phases = [
        common.Phase(
            common.scenario_options(
                OPTIONS, platform, seed=1000 * k + seed if mode == "reset" else seed
            ),
            workload_file(platform, name),
            phase_episodes[k],
        )
        for k, name in enumerate(names)
    ]
    return common.train_phases(phases, mode, common.temp_run_dir(f"workload-change-{mode}"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--platform", choices=tuple(SCHEDULES), default="basic_8")
    parser.add_argument(
        "--phase-episodes",
        type=int,
        nargs="+",
        default=None,
        help="episodes per phase: one count, or one per phase (default: the paper's)",
    )
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument(
        "--mode", nargs="+", choices=("continue", "reset"), default=["continue", "reset"]
    )
    args = parser.parse_args(argv)
    names, paper_lengths = SCHEDULES[args.platform]
    lengths = common.phase_lengths(args.phase_episodes or paper_lengths, len(names), parser)
    optimal = {}
    for name, pairs in fixed_pairs(args.platform).items():
        optimal[name] = common.optimal_pairs(pairs)
        print(f"{args.platform}: workload {name} ({workload_file(args.platform, name).name}), edp")
        common.print_pairs(pairs, "J s")
    for mode in args.mode:
        per_seed = [run_seed(args.platform, s, mode, lengths) for s in range(args.seeds)]
        common.print_phases(
            per_seed,
            lengths,
            mode,
            [f"workload {name}" for name in names],
            [optimal[name] for name in names],
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
