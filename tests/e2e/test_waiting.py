"""Handlers that wait without holding their I/O loop, on the real binary: /wait (a coroutine on a
timer), /cpu (a coroutine awaiting the worker pool) and /later (an AsyncReply answered from a
timer); and handlers cancelled when their client goes away, counted in /metrics."""
import re
import socket
import threading
import time

import pytest

from rivet_e2e import SLOW, build_request

ONE = ("--threads", "1", "--workers", "1")


def cancelled_total(srv) -> int:
    r = srv.get("/metrics")
    assert r.status == 200, r
    m = re.search(r"^rivet_handlers_cancelled_total (\d+)$", r.text, re.M)
    assert m, r.text
    return int(m.group(1))


def wait_cancelled(srv, n: int) -> None:
    deadline = time.monotonic() + 30 * SLOW
    while cancelled_total(srv) < n:
        assert time.monotonic() < deadline, f"{cancelled_total(srv)} cancelled, not {n}"
        time.sleep(0.02)


def wait_in_flight(srv, n: int) -> None:
    """Until n requests besides the scrape itself are in flight (read, not answered)."""
    deadline = time.monotonic() + 30 * SLOW
    while True:
        r = srv.get("/metrics")
        m = re.search(r"^rivet_http_requests_in_flight (\d+)$", r.text, re.M)
        assert m, r.text
        if int(m.group(1)) - 1 >= n:
            return
        assert time.monotonic() < deadline, f"{n} requests in flight: {r.text}"
        time.sleep(0.02)


def test_100_concurrent_timer_waits_on_one_loop_while_hello_keeps_answering(rivet):
    srv = rivet(args=ONE)
    conns = [srv.connect(timeout=10 * SLOW) for _ in range(100)]
    answered_at = []  # when each /hello answer arrived
    stop = threading.Event()

    def hello_loop():
        with srv.connect(timeout=30 * SLOW) as c:
            while not stop.is_set():
                r = c.request("GET", "/hello")
                assert r.status == 200 and r.body == b"Hello, World!", r
                answered_at.append(time.monotonic())

    pinger = threading.Thread(target=hello_loop)
    try:
        pinger.start()
        start = time.monotonic()
        for c in conns:
            c.send(build_request("GET", "/wait?ms=1000"))
        sent = time.monotonic()
        responses = [conns[0].read_response()]
        first_answer = time.monotonic()
        responses += [c.read_response() for c in conns[1:]]
        took = time.monotonic() - start
    finally:
        stop.set()
        pinger.join()
        for c in conns:
            c.close()
    assert all(r.status == 200 for r in responses), [r for r in responses if r.status != 200][:3]
    assert all(r.json()["waited_ms"] >= 995 for r in responses), responses[:3]
    # One loop, one worker: only waiting without blocking answers 100 x 1 s in well under 100 s.
    # 3 s (ten at a time would take 10) leaves room for a loaded machine's scheduling.
    assert took < 3.0 * SLOW, f"100 waits of 1 s took {took:.2f} s"
    # /hello never queued behind the timers: while all 100 waited, the same loop kept answering
    # it. Counted, not timed: a loop held by the waits would answer none in that second, and a
    # loaded machine still lets a round trip through many times a second.
    during = [t for t in answered_at if sent < t < first_answer]
    assert len(during) >= 5, (len(during), len(answered_at), first_answer - sent)


def test_20_pipelined_cpu_awaits_on_2_workers_answer_in_order(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "2"))
    with srv.connect(timeout=30 * SLOW) as c:
        c.send(b"".join(build_request("GET", f"/cpu?ms=50&i={i}") for i in range(20)))
        rs = c.read_responses(20)
        # Still a usable connection afterwards.
        assert c.request("GET", "/hello").body == b"Hello, World!"
    assert [r.status for r in rs] == [200] * 20, rs
    assert [r.json()["tag"] for r in rs] == [f"ms=50&i={i}" for i in range(20)]


