#!/usr/bin/env python3
"""The cost of a rate limit shared in Redis against the instance's own (issue 24's speed check):
keep-alive GET /hello with no limit, with the local token bucket, and with the bucket in Redis
(--rate-limit-redis), side by side. One rivet pinned to one core (--threads 1), wrk and
redis-server on another, the three kinds interleaved, each run on a fresh rivet process. The
limit is set far above the load (every request takes a token, none is refused: the check is
measured, not the refusals).

    python3 bench/limit_bench.py [--reps 3] [--duration 5] [--connections 100]
                                 [--server-cpu 0] [--client-cpu 1]

Prints, per kind (median of the reps, min-max): rivet's CPU µs per request (all its threads,
/proc/PID/task/*/schedstat), Redis's CPU µs per request, requests/s and wrk's p50 and p99."""
import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from wrk_output import parse as parse_wrk

REPO = Path(__file__).resolve().parent.parent
KINDS = ("none", "local", "redis")
RATE = "1000000000"  # tokens per second: no request is ever refused
BURST = "1000000000"


def cpu_s(pid: int) -> float:
    """CPU time of all of a process's threads, in ns steps (/proc/PID/stat's ticks are 10 ms)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            with open(task / "schedstat") as f:
                total += int(f.read().split()[0])
        except FileNotFoundError:  # a thread that ended meanwhile
            pass
    return total / 1e9


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_redis(tmp: Path, cpu: str) -> tuple[subprocess.Popen, int]:
    server = shutil.which("redis-server")
    if not server:
        sys.exit("limit_bench: redis-server is not installed (scripts/setup.sh installs it)")
    port = free_port()
    proc = subprocess.Popen(["taskset", "-c", cpu, server, "--port", str(port), "--bind",
                             "127.0.0.1", "--dir", str(tmp), "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return proc, port
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            sys.exit("limit_bench: redis-server did not start")
        time.sleep(0.05)


def start_rivet(binary: str, cpu: str, flags: list[str]) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen(["taskset", "-c", cpu, binary, "--port", "0", "--bind", "127.0.0.1",
                             "--threads", "1", "--workers", "1", "--root", str(REPO / "public"),
                             *flags],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    while True:
        line = proc.stdout.readline()
        if not line:
            sys.exit(f"limit_bench: rivet exited before listening ({' '.join(flags)})")
        m = re.search(r"rivet listening on http://127\.0\.0\.1:(\d+) ", line)
        if m:
            return proc, int(m[1])


def flags_of(kind: str, redis_port: int) -> list[str]:
    if kind == "none":
        return []
    limit = ["--rate-limit", RATE, "--rate-burst", BURST]
    return limit if kind == "local" else limit + ["--rate-limit-redis", f"127.0.0.1:{redis_port}"]


def one_run(a, kind: str, redis: subprocess.Popen, redis_port: int) -> dict:
    proc, port = start_rivet(a.bin, a.server_cpu, flags_of(kind, redis_port))
    try:
        url = f"http://127.0.0.1:{port}/hello"
        # A short warm-up: connections, the script loaded in Redis (EVALSHA), the caches.
        subprocess.run(["taskset", "-c", a.client_cpu, "wrk", "-t1", "-c10", "-d1s", url],
                       check=True, capture_output=True)
        rivet_before, redis_before = cpu_s(proc.pid), cpu_s(redis.pid)
        out = subprocess.run(["taskset", "-c", a.client_cpu, "wrk", "-t1", f"-c{a.connections}",
                              f"-d{a.duration}s", "--latency", url],
                             check=True, capture_output=True, text=True).stdout
        rivet_spent, redis_spent = cpu_s(proc.pid) - rivet_before, cpu_s(redis.pid) - redis_before
        if kind == "redis":  # every check went to Redis: none fell back to the local buckets
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as r:
                m = re.search(r"^rivet_rate_limit_redis_fallbacks_total (\d+)$",
                              r.read().decode(), re.M)
            if not m or m[1] != "0":
                sys.exit(f"limit_bench: fell back to local buckets: {m[0] if m else 'no metric'}")
    finally:
        proc.terminate()
        proc.wait()
    w = parse_wrk(out)
    if "Non-2xx" in out:
        sys.exit(f"limit_bench: {kind}: refused or failed requests:\n{out}")
    n = w["requests"]
    return {"rivet_us": rivet_spent * 1e6 / n, "redis_us": redis_spent * 1e6 / n,
            "rps": w["requests_per_s"], "p50_us": w["latency_p50_us"],
            "p99_us": w["latency_p99_us"]}


def show(values: list[float], fmt: str) -> str:
    return (f"{fmt.format(statistics.median(values))} "
            f"({fmt.format(min(values))}–{fmt.format(max(values))})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--connections", type=int, default=100)
    ap.add_argument("--server-cpu", default="0")
    ap.add_argument("--client-cpu", default="1")
    ap.add_argument("--bin", default=os.environ.get("RIVET_BIN", str(REPO / "build" / "rivet")))
    a = ap.parse_args()
    if not shutil.which("wrk"):
        sys.exit("limit_bench: wrk is not installed (scripts/setup.sh installs it)")
    runs: dict[str, list[dict]] = {k: [] for k in KINDS}
    with tempfile.TemporaryDirectory() as tmp:
        redis, redis_port = start_redis(Path(tmp), a.client_cpu)
        try:
            for _ in range(a.reps):
                for kind in KINDS:
                    runs[kind].append(one_run(a, kind, redis, redis_port))
        finally:
            redis.terminate()
            redis.wait()
    print(f"GET /hello, {a.connections} connections, keep-alive; rivet on CPU {a.server_cpu}, "
          f"wrk and redis-server on CPU {a.client_cpu}; {a.reps} runs of {a.duration} s "
          "per kind, interleaved; median (min–max)")
    print("| rate limit | rivet CPU µs/request | Redis CPU µs/request | requests/s | p50 | p99 |")
    print("|---|---|---|---|---|---|")
    for kind in KINDS:
        r = runs[kind]
        cols = [show([x["rivet_us"] for x in r], "{:.2f}"),
                show([x["redis_us"] for x in r], "{:.2f}") if kind == "redis" else "–",
                show([x["rps"] for x in r], "{:,.0f}"),
                show([x["p50_us"] / 1000 for x in r], "{:.2f} ms"),
                show([x["p99_us"] / 1000 for x in r], "{:.2f} ms")]
        print(f"| {kind} | " + " | ".join(cols) + " |")


if __name__ == "__main__":
    main()
