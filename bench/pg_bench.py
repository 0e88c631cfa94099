#!/usr/bin/env python3
"""PostgreSQL and the HTTP client, per core: rivet against Go (`bash bench/run.sh --pg`).

rivet's server is bench/pg_server.cpp (rivet::pg, rivet::HttpClient), Go's bench/peers/go_pg
(net/http, pgx v5's pgxpool, net/http's client), route for route the same, each with a query
pool of --pool connections (4) and a /sleep pool of 64. The server is pinned to one core
(GOMAXPROCS=1 for Go); PostgreSQL 15 (started here: tests/e2e/pg_cluster.py, a throwaway
cluster on a Unix socket, a World table of 10,000 rows), the load generator (wrk) and nginx on
the other. Runs are interleaved (rivet, go, ... per scenario and rep), each on a fresh server,
after a 1 s warm-up that opens its pools.

Scenarios:
    db_c100            TechEmpower's single query: GET /db, wrk -c100
    queries20_c100     TechEmpower's 20 queries: GET /queries?queries=20, wrk -c100; the 20
                       sent as one batch in pipeline mode (rivet: pg::Batch, unnamed statements;
                       go: pgx.Batch of the prepared statement; go_exec: pgx.Batch of unnamed
                       statements, as rivet's)
    hello_idle_c100    GET /hello, wrk -c100: its p99 on a server with nothing else to do
    hello_sleep50_c100 the same while 50 more connections each wait on GET /sleep
                       (select pg_sleep(0.2)), counted in pg_stat_activity before and after
    fetch_c32          GET /fetch: the server GETs nginx's /hello through its client's
                       kept-alive pool (32 idle connections at most in both), wrk -c32

With --servers rivet,rivet_base and PG_BENCH_BASE_SERVER=<another build of pg_bench_server>,
both builds run side by side (before/after figures of a change to rivet::pg or the client).
With --perf, each of rivet's runs is profiled (`perf record -e cpu-clock -g -p PID`) into
bench/results/<timestamp>-pg-perf/; `perf report -i FILE --no-children --sort dso,symbol`.

Every answer is checked before and after its run: the rows against the table itself, the body.
Per run: req/s, server CPU µs per request (utime+stime from /proc over the run), wrk's p99, and
the load average when it began. Raw runs: bench/results/<timestamp>-pg.json; the markdown
tables go to stdout.
"""
from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import http.client
import json
import os
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

import pg_report  # noqa: E402
from peers import HELLO, PEERS, Ports, Server, log, process_tree, run_text  # noqa: E402
from peers import Fleet as PeerFleet  # noqa: E402
from pg_cluster import PgCluster, available as pg_available  # noqa: E402
from wrk_output import WrkOutputError, parse as parse_wrk  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
SCENARIOS = pg_report.SCENARIOS
SERVERS = ("rivet", "go", "go_exec")  # the default set
# rivet_base: the server PG_BENCH_BASE_SERVER names (another build of bench/pg_server.cpp),
# beside this one, for before/after figures of a change from one interleaved run.
KNOWN_SERVERS = SERVERS + ("rivet_base",)
# Who runs what: go_exec differs from go only in the batch of queries20.
RUNS_ON = {"queries20_c100": KNOWN_SERVERS}
DEFAULT_RUNS_ON = ("rivet", "go", "rivet_base")
PATHS = {"db_c100": "/db", "queries20_c100": "/queries?queries=20", "hello_idle_c100": "/hello",
         "hello_sleep50_c100": "/hello", "fetch_c32": "/fetch"}
CONNECTIONS = {"fetch_c32": 32}
SLEEPERS = 50
SLEEP_SQL = "select pg_sleep(0.2)"


def cache_dir() -> Path:
    return Path(os.environ.get("BENCH_CACHE", Path.home() / ".cache" / "rivet-bench"))


