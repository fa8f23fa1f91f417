"""The figures of ``hdeeprm-visual`` (thesis 4.3 and chapter 5), one function per visualization.

Every function takes a :class:`~hdeeprm.analysis.runfolder.RunFolder` and optionally the
:class:`~matplotlib.figure.Figure` to draw on, and returns the figure. Figures are built
without pyplot (no global state, nothing to close) unless the caller passes a pyplot figure to
show it in a window.

They are made to stay readable at Gaia scale (2,280 cores, 50,000 jobs): series are step
functions over change points (one line, not one artist per job), Gantt rectangles and
over-utilization spans are single :class:`~matplotlib.collections.PolyCollection` objects
(rasterised when large), Gantt labels are drawn only on boxes big enough to hold them, and the
time axis switches to hours or days on long spans.

evalys 4.0.7 (installed, works under pandas 3) draws the Gantt chart, the lifecycle and the
load curves, but with one matplotlib artist and one label per job (2.5 s and an unreadable
chart at 2,000 jobs), in figures it creates and shows itself; so the drawing here is our own.
The queue and utilization series equal evalys's ``compute_load`` (checked in the tests).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

import numpy as np

from hdeeprm._atomic import atomic_open
from hdeeprm.analysis import series as ts
from hdeeprm.analysis.runfolder import (
    HIERARCHY_FILE,
    JOBS_FILE,
    PROB_PREFIX,
    RunFolder,
    RunFolderError,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.colors import ListedColormap
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

#: Default figure size in inches (1000 x 600 pixels at the default 100 dpi).
DEFAULT_SIZE = (10.0, 6.0)
#: Beyond this many rectangles a collection is rasterised in vector outputs (PDF, SVG).
RASTER_THRESHOLD = 5000
#: At most this many Gantt labels (the largest boxes win).
MAX_LABELS = 400
GANTT_LABEL_FONTSIZE = 8.0
MIN_LABEL_FONTSIZE = 3.5


def new_figure(size: tuple[float, float] = DEFAULT_SIZE) -> Figure:
    """A figure outside pyplot, with constrained layout (titles and legends never overlap)."""
    from matplotlib.figure import Figure

    return Figure(figsize=size, layout="constrained")


def image_format(path: str | os.PathLike[str]) -> str:
    """The image format of ``path``'s suffix; ``ValueError`` if matplotlib cannot write it."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    suffix = os.path.splitext(os.fspath(path))[1].lower().lstrip(".")
    supported = FigureCanvasAgg.get_supported_filetypes()
    if suffix not in supported:
        raise ValueError(
            f"cannot save {os.fspath(path)!r}: unknown image format {suffix!r}; use one of "
            + ", ".join(sorted(supported))
        )
    return suffix


def save_figure(fig: Figure, path: str | os.PathLike[str], dpi: float = 100.0) -> None:
    """Write ``fig`` atomically; the format comes from the file suffix (png, pdf, svg...)."""
    suffix = image_format(path)
    with atomic_open(path, "wb") as handle:
        fig.savefig(handle, format=suffix, dpi=dpi)


def time_unit(span: float) -> tuple[float, str]:
    """Divisor and unit name for a time axis covering ``span`` seconds."""
    if span <= 2 * 3600:
        return 1.0, "s"
    if span <= 3 * 86400:
        return 3600.0, "h"
    return 86400.0, "days"


def _end_time(run: RunFolder) -> float:
    """Last instant of the run: the last finish (or submission, if nothing ran)."""
    jobs = run.jobs
    candidates = [0.0]
    if len(jobs):
        candidates.append(float(np.nanmax(jobs.submit)))
        if jobs.ran.any():
            candidates.append(float(np.nanmax(jobs.finish)))
    return max(candidates)


def _header(fig: Figure, title: str, run: RunFolder) -> None:
    fig.suptitle(title)
    fig.text(0.002, 0.004, run.name, ha="left", va="bottom", fontsize="x-small", color="0.4")


def _step(
    ax: Axes,
    times: np.ndarray,
    values: np.ndarray,
    end: float,
    scale: float,
    *,
    fill: bool = False,
    **kwargs,
) -> None:
    """Draw a step series from 0 to ``end`` (one line; no artist per event)."""
    if len(times) == 0:
        times, values = np.zeros(1), np.zeros(1)
    first = values[0] if times[0] <= 0 else 0.0
    t = np.concatenate([[0.0], times, [max(end, float(times[-1]))]])
    v = np.concatenate([[first], values, [values[-1]]])
    ax.step(t / scale, v, where="post", **kwargs)
    if fill:
        ax.fill_between(
            t / scale, v, step="post", alpha=0.3, color=kwargs.get("color"), linewidth=0
        )


