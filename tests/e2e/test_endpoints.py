"""The demo endpoints, each with its error cases, and the router's 404/405/OPTIONS/HEAD."""
import email.utils
import http.client
import json
import math
import re
import sys
import time
import urllib.parse

import pytest

from rivet_e2e import (HTTP_DATE_RE, PUBLIC, REPO, build_request, calc_result, fib, fib_mod,
                       work_result)

if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(0)  # F(100000) has 20,899 digits


def common(r, body=True):
    """Headers every response carries."""
    assert r.version == "HTTP/1.1"
    assert HTTP_DATE_RE.match(r.header("Date") or ""), r
    sent = email.utils.parsedate_to_datetime(r.header("Date")).timestamp()
    assert abs(sent - time.time()) < 5, f"Date {r.header('Date')} is not now"
    assert r.header("Server") == "rivet", r
    assert len(r.header_all("Date")) == 1 and len(r.header_all("Server")) == 1, r
    if body:
        assert r.header("Content-Length") == str(len(r.body)), r


def error_json(r, status=400):
    assert r.status == status, r
    assert r.header("Content-Type").startswith("application/json"), r
    doc = r.json()
    assert set(doc) == {"error"} and isinstance(doc["error"], str) and doc["error"], doc
    return doc["error"].lower()


# ---- /hello, /healthz, / ----

def test_hello(server):
    r = server.get("/hello")
    assert r.status == 200 and r.reason == "OK"
    assert r.body == b"Hello, World!"
    assert r.header("Content-Type") == "text/plain; charset=utf-8"
    common(r)
    assert not r.closes


def test_hello_with_http_client(server):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=10)
    conn.request("GET", "/hello")
    r = conn.getresponse()
    assert r.status == 200
    assert r.read() == b"Hello, World!"
    assert r.getheader("Content-Type") == "text/plain; charset=utf-8"
    conn.close()


def test_healthz(server):
    r = server.get("/healthz")
    assert r.status == 200 and r.body == b"ok"
    assert r.header("Content-Type").startswith("text/plain")
    common(r)


def test_index_page(server):
    r = server.get("/")
    assert r.status == 200
    assert r.header("Content-Type").startswith("text/html")
    assert r.body == (PUBLIC / "index.html").read_bytes()
    common(r)


def test_head_is_get_without_body(server):
    with server.connect() as c:
        for target in ("/hello", "/echo?a=1&b=2", "/", "/work?n=1000", "/fibonacci?number=30000"):
            get = c.request("GET", target)
            head = c.request("HEAD", target)
            assert get.status == head.status == 200, (target, get, head)
            assert head.body == b""
            for name in ("Content-Type", "Content-Length", "Server"):
                assert head.header(name) == get.header(name), (target, name, get, head)
        # No stray body bytes were sent after a HEAD: the connection is still in sync.
        assert c.request("GET", "/healthz").body == b"ok"
        assert c.nothing_within(0.2)


# ---- router ----

def test_unknown_path_404(server):
    for target in ("/nope", "/hello/", "/hello/x", "/HELLO", "/echo2"):
        r = server.get(target)
        assert r.status == 404, (target, r)
        common(r)


def test_wrong_method_405_with_allow(server):
    r = server.post("/hello", b"x")
    assert r.status == 405, r
    allow = {m.strip() for m in r.header("Allow").split(",")}
    assert {"GET", "HEAD"} <= allow and "POST" not in allow, allow
    r = server.request("DELETE", "/echo")
    assert r.status == 405, r
    allow = {m.strip() for m in r.header("Allow").split(",")}
    assert {"GET", "HEAD", "POST"} <= allow and "DELETE" not in allow, allow
    r = server.request("PUT", "/json", body=b"{}")
    assert r.status == 405 and {m.strip() for m in r.header("Allow").split(",")} >= {"POST"}
    r = server.request("GET", "/json")
    assert r.status == 405, r


def test_options_path(server):
    r = server.request("OPTIONS", "/hello")
    assert r.status == 204, r
    assert r.body == b""
    allow = {m.strip() for m in r.header("Allow").split(",")}
    assert {"GET", "HEAD", "OPTIONS"} <= allow and "POST" not in allow, allow
    assert r.header("Content-Length") in (None, "0")


