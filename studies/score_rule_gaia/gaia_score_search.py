"""A job-scoring rule learned by the cross-entropy method on Gaia, beside the best pair.

Usage: ``python -m studies.score_rule_gaia.gaia_score_search [--split val|eval] [--seed S]
[--train-windows N] [--iterations N] [--population N] [--elite N] [--data-seed S]
[--tie-break] [--weights W W W W W | --load WEIGHTS_JSON] [--windows N SEED] [--only-pair]
--out NEW_DIR``

The learning benchmark's setting (``learning_benchmark.py``, medium mode: the Gaia trace on
the thesis platform, 4,000-job windows, training part jobs 0-15,000, held-out part jobs
15,000-23,000). The agent is :class:`~hdeeprm.environment.job_pickers.ScorePicker`: at each
decision of :class:`~hdeeprm.environment.JobSelectionEnv` it ranks the visible jobs by
``w . log2(1 + (cores, memory, bandwidth, requested time, wait))`` and starts the first
(waiting for it if it does not fit), each job placed by ``high_gflops``. Its five weights are
learned by :func:`~hdeeprm.training.score_search.cem_search` on ``--train-windows`` windows of
the training part (drawn with seed ``1000 + --seed``, apart from the 8 pair-choice windows'
seed 0), starting from ``SQF`` = the pair ``smallest-high_gflops`` (weights 1, 0, 0, 0, 0),
minimising their mean slowdown. With ``--tie-break`` the jobs are ranked by cores first
and only the four other weights are learned, from zero: ``SQF`` with a learned tie-break
between jobs of equal size.

Then, on ``--split val`` (the 8 pair-choice windows of the training part: where the pair was
chosen) or ``--split eval`` (the 8 held-out windows): every pair of the 36 (``--only-pair``:
only ``--pair``) and random choice in the pair environment, the heuristic pickers and the
learned weights, mean slowdown and mean bounded slowdown per policy and per window, and the
learned rule's windows better and worse than the pair.
``--weights`` skips the search and plays the given weights; ``--out``, a new folder, gets the
learned ``weights.json`` (``--load`` plays it again), ``evaluation.csv`` and
``evaluation.png``.
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

import numpy as np

from hdeeprm._atomic import write_text
from hdeeprm.environment import HeterogeneousClusterEnv, HeuristicPicker, JobSelectionEnv
from hdeeprm.environment.job_pickers import SCORE_FEATURES, ScorePicker
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import options_from_json
from hdeeprm.training import evaluate as ev
from hdeeprm.training.score_search import (
    CEMConfig,
    add_cem_arguments,
    cem_config_from,
    cem_search,
    windows_objective,
)
from studies.ppo_policy_pairs import learning_benchmark as lb
from studies.score_rule_gaia.gaia_job_selection import PICKERS, SLOTS

#: ``SQF``'s weights: rank by requested cores alone (the pair ``smallest-high_gflops``).
SQF_WEIGHTS = (1.0, 0.0, 0.0, 0.0, 0.0)


def picker_for(w: np.ndarray, tie_break: bool) -> ScorePicker:
    """The picker of searched weights ``w`` (with ``tie_break``: the 4 tie-break weights)."""
    if tie_break:
        return ScorePicker(np.concatenate([[0.0], w]), cores_first=True)
    return ScorePicker(w)


def tails(env, picker: ScorePicker, windows: list[int]) -> str:
    """Mean wait, and the worst wait and bounded slowdown (tau = 10 s) per window, over
    ``windows`` played with ``picker``: what a lower mean slowdown may cost (starvation)."""
    mean_wait, max_wait, max_bsld = [], [], []
    for k in windows:
        windows_objective(env, picker, [k])
        jobs = env.engine.finished_jobs
        wait = np.array([j.start_time - j.subtime for j in jobs])
        run = np.array([j.finish_time - j.start_time for j in jobs])
        mean_wait.append(wait.mean())
        max_wait.append(wait.max())
        max_bsld.append(np.maximum((wait + run) / np.maximum(run, 10.0), 1.0).max())
    return (
        f"mean wait {np.mean(mean_wait) / 3600:.3f} h; per window, worst wait "
        f"{np.mean(max_wait) / 3600:.1f} h on average ({np.max(max_wait) / 3600:.1f} h at most), "
        f"worst bounded slowdown {np.mean(max_bsld):.0f} ({np.max(max_bsld):.0f})"
    )


def as_chooser(picker):
    """A picker ``picker(env) -> action`` as an evaluation chooser ``(obs, info, env)``."""
    return lambda obs, info, env: picker(env)


def split_windows(inputs, mode: dict, args: argparse.Namespace):
    """The inputs whose ``args.split`` windows are played: the 8 pair-choice windows of the
    training part (``val``) or the 8 held-out windows (``eval``), or with ``--windows N
    SEED`` N windows of that part drawn with SEED."""
    if args.windows is None:
        return lb.pair_choice_inputs(inputs, mode) if args.split == "val" else inputs
    count, seed = args.windows
    if args.split == "val":
        return lb.with_val_windows(inputs, mode["train_jobs"], count, seed)
    env = inputs.options.env
    episodes = dataclasses.replace(env.episodes, eval_windows=count, eval_seed=seed)
    options = dataclasses.replace(inputs.options, env=dataclasses.replace(env, episodes=episodes))
    return dataclasses.replace(inputs, options=options)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("val", "eval"), default="val")
    parser.add_argument("--seed", type=int, default=0, help="CEM's draws and training windows")
    parser.add_argument("--data-seed", type=int, default=1, help="the trace's conversion")
    parser.add_argument("--train-windows", type=int, default=12)
    add_cem_arguments(parser)
    parser.add_argument("--pair", default="smallest-high_gflops")
    parser.add_argument("--pickers", default=PICKERS, help="comma-separated, or 'none'")
    parser.add_argument(
        "--tie-break",
        action="store_true",
        help="rank by cores first and learn only the tie-break (start: all zero = SQF)",
    )
    given = parser.add_mutually_exclusive_group()
    given.add_argument(
        "--weights", type=float, nargs=len(SCORE_FEATURES), help="play these, no search"
    )
    given.add_argument("--load", type=Path, help="play the weights of this weights.json")
    parser.add_argument(
        "--only-pair", action="store_true", help="play only --pair, not all 36 and random"
    )
    parser.add_argument(
        "--windows",
        type=int,
        nargs=2,
        metavar=("N", "SEED"),
        help="play N windows of the split's part drawn with SEED instead of its fixed 8",
    )
    parser.add_argument(
        "--out",
        type=Path,
        required=True,
        help="new folder: weights.json (after a search), evaluation.csv and evaluation.png",
    )
    args = parser.parse_args(argv)
    if args.out.exists():
        parser.error(f"{args.out} exists: choose another --out (never overwritten)")
    if args.load is not None:
        try:
            saved = json.loads(args.load.read_text())
            args.weights = [float(x) for x in saved["weights"]]
            args.tie_break = bool(saved.get("cores_first", False))
            ScorePicker(args.weights)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            parser.error(f"--load {args.load}: not a weights.json of this script ({exc})")
    if args.train_windows < 1:
        parser.error("--train-windows must be >= 1")
    config = cem_config_from(args, parser)
    logging.getLogger("hdeeprm").setLevel(logging.ERROR)
    args.out.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:  # the run's platform and workload files
        return run(args, config, Path(tmp))


def run(args: argparse.Namespace, config: CEMConfig, tmp: Path) -> int:
    mode = lb.MODES["medium"]
    raw = lb.options_for(mode, "avg_job_slowdown", "minimal", args.data_seed, lb.TRACE, lb.PLATFORM)
    inputs = prepare_inputs(options_from_json(raw, tmp / "options.json"), tmp)
    kwargs = {"queue_slots": SLOTS, "core_policy": "high_gflops", "objective": "avg_job_slowdown"}
    split_inputs = split_windows(inputs, mode, args)
    pair_env = HeterogeneousClusterEnv(inputs=split_inputs, split=args.split)
    if args.pair not in pair_env.action_names:  # checked before the search, not after
        print(f"--pair {args.pair!r} is not a pair of the thesis platform's 36", file=sys.stderr)
        return 2

    if args.weights is not None:
        weights = np.array(args.weights)
        print(f"weights given: {np.array2string(weights, precision=4)}")
    else:
        seed = 1000 + args.seed  # apart from the pair-choice windows' seed 0
        train = lb.with_val_windows(inputs, mode["train_jobs"], args.train_windows, seed)
        train_env = JobSelectionEnv(inputs=train, split="val", **kwargs)
        windows = list(range(args.train_windows))
        print(
            f"CEM (seed {args.seed}) on {args.train_windows} training windows (first jobs "
            f"{train_env.windows.val_starts}); features {', '.join(SCORE_FEATURES)}; start "
            f"SQF {SQF_WEIGHTS}; {config.iterations} iterations x {config.population} + 1",
            flush=True,
        )

        def objective(w: np.ndarray) -> float:
            picker = picker_for(w, args.tie_break)
            return float(np.mean(windows_objective(train_env, picker, windows)))

        start = SQF_WEIGHTS[1:] if args.tie_break else SQF_WEIGHTS
        cpu = time.process_time()
        result = cem_search(objective, start, config, log=lambda s: print(s, flush=True))
        weights = np.concatenate([[0.0], result.weights]) if args.tie_break else result.weights
        print(
            f"learned weights {np.array2string(weights, precision=4)}: training windows "
            f"{result.value:.4f} against SQF's {result.start_value:.4f} "
            f"({(result.value - result.start_value) / result.start_value:+.1%}); "
            f"{result.evaluations} evaluations, {time.process_time() - cpu:.0f} s CPU",
            flush=True,
        )
        record = {
            "features": list(SCORE_FEATURES),
            "weights": [float(x) for x in weights],
            "training_value": result.value,
            "sqf_training_value": result.start_value,
            "seed": args.seed,
            "cores_first": args.tie_break,
            "train_windows": train_env.windows.val_starts,
            "history": result.history,
        }
        write_text(args.out / "weights.json", json.dumps(record, indent=1) + "\n")
        print(f"weights: {args.out / 'weights.json'}")

    env = JobSelectionEnv(inputs=split_inputs, split=args.split, **kwargs)
    print(
        f"\n{args.split} windows (first jobs "
        f"{getattr(pair_env.windows, f'{args.split}_starts')}): every pair, random choice, "
        "the pickers and the learned score",
        flush=True,
    )
    label = "learned score"
    learned = ScorePicker(weights, cores_first=args.tie_break)
    pickers = {label: learned}
    for name in [] if args.pickers == "none" else args.pickers.split(","):
        pickers[f"picker {name}"] = HeuristicPicker(name)
    baselines = ev.baseline_policies(pair_env.action_names, 0)
    if args.only_pair:
        baselines = {args.pair: baselines[args.pair]}
    results = ev.evaluate(pair_env, baselines, seed=0)
    results += ev.evaluate(env, {name: as_chooser(p) for name, p in pickers.items()}, seed=0)
    pair_names = [n for n in pair_env.action_names if n != "void"]
    held, per = lb.report_held_out(results, "avg_job_slowdown", label, pair_names, args.out)
    windows = ev.window_ids(pair_env)
    pair = np.array([per[(args.pair, k)] for k in windows])
    sd = np.array([per[(label, k)] for k in windows])
    gain = (sd.mean() - pair.mean()) / pair.mean()
    bounded = held[label].mean_bounded_slowdown
    print(
        f"\n{label}: mean slowdown {sd.mean():.5g} (bounded {bounded:.5g})"
        f" against {args.pair}'s {pair.mean():.5g} ({gain:+.1%}),"
        f" better on {int(np.sum(sd < pair))}, worse on {int(np.sum(sd > pair))} of {len(sd)} "
        f"windows; the best pair on these windows: "
        f"{ev.best_pair(list(held.values()), 'avg_job_slowdown', pair_names)}"
    )
    if args.pair == "smallest-high_gflops":  # SQF in the job environment: the pair exactly
        print(f"{args.pair}: {tails(env, ScorePicker(SQF_WEIGHTS), windows)}")
    print(f"{label}: {tails(env, learned, windows)}")
    return 0


if __name__ == "__main__":
    lb.run_main(main)
