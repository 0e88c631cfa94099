"""The command line: --help, --version, bad flags (exit 2), the listening line."""
import re
import socket
import subprocess

import pytest

from rivet_e2e import BIN, LISTEN_RE, PUBLIC, REPO, SLOW


def run(*args, timeout=10):
    return subprocess.run([str(BIN), *args], capture_output=True, text=True,
                          timeout=timeout * SLOW, stdin=subprocess.DEVNULL)


def test_help():
    p = run("--help")
    assert p.returncode == 0, p
    assert p.stdout.startswith("Usage: rivet"), p.stdout
    for flag in ("--port", "--bind", "--threads", "--workers", "--queue", "--root", "--help",
                 "--version"):
        assert flag in p.stdout, flag
    assert "listening" not in p.stdout


def header_version():
    """MAJOR.MINOR.PATCH as include/rivet/version.hpp, the one source of the version, says."""
    text = (REPO / "include/rivet/version.hpp").read_text()
    parts = [re.search(rf"^#define RIVET_VERSION_{p} (\d+)$", text, re.M).group(1)
             for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


def test_version():
    p = run("--version")
    assert p.returncode == 0, p
    assert re.fullmatch(r"rivet \d+\.\d+\.\d+\n", p.stdout), p.stdout
    assert p.stdout == f"rivet {header_version()}\n", p.stdout
    assert p.stderr == "", p.stderr


def test_version_among_other_flags():
    p = run("--port", "0", "--version", "--bogus")
    assert p.returncode == 0, p
    assert p.stdout == f"rivet {header_version()}\n", p.stdout
    assert "listening" not in p.stdout


@pytest.mark.parametrize("args,named", [
    (["--bogus"], "--bogus"),
    (["--port", "0", "--frobnicate", "1"], "--frobnicate"),
    (["-x"], "-x"),
    (["extra-positional"], "extra-positional"),
    (["--port", "abc"], "abc"),
    (["--port=abc"], "abc"),
    (["--port", "65536"], "65536"),
    (["--port", "-1"], "-1"),
    (["--port", ""], "--port"),
    (["--port"], "--port"),
    (["--threads", "0"], "--threads"),
    (["--threads", "two"], "two"),
    (["--workers", "0"], "--workers"),
    (["--workers", "1.5"], "1.5"),
    (["--queue", "0"], "--queue"),
    (["--queue", "lots"], "lots"),
    (["--root"], "--root"),
])
def test_bad_flags_exit_2(args, named):
    p = run(*args)
    assert p.returncode == 2, (args, p)
    assert named in p.stderr, (args, p.stderr)
    assert "listening" not in p.stdout


def test_port_abc_names_the_option():
    p = run("--port", "abc")
    assert p.returncode == 2
    assert "--port" in p.stderr and "abc" in p.stderr, p.stderr


def test_listening_line_reports_threads_and_workers(rivet):
    srv = rivet(args=("--threads", "3", "--workers", "5", "--queue", "7"))
    assert (srv.threads, srv.workers) == (3, 5)
    assert LISTEN_RE.search(srv.stdout())
    assert srv.get("/hello").status == 200


def test_inline_option_values(rivet):
    srv = rivet(args=("--threads=1", "--workers=1", "--queue=10"))
    assert (srv.threads, srv.workers) == (1, 1)
    assert srv.get("/healthz").body == b"ok"


def test_missing_root_page_is_not_a_crash(rivet, tmp_path):
    empty = tmp_path / "empty-root"
    empty.mkdir()
    srv = rivet(root=empty)
    r = srv.get("/")  # no index.html: the demo lists the directory instead
    assert r.status == 200 and b"Index of /" in r.body, r
    assert srv.get("/index.html").status == 404
    assert srv.get("/hello").status == 200
    gone = rivet(root=tmp_path / "no-such-dir")
    assert gone.get("/").status == 404
    assert gone.get("/hello").status == 200


def test_unusable_bind_address_fails_cleanly():
    p = run("--port", "0", "--bind", "not-an-address")
    assert p.returncode != 0 and p.returncode > 0, p
    assert "not-an-address" in p.stderr, p.stderr
    assert "listening" not in p.stdout


def test_port_in_use_fails(rivet):
    first = rivet(args=("--threads", "1", "--workers", "1"))
    p = subprocess.Popen([str(BIN), "--port", str(first.port), "--bind", "127.0.0.1",
                          "--threads", "1", "--workers", "1"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=3)
    except subprocess.TimeoutExpired:
        p.terminate()
        out, err = p.communicate(timeout=10)
        pytest.fail(f"a second server started on the busy port {first.port}: {out.strip()}")
    assert p.returncode != 0
    assert "listen" in err or "in use" in err, err


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback")
def test_ipv6_bind_serves(tmp_path):
    p = subprocess.Popen([str(BIN), "--port", "0", "--bind", "::1", "--threads", "1",
                          "--workers", "1", "--drain-grace", "0", "--root", str(PUBLIC)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        m = re.search(r":(\d+) \(", line)
        assert m, line
        port = int(m[1])
        with socket.create_connection(("::1", port), timeout=5) as s:
            s.sendall(b"GET /hello HTTP/1.1\r\nHost: [::1]\r\nConnection: close\r\n\r\n")
            data = b""
            while chunk := s.recv(4096):
                data += chunk
        assert data.startswith(b"HTTP/1.1 200 ") and data.endswith(b"Hello, World!"), data
    finally:
        p.terminate()
        p.communicate(timeout=10)
    assert p.returncode == 0


@pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback")
def test_ipv6_listening_line_is_a_valid_url():
    p = subprocess.Popen([str(BIN), "--port", "0", "--bind", "::1", "--threads", "1",
                          "--workers", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        line = p.stdout.readline()
    finally:
        p.terminate()
        p.communicate(timeout=10)
    assert re.search(r"rivet listening on http://\[::1\]:\d+ \(1 threads, 1 workers\)", line), line