def test_options_asterisk(server):
    r = server.request("OPTIONS", "*")
    assert r.status == 200, r
    allow = {m.strip() for m in r.header("Allow").split(",")}
    assert {"GET", "HEAD", "POST", "OPTIONS"} <= allow, allow


# ---- /echo ----

def test_echo_get_query(server):
    r = server.get("/echo?a=1&b=hello%20world&c=x+y&a=2&e=%C3%A9&flag&a=3")
    assert r.status == 200 and r.header("Content-Type").startswith("application/json"), r
    assert r.json() == {"a": ["1", "2", "3"], "b": "hello world", "c": "x y", "e": "\u00e9",
                        "flag": ""}
    common(r)


def test_echo_get_empty(server):
    assert server.get("/echo").json() == {}
    assert server.get("/echo?").json() == {}


def test_echo_get_special_characters(server):
    params = [("k&=", "v=&"), ("unicode", "\u65e5\u672c"), ("space key", " lead"), ("k", "%")]
    q = urllib.parse.urlencode(params)
    assert server.get("/echo?" + q).json() == dict(params)


def test_echo_get_invalid_utf8_is_not_a_server_error(server):
    # %FF decodes to a byte that is not UTF-8: whatever the answer, it is the client's fault.
    r = server.get("/echo?a=%FF")
    assert r.status < 500, r


def test_echo_post_binary(server):
    body = bytes(range(256)) * 64
    r = server.post("/echo", body, headers={"Content-Type": "image/png"})
    assert r.status == 200, r
    assert r.body == body
    assert r.header("Content-Type") == "image/png"
    common(r)


def test_echo_post_default_type_and_empty(server):
    r = server.post("/echo", b"abc")
    assert r.body == b"abc" and r.header("Content-Type") == "application/octet-stream", r
    r = server.post("/echo", b"", headers={"Content-Type": "text/plain; charset=utf-8"})
    assert r.status == 200 and r.body == b"", r
    assert r.header("Content-Length") == "0"


def test_echo_post_large(server):
    body = bytes((i * 7919) & 0xFF for i in range(1 << 20))
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    conn.request("POST", "/echo", body=body, headers={"Content-Type": "application/x-test"})
    r = conn.getresponse()
    assert r.status == 200
    assert r.read() == body
    assert r.getheader("Content-Type") == "application/x-test"
    conn.close()


# ---- /fibonacci ----

@pytest.mark.parametrize("n", [0, 1, 2, 93, 94, 1000, 20000, 20001, 100000])
def test_fibonacci_get(server, n):
    r = server.get(f"/fibonacci?number={n}")
    assert r.status == 200, r
    assert r.header("Content-Type").startswith("application/json")
    doc = r.json()
    assert doc["number"] == n
    assert isinstance(doc["fibonacci"], str)
    assert doc["fibonacci"] == str(fib(n))
    common(r)


def test_fibonacci_max(server):
    # F(1,000,000) has 208,988 digits: check its length, leading and trailing digits.
    r = server.get("/fibonacci?n=1000000", timeout=60)
    assert r.status == 200, r
    doc = r.json()
    assert doc["number"] == 1000000
    digits = doc["fibonacci"]
    assert digits.isdigit()
    phi = (1 + math.sqrt(5)) / 2
    log10 = 1000000 * math.log10(phi) - math.log10(math.sqrt(5))
    assert len(digits) == int(log10) + 1 == 208988
    assert abs(int(digits[:8]) - 10 ** (log10 - int(log10) + 7)) < 2
    assert int(digits[-18:]) == fib_mod(1000000, 10 ** 18)


def test_fibonacci_n_alias(server):
    assert server.get("/fibonacci?n=10").json() == {"number": 10, "fibonacci": "55"}


@pytest.mark.parametrize("body,ctype", [
    ('{"number": 50}', "application/json"),
    ('{"number": "50"}', "application/json"),
    ('  {"number": 50}  ', None),
    ("number=50", "application/x-www-form-urlencoded"),
    ("50", "text/plain"),
    ("50\n", None),
])
def test_fibonacci_post(server, body, ctype):
    headers = {"Content-Type": ctype} if ctype else None
    r = server.post("/fibonacci", body, headers=headers)
    assert r.status == 200, r
    assert r.json() == {"number": 50, "fibonacci": str(fib(50))}


