"""The type library: node, processor, memory and network types a platform file refers to.

The shipped library lives in ``hdeeprm/data/*_types.json``. A platform file may add or replace
types inline under a top-level ``"types"`` key::

    {"types": {"processor": {"My CPU": {...}}, "node": {"My node": {...}}},
     "clusters": [...], "global_links": [...]}

An inline entry replaces a shipped entry of the same name *entirely* (no field-wise merge), so
every entry is validated as a whole and a missing field is reported with its path.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Any

from hdeeprm.errors import InputError
from hdeeprm.platform._validate import (
    PathLike,
    child,
    expect_int,
    expect_list,
    expect_number,
    expect_object,
    expect_str,
    load_json,
    parse_bandwidth,
    parse_latency,
    type_name,
    unknown_name,
)

#: Library categories, the file that ships each one, and the ``types`` key that extends it.
CATEGORIES: tuple[str, ...] = ("node", "processor", "memory", "network", "gpu")
#: Device kinds a processor type may declare (all are modelled alike: peak flops and bandwidth).
PROCESSOR_KINDS: tuple[str, ...] = ("CPU", "GPU", "MIC", "FPGA")


@dataclass(frozen=True, slots=True)
class ProcessorType:
    """A socket model: ``cores`` cores at ``clock_rate`` GHz x ``dpflops_per_cycle``."""

    name: str
    id: str
    uarch: str
    kind: str
    cores: int
    clock_rate: float  # GHz
    mem_bw: float  # GB/s
    llc_size: float  # MB
    power: float  # W, sustained (0.75 x TDP in the shipped library)
    dpflops_per_cycle: float

    @property
    def gflops_per_core(self) -> float:
        return self.clock_rate * self.dpflops_per_cycle


@dataclass(frozen=True, slots=True)
class GpuType:
    """An accelerator model: allocated whole to one job, outside the Batsim cores."""

    name: str
    id: str
    gflops: float  # peak double-precision GFLOPS of the whole device
    power: float  # W, sustained
    memory: float  # GB of device memory (informational)


@dataclass(frozen=True, slots=True)
class NodeType:
    """A blade: its processors (type name, count), its memory (type name, GB) and its GPUs
    (type name, count; none on every shipped CPU node)."""

    name: str
    id: str
    processors: tuple[tuple[str, int], ...]
    memory_type: str
    memory_capacity: float  # GB
    gpus: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class MemoryType:
    """A memory technology; ``latency`` is kept as written (informational for now)."""

    name: str
    latency: str
    latency_s: float


@dataclass(frozen=True, slots=True)
class NetworkType:
    """A network technology; ``bandwidth`` per link and direction, as written for SimGrid."""

    name: str
    bandwidth: str
    bandwidth_Bps: float


_PROCESSOR_REQUIRED: tuple[str, ...] = (
    "type",
    "cores",
    "clock_rate",
    "mem_bw",
    "llc_size",
    "power",
)
_PROCESSOR_REQUIRED += ("dpflops_per_cycle",)


def _processor(name: str, raw: Any, path: PathLike, where: str) -> ProcessorType:
    expect_object(raw, path, where, _PROCESSOR_REQUIRED, ("uarch", "id"))
    kind = expect_str(raw["type"], path, child(where, "type"))
    if kind not in PROCESSOR_KINDS:
        raise InputError(
            f"unknown device type {kind!r}; expected one of {', '.join(PROCESSOR_KINDS)}",
            path,
            child(where, "type"),
        )
    return ProcessorType(
        name=name,
        id=expect_str(raw.get("id", name), path, child(where, "id")),
        uarch=expect_str(raw["uarch"], path, child(where, "uarch")) if "uarch" in raw else "",
        kind=kind,
        cores=expect_int(raw["cores"], path, child(where, "cores")),
        clock_rate=expect_number(raw["clock_rate"], path, child(where, "clock_rate")),
        mem_bw=expect_number(raw["mem_bw"], path, child(where, "mem_bw")),
        llc_size=expect_number(raw["llc_size"], path, child(where, "llc_size"), positive=False),
        power=expect_number(raw["power"], path, child(where, "power")),
        dpflops_per_cycle=expect_number(
            raw["dpflops_per_cycle"], path, child(where, "dpflops_per_cycle")
        ),
    )


def _gpu(name: str, raw: Any, path: PathLike, where: str) -> GpuType:
    expect_object(raw, path, where, ("gflops", "power"), ("memory", "id"))
    memory = 0.0
    if "memory" in raw:
        memory = expect_number(raw["memory"], path, child(where, "memory"), positive=False)
    return GpuType(
        name=name,
        id=expect_str(raw.get("id", name), path, child(where, "id")),
        gflops=expect_number(raw["gflops"], path, child(where, "gflops")),
        power=expect_number(raw["power"], path, child(where, "power")),
        memory=memory,
    )


def _node_gpus(raw: Any, path: PathLike, where: str) -> tuple[tuple[str, int], ...]:
    """A node's ``gpus``: a list of ``{type, number}`` (or one such object)."""
    entries = [raw] if isinstance(raw, dict) else expect_list(raw, path, where, allow_empty=True)
    gpus = []
    for i, entry in enumerate(entries):
        entry_where = where if isinstance(raw, dict) else child(where, i)
        expect_object(entry, path, entry_where, ("type", "number"))
        gpus.append(
            (
                expect_str(entry["type"], path, child(entry_where, "type")),
                expect_int(entry["number"], path, child(entry_where, "number")),
            )
        )
    return tuple(gpus)


