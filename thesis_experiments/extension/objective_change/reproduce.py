"""Seed 003 sections 3.3.1 and 4.4.2: changing the objective once the agent has converged.

Usage::

    python thesis_experiments/extension/objective_change/reproduce.py [--platform hetero_5632]
        [--phase-episodes 400 400 300 300] [--seeds 3] [--mode reset continue]

The paper trains on its 5,632-core platform with energy_consumption, then makespan, then
energy-delay product, then makespan again (changes at episodes 400, 800 and 1,100), each
objective chosen so that its optimal pair differs from the previous one's. Two ways to react
to the change (both from the paper):

* ``reset`` (its final model, 3.3.1.2): a new, untrained agent for each objective;
* ``continue`` (its first model, 3.3.1.1, which it saw fail to switch at times): the same
  network, optimiser and running return statistics keep training under the new objective
  (``-im``/``-om`` between phases).

Prints, per phase, the optimal pairs of its objective (the five pairs played alone), in how
many seeds their probability stays above 0.9 to the end of the phase and from which episode
of the phase, and the objective of the phase's last episodes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import common  # noqa: E402

OPTIONS = Path(__file__).resolve().parent / "options.json"
#: The paper's order of objectives (4.4.2).
PHASES = ("energy_consumption", "makespan", "edp", "makespan")
UNITS = {"energy_consumption": "J", "makespan": "s", "edp": "J s"}
PLATFORMS = ("hetero_704", "hetero_2816", "hetero_5632")


def run_seed(
    platform: str, seed: int, mode: str, phase_episodes: int | list[int]
) -> list[common.TrainingRun]:
    """One seed through the four phases (``phase_episodes`` each, or one count per phase);
    returns one TrainingRun per phase."""
    if isinstance(phase_episodes, int):
        phase_episodes = [phase_episodes] * len(PHASES)
    workload = common.HERE / "inputs" / f"{platform}.workload.json"
    phases = [
        common.Phase(
            # reset: a new agent per objective, its own initial weights (the options' seed)
            common.scenario_options(
                OPTIONS,
                platform,
                objective=objective,
                seed=1000 * k + seed if mode == "reset" else seed,
            ),
            workload,
            phase_episodes[k],
        )
        for k, objective in enumerate(PHASES)
    ]
    return common.train_phases(phases, mode, common.temp_run_dir(f"objective-change-{mode}"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--platform", choices=PLATFORMS, default="hetero_5632")
    parser.add_argument(
        "--phase-episodes",
        type=int,
        nargs="+",
        default=[400, 400, 300, 300],
        help="episodes per phase: one count, or one per phase (the paper's)",
    )
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument(
        "--mode", nargs="+", choices=("reset", "continue"), default=["reset", "continue"]
    )
    args = parser.parse_args(argv)
    lengths = common.phase_lengths(args.phase_episodes, len(PHASES), parser)
    workload = common.HERE / "inputs" / f"{args.platform}.workload.json"
    optimal = {}
    for objective in dict.fromkeys(PHASES):
        options = common.scenario_options(OPTIONS, args.platform, objective=objective)
        pairs = common.run_fixed_pairs(options, workload, common.temp_run_dir("pairs"))
        optimal[objective] = common.optimal_pairs(pairs)
        print(f"{args.platform}: objective {objective} ({UNITS[objective]})")
        common.print_pairs(pairs, UNITS[objective])
    for mode in args.mode:
        per_seed = [run_seed(args.platform, s, mode, lengths) for s in range(args.seeds)]
        common.print_phases(per_seed, lengths, mode, list(PHASES), [optimal[obj] for obj in PHASES])
    return 0


if __name__ == "__main__":
    sys.exit(main())
