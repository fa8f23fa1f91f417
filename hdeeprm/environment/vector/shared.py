"""A multi-process Gymnasium vector environment built for fast on-policy rollouts.

Gymnasium's ``AsyncVectorEnv`` runs one process per environment and pickles every step's
``info`` dict (with its action mask) through a pipe; ``SyncVectorEnv`` merges every ``info`` key
into arrays at every step. Both cost as much as a decision of hdeeprm's simulator.
:class:`SharedMemoryVectorEnv` removes that overhead:

* **Several environments per process.** The environments are split into contiguous groups: the
  first group is stepped by the calling process itself (while the workers step theirs, so the
  trainer's process is never idle waiting), the others by ``num_workers`` worker processes.
  On 2 cores with 4 environments: 2 in the trainer's process, 2 in one worker.
* **Shared memory.** Actions, observations, rewards, ``terminated``, ``truncated`` and the
  action masks live in one :class:`multiprocessing.shared_memory.SharedMemory` block viewed
  as NumPy arrays; a step costs one byte down and (usually) zero bytes back per worker pipe.
* **Only what a trainer needs per step.** ``info`` holds ``action_mask`` (with its
  ``_action_mask`` presence flags) at every step; the full ``info`` of a sub-environment is
  sent only when its episode ends (``final_obs``/``final_info`` with ``same_step`` autoreset,
  the last step's keys with ``next_step``), so episode statistics such as ``objective`` reach
  the caller. ``full_info=True`` sends every step's whole ``info`` (Gymnasium's behaviour,
  slower).

Each sub-environment ``i`` is seeded as Gymnasium's vector environments do (``seed + i``) and
steps exactly as it would in a ``SyncVectorEnv``, so the observations, rewards, ends and masks
are the same bit for bit whatever the number of workers (tested). A sub-environment that
raises surfaces as :class:`~hdeeprm.errors.VectorEnvError` naming the environment, its
process and the method; a worker that dies is reported the same way.

Transport: the few messages that carry Python objects (reset seeds and options, ``call`` /
``get_attr`` / ``set_attr`` arguments and results, episode-end ``info`` dicts, a worker's
error report) cross the private pipe between this object and the worker processes it started
itself, in :mod:`pickle`'s format, as :mod:`multiprocessing` and Gymnasium's
``AsyncVectorEnv`` do. Nothing is written to a file or read from one, and no other process
can reach the pipes; the workers already run the caller's own environment code. A ``step``
sends pickled data only when an episode ends.

Example::

    from hdeeprm.environment import SharedMemoryVectorEnv
    envs = SharedMemoryVectorEnv([make_env] * 4, num_workers=1)
    obs, info = envs.reset(seed=0)
    obs, reward, terminated, truncated, info = envs.step(actions)
    envs.close()
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import pickle
import signal
import traceback
from collections.abc import Callable, Sequence
from multiprocessing import shared_memory
from multiprocessing.connection import Connection
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from hdeeprm.environment.vector.sync import FastInfo
from hdeeprm.errors import VectorEnvError

#: Messages of the worker protocol (one byte for the hot path).
_STEP = b"s"
_OK = b""
_EXTRAS = b"x"
_ERROR = b"e"
_MODE_NAMES = {"same_step": AutoresetMode.SAME_STEP, "next_step": AutoresetMode.NEXT_STEP}


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity where the OS tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def default_workers(num_envs: int) -> int:
    """One worker per available core but the caller's, at most one per other environment."""
    return max(0, min(available_cores(), num_envs) - 1)


def caller_share(num_envs: int, num_workers: int, caller_cost: float = 0.0) -> int:
    """How many environments the calling process should step itself so that it is no busier
    than a worker, when it also does ``caller_cost`` environment decisions' worth of its own
    work per decision of the vector (a trainer's policy and updates; 0: an even share).

    The caller's load ``k + n * c`` against each worker's ``(n - k) / w`` (in environment
    decisions per step of the vector) balance at ``k = n (1 - c w) / (w + 1)``, rounded."""
    if num_workers == 0:
        return num_envs
    if caller_cost == 0:
        return num_envs // (num_workers + 1)
    k = int(num_envs * (1.0 - caller_cost * num_workers) / (num_workers + 1) + 0.5)
    return min(max(k, 0), num_envs - num_workers)