def _time_axes(ax: Axes, end: float) -> float:
    scale, unit = time_unit(end)
    ax.set_xlabel(f"time ({unit})")
    ax.set_xlim(0, end / scale if end > 0 else 1)
    ax.grid(True, alpha=0.3)
    return scale


# --------------------------------------------------------------------------- job timelines


def plot_queue_size(run: RunFolder, fig: Figure | None = None) -> Figure:
    """Pending core requests over time (thesis 5.2.2, figure 5.4)."""
    fig = fig if fig is not None else new_figure()
    jobs = run.jobs
    end = _end_time(run)
    ax = fig.subplots()
    scale = _time_axes(ax, end)
    times, values = ts.queue_cores(jobs)
    _step(ax, times, values, end, scale, fill=True, color="C1", label="pending core requests")
    mean = ts.time_average(times, values, 0.0, end)
    ax.axhline(mean, color="C1", linestyle="--", linewidth=1, label=f"time mean ({mean:,.1f})")
    ax.set_ylabel("queued core requests (cores)")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper right")
    _header(fig, "Queue size", run)
    return fig


def plot_utilization(run: RunFolder, fig: Figure | None = None) -> Figure:
    """Busy cores over time against the platform's cores (thesis 5.2.2, figure 5.3)."""
    fig = fig if fig is not None else new_figure()
    jobs = run.jobs
    end = _end_time(run)
    nb_cores = run.nb_cores
    ax = fig.subplots()
    scale = _time_axes(ax, end)
    times, values = ts.busy_cores(jobs)
    _step(ax, times, values, end, scale, fill=True, color="C0", label="busy cores")
    ax.axhline(nb_cores, color="k", linewidth=1.2, label=f"platform cores ({nb_cores:,})")
    mean = ts.time_average(times, values, 0.0, end)
    share = f" = {100 * mean / nb_cores:.1f}%" if nb_cores else ""
    ax.axhline(
        mean, color="C0", linestyle="--", linewidth=1, label=f"time mean ({mean:,.1f}{share})"
    )
    ax.set_ylabel("cores")
    ax.set_ylim(0, max(nb_cores, float(values.max()) if len(values) else 1) * 1.05)
    ax.legend(loc="lower right")
    _header(fig, "Core utilization", run)
    return fig


def plot_lifecycle(run: RunFolder, fig: Figure | None = None) -> Figure:
    """Arrival, start and completion of every job; y = requested cores (thesis figure 5.1)."""
    fig = fig if fig is not None else new_figure()
    jobs = run.jobs
    end = _end_time(run)
    axes = fig.subplots(3, 1, sharex=True, sharey=True, gridspec_kw={"hspace": 0.0})
    ran = jobs.ran
    many = len(jobs) > 2000
    regions = (
        ("completion", jobs.finish[ran], jobs.res[ran], "C3", "|"),
        ("start", jobs.start[ran], jobs.res[ran], "C2", ">"),
        ("arrival", jobs.submit, jobs.res, "C0", "."),
    )
    scale = _time_axes(axes[-1], end)
    for ax, (name, times, cores, color, marker) in zip(axes, regions):
        size = 6 if many else 24
        ax.scatter(
            times / scale,
            cores,
            s=size * 4 if marker == "|" else size,
            c=color,
            marker=marker,
            alpha=0.5,
            linewidths=0.8,
            rasterized=many,
            label=f"{name} ({len(times):,} jobs)",
        )
        ax.set_ylabel(f"{name}\n(cores)")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper right", fontsize="small", markerscale=1.5)
    if len(jobs) and np.nanmax(jobs.res) >= 64 * max(1.0, float(np.nanmin(jobs.res))):
        axes[0].set_yscale("log")
    # A small margin, so that markers at time 0 and at the end are not cut in half.
    right = end / scale if end > 0 else 1.0
    axes[0].set_xlim(-0.01 * right, 1.01 * right)
    axes[0].margins(y=0.15)
    _header(fig, "Job life cycles", run)
    return fig


