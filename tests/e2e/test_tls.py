"""HTTPS on the TLS listener with real clients: curl (--cacert, --resolve for SNI), Python ssl and
http.client (keep-alive, pipelining, a large file and ranges byte-exact, a chunked upload, an
offloaded answer, the SIGTERM drain), and openssl s_client (protocol floor, ALPN, no
renegotiation). Certificates come from tls_certs.py."""
import hashlib
import http.client
import json
import os
import re
import signal
import socket
import ssl
import subprocess
import time

import pytest

from ops_e2e import write_config
from rivet_e2e import SANITIZED, SLOW, WRK, build_request, chunked, fib, work_result, wrk
from tls_certs import served_certificate
from tls_e2e import (client_context, curl, handshake_ok, s_client, start_tls, tls_connect,
                     tls_get)

BIG = 6 * 1024 * 1024 + 12345  # several MiB, not a multiple of any buffer size


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    data = os.urandom(BIG)
    (root / "big.bin").write_bytes(data)
    (root / "index.html").write_text("<h1>tls</h1>\n")
    return root, data


@pytest.fixture
def srv(rivet, tls_certs, site):
    return start_tls(rivet, tls_certs, root=site[0])


# ---------------------------------------------------------------------------------------------
# curl and SNI


def test_curl_get_over_https(srv, tls_certs):
    # curl offers h2 and http/1.1 in ALPN and speaks what was chosen: h2 (RunOptions::http2), and
    # HTTP/1.1 when asked for it alone.
    for flags, version in (((), "2"), (("--http1.1",), "1.1")):
        p = curl("--cacert", tls_certs.ca, f"https://localhost:{srv.tls_port}/hello", *flags,
                 "--resolve", f"localhost:{srv.tls_port}:127.0.0.1",
                 "-w", "\\n%{http_code} %{http_version}")
        assert p.returncode == 0, p.stderr
        body, _, status = p.stdout.decode().rpartition("\n")
        assert body == "Hello, World!" and status == "200 " + version, p.stdout
    # The plain listener is still plain HTTP.
    assert srv.get("/hello").body == b"Hello, World!"


def test_sni_chooses_the_certificate(rivet, tls_certs, tmp_path):
    c = tls_certs
    cfg = write_config(tmp_path / "rivet.json", {"tls": {"port": 0, "certificates": [
        {"cert": str(c.server.cert), "key": str(c.server.key)},
        {"cert": str(c.other.cert), "key": str(c.other.key)}]}})
    srv = rivet(args=("--threads", "2", "--workers", "1", "--config", cfg), tls=True)
    p = curl("--cacert", c.ca, f"https://other.test:{srv.tls_port}/hello",
             "--resolve", f"other.test:{srv.tls_port}:127.0.0.1")
    assert p.returncode == 0 and p.stdout == b"Hello, World!", p.stderr
    other = served_certificate(srv.host, srv.tls_port, "other.test", c.ca)
    assert other["subject"] == "CN=other.test" and other["serial"] == c.other.serial, other
    assert "Verify return code: 0 (ok)" in other["verify"]
    named = served_certificate(srv.host, srv.tls_port, "localhost", c.ca)
    assert named["serial"] == c.server.serial, named
    # No SNI, or a name no certificate has: the default (the first).
    for sni in (None, "unknown.test"):
        d = served_certificate(srv.host, srv.tls_port, sni, c.ca)
        assert d["subject"] == "CN=localhost" and d["serial"] == c.server.serial, (sni, d)
    # The chain is sent: the client has only the root, and verifies.
    assert "Verify return code: 0 (ok)" in named["verify"], named["verify"]


# ---------------------------------------------------------------------------------------------
# Python clients


def test_http_client_keep_alive(srv, tls_certs):
    conn = http.client.HTTPSConnection("localhost", srv.tls_port,
                                       context=client_context(tls_certs), timeout=10 * SLOW)
    conn.connect()
    sock = conn.sock
    for i in range(5):
        conn.request("GET", f"/fibonacci?number={10 + i}")
        r = conn.getresponse()
        assert r.status == 200
        assert json.loads(r.read())["fibonacci"] in (fib(10 + i), str(fib(10 + i)))
    assert conn.sock is sock  # one connection for all five
    conn.close()


