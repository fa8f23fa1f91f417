"""Refuse a synthetic workload the machine cannot hold, before generating it.

A run keeps its whole workload in memory (generator arrays, Batsim JSON, engine jobs and the
decision system's records): measured at about 7.3 KB per job on top of a 260 MB base for a
Lublin workload on Gaia (``benchmarks/speed/synthetic_memory.py``). An ``nb_jobs`` far beyond the
available memory would otherwise end in a ``MemoryError`` traceback after minutes, or in the
kernel killing the process; it is refused at once with the size it would need.
"""

from __future__ import annotations

import os

from hdeeprm.errors import InputError

#: Memory one synthetic job needs through a whole run (bytes, rounded up from 7.3 KB).
BYTES_PER_JOB = 8 * 1024


def available_memory() -> int | None:
    """Memory available to a new allocation, in bytes (``None`` when the OS does not say)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def _size(nbytes: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if nbytes < 1024 or unit == "PB":
            return f"{nbytes:,.1f} {unit}"
        nbytes /= 1024
    return f"{nbytes:,.1f} PB"  # pragma: no cover


def check_synthetic_size(nb_jobs: int) -> None:
    """Raise :class:`InputError` when ``nb_jobs`` synthetic jobs would not fit in memory."""
    need = nb_jobs * BYTES_PER_JOB
    have = available_memory()
    if have is not None and need > have:
        raise InputError(
            f"{nb_jobs:,} synthetic jobs would need about {_size(need)} of memory "
            f"({BYTES_PER_JOB // 1024} KB per job) but {_size(have)} is available; lower "
            f"nb_jobs to at most {have // BYTES_PER_JOB:,}"
        )


__all__ = ["BYTES_PER_JOB", "available_memory", "check_synthetic_size"]
