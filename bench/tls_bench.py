#!/usr/bin/env python3
"""rivet against nginx over TLS, per core (`bash bench/run.sh --tls`, docs/BENCHMARKS.md).

Both servers get the same ECDSA P-256 certificate chain (made for the run by
tests/e2e/tls_certs.py with the `openssl` command line), link the same OpenSSL (Debian's), offer
TLS 1.2 and 1.3 and resume sessions (nginx: `ssl_session_cache shared` and tickets, see
bench/peers/nginx_tls.conf; rivet: its defaults, tickets and a session cache). The server is
pinned to one core, the load generator to another; runs are interleaved (rivet, nginx, rivet,
nginx, ...), each on a fresh server.

Scenarios:
    tls_hello_c100        wrk, keep-alive GET /hello over TLS, 100 connections
    tls_full_close        tests/e2e/go/tlsclient -load -resume=false: every request on a new
                          connection, a full handshake each (32 clients)
    tls_resumed_close     the same with a shared client session cache: every handshake after
                          each client's first resumes
    tls_close_wrk_c100    wrk, GET /hello with `Connection: close`, 100 connections: wrk offers
                          the session of its previous connection, so it resumes where the
                          server's tickets allow it (a TLS 1.3 ticket is used once)
    tls_static_100k_c100  wrk, keep-alive GET of a 100 KiB file over TLS, 100 connections
    tls_idle              bench/tls_idle_memory.py: bytes of RSS per idle keep-alive TLS
                          connection (after one request each)

Per run: requests/s, the server's CPU (utime+stime from /proc) per request in µs, and the
cipher the server negotiated with an OpenSSL client (the same for both, or the report says
so). Raw results: bench/results/<timestamp>-tls.json; the markdown table goes to stdout.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(REPO / "tests" / "e2e"))

import stats  # noqa: E402
from peers import HELLO, PEERS, Ports, Server, log, run_text, static_content  # noqa: E402
from tls_certs import TlsCerts  # noqa: E402
from wrk_output import WrkOutputError, parse as parse_wrk  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
SERVERS = ("rivet", "nginx")  # the default set
# rivet_base: the build RIVET_BASE_BIN names, beside this one (--servers rivet,rivet_base,nginx)
# for before/after figures of a change from one interleaved run.
KNOWN_SERVERS = ("rivet", "rivet_base", "nginx")
SCENARIOS = ("tls_hello_c100", "tls_full_close", "tls_resumed_close", "tls_close_wrk_c100",
             "tls_static_100k_c100", "tls_idle")
GO_SCENARIOS = ("tls_full_close", "tls_resumed_close")


class Fleet:
    def __init__(self, tmp: Path, args):
        self.tmp, self.args = tmp, args
        self.ports = Ports(args.port_base)
        self.logs = tmp / "logs"
        self.logs.mkdir()
        self.root = tmp / "www"
        self.root.mkdir()
        (self.root / "100k.txt").write_bytes(static_content(100 * 1024))
        (self.root / "hello").write_bytes(HELLO)
        self.certs = TlsCerts(tmp / "certs")
        self.rivet_bin = Path(os.environ.get("RIVET_BIN", REPO / "build" / "rivet"))
        self.rivet_base_bin = Path(os.environ.get("RIVET_BASE_BIN", "") or "/nonexistent")
        self.nginx_bin = shutil.which("nginx") or "/usr/sbin/nginx"
        self.nofile = __import__("resource").getrlimit(__import__("resource").RLIMIT_NOFILE)[0]
        self.go_client = self._build_go()

    def _build_go(self) -> Path | None:
        go = shutil.which("go")
        if not go:
            log("tls bench: go not installed: the handshake scenarios are skipped (scripts/setup.sh)")
            return None
        out = self.tmp / "tlsclient"
        r = subprocess.run([go, "build", "-o", str(out), "."], cwd=REPO / "tests/e2e/go",
                           capture_output=True, text=True)
        if r.returncode != 0:
            log(f"tls bench: go build failed: {r.stderr[-400:]}")
            return None
        return out

    def command(self, name: str, port: int) -> list[str]:
        pin = ["taskset", "-c", str(self.args.server_cpu)]
        leaf = self.certs.server
        if name in ("rivet", "rivet_base"):
            binary = self.rivet_bin if name == "rivet" else self.rivet_base_bin
            return pin + [str(binary), "--port", str(self.ports.take()), "--bind",
                          "127.0.0.1", "--threads", "1", "--workers", "1", "--root",
                          str(self.root), "--tls-cert", str(leaf.cert), "--tls-key",
                          str(leaf.key), "--tls-port", str(port)]
        subs = {"@PREFIX@": str(self.tmp), "@PORT@": str(port), "@NOFILE@": str(self.nofile),
                "@ROOT@": str(self.root), "@MASTER@": "off", "@WORKERS@": "1",
                "@CERT@": str(leaf.cert), "@KEY@": str(leaf.key),
                "@USER@": "user root;" if os.geteuid() == 0 else ""}
        text = (PEERS / "nginx_tls.conf").read_text()
        for k, v in subs.items():
            text = text.replace(k, v)
        conf = self.tmp / f"nginx-tls-{port}.conf"
        conf.write_text(text)
        return pin + [self.nginx_bin, "-p", str(self.tmp), "-e", str(self.tmp / "error-tls.log"),
                      "-c", str(conf)]

    def start(self, name: str) -> Server:
        port = self.ports.take()
        srv = Server(name, port, self.command(name, port), self.logs)
        err = srv.start()
        if err:
            raise RuntimeError(f"{name} failed to start: {err}")
        return srv


def check(fleet: Fleet, port: int, path: str, want: bytes) -> tuple[str, str]:
    """GET over TLS with curl (the CA only): the exact body; and the negotiated version and
    cipher, from openssl s_client."""
    p = subprocess.run(["curl", "-sS", "--cacert", str(fleet.certs.ca), "--resolve",
                        f"localhost:{port}:127.0.0.1", f"https://localhost:{port}{path}"],
                       capture_output=True, timeout=20)
    if p.returncode != 0 or p.stdout != want:
        raise RuntimeError(f"port {port}: GET {path} over TLS answered wrongly: "
                         f"{p.stderr[-300:]!r} {p.stdout[:100]!r}")
    out = run_text(["sh", "-c", f"openssl s_client -connect 127.0.0.1:{port} "
                    f"-servername localhost </dev/null"])
    m = re.search(r"New, (TLSv[\d.]+), Cipher is (\S+)", out)
    return (m[1], m[2]) if m else ("?", "?")


def load(fleet: Fleet, sc: str, port: int, seconds: int, out_path: Path) -> dict:
    client = ["taskset", "-c", str(fleet.args.client_cpu)]
    url = f"https://127.0.0.1:{port}"
    if sc in GO_SCENARIOS:
        cmd = client + [str(fleet.go_client), "-url", f"https://localhost:{port}/hello", "-ca",
                        str(fleet.certs.ca), "-load", f"{seconds}s", "-conc", "32",
                        f"-resume={'true' if sc == 'tls_resumed_close' else 'false'}"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60)
        out_path.write_text(r.stdout + r.stderr)
        res = json.loads(r.stdout.strip().splitlines()[-1])
        return {"requests": res["requests"], "errors": res["errors"],
                "resumed": res["resumed"], "requests_per_s": res["per_second"]}
    wrk_args = {"tls_hello_c100": ("/hello", []),
                "tls_close_wrk_c100": ("/hello", ["header=Connection: close"]),
                "tls_static_100k_c100": ("/100k.txt", [])}[sc]
    cmd = client + ["wrk", "-t1", "-c100", f"-d{seconds}s", "--latency", "-s",
                    str(BENCH_DIR / "wrk.lua"), url + wrk_args[0]]
    if wrk_args[1]:
        cmd += ["--", *wrk_args[1]]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60)
    out_path.write_text(r.stdout + r.stderr)
    w = parse_wrk(r.stdout + r.stderr)
    return {"requests": w["requests"], "errors": w["errors"],
            "requests_per_s": w["requests_per_s"], "latency_p99_us": w["latency_p99_us"]}


def idle(fleet: Fleet, srv: Server, port: int) -> dict:
    r = subprocess.run([sys.executable, str(BENCH_DIR / "tls_idle_memory.py"), "--port",
                        str(port), "--pid", str(srv.pid), "--ca", str(fleet.certs.ca), "-n",
                        str(fleet.args.idle), "--json"], capture_output=True, text=True,
                       timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f"tls_idle_memory failed: {r.stderr[-500:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def one_run(fleet: Fleet, name: str, sc: str, rep: int) -> dict:
    srv = fleet.start(name)
    port = srv.port
    rec = {"server": name, "scenario": sc, "rep": rep}
    try:
        path, want = ("/100k.txt", static_content(100 * 1024)) if "static" in sc else ("/hello", HELLO)
        rec["version"], rec["cipher"] = check(fleet, port, path, want)
        if sc == "tls_idle":
            rec.update(idle(fleet, srv, port))
            return rec
        cpu0, t0 = srv.cpu_ticks(), time.monotonic()
        rec.update(load(fleet, sc, port, fleet.args.duration, fleet.logs / f"{name}-{sc}-{rep}.txt"))
        time.sleep(0.3)  # the closing of the generator's connections belongs to the run
        ticks = srv.cpu_ticks() - cpu0
        rec["wall_s"] = time.monotonic() - t0
        rec["server_cpu_s"] = ticks / CLK_TCK
        rec["cpu_us_per_request"] = (ticks / CLK_TCK * 1e6 / rec["requests"]
                                     if rec["requests"] else None)
        rec["alive_after"] = srv.alive()
    finally:
        srv.stop()
    return rec


def report(runs: list[dict], command: str) -> str:
    lines = [f"TLS, per core (`{command}`):", "",
             "| scenario | server | req/s | server CPU µs/req | errors | version, cipher | × nginx (CPU/req; req/s; bytes) |",
             "|---|---|---|---|---|---|---|"]
    for sc in SCENARIOS:
        med = {}
        spread = {}
        for name in KNOWN_SERVERS:
            rs = [r for r in runs if r["server"] == name and r["scenario"] == sc]
            if not rs:
                continue
            if sc == "tls_idle":
                b = stats.median_runs(rs, "bytes_per_connection")
                med[name] = ("bytes", b["median"] if b else None)
                lines.append(f"| {sc} | {name} | – | – | – | {rs[0]['version']}, {rs[0]['cipher']} "
                             f"| {b['median']:.0f} B/conn |" if b else f"| {sc} | {name} | n/a |")
                continue
            rps = stats.median_runs(rs, "requests_per_s")
            cpu = stats.median_runs(rs, "cpu_us_per_request")
            errs = sum(r["errors"] for r in rs)
            med[name] = (rps["median"] if rps else None, cpu["median"] if cpu else None)
            spread[name] = cpu
            resumed = ""
            if all("resumed" in r for r in rs):
                share = sum(r["resumed"] for r in rs) / max(1, sum(r["requests"] for r in rs))
                resumed = f"; {share:.0%} resumed"
            lines.append(f"| {sc} | {name} | {rps['median']:,.0f} | {cpu['median']:.1f} | {errs} "
                         f"| {rs[0]['version']}, {rs[0]['cipher']}{resumed} | |")
        if "rivet" in med and "nginx" in med:
            a, b = med["rivet"], med["nginx"]
            if a[0] == "bytes":
                ratio = f"bytes {stats.ratio(a[1], b[1]):.2f}" if a[1] and b[1] else "–"
            else:
                ratio = (f"CPU/req {stats.ratio(a[1], b[1]):.2f}; req/s {stats.ratio(a[0], b[0]):.2f}"
                         if a[1] and b[1] else "–")
            lines.append(f"| {sc} | rivet ÷ nginx | | | | | {ratio} |")
        if "rivet" in med and "rivet_base" in med:
            a, b = med["rivet"], med["rivet_base"]
            if a[0] == "bytes":
                ratio = f"bytes {stats.ratio(a[1], b[1]):.2f}" if a[1] and b[1] else "–"
            elif a[1] and b[1]:
                ra, rb = spread["rivet"], spread["rivet_base"]
                ratio = (f"CPU/req {stats.ratio(a[1], b[1]):.3f} (rivet {ra['min']:.1f}–{ra['max']:.1f}, "
                         f"base {rb['min']:.1f}–{rb['max']:.1f}); req/s {stats.ratio(a[0], b[0]):.2f}")
            else:
                ratio = "–"
            lines.append(f"| {sc} | rivet ÷ rivet (base) | | | | | {ratio} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tls", action="store_true", help="(from bench/run.sh)")
    ap.add_argument("--smoke", action="store_true",
                    help="every scenario once, briefly: checks that it runs, figures mean little")
    ap.add_argument("--reps", type=int, default=int(os.environ.get("BENCH_REPS", "2")))
    ap.add_argument("--duration", type=int, default=int(os.environ.get("BENCH_DURATION", "3")))
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--servers", default=",".join(SERVERS),
                    help="rivet,nginx by default; rivet_base: the build RIVET_BASE_BIN names")
    ap.add_argument("--idle", type=int, default=int(os.environ.get("BENCH_IDLE_CONNECTIONS", "2000")))
    ap.add_argument("--server-cpu", type=int, default=int(os.environ.get("BENCH_SERVER_CPU", "0")))
    ap.add_argument("--client-cpu", type=int, default=int(os.environ.get("BENCH_CLIENT_CPU", "1")))
    ap.add_argument("--port-base", type=int, default=18600)
    args = ap.parse_args()
    if args.smoke:
        args.reps, args.duration, args.idle = 1, 1, 200
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
    runs = []
    with tempfile.TemporaryDirectory(prefix="rivet-tls-bench-") as tmp:
        fleet = Fleet(Path(tmp), args)
        if fleet.go_client is None:
            scenarios = [x for x in scenarios if x not in GO_SCENARIOS]
        for rep in range(args.reps):
            for sc in scenarios:
                for name in servers:  # interleaved: drift hits both alike
                    log(f"tls bench: {sc} {name} run {rep + 1}/{args.reps}")
                    try:
                        runs.append(one_run(fleet, name, sc, rep))
                    except (WrkOutputError, ValueError, RuntimeError, subprocess.TimeoutExpired) as e:
                        runs.append({"server": name, "scenario": sc, "rep": rep, "error": str(e)})
                        log(f"tls bench: {sc} {name}: {e}")
    good = [r for r in runs if "error" not in r]
    out_dir = BENCH_DIR / "results"
    out_dir.mkdir(exist_ok=True)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    command = os.environ.get("BENCH_COMMAND", "bash bench/run.sh --tls")
    versions = {"rivet": run_text([str(fleet.rivet_bin), "--version"]),
                **({"rivet_base": run_text([str(fleet.rivet_base_bin), "--version"])
                    + f" ({fleet.rivet_base_bin})"} if "rivet_base" in servers else {}),
                "nginx": run_text([fleet.nginx_bin, "-v"]).splitlines()[0],
                "openssl": run_text(["openssl", "version"])}
    (out_dir / f"{stamp}-tls.json").write_text(json.dumps(
        {"command": command, "versions": versions, "runs": runs}, indent=1))
    print(report(good, command))
    for r in runs:
        if "error" in r:
            print(f"\n{r['server']} {r['scenario']}: {r['error']}")
    print("\n" + "; ".join(f"{k}: {v}" for k, v in versions.items()))
    if len(good) != len(runs):
        sys.exit(1)


if __name__ == "__main__":
    main()
