"""The demo's routes over HTTP/2, each as its HTTP/1.1 test checks it (test_endpoints.py,
test_offload.py, test_waiting.py, test_streamed_body.py, test_event_stream.py): routing,
404/405/OPTIONS/HEAD, errors as JSON, offloaded and coroutine handlers, AsyncReply, request
bodies buffered and streamed, response streams and Server-Sent Events; over TLS (ALPN h2) and
h2c (prior knowledge), through httpx, curl and a raw frame-level client (h2_e2e.py)."""
import asyncio
import email.utils
import json
import re
import sys
import time
import zlib

import pytest

from h2_features_e2e import (MODES, RawH2, async_client, client, curl, is_h2, run_async,
                    start)
from rivet_e2e import HTTP_DATE_RE, PUBLIC, SLOW, fib, work_result

if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(0)

# Fields that say something about the connection: never in an HTTP/2 message (RFC 9113 8.2.2).
CONNECTION_SPECIFIC = ("connection", "keep-alive", "proxy-connection", "transfer-encoding",
                       "upgrade")


@pytest.fixture(params=MODES)
def mode(request):
    return request.param


@pytest.fixture
def srv(rivet, tls_certs):
    return start(rivet, tls_certs)


@pytest.fixture
def h2(srv, mode, tls_certs):
    with client(srv, mode, tls_certs) as c:
        yield c


def common(r, body=True):
    is_h2(r)
    assert HTTP_DATE_RE.match(r.headers.get("date", "")), r.headers
    sent = email.utils.parsedate_to_datetime(r.headers["date"]).timestamp()
    assert abs(sent - time.time()) < 5 * SLOW, r.headers["date"]
    assert r.headers.get_list("server") == ["rivet"], r.headers
    assert not [k for k in r.headers if k.lower() in CONNECTION_SPECIFIC], r.headers
    if body:
        assert r.headers["content-length"] == str(len(r.content)), r.headers


def error_json(r, status=400) -> str:
    assert r.status_code == status, (r, r.content)
    assert r.headers["content-type"].startswith("application/json"), r.headers
    doc = r.json()
    assert set(doc) == {"error"} and isinstance(doc["error"], str) and doc["error"], doc
    return doc["error"].lower()


def allow(r) -> set:
    return {m.strip() for m in r.headers["allow"].split(",")}


# ---- routing ----

def test_hello_index_and_healthz(h2):
    r = h2.get("/hello")
    assert r.status_code == 200 and r.content == b"Hello, World!"
    assert r.headers["content-type"] == "text/plain; charset=utf-8"
    common(r)
    r = h2.get("/")
    assert r.status_code == 200 and r.content == (PUBLIC / "index.html").read_bytes()
    common(r)
    r = h2.get("/healthz")
    assert r.status_code == 200 and r.content == b"ok"


def test_404_405_options_and_head(h2):
    for target in ("/nope", "/hello/", "/hello/x", "/HELLO", "/echo2"):
        r = h2.get(target)
        assert r.status_code == 404, (target, r)
        common(r)
    r = h2.post("/hello", content=b"x")
    assert r.status_code == 405 and {"GET", "HEAD"} <= allow(r) and "POST" not in allow(r), r
    r = h2.delete("/echo")
    assert r.status_code == 405 and {"GET", "HEAD", "POST"} <= allow(r), r
    assert h2.get("/json").status_code == 405
    r = h2.options("/hello")
    assert r.status_code == 204 and r.content == b"", r
    assert {"GET", "HEAD", "OPTIONS"} <= allow(r) and "POST" not in allow(r)
    for target in ("/hello", "/echo?a=1&b=2", "/", "/work?n=1000", "/fibonacci?number=30000"):
        get, head = h2.get(target), h2.head(target)
        assert get.status_code == head.status_code == 200, (target, get, head)
        assert head.content == b""
        for name in ("content-type", "content-length", "server"):
            assert head.headers.get(name) == get.headers.get(name), (target, name)
    assert is_h2(h2.get("/healthz")).content == b"ok"  # the connection is still in step


def test_options_asterisk(srv, mode, tls_certs):
    with RawH2(srv, mode, tls_certs) as c:
        s = c.response(c.open("OPTIONS", "*"))
    assert s.status == 200, s.headers
    assert {"GET", "HEAD", "POST", "OPTIONS"} <= {m.strip() for m in s.headers["allow"].split(",")}


# ---- /echo, /headers, /cookies ----

