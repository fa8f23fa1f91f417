"""The resource hierarchy as plain JSON (the original pickled it: never again).

The file is complete: loading it gives a :class:`Platform` identical to the one written (same
ids, names, types and figures), without needing the type library. Layout::

    {"format": "hdeeprm-hierarchy", "version": 1,
     "global_links": [{"type", "latency", "bandwidth"}],
     "clusters": [{"id", "local_links": [...],
                   "nodes": [{"id", "type", "memory_type", "memory_gb",
                              "processors": [{"id", "type", "kind", "uarch", "clock_rate",
                                              "dpflops_per_cycle", "mem_bw", "llc_size",
                                              "power", "cores": [{"id", "name"}]}],
                              "gpus": [{"id", "type", "gflops", "power", "memory_gb"}]}]}],
     "summary": {...totals, informational, ignored on load...}}

A node's ``"gpus"`` key is written only when it has GPUs, so the files of GPU-less platforms
are unchanged.
"""

from __future__ import annotations

import os
from typing import Any

from hdeeprm._atomic import write_json
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
)
from hdeeprm.platform.hierarchy import Cluster, Core, Gpu, Node, Platform, Processor

FORMAT = "hdeeprm-hierarchy"
VERSION = 1

_PROC_FIELDS = ("clock_rate", "dpflops_per_cycle", "mem_bw", "llc_size", "power")


