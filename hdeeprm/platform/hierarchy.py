"""The resource hierarchy: platform > cluster > node > processor > core (and node > GPU).

These objects are the *static* description of a cluster: capacities and peak figures derived
from the type library. Dynamic state (free memory, bandwidth in use, current P-state) belongs to
the decision system, which builds its own fast structures from this hierarchy.

Core ids are Batsim resource ids: ``platform.cores[i].id == i`` and host ``platform.cores[i].name``
is the i-th compute host of the generated ``platform.xml``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from hdeeprm._derived import Derived

# --- the interference P-state model (thesis 3.1.2, SPEC section 2) -----------------------
#: P0: running at full speed; P1: running, processor memory bandwidth over-subscribed;
#: P2: idle while another core of its processor runs; P3: idle in an idle processor.
P0, P1, P2, P3 = 0, 1, 2, 3
#: Fraction of the core's peak speed in each P-state.
PSTATE_SPEED_FRACTION: tuple[float, float, float, float] = (1.0, 0.75, 0.0, 0.0)
#: Fraction of the core's power (processor power / cores) drawn in each P-state.
PSTATE_POWER_FRACTION: tuple[float, float, float, float] = (1.0, 1.0, 0.25, 0.05)
#: Cores start idle in an idle processor.
INITIAL_PSTATE = P3


@dataclass(eq=False, slots=True)
class Core:
    """The unit the resource manager allocates; one SimGrid host in ``platform.xml``."""

    id: int
    name: str
    processor: Processor

    @property
    def node(self) -> Node:
        return self.processor.node

    @property
    def peak_gflops(self) -> float:
        """Speed in P0, in GFLOPS (clock rate x double-precision flops per cycle)."""
        return self.processor.gflops_per_core

    @property
    def power(self) -> float:
        """Power in P0/P1, in watts: the processor's power shared evenly by its cores."""
        return self.processor.power_per_core

    def __repr__(self) -> str:
        return f"Core(id={self.id}, name={self.name!r}, processor={self.processor.id})"


@dataclass(eq=False, slots=True)
class Processor:
    """A socket: its cores share its memory bandwidth and its power."""

    id: int
    type: str
    node: Node
    kind: str
    uarch: str
    clock_rate: float  # GHz
    dpflops_per_cycle: float
    mem_bw: float  # GB/s, shared by the cores
    llc_size: float  # MB
    power: float  # W, whole processor
    cores: list[Core] = field(default_factory=list)

    @property
    def gflops_per_core(self) -> float:
        return self.clock_rate * self.dpflops_per_cycle

    @property
    def power_per_core(self) -> float:
        return self.power / len(self.cores) if self.cores else 0.0

    def __repr__(self) -> str:
        return f"Processor(id={self.id}, type={self.type!r}, cores={len(self.cores)})"


@dataclass(eq=False, slots=True)
class Gpu:
    """An accelerator of a node, allocated whole to one job. GPUs are not Batsim hosts: the
    decision system accounts for them beside the cores (``platform.gpus[i].id == i``)."""

    id: int
    type: str
    node: Node
    gflops: float  # peak double-precision GFLOPS
    power: float  # W, sustained
    memory_gb: float = 0.0

    def __repr__(self) -> str:
        return f"Gpu(id={self.id}, type={self.type!r}, node={self.node.id})"


@dataclass(eq=False, slots=True)
class Node:
    """A blade: its processors share its memory capacity; its GPUs (if any) are its own."""

    id: int
    type: str
    cluster: Cluster
    memory_type: str
    memory_gb: float
    processors: list[Processor] = field(default_factory=list)
    gpus: list[Gpu] = field(default_factory=list)

    @property
    def memory_mb(self) -> float:
        """Capacity in MB (decimal, as job requests are: 1 GB = 1000 MB)."""
        return self.memory_gb * 1000.0

    @property
    def cores(self) -> list[Core]:
        return [core for proc in self.processors for core in proc.cores]

    def __repr__(self) -> str:
        return f"Node(id={self.id}, type={self.type!r}, processors={len(self.processors)})"


