"""Large bodies are compressed on the worker pool, not on their I/O loop: with one loop
(--threads 1) a /hello is answered while two large bodies wait for their compression, and the
compressed bodies decode to what was sent. Where the pool cannot take the work, the body goes
as it is. Events, not timings: the one worker is held by a /cpu job, so the compressions wait
in its queue (rivet_worker_queue_depth) while the loop answers the canary."""
import time

import pytest

from rivet_e2e import SLOW, build_request
from test_compression import DECODE, text_bytes, varies_on_accept_encoding
from test_waiting import metric_value

ONE = ("--threads", "1", "--workers", "1")
BIG = 6 * 1024 * 1024  # past the cheaper levels' 1 MiB too; under the 8 MiB body limit


def post_echo(conn, body: bytes, accept: str) -> None:
    conn.send(build_request("POST", "/echo", {"Content-Type": "text/plain",
                                              "Accept-Encoding": accept}, body))


def wait_for_queue_depth(srv, depth: int) -> None:
    deadline = time.monotonic() + 60 * SLOW
    while metric_value(srv, "rivet_worker_queue_depth") != depth:
        assert time.monotonic() < deadline, f"the queue never held {depth}: compressed inline?"
        time.sleep(0.02)


@pytest.mark.parametrize("coding", ["br", "zstd", "gzip"])
def test_canary_is_answered_while_large_bodies_wait_for_their_compression(rivet, coding):
    srv = rivet(args=ONE)
    holder = srv.connect(timeout=120 * SLOW)
    holder.send(build_request("GET", "/cpu?ms=5000"))  # the one worker, for 5 s of its CPU
    bodies = [text_bytes(BIG, f"big{i}") for i in range(2)]
    bigs = [srv.connect(timeout=120 * SLOW) for _ in bodies]
    for conn, body in zip(bigs, bodies):
        post_echo(conn, body, coding)
    # Both compressions wait for the worker: before the fix they ran on the loop, at once, and
    # the queue never held two.
    wait_for_queue_depth(srv, 2)
    with srv.connect() as canary:
        r = canary.request("GET", "/hello")
        assert r.status == 200 and r.body == b"Hello, World!"
    for conn in bigs:  # the canary's answer came first: not a byte of the big ones yet
        assert conn.nothing_within(0), "a large answer was sent before the canary's"
    assert holder.read_response().status == 200
    for conn, body in zip(bigs, bodies):
        r = conn.read_response()
        assert r.status == 200, r
        assert r.header("Content-Encoding") == coding
        assert varies_on_accept_encoding(r)
        assert int(r.header("Content-Length")) == len(r.body) < len(body) // 3
        assert DECODE[coding](r.body) == body
        conn.close()
    holder.close()


def test_full_queue_sends_the_large_body_as_it_is(rivet):
    """The work is optional: a pool whose queue is full sends the identity body at once (Vary
    still says it depends on Accept-Encoding) rather than compress on the loop."""
    srv = rivet(args=(*ONE, "--queue", "1"))
    holder = srv.connect(timeout=120 * SLOW)
    holder.send(build_request("GET", "/cpu?ms=5000"))
    filler = srv.connect(timeout=120 * SLOW)
    filler.send(build_request("GET", "/cpu?ms=1"))  # the queue's one place
    wait_for_queue_depth(srv, 1)
    first_body, second_body = text_bytes(BIG, "first"), text_bytes(BIG, "second")
    first = srv.connect(timeout=120 * SLOW)
    post_echo(first, first_body, "br")  # waits in the quarter past the bound answers may use
    wait_for_queue_depth(srv, 2)
    second = srv.connect(timeout=120 * SLOW)
    post_echo(second, second_body, "br")  # no room left: sent as it is, at once
    r = second.read_response()
    assert r.status == 200 and r.header("Content-Encoding") is None
    assert varies_on_accept_encoding(r)
    assert r.body == second_body
    assert first.nothing_within(0), "the queued compression did not wait for the worker"
    r = first.read_response()
    assert r.header("Content-Encoding") == "br" and DECODE["br"](r.body) == first_body
    for conn in (holder, filler, first, second):
        conn.close()


def test_bodies_either_side_of_the_worker_threshold_decode(rivet):
    srv = rivet(args=ONE)
    for size in (64 * 1024 - 1, 64 * 1024, 1024 * 1024 - 1, 1024 * 1024):
        body = text_bytes(size, f"s{size}")
        for coding in DECODE:
            r = srv.post("/echo", body, headers={"Content-Type": "text/plain",
                                                 "Accept-Encoding": coding})
            assert r.header("Content-Encoding") == coding, (size, coding)
            assert DECODE[coding](r.body) == body, (size, coding)


@pytest.mark.parametrize("coding", ["br", "gzip"])
def test_large_answer_of_an_offloaded_handler_is_compressed_too(rivet, coding):
    """An answer that already comes later (an offloaded handler's: fibonacci(1000000) has
    209,988 digits) takes its compression to a worker the same way, through its own Deferred."""
    srv = rivet(args=ONE)
    plain = srv.get("/fibonacci?number=1000000", timeout=60)
    assert plain.status == 200 and len(plain.body) > 200_000
    r = srv.get("/fibonacci?number=1000000", headers={"Accept-Encoding": coding}, timeout=60)
    assert r.status == 200 and r.header("Content-Encoding") == coding
    assert varies_on_accept_encoding(r)
    assert DECODE[coding](r.body) == plain.body
