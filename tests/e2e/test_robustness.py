"""Hostile or broken clients cannot take the server down: garbage, random binary, huge fields,
abrupt resets at every stage. After each, /hello still works (and teardown checks exit 0 and, in
a sanitized build, a clean stderr)."""
import os
import random
import socket
import time

import pytest

from rivet_e2e import Closed, build_request, parse_responses


def send_collect(server, data: bytes, wait: float = 3.0, scale: bool = True):
    """Sends `data` and reads until the server closes or `wait` passes (then resets the
    connection); returns (responses, closed_by_server)."""
    c = server.connect()
    try:
        c.send(data)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server already refused and closed
    raw, closed = c.read_until_close(wait, scale)
    c.reset()
    return parse_responses(raw), closed


def assert_alive(server):
    r = server.get("/hello")
    assert r.status == 200 and r.body == b"Hello, World!", r


GARBAGE = {
    "nul_bytes": b"\x00" * 4096,
    "ff_bytes": b"\xff" * 4096,
    "crlf_flood": b"\r\n" * 10000,
    "lf_only": b"\n\n\n\n",
    "spaces": b" " * 5000,
    "tls_client_hello": bytes.fromhex("16030100a5010000a10303") + bytes(range(32)) + b"\x00" * 64,
    # (HTTP/2's preface is not garbage: the plain port speaks h2c, test_http2_*.py.)
    "method_no_target": b"GET \r\n\r\n",
    "long_method": b"A" * 100_000 + b" / HTTP/1.1\r\nHost: x\r\n\r\n",
    "colons": b"GET / HTTP/1.1\r\n:::::\r\n\r\n",
    "huge_header_value": b"GET /hello HTTP/1.1\r\nHost: x\r\nX-Huge: " + b"v" * (1 << 20) +
                         b"\r\n\r\n",
    "huge_header_name": b"GET /hello HTTP/1.1\r\nHost: x\r\n" + b"N" * (1 << 20) + b": v\r\n\r\n",
    "many_empty_values": b"GET /hello HTTP/1.1\r\nHost: x\r\n" + b"X:\r\n" * 5000 + b"\r\n",
    "chunk_size_overflow": b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                           b"ffffffffffffffffffffffff\r\n",
    "chunk_ext_flood": b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                       b"1" + b";a=b" * 5000 + b"\r\nx\r\n0\r\n\r\n",
    "negative_chunk": b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                      b"-1\r\n\r\n",
    "absolute_form_userinfo": b"GET http://user@evil/hello HTTP/1.1\r\nHost: evil\r\n\r\n",
    "asterisk_get": b"GET * HTTP/1.1\r\nHost: x\r\n\r\n",
}


@pytest.mark.parametrize("name", sorted(GARBAGE))
def test_garbage_is_refused_and_server_survives(server, name):
    responses, closed = send_collect(server, GARBAGE[name])
    assert closed, f"{name}: connection not closed"
    for r in responses:
        assert r.status != 200, (name, r)
        assert r.status < 500 or r.status in (501, 505), (name, r)
    assert_alive(server)


def test_malformed_percent_escapes_in_query(server):
    r = server.get("/echo?%%%%=%zz&%00=%41&a%=b&%4=%")
    assert r.status == 200, r
    assert r.json() == {"%%%%": "%zz", "\u0000": "A", "a%": "b", "%4": "%"}, r.json()
    assert_alive(server)


def test_random_binary(server):
    rng = random.Random(20240611)
    for i in range(40):
        blob = rng.randbytes(rng.choice([1, 7, 100, 4096, 65536]))
        # A blob may be an unfinished head: then the server rightly waits.
        responses, closed = send_collect(server, blob, wait=0.5, scale=False)
        assert all(400 <= r.status < 600 for r in responses), (i, responses)
    assert_alive(server)


def test_random_mutations_of_a_valid_request(server):
    # Valid requests with bytes replaced: any answer but a 500 is fine, if it is well-formed.
    rng = random.Random(7)
    base = build_request("POST", "/echo?a=1", headers={"Content-Type": "text/plain"}, body=b"hello")
    for i in range(100):
        b = bytearray(base)
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        responses, closed = send_collect(server, bytes(b), wait=0.25, scale=False)
        assert all(r.status != 500 for r in responses), (i, bytes(b), responses)
    assert_alive(server)


def test_abrupt_resets_at_every_stage(server):
    full = build_request("POST", "/echo", body=b"x" * 100_000)
    stages = [b"", b"GE", b"GET /hello HTTP/1.1\r\nHo", full[:200], full[:50_000], full,
              build_request("GET", "/fibonacci?number=200000"),
              build_request("GET", "/work?n=50000000")]
    for i in range(3):
        for data in stages:
            c = server.connect()
            if data:
                c.send(data)
            c.reset()
    assert_alive(server)


def test_reset_while_server_writes_a_large_response(server):
    # The server is mid-write (the client never reads) when the client resets.
    for _ in range(3):
        c = server.connect()
        c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        c.send(build_request("POST", "/echo", body=b"r" * (4 << 20)))
        c.reset()
    assert_alive(server)


def test_client_closes_after_pipelining_without_reading(server):
    for _ in range(10):
        c = server.connect()
        c.send(b"".join(build_request("GET", f"/work?n={1000 * k}") for k in range(30)) +
               build_request("GET", "/hello"))
        c.close()
    assert_alive(server)


def test_many_short_connections(server):
    for i in range(300):
        with server.connect() as c:
            if i % 3 == 0:
                r = c.request("GET", "/healthz")
                assert r.body == b"ok"
            elif i % 3 == 1:
                c.send(b"GET /hello HTTP/1.1\r\n")
                c.reset()
    assert_alive(server)


def test_huge_header_value_gets_431_and_server_survives(server):
    with server.connect() as c:
        try:
            c.send(GARBAGE["huge_header_value"])
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            r = c.read_response()
        except Closed as e:
            pytest.fail(f"no 431 before the close: {e}")
    assert r.status == 431 and r.closes, r
    assert_alive(server)


def cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_eof_after_unfinished_request_closes_promptly(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "1"))
    unfinished = {
        "partial_head": (b"GET", 0),
        "partial_second_head": (b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\nGET /hel", 1),
        "partial_body": (b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhel", 0),
    }
    conns = {}
    for name, (data, _) in unfinished.items():
        c = srv.connect()
        c.send(data)
        c.sock.shutdown(socket.SHUT_WR)  # the client has said all it will
        conns[name] = c
    time.sleep(0.2)
    busy = cpu_seconds(srv.proc.pid)
    time.sleep(1.0)
    busy = cpu_seconds(srv.proc.pid) - busy
    problems = []
    for i, (name, c) in enumerate(conns.items()):
        raw, closed = c.read_until_close(2 if i == 0 else 0.1, scale=False)
        c.close()
        # Whatever was complete is answered; the unfinished rest can never complete.
        if len(parse_responses(raw)) != unfinished[name][1]:
            problems.append(f"{name}: {raw[:100]!r}")
        if not closed:
            problems.append(f"{name}: still open 3 s after the client's EOF")
    if busy > 0.3:
        problems.append(f"the idle server used {busy:.2f}s of CPU in 1s")
    assert not problems, problems


def test_connect_method_is_not_served(server):
    responses, _ = send_collect(server, b"CONNECT example.com:443 HTTP/1.1\r\n"
                                        b"Host: example.com:443\r\n\r\n", wait=0.3)
    assert len(responses) == 1 and 400 <= responses[0].status < 600, responses
    assert_alive(server)
