"""WebSocket connections in numbers and under stress, on raw sockets: 10,000 idle connections
held and still served; a reader that never reads closed at the send-buffer bound (and counted)
while another client is served; SIGTERM closing every WebSocket with 1001 and the process out
within the drain grace plus a few seconds (not its drain timeout); one /ws/chat message
published to 1,000 subscribers spread over two I/O loops, arriving at every one exactly once.
"""
import resource
import select
import signal
import time

import pytest

from rivet_e2e import SLOW, Closed, raise_nofile
from ws_e2e import (BINARY, CLOSE, PING, PONG, TEXT, close_payload, masked_zeros_frame, metric_sum, metrics,
                    wait_for, ws_connect)

# Details of the server the tests must name; adjust here if the server names them otherwise.
SLOW_CLIENTS_METRIC = "rivet_websocket_slow_closed_total"  # counter
OPEN_METRIC = "rivet_websocket_connections_open"  # gauge: WebSocket connections open now
SLOW_READER_MESSAGE = 1 << 20  # each echoed back to a client that never reads
SLOW_READER_GIVE_UP = 1 << 30  # bytes written without the server closing: the bound is missing
IDLE_CONNECTIONS = 10_000
SUBSCRIBERS = 1_000


def echo_round_trip(c, text: str, timeout: float = 10.0) -> None:
    c.settimeout(timeout * SLOW)
    c.send_text(text)
    got = c.recv_message()
    while got[0] == PING:  # a connection left idle for 30 s (a slow 10,000 handshakes) is pinged
        c.send_frame(PONG, got[1])
        got = c.recv_message()
    assert got == (TEXT, text.encode())


def readable(conns, timeout: float) -> list:
    """Indexes of the connections with bytes (or EOF) waiting (poll: no FD_SETSIZE limit)."""
    poller = select.poll()
    index = {c.sock.fileno(): i for i, c in enumerate(conns)}
    for fd in index:
        poller.register(fd, select.POLLIN)
    return sorted(index[fd] for fd, _ in poller.poll(timeout * 1000))


def writable(sock, timeout: float) -> bool:
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLOUT)
    return bool(poller.poll(timeout * 1000))


def counter(srv, name: str) -> float:
    samples = metrics(srv)
    assert any(n == name for n, _ in samples), f"/metrics has no {name} (the name at the top of " \
        "this file may need adjusting)"
    return metric_sum(samples, name)


# ---------------------------------------------------------------------------------------------
# Idle connections


