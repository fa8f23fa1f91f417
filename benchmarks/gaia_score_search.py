"""A job-scoring rule learned by the cross-entropy method on Gaia, beside the best pair (issue 12).

Usage: ``python benchmarks/gaia_score_search.py [--split val|eval] [--seed S]
[--train-windows N] [--iterations N] [--population N] [--elite N] [--data-seed S]
[--weights W W W W W] [--out FILE]``

The learning benchmark's setting (``learning_benchmark.py``, medium mode: the Gaia trace on
the thesis platform, 4,000-job windows, training part jobs 0-15,000, held-out part jobs
15,000-23,000). The agent is :class:`~hdeeprm.environment.job_pickers.ScorePicker`: at each
decision of :class:`~hdeeprm.environment.JobSelectionEnv` it ranks the visible jobs by
``w . log2(1 + (cores, memory, bandwidth, requested time, wait))`` and starts the first
(waiting for it if it does not fit), each job placed by ``high_gflops``. Its five weights are
learned by :func:`~hdeeprm.training.score_search.cem_search` on ``--train-windows`` windows of
the training part (drawn with seed ``1000 + --seed``, apart from the 8 pair-choice windows'
seed 0), starting from ``SQF`` = the pair ``smallest-high_gflops`` (weights 1, 0, 0, 0, 0),
minimising their mean slowdown.

Then, on ``--split val`` (the 8 pair-choice windows of the training part: where the pair was
chosen) or ``--split eval`` (the 8 held-out windows): the pair in the pair environment, the
heuristic pickers and the learned weights, mean slowdown and mean bounded slowdown per
policy and per window, and the learned rule's windows better and worse than the pair.
``--weights`` skips the search and plays the given weights; ``--out`` saves the learned
weights as JSON (never overwriting a file).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
import tempfile
import time
from pathlib import Path

import learning_benchmark as lb
import numpy as np
from gaia_job_selection import PICKERS, SLOTS, play

from hdeeprm._atomic import write_text
from hdeeprm.environment import HeterogeneousClusterEnv, HeuristicPicker, JobSelectionEnv
from hdeeprm.environment.job_pickers import SCORE_FEATURES, ScorePicker
from hdeeprm.experiment import prepare_inputs
from hdeeprm.options import options_from_json
from hdeeprm.training.score_search import CEMConfig, cem_search, windows_objective

#: ``SQF``'s weights: rank by requested cores alone (the pair ``smallest-high_gflops``).
SQF_WEIGHTS = (1.0, 0.0, 0.0, 0.0, 0.0)


def training_inputs(inputs, mode: dict, windows: int, seed: int):
    """``inputs`` whose ``val`` split is ``windows`` windows of the training part drawn with
    ``seed`` (the search's training windows; the held-out part is never among them)."""
    env = inputs.options.env
    episodes = dataclasses.replace(
        env.episodes,
        val_jobs=tuple(mode["train_jobs"]),
        val_windows=windows,
        val_seed=seed,
        val_sampling="uniform",
    )
    options = dataclasses.replace(inputs.options, env=dataclasses.replace(env, episodes=episodes))
    return dataclasses.replace(inputs, options=options)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("val", "eval"), default="val")
    parser.add_argument("--seed", type=int, default=0, help="CEM's draws and training windows")
    parser.add_argument("--data-seed", type=int, default=1, help="the trace's conversion")
    parser.add_argument("--train-windows", type=int, default=12)
    parser.add_argument("--iterations", type=int, default=6)
    parser.add_argument("--population", type=int, default=10)
    parser.add_argument("--elite", type=int, default=3)
    parser.add_argument("--init-std", type=float, default=0.5)
    parser.add_argument("--pair", default="smallest-high_gflops")
    parser.add_argument("--pickers", default=PICKERS, help="comma-separated, or 'none'")
    parser.add_argument(
        "--weights", type=float, nargs=len(SCORE_FEATURES), help="play these, no search"
    )
    parser.add_argument("--out", type=Path, help="JSON file for the learned weights")
    args = parser.parse_args(argv)
    if args.out is not None and args.out.exists():
        parser.error(f"{args.out} exists: choose another --out (never overwritten)")
    if args.train_windows < 1:
        parser.error("--train-windows must be >= 1")
    try:
        config = CEMConfig(
            iterations=args.iterations,
            population=args.population,
            elite=args.elite,
            init_std=args.init_std,
            seed=args.seed,
        )
    except ValueError as exc:
        parser.error(str(exc))
    logging.getLogger("hdeeprm").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as tmp:  # the run's platform and workload files
        return run(args, config, Path(tmp))


