"""bench/h2_bench.py's tables from its run records: medians with min–max over the reps, rivet
against the better of nginx and h2o (the lower CPU per request) with issue 22's goal (at most
0.9×), bytes per idle h2 connection (goal: below both), and rivet against the build before a
change (rivet_base). Tested on recorded runs in bench/test_h2_bench.py."""

from __future__ import annotations

import stats

CPU_GOAL = 0.9  # rivet's CPU per request ÷ the better peer's, at most
SERVER_ORDER = ("rivet", "rivet_base", "nginx", "h2o")
PEERS = ("nginx", "h2o")


def _spread(s: dict | None, fmt: str) -> str:
    if not s:
        return "n/a"
    if s["n"] == 1:
        return format(s["median"], fmt)
    return f"{format(s['median'], fmt)} ({format(s['min'], fmt)}–{format(s['max'], fmt)})"


def _by(runs: list[dict]) -> dict:
    out: dict = {}
    for r in runs:
        if "error" not in r:
            out.setdefault(r["scenario"], {}).setdefault(r["server"], []).append(r)
    return out


def _against(sc: str, med: dict, spread: dict, lower_is: str, goal: float | None,
             fmt: str = ".2f") -> list[str]:
    """The rivet ÷ best peer row, and rivet ÷ rivet (base) where both are there."""
    rows = []
    peers = {k: med[k] for k in PEERS if med.get(k) is not None}
    if med.get("rivet") is not None and peers:
        best = min(peers, key=peers.get)
        r = stats.ratio(med["rivet"], peers[best])
        if r is None:  # the better peer measured 0 (a smoke run's few clock ticks)
            rows.append(f"| {sc} | rivet ÷ {best} (the better) | | n/a ({best} measured 0) | | |")
        else:
            met = r <= goal if goal is not None else all(med["rivet"] < v for v in peers.values())
            verdict = f"goal {f'≤ {goal}' if goal is not None else 'below both'}: {'met' if met else 'not met'}"
            rows.append(f"| {sc} | rivet ÷ {best} (the better) | | {lower_is} **{r:.2f}** ({verdict}) | | |")
    if med.get("rivet") and med.get("rivet_base"):  # a ratio needs both non-zero
        a, b = spread["rivet"], spread["rivet_base"]
        rows.append(f"| {sc} | rivet ÷ rivet (base) | | {lower_is} {stats.ratio(med['rivet'], med['rivet_base']):.3f} "
                    f"(rivet {a['min']:{fmt}}–{a['max']:{fmt}}, base {b['min']:{fmt}}–{b['max']:{fmt}}) | | |")
    return rows


def report(runs: list[dict], command: str, versions: dict) -> str:
    by = _by(runs)
    scenarios = list(dict.fromkeys(r["scenario"] for r in runs))
    lines = [f"HTTP/2, per core (`{command}`):", "",
             "| scenario | server | req/s | server CPU µs/request | errors | protocol, TLS, cipher |",
             "|---|---|---|---|---|---|"]
    for sc in [s for s in scenarios if not s.endswith("_idle")]:
        med, spread = {}, {}
        for name in SERVER_ORDER:
            rs = by.get(sc, {}).get(name)
            if not rs:
                continue
            rate = stats.median_runs(rs, "requests_per_s")
            cpu = stats.median_runs(rs, "cpu_us_per_request")
            med[name], spread[name] = (cpu["median"] if cpu else None), cpu
            errs = sum(r["errors"] for r in rs)
            proto = ", ".join(str(rs[0].get(k)) for k in ("protocol", "tls_version", "cipher")
                              if rs[0].get(k))
            perf = " (under perf)" if any(r.get("perf") for r in rs) else ""
            lines.append(f"| {sc} | {name} | {_spread(rate, ',.0f')} | {_spread(cpu, '.2f')}{perf} "
                         f"| {errs} | {proto} |")
        lines += _against(sc, med, spread, "CPU/req", CPU_GOAL)
    idle = [s for s in scenarios if s.endswith("_idle")]
    if idle:
        lines += ["", "| scenario | server | connections | bytes of RSS per idle h2 connection | "
                  "bytes of PSS | versions |", "|---|---|---|---|---|---|"]
        for sc in idle:
            med, spread = {}, {}
            for name in SERVER_ORDER:
                rs = by.get(sc, {}).get(name)
                if not rs:
                    continue
                rss = stats.median_runs(rs, "bytes_per_connection")
                pss = stats.median_runs(rs, "pss_bytes_per_connection")
                med[name], spread[name] = (rss["median"] if rss else None), rss
                lines.append(f"| {sc} | {name} | {rs[0]['connections']:,} | {_spread(rss, ',.0f')} "
                             f"| {_spread(pss, ',.0f')} | {', '.join(rs[0]['versions'])} |")
            lines += [row.replace("CPU/req", "bytes") for row in _against(sc, med, spread, "RSS", None, ",.0f")]
    noise = stats.median_runs([r for r in runs if "error" not in r and "noise_cores" in r], "noise_cores")
    if noise:
        lines += ["", f"Machine noise (other processes on the two bench cores, in cores): median "
                  f"{noise['median']:.2f}, max {noise['max']:.2f}."]
    for r in runs:
        if "error" in r:
            lines.append(f"\n✗ {r['server']} {r['scenario']} run {r['rep'] + 1}: {r['error']}")
    lines.append("\n" + "; ".join(f"{k}: {v}" for k, v in versions.items()))
    return "\n".join(lines)
