"""Batsim 4.x output files, written from an :class:`~hdeeprm.simulation.engine.Engine`.

Same file names (``{prefix}jobs.csv`` ...), same columns in the same order and the same number
formats as Batsim 4.x's tracers, so evalys and Batsim tooling read them unchanged:

* ``jobs.csv``: one row per ended job, in the order jobs ended; times with ``%f`` (C++
  ``std::to_string``); ``requested_time`` is the walltime or ``-1``; rejected jobs have empty
  timing and energy fields; ``metadata`` is ``""``.
* ``schedule.csv``: one row of aggregates, columns in lexicographic order (Batsim builds them
  from a ``std::map``). Means are over every job written, rejected ones included, as Batsim
  does. ``time_idle`` only counts idle spells that ended with a job start (Batsim closes a
  host's state spans on changes only). ``scheduling_time`` and ``simulation_time`` are
  wall-clock figures: written as 0 unless given, so that runs stay byte-identical.
* ``machine_states.csv``: host counts per state after every job start, job end and P-state
  request; ``%g`` times.
* ``pstate_changes.csv``: the initial P-state of every host at time 0, then for each
  ``SetResourceState`` a ``-1`` transition row followed by the new P-state, as Batsim writes.
* ``consumed_energy.csv``: total energy, event type (``s`` job start, ``e`` job end, ``p``
  P-state change), ``wattmin`` (sum of the hosts' idle power in their current P-states) and
  ``epower`` (mean power since the previous row, ``NA`` when no time passed); ``%g`` values.

Every file is written atomically and streamed: rows are formatted and written a chunk at a
time (:func:`write_lines`), so a whole trace's files never sit in memory as strings.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import IO

from hdeeprm import __version__ as _hdeeprm_version
from hdeeprm._atomic import atomic_open
from hdeeprm.simulation.engine import Engine, SimJob
from hdeeprm.simulation.events import COMPLETED_SUCCESSFULLY, REJECTED
from hdeeprm.simulation.intervals import format_interval_set

JOBS_COLUMNS = (
    "job_id",
    "workload_name",
    "profile",
    "submission_time",
    "requested_number_of_resources",
    "requested_time",
    "success",
    "final_state",
    "starting_time",
    "execution_time",
    "finish_time",
    "waiting_time",
    "turnaround_time",
    "stretch",
    "allocated_resources",
    "consumed_energy",
    "metadata",
)
MACHINE_STATES_COLUMNS = (
    "time",
    "nb_sleeping",
    "nb_switching_on",
    "nb_switching_off",
    "nb_idle",
    "nb_computing",
)
PSTATE_COLUMNS = ("time", "machine_id", "new_pstate")
ENERGY_COLUMNS = ("time", "energy", "event_type", "wattmin", "epower")
SCHEDULE_COLUMNS = tuple(
    sorted(
        (
            "batsim_version",
            "consumed_joules",
            "makespan",
            "max_slowdown",
            "max_turnaround_time",
            "max_waiting_time",
            "mean_slowdown",
            "mean_turnaround_time",
            "mean_waiting_time",
            "nb_computing_machines",
            "nb_grouped_switches",
            "nb_jobs",
            "nb_jobs_finished",
            "nb_jobs_killed",
            "nb_jobs_rejected",
            "nb_jobs_success",
            "nb_machine_switches",
            "scheduling_time",
            "simulation_time",
            "success_rate",
            "time_computing",
            "time_idle",
            "time_sleeping",
            "time_switching_off",
            "time_switching_on",
            "time_unavailable",
        )
    )
)

#: What ``batsim_version`` says in out_schedule.csv.
ENGINE_VERSION = f"hdeeprm-{_hdeeprm_version} embedded engine (Batsim 4.x compatible)"


def _f(value: float) -> str:
    """C++ ``std::to_string(double)``: ``%f``."""
    return f"{value:f}"


def _div(num: float, den: float) -> float:
    """IEEE division, as the C++ code does it (x/0 is inf, 0/0 is nan)."""
    if den != 0:
        return num / den
    if num == 0 or num != num:
        return float("nan")
    return float("inf") if num > 0 else float("-inf")


#: ``consumed_energy`` of a job when energy is not simulated (Batsim without ``-E``).
NO_ENERGY = -1.0


def _interval_texts() -> Callable[[tuple[int, ...]], str]:
    """:func:`format_interval_set` memoised for one file: a whole trace repeats the same host
    sets (the same cores allocated, switched off and on again) hundreds of thousands of times.
    """
    cache: dict[tuple[int, ...], str] = {}
    get = cache.get

    def text(ids: tuple[int, ...]) -> str:
        found = get(ids)
        if found is None:
            found = cache[ids] = format_interval_set(ids)
        return found

    return text


# Rows are %-formatted: on a whole trace's millions of rows that is about 30% faster than the
# equivalent f-strings, and "%f"/"%g" give exactly what format(x, "f"/"g") gives.
def _job_lines(jobs: Iterable[SimJob], energy: bool) -> Iterator[str]:
    """Lines of ``out_jobs.csv`` (each ending with a newline), one job at a time."""
    yield ",".join(JOBS_COLUMNS) + "\n"
    alloc_text = _interval_texts()
    for job in jobs:
        spec = job.spec
        walltime = spec.walltime if spec.walltime is not None else -1.0
        state = job.state
        success = "1" if state == COMPLETED_SUCCESSFULLY else "0"
        start, finish = job.start_time, job.finish_time
        if state == REJECTED or start is None or finish is None:
            yield '%s,%s,%s,%f,%s,%f,%s,%s,,,,,,,%s,,""\n' % (  # noqa: UP031
                spec.id,
                job.workload,
                spec.profile,
                spec.subtime,
                spec.res,
                walltime,
                success,
                state,
                alloc_text(job.alloc),
            )
            continue
        runtime = finish - start
        turnaround = finish - spec.subtime
        yield '%s,%s,%s,%f,%s,%f,%s,%s,%f,%f,%f,%f,%f,%f,%s,%f,""\n' % (  # noqa: UP031
            spec.id,
            job.workload,
            spec.profile,
            spec.subtime,
            spec.res,
            walltime,
            success,
            state,
            start,
            runtime,
            finish,
            start - spec.subtime,
            turnaround,
            turnaround / runtime if runtime else _div(turnaround, runtime),
            alloc_text(job.alloc),
            job.energy if energy else NO_ENERGY,
        )


def jobs_csv(engine: Engine, *, energy: bool = True) -> str:
    """Text of ``out_jobs.csv`` (``energy=False``: ``consumed_energy`` is -1, as Batsim
    writes it without ``-E``)."""
    return "".join(_job_lines(engine.finished_jobs, energy))


#: Columns of ``out_gpus.csv`` (hdeeprm's own file: Batsim has no GPUs).
GPUS_COLUMNS = ("job_id", "workload_name", "nb_gpus", "allocated_gpus", "service_factor")


def has_gpu_information(engine: Engine) -> bool:
    """Whether some ended job got GPUs or had its duration changed by the service-time model
    (only then is ``out_gpus.csv`` written, so GPU-less runs write the files they always did)."""
    return any(job.gpus or job.service_factor != 1.0 for job in engine.finished_jobs)


def _gpu_lines(engine: Engine) -> Iterator[str]:
    yield ",".join(GPUS_COLUMNS) + "\n"
    for job in engine.finished_jobs:
        yield (
            f"{job.spec.id},{job.workload},{len(job.gpus)},"
            f"{format_interval_set(job.gpus)},{job.service_factor!r}\n"
        )


def gpus_csv(engine: Engine) -> str:
    """Text of ``out_gpus.csv``: per ended job, the GPU ids it got (an interval set, like
    ``allocated_resources``) and the service-time factor its work was multiplied by."""
    return "".join(_gpu_lines(engine))


def schedule_values(
    engine: Engine,
    *,
    scheduling_time: float = 0.0,
    simulation_time: float = 0.0,
    energy: bool = True,
) -> dict[str, str]:
    """The aggregates of ``out_schedule.csv``, formatted as Batsim writes them
    (``energy=False``: ``consumed_joules`` 0, as Batsim without ``-E``: -1 minus -1)."""
    nb_jobs = nb_finished = nb_success = nb_killed = nb_rejected = 0
    sum_wait = sum_turn = sum_slow = 0.0
    makespan = max_wait = max_turn = max_slow = 0.0
    for job in engine.finished_jobs:
        nb_jobs += 1
        if job.state == REJECTED or job.start_time is None or job.finish_time is None:
            nb_rejected += 1
            continue
        nb_finished += 1
        if job.state == COMPLETED_SUCCESSFULLY:
            nb_success += 1
        else:
            nb_killed += 1
        runtime = job.finish_time - job.start_time
        wait = job.start_time - job.spec.subtime
        turn = job.finish_time - job.spec.subtime
        slow = _div(turn, runtime)
        sum_wait += wait
        sum_turn += turn
        sum_slow += slow
        makespan = max(makespan, job.finish_time)
        max_wait = max(max_wait, wait)
        max_turn = max(max_turn, turn)
        if slow > max_slow:
            max_slow = slow
    first = engine.energy_first_submission or 0.0
    values = {
        "batsim_version": ENGINE_VERSION,
        "consumed_joules": _f(engine.energy_last_completion - first if energy else 0.0),
        "makespan": _f(makespan),
        "max_slowdown": _f(max_slow),
        "max_turnaround_time": _f(max_turn),
        "max_waiting_time": _f(max_wait),
        "mean_slowdown": _f(_div(sum_slow, nb_jobs)),
        "mean_turnaround_time": _f(_div(sum_turn, nb_jobs)),
        "mean_waiting_time": _f(_div(sum_wait, nb_jobs)),
        "nb_computing_machines": str(engine.nb_hosts),
        "nb_grouped_switches": str(engine.nb_grouped_switches),
        "nb_jobs": str(nb_jobs),
        "nb_jobs_finished": str(nb_finished),
        "nb_jobs_killed": str(nb_killed),
        "nb_jobs_rejected": str(nb_rejected),
        "nb_jobs_success": str(nb_success),
        "nb_machine_switches": str(engine.nb_machine_switches),
        "scheduling_time": _f(scheduling_time),
        "simulation_time": _f(simulation_time),
        "success_rate": _f(_div(nb_success, nb_jobs)),
        "time_computing": _f(engine.time_computing),
        "time_idle": _f(engine.time_idle),
        "time_sleeping": _f(0.0),
        "time_switching_off": _f(0.0),
        "time_switching_on": _f(0.0),
        "time_unavailable": _f(0.0),
    }
    return {key: values[key] for key in SCHEDULE_COLUMNS}


def schedule_csv(
    engine: Engine,
    *,
    scheduling_time: float = 0.0,
    simulation_time: float = 0.0,
    energy: bool = True,
) -> str:
    """Text of ``out_schedule.csv``."""
    values = schedule_values(
        engine, scheduling_time=scheduling_time, simulation_time=simulation_time, energy=energy
    )
    return ",".join(values) + "\n" + ",".join(values.values()) + "\n"


def _machine_state_lines(engine: Engine) -> Iterator[str]:
    yield ",".join(MACHINE_STATES_COLUMNS) + "\n"
    for row in engine.machine_state_trace:
        yield "%g,0,0,0,%s,%s\n" % row  # noqa: UP031


def machine_states_csv(engine: Engine) -> str:
    """Text of ``out_machine_states.csv``."""
    return "".join(_machine_state_lines(engine))


def _pstate_lines(engine: Engine) -> Iterator[str]:
    yield ",".join(PSTATE_COLUMNS) + "\n"
    hosts_text = _interval_texts()
    for t, hosts, state in engine.pstate_trace:
        yield "%g,%s,%s\n" % (t, hosts_text(hosts), state)  # noqa: UP031


def pstate_changes_csv(engine: Engine) -> str:
    """Text of ``out_pstate_changes.csv``."""
    return "".join(_pstate_lines(engine))


def _energy_lines(engine: Engine) -> Iterator[str]:
    yield ",".join(ENERGY_COLUMNS) + "\n"
    last_time = 0.0
    last_energy = 0.0
    for t, energy, kind, wattmin in engine.energy_trace:
        dt = t - last_time
        if dt > 0:
            epower = (energy - last_energy) / dt
            yield "%f,%f,%s,%f,%f\n" % (t, energy, kind, wattmin, epower)  # noqa: UP031
        else:
            yield "%f,%f,%s,%f,NA\n" % (t, energy, kind, wattmin)  # noqa: UP031
        last_time = t
        last_energy = energy


def consumed_energy_csv(engine: Engine) -> str:
    """Text of ``out_consumed_energy.csv``: Batsim's ``%f`` (6 decimals) on every number; a
    P-state change gives two rows (before and after it, the second with the new wattmin)."""
    return "".join(_energy_lines(engine))


#: Lines joined into one write: big enough that writes cost nothing per row, small enough that
#: a whole trace's file is never held in memory (about 1 MB of text at a time).
CHUNK_LINES = 10_000


def write_lines(handle: IO[str], lines: Iterable[str]) -> None:
    """Write ``lines`` (each with its line ending) to ``handle``, :data:`CHUNK_LINES` at a
    time, so a file of millions of rows never exists as one string."""
    it = iter(lines)
    while chunk := "".join(islice(it, CHUNK_LINES)):
        handle.write(chunk)


def write_outputs(
    engine: Engine,
    output_dir: str | os.PathLike[str],
    prefix: str = "out_",
    *,
    scheduling_time: float = 0.0,
    simulation_time: float = 0.0,
    energy: bool = True,
) -> dict[str, Path]:
    """Write the five Batsim output files into ``output_dir``; return their paths by kind.

    A run in which some job got GPUs or a service-time factor also gets ``out_gpus.csv``.

    The engine must have been built with ``trace=True`` (the default) for the time series.
    ``energy=False`` writes what Batsim writes without ``-E``: jobs' ``consumed_energy`` -1,
    ``consumed_joules`` 0, and neither ``out_pstate_changes.csv`` nor
    ``out_consumed_energy.csv``.
    """
    folder = Path(output_dir)
    folder.mkdir(parents=True, exist_ok=True)
    schedule = schedule_csv(
        engine, scheduling_time=scheduling_time, simulation_time=simulation_time, energy=energy
    )
    files: dict[str, Iterable[str]] = {
        "jobs": _job_lines(engine.finished_jobs, energy),
        "schedule": (schedule,),
        "machine_states": _machine_state_lines(engine),
    }
    if energy:
        files["pstate_changes"] = _pstate_lines(engine)
        files["consumed_energy"] = _energy_lines(engine)
    if has_gpu_information(engine):
        files["gpus"] = _gpu_lines(engine)
    paths: dict[str, Path] = {}
    for kind, lines in files.items():
        path = folder / f"{prefix}{kind}.csv"
        with atomic_open(path, "w", newline="") as handle:
            write_lines(handle, lines)
        paths[kind] = path
    return paths
