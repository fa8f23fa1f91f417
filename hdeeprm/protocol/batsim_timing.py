"""Batsim 4.2.1's timing of the events of one instant: how they are ordered and split into
messages (``hdeeprm-sim --batsim-timing``).

The embedded engine sends every event of an instant in one message. Batsim does not: its
server (``src/server.cpp``) receives *internal messages*, 1-byte SimGrid communications that
take simulated time, one at a time from a FIFO mailbox, and sends a message to the scheduler
whenever, after handling one, its mailbox is empty and the scheduler is not busy. Which events
travel together therefore depends on sub-nanosecond offsets. Measured on Batsim 4.2.1 (debug
logs of the server and of ``ipp``, ``docs/batsim.md``):

* an internal message between actors of ``master_host`` (the submitter, the scheduler's
  REQ-REP actor, the ``CALL_ME_LATER`` waiters) takes SimGrid's loopback time, 1e-10 s;
* a job's completion is sent by an actor on the job's first host: 1 byte over its route to
  ``master_host`` (the slowest link's bandwidth plus the links' latencies, SimGrid's L07 model);
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
The fine times only order and group events: the engine's clock, the reported times and every
output stay the engine's (Batsim prints 1 us anyway). Decisions of a reply take effect in the
engine at once, at the instant's time; their fine times only feed the next instants' offsets.
"""

from __future__ import annotations

import heapq
import math
import os
import re
import xml.etree.ElementTree as ET
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hdeeprm.errors import InputError
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

#: SimGrid's loopback: 1 byte at 10 GB/s, no latency (one internal message on master_host).
LOOPBACK = 1e-10
#: SimGrid's ``precision/timing``: a sleep due within this of the current step ends with it.
TIMING_PRECISION = 1e-9
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


def completion_transfer_times(
    platform_file: str | os.PathLike[str], master_host: str = "master_host"
) -> dict[str, float]:
    """Host name -> seconds a 1-byte message takes from the host to ``master_host``: the links
    of its route in its zone (``<route src=host>``) and of its zone's route to the master's
    zone (``<zoneRoute>``), as SimGrid's L07 model times it (latencies + 1 / slowest bandwidth).

    Written for the platforms hdeeprm generates (one zone per cluster); a host whose route is
    not found this way gets :data:`LOOPBACK`."""
    path = os.fspath(platform_file)
    root = ET.parse(path).getroot()
    links: dict[str, tuple[float, float]] = {}
    for link in root.iter("link"):
        links[link.get("id", "")] = (
            _bandwidth(link.get("bandwidth", "0"), path),
            _latency(link.get("latency", "0"), path),
        )

    def route_links(element: ET.Element) -> list[tuple[float, float]]:
        return [links[c.get("id", "")] for c in element.iter("link_ctn") if c.get("id") in links]

    zone_of: dict[str, str] = {}
    host_links: dict[str, list[tuple[float, float]]] = {}
    zone_links: dict[str, list[tuple[float, float]]] = {}
    master_zone = None
    for zone in root.iter("zone"):
        zid = zone.get("id", "")
        for host in zone.findall("host"):
            zone_of[host.get("id", "")] = zid
            if host.get("id") == master_host:
                master_zone = zid
        for route in zone.findall("route"):
            host_links.setdefault(route.get("src", ""), []).extend(route_links(route))
    for zroute in root.iter("zoneRoute"):
        if zroute.get("dst") == master_zone:
            zone_links[zroute.get("src", "")] = route_links(zroute)
    times: dict[str, float] = {}
    for host, zone in zone_of.items():
        if host == master_host:
            continue
        route = host_links.get(host, []) + zone_links.get(zone, [])
        if not route or min(bw for bw, _ in route) <= 0:
            times[host] = LOOPBACK
            continue
        times[host] = sum(lat for _, lat in route) + 1.0 / min(bw for bw, _ in route)
    return times


@dataclass(order=True)
class _Sleep:
    due: float
    kind: int
    seq: int
    events: list[Event] = field(compare=False)
    #: Transfer time of the message it posts when it ends.
    transfer: float = field(compare=False, default=LOOPBACK)


@dataclass(slots=True)
class _Post:
    """An internal message in the server's mailbox."""

    kind: int
    transfer: float
    events: list[Event]
    #: What receiving it does besides queueing ``events``: "ready", "decision" or "".
    action: str = ""
    payload: Any = None


