#!/usr/bin/env python3
"""Start-up memory: a server's RSS once it listens, before any request.

    python3 bench/start_rss.py [--reps 5] [--threads 1] LABEL=BINARY [LABEL=BINARY ...]

Starts each binary in turn, interleaved, `--reps` times (`--port P --bind 127.0.0.1 --threads 1
--workers 1`, as issue 26 asks to measure), waits until its port accepts a connection (closed
again at once, with no request), and reads VmRSS, RssAnon and RssFile from /proc/PID/status.
Prints the medians as a Markdown table, in KiB. RssFile is mostly shared with the page cache
(the binary's and libraries' text); RssAnon is what the process alone holds.
"""
from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import tempfile
import time

FIELDS = ("VmRSS", "RssAnon", "RssFile")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def memory_kib(pid: int) -> dict[str, int]:
    got = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            name, _, value = line.partition(":")
            if name in FIELDS:
                got[name] = int(value.split()[0])
    return got


def accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def measure(binary: str, threads: int, deadline_s: float = 60) -> dict[str, int]:
    port = free_port()
    with tempfile.TemporaryDirectory() as root:
        cmd = [binary, "--port", str(port), "--bind", "127.0.0.1", "--threads", str(threads),
               "--workers", "1", "--root", root]  # fmt: skip
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            end = time.monotonic() + deadline_s
            while not accepts(port):
                if proc.poll() is not None:
                    sys.exit(f"start_rss: {binary} exited with status {proc.returncode}")
                if time.monotonic() > end:
                    sys.exit(f"start_rss: {binary} did not listen within {deadline_s} s")
                time.sleep(0.05)
            return memory_kib(proc.pid)
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("servers", nargs="+", metavar="LABEL=BINARY")
    args = ap.parse_args()
    servers = [s.split("=", 1) for s in args.servers]
    if any(len(s) != 2 for s in servers):
        sys.exit("start_rss: each server is LABEL=BINARY")
    runs: dict[str, list[dict[str, int]]] = {label: [] for label, _ in servers}
    for _ in range(args.reps):
        for label, binary in servers:
            runs[label].append(measure(binary, args.threads))
    print(f"| KiB after start (median of {args.reps}, --threads {args.threads}) | "
          + " | ".join(FIELDS) + " |")
    print("|---|" + "---|" * len(FIELDS))
    for label, got in runs.items():
        cells = []
        for field in FIELDS:
            values = [g[field] for g in got]
            cells.append(f"{statistics.median(values):,.0f} ({min(values):,}–{max(values):,})")
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
