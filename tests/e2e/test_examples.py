"""The shipped examples, built with the project, on a real socket: what a new user copies must
answer a client's mistakes with a 4xx, never a 500."""
import http.client
import json
import signal
import time
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as ws_connect

from rivet_e2e import BIN, SLOW

EXAMPLES = BIN.parent


@pytest.fixture
def hello_api(rivet):
    return rivet(command=[EXAMPLES / "example_hello_api", 0], root=None)


def test_hello_api_answers_and_refuses_bad_input_with_400(hello_api):
    r = hello_api.post("/sum", '{"numbers": [1, 2.5, 3]}')
    assert r.status == 200 and json.loads(r.body) == {"sum": 6.5}, r
    for body in ('{"numbers":[1,', '{"numbers": [1, "x"]}', '{"values": []}', "[1, 2]"):
        r = hello_api.post("/sum", body)
        assert r.status == 400, (body, r)
        assert r.header("Content-Type") == "application/json", r
        assert json.loads(r.body)["error"], r
    r = hello_api.get("/primes?below=100")
    assert r.status == 200 and json.loads(r.body) == {"below": 100, "primes": 25}, r
    for below in ("abc", "-5", "1e9", "99999999999"):
        r = hello_api.get(f"/primes?below={below}")
        assert r.status == 400, (below, r)
    assert hello_api.get("/nope").status == 404


@pytest.fixture
def todo_api(rivet):
    front = Path(__file__).resolve().parents[2] / "examples" / "todo_public"
    return rivet(command=[EXAMPLES / "example_todo_api", 0, front], root=None)


ALICE = {"Authorization": "Bearer alice-token"}
BOB = {"Authorization": "Bearer bob-token"}


def test_todo_api_crud_with_auth_context_and_typed_ids(todo_api):
    r = todo_api.post("/todos", '{"title": "write docs"}', headers=ALICE)
    assert r.status == 201, r
    todo = json.loads(r.body)
    assert todo == {"id": todo["id"], "title": "write docs", "done": False}
    assert r.header("Location") == f"/todos/{todo['id']}"
    assert r.header("X-Request-Id"), r
    r = todo_api.request("PATCH", f"/todos/{todo['id']}", body=b'{"done": true}', headers=ALICE)
    assert r.status == 200 and json.loads(r.body)["done"] is True, r
    assert json.loads(todo_api.get("/todos", headers=ALICE).body) == [
        {"id": todo["id"], "title": "write docs", "done": True}]
    # The context carries the user: bob sees none of alice's todos.
    assert json.loads(todo_api.get("/todos", headers=BOB).body) == []
    assert todo_api.get(f"/todos/{todo['id']}", headers=BOB).status == 404
    r = todo_api.request("DELETE", f"/todos/{todo['id']}", headers=ALICE)
    assert r.status == 204, r
    assert todo_api.get(f"/todos/{todo['id']}", headers=ALICE).status == 404
    # A typed id: not digits is no route at all.
    r = todo_api.get("/todos/abc", headers=ALICE)
    assert r.status == 404 and json.loads(r.body) == {"error": "Not Found"}, r


