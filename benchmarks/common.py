"""What the benchmark scripts share: finding traces, timing, the machine's load, reporting.

Scripts under ``benchmarks/speed``, ``benchmarks/fidelity`` and ``benchmarks/tools`` put this
folder first on the module search path (never the repository root, nor the test suite's
folders) and ``import common``, so that ``hdeeprm`` itself comes from wherever ``PYTHONPATH`` or the
installed package says: ``python -m benchmarks --compare REV`` relies on that to time another
commit's package with the same benchmark code. To time a checkout that is not the installed
package, put it on ``PYTHONPATH``; :func:`machine` records which one was timed.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

#: The repository root (platform examples, data).
REPO = Path(__file__).resolve().parent.parent
PLATFORM_EXAMPLES = REPO / "platform_examples"

#: Short names the scripts accept for the catalogued traces.
GAIA = "UniLu-Gaia-2014-1.swf.gz"
TRACE_FILES = {
    "gaia": GAIA,
    "kth": "KTH-SP2-1996-2.1-cln.swf.gz",
    "nasa": "NASA-iPSC-1993-3.1-cln.swf.gz",
    "lanl": "LANL-CM5-1994-4.1-cln.swf.gz",
    "ricc": "RICC-2010-2.swf.gz",
    "lcg": "LCG.swf.gz",
    "lublin256": "lublin_256.swf.gz",
    "aaroh": "lublin-aaroh.swf.gz",
}

T = TypeVar("T")

#: Trace paths fixed by the suite runner (short or file name -> path): its benchmark processes
#: may run another commit's package, which need not have the trace lookup.
TRACE_OVERRIDES: dict[str, Path] = {}


# --- traces -------------------------------------------------------------------------------
def find_trace(name: str, folder: Path | None = None) -> Path | None:
    """``folder / name`` when a folder is given, else the archive lookup (``$HDEEPRM_TRACES``,
    then the trace cache); ``None`` when absent. ``name`` may be a short name (``gaia``)."""
    name = TRACE_FILES.get(name, name)
    if folder is not None:
        path = Path(folder) / name
        return path if path.is_file() else None
    if name in TRACE_OVERRIDES:
        return TRACE_OVERRIDES[name]
    try:
        from hdeeprm.workload import archive
    except ImportError:  # another commit's package, timed by the suite runner
        return None
    return archive.find_trace(name)


def missing_message(name: str) -> str:
    """Why trace ``name`` is not found, and the command that gets it."""
    from hdeeprm.workload import archive

    return archive.missing_message(TRACE_FILES.get(name, name))


def trace_default(name: str) -> Path:
    """A default for a ``--trace`` option: the trace's path when found, else its bare name
    (which :func:`require_trace` then reports as missing, saying how to get it)."""
    return find_trace(name) or Path(TRACE_FILES.get(name, name))


def require_trace(path: Path | str, folder: Path | None = None) -> Path:
    """An existing trace file: ``path`` itself when it is a file, else the catalogued trace of
    that name looked up as :func:`find_trace` does. Exits with a message naming the file and
    the command that gets it when there is none."""
    path = Path(path)
    if path.is_file():
        return path
    name = TRACE_FILES.get(str(path), path.name)
    found = find_trace(name, folder)
    if found is not None:
        return found
    if folder is not None:
        sys.exit(f"trace not found: {Path(folder) / name}")
    sys.exit(missing_message(name))


# --- timing and the machine ---------------------------------------------------------------
@dataclass
class Timing:
    """CPU seconds of this process (``time.process_time``) and wall seconds of a block."""

    cpu: float = 0.0
    wall: float = 0.0


@contextmanager
def timed() -> Iterator[Timing]:
    """``with timed() as t: ...``, then ``t.cpu`` and ``t.wall``."""
    timing = Timing()
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        yield timing
    finally:
        timing.cpu = time.process_time() - cpu
        timing.wall = time.perf_counter() - wall


def best_of(repeat: int, func: Callable[[], T]) -> tuple[float, T]:
    """Run ``func`` ``repeat`` times; (smallest CPU seconds, last result). On a shared machine
    other processes only ever add time, so the smallest is the closest to the code's own."""
    best, result = float("inf"), None
    for _ in range(max(1, repeat)):
        with timed() as timing:
            result = func()
        best = min(best, timing.cpu)
    return best, result  # type: ignore[return-value]


def load_average() -> tuple[float, float, float] | None:
    """The machine's 1, 5 and 15 minute load averages (``None`` where the OS has none): a
    load above the core count means every figure measured now is inflated."""
    try:
        return os.getloadavg()
    except (AttributeError, OSError):
        return None


def peak_rss_mib() -> float:
    """Peak resident memory of this process (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def machine() -> dict[str, Any]:
    """What a figure was measured on: Python, cores, load average, and which ``hdeeprm`` the
    scripts import (the installed package unless ``PYTHONPATH`` names a checkout)."""
    import hdeeprm

    return {
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "load_average": load_average(),
        "hdeeprm": str(Path(hdeeprm.__file__ or "").parent),
    }


# --- reporting ----------------------------------------------------------------------------
def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain text table, numbers right-aligned."""
    cells = [[str(h) for h in headers]] + [[_cell(v) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    numeric = [
        all(isinstance(row[i], int | float) for row in rows if row[i] is not None)
        for i in range(len(headers))
    ]
    lines = []
    for row in cells:
        parts = [
            cell.rjust(w) if num else cell.ljust(w)
            for cell, w, num in zip(row, widths, numeric, strict=True)
        ]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if value == 0 or abs(value) >= 100:
            return f"{value:,.0f}"
        return f"{value:.3g}" if abs(value) < 1 else f"{value:.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as JSON atomically (a temporary file beside it, then renamed), so an
    interrupted run never leaves a half-written result."""
    path = Path(path)
    folder = path.resolve().parent
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1)
            handle.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
