"""Helpers for the HTTP/2 feature tests (test_http2_*.py): one rivet with a TLS listener serves
h2 over TLS (ALPN) on its TLS port and h2c (prior knowledge) on its plain port; the tests reach
it through httpx (http2=True, on httpcore and the `h2` package), curl --http2 /
--http2-prior-knowledge, and a raw frame-level client (`h2` directly) for what httpx cannot say
(a client-side RST_STREAM, OPTIONS *, several cookie fields).

`mode` is "h2c" or "tls"; every client here asserts that HTTP/2 was spoken."""
from __future__ import annotations

import asyncio
import socket
import ssl
import subprocess
import time

import h2.config
import h2.connection
import h2.events
import httpx

from rivet_e2e import SLOW
from tls_e2e import client_context, start_tls

MODES = ("h2c", "tls")
TIMEOUT = 30.0 * SLOW  # per request: generous, a busy machine must not fail a test


def start(rivet, certs, *extra, **kw):
    """rivet with both listeners: the plain port (h2c) and the TLS port (h2 by ALPN)."""
    return start_tls(rivet, certs, *extra, **kw)


def base_url(srv, mode: str) -> str:
    if mode == "tls":
        return f"https://localhost:{srv.tls_port}"
    return f"http://{srv.host}:{srv.port}"


def _client_kw(srv, mode: str, certs) -> dict:
    # Over TLS the client offers h2 and http/1.1 and ALPN decides, as a browser's; in cleartext
    # http1=False makes httpcore speak h2 by prior knowledge (the preface first, no Upgrade).
    kw = dict(http1=mode == "tls", http2=True, base_url=base_url(srv, mode),
              timeout=TIMEOUT, trust_env=False,
              headers={"accept-encoding": "identity"})  # unless a test asks for a coding
    if mode == "tls":
        kw["verify"] = client_context(certs)
    return kw


def client(srv, mode: str, certs, **kw) -> httpx.Client:
    return httpx.Client(**{**_client_kw(srv, mode, certs), **kw})


def async_client(srv, mode: str, certs, local_address: str | None = None,
                 **kw) -> httpx.AsyncClient:
    """An async client; `local_address` connects from another loopback address."""
    args = {**_client_kw(srv, mode, certs), **kw}
    if local_address:
        args["transport"] = httpx.AsyncHTTPTransport(
            http1=args.pop("http1"), http2=args.pop("http2"), verify=args.pop("verify", True),
            local_address=local_address, limits=args.pop("limits", httpx.Limits()))
    return httpx.AsyncClient(**args)


def is_h2(r: httpx.Response) -> httpx.Response:
    """The response, after checking it came over HTTP/2 (over TLS: chosen by ALPN)."""
    assert r.http_version == "HTTP/2", (r.http_version, r.request.url)
    if r.request.url.scheme == "https":
        tls = r.extensions["network_stream"].get_extra_info("ssl_object")
        assert tls is not None, "check the protocol while the (sync) client is open"
        assert tls.selected_alpn_protocol() == "h2", tls.selected_alpn_protocol()
    return r


def raw_body(c: httpx.Client, method: str, url: str, **kw) -> tuple[httpx.Response, bytes]:
    """A response and its body as sent (httpx would decode a Content-Encoding)."""
    with c.stream(method, url, **kw) as r:
        body = b"".join(r.iter_raw())
    return is_h2(r), body


