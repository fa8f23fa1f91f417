"""Memory bandwidth is physical (issue 11, point 2): the default per-job range follows the
platform, and a workload that over-subscribes every processor by construction is reported.

KTH SP2 thin node: one single-core POWER2 with 1.0672 GB/s (docs/platform.md), so the
default range is [1.0672 / 8, 3 x 1.0672 / 4] = [0.1334, 0.8004] GB/s. Gaia's and RICC's
slowest processors offer 32 GB/s: [4, 24], the thesis's range.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from hdeeprm.experiment.run import run_classic
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import load_options
from hdeeprm.platform import load_platform
from hdeeprm.workload.bandwidth import check_bandwidth, default_mem_bw_range

EXAMPLES = Path(__file__).resolve().parents[2] / "platform_examples"


@pytest.mark.parametrize(
    ("example", "expected"),
    [
        ("kth_sp2.json", (0.1334, 0.8004)),
        ("gaia.json", (4.0, 24.0)),
        ("ricc.json", (4.0, 24.0)),
        ("learning.json", (4.0, 24.0)),
    ],
)
def test_default_range_by_hand(example: str, expected: tuple[float, float]) -> None:
    platform = load_platform(EXAMPLES / example)
    low, high = default_mem_bw_range(p.mem_bw for p in platform.processors)
    assert (low, high) == pytest.approx(expected)


def test_check_counts_jobs_above_every_processor() -> None:
    check = check_bandwidth([0.5, 2.0, 1.5, 0.9], [1.0, 1.2])
    assert (check.nb_jobs, check.nb_over, check.min_over_demand) == (4, 2, 1.5)
    assert check.share == 0.5
    assert "2 jobs of 4 (50%)" in check.message("p.json")
    assert check_bandwidth([1.2], [1.0, 1.2]).nb_over == 0  # equal fits


def _sp2_options(folder: Path, **extra) -> Path:
    doc = {
        "seed": 3,
        "platform_file_path": str(EXAMPLES / "kth_sp2.json"),
        "synthetic_workload": {"nb_jobs": 40},
        "pybatsim": {"agent": {"type": "CLASSIC", "policy_pair": "first-high_gflops"}},
    }
    doc.update(extra)
    path = folder / "options.json"
    path.write_text(json.dumps(doc))
    return path


def test_sp2_default_is_physical_and_nothing_over_subscribes(tmp_path: Path, caplog) -> None:
    lines: list[str] = []
    with caplog.at_level(logging.WARNING, "hdeeprm.experiment"):
        inputs = prepare_inputs(load_options(_sp2_options(tmp_path)), log=lines.append)
    demands = [p.extra["mem_bw"] for p in inputs.workload.profiles.values()]
    assert inputs.mem_bw_range == pytest.approx((0.1334, 0.8004))
    assert min(demands) >= 0.13 and max(demands) <= 0.81
    assert inputs.bandwidth.nb_over == 0 and not caplog.records
    assert any("0.1334-0.8004 GB/s" in line for line in lines)
    # One single-core processor per node: a task alone never exceeds 1.0672 GB/s.
    assert run_classic(inputs).metrics.over_subscriptions == 0


def test_thesis_range_on_sp2_warns_and_every_job_over_subscribes(tmp_path: Path, caplog) -> None:
    options = load_options(_sp2_options(tmp_path, mem_bw_range=[4, 24]))
    with caplog.at_level(logging.WARNING, "hdeeprm.experiment"):
        inputs = prepare_inputs(options)
    assert inputs.bandwidth.nb_over == 40
    (record,) = caplog.records
    assert "every job of 40 (100%)" in record.getMessage()
    assert "kth_sp2.json" in record.getMessage() and "mem_bw_range" in record.getMessage()
    # Each task runs alone on a single-core processor, which it over-subscribes: one episode
    # per task (no two tasks follow each other on a processor at the same instant here).
    tasks = sum(job.res for job in inputs.workload.jobs)
    assert run_classic(inputs).metrics.over_subscriptions == tasks


def test_kth_trace_converted_for_its_platform_never_over_subscribes(tmp_path: Path) -> None:
    """The issue's case: an SP2-era archive trace on the SP2 platform (first 500 jobs)."""
    from trace_files import trace_path

    trace = trace_path("KTH-SP2-1996-2.1-cln.swf.gz")
    path = _sp2_options(tmp_path, workload_file_path=str(trace), nb_jobs=500)
    doc = json.loads(path.read_text())
    del doc["synthetic_workload"]
    path.write_text(json.dumps(doc))
    inputs = prepare_inputs(load_options(path))
    assert inputs.bandwidth.nb_over == 0
    assert max(p.extra["mem_bw"] for p in inputs.workload.profiles.values()) <= 0.8004
    assert run_classic(inputs).metrics.over_subscriptions == 0
