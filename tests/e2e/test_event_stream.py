"""Server-Sent Events and streams that wait (GET /events, GET /stream/waiting of the demo):
curl and headless Chromium's EventSource as clients, Last-Event-ID reconnects, no CPU while a
stream waits, a loop that serves others meanwhile, the slow reader cut at the hard bound, and
SIGTERM ending open streams with their last chunk well within the drain timeout."""
import os
import re
import shutil
import signal
import socket
import subprocess
import time

import pytest

from chromium import CHROMIUM, run_headless
from rivet_e2e import SLOW

CURL = shutil.which("curl")
TICK = os.sysconf("SC_CLK_TCK")


def open_stream(server, target, headers=""):
    """A raw connection with `target` asked for and its head read; returns (socket, bytes)."""
    s = socket.create_connection((server.host, server.port), timeout=10 * SLOW)
    s.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\n{headers}\r\n".encode())
    got = b""
    while b"\r\n\r\n" not in got:
        piece = s.recv(65536)
        assert piece, got
        got += piece
    return s, got


def read_until_close(s, deadline_s):
    got = b""
    s.settimeout(deadline_s)
    while True:
        piece = s.recv(65536)
        if not piece:
            return got
        got += piece


def events_of(body: bytes):
    """(id, event, data) of each event in a de-chunked or raw SSE body."""
    text = re.sub(rb"\r\n[0-9a-f]+\r\n", b"", b"\r\n" + body).decode()
    found = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line
                      and not line.startswith(":"))
        if "data" in fields:
            found.append((fields.get("id"), fields.get("event"), fields["data"]))
    return found


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def metric(server, name):
    text = server.get("/metrics").text
    m = re.search(rf"^{name} (\d+)$", text, re.M)
    return int(m.group(1)) if m else None


@pytest.mark.skipif(CURL is None, reason="curl is not installed (scripts/setup.sh)")
def test_curl_receives_events_until_the_stream_ends(server):
    p = subprocess.run([CURL, "-sN", "-i", "--max-time", str(20 * SLOW),
                        f"http://{server.host}:{server.port}/events?every=50&limit=3"],
                       capture_output=True, timeout=30 * SLOW)
    assert p.returncode == 0, p.stderr  # the stream ended: curl saw the last chunk
    out = p.stdout.decode()
    assert "content-type: text/event-stream" in out.lower()
    assert "cache-control: no-cache" in out.lower()
    assert "x-accel-buffering: no" in out.lower()
    assert [(e[0], e[1]) for e in events_of(out.split("\r\n\r\n", 1)[1].encode())] == \
        [("1", "tick"), ("2", "tick"), ("3", "tick")]


def test_last_event_id_resumes_the_count(server):
    s, got = open_stream(server, "/events?every=20&limit=2", "Last-Event-ID: 41\r\n")
    s.settimeout(10 * SLOW)
    while not got.endswith(b"\r\n0\r\n\r\n"):
        piece = s.recv(65536)
        assert piece, got
        got += piece
    s.close()
    events = events_of(got.split(b"\r\n\r\n", 1)[1])
    assert [e[0] for e in events] == ["42", "43"]


def test_a_waiting_stream_costs_no_cpu_and_its_loop_serves_others(rivet):
    srv = rivet(args=("--io-threads", "1", "--workers", "1"))
    s, _ = open_stream(srv, "/events?every=60000")  # nothing for a minute: it waits
    try:
        before = cpu_seconds(srv.proc.pid)
        start = time.monotonic()
        r = srv.get("/hello")  # the same (only) loop
        served_in = time.monotonic() - start
        # Not behind the minute the stream waits (10 s of room for a loaded machine).
        assert r.status == 200 and served_in < 10 * SLOW, served_in
        time.sleep(2.0)
        used = cpu_seconds(srv.proc.pid) - before
        # A spinning producer burned a whole core (53 million calls in 3 s); waiting costs
        # nothing but the request above and the loop's once-a-second tick.
        assert used < 0.2, f"{used:.2f} s of CPU in 2 s with one waiting stream"
        assert metric(srv, "rivet_event_streams_open") == 1
    finally:
        s.close()


