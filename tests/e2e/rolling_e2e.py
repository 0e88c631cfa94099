"""A rolling restart, as the balancer tests run it (behind HAProxy in test_rolling_restart.py,
behind nginx in test_nginx_front.py): rivets on fixed ports, each stopped with SIGTERM in turn
and started again on its port while the load runs."""
from __future__ import annotations

import signal
import socket
import time
from pathlib import Path

from rivet_e2e import BIN, SLOW, RivetServer


def start_backend(tmp_path: Path, name: str, port: int, *extra) -> RivetServer:
    """A rivet on a fixed port (the proxy's configuration names it), with a lame duck of 1 s,
    its access log in its own directory (tmp_path/name/access.log) and `extra` arguments."""
    cmd = [BIN, "--port", port, "--bind", "127.0.0.1", "--threads", "1", "--workers", "1",
           "--drain-grace", "1", "--root", tmp_path,
           "--access-log", tmp_path / name / "access.log", *extra]
    return RivetServer(tmp_path / name, command=cmd).start()


def restart_in_turn(tmp_path: Path, backends: list, ports: list, back_in_rotation_s: float,
                    restarted: list, extra=()) -> None:
    """Stops each backend with SIGTERM (it must go through its lame duck and exit 0), starts
    it again on its port (appended to `restarted` at once, so that a failure leaves nothing
    unaccounted for) and gives the proxy `back_in_rotation_s` to send it requests again before
    the next one goes."""
    for i, old in enumerate(backends):
        old.send_signal(signal.SIGTERM)
        assert old.wait(15 * SLOW) == 0, old.stderr()
        assert "lame duck" in old.stderr()
        restarted.append(start_backend(tmp_path, f"r{i}-again", ports[i], *extra))
        time.sleep(back_in_rotation_s)


def proxied_hello(front: int) -> bool:
    """Whether the proxy on 127.0.0.1:front answers GET /hello with 200 now."""
    try:
        with socket.create_connection(("127.0.0.1", front), timeout=1) as s:
            s.sendall(b"GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            return s.recv(100).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def kill_left_over(servers) -> None:
    """After a failure: nothing is left running."""
    for srv in servers:
        if srv.alive():
            srv.proc.kill()
            srv.proc.wait()
