"""Smoke test of bench/framework/run.py: it builds its server against build/librivet.a, runs every
scenario once, briefly, and writes a JSON with a figure for each. Figures are not asserted (the
machine may be busy); what the script checks itself (the answers, the middleware's fields, the
waiters really waiting before and after the load) fails it when broken.

Run: python3 -m pytest -q bench/test_framework_bench.py   (about 15 s; skipped without wrk or a
Release build in build/)
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
WAITERS = 1000


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed")
@pytest.mark.skipif(not (REPO / "build" / "librivet.a").exists(), reason="no build/librivet.a")
def test_framework_bench_runs(tmp_path):
    env = dict(os.environ)
    env.pop("RIVET_BASE_SRC", None)  # this checkout only
    cpus = sorted(os.sched_getaffinity(0))
    env.setdefault("BENCH_SERVER_CPU", str(cpus[0]))
    env.setdefault("BENCH_CLIENT_CPU", str(cpus[1 % len(cpus)]))
    out = tmp_path / "framework.json"
    cmd = [sys.executable, str(HERE / "framework" / "run.py"), "--duration", "1", "--reps", "1",
           "--waiters", str(WAITERS), "--json", str(out)]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=180)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    assert "mw/plain" in r.stdout and "co/plain" in r.stdout

    data = json.loads(out.read_text())
    assert {(x["route"], x["build"]) for x in data["runs"]} == {
        ("plain", "current"), ("mw", "current"), ("co", "current")}  # fmt: skip
    for run in data["runs"]:
        assert run["requests"] > 0 and run["cpu_us_per_req"] > 0
    summary = data["summary"]
    assert summary["mw_over_plain"]["current"] > 0 and summary["co_over_plain"]["current"] > 0
    (wait,) = data["waiting"]
    assert wait["quiet"]["requests"] > 0 and wait["busy"]["requests"] > 0
    # 1,000 suspended handlers, each with its connection and a copy of its request, grow the RSS.
    assert wait["rss_with"] > wait["rss_before"]
    assert wait["bytes_per_waiter"] > 0
