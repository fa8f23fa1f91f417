"""Atomic file output: an interrupted run never leaves a half-written file behind.

Everything is written to a temporary file in the destination folder and moved into place with
:func:`os.replace`, which is atomic on POSIX and Windows when both paths share a filesystem.
Any ``OSError`` on the way (read-only folder, disk full, a path under a regular file...) becomes
an :class:`~hdeeprm.errors.OutputError` naming the file, and the temporary file is removed.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import tempfile
from collections.abc import Iterator
from typing import IO, Any

from hdeeprm.errors import OutputError, output_error

#: Prefix of every temporary file (``hdeeprm-clean`` removes strays with it).
TMP_PREFIX = ".tmp-"


def _open_stream(fd: int, mode: str, encoding: str | None, newline: str | None) -> IO[Any]:
    """The one place output bytes go through (tests replace it to simulate a full disk)."""
    return os.fdopen(fd, mode, encoding=encoding, newline=newline)


def ensure_dir(path: str | os.PathLike[str]) -> None:
    """Create the folder ``path`` (and its parents) or raise :class:`OutputError` saying why."""
    try:
        os.makedirs(path, exist_ok=True)
    except FileExistsError:  # a regular file (or a broken link) where the folder should be
        if os.path.islink(path):
            why = "a symbolic link that leads to no folder (dangling, or a loop) has that name"
        else:
            why = "a file with that name exists"
        raise OutputError(f"cannot create the folder: {why}", path) from None
    except OSError as exc:
        raise output_error(exc, path) from None


def temporary_sibling(path: str | os.PathLike[str], binary: bool = False, **text: Any):
    """Create a temporary file beside ``path``; return ``(name, stream)``.

    Raises :class:`OutputError` when the folder cannot hold it.
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    ensure_dir(folder)
    try:
        fd, tmp = tempfile.mkstemp(prefix=TMP_PREFIX + os.path.basename(path) + "-", dir=folder)
    except OSError as exc:
        raise output_error(exc, path) from None
    try:
        mode = "wb" if binary else "w"
        stream = _open_stream(
            fd,
            mode,
            None if binary else text.get("encoding", "utf-8"),
            None if binary else text.get("newline"),
        )
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp, stream


def check_writable(path: str | os.PathLike[str]) -> None:
    """Raise :class:`OutputError` now if ``path`` could not be written later (a model saved
    only after hours of training): creates and removes a temporary sibling."""
    if os.path.isdir(path):
        raise OutputError("is a folder; expected a file name (or a path to replace)", path)
    tmp, stream = temporary_sibling(path, binary=True)
    stream.close()
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def publish(tmp: str, path: str | os.PathLike[str]) -> None:
    """Give ``tmp`` the permissions a plain ``open()`` would and move it over ``path``."""
    # mkstemp creates 0600 files; give the output the permissions a plain open() would.
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    os.replace(tmp, path)


@contextlib.contextmanager
def atomic_open(
    path: str | os.PathLike[str], mode: str = "w", encoding: str | None = "utf-8", newline=None
) -> Iterator[IO[Any]]:
    """Open a temporary sibling of ``path`` for writing; move it over ``path`` on success.

    On any exception the temporary file is removed and ``path`` is left untouched; an
    ``OSError`` is raised again as :class:`OutputError` naming ``path``.
    """
    if "r" in mode or "a" in mode:
        raise ValueError("atomic_open only supports write modes")
    tmp, handle = temporary_sibling(path, "b" in mode, encoding=encoding, newline=newline)
    try:
        try:
            with handle:
                yield handle
                handle.flush()
                os.fsync(handle.fileno())
            publish(tmp, path)
        except OSError as exc:
            raise output_error(exc, path) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_open(path, "w") as handle:
        handle.write(text)


def json_text(data: Any, *, indent: int | None = None) -> str:
    """The exact text :func:`write_json` writes for ``data``."""
    return json.dumps(data, indent=indent) + "\n"


def write_json(path: str | os.PathLike[str], data: Any, *, indent: int | None = None) -> None:
    """Serialise ``data`` as JSON to ``path`` atomically."""
    # One dumps + one write is about twice as fast as json.dump's many small writes.
    write_text(path, json_text(data, indent=indent))


@contextlib.contextmanager
def deferred_interrupts() -> Iterator[None]:
    """Hold Ctrl-C while a group of output files is written, so the set is never partial."""
    if os.name != "posix" or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    received: list[Any] = []
    previous = signal.signal(signal.SIGINT, lambda *args: received.append(args))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            raise KeyboardInterrupt
