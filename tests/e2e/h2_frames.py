"""Helpers for the HTTP/2 end-to-end tests: a raw HTTP/2 client that writes whatever frames a
test hands it (hyperframe, hpack: the framing and HPACK halves of Python's `h2`) and records
every frame the server sends, the HTTP/2 samples of /metrics, and the server's memory.

The raw client never validates what it sends: the attack tests send floods and malformed
sequences on purpose. It reads while it writes (one thread, select), so a server answering a
flood (PING and SETTINGS ACKs) never stalls on a client that does not read.
"""
from __future__ import annotations

import select
import socket
import ssl
import time
from pathlib import Path

import hpack
from hyperframe.frame import (ContinuationFrame, DataFrame, Frame, GoAwayFrame, HeadersFrame,
                              RstStreamFrame, SettingsFrame)

from rivet_e2e import SLOW

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

# The SETTINGS of issue 22's contract (MAX_HEADER_LIST_SIZE is --max-header-bytes).
MAX_CONCURRENT_STREAMS = 100
# SETTINGS_INITIAL_WINDOW_SIZE, per stream: 256 KiB as docs/ARCHITECTURE.md says (stream_window;
# the first contract said 1 MiB).
STREAM_WINDOW = 256 << 10
CONNECTION_WINDOW = 16 << 20
MAX_HEADER_LIST_SIZE = 16384

# RFC 9113 section 7 error codes.
NO_ERROR = 0x0
PROTOCOL_ERROR = 0x1
CANCEL = 0x8
REFUSED_STREAM = 0x7
ENHANCE_YOUR_CALM = 0xB
ERROR_NAMES = {0x0: "NO_ERROR", 0x1: "PROTOCOL_ERROR", 0x2: "INTERNAL_ERROR",
               0x3: "FLOW_CONTROL_ERROR", 0x4: "SETTINGS_TIMEOUT", 0x5: "STREAM_CLOSED",
               0x6: "FRAME_SIZE_ERROR", 0x7: "REFUSED_STREAM", 0x8: "CANCEL",
               0x9: "COMPRESSION_ERROR", 0xA: "CONNECT_ERROR", 0xB: "ENHANCE_YOUR_CALM",
               0xC: "INADEQUATE_SECURITY", 0xD: "HTTP_1_1_REQUIRED"}


class ServerClosed(Exception):
    """The server closed (or reset) the connection before what was awaited came."""


