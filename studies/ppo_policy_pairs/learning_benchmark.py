"""Does learning pay on a real trace? PPO against every fixed pair and random choice.

Usage: ``python -m studies.ppo_policy_pairs.learning_benchmark [--mode quick|medium|full]
[--objective avg_job_slowdown|energy_consumption] [--observation minimal|queue|...]
[--timesteps N] [--vector sync|async|shared] [--num-envs N] [--no-prior] [--out DIR]
[--trace SWF --platform JSON] [--window-jobs N] [--train-jobs A B] [--eval-jobs A B]
[--train-windows N] [--eval-windows N] [--num-steps N] [--seeds S [S ...]]
[--eval-every N] [--val-last N] [--val-windows N] [--val-statistic mean|median|wins]
[--selection PAIR [PAIR ...]] [--oracle-actions] [--train-sampling uniform|load]
[--val-sampling uniform|load] [--gamma G] [--gae-lambda L]
[--deploy validated|first-final|ensemble] [--keep-last N] [--keep-every U] [--gate]
[--no-held-out]``

By default on the Gaia trace (UniLu-Gaia-2014-1) and the thesis's Gaia platform (2,280
cores); ``--trace`` and ``--platform`` run it on another trace (e.g. the loaded KTH-SP2 with
``platform_examples/kth_sp2.json``), and the window options override the mode's ranges:

1. **Best pair on the training windows**: every fixed pair plays ``train_windows`` fixed
   windows drawn (seed 0) from the whole training part (``train_jobs``); the best mean
   objective wins. This is what a practitioner without learning would deploy. The per-window
   headroom of these windows is printed (:mod:`studies.ppo_policy_pairs.headroom`: the
   per-window best pair in hindsight against the single best pair); ``--oracle-actions`` then
   restricts PPO's action space to the pairs that are strictly best on at least one of these
   windows, plus the chosen pair (the pairs a per-window switcher would use, found on training
   windows only).
2. **Training**, once per seed of ``--seeds``: PPO (:mod:`hdeeprm.training.ppo`) on windows
   sampled per episode from the training part (``--train-sampling load``: in proportion to
   their offered load, :func:`hdeeprm.environment.episodes.window_loads`; ``--val-sampling``
   the same for the validation windows), its initial policy favouring that pair
   (``--no-prior``: uniform). Every ``--eval-every`` updates the greedy policy plays the same
   validation windows and the best checkpoint is kept (:mod:`hdeeprm.training.validation`).
   The validation windows are by default those of step 1; ``--val-last N`` draws them
   (``--val-windows``) from the last ``N`` jobs of the training part instead and trains PPO
   on the rest only, so validation is disjoint from training and closest to the held-out
   part. ``--val-statistic`` says what "best" means: the mean (default) or median objective
   over the validation windows, or the windows won against the pair of step 1.
3. **Deployment** (``--deploy``): ``validated`` (default with validation) takes, of every
   seed's best checkpoint, the best by the same statistic; ``first-final`` (default without
   validation) the first seed's final model; ``ensemble`` averages the action probabilities
   of every seed's kept snapshots (the final model, and with ``--keep-last N`` the ``N - 1``
   before it, ``--keep-every`` updates apart; :mod:`hdeeprm.training.ensemble`), choosing
   nothing. ``--gate`` then deploys the model only if, on the validation windows, its mean is
   better than the pair's and it wins more windows than it loses; otherwise the pair. Only
   the training part was looked at so far; ``--no-held-out`` stops here, after playing the
   pair, every seed's final model and snapshots, and the ensembles on the validation windows.
4. **Evaluation** on fixed windows of a later part (``eval_jobs``) that training and selection
   never see: the selected model (greedy, on its action space), every fixed pair of the whole
   action space and random choice among its allowed actions, same windows and seeds. Every
   seed's best and final models are evaluated too and printed beside their validation
   figures, so the selection is visible; the verdict is about the selected model.

Prints the table (mean objective, median, mean slowdown, mean bounded slowdown, wall time,
steps/s, per window), the per-seed table, the training throughput (wall and CPU time), and
whether the selected model beat the pair chosen on the training windows. Writes
``evaluation.csv``, ``evaluation.png``, ``model.pt`` (the selected checkpoint) and per seed
``seed_<s>/{training_log.csv, validation_log.csv, best_model.pt}`` in ``--out``. Quick mode
(2,000-job windows, 6 training windows, 60,000 training decisions, 3 held-out windows) takes
about 10 minutes per seed on a loaded 2-core machine; medium mode has the full mode's windows
(4,000-job windows, 8 + 8 windows) with 300,000 training decisions per seed; full mode trains
2 M decisions per seed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from hdeeprm._atomic import write_text
from hdeeprm.environment import HeterogeneousClusterEnv
from hdeeprm.errors import InputError
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import options_from_json
from hdeeprm.training import evaluate as ev
from hdeeprm.training.ensemble import PolicyEnsemble
from hdeeprm.training.ppo import PPOConfig, PPOTrainer, env_factories, inputs_factories
from hdeeprm.training.validation import STATISTICS, beats_reference, selection_key
from studies.common import REPO, trace
from studies.ppo_policy_pairs.headroom import format_headroom, headroom

TRACE = trace("UniLu-Gaia-2014-1.swf.gz")
PLATFORM = REPO / "platform_examples" / "gaia.json"

MODES = {
    # window length, train range, eval range, eval windows, train windows for pair choice,
    # decisions of training, PPO rollout length per environment
    "quick": dict(
        window_jobs=2000,
        train_jobs=[0, 15000],
        eval_jobs=[15000, 23000],
        eval_windows=3,
        train_windows=6,
        timesteps=60_000,
        num_steps=256,
    ),
    "medium": dict(
        window_jobs=4000,
        train_jobs=[0, 15000],
        eval_jobs=[15000, 23000],
        eval_windows=8,
        train_windows=8,
        timesteps=300_000,
        num_steps=512,
    ),
    "full": dict(
        window_jobs=4000,
        train_jobs=[0, 15000],
        eval_jobs=[15000, 23000],
        eval_windows=8,
        train_windows=8,
        timesteps=2_000_000,
        num_steps=1024,
    ),
}


#: The window arguments of :func:`add_window_arguments`, as keys of a mode.
WINDOW_KEYS = ("window_jobs", "train_jobs", "eval_jobs", "train_windows", "eval_windows")


def add_window_arguments(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """The options that replace the mode's windows (any trace: ``--trace``, ``--platform``),
    shared by the learning and imitation benchmarks; the group, for more options."""
    window = parser.add_argument_group("windows (default: the mode's)")
    window.add_argument("--window-jobs", type=int, help="jobs per window")
    window.add_argument(
        "--train-jobs", type=int, nargs=2, metavar=("START", "END"), help="training part"
    )
    window.add_argument(
        "--eval-jobs", type=int, nargs=2, metavar=("START", "END"), help="held-out part"
    )
    window.add_argument(
        "--train-windows", type=int, help="training (validation) windows for pair and model choice"
    )
    window.add_argument("--eval-windows", type=int, help="held-out windows")
    return window


def check_window_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``parser.error`` for a window count below 1 or a job range that is empty."""
    for key in ("window_jobs", "train_windows", "eval_windows"):
        if getattr(args, key) is not None and getattr(args, key) < 1:
            parser.error(f"--{key.replace('_', '-')} must be >= 1")
    for key in ("train_jobs", "eval_jobs"):
        bounds = getattr(args, key)
        if bounds is not None and not 0 <= bounds[0] < bounds[1]:
            parser.error(f"--{key.replace('_', '-')} needs 0 <= START < END")


