"""The boundary between the workload manager and a queue scheduler, as types.

``hdeeprm.decision`` sits above ``hdeeprm.scheduling``, so the scheduler names what it needs
from a queued job and from the manager's start call here, and the decision system's
``JobRecord`` and start hook satisfy these protocols structurally.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol


class QueuedJob(Protocol):
    """What a queue scheduler reads of a job the workload manager holds (never its real run
    time: that stays in the engine's ``job``, read only by clairvoyant predictors)."""

    #: The job's id in the workload.
    id: str
    #: Submission order (0, 1, 2, ...): the deterministic tie-break.
    seq: int
    subtime: float
    #: Cores requested.
    res: int
    #: Requested (walltime) run time; ``inf`` when unknown.
    req_time: float
    #: Memory per core requested, GPUs requested.
    mem: float
    gpus: int
    #: The engine's job object (its workload entry and profile).
    job: Any


class StartJob(Protocol):
    """``start(record) -> bool`` (cores chosen by the run's core policy) or
    ``start(record, cores) -> bool`` (exactly those cores): what a queue scheduler calls to
    start a queued job; ``False`` when it cannot be placed now."""

    def __call__(self, record: Any, cores: Sequence[int] | None = None, /) -> bool: ...
