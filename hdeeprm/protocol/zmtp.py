"""A ZeroMQ REQ socket's wire protocol over one plain socket: hdeeprm-sim's side of the link.

Batsim is the REQ side of a REQ/REP pair and talks to exactly one scheduler. With libzmq, every
message crosses its I/O thread twice (the request out, the reply in), each time with an
``eventfd`` wake-up of the other thread: measured at about 20 us of CPU per round trip beyond
the two ``send``/``recv`` calls, more than the simulation work of a message.
:class:`ZmtpRequester` speaks ZMTP 3.0 (https://rfc.zeromq.org/spec/23/, NULL security: what
every Batsim scheduler uses) itself over a blocking TCP or Unix socket, so a message costs one
``send`` and one ``recv`` system call in the serving thread and nothing else. The scheduler
(pybatsim, batsched, hdeeprm's client) still uses libzmq's REP socket and cannot tell.

What a REQ socket does and this does too: connect to ``tcp://HOST:PORT`` or ``ipc://PATH``,
retrying until the peer binds (within the timeout); greet (64 bytes: signature, version 3.0,
mechanism ``NULL``), send ``READY`` with ``Socket-Type=REQ``, require ``REP`` or ``ROUTER``
back; send each request as an empty delimiter frame and one body frame; read the reply's
delimiter and body; answer ``PING`` with ``PONG``. What it refuses with a clear error: a peer
that is not a REP/ROUTER, other security mechanisms, multi-part replies (Batsim reads one
frame), and a peer that closes the connection (libzmq would wait out the timeout instead).
"""

from __future__ import annotations

import errno
import math
import re
import socket
import struct
import time
from typing import Any

from hdeeprm.errors import InputError
from hdeeprm.protocol.errors import PeerTimeoutError, ProtocolError

#: How long to wait before trying to connect again when nobody listens yet (s): libzmq's
#: default reconnect interval.
RECONNECT_INTERVAL = 0.1
#: Bytes asked of the kernel per ``recv``: a usual reply (< 1 kB) comes in one call.
RECV_SIZE = 65536

#: Our greeting: signature, version 3.0, mechanism NULL (zero-padded to 20 bytes), as-server 0,
#: 31 bytes of filler.
GREETING = b"\xff" + bytes(8) + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\x00") + bytes(32)
#: Flags of a frame's first byte.
MORE, LONG, COMMAND = 0x01, 0x02, 0x04
#: The empty delimiter frame that opens every REQ/REP message, with the MORE flag.
DELIMITER = bytes((MORE, 0))
#: Socket types a REQ socket may talk to.
PEER_TYPES = frozenset({b"REP", b"ROUTER"})

_TCP = re.compile(r"^tcp://(?P<host>\[[0-9A-Fa-f:.]+\]|[^:/\s\[\]]+):(?P<port>[0-9]+)$")


def command_frame(name: bytes, body: bytes = b"") -> bytes:
    """One ZMTP command: its name (length-prefixed) then ``body``."""
    payload = bytes((len(name),)) + name + body
    return frame(payload, COMMAND)


def frame(payload: bytes, flags: int = 0) -> bytes:
    """One ZMTP frame (short form up to 255 bytes, long form beyond)."""
    size = len(payload)
    if size < 256:
        return bytes((flags, size)) + payload
    return bytes((flags | LONG,)) + size.to_bytes(8, "big") + payload


def ready_command(socket_type: bytes) -> bytes:
    """The ``READY`` command of the NULL mechanism with one property, ``Socket-Type``."""
    name = b"Socket-Type"
    prop = bytes((len(name),)) + name + struct.pack(">I", len(socket_type)) + socket_type
    return command_frame(b"READY", prop)


def parse_properties(data: bytes, where: str) -> dict[bytes, bytes]:
    """A ``READY`` command's metadata: name (1-byte length) -> value (4-byte length)."""
    props: dict[bytes, bytes] = {}
    pos = 0
    while pos < len(data):
        size = data[pos]
        name = data[pos + 1 : pos + 1 + size]
        pos += 1 + size
        if pos + 4 > len(data):
            raise ProtocolError("truncated READY metadata", where)
        (length,) = struct.unpack_from(">I", data, pos)
        pos += 4
        if pos + length > len(data):
            raise ProtocolError("truncated READY metadata", where)
        props[name.lower()] = data[pos : pos + length]
        pos += length
    return props


