"""Learned schedulers against the EASY variants a site would pick, on held-out windows.

:mod:`.setting` (a trace on a platform, job ranges, windows), :mod:`.replay` (one window
under one scheduler, and its figures), :mod:`.variants` (the EASY variants and the rule that
picks one), :mod:`.online` (EASY learning its ordering online), :mod:`.backfill_agent` (an
agent choosing what EASY backfills), :mod:`.protocol` (training,
choice and held-out evaluation) and :mod:`.report` (the tables and the JSON). The command is
``hdeeprm-compare`` (docs/comparison.md).
"""

from hdeeprm.comparison.backfill_agent import BackfillAgentLearner
from hdeeprm.comparison.online import OnlineTunedEasy, OnlineTuning
from hdeeprm.comparison.protocol import (
    Comparison,
    LearnedEasy,
    Learner,
    OnlineEasyLearner,
    Protocol,
    SeedContext,
    compare,
)
from hdeeprm.comparison.replay import WindowScore, replay
from hdeeprm.comparison.report import render, to_json
from hdeeprm.comparison.setting import JobRange, TraceSetting, load_setting, windows_of
from hdeeprm.comparison.variants import easy_variants, label, variant

__all__ = [
    "BackfillAgentLearner",
    "Comparison",
    "JobRange",
    "LearnedEasy",
    "Learner",
    "OnlineEasyLearner",
    "OnlineTunedEasy",
    "OnlineTuning",
    "Protocol",
    "SeedContext",
    "TraceSetting",
    "WindowScore",
    "compare",
    "easy_variants",
    "label",
    "load_setting",
    "render",
    "replay",
    "to_json",
    "variant",
    "windows_of",
]
