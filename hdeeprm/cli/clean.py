"""``hdeeprm-clean [DIR] [--yes] [--dry-run]``: remove the files hdeeprm generated in DIR.

Lists them first and asks for confirmation (unless ``--yes``). Only known output names,
inputs recorded as generated in ``.hdeeprm_inputs.json``, stray ``.tmp-*`` files and
``run_NNN/`` folders are candidates: options files, models and anything else stay.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from hdeeprm.analysis.clean import execute, plan_clean
from hdeeprm.cli._report import Command, guarded
from hdeeprm.errors import HDeepRMError


@click.command(cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@guarded
@click.argument("folder", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("-n", "--dry-run", is_flag=True, help="Only list what would be removed.")
def main(folder: Path, yes: bool, dry_run: bool) -> None:
    """Remove the files hdeeprm generated in FOLDER (default: the current folder)."""
    try:
        plan = plan_clean(folder)
    except HDeepRMError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    for path, why in plan.kept:
        click.echo(f"keeping {path.relative_to(plan.root)} ({why})", err=True)
    if not plan:
        click.echo(f"nothing to clean in {folder}")
        return
    lines = plan.describe()
    click.echo(f"{len(lines)} generated file(s)/folder(s) in {folder}:")
    for line in lines:
        click.echo(f"  {line}")
    if dry_run:
        click.echo("dry run: nothing removed")
        return
    if not yes and not click.confirm("Remove them?", default=False):
        click.echo("nothing removed")
        sys.exit(1)
    removed = execute(plan)
    for path in plan.folders:
        if path.exists():
            click.echo(f"kept {path.relative_to(plan.root)}/ (not empty any more)", err=True)
    click.echo(f"removed {removed} entr{'y' if removed == 1 else 'ies'}")


if __name__ == "__main__":  # pragma: no cover
    main()
