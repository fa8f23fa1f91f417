"""A classic ``hdeeprm-launch`` run on a real Batsim (``--simulator batsim``).

The same :class:`~hdeeprm.decision.WorkloadManager` and agent as the embedded run answer the
messages of a Batsim process (:class:`~hdeeprm.protocol.client.BatsimSimulation`). Batsim writes
its outputs into a hidden working folder inside the run folder; they are moved into place only
when the run ends well (each move is atomic), so a failed or interrupted run never leaves
half-written ``out_*.csv`` files. Batsim's own output (``batsim.log``) is kept either way.
"""

from __future__ import annotations

import contextlib
import csv
import math
import os
import shutil
import tempfile
import time
from pathlib import Path

from hdeeprm.agents import ClassicAgent
from hdeeprm.decision import WorkloadManager
from hdeeprm.errors import InputError
from hdeeprm.experiment.inputs import ExperimentInputs
from hdeeprm.experiment.run import (
    BOUNDED_SLOWDOWN_TAU,
    OVERUTILIZATION_FILE,
    RunMetrics,
    RunResult,
    _write_overutilization,
    action_space,
    deferred_interrupts,
    insights_log,
)
from hdeeprm.protocol.client import DEFAULT_CLIENT_TIMEOUT, BatsimSimulation
from hdeeprm.simulation.events import COMPLETED_SUCCESSFULLY, REJECTED, SIMULATION_ENDS

#: Batsim's process output, kept in the run folder.
BATSIM_LOG_FILE = "batsim.log"
#: Batsim's output files, by kind (``-e <folder>/out`` gives ``out_jobs.csv``...).
OUTPUT_KINDS = ("jobs", "schedule", "machine_states", "pstate_changes", "consumed_energy")