def run_main(main: Callable[[], int]) -> None:
    """Run a benchmark's ``main`` as a script: a user's mistake in the inputs (a job range
    past the trace's end, say) is one line on stderr and exit status 2, not a traceback."""
    np.seterr(all="ignore")
    try:
        raise SystemExit(main())
    except InputError as exc:
        print(exc, file=sys.stderr)
        raise SystemExit(2) from None


def mode_with_windows(args: argparse.Namespace, *extra: str) -> dict:
    """``args.mode``'s settings with the window arguments given (and ``extra`` keys) in."""
    mode = {**MODES[args.mode]}
    for key in (*WINDOW_KEYS, *extra):
        value = getattr(args, key)
        if value is not None:
            mode[key] = list(value) if isinstance(value, list) else value
    return mode


def num(value: float, spec: str = ".6g") -> str:
    """A figure as printed, or ``-`` when there is none (nan: no validation ran, or no episode
    ended during an update), so a table never shows ``nan`` for a value that was not measured."""
    return "-" if math.isnan(value) else format(value, spec)


def split_ranges(mode: dict, val_last: int | None) -> tuple[list[int], list[int]]:
    """PPO's training range and the validation range (checkpoint and seed selection).

    Without ``val_last`` both are the whole training part (validation windows are drawn from
    the jobs PPO trains on); with it, the last ``val_last`` jobs of the training part are
    validation only and PPO never trains on them: validation windows disjoint from training
    and the closest to the held-out part in time."""
    start, end = mode["train_jobs"]
    if val_last is None:
        return [start, end], [start, end]
    cut = end - val_last
    if val_last < mode["window_jobs"] or cut - start < mode["window_jobs"]:
        raise ValueError(
            f"--val-last {val_last}: the validation range [{cut}, {end}) and the training range "
            f"[{start}, {cut}) must each hold a window of {mode['window_jobs']} jobs"
        )
    return [start, cut], [cut, end]


def selection_block(names: list[str]) -> dict:
    """The options' ``actions`` block for the pairs ``names`` (``job-core``)."""
    groups: dict[str, list[str]] = {}
    for name in names:
        job, _, core = name.partition("-")
        groups.setdefault(job, []).append(core)
    return {"selection": [{job: cores} for job, cores in groups.items()]}


