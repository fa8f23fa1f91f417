"""Scheduling metrics of a run: one definition shared by the launcher and ``hdeeprm-metrics``.

Over the jobs that ran (rejected jobs have no start and are left out), with ``wait = start -
submit``, ``run = finish - start`` and ``turnaround = wait + run``:

* slowdown = turnaround / run (1 for a zero-length job), mean and max;
* bounded slowdown = max(turnaround / max(run, tau), 1) with tau = 10 s (seed 001), mean and
  max: short jobs no longer dominate the mean;
* mean and max waiting times, mean turnaround time; makespan = the last finish time.

CuSH's NTAT (normalized turnaround time) is the mean slowdown (``JobMetrics.ntat``) and its
wait the mean waiting time.

AVEbsld (seed 001, thesis 4.3.3) is the mean bounded slowdown. Which jobs count is a
:class:`JobFilter` (``hdeeprm-metrics --tau --skip-first --exclude-overrun``), never hard-coded:
the thesis's conversion-time rules (jobs larger than the machine, unknown submission or run
times) are already applied by the SWF converter; chapter 5 also excludes jobs that ran longer
than they requested (``--exclude-overrun``); a warm-up prefix can be left out
(``--skip-first``).

Means use :func:`math.fsum`, so the figures do not depend on job order and equal the launcher's
to the last bit when given the same times. Energy comes from ``consumed_joules`` in
``out_schedule.csv`` (Batsim's definition: from the first submission to the last completion).
"""

from __future__ import annotations

