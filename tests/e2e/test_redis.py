"""rivet::Redis (include/rivet/redis.hpp, src/redis/) against a real redis-server, through the
routes of tests/redis/redis_test_server.cpp: GET/SET/INCR/EVAL and error replies, a client that
leaves in the middle of a command (the connection stays in step), and Redis restarted (503 while
it is down, served again after)."""
import json
import socket
import threading

import pytest

from ops_e2e import wait_for
from redis_server import RedisServer, available
from rivet_e2e import BIN

SERVER = BIN.parent / "redis_test_server"

pytestmark = pytest.mark.skipif(not (available() and SERVER.exists()),
                                reason="needs redis-server and build/redis_test_server")


@pytest.fixture
def start_server(rivet, redis):  # redis: conftest.py
    def start(threads=2, command_timeout_ms=2000):
        return rivet(command=[SERVER, 0, redis.port, threads, command_timeout_ms], root=None)
    return start


def call(srv, method, target, body=None):
    """(status, the body as JSON, or as text when it is not JSON)."""
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
    r = srv.request(method, target, body=body.encode() if isinstance(body, str) else body,
                    timeout=30)
    try:
        return r.status, json.loads(r.body) if r.body else None
    except ValueError:
        return r.status, r.body.decode()


def test_commands_and_replies(start_server, redis):
    srv = start_server()
    assert call(srv, "GET", "/get/absent") == (404, "nil")
    assert call(srv, "PUT", "/set/greeting", "hello\r\nworld") == (200, "OK")
    assert redis.cli("GET", "greeting") == "hello\r\nworld"  # binary-safe, really in Redis
    assert call(srv, "GET", "/get/greeting") == (200, "hello\r\nworld")
    assert [call(srv, "POST", "/incr/counter")[1] for _ in range(3)] == [1, 2, 3]
    # INCR of a string: Redis's error reply is a value the handler sees, not an exception.
    status, text = call(srv, "POST", "/incr/greeting")
    assert status == 409 and text.startswith("ERR"), text
    status, out = call(srv, "POST", "/eval", {
        "script": "redis.call('SET', KEYS[1], ARGV[1]); return {KEYS[1], tonumber(ARGV[2]), "
                  "redis.call('GET', KEYS[1]), false}",
        "keys": ["k1"], "args": ["v1", "42"]})
    assert status == 200 and out["reply"] == ["k1", 42, "v1", None], out
    status, out = call(srv, "POST", "/command", ["NOSUCHCOMMAND", "x"])
    assert status == 200 and out["reply"]["error"].startswith("ERR unknown command"), out
    status, out = call(srv, "POST", "/command", ["PING"])
    assert out["reply"] == "PONG"


def test_many_concurrent_commands_keep_their_own_replies(start_server):
    """Commands of many requests share each loop's pipelined connection: every reply must come
    back to the request that sent the command."""
    srv = start_server(threads=2)
    errors = []

    def worker(n):
        try:
            for i in range(20):
                key = f"own-{n}-{i}"
                assert call(srv, "PUT", f"/set/{key}", key)[0] == 200
                assert call(srv, "GET", f"/get/{key}") == (200, key)
        except AssertionError as e:
            errors.append(str(e))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]


def test_client_leaving_mid_command_keeps_the_connection_in_step(start_server, redis):
    # One loop: one connection, which the next requests share; a command timeout well past the
    # BLPOP's 2 s.
    srv = start_server(threads=1, command_timeout_ms=30_000)
    assert call(srv, "PUT", "/set/after", "still-mine")[0] == 200
    # A request waits in BLPOP (up to 2 s); its client leaves after the command is out.
    s = socket.create_connection((srv.host, srv.port))
    s.sendall(b"GET /wait/nothing-here/2 HTTP/1.1\r\nHost: x\r\n\r\n")
    wait_for(lambda: any("blpop" in c for c in redis.cli("CLIENT", "LIST").split("\n")), 30,
             "the BLPOP to reach redis")
    s.close()
    # The next commands queue behind the BLPOP on the same connection; each must get its own
    # reply, not the abandoned BLPOP's nil.
    assert call(srv, "GET", "/get/after") == (200, "still-mine")
    assert call(srv, "POST", "/incr/after-count") == (200, 1)
    assert call(srv, "GET", "/get/after") == (200, "still-mine")


def test_redis_restart_503_then_recovers(start_server, redis):
    srv = start_server(threads=1)
    assert call(srv, "POST", "/incr/r") == (200, 1)
    redis.stop()
    status, text = call(srv, "POST", "/incr/r")
    assert status == 503 and "redis" in text, (status, text)
    # While it is down, every command answers (503) rather than hanging.
    for _ in range(5):
        assert call(srv, "GET", "/get/r")[0] == 503
    redis.start()  # empty again: persistence is off
    wait_for(lambda: call(srv, "POST", "/incr/r")[0] == 200, 60, "commands to succeed again")
    assert call(srv, "GET", "/get/r")[0] == 200
    assert srv.proc.poll() is None


def test_frozen_redis_503_after_the_command_timeout_then_recovers(start_server, redis):
    """A Redis that keeps the connection and answers nothing (SIGSTOP): the command fails after
    command_timeout_ms (2 s) instead of waiting for ever, the next ones fail at once for
    retry_ms, and commands succeed again once Redis answers."""
    srv = start_server(threads=1)
    assert call(srv, "POST", "/incr/f") == (200, 1)
    with redis.frozen():
        status, text = call(srv, "POST", "/incr/f")
        assert status == 503 and "no reply within 2000 ms" in text, (status, text)
        assert call(srv, "GET", "/get/f")[0] == 503
    # The increment sent while frozen may have run once Redis woke (it was written): 2 or 3.
    wait_for(lambda: call(srv, "POST", "/incr/f")[0] == 200, 60, "commands to succeed again")
    status, value = call(srv, "GET", "/get/f")
    assert status == 200 and value in ("2", "3", 2, 3), (status, value)
    assert srv.proc.poll() is None


def test_a_redis_with_a_password(rivet):
    """RedisOptions::password: AUTH before the first command; a wrong one is refused by Redis
    and every command answers 503 quoting it, rather than running unauthenticated."""
    secured = RedisServer(password="s3cret").start()
    try:
        good = rivet(command=[SERVER, 0, secured.port, 1], root=None,
                     env={"REDIS_PASSWORD": "s3cret"})
        assert call(good, "POST", "/incr/p") == (200, 1)
        assert secured.cli("GET", "p") == "1"
        wrong = rivet(command=[SERVER, 0, secured.port, 1], root=None,
                      env={"REDIS_PASSWORD": "wrong"})
        status, text = call(wrong, "POST", "/incr/p")
        assert status == 503 and "WRONGPASS" in text, (status, text)
        none = rivet(command=[SERVER, 0, secured.port, 1], root=None,
                     env={"REDIS_PASSWORD": None})
        status, reply = call(none, "POST", "/incr/p")  # Redis's own error reply: NOAUTH
        assert "NOAUTH" in str(reply), (status, reply)
        assert secured.cli("GET", "p") == "1"
    finally:
        secured.destroy()
