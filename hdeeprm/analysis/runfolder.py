"""Read the files of a run folder written by ``hdeeprm-launch``, validated, by column name.

The original tool read ``out_schedule.csv`` by hard-coded column positions, so any change of
column order silently produced wrong numbers. Every reader here selects columns by their
header names, checks that the ones it needs are present and that their values parse, and
raises :class:`RunFolderError` (an :class:`~hdeeprm.errors.InputError`) naming the file, the
line and what was expected otherwise.

File names are literal constants here rather than imports from :mod:`hdeeprm.experiment` and
:mod:`hdeeprm.training`, so that ``hdeeprm-clean`` and ``hdeeprm-metrics`` start without loading
the simulator or torch; a test keeps them equal to the names those packages write.
"""

from __future__ import annotations

import csv
import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from hdeeprm.errors import HDeepRMError, InputError

if TYPE_CHECKING:
    from hdeeprm.platform import Platform
    from hdeeprm.workload.model import Workload

# Generated inputs (hdeeprm.inputs).
PLATFORM_XML_FILE = "platform.xml"
HIERARCHY_FILE = "res_hierarchy.json"
WORKLOAD_FILE = "workload.json"
JOB_LIMITS_FILE = "job_limits.json"
MANIFEST_FILE = ".hdeeprm_inputs.json"
GENERATED_INPUTS = (PLATFORM_XML_FILE, HIERARCHY_FILE, WORKLOAD_FILE, JOB_LIMITS_FILE)

# Outputs: Batsim's five (hdeeprm.simulation.outputs), hdeeprm's own (hdeeprm.experiment.run,
# hdeeprm.training.learning_runs).
JOBS_FILE = "out_jobs.csv"
SCHEDULE_FILE = "out_schedule.csv"
MACHINE_STATES_FILE = "out_machine_states.csv"
PSTATE_CHANGES_FILE = "out_pstate_changes.csv"
CONSUMED_ENERGY_FILE = "out_consumed_energy.csv"
BATSIM_OUTPUTS = (
    JOBS_FILE,
    SCHEDULE_FILE,
    MACHINE_STATES_FILE,
    PSTATE_CHANGES_FILE,
    CONSUMED_ENERGY_FILE,
)
INSIGHTS_FILE = "insights.log"
OVERUTILIZATION_FILE = "hdeeprm_mem_bw_overutilization.csv"
TRAINING_LOG_FILE = "training_log.csv"
#: Which GPUs each job got (hdeeprm.simulation.outputs), written only when jobs had GPUs.
GPUS_FILE = "out_gpus.csv"
HDEEPRM_OUTPUTS = (INSIGHTS_FILE, OVERUTILIZATION_FILE, TRAINING_LOG_FILE, GPUS_FILE)
#: Prefix of the temporary files of atomic writes (``hdeeprm._atomic``).
TMP_PREFIX = ".tmp-"

#: Columns of out_jobs.csv the analysis tools need.
JOB_COLUMNS = (
    "job_id",
    "submission_time",
    "requested_number_of_resources",
    "starting_time",
    "finish_time",
)
TRAINING_COLUMNS = ("episode", "loss", "total_reward", "objective", "steps")
PROB_PREFIX = "prob_"


class RunFolderError(InputError):
    """A run folder lacks a file, or one of its files is malformed."""


def missing_file_error(folder: Path, name: str) -> RunFolderError:
    """The error for an absent file, saying which tool or run writes it."""
    if name == TRAINING_LOG_FILE:
        hint = (
            "it is written by a learning run (hdeeprm-launch OPTIONS -a AGENT.py -nr N with a "
            "LEARNING agent in the options)"
        )
    elif name == OVERUTILIZATION_FILE:
        hint = "it is written by classic runs of hdeeprm-launch"
    elif name == WORKLOAD_FILE:
        hint = (
            "a run made with a custom workload (hdeeprm-launch -cw FILE) keeps it where it was: "
            "pass that file with --workload FILE (or run hdeeprm-launch first)"
        )
    else:
        hint = "run hdeeprm-launch first"
    return RunFolderError(f"run folder {folder} has no {name}: {hint}")


