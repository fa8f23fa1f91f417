"""What the changing-key core-policy heaps share: a single pick is an allocation of one task
that takes nothing, and the bound that ends a run of takes."""

from __future__ import annotations

from typing import Any


class PickByAllocating:
    """Mixin of the heaps of :mod:`hdeeprm.decision.resource_manager`: :meth:`pick` from the
    class's own ``allocate(job_id, res, mem, mem_bw, taken)`` (``job_id`` ``None``: take
    nothing, return the best processor) and ``pool``."""

    __slots__ = ()
    pool: Any

    def allocate(
        self, job_id: str | None, res: int, mem: float, mem_bw: float, taken: list[int]
    ) -> int | None:
        raise NotImplementedError

    def pick(self, mem: float) -> int | None:
        """Lowest free core of the best processor whose node has ``mem`` MB free."""
        proc = self.allocate(None, 1, mem, 0.0, [])
        return None if proc is None else self.pool.proc_free[proc][0]


def child_bound(heap: list[tuple[Any, ...]]) -> tuple[float, int] | None:
    """``(key, lowest free core)`` of the smaller child of ``heap``'s top entry: a lower bound
    of every entry but the top, stale ones included (``None``: the top is alone). A run of
    takes from the top's processor goes on while its figures stay below it."""
    size = len(heap)
    if size > 2:
        child = heap[1] if heap[1] < heap[2] else heap[2]
        return (child[0], child[1])
    if size == 2:
        return (heap[1][0], heap[1][1])
    return None
