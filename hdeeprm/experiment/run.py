"""Run one experiment with a classic (fixed policy pair) agent on the embedded engine."""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from hdeeprm._atomic import atomic_open, deferred_interrupts, ensure_dir
from hdeeprm._gc import young_collections_only
from hdeeprm.analysis.metrics import BOUNDED_SLOWDOWN_TAU, job_metrics
from hdeeprm.decision import ActionSpace, WorkloadManager
from hdeeprm.decision.fixed_pair import FixedPair
from hdeeprm.decision.oversubscription import merged_spans as merged_spans
from hdeeprm.decision.oversubscription import span_rows
from hdeeprm.inputs import ExperimentInputs
from hdeeprm.logs import run_log
from hdeeprm.simulation import (
    SIMULATION_ENDS,
    Engine,
    write_outputs,
)
from hdeeprm.simulation.driver import wants_state_changes
from hdeeprm.simulation.events import COMPLETED_SUCCESSFULLY, REJECTED, Decision, Message
from hdeeprm.simulation.service_time import ServiceTimeModel

INSIGHTS_FILE = "insights.log"
OVERUTILIZATION_FILE = "hdeeprm_mem_bw_overutilization.csv"


def action_space(inputs: ExperimentInputs) -> ActionSpace:
    """The action space the options describe (selection order, then void)."""
    env = inputs.options.env
    return ActionSpace(env.selection, env.void)


@dataclass(slots=True)
class RunMetrics:
    """Headline figures of one run (what ``hdeeprm-launch`` prints)."""

    nb_jobs: int
    nb_completed: int
    nb_rejected: int
    makespan: float
    energy_j: float
    mean_waiting: float
    mean_turnaround: float
    mean_slowdown: float
    max_slowdown: float
    mean_bounded_slowdown: float
    over_subscriptions: int
    decisions: int
    wall_time: float

    def lines(self) -> list[str]:
        """Human-readable summary lines."""
        return [
            f"jobs             {self.nb_completed} completed, {self.nb_rejected} rejected "
            f"(of {self.nb_jobs})",
            f"makespan         {self.makespan:,.1f} s ({self.makespan / 3600:,.2f} h)",
            f"energy           {self.energy_j:,.0f} J ({self.energy_j / 3.6e6:,.2f} kWh)",
            f"waiting time     mean {self.mean_waiting:,.1f} s",
            f"turnaround time  mean {self.mean_turnaround:,.1f} s",
            f"slowdown         mean {self.mean_slowdown:,.3f}, max {self.max_slowdown:,.3f}, "
            f"bounded(10 s) mean {self.mean_bounded_slowdown:,.3f}",
            f"bandwidth        {self.over_subscriptions} over-subscription episode(s)",
            f"decisions        {self.decisions} decision point(s), "
            f"simulated in {self.wall_time:.2f} s",
        ]


@dataclass(slots=True)
class RunResult:
    """What one classic run produced."""

    metrics: RunMetrics
    outputs: dict[str, Path] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)


def compute_metrics(engine: Engine, manager: WorkloadManager, wall_time: float) -> RunMetrics:
    """Figures over the ended jobs (rejected jobs count only in ``nb_rejected``); the time
    figures come from :func:`hdeeprm.analysis.metrics.job_metrics`, as ``hdeeprm-metrics``."""
    nan = math.nan
    submit: list[float] = []
    start: list[float] = []
    finish: list[float] = []
    completed = 0
    for job in engine.finished_jobs:
        submit.append(job.spec.subtime)
        ran = job.state != REJECTED and job.start_time is not None
        start.append(job.start_time if ran and job.start_time is not None else nan)
        finish.append(job.finish_time if ran and job.finish_time is not None else nan)
        completed += job.state == COMPLETED_SUCCESSFULLY
    times = job_metrics(submit, start, finish, tau=BOUNDED_SLOWDOWN_TAU)
    return RunMetrics(
        nb_jobs=times.nb_jobs,
        nb_completed=completed,
        nb_rejected=times.nb_jobs - times.nb_ran,
        makespan=times.makespan,
        energy_j=engine.consumed_energy,
        mean_waiting=times.mean_waiting,
        mean_turnaround=times.mean_turnaround,
        mean_slowdown=times.mean_slowdown,
        max_slowdown=times.max_slowdown,
        mean_bounded_slowdown=times.mean_bounded_slowdown,
        over_subscriptions=len(manager.episodes),
        decisions=manager.nb_decisions,
        wall_time=wall_time,
    )


@contextlib.contextmanager
def insights_log(output_dir: Path, level: str) -> Iterator[None]:
    """Route every ``hdeeprm`` logger to ``insights.log``, written atomically.

    The log goes to a temporary file during the run and replaces ``insights.log`` only when
    the run ends normally; an interrupted or failed run leaves the previous log untouched.
    A write error (disk full...) stops the run with one :class:`~hdeeprm.errors.OutputError`.
    """
    with run_log(output_dir / INSIGHTS_FILE, level):
        yield


