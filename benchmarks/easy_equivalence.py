"""hdeeprm's own EASY (preset ``easy``, run by ``hdeeprm-launch`` on the embedded engine)
against pybatsim's ``easyBackfill`` on a real Batsim 4.2.1, on the same homogeneous platform
and workload: print how many jobs start at a different time, and the first ones.

    python benchmarks/easy_equivalence.py [--trace KTH-SP2-1996-2.1-cln.swf.gz]
        [--platform kth_sp2] [--nb-jobs N] [--hosts contiguous|any] [--show 5]

Needs Batsim and pybatsim (``make batsim``) and ``../shared/traces``. The workload is the one
``benchmarks/batsim_equivalence.py`` gives pybatsim (delay profiles, the traces' requested
times as walltimes, submissions from t = 1); hdeeprm reads it with ``-cw`` and predicts run
times by the same requested times. ``--hosts`` is the scheduler's ``hosts`` option
(docs/scheduling.md): ``contiguous`` is pybatsim's rectangle allocation, ``any`` the
literature's EASY counting free cores.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "tests" / "batsim"), str(REPO / "tests")]

from batsim_env import locate_batsim, locate_pybatsim  # noqa: E402
from easy_runs import compare_starts, run_hdeeprm_easy  # noqa: E402
from pybatsim_runs import run_on_batsim  # noqa: E402
from trace_workloads import trace_inputs  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default="KTH-SP2-1996-2.1-cln.swf.gz")
    parser.add_argument("--platform", default="kth_sp2", help="a platform_examples/ name or path")
    parser.add_argument("--nb-jobs", type=int, default=None, help="default: the whole trace")
    parser.add_argument("--hosts", default="contiguous", choices=["contiguous", "any"])
    parser.add_argument("--show", type=int, default=5, help="differing jobs to print")
    args = parser.parse_args()
    batsim, why = locate_batsim()
    if batsim is None:
        sys.exit(why)
    pybatsim, why = locate_pybatsim(batsim)
    if pybatsim is None:
        sys.exit(why)
    trace = REPO.parent / "shared" / "traces" / args.trace
    platform = Path(args.platform)
    if not platform.is_file():
        platform = REPO / "platform_examples" / f"{args.platform}.json"
    with tempfile.TemporaryDirectory(prefix="easy-eq-") as tmp:
        folder = Path(tmp)
        xml, workload, nb = trace_inputs(trace, platform, folder, "delay", args.nb_jobs)
        print(f"{args.trace}, {nb} jobs, delay profiles, platform {platform.name}")
        t0 = time.perf_counter()
        b = run_on_batsim(batsim, pybatsim, "easyBackfill", xml, workload, folder / "b")
        t1 = time.perf_counter()
        h, cpu = run_hdeeprm_easy(platform, workload, folder / "h", hosts=args.hosts)
        t2 = time.perf_counter()
        diff = compare_starts(b, h)
        print(
            f"pybatsim easyBackfill on Batsim: {t1 - t0:.1f} s wall; hdeeprm-launch EASY "
            f"(hosts={args.hosts}): {t2 - t1:.1f} s wall, {cpu:.1f} s CPU"
        )
        print(f"jobs: {diff.total}; start times differing: {diff.nb_differ} (to 1 us)")
        for job, sb, sh in diff.first(args.show):
            print(f"  job {job}: Batsim/pybatsim {sb:.6f}  hdeeprm {sh:.6f}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
