"""A cheaper batching of the environments' ``info`` for vector environments.

Gymnasium's ``VectorEnv._add_info`` allocates a fresh mask array (and formats its key) for
every key of every environment's ``info`` at every step, whether the mask exists or not: with
a dozen keys per step, that is most of what a synchronous vector step costs above the
environments themselves. :class:`FastInfo` batches the plain values (numbers, arrays, other
objects) into the same arrays and masks, made once per key and step, and hands ``final_obs``
and nested dictionaries to Gymnasium's own method, so ``info`` is the same dict with the same
keys in the same order, the same dtypes and the same values
(``tests/environment/test_vector_sync.py`` compares the two).

With ``full_info=False`` (what :func:`hdeeprm.training.onpolicy.build_vector_env` builds for
the trainers) :class:`FastInfoSyncVectorEnv` steps as
:class:`~hdeeprm.environment.vector.SharedMemoryVectorEnv` does without ``full_info``: a
step's ``info`` holds the action masks and, for an episode that ended, ``final_obs`` and
``final_info``, the only keys a trainer reads, so the other keys are never batched.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import concatenate, iterate


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
    """Gymnasium's ``SyncVectorEnv`` with :class:`FastInfo`'s ``info`` batching.

    ``full_info=False`` (with ``same_step`` autoreset; the trainers' choice, made in
    :func:`~hdeeprm.training.onpolicy.build_vector_env`): ``step``'s ``info`` holds only
    ``action_mask`` / ``_action_mask`` (sub-environments whose ``info`` has a mask of the
    first one's shape) and, for the episodes that ended, ``final_obs`` / ``final_info`` (the
    whole last ``info``), as :class:`~hdeeprm.environment.vector.SharedMemoryVectorEnv`
    gives. Batching a dozen keys nobody reads cost a tenth of a PPO decision. Discrete
    actions reach the sub-environments as Python ints (as in the shared-memory vector
    environment); observations, rewards, ends and masks are those of a full step, bit for
    bit. ``reset`` returns the whole ``info`` either way.
    """

    def __init__(
        self,
        env_fns: Sequence[Callable[[], gym.Env]],
        *,
        full_info: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(env_fns, **kwargs)
        self.full_info = bool(full_info)
        self._lean = not self.full_info and self.autoreset_mode is AutoresetMode.SAME_STEP
        self._discrete = type(self.single_action_space) is spaces.Discrete
        self._box = type(self.single_observation_space) is spaces.Box
        # The masks' rows and presence flags; shaped on the first lean step.
        self._masks: np.ndarray | None = None
        self._has_mask = np.zeros(self.num_envs, dtype=np.bool_)

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if not self._lean:
            return super().step(actions)
        if self._discrete and isinstance(actions, np.ndarray) and actions.ndim == 1:
            actions_iter: Any = actions.tolist()
        else:
            actions_iter = iterate(self.action_space, actions)
        rewards, terms, truncs = self._rewards, self._terminations, self._truncations
        env_obs = self._env_obs
        observations = self._observations
        has_mask = self._has_mask
        infos: dict[str, Any] = {}
        for i, (action, env) in enumerate(zip(actions_iter, self.envs, strict=True)):
            obs, reward, term, trunc, info = env.step(action)
            if term or trunc:
                infos = self._add_info(infos, {"final_obs": obs, "final_info": info}, i)
                obs, info = env.reset()
            rewards[i] = reward
            terms[i] = term
            truncs[i] = trunc
            if self._box:
                observations[i] = obs  # what ``concatenate`` does for a Box, row by row
            else:
                env_obs[i] = obs
            mask = info.get("action_mask")
            if self._masks is None and mask is not None:
                self._masks = np.ones((self.num_envs, *np.shape(mask)), dtype=np.bool_)
            masks = self._masks
            if mask is not None and masks is not None and np.shape(mask) == masks.shape[1:]:
                masks[i] = mask
                has_mask[i] = True
            else:
                has_mask[i] = False
        if not self._box:
            self._observations = observations = concatenate(
                self.single_observation_space, env_obs, observations
            )
        self._autoreset_envs = np.logical_or(terms, truncs)
        if self._masks is not None and has_mask.any():
            infos["action_mask"] = self._masks.copy()
            infos["_action_mask"] = has_mask.copy()
        return (
            observations.copy() if self.copy else observations,
            rewards.copy(),
            terms.copy(),
            truncs.copy(),
            infos,
        )
