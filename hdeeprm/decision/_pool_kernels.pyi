"""Type stub of the compiled core pool kernel (``_pool_kernels.c``)."""

from types import NotImplementedType
from typing import Any

from hdeeprm.simulation.events import SetResourceState

SOURCE_DIGEST: str
MEM_TOL: float
FIT_SLACK: float

class Pool:
    """The compiled takes, releases, settles and drains of one CorePool."""

    def __init__(
        self,
        pool: Any,
        logger: Any,
        open_end: float,
        set_resource_state: Any,
        host_ids: Any,
        reference: type,
    ) -> None: ...
    def refresh(self) -> None: ...
    def take(self, core: int, job_id: str, mem: float, mem_bw: float) -> None: ...
    def settle(self, cores: Any, now: float) -> None: ...
    def take_run(
        self, proc: int, count: int, job_id: str, mem: float, mem_bw: float
    ) -> list[int]: ...
    def release(self, cores: Any, now: float) -> None: ...
    def settle_taken(self, taken: dict[int, list[int]], now: float) -> None: ...
    def drain(self) -> list[SetResourceState]: ...
    def floor_catch_up(
        self,
        counts: list[float],
        nodes: list[int],
        start: int,
        sizes: list[float],
        node_busy: list[int],
        node_free_mem: list[float],
        mem: float,
        total: float,
    ) -> float | NotImplementedType: ...
    def size_catch_up(
        self,
        counts: list[int],
        nodes: list[int],
        start: int,
        node_cores: list[list[int]],
        node_busy: list[int],
        node_free_mem: list[float],
        need: float,
        mem: float,
        total: int,
    ) -> int | NotImplementedType: ...
    def ranked_allocate(
        self,
        tree: Any,
        job_id: str,
        res: int,
        mem: float,
        mem_bw: float,
        taken: dict[int, list[int]],
        open_misses: int,
        sort_back: int,
    ) -> int: ...
