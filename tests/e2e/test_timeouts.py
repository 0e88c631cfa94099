"""The request-head timeout: 10 s from the head's first byte, closed quietly (no response)."""
import threading
import time

from rivet_e2e import SANITIZED

HEADER_TIMEOUT = 10.0


def test_slow_and_silent_heads_are_closed_without_response(server):
    """Four clients at once (one wait of ~10 s for all of them):
    - silent: connects, sends nothing;
    - partial: sends part of a head, then nothing;
    - trickle: sends a head one byte every 0.4 s (never finishing within 10 s);
    - second: one full request, then part of a second head."""
    results = {}

    def watch(name, conn, t0, drip=None):
        conn.settimeout(0.2)
        data = b""
        i = 0
        while time.monotonic() - t0 < HEADER_TIMEOUT + 5:
            if drip is not None and i < len(drip):
                try:
                    conn.send(drip[i:i + 1])
                except OSError:
                    pass
                i += 1
            try:
                end = time.monotonic() + 0.4 if drip is not None else time.monotonic() + 0.2
                while time.monotonic() < end:
                    chunk = conn.recv(4096)
                    if not chunk:
                        results[name] = (time.monotonic() - t0, data)
                        return
                    data += chunk
            except TimeoutError:
                continue
            except ConnectionResetError:
                results[name] = (time.monotonic() - t0, data)
                return
        results[name] = (None, data)

    silent = server.connect()
    t_silent = time.monotonic()
    partial = server.connect()
    t_partial = time.monotonic()
    partial.send(b"GET /hello HTTP/1.1\r\nHost: x\r\n")
    trickle = server.connect()
    t_trickle = time.monotonic()
    second = server.connect()
    assert second.request("GET", "/hello").body == b"Hello, World!"
    second.send(b"GET /hel")
    t_second = time.monotonic()

    head = b"GET /hello HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100
    threads = [
        threading.Thread(target=watch, args=("silent", silent.sock, t_silent)),
        threading.Thread(target=watch, args=("partial", partial.sock, t_partial)),
        threading.Thread(target=watch, args=("trickle", trickle.sock, t_trickle, head)),
        threading.Thread(target=watch, args=("second", second.sock, t_second)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(HEADER_TIMEOUT + 10)
    for c in (silent, partial, trickle, second):
        c.close()
    for name in ("silent", "partial", "trickle", "second"):
        when, data = results[name]
        assert when is not None, f"{name}: never closed"
        assert data == b"", f"{name}: expected a quiet close, got {data[:200]!r}"
        late = 4.0 if SANITIZED else 2.5
        assert HEADER_TIMEOUT - 1.0 <= when <= HEADER_TIMEOUT + late, \
            f"{name}: closed at {when:.2f}s"
    # The server is fine afterwards.
    assert server.get("/hello").body == b"Hello, World!"
