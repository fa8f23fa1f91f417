"""A learned EASY queue ordering: a score found by the cross-entropy method, beside every fixed one.

Usage: ``python -m studies.easy_ordering.easy_score_search [--seed S] [--train-windows N]
[--iterations N] [--population N] [--elite N] [--init-std X] [--theta S|none] [--split train|eval]
[--weights A B C | --load WEIGHTS_JSON] --out NEW_DIR``

The setting of ``heuristic_learning.py`` (this study's README): KTH-SP2 on
``platform_examples/kth_sp2.json`` (100 identical cores, no bandwidth slow-down), EASY with
requested times, FCFS backfilling and the starvation threshold ``--theta`` (default 40 h, the
thesis's chapter 6), 2,000-job windows, training part jobs 0-16,000, held-out part jobs
16,000-28,467, AVEbsld (tau = 10 s), lower is better.

1. The primary ordering is the score ordering ``SCORE(a,b,c)``
   (:mod:`hdeeprm.scheduling.orderings`): key ``a log2(p) + b log2(q) + c s/3600``, lowest
   first, with ``p`` the requested time, ``q`` the cores and ``s`` the submission time in
   hours (a positive ``c`` ages waiting jobs). Its three weights are learned by
   :func:`~hdeeprm.training.score_search.cem_search` on ``--train-windows`` windows of the
   training part (drawn with seed ``1000 + --seed``), from ``SPF`` = ``SCORE(1,0,0)``,
   minimising their mean AVEbsld.
2. Every fixed ordering (the thesis's 12 of section 6.2.1 and F1-F4) plays the same training
   windows: the best of them is the ordering the training data would have chosen.
3. On ``--split eval`` (the 10 held-out windows, the same as ``heuristic_learning.py``'s) or
   ``--split train`` (the training windows again): every fixed ordering and the learned one,
   mean and median AVEbsld per policy and per window, the learned ordering's windows better
   and worse than the training choice and than the best fixed ordering on those windows.

``--weights`` skips the search; ``--out``, a new folder, gets ``weights.json`` (``--load``
plays it again) and ``evaluation.csv``.
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
from hdeeprm.environment import THESIS_ORDERINGS, HeuristicSelectionEnv
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import options_from_json
from hdeeprm.scheduling.orderings import SCORE_FEATURES, score_name
from hdeeprm.training import evaluate as ev
from hdeeprm.training.score_search import (
    CEMConfig,
    add_cem_arguments,
    cem_config_from,
    cem_search,
)
from studies.easy_ordering import heuristic_learning as hl

#: ``SPF``'s weights (the same order: requested times are at least 1 s).
SPF_WEIGHTS = (1.0, 0.0, 0.0)
#: The fixed orderings compared: the thesis's 12 and Carastan-Santos and de Camargo's F1-F4.
FIXED = (*THESIS_ORDERINGS, "F1", "F2", "F3", "F4")
OBJECTIVE = "avg_bounded_slowdown"


def part_inputs(
    inputs,
    args: argparse.Namespace,
    jobs: list[int],
    n: int,
    seed: int,
    out: Path,
    other: list[int],
):
    """``inputs`` whose ``eval`` split is ``n`` windows of ``jobs`` drawn with ``seed``
    (``other``: the other part, the options' training part)."""
    raw = hl.options_for(args, other, jobs, n)
    raw["pybatsim"]["env"]["episodes"]["eval_seed"] = seed
    path = out / f"options_{jobs[0]}_{jobs[1]}_{n}_{seed}.json"
    return dataclasses.replace(inputs, options=options_from_json(raw, path))


def play(inputs, args: argparse.Namespace, names: list[str]) -> list[ev.WindowResult]:
    """Each ordering of ``names`` as EASY's primary ordering on every window of ``inputs``."""
    env = HeuristicSelectionEnv(
        inputs=inputs,
        split="eval",
        scheduler={"preset": "easy", "theta": args.theta},
        choices=names,
        period=86400.0,  # one choice: the same schedule as per pass, fewer steps
    )
    policies = {name: ev.fixed_policy(i) for i, name in enumerate(env.action_names)}
    return ev.evaluate(env, policies, seed=0)


def means(results: list[ev.WindowResult]) -> dict[str, float]:
    return {s.policy: s.mean_objective for s in ev.summarize(results)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trace", type=Path, default=hl.TRACE)
    parser.add_argument("--platform", type=Path, default=hl.PLATFORM)
    parser.add_argument("--window-jobs", type=int, default=2000)
    parser.add_argument("--train-jobs", type=int, nargs=2, default=[0, 16000])
    parser.add_argument("--eval-jobs", type=int, nargs=2, default=[16000, 28467])
    parser.add_argument("--eval-windows", type=int, default=10)
    parser.add_argument("--theta", type=hl.seconds_or_none, default=144000.0, help="'none': off")
    parser.add_argument("--split", choices=("train", "eval"), default="eval")
    parser.add_argument("--seed", type=int, default=0, help="CEM's draws and training windows")
    parser.add_argument("--data-seed", type=int, default=1, help="the options' seed")
    parser.add_argument("--train-windows", type=int, default=16)
    add_cem_arguments(parser, iterations=8, population=12)
    given = parser.add_mutually_exclusive_group()
    given.add_argument(
        "--weights", type=float, nargs=len(SCORE_FEATURES), help="play these, no search"
    )
    given.add_argument("--load", type=Path, help="play the weights of this weights.json")
    parser.add_argument(
        "--out", type=Path, required=True, help="new folder: weights.json, evaluation.csv"
    )
    args = parser.parse_args(argv)
    if args.out.exists():
        parser.error(f"{args.out} exists: choose another --out (never overwritten)")
    for path in (args.trace, args.platform):
        if not path.is_file():
            parser.error(f"not found: {path}")
    if args.load is not None:
        try:
            args.weights = [float(x) for x in json.loads(args.load.read_text())["weights"]]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            parser.error(f"--load {args.load}: not a weights.json of this script ({exc})")
    if args.weights is not None:  # given or loaded: three finite numbers
        try:
            score_name(args.weights)
        except ValueError as exc:
            parser.error(f"{'--load' if args.load else '--weights'}: {exc}")
    if args.train_windows < 1:
        parser.error("--train-windows must be >= 1")
    config = cem_config_from(args, parser)
    logging.getLogger("hdeeprm").setLevel(logging.ERROR)
    args.out.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:  # the run's platform and workload files
        return run(args, config, Path(tmp))


def run(args: argparse.Namespace, config: CEMConfig, tmp: Path) -> int:
    hl_args = argparse.Namespace(
        seed=args.data_seed,
        trace=args.trace,
        platform=args.platform,
        window_jobs=args.window_jobs,
    )
    raw = hl.options_for(hl_args, args.train_jobs, args.eval_jobs, args.eval_windows)
    inputs = prepare_inputs(options_from_json(raw, tmp / "options.json"), tmp)
    seed = 1000 + args.seed  # apart from the held-out windows' seed 0
    train = part_inputs(
        inputs, hl_args, args.train_jobs, args.train_windows, seed, tmp, args.eval_jobs
    )
    print(
        f"{args.trace.name}: {len(inputs.workload.jobs)} jobs, "
        f"{len(inputs.platform.cores)} cores; EASY "
        f"theta={args.theta}, FCFS backfilling; {args.train_windows} training windows of "
        f"{args.window_jobs} jobs from jobs {args.train_jobs} (seed {seed})",
        flush=True,
    )
    cpu = time.process_time()
    fixed_train = means(play(train, args, list(FIXED)))
    chosen = min(FIXED, key=lambda n: (fixed_train[n], FIXED.index(n)))
    print(
        "fixed orderings on the training windows: "
        + ", ".join(f"{n} {fixed_train[n]:.2f}" for n in sorted(FIXED, key=fixed_train.get))
        + f"; chosen: {chosen} ({time.process_time() - cpu:.0f} s CPU)",
        flush=True,
    )

    if args.weights is not None:
        weights = np.array(args.weights, dtype=float)
        print(f"weights given: {np.array2string(weights, precision=4)}")
    else:

        def objective(w: np.ndarray) -> float:
            name = score_name(w)
            return means(play(train, args, [name]))[name]

        print(
            f"CEM (seed {args.seed}): features {', '.join(SCORE_FEATURES)}; start SPF "
            f"{SPF_WEIGHTS}; {config.iterations} iterations x {config.population} + 1",
            flush=True,
        )
        cpu = time.process_time()
        result = cem_search(objective, SPF_WEIGHTS, config, log=lambda s: print(s, flush=True))
        weights = result.weights
        print(
            f"learned {score_name(weights)}: training windows {result.value:.4f} against SPF's "
            f"{result.start_value:.4f} and {chosen}'s {fixed_train[chosen]:.4f} "
            f"({(result.value - fixed_train[chosen]) / fixed_train[chosen]:+.1%}); "
            f"{result.evaluations} evaluations, {time.process_time() - cpu:.0f} s CPU",
            flush=True,
        )
        record = {
            "ordering": score_name(weights),
            "features": list(SCORE_FEATURES),
            "weights": [float(x) for x in weights],
            "training_value": result.value,
            "spf_training_value": result.start_value,
            "fixed_training_values": fixed_train,
            "chosen_fixed": chosen,
            "seed": args.seed,
            "train_windows": args.train_windows,
            "history": result.history,
        }
        write_text(args.out / "weights.json", json.dumps(record, indent=1) + "\n")
        print(f"weights: {args.out / 'weights.json'}")

    label = score_name(weights)
    other = args.train_jobs
    if args.split == "eval":
        where = part_inputs(inputs, hl_args, args.eval_jobs, args.eval_windows, 0, tmp, other)
    else:
        where = train
    results = play(where, args, [*FIXED, label])
    ev.write_csv(results, args.out / "evaluation.csv")
    print()
    print(ev.format_table(results, OBJECTIVE, highlight=[label], pair_names=list(FIXED)))
    per = {(r.policy, r.window): r.objective for r in results}
    windows = sorted({r.window for r in results})
    held = means(results)
    best = min(FIXED, key=lambda n: (held[n], FIXED.index(n)))
    learned = np.array([per[(label, k)] for k in windows])
    for name, role in ((chosen, "chosen on the training windows"), (best, "best in hindsight")):
        base = np.array([per[(name, k)] for k in windows])
        print(
            f"{args.split} windows: learned {learned.mean():.4g} against {name} ({role}) "
            f"{base.mean():.4g}: {(learned.mean() - base.mean()) / base.mean():+.1%}, better "
            f"on {int(np.sum(learned < base))}, worse on {int(np.sum(learned > base))} of "
            f"{len(windows)} windows"
        )
    print(f"outputs: {args.out}")
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
