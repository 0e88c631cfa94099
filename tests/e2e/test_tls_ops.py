"""TLS operations: the certificate swapped on SIGHUP under load with zero failed requests, a bad
file at SIGHUP keeping the old certificate, --check-config on expired certificates and
mismatched keys, the plain-HTTP redirect and HSTS, the access log's TLS fields, and the bytes an
idle TLS connection holds."""
import shutil
import signal
import socket
import ssl
import subprocess
import threading
import time

import pytest

from ops_e2e import rss_kib, wait_for
from rivet_e2e import BIN, SANITIZED, SLOW, build_request, raise_nofile
from tls_certs import served_certificate
from tls_e2e import (TlsConn, client_context, live_copy, replace, start_tls, tls_connect,
                     tls_get)


def serial(srv, certs) -> int:
    return served_certificate(srv.host, srv.tls_port, "localhost", certs.ca)["serial"]


def test_sighup_swaps_the_certificate_under_load(rivet, tls_certs, tmp_path):
    a, b = tls_certs.server, tls_certs.server_b
    cert, key = live_copy(tmp_path, a)
    srv = rivet(args=("--threads", "2", "--workers", "1", "--tls-cert", cert, "--tls-key", key,
                      "--tls-port", "0"))
    assert serial(srv, tls_certs) == a.serial
    ctx = client_context(tls_certs)
    stop = threading.Event()
    results = {"ok": 0, "failed": []}

    def load():
        from tls_e2e import TlsConn
        while not stop.is_set():
            try:
                with TlsConn(srv.host, srv.tls_port, ctx) as c:  # a new handshake each time
                    r = c.request("GET", "/hello")
                if r.status == 200 and r.body == b"Hello, World!":
                    results["ok"] += 1
                else:
                    results["failed"].append(repr(r))
            except Exception as e:  # noqa: BLE001 - every failure is the finding
                results["failed"].append(repr(e))

    keep = tls_connect(srv, tls_certs)  # a connection from before the swap
    assert keep.request("GET", "/hello").status == 200
    threads = [threading.Thread(target=load) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        time.sleep(1.0)
        replace(key, b.key.read_bytes())
        replace(cert, b.cert.read_bytes())
        srv.send_signal(signal.SIGHUP)
        wait_for(lambda: serial(srv, tls_certs) == b.serial, timeout=10, what="certificate B")
        time.sleep(1.0)
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    assert results["failed"] == [], results["failed"][:5]
    assert results["ok"] > 10, results
    # The connection from before the swap was not dropped.
    assert keep.request("GET", "/hello").status == 200
    keep.close()
    assert "TLS reload failed" not in srv.stderr()


def test_bad_file_at_sighup_keeps_the_old_certificate(rivet, tls_certs, tmp_path):
    a = tls_certs.server
    cert, key = live_copy(tmp_path, a)
    srv = rivet(args=("--threads", "1", "--workers", "1", "--tls-cert", cert, "--tls-key", key,
                      "--tls-port", "0"))
    replace(cert, b"-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n")
    srv.send_signal(signal.SIGHUP)
    line = wait_for(lambda: [x for x in srv.stderr().splitlines() if "TLS reload failed" in x],
                    what="the reload failure line")
    assert "keeping the old certificates" in line[0] and len(line[0]) > 60, line
    assert serial(srv, tls_certs) == a.serial
    assert tls_get(srv, tls_certs, "/hello").status == 200
    # A mismatched key is refused the same way.
    shutil.copyfile(a.cert, cert)
    replace(key, tls_certs.mismatched_key.read_bytes())
    srv.send_signal(signal.SIGHUP)
    wait_for(lambda: srv.stderr().count("TLS reload failed") >= 2, what="the second failure")
    assert serial(srv, tls_certs) == a.serial
    assert tls_get(srv, tls_certs, "/hello").status == 200


def check_config(*args):
    p = subprocess.run([str(BIN), "--check-config", *map(str, args)], capture_output=True,
                       text=True, timeout=30 * SLOW, stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout + p.stderr


def test_check_config_on_certificates(tls_certs):
    c = tls_certs
    rc, out = check_config(*c.server.args())
    assert rc == 0, out
    rc, out = check_config(*c.expired.args())
    assert rc == 2, out
    assert "expired" in out.lower() and str(c.expired.cert) in out, out
    rc, out = check_config(*c.expired.args(), "--tls-allow-expired")
    assert rc == 0, out
    rc, out = check_config("--tls-cert", c.server.cert, "--tls-key", c.mismatched_key)
    assert rc == 2, out
    assert "match" in out.lower(), out
    rc, out = check_config("--tls-cert", c.server.cert)  # a certificate without its key
    assert rc == 2, out


def test_expired_certificate_refused_at_start_unless_allowed(rivet, tls_certs):
    p = subprocess.Popen([str(BIN), "--port", "0", "--bind", "127.0.0.1", "--tls-port", "0",
                          *tls_certs.expired.args()], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        out, err = p.communicate(timeout=10 * SLOW)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        raise AssertionError(f"rivet started with an expired certificate:\n{out}\n{err}")
    assert p.returncode != 0 and "expired" in (out + err).lower(), (p.returncode, out, err)
    assert "rivet listening" not in out, out
    srv = start_tls(rivet, tls_certs, "--tls-allow-expired", leaf=tls_certs.expired)
    assert serial(srv, tls_certs) == tls_certs.expired.serial


def test_redirect_plain_http_to_https(rivet, tls_certs):
    srv = start_tls(rivet, tls_certs, "--redirect-https")
    r = srv.get("/some/path?x=1", headers={"Host": f"localhost:{srv.port}"})
    assert r.status == 308, r
    loc = r.header("Location")
    assert loc in (f"https://localhost:{srv.tls_port}/some/path?x=1",
                   f"https://127.0.0.1:{srv.tls_port}/some/path?x=1"), loc
    h = srv.get("/healthz")
    assert h.status == 200 and h.body == b"ok", h
    # Over TLS the same target is served, not redirected.
    assert tls_get(srv, tls_certs, "/hello").status == 200


def test_hsts_on_https_answers_only(rivet, tls_certs):
    srv = start_tls(rivet, tls_certs, "--hsts", "31536000")
    r = tls_get(srv, tls_certs, "/hello")
    assert r.status == 200 and r.header("Strict-Transport-Security") == "max-age=31536000", r
    p = srv.get("/hello")
    assert p.status == 200 and p.header("Strict-Transport-Security") is None, p


# ---------------------------------------------------------------------------------------------
# Memory: bench/tls_idle_memory.py measures it against nginx; here only a generous bound.

IDLE = 1000


@pytest.mark.skipif(SANITIZED, reason="the sanitizers' allocators say nothing of rivet's memory")
def test_idle_tls_connection_memory_bound(rivet, tls_certs):
    raise_nofile(IDLE + 1000)
    srv = start_tls(rivet, tls_certs, base=("--threads", "1", "--workers", "1"),
                    nofile=IDLE + 2000)
    ctx = client_context(tls_certs)
    from tls_e2e import TlsConn

    def open_idle(n):
        conns = []
        for _ in range(n):
            c = TlsConn(srv.host, srv.tls_port, ctx)
            c.send(build_request("GET", "/hello"))
            assert c.read_response().status == 200
            conns.append(c)
        return conns

    for c in open_idle(200):  # warm the allocator and the caches
        c.close()
    time.sleep(0.3)
    before = rss_kib(srv.proc.pid)
    conns = open_idle(IDLE)
    time.sleep(0.3)
    after = rss_kib(srv.proc.pid)
    per_conn = (after - before) * 1024 / IDLE
    for c in conns:
        c.close()
    print(f"idle TLS connection: {per_conn:.0f} bytes of RSS each")
    assert per_conn < 64 * 1024, f"{per_conn:.0f} bytes per idle TLS connection"


def test_access_log_tls_fields(rivet, tls_certs, tmp_path):
    import json
    from ops_e2e import log_lines
    log = tmp_path / "access.json"
    srv = start_tls(rivet, tls_certs, "--access-log", log, "--log-format", "json",
                    base=("--threads", "1", "--workers", "1"))
    ctx = client_context(tls_certs, max_version=ssl.TLSVersion.TLSv1_2)
    with TlsConn(srv.host, srv.tls_port, ctx) as first:
        assert first.request("GET", "/hello?a").status == 200
        session = first.sock.session
    raw = socket.create_connection((srv.host, srv.tls_port), timeout=10 * SLOW)
    with ctx.wrap_socket(raw, server_hostname="localhost", session=session) as s:
        assert s.session_reused
        s.sendall(build_request("GET", "/hello?b"))
        assert b"Hello, World!" in s.recv(4096)
    assert srv.get("/hello?plain").status == 200
    srv.stop()
    docs = {d["uri"]: d for d in map(json.loads, log_lines(log))}
    a, b, plain = docs["/hello?a"], docs["/hello?b"], docs["/hello?plain"]
    for d in (a, b):
        assert d["ssl_protocol"] == "TLSv1.2" and d["ssl_server_name"] == "localhost", d
        cipher = d["ssl_cipher"]
        assert cipher.startswith("ECDHE-ECDSA-") and ("GCM" in cipher or "CHACHA20" in cipher), d
    assert a["ssl_session_reused"] == "." and b["ssl_session_reused"] == "r", (a, b)
    assert not any(k.startswith("ssl_") for k in plain), plain
