"""Small hand-written SimGrid platforms, one per routing style, for the tests marked ``batsim``
(each host in P0 with one speed and equal idle and computing power)."""

from __future__ import annotations

from pathlib import Path

HEAD = (
    "<?xml version='1.0'?>\n"
    '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
    '<platform version="4.1">\n'
)
POWER = '<prop id="wattage_per_state" value="100:100"/><prop id="wattage_off" value="10"/>'


def _host(name: str, extra: str = "", power: bool = True) -> str:
    return f'<host id="{name}" speed="1Gf"{extra}>{POWER if power else ""}</host>'


def host_names(nb_hosts: int) -> list[str]:
    return [f"h{i:04d}" for i in range(nb_hosts)]


def no_network(nb_hosts: int, routing: str = "Vivaldi", power: bool = True) -> str:
    """Batsim's "homogeneous, no network" style: one zone, no link (Vivaldi: coordinates
    ``0 0 0``)."""
    extra = ' coordinates="0 0 0"' if routing == "Vivaldi" else ""
    hosts = [_host("master_host", extra, power)]
    hosts += [_host(name, extra, power) for name in host_names(nb_hosts)]
    return (
        HEAD
        + f'<zone id="AS0" routing="{routing}">\n'
        + "\n".join(hosts)
        + "\n</zone>\n</platform>\n"
    )


def linked(
    nb_hosts: int,
    routing: str,
    bandwidth: str = "40MBps",
    latency: str = "0",
    unrouted: tuple[str, ...] = (),
) -> str:
    """One zone of ``routing`` (Full, Floyd, Dijkstra): each host has its own link to a
    router, which one link joins to ``master_host`` (Full: the whole route declared); the
    hosts of ``unrouted`` have no route."""
    names = host_names(nb_hosts)
    parts = [_host("master_host")] + [_host(n) for n in names] + ['<router id="r"/>']
    parts += [f'<link id="l_{n}" bandwidth="{bandwidth}" latency="{latency}"/>' for n in names]
    parts.append(f'<link id="up" bandwidth="1GBps" latency="{latency}"/>')
    if routing == "Full":
        parts += [
            f'<route src="{n}" dst="master_host"><link_ctn id="l_{n}"/><link_ctn id="up"/></route>'
            for n in names
            if n not in unrouted
        ]
    else:
        parts += [
            f'<route src="{n}" dst="r"><link_ctn id="l_{n}"/></route>'
            for n in names
            if n not in unrouted
        ]
        parts.append('<route src="r" dst="master_host"><link_ctn id="up"/></route>')
    return (
        HEAD
        + f'<zone id="AS0" routing="{routing}">\n'
        + "\n".join(parts)
        + "\n</zone>\n</platform>\n"
    )


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.xml"
    path.write_text(text)
    return path


def clusters(nb_hosts: int) -> str:
    """Batsim's ``cluster512.xml`` style: the compute hosts in one ``<cluster>``, the master
    (``role`` master) in another, a backbone between their routers; messages take 0.6 to
    1.6 ms (the links' latencies). No power: run without ``-E``."""
    cluster = 'speed="1Gf" bw="125MBps" lat="50us" bb_bw="2.25GBps" bb_lat="500us"'
    return HEAD + (
        '<zone id="AS0" routing="Full">\n'
        f'<cluster id="c1" prefix="h" suffix="" radical="0-{nb_hosts - 1}" {cluster}/>\n'
        f'<cluster id="c2" prefix="master_host" suffix="" radical="0-0" {cluster}>'
        '<prop id="role" value="master"/></cluster>\n'
        '<link id="backbone" bandwidth="1.25GBps" latency="500us"/>\n'
        '<zoneRoute src="c1" dst="c2" gw_src="hc1_router" gw_dst="master_hostc2_router">'
        '<link_ctn id="backbone"/></zoneRoute>\n'
        "</zone>\n</platform>\n"
    )