import json
import math
import os
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hdeeprm.analysis.runfolder import RunFolder

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Threshold of the bounded slowdown, in seconds (seed 001's convention).
BOUNDED_SLOWDOWN_TAU = 10.0
#: Joules in a kilowatt-hour.
JOULES_PER_KWH = 3.6e6


@dataclass(frozen=True, slots=True)
class JobMetrics:
    """Per-job time figures aggregated over the jobs that ran."""

    nb_jobs: int
    nb_ran: int
    makespan: float
    mean_waiting: float
    mean_turnaround: float
    mean_slowdown: float
    max_slowdown: float
    mean_bounded_slowdown: float
    max_bounded_slowdown: float
    max_waiting: float = 0.0

    @property
    def ntat(self) -> float:
        """CuSH's normalized turnaround time: the mean of turnaround / service time, i.e. the
        mean slowdown (docs/cush.md)."""
        return self.mean_slowdown


@dataclass(frozen=True, slots=True)
class JobFilter:
    """Which jobs the metrics count, and the bounded-slowdown threshold.

    Attributes:
        tau: bounded-slowdown threshold (s).
        skip_first: leave out the first N jobs by submission (ties by file order): warm-up.
        exclude_overrun: leave out jobs whose run time exceeded their requested time (thesis
            chapter 5's filter ``p~ < p``); needs the run folder's ``workload.json``.
    """

    tau: float = BOUNDED_SLOWDOWN_TAU
    skip_first: int = 0
    exclude_overrun: bool = False

    def __post_init__(self) -> None:
        if not (self.tau > 0 and math.isfinite(self.tau)):
            raise ValueError(f"tau must be a positive number of seconds, got {self.tau!r}")
        if self.skip_first < 0:
            raise ValueError(f"skip_first must be >= 0, got {self.skip_first!r}")


def job_metrics(
    submit: Sequence[float] | np.ndarray,
    start: Sequence[float | None] | np.ndarray,
    finish: Sequence[float | None] | np.ndarray,
    *,
    tau: float = BOUNDED_SLOWDOWN_TAU,
) -> JobMetrics:
    """Aggregate figures from per-job times; entries with a NaN (or ``None``) start or finish
    did not run.

    Args:
        submit, start, finish: one entry per ended job, in seconds.
        tau: bounded-slowdown threshold in seconds.
    """
    submit = np.asarray(submit, dtype=np.float64)
    start = np.asarray(start, dtype=np.float64)
    finish = np.asarray(finish, dtype=np.float64)
    ran = ~(np.isnan(start) | np.isnan(finish))
    sub, beg, end = submit[ran], start[ran], finish[ran]
    run = end - beg
    wait = beg - sub
    turn = wait + run
    positive = run > 0
    slow = np.ones_like(run)
    np.divide(turn, run, out=slow, where=positive)
    bslow = np.maximum(turn / np.maximum(run, tau), 1.0)

    def mean(values: np.ndarray) -> float:
        return math.fsum(values.tolist()) / len(values) if len(values) else 0.0

    def top(values: np.ndarray) -> float:
        return float(values.max()) if len(values) else 0.0

    return JobMetrics(
        nb_jobs=len(submit),
        nb_ran=int(ran.sum()),
        makespan=top(end),
        mean_waiting=mean(wait),
        mean_turnaround=mean(turn),
        mean_slowdown=mean(slow),
        max_slowdown=top(slow),
        mean_bounded_slowdown=mean(bslow),
        max_bounded_slowdown=top(bslow),
        max_waiting=top(wait),
    )


def ended_job_metrics(jobs: Sequence[Any], *, tau: float = BOUNDED_SLOWDOWN_TAU) -> JobMetrics:
    """:func:`job_metrics` of the simulator's ended jobs (``Engine.finished_jobs``: each has
    ``spec.subtime``, ``start_time`` and ``finish_time``), for callers that played a
    simulation in memory rather than reading a run folder."""
    return job_metrics(
        [j.spec.subtime for j in jobs],
        [j.start_time for j in jobs],
        [j.finish_time for j in jobs],
        tau=tau,
    )


@dataclass(frozen=True, slots=True)
class RunSummary:
    """The headline figures of one run folder."""

    name: str
    path: Path
    energy_j: float
    jobs: JobMetrics

    @property
    def energy_kwh(self) -> float:
        return self.energy_j / JOULES_PER_KWH


def _kept(folder: RunFolder, job_filter: JobFilter) -> np.ndarray:
    """Mask of the jobs of ``out_jobs.csv`` the filter keeps."""
    jobs = folder.jobs
    keep = np.ones(len(jobs), dtype=bool)
    if job_filter.skip_first:
        order = np.argsort(jobs.submit, kind="stable")
        keep[order[: job_filter.skip_first]] = False
    if job_filter.exclude_overrun:
        if jobs.profile is None:
            raise ValueError(
                f"{folder.path}: out_jobs.csv has no profile column (needed by "
                "exclude_overrun to find requested times)"
            )
        profiles = folder.workload.profiles
        req = np.array(
            [
                (profiles[p].req_time if p in profiles else None) or math.inf
                for p in jobs.profile.astype(str)
            ],
            dtype=float,
        )
        run = jobs.finish - jobs.start
        keep &= ~(run > req)  # NaN (not run) stays: counted as not run
    return keep


def summarize_run(
    run: RunFolder | str | os.PathLike[str],
    name: str | None = None,
    job_filter: JobFilter | None = None,
) -> RunSummary:
    """Metrics of a run folder, from ``out_jobs.csv`` and ``out_schedule.csv`` (by column name),
    over the jobs ``job_filter`` keeps (all, tau = 10 s by default)."""
    folder = run if isinstance(run, RunFolder) else RunFolder(run)
    job_filter = job_filter or JobFilter()
    jobs = folder.jobs
    schedule = folder.schedule
    submit, start, finish = jobs.submit, jobs.start, jobs.finish
    if job_filter.skip_first or job_filter.exclude_overrun:
        keep = _kept(folder, job_filter)
        submit, start, finish = submit[keep], start[keep], finish[keep]
    return RunSummary(
        name=name or folder.name,
        path=folder.path,
        energy_j=schedule["consumed_joules"],
        jobs=job_metrics(submit, start, finish, tau=job_filter.tau),
    )


@dataclass(frozen=True, slots=True)
class Metric:
    """One row of the table / one panel of the bar chart."""

    key: str
    label: str
    unit: str
    value: Callable[[RunSummary], float]
    fmt: str


METRICS: tuple[Metric, ...] = (
    Metric("jobs_ran", "jobs run", "", lambda s: s.jobs.nb_ran, "{:,.0f}"),
    Metric("energy_j", "energy", "J", lambda s: s.energy_j, "{:,.0f}"),
    Metric("energy_kwh", "energy", "kWh", lambda s: s.energy_kwh, "{:,.2f}"),
    Metric("makespan", "makespan", "s", lambda s: s.jobs.makespan, "{:,.1f}"),
    Metric("mean_waiting", "mean waiting time", "s", lambda s: s.jobs.mean_waiting, "{:,.1f}"),
    Metric("max_waiting", "max waiting time", "s", lambda s: s.jobs.max_waiting, "{:,.1f}"),
    Metric(
        "mean_turnaround",
        "mean turnaround time",
        "s",
        lambda s: s.jobs.mean_turnaround,
        "{:,.1f}",
    ),
    Metric("mean_slowdown", "mean slowdown", "", lambda s: s.jobs.mean_slowdown, "{:,.3f}"),
    Metric("max_slowdown", "max slowdown", "", lambda s: s.jobs.max_slowdown, "{:,.3f}"),
    Metric(
        "mean_bounded_slowdown",
        "mean bounded slowdown (AVEbsld)",
        "",
        lambda s: s.jobs.mean_bounded_slowdown,
        "{:,.3f}",
    ),
    Metric(
        "max_bounded_slowdown",
        "max bounded slowdown",
        "",
        lambda s: s.jobs.max_bounded_slowdown,
        "{:,.3f}",
    ),
)
#: Panels of the bar chart (the run count and the duplicate energy unit are left out).
PLOTTED = (
    "energy_kwh",
    "makespan",
    "mean_waiting",
    "mean_turnaround",
    "mean_slowdown",
    "max_slowdown",
    "mean_bounded_slowdown",
    "max_bounded_slowdown",
)


def unique_labels(paths: Sequence[Path]) -> list[str]:
    """Folder names; only names shared by several runs are lengthened with parent folders."""
    parts = [p.resolve().parts for p in paths]
    depth = [1] * len(parts)
    while True:
        labels = ["/".join(p[-d:]) or "/" for p, d in zip(parts, depth)]
        seen: dict[str, int] = {}
        for label in labels:
            seen[label] = seen.get(label, 0) + 1
        grow = [i for i, label in enumerate(labels) if seen[label] > 1 and depth[i] < len(parts[i])]
        if not grow:
            return labels
        for i in grow:
            depth[i] += 1


def summarize_runs(
    paths: Sequence[str | os.PathLike[str]], job_filter: JobFilter | None = None
) -> list[RunSummary]:
    """Summaries of several run folders, labelled by (unique) folder name."""
    folders = [RunFolder(p) for p in paths]
    labels = unique_labels([f.path for f in folders])
    return [summarize_run(f, name, job_filter) for f, name in zip(folders, labels)]


def format_table(summaries: Sequence[RunSummary]) -> str:
    """Aligned text table: metrics as rows, runs as columns."""
    header = ["metric", *(s.name for s in summaries)]
    rows = [header]
    for metric in METRICS:
        label = metric.label + (f" ({metric.unit})" if metric.unit else "")
        rows.append([label, *(metric.fmt.format(metric.value(s)) for s in summaries)])
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = []
    for index, row in enumerate(rows):
        cells = [row[0].ljust(widths[0])]
        cells += [cell.rjust(width) for cell, width in zip(row[1:], widths[1:])]
        lines.append("  ".join(cells).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _plain(value: float) -> float | int | None:
    if isinstance(value, (int, np.integer)):
        return int(value)
    return None if math.isnan(value) else float(value)


def as_records(summaries: Sequence[RunSummary]) -> list[dict[str, object]]:
    """One dict per run: ``run``, ``path`` and every metric key (full precision)."""
    return [
        {"run": s.name, "path": str(s.path), **{m.key: _plain(m.value(s)) for m in METRICS}}
        for s in summaries
    ]


def format_csv(summaries: Sequence[RunSummary]) -> str:
    """CSV text, one row per run (``repr`` precision, so values round-trip)."""
    import csv
    import io

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    keys = [m.key for m in METRICS]
    writer.writerow(["run", "path", *keys])
    for record in as_records(summaries):
        writer.writerow(
            [record["run"], record["path"], *("" if record[k] is None else record[k] for k in keys)]
        )
    return buffer.getvalue()


def format_json(summaries: Sequence[RunSummary]) -> str:
    """JSON text: ``{"runs": [...]}`` with :func:`as_records` entries."""
    return json.dumps({"runs": as_records(summaries)}, indent=1)


def plot_metrics(summaries: Sequence[RunSummary], fig: Figure | None = None) -> Figure:
    """Grouped bars: one panel per metric, one bar per run (thesis figures 5.6 and 5.8)."""
    from matplotlib.patches import Patch

    from hdeeprm.analysis.plots import new_figure, time_unit

    fig = fig if fig is not None else new_figure((12.0, 6.5))
    width_in = float(fig.get_figwidth())
    # About 6 points per character at the titles' medium size: wrap titles to the plotting
    # part of their panel (three quarters of a quarter of the width; the rest holds the y
    # label and ticks), and give the legend as many columns as fit the figure.
    title_chars = max(8, int(width_in / 4 * 0.75 * 72 / 6))
    by_key = {m.key: m for m in METRICS}
    names = [s.name for s in summaries]
    colors = [f"C{i % 10}" for i in range(len(summaries))]
    axes = fig.subplots(2, 4).ravel()
    x = np.arange(len(summaries))
    for ax, key in zip(axes, PLOTTED):
        metric = by_key[key]
        values = np.array([metric.value(s) for s in summaries], dtype=float)
        unit = metric.unit
        if unit == "s":  # seconds, minutes... whatever keeps the numbers readable
            scale, unit = time_unit(float(np.nanmax(values)) if len(values) else 0.0)
            values = values / scale
        ax.bar(x, values, color=colors, width=0.7)
        ax.set_title(textwrap.fill(metric.label, title_chars), fontsize="medium")
        ax.set_ylabel(unit if unit else "ratio")
        ax.set_xticks(x, [""] * len(x))
        ax.grid(True, axis="y", alpha=0.3)
        ax.ticklabel_format(axis="y", style="sci", scilimits=(-3, 5))
        ax.set_ylim(0, None if np.nanmax(values, initial=0.0) > 0 else 1.0)
    handles = [Patch(color=c, label=n) for c, n in zip(colors, names)]
    longest = max((len(n) for n in names), default=1)
    fits = max(1, int(width_in * 72 / (longest * 6.5 + 40)))
    fig.legend(
        handles=handles, loc="outside lower center", ncols=min(len(names), 4, fits), title="run"
    )
    fig.suptitle("Metrics comparison")
    return fig
