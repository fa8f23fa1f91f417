"""Bad platform and type files are rejected with the file, the JSON path and the expectation."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from hdeeprm.errors import InputError
from hdeeprm.platform import load_platform, platform_from_json
from hdeeprm.platform._validate import parse_bandwidth, parse_latency

BASE: dict[str, Any] = {
    "clusters": [
        {
            "id": "c0",
            "nodes": [
                {"type": "Bullx B500 (0)", "number": 2},
                {"type": "Dell R720", "number": 1},
                {"type": "Learning node", "number": 1},
            ],
            "local_links": [{"type": "InfiniBand QDR", "latency": "1.5us"}],
        }
    ],
    "global_links": [{"type": "Gigabit Ethernet 1000BASE-T", "latency": "125us"}],
}

MY_CPU = {
    "type": "CPU",
    "cores": 3,
    "clock_rate": 2.0,
    "mem_bw": 20,
    "llc_size": 4,
    "power": 60,
    "dpflops_per_cycle": 8,
}


def spec(**changes: Any) -> dict[str, Any]:
    raw = copy.deepcopy(BASE)
    raw.update(changes)
    return raw


def error(raw: Any) -> InputError:
    with pytest.raises(InputError) as info:
        platform_from_json(raw, "plat.json")
    assert info.value.path == "plat.json"
    return info.value


def test_base_is_valid() -> None:
    # 2 x 12 (B500) + 16 (R720: 2 x 8) + 4 (learning node) = 44 cores
    assert len(platform_from_json(spec()).cores) == 44


def test_unknown_node_type_names_path_and_closest() -> None:
    raw = spec()
    raw["clusters"][0]["nodes"][2]["type"] = "Dell R730"
    err = error(raw)
    assert err.where == "clusters[0].nodes[2].type"
    assert "unknown node type 'Dell R730'" in err.message
    assert "'Dell R720'" in err.message  # closest match listed


def test_unknown_network_type() -> None:
    raw = spec(global_links=[{"type": "Token Ring", "latency": "1ms"}])
    err = error(raw)
    assert err.where == "global_links[0].type"
    assert "known network types" in err.message and "InfiniBand QDR" in err.message


def test_missing_field() -> None:
    raw = spec()
    del raw["clusters"][0]["local_links"]
    err = error(raw)
    assert err.where == "clusters[0]" and "missing required key 'local_links'" in err.message
    err = error({"clusters": BASE["clusters"]})
    assert err.where == "global_links" and "'global_links'" in err.message  # names the key


@pytest.mark.parametrize("latency", ["75", "75 parsecs", "1.5 mss", "-3us", ""])
def test_bad_latency(latency: str) -> None:
    raw = spec()
    raw["clusters"][0]["local_links"][0]["latency"] = latency
    err = error(raw)
    assert err.where == "clusters[0].local_links[0].latency"
    assert "expected a latency such as '75us'" in err.message


def test_latency_must_be_a_string() -> None:
    raw = spec(global_links=[{"type": "InfiniBand QDR", "latency": 0.0001}])
    err = error(raw)
    assert err.where == "global_links[0].latency" and "with a unit" in err.message


@pytest.mark.parametrize(("value", "expected"), [(-1, "positive integer"), (0, "positive")])
def test_non_positive_number(value: int, expected: str) -> None:
    raw = spec()
    raw["clusters"][0]["nodes"][1]["number"] = value
    err = error(raw)
    assert err.where == "clusters[0].nodes[1].number" and expected in err.message


@pytest.mark.parametrize("value", ["2", 2.0, True, None])
def test_wrong_json_type(value: Any) -> None:
    raw = spec()
    raw["clusters"][0]["nodes"][0]["number"] = value
    err = error(raw)
    assert err.where == "clusters[0].nodes[0].number" and "expected an integer" in err.message


def test_wrong_container_types() -> None:
    assert error([]).message.startswith("expected an object")
    err = error(spec(clusters={"id": "c0"}))
    assert err.where == "clusters" and "expected a list" in err.message
    err = error(spec(clusters=[]))
    assert err.where == "clusters" and "non-empty" in err.message


def test_unknown_key_suggests() -> None:
    raw = spec()
    raw["clusters"][0]["nodse"] = []
    err = error(raw)
    assert err.where == "clusters[0].nodse"
    assert "unknown key 'nodse'" in err.message and "did you mean 'nodes'" in err.message
    err = error(spec(global_link=[]))
    assert err.where == "global_link"


def test_comment_keys_are_ignored() -> None:
    raw = spec(_doc="a comment")
    raw["clusters"][0]["_note"] = {"anything": 1}
    assert len(platform_from_json(raw).cores) == 44


def test_duplicate_cluster_id() -> None:
    raw = spec()
    raw["clusters"].append(copy.deepcopy(raw["clusters"][0]))
    err = error(raw)
    assert err.where == "clusters[1].id" and "duplicate cluster id 'c0'" in err.message


def test_single_link_object_accepted() -> None:
    raw = spec(global_links={"type": "InfiniBand QDR", "latency": "0us"})
    raw["clusters"][0]["local_links"] = {"type": "InfiniBand QDR", "latency": "2us"}
    p = platform_from_json(raw)
    assert p.global_links == [{"type": "InfiniBand QDR", "latency": "0us", "bandwidth": "32Gbps"}]
    assert p.clusters[0].local_links[0]["latency"] == "2us"


def test_inline_types_add_and_override() -> None:
    raw = spec(
        types={
            # Override a shipped processor: 60 W instead of 45 W -> 60 / 6 = 10 W per core.
            "processor": {
                "Xeon L5640": dict(MY_CPU, cores=6, clock_rate=2.26, dpflops_per_cycle=4),
                "My CPU": MY_CPU,
            },
            "node": {
                "My node": {
                    "processors": [{"type": "My CPU", "number": 2}],
                    "memory": {"type": "My RAM", "capacity": 8},
                }
            },
            "memory": {"My RAM": {"latency": "80ns"}},
            "network": {"My net": {"bandwidth": "125MBps"}},
        }
    )
    raw["clusters"][0]["nodes"].append({"type": "My node", "number": 3})
    raw["clusters"][0]["local_links"] = [{"type": "My net", "latency": "1ms"}]
    p = platform_from_json(raw)
    # 44 shipped-type cores + 3 nodes x 2 x 3 = 62 cores
    assert len(p.cores) == 62
    assert p.cores[0].power == pytest.approx(10.0)  # overridden L5640
    mine = p.cores[-1]
    # My CPU: 2.0 GHz x 8 = 16 GFLOPS; 60 W / 3 cores = 20 W
    assert (mine.processor.type, mine.peak_gflops, mine.power) == ("My CPU", 16.0, 20.0)
    assert mine.node.memory_gb == 8 and mine.node.memory_type == "My RAM"
    assert p.clusters[0].local_links[0]["bandwidth"] == "125MBps"
    # The shipped library itself is untouched by the overlay.
    assert platform_from_json(spec()).cores[0].power == pytest.approx(7.5)


def test_inline_type_missing_field_reported_with_path() -> None:
    cpu = dict(MY_CPU)
    del cpu["clock_rate"]
    err = error(spec(types={"processor": {"My CPU": cpu}}))
    assert err.where == 'types.processor["My CPU"]'
    assert "missing required key 'clock_rate'" in err.message


def test_inline_type_bad_values() -> None:
    err = error(spec(types={"processor": {"P": dict(MY_CPU, cores=0)}}))
    assert err.where == "types.processor.P.cores"
    err = error(spec(types={"processor": {"P": dict(MY_CPU, type="TPU")}}))
    assert err.where == "types.processor.P.type" and "CPU, GPU" in err.message
    err = error(spec(types={"network": {"N": {"bandwidth": "10Gbit"}}}))
    assert err.where == "types.network.N.bandwidth" and "10Gbps" in err.message
    err = error(spec(types={"network": {"N": {"bandwidth": "0Gbps"}}}))
    assert "positive bandwidth" in err.message
    err = error(spec(types={"disk": {}}))
    assert err.where == "types.disk" and "did you mean" not in err.message
    # Since the library has GPU types, "cpu" is one letter away from the "gpu" category.
    err = error(spec(types={"cpu": {}}))
    assert err.where == "types.cpu" and "did you mean 'gpu'" in err.message


def test_inline_node_with_unknown_processor() -> None:
    node = {
        "processors": [{"type": "Xeon L5460", "number": 2}],
        "memory": {"type": "DDR3-1333", "capacity": 4},
    }
    err = error(spec(types={"node": {"N1": node}}))
    assert err.where == "types.node.N1.processors[0].type"
    assert "unknown processor type 'Xeon L5460'" in err.message and "'Xeon L5640'" in err.message


def test_file_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"clusters": [\n  {"id": "x",}\n]}')
    with pytest.raises(InputError) as info:
        load_platform(bad)
    assert info.value.path == str(bad) and info.value.where == "line 2"
    dup = tmp_path / "dup.json"
    dup.write_text('{"clusters": [], "clusters": []}')
    with pytest.raises(InputError, match="duplicate key 'clusters'"):
        load_platform(dup)
    with pytest.raises(InputError, match="platform file not found"):
        load_platform(tmp_path / "missing.json")
    good = tmp_path / "good.json"
    good.write_text(json.dumps(spec()))
    assert len(load_platform(good).cores) == 44


def test_units() -> None:
    assert parse_latency("1.5ms", None, "x") == pytest.approx(1.5e-3)
    assert parse_latency("75us", None, "x") == pytest.approx(75e-6)
    assert parse_latency("0us", None, "x") == 0.0
    assert parse_bandwidth("125MBps", None, "x") == pytest.approx(125e6)
    assert parse_bandwidth("1Gbps", None, "x") == pytest.approx(125e6)  # 1e9 bits / 8
    assert parse_bandwidth("10Gbps", None, "x") == pytest.approx(1.25e9)
    assert parse_bandwidth("1KiBps", None, "x") == 1024.0
