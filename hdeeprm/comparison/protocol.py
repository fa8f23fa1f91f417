"""Train on the first part of a trace, judge on held-out windows of its last part.

The protocol, fixed before anything is measured:

1. **Windows.** The training range is sampled once into a pool of ``pool_windows`` windows
   (seed ``data_seed + 1000``); the test range into ``test_windows`` held-out windows (seed
   ``data_seed``). Each training seed draws its ``train_windows`` training windows from the
   pool, without replacement. Nothing reads the held-out windows before step 4.
2. **Baseline** (per seed): every EASY variant (:func:`~.variants.easy_variants`) plays the
   seed's training windows; the lowest mean bounded slowdown is *the variant a site would
   pick* (ties: the first in the grid).
3. **Learned scheduler** (per seed, the same windows and the same rule; here the default
   :class:`OnlineEasyLearner`, any :class:`Learner` may replace it): EASY learning its
   orderings online (:class:`~.online.OnlineTunedEasy`), built from what training measured:
   the chosen variant's predictor, correction and backfilling; as candidates its primary
   ordering and the ``top_k - 1`` next best primaries under them. Each learner setting of
   :data:`LEARNER_SETTINGS` (cost, decay) plays the training windows with a loose starvation
   guard ``theta``, the worst wait the chosen variant gave on them (a job that waited longer
   goes to the front, in submission order); the lowest mean wins. Then the guard: the
   loosest and each of :data:`GUARD_HOURS` play the training windows, and the lowest mean
   among those whose worst wait on every training window is at most 10% above the chosen
   variant's is kept (if none is, the one closest to that).
4. **Held-out**: each seed's baseline and learned scheduler, and the reference lines (plain
   EASY, EASY-SJBF, EASY++, the thesis's best triple, clairvoyant EASY and EASY-SJBF), on
   every held-out window, each window from an idle platform with a fresh scheduler.

With a ``test`` setting of another trace (transfer), step 4 plays that trace's windows; the
learned scheduler carries its orderings, predictor, guard and learner setting across.
"""

from __future__ import annotations

import math
import time
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from hdeeprm.comparison.online import OnlineTunedEasy, OnlineTuning
from hdeeprm.comparison.replay import WindowScore, replay
from hdeeprm.comparison.setting import JobRange, TraceSetting, Windows, windows_of
from hdeeprm.comparison.variants import (
    PREDICTIONS,
    easy_variants,
    label,
    reference_variants,
    variant,
)
from hdeeprm.decision.workload_manager import SchedulingStrategy
from hdeeprm.errors import InputError
from hdeeprm.scheduling import BackfillScheduler, SchedulerConfig
from hdeeprm.scheduling.orderings import ORDERINGS

#: Starvation guards (hours) training tries, tightest last.
GUARD_HOURS: tuple[float, ...] = (96.0, 72.0, 48.0, 36.0, 24.0, 12.0)
#: How much worse than the baseline's a training window's worst wait may be.
WORST_WAIT_SLACK = 1.1
#: (cost, decay) settings of the online learner that training chooses from.
LEARNER_SETTINGS: tuple[tuple[str, float], ...] = (
    ("bsld", 1.0),
    ("wait", 1.0),
    ("bsld", 0.8),
    ("wait", 0.8),
)


@dataclass(frozen=True)
class Protocol:
    """The options of a comparison (see the module docstring)."""

    train: JobRange
    test: JobRange
    window_jobs: int = 2000
    pool_windows: int = 12
    train_windows: int = 8
    test_windows: int = 10
    data_seed: int = 0
    orderings: tuple[str, ...] = ORDERINGS
    predictions: tuple[tuple[str, str], ...] = PREDICTIONS
    top_k: int = 6
    period: float = 86400.0

    def __post_init__(self) -> None:
        if not 1 <= self.train_windows <= self.pool_windows:
            raise ValueError(
                f"train_windows must be in 1..pool_windows ({self.pool_windows}), "
                f"got {self.train_windows}"
            )
        if self.test_windows < 1:
            raise ValueError(f"test_windows must be >= 1, got {self.test_windows}")
        if self.top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {self.top_k}")


