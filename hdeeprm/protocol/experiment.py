"""A classic ``hdeeprm-launch`` run on a real Batsim (``--simulator batsim``).

The same :class:`~hdeeprm.decision.WorkloadManager` and agent as the embedded run answer the
messages of a Batsim process (:class:`~hdeeprm.protocol.client.BatsimSimulation`). Batsim writes
its outputs into a hidden working folder inside the run folder; they are moved into place only
when the run ends well (each move is atomic), so a failed or interrupted run never leaves
half-written ``out_*.csv`` files. Batsim's own output (``batsim.log``) is kept either way.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from hdeeprm._atomic import deferred_interrupts, ensure_dir
from hdeeprm.analysis.metrics import BOUNDED_SLOWDOWN_TAU, job_metrics
from hdeeprm.analysis.runfolder import read_jobs, read_schedule
from hdeeprm.decision import WorkloadManager
from hdeeprm.errors import output_error
from hdeeprm.experiment.run import (
    RunMetrics,
    RunResult,
    classic_manager,
    drive,
    insights_log,
    write_overutilization,
)
from hdeeprm.inputs import ExperimentInputs
from hdeeprm.protocol.client import DEFAULT_CLIENT_TIMEOUT, BatsimSimulation
from hdeeprm.protocol.transport import check_endpoint

#: Batsim's process output, kept in the run folder.
BATSIM_LOG_FILE = "batsim.log"
#: Batsim's output files, by kind (``-e <folder>/out`` gives ``out_jobs.csv``...).
OUTPUT_KINDS = ("jobs", "schedule", "machine_states", "pstate_changes", "consumed_energy")


def metrics_from_outputs(
    folder: Path, manager: WorkloadManager, wall_time: float, prefix: str = "out_"
) -> RunMetrics:
    """The launcher's headline figures, read from Batsim's ``out_jobs.csv`` (by column name)
    and ``out_schedule.csv`` (energy: ``consumed_joules``), with the same functions as
    ``hdeeprm-metrics``."""
    jobs = read_jobs(folder / f"{prefix}jobs.csv")
    energy = read_schedule(folder / f"{prefix}schedule.csv")["consumed_joules"]
    times = job_metrics(jobs.submit, jobs.start, jobs.finish, tau=BOUNDED_SLOWDOWN_TAU)
    return RunMetrics(
        nb_jobs=times.nb_jobs,
        nb_completed=manager.nb_completed,
        nb_rejected=times.nb_jobs - times.nb_ran,
        makespan=times.makespan,
        energy_j=energy,
        mean_waiting=times.mean_waiting,
        mean_turnaround=times.mean_turnaround,
        mean_slowdown=times.mean_slowdown,
        max_slowdown=times.max_slowdown,
        mean_bounded_slowdown=times.mean_bounded_slowdown,
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
        inputs: from :func:`~hdeeprm.inputs.prepare_inputs`.
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
    out = Path(output_dir) if output_dir is not None else inputs.output_dir
    if endpoint is not None:
        check_endpoint(endpoint)  # before any folder or process exists
    ensure_dir(out)
    manager = classic_manager(inputs, seed)
    try:
        work = Path(tempfile.mkdtemp(prefix=".batsim-", dir=out))
    except OSError as exc:
        raise output_error(exc, out) from None
    log_path = work / BATSIM_LOG_FILE
    sim = BatsimSimulation(
        inputs.platform_xml,
        [inputs.workload_path],
        work / "out",
        executable=executable,
        timeout=timeout,
        endpoint=endpoint,
        log_path=log_path,
        log_shown_as=out / BATSIM_LOG_FILE,  # where the finally clause below moves it
    )
    try:
        with insights_log(out, inputs.options.log_level):
            wall = drive(sim, manager, len(inputs.workload.jobs), progress=progress, desc="batsim")
            sim.close()
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
                outputs["mem_bw_overutilization"] = write_overutilization(
                    out, manager, detail=inputs.options.log_detail
                )
    finally:
        sim.stop()
        with contextlib.suppress(OSError):
            if log_path.exists():
                os.replace(log_path, out / BATSIM_LOG_FILE)
        shutil.rmtree(work, ignore_errors=True)
    return RunResult(metrics, outputs, manager.stats())


__all__ = ["BATSIM_LOG_FILE", "metrics_from_outputs", "run_classic_batsim"]
