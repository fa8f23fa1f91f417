"""The embedded Batsim-compatible discrete-event simulation engine.

* :func:`load_platform_xml` reads a SimGrid ``platform.xml`` into a :class:`SimPlatform`;
* :class:`Engine` simulates it with one or more workloads behind a Batsim-like pull API
  (``start()``, then ``proceed(decisions)`` until ``finished``);
* :func:`run` / :func:`simulate` drive it in-process with a :class:`DecisionSystem`;
* :func:`write_outputs` writes Batsim's ``out_*.csv`` files.

See ``docs/simulation.md`` for the event flow and the semantics.
"""

from hdeeprm.simulation.driver import DecisionSystem, SimulationResult, run, simulate
from hdeeprm.simulation.engine import (
    FINAL_STATES,
    NOT_SUBMITTED,
    RUNNING,
    SUBMITTED,
    Engine,
    SimJob,
)
from hdeeprm.simulation.events import (
    COMPLETED_KILLED,
    COMPLETED_SUCCESSFULLY,
    COMPLETED_WALLTIME_REACHED,
    JOB_COMPLETED,
    JOB_KILLED,
    JOB_SUBMITTED,
    NO_MORE_STATIC_JOB_TO_SUBMIT,
    REJECTED,
    REQUESTED_CALL,
    RESOURCE_STATE_CHANGED,
    SIMULATION_BEGINS,
    SIMULATION_ENDS,
    CallMeLater,
    Decision,
    Event,
    ExecuteJob,
    HostIds,
    KillJobs,
    Message,
    RejectJob,
    SetResourceState,
)
from hdeeprm.simulation.first_fit import FirstFitFCFS
from hdeeprm.simulation.intervals import format_interval_set, parse_interval_set
from hdeeprm.simulation.outputs import write_outputs
from hdeeprm.simulation.platform_xml import (
    DEFAULT_MASTER_HOST,
    SimHost,
    SimPlatform,
    load_platform_xml,
)

__all__ = [
    "COMPLETED_KILLED",
    "COMPLETED_SUCCESSFULLY",
    "COMPLETED_WALLTIME_REACHED",
    "DEFAULT_MASTER_HOST",
    "FINAL_STATES",
    "JOB_COMPLETED",
    "JOB_KILLED",
    "JOB_SUBMITTED",
    "NOT_SUBMITTED",
    "NO_MORE_STATIC_JOB_TO_SUBMIT",
    "REJECTED",
    "REQUESTED_CALL",
    "RESOURCE_STATE_CHANGED",
    "RUNNING",
    "SIMULATION_BEGINS",
    "SIMULATION_ENDS",
    "SUBMITTED",
    "CallMeLater",
    "Decision",
    "DecisionSystem",
    "Engine",
    "Event",
    "ExecuteJob",
    "FirstFitFCFS",
    "HostIds",
    "KillJobs",
    "Message",
    "RejectJob",
    "SetResourceState",
    "SimHost",
    "SimJob",
    "SimPlatform",
    "SimulationResult",
    "format_interval_set",
    "load_platform_xml",
    "parse_interval_set",
    "run",
    "simulate",
    "write_outputs",
]
