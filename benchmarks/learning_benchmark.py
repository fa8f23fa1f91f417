"""Does learning pay on a real trace? PPO against every fixed pair and random choice.

Usage: ``python benchmarks/learning_benchmark.py [--mode quick|full]
[--objective avg_job_slowdown|energy_consumption] [--timesteps N] [--vector sync|async]
[--num-envs N] [--no-prior] [--out DIR]``

On the Gaia trace (UniLu-Gaia-2014-1) and the thesis's Gaia platform (2,280 cores):

1. **Best pair on the training windows**: every fixed pair plays ``train_windows`` fixed
   windows drawn (seed 0) from the first part of the trace (``train_jobs``); the best mean
   objective wins.
   This is what a practitioner without learning would deploy.
2. **Training**: PPO (:mod:`hdeeprm.training.ppo`) on windows sampled per episode from the same
   part, its initial policy favouring that pair (``--no-prior``: uniform).
3. **Evaluation** on fixed windows of a later part (``eval_jobs``) that training never sees:
   the trained model (greedy), all 36 pairs and random choice, same windows and seeds.

Prints the table (mean objective, median, mean slowdown, mean bounded slowdown, wall time,
steps/s, per window), the training throughput, and whether the model beat the pair chosen on
the training windows. Writes ``evaluation.csv``, ``evaluation.png``, ``training_log.csv`` and
``model.pt`` in ``--out``. Quick mode (2,000-job windows, 6 training windows for the pair
choice, 60,000 training decisions, 3 held-out windows) takes about 10 minutes on a loaded
2-core machine; full mode is the issue's setting (4,000-job windows, 8 + 8 windows, 2 M
training decisions): about 3.5 M decisions in all, one to two hours at the quick mode's rates.
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

from hdeeprm.environment import HeterogeneousClusterEnv
from hdeeprm.experiment import prepare_inputs
from hdeeprm.options import options_from_json
from hdeeprm.training import evaluate as ev
from hdeeprm.training.ppo import PPOConfig, PPOTrainer, env_factories, inputs_factories

REPO = Path(__file__).resolve().parent.parent
TRACE = REPO.parent / "shared" / "traces" / "UniLu-Gaia-2014-1.swf.gz"
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


def options_for(mode: dict, objective: str, observation: str, seed: int) -> dict:
    return {
        "seed": seed,
        "workload_file_path": str(TRACE),
        "platform_file_path": str(PLATFORM),
        "pybatsim": {
            "log_level": "ERROR",
            "env": {
                "objective": objective,
                "observation": observation,
                "episodes": {
                    "window_jobs": mode["window_jobs"],
                    "train_jobs": mode["train_jobs"],
                    "eval_jobs": mode["eval_jobs"],
                    "eval_windows": mode["eval_windows"],
                    "eval_seed": 0,
                },
            },
            "agent": {"type": "LEARNING", "algorithm": "ppo"},
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=sorted(MODES), default="quick")
    parser.add_argument(
        "--objective",
        default="avg_job_slowdown",
        choices=["avg_job_slowdown", "energy_consumption"],
    )
    parser.add_argument("--observation", default="minimal", choices=["minimal", "small", "normal"])
    parser.add_argument("--timesteps", type=int, default=None, help="training decisions")
    parser.add_argument("--vector", choices=["sync", "async"], default="sync")
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
    parser.add_argument(
        "--pair",
        default=None,
        help="skip step 1: take this pair as the one chosen on training windows",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: temp)")
    args = parser.parse_args(argv)
    if not TRACE.is_file():
        print(f"trace not found: {TRACE}", file=sys.stderr)
        return 1
    logging.getLogger("hdeeprm").setLevel(logging.ERROR)
    mode = MODES[args.mode]
    timesteps = args.timesteps or mode["timesteps"]
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        raw = options_for(mode, args.objective, args.observation, args.seed)
        options_path = out / "options.json"
        options_path.write_text(json.dumps(raw, indent=2))
        options = options_from_json(raw, options_path)
        t0 = time.perf_counter()
        inputs = prepare_inputs(options, out)
        print(
            f"inputs prepared in {time.perf_counter() - t0:.1f} s: "
            f"{len(inputs.workload.jobs)} jobs, {len(inputs.platform.cores)} cores; "
            f"mode {args.mode}, objective {args.objective}, {args.observation} observation"
        )

        # 1. the pair a practitioner would pick: best on fixed windows of the training part
        #    (the training part's jobs served as "evaluation" windows of a second options
        #    object: same trace, same inputs, nothing of the held-out part)
        pick = options_for(
            {
                **mode,
                "train_jobs": mode["eval_jobs"],
                "eval_jobs": mode["train_jobs"],
                "eval_windows": mode["train_windows"],
            },
            args.objective,
            args.observation,
            args.seed,
        )
        pick_inputs = dataclasses.replace(
            inputs, options=options_from_json(pick, out / "pick_options.json")
        )
        pick_env = HeterogeneousClusterEnv(inputs=pick_inputs, split="eval")
        pairs = {
            n: p
            for n, p in ev.baseline_policies(pick_env.action_names, 0).items()
            if n != ev.RANDOM
        }
        if args.pair is not None:
            if args.pair not in pairs:
                parser.error(f"--pair {args.pair!r} is not a pair of the action space")
            best = args.pair
            print(f"pair given with --pair: {best} (training windows not evaluated)")
        else:
            t1 = time.perf_counter()
            train_results = ev.evaluate(pick_env, pairs, seed=0)
            summaries = ev.summarize(train_results)
            best = ev.best_pair(summaries, args.objective, list(pairs))
            best_train = next(s for s in summaries if s.policy == best)
            steps = sum(r.steps for r in train_results)
            print(
                f"best pair on {mode['train_windows']} training windows: {best} "
                f"({args.objective} {best_train.mean_objective:.6g}); "
                f"{steps} steps in {time.perf_counter() - t1:.1f} s"
            )

        # 2. training
        config = PPOConfig(
            total_timesteps=timesteps,
            num_envs=args.num_envs,
            num_steps=mode["num_steps"],
            vector=args.vector,
            seed=args.seed,
            split="train",
            prior_action=None if args.no_prior else best,
            prior_probability=args.prior_probability,
            ent_coef=args.ent_coef,
        )
        if args.vector == "async":
            fns = env_factories(options_path, args.num_envs, output_dir=out, split="train")
        else:
            fns = inputs_factories(inputs, args.num_envs, "train")
        trainer = PPOTrainer(config, fns, run_dir=out, tensorboard=False)
        t2 = time.perf_counter()
        rows: list[dict] = []

        def report(row: dict) -> None:
            rows.append(row)
            if row["update"] % max(1, (timesteps // config.batch_size) // 10) == 0:
                print(
                    f"  update {row['update']}: {row['steps']} steps, objective "
                    f"{row['objective']:.6g}, entropy {row['entropy']:.3f}, "
                    f"{row['steps_per_s']:,.0f} steps/s",
                    flush=True,
                )

        trainer.learn(timesteps, callback=report)
        trainer.close()
        train_wall = time.perf_counter() - t2
        trainer.save(out / "model.pt")
        print(
            f"training: {trainer.global_step} steps, {trainer.episodes} episodes in "
            f"{train_wall:.1f} s -> {trainer.global_step / train_wall:,.0f} steps/s end to end "
            f"({args.num_envs} {args.vector} environments)"
        )

        # 3. held-out evaluation
        eval_env = HeterogeneousClusterEnv(inputs=inputs, split="eval")
        policies = {
            "model": ev.model_policy(trainer),
            **ev.baseline_policies(eval_env.action_names, args.seed),
        }
        results = ev.evaluate(eval_env, policies, seed=0)
        print()
        print(ev.format_table(results, args.objective, highlight=["model"], pair_names=list(pairs)))
        ev.write_csv(results, out / "evaluation.csv")
        ev.plot_comparison(results, args.objective, out / "evaluation.png", highlight=["model"])
        held = {s.policy: s for s in ev.summarize(results)}
        model, chosen = held["model"], held[best]
        sign = 1.0 if args.objective in ev.MINIMIZED else -1.0
        gain = sign * (chosen.mean_objective - model.mean_objective) / abs(chosen.mean_objective)
        verdict = "BEATS" if gain > 0 else ("TIES" if gain == 0 else "does NOT beat")
        print(
            f"\nheld-out: model {model.mean_objective:.6g} vs {best} (chosen on training "
            f"windows) {chosen.mean_objective:.6g}: the model {verdict} it ({gain:+.2%})"
        )
        print(f"outputs: {out}" + (" (temporary)" if args.out is None else ""))
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    raise SystemExit(main())
