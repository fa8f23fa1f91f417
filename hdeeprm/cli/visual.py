"""``hdeeprm-visual [RUN_DIR] VISUALIZATION [-s FILE]``: one figure of a run folder.

Without ``-s`` the figure opens in a window when a display exists; otherwise the user is told
to save it. Saving uses the non-interactive Agg backend and writes the image atomically.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from hdeeprm.cli._report import Command, guarded
from hdeeprm.errors import HDeepRMError

#: Same names and order as hdeeprm.analysis.plots.VISUALIZATIONS (kept literal so --help does
#: not import matplotlib; a test checks they agree).
NAMES = (
    "queue_size",
    "utilization",
    "lifecycle",
    "gantt",
    "gantt_no_label",
    "core_bubbles",
    "mem_bubbles",
    "mem_bw_overutilization",
    "losses",
    "rewards",
    "action_preferences",
)


def has_display() -> bool:
    """Whether a window can be opened (X11/Wayland on Unix; always on macOS and Windows)."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def parse_size(text: str) -> tuple[float, float]:
    """``"10x6"`` -> ``(10.0, 6.0)`` inches."""
    try:
        width, height = (float(part) for part in text.lower().split("x"))
    except ValueError:
        raise click.BadParameter(f"{text!r}: expected WIDTHxHEIGHT in inches, e.g. 10x6") from None
    if not (0 < width <= 100 and 0 < height <= 100):
        raise click.BadParameter(f"{text!r}: width and height must be in (0, 100] inches")
    return width, height


@click.command(cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@guarded
@click.argument("args", nargs=-1, metavar="[RUN_DIR] VISUALIZATION")
@click.option(
    "-s",
    "--save",
    "save_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Save the figure to this file (format from the suffix: png, pdf, svg...).",
)
@click.option(
    "--workload",
    "workload_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The run's Batsim workload, for runs made with -cw (mem_bubbles) "
    "[default: RUN_DIR/workload.json].",
)
@click.option("--size", default="10x6", show_default=True, help="Figure size in inches, WxH.")
@click.option("--dpi", type=click.FloatRange(min=10, max=1200), default=100.0, show_default=True)
def main(
    args: tuple[str, ...],
    save_path: Path | None,
    workload_path: Path | None,
    size: str,
    dpi: float,
) -> None:
    """Draw VISUALIZATION of the run in RUN_DIR (default: the current folder).

    VISUALIZATION is one of: queue_size, utilization, lifecycle, gantt, gantt_no_label,
    core_bubbles, mem_bubbles, mem_bw_overutilization, losses, rewards, action_preferences
    (the last three need the training_log.csv of a learning run).
    """
    if len(args) == 1:
        run_dir, name = ".", args[0]
    elif len(args) == 2:
        run_dir, name = args
    else:
        raise click.UsageError("expected [RUN_DIR] VISUALIZATION")
    if name not in NAMES:
        raise click.BadParameter(
            f"{name!r} is not one of: {', '.join(NAMES)}", param_hint="VISUALIZATION"
        )
    figsize = parse_size(size)
    if save_path is None and not has_display():
        click.echo(
            f"error: no display to show the figure; save it instead with -s FILE, e.g. "
            f"hdeeprm-visual {run_dir} {name} -s {name}.png",
            err=True,
        )
        sys.exit(2)
    try:
        _draw(Path(run_dir), name, save_path, figsize, dpi, workload_path)
    except (HDeepRMError, ValueError, OSError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)


def _draw(
    run_dir: Path,
    name: str,
    save_path: Path | None,
    figsize: tuple[float, float],
    dpi: float,
    workload_path: Path | None = None,
) -> None:
    import matplotlib

    if save_path is not None:
        matplotlib.use("Agg")
    from hdeeprm.analysis.plots import image_format, new_figure, save_figure, visualize
    from hdeeprm.analysis.runfolder import RunFolder

    if save_path is not None:
        image_format(save_path)  # a bad suffix fails before any drawing
    if workload_path is not None:
        from hdeeprm._inputfile import check_input_file

        check_input_file(workload_path, "workload file", "--workload")
    run = RunFolder(run_dir, workload=workload_path)
    if save_path is not None:
        fig = visualize(name, run, new_figure(figsize))
        save_figure(fig, save_path, dpi=dpi)
        click.echo(f"saved {save_path}", err=True)
        return
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=figsize, dpi=dpi, layout="constrained")
    try:
        visualize(name, run, fig)
    except BaseException:
        plt.close(fig)
        raise
    plt.show()


if __name__ == "__main__":  # pragma: no cover
    main()
