#!/usr/bin/env python3
"""Bytes of server memory per idle HTTP/2 connection.

    python3 bench/h2_idle_memory.py --port PORT --pid PID [--ca ca.pem] [-n 2000] [--json]

Opens n HTTP/2 connections to 127.0.0.1:PORT: over TLS with ALPN h2 when --ca is given (the
certificate verified for "localhost"), else h2c by prior knowledge. On each: the client preface
and an empty SETTINGS frame; the server's SETTINGS read and acknowledged, the server's
acknowledgement of ours awaited, then a PING and its answer (so the server has handled our
acknowledgement too). No request is sent; the connections are left idle. The server's VmRSS
(/proc/PID/status) and Pss (/proc/PID/smaps_rollup) before (after a warm-up of 200 such
connections, closed again) and after, each divided by n, are the figures. bench/h2_bench.py runs
it against rivet, nginx and h2o.
"""
from __future__ import annotations

import argparse
import json
import resource
import socket
import ssl
import struct
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SETTINGS, PING, GOAWAY = 0x4, 0x6, 0x7
ACK = 0x1
PING_DATA = b"rivetbnc"


def frame(kind: int, flags: int, payload: bytes = b"", stream: int = 0) -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def recv_exact(s: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = s.recv(n - len(out))
        if not chunk:
            raise RuntimeError(f"the server closed the connection ({len(out)} of {n} bytes read)")
        out += chunk
    return out


def read_frame(s: socket.socket) -> tuple[int, int, bytes]:
    head = recv_exact(s, 9)
    length = int.from_bytes(head[:3], "big")
    return head[3], head[4], recv_exact(s, length)


def settle(s: socket.socket) -> None:
    """The SETTINGS exchange both ways, then a PING round trip."""
    s.sendall(PREFACE + frame(SETTINGS, 0))
    got_settings = got_ack = False
    while not (got_settings and got_ack):
        kind, flags, payload = read_frame(s)
        if kind == GOAWAY:
            raise RuntimeError(f"GOAWAY from the server: {payload[:64]!r}")
        if kind == SETTINGS and flags & ACK:
            got_ack = True
        elif kind == SETTINGS:
            got_settings = True
            s.sendall(frame(SETTINGS, ACK))
    s.sendall(frame(PING, 0, PING_DATA))
    while True:  # frames the server sends after its SETTINGS (WINDOW_UPDATE) are skipped
        kind, flags, payload = read_frame(s)
        if kind == PING and flags & ACK and payload == PING_DATA:
            return
        if kind == GOAWAY:
            raise RuntimeError(f"GOAWAY from the server: {payload[:64]!r}")


def open_idle(port: int, ctx: ssl.SSLContext | None, n: int) -> list[socket.socket]:
    conns = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        # Our small writes back to back (the SETTINGS ACK, the PING) must not wait for the
        # server's delayed ACK (40 ms each).
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if ctx:
            s = ctx.wrap_socket(s, server_hostname="localhost")
            if s.selected_alpn_protocol() != "h2":
                raise RuntimeError(f"ALPN chose {s.selected_alpn_protocol()!r}, not h2")
        settle(s)
        conns.append(s)
    return conns


def memory_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, Pss) of the process in KiB."""
    rss = pss = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                pss = int(line.split()[1])
    return rss, pss


def measure(port: int, pid: int, ca: str | None, n: int) -> dict:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n + 500:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 1000), hard))
    ctx = None
    if ca:
        ctx = ssl.create_default_context(cafile=ca)
        ctx.set_alpn_protocols(["h2"])
    for s in open_idle(port, ctx, 200):  # warm-up: allocator arenas, session cache
        s.close()
    time.sleep(0.5)
    rss0, pss0 = memory_kib(pid)
    conns = open_idle(port, ctx, n)
    time.sleep(0.5)
    rss1, pss1 = memory_kib(pid)
    versions = sorted({s.version() for s in conns if isinstance(s, ssl.SSLSocket)})
    for s in conns:
        s.close()
    return {"connections": n, "rss_before_kib": rss0, "rss_after_kib": rss1,
            "pss_before_kib": pss0, "pss_after_kib": pss1,
            "bytes_per_connection": (rss1 - rss0) * 1024 / n,
            "pss_bytes_per_connection": (pss1 - pss0) * 1024 / n,
            "versions": versions or ["h2c"]}


def main() -> None:
    ap = argparse.ArgumentParser(description="bytes of server memory per idle HTTP/2 connection")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--ca", help="TLS with ALPN h2, verified against this CA; h2c without it")
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    r = measure(a.port, a.pid, a.ca, a.n)
    if a.json:
        print(json.dumps(r))
    else:
        print(f"{r['bytes_per_connection']:.0f} bytes of RSS ({r['pss_bytes_per_connection']:.0f} "
              f"of PSS) per idle HTTP/2 connection ({r['connections']} connections, "
              f"{', '.join(r['versions'])})")


if __name__ == "__main__":
    main()
