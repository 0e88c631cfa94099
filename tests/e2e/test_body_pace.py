"""Slow request bodies cannot hold the server (issue 26, item 1): a body that waits for the body
budget waits at most the body timeout, then gets 503 with Retry-After; a body that stops, or
keeps less than limits.min_body_rate over a body timeout, gets 408; and the connection closes
after either. A normal upload, fast or paced above the minimum, is unaffected.

Each test waits for the server's answer with a generous deadline while a client thread trickles
bytes; before the fix the answer never came (the wait for the budget had no bound, and one byte
per interval kept a body forever)."""
import threading
import time

from rivet_e2e import SLOW, build_request

ANSWER_DEADLINE = 30 * SLOW  # far beyond every bound under test (a few seconds)


class Trickle:
    """Sends `head`, then one byte of body every `interval` seconds on its own thread until
    stopped (or the connection fails)."""

    def __init__(self, conn, head: bytes, interval: float):
        self.conn, self.interval = conn, interval
        self.stop_event = threading.Event()
        self.sent = 0
        conn.send(head)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop_event.wait(self.interval):
            try:
                self.conn.sock.sendall(b"x")
            except OSError:
                return
            self.sent += 1

    def stop(self):
        self.stop_event.set()
        self.thread.join()


def post_head(target: str, length: int) -> bytes:
    return build_request("POST", target, headers={"Content-Length": str(length),
                                                 "Content-Type": "application/octet-stream"})


def answer_and_close(conn):
    """The answer, and whether the connection then closed, each within the deadline."""
    conn.settimeout(ANSWER_DEADLINE)
    r = conn.read_response()
    _, closed = conn.read_until_close(ANSWER_DEADLINE, scale=False)
    return r, closed


def test_a_body_waiting_for_a_full_budget_gets_503_with_retry_after(rivet):
    # Two slow uploads hold the whole budget (2 × 1000 bytes) with a byte every 0.1 s: well
    # inside the 3 s body timeout, and no minimum rate to cut them.
    srv = rivet(args=("--threads", "2", "--workers", "2", "--max-buffered-bodies", "2000",
                      "--body-timeout", "3", "--min-body-rate", "0"))
    holders = []
    try:
        for _ in range(2):
            c = srv.connect()
            holders.append((c, Trickle(c, post_head("/echo", 1000), 0.1)))
        # Both are admitted before the third comes: their bodies are read.
        deadline = time.monotonic() + ANSWER_DEADLINE
        while min(t.sent for _, t in holders) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        with srv.connect() as third:
            # Its head first, then its body: the body waits for the budget.
            third.send(post_head("/echo", 1000))
            time.sleep(0.2)
            third.send(b"y" * 1000)
            r, closed = answer_and_close(third)
        assert r.status == 503, r
        assert r.header("Retry-After") == "1"
        assert closed
    finally:
        for _, t in holders:
            t.stop()
    # The uploads that held the budget are served as usual when they end.
    for c, t in holders:
        c.send(b"z" * (1000 - t.sent))
        c.settimeout(ANSWER_DEADLINE)
        r = c.read_response()
        assert r.status == 200, r
        assert len(r.body) == 1000
        c.close()
    assert srv.get("/hello").status == 200


def test_a_body_below_the_minimum_rate_gets_408_and_the_connection_closes(rivet):
    # 1 byte every 0.2 s is 5 bytes a second: far below 100, but inside the 2 s body timeout
    # between reads, so only the rate ends it.
    srv = rivet(args=("--threads", "1", "--workers", "1", "--body-timeout", "2",
                      "--min-body-rate", "100"))
    for target in ("/echo", "/upload"):  # a buffered body, and a streamed one
        with srv.connect() as c:
            t = Trickle(c, post_head(target, 100_000), 0.2)
            try:
                r, closed = answer_and_close(c)
            finally:
                t.stop()
            assert r.status == 408, (target, r)
            assert b"minimum rate" in r.body, r.body
            assert closed, target
    assert srv.get("/hello").status == 200


def test_a_body_that_stops_gets_408_and_the_connection_closes(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "1", "--body-timeout", "1"))
    with srv.connect() as c:
        c.send(post_head("/echo", 1000) + b"x" * 10)  # then nothing
        r, closed = answer_and_close(c)
    assert r.status == 408, r
    assert b"stopped arriving" in r.body, r.body
    assert closed


def test_a_normal_upload_is_unaffected(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "1", "--body-timeout", "2",
                      "--min-body-rate", "1000"))
    # At full speed.
    body = bytes(range(256)) * (16 * 1024)  # 4 MiB
    r = srv.post("/echo", body, timeout=ANSWER_DEADLINE,
                 headers={"Content-Type": "application/octet-stream"})
    assert r.status == 200 and r.body == body
    # Paced over several windows: 2 KiB every 0.1 s, twenty times the minimum.
    piece, pieces = b"p" * 2048, 40
    with srv.connect() as c:
        c.send(post_head("/echo", len(piece) * pieces))
        for _ in range(pieces):
            time.sleep(0.1)
            c.send(piece)
        c.settimeout(ANSWER_DEADLINE)
        r = c.read_response()
    assert r.status == 200, r
    assert r.body == piece * pieces
