"""hdeeprm-sim's built-in REQ end (:mod:`hdeeprm.protocol.zmtp`) against libzmq and by hand.

libzmq's REP socket (pyzmq) is the real peer: what every Batsim scheduler binds. A scripted
peer over a plain socket checks what libzmq never sends unasked (PING, multi-part and split
replies, a peer that is not ZeroMQ). Every wait is bounded by a short timeout.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import zmq
from protocol_helpers import free_port

from hdeeprm.errors import InputError
from hdeeprm.protocol import PeerTimeoutError, ProtocolError
from hdeeprm.protocol.transport import LibzmqRequester, open_requester
from hdeeprm.protocol.zmtp import (
    GREETING,
    ZmtpRequester,
    command_frame,
    frame,
    parse_properties,
    ready_command,
)


def test_frames_and_greeting_byte_by_byte() -> None:
    assert frame(b"abc") == b"\x00\x03abc"
    assert frame(b"", 0x01) == b"\x01\x00"
    long = frame(b"x" * 300)
    assert long[:9] == b"\x02\x00\x00\x00\x00\x00\x00\x01\x2c" and len(long) == 309
    assert len(GREETING) == 64
    assert GREETING[0] == 0xFF and GREETING[9] == 0x7F and GREETING[10:12] == b"\x03\x00"
    assert GREETING[12:16] == b"NULL" and GREETING[16:] == bytes(48)
    ready = ready_command(b"REQ")
    # command flag, size 25 = 1 + 5 (READY) + 1 + 11 (Socket-Type) + 4 + 3 (REQ)
    assert ready[:8] == b"\x04\x19\x05READY" and len(ready) == 2 + 25
    assert parse_properties(ready[8:], "here") == {b"socket-type": b"REQ"}
    assert command_frame(b"PONG", b"ab") == b"\x04\x07\x04PONGab"
    with pytest.raises(ProtocolError, match="truncated READY metadata"):
        parse_properties(b"\x0bSocket-Type\x00\x00\x00\x09REP", "here")


class Rep:
    """libzmq's REP socket on a free port (or at ``endpoint``), as a scheduler binds it."""

    def __init__(self, endpoint: str | None = None, kind: int = zmq.REP) -> None:
        self.context = zmq.Context()
        self.socket = self.context.socket(kind)
        self.socket.setsockopt(zmq.LINGER, 0)
        if endpoint is None:
            port = self.socket.bind_to_random_port("tcp://127.0.0.1")
            endpoint = f"tcp://127.0.0.1:{port}"
        else:
            self.socket.bind(endpoint)
        self.endpoint = endpoint

    def recv(self) -> bytes:
        assert self.socket.poll(5000), "no request"
        return self.socket.recv()

    def close(self) -> None:
        self.socket.close(linger=0)
        self.context.term()


@pytest.mark.parametrize("size", [0, 1, 255, 256, 70_000])
def test_round_trips_with_libzmq_rep(size: int) -> None:
    rep = Rep()
    link = ZmtpRequester(rep.endpoint, 5.0, peer="the test")
    try:
        for index in range(3):
            body = bytes([65 + index]) * size
            link.send(body)
            assert rep.recv() == body
            rep.socket.send(body[::-1] + b"!")
            assert link.recv() == body[::-1] + b"!"
    finally:
        link.close()
        rep.close()


def test_ipc_endpoint(tmp_path: Path) -> None:
    rep = Rep(f"ipc://{tmp_path / 'sched.sock'}")
    link = open_requester(rep.endpoint, 5.0, peer="the test")
    try:
        link.send(b"hello")
        assert rep.recv() == b"hello"
        rep.socket.send(b"world")
        assert link.recv() == b"world"
    finally:
        link.close()
        rep.close()


def test_waits_for_the_scheduler_to_bind() -> None:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    bound: list[Rep] = []
    timer = threading.Timer(0.3, lambda: bound.append(Rep(endpoint)))
    timer.start()
    link = ZmtpRequester(endpoint, 5.0, peer="the test")
    try:
        link.send(b"late")
        assert bound[0].recv() == b"late"
    finally:
        timer.join()
        link.close()
        bound[0].close()


def test_absent_scheduler_times_out() -> None:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    tick = time.monotonic()
    with pytest.raises(PeerTimeoutError, match="no message from the test within 0.3 s"):
        ZmtpRequester(endpoint, 0.3, peer="the test")
    assert time.monotonic() - tick < 3.0


def test_silent_scheduler_times_out() -> None:
    rep = Rep()
    link = ZmtpRequester(rep.endpoint, 0.3, peer="the test")
    try:
        link.send(b"anyone?")
        rep.recv()
        with pytest.raises(PeerTimeoutError, match="within 0.3 s"):
            link.recv()
    finally:
        link.close()
        rep.close()


def test_scheduler_that_exits_is_reported_at_once() -> None:
    rep = Rep()
    link = ZmtpRequester(rep.endpoint, 30.0, peer="the test")
    try:
        link.send(b"bye")
        rep.recv()
        rep.close()  # libzmq closes the TCP connection
        tick = time.monotonic()
        with pytest.raises(ProtocolError, match="the test closed the connection"):
            link.recv()
        assert time.monotonic() - tick < 10.0  # not the 30 s timeout
    finally:
        link.close()


def test_wrong_socket_type_is_refused() -> None:
    rep = Rep(kind=zmq.DEALER)
    try:
        with pytest.raises(ProtocolError, match="closed the connection during the handshake"):
            ZmtpRequester(rep.endpoint, 5.0, peer="the test")
    finally:
        rep.close()


