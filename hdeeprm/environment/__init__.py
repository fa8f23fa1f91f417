"""The reinforcement-learning environment (SPEC section 6, thesis 3.2.3).

Importing this package registers ``hdeeprm/HeterogeneousCluster-v0`` (policy pairs) and
``hdeeprm/JobSelection-v0`` (job picking, :mod:`hdeeprm.environment.job_selection`) and
``hdeeprm/HeuristicSelection-v0`` (EASY's queue ordering,
:mod:`hdeeprm.environment.heuristic_selection`) with Gymnasium::

    import gymnasium, hdeeprm.environment
    env = gymnasium.make("hdeeprm/HeterogeneousCluster-v0", options="options.json")
"""

import gymnasium

from hdeeprm.environment.env import (
    GymEntryPoint,
    HeterogeneousClusterEnv,
    action_space_from_options,
)
from hdeeprm.environment.heuristic_selection import (
    THESIS_ORDERINGS,
    HeuristicSelectionEnv,
    heuristic_selection_factories,
)
from hdeeprm.environment.job_pickers import BASELINES, HeuristicPicker, ScorePicker
from hdeeprm.environment.job_selection import JobSelectionEnv
from hdeeprm.environment.observation import (
    QUEUE_FEATURES,
    ObservationBuilder,
    observation_size,
    queue_statistics,
    variation_ratio,
)
from hdeeprm.environment.reward import (
    ENERGY_OBJECTIVES,
    OBJECTIVES,
    RATE_OBJECTIVES,
    RewardMeter,
    episode_objective,
    rate_value,
)
from hdeeprm.environment.vector import RayVectorEnv, SharedMemoryVectorEnv

ENV_ID = "hdeeprm/HeterogeneousCluster-v0"
JOB_SELECTION_ID = "hdeeprm/JobSelection-v0"
HEURISTIC_SELECTION_ID = "hdeeprm/HeuristicSelection-v0"

if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point=GymEntryPoint(HeterogeneousClusterEnv))
if JOB_SELECTION_ID not in gymnasium.registry:
    gymnasium.register(id=JOB_SELECTION_ID, entry_point=GymEntryPoint(JobSelectionEnv))
if HEURISTIC_SELECTION_ID not in gymnasium.registry:
    gymnasium.register(
        id=HEURISTIC_SELECTION_ID,
        entry_point=GymEntryPoint(HeuristicSelectionEnv),
    )

__all__ = [
    "BASELINES",
    "ENERGY_OBJECTIVES",
    "ENV_ID",
    "HEURISTIC_SELECTION_ID",
    "JOB_SELECTION_ID",
    "THESIS_ORDERINGS",
    "HeuristicSelectionEnv",
    "heuristic_selection_factories",
    "HeuristicPicker",
    "ScorePicker",
    "JobSelectionEnv",
    "OBJECTIVES",
    "QUEUE_FEATURES",
    "RATE_OBJECTIVES",
    "RayVectorEnv",
    "SharedMemoryVectorEnv",
    "HeterogeneousClusterEnv",
    "ObservationBuilder",
    "RewardMeter",
    "action_space_from_options",
    "episode_objective",
    "observation_size",
    "queue_statistics",
    "rate_value",
    "variation_ratio",
]
