"""``hdeeprm-jobstat WORKLOAD FIELD STATISTIC``: one statistic of one job field of a workload.

WORKLOAD is an SWF trace (plain or ``.gz``) or a converted Batsim ``workload.json`` (by its
``.json`` suffix). SWF jobs go through the converter's own filters and window (``--max-cores``,
``--start``, ``--nb-jobs``), so the jobs measured are exactly the jobs a conversion would keep.
Percentiles use linear interpolation between closest ranks (NumPy's default).
"""

from __future__ import annotations

import re
from pathlib import Path

import click
import numpy as np

from hdeeprm._inputfile import check_input_file
from hdeeprm.cli._report import Command, guarded
from hdeeprm.errors import InputError
from hdeeprm.workload.convert import select_jobs
from hdeeprm.workload.model import load_workload
from hdeeprm.workload.swf import SwfReader

#: Fields and their units.
FIELDS: dict[str, str] = {"req_time": "s", "size": "cores", "mem": "MB", "mem_bw": "GB/s"}
STATISTICS_HELP = "min, max, mean, median or pNN (a percentile 0-100, e.g. p95, p99.9)"
_PERCENTILE = re.compile(r"p(\d+(?:\.\d*)?|\.\d+)")
#: Generous default so an SWF is not filtered by size unless asked.
_NO_CORE_LIMIT = 2**62


def parse_statistic(name: str) -> tuple[str, float | None]:
    """``("percentile", q)`` for ``pNN``, else ``(name, None)``; ``ValueError`` if unknown."""
    lowered = name.strip().lower()
    if lowered in ("min", "max", "mean", "median"):
        return lowered, None
    match = _PERCENTILE.fullmatch(lowered)
    if match:
        q = float(match.group(1))
        if 0.0 <= q <= 100.0:
            return "percentile", q
        raise ValueError(f"percentile {q:g} is outside 0-100")
    raise ValueError(f"unknown statistic {name!r}; expected {STATISTICS_HELP}")


def compute_statistic(values: np.ndarray, statistic: str) -> float:
    """Apply ``statistic`` (see :func:`parse_statistic`) to a non-empty array."""
    kind, q = parse_statistic(statistic)
    if values.size == 0:
        raise ValueError("no jobs to compute a statistic over")
    if kind == "min":
        return float(values.min())
    if kind == "max":
        return float(values.max())
    if kind == "mean":
        return float(values.mean())
    if kind == "median":
        return float(np.median(values))
    assert q is not None
    return float(np.percentile(values, q))


def format_number(value: float) -> str:
    """Integers without decimals, other values with up to 6 decimals, no trailing zeros."""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return text if text not in ("", "-0") else f"{value:.6g}"


def swf_field_values(
    path: str,
    field: str,
    *,
    max_cores: int | None = None,
    nb_jobs: int | None = None,
    start: int = 0,
) -> np.ndarray:
    """Values of ``field`` over the usable jobs of an SWF window (converter rules)."""
    if field == "mem_bw":
        raise ValueError(
            "an SWF trace has no memory bandwidth; mem_bw exists only in converted "
            "workloads (workload.json)"
        )
    jobs, _ = select_jobs(
        SwfReader(path),
        max_cores=_NO_CORE_LIMIT if max_cores is None else max_cores,
        nb_jobs=nb_jobs,
        start=start,
        source=path,
    )
    if field == "size":
        return np.fromiter((j.res for j in jobs), dtype=float, count=len(jobs))
    attr = "req_time" if field == "req_time" else "mem"
    return np.fromiter((getattr(j, attr) for j in jobs), dtype=float, count=len(jobs))


def json_field_values(
    path: str,
    field: str,
    *,
    max_cores: int | None = None,
    nb_jobs: int | None = None,
    start: int = 0,
) -> np.ndarray:
    """Values of ``field`` over a Batsim workload's jobs (submission order), windowed."""
    workload = load_workload(path)
    jobs = workload.jobs
    if max_cores is not None:
        jobs = [job for job in jobs if job.res <= max_cores]
    jobs = jobs[start:] if nb_jobs is None else jobs[start : start + nb_jobs]
    values = np.empty(len(jobs), dtype=float)
    for index, job in enumerate(jobs):
        if field == "size":
            values[index] = job.res
            continue
        profile = workload.profiles[job.profile]
        value = profile.extra.get(field)
        if value is None and field == "req_time":
            value = job.walltime if job.walltime is not None else profile.delay
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(
                f"job {job.id!r} has no numeric {field!r} in its profile {job.profile!r}",
                path,
                f"profiles.{job.profile}.{field}",
            )
        values[index] = value
    return values


@click.command(cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@guarded
@click.argument("workload", type=click.Path(exists=True, dir_okay=False))
@click.argument("field", type=click.Choice(list(FIELDS)), metavar="FIELD")
@click.argument("statistic")
@click.option(
    "--nb-jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Only this many jobs (usable jobs for SWF), after --start.",
)
@click.option(
    "--start",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Skip this many (usable) jobs first.",
)
@click.option(
    "--max-cores",
    type=click.IntRange(min=1),
    default=None,
    help="Drop jobs asking for more cores (the platform size), as the converter does.",
)
@click.option("-v", "--verbose", is_flag=True, help="Also print the field, job count and unit.")
def main(
    workload: str,
    field: str,
    statistic: str,
    nb_jobs: int | None,
    start: int,
    max_cores: int | None,
    verbose: bool,
) -> None:
    """Print STATISTIC of job FIELD over WORKLOAD (SWF, SWF.gz or workload.json).

    FIELD is req_time (s), size (cores), mem (MB per core) or mem_bw (GB/s, converted
    workloads only). STATISTIC is min, max, mean, median or pNN (percentile, e.g. p95, p99.9).
    """
    try:
        parse_statistic(statistic)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="STATISTIC") from None
    try:
        check_input_file(workload, "workload")  # a FIFO would block the reader forever
    except InputError as exc:
        raise click.BadParameter(str(exc), param_hint="WORKLOAD") from None
    is_json = Path(workload).suffix.lower() == ".json"
    if field == "mem_bw" and not is_json:
        raise click.BadParameter(
            "mem_bw does not exist in SWF traces (it is drawn at conversion); use a converted "
            "workload.json or one of: req_time, size, mem",
            param_hint="FIELD",
        )
    reader = json_field_values if is_json else swf_field_values
    try:
        values = reader(workload, field, max_cores=max_cores, nb_jobs=nb_jobs, start=start)
        if values.size == 0:
            raise InputError("no jobs left after --start/--nb-jobs/--max-cores", workload)
        result = compute_statistic(values, statistic)
    except (InputError, ValueError) as exc:
        raise click.UsageError(str(exc)) from None  # the user's to fix: exit code 2
    if verbose:
        click.echo(
            f"{field} {statistic.lower()} over {values.size} jobs of {Path(workload).name}: "
            f"{format_number(result)} {FIELDS[field]}"
        )
    else:
        click.echo(format_number(result))


if __name__ == "__main__":  # pragma: no cover
    main()
