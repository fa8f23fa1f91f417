"""Exceptions shared by every hdeeprm package.

Bad input must never be silently accepted: every loader raises :class:`InputError` naming the
file, the location inside it (JSON path or line number) and what was expected, so the user can
fix the file without reading hdeeprm's source.
"""

from __future__ import annotations

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


class SimulationError(HDeepRMError, RuntimeError):
    """A decision the simulator cannot carry out (unknown job, busy host, bad P-state...)."""
