"""The metrics an operator expects (issue 24, item 6), read with Prometheus' own parser: request
durations by route pattern, method and status class with label sets that stay bounded whatever
the paths, requests in flight, open descriptors and their limit, certificate expiry, build info,
the draining state and the last reload's result."""
import signal
import ssl
import subprocess

from prometheus_client import parser

from ops_e2e import free_port, get, statuses, wait_for, write_config
from rivet_e2e import SLOW, Conn, build_request
from tls_e2e import curl, live_copy, replace

HIST = "rivet_http_request_duration_seconds"

# Every family this change adds, with its type.
FAMILIES = {
    HIST: "histogram",
    "rivet_http_requests_in_flight": "gauge",
    "process_open_fds": "gauge",
    "process_max_fds": "gauge",
    "rivet_build_info": "gauge",
    "rivet_draining": "gauge",
    "rivet_config_last_reload_successful": "gauge",
    "rivet_config_last_reload_timestamp_seconds": "gauge",
    "rivet_tls_certificate_expiry_timestamp_seconds": "gauge",
}


def scrape(srv, port=None):
    with Conn(srv.host, port or srv.port, timeout=10 * SLOW) as c:
        c.send(build_request("GET", "/metrics"))
        r = c.read_response()
    assert r.status == 200, r
    return {f.name: f for f in parser.text_string_to_metric_families(r.text)}


def value(families, name, **labels):
    """The one sample of `name` (a family's, or one of a histogram's _count, _sum ...)."""
    family = name
    for suffix in ("_bucket", "_count", "_sum"):
        if name.endswith(suffix) and name[:-len(suffix)] in families:
            family = name[:-len(suffix)]
    found = [s.value for s in families[family].samples
             if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())]
    assert len(found) == 1, (name, labels, families[family].samples[:20])
    return found[0]


def series(families, prefix="rivet_http_"):
    """Every sample's name and label set of the request families: what Prometheus stores."""
    return {(s.name, tuple(sorted(s.labels.items())))
            for f in families.values() if f.name.startswith(prefix) for s in f.samples}


def not_after(cert_path) -> float:
    """The leaf's notAfter, seconds since the epoch, as openssl reads it from the file."""
    out = subprocess.run(["openssl", "x509", "-noout", "-enddate", "-in", str(cert_path)],
                         capture_output=True, text=True, check=True, timeout=30).stdout
    return ssl.cert_time_to_seconds(out.strip().split("=", 1)[1])


def test_every_operator_metric_with_its_type_on_the_admin_port(rivet):
    port = free_port()
    srv = rivet(args=("--threads", "2", "--workers", "2", "--admin-port", port))
    with srv.connect() as c:
        assert statuses(c, [get("/hello")] * 5) == [200] * 5
        assert statuses(c, [get("/no/such/path")] * 2) == [404] * 2
    assert srv.post("/echo", "x").status == 200
    assert srv.get("/work?n=10").status == 200  # offloaded: counted by the worker's block
    f = scrape(srv, port)
    for name, kind in FAMILIES.items():
        assert name in f, name
        assert f[name].type == kind, (name, f[name].type)
    assert value(f, HIST + "_count", method="GET", route="/hello", code="2xx") == 5
    assert value(f, HIST + "_bucket", method="GET", route="/hello", code="2xx", le="+Inf") == 5
    assert value(f, HIST + "_count", method="POST", route="/echo", code="2xx") == 1
    assert value(f, HIST + "_count", method="GET", route="/work", code="2xx") == 1
    # A path no route matched is labelled by a pattern (the static files' catch-all, which
    # answered the 404), or "(none)" without one: never by itself.
    none = [s for s in f[HIST].samples if s.name == HIST + "_count" and s.labels["code"] == "4xx"]
    assert [(s.labels["route"], s.value) for s in none] in ([("/*path", 2)], [("(none)", 2)]), none
    assert not any("/no/such" in v for s in f[HIST].samples for v in s.labels.values())
    counted = sum(s.value for s in f[HIST].samples if s.name == HIST + "_count")
    assert counted == sum(s.value for s in f["rivet_http_requests"].samples) == 9
    # Only the scrape is in flight, and it comes on the admin port: nothing on the main one.
    assert value(f, "rivet_http_requests_in_flight") == 0
    (info,) = f["rivet_build_info"].samples
    assert info.value == 1 and info.labels["version"].count(".") == 2, info
    assert info.labels["compiler"].split()[0] in ("gcc", "clang"), info
    assert value(f, "rivet_draining") == 0
    assert value(f, "rivet_config_last_reload_successful") == 1
    assert value(f, "rivet_config_last_reload_timestamp_seconds") == value(
        f, "process_start_time_seconds")
    assert f["rivet_tls_certificate_expiry_timestamp_seconds"].samples == []  # no TLS


def test_label_sets_stay_bounded_after_10000_distinct_paths(rivet):
    srv = rivet(args=("--threads", "2", "--workers", "1"))

    def distinct_paths(first, n, batch=500):
        with srv.connect(timeout=30) as c:
            for start in range(first, first + n, batch):
                paths = [get(f"/x/{i}?q={i}") for i in range(start, min(start + batch, first + n))]
                assert set(statuses(c, paths)) == {404}

    distinct_paths(0, 10)
    scrape(srv)  # the next scrapes show this one's series
    before = series(scrape(srv))
    distinct_paths(10, 10_000)
    f = scrape(srv)
    after = series(f)
    # The same series as after 10 requests.
    assert after == before, sorted(after ^ before)[:10]
    assert len(after) < 2000, len(after)
    assert sum(s.value for s in f[HIST].samples
               if s.name == HIST + "_count" and s.labels["code"] == "4xx") == 10_010
    # A method the server does not know is one label, whatever it is called.
    with srv.connect() as c:
        codes = statuses(c, [build_request(m, "/x") for m in ("BREW", "PROPFIND", "WHEN")])
    assert all(code >= 400 for code in codes), codes
    methods = {s.labels["method"] for s in scrape(srv)[HIST].samples}
    assert methods <= {"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE",
                       "CONNECT", "OTHER"}, methods
    assert "OTHER" in methods


