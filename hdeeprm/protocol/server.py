"""The embedded engine behind Batsim's socket: existing Batsim schedulers run on hdeeprm.

Batsim 4.x is the ZeroMQ REQ side: it connects to the scheduler's bound REP socket, sends the
events of one instant, waits for the reply, applies the decisions and moves on.
:class:`ProtocolServer` does exactly that with an :class:`~hdeeprm.simulation.Engine`, so a
scheduler written for Batsim (pybatsim, batsched, or hdeeprm's own client) connects to it as it
would to Batsim with the same ``platform.xml`` and ``workload.json``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hdeeprm.errors import InputError
from hdeeprm.protocol.batsim_timing import BatsimTiming
from hdeeprm.protocol.codec import (
    TIME_TOLERANCE,
    EventEncoder,
    read_reply,
    reply_time,
)
from hdeeprm.protocol.errors import ProtocolError
from hdeeprm.protocol.transport import (
    DEFAULT_ENDPOINT,
    DEFAULT_TRANSPORT,
    TRANSPORTS,
    check_endpoint,
    open_requester,
)
from hdeeprm.simulation.engine import Engine
from hdeeprm.simulation.events import SetResourceState

LOG = logging.getLogger("hdeeprm.protocol")

#: Default longest wait for one scheduler reply (s); 0 or None waits forever, as Batsim does.
DEFAULT_SERVER_TIMEOUT = 300.0


@dataclass(slots=True)
class ServeStats:
    """What one served simulation cost."""

    messages: int
    events: int
    #: Wall-clock seconds of the whole exchange.
    wall_time: float
    #: Wall-clock seconds spent waiting for the scheduler's replies (Batsim's scheduling_time).
    scheduling_time: float
    #: CPU seconds this process spent on the exchange (all threads, ZeroMQ's I/O thread
    #: included): the figure to judge the server's cost by on a shared machine.
    cpu_time: float = 0.0


def _refuse_pstate_changes(decisions: list, where: str) -> None:
    for index, decision in enumerate(decisions):
        if isinstance(decision, SetResourceState):
            raise ProtocolError(
                "SET_RESOURCE_STATE needs energy simulation, as in Batsim (which aborts): "
                "run hdeeprm-sim with -E",
                f"{where}, decision {index}",
            )


class ProtocolServer:
    """Serve ``engine`` to a scheduler over Batsim 4.x's JSON protocol.

    Args:
        engine: a fresh (not started) engine.
        endpoint: the scheduler's endpoint, to connect to (Batsim's ``-s``).
        timeout: longest wait for one reply, in seconds (None or <= 0: forever).
        encoder: message encoder (default: Batsim's defaults, no profile forwarding).
        workload_paths: workload name -> file path, sent in ``SIMULATION_BEGINS``.
        allow_pstate_changes: accept ``SET_RESOURCE_STATE`` (Batsim accepts it only with
            energy simulated, ``-E``).
        timing: order and split each instant's events as Batsim 4.2.1 does
            (:class:`~hdeeprm.protocol.batsim_timing.BatsimTiming` on ``engine``); default:
            one message per instant, as the embedded engine.
        transport: ``builtin`` (default: ZMTP over a plain socket,
            :mod:`hdeeprm.protocol.zmtp`, no ZeroMQ I/O thread) or ``pyzmq`` (libzmq's REQ
            socket); the scheduler sees no difference.
    """

    def __init__(
        self,
        engine: Engine,
        endpoint: str = DEFAULT_ENDPOINT,
        *,
        timeout: float | None = DEFAULT_SERVER_TIMEOUT,
        encoder: EventEncoder | None = None,
        workload_paths: Mapping[str, str] | None = None,
        allow_pstate_changes: bool = True,
        timing: BatsimTiming | None = None,
        transport: str = DEFAULT_TRANSPORT,
    ) -> None:
        if transport not in TRANSPORTS:
            raise InputError(
                f"unknown transport {transport!r}; expected one of {', '.join(TRANSPORTS)}",
                where="transport",
            )
        self.transport = transport
        self.engine = engine
        self.timing = timing
        self.allow_pstate_changes = allow_pstate_changes
        self.endpoint = check_endpoint(endpoint, "endpoint (-s)", connect=True)
        self.timeout = timeout
        self.encoder = encoder if encoder is not None else EventEncoder(workload_paths)
        #: Scheduler events accepted but ignored (SET_JOB_METADATA, NOTIFY), for inspection.
        self.ignored: list[dict[str, Any]] = []

    def run(self) -> ServeStats:
        """Run the whole simulation; return when the scheduler has answered ``SIMULATION_ENDS``.

        Raises:
            PeerTimeoutError: the scheduler did not answer within ``timeout``.
            ProtocolError: it answered something that is not a valid Batsim reply.
            SimulationError: it took a decision the engine refuses (unknown job, busy host...).
        """
        engine = self.engine
        sim = self.timing if self.timing is not None else engine
        encode = self.encoder.encode_bytes
        clock = time.perf_counter
        start = clock()
        cpu_start = time.process_time()
        waiting = 0.0
        replies = 0
        # The scheduler's clock: the ``now`` of its last reply (pybatsim adds a tiny scheduling
        # delay, 1e-21 s, to each reply; Batsim then reports that time as ``now``).
        scheduler_now = 0.0
        trace = LOG.isEnabledFor(logging.DEBUG)  # every message, as Batsim's network/INFO log
        peer = f"the scheduler at {self.endpoint}"
        link = open_requester(self.endpoint, self.timeout, peer=peer, transport=self.transport)
        send, recv = link.send, link.recv
        try:
            message = sim.start()
            while True:
                raw_out = encode(message, scheduler_now if scheduler_now > message.now else None)
                if trace:
                    LOG.debug("Sending %s", raw_out.decode())
                send(raw_out)
                tick = clock()
                raw = recv()
                if trace:
                    LOG.debug("Received %s", raw.decode("utf-8", "replace"))
                waiting += clock() - tick
                replies += 1
                if engine.finished:
                    break  # the reply to SIMULATION_ENDS carries nothing (Batsim ignores it)
                reply_now, decisions, stamps = read_reply(
                    raw, f"reply {replies}", self.ignored, engine.nb_hosts
                )
                if not self.allow_pstate_changes:
                    _refuse_pstate_changes(decisions, f"reply {replies}")
                limit = message.now + TIME_TOLERANCE
                delayed = reply_now > limit or (stamps and max(stamps) > limit)
                if not delayed:
                    scheduler_now = max(scheduler_now, reply_now)
                if self.timing is not None:  # delays included: each decision at its stamp
                    message = self.timing.proceed(decisions, stamps, reply_now)
                elif delayed:
                    # A scheduling delay (pybatsim's fillerSched answers 5 ms later): each
                    # decision at its timestamp, the next message at the reply's now.
                    message = engine.proceed_timed(list(zip(stamps, decisions)), reply_now)
                else:
                    message = engine.proceed(decisions)
        finally:
            link.close()
        if self.ignored:
            LOG.info("ignored %d SET_JOB_METADATA/NOTIFY event(s)", len(self.ignored))
        messages = engine.nb_messages if self.timing is None else replies
        wall = clock() - start
        cpu = time.process_time() - cpu_start
        return ServeStats(messages, engine.nb_events, wall, waiting, cpu)


__all__ = ["DEFAULT_SERVER_TIMEOUT", "ProtocolServer", "ServeStats", "reply_time"]