def options_for(
    mode: dict,
    objective: str,
    observation: str,
    seed: int,
    trace: Path,
    platform: Path,
    selection: list[str] | None = None,
    val_last: int | None = None,
    train_sampling: str = "uniform",
    val_sampling: str = "uniform",
) -> dict:
    ppo_jobs, val_jobs = split_ranges(mode, val_last)
    env: dict = {
        "objective": objective,
        "observation": observation,
        "episodes": {
            "window_jobs": mode["window_jobs"],
            "train_jobs": ppo_jobs,
            "eval_jobs": mode["eval_jobs"],
            "eval_windows": mode["eval_windows"],
            "eval_seed": 0,
            # validation (checkpoint and seed selection): a range of the training part
            "val_jobs": val_jobs,
            "val_windows": mode.get("val_windows", mode["train_windows"]),
            "val_seed": 0,
            # windows drawn uniformly or in proportion to their offered load
            "train_sampling": train_sampling,
            "val_sampling": val_sampling,
        },
    }
    if selection:
        env["actions"] = selection_block(selection)
    return {
        "seed": seed,
        "workload_file_path": str(trace.resolve()),
        "platform_file_path": str(platform.resolve()),
        "pybatsim": {
            "log_level": "ERROR",
            "env": env,
            "agent": {"type": "LEARNING", "algorithm": "ppo"},
        },
    }


def with_val_windows(inputs, jobs, windows: int, seed: int, sampling: str = "uniform"):
    """``inputs`` whose ``val`` split is ``windows`` fixed windows of the job range ``jobs``,
    drawn with ``seed`` uniformly or in proportion to their offered load (``sampling``)."""
    env = inputs.options.env
    episodes = dataclasses.replace(
        env.episodes,
        val_jobs=tuple(jobs),
        val_windows=windows,
        val_seed=seed,
        val_sampling=sampling,
    )
    options = dataclasses.replace(inputs.options, env=dataclasses.replace(env, episodes=episodes))
    return dataclasses.replace(inputs, options=options)


def pair_choice_inputs(inputs, mode: dict):
    """``inputs`` whose ``val`` split is the pair-choice windows: ``train_windows`` fixed
    windows (seed 0) of the whole training part, the same whatever ``--val-last`` is."""
    return with_val_windows(inputs, mode["train_jobs"], mode["train_windows"], 0)


def with_selection(inputs, names: list[str]):
    """``inputs`` whose action space is the pairs ``names`` (``job-core``), in that order."""
    env = inputs.options.env
    selection = tuple(tuple(n.split("-", 1)) for n in names)
    options = dataclasses.replace(inputs.options, env=dataclasses.replace(env, selection=selection))
    return dataclasses.replace(inputs, options=options)


def inputs_starts(inputs) -> list[int]:
    """First jobs of the validation windows (training part only: nothing held out)."""
    return HeterogeneousClusterEnv(inputs=inputs, split="val").windows.val_starts


def report_held_out(
    results: list, objective: str, label: str, pair_names: list[str], out: Path
) -> tuple[dict, dict]:
    """Print the held-out table (``label`` highlighted), write ``evaluation.csv`` and
    ``evaluation.png`` in ``out``; the summaries by policy and objectives by (policy,
    window)."""
    print()
    print(ev.format_table(results, objective, highlight=[label], pair_names=pair_names))
    ev.write_csv(results, out / "evaluation.csv")
    ev.plot_comparison(results, objective, out / "evaluation.png", highlight=[label])
    held = {s.policy: s for s in ev.summarize(results)}
    per = {(r.policy, r.window): r.objective for r in results}
    return held, per


def verdict_words(gain: float) -> tuple[str, str]:
    """How a relative ``gain`` over the pair reads: ("BEATS", "better"), ("TIES", ...) or
    ("does NOT beat", "worse")."""
    verdict = "BEATS" if gain > 0 else ("TIES" if gain == 0 else "does NOT beat")
    return verdict, "better" if gain >= 0 else "worse"


#: How the deployed model is chosen (``--deploy``).
DEPLOY_RULES = ("validated", "first-final", "ensemble")


