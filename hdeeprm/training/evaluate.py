"""Evaluation on held-out windows: a trained model, every fixed policy pair, random choice.

Every policy plays the same episodes: window ``k`` of the environment's evaluation split
(``reset(seed=eval_seed, options={"window": k})``) when the environment has episode windows,
otherwise the options' one workload, reset with ``eval_seed``. Decisions of a model are greedy
(the most probable allowed action). A row per (policy, window) records the episode's objective,
mean slowdown and mean bounded slowdown (10 s, as ``hdeeprm-metrics``), decision steps and wall
time; :func:`summarize` aggregates them per policy (mean and median over windows) and names
the best fixed pair.
"""

from __future__ import annotations

import csv
import io
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hdeeprm._atomic import atomic_open, write_text
from hdeeprm.analysis.metrics import job_metrics

#: A policy: (observation, info, env) -> action index.
Chooser = Callable[[np.ndarray, dict[str, Any], Any], int]
#: Name of the random-choice baseline in tables.
RANDOM = "random"
#: Columns of the per-window CSV.
CSV_COLUMNS = (
    "policy",
    "window",
    "objective",
    "mean_slowdown",
    "mean_bounded_slowdown",
    "steps",
    "wall_time_s",
)

MINIMIZED = {
    "avg_job_slowdown",
    "avg_bounded_slowdown",
    "avg_job_completion",
    "makespan",
    "energy_consumption",
    "edp",
}


@dataclass(frozen=True, slots=True)
class WindowResult:
    """One policy on one window."""

    policy: str
    window: int
    objective: float
    mean_slowdown: float
    mean_bounded_slowdown: float
    steps: int
    wall_time: float


@dataclass(frozen=True, slots=True)
class PolicySummary:
    """One policy over all windows."""

    policy: str
    mean_objective: float
    median_objective: float
    mean_slowdown: float
    mean_bounded_slowdown: float
    steps: int
    wall_time: float

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.wall_time if self.wall_time > 0 else math.nan


# --- policies --------------------------------------------------------------------------------
def fixed_policy(action: int) -> Chooser:
    """Always the same action (a fixed policy pair, as a CLASSIC agent)."""
    return lambda obs, info, env: action


def random_policy(seed: int) -> Chooser:
    """Uniform choice among the allowed actions, from its own seeded generator."""
    rng = np.random.default_rng(seed)

    def choose(obs: np.ndarray, info: dict[str, Any], env: Any) -> int:
        mask = info.get("action_mask")
        if mask is None:
            return int(rng.integers(env.action_space.n))
        allowed = np.flatnonzero(mask)
        return int(allowed[rng.integers(len(allowed))]) if len(allowed) else 0

    return choose


def model_policy(trainer: Any, deterministic: bool = True) -> Chooser:
    """A trained :class:`~hdeeprm.training.ppo.PPOTrainer`, greedy by default."""

    def choose(obs: np.ndarray, info: dict[str, Any], env: Any) -> int:
        return int(trainer.predict(obs, deterministic, info.get("action_mask")))

    return choose


def baseline_policies(action_names: Sequence[str], seed: int) -> dict[str, Chooser]:
    """Every fixed pair of the action space (``void`` excluded) and random choice."""
    policies = {name: fixed_policy(i) for i, name in enumerate(action_names) if name != "void"}
    policies[RANDOM] = random_policy(seed)
    return policies


# --- running ---------------------------------------------------------------------------------
def window_ids(env: Any) -> list[int | None]:
    """The evaluation windows of ``env`` (``[None]``: the one workload of the options)."""
    count = getattr(env, "nb_eval_windows", None)
    return list(range(int(count))) if count else [None]


def play(env: Any, choose: Chooser, *, seed: int, window: int | None, name: str) -> WindowResult:
    """One episode of ``choose`` on ``window``; the figures of its jobs."""
    t0 = time.perf_counter()
    options = {"window": window} if window is not None else None
    obs, info = env.reset(seed=seed, options=options)
    steps = 0
    done = env.finished if hasattr(env, "finished") else False
    while not done:
        obs, _, terminated, truncated, info = env.step(choose(obs, info, env))
        steps += 1
        done = terminated or truncated
    wall = time.perf_counter() - t0
    jobs = env.engine.finished_jobs
    nan = math.nan
    submit = [j.subtime for j in jobs]
    start = [nan if j.start_time is None else j.start_time for j in jobs]
    finish = [nan if j.finish_time is None else j.finish_time for j in jobs]
    figures = job_metrics(submit, start, finish)
    objective = info.get("objective")
    if objective is None:
        objective = env.objective_value()
    return WindowResult(
        name,
        -1 if window is None else window,
        float(objective),
        figures.mean_slowdown,
        figures.mean_bounded_slowdown,
        steps,
        wall,
    )


def evaluate(
    env: Any,
    policies: dict[str, Chooser],
    *,
    seed: int = 0,
    windows: Sequence[int | None] | None = None,
    on_result: Callable[[WindowResult], None] | None = None,
) -> list[WindowResult]:
    """Play every policy on every window (the same episodes for all)."""
    ids = window_ids(env) if windows is None else list(windows)
    results = []
    for name, choose in policies.items():
        for window in ids:
            result = play(env, choose, seed=seed, window=window, name=name)
            results.append(result)
            if on_result is not None:
                on_result(result)
    return results


