"""bench/ws_bench.py's parts: ws_load's result line (bench/ws_load_output.py) on recorded outputs,
the report's medians, ratios and goals (bench/ws_report.py), and the load generator itself
against an independent server (Python's `websockets`, scripts/setup.sh installs it): its echoes
check out with and without permessage-deflate, and a server that answers wrongly is caught."""
import asyncio
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import ws_bench  # noqa: E402
import ws_report  # noqa: E402
from ws_load_output import WsLoadOutputError, parse  # noqa: E402

DATA = Path(__file__).parent / "testdata"


def test_parse_recorded_echo_idle_and_subscribe():
    echo = parse((DATA / "ws_load_echo_deflate.txt").read_text())
    assert echo["mode"] == "echo" and echo["open"] == 10 and echo["deflate_negotiated"] == 10
    assert echo["messages_per_s"] == 10158.0 and echo["errors_total"] == 0
    assert echo["user_us_per_message"] == pytest.approx(51.09, abs=0.01)
    assert echo["latency_us"]["p99"] == 5512.7
    idle = parse((DATA / "ws_load_idle.txt").read_text())
    assert idle["bytes_per_connection"] == pytest.approx(2935.47, abs=0.01)
    # An echo server asked to fan out: no subscriber ever sees the probe.
    sub = parse((DATA / "ws_load_subscribe_echo_server.txt").read_text())
    assert sub["subscribed"] == 0 and sub["deliveries"] == 0 and sub["expected"] == 15


def test_parse_refuses_what_is_not_a_result():
    with pytest.raises(WsLoadOutputError, match="no result line"):
        parse("ws_load: usage\n")
    with pytest.raises(WsLoadOutputError, match="lacks"):
        parse('{"mode": "idle", "connections": 3}\n')
    with pytest.raises(WsLoadOutputError, match="broken"):
        parse('{"mode": "echo", \n')


def echo_run(server, sc, cpu, rate, errors=0):
    return {"server": server, "scenario": sc, "rep": 0, "cpu_us_per_message": cpu,
            "user_us_per_message": cpu / 10,
            "messages_per_s": rate, "latency_us": {"p50": 1000.0, "p99": 4000.0},
            "errors_total": errors, "noise_cores": 0.1}


def test_report_rivet_against_the_best_peer_and_the_goals():
    runs = [echo_run("rivet", "ws_echo_32_c100", 4.0, 90000), echo_run("rivet", "ws_echo_32_c100", 5.0, 80000),
            echo_run("rivet", "ws_echo_32_c100", 6.0, 70000),
            echo_run("beast", "ws_echo_32_c100", 10.0, 40000),
            echo_run("rust", "ws_echo_32_c100", 7.5, 50000),
            echo_run("rivet", "ws_echo_16k_c100", 14.0, 30000),
            echo_run("rust", "ws_echo_16k_c100", 15.0, 29000),
            {"server": "rivet", "scenario": "ws_idle_c10000", "rep": 0, "bytes_per_connection": 900.0},
            {"server": "beast", "scenario": "ws_idle_c10000", "rep": 0, "bytes_per_connection": 1700.0},
            {"server": "rivet", "scenario": "ws_publish_c10000", "rep": 0, "deliveries_per_s": 2e6,
             "cpu_us_per_delivery": 0.4, "latency_us": {"p50": 2000.0, "p99": 9000.0},
             "deliveries": 2000000, "expected": 2000000},
            {"server": "beast", "scenario": "ws_echo_16k_c100", "rep": 0, "error": "died"}]
    skipped = {("rust", "ws_echo_16k_c100_deflate"): "fastwebsockets has no permessage-deflate"}
    lines = ws_report.report(runs, skipped, "bash bench/run.sh --websocket", {}).splitlines()
    assert "| ws_echo_32_c100 | rivet | 80,000 (70,000–90,000) | 5.00 (4.00–6.00) | 0.50 (0.40–0.60) | 1.00 / 4.00 | 0 | |" in lines
    # The best peer is the one with the lowest CPU per message: Rust here, 5.0 / 7.5.
    assert "| ws_echo_32_c100 | rivet ÷ Rust fastwebsockets | | | | | | **0.67** (goal ≤ 0.8: goal met) |" in lines
    assert "| ws_echo_16k_c100 | rivet ÷ Rust fastwebsockets | | | | | | **0.93** (goal ≤ 0.8: goal not met) |" in lines
    assert "| ws_echo_16k_c100_deflate | Rust fastwebsockets | n/a | fastwebsockets has no permessage-deflate | | | | |" in lines
    assert "| ws_idle_c10000 | rivet | 900 | ≤ 1024: met |" in lines
    assert "| ws_idle_c10000 | Boost.Beast | 1,700 | |" in lines
    assert "| ws_publish_c10000 | rivet | 2,000,000 | 0.400 | 2.00 / 9.00 | 2,000,000 (2,000,000) |" in lines
    assert any(x.startswith("✗ beast ws_echo_16k_c100 run 1: died") for x in lines)


# --- the load generator against an independent server ------------------------------------


