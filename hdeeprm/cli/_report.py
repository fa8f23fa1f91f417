"""How every console script ends on a user's mistake, a bug or a Ctrl-C: one line, a known
exit code.

A mistake the user can fix (an :class:`~hdeeprm.errors.HDeepRMError`, or a file that cannot be
read) prints ``error: ...`` and exits with 2; Ctrl-C prints what was kept (an
:class:`~hdeeprm.errors.Interrupted` says so itself) and exits with 130. Anything else is a bug
in hdeeprm: one line saying so and exit code 1, with the full traceback only under ``--debug``
(:func:`guarded`). No traceback reaches the user otherwise.
"""

from __future__ import annotations

import functools
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import click

from hdeeprm.errors import HDeepRMError, Interrupted

#: What a plain Ctrl-C leaves behind: every output is written atomically.
NOTHING_PARTIAL = "interrupted: no partial output files were left behind"

F = TypeVar("F", bound=Callable[..., Any])

_debug = False


def _set_debug(_ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    global _debug
    _debug = bool(value)


def _user_error(exc: BaseException) -> str | None:
    """The one-line message of a mistake the user can fix, or ``None`` for a bug."""
    if isinstance(exc, HDeepRMError):
        return str(exc)
    if isinstance(exc, OSError) and exc.filename is not None:
        # A file that is missing, a folder given for a file, no permission: the user's to fix.
        return f"{exc.filename}: {exc.strerror or type(exc).__name__}"
    return None


@contextmanager
def reported(interrupted: str = NOTHING_PARTIAL) -> Iterator[None]:
    """Run the command's body; turn user errors and Ctrl-C into one line and an exit code."""
    try:
        yield
    except HDeepRMError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except Interrupted as exc:
        click.echo(f"\n{exc.message}", err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        click.echo(f"\n{interrupted}", err=True)
        sys.exit(130)


class _OneLineUsage:
    """Command-line mistakes (a missing argument, a folder given for a file) in one line,
    ``Error: ...``, without the usage and help hint click prints before it (exit code 2)."""

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:
            return super().make_context(*args, **kwargs)  # type: ignore[misc]
        except click.UsageError as exc:
            exc.ctx = None  # click prints the usage and the hint only with a context
            raise

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)  # type: ignore[misc]
        except click.UsageError as exc:  # raised by the callback (a bad parameter value)
            exc.ctx = None
            raise


class Command(_OneLineUsage, click.Command):
    """The class of every hdeeprm console command (``@click.command(cls=Command)``)."""


class Group(_OneLineUsage, click.Group):
    """The class of hdeeprm's command groups; their subcommands are :class:`Command`."""

    command_class = Command


def guarded(command: F) -> F:
    """Give a command's callback the ``--debug`` option and the exit codes of this module.

    Place it right under ``@click.command()``: an error the callback does not handle ends in
    one line (exit 2 for the user's mistakes, exit 1 and "internal error" for bugs).
    """

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except KeyboardInterrupt:  # a command without its own report (see reported)
            click.echo(f"\n{NOTHING_PARTIAL}", err=True)
            sys.exit(130)
        except Exception as exc:  # noqa: BLE001 - the last line of defence of a console script
            message = _user_error(exc)
            if message is not None:
                click.echo(f"error: {message}", err=True)
                sys.exit(2)
            if _debug:
                traceback.print_exc()
            hint = "" if _debug else " (run again with --debug for the full trace)"
            click.echo(
                f"internal error, a bug in hdeeprm: {type(exc).__name__}: {exc}{hint}", err=True
            )
            sys.exit(1)

    option = click.option(
        "--debug",
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=_set_debug,
        help="On an internal error (a bug), print its full traceback.",
    )
    return option(run)  # type: ignore[return-value]
