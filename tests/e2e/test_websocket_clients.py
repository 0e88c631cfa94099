"""Real WebSocket clients against /ws/echo and /ws/chat, over ws:// and wss://: Python's
`websockets`, Node's built-in WebSocket, a Go client on github.com/coder/websocket
(tests/e2e/clients/go, built here) and headless Chromium (a page rivet serves over https,
driven through the DevTools protocol).

Each runs the same scenario and reports what it observed: a text message (not ASCII) and a
100,000-byte binary message echoed intact, permessage-deflate negotiated (every one of these
clients offers it), a clean close 1000, then two /ws/chat connections: each first sees its own
"ready" come back (so it is subscribed), then A's message reaches both A and B.
"""
import asyncio
import hashlib
import json
import os
import re
import shutil
import ssl
import subprocess
import time
import urllib.parse
from pathlib import Path

import pytest

from rivet_e2e import SLOW
from tls_e2e import start_tls

CLIENTS = Path(__file__).parent / "clients"
NODE = shutil.which("node")


def node_websocket_args() -> list | None:
    """How to run node with a built-in WebSocket: Node 20 needs --experimental-websocket, later
    ones have it on by default; None when this node has none (Debian 12's Node 18)."""
    if NODE is None:
        return None
    for args in ([NODE, "--experimental-websocket"], [NODE]):
        p = subprocess.run([*args, "-e", "process.exit(typeof WebSocket === 'function' ? 0 : 1)"],
                           capture_output=True, timeout=30)
        if p.returncode == 0:
            return args
    return None


NODE_ARGS = node_websocket_args()


GO = shutil.which("go")
CHROMIUM = shutil.which("chromium")
BINARY_LEN = 100_000
CLIENT_TIMEOUT = 90  # seconds, per client run (times SLOW)


