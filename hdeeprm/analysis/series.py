"""Time series of a run as right-continuous step functions, built in O(n log n) with NumPy.

A series is ``(times, values)``: ``values[i]`` holds on ``[times[i], times[i + 1])`` and 0
before ``times[0]``. Events at the same instant are summed together, so a job that is submitted
and started at the same time never appears in the queue.
"""

from __future__ import annotations

import numpy as np

from hdeeprm.analysis.runfolder import JobTable

Series = tuple[np.ndarray, np.ndarray]


def step_series(begin: np.ndarray, end: np.ndarray, weight: np.ndarray | float) -> Series:
    """Sum of ``weight`` over the intervals ``[begin, end)`` at every instant.

    Intervals with a NaN bound are ignored.
    """
    begin = np.asarray(begin, dtype=np.float64)
    end = np.asarray(end, dtype=np.float64)
    weights = np.broadcast_to(np.asarray(weight, dtype=np.float64), begin.shape)
    keep = ~(np.isnan(begin) | np.isnan(end)) & (end > begin)
    begin, end, weights = begin[keep], end[keep], weights[keep]
    times, inverse = np.unique(np.concatenate([begin, end]), return_inverse=True)
    deltas = np.bincount(inverse, weights=np.concatenate([weights, -weights]), minlength=len(times))
    values = np.cumsum(deltas)
    # Sums of float weights (memory) may leave 1e-12-sized residues where the truth is 0.
    scale = float(np.abs(weights).sum()) if len(weights) else 0.0
    values[np.abs(values) <= scale * 1e-12] = 0.0
    return times, values


def at(series: Series, times: np.ndarray) -> np.ndarray:
    """Values of a step series at ``times`` (0 before its first point)."""
    points, values = series
    times = np.asarray(times, dtype=np.float64)
    if len(points) == 0:
        return np.zeros(times.shape)
    index = np.searchsorted(points, times, side="right") - 1
    return np.where(index >= 0, values[np.maximum(index, 0)], 0.0)


def on_grid(*series: Series) -> tuple[np.ndarray, list[np.ndarray]]:
    """Several series resampled on the union of their change points."""
    grid = np.unique(np.concatenate([s[0] for s in series])) if series else np.empty(0)
    return grid, [at(s, grid) for s in series]


def queue_cores(jobs: JobTable) -> Series:
    """Core requests of the jobs waiting in the queue (submitted, not started)."""
    ran = jobs.ran
    return step_series(jobs.submit[ran], jobs.start[ran], jobs.res[ran])


def queue_jobs(jobs: JobTable) -> Series:
    """Number of jobs waiting in the queue."""
    ran = jobs.ran
    return step_series(jobs.submit[ran], jobs.start[ran], 1.0)


def busy_cores(jobs: JobTable) -> Series:
    """Cores running a job."""
    ran = jobs.ran
    return step_series(jobs.start[ran], jobs.finish[ran], jobs.res[ran])


def core_bubbles(jobs: JobTable, nb_cores: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(times, idle cores while a job waits, pending core requests)``.

    A bubble is a core left idle while the queue is not empty: the next job did not fit (too
    few free cores, or not enough memory in the nodes where cores are free).
    """
    grid, (waiting, busy, requested) = on_grid(
        queue_jobs(jobs), busy_cores(jobs), queue_cores(jobs)
    )
    idle = np.where(waiting > 0, nb_cores - busy, 0.0)
    return grid, idle, requested


def time_average(times: np.ndarray, values: np.ndarray, begin: float, end: float) -> float:
    """Mean of a step series over ``[begin, end]``."""
    if end <= begin:
        return float(at((times, values), np.array([begin]))[0])
    inside = (times > begin) & (times < end)
    points = np.concatenate([[begin], times[inside], [end]])
    levels = at((times, values), points[:-1])
    return float(np.dot(levels, np.diff(points)) / (end - begin))