def snapshot_updates(n_updates: int, keep_last: int, keep_every: int) -> list[int]:
    """Updates after which a seed's snapshot is kept: the last one and the ``keep_last - 1``
    before it, ``keep_every`` apart (those after update 0 only), oldest first. E.g. 146
    updates, 3 kept, 10 apart: 126, 136, 146."""
    first = n_updates - (keep_last - 1) * keep_every
    return [u for u in range(first, n_updates + 1, keep_every) if u >= 1]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=sorted(MODES), default="quick")
    parser.add_argument(
        "--objective",
        default="avg_job_slowdown",
        choices=["avg_job_slowdown", "energy_consumption"],
    )
    parser.add_argument(
        "--observation", default="minimal", choices=["minimal", "small", "normal", "queue"]
    )
    parser.add_argument("--timesteps", type=int, default=None, help="training decisions per seed")
    parser.add_argument("--vector", choices=["sync", "async", "shared"], default="sync")
    parser.add_argument("--num-envs", type=int, default=4)
    parser.add_argument(
        "--no-prior",
        action="store_true",
        help="start from a uniform policy instead of the best training pair",
    )
    parser.add_argument(
        "--ent-coef",
        type=float,
        default=0.001,
        help="entropy bonus (small: 36 near-equivalent pairs)",
    )
    parser.add_argument("--prior-probability", type=float, default=0.5)
    parser.add_argument("--gamma", type=float, default=0.99, help="PPO discount")
    parser.add_argument("--gae-lambda", type=float, default=0.95, help="PPO GAE lambda")
    parser.add_argument("--learning-rate", type=float, default=3e-4)
    parser.add_argument(
        "--pair",
        default=None,
        help="skip step 1: take this pair as the one chosen on training windows",
    )
    parser.add_argument(
        "--seeds", type=int, nargs="+", default=None, help="training seeds (default: --seed)"
    )
    parser.add_argument("--seed", type=int, default=1, help="one training seed")
    parser.add_argument(
        "--data-seed",
        type=int,
        default=1,
        help="seed of the options (the trace's conversion: per-job draws such as memory "
        "bandwidth), the same whatever the training seeds, so that every run sees the same "
        "training and held-out data",
    )
    parser.add_argument(
        "--eval-every",
        type=int,
        default=20,
        help="validate every N updates and keep the best checkpoint (0: final model only)",
    )
    parser.add_argument(
        "--selection",
        nargs="+",
        default=None,
        metavar="PAIR",
        help="action space: these pairs only (e.g. one per job policy on a homogeneous platform)",
    )
    parser.add_argument(
        "--oracle-actions",
        action="store_true",
        help="action space: the pairs that are best on at least one pair-choice window "
        "(the per-window oracle's pairs, training windows only) and the chosen pair",
    )
    parser.add_argument("--trace", type=Path, default=TRACE, help="SWF trace (default: Gaia)")
    parser.add_argument(
        "--platform", type=Path, default=PLATFORM, help="platform JSON (default: gaia.json)"
    )
    window = add_window_arguments(parser)
    window.add_argument("--num-steps", type=int, help="PPO rollout length per environment")
    window.add_argument(
        "--val-last",
        type=int,
        metavar="N",
        help="validate on the last N jobs of the training part only and train PPO on the rest "
        "(default: validate on windows of the whole training part, as the pair is chosen)",
    )
    window.add_argument(
        "--val-windows", type=int, help="validation windows (default: --train-windows)"
    )
    window.add_argument(
        "--train-sampling",
        choices=["uniform", "load"],
        default="uniform",
        help="PPO's training windows: uniform, or weighted by offered load (busy windows)",
    )
    window.add_argument(
        "--val-sampling",
        choices=["uniform", "load"],
        default="uniform",
        help="validation windows: uniform, or weighted by offered load (the pair is always "
        "chosen on uniform windows)",
    )
    parser.add_argument(
        "--val-statistic",
        choices=list(STATISTICS),
        default="mean",
        help="checkpoint and seed selection, and the deployment decision: mean or median "
        "objective over the validation windows, or windows won against the chosen pair",
    )
    deploy = parser.add_argument_group("deployment (decide it before looking at held-out windows)")
    deploy.add_argument(
        "--deploy",
        choices=list(DEPLOY_RULES),
        default=None,
        help="the deployed model: 'validated' (the best validated checkpoint of the seed that "
        "validates best; the default with --eval-every > 0), 'first-final' (the first seed's "
        "final model; the default with --eval-every 0) or 'ensemble' (the mean action "
        "probabilities of every seed's kept snapshots, hdeeprm.training.ensemble; no choice)",
    )
    deploy.add_argument(
        "--keep-last",
        type=int,
        default=1,
        metavar="N",
        help="snapshots kept per seed for --deploy ensemble: the final model and the N-1 "
        "before it, --keep-every updates apart (default 1: the final model only)",
    )
    deploy.add_argument(
        "--keep-every", type=int, default=10, metavar="U", help="updates between snapshots"
    )
    deploy.add_argument(
        "--gate",
        action="store_true",
        help="deploy the model only if, on the validation windows (training part), its mean "
        "objective is better than the pair's and it wins more windows than it loses; "
        "otherwise deploy the pair (the model's held-out figures are still printed)",
    )
    deploy.add_argument(
        "--no-held-out",
        action="store_true",
        help="stop before the held-out part: the pair, every seed's final model, every seed's "
        "snapshots together and the ensemble of all play the validation windows (training "
        "part only), to decide a deployment rule without looking at held-out windows",
    )
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: temp)")
    args = parser.parse_args(argv)
    args.seeds = args.seeds or [args.seed]
    if args.deploy is None:
        args.deploy = "validated" if args.eval_every else "first-final"
    if args.deploy == "validated" and not args.eval_every:
        parser.error("--deploy validated needs --eval-every > 0")
    if args.keep_last < 1 or args.keep_every < 1:
        parser.error("--keep-last and --keep-every must be at least 1")
    check_window_arguments(parser, args)
    return args


