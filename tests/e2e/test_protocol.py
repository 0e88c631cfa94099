"""HTTP/1.1 on the wire: keep-alive, HTTP/1.0, Connection: close, chunked uploads, 100-continue,
requests split across reads."""
import http.client
import json
import time

import pytest

from rivet_e2e import build_request, chunked, parse_responses, work_result

HELLO = b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"


# ---- keep-alive ----

def test_keep_alive_many_requests_http_client(server):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=10)
    conn.connect()
    sock = conn.sock
    for i in range(200):
        kind = i % 5
        if kind == 0:
            conn.request("GET", "/hello")
            expect = (200, b"Hello, World!")
        elif kind == 1:
            body = f"payload {i}".encode() * (i + 1)
            conn.request("POST", "/echo", body=body, headers={"Content-Type": "text/x-test"})
            expect = (200, body)
        elif kind == 2:
            conn.request("GET", f"/echo?i={i}")
            expect = (200, {"i": str(i)})
        elif kind == 3:
            conn.request("GET", "/missing")
            expect = (404, None)
        else:
            conn.request("GET", "/work?n=1000")
            expect = (200, {"n": 1000, "result": work_result(1000)})
        r = conn.getresponse()
        body = r.read()
        assert r.status == expect[0], (i, r.status, body)
        if isinstance(expect[1], dict):
            assert json.loads(body) == expect[1], (i, body)
        elif expect[1] is not None:
            assert body == expect[1], (i, body)
        assert not r.will_close, (i, r.getheaders())
        assert r.getheader("Connection") is None, (i, r.getheaders())
        assert conn.sock is sock, f"connection was reopened at request {i}"
    conn.close()


def test_keep_alive_raw_sequential(server):
    with server.connect() as c:
        for i in range(50):
            r = c.request("GET", f"/echo?n={i}")
            assert r.status == 200 and r.json() == {"n": str(i)}, r
            assert not r.closes
        assert c.nothing_within(0.2), "the server sent something unasked"


def test_http10_without_keep_alive_closes(server):
    with server.connect() as c:
        c.send(b"GET /hello HTTP/1.0\r\n\r\n")
        data, closed = c.read_until_close(5)
    assert closed, "the server kept an HTTP/1.0 connection open"
    (r,) = parse_responses(data)
    assert r.status == 200 and r.body == b"Hello, World!"
    assert r.closes, r
    assert r.header("Content-Length") == "13"


def test_http10_keep_alive(server):
    with server.connect() as c:
        for i in range(3):
            c.send(b"GET /echo?k=%d HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" % i)
            r = c.read_response()
            assert r.status == 200 and r.json() == {"k": str(i)}, r
            assert r.header("Connection").lower() == "keep-alive", r
        # The same connection, now without keep-alive: answered, then closed.
        c.send(b"GET /hello HTTP/1.0\r\n\r\n")
        data, closed = c.read_until_close(5)
    (r,) = parse_responses(data)
    assert r.body == b"Hello, World!" and r.closes
    assert closed