def test_in_flight_counts_the_requests_still_waiting(rivet):
    srv = rivet(args=("--threads", "2", "--workers", "1"))
    waiting = [srv.connect(timeout=30) for _ in range(3)]
    for c in waiting:
        c.send(get("/wait?ms=60000"))
    # The three waiting handlers and the scrape itself.
    wait_for(lambda: value(scrape(srv), "rivet_http_requests_in_flight") == 4, 10,
             "four requests in flight")
    for c in waiting:
        c.close()
    # Their clients left: each wait is cancelled, and only the scrape is left.
    wait_for(lambda: value(scrape(srv), "rivet_http_requests_in_flight") == 1, 10,
             "only the scrape in flight")
    # HTTP/2 streams (h2c by prior knowledge) end their requests the same way: answered at
    # once, later (a timer), or by a worker.
    for path in ("/hello", "/wait?ms=10", "/work?n=10"):
        p = curl("--http2-prior-knowledge", "-o", "/dev/null",
                 f"http://{srv.host}:{srv.port}{path}")
        assert p.returncode == 0, p.stderr
    assert value(scrape(srv), "rivet_http_requests_in_flight") == 1


def test_open_fds_rise_with_open_connections_and_the_limit_is_shown(rivet):
    srv = rivet(args=("--threads", "2", "--workers", "1"), nofile_cap=4096)
    f = scrape(srv)
    assert value(f, "process_max_fds") == 4096
    before = value(f, "process_open_fds")
    assert before >= 5, before  # listeners, epoll, eventfds, logs
    conns = [srv.connect() for _ in range(40)]
    try:
        for c in conns:  # each answered: accepted, so its descriptor is open
            assert c.request("GET", "/hello").status == 200
        assert value(scrape(srv), "process_open_fds") >= before + 40
    finally:
        for c in conns:
            c.close()
    wait_for(lambda: value(scrape(srv), "process_open_fds") < before + 40, 10,
             "the descriptors of the closed connections to go")


def test_certificate_expiry_matches_the_file_and_follows_a_reload(rivet, tls_certs, tmp_path):
    cert, key = live_copy(tmp_path, tls_certs.server)
    srv = rivet(args=("--threads", "1", "--workers", "1", "--tls-cert", cert, "--tls-key", key,
                      "--tls-port", "0"))
    name = "rivet_tls_certificate_expiry_timestamp_seconds"
    f = scrape(srv)
    assert [s.labels for s in f[name].samples] == [{"file": str(cert)}]
    assert value(f, name, file=str(cert)) == not_after(cert)
    # A certificate valid for 30 days takes its place at a reload.
    short = tls_certs.leaf("short", "localhost", ["DNS:localhost", "IP:127.0.0.1"], days=30)
    replace(key, short.key.read_bytes())
    replace(cert, short.cert.read_bytes())
    srv.send_signal(signal.SIGHUP)
    wait_for(lambda: "TLS certificates reloaded" in srv.stderr(), what="the reload line")
    f = scrape(srv)
    now_valid_until = value(f, name, file=str(cert))
    assert now_valid_until == not_after(short.cert) < not_after(tls_certs.server.cert)


def test_draining_is_1_in_the_lame_duck(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "1", "--drain-grace", "30"))
    assert value(scrape(srv), "rivet_draining") == 0
    srv.send_signal(signal.SIGTERM)
    wait_for(lambda: srv.get("/readyz").status == 503, 5, "/readyz to answer 503")
    assert value(scrape(srv), "rivet_draining") == 1  # still served in the lame duck
    srv.send_signal(signal.SIGTERM)  # a second one ends the grace
    assert srv.wait(10 * SLOW) == 0


def test_reload_result_flips_with_a_bad_config_and_back(rivet, tmp_path):
    cfg = write_config(tmp_path / "rivet.json", {"metrics": {"status_page": True}})
    srv = rivet(args=("--threads", "1", "--workers", "1", "--config", cfg))
    f = scrape(srv)
    assert value(f, "rivet_config_last_reload_successful") == 1
    started = value(f, "rivet_config_last_reload_timestamp_seconds")

    write_config(cfg, "{ this is not JSON")
    srv.send_signal(signal.SIGHUP)
    wait_for(lambda: "configuration refused" in srv.stderr(), what="the refusal line")
    f = scrape(srv)
    assert value(f, "rivet_config_last_reload_successful") == 0
    refused_at = value(f, "rivet_config_last_reload_timestamp_seconds")
    assert refused_at >= started

    write_config(cfg, {"metrics": {"status_page": False}})
    srv.send_signal(signal.SIGHUP)
    wait_for(lambda: "applied" in srv.stderr(), what="the applied line")
    f = scrape(srv)
    assert value(f, "rivet_config_last_reload_successful") == 1
    assert value(f, "rivet_config_last_reload_timestamp_seconds") >= refused_at
    assert srv.get("/status").status == 404  # the good one was applied indeed
