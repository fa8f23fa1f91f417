"""Finding a real Batsim 4.x (and pybatsim) for the tests marked ``batsim``, and comparing
Batsim's ``out_jobs.csv`` with hdeeprm's.

Batsim is looked up as ``hdeeprm-launch`` does (:func:`hdeeprm.protocol.client.default_batsim`):
``$HDEEPRM_BATSIM`` (the executable or its install prefix), ``batsim`` on ``PATH``, then
``~/.cache/hdeeprm-batsim/bin/batsim`` where ``tools/batsim/build.sh`` (``make batsim``)
installs it. pybatsim is ``$HDEEPRM_PYBATSIM`` or the ``pybatsim`` launcher next to Batsim.
Without them the tests skip, saying what to set or build.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from hdeeprm.protocol.client import BATSIM_ENV, default_batsim
from hdeeprm.simulation.outputs import JOBS_COLUMNS

PYBATSIM_ENV = "HDEEPRM_PYBATSIM"
HOW = (
    f"build it with `make batsim` (tools/batsim/build.sh into ~/.cache/hdeeprm-batsim) or "
    f"set {BATSIM_ENV} to a Batsim 4.x executable or prefix"
)


def locate_batsim() -> tuple[Path | None, str]:
    """(path of a working Batsim 4.x, '') or (None, why not)."""
    name = default_batsim()
    found = shutil.which(name) if os.sep not in name else name
    if found is None or not os.access(found, os.X_OK):
        return None, f"no Batsim executable ({name!r} not found); {HOW}"
    try:
        done = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{found} --version failed ({exc}); {HOW}"
    version = done.stdout.strip()
    if done.returncode != 0 or not version.startswith("4."):
        return None, f"{found} is not Batsim 4.x (--version says {version!r}); {HOW}"
    return Path(found), ""


def locate_pybatsim(batsim: Path) -> tuple[Path | None, str]:
    """(pybatsim 3.x launcher, '') or (None, why not): ``$HDEEPRM_PYBATSIM`` or
    ``pybatsim`` next to the Batsim executable (build.sh installs both)."""
    named = os.environ.get(PYBATSIM_ENV, "").strip()
    path = Path(named) if named else batsim.parent / "pybatsim"
    if path.is_file() and os.access(path, os.X_OK):
        return path, ""
    return None, f"no pybatsim launcher at {path}; set {PYBATSIM_ENV} or {HOW}"


#: out_jobs.csv columns that must match exactly (Batsim prints times with 6 decimals).
EXACT_COLUMNS = tuple(c for c in JOBS_COLUMNS if c not in ("consumed_energy", "metadata"))


def read_jobs_text(path: Path) -> pd.DataFrame:
    """``out_jobs.csv`` as text columns (so that '1.000000' is compared as printed), by job."""
    jobs = pd.read_csv(path, dtype=str, keep_default_na=False)
    return jobs.sort_values(["workload_name", "job_id"], kind="stable").reset_index(drop=True)


#: Time columns (and ``stretch``, their ratio), compared to ``time_tol`` in their last printed
#: digits when one is given: Batsim's clock carries sub-nanosecond offsets (its internal
#: messages take ~1e-10 s each), which can flip a 6th decimal (16.005 / 16 = 1.0003125 prints
#: 1.000313 on Batsim and 1.000312 exactly).
TIME_COLUMNS = frozenset(
    {
        "starting_time",
        "execution_time",
        "finish_time",
        "waiting_time",
        "turnaround_time",
        "stretch",
    }
)


def jobs_differences(
    batsim_csv: Path,
    hdeeprm_csv: Path,
    *,
    energy_rel: float = 1e-9,
    time_tol: float | None = None,
) -> dict[str, int]:
    """How many jobs differ, per column, between two ``out_jobs.csv`` files.

    Every column of :data:`EXACT_COLUMNS` must be equal as printed, except the time columns
    when ``time_tol`` is given (then within ``time_tol`` s). ``consumed_energy`` may
    differ by ``energy_rel`` relative, or by Batsim's print resolution (1e-6 J, both values
    being rounded to 6 decimals). Returns ``{column: number of differing jobs}`` for columns
    that differ (empty when the files agree), plus ``'rows'`` if the job sets differ.
    """
    a, b = read_jobs_text(batsim_csv), read_jobs_text(hdeeprm_csv)
    if list(a["job_id"]) != list(b["job_id"]) or list(a["workload_name"]) != list(
        b["workload_name"]
    ):
        return {"rows": abs(len(a) - len(b)) or len(a)}
    out: dict[str, int] = {}
    for column in EXACT_COLUMNS:
        if time_tol is not None and column in TIME_COLUMNS:
            # In printed microseconds (integers), so that float noise does not count.
            ta = (pd.to_numeric(a[column]) * 1e6).round()
            tb = (pd.to_numeric(b[column]) * 1e6).round()
            n = int(((ta - tb).abs() > round(time_tol * 1e6)).sum())
        else:
            n = int((a[column] != b[column]).sum())
        if n:
            out[column] = n
    ea = pd.to_numeric(a["consumed_energy"], errors="coerce")
    eb = pd.to_numeric(b["consumed_energy"], errors="coerce")
    both_nan = ea.isna() & eb.isna()
    close = (ea - eb).abs() <= (energy_rel * eb.abs()).clip(lower=1.000001e-6)
    n = int((~(close | both_nan)).sum())
    if n:
        out["consumed_energy"] = n
    return out


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
