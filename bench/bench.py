#!/usr/bin/env python3
"""rivet's benchmark suite: rivet against nginx, h2o, lighttpd, cpp-httplib and the floor.

Driven by bench/run.sh (`make bench`, `make bench-full`, `bash bench/run.sh --smoke`). The
harness itself is Python 3 standard library only; the plots run in a separate interpreter that
has matplotlib (bench/tools.sh makes a venv) and oha comes from `cargo install` (bench/tools.sh).

Each run starts a fresh server (bench/peers.py), checks that it answers the scenario's request
correctly (bench/checks.py), drives it (wrk, the idle client, or oha for open-loop latency),
reads the server's CPU time and peak RSS, and checks it again. Runs are interleaved (A B C A B
C ...) so that drift on the machine hits every server alike. Per-core mode pins the server to
one core and the load generator to another; whole-machine mode pins nothing, or gives the
server and wrk cores of their own (BENCH_MACHINE_SERVER_CPUS, BENCH_MACHINE_CLIENT_CPUS).

Outputs: bench/results/<timestamp>.json (raw), a markdown report on stdout, and (unless quick
or --docs no) the generated sections of docs/BENCHMARKS.md plus PNG plots in docs/img/. Exit
status 1 when a server failed to start, answer correctly, survive or produce a result where it
should have.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

import checks  # noqa: E402
import report  # noqa: E402
import stats  # noqa: E402
from oha_output import OhaOutputError, parse as parse_oha  # noqa: E402
from peers import KNOWN_SERVERS, SERVERS, STATIC_FILES, Fleet, Server, cpu_list, log, run_text  # noqa: E402
from wrk_output import WrkOutputError, parse as parse_wrk  # noqa: E402

RESULTS = BENCH_DIR / "results"
WRK_LUA = BENCH_DIR / "wrk.lua"
CLK_TCK = os.sysconf("SC_CLK_TCK")
PIPELINE_DEPTH = 16

# Profiles: smoke (CI, ~1 minute), quick (`make bench`), full (`make bench-full`).
PROFILES = {
    "smoke": {"reps": 1, "duration_s": 1, "many": 200, "idle": 200, "openloop_s": 1,
              "fractions": (0.5,), "machine": ("hello_c100",), "machine_reps": 1,
              "open_reps": 1, "idle_reps": 1, "idle_deadline_s": 10, "soak_s": 2, "quiet_wait_s": 0, "quiet_budget_s": 0, "noise_retakes": 0},
    "quick": {"reps": 2, "duration_s": 2, "many": 10000, "idle": 10000, "openloop_s": 3,
              "fractions": (0.5, 0.9), "machine": ("hello_c100", "hello_cMANY"),
              "machine_reps": 1, "open_reps": 2, "idle_reps": 1, "idle_deadline_s": 10, "soak_s": 0, "quiet_wait_s": 5, "quiet_budget_s": 45,
              "noise_retakes": 8},
    "full": {"reps": 3, "duration_s": 5, "many": 10000, "idle": 10000, "openloop_s": 5,
             "fractions": (0.5, 0.9), "machine": "all", "machine_reps": 3, "open_reps": 3, "idle_reps": 3,
             "idle_deadline_s": 60, "soak_s": 600,
             "quiet_wait_s": 10, "quiet_budget_s": 120, "noise_retakes": 16},
}  # fmt: skip


# Named sets for --scenarios. "engine": issue 20's speed check (the engine under a Transport),
# with `--servers rivet,rivet_base,nginx --modes percore` (bash bench/run.sh --engine).
SCENARIO_SETS = {
    "engine": ("hello_c100", "hello_cMANY", f"pipeline{PIPELINE_DEPTH}_c100", "close_c100",
               "static_1k_c100", "work_c100", "wait_c100", "cpu_c100"),
}


def env_int(name: str, default: int) -> int:
    v = os.environ.get(name, "").strip()
    return int(v) if v else default


# --------------------------------------------------------------------------------------------
# Settings and scenarios


def scenarios_for(s: dict) -> list[dict]:
    d, many = s["duration_s"], s["many_connections"]
    sc = [
        {"id": "hello_c100", "title": "GET /hello, 100 connections", "feature": "hello",
         "kind": "wrk", "connections": 100, "path": "/hello"},
        {"id": f"hello_c{many}", "title": f"GET /hello, {many:,} connections", "feature": "hello",
         "kind": "wrk", "connections": many, "path": "/hello"},
        {"id": f"pipeline{PIPELINE_DEPTH}_c100",
         "title": f"GET /hello pipelined ×{PIPELINE_DEPTH}, 100 connections", "feature": "pipeline",
         "kind": "wrk", "connections": 100, "path": "/hello", "args": [f"depth={PIPELINE_DEPTH}"]},
        {"id": "close_c100", "title": "GET /hello, `Connection: close`, 100 connections",
         "feature": "close", "kind": "wrk", "connections": 100, "path": "/hello",
         "args": ["header=Connection: close"]},
        {"id": "static_1k_c100", "title": "GET 1 KiB file, 100 connections",
         "feature": "static:1k.txt", "kind": "wrk", "connections": 100, "path": "/1k.txt"},
        {"id": "static_100k_c100", "title": "GET 100 KiB file, 100 connections",
         "feature": "static:100k.txt", "kind": "wrk", "connections": 100, "path": "/100k.txt"},
        {"id": "echo_4k_c100", "title": "POST /echo 4 KiB body, 100 connections", "feature": "echo",
         "kind": "wrk", "connections": 100, "path": "/echo",
         "args": ["method=POST", "body=@$TMP/echo-4k.bin", "header=Content-Type: application/octet-stream"]},
        {"id": "json_c100", "title": 'POST /json `{"value": 42}`, 100 connections', "feature": "json",
         "kind": "wrk", "connections": 100, "path": "/json",
         "args": ["method=POST", "body=@$TMP/value.json", "header=Content-Type: application/json"]},
        # The engine's hand-offs, rivet only (peers have no such routes), and only when named
        # (--scenarios work,wait,cpu or the "engine" set) or in the smoke run, with so little
        # work that the hop is what the CPU per request measures: an offloaded request (loop ->
        # worker pool -> loop), a coroutine handler awaiting a 0 ms timer (rivet::sleep(0) is
        # ready at once: it does not suspend) and one awaiting the worker pool (it suspends).
        {"id": "work_c100", "title": f"GET {checks.WORK_PATH} (worker pool), 100 connections",
         "feature": "work", "kind": "wrk", "connections": 100, "path": checks.WORK_PATH,
         "optional": True},
        {"id": "wait_c100", "title": f"GET {checks.WAIT_PATH} (awaits a timer), 100 connections",
         "feature": "wait", "kind": "wrk", "connections": 100, "path": checks.WAIT_PATH,
         "optional": True},
        {"id": "cpu_c100", "title": f"GET {checks.CPU_PATH} (awaits the worker pool), 100 connections",
         "feature": "cpu", "kind": "wrk", "connections": 100, "path": checks.CPU_PATH,
         "optional": True},
        {"id": f"idle_c{s['idle_connections']}",
         "title": f"idle keep-alive memory, {s['idle_connections']:,} connections", "feature": "hello",
         "kind": "idle", "connections": s["idle_connections"], "path": "/hello"},
    ]  # fmt: skip
    for f in s["fractions"]:
        pct = int(round(f * 100))
        sc.append({"id": f"open{pct}_c100", "title": f"GET /hello open loop at {pct}% of peak, 100 connections",
                   "feature": "hello", "kind": "open", "fraction": f, "connections": 100,
                   "path": "/hello", "peak_from": "hello_c100"})  # fmt: skip
    for x in sc:
        x.setdefault("args", [])
        x["duration_s"] = s["openloop_s"] if x["kind"] == "open" else d
    return sc


def build_settings(args: argparse.Namespace) -> dict:
    profile = "smoke" if args.smoke else ("full" if args.full else "quick")
    p = PROFILES[profile]
    s = {
        "profile": profile,
        "smoke": args.smoke,
        "reps": args.reps or env_int("BENCH_REPS", p["reps"]),
        "machine_reps": args.reps or env_int("BENCH_REPS", p["machine_reps"]),
        "idle_reps": args.reps or env_int("BENCH_REPS", p["idle_reps"]),
        "open_reps": args.reps or env_int("BENCH_REPS", p["open_reps"]),
        "idle_deadline_s": env_int("BENCH_IDLE_DEADLINE", p["idle_deadline_s"]),
        "duration_s": args.duration or env_int("BENCH_DURATION", p["duration_s"]),
        "openloop_s": args.duration or env_int("BENCH_OPENLOOP_DURATION", p["openloop_s"]),
        "fractions": p["fractions"],
        "many_connections": env_int("BENCH_MANY_CONNECTIONS", p["many"]),
        "idle_connections": env_int("BENCH_IDLE_CONNECTIONS", p["idle"]),
        "soak_s": env_int("BENCH_SOAK", p["soak_s"]),
        "soak_servers": [x for x in os.environ.get("BENCH_SOAK_SERVERS", "rivet").split(",") if x],
        "server_cpu": env_int("BENCH_SERVER_CPU", 0),
        "client_cpu": env_int("BENCH_CLIENT_CPU", 1),
        "port_base": env_int("BENCH_PORT_BASE", 18300),
        # The machine may be shared: before each run wait up to quiet_wait_s for the bench cores
        # to go idle, no more than quiet_budget_s in all; retake a run during which other
        # processes took more than noise_max of a core on them (at most twice per run,
        # noise_retakes in all). Every attempt stays in the JSON.
        "quiet_wait_s": env_int("BENCH_QUIET_WAIT", p["quiet_wait_s"]),
        "quiet_budget_s": env_int("BENCH_QUIET_BUDGET", p["quiet_budget_s"]),
        "noise_max": float(os.environ.get("BENCH_NOISE_MAX", "0.25")),
        "noise_retakes": env_int("BENCH_NOISE_RETAKES", p["noise_retakes"]),
        "servers": [x for x in (args.servers or ",".join(SERVERS)).split(",") if x],
        "modes": [x for x in (args.modes or "percore,machine").split(",") if x],
        "cores": len(os.sched_getaffinity(0)),
        # Whole-machine mode on a many-core machine: the server's cores and the load
        # generator's, apart (`taskset` lists such as 0-7 and 8-15); unset, nothing is pinned.
        "machine_server_cpus": os.environ.get("BENCH_MACHINE_SERVER_CPUS", ""),
        "machine_client_cpus": os.environ.get("BENCH_MACHINE_CLIENT_CPUS", ""),
        # oha on one core falls behind from about 70,000 req/s: where a server's peak is faster
        # than twice that, give the open-loop generator more cores (one worker thread each).
        "open_client_cpus": os.environ.get("BENCH_OPEN_CLIENT_CPUS", ""),
    }
    for name in s["servers"]:
        if name not in KNOWN_SERVERS:
            raise SystemExit(f"unknown server {name!r} (known: {', '.join(KNOWN_SERVERS)})")
    for m in s["modes"]:
        if m not in ("percore", "machine"):
            raise SystemExit(f"unknown mode {m!r} (percore, machine)")
    for k in ("machine_server_cpus", "machine_client_cpus", "open_client_cpus"):
        try:
            cpu_list(s[k])
        except ValueError:
            raise SystemExit(f"{k.upper()}: {s[k]!r} is not a CPU list such as 0-7 or 0,2,4")
    if bool(s["machine_server_cpus"]) != bool(s["machine_client_cpus"]):
        raise SystemExit("set both BENCH_MACHINE_SERVER_CPUS and BENCH_MACHINE_CLIENT_CPUS, or neither")
    all_sc = scenarios_for(s)
    if args.scenarios:
        want = set(args.scenarios.split(","))
        for name, ids in SCENARIO_SETS.items():
            if name in want:
                want |= {x.replace("MANY", str(s["many_connections"])) for x in ids}
        all_sc = [x for x in all_sc if x["id"] in want or x["id"].split("_")[0] in want]
        if not all_sc and "soak" not in want:
            raise SystemExit(f"no scenario matches {args.scenarios!r}")
        if "soak" not in want:
            s["soak_s"] = 0
    elif not s["smoke"]:
        all_sc = [x for x in all_sc if not x.get("optional")]
    s["scenarios"] = all_sc
    many = s["many_connections"]
    m = p["machine"]
    machine_ids = None if m == "all" else {x.replace("MANY", str(many)) for x in m}
    s["machine_scenarios"] = [x["id"] for x in all_sc
                              if x["kind"] in ("wrk",) and (machine_ids is None or x["id"] in machine_ids)]  # fmt: skip
    return s


def raise_nofile() -> tuple[int, int]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 65536 if hard == resource.RLIM_INFINITY else min(65536, hard)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)


# --------------------------------------------------------------------------------------------
# Machine noise


def cpu_stat(cpus: tuple[int, ...] | None) -> dict:
    """Summed /proc/stat ticks of the given cores (all when None): busy and steal."""
    busy = steal = 0
    with open("/proc/stat") as f:
        for line in f:
            parts = line.split()
            if not parts[0].startswith("cpu") or parts[0] == "cpu":
                continue
            if cpus is None or int(parts[0][3:]) in cpus:
                v = [int(x) for x in parts[1:]]
                busy += v[0] + v[1] + v[2] + v[5] + v[6]
                steal += v[7] if len(v) > 7 else 0
    return {"busy": busy, "steal": steal}


def wait_quiet(cpus: tuple[int, ...] | None, max_wait_s: float, threshold: float = 0.15) -> dict:
    """Wait (up to max_wait_s) until the bench cores are nearly idle; the machine may be shared."""
    if max_wait_s <= 0:
        return {"waited_s": 0.0}
    n = len(cpus) if cpus else len(os.sched_getaffinity(0))
    t_end = time.monotonic() + max_wait_s
    waited = 0.0
    while True:
        a = cpu_stat(cpus)
        time.sleep(0.3)
        b = cpu_stat(cpus)
        frac = (b["busy"] - a["busy"]) / CLK_TCK / 0.3 / n
        if frac <= threshold or time.monotonic() >= t_end:
            return {"busy_before": round(frac, 3), "waited_s": round(waited, 1)}
        time.sleep(2)
        waited += 2.3


def bench_cores(s: dict, mode: str) -> tuple[int, ...] | None:
    return (s["server_cpu"], s["client_cpu"]) if mode == "percore" else None


# --------------------------------------------------------------------------------------------
# Load generators


def wrk_command(s: dict, sc: dict, mode: str, port: int, tmp: Path | None) -> list[str]:
    if mode == "percore":
        cmd = ["taskset", "-c", str(s["client_cpu"]), "wrk", "-t1"]
    elif s["machine_client_cpus"]:
        spec = s["machine_client_cpus"]
        cmd = ["taskset", "-c", spec, "wrk", f"-t{len(cpu_list(spec))}"]
    else:
        cmd = ["wrk", f"-t{s['cores']}"]
    cmd += [f"-c{sc['connections']}", f"-d{sc['duration_s']}s", "--latency", "-s", str(WRK_LUA),
            f"http://127.0.0.1:{port}{sc['path']}"]  # fmt: skip
    args = [a.replace("$TMP", str(tmp) if tmp else "$TMP") for a in sc["args"]]
    if args:
        cmd += ["--", *args]
    return cmd


def oha_command(s: dict, sc: dict, port: int, rate: int, oha: str) -> list[str]:
    # -w: requests in flight at the deadline are waited for, not counted as aborted.
    cpus = s["open_client_cpus"] or str(s["client_cpu"])
    return [
        "taskset", "-c", cpus, oha, "--no-tui", "--output-format", "json",
        "--worker-threads", str(len(cpu_list(cpus))), "-z", f"{sc['duration_s']}s", "-w", "-c", str(sc["connections"]),
        "-q", str(rate), "--latency-correction", f"http://127.0.0.1:{port}{sc['path']}",
    ]  # fmt: skip


def run_timed(cmd: list[str], out_path: Path, limit_s: float, overrun_s: float | None = None,
              on_overrun: "callable | None" = None) -> tuple[int, float, float, str | None]:  # fmt: skip
    """Run cmd with output to out_path; returns (exit code, wall s, its CPU s, error).

    on_overrun(proc) is called once if cmd still runs after overrun_s; cmd is killed at limit_s."""
    t0 = time.monotonic()
    err = None
    overran = False
    with open(out_path, "wb") as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            elapsed = time.monotonic() - t0
            if on_overrun and overrun_s is not None and not overran and elapsed > overrun_s:
                on_overrun(p)
                overran = True
            if elapsed > limit_s:
                p.kill()
                pid, status, ru = os.wait4(p.pid, 0)
                err = f"{Path(cmd[0]).name if cmd[0] != 'taskset' else cmd[3]} did not finish in time; killed"
                break
            time.sleep(0.05)
    return os.waitstatus_to_exitcode(status), time.monotonic() - t0, ru.ru_utime + ru.ru_stime, err


# wrk ends on its own at the run's duration, unless the server swamps the machine (cpp-httplib
# at 10,000 connections: 10,000 threads polling every 10 ms leave wrk no CPU to finish). Past
# the duration plus this grace the server is paused (SIGSTOP) so that wrk can report what it
# measured, and resumed after; a minute more and wrk is killed.
WRK_GRACE_S = 5


class Measure:
    """Server CPU and the machine's other load over one load-generator run."""

    def __init__(self, s: dict, mode: str, srv: Server):
        self.cores = bench_cores(s, mode)
        self.srv = srv
        self.stat0 = cpu_stat(self.cores)
        self.cpu0 = srv.cpu_ticks()
        self.t0 = time.monotonic()

    def finish(self, rec: dict, wall: float, gen_cpu_s: float) -> bool:
        # Let the server finish closing the generator's connections: that work belongs here too.
        time.sleep(0.3)
        alive = self.srv.alive()
        rec["server_alive_after"] = alive
        if not alive:
            rec["error"] = f"server died during the run (status {self.srv.proc.returncode})"
            return False
        ticks = self.srv.cpu_ticks() - self.cpu0
        stat1 = cpu_stat(self.cores)
        span = time.monotonic() - self.t0
        other = (stat1["busy"] - self.stat0["busy"]) / CLK_TCK - ticks / CLK_TCK - gen_cpu_s
        n = len(self.cores) if self.cores else os.cpu_count()
        rec["other_cpu_share"] = round(max(0.0, other) / span, 3)  # in cores, over the run
        rec["steal_s"] = (stat1["steal"] - self.stat0["steal"]) / CLK_TCK
        rec["server_cpu_ticks"] = ticks
        rec["server_cpu_s"] = ticks / CLK_TCK
        rec["server_cpu_busy"] = round(ticks / CLK_TCK / wall, 3)  # cores
        rec["machine_cores"] = n
        rec["generator_cpu_s"] = round(gen_cpu_s, 3)
        rec["peak_rss_bytes"] = self.srv.peak_rss_bytes()
        rec["server_threads"] = self.srv.threads()
        return True


