"""The access log (combined by default, common, json) and the error log: every request of a
mixed run is logged, none is lost at SIGTERM, and rename + SIGHUP rotates the files."""
import json
import os
import re
import signal

from ops_e2e import COMBINED_RE, COMMON_RE, get, log_lines, statuses, wait_for, write_config
from rivet_e2e import build_request, exchange
from tls_e2e import curl


def combined(lines):
    parsed = []
    for line in lines:
        m = COMBINED_RE.match(line)
        assert m, f"not a combined line: {line!r}"
        parsed.append(m)
    return parsed


def test_mixed_run_every_line_is_combined(rivet, tmp_path):
    log = tmp_path / "access.log"
    srv = rivet(args=("--threads", "2", "--workers", "1", "--queue", "1", "--access-log", log))
    sent = []  # (request line, status) expected, in any order
    assert srv.get("/hello", headers={"User-Agent": 'ua "x"', "Referer": "http://r/"}).status == 200
    sent.append(("GET /hello HTTP/1.1", 200))
    assert srv.get("/no/such/page").status == 404
    sent.append(("GET /no/such/page HTTP/1.1", 404))
    assert srv.request("DELETE", "/hello").status == 405
    sent.append(("DELETE /hello HTTP/1.1", 405))
    assert srv.post("/echo", "abc").status == 200
    sent.append(("POST /echo HTTP/1.1", 200))
    assert srv.request("HEAD", "/hello").status == 200
    sent.append(("HEAD /hello HTTP/1.1", 200))
    # Pipelined: three on one connection, in one write.
    with srv.connect() as c:
        assert statuses(c, [get("/hello"), get("/echo?a=1"), get("/work?n=10")]) == [200] * 3
    sent += [("GET /hello HTTP/1.1", 200), ("GET /echo?a=1 HTTP/1.1", 200),
             ("GET /work?n=10 HTTP/1.1", 200)]
    # A protocol error (400 from the parser): logged with "-" for the request.
    responses, _, _ = exchange(srv.host, srv.port, b"BAD REQUEST LINE\r\n\r\n")
    assert responses[0].status == 400
    sent.append(("-", 400))
    # 5xx: the worker pool's queue is full.
    conns = [srv.connect(timeout=30) for _ in range(6)]
    for c in conns:
        c.send(build_request("GET", "/work?n=300000000"))
    codes = [c.read_response().status for c in conns]
    for c in conns:
        c.close()
    assert 503 in codes, codes
    sent += [("GET /work?n=300000000 HTTP/1.1", code) for code in codes]

    assert srv.stop(signal.SIGTERM) == 0
    lines = combined(log_lines(log))
    got = sorted((m["request"], int(m["status"])) for m in lines)
    assert got == sorted(sent)
    first = next(m for m in lines if m["request"] == "GET /hello HTTP/1.1" and
                 m["agent"] != "-")
    assert first["addr"] == "127.0.0.1"
    assert first["bytes"] == "13"
    assert first["referer"] == "http://r/"
    assert first["agent"] == 'ua \\x22x\\x22'  # quotes escaped as nginx does
    head = next(m for m in lines if m["request"].startswith("HEAD"))
    assert head["bytes"] == "0"


def test_no_line_lost_at_sigterm(rivet, tmp_path):
    log = tmp_path / "access.log"
    srv = rivet(args=("--threads", "2", "--workers", "1", "--access-log", log))
    n = 0
    for _ in range(4):
        with srv.connect() as c:
            c.send(get("/hello") * 500)
            for _ in range(500):
                assert c.read_response().status == 200
            n += 500
    srv.send_signal(signal.SIGTERM)  # at once: lines may still be in the loops' buffers
    assert srv.wait(15) == 0
    lines = log_lines(log)
    assert len(lines) == n
    combined(lines)


