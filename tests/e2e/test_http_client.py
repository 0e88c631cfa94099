"""rivet::HttpClient end to end: tests/e2e/client_gateway (a rivet app whose handlers call other
servers with the client) against real servers started here: Python's http.server (plain and TLS
with a test CA), rivet itself, nginx, and raw sockets for malformed answers. Each error kind the
client promises, keep-alive reuse seen from the upstream's side, and an upstream request
abandoned when the client of the calling request goes away."""
import socket
import time
from urllib.parse import urlencode

import pytest

from http_client_e2e import RawUpstream, Upstream
from nginx_e2e import NGINX, start_nginx, stop_nginx
from ops_e2e import free_port, wait_for
from rivet_e2e import BIN, SLOW, build_request

GATEWAY = BIN.parent / "client_gateway"


@pytest.fixture
def gateway(rivet):
    return rivet(command=[GATEWAY, 0], root=None)


@pytest.fixture
def upstream():
    u = Upstream()
    yield u
    u.close()


def fetch(gw, url, **params):
    r = gw.get("/fetch?" + urlencode({"url": url, **params}), timeout=30)
    assert r.status in (200, 502), r
    return r.status, r.json()


def test_content_length_chunked_and_until_close_bodies(gateway, upstream):
    status, j = fetch(gateway, upstream.url("/text"))
    assert (status, j["status"], j["body"]) == (200, 200, "hello")
    status, j = fetch(gateway, upstream.url("/chunked"))
    assert j["body"] == "chunk one chunk two"
    status, j = fetch(gateway, upstream.url("/until_close?n=3000"))
    assert j["body"] == "z" * 3000
    status, j = fetch(gateway, upstream.url("/nothing"))
    assert (status, j["status"], j["body"]) == (200, 404, "not found"), "a 404 is an answer"
    status, j = fetch(gateway, upstream.url("/echo"), method="POST", body="abc")
    assert (j["status"], j["body"]) == (201, "got abc")


def test_keep_alive_reuses_one_upstream_connection(gateway, upstream):
    r = gateway.get("/fetch_many?" + urlencode({"url": upstream.url("/text"), "n": 20}))
    j = r.json()
    assert j["statuses"] == [200] * 20
    assert j["reused"] == 19
    assert len(set(upstream.peers)) == 1, f"upstream saw ports {set(upstream.peers)}"


def test_names_resolve_and_a_name_that_does_not_is_a_dns_error(gateway, upstream):
    status, j = fetch(gateway, upstream.url("/text", host="localhost"))
    assert (status, j["body"]) == (200, "hello")
    status, j = fetch(gateway, "http://no-such-host.invalid/", connect_timeout_ms=20000)
    assert status == 502 and j["error"] == "dns", j
    assert "no-such-host.invalid" in j["message"]


def test_refused_connection_and_invalid_url(gateway):
    port = free_port()  # nothing listens there
    status, j = fetch(gateway, f"http://127.0.0.1:{port}/")
    assert (status, j["error"]) == (502, "connect"), j
    status, j = fetch(gateway, "ftp://example.com/")
    assert (status, j["error"]) == (502, "invalid_url"), j


def test_response_larger_than_the_bound_is_refused(gateway, upstream):
    for path in ("/big?n=200000", "/chunked?n=200000", "/until_close?n=200000"):
        status, j = fetch(gateway, upstream.url(path), max=100000)
        assert (status, j["error"]) == (502, "too_large"), (path, j)
        status, j = fetch(gateway, upstream.url(path), max=200000)
        assert status == 200 and len(j["body"]) == 200000, path


def test_total_timeout(gateway, upstream):
    t0 = time.monotonic()
    # The upstream would answer after 30 s: a timeout of 300 ms ends the wait long before.
    status, j = fetch(gateway, upstream.url("/slow?ms=30000"), timeout_ms=300)
    assert (status, j["error"]) == (502, "timeout"), j
    assert time.monotonic() - t0 < 15 * SLOW


def test_connect_timeout_bounds_a_tls_handshake_never_answered(gateway):
    # A listener that completes TCP (the kernel does) but never speaks TLS: only the connect
    # timeout, not the total one, can end the wait.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(4)
    try:
        url = f"https://127.0.0.1:{silent.getsockname()[1]}/"
        status, j = fetch(gateway, url, connect_timeout_ms=300, timeout_ms=60000, insecure=1)
        assert (status, j["error"]) == (502, "connect_timeout"), j
    finally:
        silent.close()


