"""``hdeeprm-traces``: list, locate and download the real workload traces.

``list`` shows the catalogue and where each trace is found; ``path NAME`` prints one trace's
path (for scripts: ``--trace "$(hdeeprm-traces path KTH-SP2-1996-2.1-cln.swf.gz)"``);
``fetch NAME... | --all`` downloads into the per-user cache and checks the SHA-256. Errors are
one line on standard error: exit 1 when a trace is missing, 2 when a download fails.
"""

from __future__ import annotations

import sys

import click

from hdeeprm.cli._report import Group, guarded
from hdeeprm.errors import HDeepRMError, InputError
from hdeeprm.workload import archive


def _fail(message: str, code: int) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Find and download the real workload traces (searched in the folders of $HDEEPRM_TRACES,
    separated by the path separator, then in the per-user cache)."""


@main.command("list")
@guarded
def list_traces() -> None:
    """The catalogue, and where each trace is found ("missing" when nowhere)."""
    rows = []
    for info in archive.CATALOGUE.values():
        found = archive.find_trace(info.name)
        rows.append((info.name, f"{info.jobs:,}", f"{info.processors:,}", str(found or "missing")))
    headers = ("trace", "jobs", "processors", "found at")
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    for row in [headers, *rows]:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    click.echo("")
    for info in archive.CATALOGUE.values():
        note = f". Note: {info.note}" if info.note else ""
        click.echo(f"{info.name}: {info.description}{note}")
        click.echo(f"  {info.url}")
    click.echo("")
    folders = ", ".join(str(f) for f in archive.search_folders())
    click.echo(f"searched in order: {folders}")


@main.command("path")
@guarded
@click.argument("name")
def path(name: str) -> None:
    """Print the path of trace NAME (its archive file name); exit 1 when it is missing."""
    try:
        click.echo(str(archive.trace_path(name)))
    except InputError as exc:
        _fail(exc.message, 1)


@main.command("fetch")
@guarded
@click.argument("names", nargs=-1)
@click.option("--all", "fetch_all", is_flag=True, help="Every trace of the catalogue.")
@click.option(
    "--accept-checksum",
    is_flag=True,
    help="Install a download whose SHA-256 does not match the pinned one (results made with it "
    "may differ from the documented ones).",
)
@click.option(
    "--force", is_flag=True, help="Download even when the trace is already found somewhere."
)
def fetch(names: tuple[str, ...], fetch_all: bool, accept_checksum: bool, force: bool) -> None:
    """Download traces NAMES (or --all) into the per-user cache, checking their SHA-256."""
    if fetch_all:
        names = tuple(archive.CATALOGUE)
    if not names:
        _fail("name the traces to fetch, or give --all (see `hdeeprm-traces list`)", 2)
    try:
        for name in names:
            archive.catalogued(name)
    except InputError as exc:
        _fail(exc.message, 2)
    for name in names:
        found = archive.find_trace(name)
        if found is not None and not force:
            click.echo(f"{name}: already at {found}")
            continue
        click.echo(f"{name}: downloading {archive.CATALOGUE[name].url}", err=True)
        try:
            installed = archive.fetch_trace(name, accept_checksum=accept_checksum)
        except HDeepRMError as exc:
            _fail(str(exc), 2)
        if accept_checksum and not archive.verify(archive.CATALOGUE[name], installed):
            click.echo(f"warning: {name} does not match its pinned SHA-256", err=True)
        click.echo(f"{name}: installed at {installed}")


if __name__ == "__main__":  # pragma: no cover
    main()