def _require(folder: Path, name: str) -> Path:
    if not folder.is_dir():
        raise RunFolderError(f"run folder {folder} does not exist or is not a folder")
    path = folder / name
    if not path.is_file():
        raise missing_file_error(folder, name)
    return path


def _check_shape(path: Path, wanted: tuple[str, ...]) -> list[str]:
    """The header of a CSV, after checking that every row has as many fields as it.

    pandas would silently shift columns (or drop fields) on a ragged row; a streaming pass
    with :mod:`csv` costs about 1 ms per 1,000 rows and names the bad line instead.
    """
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            if not header:
                raise RunFolderError(
                    f"empty file; expected a CSV header with {', '.join(wanted)}", path, "line 1"
                )
            width = len(header)
            for row in reader:
                if row and len(row) != width:
                    raise RunFolderError(
                        f"{len(row)} fields where the header has {width}",
                        path,
                        f"line {reader.line_num}",
                    )
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise RunFolderError(f"cannot read as CSV: {exc}", path) from None
    return [name.strip() for name in header]


def _read_csv(
    path: Path, wanted: tuple[str, ...], dtype: dict[str, type] | None = None, optional=()
) -> pd.DataFrame:
    """Read the ``wanted`` (and any present ``optional``) columns of a CSV by name."""
    header = _check_shape(path, wanted)
    missing = [name for name in wanted if name not in header]
    if missing:
        raise RunFolderError(
            f"missing column(s) {', '.join(missing)} in the header; expected "
            f"{', '.join(wanted)} (any order)",
            path,
            "line 1",
        )
    keep = set(wanted) | {name for name in optional if name in header}
    try:
        frame = pd.read_csv(
            path,
            usecols=lambda name: name.strip() in keep,
            dtype=dtype or None,
            keep_default_na=False,
            na_values=[""],
            skipinitialspace=True,
        )
    except (pd.errors.ParserError, ValueError) as exc:
        raise RunFolderError(f"malformed CSV: {exc}", path) from None
    frame.columns = [name.strip() for name in frame.columns]
    return frame


def _numeric(
    frame: pd.DataFrame, column: str, path: Path, *, allow_empty: bool = False
) -> np.ndarray:
    """Column as float64; a non-number (or an empty cell unless allowed) names its line."""
    raw = frame[column]
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64)
    bad = np.isnan(values) & (raw.notna().to_numpy() | (not allow_empty))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        shown = raw.iloc[row]
        raise RunFolderError(
            f"column {column!r}: expected a number, got "
            f"{'an empty cell' if pd.isna(shown) else repr(str(shown))}",
            path,
            f"line {row + 2}",
        )
    return values


@dataclass(slots=True)
class JobTable:
    """The jobs of ``out_jobs.csv`` as arrays (one entry per ended job, file order).

    ``start`` and ``finish`` are NaN for jobs that never ran (rejected).
    """

    ids: np.ndarray
    submit: np.ndarray
    res: np.ndarray
    start: np.ndarray
    finish: np.ndarray
    profile: np.ndarray | None
    allocated: np.ndarray | None

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def ran(self) -> np.ndarray:
        """Mask of the jobs that started and finished."""
        return ~(np.isnan(self.start) | np.isnan(self.finish))


