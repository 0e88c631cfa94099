"""The tables of bench/pg_bench.py from its run records (kept apart to be unit-tested:
bench/test_pg_bench.py)."""
from __future__ import annotations

import stats

SCENARIOS = ("db_c100", "queries20_c100", "hello_idle_c100", "hello_sleep50_c100", "fetch_c32")
LATENCY = ("hello_idle_c100", "hello_sleep50_c100")
SERVERS = ("rivet", "rivet_base", "go", "go_exec")


def _med(runs: list[dict], key: str) -> dict | None:
    return stats.median_runs(runs, key)


def _cell(s: dict | None, fmt: str) -> str:
    if not s:
        return "–"
    text = format(s["median"], fmt)
    return text if s["n"] == 1 else f"{text} ({format(s['min'], fmt)}–{format(s['max'], fmt)})"


def _mark(ok: bool | None) -> str:
    return "" if ok is None else (" ✓" if ok else " ✗")


def report(runs: list[dict], command: str, pool: int) -> str:
    out = [f"PostgreSQL and the HTTP client, per core (`{command}`; query pool {pool} per core):",
           "", "| scenario | server | req/s | server CPU µs/req | p99 | errors | load avg (1 min) |",
           "|---|---|---|---|---|---|---|"]
    for sc in SCENARIOS:
        med = {}
        for name in SERVERS:
            rs = [r for r in runs if r["server"] == name and r["scenario"] == sc]
            if not rs:
                continue
            rps, cpu, p99 = (_med(rs, "requests_per_s"), _med(rs, "cpu_us_per_request"),
                             _med(rs, "latency_p99_us"))
            med[name] = (rps and rps["median"], cpu and cpu["median"], p99 and p99["median"])
            load = max(r["load_avg_1m"] for r in rs)
            extra = ""
            if sc == "hello_sleep50_c100":
                before = min(r["sleeping_before"] for r in rs)
                after = min(r["sleeping_after"] for r in rs)
                srps = _med(rs, "sleep_requests_per_s")
                extra = (f"; /sleep: {srps['median']:.0f} req/s, in pg_sleep before/after "
                         f"≥ {before}/{after}")
            if sc == "fetch_c32" and all("upstream_open" in r for r in rs):
                extra = (f"; to nginx: {max(r['upstream_open'] for r in rs)} open after, "
                         f"{max(r['upstream_closed'] for r in rs)} closed during a run (at most)")
            p99_ms = {k: v / 1000 for k, v in p99.items() if k in ("median", "min", "max")}
            p99_ms["n"] = p99["n"]
            out.append(f"| {sc} | {name} | {_cell(rps, ',.0f')} | {_cell(cpu, '.1f')} "
                       f"| {_cell(p99_ms, '.2f')} ms | {sum(r['errors'] for r in rs)}{extra} "
                       f"| ≤ {load:.1f} |")
        if sc in LATENCY:
            continue
        for peer in ("go", "go_exec", "rivet_base"):
            if "rivet" in med and peer in med and med["rivet"][1] and med[peer][1]:
                cpu_r = stats.ratio(med["rivet"][1], med[peer][1])
                rps_r = stats.ratio(med["rivet"][0], med[peer][0])
                goal = peer != "rivet_base"  # the goals are against Go
                rps_ok, cpu_ok = (rps_r >= 1, cpu_r <= 0.7) if goal else (None, None)
                out.append(f"| {sc} | rivet ÷ {peer} | {rps_r:.3f}{_mark(rps_ok)} "
                           f"| {cpu_r:.3f}{_mark(cpu_ok)} | | | |")
    for name in SERVERS:
        idle = [r for r in runs if r["server"] == name and r["scenario"] == LATENCY[0]]
        busy = [r for r in runs if r["server"] == name and r["scenario"] == LATENCY[1]]
        a, b = _med(idle, "latency_p99_us"), _med(busy, "latency_p99_us")
        if a and b:
            r = stats.ratio(b["median"], a["median"])
            out.append(f"\n{name}: /hello p99 with {50} waiting on pg_sleep ÷ idle: "
                       f"{b['median'] / 1000:.2f} ms ÷ {a['median'] / 1000:.2f} ms = "
                       f"{r:.2f}{_mark(r <= 2) if name == 'rivet' else ''}")
    out.append("\nGoals (issue 23): rivet ÷ go CPU µs/req ≤ 0.7 and req/s ≥ 1 (✓/✗ above); "
               "/hello p99 while 50 wait ≤ 2× idle.")
    return "\n".join(out)
