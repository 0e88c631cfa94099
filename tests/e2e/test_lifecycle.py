"""Graceful stop: SIGTERM/SIGINT drain in-flight requests (answered with Connection: close),
close idle connections, stop listening and exit 0."""
import signal
import socket
import threading
import time

import pytest

from rivet_e2e import SLOW, Closed, ProtocolError, build_request, parse_responses, work_result


def refused(host, port, within: float) -> bool:
    """True once a connect to host:port is refused, polling for up to `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            s = socket.create_connection((host, port), timeout=1)
        except ConnectionRefusedError:
            return True
        s.close()
        time.sleep(0.02)
    return False


def test_sigterm_idle_exits_zero(server):
    with server.connect() as c:
        assert c.request("GET", "/hello").status == 200
        t0 = time.monotonic()
        server.send_signal(signal.SIGTERM)
        # The idle keep-alive connection is closed at once, without a response.
        assert c.closed_by_peer(10), "idle connection not closed by the drain"
    assert server.wait(10 * SLOW) == 0
    # Well before the 10 s drain timeout: nothing was left to wait for.
    assert time.monotonic() - t0 < 8 * SLOW
    assert "draining" in server.stdout()


def test_sigint_exits_zero(server):
    assert server.get("/hello").status == 200
    server.send_signal(signal.SIGINT)
    assert server.wait(5 * SLOW) == 0


def test_sigterm_with_no_connection_ever(server):
    server.send_signal(signal.SIGTERM)
    assert server.wait(5 * SLOW) == 0


def test_drain_finishes_in_flight_and_queued_offloaded_requests(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "1", "--drain-timeout", "60"))
    with srv.connect(timeout=60) as a, srv.connect(timeout=60) as b, srv.connect() as idle:
        assert idle.request("GET", "/healthz").body == b"ok"
        # Seconds of the worker's own CPU time: a loaded machine only makes them longer, so a is
        # still running and b still queued when the signal comes.
        a.send(build_request("GET", "/cpu?ms=1000"))
        b.send(build_request("GET", "/cpu?ms=999"))  # waits in the queue behind a
        time.sleep(0.1)
        srv.send_signal(signal.SIGTERM)
        assert idle.closed_by_peer(3)
        assert refused(srv.host, srv.port, 3), "still accepting connections while draining"
        ra = a.read_response()
        rb = b.read_response()
        assert a.closed_by_peer(3) and b.closed_by_peer(3)
    assert ra.status == 200 and ra.json()["cpu_ms"] == 1000, ra
    assert rb.status == 200 and rb.json()["cpu_ms"] == 999, rb
    assert ra.closes and rb.closes, (ra, rb)
    assert srv.wait(60 * SLOW) == 0


def test_drain_answers_request_whose_body_is_still_arriving(server):
    with server.connect() as c:
        c.send(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhello")
        time.sleep(0.1)
        server.send_signal(signal.SIGTERM)
        time.sleep(0.2)
        c.send(b"world")
        r = c.read_response()
        assert r.status == 200 and r.body == b"helloworld" and r.closes, r
        assert c.closed_by_peer(3)
    assert server.wait(10 * SLOW) == 0


def test_sigterm_during_load(server):
    """20 keep-alive clients in a loop; SIGTERM mid-way. Every response that starts is complete
    and correct; a connection may end (or be refused) only between responses."""
    stop = threading.Event()
    errors = []
    counts = [0] * 20
    after_close_header = []

    def client(k):
        i = 0
        while not stop.is_set():
            try:
                c = server.connect(timeout=15)
            except (ConnectionRefusedError, ConnectionResetError):
                return  # the server stopped listening: fine
            except OSError as e:
                errors.append((k, "connect", repr(e)))
                return
            try:
                while not stop.is_set():
                    i += 1
                    kind = i % 4
                    if kind == 0:
                        req, check = build_request("GET", "/hello"), \
                            (lambda r: r.body == b"Hello, World!")
                    elif kind == 1:
                        req, check = build_request("GET", f"/echo?k={k}&i={i}"), \
                            (lambda r, i=i: r.json() == {"k": str(k), "i": str(i)})
                    elif kind == 2:
                        n = 3_000_000 + i  # ~1 ms on a worker: some are in flight
                        req, check = build_request("GET", f"/work?n={n}"), \
                            (lambda r, n=n: r.json() == {"n": n, "result": work_result(n)})
                    else:
                        body = b"%d-%d" % (k, i) * 50
                        req, check = build_request("POST", "/echo", body=body), \
                            (lambda r, body=body: r.body == body)
                    try:
                        c.send(req)
                    except (BrokenPipeError, ConnectionResetError):
                        break  # closed between responses
                    try:
                        r = c.read_response()
                    except Closed as e:
                        if e.partial:
                            errors.append((k, i, "truncated response", e.partial[:200]))
                        break
                    if r.status != 200 or not check(r):
                        errors.append((k, i, "wrong response", r))
                        break
                    counts[k] += 1
                    if r.closes:
                        # Said so: nothing more may come, and the server closes.
                        try:
                            data, closed = c.read_until_close(5)
                        except OSError:
                            data, closed = b"", True
                        if data or not closed:
                            errors.append((k, i, "not closed after Connection: close", data))
                        after_close_header.append(k)
                        break
            except (ProtocolError, OSError) as e:
                errors.append((k, i, "exception", repr(e)))
            finally:
                c.close()

    threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(20)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    before = sum(counts)
    t0 = time.monotonic()
    server.send_signal(signal.SIGTERM)
    rc = server.wait(12 * SLOW)
    elapsed = time.monotonic() - t0
    for t in threads:
        t.join(10 * SLOW)
    stop.set()
    assert rc == 0
    assert elapsed < 11 * SLOW, f"drain took {elapsed:.1f}s"
    assert not any(t.is_alive() for t in threads), "a client hung after the server exited"
    assert not errors, errors[:10]
    assert before > 100, f"only {before} requests before SIGTERM"
    # Requests in flight at the signal were answered, and told the connection ends.
    assert after_close_header, "no response carried Connection: close during the drain"


def test_drain_answers_every_request_already_read(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "1", "--drain-timeout", "60"))
    with srv.connect(timeout=60) as c:
        # The first runs for a second of the worker's CPU time, longer on a loaded machine.
        c.send(build_request("GET", "/cpu?ms=1000") + build_request("GET", "/hello") +
               build_request("POST", "/echo", body=b"side effect"))
        time.sleep(0.1)  # all three are read and dispatched; the first is on the worker
        srv.send_signal(signal.SIGTERM)
        raw, closed = c.read_until_close(60)
    rs = parse_responses(raw)
    assert [r.status for r in rs] == [200, 200, 200], rs
    assert rs[1].body == b"Hello, World!" and rs[2].body == b"side effect"
    assert rs[2].closes and closed
    assert srv.wait(60 * SLOW) == 0
