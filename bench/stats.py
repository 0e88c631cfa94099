"""The statistics of the benchmark, kept apart so they can be unit-tested (bench/test_stats.py).

    spread(values)           median, min, max, n and the spread (max-min)/median in percent
    median_runs(runs, key)   spread() over a key of run records, skipping missing/None values
    growth(series, warmup)   RSS growth over a soak: from the end of the warm-up to the end
    open_loop_target(peak, fraction)   the constant rate of an open-loop run
    ratio(a, b)              a / b, None when either is missing or b is 0
    paired_ratios(runs, key, a, b)   per scenario, a's key over b's within each rep
"""

from __future__ import annotations

import statistics


def spread(values: list[float]) -> dict | None:
    vals = [float(v) for v in values if v is not None]
    if not vals:
        return None
    med = statistics.median(vals)
    lo, hi = min(vals), max(vals)
    return {
        "median": med,
        "min": lo,
        "max": hi,
        "n": len(vals),
        "spread_pct": (hi - lo) / med * 100 if med else 0.0,
    }


def median_runs(runs: list[dict], key: str) -> dict | None:
    return spread([r.get(key) for r in runs])


def ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b


def growth(series: list[tuple[float, int]], warmup_s: float) -> dict | None:
    """RSS growth over a soak from (seconds since the load began, bytes) samples.

    baseline = the first sample at or after warmup_s (the server's working set once its pools,
    buffers and caches have filled); growth_pct = (last - baseline) / baseline. Also the growth
    from the very first sample, and the maximum. None without at least two samples."""
    if len(series) < 2:
        return None
    after = [s for s in series if s[0] >= warmup_s]
    base_t, base = after[0] if len(after) >= 2 else series[0]
    first_t, first = series[0]
    last_t, last = series[-1]
    peak = max(v for _, v in series)
    return {
        "baseline_s": base_t,
        "baseline_bytes": base,
        "first_bytes": first,
        "last_bytes": last,
        "max_bytes": peak,
        "growth_pct": (last - base) / base * 100 if base else None,
        "growth_from_first_pct": (last - first) / first * 100 if first else None,
        "duration_s": last_t - first_t,
        "samples": len(series),
    }


def open_loop_target(peak_rps: float | None, fraction: float, floor_rps: int = 100) -> int | None:
    """The rate for an open-loop run at `fraction` of a measured peak; None without a peak."""
    if not peak_rps:
        return None
    return max(floor_rps, int(round(peak_rps * fraction / 100.0)) * 100)


def paired_ratios(runs: list[dict], key: str, a: str, b: str) -> dict[str, dict]:
    """Per scenario, the spread of a/b taken within each rep: the two servers ran next to each
    other in the interleaved order, so a machine that changes speed between reps (this one
    swings between two throughput levels) moves both sides of each ratio alike, where the
    medians of each side may come from different levels."""
    reps: dict[tuple, dict] = {}
    for r in runs:
        reps.setdefault((r.get("scenario"), r.get("mode"), r.get("rep")), {})[r.get("server")] = r.get(key)
    out: dict[str, list] = {}
    # In rep order (reps are numbers: "10" must not sort before "2"), scenarios by name.
    for (scenario, _mode, _rep), by in sorted(reps.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1]), kv[0][2] or 0)):
        out.setdefault(scenario, []).append(ratio(by.get(a), by.get(b)))
    return {s: {**spread(v), "ratios": v} for s, v in out.items() if spread(v)}
