"""How much can learning gain on a trace? Every fixed pair on fixed windows, per-window oracle.

Usage: ``python -m studies.ppo_policy_pairs.window_headroom [--jobs A B] [--windows N] [--seed S]
[--grid STEP] [--window-jobs N] [--objective O] [--selection PAIR ...] [--trace SWF
--platform JSON] [--csv FILE]``

Every fixed pair of the action space plays the same windows of ``--jobs`` (default: Gaia's
training part, jobs 0-15,000): ``--windows`` windows drawn with ``--seed`` exactly as the
learning benchmark draws its pair-choice and held-out windows (``episodes.val_jobs``), or with
``--grid STEP`` one window starting every ``STEP`` jobs. It prints, per window, the best and
worst pair, the spread between them (0: idle, every pair alike) and the single best pair's
objective; then the single best pair's mean against the per-window best pair in hindsight
(:mod:`studies.ppo_policy_pairs.headroom`): the most a learner that picks one pair per window could
gain. Also prints each window's offered load (:func:`hdeeprm.environment.episodes.window_loads`).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import logging
import tempfile
import time
from pathlib import Path

import numpy as np

from hdeeprm.environment import HeterogeneousClusterEnv
from hdeeprm.environment.episodes import window_loads
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import options_from_json
from hdeeprm.training import evaluate as ev
from studies.ppo_policy_pairs.headroom import format_headroom, headroom
from studies.ppo_policy_pairs.learning_benchmark import MODES, PLATFORM, TRACE, options_for


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, nargs=2, default=[0, 15000], metavar=("A", "B"))
    parser.add_argument("--windows", type=int, default=8, help="windows drawn with --seed")
    parser.add_argument("--seed", type=int, default=0, help="window draw seed")
    parser.add_argument("--grid", type=int, default=None, help="one window every STEP jobs")
    parser.add_argument("--window-jobs", type=int, default=4000)
    parser.add_argument(
        "--objective",
        default="avg_job_slowdown",
        choices=["avg_job_slowdown", "energy_consumption", "avg_bounded_slowdown"],
    )
    parser.add_argument("--selection", nargs="+", default=None, metavar="PAIR")
    parser.add_argument("--trace", type=Path, default=TRACE)
    parser.add_argument("--platform", type=Path, default=PLATFORM)
    parser.add_argument("--csv", type=Path, default=None, help="write per-window rows here")
    parser.add_argument(
        "--from-csv",
        type=Path,
        default=None,
        help="no simulation: the headroom of the fixed pairs (names with a '-', random and "
        "models left out) in an evaluation.csv of the learning benchmark or of --csv",
    )
    return parser.parse_args(argv)


def from_csv(path: Path, objective: str) -> int:
    """The headroom of the fixed pairs recorded in an ``evaluation.csv``."""
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    results = [
        ev.WindowResult(
            r["policy"],
            int(r["window"]),
            float(r["objective"]),
            float(r["mean_slowdown"]),
            float(r["mean_bounded_slowdown"]),
            int(r["steps"]),
            float(r["wall_time_s"]),
        )
        for r in rows
        if "-" in r["policy"] and " " not in r["policy"] and not r["policy"].startswith("model")
    ]
    print(f"{path}: {objective}")
    print(format_headroom(headroom(results, objective)))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.from_csv is not None:
        return from_csv(args.from_csv, args.objective)
    logging.getLogger("hdeeprm").setLevel(logging.ERROR)
    lo, hi = args.jobs
    if args.grid is not None:
        starts = list(range(lo, hi - args.window_jobs + 1, args.grid))
    else:
        starts = None
    mode = {
        **MODES["medium"],
        "window_jobs": args.window_jobs,
        "train_jobs": [lo, hi],
        "train_windows": args.windows,
        "eval_jobs": None,
    }
    cpu0, wall0 = time.process_time(), time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        raw = options_for(
            mode, args.objective, "minimal", 0, args.trace, args.platform, args.selection
        )
        del raw["pybatsim"]["env"]["episodes"]["eval_jobs"]
        raw["pybatsim"]["env"]["episodes"]["val_seed"] = args.seed
        path = Path(tmp) / "options.json"
        path.write_text(json.dumps(raw))
        inputs = prepare_inputs(options_from_json(raw, path), tmp)
        episodes = inputs.options.env.episodes

        def env_for(first: int | None) -> HeterogeneousClusterEnv:
            eps = episodes
            if first is not None:  # one window exactly at `first`
                eps = dataclasses.replace(
                    episodes, val_jobs=(first, first + args.window_jobs), val_windows=1
                )
            env_opts = dataclasses.replace(inputs.options.env, episodes=eps)
            options = dataclasses.replace(inputs.options, env=env_opts)
            return HeterogeneousClusterEnv(
                inputs=dataclasses.replace(inputs, options=options), split="val"
            )

        results: list[ev.WindowResult] = []
        if starts is None:
            env = env_for(None)
            starts = env.windows.val_starts
            pairs = {n: ev.fixed_policy(i) for i, n in enumerate(env.action_names)}
            results = ev.evaluate(env, pairs, seed=0)
        else:
            for k, first in enumerate(starts):
                env = env_for(first)
                pairs = {n: ev.fixed_policy(i) for i, n in enumerate(env.action_names)}
                for r in ev.evaluate(env, pairs, seed=0):
                    results.append(dataclasses.replace(r, window=k))
        loads = window_loads(
            inputs.workload,
            args.window_jobs,
            len(inputs.platform.cores),
            inputs.platform.reference_speed * 1e9,
        )
        steps = sum(r.steps for r in results)
        result = headroom(results, args.objective)
        print(
            f"{args.trace.name} on {args.platform.name}: {len(starts)} windows of "
            f"{args.window_jobs} jobs in [{lo}, {hi}), {len(pairs)} pairs, {args.objective}"
        )
        print(format_headroom(result, starts))
        print("offered load per window (work / platform capacity while it arrives):")
        print("  " + ", ".join(f"{s}: {loads[s]:.3f}" for s in starts))
        if args.csv is not None:
            ev.write_csv(results, args.csv)
        print(
            f"{steps} decisions in {time.process_time() - cpu0:.1f} s CPU "
            f"({time.perf_counter() - wall0:.1f} s wall)"
        )
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    raise SystemExit(main())
