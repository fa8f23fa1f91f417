"""The reinforcement-learning environment (SPEC section 6, thesis 3.2.3).

Importing this package registers ``hdeeprm/HeterogeneousCluster-v0`` with Gymnasium::

    import gymnasium, hdeeprm.environment
    env = gymnasium.make("hdeeprm/HeterogeneousCluster-v0", options="options.json")
"""

import gymnasium

from hdeeprm.environment.env import HeterogeneousClusterEnv, action_space_from_options
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

ENV_ID = "hdeeprm/HeterogeneousCluster-v0"

if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="hdeeprm.environment.env:HeterogeneousClusterEnv")

__all__ = [
    "ENERGY_OBJECTIVES",
    "ENV_ID",
    "OBJECTIVES",
    "QUEUE_FEATURES",
    "RATE_OBJECTIVES",
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
