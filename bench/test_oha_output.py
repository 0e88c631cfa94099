"""Unit tests for bench/oha_output.py on oha 1.16 JSON outputs recorded on the bench machine
(bench/testdata/oha_*.json).

Run: python3 -m pytest -q bench/test_oha_output.py
"""

import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from oha_output import OhaOutputError, parse  # noqa: E402


def load(name: str) -> str:
    return (HERE / "testdata" / name).read_text()


def test_open_loop_run():
    # rivet pinned to core 0, oha -q 20000 --latency-correction -w on core 1, 2 s.
    r = parse(load("oha_rivet_q20000.json"))
    assert r["requests"] == 37075 and r["ok"] == 37075
    assert r["status_codes"] == {"200": 37075}
    assert r["errors"] == 0 and r["deadline_aborted"] == 0
    assert r["duration_s"] == pytest.approx(2.0085, abs=1e-3)
    assert r["requests_per_s"] == pytest.approx(37075 / r["duration_s"])
    p = r["latency_percentiles_us"]
    assert set(p) == {"10", "25", "50", "75", "90", "95", "99", "99.9", "99.99"}
    assert p["99"] == pytest.approx(148745.866)
    # Percentiles come back in microseconds and in order.
    vals = [p[k] for k in ("10", "25", "50", "75", "90", "95", "99", "99.9", "99.99")]
    assert vals == sorted(vals)
    assert r["latency_max_us"] >= p["99.99"]


def test_deadline_aborts_are_not_server_errors():
    # Without -w, requests in flight when -z ends are aborted: counted apart, not as errors.
    r = parse(load("oha_httplib_q5000_deadline.json"))
    assert r["requests"] == 9992
    assert r["deadline_aborted"] == 5
    assert r["error_kinds"] == {"aborted due to deadline": 5}
    assert r["errors"] == 0
    assert r["latency_percentiles_us"]["50"] == pytest.approx(819.798)


def test_non_2xx_are_errors():
    r = parse(load("oha_rivet_404.json"))
    assert r["requests"] == 500
    assert r["ok"] == 0 and r["non_2xx_3xx"] == 500
    assert r["status_codes"] == {"404": 500}
    assert r["errors"] == 500


def test_refused_connections():
    # oha exits 0 when nothing listens; every request is an error and no latency exists.
    r = parse(load("oha_refused.json"))
    assert r["requests"] == 0 and r["requests_per_s"] == 0.0
    assert r["errors"] == 200
    assert r["error_kinds"] == {"Connection refused (os error 111)": 200}
    assert r["latency_percentiles_us"] == {}
    assert r["latency_avg_us"] is None and r["success_rate"] == 0.0


def test_not_oha_json():
    with pytest.raises(OhaOutputError, match="no oha JSON"):
        parse("error: unexpected argument '--bogus' found\n")
    with pytest.raises(OhaOutputError, match="not JSON"):
        parse("{ truncated")
    with pytest.raises(OhaOutputError, match="summary"):
        parse("{}")
    with pytest.raises(OhaOutputError):
        parse("")
