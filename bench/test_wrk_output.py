"""Unit tests for bench/wrk_output.py on wrk outputs recorded on the bench machine (bench/testdata/).

Run: python3 -m pytest -q bench/test_wrk_output.py
"""

import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import wrk_output  # noqa: E402
from wrk_output import WrkOutputError, parse, parse_bytes, parse_metric, parse_time_us  # noqa: E402


def load(name: str) -> str:
    return (HERE / "testdata" / name).read_text()


def test_plain_run():
    r = parse(load("nginx_hello_c100.txt"))
    assert r["threads"] == 1 and r["connections"] == 100
    assert r["requests"] == 112973
    assert r["duration_s"] == pytest.approx(2.04)
    assert r["requests_per_s"] == pytest.approx(55507.05)
    assert r["bytes_read"] == pytest.approx(17.35 * 2**20)
    # Mixed units in one block: 465.00us beside milliseconds.
    assert r["latency_p50_us"] == pytest.approx(465.0)
    assert r["latency_p99_us"] == pytest.approx(8770.0)
    assert r["latency_percentiles_us"] == pytest.approx(
        {"50": 465.0, "75": 1390.0, "90": 4860.0, "99": 8770.0}
    )
    assert r["latency_avg_us"] == pytest.approx(1570.0)
    assert r["latency_max_us"] == pytest.approx(9050.0)
    assert r["socket_errors"] == {"connect": 0, "read": 0, "write": 0, "timeout": 0}
    assert r["non_2xx_3xx"] == 0 and r["errors"] == 0


def test_many_connections():
    r = parse(load("nginx_hello_c10000.txt"))
    assert r["connections"] == 10000
    assert r["requests"] == 104825
    assert r["latency_p50_us"] == pytest.approx(109870.0)
    assert r["latency_p99_us"] == pytest.approx(232340.0)
    assert r["errors"] == 0


def test_pipelined_run():
    r = parse(load("nginx_pipeline16_c100.txt"))
    assert r["requests"] == 143006
    assert r["requests_per_s"] == pytest.approx(71230.65)
    assert r["latency_p99_us"] == pytest.approx(36340.0)


def test_rivet_many_connections():
    r = parse(load("rivet_hello_c10000.txt"))
    assert r["connections"] == 10000
    assert r["requests"] == 138040
    assert r["duration_s"] == pytest.approx(5.20)
    assert r["latency_p50_us"] == pytest.approx(186340.0)
    assert r["latency_p99_us"] == pytest.approx(506420.0)
    assert r["latency_percentiles_bogus"] == []


def test_zero_percentiles_are_not_measurements():
    # wrk's known bug (wg/wrk#236): with pipelining the 90% and 99% lines read 0.00us although
    # the max latency is 9.10ms. p50 is real; p99 must not be taken as 0.
    r = parse(load("rivet_pipeline16_zero_percentiles.txt"))
    assert r["requests"] == 5717264
    assert r["requests_per_s"] == pytest.approx(1120254.79)
    assert r["latency_p50_us"] == pytest.approx(578.0)
    assert r["latency_p99_us"] is None
    assert r["latency_percentiles_bogus"] == ["90", "99"]
    assert r["latency_percentiles_us"]["99"] == 0.0
    assert r["latency_max_us"] == pytest.approx(9100.0)


def test_non_2xx_counted_as_errors():
    r = parse(load("nginx_404_c50.txt"))
    assert r["requests"] == 38122
    assert r["non_2xx_3xx"] == 38122
    assert r["errors"] == 38122


def test_socket_errors_and_nan_stats():
    # A peer that closes every connection: no requests, read errors, "-nan%" in the stats.
    r = parse(load("closing_peer_c4.txt"))
    assert r["requests"] == 0
    assert r["requests_per_s"] == 0.0
    assert r["socket_errors"] == {"connect": 0, "read": 20576, "write": 0, "timeout": 0}
    assert r["errors"] == 20576
    # All-zero latencies with a zero max: zero is what wrk measured, not the bug.
    assert r["latency_percentiles_bogus"] == []


def test_no_result_raises():
    with pytest.raises(WrkOutputError, match="unable to connect"):
        parse(load("refused.txt"))
    with pytest.raises(WrkOutputError):
        parse("")


def test_units():
    assert parse_time_us("12.5us") == 12.5
    assert parse_time_us("1.50ms") == 1500.0
    assert parse_time_us("2.00s") == 2e6
    assert parse_time_us("1.00m") == 60e6
    assert parse_bytes("1.00KB") == 1024
    assert parse_bytes("0.00B") == 0
    assert parse_metric("52.90k") == pytest.approx(52900)
    assert parse_metric("1.2M") == pytest.approx(1.2e6)
    assert parse_metric("7") == 7
    with pytest.raises(WrkOutputError):
        parse_time_us("5 parsecs")


def test_module_exports():
    assert set(wrk_output.__all__) >= {"parse", "WrkOutputError"}


# bench/wrk.lua's done() line (`BENCH_WRK {json}`), recorded with rivet on the bench machine.


def test_script_line_pipelined():
    r = parse(load("rivet_pipeline16_script.txt"))
    assert r["requests"] == 604192
    s = r["script"]
    assert s["requests"] == 604192
    assert s["percentiles_us"]["99.99"] == 104495.0
    # The script's exact percentiles replace the table's rounded ones.
    assert r["latency_p50_us"] == 2822.0
    assert r["latency_p99_us"] == 73855.0
    assert r["latency_p999_us"] == 101678.0
    assert s["bogus"] == [] and s["errors"]["read"] == 0


def test_script_line_post_body():
    r = parse(load("rivet_echo4k_script.txt"))
    assert r["requests"] == 47370
    # 4,096 bytes of body come back in every response.
    assert r["bytes_read"] / r["requests"] > 4096
    assert r["latency_p999_us"] == 104830.0


def test_script_line_bogus_zeros_and_empty_histogram():
    # Synthetic: the same wrk bug in the script's percentiles (0 with a non-zero max) and wrk's
    # empty histogram (min = INT64_MIN when nothing completed).
    text = load("rivet_pipeline16_zero_percentiles.txt") + (
        'BENCH_WRK {"percentiles_us": {"50": 578, "75": 900, "90": 0, "99": 0, "99.9": 0, '
        '"99.99": 0}, "min_us": 12, "max_us": 9100, "mean_us": 600.0, "requests": 5717264, '
        '"duration_us": 5103000, "bytes": 1, "errors": {"connect": 0, "read": 0, "write": 0, '
        '"status": 0, "timeout": 0}}\n'
    )
    r = parse(text)
    assert r["script"]["bogus"] == ["90", "99", "99.9", "99.99"]
    assert r["latency_p50_us"] == 578.0
    assert r["latency_p99_us"] is None and r["latency_p999_us"] is None
    empty = parse(load("closing_peer_c4.txt") + (
        'BENCH_WRK {"percentiles_us": {"50": 0, "99": 0, "99.9": 0}, "min_us": -9223372036854775808, '
        '"max_us": 0, "mean_us": 0.0, "requests": 0, "duration_us": 1000000, "bytes": 0, '
        '"errors": {"connect": 0, "read": 20576, "write": 0, "status": 0, "timeout": 0}}\n'))
    assert empty["script"]["min_us"] is None
    assert empty["script"]["bogus"] == []  # zero max: zeros are what wrk measured
    assert empty["latency_p999_us"] == 0.0


def test_bad_script_line():
    with pytest.raises(WrkOutputError, match="BENCH_WRK"):
        parse(load("nginx_hello_c100.txt") + "BENCH_WRK {not json}\n")
