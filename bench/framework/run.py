#!/usr/bin/env python3
"""What the framework's features cost per request, measured beside a plain route.

Builds bench/framework/app.cpp against this checkout's build/librivet.a and, when
RIVET_BASE_SRC names another checkout with a Release build in its build/, against that one too
(before/after figures of a change). Then, with the server on one core (BENCH_SERVER_CPU, 0) and
wrk on another (BENCH_CLIENT_CPU, 1), a fresh server for every run:

1. Interleaved reps (A B C A B C ...) of `wrk -c100` on /hello, /mw/hello (behind cors() and
   request_id(), sent with an Origin so CORS does its work) and /co/hello (a coroutine that does
   not suspend): server CPU µs per request (utime+stime from /proc/PID/stat over the run, divided
   by the requests wrk completed), median and min-max, and the ratios mw/plain and co/plain.
2. Waiting: /hello with no waiters, then with --waiters connections each holding a request to
   /co/wait (a timer far in the future; the server's own count of suspended handlers must equal
   them, before and after the load): req/s and CPU µs per request of both, and the server's RSS
   (VmRSS) before and with the waiters, per waiting request. For comparison, the RSS per idle
   keep-alive connection (one answered /hello each) on another fresh server: the difference is
   what a waiting handler holds beyond its connection.

Usage: python3 bench/framework/run.py [--duration S] [--reps N] [--waiters N] [--json OUT]
Standard library only. Exits non-zero when a server fails to build, start, answer or survive.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))

import stats  # noqa: E402
from bench import raise_nofile  # noqa: E402
from peers import HELLO, proc_cpu_ticks, proc_status_kb, wait_listening  # noqa: E402
from wrk_output import WrkOutputError, parse as parse_wrk  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
SERVER_CPU = os.environ.get("BENCH_SERVER_CPU", "0")
CLIENT_CPU = os.environ.get("BENCH_CLIENT_CPU", "1")
ORIGIN = "http://bench.example"
# name -> (path, request fields); the first is the baseline of the ratios.
ROUTES = {"plain": ("/hello", {}), "mw": ("/mw/hello", {"Origin": ORIGIN}),
          "co": ("/co/hello", {})}  # fmt: skip
# Issue 11's bounds for the ratios of the medians (printed beside them, not asserted).
TARGETS = {"mw": 1.10, "co": 1.05}
HOLD_MS = 3_600_000  # the waiters' timer: never fires during a run


class BenchError(RuntimeError):
    pass


def build(src: Path, out: Path) -> Path:
    """app.cpp against src's build/librivet.a; rebuilt only when it or the library changed."""
    lib = src / "build" / "librivet.a"
    if not lib.exists():
        raise BenchError(f"{lib} is missing: build {src} first (make build)")
    inputs = [HERE / "app.cpp", lib, *sorted((src / "include" / "rivet").glob("*.hpp"))]
    if out.exists() and out.stat().st_mtime >= max(p.stat().st_mtime for p in inputs):
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    # librivet links Threads, the header-only nlohmann_json, OpenSSL (TLS), libnghttp2 (HTTP/2),
    # hiredis (the shared rate limit), c-ares (the HTTP client's resolver) and, for compression(),
    # zlib, libbrotlienc and libzstd (CMakeLists.txt; rivet.pc lists the same). Older baselines
    # need fewer; the extra ones are harmless.
    cmd = ["g++", "-O2", "-std=c++20", f"-I{src / 'include'}", str(HERE / "app.cpp"), str(lib),
           "-lssl", "-lcrypto", "-lnghttp2", "-lhiredis", "-lcares", "-lz", "-lbrotlienc", "-lzstd",
           "-lpthread", "-o", str(out)]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise BenchError(f"building {out.name} against {src} failed:\n{r.stderr[-3000:]}")
    return out


