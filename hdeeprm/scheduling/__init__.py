"""Backfilling schedulers and the learned heuristics of the seed PhD thesis (chapters 4-5).

One module per concern: :mod:`.orderings` (queue orderings FCFS ... F4), :mod:`.predictors`
(run-time predictions), :mod:`.regression` (the online regression and its losses, E-Loss),
:mod:`.corrections` (what to do when a job outlives its prediction), :mod:`.predicted`
(predictions and predicted ends kept by a job listener), :mod:`.profile`
(predicted core availability, reservations), :mod:`.backfilling` (EASY, EASY-SJBF,
conservative), :mod:`.config` (the heuristic triple, presets, options parsing) and
:mod:`.bandit` (the thesis's epsilon-greedy choice of the ordering online, section 6.3.3).
"""

from hdeeprm.scheduling.backfilling import BackfillScheduler
from hdeeprm.scheduling.bandit import EpsilonGreedyBandit, play_bandit
from hdeeprm.scheduling.config import (
    PRESETS,
    HeuristicTriple,
    LossSpec,
    SchedulerConfig,
    parse_scheduler,
)
from hdeeprm.scheduling.orderings import ORDERINGS

__all__ = [
    "ORDERINGS",
    "PRESETS",
    "BackfillScheduler",
    "EpsilonGreedyBandit",
    "HeuristicTriple",
    "LossSpec",
    "SchedulerConfig",
    "parse_scheduler",
    "play_bandit",
]
