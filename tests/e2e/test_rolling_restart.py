"""Restarts that lose nothing (issue 13): the lame-duck period of --drain-grace on its own, then
three rivets behind a real HAProxy under wrk, each restarted in turn with SIGTERM.

Before the lame duck, the HAProxy run below lost 16 requests per run: at SIGTERM rivet closed
idle keep-alive connections at once, racing the proxy's next request on them, and stopped
listening before the health check had taken it out.
"""
import shutil
import signal
import subprocess
import time

import pytest

from ops_e2e import free_port, wait_for
from rivet_e2e import BIN, SANITIZED, SLOW, WRK, RivetServer, WrkUntilStopped
from rolling_e2e import kill_left_over, proxied_hello, restart_in_turn, start_backend

HAPROXY = shutil.which("haproxy")


# ---------------------------------------------------------------------------------------------
# The lame duck on its own


def test_lame_duck_serves_with_close_and_fails_health_checks(rivet):
    srv = rivet(args=("--threads", "2", "--workers", "1", "--drain-grace", "30"))
    kept = srv.connect()  # a keep-alive connection from before the signal
    assert kept.request("GET", "/hello").header("Connection") is None
    assert srv.get("/healthz").status == 200
    srv.send_signal(signal.SIGTERM)
    wait_for(lambda: srv.get("/healthz").status == 503, 5, "/healthz to answer 503")
    r = srv.get("/healthz")
    assert r.body == b"draining" and r.closes
    # Everything else is still served, and each answer ends its connection: the kept one was
    # not closed under the client (that races its next request), it is answered once more.
    r = kept.request("GET", "/hello")
    assert r.status == 200 and r.body == b"Hello, World!" and r.header("Connection") == "close"
    raw, closed = kept.read_until_close(5)
    assert raw == b"" and closed
    # New connections are still accepted during the grace.
    r = srv.get("/hello")
    assert r.status == 200 and r.header("Connection") == "close"
    assert srv.alive()
    # A second SIGTERM does not wait out the 30 s.
    started = time.monotonic()
    srv.send_signal(signal.SIGTERM)
    assert srv.wait(10 * SLOW) == 0
    assert time.monotonic() - started < 10 * SLOW
    assert "draining now" in srv.stderr()


def test_lame_duck_ends_after_the_grace_and_exits_zero(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "1", "--drain-grace", "0.5"))
    started = time.monotonic()
    srv.send_signal(signal.SIGTERM)
    assert srv.wait(10 * SLOW) == 0
    waited = time.monotonic() - started
    assert waited >= 0.5, waited  # it served for the whole grace
    assert "lame duck for 500 ms" in srv.stderr()


def test_drain_grace_is_checked_and_shown(tmp_path):
    def run(*args):
        return subprocess.run([str(BIN), *args], capture_output=True, text=True, timeout=30)

    bad = run("--drain-grace", "-1")
    assert bad.returncode == 2 and "--drain-grace" in bad.stderr
    over = run("--drain-grace", "3601")
    assert over.returncode == 2 and "--drain-grace" in over.stderr
    shown = run("--drain-grace", "2.5", "--check-config")
    assert shown.returncode == 0 and '"drain_grace": 2.5' in shown.stdout, shown.stdout
    cfg = tmp_path / "rivet.json"
    cfg.write_text('{"limits": {"drain_grace": 4}}')
    shown = run("--config", str(cfg), "--check-config")
    assert shown.returncode == 0 and '"drain_grace": 4' in shown.stdout, shown.stdout
    cfg.write_text('{"limits": {"drain_grace": "soon"}}')
    bad = run("--config", str(cfg), "--check-config")
    assert bad.returncode == 2 and "drain_grace" in bad.stderr, bad.stderr
    # The server's default: a lame duck of 7 s (docs/OPERATIONS.md has the arithmetic).
    shown = run("--check-config")
    assert shown.returncode == 0 and '"drain_grace": 7' in shown.stdout, shown.stdout


def test_default_drain_grace_is_a_lame_duck(tmp_path):
    # Started by hand: the test helper passes --drain-grace 0 unless told otherwise.
    srv = RivetServer(tmp_path, command=[BIN, "--port", "0", "--bind", "127.0.0.1",
                                         "--threads", "1", "--workers", "1"]).start()
    try:
        srv.send_signal(signal.SIGTERM)
        wait_for(lambda: srv.get("/readyz").status == 503, 10, "/readyz to answer 503")
        assert "lame duck for 7000 ms" in srv.stderr()
        assert srv.alive()
    finally:
        srv.send_signal(signal.SIGTERM)  # a second one ends the grace
        assert srv.wait(10 * SLOW) == 0


# ---------------------------------------------------------------------------------------------
# Three rivets behind HAProxy, restarted in turn under load

HAPROXY_CFG = """\
global
    maxconn 2000
defaults
    mode http
    timeout connect 2s
    timeout client 30s
    timeout server 30s
    retries 3
    option redispatch
listen web
    bind 127.0.0.1:{front}
    balance roundrobin
    option httpchk GET /healthz
    default-server check inter 100 fall 2 rise 1
{servers}
"""


@pytest.mark.skipif(HAPROXY is None, reason="haproxy is not installed (scripts/setup.sh)")
@pytest.mark.skipif(WRK is None, reason="wrk is not installed (scripts/setup.sh)")
@pytest.mark.skipif(SANITIZED, reason="a load test of the release build (the drain itself runs "
                    "under the sanitizers in the tests above)")
def test_rolling_restart_behind_haproxy_loses_nothing(tmp_path):
    ports = [free_port() for _ in range(3)]
    backends = [start_backend(tmp_path, f"r{i}", p) for i, p in enumerate(ports)]
    restarted = []
    front = free_port()
    servers = "\n".join(f"    server r{i} 127.0.0.1:{p}" for i, p in enumerate(ports))
    cfg = tmp_path / "haproxy.cfg"
    cfg.write_text(HAPROXY_CFG.format(front=front, servers=servers))
    proxy = subprocess.Popen([HAPROXY, "-f", str(cfg), "-db"], stdout=subprocess.DEVNULL,
                             stderr=open(tmp_path / "haproxy.log", "wb"))
    try:
        url = f"http://127.0.0.1:{front}/hello"

        wait_for(lambda: proxied_hello(front), 10, "HAProxy to answer through its backends")
        # Every restart happens under load: wrk runs until it is stopped, after the last.
        with WrkUntilStopped(url, 32) as load:
            time.sleep(1.5)
            # Back in rotation before the next one goes: HAProxy checks every 100 ms.
            restart_in_turn(tmp_path, backends, ports, 1.0, restarted)
            requests, errors, non_2xx, out = load.stop()
        assert errors is None, f"socket errors {errors}:\n{out}"
        assert non_2xx == 0, out
        assert requests > 1000, out
        for srv in restarted:
            assert srv.stop() == 0, srv.stderr()
    finally:
        proxy.terminate()
        proxy.wait(10)
        kill_left_over(backends + restarted)