class Server:
    """A fresh server on one core; `with` stops it (and fails the run if it died)."""

    def __init__(self, binary: Path):
        with socket.socket() as s:  # a free port
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        cmd = ["taskset", "-c", SERVER_CPU, str(binary), "--port", str(self.port)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
        err = wait_listening(self.proc, self.port)
        if err:
            self.proc.kill()
            raise BenchError(f"{binary.name}: {err}")

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc) -> None:
        died = self.proc.poll()
        self.proc.kill()  # a drain would wait for the held requests; nothing here needs one
        self.proc.wait()
        if died is not None and exc[0] is None:
            raise BenchError(f"the server died during the run (status {died})")

    def get(self, path: str, fields: dict | None = None) -> tuple[int, dict, bytes]:
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", headers=fields or {})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
        except urllib.error.HTTPError as e:  # an error status: the check says which
            return e.code, {}, e.read()

    def cpu_s(self) -> float:
        return proc_cpu_ticks(self.proc.pid) / CLK_TCK

    def rss(self) -> int:
        return proc_status_kb(self.proc.pid, "VmRSS") * 1024

    def waiting(self) -> int:
        return int(self.get("/co/waiting")[2])

    def check(self, path: str, fields: dict) -> None:
        """The route answers the benchmark's body; behind the middleware, with their fields."""
        status, headers, body = self.get(path, fields)
        if status != 200 or body != HELLO:
            raise BenchError(f"GET {path}: {status} {body[:80]!r}")
        mw = ("access-control-allow-origin", "x-request-id")
        if "Origin" in fields and not all(k in headers for k in mw):
            raise BenchError(f"GET {path}: the middleware's fields are missing: {headers}")

    def wrk(self, path: str, fields: dict, duration: int) -> dict:
        """wrk -c100 on `path`: requests, req/s and the server's CPU µs per request."""
        self.check(path, fields)
        cmd = ["taskset", "-c", CLIENT_CPU, "wrk", "-t1", "-c100", f"-d{duration}s", "--latency"]
        for k, v in fields.items():
            cmd += ["-H", f"{k}: {v}"]
        cpu0 = self.cpu_s()
        out = subprocess.run(cmd + [f"http://127.0.0.1:{self.port}{path}"], capture_output=True,
                             text=True, timeout=duration + 30).stdout  # fmt: skip
        cpu = self.cpu_s() - cpu0
        try:
            r = parse_wrk(out)
        except WrkOutputError as e:
            raise BenchError(f"wrk on {path}: {e}") from None
        if r["errors"] or not r["requests"]:
            raise BenchError(f"wrk on {path}: {r['requests']} requests, {r['errors']} errors")
        self.check(path, fields)
        return {"requests": r["requests"], "rps": r["requests_per_s"], "cpu_s": cpu,
                "cpu_us_per_req": cpu * 1e6 / r["requests"]}  # fmt: skip

    def hold(self, path: str, n: int, answered: bool) -> list[socket.socket]:
        """n connections with one request each, kept open; `answered`: each answer read."""
        request = f"GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n".encode()
        socks = []
        try:
            for _ in range(n):
                s = socket.create_connection(("127.0.0.1", self.port), timeout=30)
                s.sendall(request)
                socks.append(s)
            for s in socks if answered else []:
                got = b""
                while not got.endswith(HELLO):
                    chunk = s.recv(4096)
                    if not chunk:
                        raise BenchError(f"GET {path}: closed after {got[:80]!r}")
                    got += chunk
        except BaseException:
            close_all(socks)
            raise
        return socks


def close_all(socks: list[socket.socket]) -> None:
    for s in socks:
        s.close()


def wait_for_waiters(srv: Server, n: int, timeout: float = 30.0) -> int:
    deadline = time.monotonic() + timeout
    while (seen := srv.waiting()) != n and time.monotonic() < deadline:
        time.sleep(0.1)
    return seen


def waiting_run(binary: Path, n: int, duration: int) -> dict:
    with Server(binary) as srv:
        quiet = srv.wrk("/hello", {}, duration)
        rss_before = srv.rss()
        socks = srv.hold(f"/co/wait?ms={HOLD_MS}", n, answered=False)
        try:
            if (seen := wait_for_waiters(srv, n)) != n:
                raise BenchError(f"{seen} handlers waiting, not {n}")
            rss_with = srv.rss()
            busy = srv.wrk("/hello", {}, duration)
            if (seen := srv.waiting()) != n:  # none answered early, none dropped under load
                raise BenchError(f"after the load {seen} handlers waiting, not {n}")
        finally:
            close_all(socks)
    with Server(binary) as srv:  # the connection's share: idle keep-alive ones, answered
        srv.check("/hello", {})
        idle_before = srv.rss()
        socks = srv.hold("/hello", n, answered=True)
        idle_with = srv.rss()
        close_all(socks)
    return {"quiet": quiet, "busy": busy, "rss_before": rss_before, "rss_with": rss_with,
            "bytes_per_waiter": (rss_with - rss_before) / n,
            "bytes_per_idle_connection": (idle_with - idle_before) / n}  # fmt: skip


def fmt_spread(sp: dict | None, digits: int = 2) -> str:
    if not sp:
        return "n/a"
    return f"{sp['median']:.{digits}f} ({sp['min']:.{digits}f}-{sp['max']:.{digits}f})"


def fmt_ratio(r: float | None) -> str:
    return f"{r:.3f}x" if r is not None else "n/a"


