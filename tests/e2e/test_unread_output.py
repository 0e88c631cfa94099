"""Clients that do not read their answers cannot hold the server's memory (issue 26, item 5).

- A client that takes its answer a little at a time (1 KiB now and then, each read inside the
  write timeout) is held to limits.min_send_rate over each write timeout, and closed below it.
- Answers made and not yet taken count against limits.max_buffered_body_bytes with request
  bodies: while a client that does not read holds them, a new body waits, and gets 503 past the
  body timeout; when that client goes, bodies are read again.
- Answers computed for pipelined requests and queued behind one still being worked on count
  towards the connection's output limit: reading pauses, so one connection that pipelines requests
  for large answers and reads none holds at most the limit plus the answers already asked for.

Every wait is for an event (a close, an answer, a gauge) under a generous deadline; before the
fix the slow reader was never closed, the upload was answered 200 and the gauge was missing."""
import re
import socket
import threading
import time

from rivet_e2e import SLOW, build_request

DEADLINE = 60 * SLOW
# Larger than what the kernel's send buffer takes on its own (tcp_wmem's 4 MiB at most): the rest
# of such an answer waits in the server.
LARGE = 12 << 20


def small_window_socket(srv) -> socket.socket:
    """A client whose receive buffer is a few KiB: what it does not read stays in the server."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(DEADLINE)
    s.connect((srv.host, srv.port))
    return s


def echo_request(body: bytes) -> bytes:
    return build_request("POST", "/echo", body=body,
                         headers={"Content-Type": "application/octet-stream"})


def gauge(srv, name: str) -> int:
    return int(re.search(rf"^{name} (\d+)$", srv.get("/metrics").text, re.M)[1])


def wait_for_gauge(srv, name: str, ok) -> int:
    deadline = time.monotonic() + DEADLINE
    while True:
        value = gauge(srv, name)
        if ok(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def read_at(s: socket.socket, chunk: int, interval: float, total: int) -> tuple[int, bool]:
    """Reads `chunk` bytes every `interval` seconds until `total` bytes, the server's close, or
    the deadline. Returns (bytes read, closed by the server)."""
    got, deadline = 0, time.monotonic() + DEADLINE
    while got < total and time.monotonic() < deadline:
        try:
            data = s.recv(chunk)
        except (ConnectionResetError, BrokenPipeError):
            return got, True
        if not data:
            return got, True
        got += len(data)
        time.sleep(interval)
    return got, False


def test_a_client_below_the_minimum_send_rate_is_closed(rivet):
    # 1 KiB every 0.1 s is at most 10 KiB/s: below 40,000 bytes/s, though every read comes well
    # inside the 2 s write timeout (which alone never ended it).
    srv = rivet(args=("--threads", "1", "--workers", "1", "--write-timeout", "2",
                      "--min-send-rate", "40000", "--max-body", str(LARGE)))
    body = b"s" * LARGE
    s = small_window_socket(srv)
    try:
        s.sendall(echo_request(body))
        got, closed = read_at(s, 1024, 0.1, len(body))
    finally:
        s.close()
    assert closed, f"still open after {got} bytes"
    assert got < len(body)
    assert srv.get("/hello").status == 200


def test_a_client_above_the_minimum_send_rate_gets_everything(rivet):
    # Up to 64 KiB every 0.01 s, through an ordinary receive buffer: megabytes a second, far
    # above 40,000 bytes/s.
    srv = rivet(args=("--threads", "1", "--workers", "1", "--write-timeout", "2",
                      "--min-send-rate", "40000"))
    body = b"f" * (4 << 20)
    s = socket.create_connection((srv.host, srv.port), timeout=DEADLINE)
    try:
        s.sendall(echo_request(body))
        got, closed = read_at(s, 64 * 1024, 0.01, len(body))
    finally:
        s.close()
    assert got >= len(body), (got, closed)


def test_unread_answers_hold_the_body_budget(rivet):
    # The unread answer keeps at least 8 MiB of its 12 in the server: a 1 MiB body no longer fits
    # beside it in 9 MB.
    srv = rivet(args=("--threads", "1", "--workers", "1", "--max-buffered-bodies", "9000000",
                      "--max-body", str(LARGE), "--body-timeout", "2", "--write-timeout", "600",
                      "--min-send-rate", "0"))
    holder = small_window_socket(srv)
    body = b"e" * (1 << 20)
    try:
        holder.sendall(echo_request(b"h" * LARGE))  # its answer is never read
        held = wait_for_gauge(srv, "rivet_unsent_output_bytes", lambda v: v > 8 << 20)
        assert held > 8 << 20, held
        with srv.connect(DEADLINE) as c:
            # Its head first, then its body: the body needs the budget that unread answer holds.
            c.send(build_request("POST", "/echo", headers={"Content-Length": str(len(body)),
                                                           "Content-Type": "text/plain"}))
            c.send(body)
            r = c.read_response()
        assert r.status == 503, r
        assert r.header("Retry-After") == "1"
    finally:
        holder.close()
    # The reader left: its answer's bytes are given back, and bodies are read again.
    assert wait_for_gauge(srv, "rivet_unsent_output_bytes", lambda v: v == 0) == 0
    r = srv.post("/echo", body, timeout=DEADLINE, headers={"Content-Type": "text/plain"})
    assert r.status == 200 and r.body == body


def test_answers_queued_behind_a_slow_one_pause_reading(rivet):
    # A request that waits (a 3 s timer), then forty 100 KB echoes, and nothing read: the echoes
    # are answered at once but wait in order behind the first. Past the connection's output
    # limit (1 MiB) the rest wait unread in the socket instead of adding their answers: the
    # connection holds about a megabyte, not four.
    srv = rivet(args=("--threads", "1", "--workers", "1", "--write-timeout", "600",
                      "--min-send-rate", "0"))
    piece = b"q" * 100_000
    requests = build_request("GET", "/wait?ms=3000") + echo_request(piece) * 40
    s = small_window_socket(srv)
    sender = threading.Thread(target=s.sendall, args=(requests,), daemon=True)
    sender.start()
    try:
        held = wait_for_gauge(srv, "rivet_unsent_output_bytes", lambda v: v > 900_000)
        assert held > 900_000, held
        samples = [gauge(srv, "rivet_unsent_output_bytes") for _ in range(40)]
        assert max(samples) <= (1 << 20) + 2 * len(piece), samples
        # Reading lets every answer through, in order.
        s.settimeout(DEADLINE)
        data = bytearray()
        while data.count(b"HTTP/1.1 200") < 41:
            chunk = s.recv(1 << 20)
            assert chunk, "closed before all answers"
            data += chunk
        assert data.index(b"waited_ms") < data.index(piece)
    finally:
        s.close()
        sender.join(DEADLINE)


def test_an_http2_client_below_the_minimum_send_rate_is_reset(rivet):
    # Sixty streams of ~200 KB answers with every window open, read 1 KiB every 0.1 s: the same
    # minimum rate holds an HTTP/2 connection.
    from h2_frames import h2c
    from hyperframe.frame import SettingsFrame, WindowUpdateFrame
    srv = rivet(args=("--threads", "1", "--workers", "2", "--write-timeout", "2",
                      "--min-send-rate", "40000"))
    with h2c(srv, settings={SettingsFrame.INITIAL_WINDOW_SIZE: 2**31 - 1}) as c:
        c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        c.send_frames([WindowUpdateFrame(0, 2**31 - 1 - 65535)])
        for _ in range(60):
            c.request("/fibonacci?number=1000000")
        c.sock.setblocking(True)
        c.sock.settimeout(DEADLINE)
        got, closed = read_at(c.sock, 1024, 0.1, 60 * 200_000)
    assert closed, f"still open after {got} bytes"
    assert srv.get("/hello").status == 200


def test_http2_answers_held_by_a_closed_window_pause_new_streams(rivet, tmp_path):
    # A client that opens 40 streams for a 60 KB file (served from memory) with every stream
    # window at 0 receives the answers' HEADERS but none of their bodies, which wait in the
    # server. Those bodies count as unsent output; past the connection's output limit (1 MiB)
    # the rest of the requests wait undispatched, as HTTP/1.1 stops reading. Opening the windows
    # lets all 40 through, whole and in full.
    from h2_frames import h2c
    from hyperframe.frame import SettingsFrame, WindowUpdateFrame
    root = tmp_path / "www"
    root.mkdir()
    body = bytes(range(256)) * 234  # 59,904 bytes: below the 64 KiB kept in memory
    (root / "piece.bin").write_bytes(body)
    srv = rivet(args=("--threads", "1", "--workers", "1", "--write-timeout", "600",
                      "--min-send-rate", "0"), root=root)
    with h2c(srv, settings={SettingsFrame.INITIAL_WINDOW_SIZE: 0}) as c:
        ids = [c.request("/piece.bin") for _ in range(40)]
        held = wait_for_gauge(srv, "rivet_unsent_output_bytes", lambda v: v > 900_000)
        assert held > 900_000, held
        samples = [gauge(srv, "rivet_unsent_output_bytes") for _ in range(40)]
        assert max(samples) <= (1 << 20) + 2 * len(body), samples
        c.send_frames([SettingsFrame(0, {SettingsFrame.INITIAL_WINDOW_SIZE: 2**31 - 1}),
                       WindowUpdateFrame(0, 2**31 - 1 - 65535)])
        for sid in ids:
            headers, got = c.response(sid, timeout=DEADLINE)
            assert headers[":status"] == "200" and got == body, (sid, headers, len(got))
    assert wait_for_gauge(srv, "rivet_unsent_output_bytes", lambda v: v == 0) == 0