def test_pipelining_in_order(srv, tls_certs):
    with tls_connect(srv, tls_certs) as c:
        c.send(b"".join(build_request("GET", f"/fibonacci?number={n}") for n in range(10)))
        got = [c.read_response() for _ in range(10)]
    for n, r in enumerate(got):
        assert r.status == 200, r
        assert json.loads(r.body)["number"] == n, (n, r)


def test_large_file_and_ranges_byte_exact(srv, tls_certs, site):
    data = site[1]
    with tls_connect(srv, tls_certs, timeout=60) as c:
        r = c.request("GET", "/big.bin")
        assert r.status == 200 and len(r.body) == BIG
        assert hashlib.sha256(r.body).digest() == hashlib.sha256(data).digest()
        first, last = 1_000_003, 5_500_000
        r = c.request("GET", "/big.bin", headers={"Range": f"bytes={first}-{last}"})
        assert r.status == 206 and r.header("Content-Range") == f"bytes {first}-{last}/{BIG}", r
        assert r.body == data[first:last + 1]
        r = c.request("GET", "/big.bin", headers={"Range": "bytes=-100"})
        assert r.status == 206 and r.body == data[-100:]
        # The connection is still good after the large answers.
        assert c.request("GET", "/hello").body == b"Hello, World!"


def test_chunked_upload_byte_exact(srv, tls_certs):
    pieces = [os.urandom(n) for n in (1, 100, 16384, 70000, 3, 150000)]
    with tls_connect(srv, tls_certs) as c:
        c.send(build_request("POST", "/echo", headers={"Transfer-Encoding": "chunked"})
               + chunked(pieces))
        r = c.read_response()
    assert r.status == 200, r
    assert r.body == b"".join(pieces)


def test_offloaded_answer(srv, tls_certs):
    r = tls_get(srv, tls_certs, "/work?n=2000000")
    assert r.status == 200 and r.json() == {"n": 2000000, "result": work_result(2000000)}


def test_sigterm_drain_answers_the_request_in_flight(rivet, tls_certs):
    srv = start_tls(rivet, tls_certs,
                    base=("--threads", "1", "--workers", "1", "--drain-timeout", "60"))
    with tls_connect(srv, tls_certs, timeout=60) as busy, tls_connect(srv, tls_certs) as idle:
        assert idle.request("GET", "/hello").status == 200
        # A second of the worker's own CPU time: a loaded machine only makes it longer, so it is
        # still running when the signal comes.
        busy.send(build_request("GET", "/cpu?ms=1000"))
        time.sleep(0.1)
        srv.send_signal(signal.SIGTERM)
        assert idle.closed_by_peer(10), "idle TLS connection not closed by the drain"
        r = busy.read_response()
        assert r.status == 200 and r.json()["cpu_ms"] == 1000, r
        assert r.closes, r
        assert busy.closed_by_peer(10)
    assert srv.wait(60 * SLOW) == 0


# ---------------------------------------------------------------------------------------------
# openssl s_client: protocol versions, ALPN, renegotiation


def test_old_protocols_refused_tls12_and_13_accepted(srv):
    for flag in ("-tls1", "-tls1_1"):
        # The client's own security level refuses these before sending: lower it to ask anyway.
        rc, out = s_client(srv.tls_port, flag, "-cipher", "DEFAULT@SECLEVEL=0")
        assert not handshake_ok(out), (flag, out)
    for flag, version in (("-tls1_2", "TLSv1.2"), ("-tls1_3", "TLSv1.3")):
        rc, out = s_client(srv.tls_port, flag, "-servername", "localhost")
        assert handshake_ok(out), (flag, out)
        assert f"New, {version}, Cipher is" in out, out
    assert srv.alive()


def test_min_version_13_refuses_tls12(rivet, tls_certs):
    srv = start_tls(rivet, tls_certs, "--tls-min-version", "1.3")
    rc, out = s_client(srv.tls_port, "-tls1_2")
    assert not handshake_ok(out), out
    rc, out = s_client(srv.tls_port, "-tls1_3")
    assert handshake_ok(out) and "TLSv1.3" in out, out
    with pytest.raises(ssl.SSLError):
        tls_connect(srv, tls_certs, max_version=ssl.TLSVersion.TLSv1_2)