def run_wrk(s: dict, sc: dict, mode: str, srv: Server, tmp: Path) -> dict:
    cmd = wrk_command(s, sc, mode, srv.port, tmp)
    rec: dict = {"command": " ".join(shlex.quote(c) for c in cmd)}
    out_path = tmp / "wrk.out"
    m = Measure(s, mode, srv)
    d = sc["duration_s"]
    paused: list[float] = []

    def pause_server(_: subprocess.Popen) -> None:
        paused.append(time.monotonic() - m.t0)
        srv.pause()

    try:
        code, wall, gen_cpu, err = run_timed(cmd, out_path, d + 60, d + WRK_GRACE_S, pause_server)
    finally:
        if paused:
            srv.resume()
    if paused:
        rec["paused_server"] = (f"wrk was still running {paused[0]:.0f} s after starting a {d} s run "
                                f"(the server left it no CPU): the server was paused until wrk reported")  # fmt: skip
    text = out_path.read_text(errors="replace")
    rec.update(wrk_exit=code, wrk_output=text, wall_s=round(wall, 3))
    if err:
        rec["error"] = err
    if not m.finish(rec, wall, gen_cpu):
        return rec
    try:
        w = parse_wrk(text)
    except WrkOutputError as e:
        rec.setdefault("error", f"wrk: {e}")
        return rec
    rec["wrk"] = w
    if w["requests"] <= 0:
        # A measurement, not a broken figure, when the server is alive and still answers right
        # (checked after the run): it completed nothing within the run's time.
        rec["note"] = (f"completed no request in {sc['duration_s']} s "
                       f"({w['socket_errors']['timeout']:,} timeouts, {w['errors']:,} errors)")  # fmt: skip
    if paused:
        rec["note"] = rec.get("note", "") + ("; " if rec.get("note") else "") + rec["paused_server"]
    rec["cpu_us_per_req"] = rec["server_cpu_s"] * 1e6 / w["requests"] if w["requests"] else None
    rec["requests_per_s"] = w["requests_per_s"]
    for k in ("latency_p50_us", "latency_p99_us", "latency_p999_us"):
        rec[k] = w[k] if w["requests"] else None
    rec["errors"] = w["errors"]
    rec["bytes_per_response"] = w["bytes_read"] / w["requests"] if w["requests"] else None
    return rec


