"""Learning which EASY ordering to use: the thesis's bandit and PPO against every fixed ordering.

Usage: ``python -m studies.easy_ordering.heuristic_learning [--trace SWF] [--platform JSON]
[--window-jobs N] [--train-jobs A B] [--eval-jobs A B] [--train-windows N] [--eval-windows N]
[--period S|none] [--theta S|none] [--choices P ...] [--timesteps N] [--num-steps N]
[--bandit-episodes N] [--epsilon E] [--bandit-cost wait bsld] [--noise X] [--no-ppo]
[--no-simulation] [--num-envs N] [--ent-coef C] [--seed S] [--out DIR]``

On KTH-SP2 by default (``platform_examples/kth_sp2.json``, 100 identical cores, the literature's
setting of ``thesis_experiments/easy``: no bandwidth slow-down, no walltime), with
``hdeeprm/HeuristicSelection-v0`` (:mod:`hdeeprm.environment.heuristic_selection`): EASY with
requested times, backfilling FCFS, threshold ``theta`` (the thesis's chapter 6 uses 40 h), the
agent choosing the primary ordering among the thesis's 12 at each decision point (each
scheduling pass, or each policy period of ``--period`` seconds), AVEbsld (tau = 10 s) rewards.

1. **Best fixed ordering on the training windows**: every ordering plays ``train_windows``
   fixed windows drawn (seed 0) from ``train_jobs``; the lowest mean AVEbsld wins.
2. **The thesis's bandit** (:mod:`hdeeprm.scheduling.bandit`, epsilon-greedy, eq. 6.8) plays
   ``bandit_episodes`` windows sampled from ``train_jobs``, one arm per step (period), learning
   online; on the held-out windows it goes on learning online (``bandit-online-COST``, as the
   thesis runs it) or plays its estimates greedily (``bandit-greedy-COST``); COST is the
   feedback per finished job, ``wait`` (the thesis's) or ``bsld``.
2b. **Simulation-based tuning** (:mod:`hdeeprm.scenarios.period_tuning`, with a period
   only): the jobs of each past period simulated with every ordering, exact (``simulated``)
   and with +/- ``noise`` (``simulated-noisy``), over the same training windows, then online.
3. **PPO** (:mod:`hdeeprm.training.ppo`) trains on windows sampled from ``train_jobs``.
4. Everything plays the same held-out windows of ``eval_jobs``: the table gives mean and median
   AVEbsld, per window, wall time and steps/s.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from hdeeprm.analysis.metrics import job_metrics
from hdeeprm.environment import THESIS_ORDERINGS, HeuristicSelectionEnv
from hdeeprm.environment.heuristic_selection import heuristic_selection_factories
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import options_from_json
from hdeeprm.scenarios.period_tuning import SimulatedFeedback, play_simulated_feedback
from hdeeprm.scheduling.bandit import EpsilonGreedyBandit, play_bandit
from hdeeprm.training import evaluate as ev
from hdeeprm.training.ppo import PPOConfig, PPOTrainer
from studies.common import REPO, trace

TRACE = trace("KTH-SP2-1996-2.1-cln.swf.gz")
PLATFORM = REPO / "platform_examples" / "kth_sp2.json"
OBJECTIVE = "avg_bounded_slowdown"


def options_for(args: argparse.Namespace, train: list[int], held: list[int], n: int) -> dict:
    return {
        "seed": args.seed,
        "workload_file_path": str(args.trace.resolve()),
        "platform_file_path": str(args.platform.resolve()),
        "mem_bw_range": [0.001, 0.001],
        "pybatsim": {
            "log_level": "ERROR",
            "env": {
                "observation": "queue",
                "episodes": {
                    "window_jobs": args.window_jobs,
                    "train_jobs": train,
                    "eval_jobs": held,
                    "eval_windows": n,
                    "eval_seed": 0,
                },
            },
            "agent": {"type": "LEARNING", "algorithm": "ppo"},
        },
    }


def seconds_or_none(text: str) -> float | None:
    return None if text.lower() == "none" else float(text)


def online_results(env: HeuristicSelectionEnv, name: str, play) -> list[ev.WindowResult]:
    """An online learner on every evaluation window in turn (its state carries over);
    ``play(env, window)`` plays one episode and returns its final info."""
    out = []
    for window in ev.window_ids(env):
        t0 = time.perf_counter()
        info = play(env, window)
        wall = time.perf_counter() - t0
        jobs = env.engine.finished_jobs
        m = job_metrics(
            [j.subtime for j in jobs], [j.start_time for j in jobs], [j.finish_time for j in jobs]
        )
        out.append(
            ev.WindowResult(
                name,
                -1 if window is None else window,
                float(info["objective"]),
                m.mean_slowdown,
                m.mean_bounded_slowdown,
                info["steps"],
                wall,
            )
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=TRACE)
    parser.add_argument("--platform", type=Path, default=PLATFORM)
    parser.add_argument("--window-jobs", type=int, default=2000)
    parser.add_argument("--train-jobs", type=int, nargs=2, default=[0, 16000])
    parser.add_argument("--eval-jobs", type=int, nargs=2, default=[16000, 28467])
    parser.add_argument("--train-windows", type=int, default=8)
    parser.add_argument("--eval-windows", type=int, default=10)
    parser.add_argument(
        "--period",
        type=seconds_or_none,
        default=86400.0,
        help="seconds a choice holds (the thesis: 1 day or 1 week); 'none': each pass",
    )
    parser.add_argument("--theta", type=seconds_or_none, default=144000.0, help="'none': off")
    parser.add_argument("--choices", nargs="+", default=list(THESIS_ORDERINGS))
    parser.add_argument("--timesteps", type=int, default=20000, help="PPO decisions")
    parser.add_argument("--num-steps", type=int, default=128, help="PPO rollout per env")
    parser.add_argument("--num-envs", type=int, default=4)
    parser.add_argument("--ent-coef", type=float, default=0.01)
    parser.add_argument("--bandit-episodes", type=int, default=16)
    parser.add_argument("--epsilon", type=float, default=0.1)
    parser.add_argument(
        "--bandit-cost",
        choices=["wait", "bsld"],
        nargs="+",
        default=["wait", "bsld"],
        help="bandit feedback per finished job: wait (the thesis's) and/or bounded slowdown",
    )
    parser.add_argument("--no-ppo", action="store_true")
    parser.add_argument(
        "--no-simulation", action="store_true", help="skip the simulation-based tuning"
    )
    parser.add_argument("--noise", type=float, default=0.2, help="noisy simulation: +/- noise")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    for path in (args.trace, args.platform):
        if not path.is_file():
            print(f"not found: {path}", file=sys.stderr)
            return 1
    logging.getLogger("hdeeprm").setLevel(logging.ERROR)
    scheduler = {"preset": "easy", "theta": args.theta}
    env_kwargs = {"scheduler": scheduler, "choices": args.choices, "period": args.period}
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        raw = options_for(args, args.train_jobs, args.eval_jobs, args.eval_windows)
        options_path = out / "options.json"
        options_path.write_text(json.dumps(raw, indent=2))
        t0 = time.perf_counter()
        inputs = prepare_inputs(options_from_json(raw, options_path), out)
        period = "each scheduling pass" if args.period is None else f"{args.period:g} s periods"
        print(
            f"inputs prepared in {time.perf_counter() - t0:.1f} s: {len(inputs.workload.jobs)} "
            f"jobs, {len(inputs.platform.cores)} cores; EASY theta={args.theta}, choices "
            f"{' '.join(args.choices)}, decisions: {period}; windows of {args.window_jobs} jobs, "
            f"train {args.train_jobs}, held-out {args.eval_jobs}"
        )

        # 1. the best fixed ordering on fixed windows of the training part
        pick_raw = options_for(args, args.eval_jobs, args.train_jobs, args.train_windows)
        pick_inputs = dataclasses.replace(
            inputs, options=options_from_json(pick_raw, out / "pick_options.json")
        )
        pick_env = HeuristicSelectionEnv(inputs=pick_inputs, split="eval", **env_kwargs)
        fixed = {name: ev.fixed_policy(i) for i, name in enumerate(pick_env.action_names)}
        t1 = time.perf_counter()
        train_results = ev.evaluate(pick_env, fixed, seed=0)
        train_summary = ev.summarize(train_results)
        best = ev.best_pair(train_summary, OBJECTIVE, list(fixed))
        steps = sum(r.steps for r in train_results)
        print(
            f"best fixed ordering on {args.train_windows} training windows: {best}; "
            f"{steps} steps in {time.perf_counter() - t1:.1f} s"
        )
        print(ev.format_table(train_results, OBJECTIVE, pair_names=list(fixed)))

        # 2. the bandit, online over training windows (one per feedback measure)
        train_env = HeuristicSelectionEnv(inputs=inputs, split="train", **env_kwargs)
        bandits = {}
        for cost in args.bandit_cost:
            bandit = EpsilonGreedyBandit(len(args.choices), args.epsilon, seed=args.seed)
            t2 = time.perf_counter()
            bandit_rng = np.random.default_rng(args.seed)
            bandit_steps = 0
            for _ in range(args.bandit_episodes):
                info = play_bandit(
                    train_env, bandit, seed=int(bandit_rng.integers(2**31)), cost=cost
                )
                bandit_steps += info["steps"]
            est = bandit.estimates()
            names = pick_env.action_names
            ranked = sorted((v, n) for v, n in zip(est, names) if not math.isnan(v))
            print(
                f"\nbandit ({cost}): {args.bandit_episodes} training windows, {bandit_steps} "
                f"steps in {time.perf_counter() - t2:.1f} s; greedy arm "
                f"{names[bandit.greedy()]}; lowest estimates ({cost} per finished job): "
                + ", ".join(f"{n} {v:.4g}" for v, n in ranked[:4])
                + f"; pulls {dict(zip(names, bandit.pulls.tolist()))}"
            )
            bandits[cost] = bandit

        # 2b. simulation-based tuning (exact and noisy), over the same training windows
        tuners = {}
        if args.period is not None and not args.no_simulation:
            for label, noise in (("simulated", 0.0), ("simulated-noisy", args.noise)):
                tuner = SimulatedFeedback(len(args.choices), noise=noise, seed=args.seed)
                t2 = time.perf_counter()
                tuner_rng = np.random.default_rng(args.seed)
                for _ in range(args.bandit_episodes):
                    play_simulated_feedback(train_env, tuner, seed=int(tuner_rng.integers(2**31)))
                names = pick_env.action_names
                print(
                    f"{label}: {args.bandit_episodes} training windows, {tuner.periods} periods "
                    f"simulated x {len(names)} orderings in {time.perf_counter() - t2:.1f} s; "
                    f"choice {names[tuner.choose()]}"
                )
                tuners[label] = tuner

        # 3. PPO
        model = None
        if not args.no_ppo:
            config = PPOConfig(
                total_timesteps=args.timesteps,
                num_envs=args.num_envs,
                num_steps=args.num_steps,
                num_minibatches=4,
                seed=args.seed,
                split="train",
                ent_coef=args.ent_coef,
            )
            fns = heuristic_selection_factories(
                args.num_envs, inputs=inputs, split="train", **env_kwargs
            )
            trainer = PPOTrainer(config, fns, run_dir=out, tensorboard=False)
            t3 = time.perf_counter()
            trainer.learn(args.timesteps)
            trainer.close()
            wall = time.perf_counter() - t3
            trainer.save(out / "model.pt")
            print(
                f"PPO: {trainer.global_step} steps, {trainer.episodes} episodes in {wall:.1f} s "
                f"-> {trainer.global_step / wall:,.0f} steps/s end to end"
            )
            model = trainer

        # 4. held-out windows
        eval_env = HeuristicSelectionEnv(inputs=inputs, split="eval", **env_kwargs)
        policies = {**fixed, ev.RANDOM: ev.random_policy(args.seed)}
        if model is not None:
            policies = {"ppo": ev.model_policy(model), **policies}
        results = ev.evaluate(eval_env, policies, seed=0)
        highlight = ["ppo"]
        for cost, bandit in bandits.items():
            greedy, online = f"bandit-greedy-{cost}", f"bandit-online-{cost}"
            frozen = bandit.copy()
            results += online_results(
                eval_env,
                greedy,
                lambda e, w, b=frozen, c=cost: play_bandit(
                    e, b, seed=0, window=w, learn=False, cost=c
                ),
            )
            results += online_results(
                eval_env,
                online,
                lambda e, w, b=bandit, c=cost: play_bandit(e, b, seed=0, window=w, cost=c),
            )
            highlight += [online, greedy]
        for label, tuner in tuners.items():
            results += online_results(
                eval_env,
                label,
                lambda e, w, t=tuner: play_simulated_feedback(e, t, seed=0, window=w),
            )
            highlight.append(label)
        print()
        print(ev.format_table(results, OBJECTIVE, highlight=highlight, pair_names=list(fixed)))
        ev.write_csv(results, out / "evaluation.csv")
        held = {s.policy: s for s in ev.summarize(results)}
        chosen = held[best]
        for name in highlight:
            if name in held:
                gain = (chosen.mean_objective - held[name].mean_objective) / chosen.mean_objective
                print(
                    f"held-out: {name} {held[name].mean_objective:.4g} vs {best} (best on "
                    f"training windows) {chosen.mean_objective:.4g}: {gain:+.2%}"
                )
        print(f"outputs: {out}" + (" (temporary)" if args.out is None else ""))
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    raise SystemExit(main())