def _node(name: str, raw: Any, path: PathLike, where: str) -> NodeType:
    expect_object(raw, path, where, ("processors", "memory"), ("id", "gpus"))
    procs_where = child(where, "processors")
    processors = []
    for i, entry in enumerate(expect_list(raw["processors"], path, procs_where)):
        entry_where = child(procs_where, i)
        expect_object(entry, path, entry_where, ("type", "number"))
        processors.append(
            (
                expect_str(entry["type"], path, child(entry_where, "type")),
                expect_int(entry["number"], path, child(entry_where, "number")),
            )
        )
    mem_where = child(where, "memory")
    memory = expect_object(raw["memory"], path, mem_where, ("type", "capacity"))
    return NodeType(
        name=name,
        id=expect_str(raw.get("id", name), path, child(where, "id")),
        processors=tuple(processors),
        memory_type=expect_str(memory["type"], path, child(mem_where, "type")),
        memory_capacity=expect_number(memory["capacity"], path, child(mem_where, "capacity")),
        gpus=_node_gpus(raw["gpus"], path, child(where, "gpus")) if "gpus" in raw else (),
    )


def _memory(name: str, raw: Any, path: PathLike, where: str) -> MemoryType:
    expect_object(raw, path, where, ("latency",))
    latency_where = child(where, "latency")
    return MemoryType(name, raw["latency"], parse_latency(raw["latency"], path, latency_where))


def _network(name: str, raw: Any, path: PathLike, where: str) -> NetworkType:
    expect_object(raw, path, where, ("bandwidth",))
    bw_where = child(where, "bandwidth")
    return NetworkType(name, raw["bandwidth"], parse_bandwidth(raw["bandwidth"], path, bw_where))


_PARSERS = {
    "node": _node,
    "processor": _processor,
    "memory": _memory,
    "network": _network,
    "gpu": _gpu,
}


def _parse_category(category: str, raw: Any, path: PathLike, where: str) -> dict[str, Any]:
    """Validate one category's ``{name: entry}`` object; ``_``-prefixed keys are comments."""
    if not isinstance(raw, dict):
        raise InputError(
            f"expected an object of {category} types, got {type_name(raw)}", path, where
        )
    parser = _PARSERS[category]
    entries: dict[str, Any] = {}
    for name, entry in raw.items():
        if name.startswith("_"):
            continue
        if not name.strip():
            raise InputError("type names must be non-empty", path, child(where, name))
        entries[name] = parser(name, entry, path, child(where, name))
    return entries


