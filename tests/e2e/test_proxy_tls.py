"""The PROXY protocol in front of the TLS listener (issue 20): with --proxy-protocol a trusted
peer's v1 or v2 header is read before the TLS handshake on the HTTPS port, and the client it
names is what the access log and the rate limiter see; the header stays optional (a direct TLS
connection from a trusted address is served with its own address), an invalid one closes the
connection before any handshake byte is sent, and an untrusted peer's header is never read.

Clients: Python ssl over a socket that sent the header first (separate writes, the header a
byte at a time, or the header and the ClientHello in one write through an ssl.SSLObject), and
real HAProxy 2.6 in `mode tcp` (send-proxy-v2, send-proxy) with Python ssl and curl behind it,
bound to 127.0.0.5 / 127.0.0.6 so that the client's address is told apart from HAProxy's own
127.0.0.1. Only 127.0.0.1 is trusted (--proxy-trusted 127.0.0.1,::1), so a client bound to
another loopback address is an untrusted peer of the same server.

The access log is JSON lines: each line's `remote_addr` and its `ssl_protocol` (present on
https lines only) show that the request came over TLS with the header's client."""
import json
import socket
import ssl
import subprocess
import time

import pytest

from ops_e2e import log_lines, wait_for, write_config
from rivet_e2e import SLOW, Reader, Response, build_request, parse_responses
from test_proxy_protocol import HAPROXY, V2_SIG, launch_haproxy, v1, v2
from tls_e2e import client_context, metric_sum, tls_metrics

PROXY = "127.0.0.1"        # the trusted peer: the tests' own "proxy" sockets and HAProxy
UNTRUSTED = "127.0.0.9"    # a peer that is not trusted
CLIENT = "127.0.0.5"       # a client behind HAProxy (Python ssl)
CURL_CLIENT = "127.0.0.6"  # another one (curl)
HELLO = b"Hello, World!"


def serve(rivet, certs, tmp_path, *extra, config=None):
    """rivet with HTTPS on an ephemeral port, the PROXY protocol from 127.0.0.1 (and ::1) only,
    and a JSON access log."""
    log = tmp_path / "access.json"
    args = ["--threads", "1", "--workers", "1", *certs.server.args(), "--tls-port", "0",
            "--proxy-protocol", "--proxy-trusted", "127.0.0.1,::1",
            "--access-log", log, "--log-format", "json", *extra]
    if config:
        args += ["--config", write_config(tmp_path / "rivet.json", config)]
    return rivet(args=args), log


def logged(log, count) -> dict:
    """Waits until `count` lines are in the access log; {uri: (remote_addr, ssl_protocol)}
    (ssl_protocol None on a plain-HTTP line)."""
    def ready():
        lines = log_lines(log)
        return lines if len(lines) >= count else None
    out = {}
    for line in wait_for(ready, timeout=10, what=f"{count} access log lines"):
        d = json.loads(line)
        out[d["uri"]] = (d["remote_addr"], d.get("ssl_protocol"))
    return out


