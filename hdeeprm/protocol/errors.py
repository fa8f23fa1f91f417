"""Errors of the Batsim protocol bridge.

Every failure of the other process (missing, crashed, silent, speaking something else) gets its
own :class:`~hdeeprm.errors.HDeepRMError` subclass, so that ``hdeeprm-launch`` and
``hdeeprm-sim`` report it in one clear line instead of a traceback or a hang.
"""

from __future__ import annotations

from hdeeprm.errors import HDeepRMError


class ProtocolError(HDeepRMError):
    """A peer sent something that is not a valid Batsim 4.x JSON message.

    Args:
        message: what is wrong and what was expected.
        where: location in the message, e.g. ``message 3, events[1].data.alloc``.
    """

    def __init__(self, message: str, where: str | None = None) -> None:
        self.message = message
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


class PeerTimeoutError(HDeepRMError, TimeoutError):
    """No message arrived from the other process within the allowed time."""


class EndpointInUseError(HDeepRMError, OSError):
    """The ZeroMQ endpoint to bind is already taken by another process."""


class BatsimNotFoundError(HDeepRMError, FileNotFoundError):
    """The Batsim executable is neither on ``PATH`` nor at the path given."""


class BatsimExitedError(HDeepRMError, RuntimeError):
    """The simulator process ended before the simulation did, or ended with an error.

    Attributes:
        returncode: its exit status (negative: killed by that signal).
        output_tail: its last output lines (stdout and stderr together).
    """

    def __init__(self, message: str, returncode: int | None, output_tail: str = "") -> None:
        self.returncode = returncode
        self.output_tail = output_tail
        text = message
        if output_tail:
            text += "\nlast output lines:\n" + output_tail
        super().__init__(text)


__all__ = [
    "BatsimExitedError",
    "BatsimNotFoundError",
    "EndpointInUseError",
    "PeerTimeoutError",
    "ProtocolError",
]
