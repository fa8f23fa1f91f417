"""How much can a learner gain over the best fixed pair? Per-window headroom of fixed pairs.

A learned policy that picks one pair per window can do at most as well as the *per-window best
pair in hindsight* (the oracle that knows each window's outcome); if that oracle barely beats
the single best pair, only a choice *within* windows (per decision state) can pay. The spread
of the pairs' objectives on a window says whether the window is *busy* (jobs queue, so the
choice matters) or idle (every pair gives the same objective, e.g. a mean slowdown of exactly
1): a learner gets signal from busy windows only.

:func:`headroom` computes these figures from the per-window results of fixed pairs
(:func:`hdeeprm.training.evaluate.evaluate` rows), for any objective (costs are minimised,
utilisation maximised, as :data:`~hdeeprm.training.evaluate.MINIMIZED` says).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from hdeeprm.training.evaluate import MINIMIZED, WindowResult

#: Relative spread (worst - best) / |best| at or below which a window counts as idle.
IDLE_SPREAD = 1e-9


@dataclass(frozen=True, slots=True)
class WindowHeadroom:
    """The fixed pairs on one window."""

    window: int
    best_pair: str
    best: float
    worst: float
    #: Objective of the single best pair (over all windows) on this window.
    single: float

    @property
    def spread(self) -> float:
        """``|worst - best| / |best|``: how much the pair choice matters on this window."""
        return abs(self.worst - self.best) / abs(self.best) if self.best else math.inf

    @property
    def busy(self) -> bool:
        """Whether the pairs differ at all here (spread above :data:`IDLE_SPREAD`)."""
        return self.spread > IDLE_SPREAD


@dataclass(frozen=True, slots=True)
class Headroom:
    """Single best pair against the per-window oracle, over a set of windows."""

    objective: str
    single_pair: str
    single_mean: float
    oracle_mean: float
    windows: tuple[WindowHeadroom, ...]

    @property
    def gain(self) -> float:
        """Relative improvement of the oracle over the single pair (>= 0)."""
        return abs(self.single_mean - self.oracle_mean) / abs(self.single_mean)

    @property
    def busy_windows(self) -> int:
        """Windows on which the pairs differ."""
        return sum(w.busy for w in self.windows)

    @property
    def switching_windows(self) -> int:
        """Windows on which another pair is strictly better than the single best pair."""
        sign = 1.0 if self.objective in MINIMIZED else -1.0
        return sum(sign * w.best < sign * w.single for w in self.windows)


def headroom(
    results: Sequence[WindowResult], objective: str, pairs: Sequence[str] | None = None
) -> Headroom:
    """Per-window oracle vs the single best pair, from per-window results of fixed pairs.

    Args:
        results: rows of :func:`~hdeeprm.training.evaluate.evaluate`; every pair must have
            played every window.
        objective: the objective's name (decides minimise or maximise).
        pairs: the policies to consider (default: every policy in ``results``). Ties go to
            the first name in sorted order, as :func:`~hdeeprm.training.evaluate.best_pair`,
            except that a window's best pair is the single best pair whenever it ties it.
    """
    sign = 1.0 if objective in MINIMIZED else -1.0
    names = sorted(pairs if pairs is not None else {r.policy for r in results})
    wanted = set(names)
    per: dict[tuple[str, int], float] = {}
    for r in results:
        if r.policy in wanted:
            per[(r.policy, r.window)] = r.objective
    windows = sorted({w for (_, w) in per})
    if not names or not windows:
        raise ValueError("headroom needs at least one pair and one window")
    missing = [(n, w) for n in names for w in windows if (n, w) not in per]
    if missing:
        name, window = missing[0]
        raise ValueError(f"{name} has no result on window {window} ({len(missing)} missing)")
    means = {n: math.fsum(per[(n, w)] for w in windows) / len(windows) for n in names}
    single = min(names, key=lambda n: (sign * means[n], n))
    rows = []
    for w in windows:
        # a tie with the single best pair names the single pair: nothing to switch to
        best = min(names, key=lambda n: (sign * per[(n, w)], n != single, n))
        worst = max(names, key=lambda n: (sign * per[(n, w)], n))
        rows.append(WindowHeadroom(w, best, per[(best, w)], per[(worst, w)], per[(single, w)]))
    oracle = math.fsum(r.best for r in rows) / len(rows)
    return Headroom(objective, single, means[single], oracle, tuple(rows))


def format_headroom(result: Headroom, starts: Sequence[int] | None = None) -> str:
    """A plain-text table, one line per window, then the summary line."""
    lines = [
        f"{'window':>6}{'first job':>10}{'best pair':>28}{'best':>11}{'worst':>11}"
        f"{'spread':>9}{result.single_pair:>28}"
    ]
    for row in result.windows:
        first = "" if starts is None else str(starts[row.window])
        lines.append(
            f"{row.window:>6}{first:>10}{row.best_pair:>28}{row.best:>11.5g}{row.worst:>11.5g}"
            f"{row.spread:>9.3g}{row.single:>28.5g}"
        )
    lines.append(
        f"single best pair {result.single_pair} {result.single_mean:.6g}; per-window best pair "
        f"in hindsight {result.oracle_mean:.6g} ({result.gain:.2%} better); "
        f"{result.busy_windows} of {len(result.windows)} windows busy (pairs differ), another "
        f"pair better than {result.single_pair} on {result.switching_windows}"
    )
    return "\n".join(lines)