def run_open(s: dict, sc: dict, mode: str, srv: Server, tmp: Path, rate: int, oha: str) -> dict:
    cmd = oha_command(s, sc, srv.port, rate, oha)
    rec: dict = {"command": " ".join(shlex.quote(c) for c in cmd), "target_rps": rate}
    out_path = tmp / "oha.out"
    m = Measure(s, mode, srv)
    d = sc["duration_s"]
    code, wall, gen_cpu, err = run_timed(cmd, out_path, sc["duration_s"] + 60)
    text = out_path.read_text(errors="replace")
    rec.update(oha_exit=code, wall_s=round(wall, 3))
    if err:
        rec["error"] = err
    if not m.finish(rec, wall, gen_cpu):
        return rec
    try:
        o = parse_oha(text)
    except OhaOutputError as e:
        rec.setdefault("error", f"oha: {e}")
        rec["oha_output"] = text[-2000:]
        return rec
    rec["oha"] = o
    if o["requests"] <= 0:
        rec.setdefault("error", f"oha completed no requests ({o['errors']} errors)")
        return rec
    rec["cpu_us_per_req"] = rec["server_cpu_s"] * 1e6 / o["requests"]
    rec["requests_per_s"] = o["requests_per_s"]
    rec["achieved_fraction"] = o["requests_per_s"] / rate
    for k in ("50", "90", "99", "99.9", "99.99"):
        rec[f"latency_p{k.replace('.', '')}_us"] = o["latency_percentiles_us"].get(k)
    rec["errors"] = o["errors"]
    return rec


