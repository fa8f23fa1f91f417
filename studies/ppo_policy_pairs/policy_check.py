"""Candidate deployments on windows of the training part only: which rule to declare.

Usage: ``python -m studies.ppo_policy_pairs.policy_check RUN_DIR --policy NAME=FILE[+FILE...] [...]
[--val-jobs A B] [--val-windows N] [--val-seed S] [--pair NAME] [--after-held-out]``

``RUN_DIR`` is an output folder of ``learning_benchmark.py`` (its ``options.json``: trace,
platform, objective, observation and action space). Every ``--policy`` is a PPO checkpoint or
an ensemble file (:mod:`hdeeprm.training.ensemble`); ``+`` joins files into one ensemble (all
their members, equal weights), e.g. the final models of six seeds from two runs. The pair
(``--pair``, default ``smallest-high_gflops``) and every policy play the same ``--val-windows``
windows drawn (``--val-seed``) from ``--val-jobs`` (default: jobs 0-15,000, the training
part; the held-out part is refused), greedily. ``--after-held-out`` allows ranges that start
after the held-out part instead (jobs 23,000 and later: a declared evaluation on later
months, e.g. of saved deployed models). Prints the comparison table, the windows won
and lost against the pair, and how often each greedy policy took each action: what a
policy collapses to.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from hdeeprm.environment import HeterogeneousClusterEnv
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import options_from_json
from hdeeprm.training import evaluate as ev
from hdeeprm.training.ensemble import PolicyEnsemble, load_policy

#: The benchmark's held-out part (medium mode): windows must end before it, or start after it
#: with ``--after-held-out``.
HELD_OUT_START = 15000
HELD_OUT_END = 23000


def load_joined(spec: str):
    """A checkpoint or ensemble file, or several joined with ``+`` into one ensemble."""
    paths = spec.split("+")
    if len(paths) == 1:
        return load_policy(paths[0])
    members, sources, names, size = [], [], None, None
    for path in paths:
        policy = load_policy(path)
        if isinstance(policy, PolicyEnsemble):
            members += policy.models
            sources += policy.sources
        else:
            members.append(policy.model)
            sources.append(path)
        names, size = policy.action_names, policy.observation_size
    return PolicyEnsemble(members, names, size, sources=sources)


def counting(choose: ev.Chooser, counts: Counter) -> ev.Chooser:
    """``choose``, counting the actions it takes."""

    def wrapped(obs, info, env):
        action = choose(obs, info, env)
        counts[action] += 1
        return action

    return wrapped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--policy", action="append", default=[], metavar="NAME=FILE[+FILE...]")
    parser.add_argument("--pair", default="smallest-high_gflops")
    parser.add_argument("--val-jobs", type=int, nargs=2, default=[0, HELD_OUT_START])
    parser.add_argument("--val-windows", type=int, default=16)
    parser.add_argument("--val-seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="CSV of every window's result")
    parser.add_argument(
        "--after-held-out",
        action="store_true",
        help=f"--val-jobs after the held-out part (from job {HELD_OUT_END}): later months",
    )
    args = parser.parse_args(argv)
    if args.after_held_out and args.val_jobs[0] < HELD_OUT_END:
        print(
            f"--after-held-out: --val-jobs must start at job {HELD_OUT_END} or later",
            file=sys.stderr,
        )
        return 2
    if not args.after_held_out and args.val_jobs[1] > HELD_OUT_START:
        print(f"--val-jobs must end by job {HELD_OUT_START} (the held-out part)", file=sys.stderr)
        return 2
    logging.getLogger("hdeeprm").setLevel(logging.ERROR)
    raw = json.loads((args.run_dir / "options.json").read_text())
    options = options_from_json(raw, args.run_dir / "options.json")
    inputs = prepare_inputs(options, args.run_dir)
    env_opts = inputs.options.env
    episodes = dataclasses.replace(
        env_opts.episodes,
        val_jobs=tuple(args.val_jobs),
        val_windows=args.val_windows,
        val_seed=args.val_seed,
        val_sampling="uniform",
    )
    options = dataclasses.replace(
        inputs.options, env=dataclasses.replace(env_opts, episodes=episodes)
    )
    env = HeterogeneousClusterEnv(inputs=dataclasses.replace(inputs, options=options), split="val")
    print(f"{args.val_windows} windows of {args.val_jobs}: first jobs {env.windows.val_starts}")
    counts: dict[str, Counter] = {}
    policies: dict[str, ev.Chooser] = {}
    for name in [args.pair]:
        counts[name] = Counter()
        policies[name] = counting(ev.fixed_policy(env.action_names.index(name)), counts[name])
    for spec in args.policy:
        name, _, files = spec.partition("=")
        policy = load_joined(files)
        if policy.action_names != env.action_names:
            print(f"{name}: trained for other actions {policy.action_names}", file=sys.stderr)
            return 2
        counts[name] = Counter()
        policies[name] = counting(ev.model_policy(policy), counts[name])
    t0 = time.perf_counter()
    results = ev.evaluate(env, policies, seed=0)
    print(f"{sum(r.steps for r in results)} decisions in {time.perf_counter() - t0:.1f} s wall")
    print(ev.format_table(results, env_opts.objective, pair_names=[args.pair]))
    sign = 1.0 if env_opts.objective in ev.MINIMIZED else -1.0
    per = {(r.policy, r.window): r.objective for r in results}
    windows = sorted({r.window for r in results})
    ref = next(s for s in ev.summarize(results) if s.policy == args.pair)
    for s in ev.summarize(results):
        won = sum(sign * per[(s.policy, w)] < sign * per[(args.pair, w)] for w in windows)
        lost = sum(sign * per[(s.policy, w)] > sign * per[(args.pair, w)] for w in windows)
        total = sum(counts[s.policy].values())
        freq = " ".join(
            f"{a}:{counts[s.policy][i] / total:.3f}"
            for i, a in enumerate(env.action_names)
            if counts[s.policy][i]
        )
        print(
            f"  {s.policy}: mean {s.mean_objective:.6g} "
            f"({(s.mean_objective - ref.mean_objective) / ref.mean_objective:+.2%}), median "
            f"{s.median_objective:.6g}, bounded slowdown {s.mean_bounded_slowdown:.4g}, won "
            f"{won} lost {lost} of {len(windows)}; greedy actions {freq}"
        )
    if args.out is not None:
        ev.write_csv(results, args.out)
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    raise SystemExit(main())