def test_http10_offloaded_routes(server):
    with server.connect() as c:
        c.send(b"GET /work?n=10 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        r = c.read_response()
        assert r.json() == {"n": 10, "result": work_result(10)}, r
        assert r.header("Connection").lower() == "keep-alive", r
        c.send(b"GET /work?n=11 HTTP/1.0\r\n\r\n")
        data, closed = c.read_until_close(5)
    (r,) = parse_responses(data)
    assert r.json() == {"n": 11, "result": work_result(11)} and r.closes and closed, r


def test_connection_close_on_offloaded_request_ends_pipeline(server):
    with server.connect() as c:
        c.send(b"GET /work?n=5000000 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" + HELLO)
        data, closed = c.read_until_close(5)
    rs = parse_responses(data)
    assert len(rs) == 1 and rs[0].json()["n"] == 5000000 and rs[0].closes, rs
    assert closed


def test_http10_post_with_body(server):
    with server.connect() as c:
        c.send(b"POST /echo HTTP/1.0\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello")
        data, closed = c.read_until_close(5)
    (r,) = parse_responses(data)
    assert r.status == 200 and r.body == b"hello" and closed


def test_connection_close_is_honoured(server):
    # The second request in the same write must not be answered.
    with server.connect() as c:
        c.send(b"GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" + HELLO)
        data, closed = c.read_until_close(5)
    rs = parse_responses(data)
    assert len(rs) == 1, rs
    assert rs[0].status == 200 and rs[0].body == b"Hello, World!" and rs[0].closes
    assert closed


def test_connection_close_in_a_list(server):
    with server.connect() as c:
        c.send(b"GET /hello HTTP/1.1\r\nHost: x\r\nConnection: foo, Close\r\n\r\n")
        data, closed = c.read_until_close(5)
    (r,) = parse_responses(data)
    assert r.closes and closed


def test_client_half_close_still_answered(server):
    with server.connect() as c:
        c.send(HELLO + b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        c.sock.shutdown(1)  # SHUT_WR: we have said everything
        data, closed = c.read_until_close(5)
    rs = parse_responses(data)
    assert [r.body for r in rs] == [b"Hello, World!", b"ok"]
    assert closed


# ---- request forms and field handling ----

def test_absolute_form_target(server):
    with server.connect() as c:
        c.send(b"GET http://example.com/echo?a=1 HTTP/1.1\r\nHost: example.com\r\n\r\n")
        r = c.read_response()
    assert r.status == 200 and r.json() == {"a": "1"}, r


def test_field_names_are_case_insensitive(server):
    with server.connect() as c:
        c.send(b"POST /echo HTTP/1.1\r\nhOsT: x\r\ncontent-LENGTH: 3\r\n"
               b"content-type: a/b\r\n\r\nxyz")
        r = c.read_response()
    assert r.status == 200 and r.body == b"xyz" and r.header("Content-Type") == "a/b", r


def test_identical_content_length_fields_accepted(server):
    with server.connect() as c:
        c.send(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
               b"Content-Length: 3\r\n\r\nabc")
        r = c.read_response()
    assert r.status == 200 and r.body == b"abc", r


def test_body_on_get_is_read_and_ignored(server):
    with server.connect() as c:
        c.send(b"GET /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\nGET /nope" + HELLO)
        rs = c.read_responses(2)
    assert [r.body for r in rs] == [b"Hello, World!", b"Hello, World!"], rs


def test_upgrade_request_is_served_as_http11(server):
    with server.connect() as c:
        c.send(b"GET /hello HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\n"
               b"Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n")
        r = c.read_response()
    assert r.status == 200 and r.body == b"Hello, World!", r
    assert r.header("Upgrade") is None


def test_leading_empty_line_ignored(server):
    with server.connect() as c:
        c.send(b"\r\n" + HELLO)
        r = c.read_response()
    assert r.status == 200 and r.body == b"Hello, World!", r


def test_request_split_across_many_writes(server):
    req = build_request("POST", "/echo?x=1", headers={"Content-Type": "text/plain"},
                        body=b"0123456789" * 20)
    with server.connect() as c:
        for i in range(0, len(req), 7):
            c.send(req[i:i + 7])
            time.sleep(0.002)
        r = c.read_response()
    assert r.status == 200 and r.body == b"0123456789" * 20, r


def test_pipelined_request_split_mid_head(server):
    with server.connect() as c:
        c.send(HELLO + b"GET /he")
        first = c.read_response()
        assert first.body == b"Hello, World!"
        time.sleep(0.05)
        c.send(b"althz HTTP/1.1\r\nHost: x\r\n\r\n")
        second = c.read_response()
    assert second.status == 200 and second.body == b"ok", second


# ---- chunked request bodies ----

def test_chunked_upload_with_extensions_and_trailer(server):
    body = (b"5;ext=1\r\nHello\r\n"
            b"7;a=\"q s\";b\r\n, World\r\n"
            b"A\r\n!!!!!!!!!!\r\n"
            b"0;last\r\nX-Trailer: yes\r\nX-Other: 1\r\n\r\n")
    head = (b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
            b"Content-Type: text/plain\r\n\r\n")
    with server.connect() as c:
        c.send(head + body)
        r = c.read_response()
        assert r.status == 200, r
        assert r.body == b"Hello, World" + b"!" * 10
        assert r.header("Content-Type") == "text/plain"
        # The connection is in sync after the trailer.
        assert c.request("GET", "/hello").body == b"Hello, World!"


def test_chunked_upload_trickled(server):
    pieces = [bytes([65 + i % 26]) * (i * 37 % 300 + 1) for i in range(40)]
    req = (b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
           chunked(pieces, "Trailer-Field: v\r\n"))
    with server.connect() as c:
        for i in range(0, len(req), 311):
            c.send(req[i:i + 311])
            time.sleep(0.003)
        r = c.read_response()
    assert r.status == 200 and r.body == b"".join(pieces), r


def test_chunked_coding_name_case_insensitive(server):
    with server.connect() as c:
        c.send(b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n"
               + chunked([b"abc"]))
        r = c.read_response()
    assert r.status == 200 and r.body == b"abc", r


def test_chunked_empty_body(server):
    with server.connect() as c:
        c.send(b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
        r = c.read_response()
    assert r.status == 200 and r.body == b"" and r.header("Content-Length") == "0", r


def test_chunked_then_pipelined_request(server):
    with server.connect() as c:
        c.send(b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
               + chunked([b"one", b"two"]) + HELLO)
        rs = c.read_responses(2)
    assert [r.body for r in rs] == [b"onetwo", b"Hello, World!"]


def test_chunked_fibonacci_post(server):
    with server.connect() as c:
        c.send(b"POST /fibonacci HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
               b"Content-Type: application/json\r\n\r\n" + chunked([b'{"number"', b": 12}"]))
        r = c.read_response()
    assert r.json() == {"number": 12, "fibonacci": "144"}


# ---- 100-continue ----

def test_expect_100_continue_content_length(server):
    with server.connect() as c:
        c.send(b"POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
               b"Content-Type: text/plain\r\nContent-Length: 11\r\n\r\n")
        interim = c.read_response()
        assert interim.status == 100 and interim.reason == "Continue", interim
        assert interim.body == b""
        c.send(b"hello world")
        r = c.read_response()
        assert r.status == 200 and r.body == b"hello world", r
        # A second request on the same connection gets its own 100.
        c.send(b"POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
               b"Content-Length: 3\r\n\r\n")
        assert c.read_response().status == 100
        c.send(b"abc")
        r = c.read_response()
        assert r.status == 200 and r.body == b"abc", r


def test_expect_100_continue_chunked(server):
    with server.connect() as c:
        c.send(b"POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
               b"Transfer-Encoding: chunked\r\n\r\n")
        assert c.read_response().status == 100
        c.send(chunked([b"chunky ", b"body"]))
        r = c.read_response()
    assert r.status == 200 and r.body == b"chunky body", r


def test_expect_100_continue_body_sent_anyway(server):
    # A client that does not wait: the final response still comes (a 100 before it is allowed).
    with server.connect() as c:
        c.send(b"POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
               b"Content-Length: 4\r\n\r\ndata")
        r, info = c.read_final()
        assert all(i.status == 100 for i in info) and len(info) <= 1, info
        assert r.status == 200 and r.body == b"data", r
        assert c.nothing_within(0.2)


def test_expect_100_continue_too_large_gets_413_not_100(server):
    with server.connect() as c:
        c.send(b"POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
               b"Content-Length: 9000000\r\n\r\n")
        data, closed = c.read_until_close(5)
    rs = parse_responses(data)
    assert [r.status for r in rs] == [413], rs
    assert closed


def test_expect_100_continue_ignored_for_http10(server):
    with server.connect() as c:
        c.send(b"POST /echo HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")
        assert c.nothing_within(0.5), "a 100 Continue was sent to an HTTP/1.0 client"
        c.send(b"ok")
        data, closed = c.read_until_close(5)
    (r,) = parse_responses(data)
    assert r.status == 200 and r.body == b"ok", r


def test_expect_100_continue_behind_an_offloaded_request(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "1"))
    c = srv.connect(timeout=10)
    try:
        c.send(build_request("GET", "/work?n=100000000") +
               b"POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
               b"Content-Length: 5\r\n\r\n")
        first = c.read_response()
        assert first.status == 200 and first.json()["n"] == 100000000, first
        c.settimeout(3)
        try:
            interim = c.read_response()
        except TimeoutError:
            pytest.fail("no 100 Continue within 3 s of the earlier response")
        assert interim.status == 100, interim
        c.send(b"hello")
        r = c.read_response()
        assert r.status == 200 and r.body == b"hello", r
    finally:
        c.reset()
