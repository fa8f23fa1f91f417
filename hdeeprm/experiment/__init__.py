"""Experiments: from a validated options file to the simulator's input files and a run."""

from hdeeprm.experiment.inputs import (
    HIERARCHY_FILE,
    JOB_LIMITS_FILE,
    PLATFORM_XML_FILE,
    WORKLOAD_FILE,
    ExperimentInputs,
    prepare_inputs,
)

__all__ = [
    "HIERARCHY_FILE",
    "JOB_LIMITS_FILE",
    "PLATFORM_XML_FILE",
    "WORKLOAD_FILE",
    "ExperimentInputs",
    "prepare_inputs",
]
