"""Job selection on Gaia: a learned job picker beside the best policy pair.

Usage: ``python -m studies.score_rule_gaia.gaia_job_selection [--mode quick|medium]
[--split val|eval] [--timesteps N] [--backfill] [--objective avg_job_slowdown|avg_bounded_slowdown]
[--seed S] [--data-seed S] [--warm-start PICKER] [--out DIR | --load MODEL]``

The learning benchmark's agents choose a policy pair at each decision
(``learning_benchmark.py``); the learned schedulers of the literature choose a *job*
(RLScheduler, CuSH; ``studies/job_selection_lublin/README.md``). This script puts the
second kind on the first kind's benchmark: the Gaia trace on the thesis platform, the learning
benchmark's windows (``--mode``), training windows drawn from the training part, and evaluation on
either the 8 pair-choice windows of the training part (``--split val``, for tuning) or the held-out
windows (``--split eval``).

The agent is :class:`~hdeeprm.training.twostep.TwoStepPPO`'s kernel job selector (one small
network scores every visible job alike; ``Q`` = 128 visible jobs) on
:class:`~hdeeprm.environment.JobSelectionEnv`, each chosen job placed by ``--core-policy``
(``high_gflops``, the best pair's), rewarded so that an episode's rewards add up to minus
``--objective``; with ``--warm-start PICKER`` its job selector first clones that picker's
decisions on training windows (:mod:`hdeeprm.training.cloning`), so PPO starts from
the rule (``SQF`` plays the best pair exactly). Beside it, on the same windows: the policy
pair ``--pair`` in the pair environment (default ``smallest-high_gflops``, the pair the
learning benchmark chooses on the training windows) and the heuristic pickers
(``--pickers``) in the job-selection environment. Printed: mean slowdown and mean bounded
slowdown (tau = 10 s) per policy, per window, and the windows where the agent is better or
worse than the pair.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from hdeeprm.environment import HeterogeneousClusterEnv, HeuristicPicker, JobSelectionEnv
from hdeeprm.environment.job_pickers import run_episode
from hdeeprm.environment.job_selection import SLOWDOWN_OBJECTIVES
from hdeeprm.environment.reward import episode_objective
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import options_from_json
from hdeeprm.training.cloning import agreement, clone_job_selector, picker_demonstrations
from hdeeprm.training.twostep import TwoStepConfig, TwoStepPPO, job_selection_factories
from studies.imitation.picker_cloning import add_cloning_arguments
from studies.ppo_policy_pairs import learning_benchmark as lb

SLOTS = 128
PICKERS = "FCFS,SJF,SQF,SAF,F1,WFP3,UNICEP"


def both_slowdowns(env) -> tuple[float, float]:
    """Mean slowdown and mean bounded slowdown of the finished episode of ``env``."""
    cores = env.manager.pool.nb_cores
    return (
        episode_objective("avg_job_slowdown", env.engine, cores),
        episode_objective("avg_bounded_slowdown", env.engine, cores),
    )


def play(env, windows: list[int], choose) -> list[tuple[float, float]]:
    """Both slowdowns of each window played with ``choose(env) -> action``."""
    values = []
    for k in windows:
        run_episode(env, choose, seed=0, window=k)
        values.append(both_slowdowns(env))
    return values


def warm_start(agent: TwoStepPPO, inputs, kwargs: dict, args: argparse.Namespace) -> None:
    """Clone ``args.warm_start``'s decisions on ``args.warm_episodes`` training windows
    (reset seeds 10,000 + seed * 100 + i: apart from PPO's) into ``agent``."""
    env = JobSelectionEnv(inputs=inputs, split="train", **kwargs)
    seeds = [10_000 + args.seed * 100 + i for i in range(args.warm_episodes)]
    cpu = time.process_time()
    demos = picker_demonstrations(env, HeuristicPicker(args.warm_start), seeds)
    losses = clone_job_selector(
        agent, demos, epochs=args.warm_epochs, learning_rate=args.warm_lr, seed=args.seed
    )
    print(
        f"warm start: {args.warm_start}'s {len(demos)} decisions on {len(seeds)} training "
        f"windows cloned in {args.warm_epochs} epochs (cross-entropy {losses[0]:.4f} -> "
        f"{losses[-1]:.4f}, agreement {agreement(agent, demos):.4f}); "
        f"{time.process_time() - cpu:.0f} s CPU",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("quick", "medium"), default="medium")
    parser.add_argument("--split", choices=("val", "eval"), default="val")
    parser.add_argument("--timesteps", type=int, default=200_000)
    parser.add_argument("--backfill", action="store_true", help="EASY around a chosen job")
    parser.add_argument("--objective", choices=SLOWDOWN_OBJECTIVES, default="avg_job_slowdown")
    parser.add_argument("--core-policy", default="high_gflops")
    parser.add_argument(
        "--log-features",
        action="store_true",
        help="log-scaled wait, requested time and cores per job (Gaia's sizes span 1 to 2,280)",
    )
    parser.add_argument("--pair", default="smallest-high_gflops")
    parser.add_argument("--pickers", default=PICKERS, help="comma-separated, or 'none'")
    parser.add_argument("--seed", type=int, default=0, help="the agent's weights and windows")
    parser.add_argument(
        "--data-seed",
        type=int,
        default=1,
        help="the options' seed (the trace's conversion draws, e.g. memory bandwidth); 1, as "
        "in the learning and imitation benchmarks, whose pair values it then reproduces",
    )
    parser.add_argument("--envs", type=int, default=2)
    parser.add_argument("--n-steps", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--gamma", type=float, default=0.99)
    parser.add_argument(
        "--slot-order-bias",
        type=float,
        default=0.0,
        help="TwoStepConfig.slot_order_bias: equal jobs go to the earliest submitted",
    )
    warm = parser.add_argument_group("warm start: clone a picker before PPO")
    warm.add_argument("--warm-start", metavar="PICKER", help="e.g. SQF (plays the best pair)")
    warm.add_argument("--warm-episodes", type=int, default=8, help="training windows to clone")
    add_cloning_arguments(warm)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--out", type=Path, help="folder for the trained model (model.pt)")
    where.add_argument("--load", type=Path, help="evaluate this TwoStepPPO checkpoint")
    args = parser.parse_args(argv)
    if args.timesteps < 0 or (args.timesteps == 0 and args.warm_start is None):
        parser.error("--timesteps must be >= 1 (or 0 after --warm-start: the clone alone)")
    if args.warm_episodes < 1 or args.warm_epochs < 1:
        parser.error("--warm-episodes and --warm-epochs must be >= 1")
    if args.critic_warmup < 0:
        parser.error("--critic-warmup must be >= 0")
    if args.load is not None and not args.load.is_file():
        parser.error(f"--load {args.load}: no such file")
    model_path = None
    if args.out is not None:
        model_path = args.out / "model.pt"
        if model_path.exists():
            parser.error(f"{model_path} exists: choose another --out (never overwritten)")
        args.out.mkdir(parents=True, exist_ok=True)
    logging.getLogger("hdeeprm").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as tmp:  # the run's platform and workload files
        return run(args, Path(tmp), model_path)


def run(args: argparse.Namespace, tmp: Path, model_path: Path | None) -> int:
    """Train or load the agent and print the comparison (``tmp``: the run's input files)."""
    mode = lb.MODES[args.mode]
    raw = lb.options_for(mode, "avg_job_slowdown", "minimal", args.data_seed, lb.TRACE, lb.PLATFORM)
    inputs = prepare_inputs(options_from_json(raw, tmp / "options.json"), tmp)
    if args.split == "val":
        inputs = lb.pair_choice_inputs(inputs, mode)
    pair_env = HeterogeneousClusterEnv(inputs=inputs, split=args.split)
    if args.pair not in pair_env.action_names:
        print(f"--pair {args.pair!r} is not a pair of the thesis platform's 36", file=sys.stderr)
        return 2
    pair_index = pair_env.action_names.index(args.pair)
    windows = list(range(pair_env.nb_eval_windows))
    starts = getattr(pair_env.windows, f"{args.split}_starts")
    kwargs = {
        "queue_slots": SLOTS,
        "core_policy": args.core_policy,
        "backfill": args.backfill,
        "objective": args.objective,
        "log_features": args.log_features,
    }
    env = JobSelectionEnv(inputs=inputs, split=args.split, **kwargs)
    print(
        f"Gaia {args.mode} mode, {args.split} windows (first jobs {starts}); job selection "
        f"{'with' if args.backfill else 'without'} backfilling, Q = {SLOTS}, chosen jobs "
        f"placed by {args.core_policy}; rewards: {args.objective}",
        flush=True,
    )
    rows: dict[str, list[tuple[float, float]]] = {}
    rows[f"pair {args.pair}"] = play(pair_env, windows, lambda e: pair_index)
    names = [] if args.pickers == "none" else args.pickers.split(",")
    for name in names:
        rows[f"picker {name}"] = play(env, windows, HeuristicPicker(name))

    if args.load is not None:
        agent = TwoStepPPO.load(args.load, job_selection_factories(inputs, 1, "train", **kwargs))
        label = f"agent {args.load}"
    else:
        config = TwoStepConfig(
            total_timesteps=max(1, args.timesteps),
            num_envs=args.envs,
            num_steps=args.n_steps,
            num_minibatches=max(1, args.envs * args.n_steps // args.batch),
            learning_rate=args.lr,
            gamma=args.gamma,
            slot_order_bias=args.slot_order_bias,
            critic_warmup=args.critic_warmup,
            seed=args.seed,
        )
        agent = TwoStepPPO(config, job_selection_factories(inputs, args.envs, "train", **kwargs))
        if args.warm_start is not None:
            warm_start(agent, inputs, kwargs, args)
        wall, cpu = time.perf_counter(), time.process_time()
        if args.timesteps:
            agent.learn(args.timesteps)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        agent.close()
        print(
            f"trained {agent.global_step} steps, {agent.episodes} episodes: {cpu:.0f} s CPU, "
            f"{wall:.0f} s wall ({agent.global_step / max(cpu, 1e-9):.0f} steps per CPU s)",
            flush=True,
        )
        if model_path is not None:
            agent.save(model_path)
            print(f"model: {model_path}")
        label = f"agent seed {args.seed}"
    rows[label] = play(env, windows, agent.act)

    pair_values = np.array([v[0] for v in rows[f"pair {args.pair}"]])
    print(f"\n{'policy':32s} {'slowdown':>9s} {'bsld':>9s}  per window (slowdown)")
    for name, values in rows.items():
        sd = np.array([v[0] for v in values])
        bsld = np.array([v[1] for v in values])
        per = " ".join(f"{v:.3f}" for v in sd)
        print(f"{name:32s} {sd.mean():9.4f} {bsld.mean():9.4f}  {per}")
    sd = np.array([v[0] for v in rows[label]])
    print(
        f"\n{label}: mean slowdown {sd.mean():.5g} against {args.pair}'s "
        f"{pair_values.mean():.5g} ({(sd.mean() - pair_values.mean()) / pair_values.mean():+.1%}),"
        f" better on {int(np.sum(sd < pair_values))}, worse on {int(np.sum(sd > pair_values))} "
        f"of {len(sd)} windows"
    )
    return 0


if __name__ == "__main__":
    lb.run_main(main)
