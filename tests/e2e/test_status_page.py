"""GET /status: a self-contained page whose charts fill from /status.json, checked in headless
Chromium (no console message at all, data in every chart that has some)."""
import re
import threading

import pytest

from chromium import CHROMIUM, run_headless
from rivet_e2e import SLOW


def test_status_json_fields(server):
    server.get("/hello")
    doc = server.get("/status.json").json()
    for key in ("uptime_s", "requests", "status", "latency_bounds_us", "latency_counts",
                "connections", "queue_depth", "workers", "rate_limited", "cache", "rss_bytes"):
        assert key in doc, key
    assert len(doc["latency_counts"]) == len(doc["latency_bounds_us"]) + 1
    assert doc["requests"] >= 1 and doc["status"]["2xx"] >= 1


def test_page_is_self_contained(server):
    r = server.get("/status")
    assert r.status == 200 and r.header("Content-Type").startswith("text/html")
    html = r.text
    assert "<canvas" in html and "status.json" in html
    # No external asset: nothing loaded from another origin.
    assert not re.search(r'(src|href)\s*=\s*"(https?:)?//', html), "external reference"
    assert "@import" not in html


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (scripts/setup.sh)")
def test_page_in_headless_chromium(server, tmp_path):
    stop = threading.Event()

    def traffic():  # requests for the charts to show
        while not stop.is_set():
            server.get("/hello")

    t = threading.Thread(target=traffic)
    t.start()
    try:
        p = run_headless(tmp_path / "profile", "--enable-logging=stderr", "--v=0",
                         "--virtual-time-budget=4000", "--dump-dom",
                         f"http://{server.host}:{server.port}/status", timeout=60 * SLOW)
    finally:
        stop.set()
        t.join()
    assert p.returncode == 0, p.stderr[-3000:]
    console = [l for l in p.stderr.splitlines() if "CONSOLE" in l or "Uncaught" in l]
    assert not console, console
    samples = int(re.search(r'data-samples="(\d+)"', p.stdout).group(1))
    assert samples >= 2, p.stdout[:2000]
    points = dict(re.findall(r'<canvas id="c-(\w+)"[^>]*data-points="(\d+)"', p.stdout))
    for chart in ("rps", "lat", "conn", "queue"):
        assert int(points.get(chart, 0)) >= 2, (chart, points)
    assert '<div id="state">cannot reach' not in p.stdout
