"""Batsim 4.2.1's timing of the events of one instant: how they are ordered and split into
messages (``hdeeprm-sim --batsim-timing``).

The embedded engine sends every event of an instant in one message. Batsim does not: its
server (``src/server.cpp``) receives *internal messages*, 1-byte SimGrid communications that
take simulated time, one at a time from a FIFO mailbox, and sends a message to the scheduler
whenever, after handling one, its mailbox is empty and the scheduler is not busy. Which events
travel together therefore depends on sub-nanosecond offsets. Measured on Batsim 4.2.1 (debug
logs of the server and of ``ipp``, ``docs/batsim.md``):

* every internal message is 1 byte over SimGrid's route (L07 model: the links' latencies, then
  the slowest link's bandwidth; no link, no time), read from ``platform.xml`` by
  :class:`PlatformRoutes`: between actors of ``master_host`` (the submitter, the scheduler's
  REQ-REP actor, the ``CALL_ME_LATER`` waiters) the master host's route to itself (SimGrid's
  loopback in a Full zone, 1e-10 s; none in a Vivaldi zone without links); a job's completion
  from the job's first host to ``master_host``;
* a communication starts only when the server takes it from its mailbox, so messages queued
  behind others wait: the server handles them in the order they were posted;
* the submitter wakes at each submission time plus the duration of its previous message;
* the scheduler's decisions reach the server one after the other (1e-10 s each), a job starts
  when its ``EXECUTE_JOB`` is handled, and the scheduler is ready again one message later;
* SimGrid ends every sleep due less than 1e-9 s after the current step at that step
  (``precision/timing``); in one step the submitter and the waiters post before the jobs, and
  the server's empty-mailbox check does not see messages posted in the same step.

:class:`BatsimTiming` replays this model at each of the engine's instants, in the same float
arithmetic (fine times ``t + offset``), and hands the engine's events out in Batsim's messages.
The fine times order and group events, and ``out_jobs.csv`` reports each job's fine start and
end (:meth:`BatsimTiming.report_times`); the engine's clock and every other output stay the
engine's. Decisions of a reply timestamped at the engine's instant take effect in the engine
at once; later ones (a scheduling delay) when the server receives them, at their timestamps,
the engine's instants of the meantime simulated first.
"""

from __future__ import annotations

import math
import os
import re
import xml.etree.ElementTree as ET
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hdeeprm.errors import InputError
from hdeeprm.protocol.codec import TIME_TOLERANCE
from hdeeprm.simulation.engine import Engine
from hdeeprm.simulation.events import (
    COMPLETED_SUCCESSFULLY,
    COMPLETED_WALLTIME_REACHED,
    JOB_COMPLETED,
    JOB_SUBMITTED,
    NO_MORE_STATIC_JOB_TO_SUBMIT,
    REQUESTED_CALL,
    SIMULATION_ENDS,
    CallMeLater,
    Decision,
    Event,
    ExecuteJob,
    Message,
)

#: SimGrid's loopback (bytes/s, ``network/loopback-bw``): an internal message between two
#: actors of a host of a Full, Floyd or Dijkstra zone takes 1e-10 s.
LOOPBACK_BANDWIDTH = 1e10
LOOPBACK_DURATION = 1.0 / LOOPBACK_BANDWIDTH
#: SimGrid's ``precision/work-amount`` x ``precision/timing``: a message is received when
#: fewer bytes than this are left.
WORK_PRECISION = 1e-14
#: SimGrid's ``precision/timing``: a sleep due within this of the current step ends with it.
TIMING_PRECISION = 1e-9
#: A job whose modelled end is this much after the engine's was re-paced by a P-state change
#: (plus :data:`OFFSET_MESSAGES` messages' time on platforms whose messages take longer).
REPACED = 1e-4
#: How many of the platform's slowest messages the modelled clock may run from the engine's
#: instants: the engine applies a reply's decisions at their timestamp, Batsim when its
#: server receives each of them, one message after the other.
OFFSET_MESSAGES = 1000
#: Batsim's waiters sleep at least this long (``waiter_process``).
MIN_WAIT = 1e-5

# Who posts an internal message, in the order actors woken in one SimGrid step post them.
_SUBMITTER, _WAITER, _REQREP, _JOB = 0, 1, 2, 3

