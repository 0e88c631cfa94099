#!/usr/bin/env python3
"""HTTP/2: rivet against nginx and h2o, per core (`bash bench/run.sh --http2`,
docs/BENCHMARKS.md "HTTP/2, per core").

Servers (each started fresh for every run, pinned to BENCH_SERVER_CPU, one thread or process,
no access log), each with an h2 TLS listener (ALPN h2, http/1.1 kept) and an h2c (prior
knowledge) plain listener, the same certificate (made for the run by tests/e2e/tls_certs.py),
the same document root and the same `/hello` body (`Hello, World!`):
    rivet       build/rivet --threads 1 --workers 1 --access-log off (HTTP/2 is on by default)
    rivet_base  the build RIVET_BASE_BIN names (--servers rivet,rivet_base,...): before/after
    nginx       Debian nginx-light (--with-http_v2_module): bench/peers/nginx_h2.conf
    h2o         Debian h2o 2.2.5: bench/peers/h2o_h2.conf

Load: h2load (nghttp2-client) pinned to BENCH_CLIENT_CPU, one thread, offering only
TLS_AES_128_GCM_SHA256 in TLS 1.3 (its own first choice) so that every server encrypts with the
same cipher. Scenarios:
    h2_hello_c100_m10        GET /hello over TLS, 100 connections × 10 concurrent streams
    h2_hello_c100_m1         the same with 1 stream per connection
    h2_static_1k_c100_m10    GET of a 1 KiB file over TLS, 100 × 10
    h2_static_100k_c100_m10  GET of a 100 KiB file over TLS, 100 × 10
    h2c_hello_c100_m10       GET /hello over h2c (prior knowledge), 100 × 10
    h2_idle, h2c_idle        bench/h2_idle_memory.py: server RSS and PSS growth per idle h2
                             connection (after the SETTINGS exchange, no request), TLS and h2c
Each load run is checked first and after (curl over HTTP/2: the exact body); h2load must report
the h2 (or h2c) protocol and no failed request. The figure is the server's CPU (utime+stime of
its processes from /proc) over h2load's main duration (after a warm-up, so the connections'
handshakes are not in it) ÷ the requests h2load completed in it. Runs are interleaved (rivet,
nginx, h2o, rivet, ...). Raw results: bench/results/<timestamp>-http2.json; the table to stdout.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(REPO / "tests" / "e2e"))

from bench import cpu_stat, wait_quiet  # noqa: E402
from h2_report import report  # noqa: E402
from h2load_output import H2loadOutputError, parse as parse_h2load  # noqa: E402
from peers import HELLO, PEERS, STATIC_FILES, Ports, Server, log, run_text, static_content  # noqa: E402
from tls_certs import TlsCerts  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
SERVERS = ("rivet", "nginx", "h2o")  # the default set
KNOWN_SERVERS = ("rivet", "rivet_base", "nginx", "h2o")
TLS13_CIPHER = "TLS_AES_128_GCM_SHA256"
SCENARIOS = {
    "h2_hello_c100_m10": {"tls": True, "path": "/hello", "c": 100, "m": 10},
    "h2_hello_c100_m1": {"tls": True, "path": "/hello", "c": 100, "m": 1},
    "h2_static_1k_c100_m10": {"tls": True, "path": "/1k.txt", "c": 100, "m": 10},
    "h2_static_100k_c100_m10": {"tls": True, "path": "/100k.txt", "c": 100, "m": 10},
    "h2c_hello_c100_m10": {"tls": False, "path": "/hello", "c": 100, "m": 10},
    "h2_idle": {"tls": True, "idle": True},
    "h2c_idle": {"tls": False, "idle": True},
}
BODIES = {"/hello": HELLO, **{f"/{name}": static_content(size) for name, size in STATIC_FILES.items()}}


class Fleet:
    def __init__(self, tmp: Path, args):
        self.tmp, self.args = tmp, args
        self.ports = Ports(args.port_base)
        self.logs = tmp / "logs"
        self.logs.mkdir()
        self.root = tmp / "www"
        self.root.mkdir()
        for path, body in BODIES.items():
            (self.root / path.lstrip("/")).write_bytes(body)
        self.certs = TlsCerts(tmp / "certs")
        self.rivet_bin = Path(os.environ.get("RIVET_BIN", REPO / "build" / "rivet"))
        self.rivet_base_bin = Path(os.environ.get("RIVET_BASE_BIN", "") or "/nonexistent")
        self.nginx_bin = shutil.which("nginx") or "/usr/sbin/nginx"
        self.h2o_bin = shutil.which("h2o") or "/usr/bin/h2o"
        self.nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[0]

    def _conf(self, name: str, file: str, port: int, tls_port: int) -> Path:
        root_user = os.geteuid() == 0  # as root, the workers would switch to `nobody`
        subs = {"@PREFIX@": str(self.tmp), "@PORT@": str(port), "@TLS_PORT@": str(tls_port),
                "@NOFILE@": str(self.nofile), "@ROOT@": str(self.root),
                "@CERT@": str(self.certs.server.cert), "@KEY@": str(self.certs.server.key),
                "@USER@": ("user root;" if name == "nginx" else "user: root") if root_user else ""}
        text = (PEERS / file).read_text()
        for k, v in subs.items():
            text = text.replace(k, v)
        conf = self.tmp / f"{name}-h2-{port}.conf"
        conf.write_text(text)
        return conf

    def command(self, name: str, port: int, tls_port: int) -> list[str]:
        pin = ["taskset", "-c", str(self.args.server_cpu)]
        if name in ("rivet", "rivet_base"):
            leaf = self.certs.server
            binary = self.rivet_bin if name == "rivet" else self.rivet_base_bin
            return pin + [str(binary), "--port", str(port), "--bind", "127.0.0.1", "--threads",
                          "1", "--workers", "1", "--root", str(self.root), "--access-log", "off",
                          "--tls-port", str(tls_port), "--tls-cert", str(leaf.cert),
                          "--tls-key", str(leaf.key)]
        if name == "nginx":
            conf = self._conf(name, "nginx_h2.conf", port, tls_port)
            return pin + [self.nginx_bin, "-p", str(self.tmp), "-e",
                          str(self.tmp / "error-h2.log"), "-c", str(conf)]
        if name == "h2o":
            return pin + [self.h2o_bin, "-c", str(self._conf(name, "h2o_h2.conf", port, tls_port))]
        raise ValueError(name)

    def start(self, name: str) -> tuple[Server, int]:
        """The server and its plain (h2c) port; Server.port is its TLS port."""
        port, tls_port = self.ports.take(), self.ports.take()
        srv = Server(name, tls_port, self.command(name, port, tls_port), self.logs)
        err = srv.start()
        if err:
            raise RuntimeError(f"{name} failed to start: {err}")
        return srv, port

    def versions(self, servers: list[str]) -> dict:
        v = {}
        if "rivet" in servers:
            v["rivet"] = run_text([str(self.rivet_bin), "--version"])
        if "rivet_base" in servers:
            v["rivet_base"] = run_text([str(self.rivet_base_bin), "--version"]) + f" ({self.rivet_base_bin})"
        if "nginx" in servers:
            v["nginx"] = run_text([self.nginx_bin, "-v"]).splitlines()[0]
        if "h2o" in servers:
            v["h2o"] = run_text([self.h2o_bin, "--version"]).splitlines()[0]
        v["h2load"] = run_text(["h2load", "--version"])
        v["openssl"] = run_text(["openssl", "version"])
        return v


def url(sc: dict, tls_port: int, port: int, host: str = "127.0.0.1") -> str:
    return f"https://{host}:{tls_port}{sc['path']}" if sc["tls"] else f"http://{host}:{port}{sc['path']}"


def check(fleet: Fleet, sc: dict, tls_port: int, port: int) -> None:
    """One GET with curl over HTTP/2 (ALPN h2, or h2c by prior knowledge): the exact body."""
    path = sc.get("path", "/hello")
    want = BODIES[path]
    if sc["tls"]:
        cmd = ["curl", "-sS", "--http2", "--cacert", str(fleet.certs.ca), "--resolve",
               f"localhost:{tls_port}:127.0.0.1", url({**sc, "path": path}, tls_port, port, "localhost")]
    else:
        cmd = ["curl", "-sS", "--http2-prior-knowledge", url({**sc, "path": path}, tls_port, port)]
    out = fleet.tmp / "check-body"
    p = subprocess.run(cmd + ["-o", str(out), "-w", "%{http_version} %{http_code}"],
                       capture_output=True, text=True, timeout=20)
    got = out.read_bytes() if out.exists() else b""
    if p.returncode != 0 or p.stdout != "2 200" or got != want:
        raise RuntimeError(f"GET {path} over {'h2' if sc['tls'] else 'h2c'}: curl said "
                           f"{p.stdout!r} {p.stderr[-300:]!r}, body {len(got)} bytes "
                           f"{'equal' if got == want else 'NOT equal'} to the {len(want)} expected")


def h2load(fleet: Fleet, sc: dict, srv: Server, port: int, out_path: Path) -> dict:
    """Runs h2load; the server's CPU over its main duration (or its whole run with -n)."""
    a = fleet.args
    cmd = ["taskset", "-c", str(a.client_cpu), "h2load", "-t1", f"-c{sc['c']}", f"-m{sc['m']}"]
    if sc["tls"]:
        cmd += [f"--tls13-ciphers={TLS13_CIPHER}"]
    cmd += (["-n", str(a.requests)] if a.requests else
            ["-D", str(a.duration), f"--warm-up-time={a.warmup}"])
    cmd.append(url(sc, srv.port, port))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    watchdog = threading.Timer(a.duration + a.warmup + 120, proc.kill)
    watchdog.start()
    perf = None
    lines, cpu0, cpu1 = [], None, None
    busy0 = cpu_stat((a.server_cpu, a.client_cpu))["busy"]
    srv0, t0, kids0 = srv.cpu_ticks(), time.monotonic(), _children_cpu()
    if a.requests:
        cpu0 = (srv0, t0)
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("Warm-up phase is over"):
            cpu0 = (srv.cpu_ticks(), time.monotonic())
            if a.perf_dir and srv.name == "rivet":
                perf = _perf_start(a.perf_dir, srv, out_path.stem)
        elif line.startswith("Main benchmark duration is over"):
            cpu1 = (srv.cpu_ticks(), time.monotonic())
            if perf:
                perf.send_signal(signal.SIGINT)
    proc.wait()
    watchdog.cancel()
    if perf:
        perf.wait(timeout=60)
    if a.requests:
        cpu1 = (srv.cpu_ticks(), time.monotonic())
    wall = time.monotonic() - t0
    text = "".join(lines)
    out_path.write_text(" ".join(cmd) + "\n" + text)
    res = parse_h2load(text)
    if cpu0 is None or cpu1 is None:
        raise RuntimeError(f"h2load's warm-up or main duration markers missing: {text[-300:]!r}")
    ticks = cpu1[0] - cpu0[0]
    busy = (cpu_stat((a.server_cpu, a.client_cpu))["busy"] - busy0) / CLK_TCK
    others = busy - (srv.cpu_ticks() - srv0) / CLK_TCK - (_children_cpu() - kids0)
    res.update({"window_s": round(cpu1[1] - cpu0[1], 3), "server_cpu_s": ticks / CLK_TCK,
                "cpu_us_per_request": ticks / CLK_TCK * 1e6 / res["requests"] if res["requests"] else None,
                "noise_cores": round(max(0.0, others) / wall, 3), "perf": bool(perf)})
    want = "h2" if sc["tls"] else "h2c"
    if res["protocol"] != want:
        raise RuntimeError(f"h2load spoke {res['protocol']!r}, not {want}")
    return res