def tcp_from(srv, source: str) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(10 * SLOW)
    s.bind((source, 0))
    s.connect((srv.host, srv.tls_port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


class ProxiedTls:
    """A TLS connection to rivet's HTTPS port whose first bytes on the wire are `header`.

    how="apart": the header in its own write(s), then ssl.SSLContext.wrap_socket's handshake.
    how="bytewise": the header one byte per write (TCP_NODELAY: a segment each), then the same.
    how="together": the header and the ClientHello in one write (an ssl.SSLObject over memory
    BIOs drives the handshake), as a proxy that coalesces them sends it.

    A handshake that fails raises AssertionError naming what the server sent back."""

    def __init__(self, srv, certs, header: bytes, how: str = "apart", source: str = PROXY):
        self.ctx = client_context(certs)
        self.raw = tcp_from(srv, source)
        self.tls = None
        try:
            if how == "together":
                self._bio_handshake(header)
            else:
                try:
                    if how == "bytewise":
                        for i in range(len(header)):
                            self.raw.send(header[i:i + 1])
                            time.sleep(0.001)
                    elif header:
                        self.raw.sendall(header)
                except (BrokenPipeError, ConnectionResetError) as e:
                    raise AssertionError(f"the server closed while a PROXY header was being "
                                         f"written ({how}): {e!r}") from None
                try:
                    self.tls = self.ctx.wrap_socket(self.raw, server_hostname="localhost")
                except (ssl.SSLError, OSError) as e:
                    raise AssertionError(
                        f"TLS handshake after a {len(header)}-byte PROXY header ({how}) failed: "
                        f"{e!r} (WRONG_VERSION_NUMBER: the server answered in plain text, such "
                        f"as a 400; EOF: it closed)") from None
                self.reader = Reader(lambda: self.tls.recv(1 << 16))
        except BaseException:
            self.close()
            raise

    def _bio_handshake(self, header: bytes) -> None:
        inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.obj = self.ctx.wrap_bio(inc, out, server_hostname="localhost")
        self.inc, self.out = inc, out
        first = True
        received = b""
        while True:
            try:
                self.obj.do_handshake()
                break
            except ssl.SSLWantReadError:
                pending = out.read()
                if first:
                    pending, first = header + pending, False
                try:
                    if pending:
                        self.raw.sendall(pending)
                    data = self.raw.recv(1 << 16)
                except (BrokenPipeError, ConnectionResetError):
                    data = b""
                if not data:
                    raise AssertionError(f"the server closed during the handshake after a PROXY "
                                         f"header in the ClientHello's write; it sent "
                                         f"{received!r}") from None
                received += data
                inc.write(data)
            except ssl.SSLError as e:
                raise AssertionError(f"TLS handshake after a PROXY header in the ClientHello's "
                                     f"write failed: {e!r}; the server sent {received[:200]!r}"
                                     ) from None
        self._flush()

        def recv() -> bytes:
            while True:
                try:
                    return self.obj.read(1 << 16)
                except ssl.SSLWantReadError:
                    data = self.raw.recv(1 << 16)
                    if not data:
                        return b""
                    self.inc.write(data)
                except ssl.SSLZeroReturnError:
                    return b""
        self.reader = Reader(recv)

    def _flush(self) -> None:
        pending = self.out.read()
        if pending:
            self.raw.sendall(pending)

    def request(self, target: str, headers=None) -> Response:
        data = build_request("GET", target, headers=headers)
        if self.tls is not None:
            self.tls.sendall(data)
        else:
            self.obj.write(data)
            self._flush()
        return self.reader.read_response()

    def session_version(self) -> str:
        return self.tls.version() if self.tls is not None else self.obj.version()

    def close(self) -> None:
        for s in (self.tls, self.raw):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def client_hello(certs) -> bytes:
    """A real ClientHello, as a Python ssl client sends it first."""
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = client_context(certs).wrap_bio(inc, out, server_hostname="localhost")
    with pytest.raises(ssl.SSLWantReadError):
        obj.do_handshake()
    return out.read()


def read_until_close(sock: socket.socket, timeout: float) -> tuple[bytes, bool]:
    """Everything the peer sends until it closes (EOF or reset), and whether it did in time."""
    deadline = time.monotonic() + timeout * SLOW
    data = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return data, False
        sock.settimeout(left)
        try:
            chunk = sock.recv(1 << 16)
        except ConnectionResetError:
            return data, True
        except socket.timeout:
            return data, False
        if not chunk:
            return data, True
        data += chunk


def handshakes(srv) -> float:
    return metric_sum(tls_metrics(srv), "rivet_tls_handshakes_total")


def proxy_refused(srv) -> float:
    text = srv.get("/metrics").text
    for line in text.splitlines():
        if line.startswith("rivet_proxy_header_refused_total "):
            return float(line.split()[1])
    raise AssertionError("no rivet_proxy_header_refused_total in /metrics")


# ---------------------------------------------------------------------------------------------
# Headers from a trusted peer


def test_direct_tls_from_a_trusted_peer_needs_no_header(rivet, tls_certs, tmp_path):
    """The header is optional: HAProxy's own health checks (check-ssl without check-send-proxy)
    and any direct client on the trusted address send none."""
    srv, log = serve(rivet, tls_certs, tmp_path)
    with ProxiedTls(srv, tls_certs, b"") as c:
        r = c.request("/hello?direct-1")
        assert r.status == 200 and r.body == HELLO, r
        assert c.request("/hello?direct-2").status == 200  # keep-alive
    with ProxiedTls(srv, tls_certs, b"", how="together") as c:
        assert c.request("/hello?direct-bio").status == 200
    addrs = logged(log, 3)
    assert {k: v[0] for k, v in addrs.items()} == {
        "/hello?direct-1": PROXY, "/hello?direct-2": PROXY, "/hello?direct-bio": PROXY}
    assert all(v[1] for v in addrs.values()), addrs  # TLS lines


CASES = {
    # target: (header, how it is written, the address the log must show)
    "/hello?v1-tcp4": (v1("192.0.2.10", sport=40001, dport=443), "apart", "192.0.2.10"),
    "/hello?v1-tcp6": (v1("2001:db8::10", "2001:db8::1", "TCP6"), "apart", "2001:db8::10"),
    # A NOOP TLV and an SSL TLV (type 0x20: what HAProxy's send-proxy-v2-ssl adds), skipped.
    "/hello?v2-ipv4": (v2("198.51.100.20", "10.0.0.1", tlvs=b"\x04\x00\x02ok"
                          + b"\x20\x00\x05\x01\x00\x00\x00\x00"), "apart", "198.51.100.20"),
    "/hello?v2-ipv6": (v2("2001:db8::20", "::1"), "apart", "2001:db8::20"),
    "/hello?v1-together": (v1("192.0.2.12"), "together", "192.0.2.12"),
    "/hello?v2-together": (v2("198.51.100.21", "10.0.0.1"), "together", "198.51.100.21"),
    "/hello?v1-bytewise": (v1("192.0.2.11"), "bytewise", "192.0.2.11"),
    "/hello?v2-bytewise": (v2("2001:db8::21", "::1"), "bytewise", "2001:db8::21"),
    # A proxy's own connection (v2 LOCAL) and v1 UNKNOWN keep the connection's address.
    "/hello?v2-local": (v2("203.0.113.1", "10.0.0.1", command=0), "apart", PROXY),
    "/hello?v1-unknown": (b"PROXY UNKNOWN\r\n", "apart", PROXY),
}


@pytest.mark.parametrize("target", list(CASES))
def test_a_header_before_the_handshake_names_the_client(rivet, tls_certs, tmp_path, target):
    header, how, want = CASES[target]
    srv, log = serve(rivet, tls_certs, tmp_path)
    with ProxiedTls(srv, tls_certs, header, how) as c:
        r = c.request(target)
        assert r.status == 200 and r.body == HELLO, r
        assert c.request(target + "-again").status == 200  # the same connection, kept alive
    addrs = logged(log, 2)
    assert addrs[target][0] == want, addrs
    assert addrs[target + "-again"][0] == want, addrs
    assert addrs[target][1] and addrs[target][1].startswith("TLSv"), addrs  # an https line


def test_handshakes_after_headers_are_counted_as_handshakes(rivet, tls_certs, tmp_path):
    srv, _ = serve(rivet, tls_certs, tmp_path)
    before = handshakes(srv)
    for header in (v1("192.0.2.30"), v2("198.51.100.30", "10.0.0.1")):
        with ProxiedTls(srv, tls_certs, header) as c:
            assert c.request("/hello").status == 200
    assert handshakes(srv) == before + 2
    assert proxy_refused(srv) == 0


BAD_HEADERS = [
    b"PROXY TCP4 192.0.2.1 10.0.0.1 99999 443\r\n",  # a port out of range
    b"PROXY TCP9 x\r\n",                              # an unknown family
    b"PROXY " + b"9" * 200,                           # a v1 line past 107 bytes
    V2_SIG + b"\x21\x11\xff\xff",                     # a v2 header longer than 4 KiB
    V2_SIG + b"\x31\x11\x00\x0c" + bytes(12),         # v2 version 3
]


def test_an_invalid_header_closes_before_any_handshake(rivet, tls_certs, tmp_path):
    """The header and a real ClientHello in one write: the server must close without a byte
    (no ServerHello, no alert, no plain-HTTP 400), count the refusal, and serve on."""
    srv, log = serve(rivet, tls_certs, tmp_path)
    hello = client_hello(tls_certs)
    before = handshakes(srv)
    for bad in BAD_HEADERS:
        with tcp_from(srv, PROXY) as s:
            try:
                s.sendall(bad + hello)
            except (BrokenPipeError, ConnectionResetError):
                pass
            data, closed = read_until_close(s, 10)
        assert closed and data == b"", (bad, data[:200])
    assert srv.alive()
    assert proxy_refused(srv) == len(BAD_HEADERS)
    assert handshakes(srv) == before
    with ProxiedTls(srv, tls_certs, v1("192.0.2.2")) as c:  # and the next one is served
        assert c.request("/hello?after").status == 200
    assert logged(log, 1)["/hello?after"][0] == "192.0.2.2"


def test_a_stalled_header_is_closed_by_its_timeout(rivet, tls_certs, tmp_path):
    """Half a header that never ends: closed silently once a timeout runs out (the header's or
    the handshake's: both are 1 s here), not at once and not never."""
    srv, _ = serve(rivet, tls_certs, tmp_path, "--header-timeout", "1",
                   "--handshake-timeout", "1")
    for partial in (b"PROXY TCP4 192.0.2.1 ", V2_SIG + b"\x21\x11\x00\x0c\xc0\x00"):
        with tcp_from(srv, PROXY) as s:
            start = time.monotonic()
            s.sendall(partial)
            data, closed = read_until_close(s, 10)
            took = time.monotonic() - start
        assert closed and data == b"", (partial, data[:200])
        assert 0.5 <= took < 10 * SLOW, (partial, took)


# ---------------------------------------------------------------------------------------------
# An untrusted peer


def test_an_untrusted_peers_header_is_not_read(rivet, tls_certs, tmp_path):
    """From 127.0.0.9 (not in --proxy-trusted) a header followed by a real ClientHello must not
    get a TLS session: the header is never parsed, so its bytes are what the TLS listener sees
    (a v1 line looks like plain HTTP: 400 at most; a v2 signature is not TLS: closed). Had the
    header been honoured, the handshake would succeed and 192.0.2.66 reach the log."""
    srv, log = serve(rivet, tls_certs, tmp_path)
    before = handshakes(srv)
    for header, how in ((v1("192.0.2.66"), "apart"), (v2("192.0.2.66", "10.0.0.1"), "apart"),
                        (v1("192.0.2.66"), "together")):
        with pytest.raises(AssertionError, match="handshake|closed"):
            with ProxiedTls(srv, tls_certs, header, how, source=UNTRUSTED) as c:
                c.request("/hello?spoofed")
    assert handshakes(srv) == before
    assert proxy_refused(srv) == 0  # not a refused header: no header was read at all
    # The same peer without a header is an ordinary TLS client, logged with its own address.
    with ProxiedTls(srv, tls_certs, b"", source=UNTRUSTED) as c:
        assert c.request("/hello?untrusted-plain").status == 200
    addrs = logged(log, 1)
    assert addrs["/hello?untrusted-plain"][0] == UNTRUSTED, addrs
    assert "192.0.2.66" not in log.read_text()
    assert "spoofed" not in log.read_text()


# ---------------------------------------------------------------------------------------------
# Rate limits


def test_the_rate_limit_is_per_proxied_client_over_tls(rivet, tls_certs, tmp_path):
    """Every connection comes from 127.0.0.1; each header's client has a bucket of its own. Were
    the header's address not used, the second client would find the first's bucket empty."""
    srv, log = serve(rivet, tls_certs, tmp_path, config={"rate_limiting": {
        "enabled": True, "requests_per_second": 0.001, "burst_size": 3}})

    def codes(header, n):
        with ProxiedTls(srv, tls_certs, header) as c:
            return [c.request(f"/hello?rl{i}").status for i in range(n)]

    assert codes(v1("192.0.2.1"), 4) == [200, 200, 200, 429]
    assert codes(v2("192.0.2.2", "10.0.0.1"), 3) == [200, 200, 200]  # a budget of its own
    assert codes(v1("192.0.2.1"), 1) == [429]  # the first one's is still spent
    assert codes(b"", 3) == [200, 200, 200]  # the proxy's own address: untouched


# ---------------------------------------------------------------------------------------------
# Real HAProxy in front (mode tcp: TLS passes through, rivet terminates it)


def start_haproxy(tmp_path, tls_port: int, server_option: str):
    port = _free_port()
    cfg = tmp_path / f"haproxy-tcp-{server_option}.cfg"
    cfg.write_text(f"""
global
    maxconn 100
defaults
    mode tcp
    timeout connect 5s
    timeout client 30s
    timeout server 30s
frontend fe
    bind 127.0.0.1:{port}
    default_backend be
backend be
    server s1 127.0.0.1:{tls_port} {server_option}
""")
    return launch_haproxy(cfg, port), port


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(proc) -> str:
    proc.terminate()
    try:
        out, _ = proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return out.decode(errors="replace")


@pytest.mark.skipif(HAPROXY is None, reason="haproxy is not installed")
@pytest.mark.parametrize("server_option", ["send-proxy-v2", "send-proxy"])
def test_behind_haproxy_in_tcp_mode(rivet, tls_certs, tmp_path, server_option):
    srv, log = serve(rivet, tls_certs, tmp_path)
    proc, port = start_haproxy(tmp_path, srv.tls_port, server_option)
    haproxy_out = ""
    try:
        ctx = client_context(tls_certs)
        for i in range(3):  # Python ssl from 127.0.0.5: two requests on each connection
            raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            raw.settimeout(10 * SLOW)
            raw.bind((CLIENT, 0))
            raw.connect(("127.0.0.1", port))
            try:
                s = ctx.wrap_socket(raw, server_hostname="localhost")
            except (ssl.SSLError, OSError) as e:
                raw.close()
                raise AssertionError(f"TLS through HAProxy ({server_option}) failed: {e!r}") \
                    from None
            with s:
                s.sendall(build_request("GET", f"/hello?via-haproxy-{i}")
                          + build_request("GET", f"/hello?via-haproxy-{i}b",
                                          headers={"Connection": "close"}))
                data = b""
                while chunk := s.recv(65536):
                    data += chunk
            rs = parse_responses(data)
            assert [r.status for r in rs] == [200, 200], data[:300]
            assert all(r.body == HELLO for r in rs), data[:300]
        # curl from 127.0.0.6, certificate verified for localhost through the proxy
        p = subprocess.run(["curl", "-sS", "--max-time", str(20 * SLOW), "--cacert",
                            str(tls_certs.ca), "--interface", CURL_CLIENT, "--resolve",
                            f"localhost:{port}:127.0.0.1",
                            f"https://localhost:{port}/hello?via-haproxy-curl"],
                           capture_output=True, timeout=30 * SLOW)
        assert p.returncode == 0 and p.stdout == HELLO, (p.returncode, p.stderr, p.stdout)
        addrs = logged(log, 7)
    finally:
        haproxy_out = stop(proc)
    via = {k: v for k, v in addrs.items() if "via-haproxy" in k}
    assert len(via) == 7, (addrs, haproxy_out)
    # The client as HAProxy saw it, not HAProxy's own 127.0.0.1.
    assert {k: v[0] for k, v in via.items()} == {
        **{f"/hello?via-haproxy-{i}{b}": CLIENT for i in range(3) for b in ("", "b")},
        "/hello?via-haproxy-curl": CURL_CLIENT}, via
    assert all(v[1] and v[1].startswith("TLSv") for v in via.values()), via
