"""Do observations tell decision situations apart?

Usage: ``python -m studies.ppo_policy_pairs.observation_study [--states S] [--horizon H]
[--windows W] [--first-job J] [--trace SWF --platform JSON]`` (e.g. the loaded KTH SP2 trace on
``platform_examples/kth_sp2.json`` with ``--first-job 0``)

On the Gaia trace and platform (objective ``avg_job_slowdown``, objective rewards, windows of
1,000 jobs from job ``--first-job`` (30,000) on, where the platform is loaded), random-action
episodes visit decision points. At a random tenth of them, the environment is cloned once per
candidate action; each clone applies its action, then follows FCFS (``first-high_gflops``)
for H steps: the sum of those rewards estimates Q(s, a). From that:

* the regret (max_a Q - Q(s, a), in 1/1000 of the window's mean slowdown) of the single best
  fixed action, chosen on the training windows, on held-out windows;
* the regret of a per-state choice predicted by a ridge regression of each action's advantage
  ``Q(s, a) - mean_a Q(s, .)`` on the observation, with the ``minimal`` observation (21
  values) and with the ``queue`` observation (84 values on Gaia), fitted on the training
  windows, evaluated on the held-out ones (leave-one-window-out);
* the share of the advantage variance each observation explains (R^2, held out).

If an observation lets a policy choose better than the best fixed pair, its predicted choice
has a lower regret. Prints the figures; takes a few minutes on one core.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import logging
import tempfile
import time
from pathlib import Path

import numpy as np

from hdeeprm.environment import HeterogeneousClusterEnv
from hdeeprm.environment.observation import QUEUE_FEATURES
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import options_from_json
from studies.common import REPO, trace

TRACE = trace("UniLu-Gaia-2014-1.swf.gz")
CANDIDATES = [
    f"{job}-{core}"
    for job in ("first", "shortest", "smallest", "low_mem")
    for core in ("high_gflops", "low_power")
]
CONTINUATION = "first-high_gflops"


def make_env(
    trace: Path, platform: Path, tmp: str, window_jobs: int, first_job: int, last_job: int
) -> HeterogeneousClusterEnv:
    raw = {
        "seed": 1,
        "workload_file_path": str(trace),
        "platform_file_path": str(platform.resolve()),
        "pybatsim": {
            "env": {"objective": "avg_job_slowdown", "observation": "queue"},
            "agent": {"type": "LEARNING"},
        },
    }
    options = options_from_json(raw, Path(tmp) / "options.json")
    inputs = prepare_inputs(options, tmp)
    raw["pybatsim"]["env"]["episodes"] = {
        "window_jobs": window_jobs,
        "train_jobs": [first_job, min(last_job, len(inputs.workload.jobs))],
    }
    options = options_from_json(raw, Path(tmp) / "options.json")
    return HeterogeneousClusterEnv(inputs=dataclasses.replace(inputs, options=options))


def clone(env: HeterogeneousClusterEnv) -> HeterogeneousClusterEnv:
    """A copy of the episode sharing the static inputs (much cheaper than pickling them)."""
    statics = [
        env.inputs,
        env.sim_platform,
        env.inputs.workload,
        env.inputs.workload.profiles,
        env.inputs.platform,
        env.windows,
        env.options,
        env.actions,
        env.action_space,
        env.observation_space,
        *env.inputs.workload.profiles.values(),
    ]
    return copy.deepcopy(env, {id(o): o for o in statics})


def job_choice_matters(env: HeterogeneousClusterEnv, indices: list[int]) -> bool:
    """Not every queued job can start and the candidate job policies pick different jobs
    (otherwise every candidate starts the whole queue and only the placement differs)."""
    manager = env.manager
    queue = manager.job_queue
    if sum(job.res for job in queue.jobs) <= manager.pool.free_count:
        return False
    return len({queue.peek(env.actions[i].job_policy).seq for i in indices}) > 1


def q_values(env: HeterogeneousClusterEnv, indices: list[int], cont: int, horizon: int):
    values = []
    for a in indices:
        twin = clone(env)
        _, total, done, _, _ = twin.step(a)
        for _ in range(horizon):
            if done:
                break
            _, r, done, _, _ = twin.step(cont)
            total += r
        values.append(total)
    return values


def ridge(x: np.ndarray, y: np.ndarray, lam: float = 1.0) -> np.ndarray:
    x1 = np.hstack([x, np.ones((len(x), 1))])
    reg = lam * np.eye(x1.shape[1])
    reg[-1, -1] = 0.0
    return np.linalg.lstsq(x1.T @ x1 + reg, x1.T @ y, rcond=None)[0]


def predict(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.hstack([x, np.ones((len(x), 1))]) @ w


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=30, help="states sampled per window")
    parser.add_argument("--windows", type=int, default=4)
    parser.add_argument("--horizon", type=int, default=30)
    parser.add_argument("--window-jobs", type=int, default=1000)
    parser.add_argument("--first-job", type=int, default=30_000, help="windows from this job on")
    parser.add_argument("--last-job", type=int, default=10**9, help="windows before this job")
    parser.add_argument("--trace", type=Path, default=TRACE)
    parser.add_argument("--platform", type=Path, default=REPO / "platform_examples" / "gaia.json")
    args = parser.parse_args()
    if not args.trace.is_file():
        print(f"skipping: {args.trace} not found")
        return
    logging.getLogger("hdeeprm.insights").setLevel(logging.ERROR)
    t0 = time.process_time()
    rng = np.random.default_rng(0)
    obs_rows, q_rows, groups, kinds = [], [], [], []
    points = nontrivial = 0
    with tempfile.TemporaryDirectory() as tmp:
        env = make_env(
            args.trace, args.platform, tmp, args.window_jobs, args.first_job, args.last_job
        )
        indices = [env.action_names.index(name) for name in CANDIDATES]
        cont = env.action_names.index(CONTINUATION)
        for w in range(args.windows):
            obs, info = env.reset(seed=w)
            done, taken = False, 0
            while not done and taken < args.states:
                points += 1
                choice = job_choice_matters(env, indices)
                nontrivial += choice
                if len(env.manager.job_queue) and rng.random() < 0.1:
                    obs_rows.append(obs)
                    q_rows.append(q_values(env, indices, cont, args.horizon))
                    groups.append(w)
                    kinds.append(choice)
                    taken += 1
                obs, _, done, _, info = env.step(int(rng.integers(env.action_space.n)))
            print(f"window {w} {info['window']}: {taken} states")
    obs_all = np.array(obs_rows, dtype=np.float64)
    q = np.array(q_rows)
    groups_arr = np.array(groups)
    best = q.max(axis=1, keepdims=True)
    regret = 1000 * (best - q)  # per state and candidate, in 1/1000 of mean slowdown
    adv = q - q.mean(axis=1, keepdims=True)
    print(
        f"{points} decision points visited, {nontrivial} ({100 * nontrivial / points:.0f}%) "
        "where not every queued job can start and the candidates pick different jobs; "
        f"{len(q)} states evaluated; "
        f"{len(CANDIDATES)} candidates, horizon {args.horizon} steps; "
        f"{time.process_time() - t0:.0f} s CPU"
    )
    print(
        "mean regret of each candidate over all states: "
        + ", ".join(f"{n} {v:.4f}" for n, v in zip(CANDIDATES, regret.mean(axis=0)))
    )
    print(
        f"states where the candidates differ: {np.mean(regret.max(axis=1) > 1e-9):.0%}; "
        f"where the job choice matters: {np.mean(kinds):.0%}; "
        f"best candidate unique: {np.mean((regret < 1e-9).sum(1) == 1):.0%}"
    )
    feature_sets = {"minimal": obs_all[:, :QUEUE_FEATURES], "queue": obs_all}
    lambdas = (0.1, 1.0, 10.0)
    results: dict[str, list[np.ndarray]] = {"fixed": []}
    r2: dict[str, list[float]] = {}
    for name in feature_sets:
        for lam in lambdas:
            results[f"{name} ridge {lam:g}"] = []
            r2[f"{name} ridge {lam:g}"] = []
    for held in np.unique(groups_arr):
        train, test = groups_arr != held, groups_arr == held
        fixed = int(np.argmin(regret[train].mean(axis=0)))
        results["fixed"].append(regret[test, fixed])
        for name, x in feature_sets.items():
            for lam in lambdas:
                key = f"{name} ridge {lam:g}"
                w = ridge(x[train], adv[train], lam=lam)
                pred = predict(w, x[test])
                choice = pred.argmax(axis=1)
                results[key].append(regret[test][np.arange(test.sum()), choice])
                resid = ((adv[test] - pred) ** 2).sum()
                total = ((adv[test] - adv[test].mean(axis=0)) ** 2).sum()
                r2[key].append(1 - resid / total if total > 0 else 0.0)
    print("held-out windows (leave one window out), mean regret per state (lower is better):")
    for name, parts in results.items():
        extra = f", advantage R^2 {np.mean(r2[name]):+.2f}" if name in r2 else ""
        print(f"  {name:18s} {np.mean(np.concatenate(parts)):8.4f}{extra}")
    print(f"  oracle             {0:8.4f}; uniform random over candidates {regret.mean():.4f}")


if __name__ == "__main__":
    raise SystemExit(main())
