"""One results table for a whole sweep (CSV, and Parquet when pyarrow is there) and its plots.

One row per run, in grid order: ``run_id``, ``status``, the grid values, the metrics of
``hdeeprm-metrics`` (read back from the run's Batsim outputs), the run's counters, ``error``
for failed runs, and ``wall_time``, ``cpu_time`` and ``host``: the only columns that depend
on where and when a run ran.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from hdeeprm._atomic import atomic_open
from hdeeprm.analysis.metrics import METRICS, JobMetrics, RunSummary
from hdeeprm.sweep.spec import AXES, Sweep

CSV_FILE = "results.csv"
PARQUET_FILE = "results.parquet"
PLOT_FILE = "metrics.png"
#: Columns that vary with the machine and the moment, not with the run.
TIMING_COLUMNS = ("wall_time", "cpu_time", "host")
#: Beyond this many runs the bar chart would be unreadable: runs are averaged per policy pair.
MAX_BARS = 40


def results_frame(sweep: Sweep, records: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """The table of a sweep's records (see the module docstring for the columns)."""
    metric_keys = [m.key for m in METRICS]
    extra: list[str] = []
    for record in records:
        for key in record.get("metrics", {}):
            if key not in metric_keys and key not in extra:
                extra.append(key)
    axes = [a for a in AXES if a in sweep.axes]
    rows = []
    for record in records:
        metrics = record.get("metrics", {})
        timing = record.get("timing", {})
        row: dict[str, Any] = {"run_id": record["run_id"], "status": record["status"]}
        for axis in axes:
            value = record["params"].get(axis)
            if axis == "window":
                row["start_job"] = value.get("start_job", 0)
                row["nb_jobs"] = value.get("nb_jobs")
            else:
                row[axis] = value
        for key in metric_keys + extra:
            value = metrics.get(key)
            row[key] = math.nan if value is None else value
        row["error"] = record.get("error") or ""
        row["wall_time"] = timing.get("wall_time", math.nan)
        row["cpu_time"] = timing.get("cpu_time", math.nan)
        row["host"] = timing.get("host", "")
        rows.append(row)
    return pd.DataFrame(rows)


def write_table(frame: pd.DataFrame, folder: str | Path) -> list[Path]:
    """Write ``results.csv`` (and ``results.parquet`` if pyarrow is installed), atomically."""
    folder = Path(folder)
    written = [folder / CSV_FILE]
    with atomic_open(written[0], "w", newline="") as handle:
        frame.to_csv(handle, index=False, float_format=None)
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return written
    written.append(folder / PARQUET_FILE)
    with atomic_open(written[1], "wb") as handle:
        frame.to_parquet(handle, index=False)
    return written


def write_plots(sweep: Sweep, records: Sequence[dict[str, Any]], folder: str | Path) -> Path | None:
    """The ``hdeeprm-metrics`` bar chart over the finished runs (``None`` if none finished).

    Up to :data:`MAX_BARS` runs get one bar each; beyond, runs are grouped by policy pair
    (mean over the other axes) when the sweep varies the pair, else by run.
    """
    from hdeeprm.analysis.metrics import plot_metrics
    from hdeeprm.analysis.plots import save_figure

    done = [r for r in records if r["status"] == "done"]
    if not done:
        return None
    summaries = [_summary(sweep, r) for r in done]
    if len(summaries) > MAX_BARS and "policy_pair" in sweep.axes:
        summaries = _mean_by_pair(done, summaries)
    shown = summaries[:MAX_BARS]
    fig = plot_metrics(shown)
    note = "" if len(shown) == len(summaries) else f", first {len(shown)} shown"
    fig.suptitle(f"Sweep {Path(sweep.output_dir).name}: {len(done)} run(s){note}")
    path = Path(folder) / PLOT_FILE
    save_figure(fig, path)
    return path


def _summary(sweep: Sweep, record: dict[str, Any]) -> RunSummary:
    """The run's :class:`RunSummary` rebuilt from its record (no run folder read again)."""
    m = record["metrics"]
    fields = [f.name for f in dataclasses.fields(JobMetrics) if f.name not in ("nb_jobs", "nb_ran")]
    jobs = JobMetrics(
        nb_jobs=int(m["jobs_ran"]),
        nb_ran=int(m["jobs_ran"]),
        **{name: math.nan if m[name] is None else float(m[name]) for name in fields},
    )
    path = Path(sweep.output_dir) / "runs" / record["run_id"]
    return RunSummary(record["run_id"], path, float(m["energy_j"]), jobs)


def _mean_by_pair(records: Sequence[dict[str, Any]], summaries: list[Any]) -> list[Any]:
    import numpy as np

    groups: dict[str, list[Any]] = {}
    for record, summary in zip(records, summaries):
        groups.setdefault(record["params"]["policy_pair"], []).append(summary)
    merged = []
    for pair, items in groups.items():
        jobs = items[0].jobs
        means = {
            f.name: float(np.mean([getattr(s.jobs, f.name) for s in items]))
            for f in dataclasses.fields(jobs)
        }
        merged.append(
            dataclasses.replace(
                items[0],
                name=f"{pair} (mean of {len(items)})",
                energy_j=float(np.mean([s.energy_j for s in items])),
                jobs=dataclasses.replace(jobs, **means),
            )
        )
    return merged
