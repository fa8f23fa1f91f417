"""The ``scheduler`` block of a CLASSIC agent: presets, overrides and clear errors."""

from __future__ import annotations

import pytest

from hdeeprm.errors import InputError
from hdeeprm.options import options_from_json
from hdeeprm.scheduling import PRESETS, HeuristicTriple, LossSpec, SchedulerConfig


def _doc(scheduler, agent_type: str = "CLASSIC") -> dict:
    agent = {"type": agent_type, "policy_pair": "first-high_gflops", "scheduler": scheduler}
    return {
        "seed": 1,
        "workload_file_path": "t.swf",
        "platform_file_path": "p.json",
        "pybatsim": {"agent": agent},
    }


def _config(scheduler) -> SchedulerConfig:
    options = options_from_json(_doc(scheduler), "/data/o.json", check_files=False)
    assert options.agent.scheduler is not None
    return options.agent.scheduler


def test_presets_are_one_line() -> None:
    assert _config("easy") == SchedulerConfig()
    plus = _config("easy++")
    assert plus.triple == HeuristicTriple("ave2", "incremental", "easy-sjbf")
    assert plus.backfill == "SPF"
    best = _config("thesis-best")
    assert best.triple.predictor == "regression"
    assert best.triple.loss == LossSpec("squared", "linear", "large_area")
    assert set(PRESETS) >= {"easy", "easy-clairvoyant", "easy-sjbf", "easy++", "thesis-best"}


def test_object_overrides_a_preset() -> None:
    config = _config(
        {
            "preset": "easy++",
            "primary": "LEXP",
            "theta": 72000,
            "correction": "doubling",
        }
    )
    assert config.primary == "LEXP"
    assert config.backfill == "SPF"
    assert config.theta == 72000.0
    assert config.triple == HeuristicTriple("ave2", "doubling", "easy-sjbf")
    custom = _config(
        {
            "variant": "easy",
            "primary": "WFP3",
            "backfill": "F2",
            "predictor": "regression",
            "loss": {"over": "linear", "under": "squared", "weight": "constant"},
        }
    )
    assert (custom.primary, custom.backfill) == ("WFP3", "F2")
    assert custom.triple.loss == LossSpec("linear", "squared", "constant")
    options = options_from_json(_doc(None), check_files=False)
    assert options.agent.scheduler is None


@pytest.mark.parametrize(
    ("scheduler", "where", "fragment"),
    [
        ("easy+", "pybatsim.agent.scheduler", "allowed values: easy,"),
        ({"primary": "SJF"}, "pybatsim.agent.scheduler.primary", "FCFS, LCFS, SPF"),
        ({"variant": "fast"}, "pybatsim.agent.scheduler.variant", "easy, easy-sjbf"),
        ({"predictor": "oracle"}, "pybatsim.agent.scheduler.predictor", "clairvoyant"),
        ({"correction": "x"}, "pybatsim.agent.scheduler.correction", "incremental"),
        ({"theta": -1}, "pybatsim.agent.scheduler.theta", "seconds >= 0"),
        ({"theta": "1h"}, "pybatsim.agent.scheduler.theta", "seconds >= 0"),
        ({"primry": "FCFS"}, "pybatsim.agent.scheduler.primry", "unknown key"),
        ({"variant": "easy-sjbf", "backfill": "FCFS"}, "pybatsim.agent.scheduler.backfill", "SPF"),
        ({"loss": {"over": "squared"}}, "pybatsim.agent.scheduler.loss", "regression"),
        (
            {"predictor": "regression", "loss": {"weight": "w"}},
            "pybatsim.agent.scheduler.loss.weight",
            "large_area",
        ),
        (3, "pybatsim.agent.scheduler", "preset name or an object"),
    ],
)
def test_errors_name_the_key(scheduler, where: str, fragment: str) -> None:
    with pytest.raises(InputError) as info:
        options_from_json(_doc(scheduler), "/data/o.json", check_files=False)
    message = str(info.value)
    assert message.startswith(f"/data/o.json, {where}:"), message
    assert fragment in message


def test_only_classic_agents() -> None:
    doc = _doc("easy", "LEARNING")
    with pytest.raises(InputError, match="only available to CLASSIC"):
        options_from_json(doc, check_files=False)