def test_ten_thousand_idle_websockets(rivet):
    want = IDLE_CONNECTIONS + 500
    raise_nofile(want)
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    assert soft >= want, f"this process may open only {soft} descriptors"
    srv = rivet(args=("--threads", "2", "--workers", "2"), nofile=2 * want)
    conns = []
    try:
        t0 = time.monotonic()
        for i in range(IDLE_CONNECTIONS):
            conns.append(ws_connect(srv, "/ws/echo", timeout=30))
        opened_in = time.monotonic() - t0
        wait_for(lambda: counter(srv, OPEN_METRIC) >= IDLE_CONNECTIONS, 30,
                 f"{OPEN_METRIC} to reach {IDLE_CONNECTIONS}")
        # Each of them is still served (first, middle, last), and a new one too.
        for i in (0, IDLE_CONNECTIONS // 2, IDLE_CONNECTIONS - 1):
            echo_round_trip(conns[i], f"idle {i} is alive")
        with ws_connect(srv) as fresh:
            echo_round_trip(fresh, "a new one")
        assert srv.get("/hello").status == 200
        print(f"{IDLE_CONNECTIONS} WebSocket handshakes in {opened_in:.1f}s")
    finally:
        for c in conns:
            c.close()
    # Dropped without a close frame: the server notices every one.
    wait_for(lambda: counter(srv, OPEN_METRIC) == 0, 60, f"{OPEN_METRIC} to fall to 0")


# ---------------------------------------------------------------------------------------------
# A reader that never reads


def test_slow_reader_is_closed_at_the_bound_while_another_is_served(rivet):
    """The slow client writes 1 MiB messages that /ws/echo echoes, and reads nothing: the
    server's send buffer for it grows until its bound, where the server closes it and counts a
    slow client. A second client is echoed all along."""
    srv = rivet()
    before = counter(srv, SLOW_CLIENTS_METRIC)
    message = masked_zeros_frame(BINARY, SLOW_READER_MESSAGE)
    with ws_connect(srv) as fast, ws_connect(srv, rcvbuf=64 << 10, timeout=30) as slow:
        echo_round_trip(fast, "before")
        slow.sock.setblocking(False)
        sent = 0  # bytes of whole and partial frames written
        next_check = 8 << 20
        refused = False
        deadline = time.monotonic() + 120 * SLOW
        while sent < SLOW_READER_GIVE_UP:
            assert time.monotonic() < deadline, (
                f"after {sent >> 20} MiB written, the server neither closed the slow reader nor "
                f"counted it (the last write waited: it stopped reading us)")
            can_write = writable(slow.sock, 0.2)
            if can_write:
                offset = sent % len(message)
                try:
                    sent += slow.sock.send(message[offset:])
                except (BrokenPipeError, ConnectionResetError):
                    refused = True
            if refused or sent >= next_check or not can_write:
                if counter(srv, SLOW_CLIENTS_METRIC) > before:
                    break
                if refused:
                    pytest.fail(f"the slow reader was closed after {sent >> 20} MiB but "
                                f"{SLOW_CLIENTS_METRIC} did not count it")
                if sent >= next_check:
                    next_check += 8 << 20
                    echo_round_trip(fast, f"served while {sent >> 20} MiB wait")
        else:
            pytest.fail(f"{SLOW_READER_GIVE_UP >> 20} MiB written and the slow reader still open")
        assert counter(srv, SLOW_CLIENTS_METRIC) == before + 1
        # Its connection ends (what was queued for it may still arrive first).
        slow.sock.setblocking(True)
        _, closed = slow.read_until_close(30)
        assert closed, "the slow reader was counted but its connection is still open"
        echo_round_trip(fast, "after")
    print(f"slow reader closed after {sent >> 20} MiB written")


# ---------------------------------------------------------------------------------------------
# SIGTERM


@pytest.mark.parametrize("grace", [0, 1])
def test_sigterm_closes_websockets_1001_and_exits_within_the_grace(rivet, grace):
    srv = rivet(args=("--threads", "2", "--workers", "2", "--drain-grace", str(grace),
                      "--drain-timeout", "30"))
    conns = [ws_connect(srv, "/ws/echo") for _ in range(4)]
    conns += [ws_connect(srv, "/ws/chat") for _ in range(4)]
    try:
        for i, c in enumerate(conns[:4]):
            echo_round_trip(c, f"open {i}")
        t0 = time.monotonic()
        srv.send_signal(signal.SIGTERM)
        codes = []
        for c in conns:
            code, _ = c.expect_close(timeout=grace + 10)
            codes.append(code)
            try:
                c.send_frame(CLOSE, close_payload(1001))  # the handshake's second half
            except (BrokenPipeError, ConnectionResetError):
                pass
        assert codes == [1001] * len(conns), codes
        srv.wait((grace + 30) * SLOW)
        elapsed = time.monotonic() - t0
        assert srv.returncode == 0, srv.stderr()[-3000:]
        # Near the grace, far from the 30 s drain timeout (5 s of room for a loaded machine).
        assert elapsed <= (grace + 5.0) * SLOW, f"exited {elapsed:.2f}s after SIGTERM"
        for c in conns:
            try:
                assert c.eof_within(5)
            except Closed:
                pass
    finally:
        for c in conns:
            c.close()


# ---------------------------------------------------------------------------------------------
# Pub/sub


def test_publish_reaches_a_thousand_subscribers_on_every_loop(rivet):
    want = SUBSCRIBERS + 500
    raise_nofile(want)
    srv = rivet(args=("--io-threads", "2", "--workers", "2"), nofile=2 * want)
    subs = []
    try:
        for _ in range(SUBSCRIBERS):
            subs.append(ws_connect(srv, "/ws/chat", timeout=30))
        # The last one sees its own message come back: it is subscribed, and so is every one
        # opened before it.
        last = subs[-1]
        last.send_text("ready")
        assert last.recv_message() == (TEXT, b"ready")
        token = "to a thousand"
        subs[0].send_text(token)
        problems = []
        for i, c in enumerate(subs):
            c.settimeout(30 * SLOW)
            expected = [token.encode()] if c is last else [b"ready", token.encode()]
            got = []
            try:
                while len(got) < len(expected):
                    got.append(c.recv_message()[1])
            except (OSError, Closed) as e:
                got.append(repr(e))
            if got != expected:
                problems.append(f"subscriber {i}: {got}")
        assert not problems, f"{len(problems)} of {SUBSCRIBERS} wrong: {problems[:5]}"
        # Exactly once: nothing more is waiting for any of them.
        extra = [i for i, c in enumerate(subs) if c.reader.buf] + readable(subs, 0.2)
        assert not extra, f"{len(extra)} subscribers got more: {extra[:10]}"
    finally:
        for c in subs:
            c.close()