def report(builds: list[str], runs: list[dict], waits: list[dict], args) -> dict:
    summary: dict = {"routes": {}, "waiting": {}}
    print(f"\nserver CPU µs per request, median (min-max) of {args.reps} reps of {args.duration}"
          f" s; wrk -t1 -c100 on CPU {CLIENT_CPU}, server (1 thread) on CPU {SERVER_CPU}")
    print(f"{'route':<22}" + "".join(f"{b:<26}" for b in builds))
    for name, (path, _) in ROUTES.items():
        row = {}
        for b in builds:
            mine = [r for r in runs if r["build"] == b and r["route"] == name]
            row[b] = {"cpu_us_per_req": stats.median_runs(mine, "cpu_us_per_req"),
                      "rps": stats.median_runs(mine, "rps")}  # fmt: skip
        summary["routes"][name] = row
        cells = [fmt_spread(row[b]["cpu_us_per_req"]) for b in builds]
        print(f"{path:<22}" + "".join(f"{c:<26}" for c in cells))
    med = {b: {n: summary["routes"][n][b]["cpu_us_per_req"]["median"] for n in ROUTES}
           for b in builds}  # fmt: skip
    for name, bound in TARGETS.items():
        ratios = {b: stats.ratio(med[b][name], med[b]["plain"]) for b in builds}
        summary[f"{name}_over_plain"] = ratios
        label = f"{name}/plain (<={bound:.2f})"
        print(f"{label:<22}" + "".join(f"{fmt_ratio(ratios[b]):<26}" for b in builds))
    if "base" in builds:
        for name, (path, _) in ROUTES.items():
            r = stats.ratio(med["current"][name], med["base"][name])
            summary["routes"][name]["current_over_base"] = r
            print(f"current/base {path:<13} {fmt_ratio(r)}")

    print(f"\n/hello while {args.waiters:,} requests wait on a timer (/co/wait), median (min-max)")
    for b in builds:
        mine = [w for w in waits if w["build"] == b]
        w = {f"{load}_{key}": stats.spread([x[load][key] for x in mine])
             for load in ("quiet", "busy") for key in ("rps", "cpu_us_per_req")}  # fmt: skip
        for key in ("rss_before", "rss_with", "bytes_per_waiter", "bytes_per_idle_connection"):
            w[key] = stats.median_runs(mine, key)
        w["busy_over_quiet_rps"] = stats.ratio(w["busy_rps"]["median"], w["quiet_rps"]["median"])
        summary["waiting"][b] = w
        print(f"  {b}: {'no waiters':<14} {fmt_spread(w['quiet_rps'], 0)} req/s, "
              f"{fmt_spread(w['quiet_cpu_us_per_req'])} µs/req")
        print(f"  {b}: {f'{args.waiters:,} waiting':<14} {fmt_spread(w['busy_rps'], 0)} req/s, "
              f"{fmt_spread(w['busy_cpu_us_per_req'])} µs/req "
              f"(req/s {fmt_ratio(w['busy_over_quiet_rps'])} of no waiters)")
        idle = w["bytes_per_idle_connection"]["median"]
        print(f"  {b}: RSS {w['rss_before']['median'] / 2**20:.1f} MiB before, "
              f"{w['rss_with']['median'] / 2**20:.1f} MiB with the waiters: "
              f"{w['bytes_per_waiter']['median']:,.0f} bytes per waiting request "
              f"(an idle keep-alive connection alone: {idle:,.0f})")
    return summary


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=int, default=5, help="seconds per wrk run (5)")
    ap.add_argument("--reps", type=int, default=5, help="interleaved repetitions (5)")
    ap.add_argument("--waiters", type=int, default=10_000, help="requests held on /co/wait (10000)")
    ap.add_argument("--json", type=Path, help="write the runs and the summary here")
    args = ap.parse_args()
    if args.duration < 1 or args.reps < 1 or args.waiters < 1:
        ap.error("--duration, --reps and --waiters must be at least 1")
    soft, _ = raise_nofile()  # for this process and, inherited, the server and wrk
    if soft < args.waiters + 1024:
        raise BenchError(f"{args.waiters:,} waiters need more open files than the limit, {soft}")

    out = REPO / "build" / "bench-framework"
    binaries = {"current": build(REPO, out / "app-current")}
    base = os.environ.get("RIVET_BASE_SRC")
    if base:
        binaries["base"] = build(Path(base).resolve(), out / "app-base")
    builds = list(binaries)
    print("builds: " + ", ".join(f"{b} ({p})" for b, p in binaries.items()), flush=True)

    runs, waits = [], []
    for rep in range(args.reps):
        for name, (path, fields) in ROUTES.items():
            for b in builds:
                with Server(binaries[b]) as srv:
                    r = srv.wrk(path, fields, args.duration)
                runs.append({"build": b, "route": name, "rep": rep, **r})
                print(f"  rep {rep + 1} {b:<7} {path:<10} {r['rps']:>9,.0f} req/s "
                      f"{r['cpu_us_per_req']:6.2f} µs/req", flush=True)
    for rep in range(args.reps):
        for b in builds:
            w = waiting_run(binaries[b], args.waiters, args.duration)
            waits.append({"build": b, "rep": rep, **w})
            print(f"  rep {rep + 1} {b:<7} waiting: {w['quiet']['rps']:,.0f} -> "
                  f"{w['busy']['rps']:,.0f} req/s, {w['bytes_per_waiter']:,.0f} B/waiter",
                  flush=True)

    summary = report(builds, runs, waits, args)
    if args.json:
        settings = {"duration_s": args.duration, "reps": args.reps, "waiters": args.waiters,
                    "server_cpu": SERVER_CPU, "client_cpu": CLIENT_CPU, "base_src": base}
        args.json.write_text(json.dumps({"settings": settings, "runs": runs, "waiting": waits,
                                         "summary": summary}, indent=1))  # fmt: skip
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as e:
        print(f"bench/framework: {e}", file=sys.stderr)
        sys.exit(1)
