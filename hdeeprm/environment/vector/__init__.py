"""Vector environments for fast rollouts: several environments stepped at once.

* :mod:`~hdeeprm.environment.vector.shared`: :class:`SharedMemoryVectorEnv`, environments in a
  few local processes exchanging steps over shared memory;
* :mod:`~hdeeprm.environment.vector.ray`: :class:`RayVectorEnv`, environments in Ray actors
  (Ray is optional and imported only when such an environment is built), and
  :func:`hdeeprm_env_fns`, the factories of an options file for it.
"""

from hdeeprm.environment.vector.ray import RayVectorEnv, hdeeprm_env_fns
from hdeeprm.environment.vector.shared import (
    SharedMemoryVectorEnv,
    available_cores,
    caller_share,
    default_workers,
    split_groups,
)

__all__ = [
    "RayVectorEnv",
    "SharedMemoryVectorEnv",
    "available_cores",
    "caller_share",
    "default_workers",
    "hdeeprm_env_fns",
    "split_groups",
]
