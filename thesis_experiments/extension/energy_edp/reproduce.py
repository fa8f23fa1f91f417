"""Seed 003 section 4.3: the energy_consumption and energy-delay-product objectives.

Usage::

    python thesis_experiments/extension/energy_edp/reproduce.py [--part small|scaled|both]
        [--episodes 300] [--seeds 3] [--platforms hetero_704 hetero_2816 hetero_5632]

``small``: the thesis 5.4 platform (4 cores) with the three two-job workloads of 4.3
(second job at t = 0 "synchronised", at 2 s "shifted", at 10 s "sequential", after the first
one ended), each with both objectives. ``scaled``: the heterogeneous platform at 704, 2,816
and 5,632 cores with its 4.2 workload, both objectives. For each: the five pairs played
alone, then the actor-critic agent trained per seed; prints the optimal pairs, convergence of
their probability, and the objective of the last training episodes beside the best pair.
``--ppo-decisions N`` also trains the built-in PPO (as in ``scaling/reproduce.py``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import common  # noqa: E402

OPTIONS = Path(__file__).resolve().parent / "options.json"
OBJECTIVES = {"energy_consumption": "J", "edp": "J s"}
SMALL = tuple(f"two_jobs_{name}" for name in common.TWO_JOB_WORKLOADS)
SCALED = ("hetero_704", "hetero_2816", "hetero_5632")


def run_scenario(
    platform: str,
    workload: str,
    objective: str,
    episodes: int,
    seeds: int,
    ppo_decisions: int = 0,
):
    """Fixed pairs, ``seeds`` actor-critic runs and (with ``ppo_decisions``) as many PPO runs
    of one (platform, workload, objective)."""
    workload_file = common.HERE / "inputs" / f"{workload}.workload.json"
    return common.run_seeds(
        OPTIONS, platform, workload_file, objective, episodes, seeds, ppo_decisions, workload
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("small", "scaled", "both"), default="both")
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument(
        "--ppo-decisions",
        type=int,
        default=0,
        help="also train the built-in PPO for this many decisions per seed",
    )
    parser.add_argument("--platforms", nargs="+", choices=SCALED, default=SCALED)
    args = parser.parse_args(argv)
    scenarios = []
    if args.part in ("small", "both"):
        scenarios += [("basic_4", w) for w in SMALL]
    if args.part in ("scaled", "both"):
        scenarios += [(p, p) for p in args.platforms]
    for platform, workload in scenarios:
        for objective, unit in OBJECTIVES.items():
            pairs, optimal, runs, ppo = run_scenario(
                platform, workload, objective, args.episodes, args.seeds, args.ppo_decisions
            )
            print(f"{platform} / {workload}: objective {objective} ({unit})")
            common.print_pairs(pairs, unit)
            seconds = sum(r.seconds for r in runs)
            print(
                f"  actor-critic, {args.episodes} episodes x {args.seeds} seeds: "
                f"{common.seed_summary(runs, optimal)}; {seconds:.1f} CPU s"
            )
            if ppo:
                seconds = sum(r.seconds for r in ppo)
                print(
                    f"  PPO, {args.ppo_decisions} decisions x {args.seeds} seeds: "
                    f"{common.ppo_summary(ppo, optimal)}; {seconds:.1f} CPU s"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
