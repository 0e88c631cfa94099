"""bench/tls_bench.py's table from recorded run records: medians, errors and the rivet ÷ nginx
ratios (CPU per request, requests per second, bytes per idle connection)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import tls_bench  # noqa: E402


def run(server, sc, rps, cpu, errors=0):
    return {"server": server, "scenario": sc, "requests_per_s": rps, "cpu_us_per_request": cpu,
            "errors": errors, "version": "TLSv1.3", "cipher": "TLS_AES_256_GCM_SHA384"}


def test_table_medians_and_ratios():
    runs = [run("rivet", "tls_hello_c100", 30000, 9.0), run("rivet", "tls_hello_c100", 32000, 8.0),
            run("rivet", "tls_hello_c100", 31000, 10.0, errors=2),
            run("nginx", "tls_hello_c100", 25000, 10.0), run("nginx", "tls_hello_c100", 27000, 10.0),
            {"server": "rivet", "scenario": "tls_idle", "bytes_per_connection": 6000.0,
             "version": "TLSv1.3", "cipher": "X"},
            {"server": "nginx", "scenario": "tls_idle", "bytes_per_connection": 12000.0,
             "version": "TLSv1.3", "cipher": "X"}]
    table = tls_bench.report(runs, "bash bench/run.sh --tls")
    lines = table.splitlines()
    assert "| tls_hello_c100 | rivet | 31,000 | 9.0 | 2 | TLSv1.3, TLS_AES_256_GCM_SHA384 | |" in lines
    assert "| tls_hello_c100 | nginx | 26,000 | 10.0 | 0 | TLSv1.3, TLS_AES_256_GCM_SHA384 | |" in lines
    assert "| tls_hello_c100 | rivet ÷ nginx | | | | | CPU/req 0.90; req/s 1.19 |" in lines
    assert "| tls_idle | rivet ÷ nginx | | | | | bytes 0.50 |" in lines
    assert not any("tls_full_close" in x for x in lines)  # no runs, no rows


def test_base_build_row_gives_the_ratio_and_both_spreads():
    runs = [run("rivet", "tls_full_close", 3000, 300.0), run("rivet", "tls_full_close", 3100, 310.0),
            run("rivet_base", "tls_full_close", 2900, 290.0),
            run("rivet_base", "tls_full_close", 3000, 320.0),
            run("nginx", "tls_full_close", 2800, 330.0)]
    lines = tls_bench.report(runs, "bash bench/run.sh --engine").splitlines()
    assert "| tls_full_close | rivet_base | 2,950 | 305.0 | 0 | TLSv1.3, TLS_AES_256_GCM_SHA384 | |" in lines
    assert ("| tls_full_close | rivet ÷ rivet (base) | | | | | CPU/req 1.000 (rivet 300.0–310.0, "
            "base 290.0–320.0); req/s 1.03 |") in lines
    assert any(x.startswith("| tls_full_close | rivet ÷ nginx |") for x in lines)
    # Without a base build in the runs, no such row.
    lines = tls_bench.report([r for r in runs if r["server"] != "rivet_base"], "x").splitlines()
    assert not any("rivet (base)" in x for x in lines)
