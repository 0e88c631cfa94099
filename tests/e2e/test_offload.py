"""The worker pool: offloaded routes do not block the I/O loop; a full queue answers 503."""
import re
import threading
import time

import pytest

from ops_e2e import wait_for
from rivet_e2e import Closed, build_request, work_result

HEAVY = 1_000_000_000  # ~0.3 s of one worker in a release build


def test_queue_full_503_with_retry_after(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "1", "--queue", "1"))
    conns = [srv.connect(timeout=30) for _ in range(8)]
    try:
        req = build_request("GET", f"/work?n={HEAVY}")
        for c in conns:  # as close together as possible
            c.send(req)
        responses = []
        for c in conns:
            responses.append(c.read_response())  # raises on a timeout: nobody may hang
    finally:
        for c in conns:
            c.close()
    statuses = [r.status for r in responses]
    assert set(statuses) <= {200, 503}, responses
    busy = [r for r in responses if r.status == 503]
    done = [r for r in responses if r.status == 200]
    assert busy, f"no 503 with 1 worker and a queue of 1: {statuses}"
    assert 1 <= len(done) <= 2, statuses  # one running, at most one waiting
    for r in busy:
        assert r.header("Retry-After") == "1", r
        assert b"Service Unavailable" in r.body, r
    for r in done:
        assert r.json() == {"n": HEAVY, "result": work_result(HEAVY)}
    # Once the pool has room again, offloaded routes work.
    r = srv.get("/work?n=1000")
    assert r.status == 200 and r.json() == {"n": 1000, "result": work_result(1000)}


def gauge(srv, name: str) -> int:
    r = srv.get("/metrics")
    m = re.search(rf"^{name} (\d+)$", r.text, re.M)
    assert m, (name, r.text[:500])
    return int(m.group(1))


def test_queue_full_503_keeps_connection_usable(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "1", "--queue", "1"))
    with srv.connect(timeout=60) as a, srv.connect(timeout=60) as b, srv.connect(timeout=60) as c:
        # Two seconds of the worker's own CPU time: a loaded machine only makes them longer.
        a.send(build_request("GET", "/cpu?ms=2000"))
        # The worker has taken it (in flight, besides the scrape, and the queue empty) ...
        wait_for(lambda: gauge(srv, "rivet_http_requests_in_flight") >= 2
                 and gauge(srv, "rivet_worker_queue_depth") == 0, 30, "a on the worker")
        b.send(build_request("GET", "/work?n=1000"))
        # ... b waits in the queue ...
        wait_for(lambda: gauge(srv, "rivet_worker_queue_depth") == 1, 30, "b in the queue")
        c.send(build_request("GET", "/work?n=1000"))  # ... and c finds it full
        rs = [conn.read_response() for conn in (a, b, c)]
        assert [r.status for r in rs] == [200, 200, 503], rs
        # The 503 is an ordinary answer: the same connection serves the next request.
        r = c.request("GET", "/work?n=10")
        assert r.status == 200 and r.json()["n"] == 10, r


def test_burst_no_larger_than_idle_pool_is_not_refused(rivet):
    # No wait for the workers to start: the pool counts a worker that has not taken a job as
    # idle, started or not, so a burst right after the start is taken whole too.
    srv = rivet(args=("--threads", "1", "--workers", "8", "--queue", "1"))
    conns = [srv.connect(timeout=30) for _ in range(8)]
    try:
        for c in conns:
            c.send(build_request("GET", "/work?n=100000000"))
        statuses = [c.read_response().status for c in conns]
    finally:
        for c in conns:
            c.close()
    assert statuses == [200] * 8, statuses


def test_offloaded_work_does_not_block_the_io_loop(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "1"))
    with srv.connect(timeout=30) as slow:
        t0 = time.monotonic()
        slow.send(build_request("GET", "/work?n=1000000000"))
        time.sleep(0.02)
        with srv.connect() as fast:
            for _ in range(5):
                r = fast.request("GET", "/hello")
                assert r.body == b"Hello, World!"
        fast_done = time.monotonic() - t0
        r = slow.read_response()
        slow_done = time.monotonic() - t0
    assert r.status == 200 and r.json() == {"n": 1000000000, "result": work_result(1000000000)}
    assert fast_done < slow_done, (fast_done, slow_done)


