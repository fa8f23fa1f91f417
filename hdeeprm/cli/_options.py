"""Options that several console scripts declare alike: one definition, the same flags and
meaning everywhere."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

#: ``-cw/--custom-workload`` of ``hdeeprm-launch`` and ``hdeeprm-evaluate``.
custom_workload: Callable[[Any], Any] = click.option(
    "-cw",
    "--custom-workload",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Batsim workload JSON to use instead of the options' trace.",
)


def output_dir(help: str) -> Callable[[Any], Any]:
    """``-o/--output-dir``, a folder (never a file); ``help`` says what goes in it."""
    return click.option(
        "-o",
        "--output-dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help=help,
    )
