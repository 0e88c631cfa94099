"""Health for orchestrators (issue 24): /livez and /readyz beside /healthz. Liveness stays 200
until the process exits; readiness (and /healthz, the same question) fails in the lame duck and
while the application says it cannot serve (App::set_ready, shown by example_readiness, whose
readiness follows a TCP dependency the test opens and closes)."""
import signal
import socket

import pytest

from ops_e2e import wait_for
from rivet_e2e import BIN, SLOW

EXAMPLES = BIN.parent


def answers(srv, path):
    r = srv.get(path)
    return r.status, r.body


def test_live_and_ready_answer_ok_beside_healthz(server):
    for path in ("/livez", "/readyz", "/healthz"):
        assert answers(server, path) == (200, b"ok"), path
        assert server.request("HEAD", path).status == 200, path
    # Only the exact paths: neighbours are the application's (here: nothing, 404).
    for path in ("/livezz", "/ready", "/readyz/x"):
        assert server.get(path).status == 404, path
    metrics = server.get("/metrics").body.decode()
    assert 'route="/livez"' in metrics and 'route="/readyz"' in metrics


def test_lame_duck_fails_readiness_and_keeps_liveness(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "1", "--drain-grace", "30"))
    srv.send_signal(signal.SIGTERM)
    wait_for(lambda: srv.get("/readyz").status == 503, 5, "/readyz to answer 503")
    r = srv.get("/readyz")
    assert r.body == b"draining" and r.closes
    assert answers(srv, "/healthz") == (503, b"draining")
    r = srv.get("/livez")
    assert (r.status, r.body) == (200, b"ok") and r.closes  # alive, but leaving
    srv.send_signal(signal.SIGTERM)  # a second one ends the grace
    assert srv.wait(10 * SLOW) == 0


def test_no_admin_turns_all_three_off_and_admin_port_serves_them(rivet):
    off = rivet(args=("--threads", "1", "--workers", "1", "--no-admin"))
    for path in ("/livez", "/readyz", "/healthz"):
        assert off.get(path).status == 404, path
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        admin_port = s.getsockname()[1]
    moved = rivet(args=("--threads", "1", "--workers", "1", "--admin-port", admin_port))
    assert moved.get("/readyz").status == 404  # not on the main port any more
    with socket.create_connection(("127.0.0.1", admin_port), timeout=10 * SLOW) as c:
        c.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := c.recv(4096):
            data += chunk
    assert data.startswith(b"HTTP/1.1 200") and data.endswith(b"ok"), data


class Dependency:
    """A TCP service the example checks by connecting: open or closed on demand."""

    def __init__(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.sock = None

    def open(self):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", self.port))
        self.sock.listen(64)

    def close(self):
        self.sock.close()
        self.sock = None


@pytest.fixture
def dependency():
    d = Dependency()
    yield d
    if d.sock:
        d.close()


def test_application_marks_itself_unready_and_ready_again(rivet, dependency):
    # Started with its dependency down: never ready, yet alive and serving.
    srv = rivet(command=[EXAMPLES / "example_readiness", 0, dependency.port, 30_000], root=None)
    assert answers(srv, "/readyz") == (503, b"unready")
    assert answers(srv, "/healthz") == (503, b"unready")
    assert answers(srv, "/livez") == (200, b"ok")
    assert srv.get("/hello").status == 200
    r = srv.get("/readyz")
    assert r.header("Connection") != "close"  # unready is not leaving: connections stay
    dependency.open()
    wait_for(lambda: srv.get("/readyz").status == 200, 10, "ready once the dependency is up")
    assert answers(srv, "/healthz") == (200, b"ok")
    dependency.close()
    wait_for(lambda: srv.get("/readyz").status == 503, 10, "unready once it is down again")
    assert answers(srv, "/livez") == (200, b"ok")
    dependency.open()
    wait_for(lambda: srv.get("/readyz").status == 200, 10, "ready again")
    # The lame duck fails readiness whatever the application says.
    srv.send_signal(signal.SIGTERM)
    wait_for(lambda: srv.get("/readyz").body == b"draining", 10, "draining")
    assert answers(srv, "/livez") == (200, b"ok")
    srv.send_signal(signal.SIGTERM)
    assert srv.wait(10 * SLOW) == 0
