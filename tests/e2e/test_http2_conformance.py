"""HTTP/2 conformance: h2spec's full run (the generic, HTTP/2 and HPACK suites: 145 cases)
against rivet over TLS (ALPN h2) and over h2c (prior knowledge on the plain port). Over TLS every
case must pass (none failed, none skipped). Over h2c every case but one: http2/3.5/2 sends
"INVALID CONNECTION PREFACE" and expects the connection closed without an answer, but the plain
port also serves HTTP/1.1, and bytes that are neither the preface nor a valid request get
HTTP/1.1's 400 (RFC 9112 §2.2), as h2o answers there too; test_invalid_preface_on_the_plain_port
pins that answer. h2spec's JUnit report (-j) names the cases that did not pass.

With --no-http2: ALPN gives http/1.1 and the h2c preface is refused with HTTP/1.1's answer.
"""
from __future__ import annotations

import os
import shutil
import socket
import ssl
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from hyperframe.frame import SettingsFrame, WindowUpdateFrame

from h2_frames import (CONNECTION_WINDOW, MAX_CONCURRENT_STREAMS, MAX_HEADER_LIST_SIZE, PREFACE,
                       STREAM_WINDOW, h2_tls, h2c)
from rivet_e2e import SLOW
from tls_e2e import client_context, start_tls

H2SPEC_CASES = 145


def find_h2spec() -> str | None:
    """h2spec on the PATH, else where scripts/setup.sh puts it: `go env GOBIN` or GOPATH/bin."""
    found = shutil.which("h2spec")
    if found:
        return found
    go = shutil.which("go")
    if go is None:
        return None
    for var in ("GOBIN", "GOPATH"):
        p = subprocess.run([go, "env", var], capture_output=True, text=True, timeout=60)
        base = p.stdout.strip().split(os.pathsep)[0] if p.returncode == 0 else ""
        if base:
            candidate = Path(base) / "h2spec" if var == "GOBIN" else Path(base) / "bin" / "h2spec"
            if candidate.exists():
                return str(candidate)
    return None


H2SPEC = find_h2spec()


def h2spec_results(report: Path) -> list[dict]:
    """Every case of an h2spec JUnit report: {"id": "http2/6.9.2/2", "title", "outcome"
    ("passed", "failed", "skipped"), "message"}. The id is the suite's package and the case's
    position in it, as h2spec numbers them (`h2spec http2/6.9.2/2` runs that one)."""
    cases = []
    for suite in ET.parse(report).getroot().iter("testsuite"):
        for i, case in enumerate(suite.iter("testcase"), start=1):
            outcome, message = "passed", ""
            for tag in ("failure", "error"):
                bad = case.find(tag)
                if bad is not None:
                    # h2spec's text: the frames it expected, one a line, then the one it got.
                    lines = (bad.text or bad.get("message") or "").strip().splitlines()
                    got = lines[-1] if lines else ""
                    message = f"expected: {' | '.join(lines[:-1])}; got: {got}"
                    outcome = "failed"
            if case.find("skipped") is not None:
                outcome = "skipped"
            cases.append({"id": f"{suite.get('package')}/{i}", "title": case.get("classname"),
                          "outcome": outcome, "message": message})
    return cases


def run_h2spec(port: int, tls: bool, tmp_path: Path) -> list[dict]:
    report = tmp_path / f"h2spec-{'tls' if tls else 'h2c'}.xml"
    args = [H2SPEC, "-h", "127.0.0.1", "-p", str(port), "-P", "/", "-o", str(int(10 * SLOW)),
            "-j", str(report)]
    if tls:
        args += ["-t", "-k"]
    p = subprocess.run(args, capture_output=True, text=True, timeout=900 * SLOW)
    assert report.exists(), f"h2spec wrote no report (exit {p.returncode}):\n{p.stdout[-3000:]}"
    (tmp_path / "h2spec.stdout").write_text(p.stdout)
    return h2spec_results(report)


def assert_all_pass(cases: list[dict], except_ids=()) -> None:
    bad = [c for c in cases if c["outcome"] != "passed" and c["id"] not in except_ids]
    lines = [f"{c['id']} {c['outcome']}: {c['title']}\n    " + c["message"].replace("\n", "\n    ")
             for c in bad]
    assert not bad, f"{len(bad)} of {len(cases)} h2spec cases did not pass:\n" + "\n".join(lines)
    assert len(cases) == H2SPEC_CASES, f"{len(cases)} cases, expected {H2SPEC_CASES}"


needs_h2spec = pytest.mark.skipif(H2SPEC is None, reason="h2spec is not installed "
                                  "(scripts/setup.sh builds it with go install)")