# --------------------------------------------------------------------------------------------
# Idle keep-alive memory


def idle_client_main(port: int, n: int, deadline_s: float) -> int:
    """Child process: open n keep-alive connections, one served request each, hold them.

    Stops opening after deadline_s (a server that slows down with every connection it holds
    would otherwise keep the benchmark waiting). Prints a JSON line when done opening, waits
    for a line on stdin, then prints a JSON line with how many are still open (the server has
    not closed them) and exits."""
    req = checks.request_bytes(port, "GET", "/hello")
    socks, failed, bad = [], 0, 0
    first_error = ""
    t_end = time.monotonic() + deadline_s
    stopped = None
    for i in range(n):
        if time.monotonic() > t_end:
            stopped = i
            break
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(req)
            status, _, body = checks.read_response(s, bytearray())
            if status != 200 or body != checks.HELLO:
                bad += 1
            socks.append(s)
        except (OSError, ValueError) as e:
            failed += 1
            first_error = first_error or repr(e)
    print(json.dumps({"served": len(socks), "failed": failed, "bad": bad, "first_error": first_error,
                      "stopped_at_deadline": stopped is not None}))
    sys.stdout.flush()
    sys.stdin.readline()
    still = 0
    for s in socks:
        try:
            s.setblocking(False)
            data = s.recv(1, socket.MSG_PEEK)
            still += 0 if data == b"" else 1
        except BlockingIOError:
            still += 1
        except OSError:
            pass
    print(json.dumps({"still_open": still}))
    sys.stdout.flush()
    return 0


