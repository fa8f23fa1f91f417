"""Thesis 5.4 over several seeds: when does the agent settle on a high_mem_bw action?

Usage::

    python thesis_experiments/learning/convergence.py [--episodes 350] [--seeds 10]
        [--agent reinforce|actor_critic]

Trains the README's agent (REINFORCE by default) on ``options.json`` + ``workload.json``
with the options' seed and with seeds 0 .. N-1, and prints per seed the first episode at which
the probability of the two ``high_mem_bw`` pairs passes 0.9, the episode from which it stays
above 0.9, and the makespan of the last episode (5.25 s is the optimum).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "extension"))

import common  # noqa: E402

from hdeeprm.options import load_options  # noqa: E402

OPTIMAL = ["shortest-high_mem_bw", "first-high_mem_bw"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=350)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--agent", choices=("reinforce", "actor_critic"), default="reinforce")
    args = parser.parse_args(argv)
    options = load_options(HERE / "options.json")
    agent = common.REPO / "agent_examples" / f"{args.agent}.py"
    seeds = [options.seed, *range(args.seeds)]
    passed, stayed = [], []
    for seed in seeds:
        run = common.train(
            common.dataclasses.replace(options, seed=seed),
            HERE / "workload.json",
            common.temp_run_dir("thesis54"),
            args.episodes,
            agent_file=agent,
        )
        p = run.optimal_probability(OPTIMAL)
        first = int(np.argmax(p > 0.9)) if (p > 0.9).any() else None
        settled = run.converged_at(OPTIMAL)
        passed.append(first)
        stayed.append(settled)
        print(
            f"seed {seed:>9}: p(high_mem_bw) > 0.9 first at episode {first}, stays from "
            f"{settled}; final p {p[-1]:.4f}; last makespan {run.objectives[-1]:.4g} s; "
            f"{run.seconds:.1f} CPU s"
        )
    ok = [f for f in passed if f is not None]
    print(
        f"{len(ok)} of {len(seeds)} seeds pass 0.9 (episodes {min(ok)}-{max(ok)}, median "
        f"{int(np.median(ok))}); {sum(s is not None for s in stayed)} stay above it to "
        f"episode {args.episodes - 1}"
        if ok
        else f"no seed passes 0.9 in {args.episodes}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
