"""The platform.xml reader: hosts, Batsim's id order, units, wattages and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from hdeeprm.errors import InputError
from hdeeprm.simulation import SimPlatform, load_platform_xml

HEADER = '<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'

# Hosts declared out of name order, nested two zones deep, with a master host, a master by
# role and a storage host that must all be left out.
PLATFORM = (
    HEADER
    + """<platform version="4.1">
  <zone id="main" routing="Full">
    <zone id="master" routing="None">
      <host id="master_host" speed="1Gf"/>
    </zone>
    <zone id="clu" routing="Full">
      <zone id="inner" routing="Full">
        <host id="node10" speed="2Gf, 1.5Gf, 1e-6Gf" pstate="2">
          <prop id="wattage_per_state" value="100:200, 90:150, 10:10"/>
          <prop id="wattage_off" value="2.5"/>
        </host>
        <host id="node2" speed="500Mf">
          <prop id="wattage_per_state" value="50:60:80"/>
        </host>
      </zone>
      <host id="node1" speed="1000000000, 3kf">
        <prop id="watt_per_state" value="7:9, 1:2"/>
        <prop id="custom" value="x"/>
      </host>
      <host id="io" speed="1Gf"><prop id="role" value="storage"/></host>
      <host id="boss" speed="1Gf"><prop id="role" value="master"/></host>
    </zone>
  </zone>
</platform>
"""
)


BOSS = '<host id="boss" speed="1Gf"><prop id="role" value="master"/></host>'


def write(tmp_path: Path, text: str, name: str = "platform.xml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_compute_hosts_ids_follow_lexicographic_name_order(tmp_path: Path) -> None:
    platform = load_platform_xml(write(tmp_path, PLATFORM), master_host="boss")
    # master_host is only a name here: with -m boss, master_host is a compute host.
    # Byte-wise order: "master_host" < "node1" < "node10" < "node2" (SimGrid's std::map).
    assert [h.name for h in platform.hosts] == ["master_host", "node1", "node10", "node2"]
    assert [h.id for h in platform.hosts] == [0, 1, 2, 3]
    assert platform.master_host == "boss"
    assert platform.storage_hosts == ["io"]


def test_default_master_and_roles_are_excluded(tmp_path: Path) -> None:
    # The default master host name and a role=master host cannot both exist: two masters.
    with pytest.raises(InputError, match="two master hosts"):
        load_platform_xml(write(tmp_path, PLATFORM))
    text = PLATFORM.replace(
        '<host id="boss" speed="1Gf"><prop id="role" value="master"/></host>', ""
    )
    platform = load_platform_xml(write(tmp_path, text))
    assert [h.name for h in platform.hosts] == ["node1", "node10", "node2"]
    assert platform.master_host == "master_host"


def test_speeds_units_pstate_and_wattages(tmp_path: Path) -> None:
    text = PLATFORM.replace(
        '<host id="boss" speed="1Gf"><prop id="role" value="master"/></host>', ""
    )
    node1, node10, node2 = load_platform_xml(write(tmp_path, text)).hosts
    # Bare numbers are flops; 3kf = 3,000 flops/s. Old property name watt_per_state.
    assert node1.speeds == (1e9, 3e3)
    assert node1.idle_watts == (7.0, 1.0) and node1.full_watts == (9.0, 2.0)
    assert node1.pstate == 0 and node1.properties["custom"] == "x"
    # 2Gf, 1.5Gf, 1e-6Gf = 1,000 flops/s; initial P-state from the attribute.
    assert node10.speeds == (2e9, 1.5e9, 1e3)
    assert node10.pstate == 2
    assert node10.idle_watts == (100.0, 90.0, 10.0)
    assert node10.full_watts == (200.0, 150.0, 10.0)
    assert node10.off_watts == 2.5
    # idle:epsilon:full triple: the middle value is ignored. 500Mf = 5e8 flops/s.
    assert node2.speeds == (5e8,)
    assert node2.idle_watts == (50.0,) and node2.full_watts == (80.0,)
    assert node2.has_energy and node2.nb_pstates == 1


def test_cluster_element_expands_hosts_with_its_properties(tmp_path: Path) -> None:
    text = (
        HEADER
        + """<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="master_host" speed="1Gf"/>
    <cluster id="c" prefix="c-" suffix=".lan" radical="0-2,9" speed="1Gf, 2Gf" bw="1Gbps"
             lat="1us">
      <prop id="wattage_per_state" value="1:2, 3:4"/>
    </cluster>
  </zone>
