"""CuSH's Sierra-like scenario: the heuristics' NTAT and wait beside the paper's Table 1.

Usage: ``python benchmarks/fidelity/cush_scenario.py [--sets N] [--first-seed S] [--compute C]
[--network W] [--queue-slots Q] [--summit]``. Simulates ``N`` job sets (seeds ``S`` to
``S + N - 1``; default 100 sets from seed 10,000, so that training on low seeds keeps them
held out) on ``platform_examples/cush_sierra.json`` (128 nodes x 2 CPUs + 4 GPUs) with FCFS,
SJF, DRF and Rand, each depth-first (DF) and breadth-first (BF), and prints per heuristic the
mean over the sets of NTAT, wait (time units) and locality penalty (service time / requested
time - 1), the paper's NTAT and wait, and the CPU seconds spent. ``--summit`` gives every node
6 GPUs (the paper's Summit-like columns). See docs/cush.md for what is and is not comparable
with the paper.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

from hdeeprm.scenarios.cush import (
    CUSH_HEURISTICS,
    PAPER_TABLE1_SIERRA,
    PAPER_TABLE1_SUMMIT,
    CushScenario,
)

REPO = Path(__file__).resolve().parents[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=100)
    parser.add_argument("--first-seed", type=int, default=10_000)
    parser.add_argument("--compute", type=float, default=0.5)
    parser.add_argument("--network", type=float, default=1.0)
    parser.add_argument("--queue-slots", type=int, default=5)
    parser.add_argument("--summit", action="store_true", help="6 GPUs per node")
    args = parser.parse_args()
    paper = PAPER_TABLE1_SUMMIT if args.summit else PAPER_TABLE1_SIERRA
    scenario = CushScenario(
        REPO / "platform_examples" / "cush_sierra.json",
        compute=args.compute,
        network=args.network,
        queue_slots=args.queue_slots,
        gpus_per_node=6 if args.summit else None,
    )
    seeds = range(args.first_seed, args.first_seed + args.sets)
    jobsets = [scenario.jobset(seed) for seed in seeds]
    print(
        f"CuSH {'Summit' if args.summit else 'Sierra'}-like scenario: {args.sets} job sets "
        f"(seeds {seeds[0]}..{seeds[-1]}), "
        f"Q = {args.queue_slots}, penalties compute {args.compute} / network {args.network}"
    )
    header = f"{'heuristic':<10}{'NTAT':>8}{'wait (t)':>10}{'penalty':>9}"
    header += f"{'paper NTAT':>12}{'paper wait':>12}{'CPU s':>8}"
    print(header)
    print("-" * len(header))
    for name in CUSH_HEURISTICS:
        for policy in ("DF", "BF"):
            tick = time.process_time()
            results = [
                scenario.run(jobs, name, policy, seed=seed) for jobs, seed in zip(jobsets, seeds)
            ]
            cpu = time.process_time() - tick
            ntat = math.fsum(r.ntat for r in results) / len(results)
            wait = math.fsum(r.wait for r in results) / len(results)
            penalty = math.fsum(r.penalty for r in results) / len(results)
            paper_ntat, paper_wait = paper[f"{name} {policy}"]
            print(
                f"{name + ' ' + policy:<10}{ntat:>8.2f}{wait:>10.2f}{penalty:>9.3f}"
                f"{paper_ntat:>12.2f}{paper_wait:>12.2f}{cpu:>8.1f}"
            )
    paper_ntat, paper_wait = paper["CuSH"]
    print(f"{'CuSH':<10}{'-':>8}{'-':>10}{'-':>9}{paper_ntat:>12.2f}{paper_wait:>12.2f}{'-':>8}")


if __name__ == "__main__":
    main()
