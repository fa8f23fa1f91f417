"""The hierarchy as a SimGrid (DTD v4.1) ``platform.xml`` that Batsim 4.x accepts.

Layout (thesis 4.1.1, figure 3.1)::

    platform version 4.1
      zone "main" (Full)
        zone "master" (Full): host master_host (a Full zone with one host and no route:
            SimGrid refuses a zoneRoute whose gateway lies in a routing="None" zone)
        zone "clu_<i>" (Full), one per cluster:
          prop cluster_name = the cluster's id
          router rou_<i>
          link udl_<node id> (SPLITDUPLEX), one per node: local-link bandwidth, latency 0
          host cor_<core id>, one per core: four P-state speeds, pstate 3, wattage props,
              and its position (cluster_id, node_id, processor_id) as props
          route rou_<i> -> core (DOWN) and core -> rou_<i> (UP) through its node's link
        link glob_<i> (SPLITDUPLEX), one per cluster: global-link bandwidth, latency 0
        zoneRoute master <-> clu_<i> (gateways master_host and rou_<i>) through glob_<i>

Only the first entry of ``local_links`` / ``global_links`` carries routes; the network is not
modelled, so further entries are kept in the hierarchy only.

**Latency 0 on every link.** The only routes are between the cores and ``master_host``, and
Batsim uses them for one thing: a job's actor, on the job's first host, sends its completion to
Batsim's server on ``master_host`` as a 1-byte message through this route. With the platform's
documented latencies (e.g. Gaia's 1.5 us + 1 us, times SimGrid's latency factor 13.01), every
completion, and the decision that follows it, would come about 30-130 us after the job's end,
and completions would no longer share an instant with the submissions of that instant, so
Batsim's schedules would drift from the embedded engine's, which models no network. The links
therefore get latency 0 (the 1-byte transfer then costs < 1 ns, below Batsim's 1 us output
resolution) and keep the documented latency as a ``documented_latency`` property, for readers.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

from hdeeprm._atomic import write_text
from hdeeprm.platform.hierarchy import (
    INITIAL_PSTATE,
    PSTATE_POWER_FRACTION,
    PSTATE_SPEED_FRACTION,
    Platform,
)

#: SimGrid DTD the file declares.
DOCTYPE = '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">'
#: Batsim's default master host name (``--master-host``); it is not a compute resource.
MASTER_HOST = "master_host"
#: Speed written for P-states whose model speed is 0 (P2, P3): SimGrid wants speeds > 0.
IDLE_SPEED_GFLOPS = 1e-6
#: Latency written on every link (see the module docstring: Batsim's completion messages).
ROUTE_LATENCY = "0s"


def fmt_number(value: float) -> str:
    """Shortest text of ``value`` rounded to 12 significant digits (``6.78``, ``45.0``).

    Rounding hides binary noise such as ``0.75 * 9.04 = 6.779999999999999``.
    """
    return repr(float(f"{value:.12g}"))


def pstate_speeds(peak_gflops: float) -> list[float]:
    """Speed in GFLOPS of a core in each P-state (P2/P3 get :data:`IDLE_SPEED_GFLOPS`)."""
    return [
        fraction * peak_gflops if fraction > 0 else IDLE_SPEED_GFLOPS
        for fraction in PSTATE_SPEED_FRACTION
    ]


def pstate_watts(core_power: float) -> list[float]:
    """Power in watts of a core in each P-state."""
    return [fraction * core_power for fraction in PSTATE_POWER_FRACTION]


def speed_attribute(peak_gflops: float) -> str:
    """The ``speed`` attribute: ``"9.04Gf, 6.78Gf, 1e-06Gf, 1e-06Gf"``."""
    return ", ".join(f"{fmt_number(s)}Gf" for s in pstate_speeds(peak_gflops))


def wattage_attribute(core_power: float) -> str:
    """``wattage_per_state``: ``idle:computing`` per P-state; equal, as the P-state sets power."""
    return ", ".join(f"{fmt_number(w)}:{fmt_number(w)}" for w in pstate_watts(core_power))


def _check_writable(platform: Platform) -> None:
    """Hand-built platforms may miss what the XML needs; say so instead of writing a bad file."""
    if not platform.global_links:
        raise ValueError("the platform has no global link (platform.global_links is empty)")
    for cluster in platform.clusters:
        if not cluster.local_links:
            raise ValueError(f"cluster {cluster.id!r} has no local link (local_links is empty)")
    names = [core.name for core in platform.cores]
    for index in range(1, len(names)):
        if not names[index - 1] < names[index]:
            raise ValueError(
                f"core names must be unique and sort in id order (SimGrid and Batsim number "
                f"hosts by name): {names[index - 1]!r} (core {index - 1}) is not before "
                f"{names[index]!r} (core {index}); zero-pad them, see loader.core_name"
            )


def _link(parent: ET.Element, link_id: str, spec: dict[str, str]) -> None:
    """A SPLITDUPLEX link with the spec's bandwidth and :data:`ROUTE_LATENCY`."""
    link = ET.SubElement(
        parent,
        "link",
        id=link_id,
        bandwidth=spec["bandwidth"],
        latency=ROUTE_LATENCY,
        sharing_policy="SPLITDUPLEX",
    )
    ET.SubElement(link, "prop", id="documented_latency", value=spec["latency"])


