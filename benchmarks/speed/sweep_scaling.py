"""Speed-up of hdeeprm-sweep: the 36 fixed policy pairs on the whole Gaia trace.

Usage: ``python benchmarks/speed/sweep_scaling.py [--workers 2] [--pairs 36] [--modes
serial,processes,ray] [--nb-jobs N] [--trace PATH]``

Runs the same sweep (one options file, ``policy_pair: all``) three ways, each in a fresh
folder: serially in this process (``-j 1``), on ``--workers`` local processes, and on a new
local Ray instance with ``--workers`` CPUs. Prints, per mode, the wall time of the whole sweep
(input generation included, Ray start-up listed apart), the sum of the runs' own times, and
the speed-up over serial; then checks that the three results tables are identical apart from
the timing columns.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common
import common  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TRACE = common.trace_default(common.GAIA)


def write_sweep(folder: Path, trace: Path, pairs: int, nb_jobs: int | None) -> Path:
    from hdeeprm.options import options_from_json

    options = {
        "seed": 1,
        "workload_file_path": str(trace),
        "platform_file_path": str(REPO / "platform_examples" / "gaia.json"),
        "pybatsim": {
            "log_level": "WARNING",
            "agent": {"type": "CLASSIC", "policy_pair": "shortest-high_gflops"},
        },
    }
    if nb_jobs:
        options["nb_jobs"] = nb_jobs
    names = options_from_json(options).env.action_names
    names = names[:: max(1, len(names) // pairs)][:pairs]  # spread over the job policies
    (folder / "options.json").write_text(json.dumps(options))
    sweep = {"options": "options.json", "grid": {"policy_pair": names}}
    path = folder / "sweep.json"
    path.write_text(json.dumps(sweep))
    return path


def run_mode(mode: str, sweep_file: Path, out: Path, workers: int) -> tuple[float, float, object]:
    """Wall time of the sweep, start-up time of the backend, results table."""
    from hdeeprm.sweep import (
        ProcessBackend,
        RayBackend,
        SerialBackend,
        load_sweep,
        results_frame,
        run_sweep,
    )

    sweep = load_sweep(sweep_file, out)
    start = time.perf_counter()
    if mode == "serial":
        backend = SerialBackend()
    elif mode == "processes":
        backend = ProcessBackend(workers)
    else:
        backend = RayBackend(None, workers)
    startup = time.perf_counter() - start
    result = run_sweep(sweep, backend)
    wall = time.perf_counter() - start
    if mode == "ray":
        import ray

        ray.shutdown()
    return wall, startup, results_frame(sweep, result.records)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--pairs", type=int, default=36, help="N pairs spread over the 36 (every 36/N-th)"
    )
    parser.add_argument("--modes", default="serial,processes,ray")
    parser.add_argument("--nb-jobs", type=int, default=None, help="first N jobs of the trace")
    parser.add_argument("--trace", type=Path, default=TRACE)
    args = parser.parse_args(argv)
    if not args.trace.is_file():
        print(common.missing_message(args.trace.name), file=sys.stderr)
        return 1
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"sweep: {args.pairs} pair(s) on {args.trace.name} "
        f"({'all' if not args.nb_jobs else args.nb_jobs} jobs), gaia.json; "
        f"{os.cpu_count()} cores, load average {load:.2f} at start"
    )
    tables = {}
    walls = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sweep_file = write_sweep(folder, args.trace, args.pairs, args.nb_jobs)
        for mode in modes:
            wall, startup, table = run_mode(mode, sweep_file, folder / mode, args.workers)
            walls[mode], tables[mode] = wall, table
            failed = int((table["status"] != "done").sum())
            busy = float(table["wall_time"].sum())
            cpu = float(table["cpu_time"].sum())
            speedup = walls["serial"] / wall if "serial" in walls else float("nan")
            workers = 1 if mode == "serial" else args.workers
            print(
                f"{mode:10s} {workers} worker(s): wall {wall:7.1f} s (start-up {startup:4.1f} s), "
                f"runs' wall sum {busy:7.1f} s, CPU sum {cpu:7.1f} s, {failed} failed, "
                f"speed-up over serial {speedup:4.2f}x, efficiency {speedup / workers:4.0%}"
            )
    if len(tables) > 1:
        from hdeeprm.sweep.table import TIMING_COLUMNS

        frames = [t.drop(columns=list(TIMING_COLUMNS)) for t in tables.values()]
        same = all(f.equals(frames[0]) for f in frames[1:])
        print(f"results tables identical across modes (timing columns aside): {same}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average at end {load:.2f} (other processes compete for the cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
