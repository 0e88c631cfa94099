"""bench/ws_bench.py's tables from its run records: medians with min–max over the reps, rivet
against the best peer (the lowest CPU per message) with the goal of issue 21 (at most 0.8×), bytes
per idle connection (goal: at most 1 KiB) and deliveries per second. Tested on recorded runs in
bench/test_ws_bench.py."""

from __future__ import annotations

import stats

CPU_GOAL = 0.8  # rivet's CPU per message ÷ the best peer's, at most
IDLE_GOAL = 1024  # bytes per idle connection, at most
SERVER_ORDER = ("rivet", "beast", "rust")
LABEL = {"rivet": "rivet", "beast": "Boost.Beast", "rust": "Rust fastwebsockets"}


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


def _scenarios(runs: list[dict], skipped: dict, prefix: str) -> list[str]:
    seen = [r["scenario"] for r in runs] + [k[1] for k in skipped]
    return [s for s in dict.fromkeys(seen) if s.startswith(prefix)]


def _lat(rs: list[dict], q: str) -> float | None:
    m = stats.median_runs([r["latency_us"] or {} for r in rs], q)
    return m["median"] / 1000 if m else None


def report(runs: list[dict], skipped: dict, command: str, versions: dict) -> str:
    by = _by(runs)
    lines = [f"WebSocket, per core (`{command}`):", "",
             "| scenario | server | messages/s | server CPU µs/message | of which user | latency "
             "p50 / p99 (ms) | errors | ÷ best peer (CPU/message) |", "|---|---|---|---|---|---|---|---|"]
    for sc in _scenarios(runs, skipped, "ws_echo_"):
        cpu_med = {}
        for name in SERVER_ORDER:
            if (name, sc) in skipped:
                lines.append(f"| {sc} | {LABEL[name]} | n/a | {skipped[(name, sc)]} | | | | |")
                continue
            rs = by.get(sc, {}).get(name)
            if not rs:
                continue
            cpu = stats.median_runs(rs, "cpu_us_per_message")
            rate = stats.median_runs(rs, "messages_per_s")
            cpu_med[name] = cpu["median"] if cpu else None
            p50, p99 = _lat(rs, "p50"), _lat(rs, "p99")
            lat = f"{p50:.2f} / {p99:.2f}" if p50 is not None and p99 is not None else "n/a"
            errs = sum(r["errors_total"] for r in rs)
            user = stats.median_runs(rs, "user_us_per_message")  # the server's own code
            lines.append(f"| {sc} | {LABEL[name]} | {_spread(rate, ',.0f')} | {_spread(cpu, '.2f')} "
                         f"| {_spread(user, '.2f')} | {lat} | {errs} | |")
        peers = {k: v for k, v in cpu_med.items() if k != "rivet" and v}
        if cpu_med.get("rivet") and peers:
            best = min(peers, key=peers.get)
            ratio = stats.ratio(cpu_med["rivet"], peers[best])
            verdict = "goal met" if ratio <= CPU_GOAL else "goal not met"
            lines.append(f"| {sc} | rivet ÷ {LABEL[best]} | | | | | | **{ratio:.2f}** "
                         f"(goal ≤ {CPU_GOAL}: {verdict}) |")
    idle = _scenarios(runs, skipped, "ws_idle_")
    if idle:
        lines += ["", "| scenario | server | bytes of server RSS per idle connection | goal |",
                  "|---|---|---|---|"]
        for sc in idle:
            for name in SERVER_ORDER:
                if (name, sc) in skipped:
                    lines.append(f"| {sc} | {LABEL[name]} | n/a: {skipped[(name, sc)]} | |")
                    continue
                rs = by.get(sc, {}).get(name)
                if not rs:
                    continue
                b = stats.median_runs(rs, "bytes_per_connection")
                goal = ""
                if name == "rivet" and b and "deflate" not in sc:  # the goal is a plain connection's
                    goal = f"≤ {IDLE_GOAL}: {'met' if b['median'] <= IDLE_GOAL else 'not met'}"
                lines.append(f"| {sc} | {LABEL[name]} | {_spread(b, ',.0f')} |{' ' + goal if goal else ''} |")
    publish = _scenarios(runs, skipped, "ws_publish_")
    if publish:
        lines += ["", "| scenario | server | deliveries/s | server CPU µs/delivery | latency p50 / "
                  "p99 (ms) | deliveries (expected) |", "|---|---|---|---|---|---|"]
        for sc in publish:
            for name in SERVER_ORDER:
                if (name, sc) in skipped:
                    lines.append(f"| {sc} | {LABEL[name]} | n/a: {skipped[(name, sc)]} | | | |")
                    continue
                rs = by.get(sc, {}).get(name)
                if not rs:
                    continue
                rate = stats.median_runs(rs, "deliveries_per_s")
                cpu = stats.median_runs(rs, "cpu_us_per_delivery")
                got = sum(r["deliveries"] for r in rs)
                want = sum(r["expected"] for r in rs)
                lines.append(f"| {sc} | {LABEL[name]} | {_spread(rate, ',.0f')} | "
                             f"{_spread(cpu, '.3f')} | {_lat(rs, 'p50'):.2f} / {_lat(rs, 'p99'):.2f} "
                             f"| {got:,} ({want:,}) |")
    share = stats.spread([r["client_cpu_s"] / r["duration_s"] for r in runs
                          if "error" not in r and r.get("client_cpu_s") and r.get("duration_s")])
    if share:
        lines += ["", f"The load generator used {share['median']:.0%} of its core (median over the "
                  f"echo runs; {share['min']:.0%}–{share['max']:.0%})."]
    noise = stats.median_runs([r for r in runs if "error" not in r], "noise_cores")
    if noise:
        lines += ["", f"Machine noise (other processes on the two bench cores, in cores): median "
                  f"{noise['median']:.2f}, max {noise['max']:.2f}."]
    for r in runs:
        if "error" in r:
            lines.append(f"\n✗ {r['server']} {r['scenario']} run {r['rep'] + 1}: {r['error']}")
    lines.append("\n" + "; ".join(f"{LABEL.get(k, k)}: {v}" for k, v in versions.items()))
    return "\n".join(lines)