def test_fibonacci_post_offloaded(server):
    r = server.post("/fibonacci", '{"number": 30000}', headers={"Content-Type": "application/json"})
    assert r.status == 200, r
    assert r.json() == {"number": 30000, "fibonacci": str(fib(30000))}


@pytest.mark.parametrize("query,word", [
    ("number=-1", "negative"),
    ("number=-100000", "negative"),
    ("number=1.5", "integer"),
    ("number=1e3", "integer"),
    ("number=abc", "not a number"),
    ("number=", "empty"),
    ("", "missing"),
    ("other=5", "missing"),
    ("number=1000001", "at most"),
    ("number=99999999999999999999999999", "at most"),
])
def test_fibonacci_get_errors(server, query, word):
    msg = error_json(server.get("/fibonacci?" + query))
    assert word in msg, msg


@pytest.mark.parametrize("body,word", [
    ('{"number": -5}', "negative"),
    ('{"number": 2.5}', "integer"),
    ('{"number": 1e3}', "integer"),
    ('{"number": "abc"}', "a number"),
    ('{"number": true}', "a number"),
    ('{"number": 1000001}', "at most"),
    ('{}', "missing"),
    ('{"number": }', "json"),
    ('{"number": 5', "json"),
    ("", "missing"),
    ("number=-3", "negative"),
    ("x=3", "missing"),
    ("-7", "negative"),
    ("1.5", "integer"),
    ("five", "not a number"),
])
def test_fibonacci_post_errors(server, body, word):
    msg = error_json(server.post("/fibonacci", body))
    assert word in msg, msg


# ---- /json ----

def json_expected(v):
    return {"plus": v + 20, "minus": v - 69, "plus_float": v + 3.14,
            "list": [v, 2 * v, v * 3.14],
            "object": {"item1": v, "item2": True, "item3": v - 3.14,
                       "anotherList": [v - 1, v - 2.5, "somestr", False, v]}}


