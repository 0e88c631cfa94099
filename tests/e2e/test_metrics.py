"""GET /metrics in the Prometheus text format: parsed by prometheus_client's parser, with
counters that match the requests sent; the admin endpoints can be moved or turned off."""
import pytest

from ops_e2e import free_port, get, statuses, wait_for, write_config
from rivet_e2e import exchange
from tls_e2e import curl

parser = pytest.importorskip("prometheus_client.parser")


def scrape(srv, port=None):
    if port is None:
        r = srv.get("/metrics")
    else:
        from rivet_e2e import Conn, build_request
        with Conn(srv.host, port) as c:
            c.send(build_request("GET", "/metrics"))
            r = c.read_response()
    assert r.status == 200, r
    assert r.header("Content-Type").startswith("text/plain; version=0.0.4"), r
    return {f.name: f for f in parser.text_string_to_metric_families(r.text)}


def value(families, family, sample, **labels):
    for s in families[family].samples:
        if s.name == sample and all(s.labels.get(k) == v for k, v in labels.items()):
            return s.value
    return 0


def test_counters_match_the_requests_sent(rivet):
    srv = rivet(args=("--threads", "2", "--workers", "2"))
    with srv.connect() as c:
        assert statuses(c, [get("/hello")] * 7) == [200] * 7
        assert statuses(c, [get("/nope")] * 3) == [404] * 3
    for _ in range(2):
        assert srv.post("/echo", "x").status == 200
    assert srv.get("/work?n=100").status == 200  # offloaded
    responses, _, _ = exchange(srv.host, srv.port, b"NOT HTTP\r\n\r\n")
    assert responses[0].status == 400
    f = scrape(srv)
    req = "rivet_http_requests"
    assert value(f, req, req + "_total", method="GET", route="/hello", code="2xx") == 7
    # 404s: unrouted, or a static-file catch-all's when the demo has one.
    not_found = sum(s.value for s in f[req].samples
                    if s.labels["code"] == "4xx" and s.labels["route"] != "(protocol)")
    assert not_found == 3
    assert value(f, req, req + "_total", method="POST", route="/echo", code="2xx") == 2
    assert value(f, req, req + "_total", method="GET", route="/work", code="2xx") == 1
    assert value(f, req, req + "_total", route="(protocol)", code="4xx") == 1
    total = sum(s.value for s in f[req].samples)
    assert total == 14
    hist = "rivet_http_request_duration_seconds"  # by route, method and class: summed
    assert sum(s.value for s in f[hist].samples if s.name == hist + "_count") == 14
    assert sum(s.value for s in f[hist].samples
               if s.name == hist + "_bucket" and s.labels["le"] == "+Inf") == 14
    assert f[hist].type == "histogram"
    assert value(f, "rivet_connections_open", "rivet_connections_open") >= 1
    assert value(f, "rivet_connections_accepted", "rivet_connections_accepted_total") >= 6
    assert value(f, "rivet_received_bytes", "rivet_received_bytes_total") > 0
    assert value(f, "rivet_sent_bytes", "rivet_sent_bytes_total") > 13 * 7
    assert value(f, "rivet_worker_queue_depth", "rivet_worker_queue_depth") == 0
    assert value(f, "rivet_workers", "rivet_workers") == 2
    assert value(f, "process_resident_memory_bytes", "process_resident_memory_bytes") > 1 << 20
    # The scrape itself is counted by the next one.
    f = scrape(srv)
    assert value(f, req, req + "_total", method="GET", route="/metrics", code="2xx") == 1


def test_worker_pool_rejections_are_counted(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "1", "--queue", "1"))
    conns = [srv.connect(timeout=30) for _ in range(6)]
    for c in conns:
        c.send(get("/work?n=300000000"))
    codes = [c.read_response().status for c in conns]
    for c in conns:
        c.close()
    f = scrape(srv)
    rejected = value(f, "rivet_worker_rejections", "rivet_worker_rejections_total")
    assert rejected == codes.count(503) and rejected > 0, codes
    req = "rivet_http_requests"
    assert value(f, req, req + "_total", route="/work", code="5xx") == rejected


