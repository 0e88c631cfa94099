"""Parse the text h2load (nghttp2-client 1.52) prints into numbers.

    parse(text) -> dict with
        requests          requests done and succeeded ("requests: N total, ... N succeeded")
        requests_done     requests done (succeeded or not)
        failed, errored, timeout   as h2load counts them
        status            {"2xx": .., "3xx": .., "4xx": .., "5xx": ..}
        errors            requests that failed: h2load counts a 4xx or 5xx answer, a stream
                          reset or error and a timeout each as failed (so errored and timeout
                          are part of failed)
        requests_per_s    "finished in ..., N req/s": over the main duration with -D, over the
                          whole run with -n
        protocol          "Application protocol:" (h2, h2c, http/1.1; None if absent)
        tls_version, cipher   "TLS Protocol:", "Cipher:" (None over cleartext)
        data_bytes        the response bodies' bytes ("traffic: ... (N) data")
        request_mean_us   "time for request" mean

Raises H2loadOutputError when the text holds no result (h2load could not connect or is not
h2load). bench/test_h2_bench.py tests it on recorded outputs in bench/testdata/.
"""

from __future__ import annotations

import re


class H2loadOutputError(ValueError):
    pass


_TIME_US = {"us": 1.0, "ms": 1e3, "s": 1e6}


def _time_us(text: str) -> float:
    m = re.fullmatch(r"([\d.]+)(us|ms|s)", text)
    if not m:
        raise H2loadOutputError(f"not a time: {text!r}")
    return float(m[1]) * _TIME_US[m[2]]


def parse(text: str) -> dict:
    fin = re.search(r"^finished in \S+, ([\d.]+) req/s", text, re.M)
    req = re.search(r"^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
                    r"(\d+) failed, (\d+) errored, (\d+) timeout", text, re.M)
    codes = re.search(r"^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", text, re.M)
    if not (fin and req and codes):
        raise H2loadOutputError(f"no h2load result in: {text[-400:]!r}")
    done, ok, failed, errored, timeout = (int(req[i]) for i in range(3, 8))
    status = dict(zip(("2xx", "3xx", "4xx", "5xx"), (int(codes[i]) for i in range(1, 5))))
    proto = re.search(r"^Application protocol: (\S+)", text, re.M)
    tls = re.search(r"^TLS Protocol: (\S+)", text, re.M)
    cipher = re.search(r"^Cipher: (\S+)", text, re.M)
    data = re.search(r"^traffic: .*?, \S+ \((\d+)\) data", text, re.M)
    mean = re.search(r"^time for request:\s+\S+\s+\S+\s+(\S+)", text, re.M)
    return {
        "requests": ok,
        "requests_done": done,
        "failed": failed,
        "errored": errored,
        "timeout": timeout,
        "status": status,
        "errors": max(failed, done - ok),
        "requests_per_s": float(fin[1]),
        "protocol": proto[1] if proto else None,
        "tls_version": tls[1] if tls else None,
        "cipher": cipher[1] if cipher else None,
        "data_bytes": int(data[1]) if data else None,
        "request_mean_us": _time_us(mean[1]) if mean else None,
    }
