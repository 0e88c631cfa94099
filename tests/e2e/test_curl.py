"""Interoperability with a real client: curl."""
import json
import re
import shutil
import subprocess
import time

import pytest

from rivet_e2e import SLOW

CURL = shutil.which("curl")
pytestmark = pytest.mark.skipif(CURL is None, reason="curl is not installed")


def curl(*args, timeout=30):
    return subprocess.run([CURL, "-sS", "--noproxy", "*", *args], capture_output=True,
                          timeout=timeout * SLOW)


def url(server, path):
    return f"http://{server.host}:{server.port}{path}"


def test_curl_get(server):
    p = curl("-i", url(server, "/hello"))
    assert p.returncode == 0, p.stderr
    head, _, body = p.stdout.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n"), head
    assert b"\r\nServer: rivet\r\n" in head
    assert body == b"Hello, World!"


def test_curl_head(server):
    p = curl("-I", url(server, "/hello"))
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"Content-Length: 13\r\n" in p.stdout
    assert p.stdout.endswith(b"\r\n\r\n")


def test_curl_http10(server):
    p = curl("--http1.0", "-i", url(server, "/echo?a=b"))
    assert p.returncode == 0, p.stderr
    head, _, body = p.stdout.partition(b"\r\n\r\n")
    assert b"Connection: close" in head
    assert json.loads(body) == {"a": "b"}


def test_curl_reuses_the_connection(server):
    p = curl("-v", url(server, "/hello"), url(server, "/healthz"), url(server, "/hello"))
    assert p.returncode == 0, p.stderr
    assert p.stdout == b"Hello, World!okHello, World!"
    assert len(re.findall(rb"Re-using existing connection", p.stderr)) == 2, p.stderr


@pytest.mark.parametrize("mode", ["content-length", "chunked", "expect-100"])
def test_curl_upload(server, tmp_path, mode):
    data = bytes((i * 131 + 7) & 0xFF for i in range(3 << 20))
    src = tmp_path / "upload.bin"
    src.write_bytes(data)
    out = tmp_path / "echo.bin"
    args = ["-v", "--data-binary", f"@{src}", "-H", "Content-Type: application/x-e2e", "-o",
            str(out)]
    if mode == "chunked":
        args += ["-H", "Transfer-Encoding: chunked", "-H", "Expect:"]
    elif mode == "expect-100":
        args += ["-H", "Expect: 100-continue", "--expect100-timeout", "10"]
    else:
        args += ["-H", "Expect:"]
    t0 = time.monotonic()
    p = curl(*args, url(server, "/echo"))
    elapsed = time.monotonic() - t0
    assert p.returncode == 0, p.stderr
    assert out.read_bytes() == data
    assert b"< Content-Type: application/x-e2e" in p.stderr
    if mode == "expect-100":
        assert b"HTTP/1.1 100 Continue" in p.stderr, p.stderr
        assert elapsed < 5 * SLOW, "curl waited for a 100 Continue that never came"
    if mode == "chunked":
        assert b"> Transfer-Encoding: chunked" in p.stderr


def test_curl_fibonacci_json_post(server):
    p = curl("-H", "Content-Type: application/json", "--data", '{"number": 100}',
             url(server, "/fibonacci"))
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {"number": 100, "fibonacci": "354224848179261915075"}


def test_curl_errors(server):
    p = curl("-w", "%{http_code}", "-o", "/dev/null", url(server, "/fibonacci?number=-4"))
    assert p.stdout == b"400"
    p = curl("-w", "%{http_code}", "-o", "/dev/null", "-X", "DELETE", url(server, "/hello"))
    assert p.stdout == b"405"