def test_inline_heavy_runs_handlers_on_the_io_loop(rivet):
    # The concurrency model bench/models.py compares: with --inline-heavy the slow handler
    # holds the only I/O loop, so /hello on another connection waits until it is answered.
    srv = rivet(args=("--threads", "1", "--workers", "1", "--inline-heavy"))
    with srv.connect(timeout=60) as slow, srv.connect(timeout=60) as fast:
        # About 1.5 s on a quiet machine (/work's most, 0.3 s, can end before a loaded machine
        # has run the next lines).
        slow.send(build_request("GET", "/calc?value=0.5&terms=50000000"))
        time.sleep(0.05)
        fast.send(build_request("GET", "/hello"))
        assert fast.nothing_within(0.1), "/hello was answered while the loop ran /calc"
        r = slow.read_response()
        assert r.status == 200 and r.json()["terms"] == 50000000, r
        assert fast.read_response().body == b"Hello, World!"


def test_inline_heavy_bypasses_the_worker_queue(rivet):
    # No worker pool in the way: a queue of 1 refuses nothing.
    srv = rivet(args=("--threads", "1", "--workers", "1", "--queue", "1", "--inline-heavy"))
    conns = [srv.connect(timeout=30) for _ in range(4)]
    try:
        for c in conns:
            c.send(build_request("GET", "/work?n=100000000"))
        statuses = [c.read_response().status for c in conns]
    finally:
        for c in conns:
            c.close()
    assert statuses == [200] * 4, statuses


def test_fibonacci_offloaded_only_above_20000(rivet):
    # One worker, busy with a long job: F(20000) is computed inline and answered at once;
    # F(20001) goes to the worker and waits behind the job, so its answer cannot come first.
    srv = rivet(args=("--threads", "1", "--workers", "1"))
    with srv.connect(timeout=30) as busy, srv.connect(timeout=30) as c:
        busy.send(build_request("GET", "/calc?value=0.5&terms=20000000"))
        time.sleep(0.05)
        r = c.request("GET", "/fibonacci?number=20000")
        assert r.status == 200 and r.json()["number"] == 20000, r
        assert busy.nothing_within(0), "the long job finished first: the test proves nothing"
        r = c.request("GET", "/fibonacci?number=20001")
        assert r.status == 200 and r.json()["number"] == 20001, r
        # The worker finished the long job before it took F(20001); both answers leave the
        # same I/O loop in that order, so the long job's answer is already here.
        assert not busy.nothing_within(0), "F(20001) was not computed on the worker"
        assert busy.read_response().json()["terms"] == 20000000


def test_concurrent_clients_on_offloaded_routes(server):
    errors = []

    def client(k):
        try:
            with server.connect(timeout=30) as c:
                for i in range(20):
                    n = 10_000 * k + i
                    r = c.request("GET", f"/work?n={n}")
                    if r.json() != {"n": n, "result": work_result(n)}:
                        errors.append((k, i, r))
        except (OSError, Closed) as e:
            errors.append((k, e))

    threads = [threading.Thread(target=client, args=(k,)) for k in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors[:5]
    assert not any(t.is_alive() for t in threads)


def test_client_gone_before_offloaded_response(server):
    # The worker finishes for a connection that no longer exists: nothing breaks.
    for _ in range(5):
        c = server.connect()
        c.send(build_request("GET", "/work?n=100000000"))
        c.reset()
    c = server.connect()
    c.send(build_request("GET", "/fibonacci?number=500000"))
    c.close()
    time.sleep(0.5)
    assert server.get("/work?n=3").json() == {"n": 3, "result": work_result(3)}
    assert server.get("/hello").body == b"Hello, World!"