@dataclass(frozen=True)
class LearnedEasy:
    """What training produced: the learner's base configuration and settings."""

    base: SchedulerConfig
    tuning: OnlineTuning

    def describe(self) -> str:
        theta = "off" if self.base.theta is None else f"{self.base.theta / 3600:.1f} h"
        return f"online {label(self.base)}, guard {theta}, {self.tuning.describe()}"

    def play(self, windows: Windows) -> list[WindowScore]:
        """Every window, learning afresh in each (:func:`play_learned`)."""
        return play_learned(self, windows)


class Trained(typing.Protocol):
    """What a learner's training gives: a scheduler that plays windows of any setting."""

    def describe(self) -> str:
        """One line: what was learned."""

    def play(self, windows: Windows) -> list[WindowScore]:
        """The figures of every window of ``windows``, each from an idle platform."""


@dataclass(frozen=True)
class SeedContext:
    """What a learner may read for one training seed: its training windows, and the EASY
    variant chosen on them with every variant's figures there (no held-out job)."""

    seed: int
    protocol: Protocol
    train: Windows
    baseline: SchedulerConfig
    #: Every EASY variant on each of :attr:`train`'s windows.
    grid: dict[SchedulerConfig, list[WindowScore]]


class Learner(typing.Protocol):
    """A learned scheduler's training (step 3): ``name`` names it in the tables."""

    name: typing.ClassVar[str]

    def train(self, context: SeedContext) -> tuple[Trained, list[WindowScore]]:
        """The trained scheduler and its figures on the training windows."""


@dataclass(frozen=True)
class OnlineEasyLearner:
    """Step 3 as the module docstring states it: EASY learning its ordering online."""

    name: typing.ClassVar[str] = "online-easy"

    def train(self, context: SeedContext) -> tuple[Trained, list[WindowScore]]:
        protocol, train, baseline = context.protocol, context.train, context.baseline
        grid = context.grid
        same = [
            c
            for c in grid
            if c.triple == baseline.triple and c.backfill == baseline.backfill and c != baseline
        ]
        ranked = [baseline, *sorted(same, key=lambda c: _mean(grid[c]))]
        candidates = tuple((c.primary, c.backfill) for c in ranked[: protocol.top_k])
        loose = replace(baseline, theta=WindowScore.mean_of(grid[baseline]).max_wait)
        best: tuple[float, LearnedEasy, list[WindowScore]] | None = None
        for cost, decay in LEARNER_SETTINGS:
            learned = LearnedEasy(loose, OnlineTuning(candidates, protocol.period, decay, cost))
            scores = play_learned(learned, train)
            if best is None or _mean(scores) < best[0]:
                best = (_mean(scores), learned, scores)
        assert best is not None
        return choose_guard(best[1], best[2], grid[baseline], train)


@dataclass
class SeedResult:
    """One training seed: its windows, choices, budget and held-out figures."""

    seed: int
    train_starts: list[int]
    baseline: SchedulerConfig
    baseline_train: WindowScore
    learned: Trained
    learned_train: WindowScore
    train_cpu_s: float
    baseline_test: list[WindowScore] = field(default_factory=list)
    learned_test: list[WindowScore] = field(default_factory=list)


@dataclass
class Comparison:
    """Everything a comparison measured."""

    protocol: Protocol
    train_setting: TraceSetting
    test_setting: TraceSetting
    pool_starts: list[int]
    test_starts: list[int]
    grid_cpu_s: float
    seeds: list[SeedResult]
    references: dict[str, list[WindowScore]]
    #: Every EASY variant on every pool window (what the choices read).
    grid: dict[SchedulerConfig, list[WindowScore]] = field(default_factory=dict)
    #: The learner's name (:attr:`Learner.name`).
    learner: str = "online-easy"


