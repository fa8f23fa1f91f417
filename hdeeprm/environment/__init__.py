"""The reinforcement-learning environment (SPEC section 6, thesis 3.2.3).

Importing this package registers ``hdeeprm/HeterogeneousCluster-v0`` (policy pairs) and
``hdeeprm/JobSelection-v0`` (job picking, :mod:`hdeeprm.environment.job_selection`) and
``hdeeprm/HeuristicSelection-v0`` (EASY's queue ordering,
:mod:`hdeeprm.environment.heuristic_selection`) and ``hdeeprm/BackfillChoice-v0`` (which job
EASY backfills, :mod:`hdeeprm.environment.backfill_choice`) with Gymnasium::

    import gymnasium, hdeeprm.environment
    env = gymnasium.make("hdeeprm/HeterogeneousCluster-v0", options="options.json")

Gymnasium 1.x has no plugin discovery: a process knows the ids once it has imported this
package. Vector-env workers started by a forkserver (Stable-Baselines3's ``SubprocVecEnv``
default) are forked from a server that imports the packages in its preload list, so importing
this package adds itself there; a worker started otherwise (``spawn``) resolves the ids when
they name the module, ``"hdeeprm.environment:hdeeprm/HeterogeneousCluster-v0"``.
"""

import multiprocessing
from multiprocessing import forkserver

import gymnasium

from hdeeprm.environment.backfill_choice import BackfillChoiceEnv
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
BACKFILL_CHOICE_ID = "hdeeprm/BackfillChoice-v0"

#: Each id's environment class; ``gymnasium.make`` builds it through ``from_options`` (or from
#: prepared ``inputs=``), see :class:`GymEntryPoint`.
_CLASSES = {
    ENV_ID: HeterogeneousClusterEnv,
    JOB_SELECTION_ID: JobSelectionEnv,
    HEURISTIC_SELECTION_ID: HeuristicSelectionEnv,
    BACKFILL_CHOICE_ID: BackfillChoiceEnv,
}


def register_envs() -> None:
    """Register the four ids with Gymnasium (once; importing this package calls it)."""
    for env_id, cls in _CLASSES.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=GymEntryPoint(cls))


def _preload_in_forkserver() -> None:
    """Add this package to the forkserver's preload list, so that every worker forked from
    it knows the ids (the server starts on its first use: a running one is left as it is)."""
    # The list has a setter but no getter: read it to extend, not replace, the user's.
    server = getattr(forkserver, "_forkserver", None)
    modules = list(getattr(server, "_preload_modules", ["__main__"]))
    if __name__ not in modules:
        multiprocessing.set_forkserver_preload([*modules, __name__])


register_envs()
if "forkserver" in multiprocessing.get_all_start_methods():
    _preload_in_forkserver()

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
    "BackfillChoiceEnv",
    "BACKFILL_CHOICE_ID",
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
    "register_envs",
    "variation_ratio",
]
