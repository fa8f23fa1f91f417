"""``hdeeprm-sim`` without ``-E`` writes what Batsim 4.2.1 writes without energy (checked on a
real Batsim: jobs' consumed_energy -1.000000, consumed_joules 0.000000, no
out_pstate_changes.csv / out_consumed_energy.csv) and refuses P-state changes as Batsim
does; ``--initial-pstate`` starts the hosts in a computing P-state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from protocol_helpers import hdeeprm_sim_exe

from hdeeprm.protocol import BatsimExitedError, BatsimSimulation
from hdeeprm.simulation import FirstFitFCFS, SetResourceState

#: Two hosts with P-states 1 GFLOPS / idle (~0), starting idle, as hdeeprm's generated cores.
TWO_HOSTS = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="AS0" routing="Full">
    <host id="master_host" speed="1Gf"/>
    <host id="h0" speed="1Gf, 1e-6Gf" pstate="1">
      <prop id="wattage_per_state" value="100:100, 10:10"/><prop id="wattage_off" value="0"/>
    </host>
    <host id="h1" speed="1Gf, 1e-6Gf" pstate="1">
      <prop id="wattage_per_state" value="100:100, 10:10"/><prop id="wattage_off" value="0"/>
    </host>
  </zone>
</platform>
"""
#: 2e9 flops per host: 2 s at 1 GFLOPS.
WORKLOAD = {
    "nb_res": 2,
    "jobs": [{"id": "1", "subtime": 1, "res": 2, "profile": "c", "walltime": -1}],
    "profiles": {"c": {"type": "parallel_homogeneous", "cpu": 2e9, "com": 0}},
}


def _run(tmp_path: Path, *args: str, energy: bool, pstates: bool = False) -> Path:
    (tmp_path / "platform.xml").write_text(TWO_HOSTS)
    (tmp_path / "workload.json").write_text(json.dumps(WORKLOAD))
    scheduler = FirstFitFCFS()
    with BatsimSimulation(
        tmp_path / "platform.xml",
        [tmp_path / "workload.json"],
        tmp_path / "out" / "run",
        executable=hdeeprm_sim_exe(tmp_path),
        timeout=20,
        energy=energy,
        extra_args=args,
    ) as sim:
        message = sim.start()
        first = True
        while not sim.finished:
            decisions = scheduler.handle(message)
            if pstates and first:
                decisions.insert(0, SetResourceState([0, 1], 0))
            first = False
            message = sim.proceed(decisions)
    return tmp_path / "out"


def test_without_energy_as_batsim_without_e(tmp_path: Path) -> None:
    out = _run(tmp_path, "--initial-pstate", "0", energy=False)
    row = (out / "run_jobs.csv").read_text().splitlines()[1].split(",")
    # Started at 1 on hosts in P0 (--initial-pstate 0): 2 s; consumed_energy -1.000000.
    assert row[8:11] == ["1.000000", "2.000000", "3.000000"] and row[15] == "-1.000000"
    schedule = (out / "run_schedule.csv").read_text().splitlines()
    assert dict(zip(schedule[0].split(","), schedule[1].split(",")))["consumed_joules"] == (
        "0.000000"
    )
    assert sorted(p.name for p in out.glob("run_*.csv")) == [
        "run_jobs.csv",
        "run_machine_states.csv",
        "run_schedule.csv",
    ]


def test_with_energy_and_initial_pstate(tmp_path: Path) -> None:
    out = _run(tmp_path, "--initial-pstate", "0", energy=True)
    row = (out / "run_jobs.csv").read_text().splitlines()[1].split(",")
    # 2 hosts x 100 W x 2 s.
    assert row[10] == "3.000000" and row[15] == "400.000000"
    assert (out / "run_consumed_energy.csv").is_file()


def test_pstate_changes_need_energy(tmp_path: Path) -> None:
    with pytest.raises(BatsimExitedError, match="SET_RESOURCE_STATE needs energy simulation"):
        _run(tmp_path, energy=False, pstates=True)
    assert not list((tmp_path / "out").glob("run_*.csv"))