def _rectangles(x0: np.ndarray, x1: np.ndarray, y0: np.ndarray, y1: np.ndarray) -> np.ndarray:
    """Vertices ``(n, 4, 2)`` of axis-aligned rectangles, for one PolyCollection."""
    verts = np.empty((len(x0), 4, 2))
    verts[:, 0, 0] = verts[:, 1, 0] = x0
    verts[:, 2, 0] = verts[:, 3, 0] = x1
    verts[:, 0, 1] = verts[:, 3, 1] = y0
    verts[:, 1, 1] = verts[:, 2, 1] = y1
    return verts


def plot_gantt(run: RunFolder, fig: Figure | None = None, *, labels: bool = True) -> Figure:
    """Jobs over cores: one rectangle per allocated core interval (thesis figure 5.7).

    With ``labels``, job ids are written inside the boxes large enough to hold them (at most
    :data:`MAX_LABELS`, the largest first); the axes title says how many were labelled.
    """
    from matplotlib.collections import PolyCollection

    fig = fig if fig is not None else new_figure()
    jobs = run.jobs
    end = _end_time(run)
    nb_cores = run.nb_cores
    rows, lows, highs = run.allocations
    ran = jobs.ran[rows]
    rows, lows, highs = rows[ran], lows[ran], highs[ran]
    ax = fig.subplots()
    scale = _time_axes(ax, end)
    x0 = jobs.start[rows] / scale
    x1 = jobs.finish[rows] / scale
    colors = _job_colors(rows)
    n = len(rows)
    collection = PolyCollection(
        # an (n, 4, 2) array is n polygons; the stubs ask for a Sequence of them
        _rectangles(x0, x1, lows.astype(float), highs + 1.0),  # type: ignore[arg-type]
        facecolors=colors,
        edgecolors="k" if n <= 2000 else "face",
        linewidths=0.3 if n <= 2000 else 0.0,
        alpha=0.85,
        rasterized=n > RASTER_THRESHOLD,
    )
    ax.add_collection(collection)
    ax.set_ylim(0, max(nb_cores, int(highs.max()) + 1 if n else 1))
    # the default locator (AutoLocator) is a MaxNLocator, which takes ``integer``
    cast("MaxNLocator", ax.yaxis.get_major_locator()).set_params(integer=True)
    ax.set_ylabel("core id")
    nb_ran = int(jobs.ran.sum())
    subtitle = f"{nb_ran:,} jobs on {nb_cores:,} cores"
    if labels and n:
        shown = _gantt_labels(fig, ax, rows, x0, x1, lows, highs, jobs.ids)
        subtitle += f"; {shown:,} labelled" + (
            "" if shown == nb_ran else " (the other boxes are too small for their id)"
        )
    ax.set_title(subtitle, fontsize="small")
    title = "Gantt chart" if labels else "Gantt chart (no labels)"
    _header(fig, title, run)
    return fig


def _job_colors(rows: np.ndarray) -> np.ndarray:
    from matplotlib import colormaps

    palette = np.asarray(cast("ListedColormap", colormaps["tab20"]).colors)
    return palette[rows % len(palette)]


def _gantt_labels(
    fig: Figure,
    ax: Axes,
    rows: np.ndarray,
    x0: np.ndarray,
    x1: np.ndarray,
    lows: np.ndarray,
    highs: np.ndarray,
    ids: np.ndarray,
) -> int:
    """Label each job in its largest box when the id fits; return how many were labelled."""
    width_in, height_in = fig.get_size_inches()
    # Axes size in points, roughly (constrained layout leaves about 85% x 78%).
    ax_w, ax_h = width_in * 72 * 0.85, height_in * 72 * 0.78
    xspan = np.diff(ax.get_xlim())[0]
    yspan = np.diff(ax.get_ylim())[0]
    w_pt = (x1 - x0) / xspan * ax_w
    h_pt = (highs + 1 - lows) / yspan * ax_h
    area = w_pt * h_pt
    # Largest box of each job: sort by area, keep the first per job.
    order = np.argsort(-area, kind="stable")
    _, first = np.unique(rows[order], return_index=True)
    best = order[first]
    # Font shrinks with the box down to MIN_LABEL_FONTSIZE (legible when zoomed or in PDF).
    size = np.clip(h_pt[best] * 0.9, MIN_LABEL_FONTSIZE, GANTT_LABEL_FONTSIZE)
    text_w = np.array([len(str(ids[r])) for r in rows[best]]) * 0.62 * size
    fits = (w_pt[best] >= text_w + 2) & (h_pt[best] >= MIN_LABEL_FONTSIZE)
    keep = np.argsort(-area[best[fits]], kind="stable")[:MAX_LABELS]
    chosen, sizes = best[fits][keep], size[fits][keep]
    for k, fontsize in zip(chosen, sizes):
        ax.text(
            (x0[k] + x1[k]) / 2,
            (lows[k] + highs[k] + 1) / 2,
            str(ids[rows[k]]),
            ha="center",
            va="center",
            fontsize=float(fontsize),
            clip_on=True,
        )
    return len(chosen)


