"""pybatsim's own schedulers give the same ``out_jobs.csv`` on a real Batsim 4.2.1 and on
``hdeeprm-sim`` (marked ``batsim``), on windows of real traces: delay and
parallel_homogeneous profiles, walltime ties (the traces' requested times as walltimes), and
scheduling delays (``schedulers/delayedFiller.py`` answers 5 ms after each event; pybatsim's
own ``fillerSched`` does too, but its choices depend on memory addresses, so two runs on the
same Batsim differ).

Whole traces are measured by ``benchmarks/batsim_equivalence.py`` (minutes per scheduler); the
windows here keep the suite short. Message grouping at instants that have both completions and
submissions is not reproduced (docs/batsim.md), so not every scheduler agrees on every window.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from batsim_env import jobs_differences
from pybatsim_runs import run_on_batsim, run_on_hdeeprm
from trace_files import PLATFORM_EXAMPLES, trace_path
from trace_workloads import trace_inputs

pytestmark = pytest.mark.batsim

#: Not reproduced yet: Batsim orders and splits some instants' events differently (its
#: internal messages take simulated time: submissions ~2e-10 s, completions a network transfer
#: later), hdeeprm sends one message per instant; the schedulers then pick other hosts from
#: there on. Strict: a fix makes them pass.
GROUPING = pytest.mark.xfail(
    reason="Batsim's event order and message grouping within an instant are not reproduced "
    "(docs/batsim.md)",
    strict=True,
)
DELAYED = str(Path(__file__).resolve().parent / "schedulers" / "delayedFiller.py")
GAIA, KTH = "UniLu-Gaia-2014-1.swf.gz", "KTH-SP2-1996-2.1-cln.swf.gz"
CASES = [
    pytest.param(GAIA, "gaia", "delay", DELAYED, 1000, id="gaia-delay-delayedFiller"),
    pytest.param(GAIA, "gaia", "delay", "easyBackfill", 1000, id="gaia-delay-easyBackfill"),
    pytest.param(GAIA, "gaia", "parallel_homogeneous", DELAYED, 1000, id="gaia-ph-delayedFiller"),
    pytest.param(KTH, "kth_sp2", "delay", DELAYED, 1000, id="kth-delay-delayedFiller"),
    pytest.param(
        KTH, "kth_sp2", "delay", "easyBackfill", 1000, id="kth-delay-easyBackfill", marks=GROUPING
    ),
]


@pytest.mark.parametrize(
    ("trace", "platform", "profile", "scheduler", "nb_jobs"),
    CASES,
)
def test_pybatsim_scheduler_same_jobs_on_batsim_and_hdeeprm(
    tmp_path: Path,
    batsim_exe: Path,
    pybatsim_exe: Path,
    trace: str,
    platform: str,
    profile: str,
    scheduler: str,
    nb_jobs: int,
) -> None:
    xml, workload, nb = trace_inputs(
        trace_path(trace), PLATFORM_EXAMPLES / f"{platform}.json", tmp_path, profile, nb_jobs
    )
    assert nb == nb_jobs
    on_batsim = run_on_batsim(batsim_exe, pybatsim_exe, scheduler, xml, workload, tmp_path / "b")
    on_hdeeprm = run_on_hdeeprm(pybatsim_exe, scheduler, xml, workload, tmp_path / "h")
    assert jobs_differences(on_batsim, on_hdeeprm, time_tol=1e-6) == {}
    text = on_batsim.read_text()
    # The window exercises what it is meant to: killed jobs (walltime reached) and queues.
    assert "COMPLETED_WALLTIME_REACHED" in text and "COMPLETED_SUCCESSFULLY" in text