def test_common_and_json_formats(rivet, tmp_path):
    common = tmp_path / "common.log"
    srv = rivet(args=("--threads", "1", "--workers", "1", "--access-log", common,
                      "--log-format", "common"))
    srv.get("/hello")
    srv.stop()
    (line,) = log_lines(common)
    m = COMMON_RE.match(line)
    assert m and m["request"] == "GET /hello HTTP/1.1" and m["status"] == "200", line

    js = tmp_path / "json.log"
    srv = rivet(args=("--threads", "1", "--workers", "1", "--access-log", js,
                      "--log-format", "json"))
    srv.get("/echo?x=%22", headers={"User-Agent": "t\u00e9st".encode().decode("latin-1")})
    srv.get("/work?n=1000")
    srv.stop()
    docs = [json.loads(line) for line in log_lines(js)]
    assert [d["status"] for d in docs] == [200, 200]
    assert docs[0]["uri"] == "/echo?x=%22" and docs[0]["method"] == "GET"
    assert docs[0]["request"] == "GET /echo?x=%22 HTTP/1.1"
    for d in docs:
        assert isinstance(d["request_time_us"], int) and d["request_time_us"] >= 0
        assert d["remote_addr"] == "127.0.0.1"
        assert d["time"].endswith("Z")


def test_a_pipelined_requests_time_leaves_out_the_one_before_it(rivet, tmp_path):
    # The loop reads the clock once per request: a request's start is the end of the one before
    # it on the loop (docs/OPERATIONS.md). So /hello, read in the same turn as a slow /work run
    # on the loop ahead of it, is timed from /work's end, not from the turn's start.
    js = tmp_path / "json.log"
    srv = rivet(args=("--threads", "1", "--workers", "1", "--inline-heavy", "--access-log", js,
                      "--log-format", "json"))
    with srv.connect(timeout=60) as c:
        assert statuses(c, [get("/work?n=600000000"), get("/hello")]) == [200, 200]
    srv.stop()
    work, hello = (json.loads(line) for line in log_lines(js))
    assert work["uri"].startswith("/work") and hello["uri"] == "/hello"
    # /work loops 600 million times (150 ms here); /hello alone takes microseconds, and a
    # busy machine would have to stop it for a quarter of /work's time to fail this.
    assert work["request_time_us"] >= 20_000, work
    assert hello["request_time_us"] < work["request_time_us"] // 4, (work, hello)


def test_rotation_by_rename_and_sighup(rivet, tmp_path):
    log = tmp_path / "access.log"
    errors = tmp_path / "error.log"
    srv = rivet(args=("--threads", "2", "--workers", "1", "--access-log", log,
                      "--error-log", errors, "--log-level", "info"))
    for _ in range(3):
        srv.get("/hello")
    os.rename(log, tmp_path / "access.log.1")
    os.rename(errors, tmp_path / "error.log.1")
    srv.send_signal(signal.SIGHUP)
    wait_for(lambda: log.exists() and errors.exists(), what="the reopened files")
    for _ in range(2):
        srv.get("/healthz")
    srv.stop()
    old = log_lines(tmp_path / "access.log.1")
    new = log_lines(log)
    assert len(old) == 3 and all("GET /hello " in l for l in old), old
    assert len(new) == 2 and all("GET /healthz " in l for l in new), new


def test_error_log_levels(rivet, tmp_path):
    errors = tmp_path / "error.log"
    cfg = tmp_path / "rivet.json"
    cfg.write_text('{"logging": {"level": "warn"}}')
    srv = rivet(args=("--threads", "1", "--workers", "1", "--config", cfg,
                      "--error-log", errors))
    # At level warn, a reload's info line is not written, but its warning is.
    cfg.write_text('{"logging": {"level": "warn"}, "threading": {"max_queue_size": 3}}')
    srv.send_signal(signal.SIGHUP)
    wait_for(lambda: "[warn] the worker pool" in errors.read_text(), what="the warning")
    assert "[warn] the worker pool (threading.*) changes only at a restart" in errors.read_text()
    cfg.write_text('{"logging": {"level": "info"}, "threading": {"max_queue_size": 3}}')
    srv.send_signal(signal.SIGHUP)
    wait_for(lambda: "[info] reload" in errors.read_text(), what="the info line")
    assert errors.read_text().count("[info]") == 1
    srv.stop()


