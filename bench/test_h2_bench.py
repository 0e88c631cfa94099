"""bench/h2_bench.py's parts: h2load's output (bench/h2load_output.py) on recorded outputs, the
report's medians, ratios and goals (bench/h2_report.py), and the idle-connection client's frame
exchange (bench/h2_idle_memory.py) against a scripted peer on a socket pair."""
import socket
import struct
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import h2_idle_memory  # noqa: E402
import h2_report  # noqa: E402
from h2load_output import H2loadOutputError, parse  # noqa: E402

DATA = Path(__file__).parent / "testdata"


def test_parse_recorded_tls_duration_run():
    r = parse((DATA / "h2load_h2o_tls_hello_m10.txt").read_text())
    assert r["requests"] == 380310 and r["requests_done"] == 380310 and r["errors"] == 0
    assert r["requests_per_s"] == 380310.0  # a 1 s main duration
    assert (r["protocol"], r["tls_version"], r["cipher"]) == ("h2", "TLSv1.3", "TLS_AES_128_GCM_SHA256")
    assert r["data_bytes"] == 10231260 and r["request_mean_us"] == 1400.0


def test_parse_recorded_h2c_count_run():
    r = parse((DATA / "h2load_h2o_h2c_100k_n2000.txt").read_text())
    assert r["requests"] == 2000 and r["protocol"] == "h2c" and r["tls_version"] is None
    assert r["data_bytes"] == 2000 * 102400 and r["request_mean_us"] == pytest.approx(7690.0)


def test_parse_shows_a_fallback_to_http11_and_counts_failures():
    # A server without h2 in its ALPN: h2load goes on in HTTP/1.1; the harness refuses the run.
    assert parse((DATA / "h2load_http11_only_server.txt").read_text())["protocol"] == "http/1.1"
    r = parse((DATA / "h2load_nginx_404.txt").read_text())
    assert r["requests"] == 0 and r["requests_done"] == 200 and r["status"]["4xx"] == 200
    assert r["errors"] == 200  # failed, once each


def test_parse_refuses_what_is_not_a_result():
    with pytest.raises(H2loadOutputError):
        parse("starting benchmark...\nconnect: Connection refused\n")


def run(server, sc, cpu, rps=1000.0, errors=0):
    return {"server": server, "scenario": sc, "rep": 0, "cpu_us_per_request": cpu,
            "requests_per_s": rps, "errors": errors, "protocol": "h2", "tls_version": "TLSv1.3",
            "cipher": "TLS_AES_128_GCM_SHA256", "noise_cores": 0.1}


def idle(server, sc, rss, pss):
    return {"server": server, "scenario": sc, "rep": 0, "connections": 2000,
            "bytes_per_connection": rss, "pss_bytes_per_connection": pss, "versions": ["TLSv1.3"]}


def test_report_ratio_against_the_better_peer_and_the_goal():
    runs = [run("rivet", "h2_hello_c100_m10", 4.0), run("rivet", "h2_hello_c100_m10", 5.0),
            run("rivet", "h2_hello_c100_m10", 6.0, errors=1),
            run("nginx", "h2_hello_c100_m10", 8.0), run("h2o", "h2_hello_c100_m10", 6.0),
            run("rivet", "h2c_hello_c100_m10", 3.0), run("nginx", "h2c_hello_c100_m10", 4.0),
            run("h2o", "h2c_hello_c100_m10", 3.0),
            idle("rivet", "h2_idle", 3000.0, 3100.0), idle("nginx", "h2_idle", 13000.0, 13000.0),
            idle("h2o", "h2_idle", 17000.0, 16900.0)]
    lines = h2_report.report(runs, "bash bench/run.sh --http2", {"h2load": "x"}).splitlines()
    assert ("| h2_hello_c100_m10 | rivet | 1,000 (1,000–1,000) | 5.00 (4.00–6.00) | 1 "
            "| h2, TLSv1.3, TLS_AES_128_GCM_SHA256 |") in lines
    assert ("| h2_hello_c100_m10 | rivet ÷ h2o (the better) | | CPU/req **0.83** "
            "(goal ≤ 0.9: met) | | |") in lines
    assert ("| h2c_hello_c100_m10 | rivet ÷ h2o (the better) | | CPU/req **1.00** "
            "(goal ≤ 0.9: not met) | | |") in lines
    assert "| h2_idle | rivet | 2,000 | 3,000 | 3,100 | TLSv1.3 |" in lines
    assert ("| h2_idle | rivet ÷ nginx (the better) | | RSS **0.23** (goal below both: met) "
            "| | |") in lines
    assert not any("rivet (base)" in x for x in lines)


