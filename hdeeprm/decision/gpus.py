"""GPU accounting and locality allocation (CuSH's depth- and breadth-first policies).

GPUs are not Batsim hosts: the engine runs a job's tasks on cores, and the decision system
accounts for the GPUs beside them, in :class:`GpuPool`, a structure of its own so that the core
pool (:mod:`hdeeprm.decision.resources`) and its fast paths are untouched. A job asks for
``gpus`` GPUs in total; they may sit on any node with free GPUs, with or without one of the
job's cores (CuSH places CPUs and GPUs as separate resources of a node).

:class:`LocalityAllocator` places a job that needs GPUs or asks for a locality policy:

* ``depth_first``: as few nodes as possible. Nodes are taken one at a time, each time the node
  that covers the most of what is still missing (cores it can take given the task memory, plus
  GPUs), ties to the lowest node id; on each node the lowest free cores and GPU ids.
* ``breadth_first``: as many nodes as possible. Units are dealt one per node in rounds, GPUs
  first (fewer nodes have them) then cores; nodes the job does not use yet come first, then the
  nodes with the most free units, then the lowest id.
* any other core policy (``high_gflops``, ...): the resource manager picks the cores as for a
  GPU-less job, then the GPUs go to the job's own nodes first (ascending node id), then to the
  other nodes (ascending node id).

A job fits iff its cores fit (as without GPUs) and the platform has ``gpus`` free GPUs: the
same answer for every policy. Both locality policies scan the nodes, O(nodes x nodes used) per
job; they are meant for GPU platforms of a few hundred nodes (CuSH's has 128), not for
replaying CPU traces on tens of thousands of nodes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hdeeprm.decision.actions import LOCALITY_POLICIES
from hdeeprm.decision.resources import MEM_TOL, CorePool
from hdeeprm.platform.hierarchy import Platform


class _GpuLayout:
    """What a platform fixes for every :class:`GpuPool` built on it, computed once per
    platform (``Platform.derived``) so that an environment's reset builds none of it again.
    Shared between pools: never written."""

    def __init__(self, platform: Platform) -> None:
        self.nb_gpus = len(platform.gpus)
        self.node_gpus: list[list[int]] = [[g.id for g in node.gpus] for node in platform.nodes]
        self.gpu_node: list[int] = [g.node.id for g in platform.gpus]
        self.types: list[str] = list(
            dict.fromkeys(node.type for node in platform.nodes if node.gpus)
        )
        self.type_index = [
            self.types.index(node.type) if node.gpus else -1 for node in platform.nodes
        ]
        self.type_total = np.zeros(len(self.types))
        for node, ids in enumerate(self.node_gpus):
            if ids:
                self.type_total[self.type_index[node]] += len(ids)
        self.type_total.flags.writeable = False


class GpuPool:
    """Free and busy GPUs per node (``platform.gpus[i].id == i``)."""

    def __init__(self, platform: Platform) -> None:
        layout = platform.derived.view(_GpuLayout, lambda: _GpuLayout(platform))
        self.nb_gpus = layout.nb_gpus
        self.node_gpus = layout.node_gpus
        self.gpu_node = layout.gpu_node
        #: Node types that have GPUs, in first-seen order (the observation's GPU features),
        #: each node's position in that list (-1: no GPU) and each type's GPU count.
        self.types = layout.types
        self._type_index = layout.type_index
        self._type_total = layout.type_total
        self.reset()

    def reset(self) -> None:
        """Every GPU free."""
        self.free: list[list[int]] = list(map(list.copy, self.node_gpus))
        self.gpu_job: list[str | None] = [None] * self.nb_gpus
        self.free_count = self.nb_gpus

    def take(self, node: int, count: int, job_id: str) -> list[int]:
        """Give the ``count`` lowest free GPUs of ``node`` to ``job_id``."""
        free = self.free[node]
        if count > len(free):
            raise ValueError(f"node {node} has {len(free)} free GPUs, {count} asked")
        taken = free[:count]
        del free[:count]
        for gpu in taken:
            self.gpu_job[gpu] = job_id
        self.free_count -= count
        return taken

    def release(self, gpus: Sequence[int]) -> None:
        """Free the GPUs of a finished job (or of a rolled-back attempt)."""
        for gpu in gpus:
            self.gpu_job[gpu] = None
            self.free[self.gpu_node[gpu]].append(gpu)
        for node in {self.gpu_node[g] for g in gpus}:
            self.free[node].sort()
        self.free_count += len(gpus)

    def free_by_type(self) -> np.ndarray:
        """Fraction of the GPUs of each node type with GPUs that is free, in :attr:`types`
        order: the observation's GPU features."""
        free = np.zeros(len(self.types))
        index = self._type_index
        for node, ids in enumerate(self.free):
            if ids:
                free[index[node]] += len(ids)
        return free / self._type_total if len(free) else free


