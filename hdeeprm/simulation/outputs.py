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

Every file is written atomically.
"""

from __future__ import annotations

import os
from pathlib import Path

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


def _g(value: float) -> str:
    """C ``printf("%g")``."""
    return f"{value:g}"


def _div(num: float, den: float) -> float:
    """IEEE division, as the C++ code does it (x/0 is inf, 0/0 is nan)."""
    if den != 0:
        return num / den
    if num == 0 or num != num:
        return float("nan")
    return float("inf") if num > 0 else float("-inf")


#: ``consumed_energy`` of a job when energy is not simulated (Batsim without ``-E``).
NO_ENERGY = -1.0


def _job_row(job: SimJob, energy: bool = True) -> str:
    spec = job.spec
    walltime = spec.walltime if spec.walltime is not None else -1.0
    if job.state == REJECTED or job.start_time is None or job.finish_time is None:
        timing = ["", "", "", "", "", "", format_interval_set(job.alloc), ""]
    else:
        runtime = job.finish_time - job.start_time
        turnaround = job.finish_time - spec.subtime
        timing = [
            _f(job.start_time),
            _f(runtime),
            _f(job.finish_time),
            _f(job.start_time - spec.subtime),
            _f(turnaround),
            _f(_div(turnaround, runtime)),
            format_interval_set(job.alloc),
            _f(job.energy if energy else NO_ENERGY),
        ]
    return ",".join(
        [
            spec.id,
            job.workload,
            spec.profile,
            _f(spec.subtime),
            str(spec.res),
            _f(walltime),
            "1" if job.state == COMPLETED_SUCCESSFULLY else "0",
            job.state,
            *timing,
            '""',
        ]
    )


def jobs_csv(engine: Engine, *, energy: bool = True) -> str:
    """Text of ``out_jobs.csv`` (``energy=False``: ``consumed_energy`` is -1, as Batsim
    writes it without ``-E``)."""
    lines = [",".join(JOBS_COLUMNS)]
    lines.extend(_job_row(job, energy) for job in engine.finished_jobs)
    return "\n".join(lines) + "\n"


#: Columns of ``out_gpus.csv`` (hdeeprm's own file: Batsim has no GPUs).
GPUS_COLUMNS = ("job_id", "workload_name", "nb_gpus", "allocated_gpus", "service_factor")


def has_gpu_information(engine: Engine) -> bool:
    """Whether some ended job got GPUs or had its duration changed by the service-time model
    (only then is ``out_gpus.csv`` written, so GPU-less runs write the files they always did)."""
    return any(job.gpus or job.service_factor != 1.0 for job in engine.finished_jobs)


def gpus_csv(engine: Engine) -> str:
    """Text of ``out_gpus.csv``: per ended job, the GPU ids it got (an interval set, like
    ``allocated_resources``) and the service-time factor its work was multiplied by."""
    lines = [",".join(GPUS_COLUMNS)]
    for job in engine.finished_jobs:
        lines.append(
            ",".join(
                [
                    job.spec.id,
                    job.workload,
                    str(len(job.gpus)),
                    format_interval_set(job.gpus),
                    repr(job.service_factor),
                ]
            )
        )
    return "\n".join(lines) + "\n"


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


def machine_states_csv(engine: Engine) -> str:
    """Text of ``out_machine_states.csv``."""
    lines = [",".join(MACHINE_STATES_COLUMNS)]
    lines.extend(
        f"{_g(t)},0,0,0,{idle},{computing}" for t, idle, computing in engine.machine_state_trace
    )
    return "\n".join(lines) + "\n"


def pstate_changes_csv(engine: Engine) -> str:
    """Text of ``out_pstate_changes.csv``."""
    lines = [",".join(PSTATE_COLUMNS)]
    lines.extend(
        f"{_g(t)},{format_interval_set(hosts)},{state}" for t, hosts, state in engine.pstate_trace
    )
    return "\n".join(lines) + "\n"


def consumed_energy_csv(engine: Engine) -> str:
    """Text of ``out_consumed_energy.csv``: Batsim's ``%f`` (6 decimals) on every number; a
    P-state change gives two rows (before and after it, the second with the new wattmin)."""
    lines = [",".join(ENERGY_COLUMNS)]
    last_time = 0.0
    last_energy = 0.0
    for t, energy, kind, wattmin in engine.energy_trace:
        dt = t - last_time
        epower = _f((energy - last_energy) / dt) if dt > 0 else "NA"
        lines.append(f"{_f(t)},{_f(energy)},{kind},{_f(wattmin)},{epower}")
        last_time = t
        last_energy = energy
    return "\n".join(lines) + "\n"


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
    texts = {
        "jobs": jobs_csv(engine, energy=energy),
        "schedule": schedule_csv(
            engine,
            scheduling_time=scheduling_time,
            simulation_time=simulation_time,
            energy=energy,
        ),
        "machine_states": machine_states_csv(engine),
    }
    if energy:
        texts["pstate_changes"] = pstate_changes_csv(engine)
        texts["consumed_energy"] = consumed_energy_csv(engine)
    if has_gpu_information(engine):
        texts["gpus"] = gpus_csv(engine)
    paths: dict[str, Path] = {}
    for kind, text in texts.items():
        path = folder / f"{prefix}{kind}.csv"
        with atomic_open(path, "w", newline="") as handle:
            handle.write(text)
        paths[kind] = path
    return paths
