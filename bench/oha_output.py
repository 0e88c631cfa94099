"""Parse the JSON oha (1.x, `--output-format json`) prints into the benchmark's numbers.

    parse(text) -> dict with
        requests                responses received (sum of statusCodeDistribution)
        ok                      responses with a 2xx/3xx status
        non_2xx_3xx             the others
        duration_s              summary.total, the measured duration
        requests_per_s          responses ÷ duration (oha's summary.requestsPerSec counts the same)
        latency_percentiles_us  {"10", "25", "50", "75", "90", "95", "99", "99.9", "99.99"} in µs:
                                with `-q R --latency-correction` each latency runs from the
                                moment the request was due, not when it was sent
        latency_avg_us, latency_max_us, latency_min_us
        error_kinds             errorDistribution ({message: count})
        deadline_aborted        requests cut off by -z (not the server's fault; 0 with -w)
        errors                  non-2xx/3xx responses + errors other than deadline aborts
        success_rate            summary.successRate

Raises OhaOutputError when the text is not oha's JSON result (oha failed to start, or wrote
text). Times come back in microseconds.
"""

from __future__ import annotations

import json

__all__ = ["OhaOutputError", "parse"]

DEADLINE = "aborted due to deadline"


class OhaOutputError(ValueError):
    pass


def _pct_key(k: str) -> str:
    f = float(k.lstrip("p"))
    return str(int(f)) if f == int(f) else str(f)


def _us(v) -> float | None:
    return None if v is None else float(v) * 1e6


def parse(text: str) -> dict:
    start = text.find("{")
    if start < 0:
        first = text.strip().splitlines()[0] if text.strip() else "(no output)"
        raise OhaOutputError(f"no oha JSON in output: {first}")
    try:
        doc = json.loads(text[start:])
    except ValueError as e:
        raise OhaOutputError(f"oha output is not JSON: {e}") from None
    if not isinstance(doc, dict) or "summary" not in doc:
        raise OhaOutputError("oha JSON without a summary")
    summ = doc["summary"]
    codes = {str(k): int(v) for k, v in (doc.get("statusCodeDistribution") or {}).items()}
    kinds = {str(k): int(v) for k, v in (doc.get("errorDistribution") or {}).items()}
    requests = sum(codes.values())
    ok = sum(v for k, v in codes.items() if k[:1] in ("2", "3"))
    duration = float(summ.get("total") or 0.0)
    pcts = {_pct_key(k): _us(v) for k, v in (doc.get("latencyPercentiles") or {}).items() if v is not None}
    aborted = kinds.get(DEADLINE, 0)
    other = sum(v for k, v in kinds.items() if k != DEADLINE)
    return {
        "requests": requests,
        "ok": ok,
        "non_2xx_3xx": requests - ok,
        "status_codes": codes,
        "duration_s": duration,
        "requests_per_s": requests / duration if duration > 0 else 0.0,
        "latency_percentiles_us": pcts,
        "latency_avg_us": _us(summ.get("average")),
        "latency_min_us": _us(summ.get("fastest")),
        "latency_max_us": _us(summ.get("slowest")),
        "error_kinds": kinds,
        "deadline_aborted": aborted,
        "errors": (requests - ok) + other,
        "success_rate": summ.get("successRate"),
    }
