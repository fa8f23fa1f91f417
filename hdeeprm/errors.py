"""Exceptions shared by every hdeeprm package.

Bad input must never be silently accepted: every loader raises :class:`InputError` naming the
file, the location inside it (JSON path or line number) and what was expected, so the user can
fix the file without reading hdeeprm's source.
"""

from __future__ import annotations

import errno
import os


class HDeepRMError(Exception):
    """Base class of every error hdeeprm raises on purpose."""


class InputError(HDeepRMError, ValueError):
    """A user-supplied file or value is malformed.

    Args:
        message: what is wrong and what was expected.
        path: the offending file, if any.
        where: location inside the file: a JSON path such as ``clusters[0].nodes[1].type``
            or ``line 42``.
    """

    def __init__(
        self, message: str, path: str | os.PathLike[str] | None = None, where: str | None = None
    ) -> None:
        self.message = message
        self.path = None if path is None else os.fspath(path)
        self.where = where
        prefix = ""
        if self.path is not None:
            prefix = self.path
            if where:
                prefix += f", {where}"
            prefix += ": "
        elif where:
            prefix = f"{where}: "
        super().__init__(prefix + message)


class OutputError(HDeepRMError, OSError):
    """An output file or folder cannot be written (read-only folder, disk full, a path under a
    regular file...). Nothing half-written is left behind: the temporary file is removed.

    Args:
        message: what failed and what to do.
        path: the file or folder that could not be written.
    """

    def __init__(self, message: str, path: str | os.PathLike[str] | None = None) -> None:
        self.message = message
        self.path = None if path is None else os.fspath(path)
        text = f"{self.path}: {message}" if self.path is not None else message
        # OSError's own constructor would reinterpret the arguments: set the text directly.
        Exception.__init__(self, text)

    def __str__(self) -> str:
        return str(self.args[0])


def output_error(exc: OSError, path: str | os.PathLike[str]) -> OutputError:
    """The :class:`OutputError` for an ``OSError`` raised while writing ``path``."""
    if isinstance(exc, OutputError):
        return exc
    reason = exc.strerror or str(exc) or type(exc).__name__
    hints = {
        errno.ENOSPC: "free some space or choose another run folder (-o)",
        errno.EDQUOT: "free some space or choose another run folder (-o)",
        errno.EROFS: "the file system is read-only: choose another run folder (-o)",
        errno.EACCES: "no permission to write there: choose another run folder (-o)",
        errno.EPERM: "no permission to write there: choose another run folder (-o)",
        errno.ENOTDIR: "a part of the path is a regular file, not a folder",
        errno.ENOENT: "a part of the path does not exist and cannot be created",
    }
    hint = hints.get(exc.errno or 0)
    where = getattr(exc, "filename", None)
    detail = f" ({where})" if where and os.fspath(where) != os.fspath(path) else ""
    return OutputError(f"cannot write: {reason}{detail}" + (f"; {hint}" if hint else ""), path)


def path_argument(value: object, argument: str, expected: str, instead: str = "") -> str:
    """``os.fspath(value)``, or a :class:`TypeError` naming the argument and what it takes
    (a parsed JSON document passed for a file's path is a common slip in the Python API).

    Args:
        value: what the caller passed.
        argument: the function and argument, e.g. ``load_options(path)``.
        expected: what the path should lead to, e.g. ``an options file``.
        instead: where a non-path value belongs instead, e.g. ``options_from_json(doc, path)``.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        path = os.fspath(value)
        if isinstance(path, str):
            return path
    hint = f"; for an already parsed document use {instead}" if instead else ""
    raise TypeError(
        f"{argument}: expected the path of {expected} (str or os.PathLike), got a "
        f"{type(value).__name__}{hint}"
    )


class SimulationError(HDeepRMError, RuntimeError):
    """A decision the simulator cannot carry out (unknown job, busy host, bad P-state...)."""


class VectorEnvError(HDeepRMError, RuntimeError):
    """A sub-environment of a vector environment raised (or its worker process died).

    Args:
        env: index of the sub-environment in the vector.
        method: what was called (``step``, ``reset``, an attribute name, the factory...).
        kind: the original exception's class name (``WorkerDied`` for a dead worker).
        message: the original exception's message.
        worker: the worker process number (None: the calling process).
        remote_traceback: the worker's formatted traceback, when it raised there.
    """

    def __init__(
        self,
        env: int,
        method: str,
        kind: str,
        message: str,
        worker: int | None = None,
        remote_traceback: str | None = None,
    ) -> None:
        self.env = env
        self.method = method
        self.kind = kind
        self.message = message
        self.worker = worker
        self.remote_traceback = remote_traceback
        where = "the calling process" if worker is None else f"worker process {worker}"
        super().__init__(f"environment {env} ({where}) raised {kind} in {method}: {message}")


class Interrupted(KeyboardInterrupt):
    """Ctrl-C, caught and cleaned up after; ``message`` says what was kept (for example the
    model of the last finished training episode)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
