#!/usr/bin/env python3
"""Concurrency models under CPU-heavy load (`make bench-models`, `bash bench/run.sh --models`).

The question users ask: when some requests burn CPU, what happens to the heavy route's
throughput, and to the cheap requests queued behind it? Each model serves the same two routes:

    GET /calc?value=0.5&terms=200000   ln(1+x) by its series: milliseconds of pure CPU
    GET /hello                         `Hello, World!`

and gets the same load, with nothing pinned (the whole machine):

    heavy  wrk, 16 connections (2 per core where that is more) in a closed loop on /calc (more
           heavy requests in flight than cores): its req/s is the heavy route's throughput
    light  oha at a constant 1,000 req/s on /hello over 10 connections, latency corrected for
           coordinated omission: its p99 is what a cheap request waits meanwhile; also measured
           alone first (the baseline)

Models:
    (a) rivet, /calc offloaded to the worker pool with 1, 2 and N workers (N = cores, and 2×
        cores when that is 2); I/O loops = cores
    (b) rivet with the same handlers inline on the I/O loops: needs a flag rivet does not have
        (looked for: --inline-heavy in `rivet --help`); shown as "needs flag" until it exists
    (c) cpp-httplib, thread per connection (bench/peers/httplib_hello.cpp, the same calc loop)

Runs interleave the models (a1 a2 aN c a1 a2 ...); figures are medians with min–max.
Outputs: bench/results/<timestamp>-models.json, the `models` section of docs/BENCHMARKS.md and
docs/img/bench-models.png.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

import bench  # noqa: E402
import checks  # noqa: E402
import report  # noqa: E402
import stats  # noqa: E402
from oha_output import OhaOutputError, parse as parse_oha  # noqa: E402
from peers import Fleet, log, run_text  # noqa: E402
from wrk_output import WrkOutputError, parse as parse_wrk  # noqa: E402

HEAVY_PATH = "/calc?value=0.5&terms=200000"
HEAVY_CONNECTIONS = 16  # at least; 2 per core on machines of more than 8
LIGHT_RATE = 1000
LIGHT_CONNECTIONS = 10
INLINE_FLAG = "--inline-heavy"


def model_list(cores: int, rivet_help: str) -> list[dict]:
    ws = sorted({1, 2, cores} | ({2 * cores} if cores <= 2 else set()))
    out = []
    for w in ws:
        note = " (cores)" if w == cores else (" (2× cores)" if w == 2 * cores else "")
        out.append({"id": f"rivet_w{w}", "label": f"(a) rivet, {w} worker{'s' if w > 1 else ''}{note}",
                    "server": "rivet", "rivet": {"threads": cores, "workers": w}})  # fmt: skip
    inline = {"id": "rivet_inline", "label": "(b) rivet, handlers inline on the I/O loops",
              "server": "rivet", "rivet": {"threads": cores, "workers": 1, "flags": [INLINE_FLAG]}}  # fmt: skip
    if INLINE_FLAG not in rivet_help:
        inline["needs_flag"] = (f"needs a flag: rivet has no way to run offloaded routes inline "
                                f"(looked for {INLINE_FLAG} in `rivet --help`)")  # fmt: skip
    out.append(inline)
    out.append({"id": "httplib_tpc", "label": "(c) cpp-httplib, thread per connection", "server": "httplib"})
    return out


def heavy_check(port: int) -> str | None:
    try:
        (st, _, body), = checks.exchange(port, checks.request_bytes(port, "GET", HEAVY_PATH), timeout=30)
    except (OSError, ValueError) as e:
        return f"/calc check: {e}"
    if st != 200:
        return f"/calc: status {st} {body[:80]!r}"
    try:
        doc = json.loads(body)
    except ValueError:
        return f"/calc: not JSON: {body[:80]!r}"
    if abs(doc.get("result", 0) - 0.4054651081081643) > 1e-9:  # ln(1.5) to the series' precision
        return f"/calc: result {doc.get('result')!r}, want ≈ ln(1.5)"
    return None


def light_cmd(oha: str, port: int, d: int) -> list[str]:
    return [oha, "--no-tui", "--output-format", "json", "-z", f"{d}s", "-w", "-c", str(LIGHT_CONNECTIONS),
            "-q", str(LIGHT_RATE), "--latency-correction", f"http://127.0.0.1:{port}/hello"]  # fmt: skip


def heavy_cmd(port: int, d: int, connections: int) -> list[str]:
    return ["wrk", "-t1", f"-c{connections}", f"-d{d}s", "--latency", "-s", str(bench.WRK_LUA),
            f"http://127.0.0.1:{port}{HEAVY_PATH}"]  # fmt: skip


def one(fleet: Fleet, s: dict, m: dict, rep: int, tmp: Path, oha: str | None) -> dict:
    """One run of model `m`. Without oha (only allowed for --smoke) the light load is skipped:
    the run still proves that the server started, answered both routes and survived."""
    rec: dict = {"model": m["id"], "rep": rep}
    q = bench.wait_quiet(None, max(0.0, min(s["quiet_wait_s"], s["quiet_budget_s"] - fleet.quiet_waited)))
    fleet.quiet_waited += q["waited_s"]
    rec.update(q)
    srv, err = fleet.start(m["server"], "machine", m.get("rivet"))
    if err:
        rec["error"] = err
        return rec
    try:
        err, _ = checks.check(srv.port, "hello")
        err = err or heavy_check(srv.port)
        if err:
            rec["error"] = f"wrong answer before the run: {err}"
            return rec
        d = s["duration_s"]
        # 1. /hello alone: the baseline.
        base = None
        if oha:
            bench.run_timed(light_cmd(oha, srv.port, s["baseline_s"]), tmp / "light0.out", s["baseline_s"] + 60)
            try:
                base = parse_oha((tmp / "light0.out").read_text(errors="replace"))
            except OhaOutputError as e:
                rec["error"] = f"oha (baseline): {e}"
                return rec
            rec["baseline"] = base
        # 2. Heavy closed loop and light open loop together.
        cpu0, t0, stat0 = srv.cpu_ticks(), time.monotonic(), bench.cpu_stat(None)
        res: dict = {}
        th = threading.Thread(target=lambda: res.update(h=bench.run_timed(heavy_cmd(srv.port, d, s["heavy_connections"]), tmp / "heavy.out", d + 60)))
        th.start()
        time.sleep(0.5)  # let the heavy load fill the workers first
        lcpu = 0.0
        if oha:
            _, _, lcpu, _ = bench.run_timed(light_cmd(oha, srv.port, d - 1), tmp / "light.out", d + 60)
        rec["server_threads"] = srv.threads()  # while the heavy load still runs
        th.join()
        span = time.monotonic() - t0
        if not srv.alive():
            rec["error"] = f"server died during the run (status {srv.proc.returncode})"
            return rec
        server_s = (srv.cpu_ticks() - cpu0) / bench.CLK_TCK
        rec["server_cpu_cores"] = round(server_s / span, 2)
        # What the rest of the machine took meanwhile (other people's work on a shared machine):
        # all cores' busy time less the server's and the two load generators'.
        busy_s = (bench.cpu_stat(None)["busy"] - stat0["busy"]) / bench.CLK_TCK
        rec["other_cpu_cores"] = round(max(0.0, busy_s - server_s - res["h"][2] - lcpu) / span, 2)
        rec["peak_rss_bytes"] = srv.peak_rss_bytes()
        try:
            h = parse_wrk((tmp / "heavy.out").read_text(errors="replace"))
            light = parse_oha((tmp / "light.out").read_text(errors="replace")) if oha else None
        except (WrkOutputError, OhaOutputError) as e:
            rec["error"] = f"load output: {e}"
            return rec
        rec["heavy"] = h
        rec["heavy_rps"] = h["requests_per_s"]
        rec["heavy_errors"] = h["errors"]
        rec["heavy_p50_us"] = h["latency_p50_us"]
        rec["heavy_p99_us"] = h["latency_p99_us"]
        if light and base:
            rec["light"] = light
            rec["hello_p50_us"] = light["latency_percentiles_us"].get("50")
            rec["hello_p99_us"] = light["latency_percentiles_us"].get("99")
            rec["hello_p999_us"] = light["latency_percentiles_us"].get("99.9")
            rec["hello_rps"] = light["requests_per_s"]
            rec["hello_errors"] = light["errors"]
            rec["baseline_hello_p99_us"] = base["latency_percentiles_us"].get("99")
        err, _ = checks.check(srv.port, "hello")
        if err:
            rec["error"] = f"wrong answer after the run: {err}"
    finally:
        srv.stop()
        if "error" in rec:
            rec["server_log_tail"] = report.tail_text(srv.log)
    return rec


KEYS = ["other_cpu_cores", "heavy_rps", "heavy_p50_us", "heavy_p99_us", "hello_p50_us", "hello_p99_us", "hello_p999_us",
        "hello_rps", "baseline_hello_p99_us", "server_cpu_cores", "peak_rss_bytes", "server_threads"]  # fmt: skip


def summarize(models: list[dict], runs: list[dict]) -> list[dict]:
    out = []
    for m in models:
        row = {"id": m["id"], "label": m["label"]}
        if m.get("needs_flag"):
            row.update(na=True, reason=m["needs_flag"], by_design=True)
            out.append(row)
            continue
        rs = [r for r in runs if r["model"] == m["id"]]
        bad = [r for r in rs if "error" in r]
        if not rs or bad:
            row.update(na=True, reason=bad[0]["error"] if bad else "no run", by_design=False)
            out.append(row)
            continue
        for k in KEYS:
            st = stats.median_runs(rs, k)
            if st:
                row[k] = st
        row["heavy_errors"] = sum(r["heavy_errors"] for r in rs)
        row["hello_errors"] = sum(r.get("hello_errors", 0) for r in rs)
        row["runs"] = len(rs)
        out.append(row)
    return out


def render(doc: dict) -> str:
    s = doc["settings"]
    fu = report.fmt_us
    L = [f"Measured {doc['date']} with `{doc['command']}`.", ""]
    L.append(f"- Machine: {doc['machine']['nproc']} CPUs, {doc['machine']['cpu_model']}; nothing pinned; "
             f"{s['reps']} run(s) per model, interleaved, {s['duration_s']} s each; median (min–max).")  # fmt: skip
    L.append(f"- Heavy: `{doc['commands']['heavy']}` (closed loop, {s['heavy_connections']} connections). "
             f"Light: `{doc['commands']['light']}` (open loop, {LIGHT_RATE:,} req/s, latency corrected), "
             f"alone for {s['baseline_s']} s first (baseline), then during the heavy load.")  # fmt: skip
    L.append("- \"others' CPU\": what processes other than the server and the two load generators took "
             "meanwhile, in cores (a shared machine); where it is high, every model had less CPU than "
             "the machine has.")
    L.append(f"- {doc['versions'].get('rivet', 'rivet ?')} at {doc['machine']['git_commit']}; "
             f"{doc['versions'].get('httplib', '')}; {doc.get('oha', '')}.")  # fmt: skip
    L.append("")
    L.append("| model | heavy req/s | heavy p50 / p99 | /hello p99 alone | /hello p50 / p99 / p99.9 under heavy load | /hello errors | heavy errors | server CPU (cores) | others' CPU (cores) | threads | peak RSS |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in doc["models_summary"]:
        if r.get("na"):
            L.append(f"| {r['label']} | {'needs flag' if r.get('by_design') else '**n/a** ✗'} — {report.md_cell(r['reason'], 120)} | | | | | | | | | |")
            continue
        g = lambda k: (r.get(k) or {}).get("median")  # noqa: E731
        p99 = r.get("hello_p99_us")
        if not p99:  # a smoke run without oha: no light load
            L.append(f"| {r['label']} | {report.fmt_range(r['heavy_rps'], ',.0f')} "
                     f"| {fu(g('heavy_p50_us'))} / {fu(g('heavy_p99_us'))} | n/a (no oha) | n/a (no oha) | | "
                     f"{r['heavy_errors']:,} | {g('server_cpu_cores'):.2f} | {g('other_cpu_cores'):.2f} "
                     f"| {g('server_threads'):.0f} | {report.fmt_bytes(g('peak_rss_bytes'))} |")  # fmt: skip
            continue
        L.append(
            f"| {r['label']} | {report.fmt_range(r['heavy_rps'], ',.0f')} "
            f"| {fu(g('heavy_p50_us'))} / {fu(g('heavy_p99_us'))} | {fu(g('baseline_hello_p99_us'))} "
            f"| {fu(g('hello_p50_us'))} / **{fu(p99['median'])}** ({fu(p99['min'])}–{fu(p99['max'])}) / {fu(g('hello_p999_us'))} "
            f"| {r['hello_errors']:,} | {r['heavy_errors']:,} | {g('server_cpu_cores'):.2f} "
            f"| {g('other_cpu_cores'):.2f} | {g('server_threads'):.0f} "
            f"| {report.fmt_bytes(g('peak_rss_bytes'))} |"
        )  # fmt: skip
    L.append("")
    L.append(f"![Concurrency models: heavy throughput and /hello p99](img/{report.host_prefix(doc)}bench-models.png)")
    L.append("")
    L.append("Server commands:")
    L.append("")
    for mid, c in doc["server_commands"].items():
        L.append(f"- {mid}: `{c}`")
    L.append("")
    L.append(f"Raw results: `bench/results/{doc['results_file']}` (not committed).")
    return "\n".join(L)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help="1 run of 3 s per model; docs untouched")
    ap.add_argument("--full", action="store_true", help="(same as the default for models)")
    ap.add_argument("--reps", type=int)
    ap.add_argument("--duration", type=int)
    ap.add_argument("--rivet", default=os.environ.get("RIVET_BIN", str(REPO / "build" / "rivet")))
    ap.add_argument("--oha", default=os.environ.get("OHA_BIN", ""))
    ap.add_argument("--plot-python", default=os.environ.get("BENCH_PLOT_PYTHON", ""))
    ap.add_argument("--cache", default=os.environ.get("BENCH_CACHE", str(Path.home() / ".cache" / "rivet-bench")))
    ap.add_argument("--docs", choices=("auto", "yes", "no"), default=os.environ.get("BENCH_DOCS", "auto"))
    ap.add_argument("--command", default=os.environ.get("BENCH_COMMAND"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    bench.raise_nofile()
    s = {
        "reps": args.reps or (1 if args.smoke else bench.env_int("BENCH_REPS", 3)),
        "duration_s": args.duration or (3 if args.smoke else bench.env_int("BENCH_DURATION", 10)),
        "baseline_s": 2 if args.smoke else 3,
        "servers": ["rivet", "httplib"],
        "port_base": bench.env_int("BENCH_PORT_BASE", 18300),
        "server_cpu": 0, "client_cpu": 1,
        "quiet_wait_s": 0 if args.smoke else 10, "quiet_budget_s": 0 if args.smoke else 60,
        "cores": len(os.sched_getaffinity(0)),
    }  # fmt: skip
    s["heavy_connections"] = max(HEAVY_CONNECTIONS, 2 * s["cores"])
    oha = args.oha if args.oha and os.access(args.oha, os.X_OK) else None
    if not oha and not args.smoke:
        raise SystemExit("models: oha not found (bash bench/tools.sh builds it)")
    if not oha:
        log("models: no oha (bash bench/tools.sh builds it): smoke run without the /hello load")
    now = dt.datetime.now(dt.timezone.utc)
    results_file = f"{now.strftime('%Y%m%dT%H%M%SZ')}-models{'-smoke' if args.smoke else ''}.json"
    t_start = time.monotonic()
    runs: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="rivet-models-") as tmpname:
        tmp = Path(tmpname)
        fleet = Fleet(s, tmp, Path(args.rivet), Path(args.cache))
        fleet.quiet_waited = 0.0
        for name, err in fleet.setup_errors.items():
            log(f"{name}: {err}")
        models = model_list(s["cores"], run_text([args.rivet, "--help"]))
        active = [m for m in models if not m.get("needs_flag")]
        for m in models:
            if m.get("needs_flag"):
                log(f"models: {m['label']}: {m['needs_flag']}")
        total = len(active) * s["reps"]
        i = 0
        for rep in range(1, s["reps"] + 1):
            for m in active:
                i += 1
                rec = one(fleet, s, m, rep, tmp, oha)
                runs.append(rec)
                if "error" in rec:
                    log(f"[{i}/{total}] {m['id']} rep {rep}: FAILED: {rec['error']}")
                else:
                    log(f"[{i}/{total}] {m['id']} rep {rep}: heavy {rec['heavy_rps']:,.0f} req/s "
                        f"({rec['heavy_errors']} errors); /hello p99 {report.fmt_us(rec.get('hello_p99_us'))} "
                        f"(alone {report.fmt_us(rec.get('baseline_hello_p99_us'))}); server {rec['server_cpu_cores']} cores")  # fmt: skip
        server_commands = {m["id"]: fleet.command_template(m["server"], "machine", m.get("rivet")) for m in models}
        versions = dict(fleet.versions)
    doc = {
        "kind": "models",
        "host": os.environ.get("BENCH_HOST", ""),
        "date": now.strftime("%Y-%m-%d %H:%M UTC"),
        "command": args.command or "python3 bench/models.py " + " ".join(shlex.quote(a) for a in argv),
        "settings": s,
        "machine": bench.machine_info(Path(args.rivet)),
        "versions": versions,
        "oha": run_text([oha, "--version"]) if oha else "no oha",
        "commands": {"heavy": " ".join(heavy_cmd(0, s["duration_s"], s["heavy_connections"])).replace(":0/", ":$PORT/").replace(str(REPO) + "/", ""),
                     "light": " ".join(light_cmd("oha", 0, s["duration_s"])).replace(":0/", ":$PORT/")},  # fmt: skip
        "server_commands": server_commands,
        "results_file": results_file,
        "elapsed_s": round(time.monotonic() - t_start, 1),
        "models": models,
        "runs": runs,
    }
    doc["models_summary"] = summarize(models, runs)
    bench.RESULTS.mkdir(exist_ok=True)
    path = bench.RESULTS / results_file
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    text = render(doc)
    print(text)
    if args.docs == "yes" or (args.docs == "auto" and not args.smoke):
        note = report.make_plots(doc, path, args.plot_python, {})
        report.write_docs({report.host_prefix(doc) + "models": text})
        log(f"models: wrote docs/BENCHMARKS.md (models){note}")
    log(f"models: took {doc['elapsed_s']:.0f} s; raw results bench/results/{results_file}")
    failed = [r for r in doc["models_summary"] if r.get("na") and not r.get("by_design")]
    for r in failed:
        log(f"models: FAILED {r['id']}: {r['reason']}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