def test_echo_query_and_bodies(h2):
    r = h2.get("/echo?a=1&b=hello%20world&c=x+y&a=2&e=%C3%A9&flag&a=3")
    assert r.json() == {"a": ["1", "2", "3"], "b": "hello world", "c": "x y", "e": "\u00e9",
                        "flag": ""}
    common(r)
    body = bytes(range(256)) * 64
    r = h2.post("/echo", content=body, headers={"content-type": "image/png"})
    assert r.status_code == 200 and r.content == body and r.headers["content-type"] == "image/png"
    common(r)
    r = h2.post("/echo", content=b"")
    assert r.status_code == 200 and r.content == b"" and r.headers["content-length"] == "0"
    # 5 MiB: past the stream's window (1 MiB at most), so it comes as the server opens it.
    big = bytes((i * 7919) & 0xFF for i in range(5 << 20))
    r = h2.post("/echo", content=big, headers={"content-type": "application/x-test"})
    assert r.status_code == 200 and r.content == big
    common(r)


def test_headers_and_split_cookies(srv, mode, tls_certs):
    with RawH2(srv, mode, tls_certs) as c:
        s = c.response(c.open("GET", "/headers", [("x-one", "spaced value"),
                                                     ("x-lower", "a:b:c"), ("user-agent", "e2e")]))
        assert s.status == 200, s.headers
        lines = s.body.decode().splitlines()
        for want in ("x-one: spaced value", "x-lower: a:b:c", "user-agent: e2e"):
            assert any(line.lower() == want for line in lines), lines
        # RFC 9113 8.2.3: a client may split Cookie into one field per pair.
        s = c.response(c.open("GET", "/cookies", [("cookie", "a=1"), ("cookie", "b=two"),
                                                     ("x-other", "z=9"), ("cookie", "c=3")]))
        assert s.status == 200 and s.body.decode().splitlines() == ["a=1", "b=two", "c=3"]


# ---- /fibonacci, /json, /calc, /work: answers and errors ----

@pytest.mark.parametrize("n", [0, 1, 94, 20000, 20001, 100000])  # above 20000: offloaded
def test_fibonacci(h2, n):
    r = h2.get(f"/fibonacci?number={n}")
    assert r.status_code == 200 and r.json() == {"number": n, "fibonacci": str(fib(n))}
    common(r)
    r = h2.post("/fibonacci", content=json.dumps({"number": n}),
                headers={"content-type": "application/json"})
    assert is_h2(r).json() == {"number": n, "fibonacci": str(fib(n))}


def test_errors_are_json(h2):
    for query, word in (("number=-1", "negative"), ("number=1.5", "integer"),
                        ("number=abc", "not a number"), ("", "missing"),
                        ("number=1000001", "at most")):
        assert word in error_json(h2.get("/fibonacci?" + query)), query
    for body, word in (('{"number": -5}', "negative"), ('{"number": 5', "json"),
                       ("five", "not a number")):
        assert word in error_json(h2.post("/fibonacci", content=body)), body
    for body in ('{"value": ', "", "[1, 2"):
        msg = error_json(h2.post("/json", content=body))
        assert "parse" in msg or "json" in msg, msg
    for query in ("value=2&terms=10", "value=0.5&terms=-1", ""):
        error_json(h2.get("/calc?" + query))
    for query in ("n=-1", "n=abc", "n=1000000001"):
        error_json(h2.get("/work?" + query))
    assert is_h2(h2.get("/hello")).status_code == 200


def test_json_calc_and_work(h2):
    r = h2.post("/json", content='{"value": 5}', headers={"content-type": "application/json"})
    doc = r.json()
    assert doc["plus"] == 25 and doc["minus"] == -64 and doc["list"][:2] == [5, 10], doc
    assert doc["object"]["anotherList"][2:4] == ["somestr", False], doc
    common(r)
    doc = is_h2(h2.get("/calc?value=0.5&terms=1000")).json()
    assert abs(doc["result"] - 0.4054651081081644) < 1e-12, doc  # ln 1.5
    for n in (0, 1000, 123457):
        assert is_h2(h2.get(f"/work?n={n}")).json() == {"n": n, "result": work_result(n)}


# ---- offload, coroutines, AsyncReply ----

