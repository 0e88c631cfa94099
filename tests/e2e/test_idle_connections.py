"""A keep-alive connection idle between two requests holds no HTTP/1.1 session (the engine's
Connection::Stage::Resting, docs/ARCHITECTURE.md): rivet_connections_idle counts those, and such a
connection behaves as one that kept its session did: its next request is served, its request
count goes on towards max_requests_per_connection, the keep-alive timeout closes it, and a drain
ends it. What it saves, bytes per idle connection, is measured by the benchmarks (idle_c10000)."""
import contextlib
import signal

import pytest

from ops_e2e import wait_for
from rivet_e2e import build_request

parser = pytest.importorskip("prometheus_client.parser")


def idle_gauge(srv) -> float:
    # The scrape's own connection closes after it, so it is never counted.
    r = srv.get("/metrics", headers={"Connection": "close"})
    assert r.status == 200, r
    for family in parser.text_string_to_metric_families(r.text):
        for s in family.samples:
            if s.name == "rivet_connections_idle":
                return s.value
    raise AssertionError("no rivet_connections_idle in /metrics")


def hello(conn) -> None:
    conn.send(build_request("GET", "/hello"))
    r = conn.read_response()
    assert r.status == 200 and r.body == b"Hello, World!", r
    assert not r.closes, r


@contextlib.contextmanager
def idle_connections(srv, count: int):
    """`count` connections, each served one /hello and then resting; closed on the way out."""
    conns = [srv.connect() for _ in range(count)]
    try:
        for c in conns:
            hello(c)
        wait_for(lambda: idle_gauge(srv) == count, timeout=30, what=f"{count} idle connections")
        yield conns
    finally:
        for c in conns:
            c.close()


def test_idle_connections_are_counted_and_served_again(rivet):
    srv = rivet(args=("--threads", "2"))
    with idle_connections(srv, 40) as conns:
        # Each one's next request finds it resting: served as on any keep-alive connection,
        # twice, with a pipelined pair between.
        for c in conns:
            hello(c)
            c.send(build_request("GET", "/hello") * 2)
            assert [r.status for r in c.read_responses(2)] == [200, 200]
            hello(c)
        wait_for(lambda: idle_gauge(srv) == 40, timeout=30, what="40 idle connections again")
        for c in conns[:15]:
            c.close()
        wait_for(lambda: idle_gauge(srv) == 25, timeout=30, what="25 idle after 15 closed")
    wait_for(lambda: idle_gauge(srv) == 0, timeout=30, what="no idle connection")


def test_connections_rest_after_a_large_file_and_a_streamed_answer(rivet, tmp_path):
    # Both pause reading while their body leaves (Paused); once it has, the connection rests as
    # after any other answer.
    root = tmp_path / "www"
    root.mkdir()
    (root / "big.bin").write_bytes(b"x" * 8_000_000)
    srv = rivet(args=("--threads", "1"), root=root)
    with srv.connect() as c:
        c.send(build_request("GET", "/big.bin"))
        r = c.read_response()
        assert r.status == 200 and len(r.body) == 8_000_000, r
        wait_for(lambda: idle_gauge(srv) == 1, timeout=30, what="idle after a large file")
        c.send(build_request("GET", "/stream/waiting?parts=3&ms=10"))
        r = c.read_response()
        assert r.status == 200 and r.body, r
        wait_for(lambda: idle_gauge(srv) == 1, timeout=30, what="idle after a streamed answer")
        hello(c)


def test_request_count_goes_on_across_idle_periods(rivet):
    srv = rivet(args=("--max-requests-per-connection", "3"))
    with srv.connect() as c:
        for _ in range(2):
            hello(c)
            wait_for(lambda: idle_gauge(srv) == 1, timeout=30, what="the connection idle")
        c.send(build_request("GET", "/hello"))
        r = c.read_response()
        assert r.status == 200 and r.closes, r  # the third: the last this connection serves
        assert c.closed_by_peer(timeout=30)
    assert idle_gauge(srv) == 0


def test_keepalive_timeout_closes_an_idle_connection(rivet):
    srv = rivet(args=("--keepalive-timeout", "1"))
    with srv.connect() as c:
        hello(c)
        assert c.closed_by_peer(timeout=60)
    wait_for(lambda: idle_gauge(srv) == 0, timeout=30, what="no idle connection")


def test_drain_closes_idle_connections_and_exits(rivet):
    srv = rivet(args=("--threads", "2"))
    with idle_connections(srv, 10) as conns:
        srv.send_signal(signal.SIGTERM)
        for c in conns:
            assert c.closed_by_peer(timeout=30)
        assert srv.wait(timeout=30) == 0
