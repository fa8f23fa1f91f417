"""Replay every real trace on a platform example sized for it; print the docs/traces.md table.

Run: ``python benchmarks/fidelity/trace_replays.py [--traces DIR] [--only NAME ...]
[--thesis-range]`` (without ``--traces``, each trace is looked up as ``hdeeprm-traces path NAME``
does).

For each trace: the options a user would write (the platform example, the default memory
bandwidth range fitted to it, seed 1) go through ``prepare_inputs`` into a temporary run folder,
then the ``first-high_gflops`` pair replays the workload on the embedded engine. ``first`` takes
jobs in submission order and stops at the first that does not fit (FCFS without backfilling);
``high_gflops`` takes the fastest free cores, lowest id first on ties (first fit on a
homogeneous machine). Printed per trace, as a Markdown table:

* jobs kept, and dropped by the converter by reason; jobs the workload manager rejected
  because their memory can never fit a node;
* the share of job run time spent slowed by memory bandwidth over-subscription: a job runs at
  the pace of its slowest core, and at 75% of it while that core's processor is
  over-subscribed (P1), so a job that needed ``nominal`` seconds at full speed and ran
  ``actual`` seconds spent ``(actual - nominal) / 0.25`` of them slowed;
* the mean wait (start - submit) of the replay beside the mean of SWF field 3 (the wait the
  log records) over the same jobs (those the replay ran, with a known wait).

``--mem-bw-range LOW HIGH`` replaces the default range. ``--thesis-range`` adds the same two
figures with the thesis's fixed 4-24 GB/s range, to show what the platform-fitted default
changes. Replays longer than about two minutes take the first
jobs only (``nb_jobs`` below), and the table says so.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from hdeeprm.experiment.run import classic_manager, compute_metrics, drive
from hdeeprm.inputs import prepare_inputs
from hdeeprm.options import options_from_json
from hdeeprm.platform.hierarchy import PSTATE_SPEED_FRACTION
from hdeeprm.simulation import Engine, load_platform_xml
from hdeeprm.simulation.events import REJECTED
from hdeeprm.workload import DROP_REASONS, SwfReader

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common
import common  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "platform_examples"
PAIR = "first-high_gflops"
SEED = 1
THESIS_RANGE = [4.0, 24.0]


@dataclass(frozen=True)
class TraceCase:
    trace: str
    platform: str
    start_job: int = 0
    nb_jobs: int | None = None  # None: the whole trace
    note: str = ""


CASES = (
    TraceCase("KTH-SP2-1996-2.1-cln.swf.gz", "kth_sp2.json"),
    TraceCase(
        "NASA-iPSC-1993-3.1-cln.swf.gz",
        "nasa_ipsc860.json",
        note="the log records no waits: its submit times are start times",
    ),
    TraceCase("LANL-CM5-1994-4.1-cln.swf.gz", "lanl_cm5.json"),
    TraceCase(
        "UniLu-Gaia-2014-1.swf.gz",
        "gaia.json",
        start_job=4,
        note="the first 4 jobs, submitted months earlier, skipped as in the thesis",
    ),
    TraceCase(
        "RICC-2010-2.swf.gz",
        "ricc.json",
        nb_jobs=10_000,
        note="a whole replay takes longer than two minutes today",
    ),
    TraceCase(
        "LCG.swf.gz",
        "lcg.json",
        nb_jobs=100_000,
        note="the log records no waits; a whole replay takes longer than two minutes today",
    ),
    TraceCase("lublin_256.swf.gz", "lublin_256.json"),
    TraceCase("lublin-aaroh.swf.gz", "lublin_256.json"),
)


@dataclass
class Row:
    case: TraceCase
    kept: int
    dropped: dict[str, int]
    rejected: int
    mem_bw_range: tuple[float, float]
    slowed_share: float
    mean_wait: float
    log_wait: float
    log_wait_jobs: int
    wall: float


def _slowed_share(engine: Engine, speeds: list[float]) -> float:
    """Share of the run time of the jobs that ran spent at P1 pace (see module docstring)."""
    slow = PSTATE_SPEED_FRACTION[1]
    slowed = total = 0.0
    for job in engine.finished_jobs:
        if job.state == REJECTED or job.start_time is None or job.finish_time is None:
            continue
        actual = job.finish_time - job.start_time
        if actual <= 0:
            continue
        nominal = job.profile.cpu / (min(speeds[h] for h in job.alloc) * 1e9)
        slowed += min(max((actual - nominal) / (1.0 - slow), 0.0), actual)
        total += actual
    return slowed / total if total else 0.0


def _log_waits(trace: Path) -> dict[str, float]:
    return {str(rec.job_number): rec.wait_time for rec in SwfReader(trace)}


def replay(case: TraceCase, trace: Path, folder: Path, mem_bw_range=None) -> Row:
    doc = {
        "seed": SEED,
        "workload_file_path": str(trace),
        "platform_file_path": str(EXAMPLES / case.platform),
        "start_job": case.start_job,
        "pybatsim": {"agent": {"type": "CLASSIC", "policy_pair": PAIR}},
    }
    if case.nb_jobs is not None:
        doc["nb_jobs"] = case.nb_jobs
    if mem_bw_range is not None:
        doc["mem_bw_range"] = mem_bw_range
    options = options_from_json(doc)
    inputs = prepare_inputs(options, folder)
    summary = inputs.conversion
    assert summary is not None
    manager = classic_manager(inputs)
    engine = Engine(load_platform_xml(inputs.platform_xml), inputs.workload)
    wall = drive(engine, manager, len(inputs.workload.jobs))
    metrics = compute_metrics(engine, manager, wall)
    speeds = [core.peak_gflops for core in inputs.platform.cores]
    logged = _log_waits(trace)
    waits = [
        logged[job.name]
        for job in engine.finished_jobs
        if job.state != REJECTED and logged.get(job.name, -1) >= 0
    ]
    return Row(
        case=case,
        kept=summary.kept,
        dropped=dict(summary.dropped),
        rejected=metrics.nb_rejected,
        mem_bw_range=inputs.mem_bw_range or options.mem_bw_range or (math.nan, math.nan),
        slowed_share=_slowed_share(engine, speeds),
        mean_wait=metrics.mean_waiting,
        log_wait=sum(waits) / len(waits) if waits else math.nan,
        log_wait_jobs=len(waits),
        wall=wall,
    )


def _duration(seconds: float) -> str:
    if math.isnan(seconds):
        return "n/a"
    if seconds < 3600:
        return f"{seconds / 60:,.1f} min"
    if seconds < 86400 * 2:
        return f"{seconds / 3600:,.1f} h"
    return f"{seconds / 86400:,.1f} d"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--traces",
        type=Path,
        default=None,
        help="folder of the traces (default: found as `hdeeprm-traces path` finds them)",
    )
    parser.add_argument("--only", nargs="*", help="trace file names (default: all)")
    parser.add_argument("--thesis-range", action="store_true")
    parser.add_argument(
        "--mem-bw-range",
        nargs=2,
        type=float,
        metavar=("LOW", "HIGH"),
        help="GB/s per task instead of the platform-fitted default",
    )
    args = parser.parse_args()
    # Per-event over-subscription records would flood stderr; the table is the output here.
    logging.getLogger("hdeeprm.insights").addHandler(logging.NullHandler())
    logging.getLogger("hdeeprm.insights").propagate = False
    cases = [c for c in CASES if not args.only or c.trace in args.only]
    header = (
        "| trace | platform | jobs kept | dropped (reason: count) | rejected (memory) | "
        "mem_bw default, GB/s | job time over-subscribed | mean wait, FCFS replay | "
        "mean wait in the log |"
    )
    extra = " over-subscribed, 4-24 GB/s | mean wait, 4-24 GB/s |" if args.thesis_range else ""
    print(header + extra)
    print("|---" * (9 + (2 if args.thesis_range else 0)) + "|")
    notes: list[str] = []
    for case in cases:
        trace = common.find_trace(case.trace, args.traces)
        if trace is None:
            fetch = f"`hdeeprm-traces fetch {case.trace}`"
            print(f"| {case.trace} | (not found: {fetch}) |", flush=True)
            continue
        if not (EXAMPLES / case.platform).is_file():
            print(f"| {case.trace} | (no {case.platform} in platform_examples/) |", flush=True)
            continue
        with tempfile.TemporaryDirectory(prefix="hdeeprm-replay-") as tmp:
            started = time.perf_counter()
            cpu = time.process_time()
            row = replay(case, trace, Path(tmp) / "fitted", args.mem_bw_range)
            cells = _cells(row)
            if args.thesis_range:
                thesis = replay(case, trace, Path(tmp) / "thesis", THESIS_RANGE)
                cells += [f"{thesis.slowed_share:.1%}", _duration(thesis.mean_wait)]
            took = time.perf_counter() - started
            cpu = time.process_time() - cpu
        print("| " + " | ".join(cells) + " |", flush=True)
        window = "" if case.nb_jobs is None else f"first {case.nb_jobs:,} usable jobs; "
        notes.append(
            f"* {case.trace}: {window}{case.note + '; ' if case.note else ''}"
            f"replay {row.wall:.1f} s; everything {took:.1f} s ({cpu:.1f} s of CPU)"
        )
    print()
    print("\n".join(notes))
    return 0


def _cells(row: Row) -> list[str]:
    dropped = ", ".join(
        f"{reason.replace('_', ' ')}: {row.dropped[reason]:,}"
        for reason in DROP_REASONS
        if row.dropped.get(reason)
    )
    low, high = row.mem_bw_range
    kept = f"{row.kept:,}" + ("" if row.case.nb_jobs is None else " (window)")
    return [
        row.case.trace,
        row.case.platform,
        kept,
        dropped or "none",
        f"{row.rejected:,}",
        f"{low:.3g}-{high:.3g}",
        f"{row.slowed_share:.1%}",
        _duration(row.mean_wait),
        _duration(row.log_wait) + f" ({row.log_wait_jobs:,} jobs)",
    ]


if __name__ == "__main__":
    sys.exit(main())