def test_report_base_build_row_and_failed_runs():
    runs = [run("rivet", "h2_hello_c100_m1", 5.0), run("rivet", "h2_hello_c100_m1", 7.0),
            run("rivet_base", "h2_hello_c100_m1", 6.0), run("rivet_base", "h2_hello_c100_m1", 6.0),
            {"server": "h2o", "scenario": "h2_hello_c100_m1", "rep": 0, "error": "boom"}]
    text = h2_report.report(runs, "x", {})
    assert ("| h2_hello_c100_m1 | rivet ÷ rivet (base) | | CPU/req 1.000 (rivet 5.00–7.00, "
            "base 6.00–6.00) | | |") in text.splitlines()
    assert "✗ h2o h2_hello_c100_m1 run 1: boom" in text
    assert "the better" not in text  # no peer measured: no ratio against one


def frames_of(data: bytes) -> list[tuple[int, int, bytes]]:
    out = []
    while data:
        n = int.from_bytes(data[:3], "big")
        out.append((data[3], data[4], data[9:9 + n]))
        data = data[9 + n:]
    return out


def scripted_peer(sock: socket.socket, seen: list, goaway: bool = False) -> None:
    """A server's side of the opening: SETTINGS, a WINDOW_UPDATE, the ACK of the client's
    SETTINGS, and a PING answered; or a GOAWAY at once."""
    f = h2_idle_memory.frame
    got = b""
    while len(got) < len(h2_idle_memory.PREFACE) + 9:
        got += sock.recv(4096)
    if goaway:
        sock.sendall(f(h2_idle_memory.GOAWAY, 0, struct.pack(">II", 0, 0xB)))
        return
    sock.sendall(f(0x4, 0, struct.pack(">HI", 3, 100)) + f(0x8, 0, struct.pack(">I", 1 << 20)))
    sock.sendall(f(0x4, 1))
    while True:
        chunk = sock.recv(4096)
        if not chunk:
            break
        got += chunk
        pings = [x for x in frames_of(got[len(h2_idle_memory.PREFACE):]) if x[0] == 0x6]
        if pings:
            sock.sendall(f(0x6, 1, pings[0][2]))
            break
    seen.extend(frames_of(got[len(h2_idle_memory.PREFACE):]))


def test_idle_client_settles_the_connection():
    a, b = socket.socketpair()
    seen: list = []
    t = threading.Thread(target=scripted_peer, args=(b, seen))
    t.start()
    h2_idle_memory.settle(a)
    t.join(timeout=10)
    kinds = [(k, flags) for k, flags, _ in seen]
    assert kinds == [(0x4, 0), (0x4, 1), (0x6, 0)]  # our SETTINGS, the ACK of theirs, a PING
    a.close(), b.close()


def test_idle_client_reports_a_goaway():
    a, b = socket.socketpair()
    t = threading.Thread(target=scripted_peer, args=(b, [], True))
    t.start()
    with pytest.raises(RuntimeError, match="GOAWAY"):
        h2_idle_memory.settle(a)
    t.join(timeout=10)
    a.close(), b.close()


def test_report_a_peer_at_zero_gives_no_ratio_rather_than_the_other_peer():
    # A smoke run's few clock ticks can read 0: the better peer is still the one at 0.
    runs = [run("rivet", "h2c_hello_c100_m10", 5.0), run("nginx", "h2c_hello_c100_m10", 10.0),
            run("h2o", "h2c_hello_c100_m10", 0.0)]
    lines = h2_report.report(runs, "x", {}).splitlines()
    assert "| h2c_hello_c100_m10 | rivet ÷ h2o (the better) | | n/a (h2o measured 0) | | |" in lines
