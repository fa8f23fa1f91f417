"""ZeroMQ plumbing shared by both sides: bounded waits, binding with clear errors, and the
REQ end hdeeprm-sim talks to its scheduler through (built-in ZMTP or libzmq's)."""

from __future__ import annotations

import errno
import re
import time
import weakref
from collections.abc import Callable
from typing import Protocol

import zmq

from hdeeprm.errors import InputError
from hdeeprm.protocol.errors import EndpointInUseError, PeerTimeoutError
from hdeeprm.protocol.zmtp import ZmtpRequester

#: Batsim 4.x's default scheduler endpoint (``-s``).
DEFAULT_ENDPOINT = "tcp://localhost:28000"
#: How often a wait wakes up to check on the other process (s).
POLL_INTERVAL = 0.05
#: Sockets whose receive timeout is already POLL_INTERVAL.
_TIMED: weakref.WeakSet[zmq.Socket] = weakref.WeakSet()


def receive(
    socket: zmq.Socket,
    timeout: float | None,
    *,
    peer: str,
    check: Callable[[], None] | None = None,
) -> bytes:
    """Wait for one message on ``socket``, at most ``timeout`` seconds (None or <= 0: forever).

    ``check`` runs every :data:`POLL_INTERVAL` while waiting; it raises to abort the wait (for
    example when the other process has exited), so a dead peer is noticed within 50 ms instead
    of after the whole timeout.

    Raises:
        PeerTimeoutError: nothing arrived in time.
    """
    forever = timeout is None or timeout <= 0
    # not forever: timeout is a positive number (the checker does not follow ``forever``)
    deadline = 0.0 if forever else time.monotonic() + float(timeout)  # type: ignore[arg-type]
    # A receive timeout instead of socket.poll(): poll builds a zmq.Poller on every call
    # (measured ~16 us, against ~6 us for setting the option, done once per socket), on a hot
    # path: one call per protocol message.
    if socket not in _TIMED:
        socket.setsockopt(zmq.RCVTIMEO, int(POLL_INTERVAL * 1000))
        _TIMED.add(socket)
    recv = socket.recv
    while True:
        try:
            return recv()
        except zmq.Again:
            pass
        if check is not None:
            check()
        if not forever and time.monotonic() >= deadline:
            raise PeerTimeoutError(
                f"no message from {peer} within {timeout:g} s; it may be stuck, crashed or "
                "not connected to this endpoint (raise the timeout if it is just slow)"
            )


_TCP = re.compile(r"^tcp://(?P<host>\[[0-9A-Fa-f:.]+\]|[^:/\s\[\]]+):(?P<port>\*|[0-9]+)$")
_OTHER = re.compile(r"^(ipc|inproc)://\S+$")
ENDPOINT_EXAMPLE = "tcp://127.0.0.1:28000"


def check_endpoint(endpoint: str, option: str = "endpoint", *, connect: bool = False) -> str:
    """Return ``endpoint`` when it is a well-formed ZeroMQ endpoint, else raise
    :class:`InputError` naming ``option`` and giving an example.

    Accepted: ``tcp://HOST:PORT`` (``PORT`` 1-65535; ``*`` as host or port only when binding,
    not with ``connect``), ``ipc://PATH`` and ``inproc://NAME``. A malformed endpoint is caught
    here, before any process is started, instead of surfacing as a ZeroMQ traceback.
    """
    problem = None
    if not isinstance(endpoint, str):
        problem = "not a string"
    elif "://" not in endpoint:
        problem = "no transport (tcp://, ipc:// or inproc://)"
    else:
        transport, address = endpoint.split("://", 1)
        match = _TCP.match(endpoint)
        if transport == "tcp":
            if match is None:
                problem = "expected tcp://HOST:PORT with a numeric PORT"
            elif connect and "*" in (match.group("host"), match.group("port")):
                problem = "'*' only works for binding: give the host and port to connect to"
            elif match.group("port") != "*" and not 1 <= int(match.group("port")) <= 65535:
                problem = f"port {match.group('port')} is outside 1-65535"
        elif transport in ("ipc", "inproc"):
            if not _OTHER.match(endpoint):
                problem = "empty or blank address"
        else:
            problem = f"unknown transport {transport!r} (tcp, ipc or inproc)"
    if problem is None:
        return endpoint
    raise InputError(
        f"malformed ZeroMQ endpoint {endpoint!r}: {problem}; expected an endpoint such as "
        f"{ENDPOINT_EXAMPLE}",
        where=option,
    )


