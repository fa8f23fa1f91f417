"""Jobs per CPU second of ``hdeeprm/JobSelection-v0`` on lublin_256, with and without backfilling.

Usage: ``python benchmarks/speed/job_selection_speed.py [--episodes N] [--repeat R]
[--window-jobs W] [--slots Q] [--modes backfill,plain] [--seed S] [--trace PATH] [--split]``

RLScheduler's SchedGym protocol, which its issue compares against: ``lublin_256.swf.gz``
(10,000 synthetic jobs) on ``platform_examples/lublin_256.json`` (256 cores), requested times
as walltimes, episodes of W = 256 consecutive jobs drawn from the whole trace (the
``pybatsim.env.episodes`` API, train split), ``Q = 128`` visible jobs, and at each step a
uniformly random *valid* action (a seeded ``numpy`` generator over the action mask). Each mode
(``backfill``: EASY around the chosen job; ``plain``: only jobs that fit are valid) plays N
episodes R times; the figure is the window's jobs per CPU second (``time.process_time``),
resets counted, and separately the steps alone. The median of the R runs is printed with their
range: on a shared machine, compare figures measured at a similar load average (printed).
Every run replays the same windows and picks (the same seeds), so runs differ only by timing.
``--split`` then times the simulator's calls (engine runs, job starts) apart: the rate of the
simulator alone bounds what work on the environment's own code can reach.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common
import common  # noqa: E402

TRACE = "lublin_256.swf.gz"
PLATFORM = common.PLATFORM_EXAMPLES / "lublin_256.json"
MODES = ("backfill", "plain")


def make_env(trace: Path, backfill: bool, window_jobs: int = 256, slots: int = 128) -> Any:
    """``JobSelectionEnv`` on lublin_256 windows of ``window_jobs`` jobs (train split over the
    whole trace), as ``studies/job_selection_lublin`` builds it. A missing ``trace`` exits
    saying how to get it (also when called from outside :func:`main`)."""
    from hdeeprm.environment import JobSelectionEnv
    from hdeeprm.inputs import prepare_inputs
    from hdeeprm.options import options_from_json

    trace = common.require_trace(trace)
    logging.getLogger("hdeeprm").setLevel(logging.ERROR)
    raw: dict[str, Any] = {
        "seed": 1,
        "workload_file_path": str(trace),
        "platform_file_path": str(PLATFORM),
        "use_walltime": True,
        "pybatsim": {
            "log_level": "ERROR",
            "env": {"objective": "avg_job_slowdown"},
            "agent": {"type": "LEARNING", "run": "train"},
        },
    }
    with tempfile.TemporaryDirectory() as tmp:
        inputs = prepare_inputs(options_from_json(raw, Path(tmp) / "options.json"), tmp)
        raw["pybatsim"]["env"]["episodes"] = {
            "window_jobs": window_jobs,
            "train_jobs": [0, len(inputs.workload.jobs)],
        }
        options = options_from_json(raw, Path(tmp) / "options.json")
        inputs = dataclasses.replace(inputs, options=options)
    return JobSelectionEnv(inputs, queue_slots=slots, backfill=backfill)


def play(env: Any, episodes: int, seed: int) -> tuple[int, int, float, float]:
    """``episodes`` episodes of random valid picks: (jobs, steps, CPU s in all, CPU s of the
    resets). The windows and picks depend on ``seed`` alone."""
    rng = np.random.default_rng(seed)
    jobs = steps = 0
    cpu_reset = 0.0
    clock = time.process_time
    start = clock()
    for episode in range(episodes):
        before = clock()
        _, info = env.reset(seed=seed if episode == 0 else None)
        cpu_reset += clock() - before
        first, last = info["window"]
        jobs += last - first + 1
        done = env.finished
        while not done:
            valid = np.flatnonzero(info["action_mask"])
            _, _, done, _, info = env.step(int(valid[rng.integers(len(valid))]))
            steps += 1
    return jobs, steps, clock() - start, cpu_reset


def simulator_share(
    trace: Path, backfill: bool, episodes: int, seed: int, window: int, slots: int
) -> tuple[int, float, float]:
    """(jobs, CPU s of one run, CPU s spent in the simulator's calls): the engine runs
    (``HeterogeneousClusterEnv._run``) and the job starts (``WorkloadManager.start_job``), timed
    by wrappers around them, which bounds what the environment's own code can ever reach."""
    from hdeeprm.decision.workload_manager import WorkloadManager
    from hdeeprm.environment.env import HeterogeneousClusterEnv

    inside = [0.0, 0]  # CPU s, nesting depth
    clock = time.process_time

    def timed(func: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if inside[1]:
                return func(*args, **kwargs)
            inside[1] = 1
            start = clock()
            try:
                return func(*args, **kwargs)
            finally:
                inside[0] += clock() - start
                inside[1] = 0

        return wrapper

    originals = HeterogeneousClusterEnv._run, WorkloadManager.start_job
    HeterogeneousClusterEnv._run = timed(originals[0])  # type: ignore[method-assign]
    WorkloadManager.start_job = timed(originals[1])  # type: ignore[method-assign]
    try:
        env = make_env(trace, backfill, window, slots)
        jobs, _, cpu, _ = play(env, episodes, seed)
    finally:
        HeterogeneousClusterEnv._run, WorkloadManager.start_job = originals  # type: ignore[method-assign]
    return jobs, cpu, inside[0]


def measure(
    trace: Path, backfill: bool, episodes: int, repeat: int, seed: int, window: int, slots: int
) -> dict[str, Any]:
    """R runs of one mode: jobs, steps and every run's (jobs per CPU s, same without resets)."""
    env = make_env(trace, backfill, window, slots)
    rates, step_rates = [], []
    jobs = steps = 0
    for _ in range(repeat):
        jobs, steps, cpu, cpu_reset = play(env, episodes, seed)
        rates.append(jobs / cpu)
        step_rates.append(jobs / (cpu - cpu_reset))
    return {"jobs": jobs, "steps": steps, "rates": rates, "step_rates": step_rates}


def _summary(values: list[float]) -> str:
    return f"{statistics.median(values):>8,.0f}  (range {min(values):,.0f}-{max(values):,.0f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=40, help="episodes per run and mode")
    parser.add_argument("--repeat", type=int, default=3, help="runs per mode (median shown)")
    parser.add_argument("--window-jobs", type=int, default=256, help="jobs per episode")
    parser.add_argument("--slots", type=int, default=128, help="visible jobs Q")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated: backfill, plain")
    parser.add_argument("--seed", type=int, default=1, help="seeds the windows and the picks")
    parser.add_argument(
        "--split",
        action="store_true",
        help="then one more run per mode, timing the simulator's calls (engine runs and job "
        "starts) apart from the environment's own code",
    )
    parser.add_argument(
        "--trace", type=Path, default=common.trace_default(TRACE), help="lublin_256.swf.gz"
    )
    args = parser.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    unknown = set(modes) - set(MODES)
    if unknown:
        parser.error(f"unknown mode(s) {sorted(unknown)}; expected {', '.join(MODES)}")
    trace = common.require_trace(args.trace)
    load = common.load_average()
    print(
        f"JobSelection-v0 on {trace.name}, {args.window_jobs}-job windows, Q = {args.slots}, "
        f"random valid picks; {args.episodes} episodes x {args.repeat} runs per mode; "
        + (f"load average {load[0]:.2f}" if load else "load average unknown")
    )
    print(f"{'mode':<9} {'jobs':>7} {'steps':>7}  {'jobs/CPU s (resets in)':<34} steps only")
    for mode in modes:
        result = measure(
            trace,
            mode == "backfill",
            args.episodes,
            args.repeat,
            args.seed,
            args.window_jobs,
            args.slots,
        )
        print(
            f"{mode:<9} {result['jobs']:>7,} {result['steps']:>7,}  "
            f"{_summary(result['rates']):<34} {_summary(result['step_rates'])}"
        )
    if args.split:
        for mode in modes:
            jobs, cpu, inside = simulator_share(
                trace, mode == "backfill", args.episodes, args.seed, args.window_jobs, args.slots
            )
            print(
                f"{mode}: simulator calls {inside:.2f} of {cpu:.2f} CPU s ({inside / cpu:.0%}): "
                f"the simulator alone plays {jobs / inside:,.0f} jobs per CPU s"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