def split_groups(num_envs: int, num_workers: int, in_main: int | None) -> list[range]:
    """Contiguous groups of environment indices: the caller's (possibly empty) first, then
    one per worker. ``in_main`` None: an even share, rounded down (the caller also trains)."""
    if num_workers == 0:
        return [range(num_envs)]
    if in_main is None:
        in_main = num_envs // (num_workers + 1)
    rest = num_envs - in_main
    groups = [range(0, in_main)]
    start = in_main
    for w in range(num_workers):
        size = rest // num_workers + (1 if w < rest % num_workers else 0)
        groups.append(range(start, start + size))
        start += size
    return groups


class _Layout:
    """Offsets of the step arrays inside one shared block (8-byte aligned)."""

    def __init__(self, n: int, obs_space: gym.Space, act_space: gym.Space, mask_size: int) -> None:
        self.fields: dict[str, tuple[int, tuple[int, ...], np.dtype]] = {}
        self.size = 0
        if act_space.shape is None or obs_space.shape is None:
            raise ValueError("the observation and action spaces must have a fixed shape")
        self._add("actions", (n, *act_space.shape), np.dtype(act_space.dtype))
        self._add("obs", (n, *obs_space.shape), np.dtype(obs_space.dtype))
        self._add("rewards", (n,), np.dtype(np.float64))
        self._add("terminated", (n,), np.dtype(np.bool_))
        self._add("truncated", (n,), np.dtype(np.bool_))
        self._add("mask", (n, mask_size), np.dtype(np.bool_))
        self._add("has_mask", (n,), np.dtype(np.bool_))

    def _add(self, name: str, shape: tuple[int, ...], dtype: np.dtype) -> None:
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        self.fields[name] = (self.size, shape, dtype)
        self.size += -(-max(nbytes, 1) // 8) * 8

    def views(self, block: shared_memory.SharedMemory) -> dict[str, np.ndarray]:
        """The step arrays inside ``block`` (an open one: a closed block has no buffer)."""
        buffer = block.buf
        if buffer is None:
            raise ValueError(f"the shared block {block.name} is closed")
        return {
            name: np.ndarray(shape, dtype, buffer=buffer, offset=offset)
            for name, (offset, shape, dtype) in self.fields.items()
        }


class _Group:
    """The sub-environments of one process, stepped into the shared arrays."""

    def __init__(
        self,
        envs: list[gym.Env],
        first: int,
        arrays: dict[str, np.ndarray],
        mode: AutoresetMode,
        full_info: bool,
        discrete: bool,
    ) -> None:
        self.envs = envs
        self.first = first
        self.a = arrays
        self.mode = mode
        self.full_info = full_info
        self.discrete = discrete
        self.autoreset = [False] * len(envs)
        self.current = first  # the environment being called (for error messages)

    def _store(self, i: int, obs: Any, info: dict[str, Any]) -> None:
        self.a["obs"][i] = obs
        mask = info.get("action_mask")
        row = self.a["mask"][i]
        if mask is not None and np.shape(mask) == row.shape:
            row[:] = mask
            self.a["has_mask"][i] = True
        else:
            self.a["has_mask"][i] = False

    def step(self) -> list[tuple[Any, ...]]:
        """Step every environment with its action in the shared array; return the extras
        (ended episodes' infos, or every info with ``full_info``)."""
        a = self.a
        actions, rewards, terms, truncs = (
            a["actions"],
            a["rewards"],
            a["terminated"],
            a["truncated"],
        )
        same_step = self.mode is AutoresetMode.SAME_STEP
        extras: list[tuple[Any, ...]] = []
        reward: SupportsFloat  # the environment's (any number type) or 0.0 after a reset
        for k, env in enumerate(self.envs):
            i = self.first + k
            self.current = i
            action = actions[i].item() if self.discrete else actions[i].copy()
            if self.autoreset[k]:
                obs, info = env.reset()
                reward, term, trunc = 0.0, False, False
                self.autoreset[k] = False
            else:
                obs, reward, term, trunc, info = env.step(action)
                if term or trunc:
                    if same_step:
                        extras.append(("final", i, obs, info))
                        obs, info = env.reset()
                    else:
                        self.autoreset[k] = True
                        if not self.full_info:
                            extras.append(("info", i, info))
            rewards[i] = reward
            terms[i] = term
            truncs[i] = trunc
            self._store(i, obs, info)
            if self.full_info:
                extras.append(("info", i, info))
        return extras

    def reset(
        self, seeds: list[int | None], options: dict[str, Any] | None, which: list[bool]
    ) -> list[tuple[Any, ...]]:
        infos: list[tuple[Any, ...]] = []
        for k, env in enumerate(self.envs):
            if not which[k]:
                continue
            i = self.first + k
            self.current = i
            obs, info = env.reset(seed=seeds[k], options=options)
            self.autoreset[k] = False
            self.a["rewards"][i] = 0.0
            self.a["terminated"][i] = False
            self.a["truncated"][i] = False
            self._store(i, obs, info)
            infos.append(("info", i, info))
        return infos

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        out = []
        for k, env in enumerate(self.envs):
            self.current = self.first + k
            value = env.get_wrapper_attr(name)
            out.append(value(*args, **kwargs) if callable(value) else value)
        return out

    def get_attr(self, name: str) -> list[Any]:
        out = []
        for k, env in enumerate(self.envs):
            self.current = self.first + k
            out.append(env.get_wrapper_attr(name))
        return out

    def set_attr(self, name: str, values: list[Any]) -> None:
        for k, env in enumerate(self.envs):
            self.current = self.first + k
            env.set_wrapper_attr(name, values[k])

    def close(self) -> None:
        for k, env in enumerate(self.envs):
            self.current = self.first + k
            env.close()


def _error_payload(group: _Group | None, index: int, method: str, exc: BaseException) -> bytes:
    env = group.current if group is not None else index
    return _ERROR + pickle.dumps(
        (env, method, type(exc).__name__, str(exc), traceback.format_exc())
    )


def _worker(
    conn: Connection,
    parent_end: Connection | None,
    env_fns: list[Callable[[], gym.Env]],
    first: int,
    block: shared_memory.SharedMemory,
    layout_args: tuple[Any, ...],
    mode: str,
    full_info: bool,
    discrete: bool,
) -> None:
    """A worker process: build its environments, then serve commands until ``close``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle
    if parent_end is not None:
        parent_end.close()
    group: _Group | None = None
    first_bad = first
    try:
        envs = []
        for k, fn in enumerate(env_fns):
            first_bad = first + k
            envs.append(fn())
        if parent_end is None:  # spawned: ``block`` was attached here by name
            _untrack(block)
        arrays = _Layout(*layout_args).views(block)
        group = _Group(envs, first, arrays, AutoresetMode(mode), full_info, discrete)
        conn.send_bytes(_OK)
    except BaseException as exc:  # noqa: BLE001 - reported to the main process
        conn.send_bytes(_error_payload(None, first_bad, "__init__ (the factory)", exc))
        return
    method = "step"
    while True:
        try:
            message = conn.recv_bytes()
        except (EOFError, OSError):  # the main process is gone
            break
        try:
            if message == _STEP:
                method = "step"
                extras = group.step()
                conn.send_bytes(_EXTRAS + pickle.dumps(extras) if extras else _OK)
                continue
            command, payload = pickle.loads(message)
            method = command
            if command == "reset":
                result: Any = group.reset(*payload)
            elif command == "call":
                method = payload[0]
                result = group.call(*payload)
            elif command == "get_attr":
                method = payload
                result = group.get_attr(payload)
            elif command == "set_attr":
                method = f"set_attr({payload[0]!r})"
                group.set_attr(*payload)
                result = None
            elif command == "close":
                group.close()
                conn.send_bytes(_OK)
                break
            else:
                raise ValueError(f"unknown command {command!r}")
            conn.send_bytes(_EXTRAS + pickle.dumps(result))
        except BaseException as exc:  # noqa: BLE001 - reported to the main process
            try:
                conn.send_bytes(_error_payload(group, first, method, exc))
            except (BrokenPipeError, OSError):
                break
    conn.close()  # the block is unmapped at exit (views of it are still alive here)


def _untrack(block: shared_memory.SharedMemory) -> None:
    """Attached (not created) blocks must not be unlinked by this process's resource tracker
    (Python < 3.13 registers every attach)."""
    try:
        from multiprocessing import resource_tracker

        resource_tracker.unregister(block._name, "shared_memory")  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - best effort: only a warning at exit otherwise
        pass


class SharedMemoryVectorEnv(FastInfo, VectorEnv):
    """``len(env_fns)`` sub-environments over the calling process and ``num_workers`` workers.

    Args:
        env_fns: one factory per sub-environment. With the ``fork`` start method (the default
            on Linux) factories need not be picklable (lambdas over prepared inputs work).
        num_workers: worker processes (None: one per available core, minus the caller's, at
            most one per environment beyond the caller's share; 0: everything in-process).
        in_main: environments the calling process steps itself while the workers step theirs
            (None: an even share, rounded down; 0: the caller only waits). A trainer that
            also computes actions in the calling process should take fewer: see
            :func:`caller_share`.
        autoreset_mode: ``"same_step"`` (finished episodes restart within the step; ``info``
            then has ``final_obs``/``final_info``) or ``"next_step"`` (Gymnasium's default).
        full_info: send every step's whole ``info`` (default: the action mask at every step,
            the rest only when an episode ends).
        context: multiprocessing start method (None: ``fork`` where available, else ``spawn``).

    The observation space must have a fixed shape (``Box``); the action space a fixed shape
    too (``Discrete``, ``Box``, ``MultiDiscrete``, ``MultiBinary``). ``processes`` lists the
    worker processes (e.g. to read their CPU time).
    """

    def __init__(
        self,
        env_fns: Sequence[Callable[[], gym.Env]],
        *,
        num_workers: int | None = None,
        in_main: int | None = None,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        full_info: bool = False,
        context: str | None = None,
    ) -> None:
        self.processes: list[mp.process.BaseProcess] = []
        self._conns: list[Connection] = []
        self._block: shared_memory.SharedMemory | None = None
        self._pending = False
        n = len(env_fns)
        if n < 1:
            raise ValueError("SharedMemoryVectorEnv needs at least one environment factory")
        if num_workers is None:
            num_workers = default_workers(n)
        if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(f"num_workers must be an integer >= 0, got {num_workers!r}")
        if in_main is not None and not 0 <= in_main <= n:
            raise ValueError(f"in_main must be between 0 and {n}, got {in_main!r}")
        if in_main is not None and in_main < n and num_workers == 0:
            raise ValueError("in_main < num_envs needs num_workers >= 1")
        if num_workers > n - (in_main or 0):
            raise ValueError(
                f"{num_workers} workers for {n - (in_main or 0)} environment(s) outside the "
                "calling process: every worker needs at least one"
            )
        if isinstance(autoreset_mode, str) and autoreset_mode in _MODE_NAMES:
            autoreset_mode = _MODE_NAMES[autoreset_mode]
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        if self.autoreset_mode is AutoresetMode.DISABLED:
            raise ValueError("autoreset_mode must be 'next_step' or 'same_step'")
        self.num_envs = n
        self.full_info = bool(full_info)
        self.groups = split_groups(n, num_workers, in_main)
        self.closed = False
        # The spaces come from one environment built here (it becomes the caller's first one,
        # or is closed when the caller steps none), so the shared block can be sized first.
        probe = self._build_local(env_fns[0], 0)
        obs_space, act_space = probe.observation_space, probe.action_space
        if not isinstance(obs_space, gym.spaces.Box):
            probe.close()
            raise ValueError(f"the observation space must be a Box, got {obs_space}")
        if not isinstance(
            act_space,
            (gym.spaces.Discrete, gym.spaces.Box, gym.spaces.MultiDiscrete, gym.spaces.MultiBinary),
        ):
            probe.close()
            raise ValueError(f"the action space must have a fixed shape, got {act_space}")
        if isinstance(act_space, gym.spaces.Discrete):
            discrete, mask_size = True, int(act_space.n)
        else:
            discrete, mask_size = False, 0
        self.single_observation_space = obs_space
        self.single_action_space = act_space
        self.observation_space = batch_space(obs_space, n)
        self.action_space = batch_space(act_space, n)
        self.metadata = dict(getattr(probe, "metadata", {}))
        self.metadata["autoreset_mode"] = self.autoreset_mode
        self.render_mode = probe.render_mode
        layout_args = (n, obs_space, act_space, mask_size)
        layout = _Layout(*layout_args)
        self._block = shared_memory.SharedMemory(create=True, size=layout.size)
        self._arrays = layout.views(self._block)
        self._arrays["mask"][:] = True
        ctx = mp.get_context(
            context or ("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        )
        try:
            for w, group in enumerate(self.groups[1:], start=1):
                parent, child = ctx.Pipe()
                # Every context get_context returns has Process; typeshed's BaseContext (its
                # type for a method name only known at run time) does not declare it.
                process = ctx.Process(  # type: ignore[attr-defined]
                    target=_worker,
                    args=(
                        child,
                        parent if ctx.get_start_method() == "fork" else None,
                        [env_fns[i] for i in group],
                        group.start,
                        self._block,
                        layout_args,
                        self.autoreset_mode.value,
                        self.full_info,
                        discrete,
                    ),
                    name=f"hdeeprm-vector-worker-{w}",
                    daemon=True,
                )
                process.start()
                child.close()
                self.processes.append(process)
                self._conns.append(parent)
            local = self.groups[0]
            envs: list[gym.Env] = []
            for i in local:
                envs.append(probe if i == 0 else self._build_local(env_fns[i], i))
            if not len(local):
                probe.close()
            self._local = _Group(
                envs, 0, self._arrays, self.autoreset_mode, self.full_info, discrete
            )
            for w in range(len(self._conns)):
                self._receive(w, "__init__ (the factory)")
        except BaseException:
            self.close(terminate=True)
            raise

    @staticmethod
    def _build_local(fn: Callable[[], gym.Env], i: int) -> gym.Env:
        try:
            return fn()
        except Exception as exc:
            raise VectorEnvError(i, "__init__ (the factory)", type(exc).__name__, str(exc)) from exc

    @property
    def num_workers(self) -> int:
        return len(self.processes)

    # --- Gymnasium VectorEnv API ----------------------------------------------------------
    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every sub-environment (``seed + i`` for environment ``i``), or those of
        ``options["reset_mask"]``."""
        self._check_open()
        n = self.num_envs
        if seed is None:
            seeds: list[int | None] = [None] * n
        elif isinstance(seed, (int, np.integer)):
            seeds = [int(seed) + i for i in range(n)]
        else:
            seeds = list(seed)
            if len(seeds) != n:
                raise ValueError(f"seeds given as a list must have {n} entries, got {len(seeds)}")
        options = dict(options) if options else None
        which = np.ones(n, dtype=np.bool_)
        if options is not None and "reset_mask" in options:
            which = np.asarray(options.pop("reset_mask"))
            if which.dtype != np.bool_ or which.shape != (n,) or not which.any():
                raise ValueError(
                    f"options['reset_mask'] must be a bool array of shape ({n},) with a True"
                )
        for w, group in enumerate(self.groups[1:]):
            payload = ([seeds[i] for i in group], options, [bool(which[i]) for i in group])
            self._send(w, pickle.dumps(("reset", payload)), "reset")
        extras: list[tuple[Any, ...]] = []
        local = self.groups[0]
        try:
            extras += self._local_call(
                "reset",
                self._local.reset,
                [seeds[i] for i in local],
                options,
                [bool(which[i]) for i in local],
            )
        finally:
            for w in range(len(self._conns)):
                extras += self._receive(w, "reset")
        infos = self._merge(extras, set_mask=False)
        self._add_mask(infos)
        return self._arrays["obs"].copy(), infos

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        self.step_async(actions)
        return self.step_wait()

    def step_async(self, actions: Any) -> None:
        """Write the actions and start the workers; :meth:`step_wait` steps the caller's own
        environments and collects the results."""
        self._check_open()
        if self._pending:
            raise RuntimeError("step_async called twice without step_wait")
        self._arrays["actions"][:] = actions
        for w in range(len(self._conns)):
            self._send(w, _STEP, "step")
        self._pending = True

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if not self._pending:
            raise RuntimeError("step_wait called without step_async")
        self._pending = False
        extras: list[tuple[Any, ...]] = []
        try:
            if self._local.envs:
                extras = self._local_call("step", self._local.step)
        finally:
            for w in range(len(self._conns)):
                extras += self._receive(w, "step")
        a = self._arrays
        infos = self._merge(extras, set_mask=True) if extras else {}
        self._add_mask(infos)
        return (
            a["obs"].copy(),
            a["rewards"].copy(),
            a["terminated"].copy(),
            a["truncated"].copy(),
            infos,
        )

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call method ``name`` (or read attribute ``name``) of every sub-environment."""
        return self._gather("call", (name, args, kwargs), name, self._local.call)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        return self._gather("get_attr", name, name, self._local.get_attr)

    def set_attr(self, name: str, values: Any) -> None:
        self._check_open()
        if not isinstance(values, (list, tuple)):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise ValueError(f"set_attr needs {self.num_envs} values, got {len(values)}")
        for w, group in enumerate(self.groups[1:]):
            payload = (name, [values[i] for i in group])
            self._send(w, pickle.dumps(("set_attr", payload)), f"set_attr({name!r})")
        try:
            self._local_call(
                f"set_attr({name!r})",
                self._local.set_attr,
                name,
                [values[i] for i in self.groups[0]],
            )
        finally:
            for w in range(len(self._conns)):
                self._receive(w, f"set_attr({name!r})")

    def render(self) -> tuple[Any, ...]:
        return self.call("render")

    def close_extras(self, terminate: bool = False, **kwargs: Any) -> None:
        """Close the sub-environments, end the workers and free the shared memory."""
        try:
            if self._pending and not terminate:
                self.step_wait()
        except Exception:  # noqa: BLE001 - closing anyway
            terminate = True
        local = getattr(self, "_local", None)
        if local is not None:
            with contextlib.suppress(Exception):  # the others must still be closed
                local.close()
            local.a = {}
        for conn in self._conns:
            try:
                if not terminate:
                    conn.send_bytes(pickle.dumps(("close", None)))
            except OSError:
                pass
        for process, conn in zip(self.processes, self._conns):
            if not terminate:
                try:
                    if conn.poll(5.0):
                        conn.recv_bytes()
                except (EOFError, OSError):
                    pass
                process.join(5.0)
            if process.is_alive():
                process.terminate()
                process.join(1.0)
            conn.close()
        self.processes = []
        self._conns = []
        if self._block is not None:
            self._arrays = {}
            self._block.close()
            self._block.unlink()
            self._block = None

    def __del__(self) -> None:
        if self.__dict__.get("closed") is False:
            with contextlib.suppress(Exception):  # e.g. at interpreter shutdown
                self.close(terminate=True)

    # --- internals ------------------------------------------------------------------------
    def _check_open(self) -> None:
        if self.closed:
            raise RuntimeError("this vector environment is closed")

    def _local_call(self, method: str, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return fn(*args)
        except Exception as exc:
            raise VectorEnvError(self._local.current, method, type(exc).__name__, str(exc)) from exc

    def _died(self, w: int, method: str) -> VectorEnvError:
        process = self.processes[w]
        process.join(1.0)
        group = self.groups[w + 1]
        return VectorEnvError(
            group.start,
            method,
            "WorkerDied",
            f"worker process {w + 1} (environments {group.start}-{group.stop - 1}) "
            f"died, exit code {process.exitcode}",
            worker=w + 1,
        )

    def _send(self, w: int, data: bytes, method: str) -> None:
        try:
            self._conns[w].send_bytes(data)
        except OSError:
            raise self._died(w, method) from None

    def _receive(self, w: int, method: str) -> Any:
        """The reply of worker ``w`` (extras or a result); :class:`VectorEnvError` if it
        raised or died."""
        try:
            reply = self._conns[w].recv_bytes()
        except (EOFError, OSError):
            raise self._died(w, method) from None
        if not reply:
            return []
        kind, body = reply[:1], reply[1:]
        if kind == _ERROR:
            env, where, name, text, remote = pickle.loads(body)
            raise VectorEnvError(env, where, name, text, worker=w + 1, remote_traceback=remote)
        return pickle.loads(body)

    def _gather(
        self, command: str, payload: Any, method: str, local: Callable[..., list[Any]]
    ) -> tuple[Any, ...]:
        self._check_open()
        for w in range(len(self._conns)):
            self._send(w, pickle.dumps((command, payload)), method)
        results: list[Any] = []
        try:
            args = payload if command == "call" else (payload,)
            results += self._local_call(method, local, *args)
        finally:
            parts = [self._receive(w, method) for w in range(len(self._conns))]
        for part in parts:
            results += part
        return tuple(results)

    def _merge(self, extras: list[tuple[Any, ...]], set_mask: bool) -> dict[str, Any]:
        infos: dict[str, Any] = {}
        for item in sorted(extras, key=lambda e: e[1]):
            if item[0] == "final":
                _, i, obs, info = item
                infos = self._add_info(infos, {"final_obs": obs, "final_info": info}, i)
            else:
                infos = self._add_info(infos, item[2], item[1])
        return infos

    def _add_mask(self, infos: dict[str, Any]) -> None:
        if self.full_info:
            return
        has = self._arrays["has_mask"]
        if has.any():
            infos["action_mask"] = self._arrays["mask"].copy()
            infos["_action_mask"] = has.copy()
        else:
            infos.pop("action_mask", None)
            infos.pop("_action_mask", None)
