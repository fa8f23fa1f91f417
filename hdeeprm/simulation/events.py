"""The contract between the simulation engine and a decision system.

It mirrors Batsim 4.x's protocol, but with typed Python objects instead of JSON so that the
embedded engine pays no serialisation cost. The exchange is request/reply:

1. the engine returns a :class:`Message`: the simulation time ``now`` and every event that
   happened at that instant (events at one instant always travel together);
2. the decision system answers with a list of decisions; they take effect at ``now``;
3. the engine advances to the next instant that has events, and so on until a message
   carrying :data:`SIMULATION_ENDS`.

Event type names are Batsim's, so a protocol bridge (see ``hdeeprm.simulation`` docs) only has
to translate objects to JSON and back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

# --- event types (simulator -> decision system), Batsim 4.x names -------------------------
SIMULATION_BEGINS = "SIMULATION_BEGINS"
JOB_SUBMITTED = "JOB_SUBMITTED"
JOB_COMPLETED = "JOB_COMPLETED"
JOB_KILLED = "JOB_KILLED"
RESOURCE_STATE_CHANGED = "RESOURCE_STATE_CHANGED"
REQUESTED_CALL = "REQUESTED_CALL"
#: Batsim sends this as ``NOTIFY`` with ``{"type": "no_more_static_job_to_submit"}``.
NO_MORE_STATIC_JOB_TO_SUBMIT = "NO_MORE_STATIC_JOB_TO_SUBMIT"
SIMULATION_ENDS = "SIMULATION_ENDS"

# --- final job states, as written in out_jobs.csv -----------------------------------------
COMPLETED_SUCCESSFULLY = "COMPLETED_SUCCESSFULLY"
COMPLETED_WALLTIME_REACHED = "COMPLETED_WALLTIME_REACHED"
COMPLETED_KILLED = "COMPLETED_KILLED"
REJECTED = "REJECTED"


@dataclass(slots=True)
class Event:
    """Something that happened in the simulation at ``timestamp``.

    ``data`` holds the event's payload, keyed as in Batsim's protocol:

    * ``JOB_SUBMITTED``: ``job_id``, ``job`` (the :class:`~hdeeprm.simulation.engine.SimJob`)
    * ``JOB_COMPLETED``: ``job_id``, ``job``, ``job_state`` (one of the final states:
      successful, walltime reached, or killed), ``alloc`` (tuple of host ids)
    * ``JOB_KILLED``: one per ``KillJobs`` decision: ``job_ids`` (the ids it named, already
      ended jobs included, as Batsim lists them), ``jobs`` (the jobs really killed) and
      ``job_progress`` (id -> fraction done). Each really killed job also gets a
      ``JOB_COMPLETED`` event with ``job_state`` ``COMPLETED_KILLED``, before this one.
    * ``RESOURCE_STATE_CHANGED``: ``resources`` (tuple of host ids), ``state`` (P-state, int);
      one per ``SetResourceState`` decision
    * ``REQUESTED_CALL``: ``requested_at`` (the time asked for)
    * ``NO_MORE_STATIC_JOB_TO_SUBMIT``, ``SIMULATION_ENDS``: empty
    * ``SIMULATION_BEGINS``: ``nb_resources``, ``resources`` (the compute
      :class:`~hdeeprm.simulation.platform_xml.SimHost` objects, by id),
      ``compute_resources`` (Batsim's ``{id, name, state, properties}`` dicts, read-only),
      ``workloads``, ``profiles`` and ``platform``
    """

    timestamp: float
    type: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Message:
    """Every event of one instant, delivered together."""

    now: float
    events: list[Event]


# --- decisions (decision system -> simulator) ---------------------------------------------
@dataclass(slots=True, frozen=True)
class ExecuteJob:
    """Start ``job_id`` now on the compute hosts ``alloc`` (Batsim resource ids).

    A ``parallel_homogeneous`` job runs one task per host in ``alloc``. Every host must be free
    and exist. ``len(alloc)`` may differ from the job's requested ``res`` (real Batsim only
    allows that for ``parallel_homogeneous_total`` or with a custom mapping; build the engine
    with ``strict_allocation_size=True`` to get Batsim's check). A :class:`HostIds`
    ``alloc`` promises ascending ints without duplicates and spares the engine its checks.
    """

    job_id: str
    alloc: Sequence[int]
    #: GPU ids the job got (hdeeprm's GPU model; not part of Batsim's protocol, which has no
    #: GPUs): recorded in ``out_gpus.csv`` and read by the service-time model.
    gpus: Sequence[int] = ()


class HostIds(tuple[int, ...]):
    """A tuple of host ids that its maker guarantees to be Python ints in strictly
    ascending order (the decision system builds its P-state decisions and its allocations
    so): the engine then skips re-checking their types, sorting them and looking for
    duplicates. Anything else is checked."""

    __slots__ = ()


@dataclass(slots=True, frozen=True)
class SetResourceState:
    """Switch the hosts ``resources`` to P-state ``state`` now.

    Running jobs on those hosts are re-paced from this instant; the engine answers with a
    ``RESOURCE_STATE_CHANGED`` event at the same time, as Batsim does (unless built with
    ``state_change_events=False``). ``resources`` may come in any order; a :class:`HostIds`
    promises ascending ints and spares the engine its checks.
    """

    resources: Sequence[int]
    state: int


@dataclass(slots=True, frozen=True)
class CallMeLater:
    """Ask for a ``REQUESTED_CALL`` event at ``timestamp``, which must be after ``now``.

    A pending call keeps the simulation alive (Batsim 4.x waits for it before ending).
    """

    timestamp: float


@dataclass(slots=True, frozen=True)
class RejectJob:
    """Reject a submitted job that has not started; it is reported as ``REJECTED``."""

    job_id: str


@dataclass(slots=True, frozen=True)
class KillJobs:
    """Kill running jobs now.

    Acknowledged, in the next message at the same time, by a ``JOB_COMPLETED``
    (``COMPLETED_KILLED``) event per job really killed and one ``JOB_KILLED`` event listing
    every id given. Ids of jobs that already ended are accepted (Batsim allows it); ids of
    unknown or not yet started jobs are an error.
    """

    job_ids: Sequence[str]


Decision = ExecuteJob | SetResourceState | CallMeLater | RejectJob | KillJobs
