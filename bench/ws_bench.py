#!/usr/bin/env python3
"""WebSocket: rivet against Boost.Beast and a Rust server, per core (`bash bench/run.sh
--websocket`, docs/BENCHMARKS.md "WebSocket").

Servers (each started fresh for every run, pinned to BENCH_SERVER_CPU, one thread):
    rivet   build/rivet --threads 1 --workers 1: its demo routes /ws/echo and /ws/chat
    beast   bench/peers/ws_beast_echo.cpp: Boost.Beast (Debian's Boost), one io_context
    rust    bench/peers/ws_rust/: fastwebsockets on tokio's current_thread runtime, built by
            bench/ws_rust_peer.sh (crates.io, once); skipped with the reason when not built

Load: bench/ws_load (our own, C++, one epoll thread pinned to BENCH_CLIENT_CPU); every echo is
checked (length, order and identity by a stamp; every 64th byte for byte), and the server's CPU
(utime+stime from /proc) is read by ws_load over the measured window (the connections' opening
and closing are not in it). Scenarios:
    ws_echo_32_c100, ws_echo_16k_c100       echo of 32-byte / 16 KiB text messages, one in
    ws_echo_32_cMANY, ws_echo_16k_cMANY     flight per connection, 100 / 10,000 connections
    ws_echo_16k_c100_deflate                the same with permessage-deflate offered (rivet and
                                            Beast; the client sends uncompressed)
    ws_idle_cMANY                           bytes of server RSS per idle connection (one echo
                                            each, after a warm-up of 200)
    ws_idle_c1000_deflate                   the same with permessage-deflate negotiated (the
                                            compressor's state; 1,000 connections)
    ws_publish_cMANY                        rivet's /ws/chat: one publisher, 10,000 subscribers,
                                            deliveries per second
Runs are interleaved (rivet, beast, rust, rivet, ...). Raw results go to
bench/results/<timestamp>-websocket.json; the markdown table to stdout; docs are not touched.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

import stats  # noqa: E402
from bench import cpu_stat, wait_quiet  # noqa: E402
from peers import PEERS, Ports, Server, build_cached, log, run_text  # noqa: E402
from ws_load_output import WsLoadOutputError, parse as parse_ws_load  # noqa: E402
from ws_report import report  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
SERVERS = ("rivet", "beast", "rust")
SCENARIOS = {
    "ws_echo_32_c100": {"kind": "echo", "size": 32, "connections": 100},
    "ws_echo_16k_c100": {"kind": "echo", "size": 16384, "connections": 100},
    "ws_echo_32_cMANY": {"kind": "echo", "size": 32, "connections": "many"},
    "ws_echo_16k_cMANY": {"kind": "echo", "size": 16384, "connections": "many"},
    "ws_echo_16k_c100_deflate": {"kind": "echo", "size": 16384, "connections": 100, "deflate": True},
    "ws_idle_cMANY": {"kind": "idle", "connections": "many"},
    "ws_idle_c1000_deflate": {"kind": "idle", "connections": 1000, "deflate": True},
    "ws_publish_cMANY": {"kind": "publish", "connections": "many"},
}
UNSUPPORTED = {
    "rivet": {},
    "beast": {"publish": "Beast has no publish/subscribe (an echo server)"},
    "rust": {"publish": "fastwebsockets has no publish/subscribe (an echo server)",
             "deflate": "fastwebsockets has no permessage-deflate"},
}  # fmt: skip


def scenario_id(sc: str, many: int) -> str:
    return sc.replace("cMANY", f"c{many}")


def build_ws_load(cache: Path) -> tuple[Path | None, str]:
    srcs = sorted((BENCH_DIR / "ws_load").glob("*.[ch]pp"))
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in srcs)).hexdigest()[:16]
    out = cache / "bin" / f"ws_load-{digest}"
    if out.exists():
        return out, ""
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = ["g++", "-O2", "-std=c++20", "-Wall", "-Wextra", "-Werror=format", "-o", str(out.with_suffix(".tmp")),
           *[str(p) for p in srcs if p.suffix == ".cpp"], "-lcrypto", "-lz"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, f"building ws_load failed: {r.stderr[-400:]}"
    out.with_suffix(".tmp").rename(out)
    return out, ""


class Fleet:
    def __init__(self, tmp: Path, args):
        self.tmp, self.args = tmp, args
        self.cache = Path(os.environ.get("BENCH_CACHE", Path.home() / ".cache" / "rivet-bench"))
        self.ports = Ports(args.port_base)
        self.logs = tmp / "logs"
        self.logs.mkdir()
        (tmp / "www").mkdir()
        self.unavailable: dict[str, str] = {}
        self.versions: dict[str, str] = {}
        self.ws_load, err = build_ws_load(self.cache)
        if err:
            raise SystemExit(err)
        self.rivet_bin = Path(os.environ.get("RIVET_BIN", REPO / "build" / "rivet"))
        if os.access(self.rivet_bin, os.X_OK):
            self.versions["rivet"] = run_text([str(self.rivet_bin), "--version"])
        else:
            self.unavailable["rivet"] = f"{self.rivet_bin} not built (make build)"
        self._beast()
        self._rust()

    def _beast(self) -> None:
        if not Path("/usr/include/boost/beast.hpp").exists():
            self.unavailable["beast"] = "libboost-dev not installed (bash scripts/setup.sh)"
            return
        src = PEERS / "ws_beast_echo.cpp"
        self.beast_bin, err = build_cached(
            src, self.cache / "bin",
            lambda out: ["g++", "-O2", "-std=c++17", "-pthread", "-o", str(out), str(src)])
        if err:
            self.unavailable["beast"] = err
            return
        ver = run_text(["sh", "-c", "grep 'define BOOST_LIB_VERSION' /usr/include/boost/version.hpp"])
        self.versions["beast"] = f"Boost {ver.split()[-1].strip(chr(34))} (Debian), Beast"

    def _rust(self) -> None:
        flag = ["--no-build"] if self.args.smoke else []
        r = subprocess.run(["bash", str(BENCH_DIR / "ws_rust_peer.sh"), *flag],
                           capture_output=True, text=True)
        path = r.stdout.strip()
        if r.returncode != 0 or not path:
            self.unavailable["rust"] = r.stderr.strip()[-300:] or "not built"
            return
        self.rust_bin = path
        lock = (PEERS / "ws_rust" / "Cargo.lock").read_text()
        at = lock.find('name = "fastwebsockets"')
        ver = lock[at:].split("\n")[1].split('"')[1] if at >= 0 else "?"
        self.versions["rust"] = f"fastwebsockets {ver}, " + run_text(
            [os.environ.get("CARGO_RUSTC", str(Path.home() / ".cargo/bin/rustc")), "--version"])

    def command(self, name: str, port: int, deflate: bool) -> list[str]:
        pin = ["taskset", "-c", str(self.args.server_cpu)]
        if name == "rivet":
            return pin + [str(self.rivet_bin), "--port", str(port), "--bind", "127.0.0.1",
                          "--threads", "1", "--workers", "1", "--root", str(self.tmp / "www")]
        if name == "beast":
            return pin + [str(self.beast_bin), str(port)] + (["--deflate"] if deflate else [])
        return pin + [self.rust_bin, str(port)]

    def why_not(self, name: str, sc: dict) -> str | None:
        if name in self.unavailable:
            return self.unavailable[name]
        feature = "publish" if sc["kind"] == "publish" else ("deflate" if sc.get("deflate") else "")
        return UNSUPPORTED[name].get(feature)


def ws_load(fleet: Fleet, port: int, pid: int, sc: dict, many: int, seconds: float,
            out_path: Path, check: bool = False) -> dict:
    n = many if sc["connections"] == "many" else sc["connections"]
    cmd = ["taskset", "-c", str(fleet.args.client_cpu), str(fleet.ws_load), "--port", str(port),
           "--server-pid", str(pid)]
    if sc["kind"] == "publish":
        cmd += ["--mode", "subscribe", "--path", "/ws/chat", "-c", str(2 if check else n),
                "--messages", str(3 if check else fleet.args.messages), "--duration", "60"]
    elif sc["kind"] == "idle" and not check:
        cmd += ["--mode", "idle", "--path", "/ws/echo", "-c", str(n)]
        cmd += ["--deflate"] if sc.get("deflate") else []
    else:
        cmd += ["--path", "/ws/echo", "-c", str(1 if check else n), "--size",
                str(sc.get("size", 32)), "--duration", str(0.2 if check else seconds)]
        cmd += ["--deflate"] if sc.get("deflate") else []
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 300)
    out_path.write_text(" ".join(cmd) + "\n" + r.stdout + r.stderr)
    res = parse_ws_load(r.stdout)
    if check and (r.returncode != 0 or res["errors_total"]):
        raise RuntimeError(f"check failed: {r.stdout.strip()[-300:]} {r.stderr.strip()[-200:]}")
    return res


def one_run(fleet: Fleet, name: str, sc_name: str, rep: int) -> dict:
    sc = SCENARIOS[sc_name]
    many = fleet.args.many
    rec = {"server": name, "scenario": scenario_id(sc_name, many), "rep": rep}
    port = fleet.ports.take()
    srv = Server(name, port, fleet.command(name, port, bool(sc.get("deflate"))), fleet.logs)
    err = srv.start()
    if err:
        raise RuntimeError(f"{name} failed to start: {err}")
    tag = f"{name}-{rec['scenario']}-{rep}"
    try:
        ws_load(fleet, port, srv.pid, sc, many, 0, fleet.logs / f"{tag}-check0.txt", check=True)
        wait_quiet((fleet.args.server_cpu, fleet.args.client_cpu), fleet.args.quiet_wait)
        busy0, kids0 = cpu_stat((fleet.args.server_cpu, fleet.args.client_cpu)), _children_cpu()
        srv_cpu0, t0 = srv.cpu_ticks() / CLK_TCK, time.monotonic()
        res = ws_load(fleet, port, srv.pid, sc, many, fleet.args.duration,
                      fleet.logs / f"{tag}.txt")
        wall = time.monotonic() - t0
        busy = (cpu_stat((fleet.args.server_cpu, fleet.args.client_cpu))["busy"] - busy0["busy"]) / CLK_TCK
        others = busy - (srv.cpu_ticks() / CLK_TCK - srv_cpu0) - (_children_cpu() - kids0)
        rec["noise_cores"] = round(max(0.0, others) / wall, 3)  # other processes on the bench cores
        rec.update(res)
        ws_load(fleet, port, srv.pid, sc, many, 0, fleet.logs / f"{tag}-check1.txt", check=True)
        rec["alive_after"] = srv.alive()
        if not rec["alive_after"]:
            raise RuntimeError(f"{name} died during the run")
        if res["errors_total"] or res["open"] != res["connections"] + (sc["kind"] == "publish"):
            rec["error"] = (f"{res['open']} of {res['connections']} connections open, errors "
                            f"{res['errors']}")
    finally:
        srv.stop()
    return rec


def _children_cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--websocket", action="store_true", help="(from bench/run.sh)")
    ap.add_argument("--smoke", action="store_true",
                    help="every scenario once, briefly, 200 connections: checks that it runs")
    ap.add_argument("--reps", type=int, default=int(os.environ.get("BENCH_REPS", "3")))
    ap.add_argument("--duration", type=float, default=float(os.environ.get("BENCH_DURATION", "3")))
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--servers", default=",".join(SERVERS))
    ap.add_argument("--many", type=int, default=int(os.environ.get("BENCH_MANY_CONNECTIONS", "10000")))
    ap.add_argument("--messages", type=int, default=200, help="messages published (publish)")
    ap.add_argument("--server-cpu", type=int, default=int(os.environ.get("BENCH_SERVER_CPU", "0")))
    ap.add_argument("--client-cpu", type=int, default=int(os.environ.get("BENCH_CLIENT_CPU", "1")))
    ap.add_argument("--quiet-wait", type=float, default=float(os.environ.get("BENCH_QUIET_WAIT", "3")))
    ap.add_argument("--port-base", type=int, default=18900)
    args = ap.parse_args()
    if args.smoke:
        args.reps, args.duration, args.many, args.messages, args.quiet_wait = 1, 1, 200, 20, 0
    scenarios = [s.replace(f"c{args.many}", "cMANY") for s in args.scenarios.split(",") if s]
    servers = [s for s in args.servers.split(",") if s]
    for s in scenarios:
        if s not in SCENARIOS:
            raise SystemExit(f"unknown scenario {s!r} (known: {', '.join(SCENARIOS)})")
    for s in servers:
        if s not in SERVERS:
            raise SystemExit(f"unknown server {s!r} (known: {', '.join(SERVERS)})")
    runs, skipped = [], {}
    with tempfile.TemporaryDirectory(prefix="rivet-ws-bench-") as tmp:
        fleet = Fleet(Path(tmp), args)
        for rep in range(args.reps):
            for sc in scenarios:
                for name in servers:  # interleaved: drift hits every server alike
                    why = fleet.why_not(name, SCENARIOS[sc])
                    if why:
                        skipped[(name, scenario_id(sc, args.many))] = why
                        continue
                    log(f"ws bench: {scenario_id(sc, args.many)} {name} run {rep + 1}/{args.reps}")
                    try:
                        runs.append(one_run(fleet, name, sc, rep))
                    except (WsLoadOutputError, RuntimeError, subprocess.TimeoutExpired) as e:
                        runs.append({"server": name, "scenario": scenario_id(sc, args.many),
                                     "rep": rep, "error": str(e)})
                    if "error" in runs[-1]:
                        log(f"ws bench: {name} {sc}: {runs[-1]['error']}")
    out_dir = BENCH_DIR / "results"
    out_dir.mkdir(exist_ok=True)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    command = os.environ.get("BENCH_COMMAND", "bash bench/run.sh --websocket")
    (out_dir / f"{stamp}-websocket.json").write_text(json.dumps(
        {"command": command, "versions": fleet.versions, "runs": runs,
         "skipped": [{"server": k[0], "scenario": k[1], "why": v} for k, v in skipped.items()]},
        indent=1))
    print(report(runs, skipped, command, {k: v for k, v in fleet.versions.items() if k in servers}))
    if any("error" in r for r in runs):
        sys.exit(1)


if __name__ == "__main__":
    main()
