"""Sessions kept in Redis (redis_session_store), through examples/login.cpp --redis: two instances
naming one redis-server (started by the test, on a free port) share sessions: a login on one is
seen on the other with the same cookie, a logout on either ends it on both, a tampered cookie is
no session, the key carries the idle timeout as its TTL; Redis stopped mid-run gives 503 with a
clear message and a metric, no crash, and sessions again when it returns. Cookieless visitors
store nothing (lazy creation), in Redis as in memory."""
import re

import pytest
import requests

from ops_e2e import wait_for
from redis_server import available
from test_sessions import COOKIE, LOGIN, TIMEOUT, form_token, sign_in, whoami

pytestmark = pytest.mark.skipif(not available(), reason="needs redis-server")

SECRET = "s" * 48
IDLE = 600


@pytest.fixture
def instances(rivet, redis, monkeypatch):  # redis: conftest.py
    monkeypatch.setenv("RIVET_SESSION_SECRET", SECRET)  # the same key on every instance

    def start(n=2, *flags):
        servers = []
        for _ in range(n):
            srv = rivet(command=[LOGIN, 0, f"--redis=127.0.0.1:{redis.port}", f"--idle={IDLE}",
                                 "--metrics", *flags], root=None)
            srv.url = f"http://{srv.host}:{srv.port}"
            servers.append(srv)
        return servers
    return start


def session_keys(redis):
    return redis.cli("KEYS", "rivet:session:*")


def metric(srv, name):
    m = re.search(rf"^{name} (\d+)$", requests.get(srv.url + "/metrics", timeout=TIMEOUT).text,
                  re.M)
    return int(m.group(1)) if m else None


def test_login_on_one_instance_is_seen_on_the_other_and_logout_ends_it_on_both(instances, redis):
    one, two = instances()
    http = requests.Session()
    r = sign_in(http, one.url)
    assert r.status_code == 200 and "Signed in as ada" in r.text, r.text
    cookie = http.cookies[COOKIE]
    assert whoami(two.url, cookie)["user"] == "ada"
    # One key, with the idle timeout as its TTL (set again by every request that sees it).
    keys = session_keys(redis)
    assert len(keys) == 1, keys
    ttl = redis.cli("TTL", keys[0])
    assert IDLE - 60 <= ttl <= IDLE, ttl
    # Writing on two is read on one.
    token = requests.get(two.url + "/csrf", headers={"Cookie": f"{COOKIE}={cookie}"},
                         timeout=TIMEOUT).json()["token"]
    r = requests.post(two.url + "/note", data="from two", timeout=TIMEOUT,
                      headers={"Cookie": f"{COOKIE}={cookie}", "X-CSRF-Token": token})
    assert r.status_code == 204, r.text
    assert whoami(one.url, cookie)["note"] == "from two"
    # Logout on two: the key is gone, and one no longer knows the cookie either.
    r = requests.post(two.url + "/logout", data={"_csrf": token}, allow_redirects=False,
                      headers={"Cookie": f"{COOKIE}={cookie}"}, timeout=TIMEOUT)
    assert r.status_code == 303, r.text
    assert session_keys(redis) == []
    assert whoami(one.url, cookie) == {"user": None, "note": "", "new_session": True}
    assert whoami(two.url, cookie)["user"] is None


def test_login_rotates_the_id_in_redis(instances, redis):
    one, two = instances()
    http = requests.Session()
    http.get(one.url + "/", timeout=TIMEOUT)  # the form: its CSRF token in the cookie, not stored
    planted = http.cookies[COOKIE]
    assert session_keys(redis) == []
    assert sign_in(http, two.url).status_code == 200
    [first] = session_keys(redis)
    assert sign_in(http, one.url).status_code == 200  # signed in again: a new id
    [after] = session_keys(redis)  # the new key written, the old one deleted
    assert after != first
    assert whoami(one.url, planted)["user"] is None
    assert whoami(one.url, http.cookies[COOKIE])["user"] == "ada"


def test_tampered_cookie_is_no_session(instances, redis):
    one, two = instances()
    http = requests.Session()
    sign_in(http, one.url)
    good = http.cookies[COOKIE]
    value, _, signature = good.rpartition(".")
    flipped = signature[:-1] + ("A" if signature[-1] != "A" else "B")
    for bad in (f"{value}.{flipped}", "x" + good, value, ""):
        assert whoami(two.url, bad) == {"user": None, "note": "", "new_session": True}, bad
    assert whoami(two.url, good)["user"] == "ada"


def test_cookieless_visitors_store_nothing(instances, redis):
    one, two = instances()
    # 10,000 requests without a cookie jar to a route that only reads the session, and 1,000
    # to the login form, whose CSRF token travels in the cookie.
    with requests.Session() as http:
        for i in range(10_000):
            r = http.get((one if i % 2 else two).url + "/whoami", timeout=TIMEOUT)
            assert r.status_code == 200 and "Set-Cookie" not in r.headers, r.headers
            http.cookies.clear()
        for i in range(1_000):
            r = http.get((one if i % 2 else two).url + "/", timeout=TIMEOUT)
            assert r.status_code == 200 and COOKIE in http.cookies, r.headers
            http.cookies.clear()
    assert session_keys(redis) == []
    assert redis.cli("DBSIZE") == 0