def peak_rss_bytes(pid: int) -> int:
    """The process's peak resident set (VmHWM)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def run_async(coro):
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT * 4))


# ---- curl ----

def curl(srv, mode: str, certs, path: str, *args, timeout: float = 60.0):
    """curl over h2 (--http2 over TLS, --http2-prior-knowledge in cleartext); returns
    (CompletedProcess, http_version: "2" for HTTP/2). -w prints it last, after a newline."""
    proto = ["--http2", "--cacert", str(certs.ca)] if mode == "tls" else \
        ["--http2-prior-knowledge"]
    p = subprocess.run(["curl", "-sS", "--noproxy", "*", *proto, *map(str, args),
                        "-w", "\n%{http_version}", base_url(srv, mode) + path],
                       capture_output=True, timeout=timeout * SLOW)
    out, _, version = p.stdout.rpartition(b"\n")
    p.stdout = out
    return p, version.decode()


# ---- a raw frame-level client ----

class Stream:
    def __init__(self):
        self.headers: list = []   # (name, value) of the response's HEADERS, as str
        self.trailers: list = []
        self.data = bytearray()
        self.ended = False
        self.reset_code: int | None = None

    @property
    def status(self) -> int:
        return int(dict(self.headers)[":status"])

    def header(self, name: str):
        return next((v for k, v in self.headers if k == name), None)


class RawH2:
    """An HTTP/2 connection spoken with the `h2` package directly: frames in, events out."""

    def __init__(self, srv, mode: str, certs, timeout: float = TIMEOUT):
        sock = socket.create_connection((srv.host, srv.tls_port if mode == "tls" else srv.port),
                                        timeout=timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if mode == "tls":
            ctx = client_context(certs)
            ctx.set_alpn_protocols(["h2"])
            sock = ctx.wrap_socket(sock, server_hostname="localhost")
            assert sock.selected_alpn_protocol() == "h2", sock.selected_alpn_protocol()
        self.sock = sock
        self.mode = mode
        self.authority = "localhost" if mode == "tls" else f"{srv.host}:{srv.port}"
        self.conn = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        self.conn.initiate_connection()
        self.streams: dict[int, Stream] = {}
        self.goaway = None
        self.closed = False
        self.ping_acks: list[bytes] = []
        self.flush()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def flush(self) -> None:
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def request(self, method: str, path: str, headers=(), body: bytes | None = None,
                end: bool = True) -> int:
        """Opens a stream; with `body`, sends it as the windows allow. `end`: END_STREAM after
        the body (or the headers)."""
        sid = self.conn.get_next_available_stream_id()
        fields = [(":method", method), (":scheme", "https" if self.mode == "tls" else "http"),
                  (":authority", self.authority), (":path", path), *headers]
        self.streams[sid] = Stream()
        self.conn.send_headers(sid, fields, end_stream=end and body is None)
        self.flush()
        if body is not None:
            self.send_body(sid, body, end)
        return sid

    def send_body(self, sid: int, body: bytes, end: bool = True) -> bool:
        """DATA frames within the peer's windows; False if the server ended or reset the stream
        before all of it went."""
        s = self.streams[sid]
        view = memoryview(body)
        while view:
            if s.ended or s.reset_code is not None:
                return False
            n = min(len(view), self.conn.local_flow_control_window(sid),
                    self.conn.max_outbound_frame_size)
            if n == 0:  # wait for a WINDOW_UPDATE, an answer or a reset
                assert self.pump(TIMEOUT), f"no window for stream {sid} (closed: {self.closed})"
                continue
            self.conn.send_data(sid, bytes(view[:n]))
            self.flush()
            view = view[n:]
        if end:
            self.conn.end_stream(sid)
            self.flush()
        return True

    def reset(self, sid: int) -> None:
        self.conn.reset_stream(sid, error_code=8)  # CANCEL
        self.flush()

    def pump(self, timeout: float) -> bool:
        """Reads once (up to `timeout`) and handles the frames; False at EOF or on timeout."""
        self.sock.settimeout(max(timeout, 0.001))
        try:
            data = self.sock.recv(1 << 16)
        except (socket.timeout, ssl.SSLWantReadError):
            return False
        except (ConnectionResetError, ssl.SSLError):
            data = b""
        if not data:
            self.closed = True
            return False
        for ev in self.conn.receive_data(data):
            s = self.streams.get(getattr(ev, "stream_id", 0))
            if isinstance(ev, h2.events.ResponseReceived):
                s.headers = list(ev.headers)
            elif isinstance(ev, h2.events.TrailersReceived):
                s.trailers = list(ev.headers)
            elif isinstance(ev, h2.events.DataReceived):
                s.data += ev.data
                self.conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, h2.events.StreamEnded):
                s.ended = True
            elif isinstance(ev, h2.events.StreamReset):
                s.reset_code = ev.error_code
            elif isinstance(ev, h2.events.PingAckReceived):
                self.ping_acks.append(ev.ping_data)
            elif isinstance(ev, h2.events.ConnectionTerminated):
                self.goaway = ev
        self.flush()
        return True

    def wait(self, predicate, timeout: float = TIMEOUT, what: str = "the answer"):
        deadline = time.monotonic() + timeout
        while not predicate():
            left = deadline - time.monotonic()
            assert left > 0, f"timed out waiting for {what}"
            if not self.pump(left) and self.closed:
                assert predicate(), f"the connection closed before {what}"

    def ping_roundtrip(self) -> None:
        """A PING and its ACK: the server has read (and acted on) every frame sent before."""
        data = b"%08d" % (len(self.ping_acks) + 1)
        self.conn.ping(data)
        self.flush()
        self.wait(lambda: data in self.ping_acks, what="the PING's ACK")

    def response(self, sid: int, timeout: float = TIMEOUT) -> Stream:
        s = self.streams[sid]
        self.wait(lambda: s.ended or s.reset_code is not None, timeout, f"stream {sid}")
        return s

    def close(self) -> None:
        try:
            self.conn.close_connection()
            self.flush()
        except OSError:
            pass
        self.sock.close()
