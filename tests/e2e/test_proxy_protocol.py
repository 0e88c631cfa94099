"""The PROXY protocol (--proxy-protocol): a trusted proxy's v1 or v2 header names the client, and
the access log and the rate limiter see that client. Raw sockets send the headers (whole, with the
request in one write, or a byte at a time); then real HAProxy 2.6 (send-proxy-v2 and send-proxy)
stands in front of rivet, with a client bound to 127.0.0.5 so that its address is told apart from
HAProxy's own 127.0.0.1."""
import os
import shutil
import socket
import struct
import subprocess
import time

import json

import pytest

from ops_e2e import COMBINED_RE, conn_from, free_port, get, log_lines, wait_for, write_config
from rivet_e2e import BIN, SLOW

HAPROXY = shutil.which("haproxy", path=os.environ.get("PATH", "") + ":/usr/sbin:/usr/local/sbin")
V2_SIG = b"\r\n\r\n\x00\r\nQUIT\n"


def v1(src: str, dst: str = "127.0.0.1", family: str = "TCP4", sport=40000, dport=80) -> bytes:
    return f"PROXY {family} {src} {dst} {sport} {dport}\r\n".encode()


def v2(src: str, dst: str, command: int = 1, sport=40000, dport=80, tlvs: bytes = b"") -> bytes:
    if ":" in src:
        fam = 0x21
        block = socket.inet_pton(socket.AF_INET6, src) + socket.inet_pton(socket.AF_INET6, dst)
    else:
        fam = 0x11
        block = socket.inet_aton(src) + socket.inet_aton(dst)
    block += struct.pack("!HH", sport, dport) + tlvs
    return V2_SIG + bytes([0x20 | command, fam]) + struct.pack("!H", len(block)) + block


def serve(rivet, tmp_path, *extra, config=None):
    log = tmp_path / "access.log"
    args = ["--threads", "1", "--workers", "1", "--proxy-protocol", "--access-log", log, *extra]
    if config:
        args += ["--config", write_config(tmp_path / "rivet.json", config)]
    return rivet(args=args), log


def logged(log, count):
    """Waits until `count` lines are in the access log; returns {request target: address}."""
    def ready():
        lines = log_lines(log)
        return lines if len(lines) >= count else None
    lines = wait_for(ready, what=f"{count} access log lines")
    out = {}
    for line in lines:
        m = COMBINED_RE.match(line)
        assert m, line
        out[m["request"].split(" ")[1] if m["request"] != "-" else "-"] = m["addr"]
    return out


def exchange(srv, data: bytes, source="127.0.0.1", one_byte_at_a_time=False):
    with conn_from(srv, source) as c:
        if one_byte_at_a_time:
            for i in range(len(data)):
                c.send(data[i:i + 1])
                time.sleep(0.001)
        else:
            c.send(data)
        return c.read_response()


def test_headers_name_the_client_in_the_access_log(rivet, tmp_path):
    srv, log = serve(rivet, tmp_path)
    cases = {
        "/echo?v1-tcp4": v1("192.0.2.10"),
        "/echo?v1-tcp6": v1("2001:db8::10", "2001:db8::1", "TCP6"),
        "/echo?v2-ipv4": v2("198.51.100.20", "10.0.0.1", tlvs=b"\x04\x00\x02ok"),  # NOOP TLV
        "/echo?v2-ipv6": v2("2001:db8::20", "::1"),
        "/echo?v1-unknown": b"PROXY UNKNOWN\r\n",
        "/echo?v2-local": v2("203.0.113.1", "10.0.0.1", command=0),
        "/echo?no-header": b"",  # a trusted peer may send none (a health check)
    }
    for target, header in cases.items():
        assert exchange(srv, header + get(target)).status == 200, target
    # Split into single-byte writes: the header, then the request.
    assert exchange(srv, v1("192.0.2.11") + get("/echo?v1-bytewise"),
                    one_byte_at_a_time=True).status == 200
    assert exchange(srv, v2("2001:db8::21", "::1") + get("/echo?v2-bytewise"),
                    one_byte_at_a_time=True).status == 200
    addrs = logged(log, len(cases) + 2)
    assert addrs == {
        "/echo?v1-tcp4": "192.0.2.10",
        "/echo?v1-tcp6": "2001:db8::10",
        "/echo?v2-ipv4": "198.51.100.20",
        "/echo?v2-ipv6": "2001:db8::20",
        "/echo?v1-unknown": "127.0.0.1",
        "/echo?v2-local": "127.0.0.1",
        "/echo?no-header": "127.0.0.1",
        "/echo?v1-bytewise": "192.0.2.11",
        "/echo?v2-bytewise": "2001:db8::21",
    }


def test_an_untrusted_peers_header_is_not_read(rivet, tmp_path):
    srv, log = serve(rivet, tmp_path, "--proxy-trusted", "10.0.0.0/8,::1")
    r = exchange(srv, v1("192.0.2.66") + get("/echo?spoof"))
    assert 400 <= r.status < 600, r
    assert exchange(srv, get("/echo?plain")).status == 200
    addrs = logged(log, 2)
    assert set(addrs.values()) == {"127.0.0.1"}, addrs
    assert "192.0.2.66" not in log.read_text()


def test_an_invalid_header_from_a_trusted_peer_closes_the_connection(rivet, tmp_path):
    srv, log = serve(rivet, tmp_path)
    for bad in (b"PROXY TCP4 192.0.2.1 10.0.0.1 99999 80\r\n", b"PROXY TCP9 x\r\n",
                b"PROXY " + b"9" * 200, V2_SIG + b"\x21\x11\xff\xff"):
        with conn_from(srv, "127.0.0.1") as c:
            c.send(bad + get("/echo?never"))
            data, closed = c.read_until_close(timeout=5)
            assert closed and data == b"", (bad, data)
    assert srv.alive()
    assert exchange(srv, v1("192.0.2.2") + get("/echo?after")).status == 200
    assert "rivet_proxy_header_refused_total 4" in srv.get("/metrics").text
    assert "never" not in "".join(logged(log, 2))