def test_producer_woken_from_another_thread(server):
    r = server.get("/stream/waiting?parts=5&ms=40")
    assert r.status == 200
    lines = r.text.splitlines()
    assert lines[:5] == [f"part {i}" for i in range(1, 6)]
    calls = int(lines[5].split()[1])
    # The first call, then at most two per wake (5 pieces and the end: a wake that lands while
    # the producer runs costs one more call): never a spin.
    assert 2 <= calls <= 1 + 2 * 6, calls


def test_slow_reader_is_cut_at_the_hard_bound(server):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect((server.host, server.port))
    s.sendall(b"GET /events?every=10&size=65536 HTTP/1.1\r\nHost: x\r\n\r\n")  # never read
    try:
        deadline = time.monotonic() + 30 * SLOW
        while metric(server, "rivet_event_streams_slow_closed_total") == 0:
            assert time.monotonic() < deadline, "the slow reader was never cut"
            time.sleep(0.1)
        assert server.get("/hello").status == 200  # others are served meanwhile
        got = read_until_close(s, 10 * SLOW)  # what was sent before the cut, then the close
        assert not got.endswith(b"\r\n0\r\n\r\n")  # cut, not ended
    finally:
        s.close()


def test_sigterm_ends_open_streams_well_within_the_drain(rivet):
    srv = rivet(args=("--io-threads", "2", "--drain-timeout", "20", "--drain-grace", "0"))
    streams = [open_stream(srv, "/events?every=60000")[0] for _ in range(4)]
    start = time.monotonic()
    srv.send_signal(signal.SIGTERM)
    assert srv.wait(timeout=15 * SLOW) == 0
    took = time.monotonic() - start
    assert took < 5 * SLOW, f"exit took {took:.1f} s (drain timeout 20 s)"
    for s in streams:
        got = read_until_close(s, 5 * SLOW)
        assert got.endswith(b"0\r\n\r\n"), got  # every client saw the end of its stream
        s.close()


PAGE = """<!doctype html>
<html><body><ol id="log"></ol><div id="state">waiting</div><div id="errors">0</div>
<script>
const seen = [];
let errors = 0;
const source = new EventSource('/events?every=50&limit=3&retry=200');
source.addEventListener('tick', (e) => {
  seen.push(e.lastEventId + ':' + e.data);
  const li = document.createElement('li');
  li.textContent = e.lastEventId;
  document.getElementById('log').appendChild(li);
  if (seen.length >= 6) {
    source.close();
    document.getElementById('state').textContent = 'done ' + seen.join(',');
  }
});
source.onerror = () => { document.getElementById('errors').textContent = String(++errors); };
</script></body></html>
"""


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (scripts/setup.sh)")
def test_eventsource_in_headless_chromium_reconnects_with_last_event_id(rivet, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "events.html").write_text(PAGE)
    srv = rivet(root=root)
    url = f"http://{srv.host}:{srv.port}/events.html"
    state = ""
    for budget in (4000, 15000):  # virtual time; a busy machine may need the longer one
        p = run_headless(tmp_path / "profile", f"--virtual-time-budget={budget}",
                         "--dump-dom", url, timeout=90 * SLOW)
        if p.returncode != 0:
            pytest.skip(f"chromium cannot run here: {p.stderr[-500:]}")
        m = re.search(r'<div id="state">([^<]*)</div>', p.stdout)
        state = m.group(1) if m else ""
        if state.startswith("done"):
            break
    # Three events, the server's end of the stream, a reconnect that sent Last-Event-ID: 3,
    # and the count resumed at 4.
    assert state == "done 1:1,2:2,3:3,4:4,5:5,6:6", p.stdout[-2000:]
