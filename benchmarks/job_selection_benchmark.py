"""Job selection on lublin_256 (RLScheduler's protocol): a learned picker beside the heuristics.

Scenario: ``lublin_256.swf.gz`` (10,000 synthetic jobs, 256 cores) on
``platform_examples/lublin_256.json``, requested times as walltimes; episodes are windows of
1,024 consecutive jobs (the ``pybatsim.env.episodes`` API): training windows are drawn from
jobs ``[0, 7000)``, evaluation windows are fixed, drawn once from the later jobs
``[7000, 10000)``. Objective: average bounded slowdown (tau = 10 s); the environment is
:class:`hdeeprm.environment.JobSelectionEnv` with ``Q = 128`` visible jobs, without and with
EASY backfilling around the chosen job.

Every picker acts in the same environment through the same actions: the heuristics FCFS,
SJF, WFP3, UNICEP and F1 (:mod:`hdeeprm.environment.job_pickers`) and an agent trained with
sb3-contrib's ``MaskablePPO`` (an MLP over the whole observation), one per mode. The table
gives the mean bounded slowdown over the evaluation windows, wall time and environment
steps per second; training cost is printed beside it.

    python benchmarks/job_selection_benchmark.py --quick     # minutes
    python benchmarks/job_selection_benchmark.py             # full: longer training, 10 windows

The traces folder defaults to ``../shared/traces`` beside the repository
(``HDEEPRM_TRACES`` or ``--traces`` to change it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from hdeeprm.environment import BASELINES, HeuristicPicker, JobSelectionEnv
from hdeeprm.experiment import prepare_inputs
from hdeeprm.options import load_options

REPO = Path(__file__).resolve().parents[1]
TRACE = "lublin_256.swf.gz"
PLATFORM = REPO / "platform_examples" / "lublin_256.json"
WINDOW = 1024
TRAIN = (0, 7000)
EVAL = (7000, 10000)


def write_options(folder: Path, traces: Path, eval_windows: int, seed: int) -> Path:
    raw = {
        "seed": seed,
        "workload_file_path": str(traces / TRACE),
        "platform_file_path": str(PLATFORM),
        "use_walltime": True,
        "pybatsim": {
            "env": {
                "objective": "avg_job_slowdown",
                "episodes": {
                    "window_jobs": WINDOW,
                    "train_jobs": list(TRAIN),
                    "eval_jobs": list(EVAL),
                    "eval_windows": eval_windows,
                    "eval_seed": 0,
                },
            },
            "agent": {"type": "LEARNING", "run": "train"},
        },
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "options.json"
    path.write_text(json.dumps(raw, indent=1))
    return path


def evaluate(env: JobSelectionEnv, pick) -> tuple[list[float], int, float]:
    """Bounded slowdown per evaluation window, steps and wall time."""
    values, steps, start = [], 0, time.perf_counter()
    for k in range(env.nb_eval_windows):
        env.reset(options={"window": k})
        done = env.finished
        while not done:
            _, _, done, _, _ = env.step(pick(env))
            steps += 1
        values.append(env.objective_value())
    return values, steps, time.perf_counter() - start


def train(inputs, backfill: bool, args) -> tuple[object, float, int]:
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    torch.set_num_threads(1)  # small networks: threads only contend on a shared machine

    def factory(i: int):
        def make():
            env = JobSelectionEnv(inputs=inputs, split="train", backfill=backfill)
            env.reset(seed=args.seed + i)
            return env

        return make

    # Returns are minus bounded slowdowns (tens to thousands): scale them for the critic.
    vec = VecNormalize(
        DummyVecEnv([factory(i) for i in range(args.envs)]),
        norm_obs=False,
        norm_reward=True,
        gamma=args.gamma,
    )
    model = MaskablePPO(
        "MlpPolicy",
        vec,
        n_steps=args.n_steps,
        batch_size=args.batch,
        n_epochs=4,
        learning_rate=args.lr,
        gamma=args.gamma,
        ent_coef=0.0,
        seed=args.seed,
        device="cpu",
        policy_kwargs={"net_arch": [128, 64]},
    )
    start = time.perf_counter()
    model.learn(args.timesteps)
    return model, time.perf_counter() - start, int(model.num_timesteps)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="short training, 4 eval windows")
    parser.add_argument("--traces", type=Path, default=None)
    parser.add_argument("--timesteps", type=int, default=None, help="PPO steps per mode")
    parser.add_argument("--eval-windows", type=int, default=None)
    parser.add_argument("--envs", type=int, default=2)
    parser.add_argument("--n-steps", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--gamma", type=float, default=0.99)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--modes", default="plain,backfill")
    args = parser.parse_args(argv)
    if args.timesteps is None:
        args.timesteps = 32_768 if args.quick else 400_000
    if args.eval_windows is None:
        args.eval_windows = 4 if args.quick else 10
    traces = args.traces or Path(os.environ.get("HDEEPRM_TRACES", REPO.parent / "shared/traces"))
    if not (traces / TRACE).is_file():
        print(f"{traces / TRACE} not found: give --traces", file=sys.stderr)
        return 2
    try:
        import sb3_contrib  # noqa: F401
    except ImportError:
        sb3_contrib = None
    with tempfile.TemporaryDirectory(prefix="hdeeprm-jobsel-") as tmp:
        folder = Path(tmp)
        options = load_options(write_options(folder, traces, args.eval_windows, args.seed))
        t0 = time.perf_counter()
        inputs = prepare_inputs(options, folder / "run")
        print(f"inputs: {len(inputs.workload.jobs)} jobs in {time.perf_counter() - t0:.1f} s")
        print(
            f"windows of {WINDOW} jobs: train from jobs {TRAIN}, {args.eval_windows} eval "
            f"windows from jobs {EVAL}; Q = 128; average bounded slowdown, tau = 10 s"
        )
        for mode in args.modes.split(","):
            backfill = mode == "backfill"
            env = JobSelectionEnv(inputs=inputs, split="eval", backfill=backfill)
            print(f"\n== {mode} (eval windows start at jobs {env.windows.eval_starts})")
            header = f"{'picker':<10} {'mean bsld':>10}  {'per window':<40}"
            print(f"{header} {'wall s':>7} {'steps/s':>8}")
            rows = [(name, HeuristicPicker(name)) for name in BASELINES]
            if sb3_contrib is not None:
                model, wall, steps = train(inputs, backfill, args)
                print(
                    f"(MaskablePPO: {steps} training steps in {wall:.1f} s, "
                    f"{steps / wall:.0f} steps/s)"
                )

                def agent(env, model=model):
                    action, _ = model.predict(
                        env.observation(), action_masks=env.action_masks(), deterministic=True
                    )
                    return int(action)

                rows.append(("PPO", agent))
            else:
                print("(sb3-contrib not installed: no learned agent)")
            for name, pick in rows:
                values, steps, wall = evaluate(env, pick)
                per = " ".join(f"{v:.1f}" for v in values)
                print(
                    f"{name:<10} {np.mean(values):>10.2f}  {per:<40} {wall:>7.1f} "
                    f"{steps / wall:>8.0f}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
