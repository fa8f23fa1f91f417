"""What the changing-key core-policy heaps share: a single pick is an allocation of one task
that takes nothing."""

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
