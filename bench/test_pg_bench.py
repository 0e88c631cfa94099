"""bench/pg_report.py's tables from recorded runs (python3 -m pytest -q bench)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pg_report  # noqa: E402


def run(server, scenario, rps, cpu, p99_us, **extra):
    return {"server": server, "scenario": scenario, "rep": 0, "requests_per_s": rps,
            "cpu_us_per_request": cpu, "latency_p99_us": p99_us, "errors": 0,
            "load_avg_1m": 0.5, **extra}


def test_ratios_and_goals():
    runs = [run("rivet", "db_c100", 12000, 20.0, 9000), run("rivet", "db_c100", 11000, 22.0, 9500),
            run("go", "db_c100", 10000, 40.0, 12000),
            run("rivet", "queries20_c100", 1500, 120.0, 80000),
            run("go", "queries20_c100", 3000, 100.0, 90000)]
    text = pg_report.report(runs, "bash bench/run.sh --pg", 4)
    # rivet: medians 11,500 req/s and 21 µs against 10,000 and 40: 1.15 and 0.53, both met.
    assert "| db_c100 | rivet | 11,500 (11,000–12,000) | 21.0 (20.0–22.0) |" in text
    assert "| db_c100 | rivet ÷ go | 1.150 ✓ | 0.525 ✓ |" in text
    assert "| queries20_c100 | rivet ÷ go | 0.500 ✗ | 1.200 ✗ |" in text
    assert "go_exec" not in text


def test_latency_under_waiters():
    sleep = {"sleeping_before": 49, "sleeping_after": 50, "sleep_requests_per_s": 245.0}
    runs = [run("rivet", "hello_idle_c100", 50000, 6.0, 2000),
            run("rivet", "hello_sleep50_c100", 48000, 6.2, 5000, **sleep)]
    text = pg_report.report(runs, "x", 4)
    assert "rivet: /hello p99 with 50 waiting on pg_sleep ÷ idle: 5.00 ms ÷ 2.00 ms = 2.50 ✗" in text
    assert "/sleep: 245 req/s, in pg_sleep before/after ≥ 49/50" in text


def test_upstream_pool_shown():
    runs = [run("rivet", "fetch_c32", 10000, 30.0, 9000, upstream_open=32, upstream_closed=0),
            run("go", "fetch_c32", 6000, 60.0, 9000, upstream_open=32, upstream_closed=2)]
    text = pg_report.report(runs, "x", 4)
    assert "| fetch_c32 | rivet | 10,000 | 30.0 | 9.00 ms | 0; to nginx: 32 open after, 0 closed" in text
    assert "| fetch_c32 | rivet ÷ go | 1.667 ✓ | 0.500 ✓ |" in text
