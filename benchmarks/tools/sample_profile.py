"""Sample where a benchmark spends its CPU time: a tiny statistical profiler on a CPU-time timer.

Usage: ``python benchmarks/tools/sample_profile.py [--interval MS] [--top N] SCRIPT [ARGS ...]``,
e.g. ``python benchmarks/tools/sample_profile.py benchmarks/speed/easy_backfilling.py ricc``.

cProfile instruments every call, which inflates call-heavy code several times over and so
misplaces the costs (RICC's first 50,000 jobs with EASY: 24.0 s of simulation CPU under it,
9.3 s without, ``python benchmarks/speed/easy_backfilling.py ricc --nb-jobs 50000 [--profile]``).
This runs the script unchanged and, every ``--interval`` milliseconds of the process's CPU
time (``ITIMER_PROF``), records the Python function running and the functions above it. It
prints the functions by *self* samples (the one running) and by *inclusive* samples (anywhere
on the stack), with their shares. CPython runs the handler between bytecodes, at its next
check (a call or a loop's jump back), so time in a long C call is counted at the Python code
that follows it: shares per function are fair, per line only approximate.
"""

from __future__ import annotations

import argparse
import runpy
import signal
import sys
from collections import Counter
from pathlib import Path
from types import FrameType

REPO = str(Path(__file__).resolve().parents[2]) + "/"


def _name(key: tuple[str, int, str]) -> str:
    filename, line, function = key
    return f"{filename.replace(REPO, '')}:{line}({function})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interval", type=float, default=2.0, help="milliseconds of CPU time")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)

    own: Counter[tuple[str, int, str]] = Counter()
    anywhere: Counter[tuple[str, int, str]] = Counter()
    total = 0

    def sample(signum: int, frame: FrameType | None) -> None:
        nonlocal total
        total += 1
        seen = set()
        first = True
        while frame is not None:
            code = frame.f_code
            key = (code.co_filename, code.co_firstlineno, code.co_name)
            if first:
                own[key] += 1
                first = False
            if key not in seen:
                seen.add(key)
                anywhere[key] += 1
            frame = frame.f_back

    sys.argv = [args.script, *args.args]
    signal.signal(signal.SIGPROF, sample)
    period = args.interval / 1000.0
    signal.setitimer(signal.ITIMER_PROF, period, period)
    try:
        runpy.run_path(args.script, run_name="__main__")
    except SystemExit:
        pass
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0.0, 0.0)
    lines = [f"{total} samples of {args.interval:g} ms CPU", "", "self"]
    lines += [
        f"{n:8d} {100 * n / max(total, 1):5.1f}%  {_name(k)}" for k, n in own.most_common(args.top)
    ]
    lines += ["", "inclusive"]
    lines += [
        f"{n:8d} {100 * n / max(total, 1):5.1f}%  {_name(k)}"
        for k, n in anywhere.most_common(args.top)
    ]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
