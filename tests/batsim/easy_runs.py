"""hdeeprm's own EASY run by ``hdeeprm-launch`` on the embedded engine, on a Batsim workload
(``-cw``), and the comparison of its start times with another ``out_jobs.csv`` (pybatsim's
``easyBackfill`` on a real Batsim)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def homogeneous_platform(path: Path, nb_cores: int) -> Path:
    """A platform JSON of ``nb_cores`` identical one-core nodes (KTH-SP2's processor, 64 GB
    each so that no trace's memory request is refused): any trace on a homogeneous machine
    with one Batsim host per core, as the literature's EASY and pybatsim assume."""
    node = {"processors": [{"type": "IBM POWER2 66.7 MHz", "number": 1}]}
    node["memory"] = {"type": "FPM DRAM", "capacity": 64}
    platform = {
        "_doc": f"{nb_cores} identical one-core nodes (benchmarks/fidelity/easy_equivalence.py)",
        "types": {"node": {"one-core node": node}},
        "clusters": [
            {
                "id": "homogeneous",
                "nodes": [{"type": "one-core node", "number": nb_cores}],
                "local_links": [{"type": "IBM SP2 High-Performance Switch", "latency": "40us"}],
            }
        ],
        "global_links": [{"type": "Gigabit Ethernet 1000BASE-T", "latency": "125us"}],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(platform, indent=1))
    return path


def run_hdeeprm_easy(
    platform_json: Path,
    workload: Path,
    out: Path,
    *,
    hosts: str = "contiguous",
    batsim: Path | None = None,
    pstates: bool = True,
) -> tuple[Path, float]:
    """``hdeeprm-launch`` with a CLASSIC agent and the ``easy`` scheduler (``hosts`` option)
    on ``workload``, on the embedded engine or on the Batsim executable ``batsim``; returns its
    ``out_jobs.csv`` and the CPU seconds the launch took (with the simulator it starts).
    ``pstates=False`` withholds hdeeprm's P-state decisions (``launch_without_pstates.py``)."""
    out.mkdir(parents=True, exist_ok=True)
    scheduler: object = "easy" if hosts == "any" else {"preset": "easy", "hosts": hosts}
    agent = {"type": "CLASSIC", "policy_pair": "first-high_gflops", "scheduler": scheduler}
    options = {
        "seed": 1,
        "platform_file_path": str(platform_json),
        "pybatsim": {"log_level": "WARNING", "agent": agent},
    }
    path = out / "options.json"
    path.write_text(json.dumps(options))
    env = dict(os.environ, PYTHONPATH=str(REPO))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    launcher = ["-m", "hdeeprm.cli.launch"]
    if not pstates:
        launcher = [str(HERE / "launch_without_pstates.py")]
    command = [sys.executable, *launcher, str(path), "-cw", str(workload)]
    if batsim is not None:
        command += ["--batsim", str(batsim), "--batsim-timeout", "600"]
    done = subprocess.run(
        [*command, "-o", str(out), "-q"], capture_output=True, text=True, env=env, check=False
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise AssertionError(f"hdeeprm-launch exited with {done.returncode}:\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out / "out_jobs.csv", cpu


def timed_sim(folder: Path) -> Path:
    """An executable taking Batsim's flags that runs ``hdeeprm-sim --batsim-timing`` (hdeeprm's
    engine grouping and ordering each instant's events as Batsim 4.2.1 does), for
    ``hdeeprm-launch --batsim``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "hdeeprm-sim-timing"
    path.write_text(
        f'#!/bin/sh\nPYTHONPATH="{REPO}" exec "{sys.executable}" -m hdeeprm.cli.sim '
        '--batsim-timing --timeout 0 "$@"\n'
    )
    path.chmod(0o755)
    return path


@dataclass
class StartDifferences:
    """Jobs of two ``out_jobs.csv`` whose start times differ by more than 1 us."""

    total: int
    differing: list[tuple[str, float, float]]

    @property
    def nb_differ(self) -> int:
        return len(self.differing)

    def first(self, n: int) -> list[tuple[str, float, float]]:
        return self.differing[:n]


def compare_starts(reference: Path, other: Path, tol: float = 1e-6) -> StartDifferences:
    """Start times per job (matched by job id), compared in printed microseconds (Batsim's
    clock carries sub-microsecond offsets), listed in job-number order."""
    a = pd.read_csv(reference, dtype={"job_id": str})
    b = pd.read_csv(other, dtype={"job_id": str})
    a = a.set_index("job_id")["starting_time"]
    b = b.set_index("job_id")["starting_time"]
    if set(a.index) != set(b.index):
        missing = sorted(set(a.index) ^ set(b.index))[:5]
        raise AssertionError(f"the two runs finished different jobs (e.g. {missing})")
    order = sorted(a.index, key=lambda j: (len(j), j))
    ua, ub = (a * 1e6).round(), (b * 1e6).round()
    limit = round(tol * 1e6)
    differing = [(j, float(a[j]), float(b[j])) for j in order if abs(ua[j] - ub[j]) > limit]
    return StartDifferences(len(order), differing)