class TypeLibrary:
    """Validated node, processor, memory, network and GPU types, cross references checked.

    Use :meth:`shipped` for the library in ``hdeeprm/data`` and :meth:`extended` to overlay a
    platform file's inline ``"types"``. Instances are immutable.
    """

    __slots__ = ("nodes", "processors", "memories", "networks", "gpus", "_sources")

    def __init__(
        self,
        nodes: Mapping[str, NodeType],
        processors: Mapping[str, ProcessorType],
        memories: Mapping[str, MemoryType],
        networks: Mapping[str, NetworkType],
        sources: Mapping[tuple[str, str], tuple[PathLike, str]] | None = None,
        gpus: Mapping[str, GpuType] | None = None,
    ) -> None:
        self.nodes: Mapping[str, NodeType] = MappingProxyType(dict(nodes))
        self.processors: Mapping[str, ProcessorType] = MappingProxyType(dict(processors))
        self.memories: Mapping[str, MemoryType] = MappingProxyType(dict(memories))
        self.networks: Mapping[str, NetworkType] = MappingProxyType(dict(networks))
        self.gpus: Mapping[str, GpuType] = MappingProxyType(dict(gpus or {}))
        # (category, name) -> (file, JSON path) where the entry was defined, for messages.
        self._sources = dict(sources or {})
        self._check_references(self.nodes)

    def __repr__(self) -> str:
        return (
            f"TypeLibrary(nodes={len(self.nodes)}, processors={len(self.processors)}, "
            f"memories={len(self.memories)}, networks={len(self.networks)}, "
            f"gpus={len(self.gpus)})"
        )

    # --- construction ---------------------------------------------------------------------
    @classmethod
    def shipped(cls) -> TypeLibrary:
        """The library shipped in ``hdeeprm/data`` (validated once, then cached)."""
        return _shipped_library()

    @classmethod
    def from_files(
        cls,
        node: str | os.PathLike[str],
        processor: str | os.PathLike[str],
        memory: str | os.PathLike[str],
        network: str | os.PathLike[str],
        gpu: str | os.PathLike[str] | None = None,
    ) -> TypeLibrary:
        """Load a library from the type files (same format as the shipped ones); the GPU file
        is optional (no GPU types without it)."""
        files = {"node": node, "processor": processor, "memory": memory, "network": network}
        if gpu is not None:
            files["gpu"] = gpu
        parsed: dict[str, dict[str, Any]] = {}
        sources: dict[tuple[str, str], tuple[PathLike, str]] = {}
        for category, file in files.items():
            parsed[category] = _parse_category(category, load_json(file), file, "")
            for name in parsed[category]:
                sources[(category, name)] = (os.fspath(file), child("", name))
        return cls(
            parsed["node"],
            parsed["processor"],
            parsed["memory"],
            parsed["network"],
            sources,
            parsed.get("gpu"),
        )

    def extended(self, raw_types: Any, path: PathLike = None, where: str = "types") -> TypeLibrary:
        """A new library with ``raw_types`` (a platform file's ``"types"`` object) overlaid."""
        expect_object(raw_types, path, where, optional=CATEGORIES)
        merged: dict[str, dict[str, Any]] = {
            "node": dict(self.nodes),
            "processor": dict(self.processors),
            "memory": dict(self.memories),
            "network": dict(self.networks),
            "gpu": dict(self.gpus),
        }
        sources = dict(self._sources)
        for category in CATEGORIES:
            if category not in raw_types:
                continue
            cat_where = child(where, category)
            entries = _parse_category(category, raw_types[category], path, cat_where)
            merged[category].update(entries)
            for name in entries:
                sources[(category, name)] = (path, child(cat_where, name))
        return TypeLibrary(
            merged["node"],
            merged["processor"],
            merged["memory"],
            merged["network"],
            sources,
            merged["gpu"],
        )

    # --- look-ups -------------------------------------------------------------------------
    def node(self, name: Any, path: PathLike, where: str) -> NodeType:
        """The node type ``name``; an unknown name is reported at ``path``/``where``."""
        name = expect_str(name, path, where)
        if name not in self.nodes:
            unknown_name("node", name, self.nodes, path, where)
        return self.nodes[name]

    def network(self, name: Any, path: PathLike, where: str) -> NetworkType:
        """The network type ``name``; an unknown name is reported at ``path``/``where``."""
        name = expect_str(name, path, where)
        if name not in self.networks:
            unknown_name("network", name, self.networks, path, where)
        return self.networks[name]

    def _check_references(self, nodes: Mapping[str, NodeType]) -> None:
        """Every node type must name known processor and memory types."""
        for name, node in nodes.items():
            path, where = self._sources.get(("node", name), (None, child("", name)))
            for i, (proc_name, _number) in enumerate(node.processors):
                if proc_name not in self.processors:
                    proc_where = child(child(child(where, "processors"), i), "type")
                    unknown_name("processor", proc_name, self.processors, path, proc_where)
            if node.memory_type not in self.memories:
                mem_where = child(child(where, "memory"), "type")
                unknown_name("memory", node.memory_type, self.memories, path, mem_where)
            for i, (gpu_name, _number) in enumerate(node.gpus):
                if gpu_name not in self.gpus:
                    gpu_where = child(child(child(where, "gpus"), i), "type")
                    unknown_name("GPU", gpu_name, self.gpus, path, gpu_where)


def shipped_type_file(category: str) -> str:
    """Path of the shipped type file of ``category`` (``node``, ``processor``, ...)."""
    if category not in CATEGORIES:
        raise ValueError(f"unknown category {category!r}; expected one of {CATEGORIES}")
    # The package is a directory on disk, so its files are pathlib.Path (a Traversable is not
    # always path-like, hence the checker's complaint).
    path = resources.files("hdeeprm.data").joinpath(f"{category}_types.json")
    return os.fspath(path)  # type: ignore[call-overload]


@functools.lru_cache(maxsize=1)
def _shipped_library() -> TypeLibrary:
    return TypeLibrary.from_files(
        shipped_type_file("node"),
        shipped_type_file("processor"),
        shipped_type_file("memory"),
        shipped_type_file("network"),
        shipped_type_file("gpu"),
    )
