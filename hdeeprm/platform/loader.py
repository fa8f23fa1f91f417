"""User platform files (JSON) to the resource hierarchy.

Format (SPEC section 2, thesis appendix B.2)::

    {"types": {...optional inline types, see hdeeprm.platform.library...},
     "clusters": [{"id": "gaia",
                   "nodes": [{"type": "Bullx B500 (0)", "number": 60}, ...],
                   "local_links": [{"type": "InfiniBand QDR", "latency": "1.5us"}]}],
     "global_links": [{"type": "Gigabit Ethernet", "latency": "125us"}]}

``local_links`` and ``global_links`` may also be a single object (as the original HDeepRM
files had). Ids are assigned in file order: cluster by cluster, node by node, processor by
processor, core by core, so ``platform.cores[i].id == i``.
"""

from __future__ import annotations

import os
from typing import Any

from hdeeprm._gc import gc_paused
from hdeeprm.errors import InputError
from hdeeprm.platform._validate import (
    PathLike,
    child,
    expect_int,
    expect_list,
    expect_object,
    expect_str,
    load_json,
    parse_latency,
)
from hdeeprm.platform.hierarchy import Cluster, Core, Gpu, Node, Platform, Processor
from hdeeprm.platform.library import NodeType, TypeLibrary

#: Most cores (Batsim hosts: one per core), nodes and GPUs a platform may describe. The
#: hierarchy alone takes about 220 B and 12 us per core to build (a 16,000-core Gaia copy), and
#: every run keeps more per host (``platform.xml``, the simulator's hosts), so ten million
#: cores already need minutes and gigabytes; a platform beyond that is refused from its node
#: counts before anything is built.
MAX_PLATFORM_CORES = 10_000_000

#: Prefix of core host names in ``platform.xml``; the id follows, zero-padded.
CORE_PREFIX = "cor_"


def core_name(core_id: int, width: int) -> str:
    """Host name of a core: ``cor_`` + id zero-padded to ``width`` (name order = id order)."""
    return f"{CORE_PREFIX}{core_id:0{width}d}"


def core_name_width(n_cores: int) -> int:
    """Digits of the largest core id (``cor_0000`` ... ``cor_2279`` for 2,280 cores)."""
    return len(str(max(n_cores - 1, 0)))


def load_platform(path: str | os.PathLike[str], *, library: TypeLibrary | None = None) -> Platform:
    """Load and validate a user platform file into a :class:`Platform`.

    Args:
        path: the platform JSON file.
        library: the type library to resolve names against; the shipped one by default. A
            ``"types"`` key in the file is overlaid on it.

    Raises:
        InputError: naming the file, the JSON path and what was expected.
    """
    return platform_from_json(load_json(path), path, library=library)


def platform_from_json(
    raw: Any, path: PathLike = None, *, library: TypeLibrary | None = None
) -> Platform:
    """Build a :class:`Platform` from an already parsed platform description.

    ``path`` only labels error messages (use it when ``raw`` came from a file).
    """
    # No cyclic collection while the nodes, processors and cores become objects: they refer to
    # each other (a core to its processor...) but all stay alive, so there is nothing to free;
    # on a 371,443-node platform, full collections took 0.92 of 1.96 s CPU (1.56 s paused).
    with gc_paused():
        return _platform_from_json(raw, path, library)


