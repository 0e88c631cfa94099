"""A small synchronous HTTP/2 client for the e2e tests, on the `h2` library (PyPI) over a plain
socket (h2c by prior knowledge) or a TLS one (ALPN h2): requests on many streams of one
connection, and everything the server sends recorded by stream (status, fields, body, trailers,
the end or a reset) and for the connection (GOAWAY, the close). Waits are for events, bounded by
generous deadlines (SLOW)."""
from __future__ import annotations

import socket
import ssl
import time
from dataclasses import dataclass, field

import h2.config
import h2.connection
import h2.events
import h2.exceptions

from rivet_e2e import SLOW


@dataclass
class Stream:
    status: int = 0
    headers: dict = field(default_factory=dict)
    body: bytearray = field(default_factory=bytearray)
    trailers: dict = field(default_factory=dict)
    ended: bool = False
    reset: int | None = None  # the RST_STREAM error code, if the server reset it

    @property
    def done(self) -> bool:
        return self.ended or self.reset is not None


class H2Client:
    def __init__(self, sock: socket.socket, validate: bool = True):
        self.sock = sock
        cfg = h2.config.H2Configuration(client_side=True, header_encoding="utf-8",
                                        validate_inbound_headers=validate,
                                        validate_outbound_headers=validate,
                                        normalize_outbound_headers=validate)
        self.conn = h2.connection.H2Connection(config=cfg)
        self.conn.initiate_connection()
        self.streams: dict[int, Stream] = {}
        self.goaway: h2.events.ConnectionTerminated | None = None
        self.closed = False
        self.settings_acked = False
        self._in = bytearray()
        self._send()

    @classmethod
    def h2c(cls, host: str, port: int, timeout: float = 10.0, **kw) -> "H2Client":
        sock = socket.create_connection((host, port), timeout=timeout * SLOW)
        return cls(sock, **kw)

    @classmethod
    def tls(cls, host: str, port: int, ctx: ssl.SSLContext, server_hostname="localhost",
            timeout: float = 10.0, session=None, **kw) -> "H2Client":
        ctx.set_alpn_protocols(["h2"])
        raw = socket.create_connection((host, port), timeout=timeout * SLOW)
        sock = ctx.wrap_socket(raw, server_hostname=server_hostname, session=session)
        assert sock.selected_alpn_protocol() == "h2", sock.selected_alpn_protocol()
        return cls(sock, **kw)

    def _send(self) -> None:
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def request(self, method: str, path: str, headers=(), body: bytes | None = None,
                authority: str = "localhost") -> int:
        sid = self.conn.get_next_available_stream_id()
        hdrs = [(":method", method), (":path", path), (":scheme", "http"),
                (":authority", authority), *headers]
        self.streams[sid] = Stream()
        self.conn.send_headers(sid, hdrs, end_stream=body is None)
        if body is not None:
            self.send_body(sid, body)
        self._send()
        return sid

    def send_body(self, sid: int, body: bytes, end: bool = True) -> None:
        """Sends as much of `body` as the windows allow, waiting for WINDOW_UPDATEs."""
        view = memoryview(body)
        while view:
            window = min(self.conn.local_flow_control_window(sid),
                         self.conn.max_outbound_frame_size)
            if window == 0:
                self._send()
                if not self.read_once():
                    raise ConnectionError("closed while waiting for the window")
                continue
            self.conn.send_data(sid, bytes(view[:window]))
            view = view[window:]
            self._send()
        if end:
            self.conn.end_stream(sid)
            self._send()

    def reset(self, sid: int, code: int = 8) -> None:
        self.conn.reset_stream(sid, code)
        self._send()

    def read_once(self) -> bool:
        """Reads once and handles what came; False when the connection closed."""
        try:
            data = self.sock.recv(1 << 16)
        except (ConnectionResetError, ssl.SSLError, OSError):
            data = b""
        if not data:
            self.closed = True
            return False
        # Fed a frame at a time, so that a graceful GOAWAY can reopen the state machine before
        # the frames after it (see _on).
        self._in += data
        while len(self._in) >= 9:
            size = 9 + int.from_bytes(self._in[:3], "big")
            if len(self._in) < size:
                break
            frame, self._in = bytes(self._in[:size]), self._in[size:]
            try:
                events = self.conn.receive_data(frame)
            except h2.exceptions.ProtocolError:
                events = []
            for ev in events:
                self._on(ev)
        try:
            self._send()
        except OSError:
            pass
        return True

    def _on(self, ev) -> None:
        s = self.streams.get(getattr(ev, "stream_id", 0) or 0)
        if isinstance(ev, h2.events.ResponseReceived) and s:
            s.headers = dict(ev.headers)
            s.status = int(s.headers[":status"])
        elif isinstance(ev, h2.events.TrailersReceived) and s:
            s.trailers = dict(ev.headers)
        elif isinstance(ev, h2.events.DataReceived) and s:
            s.body += ev.data
            self.conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
        elif isinstance(ev, h2.events.StreamEnded) and s:
            s.ended = True
        elif isinstance(ev, h2.events.StreamReset) and s:
            s.reset = ev.error_code
        elif isinstance(ev, h2.events.ConnectionTerminated):
            self.goaway = ev
            if ev.error_code == 0:
                # A graceful GOAWAY: the streams up to last_stream_id still finish (RFC 9113
                # §6.8), but the h2 library closes its state machine on any GOAWAY and would
                # refuse their frames: it is reopened to read them.
                self.conn.state_machine.state = h2.connection.ConnectionState.CLIENT_OPEN
        elif isinstance(ev, h2.events.SettingsAcknowledged):
            self.settings_acked = True

    def wait(self, predicate, timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout * SLOW
        while not predicate():
            if time.monotonic() > deadline or self.closed:
                return predicate()
            self.read_once()
        return True

    def get(self, path: str, headers=(), timeout: float = 10.0) -> Stream:
        sid = self.request("GET", path, headers)
        assert self.wait(lambda: self.streams[sid].done, timeout), f"no answer to {path}"
        return self.streams[sid]

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