class PythonServer:
    """A websockets echo server on its own thread; `mangle` changes what it sends back."""

    def __init__(self, mangle=None, chat=False, fragment=False):
        self.mangle = mangle or (lambda m: m)
        self.chat = chat  # every message goes to every client, as rivet's /ws/chat
        self.fragment = fragment  # each echo in two frames, split inside the stamp
        self.ready = threading.Event()
        self.thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)
        self.thread.start()
        assert self.ready.wait(30), "the websockets server did not start"

    async def _main(self):
        from websockets.asyncio.server import broadcast, serve

        clients = set()

        async def echo(ws):
            clients.add(ws)
            try:
                async for msg in ws:
                    if self.chat:
                        broadcast(clients, f"{{\"chat\": \"{msg}\"}}")  # wrapped, as a chat might
                    elif self.fragment:
                        await ws.send([msg[:5], msg[5:]])
                    else:
                        await ws.send(self.mangle(msg))
            finally:
                clients.discard(ws)

        self.stop = asyncio.Event()
        async with serve(echo, "127.0.0.1", 0, compression="deflate") as server:
            self.port = server.sockets[0].getsockname()[1]
            self.loop = asyncio.get_running_loop()
            self.ready.set()
            await self.stop.wait()

    def close(self):
        self.loop.call_soon_threadsafe(self.stop.set)
        self.thread.join(10)


@pytest.fixture(scope="module")
def ws_load_bin(tmp_path_factory):
    pytest.importorskip("websockets", reason="bash scripts/setup.sh installs it")
    cache = Path(os.environ.get("BENCH_CACHE", Path.home() / ".cache" / "rivet-bench"))
    binary, err = ws_bench.build_ws_load(cache)
    assert binary, err
    return binary


def run_load(binary, port, *args):
    r = subprocess.run([str(binary), "--port", str(port), "--server-pid", str(os.getpid()), *args],
                       capture_output=True, text=True, timeout=120)
    return r.returncode, parse(r.stdout)


@pytest.mark.parametrize("size,deflate", [(32, False), (16384, False), (16384, True)])
def test_echoes_check_out_against_python_websockets(ws_load_bin, size, deflate):
    srv = PythonServer()
    try:
        rc, res = run_load(ws_load_bin, srv.port, "-c", "4", "--size", str(size), "--duration",
                           "0.5", *(["--deflate"] if deflate else []))
    finally:
        srv.close()
    assert rc == 0 and res["errors_total"] == 0, res
    assert res["open"] == 4 and res["messages_total"] >= 4
    assert res["deflate_negotiated"] == (4 if deflate else 0)
    assert res["verified_whole"] >= 4  # each connection's first echo is compared whole
    assert res["cpu_us_per_message"] is not None  # the server's CPU: this process's
    assert 0 <= res["user_us_per_message"] <= res["cpu_us_per_message"]


def test_fragmented_echoes_and_a_pipeline_check_out(ws_load_bin):
    srv = PythonServer(fragment=True)
    try:
        rc, res = run_load(ws_load_bin, srv.port, "-c", "3", "--depth", "4", "--size", "300",
                           "--duration", "0.5")
    finally:
        srv.close()
    assert rc == 0 and res["errors_total"] == 0, res
    assert res["depth"] == 4 and res["messages_total"] >= 12


def test_a_wrong_echo_is_caught(ws_load_bin):
    # The last byte changed: only the whole comparisons (every 64th echo, the first included)
    # can see it.
    srv = PythonServer(lambda m: m[:-1] + ("~" if isinstance(m, str) else b"~"))
    try:
        rc, res = run_load(ws_load_bin, srv.port, "-c", "2", "--duration", "0.3")
    finally:
        srv.close()
    assert rc != 0 and res["errors"]["verify"] >= 2 and res["errors"]["verify"] == res["verified_whole"]


def test_a_short_echo_is_caught(ws_load_bin):
    srv = PythonServer(lambda m: m[1:])
    try:
        rc, res = run_load(ws_load_bin, srv.port, "-c", "2", "--duration", "0.3")
    finally:
        srv.close()
    assert rc != 0 and res["errors"]["verify"] == res["messages_total"] > 0


def test_subscribe_counts_every_delivery(ws_load_bin):
    srv = PythonServer(chat=True)
    try:
        rc, res = run_load(ws_load_bin, srv.port, "--mode", "subscribe", "-c", "5", "--messages",
                           "40", "--window", "4", "--duration", "30")
    finally:
        srv.close()
    assert rc == 0 and res["errors_total"] == 0, res
    assert res["open"] == 6 and res["subscribed"] == 5
    assert res["deliveries"] == res["expected"] == 200 and res["deliveries_per_s"] > 0


def test_idle_counts_bytes_per_connection(ws_load_bin):
    srv = PythonServer()
    try:
        rc, res = run_load(ws_load_bin, srv.port, "--mode", "idle", "-c", "50")
    finally:
        srv.close()
    assert rc == 0 and res["open"] == res["echoed"] == 50
    # The server is this process: its RSS grew by something for 50 connections.
    assert res["rss_before_kib"] > 0 and res["bytes_per_connection"] is not None