def _perf_start(perf_dir: str, srv: Server, tag: str) -> subprocess.Popen:
    Path(perf_dir).mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(["perf", "record", "-e", "cpu-clock", "-g", "-p", str(srv.pid), "-o",
                             str(Path(perf_dir) / f"{tag}.perf.data")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _children_cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def idle(fleet: Fleet, sc: dict, srv: Server, port: int) -> dict:
    cmd = [sys.executable, str(BENCH_DIR / "h2_idle_memory.py"), "--pid", str(srv.pid), "-n",
           str(fleet.args.idle), "--json"]
    cmd += ["--port", str(srv.port), "--ca", str(fleet.certs.ca)] if sc["tls"] else ["--port", str(port)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f"h2_idle_memory failed: {r.stderr[-500:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def one_run(fleet: Fleet, name: str, sc_name: str, rep: int) -> dict:
    sc = SCENARIOS[sc_name]
    srv, port = fleet.start(name)
    rec = {"server": name, "scenario": sc_name, "rep": rep}
    try:
        check(fleet, sc, srv.port, port)
        if sc.get("idle"):
            rec.update(idle(fleet, sc, srv, port))
        else:
            wait_quiet((fleet.args.server_cpu, fleet.args.client_cpu), fleet.args.quiet_wait)
            rec.update(h2load(fleet, sc, srv, port, fleet.logs / f"{name}-{sc_name}-{rep}.txt"))
            if rec["errors"]:
                rec["error"] = f"{rec['errors']} requests failed: {rec['status']}"
        check(fleet, sc, srv.port, port)  # still answering, and correctly
        if not srv.alive():
            raise RuntimeError(f"{name} died during the run")
    finally:
        srv.stop()
    return rec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--http2", action="store_true", help="(from bench/run.sh)")
    ap.add_argument("--smoke", action="store_true",
                    help="every scenario once, 2,000 requests (-n) or 100 idle connections")
    ap.add_argument("--reps", type=int, default=int(os.environ.get("BENCH_REPS", "2")))
    ap.add_argument("--duration", type=int, default=int(os.environ.get("BENCH_DURATION", "3")))
    ap.add_argument("--warmup", type=int, default=1, help="h2load's warm-up before the window, s")
    ap.add_argument("--requests", type=int, default=0, help="h2load -n N instead of a duration")
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--servers", default=",".join(SERVERS),
                    help="rivet,nginx,h2o by default; rivet_base: the build RIVET_BASE_BIN names")
    ap.add_argument("--idle", type=int, default=int(os.environ.get("BENCH_IDLE_CONNECTIONS", "2000")))
    ap.add_argument("--server-cpu", type=int, default=int(os.environ.get("BENCH_SERVER_CPU", "0")))
    ap.add_argument("--client-cpu", type=int, default=int(os.environ.get("BENCH_CLIENT_CPU", "1")))
    ap.add_argument("--quiet-wait", type=float, default=float(os.environ.get("BENCH_QUIET_WAIT", "3")))
    ap.add_argument("--perf-dir", help="perf record -e cpu-clock -g of rivet over each window, "
                    "into this folder (the CPU figures of those runs include perf's cost)")
    ap.add_argument("--port-base", type=int, default=18700)
    args = ap.parse_args()
    if args.smoke:
        args.reps, args.requests, args.idle, args.quiet_wait = 1, 2000, 100, 0
    scenarios = [s for s in args.scenarios.split(",") if s]
    servers = [s for s in args.servers.split(",") if s]
    for s in scenarios:
        if s not in SCENARIOS:
            raise SystemExit(f"unknown scenario {s!r} (known: {', '.join(SCENARIOS)})")
    for s in servers:
        if s not in KNOWN_SERVERS:
            raise SystemExit(f"unknown server {s!r} (known: {', '.join(KNOWN_SERVERS)})")
    if "rivet_base" in servers and not os.access(os.environ.get("RIVET_BASE_BIN", "") or "/nonexistent", os.X_OK):
        raise SystemExit("rivet_base: set RIVET_BASE_BIN to the rivet binary to compare with")
    if not shutil.which("h2load"):
        raise SystemExit("h2load not installed (nghttp2-client; bash scripts/setup.sh)")
    runs = []
    with tempfile.TemporaryDirectory(prefix="rivet-h2-bench-") as tmp:
        fleet = Fleet(Path(tmp), args)
        for rep in range(args.reps):
            for sc in scenarios:
                for name in servers:  # interleaved: drift hits every server alike
                    log(f"h2 bench: {sc} {name} run {rep + 1}/{args.reps}")
                    try:
                        runs.append(one_run(fleet, name, sc, rep))
                    except (H2loadOutputError, ValueError, RuntimeError, OSError,
                            subprocess.TimeoutExpired) as e:
                        runs.append({"server": name, "scenario": sc, "rep": rep, "error": str(e)})
                    if "error" in runs[-1]:
                        log(f"h2 bench: {sc} {name}: {runs[-1]['error']}")
        versions = fleet.versions(servers)
    out_dir = BENCH_DIR / "results"
    out_dir.mkdir(exist_ok=True)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    command = os.environ.get("BENCH_COMMAND", "bash bench/run.sh --http2")
    (out_dir / f"{stamp}-http2.json").write_text(json.dumps(
        {"command": command, "versions": versions, "runs": runs}, indent=1))
    print(report(runs, command, versions))
    if any("error" in r for r in runs):
        sys.exit(1)


if __name__ == "__main__":
    main()
