"""platform.xml and the hierarchy JSON: parsed back and checked against hand-computed values."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from hdeeprm.errors import InputError
from hdeeprm.platform import (
    hierarchy_to_dict,
    load_hierarchy_json,
    load_platform,
    platform_from_json,
    platform_xml,
    write_hierarchy_json,
    write_platform_xml,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "platform_examples"

TWO_CLUSTERS = {
    "types": {
        "processor": {
            "Tiny": {
                "type": "CPU",
                "cores": 2,
                "clock_rate": 1.5,
                "mem_bw": 10,
                "llc_size": 1,
                "power": 30,
                "dpflops_per_cycle": 2,
            }
        },
        "node": {
            "TinyNode": {
                "processors": [{"type": "Tiny", "number": 3}],
                "memory": {"type": "DDR3-1600", "capacity": 16},
            }
        },
    },
    "clusters": [
        {
            "id": "a",
            "nodes": [{"type": "TinyNode", "number": 1}],
            "local_links": [{"type": "InfiniBand QDR", "latency": "2us"}],
        },
        {
            "id": "b",
            "nodes": [{"type": "TinyNode", "number": 1}, {"type": "Learning node", "number": 1}],
            "local_links": [{"type": "Gigabit Ethernet 1000BASE-T", "latency": "75us"}],
        },
    ],
    "global_links": [{"type": "10 Gigabit Ethernet", "latency": "1ms"}],
}


@pytest.fixture(scope="module")
def gaia():
    return load_platform(EXAMPLES / "gaia.json")


@pytest.fixture(scope="module")
def gaia_xml(gaia, tmp_path_factory) -> tuple[str, ET.Element]:
    path = tmp_path_factory.mktemp("xml") / "platform.xml"
    write_platform_xml(gaia, path)
    text = path.read_text()
    return text, ET.fromstring(text)


def hosts_by_id(root: ET.Element) -> dict[str, ET.Element]:
    return {h.get("id"): h for h in root.iter("host")}


def props(host: ET.Element) -> dict[str, str]:
    return {p.get("id"): p.get("value") for p in host.findall("prop")}


def test_xml_header(gaia_xml) -> None:
    text, root = gaia_xml
    lines = text.splitlines()
    assert lines[0] == '<?xml version="1.0" encoding="utf-8"?>'
    assert lines[1] == '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">'
    assert root.tag == "platform" and root.get("version") == "4.1"
    assert lines[3].startswith("  <zone")  # pretty-printed


def test_xml_hosts(gaia_xml) -> None:
    _, root = gaia_xml
    hosts = hosts_by_id(root)
    assert len(hosts) == 2280 + 1  # one per core + master_host
    assert props(hosts["master_host"]) == {"wattage_per_state": "0.0:0.0", "wattage_off": "0.0"}
    names = [h.get("id") for h in root.iter("host") if h.get("id") != "master_host"]
    assert names[0] == "cor_0000" and names[-1] == "cor_2279" and sorted(names) == names
    assert all(h.get("pstate") == "3" for h in hosts.values() if h.get("id") != "master_host")


def test_xml_known_cores(gaia_xml) -> None:
    _, root = gaia_xml
    hosts = hosts_by_id(root)
    # Core 0, Xeon L5640: P0 9.04, P1 0.75 x 9.04 = 6.78 GFLOPS; 45 W / 6 = 7.5 W per core,
    # P2 25% = 1.875 W, P3 5% = 0.375 W.
    assert hosts["cor_0000"].get("speed") == "9.04Gf, 6.78Gf, 1e-06Gf, 1e-06Gf"
    assert props(hosts["cor_0000"]) == {
        "wattage_per_state": "7.5:7.5, 7.5:7.5, 1.875:1.875, 0.375:0.375",
        "wattage_off": "0.0",
        "cluster_id": "0",
        "node_id": "0",
        "processor_id": "0",
    }
    # Core 1136, first X5670 (node 79, processor 174): 11.72 / 8.79 GFLOPS;
    # 71.25 / 6 = 11.875 W; 25% = 2.96875 W; 5% = 0.59375 W.
    core = hosts["cor_1136"]
    assert core.get("speed") == "11.72Gf, 8.79Gf, 1e-06Gf, 1e-06Gf"
    p = props(core)
    assert (
        p["wattage_per_state"] == "11.875:11.875, 11.875:11.875, 2.96875:2.96875, 0.59375:0.59375"
    )
    assert (p["node_id"], p["processor_id"]) == ("79", "174")
    # Core 2279, E5-4650 v2: 2.4 x 8 = 19.2 / 14.4 GFLOPS; 71.25 / 10 = 7.125 W.
    core = hosts["cor_2279"]
    assert core.get("speed") == "19.2Gf, 14.4Gf, 1e-06Gf, 1e-06Gf"
    assert props(core)["wattage_per_state"].startswith("7.125:7.125, 7.125:7.125, 1.78125:")


def test_xml_network(gaia_xml) -> None:
    _, root = gaia_xml
    main = root.find("zone")
    assert (main.get("id"), main.get("routing")) == ("main", "Full")
    zones = main.findall("zone")
    assert [z.get("id") for z in zones] == ["master", "clu_0"]
    # Not routing="None": SimGrid aborts on a zoneRoute whose gateway is in an Empty zone.
    assert zones[0].get("routing") == "Full"
    cluster = zones[1]
    assert cluster.find("router").get("id") == "rou_0"
    assert props(cluster) == {"cluster_name": "gaia"}
    links = cluster.findall("link")
    assert len(links) == 153  # one up/down link per node
    assert links[0].attrib == {
        "id": "udl_0",
        "bandwidth": "32Gbps",
        "latency": "0s",
        "sharing_policy": "SPLITDUPLEX",
    }
    assert props(links[0]) == {"documented_latency": "1.5us"}
    routes = cluster.findall("route")
    assert len(routes) == 2 * 2280  # router -> core (DOWN) and core -> router (UP)
    # Core 1136 is on node 79: its routes go through udl_79.
    down = [r for r in routes if r.get("dst") == "cor_1136"]
    assert len(down) == 1 and down[0].get("src") == "rou_0"
    assert down[0].find("link_ctn").attrib == {"id": "udl_79", "direction": "DOWN"}
    glob = main.findall("link")
    assert [g.get("id") for g in glob] == ["glob_0"] and glob[0].get("bandwidth") == "1Gbps"
    zroutes = main.findall("zoneRoute")
    assert [(z.get("src"), z.get("dst")) for z in zroutes] == [
        ("master", "clu_0"),
        ("clu_0", "master"),
    ]
    assert zroutes[0].get("gw_src") == "master_host" and zroutes[0].get("gw_dst") == "rou_0"
    # DTD order inside a leaf zone: router/links/hosts first, then routes.
    tags = [child.tag for child in cluster]
    assert tags.index("route") > max(i for i, t in enumerate(tags) if t == "host")


def test_two_clusters_ids_and_xml(tmp_path: Path) -> None:
    p = platform_from_json(TWO_CLUSTERS)
    # cluster a: 1 node x 3 processors x 2 cores = 6; cluster b: 6 + 4 (learning node) = 10
    assert len(p.cores) == 16 and [len(c.nodes) for c in p.clusters] == [1, 2]
    assert [c.name for c in p.cores][:2] == ["cor_00", "cor_01"]  # width of "15"
    assert p.clusters[1].nodes[0].id == 1 and p.clusters[1].nodes[0].processors[0].id == 3
    assert p.clusters[1].nodes[0].processors[0].cores[0].id == 6
    # Tiny: 1.5 x 2 = 3 GFLOPS, 30 W / 2 = 15 W
    assert (p.cores[0].peak_gflops, p.cores[0].power) == (3.0, 15.0)
    path = tmp_path / "two.xml"
    write_platform_xml(p, path)
    root = ET.parse(path).getroot()
    main = root.find("zone")
    assert [z.get("id") for z in main.findall("zone")] == ["master", "clu_0", "clu_1"]
    assert len(main.findall("zoneRoute")) == 4
    # Latency 0 on the wire (Batsim's completion messages, see simgrid.py); documented kept.
    assert [g.get("latency") for g in main.findall("link")] == ["0s", "0s"]
    assert [g.find("prop").attrib for g in main.findall("link")] == [
        {"id": "documented_latency", "value": "1ms"}
    ] * 2
    clu1 = main.findall("zone")[2]
    assert {h.get("id") for h in clu1.iter("host")} == {f"cor_{i:02d}" for i in range(6, 16)}
    assert len(clu1.findall("route")) == 20
    assert clu1.find("link").get("latency") == "0s"
    assert clu1.find("link").find("prop").get("value") == "75us"
    assert hosts_by_id(root)["cor_06"].get("speed") == "3.0Gf, 2.25Gf, 1e-06Gf, 1e-06Gf"


def test_hierarchy_json_round_trip(gaia, tmp_path: Path) -> None:
    for platform in (gaia, platform_from_json(TWO_CLUSTERS)):
        path = tmp_path / "h.json"
        write_hierarchy_json(platform, path)
        loaded = load_hierarchy_json(path)
        assert hierarchy_to_dict(loaded) == hierarchy_to_dict(platform)
        assert loaded.summary() == platform.summary()
        assert [(c.id, c.name, c.processor.id, c.node.id) for c in loaded.cores] == [
            (c.id, c.name, c.processor.id, c.node.id) for c in platform.cores
        ]
        assert not list(tmp_path.glob(".tmp-*"))  # atomic: no leftovers
    assert loaded.clusters[1].local_links[0]["bandwidth"] == "1Gbps"


def test_hierarchy_json_is_validated(gaia, tmp_path: Path) -> None:
    data = hierarchy_to_dict(gaia)
    data["clusters"][0]["nodes"][1]["processors"][0]["cores"][0]["id"] = 99
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as info:
        load_hierarchy_json(path)
    # node 1's first core is core 12 (node 0 has 2 x 6 cores)
    assert info.value.where == "clusters[0].nodes[1].processors[0].cores[0].id"
    assert "expected core id 12" in info.value.message
    data = hierarchy_to_dict(gaia)
    data["format"] = "pickle"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="hdeeprm-hierarchy"):
        load_hierarchy_json(path)
    data = hierarchy_to_dict(gaia)
    del data["clusters"][0]["nodes"][0]["processors"][0]["power"]
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="missing required key 'power'"):
        load_hierarchy_json(path)


def test_writers_are_atomic(gaia, tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "platform.xml"
    path.write_text("old")

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        write_platform_xml(gaia, path)
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["platform.xml"]


def test_writer_rejects_hand_built_platforms_it_cannot_write() -> None:
    p = platform_from_json(TWO_CLUSTERS)
    p.cores[5].name = "cor_5"  # sorts after cor_06: Batsim would number the hosts differently
    with pytest.raises(ValueError, match="sort in id order"):
        platform_xml(p)
    p = platform_from_json(TWO_CLUSTERS)
    p.clusters[1].local_links.clear()
    with pytest.raises(ValueError, match="cluster 'b' has no local link"):
        platform_xml(p)