@dataclass(eq=False, slots=True)
class Cluster:
    """A set of nodes sharing local links."""

    index: int
    id: str
    nodes: list[Node] = field(default_factory=list)
    local_links: list[dict[str, str]] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"Cluster(id={self.id!r}, nodes={len(self.nodes)})"


@dataclass(eq=False, slots=True)
class Platform:
    """The whole hierarchy plus flat views (``nodes``, ``processors``, ``cores``) by id."""

    clusters: list[Cluster] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    processors: list[Processor] = field(default_factory=list)
    cores: list[Core] = field(default_factory=list)
    global_links: list[dict[str, str]] = field(default_factory=list)
    gpus: list[Gpu] = field(default_factory=list)
    #: Read-only views that readers derive from the platform, built by the first reader and
    #: shared by the next (an environment builds a core pool per episode), keyed by reader.
    #: A platform does not change once built.
    derived: Derived = field(default_factory=Derived, init=False, repr=False)

    @classmethod
    def from_clusters(
        cls, clusters: list[Cluster], global_links: list[dict[str, str]] | None = None
    ) -> Platform:
        """Assemble a platform from linked clusters, deriving the flat views in one pass.

        Ids must already follow file order (``nodes[i].id == i`` and likewise for processors
        and cores): the flat views are indexed by id everywhere downstream, so a gap or a
        reordering is a construction bug and raises ``ValueError``.
        """
        nodes = [node for cluster in clusters for node in cluster.nodes]
        processors = [proc for node in nodes for proc in node.processors]
        cores = [core for proc in processors for core in proc.cores]
        gpus = [gpu for node in nodes for gpu in node.gpus]
        levels: tuple[tuple[str, Sequence[Node | Processor | Core | Gpu]], ...] = (
            ("node", nodes),
            ("processor", processors),
            ("core", cores),
            ("gpu", gpus),
        )
        for kind, items in levels:
            for index, item in enumerate(items):
                if item.id != index:
                    raise ValueError(
                        f"{kind} ids must be 0..n-1 in order; found {item.id} at {index}"
                    )
        for index, cluster in enumerate(clusters):
            if cluster.index != index:
                raise ValueError(
                    f"cluster indexes must be 0..n-1; found {cluster.index} at {index}"
                )
        return cls(clusters, nodes, processors, cores, list(global_links or []), gpus)

    @property
    def reference_speed(self) -> float:
        """Mean peak speed per core in GFLOPS: converts trace seconds into flops.

        Sums use :func:`math.fsum` (exactly rounded), so the figure does not depend on core
        order and homogeneous platforms give exactly their per-core speed.
        """
        if not self.cores:
            return 0.0
        return self.peak_gflops / len(self.cores)

    @property
    def peak_gflops(self) -> float:
        """Sum of every core's peak speed, in GFLOPS."""
        return math.fsum(core.peak_gflops for core in self.cores)

    @property
    def peak_power(self) -> float:
        """Sum of every processor's power, in watts."""
        return math.fsum(proc.power for proc in self.processors)

    def summary(self) -> dict[str, float]:
        """Totals for printing: counts, peak GFLOPS, power, memory and reference speed (and
        the GPU totals, only for a platform that has GPUs)."""
        totals = {
            "clusters": len(self.clusters),
            "nodes": len(self.nodes),
            "processors": len(self.processors),
            "cores": len(self.cores),
            "peak_gflops": self.peak_gflops,
            "peak_power_w": self.peak_power,
            "memory_gb": math.fsum(node.memory_gb for node in self.nodes),
            "reference_speed_gflops": self.reference_speed,
        }
        if self.gpus:
            totals["gpus"] = len(self.gpus)
            totals["gpu_peak_gflops"] = math.fsum(gpu.gflops for gpu in self.gpus)
            totals["gpu_power_w"] = math.fsum(gpu.power for gpu in self.gpus)
        return totals
