"""In-process driving of the engine: a decision-system protocol, a loop and a one-call run."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from hdeeprm._gc import young_collections_only
from hdeeprm.simulation.engine import Engine, SimJob
from hdeeprm.simulation.events import Decision, Message
from hdeeprm.simulation.outputs import write_outputs
from hdeeprm.simulation.platform_xml import DEFAULT_MASTER_HOST, SimPlatform, load_platform_xml
from hdeeprm.workload.model import Workload, load_workload


@runtime_checkable
class DecisionSystem(Protocol):
    """Anything that answers each engine message with decisions (Batsim's scheduler role)."""

    def handle(self, message: Message) -> Sequence[Decision]:
        """Decisions to apply at ``message.now`` (an empty list when there is nothing to do)."""
        ...


def wants_state_changes(decision_system: object) -> bool:
    """Whether ``decision_system`` reads ``RESOURCE_STATE_CHANGED`` confirmations: yes unless
    it says otherwise with a false ``wants_state_changes`` attribute (hdeeprm's workload
    manager does: its P-states are its own). Such a system answers a message that carries
    only confirmations with nothing, so dropping those messages changes no decision, state,
    time, energy or output file, only the engine's message and event counts."""
    return bool(getattr(decision_system, "wants_state_changes", True))


def run(engine: Engine, decision_system: DecisionSystem) -> float:
    """Drive ``engine`` to the end with ``decision_system``; return the seconds spent deciding.

    The decision system sees every message, ``SIMULATION_BEGINS`` and ``SIMULATION_ENDS``
    included (its answer to the latter is ignored, as Batsim ignores it). Full garbage
    collections are suspended meanwhile (:func:`hdeeprm._gc.young_collections_only`).
    A decision system that ignores ``RESOURCE_STATE_CHANGED`` (:func:`wants_state_changes`)
    gets none: on a classic run about half the messages carry nothing else, and each costs
    the engine an event and a message, and the decision system a call that answers nothing.
    """
    if not wants_state_changes(decision_system):
        engine.state_change_events = False
    handle = decision_system.handle
    clock = time.perf_counter
    deciding = 0.0
    # A replay keeps what it creates: full collections would rescan it all and free nothing.
    with young_collections_only():
        message = engine.start()
        while True:
            tick = clock()
            decisions = handle(message)
            deciding += clock() - tick
            if engine.finished:
                return deciding
            message = engine.proceed(decisions)


@dataclass(slots=True)
class SimulationResult:
    """What one run produced: the engine (full state), headline figures and output paths."""

    engine: Engine
    makespan: float
    consumed_energy: float
    wall_time: float
    scheduling_time: float
    outputs: dict[str, Path] = field(default_factory=dict)

    @property
    def jobs(self) -> list[SimJob]:
        """Ended jobs, in the order they ended."""
        return self.engine.finished_jobs


def simulate(
    platform: str | os.PathLike[str] | SimPlatform,
    workload: str | os.PathLike[str] | Workload | Sequence[Workload],
    decision_system: DecisionSystem,
    output_dir: str | os.PathLike[str] | None = None,
    *,
    prefix: str = "out_",
    master_host: str = DEFAULT_MASTER_HOST,
    record_wall_times: bool = False,
    trace: bool | None = None,
) -> SimulationResult:
    """Load a platform and a workload, run them with ``decision_system``, write the outputs.

    Args:
        platform: a ``platform.xml`` path or an already loaded :class:`SimPlatform`.
        workload: a Batsim ``workload.json`` path, a :class:`Workload` or several.
        decision_system: the scheduler (see :class:`DecisionSystem`).
        output_dir: where to write ``{prefix}jobs.csv`` etc.; nothing is written if None.
        record_wall_times: put the measured ``scheduling_time`` / ``simulation_time`` in
            ``out_schedule.csv`` (off by default so that reruns give identical files).
        trace: record the time series (default: only when ``output_dir`` is given).
    """
    if not isinstance(platform, SimPlatform):
        platform = load_platform_xml(platform, master_host)
    if isinstance(workload, (str, os.PathLike)):
        workload = load_workload(workload)
    if trace is None:
        trace = output_dir is not None
    engine = Engine(platform, workload, trace=trace)
    start = time.perf_counter()
    scheduling = run(engine, decision_system)
    wall = time.perf_counter() - start
    makespan = max((job.finish_time or 0.0 for job in engine.finished_jobs), default=0.0)
    outputs: dict[str, Path] = {}
    if output_dir is not None:
        outputs = write_outputs(
            engine,
            output_dir,
            prefix,
            scheduling_time=scheduling if record_wall_times else 0.0,
            simulation_time=wall if record_wall_times else 0.0,
        )
    return SimulationResult(engine, makespan, engine.consumed_energy, wall, scheduling, outputs)
