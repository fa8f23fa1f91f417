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
import subprocess
import sys
from pathlib import Path

import pytest
from routing_platforms import clusters, linked, no_network, write
from trace_files import trace_path

from benchmarks.fidelity.batsim_runs import (
    jobs_differences,
    run_on_batsim,
    run_on_hdeeprm,
    trace_inputs,
)

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


STYLES = [
    pytest.param(lambda n: no_network(n, "Full"), True, id="full-no-link"),
    pytest.param(lambda n: linked(n, "Full"), True, id="full-links"),
    pytest.param(lambda n: linked(n, "Full", latency="10us"), True, id="full-links-latency"),
    pytest.param(lambda n: linked(n, "Floyd"), True, id="floyd"),
    pytest.param(lambda n: linked(n, "Dijkstra"), True, id="dijkstra"),
    pytest.param(clusters, False, id="clusters"),
]


@pytest.mark.parametrize(("platform", "energy"), STYLES)
def test_kth_window_on_each_routing_style(
    tmp_path: Path, batsim_exe: Path, pybatsim_exe: Path, platform, energy: bool
) -> None:
    _, workload, _ = trace_inputs(
        trace_path(KTH), _one_core_nodes(tmp_path, 100), tmp_path, "delay", 760
    )
    xml = write(tmp_path, "platform", platform(100))
    b = run_on_batsim(
        batsim_exe, pybatsim_exe, "easyBackfill", xml, workload, tmp_path / "b", energy=energy
    )
    h = run_on_hdeeprm(pybatsim_exe, "easyBackfill", xml, workload, tmp_path / "h", energy=energy)
    assert jobs_differences(b, h) == {}


REFUSED = [
    # SimGrid's empty routing has no route, not even from a host to itself.
    pytest.param(no_network(3, "None"), True, "There can't be route in an Empty zone", id="none"),
    # With -E, SimGrid's energy plugin needs every compute host's power.
    pytest.param(
        no_network(3, power=False), True, "No power range properties", id="no-power-with-E"
    ),
    # A Floyd zone without a route from the host of the first job to the master host: SimGrid
    # raises when the job's completion takes it.
    pytest.param(
        linked(3, "Floyd", unrouted=("h0000",)), True, "No route from", id="floyd-no-route"
    ),
]


@pytest.mark.parametrize(("platform", "energy", "batsim_says"), REFUSED)
def test_inputs_batsim_aborts_on_are_refused(
    tmp_path: Path,
    batsim_exe: Path,
    pybatsim_exe: Path,
    platform: str,
    energy: bool,
    batsim_says: str,
) -> None:
    xml = write(tmp_path, "platform", platform)
    workload = tmp_path / "workload.json"
    workload.write_text(json.dumps(SMALL_WORKLOAD))
    with pytest.raises(AssertionError, match="exited with"):  # Batsim, then its scheduler
        run_on_batsim(
            batsim_exe, pybatsim_exe, "easyBackfill", xml, workload, tmp_path / "b", energy=energy
        )
    assert batsim_says in (tmp_path / "b" / "batsim.log").read_text()
    command = [sys.executable, "-m", "hdeeprm.cli.sim", "-p", str(xml), "-w", str(workload)]
    command += ["-e", str(tmp_path / "h" / "out")] + (["-E"] if energy else [])
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Batsim" in lines[0] and batsim_says.split()[0] in lines[0]


#: Three one-host jobs from t = 1: enough for Batsim to reach its first route or power query.
SMALL_WORKLOAD = {
    "nb_res": 3,
    "jobs": [
        {"id": str(i), "subtime": float(i), "walltime": 100.0, "res": 1, "profile": "d"}
        for i in (1, 2, 3)
    ],
    "profiles": {"d": {"type": "delay", "delay": 10.0}},
}


NASA = "NASA-iPSC-1993-3.1-cln.swf.gz"
WHOLE_TRACES = [
    pytest.param(KTH, 100, True, id="kth-no-network"),
    pytest.param(KTH, 100, False, id="kth-generated"),
    pytest.param(NASA, 128, True, id="nasa-no-network"),
    pytest.param(NASA, 128, False, id="nasa-generated"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("trace", "nb_hosts", "no_links"), WHOLE_TRACES)
def test_whole_trace_easy_backfilling(
    tmp_path: Path, batsim_exe: Path, pybatsim_exe: Path, trace: str, nb_hosts: int, no_links: bool
) -> None:
    # A whole archive trace (28,467 or 18,239 jobs) with pybatsim's easyBackfill, on a
    # platform without links and on hdeeprm's generated one: 20-60 s per simulator.
    xml, workload, _ = trace_inputs(
        trace_path(trace), _one_core_nodes(tmp_path, nb_hosts), tmp_path, "delay"
    )
    if no_links:
        xml = write(tmp_path, "no_network", no_network(nb_hosts))
    b = run_on_batsim(batsim_exe, pybatsim_exe, "easyBackfill", xml, workload, tmp_path / "b")
    h = run_on_hdeeprm(pybatsim_exe, "easyBackfill", xml, workload, tmp_path / "h")
    assert jobs_differences(b, h) == {}
