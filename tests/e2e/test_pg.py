"""rivet::pg (include/rivet/pg.hpp, lib/pg/) against a real PostgreSQL 15, through the routes
of tests/pg/pg_test_server.cpp: CRUD with typed rows and errors, prepared statements,
transactions, pipeline mode, LISTEN/NOTIFY, the cancel of a query whose client left, a restart
of PostgreSQL under load, and the bound of the wait queue."""
import http.client
import json
import os
import socket
import threading
import time

import pytest

from pg_cluster import PgCluster, available
from rivet_e2e import BIN, SLOW

SERVER = BIN.parent / "pg_test_server"

pytestmark = pytest.mark.skipif(not (available() and SERVER.exists()),
                                reason="needs PostgreSQL 15 and build/pg_test_server (libpq)")


@pytest.fixture(scope="module")
def cluster():
    c = PgCluster()
    try:
        c.start()
        c.sql("create table notes (id bigserial primary key, title text unique not null, "
              "body text)")
        yield c
    finally:
        c.destroy()


@pytest.fixture
def start_server(rivet, cluster):
    def start(max_connections=4, max_waiters=64, threads=2, statement_timeout_ms=0):
        return rivet(command=[SERVER, 0, cluster.conninfo, max_connections, max_waiters, threads,
                              statement_timeout_ms], root=None)
    return start


def call(srv, method, target, body=None, timeout=30):
    c = http.client.HTTPConnection(srv.host, srv.port, timeout=timeout * SLOW)
    try:
        data = json.dumps(body) if isinstance(body, (dict, list)) else body
        c.request(method, target, body=data)
        r = c.getresponse()
        raw = r.read()
        try:
            payload = json.loads(raw) if raw else None
        except ValueError:
            payload = raw.decode()
        return r.status, payload, dict(r.getheaders())
    finally:
        c.close()


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout * SLOW
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_crud_typed_rows_and_errors(start_server, cluster):
    srv = start_server()
    status, note, _ = call(srv, "POST", "/notes", {"title": "crud-1", "body": "first"})
    assert status == 201 and note["title"] == "crud-1" and note["body"] == "first", note
    status, again, _ = call(srv, "POST", "/notes", {"title": "crud-1"})
    assert status == 409, again  # pg::UniqueViolation -> 409 in the handler
    status, got, _ = call(srv, "GET", f"/notes/{note['id']}")  # a prepared statement
    assert status == 200 and got == note, got
    status, _, _ = call(srv, "PUT", f"/notes/{note['id']}", {"body": "second"})
    assert status == 200
    assert call(srv, "GET", f"/notes/{note['id']}")[1]["body"] == "second"
    status, null_body, _ = call(srv, "POST", "/notes", {"title": "crud-null", "body": None})
    assert status == 201 and null_body["body"] is None, null_body  # NULL both ways
    assert call(srv, "DELETE", f"/notes/{note['id']}")[0] == 204
    assert call(srv, "GET", f"/notes/{note['id']}")[0] == 404
    assert call(srv, "DELETE", f"/notes/{note['id']}")[0] == 404
    status, types, _ = call(srv, "GET", "/types")
    assert status == 200 and types == {"big": 9007199254740993, "txt": "héllo",
                                       "nothing_is_null": True, "nothing_opt": False,
                                       "yes": True, "half": 0.5, "columns": 5}, types
    status, err, _ = call(srv, "GET", "/sqlstate?sql=select+nosuchcolumn")
    assert err["sqlstate"] == "42703", err
    status, err, _ = call(srv, "GET", "/sqlstate?sql=select+1/0")
    assert err["sqlstate"] == "22012", err
    # A connection that failed a statement is reused cleanly.
    assert call(srv, "GET", "/count")[0] == 200


def stats(srv):
    return call(srv, "GET", "/stats")[1]


def parallel(n, fn):
    """Runs fn(i) on n threads at once; their results in order."""
    results = [None] * n
    barrier = threading.Barrier(n)

    def run(i):
        barrier.wait()
        try:
            results[i] = fn(i)
        except Exception as e:  # noqa: BLE001 - reported by the caller's assertions
            results[i] = e
    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120 * SLOW)
    return results


def test_the_wait_queue_is_bounded_past_it_503_with_retry_after(start_server):
    # 2 connections, 2 waiters, one loop: of 8 queries at once, 4 are refused at once.
    srv = start_server(max_connections=2, max_waiters=2, threads=1)
    results = parallel(8, lambda i: call(srv, "GET", "/sleep?s=2"))
    statuses = sorted(r[0] for r in results)
    assert set(statuses) <= {200, 503}, results
    assert statuses.count(503) >= 1 and statuses.count(200) >= 2, statuses
    for status, body, headers in results:
        if status == 503:
            assert headers.get("Retry-After") == "1", headers
    s = stats(srv)
    assert s["open"] <= 2 and s["waiting"] == 0, s
    assert call(srv, "GET", "/count")[0] == 200


