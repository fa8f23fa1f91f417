"""Running pybatsim's schedulers and hdeeprm's EASY on a real Batsim 4.x, and comparing the
``out_jobs.csv`` files: what the fidelity benchmarks need (the tests marked ``batsim`` keep
their own helpers, which also skip without Batsim).

Batsim is looked up as ``hdeeprm-launch`` does (:func:`hdeeprm.protocol.client.default_batsim`):
``$HDEEPRM_BATSIM``, ``batsim`` on ``PATH``, then ``~/.cache/hdeeprm-batsim`` (``make
batsim``); pybatsim is ``$HDEEPRM_PYBATSIM`` or the ``pybatsim`` launcher next to Batsim.
Whole real traces become Batsim workloads with walltimes (EASY needs them): a job's walltime is
the requested time its trace line records, none where it records none.
"""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from hdeeprm.cli.sim import serve
from hdeeprm.platform import load_platform, write_platform_xml
from hdeeprm.protocol.client import BATSIM_ENV, default_batsim
from hdeeprm.simulation.outputs import JOBS_COLUMNS
from hdeeprm.workload import convert_swf
from hdeeprm.workload.swf import SwfReader

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

PYBATSIM_ENV = "HDEEPRM_PYBATSIM"
HOW = (
    f"build it with `make batsim` (tools/batsim/build.sh into ~/.cache/hdeeprm-batsim) or "
    f"set {BATSIM_ENV} to a Batsim 4.x executable or prefix"
)


def locate_batsim() -> tuple[Path | None, str]:
    """(path of a working Batsim 4.x, '') or (None, why not)."""
    name = default_batsim()
    found = shutil.which(name) if os.sep not in name else name
    if found is None or not os.access(found, os.X_OK):
        return None, f"no Batsim executable ({name!r} not found); {HOW}"
    try:
        done = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{found} --version failed ({exc}); {HOW}"
    version = done.stdout.strip()
    if done.returncode != 0 or not version.startswith("4."):
        return None, f"{found} is not Batsim 4.x (--version says {version!r}); {HOW}"
    return Path(found), ""


def locate_pybatsim(batsim: Path) -> tuple[Path | None, str]:
    """(pybatsim 3.x launcher, '') or (None, why not): ``$HDEEPRM_PYBATSIM`` or
    ``pybatsim`` next to the Batsim executable (build.sh installs both)."""
    named = os.environ.get(PYBATSIM_ENV, "").strip()
    path = Path(named) if named else batsim.parent / "pybatsim"
    if path.is_file() and os.access(path, os.X_OK):
        return path, ""
    return None, f"no pybatsim launcher at {path}; set {PYBATSIM_ENV} or {HOW}"


#: out_jobs.csv columns that must match exactly (Batsim prints times with 6 decimals).
EXACT_COLUMNS = tuple(c for c in JOBS_COLUMNS if c not in ("consumed_energy", "metadata"))


def read_jobs_text(path: Path) -> pd.DataFrame:
    """``out_jobs.csv`` as text columns (so that '1.000000' is compared as printed), by job."""
    jobs = pd.read_csv(path, dtype=str, keep_default_na=False)
    return jobs.sort_values(["workload_name", "job_id"], kind="stable").reset_index(drop=True)


#: Time columns (and ``stretch``, their ratio), compared to ``time_tol`` in their last printed
#: digits when one is given: Batsim's clock carries sub-nanosecond offsets (its internal
#: messages take ~1e-10 s each), which can flip a 6th decimal (16.005 / 16 = 1.0003125 prints
#: 1.000313 on Batsim and 1.000312 exactly).
TIME_COLUMNS = frozenset(
    {
        "starting_time",
        "execution_time",
        "finish_time",
        "waiting_time",
        "turnaround_time",
        "stretch",
    }
)