def metrics_from_outputs(
    folder: Path, manager: WorkloadManager, wall_time: float, prefix: str = "out_"
) -> RunMetrics:
    """The launcher's headline figures, read from Batsim's ``out_jobs.csv`` (by column name)
    and ``out_schedule.csv`` (energy: ``consumed_joules``)."""
    waits: list[float] = []
    turns: list[float] = []
    slows: list[float] = []
    bslows: list[float] = []
    nb_jobs = completed = rejected = 0
    makespan = 0.0
    jobs_csv = folder / f"{prefix}jobs.csv"
    try:
        with open(jobs_csv, newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                nb_jobs += 1
                state = row.get("final_state", "")
                if state == REJECTED or not row.get("starting_time"):
                    rejected += 1
                    continue
                if state == COMPLETED_SUCCESSFULLY:
                    completed += 1
                sub = float(row["submission_time"])
                start = float(row["starting_time"])
                finish = float(row["finish_time"])
                run = finish - start
                waits.append(start - sub)
                turns.append(finish - sub)
                slows.append((finish - sub) / run if run > 0 else 1.0)
                bslows.append(max((finish - sub) / max(run, BOUNDED_SLOWDOWN_TAU), 1.0))
                makespan = max(makespan, finish)
    except (OSError, KeyError, ValueError) as exc:
        raise InputError(f"cannot read Batsim's jobs output: {exc}", jobs_csv) from None
    energy = 0.0
    schedule_csv = folder / f"{prefix}schedule.csv"
    with (
        contextlib.suppress(OSError, KeyError, ValueError, StopIteration),
        open(schedule_csv, newline="", encoding="utf-8") as handle,
    ):
        energy = float(next(csv.DictReader(handle))["consumed_joules"])

    def mean(values: list[float]) -> float:
        return math.fsum(values) / len(values) if values else 0.0

    return RunMetrics(
        nb_jobs=nb_jobs,
        nb_completed=completed,
        nb_rejected=rejected,
        makespan=makespan,
        energy_j=energy,
        mean_waiting=mean(waits),
        mean_turnaround=mean(turns),
        mean_slowdown=mean(slows),
        max_slowdown=max(slows, default=0.0),
        mean_bounded_slowdown=mean(bslows),
        over_subscriptions=len(manager.episodes),
        decisions=manager.nb_decisions,
        wall_time=wall_time,
    )


def run_classic_batsim(
    inputs: ExperimentInputs,
    output_dir: str | os.PathLike[str] | None = None,
    *,
    seed: int | None = None,
    progress: bool = False,
    executable: str | os.PathLike[str] = "batsim",
    timeout: float | None = DEFAULT_CLIENT_TIMEOUT,
    endpoint: str | None = None,
) -> RunResult:
    """Run the prepared experiment's CLASSIC agent on a Batsim process; collect its outputs.

    Args:
        inputs: from :func:`~hdeeprm.experiment.prepare_inputs`.
        output_dir: the run folder (default: the inputs' run folder).
        seed: seeds the ``random`` policies (default: the options' seed).
        progress: show a progress bar over completed jobs.
        executable: Batsim 4.x (``batsim`` on PATH by default) or any executable taking
            Batsim's flags and speaking its protocol, such as ``hdeeprm-sim``.
        timeout: longest wait for one Batsim message (s).
        endpoint: endpoint to bind (default: a free port on 127.0.0.1).

    Raises:
        BatsimNotFoundError, BatsimExitedError, PeerTimeoutError, EndpointInUseError,
        ProtocolError: the process is missing, failed, went silent, or spoke garbage; it has
        been stopped and no ``out_*.csv`` file was written.
    """
    options = inputs.options
    out = Path(output_dir) if output_dir is not None else inputs.output_dir
    out.mkdir(parents=True, exist_ok=True)
    actions = action_space(inputs)
    if options.agent.policy_pair is None:
        raise ValueError("a CLASSIC run needs agent.policy_pair in the options")
    agent = ClassicAgent(actions, options.agent.policy_pair)
    manager = WorkloadManager(
        inputs.platform, actions, agent, seed=options.seed if seed is None else seed
    )
    work = Path(tempfile.mkdtemp(prefix=".batsim-", dir=out))
    log_path = work / BATSIM_LOG_FILE
    sim = BatsimSimulation(
        inputs.platform_xml,
        [inputs.workload_path],
        work / "out",
        executable=executable,
        timeout=timeout,
        endpoint=endpoint,
        log_path=log_path,
    )
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(
            total=len(inputs.workload.jobs), unit="job", desc="batsim", disable=None, leave=False
        )
    try:
        with insights_log(out, options.log_level):
            start = time.perf_counter()
            handle = manager.handle
            message = sim.start()
            done = 0
            while True:
                decisions = handle(message)
                if message.events and message.events[-1].type == SIMULATION_ENDS:
                    break
                message = sim.proceed(decisions)
                if bar is not None and manager.nb_completed - done >= 256:
                    bar.update(manager.nb_completed - done)
                    done = manager.nb_completed
            sim.close()
            wall = time.perf_counter() - start
            if bar is not None:
                bar.update(manager.nb_completed - done)
            metrics = metrics_from_outputs(work, manager, wall)
            outputs: dict[str, Path] = {}
            with deferred_interrupts():
                for kind in OUTPUT_KINDS:
                    source = work / f"out_{kind}.csv"
                    if source.exists():
                        outputs[kind] = out / source.name
                        os.replace(source, outputs[kind])
                for extra in sorted(work.glob("out_*")):  # other Batsim outputs, if any
                    os.replace(extra, out / extra.name)
                overuse = out / OVERUTILIZATION_FILE
                _write_overutilization(overuse, manager.episodes)
                outputs["mem_bw_overutilization"] = overuse
    finally:
        sim.stop()
        if bar is not None:
            bar.close()
        with contextlib.suppress(OSError):
            if log_path.exists():
                os.replace(log_path, out / BATSIM_LOG_FILE)
        shutil.rmtree(work, ignore_errors=True)
    return RunResult(metrics, outputs, manager.stats())


__all__ = ["BATSIM_LOG_FILE", "metrics_from_outputs", "run_classic_batsim"]
