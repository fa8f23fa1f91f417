"""pybatsim 3.2.1's own schedulers (FCFS, EASY backfilling) run unchanged on ``hdeeprm-sim``.

pybatsim pins ``pyzmq < 23``, which does not build on Python 3.11, so it is not a dependency:
the fixture installs it without its dependencies (plus the pure-Python packages it imports:
procset, sortedcontainers, docopt) into a private folder put on the scheduler process's
``PYTHONPATH``; the test environment is untouched. No network: the tests are skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from protocol_helpers import FOUR_HOSTS_XML, free_port

from hdeeprm.cli.sim import serve

PACKAGES = [
    "pybatsim==3.2.1",
    "procset>=1.0,<2",
    "sortedcontainers>=2.3,<3",
    "docopt>=0.6.2,<0.7",
]

#: Three delay jobs on four hosts, all with walltimes (EASY needs them). The first arrives at
#: t = 1: pybatsim's scheduler API refuses allocations at t = 0 (Allocation asserts
#: start_time > 0), whatever the simulator.
WORKLOAD = {
    "nb_res": 4,
    "jobs": [
        {"id": "1", "subtime": 1, "res": 2, "profile": "d10", "walltime": 10},
        {"id": "2", "subtime": 2, "res": 4, "profile": "d5", "walltime": 5},
        {"id": "3", "subtime": 3, "res": 2, "profile": "d3", "walltime": 3},
    ],
    "profiles": {
        "d10": {"type": "delay", "delay": 10},
        "d5": {"type": "delay", "delay": 5},
        "d3": {"type": "delay", "delay": 3},
    },
}


@pytest.fixture(scope="module")
def pybatsim_path(request: pytest.FixtureRequest, tmp_path_factory) -> Path:
    """A folder holding pybatsim 3.2.1 and what it imports (cached across test sessions)."""
    cache = getattr(request.config, "cache", None)
    base = cache.mkdir("pybatsim-3.2.1") if cache is not None else tmp_path_factory.mktemp("pb")
    target = Path(base) / "site"
    if (target / "batsim" / "batsim.py").is_file():
        return target
    staging = Path(tempfile.mkdtemp(prefix="staging-", dir=base))
    command = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-input"]
    command += ["--disable-pip-version-check", "-q", "--target", str(staging), *PACKAGES]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired:
        shutil.rmtree(staging, ignore_errors=True)
        pytest.skip("pip could not install pybatsim within 180 s (no network?)")
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        pytest.skip(f"cannot install pybatsim 3.2.1 from PyPI (no network?): {last}")
    shutil.rmtree(target, ignore_errors=True)
    os.replace(staging, target)  # a complete install or none
    return target


def _run(tmp_path: Path, site: Path, scheduler: str) -> pd.DataFrame:
    platform = tmp_path / "platform.xml"
    platform.write_text(FOUR_HOSTS_XML)
    workload = tmp_path / "workload.json"
    workload.write_text(json.dumps(WORKLOAD))
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])
    )
    log = tmp_path / f"{scheduler}.log"
    with open(log, "wb") as handle:
        process = subprocess.Popen(
            [sys.executable, "-m", "batsim.cmds.launcher", scheduler, "-s", endpoint]
            + ["-v", "warning"],
            cwd=tmp_path,
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
        )
        try:
            summary = serve(platform, [workload], str(tmp_path / "out"), endpoint, timeout=30)
            code = process.wait(30)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    output = log.read_text()
    assert code == 0, output
    assert "Job submitted: 3 , scheduled: 3" in output
    assert "3 jobs" in summary
    jobs = pd.read_csv(tmp_path / "out_jobs.csv", dtype={"allocated_resources": str})
    return jobs.sort_values("job_id").set_index("job_id")


def test_pybatsim_fcfs(tmp_path: Path, pybatsim_path: Path) -> None:
    jobs = _run(tmp_path, pybatsim_path, "schedFcfs")
    # FCFS without backfilling: job 1 on 0-1 at t = 1 (ends 11); job 2 needs all 4 hosts, so
    # it waits for job 1: 11 -> 16; job 3 queues behind job 2 although 2 hosts are free at 3:
    # 16 -> 19.
    assert jobs["starting_time"].tolist() == [1.0, 11.0, 16.0]
    assert jobs["finish_time"].tolist() == [11.0, 16.0, 19.0]
    assert jobs["allocated_resources"].tolist() == ["0-1", "0-3", "0-1"]
    # Each job's delay equals its walltime: Batsim 4.2.1 kills such a job when its walltime is
    # reached (a delay job completes only if delay < walltime), at the same instant.
    assert (jobs["final_state"] == "COMPLETED_WALLTIME_REACHED").all()


def test_pybatsim_easy_backfilling(tmp_path: Path, pybatsim_path: Path) -> None:
    jobs = _run(tmp_path, pybatsim_path, "easyBackfill")
    # EASY: job 2 gets a reservation at t = 11 (job 1's walltime end); job 3 (3 s on the two
    # free hosts, ends at 6 <= 11) is backfilled at its arrival, t = 3.
    assert jobs["starting_time"].tolist() == [1.0, 11.0, 3.0]
    assert jobs["finish_time"].tolist() == [11.0, 16.0, 6.0]
    assert jobs["allocated_resources"].tolist() == ["0-1", "0-3", "2-3"]
    assert jobs["waiting_time"].tolist() == [0.0, 9.0, 0.0]
