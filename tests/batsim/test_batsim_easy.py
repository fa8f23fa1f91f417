"""hdeeprm's own EASY (``hosts: "contiguous"``, run by ``hdeeprm-launch``) starts every job at
the same time and on the same cores as pybatsim's ``easyBackfill`` on a real Batsim 4.2.1
(marked ``batsim``), on the first jobs of KTH-SP2 (delay profiles, requested times as
walltimes, 100 one-core nodes).

On Batsim both schedulers receive the very same messages; on the embedded engine the events
of one instant are ordered by the engine, where Batsim orders them by sub-nanosecond clock
offsets (docs/batsim.md), so a window is identical only up to the first instant where two
completions coincide and the order matters (KTH-SP2: t = 261861, job 400). Whole traces are
measured by ``benchmarks/fidelity/easy_equivalence.py``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from trace_files import PLATFORM_EXAMPLES, trace_path

from benchmarks.fidelity.batsim_runs import (
    compare_starts,
    run_hdeeprm_easy,
    run_on_batsim,
    trace_inputs,
)

pytestmark = pytest.mark.batsim

KTH = "KTH-SP2-1996-2.1-cln.swf.gz"


def allocations(path: Path) -> pd.Series:
    jobs = pd.read_csv(path, dtype={"job_id": str, "allocated_resources": str})
    return jobs.set_index("job_id")["allocated_resources"].sort_index()


@pytest.mark.parametrize(("nb_jobs", "on_batsim"), [(2000, True), (350, False)])
def test_hdeeprm_easy_starts_jobs_as_pybatsim_easy_backfill(
    tmp_path: Path, batsim_exe: Path, pybatsim_exe: Path, nb_jobs: int, on_batsim: bool
) -> None:
    platform = PLATFORM_EXAMPLES / "kth_sp2.json"
    xml, workload, nb = trace_inputs(trace_path(KTH), platform, tmp_path, "delay", nb_jobs)
    assert nb == nb_jobs
    ref = run_on_batsim(batsim_exe, pybatsim_exe, "easyBackfill", xml, workload, tmp_path / "b")
    out, _ = run_hdeeprm_easy(
        platform, workload, tmp_path / "h", batsim=batsim_exe if on_batsim else None
    )
    diff = compare_starts(ref, out)
    assert diff.total == nb_jobs
    assert diff.differing == []
    assert allocations(ref).equals(allocations(out))
    # The window exercises what it is meant to: jobs waiting (35 of the first 350, 819 of
    # the first 2,000) and jobs started before earlier-submitted ones (backfilled).
    jobs = pd.read_csv(ref)
    assert (jobs["waiting_time"] > 0).sum() >= 35
    assert (jobs["starting_time"].diff() < 0).any()
