"""``hdeeprm-metrics RUN1 RUN2 ... [-s FILE] [--format table|csv|json]``: compare runs.

Reads ``out_jobs.csv`` and ``out_schedule.csv`` of each run folder by column name; prints a
table (runs as columns, labelled by folder name) or CSV/JSON for scripts; with ``-s`` also
draws grouped bars, one panel per metric.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from hdeeprm.cli._report import Command, guarded
from hdeeprm.errors import HDeepRMError


@click.command(cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@guarded
@click.argument("runs", nargs=-1, required=True, metavar="RUN_DIR...")
@click.option(
    "-s",
    "--save",
    "save_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also draw the metrics as grouped bars into this image file.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
    help="Output: aligned table, or CSV / JSON (one record per run) for scripts.",
)
@click.option(
    "--tau",
    type=click.FloatRange(min=0, min_open=True),
    default=10.0,
    show_default=True,
    help="Bounded-slowdown threshold in seconds.",
)
@click.option(
    "--skip-first",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Leave the first N jobs (by submission) out of the metrics (warm-up).",
)
@click.option(
    "--exclude-overrun",
    is_flag=True,
    help="Leave out jobs that ran longer than they requested (thesis chapter 5's filter; "
    "reads the run folder's workload.json).",
)
@click.option("--size", default="12x6.5", show_default=True, help="Figure size in inches, WxH.")
@click.option("--dpi", type=click.FloatRange(min=10, max=1200), default=100.0, show_default=True)
def main(
    runs: tuple[str, ...],
    save_path: Path | None,
    fmt: str,
    tau: float,
    skip_first: int,
    exclude_overrun: bool,
    size: str,
    dpi: float,
) -> None:
    """Energy (J, kWh), makespan, slowdown (mean, max), bounded slowdown (mean = AVEbsld, max;
    --tau threshold), mean turnaround, mean and max waiting times of each RUN_DIR written by
    hdeeprm-launch."""
    from hdeeprm.cli.visual import parse_size

    figsize = parse_size(size)
    try:
        from hdeeprm.analysis.metrics import (
            JobFilter,
            format_csv,
            format_json,
            format_table,
            plot_metrics,
            summarize_runs,
        )

        if save_path is not None:
            from hdeeprm.analysis.plots import image_format

            image_format(save_path)  # a bad suffix fails before any work
        for run in runs:
            _check_not_a_folder_of_runs(Path(run))
        job_filter = JobFilter(tau, skip_first, exclude_overrun)
        summaries = summarize_runs(runs, job_filter)
        text = {"table": format_table, "csv": format_csv, "json": format_json}[fmt](summaries)
        click.echo(text.rstrip("\n"))
        if save_path is not None:
            import matplotlib

            matplotlib.use("Agg")
            from hdeeprm.analysis.plots import new_figure, save_figure

            save_figure(plot_metrics(summaries, new_figure(figsize)), save_path, dpi=dpi)
            click.echo(f"saved {save_path}", err=True)
    except (HDeepRMError, ValueError, OSError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)


def _check_not_a_folder_of_runs(folder: Path, shown: int = 5) -> None:
    """A folder holding run folders (a sweep, ``-nr`` repetitions) rather than being one: say
    so and name the run folders inside, instead of "no out_jobs.csv"."""
    from hdeeprm.errors import InputError

    if not folder.is_dir() or (folder / "out_jobs.csv").exists():
        return
    inside = sorted(p.parent for p in folder.glob("*/out_jobs.csv"))
    inside += sorted(p.parent for p in folder.glob("*/*/out_jobs.csv"))
    if not inside:
        return
    names = " ".join(str(p) for p in inside[:shown])
    more = f" ... ({len(inside)} in all)" if len(inside) > shown else ""
    pattern = "/*" if inside[0].parent == folder else "/*/*"
    raise InputError(
        f"a folder of {len(inside)} run folder(s), not a run folder: pass the run folders, "
        f"e.g. hdeeprm-metrics {folder}{pattern} (they are: {names}{more})",
        folder,
    )


if __name__ == "__main__":  # pragma: no cover
    main()