class RawH2:
    """One HTTP/2 connection, h2c (prior knowledge) or TLS with ALPN h2. Frames the server sent
    are kept in `frames` in order; header blocks are decoded into `headers[stream_id]`."""

    def __init__(self, host: str, port: int, tls_ctx: ssl.SSLContext | None = None,
                 settings: dict | None = None, timeout: float = 20.0):
        raw = socket.create_connection((host, port), timeout=timeout * SLOW)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if tls_ctx is not None:
            tls_ctx.set_alpn_protocols(["h2"])
            raw = tls_ctx.wrap_socket(raw, server_hostname="localhost")
            assert raw.selected_alpn_protocol() == "h2", raw.selected_alpn_protocol()
        raw.setblocking(False)
        self.sock = raw
        self.inbuf = bytearray()
        self.frames: list[Frame] = []
        self.headers: dict[int, list[list[tuple[str, str]]]] = {}
        self.closed = False
        self.bytes_sent = 0
        self.outbuf = bytearray()
        self.encoder = hpack.Encoder()
        self.decoder = hpack.Decoder()
        self.decoder.max_allowed_table_size = 1 << 16
        self._block = bytearray()
        self._block_stream = 0
        self.next_stream_id = 1
        self.send(PREFACE + SettingsFrame(0, settings or {}).serialize())

    # -- writing --

    def send(self, data: bytes, deadline: float | None = None) -> bool:
        """Writes all of data (after any SETTINGS ACKs owed), reading whatever the server sends
        meanwhile. False when the server closed the connection before all of it went out (a
        flood cut short)."""
        self.outbuf += data
        return self._pump(deadline or time.monotonic() + 60 * SLOW)

    def _pump(self, deadline: float) -> bool:
        while self.outbuf:
            if self.closed:
                return False
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"could not write {len(self.outbuf)} bytes in time")
            r, w, _ = select.select([self.sock], [self.sock], [], left)
            if r:
                self._read_available()
            if w and not self.closed:
                chunk = bytes(self.outbuf[:16384])
                try:
                    n = self.sock.send(chunk)
                except (ssl.SSLWantWriteError, ssl.SSLWantReadError, BlockingIOError):
                    continue
                except OSError:  # reset, broken pipe, TLS alert
                    self.closed = True
                    return False
                self.bytes_sent += n
                del self.outbuf[:n]
        return True

    def send_frames(self, frames, deadline: float | None = None) -> bool:
        return self.send(b"".join(f.serialize() if isinstance(f, Frame) else f for f in frames),
                         deadline)

    def new_stream_id(self) -> int:
        sid = self.next_stream_id
        self.next_stream_id += 2
        return sid

    def request_headers(self, path: str, method: str = "GET", extra=()) -> list:
        return [(":method", method), (":scheme", "https"), (":path", path),
                (":authority", "localhost"), *extra]

    def headers_frame(self, stream_id: int, headers, end_stream: bool = True) -> HeadersFrame:
        f = HeadersFrame(stream_id, self.encoder.encode(headers))
        f.flags.add("END_HEADERS")
        if end_stream:
            f.flags.add("END_STREAM")
        return f

    def request(self, path: str, method: str = "GET", extra=(), end_stream: bool = True) -> int:
        """Sends one request's HEADERS; returns its stream id."""
        sid = self.new_stream_id()
        self.send_frames([self.headers_frame(sid, self.request_headers(path, method, extra),
                                             end_stream)])
        return sid

    # -- reading --

    def _read_available(self) -> None:
        while not self.closed:
            try:
                data = self.sock.recv(1 << 16)
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
                return
            except OSError:  # reset, TLS alert
                self.closed = True
                return
            if not data:
                self.closed = True
                return
            self.inbuf += data
            self._parse()

    def _parse(self) -> None:
        while len(self.inbuf) >= 9:
            frame, length = Frame.parse_frame_header(memoryview(self.inbuf[:9]))
            if len(self.inbuf) < 9 + length:
                return
            frame.parse_body(memoryview(bytes(self.inbuf[9:9 + length])))
            del self.inbuf[:9 + length]
            self.frames.append(frame)
            if isinstance(frame, SettingsFrame) and "ACK" not in frame.flags:
                ack = SettingsFrame(0)
                ack.flags.add("ACK")
                self.outbuf += ack.serialize()
            if isinstance(frame, (HeadersFrame, ContinuationFrame)):
                if isinstance(frame, HeadersFrame):
                    self._block = bytearray()
                    self._block_stream = frame.stream_id
                self._block += frame.data
                if "END_HEADERS" in frame.flags:
                    fields = self.decoder.decode(bytes(self._block), raw=False)
                    self.headers.setdefault(self._block_stream, []).append(fields)

    def wait_for(self, match, timeout: float = 20.0, what: str = "a frame"):
        """The first frame (in arrival order, from the start) for which match(frame) is true,
        reading until it comes. Raises ServerClosed if the connection ends first and
        TimeoutError on the deadline."""
        deadline = time.monotonic() + timeout * SLOW
        seen = 0
        while True:
            for f in self.frames[seen:]:
                if match(f):
                    return f
            seen = len(self.frames)
            if self.closed:
                raise ServerClosed(f"connection closed before {what}; frames: {self.summary()}")
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {what} within {timeout * SLOW:.0f} s; frames: "
                                   f"{self.summary()}")
            if self.outbuf:
                self._pump(deadline)
                continue
            r, _, _ = select.select([self.sock], [], [], left)
            if r:
                self._read_available()

    def wait_goaway(self, timeout: float = 20.0) -> GoAwayFrame:
        return self.wait_for(lambda f: isinstance(f, GoAwayFrame), timeout, "GOAWAY")

    def wait_closed(self, timeout: float = 20.0) -> None:
        """Reads (and keeps) frames until the server closes the connection."""
        deadline = time.monotonic() + timeout * SLOW
        while not self.closed:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"connection still open after {timeout * SLOW:.0f} s; "
                                   f"frames: {self.summary()}")
            r, _, _ = select.select([self.sock], [], [], left)
            if r:
                self._read_available()

    def response(self, stream_id: int, timeout: float = 20.0) -> tuple[dict, bytes]:
        """The response on stream_id once its END_STREAM came: (headers as a dict, body)."""
        def ended(f):
            return f.stream_id == stream_id and (
                "END_STREAM" in f.flags or isinstance(f, RstStreamFrame))
        end = self.wait_for(ended, timeout, f"the end of stream {stream_id}")
        if isinstance(end, RstStreamFrame):
            raise AssertionError(f"stream {stream_id} reset: {error_name(end.error_code)}")
        body = b"".join(f.data for f in self.frames
                        if isinstance(f, DataFrame) and f.stream_id == stream_id)
        return dict(self.headers[stream_id][0]), body

    def summary(self, last: int = 12) -> str:
        def one(f):
            name = type(f).__name__.replace("Frame", "")
            extra = ""
            if isinstance(f, GoAwayFrame):
                extra = f" {error_name(f.error_code)} last={f.last_stream_id} {f.additional_data!r}"
            elif isinstance(f, RstStreamFrame):
                extra = f" {error_name(f.error_code)}"
            return f"{name}(s{f.stream_id}{extra})"
        head = f"{len(self.frames)} frames, closed={self.closed}"
        return head + ": ..." + ", ".join(one(f) for f in self.frames[-last:])

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def error_name(code: int) -> str:
    return ERROR_NAMES.get(code, hex(code))


