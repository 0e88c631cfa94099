"""Helpers for the HTTP/2 feature tests (test_http2_features.py, _files.py, _ops.py): one rivet
with a TLS listener serves h2 over TLS (ALPN) on its TLS port and h2c (prior knowledge) on its
plain port; the tests reach it through httpx (http2=True, on httpcore and the `h2` package),
curl --http2 / --http2-prior-knowledge, and h2_e2e.py's frame-level client for what httpx
cannot say (a client-side RST_STREAM, OPTIONS *, several cookie fields, a PING).

`mode` is "h2c" or "tls"; every client here asserts that HTTP/2 was spoken."""
from __future__ import annotations

import asyncio
import os
import socket
import subprocess

import h2.events
import httpx

from h2_e2e import H2Client, Stream
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


# ---- frames: h2_e2e.py's client, with what these tests also say ----

class RawH2(H2Client):
    """H2Client on rivet's TLS port (ALPN h2) or plain port (h2c), with the scheme that fits,
    a stream whose body follows its HEADERS, a body that stops once the server has answered,
    and a PING round trip."""

    def __init__(self, srv, mode: str, certs):
        sock = socket.create_connection(
            (srv.host, srv.tls_port if mode == "tls" else srv.port), timeout=TIMEOUT)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if mode == "tls":
            ctx = client_context(certs)
            ctx.set_alpn_protocols(["h2"])
            sock = ctx.wrap_socket(sock, server_hostname="localhost")
            assert sock.selected_alpn_protocol() == "h2", sock.selected_alpn_protocol()
        self.scheme = "https" if mode == "tls" else "http"
        self.authority = "localhost" if mode == "tls" else f"{srv.host}:{srv.port}"
        self.ping_acks: list[bytes] = []
        super().__init__(sock)

    def open(self, method: str, path: str, headers=(), end: bool = True) -> int:
        """A stream's HEADERS (END_STREAM unless `end` is False: a body follows)."""
        sid = self.conn.get_next_available_stream_id()
        self.streams[sid] = Stream()
        self.conn.send_headers(sid, [(":method", method), (":scheme", self.scheme),
                                     (":authority", self.authority), (":path", path),
                                     *headers], end_stream=end)
        self._send()
        return sid

    def send_body_while_open(self, sid: int, body: bytes) -> bool:
        """DATA within the windows, then END_STREAM; False (and no more DATA) once the server
        has ended or reset the stream."""
        s, view = self.streams[sid], memoryview(body)
        while view and not s.done:
            n = min(len(view), self.conn.local_flow_control_window(sid),
                    self.conn.max_outbound_frame_size)
            if n == 0:  # wait for a WINDOW_UPDATE, an answer or a reset
                assert self.read_once(), f"closed while stream {sid} waited for its window"
                continue
            self.conn.send_data(sid, bytes(view[:n]))
            self._send()
            view = view[n:]
        if s.done:
            return False
        self.conn.end_stream(sid)
        self._send()
        return True

    def _on(self, ev) -> None:
        if isinstance(ev, h2.events.PingAckReceived):
            self.ping_acks.append(ev.ping_data)
        super()._on(ev)

    def ping_roundtrip(self) -> None:
        """A PING and its ACK: the server has read (and acted on) every frame sent before."""
        data = os.urandom(8)
        self.conn.ping(data)
        self._send()
        assert self.wait(lambda: data in self.ping_acks, TIMEOUT / SLOW), "no PING ACK"

    def response(self, sid: int) -> Stream:
        assert self.wait(lambda: self.streams[sid].done, TIMEOUT / SLOW), f"stream {sid}"
        return self.streams[sid]
