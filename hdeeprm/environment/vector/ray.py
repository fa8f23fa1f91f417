"""A Gymnasium vector environment whose sub-environments live in Ray actors.

Training wants many environments stepping at once; one machine has few cores. ``RayVectorEnv``
has Gymnasium's :class:`~gymnasium.vector.VectorEnv` interface (``reset``, ``step``,
``step_async``/``step_wait``, ``call``, ``get_attr``, ``close``; batched spaces; ``info`` dicts
with ``_key`` masks), so any trainer that takes a Gymnasium vector environment collects its
rollouts from actors spread over a Ray cluster without a change.

Each actor holds ``envs_per_actor`` sub-environments in a :class:`~gymnasium.vector.
SyncVectorEnv` (same autoreset rules as a local one), so a step costs one round trip per actor,
not per environment: grouping several environments per actor is what amortises Ray's per-call
overhead (about a millisecond) over a step that itself takes tens of microseconds. Seeds are
handed out as ``SyncVectorEnv`` does (``seed + i`` for environment ``i``), so the same seeds give
the same observations, rewards and infos, bit for bit, as a local ``SyncVectorEnv`` (tested).

``hdeeprm_env_fns`` builds the environment factories for an options file, generating the run
folder's inputs once here so that actors only read them.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv
from gymnasium.vector.utils import batch_space

from hdeeprm._ray import ensure_ray, import_ray


class EnvGroup:
    """Several sub-environments in one process (the body of a Ray actor)."""

    def __init__(self, env_fns: Sequence[Callable[[], gym.Env]], autoreset_mode: str) -> None:
        self.envs = SyncVectorEnv(env_fns, copy=False, autoreset_mode=AutoresetMode(autoreset_mode))

    def describe(self) -> tuple[Any, Any, dict[str, Any], str | None]:
        e = self.envs
        return e.single_observation_space, e.single_action_space, e.metadata, e.render_mode

    def reset(self, seeds: list[int | None], options: dict[str, Any] | None) -> tuple[Any, Any]:
        return self.envs.reset(seed=seeds, options=options)

    def step(self, actions: Any) -> tuple[Any, ...]:
        return self.envs.step(actions)

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        return self.envs.call(name, *args, **kwargs)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        return self.envs.get_attr(name)

    def close(self) -> None:
        self.envs.close()


class RayVectorEnv(VectorEnv):
    """``len(env_fns)`` environments in Ray actors, ``envs_per_actor`` per actor.

    Args:
        env_fns: one factory per sub-environment (serialised with cloudpickle and called in
            the actor; a :func:`functools.partial` of an importable class travels best).
        envs_per_actor: sub-environments per actor (the last actor may hold fewer).
        num_cpus_per_actor: CPUs Ray reserves for each actor.
        autoreset_mode: Gymnasium's autoreset mode (default ``next_step``, as ``SyncVectorEnv``).
        address: Ray cluster to join when Ray is not initialised yet (``None``: a local one).

    Ray is not shut down by :meth:`close` (the caller may use it further); the actors are.
    """

    def __init__(
        self,
        env_fns: Sequence[Callable[[], gym.Env]],
        *,
        envs_per_actor: int = 1,
        num_cpus_per_actor: float = 1.0,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        address: str | None = None,
    ) -> None:
        if not env_fns:
            raise ValueError("RayVectorEnv needs at least one environment factory")
        if envs_per_actor < 1:
            raise ValueError(f"envs_per_actor must be >= 1, got {envs_per_actor}")
        ray = self._ray = import_ray()
        ensure_ray(address)
        self.num_envs = len(env_fns)
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        nb_actors = -(-self.num_envs // envs_per_actor)
        cpus = float(ray.cluster_resources().get("CPU", 0.0))
        if nb_actors * num_cpus_per_actor > cpus:
            # Ray would wait forever for CPUs that do not exist: say so instead.
            raise ValueError(
                f"{nb_actors} actor(s) x {num_cpus_per_actor:g} CPU need more than the "
                f"cluster's {cpus:g} CPU(s): raise envs_per_actor or lower num_cpus_per_actor"
            )
        actor_class = ray.remote(num_cpus=num_cpus_per_actor)(EnvGroup)
        self._slices: list[slice] = []
        self._actors: list[Any] = []
        for begin in range(0, self.num_envs, envs_per_actor):
            end = min(begin + envs_per_actor, self.num_envs)
            self._slices.append(slice(begin, end))
            self._actors.append(
                actor_class.remote(list(env_fns[begin:end]), self.autoreset_mode.value)
            )
        described = ray.get([a.describe.remote() for a in self._actors])
        obs_space, act_space, metadata, render_mode = described[0]
        for other in described[1:]:
            if other[0] != obs_space or other[1] != act_space:
                raise RuntimeError("the sub-environments' spaces differ")
        self.single_observation_space = obs_space
        self.single_action_space = act_space
        self.observation_space = batch_space(obs_space, self.num_envs)
        self.action_space = batch_space(act_space, self.num_envs)
        self.metadata = dict(metadata)
        self.metadata["autoreset_mode"] = self.autoreset_mode
        self.render_mode = render_mode
        self._last_obs: list[Any] = [None] * len(self._actors)
        self._pending: list[Any] | None = None
        self.closed = False

    @property
    def num_actors(self) -> int:
        return len(self._actors)

    # --- Gymnasium VectorEnv API ----------------------------------------------------------
    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        """Reset all sub-environments (or those of ``options["reset_mask"]``)."""
        if seed is None:
            seeds: list[int | None] = [None] * self.num_envs
        elif isinstance(seed, (int, np.integer)):
            seeds = [int(seed) + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(
                    f"seeds given as a list must have num_envs={self.num_envs} entries, "
                    f"got {len(seeds)}"
                )
        options = dict(options) if options else None
        mask = options.pop("reset_mask", None) if options else None
        if mask is not None:
            mask = np.asarray(mask, dtype=np.bool_)
            if mask.shape != (self.num_envs,) or not mask.any():
                raise ValueError(
                    f"options['reset_mask'] must be a bool array of shape ({self.num_envs},) "
                    "with at least one True"
                )
        calls: dict[int, Any] = {}
        for k, (actor, part) in enumerate(zip(self._actors, self._slices)):
            sub_options = options
            if mask is not None:
                if not mask[part].any():
                    continue
                sub_options = {**(options or {}), "reset_mask": mask[part].copy()}
            calls[k] = actor.reset.remote(seeds[part], sub_options)
        results = dict(zip(calls, self._ray.get(list(calls.values()))))
        infos_parts: list[dict[str, Any] | None] = [None] * len(self._actors)
        for k, (obs, infos) in results.items():
            self._last_obs[k] = obs
            infos_parts[k] = infos
        return self._concat(self._last_obs), self._merge_infos(infos_parts)

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        self.step_async(actions)
        return self.step_wait()

    def step_async(self, actions: Any) -> None:
        """Send the actions; :meth:`step_wait` collects the results (overlap work meanwhile)."""
        if self._pending is not None:
            raise RuntimeError("step_async called twice without step_wait")
        actions = np.asarray(actions) if not isinstance(actions, (dict, tuple)) else actions
        self._pending = [
            actor.step.remote(_take(actions, part))
            for actor, part in zip(self._actors, self._slices)
        ]

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if self._pending is None:
            raise RuntimeError("step_wait called without step_async")
        results = self._ray.get(self._pending)
        self._pending = None
        self._last_obs = [r[0] for r in results]
        return (
            self._concat(self._last_obs),
            np.concatenate([r[1] for r in results]),
            np.concatenate([r[2] for r in results]),
            np.concatenate([r[3] for r in results]),
            self._merge_infos([r[4] for r in results]),
        )

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call method ``name`` (or read attribute ``name``) of every sub-environment."""
        parts = self._ray.get([a.call.remote(name, args, kwargs) for a in self._actors])
        return tuple(value for part in parts for value in part)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        parts = self._ray.get([a.get_attr.remote(name) for a in self._actors])
        return tuple(value for part in parts for value in part)

    def render(self) -> tuple[Any, ...]:
        return self.call("render")

    def close_extras(self, **kwargs: Any) -> None:
        """Close the sub-environments and end the actors."""
        if not self._actors:
            return
        try:
            self._ray.get([a.close.remote() for a in self._actors])
        finally:
            for actor in self._actors:
                self._ray.kill(actor)
            self._actors = []

    # --- batching -------------------------------------------------------------------------
    def _concat(self, parts: list[Any]) -> Any:
        return _concat(self.single_observation_space, parts)

    def _merge_infos(self, parts: list[dict[str, Any] | None]) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        for part, where in zip(parts, self._slices):
            if part:
                _merge_into(merged, part, where, self.num_envs)
        return merged


