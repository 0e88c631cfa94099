"""Correctness checks: before and after every run, the server must answer the scenario's request
right (status, body bytes, and for pipelining and `Connection: close` the connection behaviour),
or its numbers are not trusted and its row reads n/a.

Python standard library only: raw sockets, so that the bytes seen are the bytes sent.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import time

HELLO = b"Hello, World!"
JSON_BODY = b'{"value": 42}'
# rivet's /json answer (src/server/demo_routes.cpp) for value 42, compared as parsed JSON; the
# same IEEE double arithmetic as the C++ handler.
_V = 42
JSON_EXPECTED = {
    "plus": _V + 20,
    "minus": _V - 69,
    "plus_float": _V + 3.14,
    "list": [_V, _V * 2, _V * 3.14],
    "object": {"item1": _V, "item2": True, "item3": _V - 3.14,
               "anotherList": [_V - 1, _V - 2.5, "somestr", False, _V]},
}  # fmt: skip
ECHO_SIZE = 4096
# The engine's hand-offs (bench.py's work_c100, wait_c100): so little work that the hop is the
# cost. /work?n=N answers {"n": N, "result": sum of i * 2654435761 for i < N, modulo 2^64}.
WORK_N = 100
WORK_PATH = f"/work?n={WORK_N}"
WAIT_PATH = "/wait?ms=0"  # rivet::sleep(0ms) is ready at once: the handler never suspends
CPU_PATH = "/cpu?ms=0"    # co_await on_workers(...): suspends, a worker runs it, the loop resumes


def work_result(n: int) -> int:
    return (2654435761 * (n * (n - 1) // 2)) % (1 << 64)


def echo_body(size: int = ECHO_SIZE) -> bytes:
    return bytes(97 + i % 26 for i in range(size))


def read_response(sock: socket.socket, buf: bytearray) -> tuple[int, dict, bytes]:
    """One HTTP/1.1 response with Content-Length from sock (bytes already read are in buf)."""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("connection closed mid-response")
        buf += chunk
    end = buf.index(b"\r\n\r\n")
    head = bytes(buf[:end]).decode("latin-1").split("\r\n")
    m = re.match(r"HTTP/1\.[01] (\d{3})", head[0])
    if not m:
        raise ValueError(f"bad status line {head[0]!r}")
    headers: dict[str, str] = {}
    for h in head[1:]:
        k, _, v = h.partition(":")
        headers[k.strip().lower()] = v.strip()
    if "transfer-encoding" in headers:
        raise ValueError("unexpected Transfer-Encoding")
    if "content-length" not in headers:
        raise ValueError("no Content-Length")
    length = int(headers["content-length"])
    while len(buf) < end + 4 + length:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("connection closed mid-body")
        buf += chunk
    body = bytes(buf[end + 4 : end + 4 + length])
    del buf[: end + 4 + length]
    return int(m.group(1)), headers, body


def request_bytes(port: int, method: str, path: str, body: bytes | None = None,
                  headers: dict[str, str] | None = None) -> bytes:  # fmt: skip
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    for k, v in (headers or {}).items():
        lines.append(f"{k}: {v}")
    if body is not None:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + (body or b"")


def expect(status: int, body: bytes, want_body: bytes | None = None, want_json=None) -> str | None:
    if status != 200:
        return f"status {status} (body {body[:60]!r}), want 200"
    if want_body is not None and body != want_body:
        return f"body of {len(body)} bytes {body[:40]!r}, want {len(want_body)} bytes {want_body[:40]!r}"
    if want_json is not None:
        try:
            got = json.loads(body)
        except ValueError:
            return f"body is not JSON: {body[:60]!r}"
        if got != want_json:
            return f"JSON {got!r}, want {want_json!r}"
    return None


def exchange(port: int, req: bytes, count: int = 1, timeout: float = 5) -> list[tuple[int, dict, bytes]]:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(req * count)
        buf = bytearray()
        return [read_response(s, buf) for _ in range(count)]


def curl_hello(port: int) -> tuple[str | None, dict]:
    """GET /hello with curl: a client other than ours must see 200 `Hello, World!` too."""
    try:
        r = subprocess.run(["curl", "-sS", "-i", "--max-time", "5", f"http://127.0.0.1:{port}/hello"],
                           capture_output=True, timeout=15)  # fmt: skip
    except subprocess.TimeoutExpired:
        return "curl timed out", {}
    if r.returncode != 0:
        return f"curl failed ({r.returncode}): {r.stderr.decode(errors='replace').strip()}", {}
    head, sep, body = r.stdout.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    info = {"status_line": lines[0], "headers": lines[1:], "response_bytes": len(r.stdout)}
    m = re.match(r"HTTP/1\.[01] (\d{3})", lines[0])
    if not sep or not m:
        return f"curl: not an HTTP response: {r.stdout[:80]!r}", info
    if m.group(1) != "200" or body != HELLO:
        return f"curl: got {lines[0]!r} with body {body[:40]!r}, want 200 {HELLO!r}", info
    return None, info


def check(port: int, feature: str, static: dict[str, bytes] | None = None,
          pipeline_depth: int = 16) -> tuple[str | None, dict]:  # fmt: skip
    """Check one scenario's request on a running server. Returns (problem or None, info)."""
    info: dict = {}
    try:
        if feature == "hello":
            err, info = curl_hello(port)
            if err:
                return err, info
            (st, _, body), = exchange(port, request_bytes(port, "GET", "/hello"))
            return expect(st, body, HELLO), info
        if feature == "pipeline":
            got = exchange(port, request_bytes(port, "GET", "/hello"), pipeline_depth)
            for i, (st, _, body) in enumerate(got):
                err = expect(st, body, HELLO)
                if err:
                    return f"pipelined response {i + 1}/{pipeline_depth}: {err}", info
            return None, info
        if feature == "close":
            req = request_bytes(port, "GET", "/hello", headers={"Connection": "close"})
            with socket.create_connection(("127.0.0.1", port), timeout=3) as s:
                s.sendall(req)
                buf = bytearray()
                st, _, body = read_response(s, buf)
                err = expect(st, body, HELLO)
                if err:
                    return err, info
                t0 = time.monotonic()
                try:
                    rest = s.recv(1)
                except socket.timeout:
                    return "the connection stayed open after a `Connection: close` request", info
                if rest or buf:
                    return f"unexpected bytes after the response: {bytes(buf) + rest!r}", info
                info["closed_after_s"] = round(time.monotonic() - t0, 3)
            return None, info
        if feature.startswith("static:"):
            name = feature.split(":", 1)[1]
            (st, h, body), = exchange(port, request_bytes(port, "GET", f"/{name}"))
            info["content_type"] = h.get("content-type", "")
            return expect(st, body, (static or {})[name]), info
        if feature == "echo":
            b = echo_body()
            req = request_bytes(port, "POST", "/echo", b, {"Content-Type": "application/octet-stream"})
            (st, _, body), = exchange(port, req)
            return expect(st, body, b), info
        if feature == "work":
            (st, _, body), = exchange(port, request_bytes(port, "GET", WORK_PATH))
            return expect(st, body, want_json={"n": WORK_N, "result": work_result(WORK_N)}), info
        if feature == "wait":
            (st, _, body), = exchange(port, request_bytes(port, "GET", WAIT_PATH))
            err = expect(st, body)
            if err:
                return err, info
            got = json.loads(body)
            if got.get("asked_ms") != 0 or not isinstance(got.get("waited_ms"), int):
                return f"/wait answered {got!r}, want asked_ms 0 and a waited_ms", info
            return None, info
        if feature == "cpu":
            (st, _, body), = exchange(port, request_bytes(port, "GET", CPU_PATH))
            err = expect(st, body)
            if err:
                return err, info
            got = json.loads(body)
            if got.get("cpu_ms") != 0 or got.get("tag") != "ms=0":
                return f"/cpu answered {got!r}, want cpu_ms 0 and tag ms=0", info
            return None, info
        if feature == "json":
            req = request_bytes(port, "POST", "/json", JSON_BODY, {"Content-Type": "application/json"})
            (st, _, body), = exchange(port, req)
            return expect(st, body, want_json=JSON_EXPECTED), info
    except (OSError, ValueError) as e:
        return f"{feature} check: {type(e).__name__}: {e}", info
    raise ValueError(f"unknown feature {feature!r}")
