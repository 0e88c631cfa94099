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
