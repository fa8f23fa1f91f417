"""Bit-exact digests of results, shared by the digest benchmark and the pinned-digest tests.

Speed work must leave every observation, reward and ``info`` entry identical bit for bit; a
SHA-256 fed through :func:`feed` changes when any float's bits or any array's bytes do.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any

import numpy as np


def feed(digest: Any, value: Any) -> None:
    """Add ``value`` to ``digest`` exactly: floats by their bits, arrays by their bytes."""
    if isinstance(value, np.ndarray):
        digest.update(str(value.dtype).encode() + value.tobytes())
    elif isinstance(value, float):
        digest.update(struct.pack("<d", value))
    else:
        digest.update(repr(value).encode())


def feed_info(digest: Any, info: Mapping[str, Any]) -> None:
    """Add every entry of an ``info`` dict, in key order (insertion order is not compared)."""
    for key in sorted(info):
        feed(digest, key)
        feed(digest, info[key])


def feed_random_episode(digest: Any, env: Any, rng: np.random.Generator, **reset: Any) -> int:
    """Play one episode of ``env`` with uniform random actions drawn from ``rng`` and add
    every observation, reward, ``terminated`` flag, ``info`` entry, then the engine's per-job,
    per-host and total energy; returns the number of steps."""
    obs, info = env.reset(**reset)
    feed(digest, obs)
    feed_info(digest, info)
    n, steps, done = env.action_space.n, 0, False
    while not done:
        obs, reward, done, _, info = env.step(int(rng.integers(n)))
        steps += 1
        for value in (obs, reward, done):
            feed(digest, value)
        feed_info(digest, info)
    engine = env.engine
    assert engine is not None
    for job in engine.finished_jobs:
        feed(digest, job.id)
        feed(digest, job.energy)
    for energy in engine.host_energy():
        feed(digest, energy)
    feed(digest, engine.consumed_energy)
    return steps