def train_seed(
    args: argparse.Namespace,
    mode: dict,
    seed: int,
    inputs,
    options_path: Path,
    folder: Path,
    best_pair_name: str,
) -> dict:
    """Train one seed; its validation history, best checkpoint and final model."""
    timesteps = args.timesteps or mode["timesteps"]
    config = PPOConfig(
        total_timesteps=timesteps,
        num_envs=args.num_envs,
        num_steps=mode["num_steps"],
        vector=args.vector,
        seed=seed,
        split="train",
        prior_action=None if args.no_prior else best_pair_name,
        prior_probability=args.prior_probability,
        ent_coef=args.ent_coef,
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        learning_rate=args.learning_rate,
        eval_every=args.eval_every,
        val_statistic=args.val_statistic,
        # wins are counted (and logged) against the pair chosen on the training windows
        val_reference=best_pair_name,
    )
    if args.vector == "async":
        fns = env_factories(options_path, args.num_envs, output_dir=folder.parent, split="train")
    else:
        fns = inputs_factories(inputs, args.num_envs, "train")
    val_env = HeterogeneousClusterEnv(inputs=inputs, split="val") if args.eval_every else None
    trainer = PPOTrainer(config, fns, run_dir=folder, tensorboard=False, val_env=val_env)
    n_updates = max(1, timesteps // config.batch_size)
    keep = set(snapshot_updates(n_updates, args.keep_last, args.keep_every))
    snapshots: list[PolicyEnsemble] = []

    def report(row: dict) -> None:
        if row["update"] in keep:  # a copy of the network as it is after this update
            snap = PolicyEnsemble.from_trainers(
                [trainer], sources=[f"seed {seed} update {row['update']}"]
            )
            snapshots.append(snap)
        if row["update"] % max(1, n_updates // 10) == 0 or "val_objective" in row:
            val = row.get("val_objective")
            extra = "" if val is None else f", validation {val:.6g}"
            print(
                f"  seed {seed} update {row['update']}: {row['steps']} steps, objective "
                f"{num(row['objective'])}, entropy {row['entropy']:.3f}{extra}, "
                f"{row['steps_per_s']:,.0f} steps/s",
                flush=True,
            )

    wall0, cpu0 = time.perf_counter(), time.process_time()
    trainer.learn(timesteps, callback=report)
    trainer.close()
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    trainer.save(folder / "final_model.pt")
    members = [m for snap in snapshots for m in snap.models]
    sources = [src for snap in snapshots for src in snap.sources]
    kept = PolicyEnsemble(members, trainer.action_names, trainer.observation_size, sources=sources)
    kept.save(folder / "snapshots.pt")
    out = {
        "seed": seed,
        "final": trainer,
        "snapshots": kept,
        "wall": wall,
        "cpu": cpu,
        "steps": trainer.global_step,
    }
    if trainer.validator is not None and trainer.validator.best is not None:
        best = trainer.validator.best
        out.update(
            best=PPOTrainer.load(folder / "best_model.pt"),
            best_result=best,
            best_val=best.objective,
            best_update=best.update,
            final_val=trainer.validator.history[-1].objective,
            reference=trainer.validator.reference,
        )
    else:  # no validation: the final model is the only candidate, chosen blind
        out.update(
            best=trainer,
            best_result=None,
            best_val=math.nan,
            best_update=trainer.updates,
            final_val=math.nan,
            reference=None,
        )
    print(
        f"seed {seed}: {trainer.global_step} steps, {trainer.episodes} episodes in {wall:.1f} s "
        f"wall, {cpu:.1f} s CPU ({trainer.global_step / wall:,.0f} steps/s wall, "
        f"{trainer.global_step / cpu:,.0f} per CPU s); best validation ({args.val_statistic}) "
        f"mean {num(out['best_val'])} after update {out['best_update']}"
        + (
            ""
            if out["best_result"] is None
            else f", median {out['best_result'].median:.6g}, {out['best_result'].wins} of "
            f"{len(out['best_result'].windows)} windows better than {best_pair_name}"
        )
        + f"; final {out['final_val']:.6g}",
        flush=True,
    )
    return out


def training_part_check(
    args: argparse.Namespace,
    runs: list[dict],
    ensemble: PolicyEnsemble,
    inputs,
    pair: str,
    out: Path,
) -> None:
    """``--no-held-out``: the pair and the candidate deployments on the validation windows
    (training part only), each with its windows won and lost against the pair."""
    env = HeterogeneousClusterEnv(inputs=inputs, split="val")
    policies: dict[str, ev.Chooser] = {pair: ev.fixed_policy(env.action_names.index(pair))}
    for run in runs:
        policies[f"seed {run['seed']} final"] = ev.model_policy(run["final"])
        if len(run["snapshots"].models) > 1:
            policies[f"seed {run['seed']} snapshots ({len(run['snapshots'].models)})"] = (
                ev.model_policy(run["snapshots"])
            )
    finals = PolicyEnsemble.from_trainers([r["final"] for r in runs])
    policies[f"ensemble of {len(runs)} finals"] = ev.model_policy(finals)
    if len(ensemble.models) > len(runs):
        policies[f"ensemble of {len(ensemble.models)} snapshots"] = ev.model_policy(ensemble)
    t0 = time.perf_counter()
    results = ev.evaluate(env, policies, seed=0)
    print(
        f"\ntraining part only (--no-held-out): {len(ev.window_ids(env))} validation windows, "
        f"{time.perf_counter() - t0:.1f} s wall"
    )
    print(ev.format_table(results, args.objective, pair_names=[pair]))
    sign = 1.0 if args.objective in ev.MINIMIZED else -1.0
    per = {(r.policy, r.window): r.objective for r in results}
    windows = sorted({r.window for r in results})
    ref = ev.summarize([r for r in results if r.policy == pair])[0].mean_objective
    for s in ev.summarize(results):
        won = sum(sign * per[(s.policy, w)] < sign * per[(pair, w)] for w in windows)
        lost = sum(sign * per[(s.policy, w)] > sign * per[(pair, w)] for w in windows)
        print(
            f"  {s.policy}: mean {s.mean_objective:.6g} ({(s.mean_objective - ref) / ref:+.2%} "
            f"vs the pair), bounded slowdown {s.mean_bounded_slowdown:.4g}, won {won}, lost "
            f"{lost} of {len(windows)}"
        )
    ev.write_csv(results, out / "training_part.csv")


def gate(args: argparse.Namespace, model, inputs, pair: str) -> bool:
    """``--gate``: whether ``model`` is ahead of ``pair`` on the validation windows (training
    part only): a better mean objective and more windows won than lost. Decided before the
    held-out part is played; when it is not, the pair is what one deploys."""
    env = HeterogeneousClusterEnv(inputs=inputs, split="val")
    policies = {
        pair: ev.fixed_policy(env.action_names.index(pair)),
        "model": ev.model_policy(model),
    }
    t0 = time.perf_counter()
    results = ev.evaluate(env, policies, seed=0)
    per = {(r.policy, r.window): r.objective for r in results}
    windows = sorted({r.window for r in results})
    sign = 1.0 if args.objective in ev.MINIMIZED else -1.0
    means = {s.policy: s for s in ev.summarize(results)}
    won = sum(sign * per[("model", w)] < sign * per[(pair, w)] for w in windows)
    lost = sum(sign * per[("model", w)] > sign * per[(pair, w)] for w in windows)
    ahead = sign * means["model"].mean_objective < sign * means[pair].mean_objective
    ahead = ahead and won > lost
    print(
        f"gate ({len(windows)} validation windows of the training part, "
        f"{time.perf_counter() - t0:.1f} s wall): model mean {means['model'].mean_objective:.6g} "
        f"(bounded slowdown {means['model'].mean_bounded_slowdown:.4g}) vs {pair} "
        f"{means[pair].mean_objective:.6g} ({means[pair].mean_bounded_slowdown:.4g}), won {won}, "
        f"lost {lost}: {'OPEN, the model is deployed' if ahead else f'CLOSED, {pair} is deployed'}",
        flush=True,
    )
    return ahead


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    for path in (args.trace, args.platform):
        if not path.is_file():
            print(f"not found: {path}", file=sys.stderr)
            return 1
    logging.getLogger("hdeeprm").setLevel(logging.ERROR)
    mode = mode_with_windows(args, "val_windows")
    if args.num_steps is not None:
        mode["num_steps"] = args.num_steps
    sign = 1.0 if args.objective in ev.MINIMIZED else -1.0
    cpu_start = time.process_time()
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        try:
            ppo_jobs, val_jobs = split_ranges(mode, args.val_last)
        except ValueError as exc:
            print(exc, file=sys.stderr)
            return 2
        raw = options_for(
            mode,
            args.objective,
            args.observation,
            args.data_seed,
            args.trace,
            args.platform,
            args.selection,
            args.val_last,
            args.train_sampling,
            args.val_sampling,
        )
        options_path = out / "options.json"
        options_path.write_text(json.dumps(raw, indent=2))
        options = options_from_json(raw, options_path)
        t0 = time.perf_counter()
        inputs = prepare_inputs(options, out)
        print(
            f"inputs prepared in {time.perf_counter() - t0:.1f} s: "
            f"{len(inputs.workload.jobs)} jobs, {len(inputs.platform.cores)} cores; "
            f"mode {args.mode}, objective {args.objective}, {args.observation} observation; "
            f"windows of {mode['window_jobs']} jobs, training part {mode['train_jobs']} "
            f"({mode['train_windows']} windows for the pair), PPO trains on {ppo_jobs} "
            f"({args.train_sampling}), validation ({args.val_statistic}) on "
            f"{mode.get('val_windows', mode['train_windows'])} {args.val_sampling} windows of "
            f"{val_jobs} (first jobs {inputs_starts(inputs)}), held-out {mode['eval_jobs']}; "
            f"seeds {args.seeds}"
        )

        full_inputs = inputs  # the pairs are evaluated on the whole action space
        # 1. the pair a practitioner would pick: best on fixed windows of the whole training
        #    part (nothing of the held-out part), whatever the validation range
        val_env = HeterogeneousClusterEnv(inputs=pair_choice_inputs(inputs, mode), split="val")
        pairs = {
            n: p for n, p in ev.baseline_policies(val_env.action_names, 0).items() if n != ev.RANDOM
        }
        val_pairs: dict[str, float] = {}
        if args.pair is not None:
            if args.oracle_actions:
                print("--oracle-actions needs the pair choice: drop --pair", file=sys.stderr)
                return 2
            if args.pair not in pairs:
                print(f"--pair {args.pair!r} is not a pair of the action space", file=sys.stderr)
                return 2
            best = args.pair
            print(f"pair given with --pair: {best} (training windows not evaluated)")
        else:
            t1 = time.perf_counter()
            train_results = ev.evaluate(val_env, pairs, seed=0)
            summaries = ev.summarize(train_results)
            val_pairs = {s.policy: s.mean_objective for s in summaries}
            best = ev.best_pair(summaries, args.objective, list(pairs))
            steps = sum(r.steps for r in train_results)
            print(
                f"best pair on {mode['train_windows']} training windows: {best} "
                f"({args.objective} {val_pairs[best]:.6g}); "
                f"{steps} steps in {time.perf_counter() - t1:.1f} s"
            )
            room = headroom(train_results, args.objective, list(pairs))
            print(format_headroom(room, val_env.windows.val_starts))
            if args.oracle_actions:
                support = {w.best_pair for w in room.windows} | {best}
                chosen_pairs = [n for n in val_env.action_names if n in support]
                print(f"action space (--oracle-actions): {', '.join(chosen_pairs)}")
                inputs = with_selection(inputs, chosen_pairs)
                raw["pybatsim"]["env"]["actions"] = selection_block(chosen_pairs)
                write_text(options_path, json.dumps(raw, indent=2))

        # 2. training, one run per seed, each keeping its best validated checkpoint
        runs = []
        for seed in args.seeds:
            folder = out / f"seed_{seed}"
            folder.mkdir(exist_ok=True)
            runs.append(train_seed(args, mode, seed, inputs, options_path, folder, best))

        # 3. the deployed model, by the rule of --deploy (nothing held out looked at)
        if args.deploy == "validated":  # by the validation statistic (ties: the first seed)
            chosen = min(
                runs,
                key=lambda r: selection_key(r["best_result"], args.val_statistic, args.objective),
            )
        else:
            chosen = runs[0]
        ensemble = PolicyEnsemble(
            [m for r in runs for m in r["snapshots"].models],
            chosen["final"].action_names,
            chosen["final"].observation_size,
            sources=[src for r in runs for src in r["snapshots"].sources],
        )
        if args.deploy == "ensemble":
            deployed = ensemble
            ensemble.save(out / "model.pt")
            label = f"model (ensemble of {len(ensemble.models)})"
            print(
                f"\ndeployed: the ensemble of {len(ensemble.models)} snapshots "
                f"({', '.join(ensemble.sources)}), chosen by rule, no validation"
            )
        else:
            deployed = chosen["best"]
            chosen["best"].save(out / "model.pt")
            label = f"model (seed {chosen['seed']}, update {chosen['best_update']})"
            print(
                f"\nselected ({args.deploy}): seed {chosen['seed']}, checkpoint of update "
                f"{chosen['best_update']} (validation {num(chosen['best_val'])}"
                + (f"; pair {best} {val_pairs[best]:.6g}" if best in val_pairs else "")
                + ")"
            )
        if args.no_held_out:
            training_part_check(args, runs, ensemble, inputs, best, out)
            print(f"outputs: {out}" + (" (temporary)" if args.out is None else ""))
            return 0
        gate_open = True
        if args.gate:  # the model is deployed only if it is ahead of the pair on the training part
            gate_open = gate(args, deployed, inputs, best)

        # 4. held-out evaluation: the model on its action space, every pair of the full one
        eval_env = HeterogeneousClusterEnv(inputs=inputs, split="eval")
        base_env = HeterogeneousClusterEnv(inputs=full_inputs, split="eval")
        policies = {n: p for n, p in ev.baseline_policies(base_env.action_names, 0).items()}
        del policies[ev.RANDOM]
        for seed in args.seeds:
            policies[f"{ev.RANDOM} (seed {seed})"] = ev.random_policy(seed)
        t3 = time.perf_counter()
        results = ev.evaluate(eval_env, {label: ev.model_policy(deployed)}, seed=0)
        results += ev.evaluate(base_env, policies, seed=0)
        held, per = report_held_out(results, args.objective, label, list(pairs), out)
        windows = sorted({r.window for r in results})

        def wins(name: str) -> int:
            return sum(sign * per[(name, w)] < sign * per[(best, w)] for w in windows)

        # every seed's models on the held-out windows, for visibility (not used to choose)
        extra = {}
        for run in runs:
            extra[f"seed {run['seed']} final"] = ev.model_policy(run["final"])
            if run["best"] is not run["final"]:  # without validation they are one model
                extra[f"seed {run['seed']} best"] = ev.model_policy(run["best"])
        seed_results = ev.evaluate(eval_env, extra, seed=0)
        eval_wall = time.perf_counter() - t3
        for r in seed_results:
            per[(r.policy, r.window)] = r.objective
        seed_held = {s.policy: s for s in ev.summarize(seed_results)}
        for run in runs:
            if run["best"] is run["final"]:
                name = f"seed {run['seed']}"
                seed_held[f"{name} best"] = dataclasses.replace(
                    seed_held[f"{name} final"], policy=f"{name} best"
                )
                for w in windows:
                    per[(f"{name} best", w)] = per[(f"{name} final", w)]
        print(
            f"\nper seed (validation: {args.objective} on the "
            f"{mode.get('val_windows', mode['train_windows'])} validation windows of {val_jobs}, "
            f"wins against {best}; held-out: on the {len(windows)} held-out windows)"
        )
        print(
            f"{'seed':>5}{'best update':>12}{'val best':>12}{'val median':>12}{'val wins':>10}"
            f"{'val final':>12}{'held-out best':>15}{'held-out final':>16}{'held-out wins':>15}"
        )
        for run in runs:
            b, f = seed_held[f"seed {run['seed']} best"], seed_held[f"seed {run['seed']} final"]
            mark = "*" if run is chosen and args.deploy != "ensemble" else " "
            res = run["best_result"]
            med = math.nan if res is None else res.median
            val_wins = "-" if res is None or res.wins is None else f"{res.wins}/{len(res.windows)}"
            print(
                f"{mark}{run['seed']:>4}{run['best_update']:>12}{num(run['best_val']):>12}"
                f"{num(med):>12}{val_wins:>10}{num(run['final_val']):>12}"
                f"{b.mean_objective:>15.6g}{f.mean_objective:>16.6g}"
                f"{wins(b.policy):>12}/{len(windows)}"
            )
        model, pair = held[label], held[best]
        if not gate_open:
            print(
                f"\ngate closed: the deployed policy is {best}; the model (not deployed) gets "
                f"{model.mean_objective:.6g} on held-out windows (bounded slowdown "
                f"{model.mean_bounded_slowdown:.4g}), better than {best} on {wins(label)} of "
                f"{len(windows)}"
            )
            model = pair
        hindsight = ev.best_pair(list(held.values()), args.objective, list(pairs))
        randoms = [held[f"{ev.RANDOM} (seed {s})"].mean_objective for s in args.seeds]
        gain = sign * (pair.mean_objective - model.mean_objective) / abs(pair.mean_objective)
        verdict, direction = verdict_words(gain)
        train_wall = sum(r["wall"] for r in runs)
        train_cpu = sum(r["cpu"] for r in runs)
        steps = sum(r["steps"] for r in runs)
        print(
            f"\ntraining: {steps} steps over {len(runs)} seed(s) in {train_wall:.1f} s wall, "
            f"{train_cpu:.1f} s CPU; held-out evaluation {eval_wall:.1f} s wall; whole run "
            f"{time.process_time() - cpu_start:.1f} s CPU"
        )
        print(
            f"held-out: deployed {'model' if gate_open else best} {model.mean_objective:.6g} "
            f"(bounded slowdown "
            f"{model.mean_bounded_slowdown:.4g}) vs {best} (chosen on training windows) "
            f"{pair.mean_objective:.6g} (bounded {pair.mean_bounded_slowdown:.4g}): the model "
            f"{verdict} it ({abs(gain):.2%} {direction}), better on "
            f"{wins(label) if gate_open else 0} of "
            f"{len(windows)} windows; "
            f"best pair in hindsight {hindsight} {held[hindsight].mean_objective:.6g}; random "
            f"{' / '.join(f'{v:.6g}' for v in randoms)}"
        )
        if args.deploy == "validated" and chosen["reference"] is not None:
            result, ref = chosen["best_result"], chosen["reference"]
            ahead = beats_reference(result, ref, args.val_statistic, args.objective)
            print(
                f"on validation ({args.val_statistic}) the selected model is "
                f"{'ahead of' if ahead else 'NOT ahead of'} {best}: mean {result.objective:.6g} "
                f"vs {math.fsum(ref) / len(ref):.6g}, median {result.median:.6g} vs "
                f"{statistics.median(ref):.6g}, better on {result.wins} of {len(ref)} windows, "
                f"worse on {sum(sign * r < sign * v for v, r in zip(result.windows, ref))}; "
                f"deciding on the training part alone, one would deploy "
                f"{'the model' if ahead else 'the pair'}"
            )
        print(f"outputs: {out}" + (" (temporary)" if args.out is None else ""))
    return 0


if __name__ == "__main__":
    run_main(main)