def platform_xml(platform: Platform, *, initial_pstate: int = INITIAL_PSTATE) -> str:
    """The ``platform.xml`` text for ``platform`` (see the module docstring for its layout).

    ``initial_pstate`` is the P-state every core starts in: hdeeprm's workload manager expects
    P3 (idle, speed 0) and switches cores to P0/P1 itself; schedulers that do not manage
    P-states (pybatsim's, batsched...) need 0, or their jobs never progress.

    Raises:
        ValueError: the platform lacks links, or its core names do not sort in id order.
    """
    _check_writable(platform)
    if not 0 <= initial_pstate < len(PSTATE_SPEED_FRACTION):
        raise ValueError(
            f"initial_pstate must be 0..{len(PSTATE_SPEED_FRACTION) - 1}, got {initial_pstate}"
        )
    root = ET.Element("platform", version="4.1")
    main = ET.SubElement(root, "zone", id="main", routing="Full")
    master_zone = ET.SubElement(main, "zone", id="master", routing="Full")
    master = ET.SubElement(master_zone, "host", id=MASTER_HOST, speed="1Gf")
    ET.SubElement(master, "prop", id="wattage_per_state", value="0.0:0.0")
    ET.SubElement(master, "prop", id="wattage_off", value="0.0")

    for cluster in platform.clusters:
        zone_id = f"clu_{cluster.index}"
        router_id = f"rou_{cluster.index}"
        zone = ET.SubElement(main, "zone", id=zone_id, routing="Full")
        ET.SubElement(zone, "prop", id="cluster_name", value=cluster.id)
        ET.SubElement(zone, "router", id=router_id)
        local = cluster.local_links[0]
        cluster_index = str(cluster.index)
        routes: list[tuple[str, str]] = []
        for node in cluster.nodes:
            link_id = f"udl_{node.id}"
            _link(zone, link_id, local)
            node_id = str(node.id)
            for proc in node.processors:
                # Every core of a processor shares speed and wattage: format them once.
                speed = speed_attribute(proc.gflops_per_core)
                watts = wattage_attribute(proc.power_per_core)
                proc_id = str(proc.id)
                for core in proc.cores:
                    host = ET.SubElement(
                        zone, "host", id=core.name, speed=speed, pstate=str(initial_pstate)
                    )
                    ET.SubElement(host, "prop", id="wattage_per_state", value=watts)
                    ET.SubElement(host, "prop", id="wattage_off", value="0.0")
                    ET.SubElement(host, "prop", id="cluster_id", value=cluster_index)
                    ET.SubElement(host, "prop", id="node_id", value=node_id)
                    ET.SubElement(host, "prop", id="processor_id", value=proc_id)
                    routes.append((core.name, link_id))
        # The DTD wants every route after the zone's hosts and links.
        for host_id, link_id in routes:
            down = ET.SubElement(zone, "route", src=router_id, dst=host_id, symmetrical="NO")
            ET.SubElement(down, "link_ctn", id=link_id, direction="DOWN")
            up = ET.SubElement(zone, "route", src=host_id, dst=router_id, symmetrical="NO")
            ET.SubElement(up, "link_ctn", id=link_id, direction="UP")

    glob = platform.global_links[0]
    for cluster in platform.clusters:
        _link(main, f"glob_{cluster.index}", glob)
    for cluster in platform.clusters:
        zone_id, router_id, link_id = (
            f"clu_{cluster.index}",
            f"rou_{cluster.index}",
            f"glob_{cluster.index}",
        )
        down = ET.SubElement(
            main,
            "zoneRoute",
            src="master",
            dst=zone_id,
            gw_src=MASTER_HOST,
            gw_dst=router_id,
            symmetrical="NO",
        )
        ET.SubElement(down, "link_ctn", id=link_id, direction="DOWN")
        up = ET.SubElement(
            main,
            "zoneRoute",
            src=zone_id,
            dst="master",
            gw_src=router_id,
            gw_dst=MASTER_HOST,
            symmetrical="NO",
        )
        ET.SubElement(up, "link_ctn", id=link_id, direction="UP")

    ET.indent(root, space="  ")
    body = ET.tostring(root, encoding="unicode")
    return f'<?xml version="1.0" encoding="utf-8"?>\n{DOCTYPE}\n{body}\n'


def write_platform_xml(
    platform: Platform, path: str | os.PathLike[str], *, initial_pstate: int = INITIAL_PSTATE
) -> None:
    """Write ``platform.xml`` for ``platform`` to ``path`` atomically (``initial_pstate``: see
    :func:`platform_xml`)."""
    write_text(path, platform_xml(platform, initial_pstate=initial_pstate))
