"""Parse the text wrk 4.x prints (run with --latency) into numbers.

    parse(text) -> dict with
        threads, connections        from "N threads and M connections"
        requests                    completed requests ("N requests in 2.00s, ...")
        duration_s                  the measured duration wrk reports
        bytes_read                  total bytes read
        requests_per_s              "Requests/sec:"
        latency_avg_us, latency_stdev_us, latency_max_us
        latency_percentiles_us      {"50": ..., "75": ..., "90": ..., "99": ...} as printed
        latency_p50_us, latency_p99_us  None where wrk printed a bogus 0.00us (see below)
        latency_percentiles_bogus   percentiles wrk printed as 0 despite non-zero latencies
        socket_errors               {"connect": .., "read": .., "write": .., "timeout": ..}
        non_2xx_3xx                 "Non-2xx or 3xx responses:" (0 when absent)
        errors                      sum of the socket errors and non-2xx/3xx responses
        latency_p999_us             p99.9, from the `BENCH_WRK {json}` line bench/wrk.lua prints
        script                      that line's JSON (None without it): percentiles_us with
                                    50/75/90/99/99.9/99.99, min/max/mean_us, error counts

Raises WrkOutputError when the text holds no result (wrk could not connect, crashed, or the
text is not wrk's). Times come back in microseconds, sizes in bytes.
"""

from __future__ import annotations

import json
import re

__all__ = ["WrkOutputError", "parse", "parse_time_us", "parse_bytes", "parse_metric"]


class WrkOutputError(ValueError):
    pass


# wrk's units (src/units.c): time us/ms/s/m/h, binary sizes B/KB/MB/GB/TB, metric k/M/G/T.
_TIME_US = {"us": 1.0, "ms": 1e3, "s": 1e6, "m": 60e6, "h": 3600e6}
_BYTES = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40, "PB": 1 << 50}
_METRIC = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}

_NUM = r"([-+]?\d+(?:\.\d+)?)"


def parse_time_us(s: str) -> float:
    m = re.fullmatch(_NUM + r"(us|ms|s|m|h)", s.strip())
    if not m:
        raise WrkOutputError(f"not a wrk time: {s!r}")
    return float(m.group(1)) * _TIME_US[m.group(2)]


def parse_bytes(s: str) -> float:
    m = re.fullmatch(_NUM + r"(B|KB|MB|GB|TB|PB)", s.strip())
    if not m:
        raise WrkOutputError(f"not a wrk size: {s!r}")
    return float(m.group(1)) * _BYTES[m.group(2)]


def parse_metric(s: str) -> float:
    m = re.fullmatch(_NUM + r"([kMGTP]?)", s.strip())
    if not m:
        raise WrkOutputError(f"not a wrk count: {s!r}")
    return float(m.group(1)) * _METRIC[m.group(2)]


_RE_SETUP = re.compile(r"^\s*(\d+) threads and (\d+) connections\s*$", re.M)
_RE_LAT = re.compile(r"^\s*Latency\s+(\S+)\s+(\S+)\s+(\S+)\s+\S+%\s*$", re.M)
_RE_PCT = re.compile(r"^\s*(\d+(?:\.\d+)?)%\s+(\S+)\s*$", re.M)
_RE_TOTAL = re.compile(r"^\s*(\d+) requests in (\S+), (\S+) read\s*$", re.M)
_RE_SOCK = re.compile(
    r"^\s*Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)\s*$", re.M
)
_RE_NON2XX = re.compile(r"^\s*Non-2xx or 3xx responses: (\d+)\s*$", re.M)
_RE_RPS = re.compile(r"^Requests/sec:\s+(\S+)\s*$", re.M)
_RE_SCRIPT = re.compile(r"^BENCH_WRK (\{.*\})\s*$", re.M)


def _pct_key(p: str) -> str:
    f = float(p)
    return str(int(f)) if f == int(f) else str(f)


def parse(text: str) -> dict:
    total = _RE_TOTAL.search(text)
    rps = _RE_RPS.search(text)
    if not total or not rps:
        first = text.strip().splitlines()[0] if text.strip() else "(no output)"
        raise WrkOutputError(f"no wrk result in output: {first}")

    out: dict = {}
    setup = _RE_SETUP.search(text)
    out["threads"] = int(setup.group(1)) if setup else None
    out["connections"] = int(setup.group(2)) if setup else None

    out["requests"] = int(total.group(1))
    out["duration_s"] = parse_time_us(total.group(2)) / 1e6
    out["bytes_read"] = parse_bytes(total.group(3))
    out["requests_per_s"] = float(rps.group(1))

    lat = _RE_LAT.search(text)
    if lat:
        out["latency_avg_us"] = parse_time_us(lat.group(1))
        out["latency_stdev_us"] = parse_time_us(lat.group(2))
        out["latency_max_us"] = parse_time_us(lat.group(3))
    else:
        out["latency_avg_us"] = out["latency_stdev_us"] = out["latency_max_us"] = None

    pcts: dict[str, float] = {}
    dist = text.find("Latency Distribution")
    if dist >= 0:
        # Only the block right under the heading (the lines up to the totals line).
        block = text[dist : total.start()]
        for m in _RE_PCT.finditer(block):
            pcts[_pct_key(m.group(1))] = parse_time_us(m.group(2))
    out["latency_percentiles_us"] = pcts
    # wrk 4.x sometimes prints 0.00us for high percentiles although requests completed with a
    # non-zero latency (wg/wrk#236, #354; common with pipelining): such a value is not a
    # measurement, so it comes back as None and latency_percentiles_bogus lists it.
    bogus = sorted(
        (k for k, v in pcts.items() if v == 0 and (out["latency_max_us"] or 0) > 0),
        key=float,
    )
    out["latency_percentiles_bogus"] = bogus
    out["latency_p50_us"] = None if "50" in bogus else pcts.get("50")
    out["latency_p99_us"] = None if "99" in bogus else pcts.get("99")

    # bench/wrk.lua's done() line: exact percentiles in microseconds, p99.9 among them. The same
    # bogus zeros can appear there (same histogram); they are left out the same way.
    out["script"] = None
    out["latency_p999_us"] = None
    m = _RE_SCRIPT.search(text)
    if m:
        try:
            script = json.loads(m.group(1))
        except ValueError as e:
            raise WrkOutputError(f"bad BENCH_WRK line: {e}") from None
        smax = script.get("max_us") or 0
        sp = {_pct_key(k): float(v) for k, v in script.get("percentiles_us", {}).items()}
        script["percentiles_us"] = sp
        script["bogus"] = sorted((k for k, v in sp.items() if v == 0 and smax > 0), key=float)
        if script.get("min_us", 0) < 0:  # no sample at all: wrk's empty histogram
            script["min_us"] = None
        out["script"] = script
        if "99.9" in sp and "99.9" not in script["bogus"]:
            out["latency_p999_us"] = sp["99.9"]
        # wrk's table rounds to 2 decimals of its unit; the script's values are exact.
        for key, pk in (("latency_p50_us", "50"), ("latency_p99_us", "99")):
            if pk in sp and pk not in script["bogus"]:
                out[key] = sp[pk]

    sock = _RE_SOCK.search(text)
    names = ("connect", "read", "write", "timeout")
    out["socket_errors"] = (
        {n: int(v) for n, v in zip(names, sock.groups())} if sock else {n: 0 for n in names}
    )
    non = _RE_NON2XX.search(text)
    out["non_2xx_3xx"] = int(non.group(1)) if non else 0
    out["errors"] = sum(out["socket_errors"].values()) + out["non_2xx_3xx"]
    return out