def h2c(srv, **kw) -> RawH2:
    return RawH2(srv.host, srv.port, **kw)


def h2_tls(srv, certs, **kw) -> RawH2:
    ctx = ssl.create_default_context(cafile=str(certs.ca))
    return RawH2(srv.host, srv.tls_port, tls_ctx=ctx, **kw)


def continuation(stream_id: int, block: bytes, end: bool) -> ContinuationFrame:
    f = ContinuationFrame(stream_id, block)
    if end:
        f.flags.add("END_HEADERS")
    return f


# ---------------------------------------------------------------------------------------------
# The server's side: /metrics and memory


def h2_metrics(srv) -> dict:
    """rivet_http2_* samples of /metrics (plain port, HTTP/1.1): {(name, labels): value}."""
    from prometheus_client import parser
    r = srv.get("/metrics")
    assert r.status == 200, r
    out = {}
    for fam in parser.text_string_to_metric_families(r.text):
        for s in fam.samples:
            if s.name.startswith("rivet_http2"):
                out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def metric(samples: dict, name: str, **labels) -> float:
    """The sum of name's samples whose labels include labels. code= may be an int: the label is
    its RFC 9113 name (ENHANCE_YOUR_CALM)."""
    total = 0.0
    for (n, ls), v in samples.items():
        if n != name:
            continue
        d = dict(ls)
        ok = True
        for k, want in labels.items():
            if k == "code" and isinstance(want, int):
                want = ERROR_NAMES[want]
            ok = ok and d.get(k) == want
        if ok:
            total += v
    return total


def memory_kib(pid: int) -> dict:
    """VmRSS and VmHWM (peak RSS) of a process, KiB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(rest.split()[0])
    return out
