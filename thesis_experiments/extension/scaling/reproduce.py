"""Seed 003 section 4.2: does the agent still find the optimal pair as platform and workload grow?

Usage::

    python thesis_experiments/extension/scaling/reproduce.py [--sizes basic_4 hetero_88 ...]
        [--episodes 200] [--seeds 3] [--all]

For each scenario: the five pairs played alone (objective makespan: the optimum is a
``high_mem_bw`` pair, which gives every job its own processor), then the actor-critic agent
(16 hidden units, lr 0.005, gamma 0.99, thesis rewards) trained for ``--episodes`` episodes per
seed. Prints, per scenario, the optimal pairs, how many seeds keep their probability above 0.9
to the end and from which episode, and the CPU time. Without ``--sizes`` it runs the basic
platform at 4, 64 and 2,048 cores and the heterogeneous one at 88, 704 and 5,632 cores
(``--all``: every size of the paper). ``--ppo-decisions N`` also trains the built-in PPO
(``"algorithm": "ppo"``: rollouts of 2 environments x 8 decisions, 16 hidden units, lr 0.005)
for N decisions per seed and prints whether its greedy action is optimal.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import common  # noqa: E402

OPTIONS = Path(__file__).resolve().parent / "options.json"
DEFAULT_SIZES = ("basic_4", "basic_64", "basic_2048", "hetero_88", "hetero_704", "hetero_5632")
ALL_SIZES = tuple(f"basic_{4 * n}" for n in common.BASIC_NODES) + tuple(
    f"hetero_{88 * c}" for c in common.HETERO_COPIES
)


def run_scenario(
    platform: str,
    episodes: int,
    seeds: int,
    objective: str = "makespan",
    ppo_decisions: int = 0,
) -> dict:
    """Fixed pairs, then ``seeds`` training runs (and as many PPO runs when
    ``ppo_decisions``); returns what the README table needs."""
    workload = common.HERE / "inputs" / f"{platform}.workload.json"
    pairs, optimal, runs, ppo = common.run_seeds(
        OPTIONS, platform, workload, objective, episodes, seeds, ppo_decisions, platform
    )
    return {"pairs": pairs, "optimal": optimal, "runs": runs, "ppo": ppo}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", choices=ALL_SIZES, default=None)
    parser.add_argument("--all", action="store_true", help="every size of the paper")
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument(
        "--ppo-decisions",
        type=int,
        default=0,
        help="also train the built-in PPO for this many decisions per seed",
    )
    args = parser.parse_args(argv)
    sizes = ALL_SIZES if args.all else (args.sizes or DEFAULT_SIZES)
    for platform in sizes:
        result = run_scenario(platform, args.episodes, args.seeds, ppo_decisions=args.ppo_decisions)
        cores = platform.split("_")[1]
        print(f"{platform}: {cores} cores, objective makespan (s)")
        common.print_pairs(result["pairs"], "s")
        seconds = sum(r.seconds for r in result["runs"])
        print(
            f"  actor-critic, {args.episodes} episodes x {args.seeds} seeds: "
            f"{common.seed_summary(result['runs'], result['optimal'])}; "
            f"{seconds:.1f} CPU s"
        )
        if result["ppo"]:
            seconds = sum(r.seconds for r in result["ppo"])
            print(
                f"  PPO, {args.ppo_decisions} decisions x {args.seeds} seeds: "
                f"{common.ppo_summary(result['ppo'], result['optimal'])}; {seconds:.1f} CPU s"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
