"""Seed 003 section 4.4.1: the Gaia cluster with 932 jobs of its trace, objective makespan.

Usage::

    python thesis_experiments/extension/gaia/reproduce.py [--episodes 100] [--seeds 3]
        [--jobs 932] [--start-job 4] [--bandwidth-seeds S ...] [--reward thesis] [--traces DIR]

The paper's first "realistic" experiment: the UniLu Gaia platform (its Table 4.1, the same as
the HDeepRM thesis's: ``platform_examples/gaia.json``, 2,280 cores), 932 jobs of the Gaia trace
of the Parallel Workloads Archive, objective makespan, learning rate 0.005. It plays the five
pairs alone (its Figure 4.10: ``shortest-low_power`` gives the least makespan) and reports that
the agent learns that pair in under 40 episodes (Figure 4.11).

The paper does not say which 932 jobs: here the first 932 after the 4 early ones the HDeepRM
thesis drops (``"start_job": 4``, as ``thesis_experiments/primer``). The trace gives no memory
bandwidth: hdeeprm draws one per job with the options' seed; the trace is converted once so
that every pair and every training seed plays the same jobs. ``--bandwidth-seeds S ...`` also
plays the pairs on the draws of those seeds, to see whether the pairs' ranking depends on it.
``--reward objective`` trains with hdeeprm's rewards that add up to minus the makespan instead
of the thesis's (the time-averaged GFLOPS delivered over each step's span).

Prints each pair's makespan and energy, then per seed the episode from which the optimal
pairs' probability stays above 0.9, the same for ``shortest-low_power`` alone, and the
makespans of the training episodes beside the best pair's (``--seeds 0``: the pairs only).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from hdeeprm.workload.archive import find_trace, missing_message

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import common  # noqa: E402

OPTIONS = Path(__file__).resolve().parent / "options.json"
#: The pair the paper found optimal (Figure 4.10).
PAPER_OPTIMUM = "shortest-low_power"
GAIA = "UniLu-Gaia-2014-1.swf.gz"


def gaia_options(jobs: int, start_job: int, seed: int | None = None, reward: str = "thesis"):
    """The options file with another window of the trace (and optionally another seed, which
    also redraws the jobs' memory bandwidth when the trace is converted, or reward)."""
    options = common.scenario_options(OPTIONS, None, seed=seed)
    env = dataclasses.replace(options.env, reward=reward)
    return dataclasses.replace(options, nb_jobs=jobs, start_job=start_job, env=env)


def run(
    episodes: int,
    seeds: int,
    jobs: int = 932,
    start_job: int = 4,
    bandwidth_seeds: Sequence[int] = (),
    reward: str = "thesis",
) -> dict:
    """Fixed pairs on the converted window (and on the bandwidth draws of
    ``bandwidth_seeds``), then ``seeds`` actor-critic runs on it."""
    options = gaia_options(jobs, start_job, reward=reward)
    workload = common.convert_trace(options, common.temp_run_dir("gaia"))
    pairs = common.run_fixed_pairs(options, workload, common.temp_run_dir("gaia"))
    redraws = {}
    for draw in bandwidth_seeds:
        redrawn = gaia_options(jobs, start_job, seed=draw)
        other = common.convert_trace(redrawn, common.temp_run_dir("gaia"))
        redraws[draw] = common.run_fixed_pairs(redrawn, other, common.temp_run_dir("gaia"))
    runs = []
    for seed in range(seeds):
        # The agent's seed only: the jobs stay those converted above.
        seeded = dataclasses.replace(options, seed=seed)
        runs.append(common.train(seeded, workload, common.temp_run_dir("gaia"), episodes))
    return {
        "workload": workload,
        "pairs": pairs,
        "optimal": common.optimal_pairs(pairs),
        "redraws": redraws,
        "runs": runs,
    }


def episode_summary(runs: list[common.TrainingRun], best: float) -> str:
    """How the training episodes' makespans compare with the best pair's."""
    values = np.concatenate([r.objectives for r in runs])
    better = float(np.mean(values < best * (1 - 1e-9)))
    return (
        f"training episodes' makespan {values.min():.6g}-{values.max():.6g} s "
        f"(median {np.median(values):.6g}); {100 * better:.0f}% of them below the best "
        f"pair's {best:.6g} s"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=932)
    parser.add_argument("--start-job", type=int, default=4)
    parser.add_argument("--bandwidth-seeds", type=int, nargs="*", default=[])
    parser.add_argument("--reward", choices=("thesis", "objective"), default="thesis")
    parser.add_argument(
        "--traces",
        type=Path,
        default=None,
        help="folder with UniLu-Gaia-2014-1.swf.gz (default: where `hdeeprm-traces path "
        "UniLu-Gaia-2014-1.swf.gz` finds it: $HDEEPRM_TRACES, else the trace cache)",
    )
    args = parser.parse_args(argv)
    if args.traces is None:
        found = find_trace(GAIA)
        if found is None:
            print(f"error: {missing_message(GAIA)} (or give --traces)", file=sys.stderr)
            return 2
        traces = found.parent
    else:
        traces = args.traces
    if not (traces / GAIA).is_file():
        print(f"error: no {GAIA} in {traces} (give --traces)", file=sys.stderr)
        return 2
    # The options file names ${HDEEPRM_TRACES}/UniLu-Gaia-2014-1.swf.gz: one folder only.
    os.environ["HDEEPRM_TRACES"] = str(traces.resolve())
    result = run(
        args.episodes, args.seeds, args.jobs, args.start_job, args.bandwidth_seeds, args.reward
    )
    pairs, optimal = result["pairs"], result["optimal"]
    jobs = json.loads(result["workload"].read_text())["jobs"]
    print(
        f"gaia (2,280 cores), {len(jobs)} jobs numbered {jobs[0]['id']}-{jobs[-1]['id']} in "
        f"the trace, submitted over {jobs[-1]['subtime'] - jobs[0]['subtime']:.0f} s; "
        "objective makespan (s)"
    )
    common.print_pairs(pairs, "s")
    for draw, other in result["redraws"].items():
        print(f"  bandwidth draw {draw}: optimal {'/'.join(common.optimal_pairs(other))}")
        common.print_pairs(other, "s")
    runs = result["runs"]
    if not runs:
        return 0  # --seeds 0: the pairs only
    seconds = sum(r.seconds for r in runs)
    print(
        f"actor-critic ({args.reward} rewards), {args.episodes} episodes x {args.seeds} "
        f"seeds, {seconds:.1f} CPU s, "
        f"optimal {'/'.join(optimal)}: {common.seed_summary(runs, optimal)}"
    )
    print(f"  {PAPER_OPTIMUM} alone: {common.seed_summary(runs, [PAPER_OPTIMUM])}")
    finals = np.array([r.probabilities[-1] for r in runs])
    print(
        "  final probabilities per seed: "
        + "; ".join(
            ", ".join(f"{n} {p:.2f}" for n, p in zip(runs[0].names, row, strict=True))
            for row in finals
        )
    )
    best = min(r.objective for r in pairs.values())
    print(f"  {episode_summary(runs, best)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
