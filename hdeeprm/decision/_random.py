"""Cheap seeded uniform draws for the ``random`` policies."""

from __future__ import annotations

import numpy as np


class UniformStream:
    """Uniform integers below ``n`` from a seeded generator, drawn in batches.

    One NumPy call per 4,096 draws instead of one per draw: ``Generator.integers`` costs
    microseconds per scalar call, which dominated the ``random`` policies on whole traces.
    ``int(u * n)`` with a 53-bit ``u`` in [0, 1) is uniform up to a bias of about n / 2**53,
    negligible for any queue or platform size.
    """

    __slots__ = ("rng", "buffer", "pos", "size")

    def __init__(self, rng: np.random.Generator, size: int = 4096) -> None:
        self.rng = rng
        self.size = size
        self.buffer: list[float] = []
        self.pos = 0

    def below(self, n: int) -> int:
        if self.pos == len(self.buffer):
            self.buffer = self.rng.random(self.size).tolist()
            self.pos = 0
        u = self.buffer[self.pos]
        self.pos += 1
        return min(int(u * n), n - 1)
