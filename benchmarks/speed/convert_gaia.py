"""Benchmark: convert the whole UniLu Gaia trace (51,899 jobs) and write workload.json.

Prints the time spent reading (SWF parse alone), converting (read + filter + build) and writing
(workload.json + job_limits.json), and jobs per second. Run from the repository root::

    python benchmarks/speed/convert_gaia.py [TRACE] [--repeat N]

The reference speed comes from ``platform_examples/gaia.json`` through
:func:`hdeeprm.platform.load_platform` when both exist; otherwise it is the mean peak GFLOPS
per core of thesis Table 5.1 (26,711.04 GFLOPS / 2,280 cores = 11.7154 GFLOPS).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from hdeeprm.workload import SwfReader, convert_swf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: common
import common  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DEFAULT_TRACE = common.trace_default(common.GAIA)
#: Thesis Table 5.1: sum over node types of cores x GFLOPS per core, over 2,280 cores.
TABLE_5_1_REFERENCE_SPEED = 26711.04 / 2280
GAIA_CORES = 2280


def reference_speed() -> tuple[float, str]:
    """Gaia's reference speed (GFLOPS) and where it came from."""
    example = REPO / "platform_examples" / "gaia.json"
    try:
        from hdeeprm.platform import load_platform

        if example.is_file():
            return load_platform(example).reference_speed, str(example.relative_to(REPO))
    except Exception as exc:  # noqa: BLE001 - a benchmark falls back rather than fails
        print(f"(platform loader unavailable: {exc}; using thesis Table 5.1)")
    return TABLE_5_1_REFERENCE_SPEED, "thesis Table 5.1"


def best_of(repeat: int, func):  # noqa: ANN001, ANN201 - tiny timing helper
    """Run ``func`` ``repeat`` times; return (best seconds, last result)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = func()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", nargs="?", default=str(DEFAULT_TRACE))
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs (default 3)")
    args = parser.parse_args()
    trace = common.require_trace(args.trace)
    speed, origin = reference_speed()
    print(f"trace {trace.name}, reference speed {speed:.4f} GFLOPS ({origin})")

    read_s, count = best_of(args.repeat, lambda: sum(1 for _ in SwfReader(trace)))
    convert_s, result = best_of(
        args.repeat,
        lambda: convert_swf(trace, reference_speed=speed, max_cores=GAIA_CORES, seed=0),
    )
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "workload.json"
        write_s, _ = best_of(args.repeat, lambda: result.save(out))
        size_mb = out.stat().st_size / 1e6
    kept = result.summary.kept
    print(result.summary)
    print(f"read     {read_s:7.3f} s  {count / read_s:10,.0f} jobs/s  ({count} jobs parsed)")
    rate = count / convert_s
    print(f"convert  {convert_s:7.3f} s  {rate:10,.0f} jobs/s  (read + filter + build)")
    print(f"write    {write_s:7.3f} s  {kept / write_s:10,.0f} jobs/s  ({size_mb:.1f} MB JSON)")
    total = convert_s + write_s
    print(f"total    {total:7.3f} s  {count / total:10,.0f} jobs/s end to end")


if __name__ == "__main__":
    main()
