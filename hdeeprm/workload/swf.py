"""Streaming reader and writer for the Standard Workload Format (SWF).

SWF (Parallel Workloads Archive) is one job per line, 18 whitespace-separated numeric fields,
with ``;`` comment lines holding the header. Traces are large (hundreds of thousands of lines)
and usually gzipped, so the reader streams: it never holds the file, only the current line.

Unknown values are written ``-1`` in SWF and are **kept as -1** in :class:`SwfJob` (never
``None``), so a record is always plain numbers; :data:`UNKNOWN` names the sentinel. Fields that
are counts or identifiers are ``int``; times and memory sizes are ``float`` (some traces write
fractional values there).
"""

from __future__ import annotations

import gzip
import io
import math
import os
from collections.abc import Iterable, Iterator
from typing import IO, Any, NamedTuple

from hdeeprm._atomic import atomic_open
from hdeeprm.errors import InputError

#: The SWF sentinel for "unknown".
UNKNOWN = -1


class SwfJob(NamedTuple):
    """One SWF job line: the 18 standard fields, in order, -1 meaning unknown."""

    job_number: int  # 1
    submit_time: float  # 2, seconds since the log started
    wait_time: float  # 3, seconds
    run_time: float  # 4, seconds
    allocated_processors: int  # 5
    average_cpu_time: float  # 6, seconds
    used_memory: float  # 7, KB per processor
    requested_processors: int  # 8
    requested_time: float  # 9, seconds
    requested_memory: float  # 10, KB per processor
    status: int  # 11
    user_id: int  # 12
    group_id: int  # 13
    executable_number: int  # 14
    queue_number: int  # 15
    partition_number: int  # 16
    preceding_job_number: int  # 17
    think_time: float  # 18, seconds


#: Field names in SWF order (1-based position = index + 1).
SWF_FIELDS: tuple[str, ...] = SwfJob._fields
#: Positions (0-based) of the integer fields: counts and identifiers.
_INT_FIELDS = frozenset((0, 4, 7, 10, 11, 12, 13, 14, 15, 16))


def _open_text(path: str) -> IO[str]:
    """Open plain or gzip SWF as text; gzip is detected by its magic bytes, not the name."""
    try:
        raw = open(path, "rb")  # noqa: SIM115 - handed over to the wrapper below
    except FileNotFoundError:
        raise InputError("SWF file not found", path) from None
    except IsADirectoryError:
        raise InputError("expected an SWF file, got a directory", path) from None
    magic = raw.read(2)
    raw.seek(0)
    stream: gzip.GzipFile | io.BufferedReader = (
        gzip.GzipFile(fileobj=raw, mode="rb") if magic == b"\x1f\x8b" else raw
    )
    # latin-1 never fails to decode: header comments in old logs are not always UTF-8.
    return io.TextIOWrapper(stream, encoding="latin-1", newline=None)


def _slow_parse(parts: list[str], path: str, lineno: int) -> SwfJob:
    """Field-by-field parse that accepts integral floats in int fields (``"4.0"``) and names
    the first bad field; only reached when the fast path fails."""
    values: list[Any] = []  # ints in the int fields, floats elsewhere
    for index, token in enumerate(parts):
        name = SWF_FIELDS[index]
        try:
            number = float(token)
        except ValueError:
            raise InputError(
                f"field {index + 1} ({name}) is not a number: {token!r}", path, f"line {lineno}"
            ) from None
        if not math.isfinite(number):
            raise InputError(
                f"field {index + 1} ({name}) must be finite, got {token!r}", path, f"line {lineno}"
            )
        if index in _INT_FIELDS:
            if not number.is_integer():
                raise InputError(
                    f"field {index + 1} ({name}) must be an integer, got {token!r}",
                    path,
                    f"line {lineno}",
                )
            values.append(int(number))
        else:
            values.append(number)
    return SwfJob(*values)


class SwfReader:
    """Iterate over the jobs of an SWF file (plain or gzip), one line at a time.

    Header comment lines (starting with ``;``) are collected, in order and without their line
    ending, in :attr:`header` as they are met; blank lines are skipped. A malformed line raises
    :class:`InputError` naming the file and ``line N``. Use it as an iterator or a context
    manager; iteration closes the file when it ends.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.header: list[str] = []
        #: Number of the last line read (1-based), for error messages and progress.
        self.line_number = 0
        self._handle: IO[str] | None = None

    def __enter__(self) -> SwfReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the underlying file (safe to call twice)."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def __iter__(self) -> Iterator[SwfJob]:
        path = self.path
        handle = self._handle = _open_text(path)
        header = self.header
        isfinite = math.isfinite
        lineno = 0
        try:
            for lineno, line in enumerate(handle, 1):  # noqa: B007 - kept for line_number
                text = line.strip()
                if not text:
                    continue
                if text[0] == ";":
                    header.append(text)
                    continue
                parts = text.split()
                if len(parts) != 18:
                    raise InputError(
                        f"expected 18 SWF fields, found {len(parts)}", path, f"line {lineno}"
                    )
                try:
                    job = SwfJob(
                        int(parts[0]),
                        float(parts[1]),
                        float(parts[2]),
                        float(parts[3]),
                        int(parts[4]),
                        float(parts[5]),
                        float(parts[6]),
                        int(parts[7]),
                        float(parts[8]),
                        float(parts[9]),
                        int(parts[10]),
                        int(parts[11]),
                        int(parts[12]),
                        int(parts[13]),
                        int(parts[14]),
                        int(parts[15]),
                        int(parts[16]),
                        float(parts[17]),
                    )
                    total = job[1] + job[2] + job[3] + job[5] + job[6] + job[8] + job[9] + job[17]
                    if not isfinite(total):
                        job = _slow_parse(parts, path, lineno)
                except ValueError:
                    job = _slow_parse(parts, path, lineno)
                self.line_number = lineno
                yield job
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            raise InputError(f"cannot read SWF data: {exc}", path, f"line {lineno + 1}") from None
        finally:
            self.line_number = max(self.line_number, lineno)
            self.close()


def read_swf(path: str | os.PathLike[str]) -> tuple[list[SwfJob], list[str]]:
    """Read a whole SWF file: ``(jobs, header lines)``. Prefer :class:`SwfReader` for streaming."""
    reader = SwfReader(path)
    jobs = list(reader)
    return jobs, reader.header


def _format_field(value: float) -> str:
    if isinstance(value, int) or float(value).is_integer():
        return str(int(value))
    return repr(float(value))


def format_swf_line(job: SwfJob | Iterable[float]) -> str:
    """One SWF line (no newline): integral values without a decimal point."""
    return " ".join(_format_field(v) for v in job)


def write_swf(
    jobs: Iterable[SwfJob], path: str | os.PathLike[str], header: Iterable[str] = ()
) -> None:
    """Write jobs as an SWF file, atomically; gzip-compressed when ``path`` ends in ``.gz``.

    Header lines are written first, each prefixed with ``;`` unless it already starts with one.
    """
    spath = os.fspath(path)
    lines = [h if h.startswith(";") else f"; {h}" for h in header]
    lines.extend(format_swf_line(job) for job in jobs)
    text = "\n".join(lines) + ("\n" if lines else "")
    if spath.endswith(".gz"):
        # mtime=0 keeps the compressed bytes identical for identical content.
        data = gzip.compress(text.encode("latin-1"), mtime=0)
        with atomic_open(spath, "wb") as handle:
            handle.write(data)
    else:
        with atomic_open(spath, "w", encoding="latin-1") as handle:
            handle.write(text)
