"""``hdeeprm-sweep``: run an options file over a grid, in parallel, and gather one table.

Local processes by default (no extra dependency); ``--ray`` starts a local Ray instance and
``--ray ADDRESS`` joins an existing cluster (``ray start --head`` on one machine, or many).
Finished runs are kept: running the same command again only runs what is missing or failed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from hdeeprm.cli import _options
from hdeeprm.cli._report import Command, guarded, reported


@click.command(cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@guarded
@click.argument("sweep_file", type=click.Path(dir_okay=False, path_type=Path), required=False)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Runs at once [default: the machine's cores; with --ray, the cluster's CPUs]. "
    "-j 1 runs everything in this process.",
)
@click.option(
    "--ray",
    "ray_address",
    is_flag=False,
    flag_value="local",
    default=None,
    metavar="[ADDRESS]",
    help="Run on Ray: alone, a new local Ray instance; with an address (e.g. 'auto', "
    "'ray://head:10001', 'head:6379'), an existing cluster. Needs pip install 'hdeeprm[ray]'.",
)
@_options.output_dir("Sweep folder [default: the sweep file's output_dir].")
@click.option("--list", "list_only", is_flag=True, help="Print the runs and exit.")
@click.option("--no-plots", is_flag=True, help="Do not draw the comparison plot.")
@click.option("-q", "--quiet", is_flag=True, help="No progress line.")
def main(
    sweep_file: Path | None,
    jobs: int | None,
    ray_address: str | None,
    output_dir: Path | None,
    list_only: bool,
    no_plots: bool,
    quiet: bool,
) -> None:
    """Run the sweep described by SWEEP_FILE (format: docs/sweep.md)."""
    if sweep_file is None:
        if ray_address is None or not ray_address.endswith(".json"):
            raise click.UsageError("Missing argument 'SWEEP_FILE'.")
        # "hdeeprm-sweep --ray sweep.json": the file was taken as --ray's address.
        sweep_file, ray_address = Path(ray_address), "local"
    with reported("interrupted: finished runs are kept; run the same command to resume"):
        code = _sweep(sweep_file, jobs, ray_address, output_dir, list_only, no_plots, quiet)
    sys.exit(code)


def _sweep(
    sweep_file: Path,
    jobs: int | None,
    ray_address: str | None,
    output_dir: Path | None,
    list_only: bool,
    no_plots: bool,
    quiet: bool,
) -> int:
    from hdeeprm._inputfile import check_input_file
    from hdeeprm.sweep import (
        ProgressPrinter,
        check_output_dir,
        load_sweep,
        make_backend,
        results_frame,
        run_sweep,
        write_plots,
        write_table,
    )

    check_input_file(sweep_file, "sweep file")  # a FIFO would block the reader forever
    sweep = load_sweep(sweep_file, output_dir)
    if list_only:
        for run in sweep.runs:
            click.echo(run.run_id)
        click.echo(
            f"{len(sweep.runs)} run(s), {len(sweep.inputs_dirs)} inputs folder(s), "
            f"in {sweep.output_dir}",
            err=True,
        )
        return 0
    check_output_dir(sweep.output_dir)  # before a backend (or a Ray cluster) is started
    backend = make_backend(jobs, ray_address)
    if not quiet:
        click.echo(
            f"sweep: {len(sweep.runs)} run(s) in {sweep.output_dir}; backend {backend.name} "
            f"with {backend.workers} worker(s)",
            err=True,
        )
    result = run_sweep(sweep, backend, on_progress=None if quiet else ProgressPrinter())
    frame = results_frame(sweep, result.records)
    written = write_table(frame, sweep.output_dir)
    if not no_plots:
        plot = write_plots(sweep, result.records, sweep.output_dir)
        if plot is not None:
            written.append(plot)
    for path in written:
        click.echo(f"wrote {path}")
    failed = result.failed
    for record in failed:
        click.echo(f"failed: {record['run_id']}: {record['error']}", err=True)
    if failed:
        click.echo(
            f"{len(failed)} of {len(result.records)} run(s) failed (details in each run's "
            "error.txt); run the same command again to retry them",
            err=True,
        )
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    main()