def build_go_peer() -> Path:
    """bench/peers/go_pg, built once per content of its files into the bench cache."""
    src = PEERS / "go_pg"
    digest = hashlib.sha256()
    for name in ("main.go", "go.mod", "go.sum"):
        digest.update((src / name).read_bytes())
    out = cache_dir() / "bin" / f"go_pg-{digest.hexdigest()[:16]}"
    if out.exists():
        return out
    go = shutil.which("go") or "/usr/local/go/bin/go"
    out.parent.mkdir(parents=True, exist_ok=True)
    r = subprocess.run([go, "build", "-o", str(out.with_suffix(".tmp")), "."], cwd=src,
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise SystemExit(f"pg bench: go build of bench/peers/go_pg failed: {r.stderr[-800:]}")
    out.with_suffix(".tmp").rename(out)
    return out


class Database:
    """The throwaway PostgreSQL cluster, pinned to the client's core, with its World table."""

    def __init__(self, cpu: int):
        self.cluster = PgCluster()
        self.cluster.start()
        pid = int((self.cluster.data / "postmaster.pid").read_text().split()[0])
        for p in process_tree(pid):  # its backends, forked later, inherit the postmaster's
            os.sched_setaffinity(p, {cpu})
        self.sql("create table world (id integer primary key, randomnumber integer not null)")
        self.sql("insert into world select i, 1 + floor(random() * 10000)::int "
                 "from generate_series(1, 10000) i")
        self.sql("vacuum analyze world")
        self.conninfo = self.cluster.conninfo
        self.version = self.sql("show server_version")

    def sql(self, statement: str) -> str:
        return self.cluster.sql(statement)

    def sleeping(self) -> int:
        return int(self.sql(f"select count(*) from pg_stat_activity where query = '{SLEEP_SQL}' "
                            "and state = 'active'"))

    def stop(self) -> None:
        self.cluster.destroy()


class Fleet:
    def __init__(self, tmp: Path, args):
        self.tmp, self.args = tmp, args
        self.ports = Ports(args.port_base)
        self.logs = tmp / "logs"
        self.logs.mkdir()
        self.rivet_bin = Path(os.environ.get("PG_BENCH_SERVER", REPO / "build" / "pg_bench_server"))
        if not os.access(self.rivet_bin, os.X_OK):
            raise SystemExit(f"pg bench: {self.rivet_bin} missing: build it (rivet_pg needs libpq-dev)")
        self.go_bin = build_go_peer()
        # nginx answers /fetch's upstream requests: bench/peers/nginx.conf, one process, on the
        # client's core (peers.Fleet pins "its server" to the core it is given).
        (tmp / "nginx").mkdir()
        self.nginx_fleet = PeerFleet({"servers": ["nginx"], "port_base": args.port_base + 500,
                                      "server_cpu": args.client_cpu}, tmp / "nginx", tmp, cache_dir())
        self.nginx = None
        self.db = Database(args.client_cpu)  # last: nothing after it can fail and leave it running

    def upstream(self) -> str:
        if self.nginx is None:
            srv, err = self.nginx_fleet.start("nginx", "percore")
            if err:
                raise RuntimeError(f"nginx: {err}")
            self.nginx = srv
        return f"http://127.0.0.1:{self.nginx.port}/hello"

    def start(self, name: str, scenario: str) -> Server:
        port = self.ports.take()
        pin = ["taskset", "-c", str(self.args.server_cpu)]
        upstream = self.upstream() if scenario == "fetch_c32" else "http://127.0.0.1:1/"
        pool = str(self.args.pool)
        if name in ("rivet", "rivet_base"):
            binary = self.rivet_bin if name == "rivet" else os.environ.get("PG_BENCH_BASE_SERVER", "")
            cmd = pin + [str(binary), "--port", str(port), "--pg", self.db.conninfo,
                         "--pool", pool, "--upstream", upstream, "--threads", "1"]
        else:
            cmd = pin + ["env", "GOMAXPROCS=1", str(self.go_bin), "-port", str(port), "-pg",
                         self.db.conninfo, "-pool", pool, "-upstream", upstream, "-batch",
                         "exec" if name == "go_exec" else "prepared"]
        srv = Server(name, port, cmd, self.logs)
        err = srv.start()
        if err:
            raise RuntimeError(f"{name} failed to start: {err}")
        return srv

    def close(self) -> None:
        if self.nginx:
            self.nginx.stop()
        self.db.stop()


def get(port: int, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def check(fleet: Fleet, port: int, scenario: str) -> None:
    """The scenario's answer is right: rows that are the table's, the exact body."""
    path = PATHS[scenario]
    status, body = get(port, path)
    if status != 200:
        raise RuntimeError(f"GET {path}: status {status}: {body[:200]!r}")
    if scenario in ("db_c100", "queries20_c100"):
        doc = json.loads(body)
        rows = [doc] if scenario == "db_c100" else doc
        if scenario == "queries20_c100" and (not isinstance(doc, list) or len(doc) != 20):
            raise RuntimeError(f"GET {path}: not an array of 20: {body[:200]!r}")
        for row in rows:
            if sorted(row) != ["id", "randomNumber"] or not 1 <= row["id"] <= 10000:
                raise RuntimeError(f"GET {path}: not a World row: {row!r}")
        ids = ",".join(str(r["id"]) for r in rows)
        found = fleet.db.sql(f"select id, randomnumber from world where id in ({ids})")
        table = dict(tuple(map(int, line.split("|"))) for line in found.split("\n"))
        if any(table[r["id"]] != r["randomNumber"] for r in rows):
            raise RuntimeError(f"GET {path}: rows differ from the table: {body[:200]!r}")
    elif body != HELLO:
        raise RuntimeError(f"GET {path}: body {body[:100]!r}, not {HELLO!r}")


def wrk(fleet: Fleet, port: int, path: str, connections: int, seconds: int, out: Path) -> dict:
    cmd = ["taskset", "-c", str(fleet.args.client_cpu), "wrk", "-t1", f"-c{connections}",
           f"-d{seconds}s", "--latency", "-s", str(BENCH_DIR / "wrk.lua"),
           f"http://127.0.0.1:{port}{path}"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60)
    out.write_text(r.stdout + r.stderr)
    return parse_wrk(r.stdout + r.stderr)


def upstream_sockets(fleet: Fleet, state: str) -> int:
    """Sockets to nginx in a TCP state (ss): how the client's pool kept its connections."""
    port = fleet.nginx.port  # TIME_WAIT stays on the side that closed first: either side
    out = run_text(["ss", "-Htan", "state", state, f"( dport = :{port} or sport = :{port} )"])
    return len([line for line in out.splitlines() if line.strip()])


def one_run(fleet: Fleet, name: str, sc: str, rep: int) -> dict:
    srv = fleet.start(name, sc)
    rec = {"server": name, "scenario": sc, "rep": rep, "load_avg_1m": os.getloadavg()[0]}
    sleepers = None
    try:
        check(fleet, srv.port, sc)
        conns, seconds = CONNECTIONS.get(sc, 100), fleet.args.duration
        if not fleet.args.smoke:  # opens the pools (and Go's runtime warms up) outside the run
            wrk(fleet, srv.port, PATHS[sc], conns, 1, fleet.logs / f"{name}-{sc}-{rep}-warm.txt")
        if sc == "hello_sleep50_c100":
            sleepers = subprocess.Popen(
                ["taskset", "-c", str(fleet.args.client_cpu), "wrk", "-t1", f"-c{SLEEPERS}",
                 f"-d{seconds + 4}s", "-s", str(BENCH_DIR / "wrk.lua"),
                 f"http://127.0.0.1:{srv.port}/sleep"], stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, text=True)  # fmt: skip
            deadline = time.monotonic() + 10
            while (n := fleet.db.sleeping()) < SLEEPERS * 0.9 and time.monotonic() < deadline:
                time.sleep(0.1)
            rec["sleeping_before"] = n
        perf = None
        if fleet.args.perf and name == "rivet":  # perf's own overhead lands in this run's figures
            rec["perf_data"] = str(fleet.args.perf_dir / f"rivet-{sc}-{rep}.perf.data")
            perf = subprocess.Popen(["perf", "record", "-e", "cpu-clock", "-g", "-o",
                                     rec["perf_data"], "-p", str(srv.pid), "--", "sleep",
                                     str(max(1, seconds - 1))], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)  # fmt: skip
        closed0 = upstream_sockets(fleet, "time-wait") if sc == "fetch_c32" else 0
        cpu0, t0 = srv.cpu_ticks(), time.monotonic()
        w = wrk(fleet, srv.port, PATHS[sc], conns, seconds, fleet.logs / f"{name}-{sc}-{rep}.txt")
        time.sleep(0.3)  # the closing of wrk's connections belongs to the run
        ticks = srv.cpu_ticks() - cpu0
        if perf:
            perf.wait(timeout=60)
        if sc == "fetch_c32":  # a kept-alive pool: as many open as wrk's connections, none closed
            rec["upstream_open"] = upstream_sockets(fleet, "established") // 2  # both ends
            rec["upstream_closed"] = max(0, upstream_sockets(fleet, "time-wait") - closed0)
        if sleepers:
            rec["sleeping_after"] = fleet.db.sleeping()
            text = sleepers.communicate(timeout=seconds + 60)[0]
            s = parse_wrk(text)
            rec["sleep_requests_per_s"], rec["sleep_errors"] = s["requests_per_s"], s["errors"]
            sleepers = None
        rec.update({"requests": w["requests"], "errors": w["errors"],
                    "requests_per_s": w["requests_per_s"], "latency_p99_us": w["latency_p99_us"],
                    "wall_s": time.monotonic() - t0, "server_cpu_s": ticks / CLK_TCK,
                    "cpu_us_per_request": (ticks / CLK_TCK * 1e6 / w["requests"]
                                           if w["requests"] else None)})
        check(fleet, srv.port, sc)
        if not srv.alive():
            raise RuntimeError(f"{name} died during the run")
    finally:
        if sleepers:
            sleepers.kill()
            sleepers.wait()
        srv.stop()
    return rec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pg", action="store_true", help="(from bench/run.sh)")
    ap.add_argument("--smoke", action="store_true",
                    help="every scenario once for 1 s, no warm-up: checks that it runs")
    ap.add_argument("--reps", type=int, default=int(os.environ.get("BENCH_REPS", "3")))
    ap.add_argument("--duration", type=int, default=int(os.environ.get("BENCH_DURATION", "5")))
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--servers", default=",".join(SERVERS),
                    help="rivet,go,go_exec by default; rivet_base: the build PG_BENCH_BASE_SERVER names")
    ap.add_argument("--pool", type=int, default=4, help="query pool connections (both servers)")
    ap.add_argument("--server-cpu", type=int, default=int(os.environ.get("BENCH_SERVER_CPU", "0")))
    ap.add_argument("--client-cpu", type=int, default=int(os.environ.get("BENCH_CLIENT_CPU", "1")))
    ap.add_argument("--port-base", type=int, default=18900)
    ap.add_argument("--perf", action="store_true",
                    help="perf record -e cpu-clock -g of rivet's runs into bench/results/<stamp>-pg-perf/"
                    " (their figures then carry perf's overhead)")
    args = ap.parse_args()
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    args.perf_dir = BENCH_DIR / "results" / f"{stamp}-pg-perf"
    if args.perf:
        args.perf_dir.mkdir(parents=True)
    if args.smoke:
        args.reps, args.duration = 1, 1
    scenarios = [s for s in args.scenarios.split(",") if s]
    servers = [s for s in args.servers.split(",") if s]
    for s in scenarios:
        if s not in SCENARIOS:
            raise SystemExit(f"unknown scenario {s!r} (known: {', '.join(SCENARIOS)})")
    for s in servers:
        if s not in KNOWN_SERVERS:
            raise SystemExit(f"unknown server {s!r} (known: {', '.join(KNOWN_SERVERS)})")
    if "rivet_base" in servers and not os.access(os.environ.get("PG_BENCH_BASE_SERVER", "/-"), os.X_OK):
        raise SystemExit("rivet_base: set PG_BENCH_BASE_SERVER to the pg_bench_server to compare with")
    if not pg_available():
        raise SystemExit("pg bench: PostgreSQL 15 not installed (bash scripts/setup.sh)")
    runs = []
    with tempfile.TemporaryDirectory(prefix="rivet-pg-bench-") as tmp:
        fleet = Fleet(Path(tmp), args)
        try:
            for rep in range(args.reps):
                for sc in scenarios:
                    for name in [s for s in servers if s in RUNS_ON.get(sc, DEFAULT_RUNS_ON)]:
                        log(f"pg bench: {sc} {name} run {rep + 1}/{args.reps}")
                        try:
                            runs.append(one_run(fleet, name, sc, rep))
                        except (WrkOutputError, ValueError, RuntimeError, OSError,
                                subprocess.TimeoutExpired) as e:
                            runs.append({"server": name, "scenario": sc, "rep": rep, "error": str(e)})
                            log(f"pg bench: {sc} {name}: {e}")
        finally:
            versions = {"rivet": "bench/pg_server.cpp at "
                        + run_text(["git", "-C", str(REPO), "describe", "--always", "--dirty"]),
                        "go": run_text([shutil.which("go") or "go", "version"]) + ", pgx v5 "
                        + (PEERS / "go_pg" / "go.mod").read_text().split("pgx/v5 ")[1].split()[0],
                        "postgresql": fleet.db.version, "wrk": run_text(["wrk", "-v"]).splitlines()[0],
                        "nginx": run_text([shutil.which("nginx") or "/usr/sbin/nginx", "-v"])}
            fleet.close()
    good = [r for r in runs if "error" not in r]
    out_dir = BENCH_DIR / "results"
    out_dir.mkdir(exist_ok=True)
    command = os.environ.get("BENCH_COMMAND", "bash bench/run.sh --pg")
    (out_dir / f"{stamp}-pg.json").write_text(json.dumps(
        {"command": command, "versions": versions, "pool": args.pool, "runs": runs}, indent=1))
    print(pg_report.report(good, command, args.pool))
    for r in runs:
        if "error" in r:
            print(f"\n{r['server']} {r['scenario']}: {r['error']}")
    print("\n" + "; ".join(f"{k}: {v}" for k, v in versions.items()))
    if len(good) != len(runs):
        sys.exit(1)


if __name__ == "__main__":
    main()
