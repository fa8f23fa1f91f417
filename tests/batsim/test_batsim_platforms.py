"""Every generated platform loads in a real Batsim 4.x and runs jobs exactly as the embedded
engine does (marked ``batsim``: skipped, with the reason, when no Batsim is found)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trace_files import PLATFORM_EXAMPLES, REPO

from benchmarks.fidelity.batsim_runs import jobs_differences
from hdeeprm.options import load_options
from hdeeprm.platform import load_platform, write_platform_xml
from hdeeprm.protocol.client import BatsimSimulation
from hdeeprm.simulation import simulate
from hdeeprm.simulation.events import (
    JOB_SUBMITTED,
    SIMULATION_BEGINS,
    ExecuteJob,
    Message,
    SetResourceState,
)

pytestmark = pytest.mark.batsim

#: Seed 003's experiments (thesis_experiments/extension) name these two in their options files;
#: their reproduce scripts swap in larger copies of the same node types.
EXTENSION_INPUTS = REPO / "thesis_experiments" / "extension" / "inputs"
EXAMPLES = sorted(PLATFORM_EXAMPLES.glob("*.json")) + [
    EXTENSION_INPUTS / "basic_4.platform.json",
    EXTENSION_INPUTS / "hetero_88.platform.json",
]
THESIS_OPTIONS = sorted((REPO / "thesis_experiments").rglob("options.json"))


class WholePlatform:
    """Sets every host to P0, then runs each job alone on every host as it arrives."""

    def __init__(self) -> None:
        self.hosts: list[int] = []

    def handle(self, message: Message) -> list:
        decisions: list = []
        for event in message.events:
            if event.type == SIMULATION_BEGINS:
                self.hosts = list(range(event.data["nb_resources"]))
                decisions.append(SetResourceState(self.hosts, 0))
            elif event.type == JOB_SUBMITTED:
                decisions.append(ExecuteJob(event.data["job_id"], self.hosts))
        return decisions


def _workload(nb_hosts: int) -> dict:
    """A delay job, then a computation of 1e12 flops per host (its time is set by the slowest
    core in P0), each alone on the whole platform."""
    return {
        "nb_res": nb_hosts,
        "jobs": [
            {"id": "1", "subtime": 1, "res": nb_hosts, "profile": "d", "walltime": -1},
            {"id": "2", "subtime": 10, "res": nb_hosts, "profile": "c", "walltime": -1},
        ],
        "profiles": {
            "d": {"type": "delay", "delay": 3.5},
            "c": {"type": "parallel_homogeneous", "cpu": 1e12, "com": 0},
        },
    }


def test_thesis_experiments_use_the_tested_platforms() -> None:
    """The thesis experiments' platforms are among the examples tested below."""
    assert THESIS_OPTIONS
    used = {
        load_options(path, check_files=False).platform_file_path.resolve()
        for path in THESIS_OPTIONS
    }
    assert used <= {path.resolve() for path in EXAMPLES}, used


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_platform_example_runs_on_batsim_as_embedded(
    example: Path, tmp_path: Path, batsim_exe: Path
) -> None:
    platform = load_platform(example)
    xml = tmp_path / "platform.xml"
    write_platform_xml(platform, xml)
    workload = tmp_path / "workload.json"
    workload.write_text(json.dumps(_workload(len(platform.cores))))

    decide = WholePlatform()
    with BatsimSimulation(
        xml, [workload], tmp_path / "b" / "out", executable=batsim_exe, timeout=300
    ) as sim:
        message = sim.start()
        while not sim.finished:
            message = sim.proceed(decide.handle(message))
    simulate(xml, workload, WholePlatform(), tmp_path / "e")

    assert jobs_differences(tmp_path / "b" / "out_jobs.csv", tmp_path / "e" / "out_jobs.csv") == {}
    lines = (tmp_path / "b" / "out_jobs.csv").read_text().splitlines()
    assert len(lines) == 3 and all(",COMPLETED_SUCCESSFULLY," in line for line in lines[1:])
