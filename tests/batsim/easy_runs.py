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

REPO = Path(__file__).resolve().parents[2]


def run_hdeeprm_easy(
    platform_json: Path,
    workload: Path,
    out: Path,
    *,
    hosts: str = "contiguous",
    batsim: Path | None = None,
) -> tuple[Path, float]:
    """``hdeeprm-launch`` with a CLASSIC agent and the ``easy`` scheduler (``hosts`` option)
    on ``workload``, on the embedded engine or on the Batsim executable ``batsim``; returns its
    ``out_jobs.csv`` and the CPU seconds the launch took (hdeeprm's process only)."""
    out.mkdir(parents=True, exist_ok=True)
    scheduler: object = "easy" if hosts == "any" else {"preset": "easy", "hosts": hosts}
    options = {
        "seed": 1,
        "platform_file_path": str(platform_json),
        "pybatsim": {
            "log_level": "WARNING",
            "agent": {"type": "CLASSIC", "policy_pair": "first-high_gflops", "scheduler": scheduler},
        },
    }
    path = out / "options.json"
    path.write_text(json.dumps(options))
    env = dict(os.environ, PYTHONPATH=str(REPO))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    command = [sys.executable, "-m", "hdeeprm.cli.launch", str(path), "-cw", str(workload)]
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
    """Start times per job (matched by job id), in submission order of the reference."""
    a = pd.read_csv(reference, dtype={"job_id": str})
    b = pd.read_csv(other, dtype={"job_id": str})
    a = a.set_index("job_id")["starting_time"]
    b = b.set_index("job_id")["starting_time"]
    if set(a.index) != set(b.index):
        missing = sorted(set(a.index) ^ set(b.index))[:5]
        raise AssertionError(f"the two runs finished different jobs (e.g. {missing})")
    order = sorted(a.index, key=lambda j: (len(j), j))
    differing = [(j, float(a[j]), float(b[j])) for j in order if abs(a[j] - b[j]) > tol]
    return StartDifferences(len(order), differing)