Log = Callable[[str], None]


def _scores(
    setting: TraceSetting, windows: Windows, make: Callable[[int], SchedulingStrategy]
) -> list[WindowScore]:
    return [replay(setting, windows.workload(k), make(k)) for k in range(len(windows))]


def play_fixed(config: SchedulerConfig, windows: Windows) -> list[WindowScore]:
    """``config`` on every window, each with a fresh scheduler."""
    return _scores(windows.setting, windows, lambda _k: BackfillScheduler(config))


def play_learned(learned: LearnedEasy, windows: Windows) -> list[WindowScore]:
    """The learned scheduler on every window, learning afresh in each."""
    return _scores(
        windows.setting,
        windows,
        lambda k: OnlineTunedEasy(
            windows.setting, windows.workload(k), learned.base, learned.tuning
        ),
    )


def _mean(scores: Sequence[WindowScore]) -> float:
    return math.fsum(s.mean_bsld for s in scores) / len(scores)


def worst_wait_ratio(learned: Sequence[WindowScore], baseline: Sequence[WindowScore]) -> float:
    """The largest ratio, window by window, of the learned worst wait to the baseline's."""
    return max(
        a.max_wait / b.max_wait if b.max_wait > 0 else (math.inf if a.max_wait > 0 else 1.0)
        for a, b in zip(learned, baseline, strict=True)
    )


def choose_guard(
    learned: LearnedEasy,
    scores: list[WindowScore],
    baseline: list[WindowScore],
    train: Windows,
) -> tuple[LearnedEasy, list[WindowScore]]:
    """The starvation guard ``theta`` of :data:`GUARD_HOURS` (or the loose one ``learned``
    has) with the lowest mean on the training windows among those whose worst wait is at most
    :data:`WORST_WAIT_SLACK` times the baseline's on every training window; if none is, the
    lowest such ratio."""
    tried = [(learned, scores)]
    for hours in GUARD_HOURS:
        theta = hours * 3600.0
        if learned.base.theta is not None and theta >= learned.base.theta:
            continue
        guarded = LearnedEasy(replace(learned.base, theta=theta), learned.tuning)
        tried.append((guarded, play_learned(guarded, train)))
    ok = [t for t in tried if worst_wait_ratio(t[1], baseline) <= WORST_WAIT_SLACK]
    if ok:
        return min(ok, key=lambda t: _mean(t[1]))
    return min(tried, key=lambda t: worst_wait_ratio(t[1], baseline))


def train_seed(
    seed: int,
    protocol: Protocol,
    pool: Windows,
    grid: dict[SchedulerConfig, list[WindowScore]],
    learner: Learner | None = None,
) -> SeedResult:
    """Steps 2 and 3 of the protocol for one seed (``grid``: every variant on the pool;
    ``learner``: :class:`OnlineEasyLearner` by default)."""
    cpu = time.process_time()
    rng = np.random.default_rng(seed)
    picked = sorted(int(i) for i in rng.choice(len(pool), protocol.train_windows, replace=False))
    train = Windows(pool.setting, pool.window_jobs, tuple(pool.starts[i] for i in picked))
    on_train = {config: [scores[i] for i in picked] for config, scores in grid.items()}
    baseline = min(on_train, key=lambda c: _mean(on_train[c]))
    context = SeedContext(seed, protocol, train, baseline, on_train)
    learned, scores = (learner or OnlineEasyLearner()).train(context)
    # Training CPU: the grid's share for these windows plus the learner's own runs.
    return SeedResult(
        seed,
        list(train.starts),
        baseline,
        WindowScore.mean_of(on_train[baseline]),
        learned,
        WindowScore.mean_of(scores),
        time.process_time() - cpu,
    )