def test_a_queued_query_whose_client_leaves_gives_its_place_back(start_server, cluster):
    srv = start_server(max_connections=1, max_waiters=4, threads=1)
    # The holder's query runs until the holder leaves, not for a time a loaded machine could
    # outlast before the queued query is seen waiting (a 1 s sleep once could).
    holder = socket.create_connection((srv.host, srv.port), timeout=10 * SLOW)
    holder.sendall(b"GET /sleep?s=60 HTTP/1.1\r\nHost: pg\r\n\r\n")
    wait_for(lambda: sleeping_backends(cluster), 20, "the one connection to be busy")
    queued = socket.create_connection((srv.host, srv.port), timeout=10 * SLOW)
    queued.sendall(b"GET /count HTTP/1.1\r\nHost: pg\r\n\r\n")
    wait_for(lambda: stats(srv)["waiting"] == 1, 20, "a query in the queue")
    queued.close()  # cancelled while it waits: out of the queue
    wait_for(lambda: stats(srv)["waiting"] == 0, 20, "the queue to empty")
    holder.close()  # its query is cancelled too (test_a_client_that_leaves_cancels_its_query)
    wait_for(lambda: not sleeping_backends(cluster), 20, "the holder's query to be cancelled")
    wait_for(lambda: stats(srv)["cleaning"] == 0, 20, "the cleaning to end")
    # The slot it waited for went on: the one connection serves the next query.
    assert call(srv, "GET", "/count")[0] == 200
    s = stats(srv)
    assert s["open"] == 1 and s["idle"] == 1, s


def sleeping_backends(cluster):
    return cluster.sql("select pid from pg_stat_activity where state = 'active' and "
                       "query like '%rivet-pg-sleep%' and pid <> pg_backend_pid()")


def test_a_client_that_leaves_cancels_its_query(start_server, cluster):
    srv = start_server(threads=1)
    sock = socket.create_connection((srv.host, srv.port), timeout=10 * SLOW)
    sock.sendall(b"GET /sleep?s=60 HTTP/1.1\r\nHost: pg\r\n\r\n")
    pid = wait_for(lambda: sleeping_backends(cluster), 20, "pg_sleep to run")
    started = time.monotonic()
    sock.close()  # the client leaves: the handler is cancelled, so is the statement
    wait_for(lambda: not sleeping_backends(cluster), 20, "pg_sleep to be cancelled")
    assert time.monotonic() - started < 30  # well before its 60 s
    # Its connection was cleaned and kept (not closed): the same backend, idle, reused.
    wait_for(lambda: stats(srv)["cleaning"] == 0, 10, "the cleaning to end")
    assert cluster.sql(f"select state from pg_stat_activity where pid = {pid}") == "idle"
    assert stats(srv)["open"] == 1
    assert call(srv, "GET", "/count")[0] == 200


def test_with_timeout_around_a_query_cancels_it(start_server, cluster):
    srv = start_server(max_connections=1, threads=1)
    status, _, _ = call(srv, "GET", "/sleep-deadline")
    assert status == 504
    wait_for(lambda: not sleeping_backends(cluster), 20, "pg_sleep to be cancelled")
    wait_for(lambda: stats(srv)["idle"] == 1, 20, "the connection to be clean and idle")
    assert call(srv, "GET", "/count")[0] == 200


def test_statement_timeout(start_server):
    # The limit holds every statement, /count's too: 2 s, so that a loaded machine (CI's e2e
    # beside a CPU-bound test) cannot push a plain count past it, as 300 ms once did.
    srv = start_server(statement_timeout_ms=2000)
    status, err, _ = call(srv, "GET", "/sqlstate?sql=select+pg_sleep(30)")
    assert status == 200 and err["sqlstate"] == "57014", err  # query_canceled
    assert call(srv, "GET", "/count")[0] == 200


def titles(cluster, *names):
    quoted = ",".join(f"'{n}'" for n in names)
    return cluster.sql(f"select count(*) from notes where title in ({quoted})")


