#!/usr/bin/env python3
"""Bytes of server memory per idle keep-alive TLS connection.

    python3 bench/tls_idle_memory.py --port PORT --pid PID --ca ca.pem [-n 2000] [--json]

Opens n TLS connections to 127.0.0.1:PORT (certificate verified against --ca for "localhost"),
sends one GET /hello on each and reads the answer, then leaves them idle; the server's VmRSS
(/proc/PID/status) before (after a warm-up of 200 connections, closed again) and after, divided
by n, is the figure. bench/tls_bench.py runs it against rivet and nginx with the same
certificate; tests/e2e/test_tls_ops.py asserts only a generous bound.
"""
from __future__ import annotations

import argparse
import json
import resource
import socket
import ssl
import time

REQUEST = b"GET /hello HTTP/1.1\r\nHost: localhost\r\n\r\n"


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def open_idle(port: int, ctx: ssl.SSLContext, n: int) -> list[ssl.SSLSocket]:
    conns = []
    for _ in range(n):
        s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=30),
                            server_hostname="localhost")
        s.sendall(REQUEST)
        got = b""
        while b"Hello, World!" not in got:
            chunk = s.recv(4096)
            if not chunk:
                raise RuntimeError(f"closed after {got!r}")
            got += chunk
        conns.append(s)
    return conns


def measure(port: int, pid: int, ca: str, n: int) -> dict:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n + 500:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 1000), hard))
    ctx = ssl.create_default_context(cafile=ca)
    for s in open_idle(port, ctx, 200):  # warm-up: allocator arenas, session cache
        s.close()
    time.sleep(0.5)
    before = rss_kib(pid)
    conns = open_idle(port, ctx, n)
    time.sleep(0.5)
    after = rss_kib(pid)
    versions = {s.version() for s in conns}
    for s in conns:
        s.close()
    return {"connections": n, "rss_before_kib": before, "rss_after_kib": after,
            "bytes_per_connection": (after - before) * 1024 / n, "versions": sorted(versions)}


def main() -> None:
    ap = argparse.ArgumentParser(description="bytes of server RSS per idle TLS connection")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--ca", required=True)
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    r = measure(a.port, a.pid, a.ca, a.n)
    if a.json:
        print(json.dumps(r))
    else:
        print(f"{r['bytes_per_connection']:.0f} bytes per idle TLS connection "
              f"({r['connections']} connections, {', '.join(r['versions'])})")


if __name__ == "__main__":
    main()