def alpn_chosen(srv, certs, offer: list[str]):
    ctx = client_context(certs)
    ctx.set_alpn_protocols(offer)
    with socket.create_connection((srv.host, srv.tls_port), timeout=10 * SLOW) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as s:
            return s.selected_alpn_protocol()


def test_alpn_h2_first_then_http11(srv, tls_certs):
    # The server's order wins: a client offering both gets h2, whatever its own order.
    for offer in (["h2", "http/1.1"], ["http/1.1", "h2"], ["h2"]):
        assert alpn_chosen(srv, tls_certs, offer) == "h2", offer
    assert alpn_chosen(srv, tls_certs, ["http/1.1"]) == "http/1.1"
    rc, out = s_client(srv.tls_port, "-alpn", "http/1.1")
    assert "ALPN protocol: http/1.1" in out, out


def test_alpn_http11_only_without_http2(rivet, tls_certs):
    srv = start_tls(rivet, tls_certs, "--no-http2")
    assert alpn_chosen(srv, tls_certs, ["h2", "http/1.1"]) == "http/1.1"
    # A client that offers only protocols the server does not speak gets no ALPN answer (or a
    # refusal), never a protocol it did not offer.
    rc, out = s_client(srv.tls_port, "-alpn", "h2")
    assert "ALPN protocol: h2" not in out, out


def test_renegotiation_refused(srv):
    # s_client reads "R" on a line as "renegotiate"; stdin stays open a second so that a
    # second handshake, if the server allowed one, would show in the -msg trace.
    p = subprocess.Popen(["openssl", "s_client", "-connect", f"127.0.0.1:{srv.tls_port}",
                          "-tls1_2", "-servername", "localhost", "-msg"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    p.stdin.write("R\n")
    p.stdin.flush()
    time.sleep(1.0 * SLOW)
    out, _ = p.communicate(timeout=20 * SLOW)
    assert handshake_ok(out), out
    assert "RENEGOTIATING" in out, out  # the client asked
    server_hellos = re.findall(r"^<<< TLS 1\.2, Handshake \[length \w+\], ServerHello$", out, re.M)
    assert len(server_hellos) == 1, out  # no second handshake took place
    assert srv.alive()
    rc, out = s_client(srv.tls_port, "-tls1_2", "-servername", "localhost")
    assert handshake_ok(out), out


# ---------------------------------------------------------------------------------------------
# wrk over https


@pytest.mark.skipif(WRK is None, reason="wrk is not installed (scripts/setup.sh)")
def test_wrk_over_https(srv):
    requests, errors, non_2xx, out = wrk(f"https://127.0.0.1:{srv.tls_port}/hello", 50, 2)
    assert errors is None, f"socket errors {errors}:\n{out}"
    assert non_2xx == 0, out
    assert requests > (500 if SANITIZED else 5_000), out
    # And with a handshake per request.
    p = subprocess.run([WRK, "-t1", "-c10", "-d1s", "-H", "Connection: close",
                        f"https://127.0.0.1:{srv.tls_port}/hello"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0 and "Socket errors" not in p.stdout, p.stdout + p.stderr
    assert "Non-2xx" not in p.stdout, p.stdout


# ---------------------------------------------------------------------------------------------
# Resumption as OpenSSL clients chain it (wrk, s_client -sess_in/-sess_out): each connection
# offers the session of the one before. A TLS 1.3 ticket is meant to be used once (RFC 8446,
# C.4), so a resumed handshake must hand out a fresh ticket for the next connection.


def test_chained_resumption_every_time(srv, tmp_path):
    outcomes = []
    prev = None
    for i in range(4):
        sess = tmp_path / f"s{i}.pem"
        # A request with Connection: close and -ign_eof: s_client stays until the server
        # closes, so the tickets sent after the handshake are in its session file.
        args = ["-tls1_3", "-servername", "localhost", "-ign_eof", "-sess_out", sess]
        if prev is not None and prev.exists():
            args += ["-sess_in", prev]
        rc, out = s_client(srv.tls_port, *args,
                           stdin="GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert "Hello, World!" in out, out
        m = re.search(r"^(New|Reused), TLSv1\.3", out, re.M)
        outcomes.append(m[1] if m else "failed")
        prev = sess
    assert outcomes == ["New", "Reused", "Reused", "Reused"], outcomes
