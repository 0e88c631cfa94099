"""Unit tests for bench/stats.py and the summary of bench/bench.py on recorded runs.

Run: python3 -m pytest -q bench/test_stats.py
"""

import json
import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import stats  # noqa: E402


def test_spread_odd_and_even():
    s = stats.spread([3.0, 1.0, 2.0])
    assert s == {"median": 2.0, "min": 1.0, "max": 3.0, "n": 3, "spread_pct": 100.0}
    s = stats.spread([10, 12])
    assert s["median"] == 11 and s["n"] == 2
    assert s["spread_pct"] == pytest.approx(2 / 11 * 100)


def test_spread_skips_missing_values():
    # wrk's bogus percentiles come back as None: they are left out, not taken as 0.
    s = stats.spread([None, 5.0, None, 7.0, 6.0])
    assert s["median"] == 6.0 and s["n"] == 3
    assert stats.spread([None, None]) is None
    assert stats.spread([]) is None


def test_spread_of_zero_median():
    assert stats.spread([0, 0])["spread_pct"] == 0.0


def test_median_runs():
    runs = [{"rps": 100}, {"rps": 300}, {"rps": 200}, {"other": 1}]
    assert stats.median_runs(runs, "rps")["median"] == 200
    assert stats.median_runs(runs, "missing") is None


def test_ratio():
    assert stats.ratio(3, 2) == 1.5
    assert stats.ratio(None, 2) is None
    assert stats.ratio(1, 0) is None


def test_open_loop_target():
    assert stats.open_loop_target(112855.0, 0.5) == 56400
    assert stats.open_loop_target(112855.0, 0.9) == 101600
    assert stats.open_loop_target(150.0, 0.5) == 100  # never below 100 req/s
    assert stats.open_loop_target(None, 0.5) is None
    assert stats.open_loop_target(0, 0.9) is None


def test_growth_flat_after_warmup():
    series = [(0, 100), (1, 150), (2, 200), (3, 200), (4, 200), (5, 200)]
    g = stats.growth(series, warmup_s=2)
    assert g["baseline_s"] == 2 and g["baseline_bytes"] == 200
    assert g["growth_pct"] == 0.0
    assert g["growth_from_first_pct"] == 100.0
    assert g["max_bytes"] == 200 and g["samples"] == 6 and g["duration_s"] == 5


def test_growth_leak():
    series = [(t, 1000 + 10 * t) for t in range(0, 601)]
    g = stats.growth(series, warmup_s=60)
    assert g["baseline_bytes"] == 1600
    assert g["growth_pct"] == pytest.approx((7000 - 1600) / 1600 * 100)


def test_growth_short_series():
    assert stats.growth([(0, 5)], 1) is None
    # Warm-up longer than the series: the first sample is the baseline.
    g = stats.growth([(0, 100), (1, 110)], warmup_s=60)
    assert g["baseline_bytes"] == 100 and g["growth_pct"] == pytest.approx(10.0)


def test_summary_on_recorded_runs():
    """bench.summarize on the runs of a recorded smoke run (bench/testdata/results_smoke.json):
    n/a by design stays apart from failures; × floor is each CPU µs/req ÷ the floor's."""
    import bench

    doc = json.loads((HERE / "testdata" / "results_smoke.json").read_text())
    s = dict(doc["settings"], scenarios=doc["scenarios"])
    unsupported = {tuple(k.split(":", 1)): v for k, v in doc["unsupported"].items()}
    summ = bench.summarize(s, unsupported, doc["runs"])
    row = summ["percore:hello_c100"]["rivet"]
    floor = summ["percore:hello_c100"]["floor"]
    assert not row.get("na")
    assert row["cpu_vs_floor"] == pytest.approx(row["cpu_us_per_req"]["median"] / floor["cpu_us_per_req"]["median"])
    assert summ["percore:echo_4k_c100"]["nginx"] == {
        "na": True, "by_design": True, "runs": 0,
        "reason": "nginx-light cannot send a request body back without a backend or a module"}
    # A failed run makes its row n/a (not by design), whatever the other runs measured.
    runs = [dict(r) for r in doc["runs"]]
    for r in runs:
        if r["scenario"] == "hello_c100" and r["server"] == "h2o" and r["mode"] == "percore":
            r["error"] = "wrong answer after the run: status 500"
    summ = bench.summarize(s, unsupported, runs)
    assert summ["percore:hello_c100"]["h2o"]["na"] and not summ["percore:hello_c100"]["h2o"]["by_design"]


