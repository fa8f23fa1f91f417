"""Batsim's internal messages take the time of the platform's routes (SimGrid 3.32): on
platforms of each routing style, pybatsim's ``easyBackfill`` gives the same ``out_jobs.csv``
on a real Batsim 4.2.1 and on ``hdeeprm-sim`` (marked ``batsim``; skipped without Batsim).

On a platform without links (Batsim's "no network" style) the messages take no time, so a job
that ends at the same instant as a submission is sent with it in the order SimGrid wakes the
actors: the first 760 KTH-SP2 jobs on 100 one-core hosts meet such a tie at t = 462809
(a message time of 1e-10 s placed 6 jobs on other hosts).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from batsim_env import jobs_differences
from pybatsim_runs import run_on_batsim, run_on_hdeeprm
from routing_platforms import no_network, write
from trace_files import trace_path
from trace_workloads import trace_inputs

pytestmark = pytest.mark.batsim

KTH = "KTH-SP2-1996-2.1-cln.swf.gz"


def _one_core_nodes(folder: Path, nb: int) -> Path:
    """A platform JSON of ``nb`` one-core nodes, only to convert a trace for ``nb`` hosts."""
    node = {"processors": [{"type": "IBM POWER2 66.7 MHz", "number": 1}]}
    node["memory"] = {"type": "FPM DRAM", "capacity": 64}
    spec = {
        "types": {"node": {"one-core node": node}},
        "clusters": [
            {
                "id": "c",
                "nodes": [{"type": "one-core node", "number": nb}],
                "local_links": [{"type": "IBM SP2 High-Performance Switch", "latency": "0us"}],
            }
        ],
        "global_links": [{"type": "Gigabit Ethernet 1000BASE-T", "latency": "0us"}],
    }
    path = folder / "nodes.json"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(spec))
    return path


def test_kth_window_on_a_platform_without_links(
    tmp_path: Path, batsim_exe: Path, pybatsim_exe: Path
) -> None:
    _, workload, nb = trace_inputs(
        trace_path(KTH), _one_core_nodes(tmp_path, 100), tmp_path, "delay", 760
    )
    assert nb == 760
    xml = write(tmp_path, "no_network", no_network(100))
    b = run_on_batsim(batsim_exe, pybatsim_exe, "easyBackfill", xml, workload, tmp_path / "b")
    h = run_on_hdeeprm(pybatsim_exe, "easyBackfill", xml, workload, tmp_path / "h")
    assert jobs_differences(b, h) == {}
