"""bench/ws_load's result: the one JSON line it prints last on stdout (bench/ws_load/ws_load.cpp
describes the modes), checked for the fields each mode must have. bench/test_ws_bench.py tests
it on recorded outputs."""

from __future__ import annotations

import json

REQUIRED = {
    "echo": ("connections", "open", "messages", "messages_total", "messages_per_s", "latency_us",
             "errors", "server_cpu_s", "cpu_us_per_message", "user_us_per_message", "client_cpu_s",
             "verified_whole"),
    "idle": ("connections", "open", "echoed", "rss_before_kib", "rss_after_kib",
             "bytes_per_connection", "errors"),
    "subscribe": ("connections", "open", "subscribed", "deliveries", "expected",
                  "deliveries_per_s", "latency_us", "errors", "server_cpu_s",
                  "cpu_us_per_delivery"),
}  # fmt: skip
ERROR_KINDS = ("connect", "handshake", "protocol", "closed", "verify")


class WsLoadOutputError(ValueError):
    pass


def parse(stdout: str) -> dict:
    """The last JSON object line of ws_load's stdout, with `errors_total` added."""
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            r = json.loads(line)
        except json.JSONDecodeError as e:
            raise WsLoadOutputError(f"ws_load printed a broken result line: {e}: {line[:200]!r}")
        mode = r.get("mode")
        if mode not in REQUIRED:
            raise WsLoadOutputError(f"ws_load result without a known mode: {line[:200]!r}")
        missing = [k for k in REQUIRED[mode] if k not in r]
        if missing:
            raise WsLoadOutputError(f"ws_load {mode} result lacks {', '.join(missing)}")
        errs = r["errors"]
        if not isinstance(errs, dict) or any(k not in errs for k in ERROR_KINDS):
            raise WsLoadOutputError(f"ws_load result's errors are not counted by kind: {errs!r}")
        r["errors_total"] = sum(int(errs[k]) for k in ERROR_KINDS)
        return r
    raise WsLoadOutputError(f"no result line in ws_load's output: {stdout[-300:]!r}")
