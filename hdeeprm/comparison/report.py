"""The tables a comparison prints, and the JSON it keeps."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hdeeprm.comparison.protocol import EASY, Comparison
from hdeeprm.comparison.replay import WindowScore
from hdeeprm.comparison.variants import label
from hdeeprm.errors import InputError

HEADER = (
    f"{'scheduler':<58} {'mean bsld':>9} {'mean wait h':>11} {'worst wait h':>12} "
    f"{'worst bsld':>10}"
)


def _row(name: str, scores: Sequence[WindowScore]) -> str:
    m = WindowScore.mean_of(scores)
    return (
        f"{name[:58]:<58} {m.mean_bsld:>9.2f} {m.mean_wait / 3600:>11.2f} "
        f"{m.max_wait / 3600:>12.1f} {m.max_bsld:>10.0f}"
    )


def _windows(name: str, scores: Sequence[WindowScore]) -> str:
    return f"{name[:40]:<40} " + " ".join(f"{s.mean_bsld:>7.1f}" for s in scores)


def render(c: Comparison) -> str:
    """The held-out table (every seed, every reference), per-window figures and a verdict."""
    p = c.protocol
    lines = [
        f"held-out: {p.test_windows} windows of {p.window_jobs} jobs of "
        f"{c.test_setting.trace.name} [{p.test.first}, {p.test.stop}), starting at jobs "
        + ", ".join(map(str, c.test_starts))
        + f"; learned: {c.learner}",
        HEADER,
    ]
    for r in c.seeds:
        lines.append(_row(f"seed {r.seed}: learned", r.learned_test))
        lines.append(_row(f"seed {r.seed}: chosen {label(r.baseline)}", r.baseline_test))
    for name, scores in c.references.items():
        lines.append(_row(name, scores))
    lines += ["", "mean bounded slowdown per held-out window:"]
    for r in c.seeds:
        lines.append(_windows(f"seed {r.seed}: learned", r.learned_test))
        lines.append(_windows(f"seed {r.seed}: chosen variant", r.baseline_test))
    for name, scores in c.references.items():
        lines.append(_windows(name, scores))
    lines += ["", "per seed (learned against the variant chosen on the same training windows):"]
    easy = c.references.get(EASY)
    for r in c.seeds:
        learned, chosen = WindowScore.mean_of(r.learned_test), WindowScore.mean_of(r.baseline_test)
        better = sum(a.mean_bsld < b.mean_bsld for a, b in zip(r.learned_test, r.baseline_test))
        gain = (learned.mean_bsld - chosen.mean_bsld) / chosen.mean_bsld
        ratio = learned.max_wait / chosen.max_wait if chosen.max_wait > 0 else math.inf
        verdict = "wins" if gain < 0 and ratio <= 1.1 else "does not win"
        lines.append(
            f"seed {r.seed}: {gain:+.1%} mean bsld, better on {better} of {len(r.learned_test)} "
            f"windows, worst wait x{ratio:.2f}: {verdict}; training {r.train_cpu_s:.0f} s CPU"
            + (
                f"; EASY / learned = {WindowScore.mean_of(easy).mean_bsld / learned.mean_bsld:.2f}"
                if easy
                else ""
            )
        )
    return "\n".join(lines)


def _score(s: WindowScore) -> dict[str, float]:
    return {
        "mean_bsld": s.mean_bsld,
        "mean_wait": s.mean_wait,
        "max_wait": s.max_wait,
        "max_bsld": s.max_bsld,
        "jobs": s.nb_jobs,
    }


def to_json(c: Comparison) -> dict[str, Any]:
    """Every figure, per window, with the protocol that produced it."""
    p = c.protocol
    return {
        "trace": str(c.train_setting.trace),
        "platform": str(c.train_setting.platform_path),
        "test_trace": str(c.test_setting.trace),
        "test_platform": str(c.test_setting.platform_path),
        "protocol": {
            "window_jobs": p.window_jobs,
            "train": [p.train.first, p.train.stop],
            "test": [p.test.first, p.test.stop],
            "pool_windows": p.pool_windows,
            "train_windows": p.train_windows,
            "test_windows": p.test_windows,
            "data_seed": p.data_seed,
            "top_k": p.top_k,
            "period_s": p.period,
            "learner": c.learner,
            "variants": len(p.orderings) * 2 * len(p.predictions),
        },
        "pool_starts": c.pool_starts,
        "test_starts": c.test_starts,
        "grid_cpu_s": c.grid_cpu_s,
        "seeds": [
            {
                "seed": r.seed,
                "train_starts": r.train_starts,
                "train_cpu_s": r.train_cpu_s,
                "baseline": label(r.baseline),
                "baseline_train": _score(r.baseline_train),
                "learned": r.learned.describe(),
                "learned_train": _score(r.learned_train),
                "baseline_test": [_score(s) for s in r.baseline_test],
                "learned_test": [_score(s) for s in r.learned_test],
            }
            for r in c.seeds
        ],
        "references": {k: [_score(s) for s in v] for k, v in c.references.items()},
        "grid": {label(k): [_score(s) for s in v] for k, v in c.grid.items()},
    }


def grid_from_json(
    raw: Any, c_trace: str, c_platform: str, pool: list[int], where: str
) -> dict[str, list[WindowScore]]:
    """The variants' pool figures kept in a ``results.json`` (:func:`to_json`), checked to come
    from the same trace, platform and pool windows."""
    if not isinstance(raw, dict) or not isinstance(raw.get("grid"), dict):
        raise InputError("not a results.json of hdeeprm-compare (no 'grid' key)", where)
    for key, mine in (("trace", c_trace), ("platform", c_platform)):
        if Path(str(raw.get(key))).name != Path(mine).name:
            raise InputError(f"its {key} is {raw.get(key)!r}, not {mine!r}", where, key)
    if raw.get("pool_starts") != pool:
        raise InputError(
            f"its pool windows start at {raw.get('pool_starts')}, these at {pool}: "
            "use the same --train, --window-jobs, --pool-windows and --data-seed",
            where,
            "pool_starts",
        )
    try:
        return {
            name: [
                WindowScore(s["mean_bsld"], s["mean_wait"], s["max_wait"], s["max_bsld"], s["jobs"])
                for s in scores
            ]
            for name, scores in raw["grid"].items()
        }
    except (KeyError, TypeError) as exc:
        raise InputError(f"a malformed figure in 'grid' ({exc})", where, "grid") from None