def run(args: argparse.Namespace, config: CEMConfig, tmp: Path) -> int:
    mode = lb.MODES["medium"]
    raw = lb.options_for(mode, "avg_job_slowdown", "minimal", args.data_seed, lb.TRACE, lb.PLATFORM)
    inputs = prepare_inputs(options_from_json(raw, tmp / "options.json"), tmp)
    kwargs = {"queue_slots": SLOTS, "core_policy": "high_gflops", "objective": "avg_job_slowdown"}

    if args.weights is not None:
        weights = np.array(args.weights)
        print(f"weights given: {np.array2string(weights, precision=4)}")
    else:
        train = training_inputs(inputs, mode, args.train_windows, 1000 + args.seed)
        train_env = JobSelectionEnv(inputs=train, split="val", **kwargs)
        windows = list(range(args.train_windows))
        print(
            f"CEM (seed {args.seed}) on {args.train_windows} training windows (first jobs "
            f"{train_env.windows.val_starts}); features {', '.join(SCORE_FEATURES)}; start "
            f"SQF {SQF_WEIGHTS}; {config.iterations} iterations x {config.population} + 1",
            flush=True,
        )

        def objective(w: np.ndarray) -> float:
            return float(np.mean(windows_objective(train_env, ScorePicker(w), windows)))

        cpu = time.process_time()
        result = cem_search(objective, SQF_WEIGHTS, config, log=lambda s: print(s, flush=True))
        weights = result.weights
        print(
            f"learned weights {np.array2string(weights, precision=4)}: training windows "
            f"{result.value:.4f} against SQF's {result.start_value:.4f} "
            f"({(result.value - result.start_value) / result.start_value:+.1%}); "
            f"{result.evaluations} evaluations, {time.process_time() - cpu:.0f} s CPU",
            flush=True,
        )
        if args.out is not None:
            record = {
                "features": list(SCORE_FEATURES),
                "weights": [float(x) for x in weights],
                "training_value": result.value,
                "sqf_training_value": result.start_value,
                "seed": args.seed,
                "train_windows": train_env.windows.val_starts,
                "history": result.history,
            }
            write_text(args.out, json.dumps(record, indent=1) + "\n")
            print(f"weights: {args.out}")

    split_inputs = lb.pair_choice_inputs(inputs, mode) if args.split == "val" else inputs
    pair_env = HeterogeneousClusterEnv(inputs=split_inputs, split=args.split)
    if args.pair not in pair_env.action_names:
        print(f"--pair {args.pair!r} is not a pair of the thesis platform's 36", file=sys.stderr)
        return 2
    pair_index = pair_env.action_names.index(args.pair)
    windows = list(range(pair_env.nb_eval_windows))
    env = JobSelectionEnv(inputs=split_inputs, split=args.split, **kwargs)
    print(
        f"\n{args.split} windows (first jobs {getattr(pair_env.windows, f'{args.split}_starts')}):",
        flush=True,
    )
    rows: dict[str, list[tuple[float, float]]] = {}
    rows[f"pair {args.pair}"] = play(pair_env, windows, lambda e: pair_index)
    for name in [] if args.pickers == "none" else args.pickers.split(","):
        rows[f"picker {name}"] = play(env, windows, HeuristicPicker(name))
    label = "learned score"
    rows[label] = play(env, windows, ScorePicker(weights))
    print(f"\n{'policy':32s} {'slowdown':>9s} {'bsld':>9s}  per window (slowdown)")
    for name, values in rows.items():
        sd = np.array([v[0] for v in values])
        bsld = np.array([v[1] for v in values])
        print(f"{name:32s} {sd.mean():9.4f} {bsld.mean():9.4f}  {' '.join(f'{v:.3f}' for v in sd)}")
    pair = np.array([v[0] for v in rows[f"pair {args.pair}"]])
    sd = np.array([v[0] for v in rows[label]])
    print(
        f"\n{label}: mean slowdown {sd.mean():.5g} against {args.pair}'s {pair.mean():.5g} "
        f"({(sd.mean() - pair.mean()) / pair.mean():+.1%}), better on "
        f"{int(np.sum(sd < pair))}, worse on {int(np.sum(sd > pair))} of {len(sd)} windows"
    )
    return 0


if __name__ == "__main__":
    lb.run_main(main)