class Simulator(Protocol):
    """What a classic run drives: the embedded :class:`Engine` or a Batsim process."""

    def start(self) -> Message: ...

    def proceed(self, decisions: Sequence[Decision]) -> Message: ...


def classic_manager(inputs: ExperimentInputs, seed: int | None = None) -> WorkloadManager:
    """The workload manager of a CLASSIC run, with its fixed policy pair as agent."""
    options = inputs.options
    actions = action_space(inputs)
    if options.agent.policy_pair is None:
        raise ValueError("a CLASSIC run needs agent.policy_pair in the options")
    agent = FixedPair(actions, options.agent.policy_pair)
    scheduler = None
    if options.agent.scheduler is not None:
        from hdeeprm.scheduling import BackfillScheduler

        scheduler = BackfillScheduler(options.agent.scheduler)
    return WorkloadManager(
        inputs.platform,
        actions,
        agent,
        seed=options.seed if seed is None else seed,
        scheduler=scheduler,
        log_detail=options.log_detail,
    )


def drive(
    simulator: Simulator,
    manager: WorkloadManager,
    nb_jobs: int,
    *,
    progress: bool = False,
    desc: str = "simulating",
) -> float:
    """Answer every message of ``simulator`` with ``manager`` until the simulation ends;
    return the wall time. ``progress`` shows a bar over ended jobs."""
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=nb_jobs, unit="job", desc=desc, disable=None, leave=False)
    try:
        start = time.perf_counter()
        handle = manager.handle
        # A replay keeps what it creates: full collections would rescan it all, freeing nothing.
        with young_collections_only():
            message = simulator.start()
            done = 0
            while True:
                decisions = handle(message)
                if message.events and message.events[-1].type == SIMULATION_ENDS:
                    break
                message = simulator.proceed(decisions)
                if bar is not None and manager.nb_completed - done >= 256:
                    bar.update(manager.nb_completed - done)
                    done = manager.nb_completed
        wall = time.perf_counter() - start
        if bar is not None:
            bar.update(manager.nb_completed - done)
        return wall
    finally:
        if bar is not None:
            bar.close()


def write_overutilization(out: Path, manager: WorkloadManager, *, detail: bool = False) -> Path:
    """Write ``hdeeprm_mem_bw_overutilization.csv`` (processor, start, end) into ``out``:
    merged spans (:func:`merged_spans`), or with ``detail`` one row per episode."""
    path = out / OVERUTILIZATION_FILE
    chunks = [manager.episodes] if detail else span_rows(manager.episodes)
    with atomic_open(path, "w", newline="") as handle:
        handle.write("processor_id,start,end\n")
        for rows in chunks:  # a chunk of rows at a time: millions of spans on whole traces
            handle.writelines(
                f"{proc},{begin!r},{'' if end is None else repr(end)}\n"
                for proc, begin, end in rows
            )
    return path


def run_classic(
    inputs: ExperimentInputs,
    output_dir: str | os.PathLike[str] | None = None,
    *,
    seed: int | None = None,
    progress: bool = False,
) -> RunResult:
    """Simulate the prepared experiment with its CLASSIC agent; write the outputs.

    Args:
        inputs: from :func:`~hdeeprm.inputs.prepare_inputs`.
        output_dir: where the Batsim outputs, ``insights.log`` and
            ``hdeeprm_mem_bw_overutilization.csv`` go (default: the inputs' run folder).
        seed: seeds the ``random`` policies (default: the options' seed).
        progress: show a progress bar over completed jobs.
    """
    out = Path(output_dir) if output_dir is not None else inputs.output_dir
    ensure_dir(out)
    manager = classic_manager(inputs, seed)
    platform = inputs.sim_platform
    service_time = ServiceTimeModel.from_settings(inputs.platform, inputs.options.service_time)
    # From the engine's job list to the last output row the run only adds long-lived objects:
    # a full collection would rescan them all and free nothing (hdeeprm._gc); one deferred to
    # the outputs would cost a whole-heap scan there.
    with young_collections_only():
        # The manager ignores RESOURCE_STATE_CHANGED: not sending them changes no output.
        engine = Engine(
            platform,
            inputs.workload,
            service_time=service_time,
            state_change_events=wants_state_changes(manager),
            host_energies=False,  # no output reads them: not kept (the engine is not returned)
        )
        with insights_log(out, inputs.options.log_level):
            wall = drive(engine, manager, len(inputs.workload.jobs), progress=progress)
            metrics = compute_metrics(engine, manager, wall)
            with deferred_interrupts():
                outputs = write_outputs(engine, out)
                outputs["mem_bw_overutilization"] = write_overutilization(
                    out, manager, detail=inputs.options.log_detail
                )
        return RunResult(metrics, outputs, manager.stats())
