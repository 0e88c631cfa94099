"""Size limits (414, 431, 413) at and just past their edges, and every rule that rejects a request
(400, 501, 505, 417): the error is answered with Connection: close and the connection ends."""
import json
import threading

import pytest

from rivet_e2e import build_request, chunked, exchange, parse_responses

REASONS = {400: "Bad Request", 413: "Content Too Large", 414: "URI Too Long",
           417: "Expectation Failed", 431: "Request Header Fields Too Large",
           501: "Not Implemented", 505: "HTTP Version Not Supported"}
MAX_BODY = 8 * 1024 * 1024


def assert_rejected(server, raw: bytes, status: int, timeout: float = 5.0):
    """Sends `raw`; expects exactly one error response, then the server closing."""
    rs, closed, _ = exchange(server.host, server.port, raw, timeout)
    assert len(rs) == 1, f"expected one {status} response, got {rs} for {raw[:200]!r}"
    r = rs[0]
    assert r.status == status, (r, raw[:300])
    assert r.reason == REASONS[status], r
    assert r.closes, f"an error response must say Connection: close: {r}"
    # Shaped by the app's error handler like its own errors: {"error": "<what was wrong>"}.
    assert r.header("Content-Type") == "application/json", r
    doc = json.loads(r.body)
    assert set(doc) == {"error"} and isinstance(doc["error"], str) and doc["error"], r.body
    assert closed, "the server did not close the connection after the error"
    return r


def accepted(server, raw: bytes):
    with server.connect() as c:
        c.send(raw)
        return c.read_response()


# ---- request line: 8 KiB ----

def request_line_of(length: int) -> bytes:
    """A GET /echo request whose request line (without CRLF) is `length` bytes."""
    fixed = len("GET /echo?x= HTTP/1.1")
    return f"GET /echo?x={'a' * (length - fixed)} HTTP/1.1\r\nHost: x\r\n\r\n".encode()


def test_request_line_just_under_limit(server):
    r = accepted(server, request_line_of(8190))  # 8192 with its CRLF
    assert r.status == 200, r
    assert r.json() == {"x": "a" * (8190 - len("GET /echo?x= HTTP/1.1"))}


@pytest.mark.parametrize("length", [8193, 8300, 100_000])
def test_request_line_too_long_414(server, length):
    assert_rejected(server, request_line_of(length), 414)


def test_request_line_too_long_refused_before_it_ends(server):
    # The server does not wait for the end of a line that is already too long.
    assert_rejected(server, b"GET /" + b"a" * 9000, 414, timeout=3)


# ---- header block: 16 KiB, 100 fields ----

def header_block_of(total: int) -> bytes:
    """A request whose header block (field lines and the final CRLF) is exactly `total` bytes."""
    fixed = len("Host: x\r\nX-Big: \r\n\r\n")
    return b"GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * (total - fixed) + b"\r\n\r\n"


def test_header_block_at_limit(server):
    r = accepted(server, header_block_of(16 * 1024))
    assert r.status == 200 and r.body == b"Hello, World!", r


@pytest.mark.parametrize("total", [16 * 1024 + 3, 20_000, 1 << 20])
def test_header_block_too_large_431(server, total):
    assert_rejected(server, header_block_of(total), 431)


def test_many_small_fields_too_large_431(server):
    fields = b"".join(b"X-F%d: %s\r\n" % (i, b"v" * 200) for i in range(90))  # ~19 KB, 91 fields
    assert_rejected(server, b"GET /hello HTTP/1.1\r\nHost: x\r\n" + fields + b"\r\n", 431)


def with_fields(count: int) -> bytes:
    fields = b"".join(b"X-F%d: %d\r\n" % (i, i) for i in range(count - 1))
    return b"GET /headers HTTP/1.1\r\nHost: x\r\n" + fields + b"\r\n"


def test_one_hundred_fields_accepted(server):
    r = accepted(server, with_fields(100))
    assert r.status == 200, r
    assert len(r.text.splitlines()) == 100


def test_too_many_fields_431(server):
    assert_rejected(server, with_fields(101), 431)
    assert_rejected(server, with_fields(500), 431)


# ---- body: 8 MiB ----