def run_idle(s: dict, sc: dict, mode: str, srv: Server) -> dict:
    n = sc["connections"]
    pin = ["taskset", "-c", str(s["client_cpu"])] if mode == "percore" else []
    cmd = pin + [sys.executable, str(Path(__file__).resolve()), "--idle-client", str(srv.port), str(n),
                 str(s["idle_deadline_s"])]  # fmt: skip
    rec: dict = {"command": " ".join(shlex.quote(c) for c in cmd)}
    time.sleep(0.2)
    rss0 = srv.rss_bytes()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    opened = held = None
    alive = False
    rss1 = 0
    try:
        line = p.stdout.readline()
        opened = json.loads(line) if line else None
        time.sleep(0.5)  # let the server settle before reading its RSS
        alive = srv.alive()
        rss1 = srv.rss_bytes() if alive else 0
        rec["peak_rss_bytes"] = srv.peak_rss_bytes() if alive else None
        p.stdin.write("\n")
        p.stdin.flush()
        line = p.stdout.readline()
        held = json.loads(line) if line else None
    finally:
        try:
            p.stdin.close()
        except OSError:
            pass
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    if opened is None or held is None:
        rec["error"] = f"idle client failed (exit {p.returncode})"
        return rec
    rec.update(opened)
    rec.update(held)
    if not alive:
        rec["error"] = f"server died while connections were opened (status {srv.proc.returncode})"
        return rec
    rec["rss_before"] = rss0
    rec["rss_after"] = rss1
    rec["errors"] = opened["failed"] + opened["bad"] + (opened["served"] - held["still_open"])
    if opened["served"] <= 0:
        rec["error"] = f"no connection was served ({opened['first_error']})"
        return rec
    rec["bytes_per_conn"] = (rss1 - rss0) / opened["served"]
    if opened.get("stopped_at_deadline"):
        rec["note"] = f"opened only {opened['served']:,} of {n:,} connections in {s['idle_deadline_s']} s"
    return rec


# --------------------------------------------------------------------------------------------
# Soak


def soak_requests(tmp: Path, static_ok: bool) -> list[str]:
    reqs = ["GET /hello", f"POST /echo @{tmp}/echo-4k.bin", f"POST /json @{tmp}/value.json",
            "GET /calc?value=0.5&terms=1000", "GET /echo?a=1&b=2", "GET /headers"]  # fmt: skip
    if static_ok:
        reqs.append("GET /1k.txt")
    return reqs