def test_full_worker_queue_is_503_and_the_connection_goes_on(rivet, tls_certs, mode):
    srv = start(rivet, tls_certs, base=("--threads", "1", "--workers", "1", "--queue", "1"))
    heavy = 1_000_000_000

    async def burst():
        async with async_client(srv, mode, tls_certs) as c:
            rs = await asyncio.gather(*(c.get(f"/work?n={heavy}") for _ in range(8)))
            after = await c.get("/work?n=1000")  # the same connection, once there is room
            return rs, after

    rs, after = run_async(burst())
    statuses = [is_h2(r).status_code for r in rs]
    assert set(statuses) <= {200, 503} and 503 in statuses, statuses
    assert 1 <= statuses.count(200) <= 2, statuses  # one running, at most one waiting
    for r in rs:
        if r.status_code == 503:
            assert r.headers["retry-after"] == "1" and b"Service Unavailable" in r.content
        else:
            assert r.json() == {"n": heavy, "result": work_result(heavy)}
    assert is_h2(after).json() == {"n": 1000, "result": work_result(1000)}


def test_a_stream_on_the_workers_holds_no_other_stream_of_its_connection(srv, mode, tls_certs):
    async def run():
        async with async_client(srv, mode, tls_certs) as c:
            slow = asyncio.ensure_future(c.get("/cpu?ms=1000&i=slow"))
            hellos = [await c.get("/hello") for _ in range(5)]
            hellos_done_first = not slow.done()
            return await slow, hellos, hellos_done_first

    slow, hellos, first = run_async(run())
    assert all(is_h2(r).content == b"Hello, World!" for r in hellos)
    assert is_h2(slow).json()["tag"] == "ms=1000&i=slow"
    assert first, "/hello waited for the stream whose handler burned 1 s on a worker"


def test_coroutines_and_async_reply(h2):
    r = h2.get("/wait?ms=50")
    assert r.status_code == 200 and r.json()["waited_ms"] >= 49 and r.json()["asked_ms"] == 50
    r = h2.get("/cpu?ms=20&i=7")
    assert r.status_code == 200 and r.json()["tag"] == "ms=20&i=7"
    assert is_h2(h2.get("/later?ms=30")).json() == {"later_ms": 30}
    assert is_h2(h2.get("/hello-task")).content == b"Hello, World!"
    for target in ("/wait?ms=abc", "/wait?ms=60001", "/cpu?ms=10001", "/later?ms=x"):
        assert is_h2(h2.get(target)).status_code == 400, target


def cancelled_total(h2c) -> int:
    m = re.search(r"^rivet_handlers_cancelled_total (\d+)$", h2c.get("/metrics").text, re.M)
    return int(m.group(1))


def test_a_reset_stream_cancels_its_waiting_handler(srv, mode, tls_certs):
    with client(srv, mode, tls_certs) as h2c:
        assert cancelled_total(h2c) == 0
        with RawH2(srv, mode, tls_certs) as c:
            sids = [c.open("GET", t) for t in ("/wait?ms=20000", "/cpu?ms=1000",
                                                  "/later?ms=20000")]
            # The PING is answered after the server read the requests before it: their
            # handlers are waiting now.
            c.ping_roundtrip()
            for sid in sids:
                c.reset(sid)
            deadline = time.monotonic() + 10 * SLOW
            while cancelled_total(h2c) < 3:
                assert time.monotonic() < deadline, cancelled_total(h2c)
                time.sleep(0.05)
            # The connection goes on.
            s = c.response(c.open("GET", "/hello"))
            assert s.status == 200 and bytes(s.body) == b"Hello, World!"
        assert cancelled_total(h2c) == 3


# ---- request bodies as streams: POST /upload ----

def test_streamed_body_in_pieces(h2):
    pieces = [bytes([i % 251]) * (i % 7 + 1) for i in range(3000)]
    body = b"".join(pieces)
    r = h2.post("/upload", content=iter(pieces))  # no length: DATA frames until END_STREAM
    assert r.status_code == 200, r
    assert r.json() == {"bytes": len(body), "crc32": f"{zlib.crc32(body):08x}"}
    blob = bytes(range(256)) * 16384  # 4 MiB: several stream windows
    r = h2.post("/upload", content=blob)
    assert is_h2(r).json() == {"bytes": len(blob), "crc32": f"{zlib.crc32(blob):08x}"}
    r = h2.post("/upload", content=b"")
    assert is_h2(r).json() == {"bytes": 0, "crc32": "00000000"}


def test_curl_upload(srv, mode, tls_certs, tmp_path):
    blob = bytes((i * 31) & 0xFF for i in range(3 << 20))
    (tmp_path / "up.bin").write_bytes(blob)
    p, version = curl(srv, mode, tls_certs, "/upload", "--data-binary", f"@{tmp_path / 'up.bin'}")
    assert p.returncode == 0 and version == "2", (p.stderr, version)
    assert json.loads(p.stdout) == {"bytes": len(blob), "crc32": f"{zlib.crc32(blob):08x}"}


