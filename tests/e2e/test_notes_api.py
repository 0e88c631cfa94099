"""examples/notes_api.cpp end to end, against a real PostgreSQL 15 (tests/e2e/pg_cluster.py) and a
real HTTP checker (Python's http.server): CRUD with a bearer token, the checker's verdicts through
rivet::HttpClient, and the live feed, which carries every change to the table, psql's too."""
import http.server
import json
import threading
import time

import pytest
from websockets.sync.client import connect as ws_connect

from pg_cluster import PgCluster, available
from rivet_e2e import BIN, SLOW

EXAMPLE = BIN.parent / "example_notes_api"
TOKEN = {"Authorization": "Bearer s3cret"}

pytestmark = pytest.mark.skipif(not (available() and EXAMPLE.exists()),
                                reason="needs PostgreSQL 15 and example_notes_api (libpq)")


class Checker(http.server.BaseHTTPRequestHandler):
    """Refuses texts that contain "forbidden" (422, with the reason), accepts the rest."""
    seen = []

    def do_POST(self):
        text = self.rfile.read(int(self.headers["Content-Length"])).decode()
        Checker.seen.append(text)
        status, body = (422, b"contains a forbidden word") if "forbidden" in text else (200, b"ok")
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def checker():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Checker)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def cluster():
    c = PgCluster()
    try:
        c.start()
        yield c
    finally:
        c.destroy()


@pytest.fixture
def notes(rivet, cluster, checker):
    url = f"http://127.0.0.1:{checker.server_address[1]}/check"
    srv = rivet(command=[EXAMPLE, 0, cluster.conninfo, "s3cret", url], root=None)
    deadline = time.monotonic() + 30 * SLOW
    while srv.get("/notes").status == 503:  # the schema is made by a background task at start
        assert time.monotonic() < deadline, "the schema was never made"
        time.sleep(0.05)
    return srv


def next_change(ws):
    return json.loads(ws.recv(timeout=20 * SLOW))


def test_crud_checks_and_the_live_feed(notes, cluster):
    with ws_connect(f"ws://{notes.host}:{notes.port}/feed") as ws:
        r = notes.post("/notes", '{"text": "buy milk"}', headers=TOKEN)
        assert r.status == 201, r
        note = json.loads(r.body)
        assert note["text"] == "buy milk" and note["id"] >= 1
        assert next_change(ws) == {"type": "insert", "id": note["id"]}
        assert Checker.seen[-1] == "buy milk"

        assert json.loads(notes.get(f"/notes/{note['id']}").body)["text"] == "buy milk"
        r = notes.request("PUT", f"/notes/{note['id']}", body=b'{"text": "buy oat milk"}',
                          headers=TOKEN)
        assert r.status == 200 and json.loads(r.body)["text"] == "buy oat milk", r
        assert next_change(ws) == {"type": "update", "id": note["id"]}

        # A change nobody made through the API reaches the feed too: it comes from the table.
        cluster.sql("insert into notes (text) values ('from psql')")
        from_psql = next_change(ws)
        assert from_psql["type"] == "insert"
        listed = json.loads(notes.get("/notes").body)
        assert [n["text"] for n in listed] == ["buy oat milk", "from psql"]

        assert notes.request("DELETE", f"/notes/{note['id']}", headers=TOKEN).status == 204
        assert next_change(ws) == {"type": "delete", "id": note["id"]}
        assert notes.request("DELETE", f"/notes/{note['id']}", headers=TOKEN).status == 404
        assert notes.get(f"/notes/{note['id']}").status == 404


def test_refusals_name_their_reason_and_change_nothing(notes, cluster, checker):
    r = notes.post("/notes", '{"text": "a forbidden thought"}', headers=TOKEN)
    assert r.status == 422 and "contains a forbidden word" in json.loads(r.body)["error"], r
    assert notes.post("/notes", '{"text": "no token"}').status == 401
    assert notes.post("/notes", '{"text": ', headers=TOKEN).status == 400
    assert notes.post("/notes", '{"title": "x"}', headers=TOKEN).status == 400
    assert notes.get("/notes/abc").status == 404  # not an integer id: no such route
    assert cluster.sql("select count(*) from notes") == "0"
    checker.shutdown()
    checker.server_close()  # the checker is gone: 502, and still nothing written
    r = notes.post("/notes", '{"text": "unchecked"}', headers=TOKEN)
    assert r.status == 502, r
    assert cluster.sql("select count(*) from notes") == "0"
