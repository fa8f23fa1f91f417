"""Sweeps: one options file expanded over a grid, run in parallel, gathered in one table.

* :mod:`~hdeeprm.sweep.spec`: the sweep file format and its validation (:func:`load_sweep`).
* :mod:`~hdeeprm.sweep.tasks`: what a worker does (prepare shared inputs, carry out a run).
* :mod:`~hdeeprm.sweep.backends`: this process, local processes, or a Ray cluster.
* :mod:`~hdeeprm.sweep.dispatch`: resume, ordering, progress (:func:`run_sweep`).
* :mod:`~hdeeprm.sweep.table`: ``results.csv`` / ``results.parquet`` and the comparison plot.

Ray is optional (``pip install 'hdeeprm[ray]'``); nothing here imports it unless asked to.
"""

from hdeeprm.sweep.backends import Backend, ProcessBackend, RayBackend, SerialBackend, make_backend
from hdeeprm.sweep.dispatch import (
    Progress,
    ProgressPrinter,
    SweepResult,
    check_output_dir,
    run_sweep,
)
from hdeeprm.sweep.spec import AXES, RunSpec, Sweep, load_sweep, sweep_from_json
from hdeeprm.sweep.table import results_frame, write_plots, write_table
from hdeeprm.sweep.tasks import RESULT_FILE, read_result

__all__ = [
    "AXES",
    "RESULT_FILE",
    "Backend",
    "ProcessBackend",
    "Progress",
    "ProgressPrinter",
    "RayBackend",
    "RunSpec",
    "SerialBackend",
    "Sweep",
    "SweepResult",
    "check_output_dir",
    "load_sweep",
    "make_backend",
    "read_result",
    "results_frame",
    "run_sweep",
    "sweep_from_json",
    "write_plots",
    "write_table",
]
