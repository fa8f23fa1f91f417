"""What researchers look at after a run: metrics, figures, and cleaning up run folders.

* :mod:`~hdeeprm.analysis.runfolder`: validated readers of a run folder's files, by column name.
* :mod:`~hdeeprm.analysis.metrics`: slowdown, bounded slowdown, waiting, turnaround, makespan,
  energy (shared with the launcher), tables and bar charts for ``hdeeprm-metrics``.
* :mod:`~hdeeprm.analysis.series`: queue, utilization and bubble time series.
* :mod:`~hdeeprm.analysis.plots`: the figures of ``hdeeprm-visual``.
* :mod:`~hdeeprm.analysis.clean`: what ``hdeeprm-clean`` may remove.
"""

from hdeeprm.analysis.metrics import (
    BOUNDED_SLOWDOWN_TAU,
    JobFilter,
    JobMetrics,
    RunSummary,
    ended_job_metrics,
    job_metrics,
    summarize_run,
    summarize_runs,
)
from hdeeprm.analysis.runfolder import JobTable, RunFolder, RunFolderError, read_jobs

__all__ = [
    "BOUNDED_SLOWDOWN_TAU",
    "JobFilter",
    "JobMetrics",
    "JobTable",
    "RunFolder",
    "RunFolderError",
    "RunSummary",
    "ended_job_metrics",
    "job_metrics",
    "read_jobs",
    "summarize_run",
    "summarize_runs",
]
