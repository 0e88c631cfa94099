#!/usr/bin/env python3
"""PNG plots for docs/BENCHMARKS.md from one results JSON (bench/bench.py or bench/models.py).

    python bench/plots.py bench/results/<file>.json docs/img

Needs matplotlib (bench/tools.sh installs it into a venv). Draws only what the results hold:
  bench-percore-cpu.png, bench-percore-rps.png   bars per scenario and server (median, min–max)
  bench-machine-rps.png                          the same for whole-machine mode
  bench-latency.png                              latency percentile curves: open loop at 50% and
                                                 90% of each server's peak, and closed loop
  bench-soak-rss.png                             RSS over time in the soak
  bench-models.png                               heavy-route throughput and /hello p99 per model
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path

import matplotlib

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report  # noqa: E402  (standard library only: labels, host_prefix)
from report import label  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

COLORS = {"rivet": "#d62728", "nginx": "#2ca02c", "h2o": "#1f77b4", "lighttpd": "#ff7f0e",
          "httplib": "#9467bd", "floor": "#7f7f7f", "rivet_base": "#e377c2"}  # fmt: skip
DPI = 110


def bars(doc: dict, mode: str, key: str, ylabel: str, title: str, out: Path, scale: float = 1.0) -> bool:
    names = doc["settings"]["servers"]
    scs = [sc for sc in doc["scenarios"] if sc["kind"] == "wrk" and f"{mode}:{sc['id']}" in doc["summary"]]
    if not scs:
        return False
    cols = 4
    rows = math.ceil(len(scs) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols, 2.9 * rows), squeeze=False)
    for ax, sc in zip(axes.flat, scs):
        per = doc["summary"][f"{mode}:{sc['id']}"]
        xs, hs, lo, hi, cs = [], [], [], [], []
        for i, n in enumerate(names):
            st = per[n].get(key) if not per[n].get("na") else None
            if not st:
                ax.text(i, 0, "n/a", ha="center", va="bottom", fontsize=7, color="#888")
                continue
            xs.append(i)
            hs.append(st["median"] * scale)
            lo.append((st["median"] - st["min"]) * scale)
            hi.append((st["max"] - st["median"]) * scale)
            cs.append(COLORS.get(n, "#333"))
        ax.bar(xs, hs, color=cs, yerr=[lo, hi], capsize=2, error_kw={"elinewidth": 0.8})
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels([label(n) for n in names], rotation=45, ha="right", fontsize=7)
        ax.set_title(sc["title"].replace("`", ""), fontsize=8)
        ax.tick_params(axis="y", labelsize=7)
        ax.set_ylabel(ylabel, fontsize=7)
        ax.grid(axis="y", alpha=0.3)
    for ax in list(axes.flat)[len(scs):]:
        ax.axis("off")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=DPI)
    plt.close(fig)
    return True


def nines(p: float) -> float:
    return -math.log10(1 - p / 100.0)


def latency(doc: dict, out: Path) -> bool:
    names = doc["settings"]["servers"]
    opens = [sc for sc in doc["scenarios"] if sc["kind"] == "open" and f"percore:{sc['id']}" in doc["summary"]]
    closed = "percore:hello_c100" in doc["summary"]
    panels = [("open", sc) for sc in opens] + ([("closed", None)] if closed else [])
    if not panels:
        return False
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.6), squeeze=False)
    ps = ["50", "75", "90", "99", "99.9", "99.99"]
    for ax, (kind, sc) in zip(axes.flat, panels):
        for n in names:
            if kind == "open":
                rs = [r for r in doc["runs"] if r["mode"] == "percore" and r["scenario"] == sc["id"]
                      and r["server"] == n and "error" not in r and "oha" in r]  # fmt: skip
                get = lambda r, p: r["oha"]["latency_percentiles_us"].get(p)  # noqa: E731
            else:
                rs = [r for r in doc["runs"] if r["mode"] == "percore" and r["scenario"] == "hello_c100"
                      and r["server"] == n and "error" not in r and (r.get("wrk") or {}).get("script")]  # fmt: skip
                get = lambda r, p: (None if p in r["wrk"]["script"]["bogus"]  # noqa: E731
                                    else r["wrk"]["script"]["percentiles_us"].get(p))
            if not rs:
                continue
            xs, ys = [], []
            for p in ps:
                vals = [v for v in (get(r, p) for r in rs) if v]
                if vals:
                    xs.append(nines(float(p)))
                    ys.append(statistics.median(vals) / 1000.0)
            if xs:
                ax.plot(xs, ys, marker="o", ms=3, label=label(n), color=COLORS.get(n, "#333"))
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
        ax.set_xticks([nines(float(p)) for p in ps])
        ax.set_xticklabels([f"p{p}" for p in ps], fontsize=7)
        ax.tick_params(axis="y", labelsize=7)
        ax.set_ylabel("latency (ms, log)", fontsize=8)
        ax.grid(alpha=0.3, which="both")
        if kind == "open":
            ax.set_title(f"open loop at {int(round(sc['fraction'] * 100))}% of each server's peak\n"
                         "(oha -q, latency corrected)", fontsize=8)  # fmt: skip
        else:
            ax.set_title("closed loop, 100 connections (wrk)\n(not corrected: for comparison)", fontsize=8)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    fig.suptitle("GET /hello latency percentiles, per core", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=DPI)
    plt.close(fig)
    return True


def soak(doc: dict, out: Path) -> bool:
    recs = [r for r in doc.get("soaks", []) if r.get("rss_series")]
    if not recs:
        return False
    fig, (ax, az) = plt.subplots(1, 2, figsize=(11, 3.4))
    for r in recs:
        t = [x[0] for x in r["rss_series"]]
        v = [x[1] for x in r["rss_series"]]
        g = r.get("growth") or {}
        extra = f" ({g['growth_pct']:+.2f}% after warm-up)" if g.get("growth_pct") is not None else ""
        color = COLORS.get(r["server"], "#333")
        ax.plot(t, [x / 2**20 for x in v], lw=1, label=label(r["server"]) + extra, color=color)
        base = g.get("baseline_bytes") or v[0]
        z = [(x - base) / 1024 for x in v]
        az.plot(t, z, lw=1, label=label(r["server"]), color=color)
        after = [y for x, y in zip(t, z) if x >= (g.get("baseline_s") or 0)]
        if after:
            az.set_ylim(min(after) - 16, max(after) + 16)
        for a in (ax, az):
            if g.get("baseline_s") is not None:
                a.axvline(g["baseline_s"], color="#999", lw=0.8, ls="--")
    ax.set_ylabel("RSS (MiB)", fontsize=8)
    ax.set_ylim(bottom=0)
    ax.set_title("RSS sampled every second (dashed: end of warm-up)", fontsize=9)
    ax.legend(fontsize=8, loc="lower right")
    az.set_ylabel("KiB above the RSS at the end of warm-up", fontsize=8)
    az.set_title("the same, zoomed: change after warm-up", fontsize=9)
    for a in (ax, az):
        a.set_xlabel("seconds under load", fontsize=8)
        a.tick_params(labelsize=7)
        a.grid(alpha=0.3)
    fig.suptitle("Soak: mixed load for " + f"{max(r['rss_series'][-1][0] for r in recs):.0f} s", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=DPI)
    plt.close(fig)
    return True


def models(doc: dict, out: Path) -> bool:
    rows = [r for r in doc.get("models_summary", []) if not r.get("na")]
    if not rows:
        return False
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    x = list(range(len(rows)))
    panels = [("heavy_rps", 1.0, "heavy route (/calc) throughput, req/s", "#d62728", False),
              ("hello_p50_us", 1e-3, "/hello p50 meanwhile, ms (log)", "#2ca02c", True),
              ("hello_p99_us", 1e-3, "/hello p99 meanwhile, ms (log)", "#1f77b4", True)]  # fmt: skip
    for a, (key, k, title, color, log) in zip(axes, panels):
        med = [r[key]["median"] * k for r in rows]
        lo = [(r[key]["median"] - r[key]["min"]) * k for r in rows]
        hi = [(r[key]["max"] - r[key]["median"]) * k for r in rows]
        a.bar(x, med, color=color, yerr=[lo, hi], capsize=2)
        a.set_title(title, fontsize=9)
        if log:
            a.set_yscale("log")
            a.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        a.set_xticks(x)
        a.set_xticklabels([r["label"] for r in rows], rotation=30, ha="right", fontsize=7)
        a.tick_params(axis="y", labelsize=7)
        a.grid(axis="y", alpha=0.3, which="both")
    conns = doc["settings"].get("heavy_connections", 16)
    fig.suptitle(f"Concurrency models: /calc closed loop ({conns} connections) + /hello at 1,000 req/s "
                 "(open loop, latency corrected); median, whiskers min–max", fontsize=9)  # fmt: skip
    fig.tight_layout()
    fig.savefig(out, dpi=DPI)
    plt.close(fig)
    return True


def main(argv: list[str]) -> int:
    doc = json.loads(Path(argv[0]).read_text())
    img = Path(argv[1])
    img.mkdir(parents=True, exist_ok=True)
    if doc.get("kind") == "models":
        jobs = [("bench-models.png", lambda out: models(doc, out))]
    else:
        jobs = [
            ("bench-percore-cpu.png", lambda out: bars(doc, "percore", "cpu_us_per_req", "CPU µs / request",
             "Server CPU µs per request, per core (lower is better; median, whiskers min–max)", out)),
            ("bench-percore-rps.png", lambda out: bars(doc, "percore", "requests_per_s", "k req/s",
             "Requests per second, per core (median, whiskers min–max)", out, 1e-3)),
            ("bench-machine-rps.png", lambda out: bars(doc, "machine", "requests_per_s", "k req/s",
             "Requests per second, whole machine (median, whiskers min–max)", out, 1e-3)),
            ("bench-latency.png", lambda out: latency(doc, out)),
            ("bench-soak-rss.png", lambda out: soak(doc, out)),
        ]  # fmt: skip
    # Another machine's results (BENCH_HOST) get files of their own beside this machine's.
    pre = report.host_prefix(doc)
    made = [pre + name for name, draw in jobs if draw(img / (pre + name))]
    print(" ".join(made))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