def _platform_from_json(raw: Any, path: PathLike, library: TypeLibrary | None) -> Platform:
    """:func:`platform_from_json` with the collector paused."""
    expect_object(raw, path, "", ("clusters", "global_links"), ("types",))
    lib = library if library is not None else TypeLibrary.shipped()
    if "types" in raw:
        lib = lib.extended(raw["types"], path, "types")

    # Pass 1: validate everything and count cores (the host-name width needs the total).
    cluster_specs: list[tuple[str, list[tuple[NodeType, int]], list[dict[str, str]]]] = []
    seen_ids: dict[str, int] = {}
    total_cores = total_nodes = total_gpus = 0
    for c_index, c_raw in enumerate(expect_list(raw["clusters"], path, "clusters")):
        c_where = child("clusters", c_index)
        expect_object(c_raw, path, c_where, ("id", "nodes", "local_links"))
        c_id = expect_str(c_raw["id"], path, child(c_where, "id"))
        if c_id in seen_ids:
            raise InputError(
                f"duplicate cluster id {c_id!r} (also clusters[{seen_ids[c_id]}].id)",
                path,
                child(c_where, "id"),
            )
        seen_ids[c_id] = c_index
        node_specs: list[tuple[NodeType, int]] = []
        nodes_where = child(c_where, "nodes")
        for n_index, n_raw in enumerate(expect_list(c_raw["nodes"], path, nodes_where)):
            n_where = child(nodes_where, n_index)
            expect_object(n_raw, path, n_where, ("type", "number"))
            node_type = lib.node(n_raw["type"], path, child(n_where, "type"))
            number = expect_int(n_raw["number"], path, child(n_where, "number"))
            node_specs.append((node_type, number))
            cores_per_node = sum(
                lib.processors[p_name].cores * p_number for p_name, p_number in node_type.processors
            )
            total_cores += number * cores_per_node
            total_nodes += number
            total_gpus += number * sum(g_number for _, g_number in node_type.gpus)
            if max(total_cores, total_nodes, total_gpus) > MAX_PLATFORM_CORES:
                _too_large(total_nodes, total_cores, total_gpus, path, child(n_where, "number"))
        links = _links(c_raw["local_links"], path, child(c_where, "local_links"), lib)
        cluster_specs.append((c_id, node_specs, links))
    global_links = _links(raw["global_links"], path, "global_links", lib)

    # Pass 2: build the hierarchy with ids in file order.
    width = core_name_width(total_cores)
    clusters: list[Cluster] = []
    node_id = proc_id = core_id = gpu_id = 0
    for c_index, (c_id, node_specs, links) in enumerate(cluster_specs):
        cluster = Cluster(index=c_index, id=c_id, local_links=links)
        clusters.append(cluster)
        for node_type, number in node_specs:
            for _ in range(number):
                node = Node(
                    id=node_id,
                    type=node_type.name,
                    cluster=cluster,
                    memory_type=node_type.memory_type,
                    memory_gb=node_type.memory_capacity,
                )
                node_id += 1
                cluster.nodes.append(node)
                for p_name, p_number in node_type.processors:
                    ptype = lib.processors[p_name]
                    for _ in range(p_number):
                        proc = Processor(
                            id=proc_id,
                            type=p_name,
                            node=node,
                            kind=ptype.kind,
                            uarch=ptype.uarch,
                            clock_rate=ptype.clock_rate,
                            dpflops_per_cycle=ptype.dpflops_per_cycle,
                            mem_bw=ptype.mem_bw,
                            llc_size=ptype.llc_size,
                            power=ptype.power,
                        )
                        proc_id += 1
                        node.processors.append(proc)
                        proc.cores = [
                            Core(i, core_name(i, width), proc)
                            for i in range(core_id, core_id + ptype.cores)
                        ]
                        core_id += ptype.cores
                for g_name, g_number in node_type.gpus:
                    gtype = lib.gpus[g_name]
                    for _ in range(g_number):
                        node.gpus.append(
                            Gpu(gpu_id, g_name, node, gtype.gflops, gtype.power, gtype.memory)
                        )
                        gpu_id += 1
    return Platform.from_clusters(clusters, global_links)


def _too_large(nodes: int, cores: int, gpus: int, path: PathLike, where: str) -> None:
    """Refuse a platform over :data:`MAX_PLATFORM_CORES` (counted up to the entry ``where``)."""
    with_gpus = f" and {gpus:,} GPUs" if gpus else ""
    raise InputError(
        f"up to this entry the platform has {nodes:,} nodes, {cores:,} cores{with_gpus}, more "
        f"than the {MAX_PLATFORM_CORES:,} of each a run can hold (one simulated host per "
        "core); lower the node numbers",
        path,
        where,
    )


def _links(raw: Any, path: PathLike, where: str, lib: TypeLibrary) -> list[dict[str, str]]:
    """Validate a link list (or a single link object) into ``{type, latency, bandwidth}``."""
    if isinstance(raw, dict):
        items = [(where, raw)]
    else:
        items = [(child(where, i), item) for i, item in enumerate(expect_list(raw, path, where))]
    links = []
    for l_where, item in items:
        expect_object(item, path, l_where, ("type", "latency"))
        network = lib.network(item["type"], path, child(l_where, "type"))
        parse_latency(item["latency"], path, child(l_where, "latency"))
        links.append(
            {"type": network.name, "latency": item["latency"], "bandwidth": network.bandwidth}
        )
    return links