_UNITS = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
_BANDWIDTH = re.compile(r"^\s*([0-9.eE+-]+)\s*([kKmMgGtT]?)([bB])ps\s*$")
_LATENCY = re.compile(r"^\s*([0-9.eE+-]+)\s*(s|ms|us|ns)?\s*$")
_SECONDS = {None: 1.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def _bandwidth(text: str, path: str) -> float:
    """Bytes per second of a SimGrid bandwidth (``40MBps``, ``1Gbps``, ``1e9``)."""
    try:
        return float(text)
    except ValueError:
        pass
    match = _BANDWIDTH.match(text)
    if not match:
        raise InputError(f"link bandwidth {text!r} is not a SimGrid bandwidth (e.g. 1Gbps)", path)
    value = float(match.group(1)) * _UNITS[match.group(2).lower()]
    return value if match.group(3) == "B" else value / 8.0


def _latency(text: str, path: str) -> float:
    match = _LATENCY.match(text)
    if not match:
        raise InputError(f"link latency {text!r} is not a SimGrid time (e.g. 125us)", path)
    return float(match.group(1)) * _SECONDS[match.group(2)]


#: A route as a 1-byte message sees it: (slowest link's bytes/s, sum of latencies); no link
#: at all is (inf, 0): the message takes no simulated time.
_Route = tuple[float, float]
_NO_LINK: _Route = (math.inf, 0.0)
#: Zones whose routes :class:`PlatformRoutes` resolves, as SimGrid 3.32 does.
_GRAPH_ROUTING = ("Full", "Floyd", "Dijkstra", "DijkstraCache")


class PlatformRoutes:
    """The routes of a ``platform.xml`` as SimGrid 3.32 resolves them for Batsim's internal
    messages (1 byte, L07 model: the slowest link's bandwidth after the links' latencies).

    * ``Full``, ``Floyd``, ``Dijkstra``: the declared ``<route>`` (symmetrical unless
      ``symmetrical="NO"``; Floyd and Dijkstra chain them by fewest hops); a host to itself
      without a declared route uses SimGrid's loopback (10 GB/s, no latency: 1e-10 s); two
      hosts of a ``Full`` zone without a route have no link (no time).
    * ``Vivaldi``: each host's ``<host_link>`` (up, then the destination's down) and the
      distance of the ``coordinates`` (``x y height``, ms); hosts at ``0 0 0`` without links
      (Batsim's "no network" platforms) exchange messages in no time.
    * ``<cluster>``: the source's private link up, the backbone, the destination's private
      link down (none for the cluster's router), limiters; a host to itself through the
      cluster's loopback if it has one.
    * nested zones: the ``<zoneRoute>`` between the two zones' ancestors under their common
      one, with the routes from the source to its gateway and from the gateway to the
      destination.

    :meth:`check` refuses what SimGrid aborts the simulation on: a host in a ``None`` zone
    (empty routing: "There can't be route in an Empty zone"), and a host without a route to
    the master host in a Floyd or Dijkstra zone ("No route from").
    """

    def __init__(self, platform_file: str | os.PathLike[str]) -> None:
        self.path = path = os.fspath(platform_file)
        root = ET.parse(path).getroot()
        self._links: dict[str, tuple[float, float]] = {}
        for link in root.iter("link"):
            self._links[link.get("id", "")] = (
                _bandwidth(link.get("bandwidth", "0"), path),
                _latency(link.get("latency", "0"), path),
            )
        #: The zone element of each netpoint (host, router, zone), and each zone's parent.
        self._zone_of: dict[str, ET.Element] = {}
        self._parent: dict[int, ET.Element | None] = {}
        self._zone_id: dict[int, str] = {}
        self._coords: dict[str, tuple[float, float, float]] = {}
        self._private: dict[str, tuple[str, str]] = {}
        #: Each ``<cluster>``'s links: private (up = down), backbone, loopback, limiter, and
        #: its router's name.
        self._clusters: dict[int, dict[str, Any]] = {}
        self._routers: set[str] = set()
        self._memo: dict[tuple[str, str], _Route] = {}
        #: Each zone's declared routes by (src, dst): the element and whether it runs forward.
        self._tables: dict[int, dict[tuple[str, str], tuple[ET.Element, bool]]] = {}
        self._walk(root, None)

    def _walk(self, element: ET.Element, zone: ET.Element | None) -> None:
        for child in element:
            tag = child.tag
            if tag in ("zone", "AS"):
                self._parent[id(child)] = zone
                self._zone_id[id(child)] = child.get("id", "")
                if zone is not None:
                    self._zone_of[child.get("id", "")] = zone
                self._walk(child, child)
            elif tag in ("host", "router"):
                name = child.get("id", "")
                if zone is not None:
                    self._zone_of[name] = zone
                coords = child.get("coordinates")
                if coords:
                    values = [float(v) for v in coords.split()]
                    x, y, height = ([*values, 0.0, 0.0, 0.0])[:3]
                    self._coords[name] = (x, y, height)
            elif tag == "host_link":
                self._private[child.get("id", "")] = (child.get("up", ""), child.get("down", ""))
            elif tag == "cluster":
                self._cluster(child, zone)

    def _cluster(self, cluster: ET.Element, zone: ET.Element | None) -> None:
        """A ``<cluster>``: a zone of its hosts, each with a private link (``bw``, ``lat``),
        a backbone (``bb_bw``, ``bb_lat``), an optional loopback and limiter, and a router
        (``router_id``, or PREFIX + id + ``_router`` + SUFFIX) as its gateway."""
        path, get = self.path, cluster.get
        cid, prefix, suffix = get("id", ""), get("prefix", ""), get("suffix", "")
        self._parent[id(cluster)] = zone
        self._zone_id[id(cluster)] = cid
        if zone is not None:
            self._zone_of[cid] = zone

        def link(bw: str | None, lat: str | None) -> tuple[float, float] | None:
            if bw is None and lat is None:
                return None
            return _bandwidth(bw or "0", path), _latency(lat or "0", path)

        backbone = link(get("bb_bw"), get("bb_lat"))
        if backbone is not None and backbone[0] <= 0.0 and backbone[1] <= 0.0:
            backbone = None
        limiter = get("limiter_link")
        self._clusters[id(cluster)] = {
            "private": link(get("bw", "0"), get("lat", "0")),
            "backbone": backbone,
            "loopback": link(get("loopback_bw"), get("loopback_lat")),
            "limiter": (_bandwidth(limiter, path), 0.0) if limiter else None,
        }
        router = get("router_id") or f"{prefix}{cid}_router{suffix}"
        self._routers.add(router)
        self._zone_of[router] = cluster
        for number in _radical(get("radical", "")):
            self._zone_of[f"{prefix}{number}{suffix}"] = cluster

    def _cluster_route(self, cluster: ET.Element, src: str, dst: str) -> _Route:
        """SimGrid's cluster route: the source's limiter and private link up, the backbone,
        the destination's private link down and limiter (none for the router); a host to
        itself through its loopback if the cluster has one."""
        info = self._clusters[id(cluster)]
        if src == dst and info["loopback"] is not None:
            return info["loopback"]
        parts = []
        for end in (src, dst):
            if end not in self._routers:
                parts += [x for x in (info["limiter"], info["private"]) if x is not None]
        if info["backbone"] is not None:
            parts.append(info["backbone"])
        return _join(parts)

    def check(self, names: Sequence[str]) -> None:
        """Refuse, as Batsim aborts on, a host of ``names`` inside a ``routing="None"`` zone
        (every message to or from it needs a route there), or without a route to the first
        of ``names``, the master host, in a Floyd or Dijkstra zone (:meth:`route` raises)."""
        for name in names:
            zone = self._zone_of.get(name)
            while zone is not None:
                if zone.get("routing", "Full") == "None":
                    raise InputError(
                        f'host {name!r} is in zone {zone.get("id", "")!r} with routing="None": '
                        "Batsim aborts with SimGrid's \"There can't be route in an Empty zone\" "
                        '(use routing="Full")',
                        self.path,
                    )
                zone = self._parent.get(id(zone))
        for name in names[1:]:
            self.route(name, names[0])

    def message_bandwidth(self, src: str, dst: str) -> float:
        """Bytes per second of a 1-byte message from ``src`` to ``dst`` (its latency counted
        in): ``inf`` when it takes no simulated time."""
        bandwidth, latency = self.route(src, dst)
        if latency == 0.0:
            return bandwidth
        duration = latency + (1.0 / bandwidth if bandwidth > 0.0 else 0.0)
        return 1.0 / duration if duration > 0.0 else math.inf

    def route(self, src: str, dst: str) -> _Route:
        """(slowest bandwidth, total latency) of SimGrid's route from ``src`` to ``dst``."""
        found = self._memo.get((src, dst))
        if found is None:
            found = self._memo[src, dst] = self._route(src, dst)
        return found

    def _route(self, src: str, dst: str) -> _Route:
        zs, zd = self._zone_of.get(src), self._zone_of.get(dst)
        if zs is None or zd is None:
            return _NO_LINK
        if zs is zd:
            return self._local(zs, src, dst)
        chain_s = self._ancestors(zs)
        chain_d = self._ancestors(zd)
        common = next(z for z in chain_s if any(z is c for c in chain_d))
        below_s = (
            chain_s[[id(z) for z in chain_s].index(id(common)) - 1] if zs is not common else None
        )
        below_d = (
            chain_d[[id(z) for z in chain_d].index(id(common)) - 1] if zd is not common else None
        )
        name_s = self._zone_id[id(below_s)] if below_s is not None else src
        name_d = self._zone_id[id(below_d)] if below_d is not None else dst
        found = self._declared(common, name_s, name_d)
        if found is None:
            return _NO_LINK
        links, gw_src, gw_dst = found
        parts = [self._links_route(links)]
        if below_s is not None and gw_src and gw_src != src:
            parts.append(self.route(src, gw_src))
        if below_d is not None and gw_dst and gw_dst != dst:
            parts.append(self.route(gw_dst, dst))
        return _join(parts)

    def _ancestors(self, zone: ET.Element) -> list[ET.Element]:
        chain = [zone]
        parent = self._parent.get(id(zone))
        while parent is not None:
            chain.append(parent)
            parent = self._parent.get(id(parent))
        return chain

    def _declared(
        self, zone: ET.Element, src: str, dst: str
    ) -> tuple[list[tuple[float, float]], str, str] | None:
        """The ``<route>``/``<zoneRoute>`` of ``zone`` from ``src`` to ``dst`` (or its
        symmetrical reverse): its links and gateways."""
        table = self._tables.get(id(zone))
        if table is None:  # indexed once per zone: a generated zone has 2 routes per core
            table = self._tables[id(zone)] = {}
            backward: dict[tuple[str, str], tuple[ET.Element, bool]] = {}
            for route in zone:
                if route.tag in ("route", "zoneRoute", "ASroute"):
                    a, b = route.get("src", ""), route.get("dst", "")
                    table.setdefault((a, b), (route, True))
                    if route.get("symmetrical", "YES").upper() != "NO":
                        backward.setdefault((b, a), (route, False))
            for key, value in backward.items():
                table.setdefault(key, value)
        found = table.get((src, dst))
        if found is None:
            return None
        route, forward = found
        links = [
            self._links[c.get("id", "")]
            for c in route.iter("link_ctn")
            if c.get("id", "") in self._links
        ]
        gw_src, gw_dst = route.get("gw_src", ""), route.get("gw_dst", "")
        if not forward:
            links.reverse()
            gw_src, gw_dst = gw_dst, gw_src
        return links, gw_src, gw_dst

    def _local(self, zone: ET.Element, src: str, dst: str) -> _Route:
        if id(zone) in self._clusters:
            return self._cluster_route(zone, src, dst)
        routing = zone.get("routing", "Full")
        if routing == "Vivaldi":
            parts = [self._private_link(src, 0), self._private_link(dst, 1)]
            cs, cd = self._coords.get(src), self._coords.get(dst)
            latency = 0.0
            if cs is not None and cd is not None:
                latency = (
                    math.sqrt((cs[0] - cd[0]) ** 2 + (cs[1] - cd[1]) ** 2) + abs(cs[2]) + abs(cd[2])
                ) / 1000.0
            return _join([*parts, (math.inf, latency)])
        if routing not in _GRAPH_ROUTING:
            return _NO_LINK
        found = self._declared(zone, src, dst)
        if found is not None:
            return self._links_route(found[0])
        if src == dst:
            return (1.0 / LOOPBACK_DURATION, 0.0)
        if routing != "Full":  # chained routes, fewest hops first
            hops = self._chain(zone, src, dst)
            if hops is None:  # SimGrid raises (Floyd) or crashes (Dijkstra) on this route
                raise InputError(
                    f"no route from {src!r} to {dst!r} in {routing} zone "
                    f'{zone.get("id", "")!r}: Batsim aborts ("No route from ...") when a '
                    "message takes it",
                    self.path,
                )
            return _join([self._links_route(links) for links in hops])
        return _NO_LINK

    def _chain(
        self, zone: ET.Element, src: str, dst: str
    ) -> list[list[tuple[float, float]]] | None:
        edges: dict[str, list[tuple[str, list[tuple[float, float]]]]] = {}
        for route in zone:
            if route.tag != "route":
                continue
            a, b = route.get("src", ""), route.get("dst", "")
            links = [
                self._links[c.get("id", "")]
                for c in route.iter("link_ctn")
                if c.get("id", "") in self._links
            ]
            edges.setdefault(a, []).append((b, links))
            if route.get("symmetrical", "YES").upper() != "NO":
                edges.setdefault(b, []).append((a, links[::-1]))
        seen = {src: []}  # type: dict[str, list[list[tuple[float, float]]]]
        frontier = deque([src])
        while frontier:
            node = frontier.popleft()
            for nxt, links in edges.get(node, []):
                if nxt not in seen:
                    seen[nxt] = [*seen[node], links]
                    frontier.append(nxt)
        return seen.get(dst)

    def _private_link(self, host: str, which: int) -> _Route:
        pair = self._private.get(host)
        if pair is None or pair[which] not in self._links:
            return _NO_LINK
        return self._links[pair[which]]

    @staticmethod
    def _links_route(links: list[tuple[float, float]]) -> _Route:
        return _join(links)


def _radical(text: str) -> list[int]:
    """A cluster's ``radical``: ``0-99`` or ``1,3,5-7``."""
    numbers: list[int] = []
    for part in text.split(","):
        if "-" in part:
            low, high = part.split("-", 1)
            numbers += range(int(low), int(high) + 1)
        elif part.strip():
            numbers.append(int(part))
    return numbers


def _join(parts: Sequence[tuple[float, float]]) -> _Route:
    """Routes or links in a row: the slowest bandwidth, the latencies added up."""
    bandwidth = min((bw for bw, _ in parts), default=math.inf)
    latency = 0.0
    for _, lat in parts:  # in route order, as SimGrid adds them up
        latency += lat
    return bandwidth, latency


def check_batsim_accepts(
    platform_file: str | os.PathLike[str],
    platform: Any,
    master_host: str = "master_host",
    *,
    energy: bool = True,
) -> None:
    """Raise :class:`InputError` on the inputs Batsim 4.2.1 aborts on, so that hdeeprm-sim
    refuses them instead of giving another result: a host in a ``routing="None"`` zone
    (:meth:`PlatformRoutes.check`), and with ``-E`` a compute host without
    ``wattage_per_state`` (SimGrid's energy plugin: "No power range properties specified")."""
    PlatformRoutes(platform_file).check([master_host, *(h.name for h in platform.hosts)])
    if energy:
        for host in platform.hosts:
            if not host.idle_watts:
                raise InputError(
                    f"host {host.name!r} has no wattage_per_state property: Batsim -E aborts "
                    '("No power range properties specified for host"); add it or drop -E',
                    platform_file,
                )


def message_routes(
    platform_file: str | os.PathLike[str],
    hosts: Sequence[str],
    master_host: str = "master_host",
) -> tuple[_Route, list[_Route]]:
    """The route (bytes/s, latency) of a message between two actors of ``master_host``, and
    of each host's completion to ``master_host`` (``(inf, 0)``: no time); refuses a platform
    on which Batsim aborts (:meth:`PlatformRoutes.check`)."""
    routes = PlatformRoutes(platform_file)
    routes.check([master_host, *hosts])
    return routes.route(master_host, master_host), [routes.route(h, master_host) for h in hosts]


def completion_bandwidths(
    platform_file: str | os.PathLike[str], master_host: str = "master_host"
) -> dict[str, float]:
    """Host name -> bytes per second of a 1-byte message from it to ``master_host``
    (:class:`PlatformRoutes`; ``inf``: no simulated time)."""
    routes = PlatformRoutes(platform_file)
    return {
        name: routes.message_bandwidth(name, master_host)
        for name, zone in routes._zone_of.items()
        if name != master_host and name not in routes._zone_id.values()
    }


@dataclass(slots=True)
class _Post:
    """An internal message to the server: it waits in the mailbox, then travels."""

    kind: int
    #: The route it travels: (bytes/s, latency).
    route: _Route
    events: list[Event]
    #: What receiving it does besides queueing ``events``: "decision", "ready" or "".
    action: str = ""
    payload: Any = None
    #: A decision's timestamp in the reply.
    stamp: float = -math.inf


@dataclass(slots=True)
class _Sleep:
    """A SimGrid sleep (a job's run, the submitter's wait, a waiter): its slot in the array of
    remaining durations, and the engine's events it carries once they are known."""

    kind: int
    slot: int
    #: The route of the message it posts when it ends: (bytes/s, latency).
    route: _Route
    #: Creation order (SimGrid ends the sleeps of one step in this order).
    seq: int
    events: list[Event] = field(default_factory=list)
    job_id: str = ""
    #: The REQ-REP actor's message, posted when it wakes up.
    post: _Post | None = None


class BatsimTiming:
    """Serve ``engine``'s events in Batsim's messages (see the module docstring).

    Use it in place of the engine's ``start``/``proceed`` (the reply's timestamps and ``now``
    included, delayed or not): each call returns the next message Batsim would send.
    ``bandwidth`` gives, by host id, the route of a message from the host to the master host:
    bytes per second, or (bytes per second, latency) (:func:`message_routes`); ``loopback``
    that of a message between two actors of the master host.

    SimGrid's clock is replayed step by step as SimGrid computes it (``NOW += delta``, every
    sleep's remaining duration ``-= delta`` and ended below 1e-9 s), so the rounding of the
    clock at large times is the same; the remaining durations live in one NumPy array.
    """

    def __init__(
        self,
        engine: Engine,
        bandwidth: Sequence[float | _Route],
        *,
        energy: bool = True,
        loopback: float | _Route = LOOPBACK_BANDWIDTH,
    ) -> None:
        self.engine = engine
        #: The route of a message between two actors of master_host.
        self._loopback = _as_route(loopback)
        #: Batsim runs with energy (``-E``): jobs query every host's energy when they start
        #: and end, which delays their messages (see ``_run``).
        self._energy = energy
        self._fresh = -1.0  # the last clock value at which every host's energy was updated
        self._max_prec = TIMING_PRECISION
        self._comm_seq = 0
        self._late: list[_Post] = []
        self._routes = [_as_route(b) for b in bandwidth]
        slowest = max((_duration(r) for r in [self._loopback, *self._routes]), default=0.0)
        self._repaced = REPACED + OFFSET_MESSAGES * slowest
        self._now = 0.0  # SimGrid's clock
        self._rem = np.full(64, np.inf)
        #: Below what remaining duration each slot ends: 1e-9 s for a sleep; 0 for a parallel
        #: task, whose end is decided on its remaining work (``_frac``), marked -1 in ``_rem``.
        self._prec = np.full(64, TIMING_PRECISION)
        #: Parallel tasks as SimGrid's L07 model runs them: the remaining fraction of the task
        #: (1 at the start) and its rate (fraction per second), by slot.
        self._frac = np.zeros(64)
        self._rate = np.zeros(64)
        self._ptasks: set[int] = set()
        self._ptask_slots = np.zeros(0, dtype=np.intp)
        self._sleeps: list[_Sleep | None] = [None] * 64
        self._free = list(range(63, -1, -1))
        self._jobs: dict[str, _Sleep] = {}
        self._waiters: dict[float, deque[_Sleep]] = {}
        self._attached = 0  # sleeps carrying events of the current instant
        #: Every job's submission time, in submission order; the submissions the engine has
        #: revealed and the submitter has not posted yet.
        self._subtimes = deque(
            sorted(float(spec.subtime) for wl in engine.workloads for spec in wl.jobs)
        )
        self._sub_events: list[Event] = []
        self._submitter: _Sleep | None = None
        self._sub_wake = 0.0
        self._queue: deque[_Post] = deque()
        self._receiving: _Post | None = None
        self._remains = 0.0  # bytes left of the message travelling
        self._latency = 0.0  # its latency left (L07: no byte moves before it has elapsed)
        self._writer: list[Event] = []
        #: The REQ-REP actor's messages still to post, each with its timestamp.
        #: (the reply's value, Batsim's reading of it, the message).
        self._reqrep: deque[tuple[float, float, _Post]] = deque()
        self._busy = False  # the scheduler has a message and has not said SCHED_READY
        self._bye: list[Event] | None = None
        self._after: list[_Post] = []
        #: The REQ-REP actor's sleep until a timestamp after the engine's instant (a
        #: scheduling delay), not stepped towards before the engine reaches ``_due``.
        self._due_sleep: _Sleep | None = None
        self._due = math.inf
        self._seq = 0
        #: Each started job's SimGrid start and end times (Batsim reports these).
        self._fine: dict[str, list[float]] = {}
        #: The ``now`` of the last message (6 decimals: RapidJSON reads it back exactly).
        self._sent_now = 0.0

    # --- the engine's API -------------------------------------------------------------------
    def start(self) -> Message:
        message = self.engine.start()
        # The submitter said hello (one loopback message), then sleeps until the first
        # submission time.
        bandwidth, latency = self._loopback
        self._now = self._sub_wake = latency + 1.0 / bandwidth
        self._submitter_sleeps()
        return message

    def proceed(
        self,
        decisions: Sequence[Decision] = (),
        stamps: Sequence[float] | None = None,
        reply_now: float = -math.inf,
    ) -> Message:
        """Apply the reply to the last message and return Batsim's next message.

        The REQ-REP actor posts each decision to the server at its timestamp (``stamps``,
        as the reply gave them), sleeping first if SimGrid's clock is still below it, then
        SCHED_READY at ``reply_now``. Decisions timestamped at the engine's instant take
        effect in the engine at once; later ones (a scheduling delay: pybatsim's
        ``consume_time``) when the server receives them, at their timestamps, while the
        engine's instants of the meantime go on (their events wait in the server until the
        scheduler is ready, as in Batsim).
        """
        engine = self.engine
        if stamps is None:
            stamps = [-math.inf] * len(decisions)
        limit = engine.now + TIME_TOLERANCE
        now_count = 0
        while now_count < len(decisions) and stamps[now_count] <= limit:
            now_count += 1
        engine.apply(decisions[:now_count])
        # Batsim reads the reply's numbers with RapidJSON (``batsim_double``): a delayed
        # timestamp such as 1637935.1284560002 (17 digits) can come out one ulp away from
        # Python's, and the REQ-REP actor sleeps until that value. The engine keeps Python's.
        read = {self._sent_now: self._sent_now}  # a reply without delay echoes it
        reqrep = self._reqrep = deque()
        for index, (stamp, decision) in enumerate(zip(stamps, decisions)):
            action = "decision" if index < now_count else "later"
            post = _Post(_REQREP, self._loopback, [], action, decision, stamp)
            reqrep.append((stamp, _read(read, stamp), post))
        ready = _Post(_REQREP, self._loopback, [], "ready")
        reqrep.append((reply_now, _read(read, reply_now), ready))
        self._reqrep_posts(self._queue)
        if self._late:
            self._queue.extend(self._late)
            self._late = []
        message = self._run()
        while message is None:
            due = self._due_sleep
            when = engine.next_time()
            if due is not None and self._due <= when:
                # The REQ-REP actor's next post is the next instant (with the engine's, if
                # they coincide): from now on SimGrid steps towards it.
                self._due_sleep = None
                self._attached += 1
                if self._due < when:
                    message = self._run()
                    continue
            message = engine.proceed(())
            if message.events and message.events[0].type == SIMULATION_ENDS:
                return message
            self._attach(message.events)
            message = self._run()
        return message

    def report_times(self) -> int:
        """Give the engine's ended jobs the start and end times Batsim reports: SimGrid's
        clock when the job's actor started and ended (the nominal times plus the offsets of
        Batsim's internal messages, which add up to microseconds along chains of jobs on long
        traces). Call it once the simulation has ended, before writing the outputs; returns
        how many jobs it moved (everything else in the outputs stays the engine's)."""
        moved = 0
        for job in self.engine.finished_jobs:
            fine = self._fine.get(job.id)
            if fine is None or job.start_time is None or job.finish_time is None:
                continue
            start, end = fine
            if math.isnan(end):  # its end was not modelled (re-paced, killed...)
                end = start + (job.finish_time - job.start_time)
            if start != job.start_time or end != job.finish_time:
                moved += 1
                # Its hosts drew their power (constant while it ran: no P-state change is
                # timed) over the modelled duration, as SimGrid's energy plugin counts it.
                job.energy += job._power * ((end - start) - (job.finish_time - job.start_time))
            job.start_time = start
            job.finish_time = end
        return moved

    # --- sleeps -----------------------------------------------------------------------------
    def _sleep(
        self,
        kind: int,
        duration: float,
        route: _Route | None = None,
        job_id: str = "",
        rate: float = 0.0,
    ) -> _Sleep:
        """A sleep of ``duration`` s, or with ``rate`` > 0 a parallel task of that rate
        (SimGrid's L07: the fraction left, 1 now, drops by ``rate x delta`` at each step)."""
        if not self._free:
            size = len(self._rem)
            self._rem = np.concatenate([self._rem, np.full(size, np.inf)])
            self._prec = np.concatenate([self._prec, np.full(size, TIMING_PRECISION)])
            self._frac = np.concatenate([self._frac, np.zeros(size)])
            self._rate = np.concatenate([self._rate, np.zeros(size)])
            self._sleeps += [None] * size
            self._free = list(range(2 * size - 1, size - 1, -1))
        slot = self._free.pop()
        self._seq += 1
        sleep = _Sleep(kind, slot, route or self._loopback, self._seq, [], job_id)
        if rate > 0.0:
            self._frac[slot] = 1.0
            self._rate[slot] = rate
            self._rem[slot] = 1.0 / rate  # SimGrid's time to completion: remains / rate
            self._prec[slot] = 0.0
            self._set_ptask(slot, True)
        else:
            self._rem[slot] = duration
            self._prec[slot] = TIMING_PRECISION
        self._sleeps[slot] = sleep
        return sleep

    def _set_ptask(self, slot: int, on: bool) -> None:
        if on:
            self._ptasks.add(slot)
        else:
            self._ptasks.discard(slot)
        self._ptask_slots = np.fromiter(self._ptasks, np.intp, len(self._ptasks))

    def _release(self, sleep: _Sleep) -> None:
        self._rem[sleep.slot] = np.inf
        self._sleeps[sleep.slot] = None
        self._free.append(sleep.slot)
        if sleep.slot in self._ptasks:
            self._set_ptask(sleep.slot, False)
        if sleep.events:
            self._attached -= 1

    def _forget(self, job_id: str) -> None:
        sleep = self._jobs.pop(job_id, None)
        if sleep is not None:
            self._release(sleep)

    def _expects(self, sleep: _Sleep) -> bool:
        """Is ``sleep`` waiting for events the engine has not revealed yet (a job's end, the
        submitter's next submissions, a requested call)?"""
        if sleep.kind == _JOB:
            return self._jobs.get(sleep.job_id) is sleep
        if sleep.kind == _SUBMITTER:
            return self._submitter is sleep
        if sleep.kind == _WAITER:
            return any(sleep in waiting for waiting in self._waiters.values())
        return False

    def _reveal(self, sleep: _Sleep) -> None:
        """``sleep`` ended on SimGrid's clock before the engine reached its nominal instant:
        advance the engine (attaching its events) until ``sleep`` has its events.

        SimGrid's clock drifts from the nominal times (a job's sleep loses the rounding of
        every step: a 86,400 s walltime on Gaia ended 1.7e-8 s early), so the model can
        reach a job's end while stepping towards an earlier nominal instant, typically a
        delayed decision's timestamp (1050301.0099999998 for a kill due at 1050301.01).
        Batsim then sends the completion before that decision arrives; so does the model.
        Only instants within ``REPACED`` of the clock are revealed: a job that ends much
        later in the engine was slowed by a P-state change (it ends when the engine ends it).
        """
        engine = self.engine
        limit = self._now + self._repaced
        while not sleep.events and engine.next_time() <= limit:
            message = engine.proceed(())
            if message.events and message.events[0].type == SIMULATION_ENDS:
                raise AssertionError("the engine ended with a job still running")
            self._attach(message.events)

    def _submitter_sleeps(self) -> None:
        """The submitter sleeps (next submission time - its last wake-up), in doubles."""
        if self._subtimes:
            wait = self._subtimes[0] - self._sub_wake
            sleep = self._submitter = self._sleep(_SUBMITTER, wait if wait > 0.0 else 0.0)
            if self._sub_events:
                sleep.events = self._sub_events
                self._attached += 1
        else:
            self._submitter = None

    def _submitter_wakes(self) -> list[Event]:
        """Batsim's submitter woke up now: it posts the job it slept for and every next one
        already due (``submission_time <= now``: a clock that rounded below a submission time
        splits that time's jobs into two messages)."""
        now = self._sub_wake = self._now
        subtimes = self._subtimes
        count = 1
        subtimes.popleft()
        while subtimes and subtimes[0] <= now:
            subtimes.popleft()
            count += 1
        events = self._sub_events[:count]
        del self._sub_events[:count]
        self._submitter = None
        return events

    def _started(self, decision: Decision) -> None:
        """The server handled ``decision`` now: a job starts sleeping, a waiter waits."""
        if type(decision) is ExecuteJob:
            if self._energy:  # Batsim's energy trace at the job's start updates every host
                self._fresh = self._now
            job = self.engine.jobs[decision.job_id]
            self._forget(job.id)
            self._fine[job.id] = [self._now, math.nan]
            duration, rate = _run_time(self.engine, job)
            host_bw = self._routes[job.alloc[0]] if job.alloc else self._loopback
            if duration != math.inf:
                self._jobs[job.id] = self._sleep(_JOB, duration, host_bw, job.id, rate)
        elif type(decision) is CallMeLater:
            target = float(decision.timestamp)
            wait = batsim_double(target) - self._now  # as Batsim reads it (RapidJSON)
            sleep = self._sleep(_WAITER, wait if wait >= MIN_WAIT else MIN_WAIT)
            self._waiters.setdefault(target, deque()).append(sleep)

    def _reqrep_posts(self, posts: list[_Post] | deque[_Post]) -> None:
        """The REQ-REP actor posts its next message, or sleeps until its timestamp."""
        stamp, when, post = self._reqrep.popleft()
        if when > self._now:  # ``send_message_at_time``: sleep ``when - clock``, in doubles
            sleep = self._sleep(_REQREP, when - self._now)
            sleep.post = post
            if stamp > self.engine.now + TIME_TOLERANCE:
                # After the engine's instant: the engine's instants before it come first.
                self._due_sleep = sleep
                self._due = stamp
            else:  # a clock that rounded below the ``now`` Batsim printed
                self._attached += 1
        else:
            posts.append(post)

    def _attach(self, events: list[Event]) -> None:
        """Give the engine's events of a new instant to the sleeps that end with them."""
        subs: list[Event] = []
        nominal = self.engine.now
        for event in events:
            kind = event.type
            sleep: _Sleep | None = None
            if kind == JOB_COMPLETED and event.data["job_state"] in _RUN_ENDS:
                job = event.data["job"]
                sleep = self._jobs.pop(job.id, None)
                if (
                    sleep is not None
                    and self._now + self._rem[sleep.slot] > nominal + self._repaced
                ):
                    # Sped up by a P-state change after it started (the model timed it at
                    # its first speed): it ends at this instant, not when it was due.
                    wait = nominal - self._now
                    self._rem[sleep.slot] = wait if wait > 0.0 else 0.0
                    if sleep.slot in self._ptasks:  # now a plain sleep to that instant
                        self._prec[sleep.slot] = TIMING_PRECISION
                        self._set_ptask(sleep.slot, False)
                if sleep is None:  # not modelled (slowed down, re-paced): it ends now
                    bw = self._routes[job.alloc[0]] if job.alloc else None
                    sleep = self._sleep(_JOB, 0.0, bw, job.id)
            elif kind == JOB_SUBMITTED:
                subs.append(event)
                continue
            elif kind == NO_MORE_STATIC_JOB_TO_SUBMIT and subs:
                self._bye = [event]  # posted once the last submission is received
                continue
            elif kind == REQUESTED_CALL:
                waiting = self._waiters.get(event.data["requested_at"])
                sleep = waiting.popleft() if waiting else self._sleep(_WAITER, 0.0)
                if waiting is not None and not waiting:
                    del self._waiters[event.data["requested_at"]]
            else:  # caused by decisions of this instant (kills, P-state changes): known now
                if kind == JOB_COMPLETED:
                    self._forget(event.data["job_id"])
                self._writer.append(event)
                continue
            if not sleep.events:
                self._attached += 1
            sleep.events.append(event)
        if subs:
            self._sub_events += subs
            sleep = self._submitter
            if sleep is None:
                sleep = self._submitter = self._sleep(_SUBMITTER, 0.0)
            if not sleep.events:
                sleep.events = self._sub_events
                self._attached += 1

    # --- SimGrid steps ----------------------------------------------------------------------
    def _run(self) -> Message | None:
        """Step SimGrid until the server sends a message (returned) or nothing of the current
        instant is left (None)."""
        queue = self._queue
        sleeps = self._sleeps
        while True:
            if self._receiving is None and queue:  # the server takes the first message
                self._receiving = queue.popleft()
                self._remains = 1.0
                self._latency = self._receiving.route[1]
                self._seq += 1
                self._comm_seq = self._seq  # the transfer is a SimGrid action from now
            receiving = self._receiving
            if receiving is None and not self._attached:
                if self._writer and not self._busy:
                    return self._send()
                return None
            rem = self._rem
            nearest = delta = float(rem.min())
            if receiving is not None:
                if self._latency > 0.0:
                    delta = min(delta, self._latency)
                else:
                    delta = min(delta, self._remains / receiving.route[0])
            self._now += delta
            rem -= delta
            done = ()
            if len(self._ptask_slots):
                # Parallel tasks, as L07's update_actions_state: remains -= rate x delta,
                # 0 below precision/work-amount x precision/timing (then finished); the next
                # step's candidate is remains / rate.
                slots = self._ptask_slots
                rates = self._rate[slots]
                left = self._frac[slots] - rates * delta
                left[left < WORK_PRECISION] = 0.0
                self._frac[slots] = left
                rem[slots] = left / rates
                done = slots[left == 0.0]
                rem[done] = -1.0
            # Nothing ends unless the nearest sleep gets within the largest precision.
            ended = np.flatnonzero(rem < self._prec) if nearest - delta < self._max_prec else ()
            if len(done):
                ended = np.union1d(ended, done)
            fired = []
            for slot in ended:
                sleep = sleeps[slot]
                if sleep is None:  # never: an ended slot holds its sleep
                    continue
                if not sleep.events and sleep.post is None and self._expects(sleep):
                    self._reveal(sleep)
            for slot in ended:
                sleep = sleeps[slot]
                if sleep is None:  # never: an ended slot holds its sleep
                    continue
                self._rem[slot] = np.inf
                sleeps[slot] = None
                self._free.append(int(slot))
                if slot in self._ptasks:
                    self._set_ptask(int(slot), False)
                if sleep.kind == _JOB:
                    self._jobs.pop(sleep.job_id, None)
                    fine = self._fine.get(sleep.job_id)
                    if fine is not None and sleep.events:
                        fine[1] = self._now
                if sleep is self._due_sleep:  # woke before the engine reached it
                    self._due_sleep = None
                    fired.append(sleep)
                elif sleep.events or sleep.post is not None:
                    self._attached -= 1
                    fired.append(sleep)
                elif sleep.kind == _SUBMITTER:
                    # A submission time without submissions in the engine: should not happen.
                    self._submitter = None
            # Has every host's energy been brought up to this clock value (by a job that
            # started or ended at an earlier step with the same clock)?
            fresh = self._fresh == self._now
            message = None
            comm_seq = self._comm_seq
            if receiving is not None:
                bandwidth = receiving.route[0]
                if self._latency > 0.0:  # L07: bytes move from the next step on
                    latency_left = self._latency - delta
                    self._latency = latency_left if latency_left >= TIMING_PRECISION else 0.0
                    if bandwidth == math.inf and self._latency == 0.0:
                        self._remains = 0.0
                elif bandwidth == math.inf:  # no link: received at once
                    self._remains = 0.0
                else:
                    self._remains -= bandwidth * delta
                if self._remains < WORK_PRECISION:
                    self._receiving = None
                    message = self._handle(receiving)
            # Messages posted in this step, in the order the actors post them. SimGrid runs the
            # actors woken by ended actions in the order those actions began, one call each per
            # sub-round: the master_host actors post at once (the submitter, waiters, the
            # REQ-REP actor, whether a sleep or the received message woke them), and so do
            # ending jobs if the clock is fresh; otherwise a job first brings every stale host's
            # energy up to date (Batsim's energy trace sums all hosts; one SimGrid call per
            # host), so it posts after everyone, even after a REQ-REP actor created now.
            now_posts: list[tuple[int, _Post]] = [(comm_seq, post) for post in self._after]
            self._after = []
            late: list[tuple[int, _Post]] = []
            for sleep in fired:
                if sleep.post is not None:
                    now_posts.append((sleep.seq, sleep.post))
                    continue
                events = self._submitter_wakes() if sleep.kind == _SUBMITTER else sleep.events
                post = _Post(sleep.kind, sleep.route, events)
                if sleep.kind == _JOB and self._energy:
                    self._fresh = self._now
                    if not fresh:
                        late.append((sleep.seq, post))
                        continue
                now_posts.append((sleep.seq, post))
            now_posts.sort(key=_first)
            queue.extend(post for _, post in now_posts)
            late.sort(key=_first)
            if message is not None:  # the new REQ-REP actor posts before them
                self._late = [post for _, post in late]
                return message
            queue.extend(post for _, post in late)

    def _handle(self, post: _Post) -> Message | None:
        """The server receives ``post`` now, then sends a message if its mailbox is empty
        (messages posted in this very step are not there yet) and the scheduler ready."""
        if post.action == "decision":
            self._started(post.payload)
            self._reqrep_posts(self._after)
        elif post.action == "later":  # a delayed decision takes effect in the engine now
            engine = self.engine
            stamp = post.stamp
            if engine.next_time() < stamp:  # the engine's next instant came later here
                stamp = engine.now
            engine.apply_at(stamp, (post.payload,))
            self._started(post.payload)
            self._reqrep_posts(self._after)
        elif post.action == "ready":
            self._busy = False
        else:
            self._writer += post.events
            if post.kind == _SUBMITTER and post.events and post.events[0].type == JOB_SUBMITTED:
                self._submitter_sleeps()
                if self._bye is not None and not self._sub_events:
                    self._after.append(_Post(_SUBMITTER, self._loopback, self._bye))
                    self._bye = None
        if self._writer and not self._busy and not self._queue:
            return self._send()
        return None

    def _send(self) -> Message:
        events = self._writer
        self._writer = []
        self._busy = True
        # Batsim prints its clock with 6 decimals (``%f``): the scheduler's ``now``, which
        # its reply's timestamps echo (and its decisions may depend on).
        now = self._sent_now = float(f"{self._now:.6f}")
        return Message(now, events)


def _run_time(engine: Engine, job: Any) -> tuple[float, float]:
    """How long Batsim's job actor sleeps, or at what rate it computes: ``(duration, rate)``,
    rate 0 for a sleep. A delay job sleeps ``delay`` unless its walltime is not longer (then the
    walltime). A parallel task computes ``flops`` per host (``cpu``, or ``cpu / hosts`` for
    ``parallel_homogeneous_total``) at SimGrid L07's rate, ``speed / flops`` for its slowest
    host (the fair-bottleneck share of a host it alone uses, equal to the task's CPU bound),
    as a fraction of the task per second; it takes ``1 / rate`` s unless its walltime is not
    longer. P-state changes during the task are not modelled."""
    profile = job.profile
    walltime = job.spec.walltime
    if walltime is not None:
        walltime = batsim_double(walltime)
    if profile.type == "delay":
        duration = batsim_double(profile.delay or 0.0)
    else:
        work = batsim_double(profile.cpu or 0.0)
        if profile.type == "parallel_homogeneous_total":
            work /= len(job.alloc)
        speed = min(engine.host_speed(h) for h in job.alloc)
        rate = speed / work if speed > 0.0 and work > 0.0 else 0.0
        duration = 1.0 / rate if rate > 0.0 else (0.0 if work <= 0.0 else math.inf)
        if rate > 0.0 and (walltime is None or duration < walltime):
            return duration, rate
    if walltime is not None and not duration < walltime:
        return float(walltime), 0.0
    return duration, 0.0


def batsim_double(value: float) -> float:
    """``value`` as Batsim reads it from a workload file: RapidJSON's default number parsing
    (``Document::Parse`` without ``kParseFullPrecisionFlag``) of the text Python writes for it
    (``repr``, what ``json.dump`` writes). That parser builds the significand in integers
    while it stays below 2^53, then in doubles (``d * 10 + digit``, at most 17 digits), and
    scales once by a power of ten: a number of 17 significant digits (common in converted
    workloads: ``242168380631578.97``) may come out one ulp away from the correctly rounded
    value Python reads, and a parallel task's rate with it."""
    text = repr(float(value))
    if text in ("inf", "-inf", "nan"):
        return float(value)
    pos = 0
    minus = text[0] == "-"
    if minus:
        pos = 1
    n = len(text)

    def digit(at: int) -> int:
        return ord(text[at]) - 48 if at < n and "0" <= text[at] <= "9" else -1

    i = 0  # RapidJSON's unsigned, uint64 and double significands
    i64 = 0
    use64 = use_double = False
    d = 0.0
    significant = 0
    limit32, last32 = (214748364, 8) if minus else (429496729, 5)
    if digit(pos) == 0:
        pos += 1
    else:
        i = digit(pos)
        pos += 1
        while (c := digit(pos)) >= 0:
            if i >= limit32 and (i != limit32 or c > last32):
                i64, use64 = i, True
                break
            i = i * 10 + c
            significant += 1
            pos += 1
    if use64:
        limit64, last64 = (0x0CCCCCCCCCCCCCCC, 8) if minus else (0x1999999999999999, 5)
        while (c := digit(pos)) >= 0:
            if i64 >= limit64 and (i64 != limit64 or c > last64):
                d, use_double = float(i64), True
                break
            i64 = i64 * 10 + c
            significant += 1
            pos += 1
    if use_double:
        while (c := digit(pos)) >= 0:
            d = d * 10 + c
            pos += 1
    exp_frac = 0
    if pos < n and text[pos] == ".":
        pos += 1
        if not use_double:
            if not use64:
                i64 = i
            while (c := digit(pos)) >= 0:
                if i64 > (1 << 53) - 1:
                    break
                i64 = i64 * 10 + c
                exp_frac -= 1
                if i64 != 0:
                    significant += 1
                pos += 1
            d, use_double = float(i64), True
        while (c := digit(pos)) >= 0:
            if significant < 17:
                d = d * 10.0 + c
                exp_frac -= 1
                if d > 0.0:
                    significant += 1
            pos += 1
    exp = 0
    if pos < n and text[pos] in "eE":
        if not use_double:
            d, use_double = float(i64 if use64 else i), True
        pos += 1
        exp_minus = text[pos] == "-"
        if text[pos] in "+-":
            pos += 1
        exp = int(text[pos:])
        if exp_minus:
            exp = -exp
    if not use_double:
        result = float(i64 if use64 else i)
    else:
        power = exp + exp_frac
        if power < -308:
            d = d / float("1e308")
            power += 308
        result = d * float(f"1e{power}") if power >= 0 else d / float(f"1e{-power}")
    return -result if minus else result


_RUN_ENDS = (COMPLETED_SUCCESSFULLY, COMPLETED_WALLTIME_REACHED)


def _read(memo: dict[float, float], value: float) -> float:
    """:func:`batsim_double` of ``value``, once per distinct value of a reply (a delayed
    reply repeats one timestamp in every decision and its ``now``)."""
    found = memo.get(value)
    if found is None:
        found = memo[value] = batsim_double(value)
    return found


def _duration(route: _Route) -> float:
    """How long a 1-byte message takes over ``route``."""
    bandwidth, latency = route
    return latency + 1.0 / bandwidth


def _as_route(value: float | _Route) -> _Route:
    """A route given as bytes/s alone has no latency."""
    return value if isinstance(value, tuple) else (float(value), 0.0)


def _first(pair: tuple[int, _Post]) -> int:
    return pair[0]


__all__ = [
    "LOOPBACK_BANDWIDTH",
    "TIMING_PRECISION",
    "BatsimTiming",
    "batsim_double",
    "PlatformRoutes",
    "check_batsim_accepts",
    "completion_bandwidths",
    "message_routes",
]
