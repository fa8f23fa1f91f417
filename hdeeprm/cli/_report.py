"""How every console script ends on a user's mistake or a Ctrl-C: one line, a known exit code.

A mistake the user can fix (an :class:`~hdeeprm.errors.HDeepRMError`) prints ``error: ...`` and
exits with 2; Ctrl-C prints what was kept (an :class:`~hdeeprm.errors.Interrupted` says so
itself) and exits with 130. No traceback reaches the user for either.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import click

from hdeeprm.errors import HDeepRMError, Interrupted

#: What a plain Ctrl-C leaves behind: every output is written atomically.
NOTHING_PARTIAL = "interrupted: no partial output files were left behind"


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
