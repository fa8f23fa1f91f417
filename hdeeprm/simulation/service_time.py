"""The service-time model: a job's duration depends on its workload type and its locality.

CuSH (Domeniconi et al. 2019, section 3.1) measured dgemm (compute-intensive) and daxpy
(network-intensive) jobs on GPU nodes under two allocations: depth-first (as few nodes as
possible) helps dgemm, whose matrices are copied between GPUs of one node faster than across
the network; breadth-first (as many nodes as possible) helps daxpy, whose GPUs packed on one
node share that node's network links. CuSH adds a penalty to the requested duration,
``st_j = t_j + p_j``, from a linear fit of those measurements, which the paper does not print.
This module keeps that shape with a documented linear model of its own:

* ``spread`` of an allocation: ``(n - n_min) / (n_max - n_min)`` in [0, 1], where ``n`` is the
  number of distinct nodes holding the job's cores or GPUs, ``n_min = max(ceil(cores /
  cores_per_node), ceil(gpus / gpus_per_node))`` (the largest node's counts, so a lower bound
  on any platform) and ``n_max = min(nodes, cores + gpus)`` (one unit per node); 0 when
  ``n_max == n_min`` (the allocation has no locality choice);
* ``compute`` jobs: ``p_j = compute x spread x t_j``;
* ``network`` jobs: ``p_j = network x (1 - spread) x t_j`` when ``n_max > n_min``, else 0;
* jobs without a ``workload_type``: no penalty.

The engine multiplies the job's work (delay seconds or flops) by ``1 + p_j / t_j``, so the
model applies to every profile type. Defaults (``compute=0.5``, ``network=1.0``) are
assumptions, not fits: a fully spread dgemm takes 1.5 x its time, a fully packed daxpy 2 x
(four GPUs sharing one node's links at least halve each one's bandwidth). Off unless an
engine is given a model.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hdeeprm.errors import InputError
from hdeeprm.platform.hierarchy import Platform


@dataclass(frozen=True, slots=True)
class ServiceTimeModel:
    """Locality penalties per workload type (module docstring), over one platform's nodes.

    Build it with :meth:`from_platform`. ``compute`` and ``network`` are the penalties, as a
    fraction of the requested time, at the worst locality for each type.
    """

    host_node: tuple[int, ...]
    gpu_node: tuple[int, ...]
    nb_nodes: int
    cores_per_node: int
    gpus_per_node: int
    compute: float = 0.5
    network: float = 1.0

    @classmethod
    def from_platform(
        cls, platform: Platform, *, compute: float = 0.5, network: float = 1.0
    ) -> ServiceTimeModel:
        for name, value in (("compute", compute), ("network", network)):
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not (math.isfinite(value) and value >= 0)
            ):
                raise InputError(
                    f"expected a finite number >= 0 (penalty fraction), got {value!r}",
                    where=f"service_time.{name}",
                )
        return cls(
            host_node=tuple(core.processor.node.id for core in platform.cores),
            gpu_node=tuple(gpu.node.id for gpu in platform.gpus),
            nb_nodes=len(platform.nodes),
            cores_per_node=max((len(node.cores) for node in platform.nodes), default=1),
            gpus_per_node=max((len(node.gpus) for node in platform.nodes), default=0),
            compute=float(compute),
            network=float(network),
        )

    @classmethod
    def from_settings(
        cls, platform: Platform, settings: Mapping[str, float] | None
    ) -> ServiceTimeModel | None:
        """The model an options file's ``service_time`` object asks for, or ``None`` (off)."""
        if settings is None:
            return None
        return cls.from_platform(platform, **settings)

    def bounds(self, cores: int, gpus: int) -> tuple[int, int]:
        """``(n_min, n_max)``: the fewest and the most nodes ``cores`` + ``gpus`` may span."""
        lowest = math.ceil(cores / self.cores_per_node) if cores else 0
        if gpus and self.gpus_per_node:
            lowest = max(lowest, math.ceil(gpus / self.gpus_per_node))
        return lowest, min(self.nb_nodes, cores + gpus)

    def spread(self, hosts: Sequence[int], gpus: Sequence[int] = ()) -> float:
        """How spread the allocation is: 0 = as few nodes as possible, 1 = as many."""
        lowest, highest = self.bounds(len(hosts), len(gpus))
        if highest <= lowest:
            return 0.0
        host_node, gpu_node = self.host_node, self.gpu_node
        used = len({host_node[h] for h in hosts} | {gpu_node[g] for g in gpus})
        return min(1.0, max(0.0, (used - lowest) / (highest - lowest)))

    def penalty(
        self, workload_type: str | None, hosts: Sequence[int], gpus: Sequence[int] = ()
    ) -> float:
        """``p_j / t_j``: the penalty as a fraction of the requested time."""
        if workload_type == "compute":
            return self.compute * self.spread(hosts, gpus)
        if workload_type == "network":
            lowest, highest = self.bounds(len(hosts), len(gpus))
            if highest <= lowest:
                return 0.0
            return self.network * (1.0 - self.spread(hosts, gpus))
        return 0.0

    def factor(
        self, workload_type: str | None, hosts: Sequence[int], gpus: Sequence[int] = ()
    ) -> float:
        """What the engine multiplies the job's work by: ``1 + p_j / t_j``."""
        return 1.0 + self.penalty(workload_type, hosts, gpus)


__all__ = ["ServiceTimeModel"]