def test_access_log_off_by_default(rivet, tmp_path):
    srv = rivet(args=("--threads", "1", "--workers", "1"))
    srv.get("/hello")
    srv.stop()
    assert "GET /hello" not in srv.stdout() + srv.stderr()


def test_http2_requests_say_http_2_0(rivet, tmp_path):
    """h2c (prior knowledge) requests, inline and offloaded: nginx's protocol name in both
    formats."""
    for fmt in ("combined", "json"):
        log = tmp_path / f"{fmt}.log"
        srv = rivet(args=("--threads", "1", "--workers", "1", "--access-log", log,
                          "--log-format", fmt))
        for path in ("/hello", "/work?n=10"):  # one curl each: see test_metrics.py
            p = curl("--http2-prior-knowledge", "-o", "/dev/null", "-w", "%{http_version}",
                     f"http://{srv.host}:{srv.port}{path}")
            assert p.returncode == 0 and p.stdout == b"2", (p.stdout, p.stderr)
        assert srv.get("/hello").status == 200  # HTTP/1.1 beside them
        assert srv.stop(signal.SIGTERM) == 0
        lines = log_lines(log)
        if fmt == "json":
            requests = [json.loads(line)["request"] for line in lines]
        else:
            requests = [m["request"] for m in combined(lines)]
        assert sorted(requests) == ["GET /hello HTTP/1.1", "GET /hello HTTP/2.0",
                                    "GET /work?n=10 HTTP/2.0"], lines


def test_a_full_disk_counts_lost_lines_and_says_when_writing_resumes(rivet, tmp_path):
    """/dev/full as the access log (every write fails with ENOSPC): rivet_access_log_dropped_total
    counts each lost line, the error log says so once per outage, and once when a reload points
    the log at a file that takes the lines (issue 26, item 12)."""
    errors = tmp_path / "error.log"
    log = tmp_path / "access.log"
    cfg = write_config(tmp_path / "rivet.json", {"logging": {
        "access_log": "/dev/full", "error_log": str(errors), "flush_interval_ms": 10}})
    srv = rivet(args=("--threads", "2", "--workers", "1", "--config", cfg))

    def dropped():
        r = srv.get("/metrics")  # a line of its own, lost too
        assert r.status == 200, r
        m = re.search(r"^rivet_access_log_dropped_total (\d+)$", r.text, re.M)
        assert m, r.text
        return int(m[1])

    with srv.connect() as c:
        assert statuses(c, [get("/hello")] * 5) == [200] * 5
    wait_for(lambda: dropped() >= 5, timeout=10, what="5 lost lines counted")
    before = dropped()
    with srv.connect() as c:
        assert statuses(c, [get("/hello")] * 7) == [200] * 7
    wait_for(lambda: dropped() >= before + 7, timeout=10, what="7 more lost lines counted")
    failing = "[error] access log: cannot write to /dev/full: No space left on device"
    assert errors.read_text().count(failing) == 1, errors.read_text()

    write_config(cfg, {"logging": {"access_log": str(log), "error_log": str(errors),
                                   "flush_interval_ms": 10}})
    srv.send_signal(signal.SIGHUP)
    wait_for(lambda: "[info] reload: configuration" in errors.read_text(), what="the reload")
    lost = dropped()
    assert srv.get("/hello").status == 200
    wait_for(lambda: "access log: writing to " + str(log) + " again;" in errors.read_text(),
             timeout=10, what="the resumed line")
    wait_for(lambda: any("GET /hello " in line for line in log_lines(log)), what="a line")
    assert dropped() == lost  # nothing lost once the file takes the lines
    assert errors.read_text().count(failing) == 1
    srv.stop()