def test_body_at_limit_content_length(server):
    body = bytes(range(256)) * (MAX_BODY // 256)
    with server.connect(timeout=60) as c:
        c.send(build_request("POST", "/echo", body=body))
        r = c.read_response()
    assert r.status == 200 and len(r.body) == MAX_BODY and r.body == body


def test_body_too_large_by_content_length_413_before_body(server):
    # Only the head is sent: the answer must not wait for the body.
    assert_rejected(server, b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n"
                    % (MAX_BODY + 1), 413, timeout=3)
    assert_rejected(server, b"POST /echo HTTP/1.1\r\nHost: x\r\n"
                    b"Content-Length: 99999999999\r\n\r\n", 413, timeout=3)


def test_body_too_large_413_survives_the_body_being_sent(server):
    # The client sends the whole oversized body before reading: the 413 must still reach it
    # (the server must not reset the connection while unread body bytes keep arriving).
    body = b"q" * (MAX_BODY + (1 << 20))
    with server.connect(timeout=30) as c:
        def feed():
            try:
                c.sock.sendall(build_request("POST", "/echo", body=body))
            except OSError:
                pass

        t = threading.Thread(target=feed, daemon=True)
        t.start()
        data, closed = c.read_until_close(15)
        t.join(5)
    rs = parse_responses(data)
    assert [r.status for r in rs] == [413], rs
    assert closed


def test_content_length_past_uint64(server):
    # Too large to be a number the server can hold: 400 (malformed) or 413 are both fair.
    raw = b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n"
    with server.connect() as c:
        c.send(raw)
        data, closed = c.read_until_close(5)
    (r,) = parse_responses(data)
    assert r.status in (400, 413) and r.closes and closed, r


def test_body_at_limit_chunked(server):
    pieces = [bytes([i]) * (1 << 20) for i in range(8)]
    with server.connect(timeout=60) as c:
        c.send(b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        c.send(chunked(pieces))
        r = c.read_response()
    assert r.status == 200 and r.body == b"".join(pieces)


def test_body_too_large_chunked_413(server):
    head = b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    piece = b"z" * (1 << 20)
    with server.connect(timeout=30) as c:
        c.send(head)

        def feed():  # 9 MiB in 1 MiB chunks; the server may stop reading at any point
            try:
                for _ in range(9):
                    c.sock.sendall(b"%x\r\n" % len(piece) + piece + b"\r\n")
                c.sock.sendall(b"0\r\n\r\n")
            except OSError:
                pass

        t = threading.Thread(target=feed, daemon=True)
        t.start()
        data, closed = c.read_until_close(15)
        t.join(5)
    rs = parse_responses(data)
    assert [r.status for r in rs] == [413], rs
    assert rs[0].closes and closed


def test_chunk_size_over_limit_413(server):
    # One chunk announced bigger than the whole body limit.
    assert_rejected(server, b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                    b"%x\r\n" % (MAX_BODY + 1) + b"a" * 1000, 413, timeout=5)


def test_chunked_trailer_too_large_431(server):
    trailer = "X-T: " + "t" * 20000 + "\r\n"
    assert_rejected(server, b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + chunked([b"abc"], trailer), 431)


# ---- rejection rules ----

GOOD_TAIL = b"\r\n"

REJECTIONS = {
    # framing
    "cl_and_te": (b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                  b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
    "te_and_cl": (b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                  b"Content-Length: 5\r\n\r\n0\r\n\r\n", 400),
    "differing_cl": (b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                     b"Content-Length: 6\r\n\r\nhello!", 400),
    "cl_not_a_number": (b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400),
    "cl_negative": (b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400),
    "cl_plus": (b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: +5\r\n\r\nhello", 400),
    "cl_hex": (b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 0x5\r\n\r\nhello", 400),
    "cl_empty": (b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: \r\n\r\n", 400),
    "cl_two_numbers": (b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5 5\r\n\r\nhello", 400),
    "te_chunked_not_last": (b"POST /echo HTTP/1.1\r\nHost: x\r\n"
                            b"Transfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n", 400),
    "te_chunked_twice": (b"POST /echo HTTP/1.1\r\nHost: x\r\n"
                         b"Transfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n", 400),
    "te_chunked_then_field": (b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                              b"Transfer-Encoding: identity\r\n\r\n0\r\n\r\n", 400),
    "bad_chunk_size": (b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                       b"zz\r\nhello\r\n0\r\n\r\n", 400),
    "chunk_data_too_long": (b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                            b"3\r\nhello\r\n0\r\n\r\n", 400),
    "chunk_bare_lf": (b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                      b"5\nhello\r\n0\r\n\r\n", 400),
    # field syntax
    "obs_fold": (b"GET /hello HTTP/1.1\r\nHost: x\r\nX-A: b\r\n  continued\r\n\r\n", 400),
    "obs_fold_tab": (b"GET /hello HTTP/1.1\r\nHost: x\r\nX-A: b\r\n\tcontinued\r\n\r\n", 400),
    "space_before_colon": (b"GET /hello HTTP/1.1\r\nHost : x\r\n\r\n", 400),
    "tab_before_colon": (b"GET /hello HTTP/1.1\r\nHost: x\r\nX-A\t: b\r\n\r\n", 400),
    "space_in_name": (b"GET /hello HTTP/1.1\r\nHost: x\r\nX A: b\r\n\r\n", 400),
    "bad_name_char": (b"GET /hello HTTP/1.1\r\nHost: x\r\nX(A): b\r\n\r\n", 400),
    "non_ascii_name": (b"GET /hello HTTP/1.1\r\nHost: x\r\nX-\xc4: b\r\n\r\n", 400),
    "empty_name": (b"GET /hello HTTP/1.1\r\nHost: x\r\n: b\r\n\r\n", 400),
    "no_colon": (b"GET /hello HTTP/1.1\r\nHost: x\r\nJustAName\r\n\r\n", 400),
    "ctl_in_value": (b"GET /hello HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n", 400),
    "del_in_value": (b"GET /hello HTTP/1.1\r\nHost: x\r\nX-A: a\x7fb\r\n\r\n", 400),
    "bad_method_char": (b"GE(T /hello HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    "bad_target_char": (b"GET /hel\x7flo HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    "non_ascii_target": (b"GET /h\xc3\xa9llo HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    "empty_target": (b"GET  /hello HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    # CR and NUL
    "bare_cr_request_line": (b"GET /hello HTTP/1.1\rHost: x\r\n\r\n", 400),
    "bare_cr_in_value": (b"GET /hello HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n", 400),
    "bare_cr_end_of_head": (b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\r\n", 400),
    "nul_in_value": (b"GET /hello HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n", 400),
    "nul_in_target": (b"GET /hel\x00lo HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    "nul_in_name": (b"GET /hello HTTP/1.1\r\nHost: x\r\nX-\x00A: b\r\n\r\n", 400),
    # Host
    "missing_host": (b"GET /hello HTTP/1.1\r\nX-A: b\r\n\r\n", 400),
    "duplicate_host": (b"GET /hello HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", 400),
    "duplicate_host_same": (b"GET /hello HTTP/1.1\r\nHost: x\r\nhost: x\r\n\r\n", 400),
    # version
    "no_version": (b"GET /hello\r\nHost: x\r\n\r\n", 400),
    "version_no_minor": (b"GET /hello HTTP/1\r\nHost: x\r\n\r\n", 400),
    "version_letters": (b"GET /hello HTTP/1.x\r\nHost: x\r\n\r\n", 400),
    "version_lowercase": (b"GET /hello http/1.1\r\nHost: x\r\n\r\n", 400),
    "version_two_digit_major": (b"GET /hello HTTP/11.1\r\nHost: x\r\n\r\n", 400),
    "version_two_digit_minor": (b"GET /hello HTTP/1.10\r\nHost: x\r\n\r\n", 400),
    "version_trailing_space": (b"GET /hello HTTP/1.1 \r\nHost: x\r\n\r\n", 400),
    "version_garbage": (b"GET /hello FOO/1.1\r\nHost: x\r\n\r\n", 400),
    # specific statuses
    "te_gzip_501": (b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
    "te_gzip_chunked_501": (b"POST /echo HTTP/1.1\r\nHost: x\r\n"
                            b"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501),
    "http2_505": (b"GET /hello HTTP/2.0\r\nHost: x\r\n\r\n", 505),
    "http3_505": (b"GET /hello HTTP/3.0\r\nHost: x\r\n\r\n", 505),
    "expect_other_417": (b"POST /echo HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\n"
                         b"Content-Length: 2\r\n\r\nhi", 417),
}


@pytest.mark.parametrize("name", sorted(REJECTIONS))
def test_rejected(server, name):
    raw, status = REJECTIONS[name]
    assert_rejected(server, raw, status)


def test_error_ends_a_pipeline(server):
    # Answered: the good request before the bad one; not answered: anything after it.
    raw = (b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"
           b"GET /hello HTTP/1.1\r\nHost: x\r\nBad Field: y\r\n\r\n"
           b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    with server.connect() as c:
        c.send(raw)
        data, closed = c.read_until_close(5)
    rs = parse_responses(data)
    assert [r.status for r in rs] == [200, 400], rs
    assert rs[0].body == b"Hello, World!" and not rs[0].closes and rs[1].closes
    assert closed


def test_error_after_offloaded_request_keeps_order(server):
    raw = (b"GET /work?n=20000000 HTTP/1.1\r\nHost: x\r\n\r\n"
           b"GET /hello HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n"
           b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    with server.connect() as c:
        c.send(raw)
        data, closed = c.read_until_close(10)
    rs = parse_responses(data)
    assert [r.status for r in rs] == [200, 400], rs
    assert rs[0].json()["n"] == 20000000
    assert closed


def test_valid_requests_still_served_after_rejections(server):
    for name in ("obs_fold", "http2_505", "cl_and_te"):
        assert_rejected(server, *REJECTIONS[name])
    r = server.get("/hello")
    assert r.status == 200 and r.body == b"Hello, World!"
