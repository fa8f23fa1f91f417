"""Scenarios: whole studies built on the environments and the engine.

* :mod:`~hdeeprm.scenarios.cush`: CuSH's Sierra-like scenario (platform, job sets, heuristics,
  metrics);
* :mod:`~hdeeprm.scenarios.cush_agent`: CuSH job sets as the episodes of
  :class:`~hdeeprm.environment.JobSelectionEnv`, for the two-step agent;
* :mod:`~hdeeprm.scenarios.period_tuning`: the simulation-based choice of EASY's ordering per
  policy period.
"""

from hdeeprm.scenarios.cush import CushResult, CushScenario
from hdeeprm.scenarios.cush_agent import CushEnvFactory, play_jobset, prepare_agent_inputs
from hdeeprm.scenarios.period_tuning import SimulatedFeedback, play_simulated_feedback

__all__ = [
    "CushEnvFactory",
    "CushResult",
    "CushScenario",
    "SimulatedFeedback",
    "play_jobset",
    "play_simulated_feedback",
    "prepare_agent_inputs",
]
