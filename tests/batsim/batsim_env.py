"""The tests marked ``batsim``: a real Batsim 4.x (and pybatsim) or a skip saying what to build.

Finding Batsim, running pybatsim schedulers on it and on ``hdeeprm-sim``, and comparing
``out_jobs.csv`` files are the fidelity benchmarks' own helpers
(:mod:`benchmarks.fidelity.batsim_runs`); the tests use them as they are.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.fidelity.batsim_runs import locate_batsim, locate_pybatsim


def need_batsim() -> Path:
    """The Batsim executable, or skip the calling test with the reason."""
    path, why = locate_batsim()
    if path is None:
        pytest.skip(why)
    return path


def need_pybatsim() -> Path:
    """The pybatsim launcher, or skip the calling test with the reason."""
    path, why = locate_pybatsim(need_batsim())
    if path is None:
        pytest.skip(why)
    return path
