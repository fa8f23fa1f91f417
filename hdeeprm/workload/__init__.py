"""Workload pipeline: SWF traces and synthetic models to Batsim workloads."""

from hdeeprm.workload.model import JobSpec, Profile, Workload, load_workload

__all__ = ["JobSpec", "Profile", "Workload", "load_workload"]