def _core_capacity(pool: CorePool, node: int, mem: float) -> int:
    """Tasks of ``mem`` MB the node can take now (free cores, bounded by free memory)."""
    free = len(pool.node_cores[node]) - pool.node_busy[node]
    if free and mem > 0.0:
        free = min(free, int((pool.node_free_mem[node] + MEM_TOL) // mem))
    return free


class LocalityAllocator:
    """Places jobs that need GPUs, or that ask for a locality policy (module docstring)."""

    def __init__(self, pool: CorePool, gpus: GpuPool) -> None:
        self.pool = pool
        self.gpus = gpus

    def plan(
        self, policy: str, res: int, gpus: int, mem: float
    ) -> list[tuple[int, int, int]] | None:
        """``[(node, cores, gpus), ...]`` for ``policy`` now, or ``None`` if it does not fit.
        Changes nothing."""
        pool = self.pool
        nodes = range(len(pool.node_cores))
        cap_c = [_core_capacity(pool, n, mem) for n in nodes]
        cap_g = [len(f) for f in self.gpus.free]
        if sum(cap_c) < res or sum(cap_g) < gpus:
            return None
        if policy == "depth_first":
            return _depth_first(cap_c, cap_g, res, gpus)
        if policy == "breadth_first":
            return _breadth_first(cap_c, cap_g, res, gpus)
        raise ValueError(f"unknown locality policy {policy!r}; expected one of {LOCALITY_POLICIES}")

    def take_cores(
        self, plan: list[tuple[int, int, int]], job_id: str, mem: float, mem_bw: float, now: float
    ) -> list[int]:
        """Take the planned cores (lowest free ids of each node) and settle the pool."""
        pool = self.pool
        taken: list[int] = []
        for node, count, _g in sorted(plan):
            for proc in pool.node_procs[node]:
                if not count:
                    break
                run = min(count, len(pool.proc_free[proc]))
                if run:
                    taken.extend(pool.take_run(proc, run, job_id, mem, mem_bw))
                    count -= run
        pool.settle(taken, now)
        return taken

    def take_gpus(self, plan: list[tuple[int, int, int]], job_id: str) -> list[int]:
        """Take the planned GPUs (lowest free ids of each node)."""
        taken: list[int] = []
        for node, _c, count in sorted(plan):
            if count:
                taken.extend(self.gpus.take(node, count, job_id))
        return sorted(taken)

    def gpus_near(self, cores: Sequence[int], count: int, job_id: str) -> list[int]:
        """``count`` GPUs for a job already on ``cores``: its own nodes first, then the others,
        each in ascending node id. The caller checked that enough are free."""
        core_node = self.pool.core_node
        own = sorted({core_node[c] for c in cores})
        own_set = set(own)
        order = own + [n for n in range(len(self.gpus.free)) if n not in own_set]
        taken: list[int] = []
        for node in order:
            if len(taken) == count:
                break
            free = len(self.gpus.free[node])
            if free:
                taken.extend(self.gpus.take(node, min(free, count - len(taken)), job_id))
        return sorted(taken)


def _depth_first(
    cap_c: list[int], cap_g: list[int], res: int, gpus: int
) -> list[tuple[int, int, int]]:
    """Fewest nodes, greedily: each step the node covering most of what is missing."""
    plan: list[tuple[int, int, int]] = []
    used: set[int] = set()
    need_c, need_g = res, gpus
    while need_c or need_g:
        best, best_cover = -1, 0
        for node in range(len(cap_c)):
            if node in used:
                continue
            cover = min(cap_c[node], need_c) + min(cap_g[node], need_g)
            if cover > best_cover:
                best, best_cover = node, cover
        # Capacities were checked by the caller, so some node always covers something.
        c, g = min(cap_c[best], need_c), min(cap_g[best], need_g)
        plan.append((best, c, g))
        used.add(best)
        need_c -= c
        need_g -= g
    return plan


def _breadth_first(
    cap_c: list[int], cap_g: list[int], res: int, gpus: int
) -> list[tuple[int, int, int]]:
    """Most nodes: one unit per node per round, GPUs first (they exist on fewer nodes), then
    cores, which go to the nodes the job does not use yet first."""
    n = len(cap_c)
    cores = [0] * n
    gpu = [0] * n
    for need, cap, got in ((gpus, cap_g, gpu), (res, cap_c, cores)):
        if not need:
            continue
        # Nodes the job does not use yet first, then the most free units, then the lowest id.
        order = sorted(
            (node for node in range(n) if cap[node]),
            key=lambda node: (cores[node] + gpu[node] > 0, -(cap_c[node] + cap_g[node]), node),
        )
        while need:
            for node in order:
                if got[node] < cap[node]:
                    got[node] += 1
                    need -= 1
                    if not need:
                        break
    return [(node, cores[node], gpu[node]) for node in range(n) if cores[node] or gpu[node]]


__all__ = ["LOCALITY_POLICIES", "GpuPool", "LocalityAllocator"]