def hierarchy_to_dict(platform: Platform) -> dict[str, Any]:
    """The JSON-ready form of ``platform``."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "global_links": [dict(link) for link in platform.global_links],
        "clusters": [
            {
                "id": cluster.id,
                "local_links": [dict(link) for link in cluster.local_links],
                "nodes": [
                    {
                        "id": node.id,
                        "type": node.type,
                        "memory_type": node.memory_type,
                        "memory_gb": node.memory_gb,
                        "processors": [
                            {
                                "id": proc.id,
                                "type": proc.type,
                                "kind": proc.kind,
                                "uarch": proc.uarch,
                                **{name: getattr(proc, name) for name in _PROC_FIELDS},
                                "cores": [{"id": c.id, "name": c.name} for c in proc.cores],
                            }
                            for proc in node.processors
                        ],
                        **_gpus_dict(node),
                    }
                    for node in cluster.nodes
                ],
            }
            for cluster in platform.clusters
        ],
        "summary": platform.summary(),
    }


def _gpus_dict(node: Node) -> dict[str, Any]:
    if not node.gpus:
        return {}
    return {
        "gpus": [
            {
                "id": g.id,
                "type": g.type,
                "gflops": g.gflops,
                "power": g.power,
                "memory_gb": g.memory_gb,
            }
            for g in node.gpus
        ]
    }


def write_hierarchy_json(platform: Platform, path: str | os.PathLike[str]) -> None:
    """Write the hierarchy of ``platform`` to ``path`` as JSON, atomically."""
    write_json(path, hierarchy_to_dict(platform), indent=1)


def load_hierarchy_json(path: str | os.PathLike[str]) -> Platform:
    """Read a file written by :func:`write_hierarchy_json` back into a :class:`Platform`."""
    return hierarchy_from_dict(load_json(path), path)


def hierarchy_from_dict(raw: Any, path: PathLike = None) -> Platform:
    """Rebuild a :class:`Platform` from :func:`hierarchy_to_dict` output, validating it."""
    expect_object(raw, path, "", ("format", "version", "clusters", "global_links"), ("summary",))
    if raw["format"] != FORMAT:
        raise InputError(f"expected {FORMAT!r}, got {raw['format']!r}", path, "format")
    if raw["version"] != VERSION:
        raise InputError(
            f"unsupported version {raw['version']!r}; expected {VERSION}", path, "version"
        )
    counters = {"node": 0, "processor": 0, "core": 0, "gpu": 0}

    def next_id(kind: str, value: Any, where: str) -> int:
        number = expect_int(value, path, where, minimum=0)
        if number != counters[kind]:
            raise InputError(f"expected {kind} id {counters[kind]} (ids in order)", path, where)
        counters[kind] += 1
        return number

    clusters: list[Cluster] = []
    for c_index, c_raw in enumerate(expect_list(raw["clusters"], path, "clusters")):
        c_where = child("clusters", c_index)
        expect_object(c_raw, path, c_where, ("id", "local_links", "nodes"))
        cluster = Cluster(
            index=c_index,
            id=expect_str(c_raw["id"], path, child(c_where, "id")),
            local_links=_links(c_raw["local_links"], path, child(c_where, "local_links")),
        )
        clusters.append(cluster)
        nodes_where = child(c_where, "nodes")
        for n_index, n_raw in enumerate(expect_list(c_raw["nodes"], path, nodes_where)):
            n_where = child(nodes_where, n_index)
            expect_object(
                n_raw,
                path,
                n_where,
                ("id", "type", "memory_type", "memory_gb", "processors"),
                ("gpus",),
            )
            node = Node(
                id=next_id("node", n_raw["id"], child(n_where, "id")),
                type=expect_str(n_raw["type"], path, child(n_where, "type")),
                cluster=cluster,
                memory_type=expect_str(n_raw["memory_type"], path, child(n_where, "memory_type")),
                memory_gb=expect_number(n_raw["memory_gb"], path, child(n_where, "memory_gb")),
            )
            cluster.nodes.append(node)
            procs_where = child(n_where, "processors")
            for p_index, p_raw in enumerate(expect_list(n_raw["processors"], path, procs_where)):
                p_where = child(procs_where, p_index)
                expect_object(
                    p_raw, path, p_where, ("id", "type", "kind", "uarch", "cores", *_PROC_FIELDS)
                )
                figures: dict[str, Any] = {  # the processor's numeric fields, by name
                    name: expect_number(
                        p_raw[name], path, child(p_where, name), positive=name != "llc_size"
                    )
                    for name in _PROC_FIELDS
                }
                uarch = p_raw["uarch"]
                if not isinstance(uarch, str):
                    raise InputError("expected a string", path, child(p_where, "uarch"))
                proc = Processor(
                    id=next_id("processor", p_raw["id"], child(p_where, "id")),
                    type=expect_str(p_raw["type"], path, child(p_where, "type")),
                    node=node,
                    kind=expect_str(p_raw["kind"], path, child(p_where, "kind")),
                    uarch=uarch,
                    **figures,
                )
                node.processors.append(proc)
                cores_where = child(p_where, "cores")
                for k_index, k_raw in enumerate(expect_list(p_raw["cores"], path, cores_where)):
                    k_where = child(cores_where, k_index)
                    expect_object(k_raw, path, k_where, ("id", "name"))
                    core_id = next_id("core", k_raw["id"], child(k_where, "id"))
                    name = expect_str(k_raw["name"], path, child(k_where, "name"))
                    proc.cores.append(Core(core_id, name, proc))
            gpus_where = child(n_where, "gpus")
            for g_index, g_raw in enumerate(
                expect_list(n_raw.get("gpus", []), path, gpus_where, allow_empty=True)
            ):
                g_where = child(gpus_where, g_index)
                expect_object(g_raw, path, g_where, ("id", "type", "gflops", "power", "memory_gb"))
                node.gpus.append(
                    Gpu(
                        id=next_id("gpu", g_raw["id"], child(g_where, "id")),
                        type=expect_str(g_raw["type"], path, child(g_where, "type")),
                        node=node,
                        gflops=expect_number(g_raw["gflops"], path, child(g_where, "gflops")),
                        power=expect_number(g_raw["power"], path, child(g_where, "power")),
                        memory_gb=expect_number(
                            g_raw["memory_gb"], path, child(g_where, "memory_gb"), positive=False
                        ),
                    )
                )
    global_links = _links(raw["global_links"], path, "global_links")
    return Platform.from_clusters(clusters, global_links)


def _links(raw: Any, path: PathLike, where: str) -> list[dict[str, str]]:
    links = []
    for i, item in enumerate(expect_list(raw, path, where)):
        l_where = child(where, i)
        expect_object(item, path, l_where, ("type", "latency", "bandwidth"))
        expect_str(item["type"], path, child(l_where, "type"))
        parse_latency(item["latency"], path, child(l_where, "latency"))
        parse_bandwidth(item["bandwidth"], path, child(l_where, "bandwidth"))
        links.append(
            {"type": item["type"], "latency": item["latency"], "bandwidth": item["bandwidth"]}
        )
    return links