def bind(socket: zmq.Socket, endpoint: str | None) -> str:
    """Bind ``socket`` to ``endpoint``, or to a free TCP port on 127.0.0.1 when None.

    Returns the endpoint actually bound (with the port the OS chose), for the peer to connect.

    Raises:
        EndpointInUseError: the endpoint is taken.
    """
    if endpoint is None:
        port = socket.bind_to_random_port("tcp://127.0.0.1")
        return f"tcp://127.0.0.1:{port}"
    check_endpoint(endpoint)
    try:
        socket.bind(endpoint)
    except zmq.ZMQError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise EndpointInUseError(
                f"cannot bind {endpoint}: address already in use (another scheduler or "
                "simulation is running there; leave the endpoint unset to use a free port)"
            ) from None
        raise InputError(
            f"cannot bind {endpoint}: {exc}; expected an endpoint such as tcp://127.0.0.1:28000"
        ) from None
    return endpoint


#: REQ implementations: ``builtin`` (:class:`~hdeeprm.protocol.zmtp.ZmtpRequester`, ZMTP over
#: a plain socket: no I/O thread) and ``pyzmq`` (libzmq's REQ socket).
TRANSPORTS = ("builtin", "pyzmq")
DEFAULT_TRANSPORT = "builtin"


class Requester(Protocol):
    """The REQ end of a REQ/REP pair: ``send`` one request, then ``recv`` its reply."""

    def send(self, body: bytes) -> None: ...

    def recv(self) -> bytes: ...

    def close(self) -> None: ...


class LibzmqRequester:
    """libzmq's REQ socket behind :class:`Requester` (connects lazily, as libzmq does)."""

    def __init__(self, endpoint: str, timeout: float | None, *, peer: str) -> None:
        self.timeout = timeout
        self.peer = peer
        self._context = zmq.Context()
        self._socket = self._context.socket(zmq.REQ)
        self._socket.setsockopt(zmq.LINGER, 0)
        self._socket.connect(endpoint)

    def send(self, body: bytes) -> None:
        self._socket.send(body)

    def recv(self) -> bytes:
        return receive(self._socket, self.timeout, peer=self.peer)

    def close(self) -> None:
        self._socket.close(linger=0)
        self._context.term()


def open_requester(
    endpoint: str, timeout: float | None, *, peer: str, transport: str = DEFAULT_TRANSPORT
) -> Requester:
    """A REQ end connected to ``endpoint``, by ``transport`` (:data:`TRANSPORTS`).

    ``inproc://`` endpoints always use libzmq: only a socket of the same ZeroMQ context can
    reach them.

    Raises:
        InputError: unknown ``transport``.
        PeerTimeoutError: (built-in) nobody accepted the connection within ``timeout``.
    """
    if transport not in TRANSPORTS:
        raise InputError(
            f"unknown transport {transport!r}; expected one of {', '.join(TRANSPORTS)}",
            where="transport",
        )
    if transport == "pyzmq" or endpoint.startswith("inproc://"):
        return LibzmqRequester(endpoint, timeout, peer=peer)
    return ZmtpRequester(endpoint, timeout, peer=peer)


__all__ = [
    "DEFAULT_ENDPOINT",
    "DEFAULT_TRANSPORT",
    "POLL_INTERVAL",
    "TRANSPORTS",
    "LibzmqRequester",
    "Requester",
    "bind",
    "check_endpoint",
    "open_requester",
    "receive",
]
