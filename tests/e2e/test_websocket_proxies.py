"""WebSocket through the reverse proxies users put in front of rivet: HAProxy (mode http, which
passes an upgrade through on its own) and nginx (proxy_http_version 1.1 with the Upgrade and
Connection fields set, as its documentation says), echo, compression and chat broadcast through
them, and the close handshake end to end."""
import asyncio
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

websockets = pytest.importorskip("websockets")

from nginx_e2e import NGINX, start_nginx as start_nginx_with, stop_nginx  # noqa: E402
from ops_e2e import free_port, wait_for  # noqa: E402
from rivet_e2e import SLOW  # noqa: E402

HAPROXY = shutil.which("haproxy") or ("/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists()
                                      else None)


def listening(proc, port):
    def check():
        if proc.poll() is not None:
            raise AssertionError(f"the proxy exited: {proc.stdout.read().decode(errors='replace')}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            return False
    wait_for(check, timeout=10 * SLOW, what="the proxy listening")


def start_haproxy(tmp_path, backend_port):
    port = free_port()
    cfg = tmp_path / "haproxy.cfg"
    cfg.write_text(f"""
global
    maxconn 256
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout tunnel 60s
frontend front
    bind 127.0.0.1:{port}
    default_backend rivet
backend rivet
    server r1 127.0.0.1:{backend_port}
""")
    proc = subprocess.Popen([HAPROXY, "-f", str(cfg), "-db"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    listening(proc, port)
    return proc, port


def start_nginx(tmp_path, backend_port):
    port = free_port()
    proc = start_nginx_with(tmp_path / "nginx", f"""
    access_log off;
    map $http_upgrade $connection_upgrade {{ default upgrade; '' close; }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://127.0.0.1:{backend_port};
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_read_timeout 60s;
        }}
    }}
""", port)
    return proc, port


async def converse(port):
    base = f"ws://127.0.0.1:{port}"
    async with websockets.connect(f"{base}/ws/echo", compression="deflate",
                                  max_size=2**22) as ws:
        assert ws.response.headers.get("Sec-WebSocket-Extensions", "").startswith(
            "permessage-deflate")
        await ws.send("through the proxy")
        assert await ws.recv() == "through the proxy"
        blob = bytes(range(256)) * 4096  # 1 MiB, binary
        await ws.send(blob)
        assert await ws.recv() == blob
    async with websockets.connect(f"{base}/ws/chat") as a, \
            websockets.connect(f"{base}/ws/chat") as b:
        # Both are subscribed once their 101 arrived (on_open runs before any frame is read).
        await a.send("hello b")
        assert await asyncio.wait_for(b.recv(), 30 * SLOW) == "hello b"
        assert await asyncio.wait_for(a.recv(), 30 * SLOW) == "hello b"
    ws = await websockets.connect(f"{base}/ws/echo")
    await ws.close(code=4001, reason="done")
    assert ws.close_code == 4001  # rivet echoes the code (RFC 6455 §5.5.1), not the reason


@pytest.mark.skipif(HAPROXY is None, reason="haproxy is not installed")
def test_websocket_through_haproxy(rivet, tmp_path):
    srv = rivet()
    proc, port = start_haproxy(tmp_path, srv.port)
    try:
        asyncio.run(converse(port))
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.skipif(NGINX is None, reason="nginx is not installed")
def test_websocket_through_nginx(rivet, tmp_path):
    srv = rivet()
    proc, port = start_nginx(tmp_path, srv.port)
    try:
        asyncio.run(converse(port))
    finally:
        stop_nginx(proc)