def test_response_head_larger_than_its_bound_is_refused(gateway):
    head = b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 4096 + b"\r\nContent-Length: 2\r\n\r\nok"
    raw = RawUpstream(head)
    try:
        status, j = fetch(gateway, raw.url(), max_header=1024)
        assert (status, j["error"]) == (502, "too_large"), j
        status, j = fetch(gateway, raw.url(), max_header=8192)
        assert (status, j["body"]) == (200, "ok"), j
    finally:
        raw.close()


def test_malformed_responses_are_refused(gateway):
    answers = [
        b"HELLO THERE\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nabc",
        b"HTTP/1.1 200 OK\r\nX: a\r\n folded\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    ]
    for answer in answers:
        raw = RawUpstream(answer)
        try:
            status, j = fetch(gateway, raw.url())
            assert (status, j["error"]) == (502, "malformed"), (answer, j)
        finally:
            raw.close()
    raw = RawUpstream(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort")
    try:
        status, j = fetch(gateway, raw.url())
        assert (status, j["error"]) == (502, "closed"), j
    finally:
        raw.close()


def test_redirects_only_when_asked(gateway, upstream):
    status, j = fetch(gateway, upstream.url("/redirect?to=/text"))
    assert (j["status"], j["body"]) == (302, "")
    status, j = fetch(gateway, upstream.url("/redirect?to=/text"), redirects=3)
    assert (j["status"], j["body"]) == (200, "hello")
    assert j["url"] == upstream.url("/text")
    status, j = fetch(gateway, upstream.url("/loop"), redirects=3)
    assert (status, j["error"]) == (502, "too_many_redirects"), j


def test_tls_with_a_test_ca_and_refused_certificates(gateway, tls_certs):
    good = Upstream(tls_certs.server.cert, tls_certs.server.key)
    wrong_name = Upstream(tls_certs.other.cert, tls_certs.other.key)
    expired = Upstream(tls_certs.expired.cert, tls_certs.expired.key)
    try:
        ca = str(tls_certs.ca)
        for host in ("localhost", "127.0.0.1"):
            status, j = fetch(gateway, good.url("/text", host=host), ca=ca)
            assert (status, j["body"]) == (200, "hello"), j
        # Not in the system's store.
        status, j = fetch(gateway, good.url("/text", host="localhost"))
        assert (status, j["error"]) == (502, "tls"), j
        assert "certificate" in j["message"]
        # Trusted, but for other.test.
        status, j = fetch(gateway, wrong_name.url("/text", host="localhost"), ca=ca)
        assert (status, j["error"]) == (502, "tls"), j
        assert "hostname mismatch" in j["message"], j
        status, j = fetch(gateway, expired.url("/text", host="localhost"), ca=ca)
        assert (status, j["error"]) == (502, "tls"), j
        assert "expired" in j["message"], j
        # Verification off: the same server answers.
        status, j = fetch(gateway, wrong_name.url("/text", host="localhost"), insecure=1)
        assert (status, j["body"]) == (200, "hello"), j
        r = gateway.get("/fetch_many?" + urlencode({"url": good.url("/text", "localhost"),
                                                    "n": 5, "ca": ca}))
        # Every one over a kept-alive connection (the first over one an earlier fetch left).
        assert r.json()["reused"] == 5
        assert len(set(good.peers)) == 2, "one connection per host name (localhost, 127.0.0.1)"
    finally:
        for u in (good, wrong_name, expired):
            u.close()


def test_rivet_upstream_plain_and_tls(gateway, rivet, tls_certs):
    srv = rivet(args=("--threads", "1", "--workers", "1", *tls_certs.server.args()))
    status, j = fetch(gateway, f"http://127.0.0.1:{srv.port}/hello")
    assert (status, j["status"]) == (200, 200) and "Hello" in j["body"], j
    status, j = fetch(gateway, f"https://localhost:{srv.tls_port}/hello", ca=str(tls_certs.ca))
    assert (status, j["status"]) == (200, 200) and "Hello" in j["body"], j
    r = gateway.get("/fetch_many?" + urlencode({"url": f"http://127.0.0.1:{srv.port}/hello",
                                                "n": 10}))
    assert r.json()["statuses"] == [200] * 10


@pytest.mark.skipif(NGINX is None, reason="nginx is not installed")
def test_nginx_upstream_one_connection_for_many_requests(gateway, tmp_path):
    port = free_port()
    prefix = tmp_path / "nginx"
    (prefix / "logs").mkdir(parents=True)
    (prefix / "www").mkdir()
    (prefix / "www" / "a.txt").write_text("from nginx")
    log = prefix / "logs" / "access.log"
    proc = start_nginx(prefix, f"""
    log_format conn '$connection $connection_requests $status';
    access_log {log} conn;
    keepalive_requests 1000;
    server {{
        listen 127.0.0.1:{port};
        root {prefix}/www;
        location /chunked {{ chunked_transfer_encoding on; return 200 "chunked"; }}
    }}
""", port)
    try:
        r = gateway.get("/fetch_many?" + urlencode({"url": f"http://127.0.0.1:{port}/a.txt",
                                                    "n": 30}))
        assert r.json() == {"statuses": [200] * 30, "reused": 29}
        lines = wait_for(lambda: (l := log.read_text().split("\n")) and len(l) > 30 and l,
                         10 * SLOW, "nginx's access log")
        connections = {line.split()[0] for line in lines if line}
        assert len(connections) == 1, lines
        status, j = fetch(gateway, f"http://127.0.0.1:{port}/a.txt")
        assert j["body"] == "from nginx"
    finally:
        stop_nginx(proc)


def test_client_leaving_abandons_the_upstream_request(gateway, upstream):
    target = "/fetch?" + urlencode({"url": upstream.url("/hang"), "timeout_ms": 60000})
    s = socket.create_connection((gateway.host, gateway.port), timeout=10)
    s.sendall(build_request("GET", target))
    assert upstream.hang_started.wait(10 * SLOW), "the upstream request never arrived"
    s.close()  # the caller goes away while its handler waits on the upstream
    assert upstream.hang_client_left.wait(10 * SLOW), "the upstream connection stayed open"
    # The gateway goes on serving, and its pool holds nothing of the abandoned connection.
    status, j = fetch(gateway, upstream.url("/text"))
    assert j["body"] == "hello"


def test_composes_with_when_all_and_with_timeout(gateway, upstream):
    r = gateway.get("/fetch_both?" + urlencode({"a": upstream.url("/text"),
                                                "b": upstream.url("/chunked")}))
    assert r.json() == {"a": "hello", "b": "chunk one chunk two"}
    r = gateway.get("/fetch_deadline?" + urlencode({"url": upstream.url("/text"), "ms": 5000}))
    assert r.json() == {"status": 200, "body": "hello"}
    # A deadline of the handler's own cancels the upstream request: the upstream sees the close.
    t0 = time.monotonic()
    r = gateway.get("/fetch_deadline?" + urlencode({"url": upstream.url("/hang"), "ms": 300}))
    assert r.status == 504, r
    assert time.monotonic() - t0 < 5 * SLOW
    assert upstream.hang_client_left.wait(10 * SLOW), "the upstream connection stayed open"


def test_streamed_bodies_in_pieces_with_a_slow_reader(gateway, upstream):
    for path, n in (("/big?n=3000000", 3000000), ("/chunked?n=1000000", 1000000),
                    ("/until_close?n=700000", 700000)):
        r = gateway.get("/stream?" + urlencode({"url": upstream.url(path), "pause_ms": 2,
                                                "max": 4000000}), timeout=60)
        j = r.json()
        assert "error" not in j, (path, j)
        assert (j["status"], j["bytes"]) == (200, n), (path, j)
        assert j["pieces"] > 1, "read as it arrives, not at the end"
        assert j["largest"] <= 256 * 1024 + 64 * 1024, "the window bounds what waits unread"
    r = gateway.get("/stream?" + urlencode({"url": upstream.url("/text")}))
    assert r.json()["head"] == "hello"
    r = gateway.get("/stream?" + urlencode({"url": upstream.url("/chunked?n=300000"),
                                            "max": 100000}))
    assert (r.status, r.json()["error"]) == (502, "too_large"), r


def test_a_stream_dropped_early_closes_the_upstream_connection(gateway, upstream):
    r = gateway.get("/stream?" + urlencode({"url": upstream.url("/drip"), "stop_after": 1}))
    assert r.json()["head"] == "first", r
    assert upstream.drip_client_left.wait(10 * SLOW), "the upstream connection stayed open"
    # A stream read to its end gives its connection back: the next request reuses it.
    gateway.get("/stream?" + urlencode({"url": upstream.url("/text")}))
    status, j = fetch(gateway, upstream.url("/text"))
    assert j["reused"] is True, j
