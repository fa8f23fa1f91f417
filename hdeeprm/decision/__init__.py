"""The decision system: workload manager, job queue, resource manager and core pool."""

from hdeeprm.decision.actions import (
    CORE_POLICIES,
    JOB_POLICIES,
    LOCALITY_POLICIES,
    PLACEMENT_POLICIES,
    VOID,
    Action,
    ActionSpace,
    parse_action_name,
)
from hdeeprm.decision.fixed_pair import FixedPair
from hdeeprm.decision.gpus import GpuPool, LocalityAllocator
from hdeeprm.decision.job_queue import JobQueue, JobRecord
from hdeeprm.decision.resource_manager import ResourceManager
from hdeeprm.decision.resources import CorePool
from hdeeprm.decision.workload_manager import WorkloadManager, job_record

__all__ = [
    "CORE_POLICIES",
    "JOB_POLICIES",
    "LOCALITY_POLICIES",
    "PLACEMENT_POLICIES",
    "VOID",
    "Action",
    "ActionSpace",
    "CorePool",
    "FixedPair",
    "GpuPool",
    "JobRecord",
    "JobQueue",
    "LocalityAllocator",
    "ResourceManager",
    "WorkloadManager",
    "job_record",
    "parse_action_name",
]