def test_admin_endpoints_on_their_own_port(rivet):
    port = free_port()
    srv = rivet(args=("--threads", "1", "--workers", "1", "--admin-port", port))
    assert f"rivet admin endpoints on http://127.0.0.1:{port}" in srv.stdout()
    assert srv.get("/metrics").status == 404
    assert srv.get("/status.json").status == 404
    f = scrape(srv, port)
    assert "rivet_http_requests" in f


def test_admin_endpoints_can_be_turned_off(rivet, tmp_path):
    srv = rivet(args=("--threads", "1", "--workers", "1", "--no-admin"))
    for path in ("/metrics", "/status", "/status.json", "/healthz"):
        assert srv.get(path).status == 404, path
    cfg = write_config(tmp_path / "rivet.json",
                       {"metrics": {"enabled": False, "status_page": True}})
    srv = rivet(args=("--threads", "1", "--workers", "1", "--config", cfg))
    assert srv.get("/metrics").status == 404
    assert srv.get("/status.json").status == 200


def test_file_cache_hits_and_misses(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "1"))  # --root public is mounted at /
    for _ in range(3):
        assert srv.get("/").status == 200
    f = scrape(srv)
    hits = value(f, "rivet_file_cache_hits", "rivet_file_cache_hits_total")
    misses = value(f, "rivet_file_cache_misses", "rivet_file_cache_misses_total")
    assert misses >= 1 and hits >= 2, (hits, misses)
    assert srv.get("/status.json").json()["cache"]["hits"] >= hits


def test_reload_does_not_move_the_admin_listener(rivet, tmp_path):
    import signal
    from ops_e2e import wait_for
    port = free_port()
    cfg = write_config(tmp_path / "rivet.json", {"metrics": {"admin_port": port}})
    srv = rivet(args=("--threads", "1", "--workers", "1", "--config", cfg))
    write_config(cfg, {"metrics": {"admin_port": 0}})
    srv.send_signal(signal.SIGHUP)
    wait_for(lambda: "applied" in srv.stderr(), what="the reload")
    assert "admin listener" in srv.stderr()  # warned: only at a restart
    assert srv.get("/metrics").status == 404
    assert "rivet_http_requests" in scrape(srv, port)


H2_FAMILIES = ("rivet_http2_connections", "rivet_http2_streams", "rivet_http2_streams_open",
               "rivet_http2_goaways_sent", "rivet_http2_goaways_received",
               "rivet_http2_flow_control_stalls", "rivet_http2_abuse")


def test_http2_series_and_the_protocol_label(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "1"))
    f = scrape(srv)
    for family in H2_FAMILIES:  # present, at zero, before any HTTP/2 connection
        assert family in f, family
        assert all(s.value == 0 for s in f[family].samples), f[family]
    assert f["rivet_http2_streams_open"].type == "gauge"
    assert {s.labels["kind"] for s in f["rivet_http2_abuse"].samples} == {
        "rapid_reset", "continuation", "settings", "ping", "priority", "empty_data", "hpack"}
    assert value(f, "rivet_http2_goaways_sent", "rivet_http2_goaways_sent_total",
                 code="NO_ERROR") == 0

    # Three h2c connections (prior knowledge), one stream each, one of them offloaded. (One curl
    # per URL: curl 7.88 fails its second request on a reused h2c connection, nginx's too.)
    for path in ("/hello", "/hello", "/work?n=10"):
        p = curl("--http2-prior-knowledge", "-o", "/dev/null", "-w", "%{http_version} %{http_code}",
                 f"http://{srv.host}:{srv.port}{path}")
        assert p.returncode == 0 and p.stdout == b"2 200", (p.stdout, p.stderr)
    req = "rivet_http_requests"
    f = scrape(srv)
    assert value(f, req, req + "_total", route="/hello", protocol="2", code="2xx") == 2
    assert value(f, req, req + "_total", route="/work", protocol="2", code="2xx") == 1
    assert value(f, req, req + "_total", route="/hello", protocol="1.1", code="2xx") == 0
    assert value(f, req, req + "_total", route="/metrics", protocol="1.1", code="2xx") == 1
    assert value(f, "rivet_http2_connections", "rivet_http2_connections_total") == 3
    assert value(f, "rivet_http2_streams", "rivet_http2_streams_total") == 3
    # The streams end with their answers (curl has them all), the connection when curl leaves.
    wait_for(lambda: value(scrape(srv), "rivet_http2_streams_open", "rivet_http2_streams_open")
             == 0, what="no HTTP/2 stream open")
