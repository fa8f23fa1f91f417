"""The experiment options file (thesis appendix F), validated before anything runs."""

from hdeeprm.options.schema import (
    CORE_POLICIES,
    JOB_POLICIES,
    LOG_LEVELS,
    OBJECTIVES,
    OBSERVATIONS,
    REWARDS,
    AgentOptions,
    EnvOptions,
    EpisodeOptions,
    Options,
    SyntheticWorkloadOptions,
    load_options,
    options_from_json,
)

__all__ = [
    "CORE_POLICIES",
    "JOB_POLICIES",
    "LOG_LEVELS",
    "OBJECTIVES",
    "OBSERVATIONS",
    "REWARDS",
    "AgentOptions",
    "EnvOptions",
    "EpisodeOptions",
    "Options",
    "SyntheticWorkloadOptions",
    "load_options",
    "options_from_json",
]