# --- reporting -------------------------------------------------------------------------------
def summarize(results: Sequence[WindowResult]) -> list[PolicySummary]:
    """Per-policy aggregates, in first-seen order."""
    by: dict[str, list[WindowResult]] = {}
    for r in results:
        by.setdefault(r.policy, []).append(r)
    out = []
    for name, rows in by.items():
        objs = [r.objective for r in rows]
        out.append(
            PolicySummary(
                name,
                math.fsum(objs) / len(objs),
                statistics.median(objs),
                math.fsum(r.mean_slowdown for r in rows) / len(rows),
                math.fsum(r.mean_bounded_slowdown for r in rows) / len(rows),
                sum(r.steps for r in rows),
                math.fsum(r.wall_time for r in rows),
            )
        )
    return out


def best_pair(
    summaries: Sequence[PolicySummary], objective: str, pair_names: Sequence[str]
) -> str | None:
    """The fixed pair (a policy named in ``pair_names``) with the best mean objective."""
    pairs = [s for s in summaries if s.policy in pair_names]
    if not pairs:
        return None
    sign = 1.0 if objective in MINIMIZED else -1.0
    return min(pairs, key=lambda s: (sign * s.mean_objective, s.policy)).policy


def format_table(
    results: Sequence[WindowResult],
    objective: str,
    *,
    highlight: Sequence[str] = (),
    pair_names: Sequence[str] = (),
) -> str:
    """A plain-text table: policy, mean and median objective, slowdowns, per window, time.

    Rows are ordered best first; the best fixed pair is named at the end (or the tied ones:
    naming one of equals would suggest a difference there is not).
    """
    summaries = summarize(results)
    sign = 1.0 if objective in MINIMIZED else -1.0
    ordered = sorted(summaries, key=lambda s: (sign * s.mean_objective, s.policy))
    windows = sorted({r.window for r in results})
    per = {(r.policy, r.window): r.objective for r in results}
    name_w = max(12, *(len(s.policy) for s in summaries)) + 2
    head = (
        f"{'policy':<{name_w}}{'mean ' + objective:>24}{'median':>12}{'slowdown':>11}"
        f"{'bounded sd':>11}{'wall s':>9}{'steps/s':>9}"
    )
    if len(windows) > 1:
        head += "  " + " ".join(f"{'w' + str(w):>9}" for w in windows)
    lines = [head, "-" * len(head)]
    for s in ordered:
        mark = "*" if s.policy in highlight else " "
        line = (
            f"{mark}{s.policy:<{name_w - 1}}{s.mean_objective:>24.6g}{s.median_objective:>12.6g}"
            f"{s.mean_slowdown:>11.4g}{s.mean_bounded_slowdown:>11.4g}{s.wall_time:>9.1f}"
            f"{s.steps_per_s:>9.0f}"
        )
        if len(windows) > 1:
            line += "  " + " ".join(f"{per.get((s.policy, w), math.nan):>9.4g}" for w in windows)
        lines.append(line)
    best = best_pair(summaries, objective, pair_names)
    if best is not None:
        pairs = [s for s in summaries if s.policy in pair_names]
        top = next(s.mean_objective for s in pairs if s.policy == best)
        tied = sorted(s.policy for s in pairs if s.mean_objective == top)
        if len(pairs) > 1 and len(tied) == len(pairs):
            lines.append(f"all {len(pairs)} fixed pairs tie (mean {objective} {top:.6g})")
        elif len(tied) > 1:
            lines.append(f"best fixed pairs (tied): {', '.join(tied)}")
        else:
            lines.append(f"best fixed pair: {best}")
    return "\n".join(lines)


def write_csv(results: Sequence[WindowResult], path: str | Path) -> Path:
    """Per-window rows, written atomically."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in results:
        writer.writerow(
            [
                r.policy,
                r.window,
                repr(r.objective),
                repr(r.mean_slowdown),
                repr(r.mean_bounded_slowdown),
                r.steps,
                repr(r.wall_time),
            ]
        )
    write_text(path, buffer.getvalue())
    return Path(path)


def plot_comparison(
    results: Sequence[WindowResult],
    objective: str,
    path: str | Path,
    *,
    highlight: Sequence[str] = (),
) -> Path:
    """Bar chart of every policy's mean objective (best first), per-window values as dots."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summaries = summarize(results)
    sign = 1.0 if objective in MINIMIZED else -1.0
    ordered = sorted(summaries, key=lambda s: (sign * s.mean_objective, s.policy))
    names = [s.policy for s in ordered]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.28 * len(names) + 2), 4.5))
    colors = [
        "tab:red" if n in highlight else ("tab:gray" if n == RANDOM else "tab:blue") for n in names
    ]
    ax.bar(range(len(names)), [s.mean_objective for s in ordered], color=colors)
    for i, n in enumerate(names):
        ys = [r.objective for r in results if r.policy == n]
        ax.plot([i] * len(ys), ys, "k.", markersize=3)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=90, fontsize=7)
    ax.set_ylabel(f"{objective} (mean over windows; dots: windows)")
    ax.set_title("held-out windows: model (red), fixed pairs (blue), random (grey)")
    fig.tight_layout()
    with atomic_open(path, "wb") as handle:
        fig.savefig(handle, format="png", dpi=110)
    plt.close(fig)
    return Path(path)