def read_jobs(path: str | os.PathLike[str]) -> JobTable:
    """Read ``out_jobs.csv`` by column name (the column order does not matter)."""
    path = Path(path)
    frame = _read_csv(
        path,
        JOB_COLUMNS,
        dtype={"job_id": str, "profile": str, "allocated_resources": str},
        optional=("profile", "allocated_resources"),
    )
    ids = frame["job_id"].astype(str).to_numpy()
    submit = _numeric(frame, "submission_time", path)
    res = _numeric(frame, "requested_number_of_resources", path)
    start = _numeric(frame, "starting_time", path, allow_empty=True)
    finish = _numeric(frame, "finish_time", path, allow_empty=True)
    one_missing = np.isnan(start) != np.isnan(finish)
    if one_missing.any():
        row = int(np.flatnonzero(one_missing)[0])
        raise RunFolderError(
            "starting_time and finish_time must be both set (job ran) or both empty (job rejected)",
            path,
            f"line {row + 2}",
        )
    backwards = (finish < start) | (start < submit)
    if backwards.any():
        row = int(np.flatnonzero(backwards)[0])
        raise RunFolderError(
            "expected submission_time <= starting_time <= finish_time", path, f"line {row + 2}"
        )
    profile = frame["profile"].to_numpy() if "profile" in frame.columns else None
    allocated = None
    if "allocated_resources" in frame.columns:
        allocated = frame["allocated_resources"].fillna("").to_numpy()
    return JobTable(ids, submit, res, start, finish, profile, allocated)


def read_schedule(path: str | os.PathLike[str]) -> dict[str, float]:
    """Read the numeric aggregates of ``out_schedule.csv`` (one data row) by column name."""
    path = Path(path)
    frame = _read_csv(path, ("consumed_joules", "makespan"))
    if len(frame) != 1:
        raise RunFolderError(f"expected exactly one data row, found {len(frame)}", path, "line 2")
    return {
        "consumed_joules": float(_numeric(frame, "consumed_joules", path)[0]),
        "makespan": float(_numeric(frame, "makespan", path)[0]),
    }


def read_overutilization(path: str | os.PathLike[str]) -> tuple[np.ndarray, ...]:
    """``(processor ids, starts, ends)``; an empty end (still over-subscribed) is NaN."""
    path = Path(path)
    frame = _read_csv(path, ("processor_id", "start", "end"))
    procs = _numeric(frame, "processor_id", path)
    starts = _numeric(frame, "start", path)
    ends = _numeric(frame, "end", path, allow_empty=True)
    if (ends < starts).any():
        row = int(np.flatnonzero(ends < starts)[0])
        raise RunFolderError("expected start <= end", path, f"line {row + 2}")
    return procs.astype(np.int64), starts, ends