#: The name of plain EASY (FCFS, user estimates) among the references: ratios are to it.
EASY = "EASY (estimates)"
REFERENCES: tuple[tuple[str, SchedulerConfig], ...] = (
    (EASY, variant()),
    ("EASY-SJBF (estimates)", variant("FCFS", "SPF")),
    ("EASY++ (AVE2, incremental, SJBF)", variant("FCFS", "SPF", "ave2", "incremental")),
    (
        "E-Loss, incremental, SJBF (thesis best)",
        variant("FCFS", "SPF", "regression", "incremental"),
    ),
    *((f"clairvoyant {label(c)} (reference)", c) for c in reference_variants()),
)


def compare(
    setting: TraceSetting,
    protocol: Protocol,
    seeds: Sequence[int],
    *,
    test_setting: TraceSetting | None = None,
    grid: dict[str, list[WindowScore]] | None = None,
    learner: Learner | None = None,
    log: Log = lambda _s: None,
) -> Comparison:
    """Run the whole protocol; ``log`` hears of each step as it ends.

    ``grid`` (variant label -> its figures on each pool window, as a previous comparison of
    the same trace, platform and pool kept them) skips replaying the variants on the pool;
    every variant of the protocol must be in it, with one figure per pool window.
    ``learner`` trains the learned scheduler of each seed (:class:`OnlineEasyLearner` by
    default; :class:`~hdeeprm.comparison.backfill_agent.BackfillAgentLearner`: an agent that
    chooses what EASY backfills).
    """
    test_setting = test_setting or setting
    protocol.train.check("train range", setting.nb_jobs, protocol.window_jobs)
    protocol.test.check("test range", test_setting.nb_jobs, protocol.window_jobs)
    pool = windows_of(
        setting,
        protocol.train,
        protocol.window_jobs,
        protocol.pool_windows,
        protocol.data_seed + 1000,
    )
    test = windows_of(
        test_setting, protocol.test, protocol.window_jobs, protocol.test_windows, protocol.data_seed
    )
    variants = easy_variants(protocol.orderings, protocol.predictions)
    cpu = time.process_time()
    scored: dict[SchedulerConfig, list[WindowScore]] = {}
    for i, config in enumerate(variants, 1):
        if grid is not None:
            kept = grid.get(label(config))
            if kept is None or len(kept) != len(pool):
                raise InputError(
                    f"the kept grid has no figures for {label(config)} on the "
                    f"{len(pool)} pool windows: keep it from a comparison with the same "
                    "options",
                    where="grid",
                )
            scored[config] = list(kept)
            continue
        scored[config] = play_fixed(config, pool)
        if i % 36 == 0 or i == len(variants):
            log(
                f"  {i}/{len(variants)} EASY variants on the {len(pool)} pool windows "
                f"({time.process_time() - cpu:.0f} s CPU)"
            )
    grid_cpu = time.process_time() - cpu
    results = []
    trainer: Learner = learner or OnlineEasyLearner()
    for seed in seeds:
        result = train_seed(seed, protocol, pool, scored, trainer)
        result.train_cpu_s += grid_cpu * protocol.train_windows / protocol.pool_windows
        log(
            f"seed {seed}: chose {label(result.baseline)} "
            f"({result.baseline_train.mean_bsld:.2f} on its training windows); learned "
            f"{result.learned.describe()} ({result.learned_train.mean_bsld:.2f}); "
            f"{result.train_cpu_s:.0f} s CPU"
        )
        results.append(result)
    played: dict[SchedulerConfig, list[WindowScore]] = {}
    for result in results:
        if result.baseline not in played:
            played[result.baseline] = play_fixed(result.baseline, test)
        result.baseline_test = played[result.baseline]
        result.learned_test = result.learned.play(test)
        log(
            f"seed {result.seed} held-out: learned {_mean(result.learned_test):.2f}, "
            f"chosen variant {_mean(result.baseline_test):.2f}"
        )
    references = {name: play_fixed(config, test) for name, config in REFERENCES}
    return Comparison(
        protocol,
        setting,
        test_setting,
        list(pool.starts),
        list(test.starts),
        grid_cpu,
        results,
        references,
        scored,
        trainer.name,
    )