def jobs_differences(
    batsim_csv: Path,
    hdeeprm_csv: Path,
    *,
    energy_rel: float = 1e-9,
    time_tol: float | None = None,
) -> dict[str, int]:
    """How many jobs differ, per column, between two ``out_jobs.csv`` files.

    Every column of :data:`EXACT_COLUMNS` must be equal as printed, except the time columns
    when ``time_tol`` is given (then within ``time_tol`` s). ``consumed_energy`` may
    differ by ``energy_rel`` relative, or by Batsim's print resolution (1e-6 J, both values
    being rounded to 6 decimals). Returns ``{column: number of differing jobs}`` for columns
    that differ (empty when the files agree), plus ``'rows'`` if the job sets differ.
    """
    a, b = read_jobs_text(batsim_csv), read_jobs_text(hdeeprm_csv)
    if list(a["job_id"]) != list(b["job_id"]) or list(a["workload_name"]) != list(
        b["workload_name"]
    ):
        return {"rows": abs(len(a) - len(b)) or len(a)}
    out: dict[str, int] = {}
    for column in EXACT_COLUMNS:
        if time_tol is not None and column in TIME_COLUMNS:
            # In printed microseconds (integers), so that float noise does not count.
            ta = (pd.to_numeric(a[column]) * 1e6).round()
            tb = (pd.to_numeric(b[column]) * 1e6).round()
            n = int(((ta - tb).abs() > round(time_tol * 1e6)).sum())
        else:
            n = int((a[column] != b[column]).sum())
        if n:
            out[column] = n
    ea = pd.to_numeric(a["consumed_energy"], errors="coerce")
    eb = pd.to_numeric(b["consumed_energy"], errors="coerce")
    both_nan = ea.isna() & eb.isna()
    close = (ea - eb).abs() <= (energy_rel * eb.abs()).clip(lower=1.000001e-6)
    n = int((~(close | both_nan)).sum())
    if n:
        out["consumed_energy"] = n
    return out


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


def jobs_differing(batsim_csv: Path, hdeeprm_csv: Path) -> int:
    """How many jobs differ in any time, state or allocation column of ``out_jobs.csv``, as
    printed (every column of :data:`EXACT_COLUMNS`)."""
    a, b = read_jobs_text(batsim_csv), read_jobs_text(hdeeprm_csv)
    if list(a["job_id"]) != list(b["job_id"]):
        return max(len(a), len(b))
    columns = list(EXACT_COLUMNS)
    return int((a[columns] != b[columns]).any(axis=1).sum())


def no_network_platform(path: Path, nb_hosts: int) -> Path:
    """Batsim's "homogeneous, no network" style: ``nb_hosts`` one-core hosts and
    ``master_host`` in one Vivaldi zone at coordinates ``0 0 0``, without links (Batsim's
    internal messages take no simulated time), 100 W in every state."""
    power = '<prop id="wattage_per_state" value="100:100"/><prop id="wattage_off" value="10"/>'
    names = ["master_host"] + [f"h{i:05d}" for i in range(nb_hosts)]
    hosts = "\n".join(
        f'<host id="{n}" speed="1Gf" coordinates="0 0 0">{power}</host>' for n in names
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "<?xml version='1.0'?>\n"
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
        f'<platform version="4.1">\n<zone id="AS0" routing="Vivaldi">\n{hosts}\n</zone>\n'
        "</platform>\n"
    )
    return path


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


def recorded_requested_times(swf: Path) -> dict[str, float]:
    """Job number -> requested time, for the jobs whose trace line records one."""
    return {
        str(rec.job_number): float(rec.requested_time)
        for rec in SwfReader(str(swf))
        if rec.requested_time > 0
    }


#: Submission times are shifted by this much: pybatsim's scheduler API (``batsim.sched``)
#: refuses to allocate at t = 0 (``Allocation`` asserts ``start_time > 0``).
OFFSET = 1.0


def trace_inputs(
    swf: Path, platform_json: Path, folder: Path, profile_type: str, nb_jobs: int | None = None
) -> tuple[Path, Path, int]:
    """Write ``platform.xml`` (cores starting in P0, for schedulers that do not manage
    P-states) and ``workload.json`` (submissions from t = 1) into ``folder``; return their
    paths and the job count."""
    folder.mkdir(parents=True, exist_ok=True)
    platform = load_platform(platform_json)
    xml = folder / "platform.xml"
    write_platform_xml(platform, xml, initial_pstate=0)
    result = convert_swf(
        swf,
        reference_speed=platform.reference_speed,
        max_cores=len(platform.cores),
        seed=1,
        nb_jobs=nb_jobs,
        profile_type=profile_type,
    )
    requested = recorded_requested_times(swf)
    workload = result.workload
    workload.jobs[:] = [
        dataclasses.replace(spec, subtime=spec.subtime + OFFSET, walltime=requested.get(spec.id))
        for spec in workload.jobs
    ]
    path = folder / "workload.json"
    workload.save(path)
    return xml, path, len(workload.jobs)


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
