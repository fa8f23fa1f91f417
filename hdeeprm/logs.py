"""Logging of hdeeprm: bounded, levelled, and written atomically.

Library code only logs through the ``hdeeprm`` logger hierarchy and installs no handler (the
package adds a :class:`logging.NullHandler`, so nothing reaches ``stderr`` unless the caller
configured logging). Only a run installs one, with :func:`run_log`, to write its
``insights.log``.

Warnings that repeat once per event (a bandwidth over-subscription starts, a job is rejected)
would make a log grow with the trace: hundreds of megabytes on a real one. They go through a
:class:`WarningTally`, which logs the first occurrence as it happens and, at the end of the
simulation, one summary with the count and the first and last occurrences. ``detail=True``
(``pybatsim.log_detail`` in the options) logs every occurrence instead.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hdeeprm._atomic import publish, temporary_sibling
from hdeeprm.errors import OutputError, output_error

#: The logger every hdeeprm module logs under (``hdeeprm.decision``, ``hdeeprm.insights``...).
ROOT_LOGGER = "hdeeprm"
#: Levels an options file may name (``pybatsim.log_level``).
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class WarningTally:
    """One kind of repeated warning, aggregated unless ``detail`` is asked for.

    Call the tally with the message's arguments at each occurrence: the first is logged at
    once (with a note that the rest are counted), later ones only update the count and the
    last arguments, which costs no formatting. :meth:`summarise` logs the count with the first
    and last occurrences, then starts counting afresh.

    Args:
        logger: where the warnings go.
        what: a short name of the event, e.g. ``"bandwidth over-subscription starts"``.
        template: the ``%``-format of one occurrence.
        detail: log every occurrence instead of a summary.
    """

    __slots__ = ("logger", "what", "template", "detail", "count", "first", "last")

    def __init__(
        self, logger: logging.Logger, what: str, template: str, *, detail: bool = False
    ) -> None:
        self.logger = logger
        self.what = what
        self.template = template
        self.detail = detail
        self.count = 0
        self.first: tuple[Any, ...] = ()
        self.last: tuple[Any, ...] = ()

    def __call__(self, *args: Any) -> None:
        self.count += 1
        self.last = args
        if self.detail:
            self.logger.warning(self.template, *args)
        elif self.count == 1:
            self.first = args
            self.logger.warning(
                self.template + " (further occurrences are counted and summarised at the end;"
                " set pybatsim.log_detail to log each)",
                *args,
            )

    def summarise(self) -> None:
        """Log how many times the warning occurred, the first and the last time; reset."""
        if self.count > 1 and not self.detail:
            self.logger.warning(
                "%s: %d occurrences in all; first: %s; last: %s",
                self.what,
                self.count,
                self.template % self.first,
                self.template % self.last,
            )
        self.reset()

    def reset(self) -> None:
        """Forget the occurrences counted so far (a new simulation starts)."""
        self.count = 0
        self.first = self.last = ()


class AtomicLogHandler(logging.Handler):
    """Writes records to a temporary file that replaces ``path`` only when :meth:`commit` is
    called. The first write error stops the run with an :class:`OutputError` (one clear
    message, instead of a logging-error report per record)."""

    def __init__(self, path: str | os.PathLike[str], level: int | str = logging.NOTSET) -> None:
        super().__init__(level)
        self.path = Path(path)
        self.tmp, self.stream = temporary_sibling(self.path, encoding="utf-8")
        self.failed: OutputError | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self.failed is not None:
            return
        text = self.format(record)
        try:
            self.stream.write(text + "\n")
        except OSError as exc:
            self.failed = output_error(exc, self.path)
            raise self.failed from None

    def commit(self) -> None:
        """Close the temporary file and move it over ``path``."""
        try:
            self.stream.flush()
            os.fsync(self.stream.fileno())
            self.stream.close()
            publish(self.tmp, self.path)
        except OSError as exc:
            self.discard()
            raise output_error(exc, self.path) from None

    def discard(self) -> None:
        """Close and remove the temporary file; ``path`` is left as it was."""
        with contextlib.suppress(OSError):
            self.stream.close()
        with contextlib.suppress(OSError):
            os.unlink(self.tmp)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.stream.close()
        super().close()


@contextlib.contextmanager
def run_log(path: str | os.PathLike[str], level: str | int) -> Iterator[AtomicLogHandler]:
    """Send every ``hdeeprm`` record at ``level`` or above to ``path`` for the duration.

    The file is written atomically: it replaces ``path`` only when the block ends normally; an
    interrupted or failed run leaves the previous file untouched and no temporary file behind.
    The ``hdeeprm`` logger's level and propagation are restored afterwards.
    """
    logger = logging.getLogger(ROOT_LOGGER)
    handler = AtomicLogHandler(path, level)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    old_level, old_propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False
    ok = False
    try:
        yield handler
        ok = True
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
        logger.propagate = old_propagate
        if ok:
            handler.commit()
        else:
            handler.discard()
        handler.close()


def set_level(level: str | int | None) -> None:
    """Set the level of the ``hdeeprm`` logger (``None``: leave it as it is).

    This is what ``log_level`` means for library objects (the environment): records below it
    are not even built; where they go is up to the application's logging configuration.
    """
    if level is None:
        return
    if isinstance(level, str) and level.upper() not in LEVELS:
        raise ValueError(f"log_level must be one of {', '.join(LEVELS)}, got {level!r}")
    logging.getLogger(ROOT_LOGGER).setLevel(level.upper() if isinstance(level, str) else level)


__all__ = ["LEVELS", "ROOT_LOGGER", "AtomicLogHandler", "WarningTally", "run_log", "set_level"]