def run_soak(s: dict, fleet: Fleet, name: str, tmp: Path) -> dict:
    """rivet (or BENCH_SOAK_SERVERS) under a mixed closed-loop load for soak_s seconds, RSS
    sampled every second; plus a `Connection: close` client for connection churn."""
    mode = "percore"
    rec: dict = {"scenario": "soak", "mode": mode, "server": name, "rep": 1}
    srv, err = fleet.start(name, mode)
    if err:
        rec["error"] = err
        return rec
    try:
        rec["port"], rec["pid"] = srv.port, srv.pid
        err, _ = checks.check(srv.port, "hello")
        if err:
            rec["error"] = f"wrong answer before the soak: {err}"
            return rec
        static_ok = checks.check(srv.port, "static:1k.txt", fleet_static(fleet))[0] is None
        d = s["soak_s"]
        mix = soak_requests(tmp, static_ok)
        wrk = ["taskset", "-c", str(s["client_cpu"]), "wrk", "-t1", "-c100", f"-d{d}s", "--latency",
               "-s", str(WRK_LUA), f"http://127.0.0.1:{srv.port}/hello", "--", *[f"req={r}" for r in mix]]  # fmt: skip
        churn = ["taskset", "-c", str(s["client_cpu"]), "wrk", "-t1", "-c4", f"-d{d}s", "-s", str(WRK_LUA),
                 f"http://127.0.0.1:{srv.port}/hello", "--", "header=Connection: close"]  # fmt: skip
        def shown(cmd: list[str]) -> str:
            text = " ".join(shlex.quote(c) for c in cmd).replace(str(tmp), "$TMP")
            return text.replace(f":{srv.port}/", ":$PORT/").replace(str(REPO) + "/", "")

        rec["command"], rec["churn_command"] = shown(wrk), shown(churn)
        rec["mix"] = mix
        series: list[tuple[float, int]] = []
        m = Measure(s, mode, srv)
        out_path, churn_path = tmp / "soak.out", tmp / "churn.out"
        churn_out = open(churn_path, "wb")
        cp = subprocess.Popen(churn, stdout=churn_out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        result: dict = {}

        def load() -> None:
            result["v"] = run_timed(wrk, out_path, d + 60)

        t = threading.Thread(target=load)
        t0 = time.monotonic()
        t.start()
        while t.is_alive():
            if srv.alive():
                series.append((round(time.monotonic() - t0, 2), srv.rss_bytes()))
            t.join(timeout=1.0)
        cp.wait(timeout=60)
        churn_out.close()
        code, wall, gen_cpu, err = result["v"]
        rec["rss_series"] = series
        if err:
            rec["error"] = err
        if not m.finish(rec, wall, gen_cpu):
            return rec
        text = out_path.read_text(errors="replace")
        ctext = churn_path.read_text(errors="replace")
        rec["wrk_output"], rec["churn_output"] = text, ctext
        try:
            w, c = parse_wrk(text), parse_wrk(ctext)
        except WrkOutputError as e:
            rec.setdefault("error", f"wrk: {e}")
            return rec
        total = w["requests"] + c["requests"]
        rec["requests"] = total
        rec["requests_per_s"] = w["requests_per_s"] + c["requests_per_s"]
        rec["connections_closed"] = c["requests"]
        rec["cpu_us_per_req"] = rec["server_cpu_s"] * 1e6 / total if total else None
        rec["errors"] = w["errors"] + c["errors"]
        rec["latency_p99_us"] = w["latency_p99_us"]
        rec["growth"] = stats.growth(series, warmup_s=min(60.0, d * 0.1))
        err, _ = checks.check(srv.port, "hello")
        if err:
            rec["error"] = f"wrong answer after the soak: {err}"
    finally:
        srv.stop()
        rec["exit_status"] = srv.exit_status
    return rec


def fleet_static(fleet: Fleet) -> dict[str, bytes]:
    return {n: (fleet.root / n).read_bytes() for n in STATIC_FILES}


# --------------------------------------------------------------------------------------------
# One run


def one_run(fleet: Fleet, s: dict, sc: dict, mode: str, name: str, rep: int, tmp: Path,
            extra: dict) -> dict:  # fmt: skip
    rec: dict = {"scenario": sc["id"], "mode": mode, "server": name, "rep": rep}
    t0 = time.monotonic()
    try:
        return _one_run(fleet, s, sc, mode, name, tmp, extra, rec)
    finally:
        rec["elapsed_s"] = round(time.monotonic() - t0, 2)


def _one_run(fleet: Fleet, s: dict, sc: dict, mode: str, name: str, tmp: Path, extra: dict,
             rec: dict) -> dict:  # fmt: skip
    budget = s["quiet_budget_s"] - fleet.quiet_waited
    q = wait_quiet(bench_cores(s, mode), max(0.0, min(s["quiet_wait_s"], budget)))
    fleet.quiet_waited += q["waited_s"]
    rec.update(q)
    srv, err = fleet.start(name, mode)
    if err:
        rec["error"] = err
        return rec
    static = fleet_static(fleet)
    try:
        rec["port"], rec["pid"] = srv.port, srv.pid
        err, info = checks.check(srv.port, sc["feature"], static, PIPELINE_DEPTH)
        rec["check"] = info
        if err:
            rec["error"] = f"wrong answer before the run: {err}"
            return rec
        if sc["kind"] == "wrk":
            rec.update(run_wrk(s, sc, mode, srv, tmp))
        elif sc["kind"] == "open":
            rec.update(run_open(s, sc, mode, srv, tmp, extra["rate"], extra["oha"]))
        else:
            rec.update(run_idle(s, sc, mode, srv))
        if "error" not in rec:
            err, _ = checks.check(srv.port, sc["feature"], static, PIPELINE_DEPTH)
            if err:
                rec["error"] = f"wrong answer after the run: {err}"
    finally:
        srv.stop()
        rec["exit_status"] = srv.exit_status
        if srv.stop_note:
            rec["stop_note"] = srv.stop_note
        if "error" in rec:
            rec["server_log_tail"] = report.tail_text(srv.log)
    return rec


def describe(rec: dict) -> str:
    if "error" in rec:
        return "FAILED: " + rec["error"]
    if "bytes_per_conn" in rec:
        return (f"{rec['bytes_per_conn']:.0f} B/conn (RSS {rec['rss_before'] / 2**20:.1f} → "
                f"{rec['rss_after'] / 2**20:.1f} MiB, {rec['served']} served, {rec['still_open']} still open)")  # fmt: skip
    if rec.get("cpu_us_per_req") is None:
        return f"{rec['requests_per_s']:,.0f} req/s: {rec.get('note', '')}"
    text = (f"{rec['requests_per_s']:,.0f} req/s, {rec['cpu_us_per_req']:.2f} CPU µs/req, "
            f"p50 {report.fmt_us(rec.get('latency_p50_us'))}, p99 {report.fmt_us(rec.get('latency_p99_us'))}, "
            f"{rec['errors']} errors, server {rec['server_cpu_busy']:.0%} of a core")  # fmt: skip
    if "target_rps" in rec:
        text = f"target {rec['target_rps']:,}/s: " + text
    return text


def reps_for(s: dict, mode: str, sc: dict) -> int:
    if sc["kind"] == "idle":
        return s["idle_reps"]
    if sc["kind"] == "open":
        return s.get("open_reps", s["reps"])
    return s["reps"] if mode == "percore" else s["machine_reps"]


def supported(fleet: Fleet, name: str, sc: dict) -> str | None:
    return fleet.supports(name, sc["feature"].split(":")[0])


# --------------------------------------------------------------------------------------------
# Summaries


SUM_KEYS_WRK = ["requests_per_s", "cpu_us_per_req", "latency_p50_us", "latency_p99_us", "latency_p999_us",
                "server_cpu_busy", "bytes_per_response", "other_cpu_share", "peak_rss_bytes"]  # fmt: skip
SUM_KEYS_OPEN = ["target_rps", "requests_per_s", "achieved_fraction", "cpu_us_per_req", "latency_p50_us",
                 "latency_p90_us", "latency_p99_us", "latency_p999_us", "latency_p9999_us",
                 "server_cpu_busy", "other_cpu_share", "peak_rss_bytes"]  # fmt: skip
SUM_KEYS_IDLE = ["bytes_per_conn", "rss_before", "rss_after", "peak_rss_bytes"]


def summarize(s: dict, fleet_unsupported: dict, runs: list[dict]) -> dict:
    out: dict = {}
    for mode in s["modes"]:
        for sc in s["scenarios"]:
            if mode == "machine" and sc["id"] not in s["machine_scenarios"]:
                continue
            per: dict = {}
            for name in s["servers"]:
                why = fleet_unsupported.get((name, sc["id"]))
                if why:
                    per[name] = {"na": True, "by_design": True, "reason": why, "runs": 0}
                    continue
                rs = [r for r in runs if r["scenario"] == sc["id"] and r["server"] == name and r["mode"] == mode]
                bad = [r for r in rs if "error" in r]
                row: dict = {"runs": len(rs), "failed_runs": len(bad)}
                if not rs or bad:
                    row.update(na=True, by_design=False, reason=bad[0]["error"] if bad else "no run")
                    per[name] = row
                    continue
                keys = {"idle": SUM_KEYS_IDLE, "open": SUM_KEYS_OPEN}.get(sc["kind"], SUM_KEYS_WRK)
                for k in keys:
                    st = stats.median_runs(rs, k)
                    if st:
                        row[k] = st
                row["errors_total"] = sum(r.get("errors", 0) for r in rs)
                notes = sorted({r["note"] for r in rs if r.get("note")})
                if notes:
                    row["notes"] = notes
                if sc["kind"] == "idle":
                    row["served_min"] = min(r["served"] for r in rs)
                    row["still_open_min"] = min(r["still_open"] for r in rs)
                per[name] = row
            floor = per.get("floor", {}).get("cpu_us_per_req")
            for name, row in per.items():
                if floor and row.get("cpu_us_per_req"):
                    v = stats.ratio(row["cpu_us_per_req"]["median"], floor["median"])
                    if v is not None:
                        row["cpu_vs_floor"] = v
            out[f"{mode}:{sc['id']}"] = per
    return out


def source_commit(rivet_bin: Path) -> str:
    """The commit rivet was built from: the git checkout holding the binary (build/ of this tree
    or of another worktree), with -dirty when its sources (src/, include/, CMakeLists.txt) differ
    from that commit, untracked files included. RIVET_COMMIT overrides it (a binary built from
    an export such as `git archive`)."""
    if os.environ.get("RIVET_COMMIT"):
        return os.environ["RIVET_COMMIT"]
    where = str(rivet_bin.resolve().parent)
    top = run_text(["git", "-C", where, "rev-parse", "--show-toplevel"])
    if not top.startswith("/"):
        return "unknown"
    git = run_text(["git", "-C", top, "rev-parse", "--short", "HEAD"])
    dirty = run_text(["git", "-C", top, "status", "--porcelain", "--", "src", "include", "CMakeLists.txt"])
    return git + ("-dirty" if dirty else "")


def machine_info(rivet_bin: Path | None = None) -> dict:
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "nproc": os.cpu_count(),
        "cpu_model": model,
        "kernel": platform.release(),
        "clk_tck": CLK_TCK,
        "git_commit": source_commit(rivet_bin or REPO / "build" / "rivet"),
        "wrk": run_text(["wrk", "-v"]).splitlines()[0] if shutil.which("wrk") else "missing",
        "python": platform.python_version(),
        "mem_total_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
    }