def plot_gantt_no_label(run: RunFolder, fig: Figure | None = None) -> Figure:
    """:func:`plot_gantt` without job ids."""
    return plot_gantt(run, fig, labels=False)


# --------------------------------------------------------------------------- conflicts


def check_hosts_in_platform(run: RunFolder) -> None:
    """Refuse an ``out_jobs.csv`` whose jobs ran on hosts (cores) the run folder's platform
    (``res_hierarchy.json``) does not have: idle cores would be counted against the wrong
    total and the figure would be silently wrong (outputs of another platform's run)."""
    if run.jobs.allocated is None or not (run.path / HIERARCHY_FILE).is_file():
        return  # the core count comes from the allocations themselves: consistent
    rows, lows, highs = run.allocations
    nb_cores = run.nb_cores
    outside = np.flatnonzero(highs >= nb_cores)
    if outside.size == 0:
        return
    first = int(outside[0])
    row = int(rows[first])
    host = max(int(lows[first]), nb_cores)
    raise RunFolderError(
        f"job {run.jobs.ids[row]!r} ran on host {host}, which the platform of this run folder "
        f"({HIERARCHY_FILE}: {nb_cores} cores, hosts 0-{nb_cores - 1}) does not have; these "
        "outputs come from another platform: run again into a fresh folder (-o), or put the "
        f"run's own {HIERARCHY_FILE} beside them",
        run.path / JOBS_FILE,
        f"line {row + 2}",
    )


def plot_core_bubbles(run: RunFolder, fig: Figure | None = None) -> Figure:
    """Idle cores while jobs wait (thesis 5.2.2: utilization bubbles)."""
    check_hosts_in_platform(run)
    fig = fig if fig is not None else new_figure()
    jobs = run.jobs
    end = _end_time(run)
    ax = fig.subplots()
    scale = _time_axes(ax, end)
    times, idle, requested = ts.core_bubbles(jobs, run.nb_cores)
    wasted = ts.time_average(times, idle, 0.0, end) * end / 3600.0
    _step(
        ax,
        times,
        idle,
        end,
        scale,
        fill=True,
        color="C3",
        label=f"idle cores while jobs wait ({wasted:,.1f} core-hours)",
    )
    _step(
        ax, times, requested, end, scale, color="C1", linewidth=0.8, label="pending core requests"
    )
    ax.set_ylabel("cores")
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper right")
    _header(fig, "Core bubbles", run)
    return fig


def job_memory(run: RunFolder) -> np.ndarray:
    """Memory of each job of ``out_jobs.csv`` in MB: the profile's ``mem`` per core x cores.

    Profiles without ``mem`` (``delay`` profiles, hand-written workloads) count as 0.
    """
    jobs = run.jobs
    workload = run.workload
    profiles = jobs.profile
    if profiles is None:
        by_id = {job.id: job.profile for job in workload.jobs}
        profiles = np.array([by_id.get(str(i), "") for i in jobs.ids], dtype=object)
    per_profile: dict[str, float] = {}
    for name, profile in workload.profiles.items():
        value = profile.extra.get("mem", 0.0)
        per_profile[name] = float(value) if isinstance(value, (int, float)) else 0.0
    unknown = sorted({str(p) for p in profiles} - per_profile.keys())
    if unknown:
        raise RunFolderError(
            f"job profile(s) {', '.join(unknown[:5])} of out_jobs.csv are not in "
            f"{run.workload_path or run.path / 'workload.json'}: the workload does not match "
            "this run",
            run.path / "out_jobs.csv",
            "profile",
        )
    per_core = np.fromiter((per_profile[str(p)] for p in profiles), float, len(profiles))
    return per_core * jobs.res