def test_client_leaving_a_waiting_handler_is_cancelled_and_counted(rivet):
    srv = rivet(args=ONE)
    assert cancelled_total(srv) == 0
    for n, target in enumerate(("/wait?ms=5000", "/cpu?ms=300", "/later?ms=5000"), start=1):
        c = srv.connect()
        c.send(build_request("GET", target))
        wait_in_flight(srv, 1)  # read and being handled: a reset before that cancels nothing
        c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        c.close()  # a reset
        wait_cancelled(srv, n)  # and no longer in flight: the next one is counted alone
    # EOF while the handler waits: the client has gone away too (nginx's 499).
    with srv.connect() as c:
        c.send(build_request("GET", "/wait?ms=5000"))
        wait_in_flight(srv, 1)
        c.sock.shutdown(socket.SHUT_WR)
        data, closed = c.read_until_close(10 * SLOW)
        assert closed and data == b"", data
    wait_cancelled(srv, 4)
    assert cancelled_total(srv) == 4
    # The loop and the pool are fine afterwards.
    assert srv.get("/wait?ms=10").status == 200
    assert srv.get("/cpu?ms=5").status == 200
    assert srv.get("/later?ms=5").json() == {"later_ms": 5}


def test_waiting_routes_refuse_bad_input(rivet):
    srv = rivet(args=ONE)
    for target in ("/wait?ms=abc", "/wait?ms=-1", "/wait?ms=60001", "/cpu?ms=10001",
                   "/later?ms=x"):
        r = srv.get(target)
        assert r.status == 400, (target, r)
    r = srv.get("/wait?ms=0")
    assert r.status == 200 and r.json()["asked_ms"] == 0, r


def metric_value(srv, name: str) -> int:
    r = srv.get("/metrics")
    assert r.status == 200, r
    m = re.search(rf"^{name} (\d+)$", r.text, re.M)
    assert m, (name, r.text[:500])
    return int(m.group(1))


@pytest.mark.parametrize("leaving", ["/cpu?ms=10000", "/fibonacci?number=300000"],
                         ids=["on_workers", "offloaded"])
def test_queued_jobs_of_clients_that_left_are_dropped_before_they_run(rivet, leaving):
    """A client that leaves while its job waits for a worker frees the job's place in the queue
    at once: the job never runs, and other requests are not refused behind it."""
    srv = rivet(args=(*ONE, "--queue", "4"))
    holder = srv.connect(timeout=60 * SLOW)
    holder.send(build_request("GET", "/cpu?ms=3000"))  # the one worker, for 3 s of its CPU
    leavers = [srv.connect() for _ in range(4)]
    for c in leavers:
        c.send(build_request("GET", leaving))
    deadline = time.monotonic() + 30 * SLOW
    while metric_value(srv, "rivet_worker_queue_depth") != 4:
        assert time.monotonic() < deadline, "the four jobs never queued"
        time.sleep(0.02)
    before = cancelled_total(srv)
    for c in leavers:
        c.close()
    # The queue empties while the worker is still busy with the holder's job: the holder has
    # not answered yet when the depth reads 0 (before the fix, each left job ran in turn).
    while metric_value(srv, "rivet_worker_queue_depth") != 0:
        assert time.monotonic() < deadline, "the left jobs stayed queued"
        assert holder.nothing_within(0.02), "the worker finished first: the left jobs waited"
    assert holder.nothing_within(0), "the worker finished first: the left jobs waited"
    assert cancelled_total(srv) == before + 4
    # Their places are free: four more wait for the worker rather than being refused.
    takers = [srv.connect(timeout=60 * SLOW) for _ in range(4)]
    for c in takers:
        c.send(build_request("GET", "/cpu?ms=1"))
    assert holder.read_response().status == 200
    for c in takers:
        r = c.read_response()
        assert r.status == 200, r
        c.close()
    holder.close()


def test_sigterm_with_a_full_worker_queue_waits_for_the_running_job_only(rivet):
    """Clients still waiting when the drain timeout ends are closed, and their queued jobs go
    with them: the stop waits for the job a worker is running, not for the whole queue (20
    jobs of 1 s of CPU each on one worker took 20 s before)."""
    srv = rivet(args=(*ONE, "--queue", "20", "--drain-timeout", "1"))
    waiting = [srv.connect(timeout=60 * SLOW) for _ in range(21)]
    for c in waiting:
        c.send(build_request("GET", "/cpu?ms=1000"))
    deadline = time.monotonic() + 30 * SLOW
    while metric_value(srv, "rivet_worker_queue_depth") != 20:
        assert time.monotonic() < deadline, "the jobs never queued"
        time.sleep(0.02)
    start = time.monotonic()
    srv.stop(timeout=15)  # one job of 1 s of CPU and the drain timeout, on a busy machine too
    took = time.monotonic() - start
    answered = sum(1 for c in waiting if c.read_until_close(timeout=5)[0].startswith(b"HTTP/1.1 200"))
    assert answered <= 2, f"{answered} jobs ran after SIGTERM ({took:.1f} s)"
    for c in waiting:
        c.close()