# --------------------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    if len(argv) >= 1 and argv[0] == "--idle-client":
        return idle_client_main(int(argv[1]), int(argv[2]), float(argv[3]) if len(argv) > 3 else 1e9)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help="CI smoke test: ~1 minute, every server, strict")
    ap.add_argument("--full", action="store_true", help="bench-full: 3 × 5 s runs, all scenarios both modes, soak")
    ap.add_argument("--reps", type=int, help="runs per server per scenario (BENCH_REPS)")
    ap.add_argument("--duration", type=int, help="seconds per load run (BENCH_DURATION)")
    ap.add_argument("--servers", help=f"comma-separated subset of {','.join(KNOWN_SERVERS)} "
                    "(rivet_base: the build RIVET_BASE_BIN names, for before/after figures)")
    ap.add_argument("--modes", help="percore,machine (default both)")
    ap.add_argument("--scenarios", help="comma-separated scenario ids or prefixes (hello,pipeline16,close,"
                                        "static,echo,json,idle,open50,open90,soak; work,wait,cpu: rivet "
                                        "only, run only when named) or the set engine (issue 20's "
                                        "check: hello_c100,hello_c10000,pipeline16_c100,close_c100,"
                                        "static_1k_c100,work_c100,wait_c100,cpu_c100)")  # fmt: skip
    ap.add_argument("--rivet", default=os.environ.get("RIVET_BIN", str(REPO / "build" / "rivet")))
    ap.add_argument("--oha", default=os.environ.get("OHA_BIN", ""))
    ap.add_argument("--plot-python", default=os.environ.get("BENCH_PLOT_PYTHON", ""))
    ap.add_argument("--cache", default=os.environ.get("BENCH_CACHE", str(Path.home() / ".cache" / "rivet-bench")))
    ap.add_argument("--docs", choices=("auto", "yes", "no"), default=os.environ.get("BENCH_DOCS", "auto"),
                    help="rewrite docs/BENCHMARKS.md and docs/img (auto: not for --smoke)")  # fmt: skip
    ap.add_argument("--command", default=os.environ.get("BENCH_COMMAND"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    # Stopped from outside: unwind, so that the servers of the current run are stopped too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    s = build_settings(args)
    nofile = raise_nofile()
    need = max([sc["connections"] for sc in s["scenarios"]] + [0]) + 100
    if nofile[0] < need:
        log(f"warning: open-file limit is {nofile[0]}, below the {need} the scenarios need")
    cpus = os.sched_getaffinity(0)
    if s["server_cpu"] not in cpus or s["client_cpu"] not in cpus:
        raise SystemExit(f"need cores {s['server_cpu']} and {s['client_cpu']} (have {sorted(cpus)}); "
                         "set BENCH_SERVER_CPU / BENCH_CLIENT_CPU")  # fmt: skip
    for tool in ("wrk", "curl", "taskset"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} not found (bash scripts/setup.sh installs it)")
    oha = args.oha or shutil.which("oha") or ""
    if any(sc["kind"] == "open" for sc in s["scenarios"]) and not (oha and os.access(oha, os.X_OK)):
        log("bench: oha not found (bash bench/tools.sh installs it): open-loop rows will read n/a")
        oha = ""

    now = dt.datetime.now(dt.timezone.utc)
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    command = args.command or "python3 bench/bench.py " + " ".join(shlex.quote(a) for a in argv)
    RESULTS.mkdir(exist_ok=True)
    results_file = f"{stamp}-{s['profile']}.json"
    t_start = time.monotonic()

    runs: list[dict] = []
    unsupported: dict = {}
    with tempfile.TemporaryDirectory(prefix="rivet-bench-") as tmpname:
        tmp = Path(tmpname)
        (tmp / "echo-4k.bin").write_bytes(checks.echo_body())
        (tmp / "value.json").write_bytes(checks.JSON_BODY)
        fleet = Fleet(s, tmp, Path(args.rivet), Path(args.cache))
        fleet.quiet_waited = 0.0
        for name, err in fleet.setup_errors.items():
            log(f"{name}: {err}")
        plan = []
        for mode in s["modes"]:
            for sc in s["scenarios"]:
                if mode == "machine" and sc["id"] not in s["machine_scenarios"]:
                    continue
                names = []
                for name in s["servers"]:
                    why = supported(fleet, name, sc)
                    if not why and sc["kind"] == "open" and not oha:
                        why = "oha not installed (bash bench/tools.sh builds it)"
                    if why:
                        unsupported[(name, sc["id"])] = why
                    else:
                        names.append(name)
                plan.append((mode, sc, names))
        total = sum(len(n) * reps_for(s, m, sc) for m, sc, n in plan)
        soak_note = f", then a {s['soak_s']} s soak" if s["soak_s"] else ""
        log(f"bench: {s['profile']}: {len(plan)} scenario×mode, {total} runs{soak_note}; nofile {nofile[0]}")
        i = 0
        retakes_left = s["noise_retakes"]
        for mode, sc, names in plan:
            for rep in range(1, reps_for(s, mode, sc) + 1):
                for name in names:
                    i += 1
                    extra: dict = {}
                    if sc["kind"] == "open":
                        peak_runs = [r for r in runs if r["mode"] == mode and r["server"] == name
                                     and r["scenario"] == sc["peak_from"] and "error" not in r]  # fmt: skip
                        peak = stats.median_runs(peak_runs, "requests_per_s")
                        rate = stats.open_loop_target(peak["median"] if peak else None, sc["fraction"])
                        if rate is None:
                            why = f"no peak measured ({sc['peak_from']} failed)"
                            rec = {"scenario": sc["id"], "mode": mode, "server": name, "rep": rep, "error": why}
                            runs.append(rec)
                            log(f"[{i}/{total}] {mode} {sc['id']} rep {rep} {name}: n/a: {why}")
                            continue
                        extra = {"rate": rate, "oha": oha}
                    discarded = []
                    while True:
                        rec = one_run(fleet, s, sc, mode, name, rep, tmp, extra)
                        log(f"[{i}/{total}] {mode} {sc['id']} rep {rep} {name}: {describe(rec)}")
                        noisy = rec.get("other_cpu_share", 0) > s["noise_max"]
                        if not noisy or "error" in rec or len(discarded) >= 2 or retakes_left <= 0:
                            break
                        retakes_left -= 1
                        log(f"    other processes took {rec['other_cpu_share']:.2f} of a core during "
                            f"that run; retaking it ({retakes_left} retakes left)")  # fmt: skip
                        discarded.append(rec)
                    if discarded:
                        rec["noisy_attempts_discarded"] = discarded
                    runs.append(rec)
        soaks = []
        if s["soak_s"] > 0:
            for name in s["soak_servers"]:
                log(f"bench: soak: {name} for {s['soak_s']} s under mixed load, RSS every second")
                rec = run_soak(s, fleet, name, tmp)
                g = rec.get("growth") or {}
                log(f"bench: soak {name}: " + ("FAILED: " + rec["error"] if "error" in rec else
                    f"{rec['requests']:,} requests, RSS {g.get('baseline_bytes', 0) / 2**20:.1f} → "
                    f"{g.get('last_bytes', 0) / 2**20:.1f} MiB ({g.get('growth_pct', 0):+.2f}%)"))  # fmt: skip
                soaks.append(rec)
        server_commands = {mode: {n: fleet.command_template(n, mode) for n in s["servers"]} for mode in s["modes"]}
        versions = dict(fleet.versions)
        static_content_types = {}
        for r in runs:
            ct = r.get("check", {}).get("content_type")
            if ct:
                static_content_types.setdefault(r["server"], ct)

    load_commands = {}
    for mode, sc, _ in plan:
        if sc["kind"] == "wrk":
            c = " ".join(shlex.quote(x) for x in wrk_command(s, sc, mode, 0, None))
        elif sc["kind"] == "open":
            c = " ".join(shlex.quote(x) for x in oha_command(s, sc, 0, 0, "oha")).replace("-q 0", "-q $RATE")
        else:
            c = f"python3 bench/bench.py --idle-client $PORT {sc['connections']}"
        load_commands[f"{mode}:{sc['id']}"] = c.replace(":0/", ":$PORT/").replace(str(REPO) + "/", "")

    doc = {
        "host": os.environ.get("BENCH_HOST", ""),
        "date": now.strftime("%Y-%m-%d %H:%M UTC"),
        "command": command,
        "settings": {k: v for k, v in s.items() if k != "scenarios"},
        "scenarios": s["scenarios"],
        "machine": machine_info(Path(args.rivet)),
        "versions": versions,
        "oha": run_text([oha, "--version"]) if oha else None,
        "server_commands": server_commands,
        "load_commands": load_commands,
        "results_file": results_file,
        "nofile": nofile[0],
        "elapsed_s": round(time.monotonic() - t_start, 1),
        "runs": runs,
        "soaks": soaks,
        "unsupported": {f"{n}:{sc}": why for (n, sc), why in unsupported.items()},
        "static_content_types": static_content_types,
    }
    doc["summary"] = summarize(s, unsupported, runs)
    (RESULTS / results_file).write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")

    sections = report.render(doc)
    for key, text in sections.items():
        print(text)
        print()
    write = args.docs == "yes" or (args.docs == "auto" and not s["smoke"])
    if write:
        plots = report.make_plots(doc, RESULTS / results_file, args.plot_python, sections)
        report.write_docs(sections)
        log(f"bench: wrote docs/BENCHMARKS.md ({', '.join(sections)}){plots} and bench/results/{results_file}")
    else:
        log(f"bench: wrote bench/results/{results_file} (docs untouched)")
    log(f"bench: took {doc['elapsed_s']:.0f} s")

    problems = []
    for key, per in doc["summary"].items():
        for name, row in per.items():
            if row.get("na") and not row.get("by_design"):
                problems.append(f"{key} {name}: {row['reason']}")
    for rec in soaks:
        if "error" in rec:
            problems.append(f"soak {rec['server']}: {rec['error']}")
    for p in problems:
        log(f"bench: FAILED {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