def plot_mem_bubbles(run: RunFolder, fig: Figure | None = None) -> Figure:
    """Free node memory against the memory asked by waiting jobs (thesis 5.2.2)."""
    fig = fig if fig is not None else new_figure()
    jobs = run.jobs
    end = _end_time(run)
    memory = job_memory(run) / 1000.0  # GB (decimal, as the platform's capacities)
    capacity = sum(node.memory_gb for node in run.hierarchy.nodes)
    ran = jobs.ran
    used = ts.step_series(jobs.start[ran], jobs.finish[ran], memory[ran])
    asked = ts.step_series(jobs.submit[ran], jobs.start[ran], memory[ran])
    grid, (in_use, waiting) = ts.on_grid(used, asked)
    free = capacity - in_use
    ax = fig.subplots()
    scale = _time_axes(ax, end)
    if not len(grid):
        grid, free, waiting = np.zeros(1), np.full(1, capacity), np.zeros(1)
    _step(ax, grid, free, end, scale, color="C2", label="free node memory (all nodes)")
    _step(
        ax,
        grid,
        waiting,
        end,
        scale,
        fill=True,
        color="C4",
        label="memory requested by waiting jobs",
    )
    short = ts.time_average(grid, (waiting > free).astype(float), 0.0, end)
    ax.plot([], [], " ", label=f"requests above free memory {100 * short:.1f}% of the time")
    ax.axhline(
        capacity,
        color="k",
        linewidth=1,
        linestyle=":",
        label=f"platform memory ({capacity:,.0f} GB)",
    )
    ax.set_ylabel("memory (GB)")
    ax.set_ylim(bottom=0)
    top_request = float(waiting.max())
    if 0 < top_request < 0.02 * capacity:
        # Requests far below the capacity would be a flat line at 0: log scale above 1 GB.
        ax.set_yscale("symlog", linthresh=max(min(1.0, top_request), 1e-3))
        ax.set_ylim(bottom=0)
    ax.legend(loc="best", fontsize="small")
    _header(fig, "Memory bubbles", run)
    return fig


def plot_mem_bw_overutilization(run: RunFolder, fig: Figure | None = None) -> Figure:
    """Spans of memory bandwidth over-subscription per processor (thesis figure 5.9)."""
    from matplotlib.collections import PolyCollection

    fig = fig if fig is not None else new_figure()
    procs, starts, ends = run.overutilization
    end = _end_time(run)
    if len(ends):
        end = max(end, float(np.nanmax(np.concatenate([starts, ends]))))
    ends = np.where(np.isnan(ends), end, ends)  # still over-subscribed when the run ended
    try:
        nb_procs = len(run.hierarchy.processors)
    except RunFolderError:
        nb_procs = int(procs.max()) + 1 if len(procs) else 1
    top, bottom = fig.subplots(
        2, 1, sharex=True, gridspec_kw={"height_ratios": (1, 3), "hspace": 0.05}
    )
    scale = _time_axes(bottom, end)
    times, count = ts.step_series(starts, ends, 1.0)
    _step(top, times, count, end, scale, fill=True, color="C3")
    top.set_ylabel("processors\nover-subscribed")
    top.set_ylim(bottom=0)
    top.grid(True, alpha=0.3)
    n = len(procs)
    collection = PolyCollection(
        # an (n, 4, 2) array is n polygons; the stubs ask for a Sequence of them
        _rectangles(starts / scale, ends / scale, procs - 0.4, procs + 0.4),  # type: ignore[arg-type]
        facecolors="C3",
        edgecolors="face",
        linewidths=0.0,
        rasterized=n > RASTER_THRESHOLD,
    )
    bottom.add_collection(collection)
    bottom.set_ylim(-0.5, max(nb_procs, int(procs.max()) + 1 if n else 1) - 0.5)
    bottom.set_ylabel("processor id")
    busy = float(np.sum(ends - starts)) / 3600.0
    top.set_title(
        f"{n:,} span(s) on {len(np.unique(procs)):,} of {nb_procs:,} processors, "
        f"{busy:,.1f} processor-hours",
        fontsize="small",
    )
    _header(fig, "Memory bandwidth over-utilization", run)
    return fig


# --------------------------------------------------------------------------- learning