def _address(endpoint: str) -> tuple[int, str | tuple[Any, ...]]:
    """``(address family, address)`` to connect to for ``tcp://`` and ``ipc://`` endpoints."""
    if endpoint.startswith("ipc://"):
        path = endpoint[len("ipc://") :]
        return socket.AF_UNIX, "\0" + path[1:] if path.startswith("@") else path
    match = _TCP.match(endpoint)
    if match is None:
        raise InputError(
            f"cannot connect to {endpoint!r}: expected tcp://HOST:PORT or ipc://PATH",
            where="endpoint",
        )
    host, port = match.group("host"), int(match.group("port"))
    family = socket.AF_INET6 if host.startswith("[") else socket.AF_INET
    host = host.strip("[]")
    try:
        infos = socket.getaddrinfo(host, port, family, socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise InputError(
            f"cannot resolve host {host!r} of endpoint {endpoint!r}: {exc.strerror}",
            where="endpoint",
        ) from None
    return family, infos[0][4]


class ZmtpRequester:
    """The REQ end of a ZeroMQ REQ/REP pair, connected to one peer: ``send`` then ``recv``,
    alternately, as a libzmq REQ socket.

    Args:
        endpoint: ``tcp://HOST:PORT`` or ``ipc://PATH`` of the bound REP socket.
        timeout: longest wait, in seconds, for the connection and for each reply (None or <= 0:
            forever).
        peer: how errors name the other side (``"the scheduler at tcp://..."``).

    Raises:
        PeerTimeoutError: nobody accepted the connection within ``timeout``.
        ProtocolError: the peer is not a ZMTP 3.x REP/ROUTER socket with NULL security.
    """

    def __init__(self, endpoint: str, timeout: float | None, *, peer: str) -> None:
        self.endpoint = endpoint
        self.peer = peer
        self.timeout = None if timeout is None or timeout <= 0 else float(timeout)
        self._buffer = b""
        self._sock = self._connect()
        self._handshaking = True
        try:
            self._handshake()
        except BaseException:
            self.close()
            raise
        self._handshaking = False

    # --- connection -------------------------------------------------------------------
    def _deadline(self) -> float:
        return time.monotonic() + self.timeout if self.timeout is not None else math.inf

    def _timed_out(self) -> PeerTimeoutError:
        return PeerTimeoutError(
            f"no message from {self.peer} within {self.timeout:g} s; it may be stuck, crashed "
            "or not connected to this endpoint (raise the timeout if it is just slow)"
        )

    def _connect(self) -> socket.socket:
        family, address = _address(self.endpoint)
        deadline = self._deadline()
        while True:
            sock = socket.socket(family, socket.SOCK_STREAM)
            try:
                # Bounded even towards a host that drops the connection request.
                left = deadline - time.monotonic()
                sock.settimeout(max(left, 0.001) if left != math.inf else None)
                sock.connect(address)
                sock.settimeout(None)  # blocking again: the kernel's timeouts below apply
            except (ConnectionRefusedError, FileNotFoundError, TimeoutError):
                sock.close()  # nobody bound yet: retry, as libzmq does
                if time.monotonic() + RECONNECT_INTERVAL >= deadline:
                    raise self._timed_out() from None
                time.sleep(RECONNECT_INTERVAL)
                continue
            except BaseException:
                sock.close()
                raise
            break
        if family != socket.AF_UNIX:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.timeout is not None:  # blocking calls that give up: one syscall per call
            seconds = int(self.timeout)
            timeval = struct.pack("ll", seconds, int((self.timeout - seconds) * 1e6))
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, timeval)
            # A peer that stopped reading (hung, not dead) cannot block a large send forever.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, timeval)
        return sock

    def _handshake(self) -> None:
        self._sock.sendall(GREETING + ready_command(b"REQ"))
        deadline = self._deadline()
        greeting = self._take(64, deadline)
        where = f"greeting of {self.peer}"
        if greeting[0] != 0xFF or greeting[9] != 0x7F:
            raise ProtocolError(
                f"not a ZeroMQ peer (greeting starts {greeting[:10]!r}); expected a ZeroMQ REP "
                "socket speaking ZMTP 3",
                where,
            )
        if greeting[10] < 3:
            raise ProtocolError(
                f"the peer speaks ZMTP {greeting[10]}.x (libzmq < 4); hdeeprm-sim's built-in "
                "transport needs ZMTP 3 (use --transport pyzmq)",
                where,
            )
        mechanism = greeting[12:32].rstrip(b"\x00")
        if mechanism != b"NULL":
            raise ProtocolError(
                f"security mechanism {mechanism.decode('ascii', 'replace')!r} is not supported "
                "(expected NULL, ZeroMQ's default)",
                where,
            )
        name, body = self._command(deadline)
        if name == b"ERROR":
            reason = body[1 : 1 + body[0]].decode("utf-8", "replace") if body else ""
            raise ProtocolError(f"the peer refused the connection: {reason}", where)
        if name != b"READY":
            raise ProtocolError(f"expected a READY command, got {name!r}", where)
        kind = parse_properties(body, where).get(b"socket-type", b"")
        if kind not in PEER_TYPES:
            raise ProtocolError(
                f"the peer is a {kind.decode('ascii', 'replace') or 'untyped'} socket; a "
                "scheduler binds a REP socket",
                where,
            )

    # --- reading ------------------------------------------------------------------------
    def _fill(self, deadline: float | None = None) -> None:
        """Append what the kernel has to the buffer, waiting (at most ``timeout``) for at
        least one byte."""
        try:
            data = self._sock.recv(RECV_SIZE)
        except (BlockingIOError, TimeoutError):  # SO_RCVTIMEO ran out
            raise self._timed_out() from None
        except (ConnectionResetError, BrokenPipeError):
            data = b""
        if not data:
            if self._handshaking:  # libzmq hangs up on a socket type it cannot talk to
                raise ProtocolError(
                    f"{self.peer} closed the connection during the handshake; expected a "
                    "ZeroMQ REP socket (a REQ socket talks only to REP and ROUTER)"
                )
            raise ProtocolError(f"{self.peer} closed the connection")
        self._buffer = self._buffer + data if self._buffer else data
        if deadline is not None and time.monotonic() > deadline:
            raise self._timed_out()  # a peer trickling bytes: the whole wait is bounded

    def _take(self, size: int, deadline: float) -> bytes:
        while len(self._buffer) < size:
            self._fill(deadline)
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data

    def _frame(self, deadline: float) -> tuple[int, bytes]:
        """The next frame: ``(flags, payload)``."""
        head = self._take(2, deadline)
        flags = head[0]
        if flags & LONG:
            size = int.from_bytes(head[1:2] + self._take(7, deadline), "big")
        else:
            size = head[1]
        return flags, self._take(size, deadline)

    def _command(self, deadline: float) -> tuple[bytes, bytes]:
        flags, payload = self._frame(deadline)
        if not flags & COMMAND or not payload:
            raise ProtocolError("expected a ZMTP command", f"handshake with {self.peer}")
        size = payload[0]
        return payload[1 : 1 + size], payload[1 + size :]

    def recv(self) -> bytes:
        """The body of the peer's next reply (waits at most ``timeout``).

        Raises:
            PeerTimeoutError: no reply in time.
            ProtocolError: the peer closed the connection or sent something a REP socket
                does not (a multi-part reply, no delimiter).
        """
        if not self._buffer:
            self._fill()
        buffer = self._buffer
        # The usual reply, whole after one recv: the delimiter, then one last frame.
        if len(buffer) > 3 and buffer[0] == MORE and buffer[1] == 0:
            flags = buffer[2]
            if flags == 0 and len(buffer) == 4 + buffer[3]:
                self._buffer = b""
                return buffer[4:]
            if flags == LONG and len(buffer) == 11 + int.from_bytes(buffer[3:11], "big"):
                self._buffer = b""
                return buffer[11:]
        deadline = self._deadline()
        parts: list[bytes] = []
        while True:
            flags, payload = self._frame(deadline)
            if flags & COMMAND:
                self._on_command(payload)
                continue
            parts.append(payload)
            if not flags & MORE:
                break
        where = f"reply from {self.peer}"
        if parts[0] != b"":
            raise ProtocolError("no empty delimiter frame first, as a REP socket sends", where)
        if len(parts) != 2:
            raise ProtocolError(f"expected a one-part reply, got {len(parts) - 1} parts", where)
        return parts[1]

    def _on_command(self, payload: bytes) -> None:
        """A command between messages: ``PING`` gets its ``PONG``; others are ignored (ZMTP
        3.1's subscriptions do not concern REQ)."""
        size = payload[0] if payload else 0
        name = payload[1 : 1 + size]
        if name == b"PING" and len(payload) >= 1 + size + 2:
            context = payload[1 + size + 2 :]
            self._send(command_frame(b"PONG", context[:16]))

    # --- writing ------------------------------------------------------------------------
    def _send(self, data: bytes) -> None:
        try:
            self._sock.sendall(data)
        except (BlockingIOError, TimeoutError):  # SO_SNDTIMEO ran out
            raise PeerTimeoutError(
                f"{self.peer} did not take a message within {self.timeout:g} s; it may be "
                "stuck (raise the timeout if it is just slow)"
            ) from None
        except (BrokenPipeError, ConnectionResetError):
            raise ProtocolError(f"{self.peer} closed the connection") from None
        except OSError as exc:
            if exc.errno in (errno.EPIPE, errno.ECONNRESET):
                raise ProtocolError(f"{self.peer} closed the connection") from None
            raise

    def send(self, body: bytes) -> None:
        """Send one request: the empty delimiter frame and ``body``."""
        size = len(body)
        if size < 256:
            self._send(b"\x01\x00\x00" + bytes((size,)) + body)
        else:
            self._send(b"\x01\x00\x02" + size.to_bytes(8, "big") + body)

    def close(self) -> None:
        """Close the connection (the peer's REP socket forgets this client)."""
        self._sock.close()


__all__ = ["GREETING", "RECONNECT_INTERVAL", "ZmtpRequester", "frame", "parse_properties"]