def test_redis_stopped_mid_run_answers_503_then_recovers(instances, redis):
    one, two = instances()
    http = requests.Session()
    sign_in(http, one.url)
    cookie = http.cookies[COOKIE]
    headers = {"Cookie": f"{COOKIE}={cookie}"}
    redis.stop()
    for srv in (one, two):
        r = requests.get(srv.url + "/whoami", headers=headers, timeout=TIMEOUT)
        assert r.status_code == 503, r.text
        assert "session store cannot be reached" in r.text, r.text
        assert r.headers.get("Retry-After") == "1"
        assert metric(srv, "rivet_session_store_unavailable_total") >= 1
        # A visitor without a cookie needs no store: still served.
        assert requests.get(srv.url + "/whoami", timeout=TIMEOUT).status_code == 200
    redis.start()  # empty again: the session is gone, but the instances answer

    # Each I/O loop has its own Redis connection, and one whose last try failed fails at once
    # for retry_ms (1 s) before it tries again: twenty answers in a row on fresh connections
    # (spread over the loops by the kernel) say that every loop reaches Redis again.
    def served():
        return all(requests.get(s.url + "/whoami", headers=headers, timeout=TIMEOUT).status_code
                   == 200 for s in (one, two) for _ in range(20))
    wait_for(served, 60, "both instances to reach Redis again")
    # A new login works and is shared again.
    http = requests.Session()
    assert sign_in(http, two.url).status_code == 200
    assert whoami(one.url, http.cookies[COOKIE])["user"] == "ada"
    for srv in (one, two):
        assert srv.proc.poll() is None


def test_frozen_redis_answers_503_after_the_command_timeout(instances, redis):
    """A Redis that keeps the connection and answers nothing (SIGSTOP): a visitor with a session
    gets 503 once the command timeout (2 s) passes, not a request held for ever."""
    [one] = instances(1)
    http = requests.Session()
    sign_in(http, one.url)
    headers = {"Cookie": f"{COOKIE}={http.cookies[COOKIE]}"}
    with redis.frozen():
        r = requests.get(one.url + "/whoami", headers=headers, timeout=TIMEOUT)
        assert r.status_code == 503 and "session store cannot be reached" in r.text, r.text
    wait_for(lambda: requests.get(one.url + "/whoami", headers=headers,
                                  timeout=TIMEOUT).json().get("user") == "ada",
             60, "the session to be served again")


def test_a_websocket_handshake_behind_the_waiting_session_middleware(instances, redis):
    """The handshake waits for Redis like any request, then upgrades: the session is read in
    on_upgrade (a visitor not signed in is refused with 401), and the socket works; an
    offloaded handler behind the same middleware sees the session."""
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect
    [one] = instances(1)
    http = requests.Session()
    sign_in(http, one.url)
    ws_url = f"ws://{one.host}:{one.port}/ws/hello"
    with connect(ws_url, additional_headers={"Cookie": f"{COOKIE}={http.cookies[COOKIE]}"},
                 open_timeout=TIMEOUT) as ws:
        assert ws.recv(timeout=TIMEOUT) == "hello ada"
    with pytest.raises(InvalidStatus) as refused:
        connect(ws_url, open_timeout=TIMEOUT)
    assert refused.value.response.status_code == 401
    # The loop still serves plain requests after both, and an offloaded handler (on the
    # worker pool, behind the same waiting middleware) sees the session too.
    assert whoami(one.url, http.cookies[COOKIE])["user"] == "ada"
    r = requests.get(one.url + "/whoami-offloaded", timeout=TIMEOUT,
                     headers={"Cookie": f"{COOKIE}={http.cookies[COOKIE]}"})
    assert r.status_code == 200 and r.json()["user"] == "ada", r.text


def test_a_streamed_body_behind_the_waiting_session_middleware(instances, redis):
    """A .stream_body() route behind the session kept in Redis: the body is read after the
    session is loaded (chunked, in pieces, 3 MB), and what the handler writes is saved."""
    [one] = instances(1)
    http = requests.Session()
    sign_in(http, one.url)
    token = http.get(one.url + "/csrf", timeout=TIMEOUT).json()["token"]
    note = "n" * (3 << 20)
    r = http.post(one.url + "/note-stream", data=(note[i:i + 65536].encode()
                                                 for i in range(0, len(note), 65536)),
                  headers={"X-CSRF-Token": token}, timeout=TIMEOUT)
    assert r.status_code == 204, r.text
    assert whoami(one.url, http.cookies[COOKIE])["note"] == note
    # Without the token: refused before the body is read, and the note stays.
    r = http.post(one.url + "/note-stream", data=b"other", timeout=TIMEOUT)
    assert r.status_code == 403, r.text
    assert whoami(one.url, http.cookies[COOKIE])["note"] == note


def test_memory_store_cookieless_visitors_store_nothing(rivet):
    """The same in memory: with room for 3 sessions, 10,000 cookieless reads and 1,000 form
    pages (each with a CSRF token) evict none."""
    srv = rivet(command=[LOGIN, 0, "--max-sessions=3"], root=None)
    url = f"http://{srv.host}:{srv.port}"
    signed_in = []
    for _ in range(3):
        http = requests.Session()
        assert sign_in(http, url).status_code == 200
        signed_in.append(http.cookies[COOKIE])
    with requests.Session() as http:
        for _ in range(10_000):
            r = http.get(url + "/whoami", timeout=TIMEOUT)
            assert r.status_code == 200 and "Set-Cookie" not in r.headers
            http.cookies.clear()
        for _ in range(1_000):
            r = http.get(url + "/", timeout=TIMEOUT)
            assert r.status_code == 200 and COOKIE in http.cookies, r.headers
            http.cookies.clear()
    for cookie in signed_in:
        assert whoami(url, cookie)["user"] == "ada"