def test_report_renders_recorded_run(tmp_path):
    """The markdown report of a recorded smoke run: a section per mode and the soak; n/a cells
    say why; write_docs replaces only the sections between their markers."""
    import report

    doc = json.loads((HERE / "testdata" / "results_smoke.json").read_text())
    sections = report.render(doc)
    assert set(sections) == {"percore", "machine", "soak"}
    pc = sections["percore"]
    assert "| GET /hello, 100 connections |" in pc
    assert "nginx: nginx-light cannot send a request body back" in pc
    assert "open loop" in pc and "![Server CPU µs per request, per core](img/bench-percore-cpu.png)" in pc
    assert "growth after warm-up" in sections["soak"]
    page = tmp_path / "B.md"
    page.write_text(f"intro\n{report.begin('percore')}\nold\n{report.end('percore')}\nmiddle\n"
                    f"{report.begin('models')}\nkept\n{report.end('models')}\n")
    report.write_docs({"percore": "new"}, page)
    text = page.read_text()
    assert "old" not in text and "new" in text and "kept" in text and text.startswith("intro\n")
    assert text.index("middle") > text.index("new")


def test_report_of_another_machine_has_its_own_sections():
    """Results taken with BENCH_HOST=device render as device-* sections with device-* plots, and
    the whole-machine header names the cores the server and wrk were given."""
    import report

    doc = json.loads((HERE / "testdata" / "results_smoke.json").read_text())
    doc["host"] = "device"
    doc["settings"].update(machine_server_cpus="0-7", machine_client_cpus="8-15")
    sections = report.render(doc)
    assert set(sections) == {"device-percore", "device-machine", "device-soak"}
    assert "(img/device-bench-percore-cpu.png)" in sections["device-percore"]
    assert "(img/bench-percore-cpu.png)" not in sections["device-percore"]
    assert "Server pinned to cores 0-7" in sections["device-machine"]
    assert "wrk to cores 8-15" in sections["device-machine"]


def test_cpu_list():
    """`taskset -c` lists as the harness reads them (BENCH_MACHINE_*_CPUS, BENCH_OPEN_CLIENT_CPUS)."""
    from peers import cpu_list

    assert cpu_list("0-3,8") == [0, 1, 2, 3, 8]
    assert cpu_list("1, 2,3") == [1, 2, 3]
    assert cpu_list("") == []
    for bad in ("a-b", "3-1", "-1", "1-"):
        with pytest.raises(ValueError):
            cpu_list(bad)


def test_settings_refuse_bad_cpu_lists(monkeypatch):
    """A CPU list that is not one, or a whole-machine split with one side only, stops the harness
    with a message naming the variable, before any server starts."""
    import argparse

    import bench

    args = argparse.Namespace(smoke=True, full=False, reps=None, duration=None, servers=None,
                              modes=None, scenarios=None)  # fmt: skip
    for var in ("BENCH_MACHINE_SERVER_CPUS", "BENCH_MACHINE_CLIENT_CPUS", "BENCH_OPEN_CLIENT_CPUS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("BENCH_OPEN_CLIENT_CPUS", "1-x")
    with pytest.raises(SystemExit, match="OPEN_CLIENT_CPUS: '1-x' is not a CPU list"):
        bench.build_settings(args)
    monkeypatch.setenv("BENCH_OPEN_CLIENT_CPUS", "1-3")
    monkeypatch.setenv("BENCH_MACHINE_SERVER_CPUS", "0-7")
    with pytest.raises(SystemExit, match="set both BENCH_MACHINE_SERVER_CPUS and BENCH_MACHINE_CLIENT_CPUS"):
        bench.build_settings(args)
    monkeypatch.setenv("BENCH_MACHINE_CLIENT_CPUS", "8-15")
    s = bench.build_settings(args)
    assert (s["machine_server_cpus"], s["machine_client_cpus"], s["open_client_cpus"]) == ("0-7", "8-15", "1-3")


def test_paired_ratios_are_taken_within_each_rep():
    # Rep 1 on a slow machine, rep 2 on a fast one: medians of each side would compare a slow
    # run of one with a fast run of the other; the pairs do not.
    runs = [
        {"scenario": "s", "mode": "percore", "rep": 1, "server": "rivet", "cpu": 7.0},
        {"scenario": "s", "mode": "percore", "rep": 1, "server": "base", "cpu": 7.0},
        {"scenario": "s", "mode": "percore", "rep": 2, "server": "rivet", "cpu": 4.5},
        {"scenario": "s", "mode": "percore", "rep": 2, "server": "base", "cpu": 5.0},
        {"scenario": "s", "mode": "percore", "rep": 3, "server": "rivet", "cpu": 4.0},
        {"scenario": "t", "mode": "percore", "rep": 1, "server": "rivet", "cpu": 1.0},
    ]
    got = stats.paired_ratios(runs, "cpu", "rivet", "base")
    assert got["s"]["ratios"] == [1.0, 0.9, None]
    assert got["s"]["median"] == pytest.approx(0.95) and got["s"]["n"] == 2
    assert "t" not in got  # no pair at all


def test_paired_ratios_keep_the_reps_in_number_order():
    runs = []
    for rep in (10, 2, 1):
        runs += [{"scenario": "s", "mode": "percore", "rep": rep, "server": "a", "cpu": rep},
                 {"scenario": "s", "mode": "percore", "rep": rep, "server": "b", "cpu": 1.0}]
    assert stats.paired_ratios(runs, "cpu", "a", "b")["s"]["ratios"] == [1.0, 2.0, 10.0]