class BatsimTiming:
    """Serve ``engine``'s events in Batsim's messages (see the module docstring).

    Use it in place of the engine's ``start``/``proceed``/``proceed_timed``: each call returns
    the next message Batsim would send. ``transfer`` maps a host id to the seconds a 1-byte
    message takes from it to the master host (:func:`completion_transfer_times`).
    """

    def __init__(self, engine: Engine, transfer: Sequence[float]) -> None:
        self.engine = engine
        self._transfer = list(transfer)
        #: Fine start time of each running job (absent: its nominal start).
        self._start: dict[str, float] = {}
        #: Fine due times of the pending CALL_ME_LATER, by requested time.
        self._calls: dict[float, deque[float]] = {}
        # The submitter: its last wake-up, when it posted and when its message was received.
        self._sub_wake = LOOPBACK
        self._sub_posted = LOOPBACK
        self._sub_done = LOOPBACK
        self._seq = 0
        # --- the server and its mailbox ---
        self._t = 0.0  # fine clock
        self._nominal = 0.0  # the engine's instant
        self._sleeps: list[_Sleep] = []
        self._queue: deque[_Post] = deque()
        self._receiving: _Post | None = None
        self._recv_end = math.inf
        self._writer: list[Event] = []
        self._reqrep: deque[_Post] = deque()
        self._bye: list[Event] | None = None
        self._after: list[_Post] = []

    # --- the engine's API -------------------------------------------------------------------
    def start(self) -> Message:
        return self.engine.start()

    def proceed(self, decisions: Sequence[Decision] = ()) -> Message:
        """Apply the reply to the last message (its decisions reach the server one by one,
        then SCHED_READY) and return Batsim's next message."""
        self.engine.apply(decisions)
        self._reqrep = deque(_Post(_REQREP, LOOPBACK, [], "decision", d) for d in decisions)
        self._reqrep.append(_Post(_REQREP, LOOPBACK, [], "ready"))
        self._queue.append(self._reqrep.popleft())
        message = self._run()
        return message if message is not None else self._next_instant()

    def proceed_timed(
        self, decisions: Sequence[tuple[float, Decision]], ready_at: float
    ) -> Message:
        """A reply with scheduling delays: as the engine (the events of the meantime held and
        sent at ``ready_at``), after the events of this instant still in transit."""
        pending = self._drain()
        for when, decision in decisions:
            self._note_decision(decision, max(when, self._t) + LOOPBACK)
        message = self.engine.proceed_timed(decisions, ready_at)
        self._t = max(self._t, message.now)
        self._nominal = message.now
        if pending:
            message = Message(message.now, pending + message.events)
        return message

    # --- the model --------------------------------------------------------------------------
    def _note_decision(self, decision: Decision, when: float) -> None:
        kind = type(decision)
        if kind is ExecuteJob:
            self._start[decision.job_id] = when
        elif kind is CallMeLater:
            target = float(decision.timestamp)
            due = target if target - when >= MIN_WAIT else when + MIN_WAIT
            self._calls.setdefault(target, deque()).append(due)

    def _next_instant(self) -> Message:
        """Advance the engine and replay its next instant up to Batsim's first message."""
        message = self.engine.proceed(())
        events = message.events
        if events and events[0].type == SIMULATION_ENDS:
            return message
        self._nominal = message.now
        self._schedule(message.now, events)
        result = self._run()
        if result is None:  # every event is sent before the model drains
            raise AssertionError(f"Batsim timing: events of t={message.now!r} not sent")
        return result

    def _fine_end(self, event: Event, now: float) -> float:
        job = event.data["job"]
        start = self._start.pop(job.id, None)
        if start is None or job.start_time is None:
            return now
        profile = job.profile
        if event.data["job_state"] == COMPLETED_WALLTIME_REACHED and job.spec.walltime:
            return start + float(job.spec.walltime)
        if profile.type == "delay":
            return start + float(profile.delay or 0.0)
        return start + (now - job.start_time)

    def _schedule(self, now: float, events: list[Event]) -> None:
        """The engine's events of instant ``now`` as sleeps (what ends in SimGrid: jobs, the
        submitter, waiters) or, for the consequences of decisions, as already known."""
        subs: list[Event] = []
        seq = self._seq
        sleeps = self._sleeps
        transfer = self._transfer
        for event in events:
            kind = event.type
            seq += 1
            if kind == JOB_COMPLETED and event.data["job_state"] in _RUN_ENDS:
                job = event.data["job"]
                due = self._fine_end(event, now)
                sleeps.append(_Sleep(due, _JOB, seq, [event], transfer[job.alloc[0]]))
            elif kind == JOB_SUBMITTED:
                subs.append(event)
            elif kind == NO_MORE_STATIC_JOB_TO_SUBMIT and subs:
                self._bye = [event]  # posted once the last submission is received
            elif kind == REQUESTED_CALL:
                target = event.data["requested_at"]
                dues = self._calls.get(target)
                due = dues.popleft() if dues else now
                if dues is not None and not dues:
                    del self._calls[target]
                sleeps.append(_Sleep(due, _WAITER, seq, [event]))
            else:  # kills, P-state changes: caused by decisions of this instant
                self._writer.append(event)
        if subs:
            # It slept from its last wake-up for (submission time - that wake-up), starting
            # once its previous message had been received.
            seq += 1
            wake = self._sub_done + (now - self._sub_wake)
            sleeps.append(_Sleep(wake, _SUBMITTER, seq, subs))
        self._seq = seq
        heapq.heapify(sleeps)

    def _run(self) -> Message | None:
        """Run the server until it sends a message (returned) or nothing is left."""
        sleeps = self._sleeps
        queue = self._queue
        while True:
            if self._receiving is None and queue:  # the server takes the first message
                post = self._receiving = queue.popleft()
                self._recv_end = self._t + post.transfer
            step = min(self._recv_end, sleeps[0].due if sleeps else math.inf)
            if step == math.inf:
                return self._send() if self._writer and not self._reqrep else None
            if step > self._t:
                self._t = step
            now = self._t
            fired: list[_Sleep] = []
            while sleeps and sleeps[0].due - now < TIMING_PRECISION:
                fired.append(heapq.heappop(sleeps))
            message = None
            if self._recv_end <= now:
                post = self._receiving
                self._receiving = None
                self._recv_end = math.inf
                message = self._handle(post, now)
            # Messages posted in this step, in the order the actors post them: the submitter
            # and waiters (one call), the REQ-REP actor, then the jobs (several calls first).
            fired.sort(key=lambda s: (s.kind, s.due, s.seq))
            for sleep in fired:
                if sleep.kind == _SUBMITTER:
                    self._sub_wake = self._sub_posted = now
                if sleep.kind == _JOB and self._after:
                    queue.extend(self._after)
                    self._after = []
                queue.append(_Post(sleep.kind, sleep.transfer, sleep.events))
            if self._after:
                queue.extend(self._after)
                self._after = []
            if message is not None:
                return message

    def _handle(self, post: _Post, now: float) -> Message | None:
        """The server receives ``post`` at ``now``, then sends a message if its mailbox is
        empty (messages posted in this very step are not there yet) and the scheduler ready."""
        if post.action == "decision":
            self._note_decision(post.payload, now)
            self._after.append(self._reqrep.popleft())
        elif post.action == "ready":
            self._reqrep.clear()
        else:
            self._writer += post.events
            if post.kind == _SUBMITTER:
                self._sub_done = now
                if self._bye is not None:
                    self._after.append(_Post(_SUBMITTER, LOOPBACK, self._bye))
                    self._bye = None
        if self._writer and not self._reqrep and not self._queue:
            return self._send()
        return None

    def _send(self) -> Message:
        events = self._writer
        self._writer = []
        self._reqrep.append(_Post(_REQREP, LOOPBACK, [], "busy"))  # until the reply
        return Message(self._nominal, events)

    def _drain(self) -> list[Event]:
        """Every event of this instant not sent yet, in the order Batsim receives them."""
        out = self._writer
        self._writer = []
        if self._receiving is not None:
            out += self._receiving.events
            self._receiving = None
            self._recv_end = math.inf
        for post in self._queue:
            out += post.events
        self._queue.clear()
        for sleep in sorted(self._sleeps, key=lambda s: (s.due, s.kind, s.seq)):
            out += sleep.events
        self._sleeps.clear()
        if self._bye is not None:
            out += self._bye
            self._bye = None
        self._reqrep.clear()
        self._after = []
        return out


_RUN_ENDS = (COMPLETED_SUCCESSFULLY, COMPLETED_WALLTIME_REACHED)


__all__ = ["LOOPBACK", "TIMING_PRECISION", "BatsimTiming", "completion_transfer_times"]
