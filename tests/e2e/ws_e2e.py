"""Helpers for the WebSocket end-to-end tests: a raw RFC 6455 client over a plain or TLS socket
(handshake bytes we write ourselves, frames built and parsed here, so a test can send what no
well-behaved client library would: bad UTF-8, reserved bits, unmasked frames), and /metrics
samples by name.

Only the standard library (and prometheus_client for /metrics, as the other tests use it).
"""
from __future__ import annotations

import base64
import hashlib
import os
import socket
import struct
import time

from rivet_e2e import SLOW, Conn, Reader, build_request

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

# Opcodes (RFC 6455 §5.2).
CONT, TEXT, BINARY, CLOSE, PING, PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


def new_key() -> str:
    return base64.b64encode(os.urandom(16)).decode()


def accept_for(key: str) -> str:
    """The Sec-WebSocket-Accept a server must answer `key` with (§4.2.2)."""
    return base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()


def upgrade_request(path: str, key: str | None = None, version: str | None = "13",
                    extensions: str | None = None, method: str = "GET",
                    extra: dict | None = None) -> bytes:
    """An opening handshake; key/version None leave the header out."""
    headers = {"Upgrade": "websocket", "Connection": "Upgrade"}
    if key is not None:
        headers["Sec-WebSocket-Key"] = key
    if version is not None:
        headers["Sec-WebSocket-Version"] = version
    if extensions is not None:
        headers["Sec-WebSocket-Extensions"] = extensions
    headers.update(extra or {})
    return build_request(method, path, headers=headers)


def frame(opcode: int, payload: bytes = b"", fin: bool = True, rsv: int = 0,
          mask: bool = True) -> bytes:
    """One frame in bytes; `rsv` is the three reserved bits (RSV1 = 4, RSV2 = 2, RSV3 = 1)."""
    head = bytearray([(0x80 if fin else 0) | (rsv & 7) << 4 | opcode])
    n = len(payload)
    mbit = 0x80 if mask else 0
    if n < 126:
        head.append(mbit | n)
    elif n < 1 << 16:
        head.append(mbit | 126)
        head += struct.pack("!H", n)
    else:
        head.append(mbit | 127)
        head += struct.pack("!Q", n)
    if not mask:
        return bytes(head) + payload
    key = os.urandom(4)
    return bytes(head) + key + masked(payload, key)


def masked(payload: bytes, key: bytes) -> bytes:
    if not payload:
        return b""
    n = len(payload)
    k = int.from_bytes((key * (n // 4 + 1))[:n], "big")
    return (int.from_bytes(payload, "big") ^ k).to_bytes(n, "big")


def masked_zeros_frame(opcode: int, n: int, fin: bool = True) -> bytes:
    """A masked frame of n zero bytes (on the wire: the mask key repeated), cheap to build."""
    head = frame(opcode, b"", fin=fin)[:1]
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 1 << 16:
        head += bytes([0x80 | 126]) + n.to_bytes(2, "big")
    else:
        head += bytes([0x80 | 127]) + n.to_bytes(8, "big")
    key = b"\x11\x22\x33\x44"
    return head + key + (key * (n // 4 + 1))[:n]


def close_payload(code: int, reason: bytes = b"") -> bytes:
    return struct.pack("!H", code) + reason


class WsConn(Conn):
    """A raw WebSocket client connection. `open()` does the handshake; then frames go out with
    send_frame() and come back with recv_frame() (a server's frames are never masked)."""

    def __init__(self, host: str, port: int, timeout: float = 10.0, tls_context=None,
                 rcvbuf: int | None = None):
        """rcvbuf: a small receive buffer (set before connecting) for a client that never reads:
        the server's writes then back up sooner."""
        raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        raw.settimeout(timeout * SLOW)
        raw.connect((host, port))
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = (tls_context.wrap_socket(raw, server_hostname="localhost")
                     if tls_context else raw)
        self.reader = Reader(lambda: self.sock.recv(1 << 16))

    def open(self, path: str = "/ws/echo", extensions: str | None = None):
        """The handshake; asserts the 101 and its accept key; returns the 101 response."""
        key = new_key()
        self.send(upgrade_request(path, key, extensions=extensions))
        r = self.read_response()
        assert r.status == 101, r
        assert (r.header("Upgrade") or "").lower() == "websocket", r
        assert r.header("Sec-WebSocket-Accept") == accept_for(key), r
        return r

    def send_frame(self, opcode: int, payload: bytes = b"", **kw) -> None:
        self.send(frame(opcode, payload, **kw))

    def send_text(self, text: str) -> None:
        self.send_frame(TEXT, text.encode())

    def recv_frame(self) -> tuple[bool, int, int, bytes]:
        """(fin, rsv, opcode, payload) of the next frame."""
        b0, b1 = self.reader._take(2)
        assert not b1 & 0x80, "a server frame was masked"
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack("!H", self.reader._take(2))[0]
        elif n == 127:
            n = struct.unpack("!Q", self.reader._take(8))[0]
        return bool(b0 & 0x80), (b0 >> 4) & 7, b0 & 0x0F, self.reader._take(n)

    def recv_message(self) -> tuple[int, bytes]:
        """The next data message (fragments joined; pings answered are not our business here:
        a control frame in between is returned instead, as (opcode, payload))."""
        fin, _, opcode, payload = self.recv_frame()
        if opcode >= CLOSE:
            return opcode, payload
        while not fin:
            fin, _, op, more = self.recv_frame()
            assert op == CONT, f"opcode {op} inside a fragmented message"
            payload += more
        return opcode, payload

    def expect_close(self, timeout: float = 10.0) -> tuple[int | None, bytes]:
        """Reads (skipping data frames) until the server's close frame; returns (code, reason).
        code None: the close frame had no payload. Raises rivet_e2e.Closed if the TCP
        connection ends first."""
        self.settimeout(timeout * SLOW)
        while True:
            _, _, opcode, payload = self.recv_frame()
            if opcode == CLOSE:
                if len(payload) < 2:
                    return None, b""
                return struct.unpack("!H", payload[:2])[0], payload[2:]

    def eof_within(self, timeout: float = 10.0) -> bool:
        """After the close handshake: whether the server closes TCP within `timeout`."""
        data, closed = self.read_until_close(timeout)
        assert not data, f"bytes after the close frame: {data[:100]!r}"
        return closed


def ws_connect(srv, path: str = "/ws/echo", timeout: float = 10.0, tls_context=None,
               extensions: str | None = None, rcvbuf: int | None = None) -> WsConn:
    port = srv.tls_port if tls_context else srv.port
    c = WsConn(srv.host, port, timeout, tls_context, rcvbuf)
    c.open(path, extensions)
    return c


# ---------------------------------------------------------------------------------------------
# /metrics


def metrics(srv, prefix: str = "rivet_") -> dict:
    """/metrics samples whose name starts with `prefix`: {(name, frozenset(labels)): value}."""
    from prometheus_client import parser
    r = srv.get("/metrics")
    assert r.status == 200, r
    out = {}
    for fam in parser.text_string_to_metric_families(r.text):
        for s in fam.samples:
            if s.name.startswith(prefix):
                out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def metric_sum(samples: dict, name: str, **labels) -> float:
    return sum(v for (n, ls), v in samples.items()
               if n == name and all((k, v2) in ls for k, v2 in labels.items()))


def wait_for(predicate, timeout: float, what: str, interval: float = 0.05):
    """Polls `predicate` until it returns a true value (returned) or `timeout` (times SLOW)."""
    deadline = time.monotonic() + timeout * SLOW
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout * SLOW:.0f}s waiting for {what}")
        time.sleep(interval)