def read_training_log(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read ``training_log.csv``: the fixed columns as floats, plus the ``prob_*`` columns."""
    path = Path(path)
    header = _check_shape(path, TRAINING_COLUMNS)
    probs = tuple(name for name in header if name.startswith(PROB_PREFIX))
    frame = _read_csv(path, TRAINING_COLUMNS + probs)
    out = pd.DataFrame({name: _numeric(frame, name, path) for name in TRAINING_COLUMNS + probs})
    return out


def parse_allocations(
    texts: np.ndarray, path: str | os.PathLike[str] | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Interval sets such as ``"0-3 7"`` to ``(row index, first, last)`` arrays.

    Kept as intervals (never expanded to core ids), so a 1,000-core job costs one entry.
    """
    rows: list[int] = []
    lows: list[int] = []
    highs: list[int] = []
    for row, text in enumerate(texts):
        for part in str(text).split():
            low, dash, high = part.partition("-")
            try:
                first = int(low)
                last = int(high) if dash else first
            except ValueError:
                first, last = 0, -1
            if last < first or first < 0:
                raise RunFolderError(
                    f"bad interval {part!r} in allocated_resources; expected 'a-b' ranges or "
                    "single core ids separated by spaces",
                    path,
                    f"line {row + 2}",
                )
            rows.append(row)
            lows.append(first)
            highs.append(last)
    return (
        np.asarray(rows, dtype=np.int64),
        np.asarray(lows, dtype=np.int64),
        np.asarray(highs, dtype=np.int64),
    )


class RunFolder:
    """A run folder; each file is read once, when first needed, with a clear error if absent."""

    def __init__(
        self, path: str | os.PathLike[str], workload: str | os.PathLike[str] | None = None
    ) -> None:
        self.path = Path(path)
        if not self.path.is_dir():
            raise RunFolderError(f"run folder {self.path} does not exist or is not a folder")
        #: The run's Batsim workload when it is not the folder's ``workload.json`` (``-cw``).
        self.workload_path = Path(workload) if workload is not None else None

    @property
    def name(self) -> str:
        """Label of the run in tables and legends: the folder's name."""
        return self.path.resolve().name or str(self.path)

    def file(self, name: str) -> Path:
        """Path of ``name`` in the folder; :class:`RunFolderError` if it is not there."""
        return _require(self.path, name)

    @functools.cached_property
    def jobs(self) -> JobTable:
        """``out_jobs.csv``."""
        return read_jobs(self.file(JOBS_FILE))

    @functools.cached_property
    def schedule(self) -> dict[str, float]:
        """``out_schedule.csv``."""
        return read_schedule(self.file(SCHEDULE_FILE))

    @functools.cached_property
    def hierarchy(self) -> Platform:
        """``res_hierarchy.json`` (the resource tree: node memory, processors, cores)."""
        from hdeeprm.platform import load_hierarchy_json

        return load_hierarchy_json(self.file(HIERARCHY_FILE))

    @functools.cached_property
    def workload(self) -> Workload:
        """``workload.json``, or the workload given at construction (profiles carry ``mem`` MB
        and ``mem_bw`` GB/s per core)."""
        from hdeeprm.workload.model import load_workload

        if self.workload_path is not None:
            return load_workload(self.workload_path)
        if not (self.path / WORKLOAD_FILE).is_file():
            custom = self.custom_workload()
            if custom is not None:
                return load_workload(custom)
        return load_workload(self.file(WORKLOAD_FILE))

    def custom_workload(self) -> Path | None:
        """The workload a ``-cw`` run used, as recorded by ``hdeeprm-launch`` in the run's
        ``.hdeeprm_inputs.json``, when that file still exists with the same content."""
        from hdeeprm._manifest import Manifest, file_sha256

        try:
            entry = Manifest.load(self.path).entries[JOB_LIMITS_FILE]
            key = entry.key
            path = Path(key["path"])
            digest = file_sha256(path)
        except (OSError, ValueError, KeyError, TypeError, HDeepRMError):
            return None
        return path if digest == key.get("custom_workload") else None

    @functools.cached_property
    def nb_cores(self) -> int:
        """Cores of the platform: from ``res_hierarchy.json``, else the highest core used."""
        if (self.path / HIERARCHY_FILE).is_file():
            return len(self.hierarchy.cores)
        jobs = self.jobs
        if jobs.allocated is not None:
            _, _, high = self.allocations
            return int(high.max()) + 1 if high.size else 0
        return int(np.max(jobs.res[jobs.ran], initial=0))

    @functools.cached_property
    def allocations(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The core intervals of every job that ran: ``(job index, first core, last core)``."""
        jobs = self.jobs
        if jobs.allocated is None:
            raise RunFolderError(
                "no allocated_resources column; expected Batsim's out_jobs.csv columns",
                self.path / JOBS_FILE,
                "line 1",
            )
        return parse_allocations(jobs.allocated, self.path / JOBS_FILE)

    @functools.cached_property
    def overutilization(self) -> tuple[np.ndarray, ...]:
        """``hdeeprm_mem_bw_overutilization.csv``."""
        return read_overutilization(self.file(OVERUTILIZATION_FILE))

    @functools.cached_property
    def training_log(self) -> pd.DataFrame:
        """``training_log.csv`` (learning runs only)."""
        return read_training_log(self.file(TRAINING_LOG_FILE))