def test_todo_api_refuses_with_json_errors_and_cors_everywhere(todo_api):
    origin = {"Origin": "https://app.example"}
    r = todo_api.get("/todos", headers=origin)
    assert r.status == 401 and r.header("WWW-Authenticate") == "Bearer", r
    assert r.header("Access-Control-Allow-Origin") == "*", r
    assert json.loads(r.body) == {"error": "a valid bearer token is required"}
    for body, message in (('{"title": ', "invalid JSON body"), ('{"done": true}', "title is required"),
                          ('{"title": ""}', "title must be"), ('[1]', "JSON object")):
        r = todo_api.post("/todos", body, headers={**ALICE, **origin})
        assert r.status == 400, (body, r)
        assert message in json.loads(r.body)["error"], (body, r.body)
        assert r.header("Access-Control-Allow-Origin") == "*", r
    r = todo_api.post("/todos", '{"title": "%s"}' % ("x" * 70_000), headers={**ALICE, **origin})
    assert r.status == 413 and r.header("Access-Control-Allow-Origin") == "*", r
    assert json.loads(r.body)["error"], r
    r = todo_api.request("PUT", "/todos/1", body=b"{}", headers={**ALICE, **origin})
    assert r.status == 405 and r.header("Access-Control-Allow-Origin") == "*", r
    # A preflight is answered before the auth check.
    r = todo_api.request("OPTIONS", "/todos", headers={
        **origin, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type"})
    assert r.status == 204, r
    assert r.header("Access-Control-Allow-Headers") == "authorization, content-type", r


def test_todo_api_front_page_cpu_route_and_slow_dependency(todo_api):
    r = todo_api.get("/")
    assert r.status == 200 and b"<h1>Todos</h1>" in r.body, r
    r = todo_api.get("/primes/100")
    assert r.status == 200 and json.loads(r.body) == {"below": 100, "primes": 25}, r
    assert todo_api.get("/primes/20000000").status == 400
    # 20 requests that each wait 200 ms on the slow service, at once: waited for together.
    conns = [todo_api.connect() for _ in range(20)]
    start = time.monotonic()
    for c in conns:
        c.send(b"GET /forecast HTTP/1.1\r\nHost: x\r\n\r\n")
    for c in conns:
        r = c.read_response()
        assert r.status == 200 and json.loads(r.body) == {"forecast": "sunny"}, r
        c.close()
    elapsed = time.monotonic() - start
    assert elapsed < 2.0 * SLOW, f"20 waits of 200 ms took {elapsed:.2f} s: they did not overlap"


@pytest.fixture
def notes_feed(rivet):
    return rivet(command=[EXAMPLES / "example_notes_feed", 0, "test-token"], root=None)


WRITER = {"Authorization": "Bearer test-token", "Content-Type": "application/json"}


class SseClient:
    """GET /feed/events on its own connection; next() reads one event as a dict of its fields."""

    def __init__(self, srv, last_event_id=None):
        self.conn = http.client.HTTPConnection(srv.host, srv.port, timeout=10 * SLOW)
        headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
        self.conn.request("GET", "/feed/events", headers=headers)
        self.resp = self.conn.getresponse()
        assert self.resp.status == 200, self.resp.status
        assert self.resp.getheader("Content-Type").startswith("text/event-stream")

    def next(self):
        """The next event's fields; None at the end of the stream."""
        fields = {}
        while True:
            line = self.resp.readline()
            if not line:
                return None
            line = line.decode().rstrip("\n")
            if not line:
                if "data" in fields:
                    return fields
                continue  # a blank line after a comment
            if line.startswith(":"):
                continue  # a heartbeat
            name, _, value = line.partition(": ")
            fields[name] = value

    def close(self):
        self.conn.close()


def test_notes_feed_pushes_changes_to_websocket_and_sse_and_resumes(notes_feed):
    srv = notes_feed
    with ws_connect(f"ws://{srv.host}:{srv.port}/feed", open_timeout=10 * SLOW) as ws:
        check_notes_feed(srv, ws)


def check_notes_feed(srv, ws):
    """Writes with and without the token, the changes on both feeds, an SSE resume, SIGTERM."""
    sse = SseClient(srv)
    # Writes need the token; reads do not.
    r = srv.post("/notes", '{"text": "nope"}')
    assert r.status == 401 and r.header("WWW-Authenticate") == "Bearer", r
    for body in ('{"text": ', '{"title": "x"}', '{"text": ""}', "[1]"):
        r = srv.post("/notes", body, headers=WRITER)
        assert r.status == 400 and json.loads(r.body)["error"], (body, r)

    # The subscriptions are in place once the WebSocket's open and the SSE head came; the first
    # note then reaches both.
    r = srv.post("/notes", '{"text": "buy milk"}', headers=WRITER)
    assert r.status == 201, r
    note = json.loads(r.body)
    assert note == {"id": note["id"], "text": "buy milk"}
    created = {"id": 1, "type": "created", "note": note}
    assert json.loads(ws.recv(timeout=10 * SLOW)) == created
    event = sse.next()
    assert event["id"] == "1" and json.loads(event["data"]) == created, event

    second = json.loads(srv.post("/notes", '{"text": "call home"}', headers=WRITER).body)
    assert srv.request("DELETE", f"/notes/{note['id']}").status == 401
    assert srv.request("DELETE", f"/notes/{note['id']}", headers=WRITER).status == 204
    assert srv.request("DELETE", f"/notes/{note['id']}", headers=WRITER).status == 404
    assert json.loads(srv.get("/notes").body) == [second]
    later = [{"id": 2, "type": "created", "note": second},
             {"id": 3, "type": "deleted", "note": {"id": note["id"]}}]
    assert [json.loads(ws.recv(timeout=10 * SLOW)) for _ in later] == later
    got = [sse.next() for _ in later]
    assert [(e["id"], json.loads(e["data"])) for e in got] == [("2", later[0]), ("3", later[1])]

    # A reconnect that saw event 1 gets 2 and 3 again, then what comes next: nothing repeated.
    sse.close()
    again = SseClient(srv, last_event_id="1")
    assert [(e["id"], json.loads(e["data"])) for e in (again.next(), again.next())] == [
        ("2", later[0]), ("3", later[1])]
    third = json.loads(srv.post("/notes", '{"text": "water plants"}', headers=WRITER).body)
    event = again.next()
    assert event["id"] == "4" and json.loads(event["data"])["note"] == third, event
    assert json.loads(ws.recv(timeout=10 * SLOW))["note"] == third

    # SIGTERM: the SSE stream ends, the WebSocket is closed "going away", the process exits 0,
    # promptly although both clients stay.
    start = time.monotonic()
    srv.proc.send_signal(signal.SIGTERM)
    assert again.next() is None
    with pytest.raises(ConnectionClosed) as closed:
        ws.recv(timeout=10 * SLOW)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001, closed.value
    assert srv.wait(10 * SLOW) == 0
    elapsed = time.monotonic() - start
    assert elapsed < 5 * SLOW, f"stopping with a feed open took {elapsed:.1f} s"
    again.close()