@needs_h2spec
def test_h2spec_over_tls(rivet, tls_certs, tmp_path):
    srv = start_tls(rivet, tls_certs)
    assert_all_pass(run_h2spec(srv.tls_port, True, tmp_path))
    assert srv.get("/hello").status == 200


@needs_h2spec
def test_h2spec_over_h2c(rivet, tmp_path):
    srv = rivet()
    cases = run_h2spec(srv.port, False, tmp_path)
    assert_all_pass(cases, except_ids={H2C_SHARED_PORT_CASE})
    assert srv.get("/hello").status == 200


# The one h2spec case the plain port answers as HTTP/1.1 (the module's docstring says why).
H2C_SHARED_PORT_CASE = "http2/3.5/2"


def test_invalid_preface_on_the_plain_port(rivet):
    """What h2spec's http2/3.5/2 sends, to the port that speaks HTTP/1.1 and h2c: HTTP/1.1's
    400, and the connection closes."""
    srv = rivet()
    with socket.create_connection((srv.host, srv.port), timeout=10 * SLOW) as s:
        s.sendall(b"INVALID CONNECTION PREFACE\r\n\r\n")
        got = b""
        while chunk := s.recv(4096):
            got += chunk
    assert got.startswith(b"HTTP/1.1 400 "), got[:200]
    assert b"Connection: close" in got, got[:400]


@pytest.mark.parametrize("tls", [True, False], ids=["tls", "h2c"])
def test_server_settings(rivet, tls_certs, tls):
    """The SETTINGS of the contract, and the connection window raised to 16 MiB."""
    srv = start_tls(rivet, tls_certs)
    with (h2_tls(srv, tls_certs) if tls else h2c(srv)) as c:
        first = c.wait_for(lambda f: True, what="the server's first frame")
        assert isinstance(first, SettingsFrame) and "ACK" not in first.flags, c.summary()
        s = first.settings
        assert s.get(SettingsFrame.MAX_CONCURRENT_STREAMS) == MAX_CONCURRENT_STREAMS, s
        assert s.get(SettingsFrame.INITIAL_WINDOW_SIZE) == STREAM_WINDOW, s
        assert s.get(SettingsFrame.MAX_HEADER_LIST_SIZE) == MAX_HEADER_LIST_SIZE, s
        assert s.get(SettingsFrame.ENABLE_PUSH, 0) == 0, s  # a server may only send 0
        raise_ = c.wait_for(lambda f: isinstance(f, WindowUpdateFrame) and f.stream_id == 0,
                            what="the connection's WINDOW_UPDATE")
        assert 65535 + raise_.window_increment == CONNECTION_WINDOW, raise_.window_increment
        headers, body = c.response(c.request("/hello"))
        assert headers[":status"] == "200" and body == b"Hello, World!"


def alpn_of(srv, certs, offer) -> str | None:
    ctx = client_context(certs)
    ctx.set_alpn_protocols(offer)
    with socket.create_connection((srv.host, srv.tls_port), timeout=10 * SLOW) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as s:
            return s.selected_alpn_protocol()


def test_alpn_prefers_h2(rivet, tls_certs):
    srv = start_tls(rivet, tls_certs)
    assert alpn_of(srv, tls_certs, ["h2", "http/1.1"]) == "h2"
    assert alpn_of(srv, tls_certs, ["http/1.1", "h2"]) == "h2"  # the server's preference
    assert alpn_of(srv, tls_certs, ["http/1.1"]) == "http/1.1"


def test_no_http2_offers_only_http11(rivet, tls_certs):
    srv = start_tls(rivet, tls_certs, "--no-http2")
    assert alpn_of(srv, tls_certs, ["h2", "http/1.1"]) == "http/1.1"
    try:
        got = alpn_of(srv, tls_certs, ["h2"])
    except ssl.SSLError:
        got = "refused"  # no_application_protocol alert: as good as not choosing h2
    assert got in (None, "refused"), got


def test_no_http2_refuses_the_h2c_preface(rivet):
    """The preface is `PRI * HTTP/2.0` to an HTTP/1.1 parser: a 400 or 505, then a close."""
    srv = rivet(args=("--threads", "2", "--workers", "2", "--no-http2"))
    with socket.create_connection((srv.host, srv.port), timeout=10 * SLOW) as s:
        s.sendall(PREFACE)
        got = b""
        while b"\r\n" not in got:
            piece = s.recv(4096)
            if not piece:
                break
            got += piece
    status_line = got.split(b"\r\n", 1)[0]
    assert status_line.startswith(b"HTTP/1.1 4") or status_line.startswith(b"HTTP/1.1 505"), got
    assert status_line.split()[1] in (b"400", b"505"), got
    assert srv.get("/hello").status == 200