def _episode_plot(
    run: RunFolder, fig: Figure | None, column: str, ylabel: str, title: str, color: str
) -> Figure:
    fig = fig if fig is not None else new_figure()
    log = run.training_log
    ax = fig.subplots()
    episodes = log["episode"].to_numpy()
    values = log[column].to_numpy()
    ax.plot(episodes, values, color=color, linewidth=0.8, alpha=0.5, label=f"{ylabel} per episode")
    window = max(1, len(values) // 25)
    if window > 1:
        smooth = log[column].rolling(window, min_periods=1).mean().to_numpy()
        ax.plot(
            episodes, smooth, color=color, linewidth=2, label=f"moving average ({window} episodes)"
        )
    ax.set_xlabel("episode")
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best")
    _header(fig, title, run)
    return fig


def plot_losses(run: RunFolder, fig: Figure | None = None) -> Figure:
    """Loss per training episode (thesis figure 5.10)."""
    return _episode_plot(run, fig, "loss", "loss", "Losses", "C3")


def plot_rewards(run: RunFolder, fig: Figure | None = None) -> Figure:
    """Total reward per training episode (thesis figure 5.11)."""
    return _episode_plot(run, fig, "total_reward", "total reward", "Rewards", "C2")


def plot_action_preferences(run: RunFolder, fig: Figure | None = None) -> Figure:
    """Probability of each action per episode (thesis figure 5.12)."""
    fig = fig if fig is not None else new_figure()
    log = run.training_log
    columns = [c for c in log.columns if c.startswith(PROB_PREFIX)]
    if not columns:
        raise RunFolderError(
            "no prob_<action> columns: this log has no action probabilities",
            run.path / "training_log.csv",
            "line 1",
        )
    ax = fig.subplots()
    episodes = log["episode"].to_numpy()
    from matplotlib import colormaps

    cmap = colormaps["tab10" if len(columns) <= 10 else "tab20"]
    for index, column in enumerate(columns):
        ax.plot(
            episodes,
            log[column].to_numpy(),
            color=cmap(index % cmap.N),
            linestyle=("-", "--", ":")[index // cmap.N % 3],
            linewidth=1.2,
            label=column[len(PROB_PREFIX) :],
        )
    ax.set_xlabel("episode")
    ax.set_ylabel("probability")
    ax.set_ylim(0, 1)
    ax.grid(True, alpha=0.3)
    fig.legend(
        loc="outside right upper",
        fontsize="small" if len(columns) <= 12 else "x-small",
        ncols=1 if len(columns) <= 20 else 2,
        title="action",
    )
    _header(fig, "Action preferences", run)
    return fig


#: ``hdeeprm-visual`` names -> plotting function.
VISUALIZATIONS: dict[str, Callable[..., Figure]] = {
    "queue_size": plot_queue_size,
    "utilization": plot_utilization,
    "lifecycle": plot_lifecycle,
    "gantt": plot_gantt,
    "gantt_no_label": plot_gantt_no_label,
    "core_bubbles": plot_core_bubbles,
    "mem_bubbles": plot_mem_bubbles,
    "mem_bw_overutilization": plot_mem_bw_overutilization,
    "losses": plot_losses,
    "rewards": plot_rewards,
    "action_preferences": plot_action_preferences,
}
#: The title (suptitle) each visualization gives its figure.
TITLES: dict[str, str] = {
    "queue_size": "Queue size",
    "utilization": "Core utilization",
    "lifecycle": "Job life cycles",
    "gantt": "Gantt chart",
    "gantt_no_label": "Gantt chart (no labels)",
    "core_bubbles": "Core bubbles",
    "mem_bubbles": "Memory bubbles",
    "mem_bw_overutilization": "Memory bandwidth over-utilization",
    "losses": "Losses",
    "rewards": "Rewards",
    "action_preferences": "Action preferences",
}


def visualize(
    name: str, run: RunFolder | str | os.PathLike[str], fig: Figure | None = None
) -> Figure:
    """Draw visualization ``name`` of a run folder."""
    if name not in VISUALIZATIONS:
        raise ValueError(
            f"unknown visualization {name!r}; expected one of {', '.join(VISUALIZATIONS)}"
        )
    folder = run if isinstance(run, RunFolder) else RunFolder(run)
    return VISUALIZATIONS[name](folder, fig)