def test_transactions_commit_rollback_and_dropped(start_server, cluster):
    srv = start_server(max_connections=1, threads=1)  # one connection: each reuses it
    status, body, _ = call(srv, "POST", "/pair?mode=commit", {"a": "tx-c1", "b": "tx-c2"})
    assert status == 200, body
    assert titles(cluster, "tx-c1", "tx-c2") == "2"
    status, body, _ = call(srv, "POST", "/pair?mode=rollback", {"a": "tx-r1", "b": "tx-r2"})
    assert status == 200, body
    assert titles(cluster, "tx-r1", "tx-r2") == "0"
    # Thrown out of the handler: the Transaction is destroyed uncommitted, rolled back.
    status, body, _ = call(srv, "POST", "/pair?mode=throw", {"a": "tx-t1", "b": "tx-t2"})
    assert status == 422, body
    wait_for(lambda: stats(srv)["cleaning"] == 0 and stats(srv)["idle"] == 1, 10, "the rollback")
    assert titles(cluster, "tx-t1", "tx-t2") == "0"
    assert cluster.sql("select count(*) from pg_stat_activity where state like 'idle in%'") == "0"
    # A unique violation inside: the error, the rest rolled back, the connection reusable.
    status, body, _ = call(srv, "POST", "/pair?mode=commit", {"a": "tx-u1", "b": "tx-c1"})
    assert status == 500, body
    assert titles(cluster, "tx-u1") == "0"
    assert call(srv, "GET", "/count")[0] == 200


def test_pipeline(start_server):
    srv = start_server()
    status, body, _ = call(srv, "GET", "/pipeline?n=50")
    assert status == 200 and body["doubled"] == [2 * i for i in range(50)], body
    assert len(set(body["pids"])) == 1, body  # one connection, one round trip
    status, body, _ = call(srv, "GET", "/pipeline-error")
    assert body == {"error": "22012"}, body  # division_by_zero; the statements after: aborted
    assert call(srv, "GET", "/pipeline?n=3")[1]["doubled"] == [0, 2, 4]
    # Prepared statements in a batch: prepared inside the first round trip, reused after.
    for n in (20, 20, 5):
        status, body, _ = call(srv, "GET", f"/pipeline?n={n}&prepared=1")
        assert status == 200 and body["doubled"] == [2 * i for i in range(n)], body


def test_listen_notify(start_server, cluster):
    srv = start_server()
    got = {}
    t = threading.Thread(target=lambda: got.update(r=call(srv, "GET", "/listen?channel=feed_t")))
    t.start()
    # Idle: the LISTEN has committed (the query shows from its start), so a NOTIFY reaches it.
    wait_for(lambda: cluster.sql("select count(*) from pg_stat_activity "
                                 "where query = 'LISTEN \"feed_t\"' and state = 'idle'") == "1",
             20, "the LISTEN")
    assert call(srv, "POST", "/notify?channel=feed_t", "note 7 changed")[0] == 200
    t.join(20 * SLOW)
    status, body, _ = got["r"]
    assert status == 200 and body["channel"] == "feed_t" and body["payload"] == "note 7 changed"
    assert body["pid"] > 0
    # The listener's connection is its own and closes with it.
    wait_for(lambda: cluster.sql("select count(*) from pg_stat_activity "
                                 "where query = 'LISTEN \"feed_t\"'") == "0", 20, "its close")


def fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def settled_fds(pid):
    """The fewest descriptors over half a second: a client's socket closing is not counted."""
    counts = []
    for _ in range(10):
        counts.append(fds(pid))
        time.sleep(0.05)
    return min(counts)


def test_postgres_restart_under_load(start_server, cluster):
    srv = start_server(max_connections=4, threads=1)
    pid = srv.proc.pid

    def fill_pool():  # 8 queries at once open all 4 connections
        parallel(8, lambda i: call(srv, "GET", "/sleep?s=0.2"))
        wait_for(lambda: stats(srv)["open"] == 4 and stats(srv)["idle"] == 4, 20, "4 idle")
    fill_pool()
    before = settled_fds(pid)

    seen = []
    stop = threading.Event()

    def load():
        while not stop.is_set():
            status, _, headers = call(srv, "GET", "/count")
            seen.append((time.monotonic(), status, headers.get("Retry-After")))
    workers = [threading.Thread(target=load) for _ in range(4)]
    for w in workers:
        w.start()
    try:
        wait_for(lambda: any(s == 200 for _, s, _ in seen), 20, "load to succeed")
        cluster.stop("fast")
        down = time.monotonic()
        wait_for(lambda: any(t > down and s == 503 for t, s, _ in seen), 20, "503s while down")
        time.sleep(0.5)  # some more load on a stopped server
        cluster.start()
        up = time.monotonic()
        wait_for(lambda: any(t > up and s == 200 for t, s, _ in seen), 30, "success again")
    finally:
        stop.set()
        for w in workers:
            w.join(60 * SLOW)
    assert srv.alive()
    assert {s for _, s, _ in seen} <= {200, 503}, sorted({s for _, s, _ in seen})
    assert all(r == "1" for _, s, r in seen if s == 503)
    fill_pool()
    # New connections prepare the named statement again (not "does not exist": 404, not 500).
    assert call(srv, "GET", "/notes/0")[0] == 404
    # No descriptor leaked: 4 connections again (the pool's stats say so), and no more
    # descriptors than before, once the clients' sockets are closed.
    wait_for(lambda: fds(pid) <= before, 20, f"at most {before} descriptors (now {fds(pid)})")
