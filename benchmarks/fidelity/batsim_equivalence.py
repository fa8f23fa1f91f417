"""pybatsim's schedulers against a real Batsim 4.2.1 and against hdeeprm-sim, on real traces:
print how many jobs' out_jobs.csv rows differ, per column, and both wall times.

    python benchmarks/fidelity/batsim_equivalence.py [--trace UniLu-Gaia-2014-1.swf.gz]
        [--platform gaia|one-core:N|no-network:N] [--profile delay|parallel_homogeneous]
        [--nb-jobs N]
        [--schedulers fillerSched,...] [--instant] [--keep FOLDER [--reuse-batsim]]

Needs Batsim (``make batsim``, or ``HDEEPRM_BATSIM``) and the trace (``hdeeprm-traces``). Walltimes
are the traces' requested times (none where the trace records none), submissions start at t = 1
(pybatsim's scheduler API refuses t = 0) and cores start in P0 (pybatsim does not manage P-states).
``--platform`` is a ``platform_examples/`` name, ``one-core:N`` (hdeeprm's generated platform of N
one-core nodes) or ``no-network:N`` (N one-core hosts in Batsim's "no network" style: one zone,
no link). hdeeprm-sim runs with its default Batsim timing (``--instant``: one message per instant).
Times are compared as printed (6 decimals) and to 1 us; energy to 1e-9 relative. ``--keep FOLDER``
keeps the inputs and both runs' outputs there (``SCHEDULER/b`` for Batsim, ``SCHEDULER/h`` for
hdeeprm-sim), to diff them job by job afterwards.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common
import common  # noqa: E402
from batsim_runs import (  # noqa: E402
    homogeneous_platform,
    jobs_differences,
    jobs_differing,
    locate_batsim,
    locate_pybatsim,
    no_network_platform,
    run_on_batsim,
    run_on_hdeeprm,
    trace_inputs,
)

REPO = Path(__file__).resolve().parents[2]

#: pybatsim's EASY backfilling and the deterministic delayed filler of the tests (pybatsim's own
#: fillerSched is not deterministic; schedFcfs & co. take minutes per 1,000 jobs).
DELAYED = REPO / "tests" / "batsim" / "schedulers" / "delayedFiller.py"
SCHEDULERS = f"easyBackfill,{DELAYED}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default="UniLu-Gaia-2014-1.swf.gz")
    parser.add_argument(
        "--platform", default="gaia", help="a platform_examples/ name, one-core:N, no-network:N"
    )
    parser.add_argument("--profile", default="delay", choices=["delay", "parallel_homogeneous"])
    parser.add_argument("--nb-jobs", type=int, default=None, help="default: the whole trace")
    parser.add_argument("--schedulers", default=SCHEDULERS)
    parser.add_argument(
        "--instant", action="store_true", help="hdeeprm-sim --instant (one message per instant)"
    )
    parser.add_argument("--keep", type=Path, default=None, help="keep inputs and outputs here")
    parser.add_argument(
        "--reuse-batsim",
        action="store_true",
        help="with --keep: compare with Batsim's outputs already kept there (no Batsim run)",
    )
    args = parser.parse_args()
    batsim, why = locate_batsim()
    if batsim is None:
        sys.exit(why)
    pybatsim, why = locate_pybatsim(batsim)
    if pybatsim is None:
        sys.exit(why)
    trace = common.require_trace(args.trace)
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        where = contextlib.nullcontext(str(args.keep))
    else:
        where = tempfile.TemporaryDirectory(prefix="batsim-eq-")
    with where as tmp:
        folder = Path(tmp)
        style, _, count = args.platform.partition(":")
        if count:  # N one-core nodes (the workload is converted for them)
            platform_json = homogeneous_platform(folder / "one-core.json", int(count))
        else:
            platform_json = REPO / "platform_examples" / f"{args.platform}.json"
        xml, workload, nb = trace_inputs(trace, platform_json, folder, args.profile, args.nb_jobs)
        if style == "no-network":
            xml = no_network_platform(folder / "no-network.xml", int(count))
        grouping = "--instant" if args.instant else "Batsim timing"
        print(
            f"{args.trace}, {nb} jobs, {args.profile} profiles, platform {args.platform}, "
            f"hdeeprm-sim {grouping}"
        )
        print(
            f"{'scheduler':<22}{'Batsim':>9}{'hdeeprm':>9}  differing jobs per column "
            "(as printed | to 1 us), jobs differing in any time/state/allocation column"
        )
        for name in args.schedulers.split(","):
            if Path(name).is_file():  # a scheduler file: pybatsim runs in the output folder
                name = str(Path(name).resolve())
            start = time.perf_counter()
            runs = folder / Path(name).stem
            b = runs / "b" / "out_jobs.csv"
            if not (args.reuse_batsim and b.is_file()):
                b = run_on_batsim(batsim, pybatsim, name, xml, workload, runs / "b")
            mid = time.perf_counter()
            h = run_on_hdeeprm(
                pybatsim, name, xml, workload, runs / "h", batsim_timing=not args.instant
            )
            end = time.perf_counter()
            exact = jobs_differences(b, h) or "identical"
            close = jobs_differences(b, h, time_tol=1e-6) or "identical"
            label = Path(name).stem
            nb_jobs = jobs_differing(b, h)
            print(
                f"{label:<22}{mid - start:>8.1f}s{end - mid:>8.1f}s  {exact} | {close}, "
                f"{nb_jobs} of {nb} jobs",
                flush=True,
            )


if __name__ == "__main__":
    main()
