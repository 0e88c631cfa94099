#!/usr/bin/env python3
"""User-space instructions per request: a count that does not move with the machine's speed.

    python3 bench/instructions.py [--depth 16] [--batches 200,1200] [--file-kib N]
                                  LABEL=BINARY [LABEL=BINARY ...]

Runs each rivet build under callgrind (valgrind) with `--threads 1 --workers 1`, sends it
`GET /hello` (or, with --file-kib, a file of that many KiB from a temporary root) in batches of
`--depth` pipelined requests over 4 connections, and reads the total
of instructions the process executed (callgrind's Ir: rivet, libc, libstdc++, the lot; the
kernel is not counted). Two runs per build, with fewer and more batches; the difference divided
by the difference in requests is the cost of one request, start-up and shutdown cancelled out.

Why: a change of a few percent in server CPU per request cannot be resolved by wrk on a machine
whose speed moves between reps (docs/BENCHMARKS.md), while this count is the same from run to run
to a few instructions. It is not time (a cache miss costs more than an add, and the kernel's
share is left out): a change is claimed from bench/run.sh's interleaved CPU figures; this says
where to look and whether a step went the right way.
"""
from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CONNECTIONS = 4


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def callgrind_total(text: str) -> int:
    """The instruction total of a callgrind output file ("summary: N" or "totals: N")."""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in ("summary", "totals") and value.split():
            return int(value.split()[0])
    raise ValueError("no summary or totals line in the callgrind output")


def per_request(small: tuple[int, int], large: tuple[int, int]) -> float:
    """(requests, instructions) of two runs: the instructions one more request costs."""
    (n1, i1), (n2, i2) = small, large
    if n2 <= n1:
        raise ValueError("the second run must send more requests than the first")
    return (i2 - i1) / (n2 - n1)


def send_batches(port: int, target: str, batches: int, depth: int, deadline_s: float) -> None:
    request = f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode() * depth
    conns = [socket.create_connection(("127.0.0.1", port), timeout=deadline_s)
             for _ in range(CONNECTIONS)]  # fmt: skip
    try:
        for b in range(batches):
            c = conns[b % CONNECTIONS]
            c.sendall(request)
            answered = 0
            while answered < depth:
                data = c.recv(1 << 20)
                if not data:
                    raise RuntimeError("the server closed a connection mid-batch")
                answered += data.count(b"HTTP/1.1 200 ")
    finally:
        for c in conns:
            c.close()


def run_once(binary: str, batches: int, depth: int, file_kib: int, deadline_s: float = 120) -> int:
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        target = "/hello"
        if file_kib:
            target = "/file.txt"
            (Path(tmp) / "file.txt").write_bytes(b"rivet\n" * (file_kib * 1024 // 6) + b"\n" *
                                                 (file_kib * 1024 % 6))
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary,
               "--port", str(port), "--bind", "127.0.0.1", "--threads", "1", "--workers", "1",
               "--root", tmp]  # fmt: skip
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            end = time.monotonic() + deadline_s
            while True:  # valgrind starts slowly: wait for the listener, not for a time
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if proc.poll() is not None:
                        sys.exit(f"instructions: {binary} exited with {proc.returncode}")
                    if time.monotonic() > end:
                        sys.exit(f"instructions: {binary} did not listen within {deadline_s} s")
                    time.sleep(0.1)
            send_batches(port, target, batches, depth, deadline_s)
        finally:
            proc.terminate()
            proc.wait(timeout=deadline_s)
        return callgrind_total(out.read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--depth", type=int, default=16, help="requests pipelined per batch")
    ap.add_argument("--batches", default="200,1200", help="batches of the two runs: FEW,MORE")
    ap.add_argument("--file-kib", type=int, default=0, help="a static file of N KiB, not /hello")
    ap.add_argument("servers", nargs="+", metavar="LABEL=BINARY")
    args = ap.parse_args()
    if not shutil.which("valgrind"):
        sys.exit("instructions: valgrind is not installed (scripts/setup.sh installs it)")
    few, more = (int(x) for x in args.batches.split(","))
    servers = [s.split("=", 1) for s in args.servers]
    if any(len(s) != 2 or not os.access(s[1], os.X_OK) for s in servers):
        sys.exit("instructions: each server is LABEL=BINARY, an executable rivet")
    what = f"a {args.file_kib} KiB file" if args.file_kib else "/hello"
    print(f"| build | instructions per GET of {what} ({args.depth} pipelined, callgrind) |")
    print("|---|---|")
    for label, binary in servers:
        runs = [(b * args.depth, run_once(binary, b, args.depth, args.file_kib))
                for b in (few, more)]
        print(f"| {label} | {per_request(runs[0], runs[1]):,.0f} |")


if __name__ == "__main__":
    main()
