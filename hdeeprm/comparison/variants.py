"""The EASY variants a site would pick from, and the rule that picks one on training windows.

A variant is a :class:`~hdeeprm.scheduling.SchedulerConfig`: the primary queue ordering (any
of the 18), the backfilling order (FCFS, or shortest requested first: EASY-SJBF), and the
run-time predictor with its correction (user estimates; AVE2; the online E-Loss regression;
each wrong prediction corrected by the requested time, incrementally or by doubling). The
clairvoyant variants (exact run times) are reference lines only: no site has them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hdeeprm.comparison.replay import WindowScore, replay_all
from hdeeprm.comparison.setting import Windows
from hdeeprm.scheduling import BackfillScheduler, HeuristicTriple, SchedulerConfig
from hdeeprm.scheduling.orderings import ORDERINGS

#: (variant, backfilling order): EASY and EASY-SJBF.
BACKFILLS: tuple[tuple[str, str], ...] = (("easy", "FCFS"), ("easy-sjbf", "SPF"))
#: (predictor, correction) pairs: user estimates need no correction.
PREDICTIONS: tuple[tuple[str, str], ...] = (
    ("requested", "requested"),
    ("ave2", "requested"),
    ("ave2", "incremental"),
    ("ave2", "doubling"),
    ("regression", "requested"),
    ("regression", "incremental"),
    ("regression", "doubling"),
)


def variant(
    primary: str = "FCFS",
    backfill: str = "FCFS",
    predictor: str = "requested",
    correction: str = "requested",
) -> SchedulerConfig:
    """One EASY configuration; ``backfill`` ``"SPF"`` is EASY-SJBF."""
    kind = "easy-sjbf" if backfill == "SPF" else "easy"
    return SchedulerConfig(HeuristicTriple(predictor, correction, kind), primary, backfill)


def easy_variants(
    orderings: Sequence[str] = ORDERINGS, predictions: Sequence[tuple[str, str]] = PREDICTIONS
) -> list[SchedulerConfig]:
    """Every primary ordering x backfilling order x prediction: 18 x 2 x 7 = 252 by default."""
    return [
        variant(primary, backfill, predictor, correction)
        for predictor, correction in predictions
        for _, backfill in BACKFILLS
        for primary in orderings
    ]


def reference_variants() -> list[SchedulerConfig]:
    """Clairvoyant EASY and EASY-SJBF (FCFS primary): what exact run times would give."""
    return [variant("FCFS", b, "clairvoyant") for _, b in BACKFILLS]


def label(config: SchedulerConfig) -> str:
    """A short name: ``EASY(P/B; predictor[, correction])``."""
    t = config.triple
    pred = t.predictor if t.correction == "requested" else f"{t.predictor}, {t.correction}"
    pred = {"requested": "estimates", "regression": "E-Loss"}.get(pred, pred).replace(
        "regression", "E-Loss"
    )
    return f"EASY({config.primary}/{config.backfill}; {pred})"


@dataclass(frozen=True)
class Scored:
    """A configuration and its figures over a set of windows."""

    config: SchedulerConfig
    windows: tuple[WindowScore, ...]

    @property
    def mean(self) -> WindowScore:
        return WindowScore.mean_of(self.windows)


def score(config: SchedulerConfig, windows: Windows) -> Scored:
    """``config`` on every window, each with a fresh scheduler (and predictor)."""
    workloads = [windows.workload(k) for k in range(len(windows))]
    return Scored(
        config, tuple(replay_all(windows.setting, workloads, lambda: BackfillScheduler(config)))
    )


def choose(scored: Sequence[Scored]) -> Scored:
    """The lowest mean bounded slowdown; ties go to the earliest in ``scored``."""
    if not scored:
        raise ValueError("nothing to choose from")
    return min(scored, key=lambda s: s.mean.mean_bsld)