def test_a_slow_header_meets_the_header_timeout(rivet, tmp_path):
    srv, _ = serve(rivet, tmp_path, "--header-timeout", "0.5")
    with conn_from(srv, "127.0.0.1") as c:
        start = time.monotonic()
        c.send(b"PROXY TCP4 192.0.2.1 ")
        data, closed = c.read_until_close(timeout=5)
        assert closed and data == b""
        assert time.monotonic() - start >= 0.3


def test_the_rate_limit_is_per_proxied_client(rivet, tmp_path):
    srv, log = serve(rivet, tmp_path, config={"rate_limiting": {
        "enabled": True, "requests_per_second": 0.001, "burst_size": 3,
        "trusted_proxies": ["192.0.2.100"]}})

    def codes(header, n, xff=None):
        with conn_from(srv, "127.0.0.1") as c:
            req = get("/hello", headers={"X-Forwarded-For": xff} if xff else None)
            c.send(header + req * n)
            return [c.read_response().status for _ in range(n)]

    assert codes(v1("192.0.2.1"), 4) == [200, 200, 200, 429]
    assert codes(v2("192.0.2.2", "10.0.0.1"), 3) == [200] * 3  # a budget of its own
    assert codes(v1("192.0.2.1"), 1) == [429]  # the first is still spent
    # X-Forwarded-For still applies on top, from a PROXY source in trusted_proxies.
    assert codes(v1("192.0.2.100"), 4, xff="203.0.113.9") == [200, 200, 200, 429]
    assert codes(v1("192.0.2.100"), 1, xff="203.0.113.10") == [200]
    wait_for(lambda: any(line.startswith("203.0.113.9 ") for line in log_lines(log)),
             what="the forwarded client in the access log")


def test_settings_are_checked_and_shown(tmp_path):
    def run(*args):
        return subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True,
                              timeout=30 * SLOW)
    p = run("--proxy-protocol", "--proxy-trusted", "10.0.0.0/8,10.0.0.0/40", "--check-config")
    assert p.returncode == 2
    assert '"10.0.0.0/40" is not an address or CIDR network' in p.stderr, p.stderr
    cfg = write_config(tmp_path / "r.json", {"server": {"proxy_trusted": ["::1"] * 1001}})
    p = run("--config", cfg, "--check-config")
    assert p.returncode == 2 and "server.proxy_trusted: more than 1000" in p.stderr, p.stderr
    cfg = write_config(tmp_path / "r.json", {"server": {"proxy_protocol": True,
                                                        "proxy_trusted": ["192.0.2.0/24"]}})
    p = run("--config", cfg, "--check-config")
    assert p.returncode == 0, p.stderr
    server = json.loads(p.stdout)["server"]
    assert server["proxy_protocol"] is True and server["proxy_trusted"] == ["192.0.2.0/24"]


# ---- real HAProxy in front ----

def start_haproxy(tmp_path, rivet_port: int, server_option: str):
    port = free_port()
    cfg = tmp_path / f"haproxy-{server_option}.cfg"
    cfg.write_text(f"""
global
    maxconn 100
defaults
    mode http
    timeout connect 2s
    timeout client 10s
    timeout server 10s
frontend fe
    bind 127.0.0.1:{port}
    default_backend be
backend be
    option httpchk GET /healthz
    server s1 127.0.0.1:{rivet_port} {server_option} check inter 300ms
""")
    return launch_haproxy(cfg, port), port


def launch_haproxy(cfg, port: int, timeout: float = 10):
    """Starts HAProxy on `cfg` and waits until it listens on `port` (its process)."""
    proc = subprocess.Popen([HAPROXY, "-f", str(cfg), "-db"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)

    def listening():
        if proc.poll() is not None:
            raise AssertionError(f"haproxy exited: {proc.stdout.read().decode(errors='replace')}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            return False
    wait_for(listening, timeout=timeout, what="haproxy listening")
    return proc


@pytest.mark.skipif(HAPROXY is None, reason="haproxy is not installed")
@pytest.mark.parametrize("server_option", ["send-proxy-v2", "send-proxy"])
def test_behind_haproxy(rivet, tmp_path, server_option):
    srv, log = serve(rivet, tmp_path)
    proc, port = start_haproxy(tmp_path, srv.port, server_option)
    try:
        for i in range(3):
            with socket.socket() as s:
                s.settimeout(10 * SLOW)
                s.bind(("127.0.0.5", 0))
                s.connect(("127.0.0.1", port))
                s.sendall(get(f"/echo?via-haproxy-{i}", headers={"Connection": "close"}))
                data = b""
                while chunk := s.recv(65536):
                    data += chunk
            assert data.startswith(b"HTTP/1.1 200"), data[:200]

        def seen():
            m = [COMBINED_RE.match(line) for line in log_lines(log)]
            via = [x["addr"] for x in m if x and "via-haproxy" in x["request"]]
            checks = [x["addr"] for x in m if x and "/healthz" in x["request"]]
            return (via, checks) if len(via) == 3 and checks else None
        via, checks = wait_for(seen, what="the proxied requests and a health check in the log")
        assert via == ["127.0.0.5"] * 3  # the client, not HAProxy's 127.0.0.1
        # HAProxy's checks send no header (no check-send-proxy): served as plain HTTP.
        assert set(checks) == {"127.0.0.1"}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
