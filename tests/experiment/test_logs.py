"""Logs stay readable: library code prints nothing, honours log_level, and aggregates warnings
that repeat once per event (count, first and last occurrence) unless log_detail asks for each.

Scenario: the thesis 5.4 learning platform (processors A and B, 2 cores and 32 GB/s each) and
``n`` one-core jobs of 24 GB/s and 5 s, one every 10 s, in pairs: each pair runs together on
processor B under ``high_gflops`` (48 > 32 GB/s), so every pair opens and closes one
over-subscription episode on processor 1: ``n / 2`` episodes.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import Path

import pytest
from click.testing import CliRunner
from trace_files import PLATFORM_EXAMPLES, trace_path

from hdeeprm.cli.launch import main
from hdeeprm.environment import HeterogeneousClusterEnv
from hdeeprm.experiment.run import merged_spans, run_classic
from hdeeprm.inputs import prepare_inputs
from hdeeprm.logs import ROOT_LOGGER, WarningTally
from hdeeprm.options import AgentOptions, options_from_json
from hdeeprm.training import run_learning

REPO = Path(__file__).resolve().parents[2]
LEARNING = REPO / "platform_examples" / "learning.json"


@pytest.fixture(autouse=True)
def restore_logger_level():
    logger = logging.getLogger(ROOT_LOGGER)
    level = logger.level
    yield
    logger.setLevel(level)


def pairs_workload(folder: Path, n: int, *, huge: int = 0) -> Path:
    """``n`` jobs in pairs every 10 s, plus ``huge`` jobs that can never run (8 cores)."""
    jobs = [{"id": i, "subtime": 10 * (i // 2), "res": 1, "profile": "p"} for i in range(n)]
    jobs += [{"id": n + k, "subtime": 0, "res": 8, "profile": "p"} for k in range(huge)]
    profile = {"type": "parallel_homogeneous", "cpu": 4.4e9 * 5 * 0.75, "com": 0, "mem_bw": 24}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "workload.json"
    path.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": {"p": profile}}))
    return path


def options_doc(**pybatsim) -> dict:
    return {
        "seed": 1,
        "platform_file_path": str(LEARNING),
        "pybatsim": {
            "log_level": "WARNING",
            "env": {"objective": "makespan", "observation": "minimal"},
            "agent": {"type": "CLASSIC", "policy_pair": "first-high_gflops"},
            **pybatsim,
        },
    }


def classic_log(tmp_path: Path, n: int, huge: int = 0, **pybatsim) -> list[str]:
    options = tmp_path / f"options_{n}.json"
    options.write_text(json.dumps(options_doc(**pybatsim)))
    run = tmp_path / f"run_{n}_{huge}_{sorted(pybatsim.items())}"
    workload = pairs_workload(tmp_path / f"wl_{n}_{huge}", n, huge=huge)
    result = CliRunner().invoke(main, [str(options), "-cw", str(workload), "-o", str(run), "-q"])
    assert result.exit_code == 0, result.output
    return (run / "insights.log").read_text().splitlines()


def test_tally_counts_first_and_last(caplog) -> None:
    logger = logging.getLogger("hdeeprm.test")
    tally = WarningTally(logger, "things", "t=%d thing %s")
    with caplog.at_level(logging.WARNING, logger="hdeeprm"):
        for t in range(5):
            tally(t, f"#{t}")
        tally.summarise()
        tally(9, "again")  # counting restarted
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0].startswith("t=0 thing #0 (further occurrences are counted")
    assert messages[1] == "things: 5 occurrences in all; first: t=0 thing #0; last: t=4 thing #4"
    assert messages[2].startswith("t=9 thing again")
    assert len(messages) == 3


def test_insights_log_does_not_grow_with_the_trace(tmp_path: Path) -> None:
    small = classic_log(tmp_path, 20, huge=3)
    large = classic_log(tmp_path, 200, huge=30)
    assert len(small) == len(large) == 6  # first + summary, for starts, ends and rejections
    assert "bandwidth over-subscription starts: 100 occurrences in all" in "\n".join(large)
    assert "bandwidth over-subscription ends: 100 occurrences in all" in "\n".join(large)
    assert "jobs rejected: 30 occurrences in all" in "\n".join(large)
    assert "last: t=990.000000 bandwidth over-subscription starts on processor 1" in large[-3]


def test_log_detail_writes_every_event(tmp_path: Path) -> None:
    lines = classic_log(tmp_path, 200, huge=30, log_detail=True)
    starts = [line for line in lines if "over-subscription starts on" in line]
    assert len(starts) == 100 and len(lines) == 100 + 100 + 30
    assert not any("occurrences in all" in line for line in lines)


def test_log_level_error_silences_the_warnings(tmp_path: Path) -> None:
    assert classic_log(tmp_path, 20, huge=3, log_level="ERROR") == []


def test_merged_spans_by_hand() -> None:
    episodes = [
        [1, 0.0, 5.0],
        [0, 2.0, 3.0],
        [1, 5.0, 7.0],  # touches the first span of processor 1: merged into [0, 7]
        [1, 7.0, 9.5],  # and again: [0, 9.5]
        [0, 4.0, 6.0],  # a gap of 1 s after [2, 3]: a span of its own
        [1, 12.0, None],  # still open at the end
    ]
    assert merged_spans(episodes) == [
        (1, 0.0, 9.5),
        (0, 2.0, 3.0),
        (0, 4.0, 6.0),
        (1, 12.0, None),
    ]


def inputs_for(tmp_path: Path, n: int, **pybatsim):
    options = options_from_json(options_doc(**pybatsim))
    workload = pairs_workload(tmp_path / "wl", n, huge=2)
    return prepare_inputs(options, tmp_path / "run", custom_workload=workload)


def test_library_code_prints_nothing(tmp_path: Path, capfd) -> None:
    """The Python API, the environment and training log through ``logging`` only: with no handler
    configured by the application, nothing reaches stdout or stderr."""
    inputs = inputs_for(tmp_path, 40)
    run_classic(inputs, tmp_path / "out")
    env = HeterogeneousClusterEnv(inputs=inputs)
    for _ in range(2):
        env.reset(seed=0)
        while not env.finished:
            env.step(0)
    learning = dataclasses.replace(
        inputs, options=dataclasses.replace(inputs.options, agent=AgentOptions("LEARNING"))
    )
    run_learning(
        learning,
        agent_file=REPO / "agent_examples" / "reinforce.py",
        in_model=None,
        out_model=None,
        nb_runs=2,
        progress=False,
        tensorboard=False,
    )
    captured = capfd.readouterr()
    assert captured.out == "" and captured.err == ""


@pytest.mark.parametrize(("level", "expected"), [("ERROR", 0), ("WARNING", 6), (None, 6)])
def test_environment_honours_log_level(tmp_path: Path, caplog, level, expected) -> None:
    inputs = inputs_for(tmp_path, 40)
    caplog.set_level(logging.DEBUG)  # the application would show everything it receives
    env = HeterogeneousClusterEnv(inputs=inputs, log_level=level)
    caplog.clear()
    env.reset(seed=0)
    while not env.finished:
        env.step(0)
    records = [r for r in caplog.records if r.name.startswith("hdeeprm")]
    assert len(records) == expected
    assert all(r.levelno >= logging.WARNING for r in records)


def test_gaia_log_size_does_not_depend_on_the_window(tmp_path: Path) -> None:
    trace = trace_path("UniLu-Gaia-2014-1.swf.gz")
    sizes = []
    for nb_jobs in (300, 3000):
        doc = options_doc()
        doc.update(
            {
                "nb_jobs": nb_jobs,
                "start_job": 4,
                "workload_file_path": str(trace),
                "platform_file_path": str(PLATFORM_EXAMPLES / "gaia.json"),
            }
        )
        folder = tmp_path / str(nb_jobs)
        folder.mkdir()
        (folder / "options.json").write_text(json.dumps(doc))
        result = CliRunner().invoke(main, [str(folder / "options.json"), "-q"])
        assert result.exit_code == 0, result.output
        lines = (folder / "insights.log").read_text().splitlines()
        sizes.append(len(lines))
        episodes = int(result.output.split("bandwidth")[1].split()[0])
        assert episodes > 0
    assert sizes[0] == sizes[1] == 4