def approx_equal(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
            not isinstance(a, bool) and math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and \
            all(approx_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and \
            all(approx_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("value", [5, 0, -7, 123456])
def test_json(server, value):
    r = server.post("/json", json.dumps({"value": value}),
                    headers={"Content-Type": "application/json"})
    assert r.status == 200, r
    assert r.header("Content-Type").startswith("application/json")
    doc = r.json()
    assert approx_equal(doc, json_expected(value)), doc
    # Integers stay integers.
    assert isinstance(doc["plus"], int) and isinstance(doc["object"]["item1"], int)


def test_json_missing_value_is_zero(server):
    doc = server.post("/json", '{"other": 1}').json()
    assert approx_equal(doc, json_expected(0)), doc


@pytest.mark.parametrize("body", ['{"value": ', "{value: 1}", "", "[1, 2", '{"value": 1}}'])
def test_json_malformed(server, body):
    msg = error_json(server.post("/json", body))
    assert "parse" in msg or "json" in msg, msg


def test_json_malformed_with_non_utf8_bytes(server):
    # The parser's message quotes the bytes it choked on; they are not UTF-8.
    r = server.post("/json", b'{"value": "\xff\xfe"}')
    error_json(r)


@pytest.mark.parametrize("body", ['{"value": 1.5}', '{"value": "5"}', '{"value": true}',
                                  '{"value": null}', '{"value": [1]}'])
def test_json_non_integer_value(server, body):
    msg = error_json(server.post("/json", body))
    assert "integer" in msg, msg


# ---- /calc ----

@pytest.mark.parametrize("x,terms", [(0.5, 1000), (1, 100), (-0.5, 200), (0, 10), (0.9, 1)])
def test_calc(server, x, terms):
    r = server.get(f"/calc?value={x}&terms={terms}")
    assert r.status == 200, r
    doc = r.json()
    assert doc["value"] == x and doc["terms"] == terms
    assert math.isclose(doc["result"], calc_result(x, terms), rel_tol=1e-12, abs_tol=1e-15), doc


def test_calc_converges_to_log(server):
    doc = server.get("/calc?value=0.5&terms=200").json()
    assert math.isclose(doc["result"], math.log(1.5), rel_tol=1e-12)


def test_calc_zero_terms(server):
    doc = server.get("/calc?value=0.5&terms=0").json()
    assert doc["result"] == 0 and doc["terms"] == 0


@pytest.mark.parametrize("query", [
    "", "terms=10", "value=", "value=abc", "value=-1&terms=10", "value=-1.5&terms=10",
    "value=1.0001&terms=10", "value=2&terms=10", "value=inf&terms=10", "value=nan&terms=10",
    "value=0.5&terms=-1", "value=0.5&terms=1.5", "value=0.5&terms=abc",
    "value=0.5&terms=50000001",
])
def test_calc_errors(server, query):
    error_json(server.get("/calc?" + query))


# ---- /work ----

@pytest.mark.parametrize("n", [0, 1, 1000, 123457])
def test_work(server, n):
    r = server.get(f"/work?n={n}")
    assert r.status == 200, r
    assert r.json() == {"n": n, "result": work_result(n)}


def test_work_default(server):
    assert server.get("/work").json() == {"n": 5000000, "result": work_result(5000000)}


@pytest.mark.parametrize("query", ["n=-1", "n=abc", "n=1000000001", "n=1.5", "n="])
def test_work_errors(server, query):
    error_json(server.get("/work?" + query))


# ---- /headers, /cookies ----

def test_headers(server):
    with server.connect() as c:
        c.send(b"GET /headers HTTP/1.1\r\nHost: example.test\r\nX-One:   spaced value  \r\n"
               b"x-lower: a:b:c\r\nX-Empty:\r\nUser-Agent: e2e/1.0\r\n\r\n")
        r = c.read_response()
    assert r.status == 200 and r.header("Content-Type").startswith("text/plain"), r
    assert r.text.splitlines() == ["Host: example.test", "X-One: spaced value", "x-lower: a:b:c",
                                   "X-Empty: ", "User-Agent: e2e/1.0"] or \
        r.text.splitlines() == ["Host: example.test", "X-One: spaced value", "x-lower: a:b:c",
                                "X-Empty:", "User-Agent: e2e/1.0"]


def test_cookies(server):
    with server.connect() as c:
        c.send(b"GET /cookies HTTP/1.1\r\nHost: x\r\nCookie: a=1; b=two\r\n"
               b"X-Other: z=9\r\nCookie: c=3\r\n\r\n")
        r = c.read_response()
    assert r.status == 200, r
    assert r.text.splitlines() == ["a=1", "b=two", "c=3"]


def test_cookies_none(server):
    r = server.get("/cookies")
    assert r.status == 200 and r.body.strip() == b""


def test_request_builder_sanity():
    # The helper the other tests lean on frames requests as expected.
    assert build_request("POST", "/x", body=b"ab") == (
        b"POST /x HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\nab")


# ---- the demo page and the README list every endpoint ----

def demo_routes(server) -> set:
    """(method, path) of every route of the demo server: /metrics has a series for each from the
    start. Patterns (the static files' "/*path") are left out."""
    r = server.get("/metrics")
    assert r.status == 200, r
    found = re.findall(r'^rivet_http_requests_total\{method="([A-Z]+)",route="(/[^"*:]*)"',
                       r.text, re.M)
    return set(found)


def test_the_demo_page_and_the_readme_list_every_endpoint(server):
    """A route added to the demo server must be added to public/index.html and to README.md's
    endpoint table (issue 26, item 20: /wait, /cpu, /metrics ... were missing from the page)."""
    routes = demo_routes(server)
    assert {("GET", "/hello"), ("POST", "/upload"), ("GET", "/metrics")} <= routes, routes
    page = (PUBLIC / "index.html").read_text()
    readme = (REPO / "README.md").read_text()
    table = "\n".join(line for line in readme.splitlines() if line.startswith("| `"))
    for method, path in sorted(routes):
        named = re.compile(rf"{method} {re.escape(path)}(?![\w/.-])")
        assert named.search(page), f"public/index.html does not list {method} {path}"
        assert named.search(table), f"README.md's endpoint table does not list {method} {path}"