def _take(actions: Any, part: slice) -> Any:
    if isinstance(actions, dict):
        return {k: _take(v, part) for k, v in actions.items()}
    if isinstance(actions, tuple):
        return tuple(_take(v, part) for v in actions)
    return actions[part]


def _concat(space: gym.Space, parts: list[Any]) -> Any:
    if isinstance(space, gym.spaces.Dict):
        return {k: _concat(space[k], [p[k] for p in parts]) for k in space.spaces}
    if isinstance(space, gym.spaces.Tuple):
        return tuple(_concat(s, [p[i] for p in parts]) for i, s in enumerate(space.spaces))
    return np.concatenate(parts, axis=0)


def _merge_into(merged: dict[str, Any], part: dict[str, Any], where: slice, n: int) -> None:
    """Place one actor's batched infos (length ``where``'s size) at ``where`` in length-n ones."""
    for key, value in part.items():
        if isinstance(value, dict):
            _merge_into(merged.setdefault(key, {}), value, where, n)
            continue
        value = np.asarray(value)
        target = merged.get(key)
        if target is None:
            fill = np.zeros if value.dtype != object else (lambda s, dtype: np.full(s, None))
            target = fill((n, *value.shape[1:]), dtype=value.dtype)
        elif target.dtype != value.dtype:
            target = target.astype(np.result_type(target, value))
        target[where] = value
        merged[key] = target


def hdeeprm_env_fns(
    options: str | os.PathLike[str],
    num_envs: int,
    *,
    output_dir: str | os.PathLike[str] | None = None,
    custom_workload: str | os.PathLike[str] | None = None,
    **env_kwargs: Any,
) -> list[Callable[[], gym.Env]]:
    """Factories of ``num_envs`` :class:`~hdeeprm.environment.HeterogeneousClusterEnv` on one
    options file. Inputs are generated here, once, so the actors only read them (on a
    cluster the run folder must be on a filesystem every node mounts)."""
    from hdeeprm.environment.env import HeterogeneousClusterEnv
    from hdeeprm.inputs import prepare_inputs
    from hdeeprm.options import load_options

    loaded = load_options(options)
    inputs = prepare_inputs(loaded, output_dir, custom_workload=custom_workload)
    factory = functools.partial(
        HeterogeneousClusterEnv.from_options,
        os.fspath(loaded.source or options),
        os.fspath(inputs.output_dir),
        None if custom_workload is None else os.fspath(custom_workload),
        **env_kwargs,
    )
    return [factory] * num_envs
