"""Pinned results: out_jobs.csv of a Gaia prefix, one run per core policy (skipped without
../shared).

The digests were produced by the decision system before the fit index and the ranked trees
(commit 0bdb0ec); a speed change must leave every run's results identical bit for bit. The
'first' job policy blocks the queue on its head job, so jobs that do not fit are met often
(``first-high_mem`` and ``first-low_power`` refuse tens of attempts in this prefix).
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import pytest
from trace_files import PLATFORM_EXAMPLES, trace_path

from hdeeprm.decision import ActionSpace, FixedPair, WorkloadManager
from hdeeprm.platform import load_platform, write_platform_xml
from hdeeprm.simulation import simulate
from hdeeprm.workload.convert import convert_swf

NB_JOBS = 2000
DIGESTS = {
    "first-random": "abaa8f5ed30af0e9f3b9501bfe5b38e61ff8480367ed5503e26b39aef53baa2e",
    "first-high_gflops": "f226f6fee729d252a426ea25b2337a4f61ce8d5175d70956001934583cac2700",
    "first-high_cores": "f06dc9f11fc22c1f0a8dc5dbc6bc965adea137fe89ef793cbe73e47d1015c8c9",
    "first-high_mem": "116d8926d3af7a9def3bc1bb99f703870b4c6d7a3c0e8dae281f384f769e2ff3",
    "first-high_mem_bw": "1de4ed2e5b556b35f98dac0872bb90e7bb64a90fd76d9397e76a7fe103901b5f",
    "first-low_power": "1dd3f52a175da8baefba3737449b95cf1656194bee755dd32aeffe10ca2b5441",
}


@pytest.fixture(scope="module")
def gaia_prefix():
    trace = trace_path("UniLu-Gaia-2014-1.swf.gz")
    platform = load_platform(PLATFORM_EXAMPLES / "gaia.json")
    workload = convert_swf(
        trace,
        reference_speed=platform.reference_speed,
        max_cores=len(platform.cores),
        seed=1,
        nb_jobs=NB_JOBS,
    ).workload
    return platform, workload


@pytest.mark.parametrize("pair", sorted(DIGESTS))
def test_gaia_prefix_out_jobs_digest(gaia_prefix, pair: str, tmp_path: Path) -> None:
    platform, workload = gaia_prefix
    write_platform_xml(platform, tmp_path / "platform.xml")
    actions = ActionSpace()
    manager = WorkloadManager(platform, actions, FixedPair(actions, pair), seed=1)
    insights = logging.getLogger("hdeeprm.insights")
    level = insights.level
    insights.setLevel(logging.ERROR)  # over-subscription warnings are not what is checked
    try:
        simulate(tmp_path / "platform.xml", workload, manager, tmp_path)
    finally:
        insights.setLevel(level)
    digest = hashlib.sha256((tmp_path / "out_jobs.csv").read_bytes()).hexdigest()
    assert digest == DIGESTS[pair]
