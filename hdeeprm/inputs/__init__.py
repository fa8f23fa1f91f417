"""Run-folder inputs: from validated options to the files and objects a run needs.

:func:`prepare_inputs` is the one step that writes a run folder's inputs (``platform.xml``,
``res_hierarchy.json``, ``workload.json``, ``job_limits.json``) or reuses them;
:class:`ExperimentInputs` is what it returns, everything loaded, so that environments and runs
built from it read and write no input file themselves.
"""

from hdeeprm.inputs.prepare import (
    GENERATED_INPUTS,
    HIERARCHY_FILE,
    JOB_LIMITS_FILE,
    PLATFORM_XML_FILE,
    WORKLOAD_FILE,
    ExperimentInputs,
    prepare_inputs,
)

__all__ = [
    "GENERATED_INPUTS",
    "HIERARCHY_FILE",
    "JOB_LIMITS_FILE",
    "PLATFORM_XML_FILE",
    "WORKLOAD_FILE",
    "ExperimentInputs",
    "prepare_inputs",
]