</platform>"""
    )
    hosts = load_platform_xml(write(tmp_path, text)).hosts
    assert [h.name for h in hosts] == ["c-0.lan", "c-1.lan", "c-2.lan", "c-9.lan"]
    assert all(h.full_watts == (2.0, 4.0) and h.speeds == (1e9, 2e9) for h in hosts)


@pytest.mark.parametrize(
    ("attribute", "message"),
    [
        ('speed="2Gz"', "bad speed '2Gz'"),
        ('speed="fast"', "bad speed 'fast'"),
        ('speed="1Gf,,2Gf"', "bad speed ''"),
        ('speed="1Gf" pstate="1"', "initial pstate 1 out of range"),
        ('speed="1Gf" pstate="x"', "bad pstate 'x'"),
    ],
)
def test_bad_speed_or_pstate_names_file_and_host(
    tmp_path: Path, attribute: str, message: str
) -> None:
    text = HEADER + f'<platform version="4.1"><host id="h7" {attribute}/></platform>'
    path = write(tmp_path, text)
    with pytest.raises(InputError, match=message) as info:
        load_platform_xml(path)
    assert str(path) in str(info.value) and "<host id='h7'>" in str(info.value)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("100:200", "1 entries for 2 P-states"),
        ("100:200, 1:2:3:4", "bad wattage_per_state entry '1:2:3:4'"),
        ("100:abc, 1:2", "not a number"),
        ("100:200, -1:2", "negative wattage"),
    ],
)
def test_bad_wattages_name_file_and_host(tmp_path: Path, value: str, message: str) -> None:
    text = (
        HEADER
        + '<platform version="4.1"><host id="h3" speed="1Gf, 2Gf">'
        + f'<prop id="wattage_per_state" value="{value}"/></host></platform>'
    )
    path = write(tmp_path, text)
    with pytest.raises(InputError, match=message) as info:
        load_platform_xml(path)
    assert str(path) in str(info.value) and "h3" in str(info.value)


def test_structural_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="platform file not found"):
        load_platform_xml(tmp_path / "missing.xml")
    with pytest.raises(InputError, match="invalid XML"):
        load_platform_xml(write(tmp_path, "<platform><host id='a' speed='1Gf'></platform>"))
    with pytest.raises(InputError, match="expected <platform>"):
        load_platform_xml(write(tmp_path, "<zone/>"))
    with pytest.raises(InputError, match="duplicate host name 'a'"):
        load_platform_xml(
            write(
                tmp_path,
                '<platform><host id="a" speed="1Gf"/><host id="a" speed="1Gf"/></platform>',
            )
        )
    with pytest.raises(InputError, match="missing 'speed'"):
        load_platform_xml(write(tmp_path, '<platform><host id="a"/></platform>'))


def test_generated_gaia_xml_matches_the_hierarchy_core_ids(tmp_path: Path) -> None:
    # The platform generator names cores cor_0000...; Batsim's order must give core i id i.
    platform_mod = pytest.importorskip("hdeeprm.platform")
    example = Path(__file__).resolve().parents[2] / "platform_examples" / "gaia.json"
    if not example.is_file():
        pytest.skip("platform_examples/gaia.json not available")
    hierarchy = platform_mod.load_platform(example)
    xml_path = tmp_path / "gaia.xml"
    platform_mod.write_platform_xml(hierarchy, xml_path)
    sim = load_platform_xml(xml_path)
    assert sim.nb_hosts == len(hierarchy.cores) == 2280
    assert [h.name for h in sim.hosts] == [c.name for c in hierarchy.cores]
    core = hierarchy.cores[0]
    host = sim.hosts[0]
    # P0 speed = peak GFLOPS; P0/P1 draw the core's share of the processor power.
    assert host.speeds[0] == pytest.approx(core.peak_gflops * 1e9)
    assert host.speeds[1] == pytest.approx(0.75 * core.peak_gflops * 1e9)
    assert host.full_watts[0] == pytest.approx(core.power)
    assert host.full_watts[3] == pytest.approx(0.05 * core.power)
    assert host.pstate == 3


def test_homogeneous_builder() -> None:
    platform = SimPlatform.homogeneous(3, [1e9, 5e8], [10, 5], [20, 8], pstate=1)
    assert [h.name for h in platform.hosts] == ["host_0000", "host_0001", "host_0002"]
    assert platform.hosts[2].full_watts == (20.0, 8.0) and platform.hosts[2].pstate == 1
    with pytest.raises(ValueError, match="one idle and one full wattage per P-state"):
        SimPlatform.homogeneous(1, [1e9, 5e8], [10], [20])
