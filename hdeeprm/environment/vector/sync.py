"""A cheaper batching of the environments' ``info`` for vector environments.

Gymnasium's ``VectorEnv._add_info`` allocates a fresh mask array (and formats its key) for
every key of every environment's ``info`` at every step, whether the mask exists or not: with
a dozen keys per step, that is most of what a synchronous vector step costs above the
environments themselves. :class:`FastInfo` batches the plain values (numbers, arrays, other
objects) into the same arrays and masks, made once per key and step, and hands ``final_obs``
and nested dictionaries to Gymnasium's own method, so ``info`` is the same dict with the same
keys in the same order, the same dtypes and the same values
(``tests/environment/test_vector_sync.py`` compares the two).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import VectorEnv


class FastInfo:
    """Mixin (before a ``VectorEnv`` class): ``_add_info`` allocating only what it keeps."""

    num_envs: int

    def _add_info(
        self, vector_infos: dict[str, Any], env_info: dict[str, Any], env_num: int
    ) -> dict[str, Any]:
        n = self.num_envs
        for key, value in env_info.items():
            kind = type(value)
            if key == "final_obs" or isinstance(value, dict):
                # Gymnasium's own handling (object array, recursion), one key at a time: the
                # keys are independent, so the result and its key order are the same.
                VectorEnv._add_info(self, vector_infos, {key: value}, env_num)  # type: ignore[arg-type]
                continue
            array = vector_infos.get(key)
            if array is None:
                if kind in (int, float, bool) or issubclass(kind, np.number):
                    array = np.zeros(n, dtype=kind)
                elif isinstance(value, np.ndarray):
                    array = np.zeros((n, *value.shape), dtype=value.dtype)
                else:
                    array = np.full(n, fill_value=None, dtype=object)
                vector_infos[key] = array
            mask_key = "_" + key
            mask = vector_infos.get(mask_key)
            if mask is None:
                mask = vector_infos[mask_key] = np.zeros(n, dtype=np.bool_)
            array[env_num] = value
            mask[env_num] = True
        return vector_infos

    def _add_info_reference(
        self, vector_infos: dict[str, Any], env_info: dict[str, Any], env_num: int
    ) -> dict[str, Any]:
        """Gymnasium's ``_add_info``, which the tests compare :meth:`_add_info` against."""
        return VectorEnv._add_info(self, vector_infos, env_info, env_num)  # type: ignore[arg-type]


class FastInfoSyncVectorEnv(FastInfo, gym.vector.SyncVectorEnv):
    """Gymnasium's ``SyncVectorEnv`` with :class:`FastInfo`'s ``info`` batching."""
