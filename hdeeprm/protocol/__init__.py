"""Batsim 4.x's JSON protocol over ZeroMQ, both ways.

* **hdeeprm on a real Batsim** (client): :class:`BatsimSimulation` starts a Batsim process and
  offers the embedded engine's pull API (``start()``, ``proceed(decisions)``), so the same
  decision system runs on either; :func:`hdeeprm.protocol.experiment.run_classic_batsim` is
  ``hdeeprm-launch --simulator batsim``.
* **Batsim schedulers on hdeeprm** (server): :class:`ProtocolServer` puts the embedded engine
  behind Batsim's socket; ``hdeeprm-sim`` is its command line, with Batsim's flags.
* :mod:`hdeeprm.protocol.codec` translates messages and decisions in both directions;
  :mod:`hdeeprm.protocol.zmtp` is the server's own ZeroMQ REQ end (ZMTP 3.0 on a plain socket,
  ``hdeeprm-sim --transport builtin``).

See ``docs/batsim.md``.
"""

from hdeeprm.protocol.client import (
    DEFAULT_CLIENT_TIMEOUT,
    BatsimSimulation,
    batsim_command,
    default_batsim,
    find_executable,
)
from hdeeprm.protocol.codec import (
    BatsimJob,
    EventDecoder,
    EventEncoder,
    decode_decisions,
    encode_decisions,
)
from hdeeprm.protocol.errors import (
    BatsimExitedError,
    BatsimNotFoundError,
    EndpointInUseError,
    PeerTimeoutError,
    ProtocolError,
)
from hdeeprm.protocol.server import DEFAULT_SERVER_TIMEOUT, ProtocolServer, ServeStats
from hdeeprm.protocol.transport import DEFAULT_ENDPOINT

__all__ = [
    "DEFAULT_CLIENT_TIMEOUT",
    "DEFAULT_ENDPOINT",
    "DEFAULT_SERVER_TIMEOUT",
    "BatsimExitedError",
    "BatsimJob",
    "BatsimNotFoundError",
    "BatsimSimulation",
    "EndpointInUseError",
    "EventDecoder",
    "EventEncoder",
    "PeerTimeoutError",
    "ProtocolError",
    "ProtocolServer",
    "ServeStats",
    "batsim_command",
    "decode_decisions",
    "encode_decisions",
    "default_batsim",
    "find_executable",
]