def test_unknown_transport_and_unresolvable_host() -> None:
    with pytest.raises(InputError, match="unknown transport 'zmq'"):
        open_requester("tcp://127.0.0.1:1", 1.0, peer="x", transport="zmq")
    with pytest.raises(InputError, match="cannot resolve host"):
        ZmtpRequester("tcp://no-such-host.invalid:28000", 1.0, peer="x")


def test_pyzmq_transport_and_inproc_use_libzmq() -> None:
    rep = Rep()
    link = open_requester(rep.endpoint, 5.0, peer="the test", transport="pyzmq")
    try:
        assert isinstance(link, LibzmqRequester)
        link.send(b"ping")
        assert rep.recv() == b"ping"
        rep.socket.send(b"pong")
        assert link.recv() == b"pong"
    finally:
        link.close()
        rep.close()
    inproc = open_requester("inproc://nowhere", 0.1, peer="the test")
    try:
        assert isinstance(inproc, LibzmqRequester)
    finally:
        inproc.close()


# --- a scripted peer over a plain socket --------------------------------------------------
def _ready_rep() -> bytes:
    return GREETING + ready_command(b"REP")


def _scripted(script: Callable[[socket.socket], None]) -> tuple[str, threading.Thread]:
    """A listening socket whose one connection runs ``script``."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(5.0)

    def body() -> None:
        try:
            conn, _ = server.accept()
            conn.settimeout(5.0)
            with conn:
                script(conn)
        finally:
            server.close()

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return f"tcp://127.0.0.1:{server.getsockname()[1]}", thread


def _read_exactly(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        assert chunk, "connection closed"
        data += chunk
    return data


def _read_handshake(conn: socket.socket) -> bytes:
    greeting = _read_exactly(conn, 64)
    ready = ready_command(b"REQ")
    assert _read_exactly(conn, len(ready)) == ready
    return greeting


def test_ping_is_answered_and_a_split_reply_is_joined() -> None:
    seen: dict[str, bytes] = {}

    def script(conn: socket.socket) -> None:
        conn.sendall(_ready_rep())
        seen["greeting"] = _read_handshake(conn)
        seen["request"] = _read_exactly(conn, 2 + 2 + 3)
        ttl_and_context = struct.pack(">H", 100) + b"ctx"
        conn.sendall(command_frame(b"PING", ttl_and_context))
        seen["pong"] = _read_exactly(conn, len(command_frame(b"PONG", b"ctx")))
        for byte in b"\x01\x00" + frame(b"x" * 300):  # one byte per segment
            conn.sendall(bytes((byte,)))
            time.sleep(0.001)

    endpoint, thread = _scripted(script)
    link = ZmtpRequester(endpoint, 5.0, peer="the script")
    try:
        link.send(b"abc")
        assert link.recv() == b"x" * 300
    finally:
        link.close()
        thread.join(5.0)
    assert seen["greeting"] == GREETING
    assert seen["request"] == b"\x01\x00\x00\x03abc"
    assert seen["pong"] == command_frame(b"PONG", b"ctx")


@pytest.mark.parametrize(
    ("reply", "match"),
    [
        (b"\x01\x00" + frame(b"a", 0x01) + frame(b"b"), "expected a one-part reply, got 2"),
        (frame(b"no delimiter"), "no empty delimiter frame first"),
    ],
)
def test_replies_a_rep_socket_never_sends_are_refused(reply: bytes, match: str) -> None:
    def script(conn: socket.socket) -> None:
        conn.sendall(_ready_rep())
        _read_handshake(conn)
        _read_exactly(conn, 2 + 2 + 1)
        conn.sendall(reply)
        time.sleep(0.2)

    endpoint, thread = _scripted(script)
    link = ZmtpRequester(endpoint, 5.0, peer="the script")
    try:
        link.send(b"?")
        with pytest.raises(ProtocolError, match=match):
            link.recv()
    finally:
        link.close()
        thread.join(5.0)


@pytest.mark.parametrize(
    ("greeting", "match"),
    [
        (b"HTTP/1.1 400 Bad Request\r\n".ljust(64, b" "), "not a ZeroMQ peer"),
        (GREETING[:10] + b"\x02\x00" + GREETING[12:], "speaks ZMTP 2.x"),
        (GREETING[:12] + b"CURVE".ljust(20, b"\x00") + GREETING[32:], "'CURVE' is not"),
    ],
)
def test_peers_that_are_not_a_plain_zmtp3_rep_are_refused(greeting: bytes, match: str) -> None:
    def script(conn: socket.socket) -> None:
        conn.sendall(greeting + ready_command(b"REP"))
        time.sleep(0.2)

    endpoint, thread = _scripted(script)
    try:
        with pytest.raises(ProtocolError, match=match):
            ZmtpRequester(endpoint, 5.0, peer="the script")
    finally:
        thread.join(5.0)


def test_a_peer_that_stops_reading_cannot_block_a_send_forever() -> None:
    release = threading.Event()

    def script(conn: socket.socket) -> None:
        conn.sendall(_ready_rep())
        _read_handshake(conn)
        release.wait(10.0)  # hung: reads nothing more

    endpoint, thread = _scripted(script)
    link = ZmtpRequester(endpoint, 0.3, peer="the script")
    try:
        with pytest.raises(PeerTimeoutError, match="did not take a message within 0.3 s"):
            link.send(bytes(64 << 20))  # more than the kernel's buffers take
    finally:
        release.set()
        link.close()
        thread.join(5.0)
