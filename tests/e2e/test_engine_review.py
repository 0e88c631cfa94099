"""Regressions found by reviewing the engine: clocks after a long sleep, chunked framing
overhead, closes that must not reset a response in flight, non-standard exceptions."""
import hashlib
import time

from rivet_e2e import SLOW, build_request, parse_responses


def test_first_connection_after_a_long_quiet_spell_is_served(rivet):
    # The loop sleeps in epoll_wait with no timer armed; timers armed when it wakes must count
    # from the wake-up, or the 10 s header timeout is already "due" for the first connection.
    srv = rivet(args=("--threads", "1", "--workers", "1"))
    time.sleep(11)
    r = srv.get("/hello")
    assert r.status == 200 and r.body == b"Hello, World!"


def test_chunk_extensions_cannot_outgrow_the_body_limit(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "1", "--max-body", "1024"))
    ext = ";" + "e" * 3000
    with srv.connect(timeout=10 * SLOW) as c:
        c.send(b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        # 1 byte of body per ~3 KB of framing: 100 such chunks decode to 100 bytes (under the
        # limit) but are ~300 KB of raw framing, more than 2 x 1 KiB + 64 KiB.
        try:
            for _ in range(100):
                c.send(("1" + ext + "\r\nx\r\n").encode())
        except OSError:
            pass  # the server may close before we are done sending
        raw, _closed = c.read_until_close(10)
    rs = parse_responses(raw)
    assert rs and rs[0].status == 413, raw[:200]
    assert srv.get("/hello").status == 200


def test_close_with_unread_input_does_not_cut_the_response(rivet, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    data = bytes((i * 7) % 251 for i in range(20 * 1024 * 1024))
    (root / "big.bin").write_bytes(data)
    srv = rivet(args=("--threads", "1", "--workers", "1", "--root", str(root)))
    with srv.connect(timeout=20 * SLOW) as c:
        # The second request arrives while the first answer (which ends the connection) is
        # still going out: closing with it unread would send a RST and truncate the body.
        c.send(build_request("GET", "/big.bin", headers={"Connection": "close"}))
        time.sleep(0.05)
        c.send(build_request("GET", "/hello"))
        raw, closed = c.read_until_close(20)
    rs = parse_responses(raw)
    assert closed and len(rs) == 1 and rs[0].status == 200
    assert hashlib.sha256(rs[0].body).digest() == hashlib.sha256(data).digest()