def binary_payload(n: int) -> bytes:
    """Byte i is (i*31 + i/256) mod 256, as every client sends."""
    return bytes((i * 31 + i // 256) & 0xFF for i in range(n))


EXPECTED_SHA256 = hashlib.sha256(binary_payload(BINARY_LEN)).hexdigest()


def check_report(r: dict, text: str, token: str) -> None:
    assert "permessage-deflate" in (r["extensions"] or ""), f"no compression negotiated: {r}"
    assert r["text"] == text, r
    assert r["binary_len"] == BINARY_LEN and r["binary_sha256"] == EXPECTED_SHA256, r
    assert r["close_code"] == 1000 and r.get("close_clean", True), r
    known = {"ready A", "ready B", token}
    for side in ("chat_a", "chat_b"):
        got = r[side]
        assert got and got[-1] == token and got.count(token) == 1, (side, got)
        assert set(got) <= known, (side, got)


@pytest.fixture
def srv(rivet, tls_certs, tmp_path):
    """rivet with a TLS listener, serving the browser page from a root of its own."""
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(CLIENTS / "ws_page.html", root / "ws_page.html")
    return start_tls(rivet, tls_certs, root=root)


def urls(srv, scheme: str) -> tuple[str, str]:
    if scheme == "wss":
        base = f"wss://localhost:{srv.tls_port}"
    else:
        base = f"ws://{srv.host}:{srv.port}"
    return f"{base}/ws/echo", f"{base}/ws/chat"


# ---------------------------------------------------------------------------------------------
# Python: websockets


async def python_scenario(echo_url, chat_url, ssl_context, text, token) -> dict:
    from websockets.asyncio.client import connect

    kw = {"ssl": ssl_context} if ssl_context else {}
    report = {}
    async with connect(echo_url, max_size=32 << 20, **kw) as ws:  # offers permessage-deflate
        report["extensions"] = ws.response.headers.get("Sec-WebSocket-Extensions")
        await ws.send(text)
        report["text"] = await ws.recv()
        await ws.send(binary_payload(BINARY_LEN))
        echoed = await ws.recv()
        report["binary_len"] = len(echoed)
        report["binary_sha256"] = hashlib.sha256(echoed).hexdigest()
    report["close_code"] = ws.close_code  # what the server answered our close with

    async def read_until(ws, want):
        got = []
        while (msg := await ws.recv()) != want:
            got.append(msg)
        return got + [msg]

    async with connect(chat_url, **kw) as a, connect(chat_url, **kw) as b:
        await a.send("ready A")
        await read_until(a, "ready A")
        await b.send("ready B")
        await read_until(b, "ready B")
        await a.send(token)
        report["chat_a"] = await read_until(a, token)
        report["chat_b"] = await read_until(b, token)
    return report


@pytest.mark.parametrize("scheme", ["ws", "wss"])
def test_python_websockets(srv, tls_certs, scheme):
    pytest.importorskip("websockets", reason="websockets is not installed (scripts/setup.sh)")
    ctx = ssl.create_default_context(cafile=str(tls_certs.ca)) if scheme == "wss" else None
    text, token = "héllo ✓ from Python", "chat from Python"
    report = asyncio.run(asyncio.wait_for(
        python_scenario(*urls(srv, scheme), ctx, text, token), CLIENT_TIMEOUT * SLOW))
    check_report(report, text, token)


# ---------------------------------------------------------------------------------------------
# Node: the built-in WebSocket


@pytest.mark.skipif(NODE_ARGS is None, reason="no node with a built-in WebSocket "
                    "(Node 20 or later) on the PATH")
@pytest.mark.parametrize("scheme", ["ws", "wss"])
def test_node_websocket(srv, tls_certs, scheme):
    text, token = "héllo ✓ from Node", "chat from Node"
    env = dict(os.environ, NODE_EXTRA_CA_CERTS=str(tls_certs.ca))
    p = subprocess.run([*NODE_ARGS, str(CLIENTS / "ws_client.mjs"),
                        *urls(srv, scheme), text, str(BINARY_LEN), token],
                       capture_output=True, text=True, env=env, timeout=CLIENT_TIMEOUT * SLOW)
    assert p.returncode == 0, p.stderr
    check_report(json.loads(p.stdout), text, token)


# ---------------------------------------------------------------------------------------------
# Go: github.com/coder/websocket

PROXY_REFUSED = re.compile(r"dial tcp|no such host|connection refused|proxyconnect|"
                           r"410 Gone|403 Forbidden|i/o timeout|TLS handshake timeout")


@pytest.fixture(scope="module")
def go_client(tmp_path_factory):
    if GO is None:
        pytest.skip("go is not installed (scripts/setup.sh)")
    out = tmp_path_factory.mktemp("go-ws") / "wsclient"
    p = subprocess.run([GO, "build", "-o", str(out), "."], cwd=CLIENTS / "go",
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0 and PROXY_REFUSED.search(p.stderr):
        pytest.skip(f"the Go module proxy did not serve github.com/coder/websocket:\n{p.stderr}")
    assert p.returncode == 0, p.stderr
    return out


@pytest.mark.parametrize("scheme", ["ws", "wss"])
def test_go_coder_websocket(srv, tls_certs, go_client, scheme):
    text, token = "héllo ✓ from Go", "chat from Go"
    echo_url, chat_url = urls(srv, scheme)
    p = subprocess.run([str(go_client), "-echo", echo_url, "-chat", chat_url,
                        "-ca", str(tls_certs.ca), "-text", text, "-binary", str(BINARY_LEN),
                        "-token", token],
                       capture_output=True, text=True, timeout=CLIENT_TIMEOUT * SLOW)
    assert p.returncode == 0, p.stderr
    check_report(json.loads(p.stdout), text, token)


# ---------------------------------------------------------------------------------------------
# Headless Chromium: a page over https that talks wss:// to its own origin


class DevTools:
    """Calls over a DevTools protocol connection to the browser (websockets' sync client)."""

    def __init__(self, ws):
        self.ws = ws
        self.last_id = 0

    def call(self, method: str, session: str | None = None, **params):
        self.last_id += 1
        msg = {"id": self.last_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        self.ws.send(json.dumps(msg))
        while True:  # events may come first
            answer = json.loads(self.ws.recv())
            if answer.get("id") == self.last_id:
                assert "error" not in answer, (method, answer)
                return answer["result"]


def run_page(url: str, user_data_dir: Path, timeout: float) -> dict:
    """Opens `url` in headless Chromium; waits (polling the DOM) until the page wrote its #result
    or #error; returns the result."""
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--no-first-run", "--ignore-certificate-errors", f"--user-data-dir={user_data_dir}",
           "--remote-debugging-port=0", "about:blank"]
    log = user_data_dir.parent / "chromium.stderr"
    with open(log, "w") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    try:
        # "DevTools listening on ws://127.0.0.1:PORT/devtools/browser/ID" on stderr.
        deadline = time.monotonic() + timeout
        browser_url = None
        while browser_url is None and time.monotonic() < deadline and proc.poll() is None:
            m = re.search(r"DevTools listening on (ws://\S+)", log.read_text(errors="replace"))
            browser_url = m[1] if m else time.sleep(0.05)
        assert browser_url, f"Chromium printed no DevTools address:\n{log.read_text()[-3000:]}"
        from websockets.sync.client import connect
        with connect(browser_url, max_size=None) as ws:
            devtools = DevTools(ws)
            target = devtools.call("Target.createTarget", url=url)["targetId"]
            session = devtools.call("Target.attachToTarget", targetId=target,
                                    flatten=True)["sessionId"]
            probe = ("[location.href, document.getElementById('result')?.textContent || '', "
                     "document.getElementById('error')?.textContent || '']")
            deadline = time.monotonic() + timeout
            while True:
                value = devtools.call("Runtime.evaluate", session, expression=probe,
                                      returnByValue=True)["result"].get("value")
                href, result, error = value or ("", "", "")
                assert not error, f"the page failed: {error}"
                if result:
                    return json.loads(result)
                assert time.monotonic() < deadline, f"the page wrote no result ({href})"
                time.sleep(0.1)
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (scripts/setup.sh)")
def test_chromium_page_over_wss(srv, tmp_path):
    pytest.importorskip("websockets", reason="websockets is not installed (scripts/setup.sh)")
    text, token = "héllo ✓ from Chromium", "chat from Chromium"
    query = urllib.parse.urlencode({"text": text, "binary": BINARY_LEN, "token": token})
    url = f"https://localhost:{srv.tls_port}/ws_page.html?{query}"
    report = run_page(url, tmp_path / "chromium-profile", CLIENT_TIMEOUT * SLOW)
    check_report(report, text, token)
