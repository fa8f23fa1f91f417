"""Run one pybatsim scheduler against a real Batsim and against ``hdeeprm-sim`` on the same
platform and workload, and keep both ``out_jobs.csv`` for comparison."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

from hdeeprm.cli.sim import serve


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _scheduler(pybatsim: Path, scheduler: str, port: int, log: Path) -> subprocess.Popen:
    handle = open(log, "wb")  # noqa: SIM115 (closed by the caller through the process)
    return subprocess.Popen(
        [str(pybatsim), scheduler, "-s", f"tcp://127.0.0.1:{port}", "-v", "warning"],
        stdout=handle,
        stderr=subprocess.STDOUT,
        cwd=log.parent,
    )


# Hang detectors, not speed limits: a whole-trace Batsim run takes 3-6 CPU minutes and, on a
# 2-core machine shared with other work (load average 13-15 was seen), twice that in wall time
# and a minute between two messages; a run that hangs still fails, only later.
HANG_TIMEOUT = 1800.0
SILENCE_TIMEOUT = 300.0


def _finish(process: subprocess.Popen, log: Path, what: str, timeout: float) -> None:
    try:
        code = process.wait(timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    if code != 0:
        raise AssertionError(f"{what} exited with {code}:\n{log.read_text()[-3000:]}")


def run_on_batsim(
    batsim: Path,
    pybatsim: Path,
    scheduler: str,
    platform: Path,
    workload: Path,
    out: Path,
    *,
    energy: bool = True,
    timeout: float = HANG_TIMEOUT,
) -> Path:
    """Batsim + pybatsim ``scheduler``; returns Batsim's ``out_jobs.csv``."""
    out.mkdir(parents=True, exist_ok=True)
    port = free_port()
    sched = _scheduler(pybatsim, scheduler, port, out / "scheduler.log")
    command = [str(batsim), "-p", str(platform), "-w", str(workload), "-e", str(out / "out")]
    command += ["-s", f"tcp://127.0.0.1:{port}"] + (["-E"] if energy else [])
    with open(out / "batsim.log", "wb") as log:
        done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, timeout=timeout)
    _finish(sched, out / "scheduler.log", scheduler, 30)
    if done.returncode != 0:
        raise AssertionError(f"batsim exited with {done.returncode}: see {out / 'batsim.log'}")
    return out / "out_jobs.csv"


def run_on_hdeeprm(
    pybatsim: Path,
    scheduler: str,
    platform: Path,
    workload: Path,
    out: Path,
    *,
    energy: bool = True,
    timeout: float = HANG_TIMEOUT,
    batsim_timing: bool = True,
) -> Path:
    """hdeeprm-sim (in this process) + pybatsim ``scheduler``; returns its ``out_jobs.csv``."""
    out.mkdir(parents=True, exist_ok=True)
    port = free_port()
    sched = _scheduler(pybatsim, scheduler, port, out / "scheduler.log")
    try:
        serve(
            platform,
            [workload],
            str(out / "out"),
            f"tcp://127.0.0.1:{port}",
            timeout=SILENCE_TIMEOUT,
            energy=energy,
            batsim_timing=batsim_timing,
        )
    finally:
        _finish(sched, out / "scheduler.log", scheduler, 30)
    return out / "out_jobs.csv"
