"""hdeeprm's own EASY (preset ``easy``, run by ``hdeeprm-launch``) against pybatsim's
``easyBackfill`` on a real Batsim 4.2.1, on the same homogeneous platform and workload: print,
for each way of running hdeeprm, how many jobs start at a different time or on other cores.

    python benchmarks/fidelity/easy_equivalence.py [--trace KTH-SP2-1996-2.1-cln.swf.gz]
        [--platform kth_sp2 | --homogeneous N] [--nb-jobs N]
        [--runs embedded,batsim,timing,any] [--engine-reference] [--show 5]

Runs (``--runs``), all with hosts ``contiguous`` except ``any``:

* ``embedded``: on the embedded engine;
* ``batsim``: on the real Batsim (``hdeeprm-launch --batsim``);
* ``nopstate``: as ``batsim``, hdeeprm's P-state decisions withheld
  (``launch_without_pstates.py`` beside this script: on Batsim each decision takes 1e-10 s, which
  can swap two completions of one instant), so both schedulers receive the very same messages;
* ``timing``: on ``hdeeprm-sim --batsim-timing`` (hdeeprm's engine sending each instant's
  events as Batsim does);
* ``any``: hosts ``any`` (the literature's EASY, counting cores) on the embedded engine.

``--engine-reference`` also compares the embedded run with ``easyBackfill`` on ``hdeeprm-sim``
without ``--batsim-timing`` (the embedded engine's messages: one per instant).

Needs Batsim and pybatsim (``make batsim``) and the trace (``hdeeprm-traces``). The workload is the
one ``benchmarks/fidelity/batsim_equivalence.py`` gives pybatsim (delay profiles, the traces'
requested times as walltimes, submissions from t = 1); hdeeprm reads it with ``-cw`` and predicts
run times by the same requested times. Times are compared to 1 us (Batsim's clock carries
sub-microsecond offsets). Wall times are on a shared machine; CPU is hdeeprm-launch's and that of
the simulator process it starts, if any.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common
import common  # noqa: E402
from batsim_runs import (  # noqa: E402
    compare_starts,
    homogeneous_platform,
    locate_batsim,
    locate_pybatsim,
    run_hdeeprm_easy,
    run_on_batsim,
    run_on_hdeeprm,
    timed_sim,
    trace_inputs,
)

REPO = Path(__file__).resolve().parents[2]

#: run -> (hosts, simulator: None = embedded engine, "batsim", "timing" = hdeeprm-sim
#: --batsim-timing behind hdeeprm-launch --batsim)
RUNS = {
    "embedded": ("contiguous", None),
    "batsim": ("contiguous", "batsim"),
    "nopstate": ("contiguous", "batsim"),
    "timing": ("contiguous", "timing"),
    "any": ("any", None),
}
LABELS = {None: "embedded engine", "batsim": "Batsim", "timing": "hdeeprm-sim --batsim-timing"}


def allocations_differing(reference: Path, other: Path) -> int:
    a = pd.read_csv(reference, dtype={"job_id": str}).set_index("job_id")
    b = pd.read_csv(other, dtype={"job_id": str}).set_index("job_id").loc[a.index]
    return int((a["allocated_resources"] != b["allocated_resources"]).sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default="KTH-SP2-1996-2.1-cln.swf.gz")
    parser.add_argument("--platform", default="kth_sp2", help="a platform_examples/ name or path")
    parser.add_argument(
        "--homogeneous",
        type=int,
        default=None,
        metavar="N",
        help="instead of --platform: N identical one-core nodes with 64 GB each",
    )
    parser.add_argument("--nb-jobs", type=int, default=None, help="default: the whole trace")
    parser.add_argument("--runs", default="embedded,batsim,timing,any")
    parser.add_argument(
        "--engine-reference",
        action="store_true",
        help="also compare the embedded run with easyBackfill on hdeeprm-sim without "
        "--batsim-timing (the embedded engine's messages: one per instant, completions first)",
    )
    parser.add_argument("--show", type=int, default=5, help="differing jobs to print per run")
    args = parser.parse_args()
    runs = args.runs.split(",")
    for name in runs:
        if name not in RUNS:
            parser.error(f"--runs: unknown run {name!r}; expected some of {', '.join(RUNS)}")
    batsim, why = locate_batsim()
    if batsim is None:
        sys.exit(why)
    pybatsim, why = locate_pybatsim(batsim)
    if pybatsim is None:
        sys.exit(why)
    trace = common.require_trace(args.trace)
    platform = Path(args.platform)
    if not platform.is_file():
        platform = REPO / "platform_examples" / f"{args.platform}.json"
    with tempfile.TemporaryDirectory(prefix="easy-eq-") as tmp:
        folder = Path(tmp)
        if args.homogeneous is not None:
            platform = homogeneous_platform(folder / "homogeneous.json", args.homogeneous)
        xml, workload, nb = trace_inputs(trace, platform, folder, "delay", args.nb_jobs)
        print(f"{args.trace}, {nb} jobs, delay profiles, platform {platform.name}")
        t0 = time.perf_counter()
        ref = run_on_batsim(batsim, pybatsim, "easyBackfill", xml, workload, folder / "ref")
        print(f"pybatsim easyBackfill on Batsim: {time.perf_counter() - t0:.1f} s wall")
        print(f"{'hdeeprm run':<46}{'wall':>8}{'CPU':>8}  start times differing  cores differing")
        simulators = {None: None, "batsim": batsim, "timing": timed_sim(folder)}
        for name in runs:
            hosts, simulator = RUNS[name]
            t0 = time.perf_counter()
            out, cpu = run_hdeeprm_easy(
                platform,
                workload,
                folder / name,
                hosts=hosts,
                batsim=simulators[simulator],
                pstates=name != "nopstate",
            )
            wall = time.perf_counter() - t0
            diff = compare_starts(ref, out)
            label = f"hosts={hosts}, {LABELS[simulator]}"
            if name == "nopstate":
                label += ", no P-states"
            cores = allocations_differing(ref, out)
            print(f"{label:<46}{wall:>7.1f}s{cpu:>7.1f}s  {diff.nb_differ:>21}  {cores:>15}")
            for job, sb, sh in diff.first(args.show):
                print(f"    job {job}: pybatsim {sb:.6f}, hdeeprm {sh:.6f}")
            if name == "embedded" and args.engine_reference:
                t0 = time.perf_counter()
                eng = run_on_hdeeprm(
                    pybatsim, "easyBackfill", xml, workload, folder / "eng", batsim_timing=False
                )
                wall = time.perf_counter() - t0
                diff = compare_starts(eng, out)
                cores = allocations_differing(eng, out)
                label = "  vs easyBackfill on hdeeprm-sim"
                print(f"{label:<46}{wall:>7.1f}s{'':>8}  {diff.nb_differ:>21}  {cores:>15}")


if __name__ == "__main__":
    main()