# ---- response streams and Server-Sent Events ----

def events_of(text: str):
    found = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines()
                      if ": " in line and not line.startswith(":"))
        if "data" in fields:
            found.append((fields.get("id"), fields.get("event"), fields["data"]))
    return found


def test_events_until_the_stream_ends_and_last_event_id(h2):
    with h2.stream("GET", "/events?every=50&limit=3") as r:
        is_h2(r)
        assert r.headers["content-type"].startswith("text/event-stream")
        assert r.headers["cache-control"] == "no-cache"
        text = "".join(r.iter_text())
    assert [(e[0], e[1]) for e in events_of(text)] == [("1", "tick"), ("2", "tick"),
                                                       ("3", "tick")]
    with h2.stream("GET", "/events?every=20&limit=2", headers={"last-event-id": "41"}) as r:
        text = "".join(r.iter_text())
    assert [e[0] for e in events_of(text)] == ["42", "43"]


def test_curl_reads_events(srv, mode, tls_certs):
    p, version = curl(srv, mode, tls_certs, "/events?every=50&limit=3", "-N", "-i")
    assert p.returncode == 0 and version == "2", (p.stderr, version)
    head, _, body = p.stdout.decode().partition("\r\n\r\n")
    assert "content-type: text/event-stream" in head.lower()
    assert [e[0] for e in events_of(body)] == ["1", "2", "3"]


def test_waiting_stream(h2):
    r = is_h2(h2.get("/stream/waiting?parts=5&ms=40"))
    assert r.status_code == 200
    lines = r.text.splitlines()
    assert lines[:5] == [f"part {i}" for i in range(1, 6)]
    assert 2 <= int(lines[5].split()[1]) <= 13, lines


def open_event_streams(h2c) -> int:
    m = re.search(r"^rivet_event_streams_open (\d+)$", h2c.get("/metrics").text, re.M)
    return int(m.group(1))


def test_event_streams_share_a_connection_with_requests(srv, mode, tls_certs):
    async def run():
        async with async_client(srv, mode, tls_certs) as c:
            async def events(every):
                async with c.stream("GET", f"/events?every={every}&limit=4") as r:
                    return is_h2(r), "".join([t async for t in r.aiter_text()])
            streams = [asyncio.ensure_future(events(every)) for every in (30, 70)]
            hellos = [await c.get("/hello") for _ in range(10)]
            return hellos, await asyncio.gather(*streams)

    hellos, streams = run_async(run())
    assert all(is_h2(r).content == b"Hello, World!" for r in hellos)
    for _, text in streams:
        assert [e[0] for e in events_of(text)] == ["1", "2", "3", "4"]


def test_a_reset_event_stream_is_closed(srv, mode, tls_certs):
    with client(srv, mode, tls_certs) as h2c, RawH2(srv, mode, tls_certs) as c:
        sid = c.open("GET", "/events?every=20")
        s = c.streams[sid]
        assert c.wait(lambda: b"id: 2" in s.body, 30), "two events"
        assert s.headers["content-type"].startswith("text/event-stream")
        assert open_event_streams(h2c) == 1
        c.reset(sid)
        deadline = time.monotonic() + 10 * SLOW
        while open_event_streams(h2c) != 0:
            assert time.monotonic() < deadline, "the reset stream stays open"
            time.sleep(0.05)
        s = c.response(c.open("GET", "/hello"))
        assert s.status == 200


# ---- limits on a stream ----

def test_a_body_over_the_limit_is_413_on_its_stream_and_the_connection_goes_on(
        rivet, tls_certs, mode):
    srv = start(rivet, tls_certs, "--max-body", "65536")
    with RawH2(srv, mode, tls_certs) as c:
        # Declared too large: refused before any of it comes.
        sid = c.open("POST", "/echo", [("content-length", "100000")], end=False)
        assert c.response(sid).status == 413
        # Undeclared, and too large once it passes the limit.
        sid = c.open("POST", "/echo", end=False)
        c.send_body_while_open(sid, bytes(100_000))
        assert c.response(sid).status == 413
        # At the limit: echoed.
        body = bytes(range(256)) * 256
        sid = c.open("POST", "/echo", end=False)
        assert c.send_body_while_open(sid, body)
        s = c.response(sid)
        assert s.status == 200 and bytes(s.body) == body
        s = c.response(c.open("GET", "/hello"))
        assert s.status == 200 and bytes(s.body) == b"Hello, World!"
        assert c.goaway is None
