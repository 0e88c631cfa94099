"""Response trailers on the real binary: GET /trailers streams a body and sends its SHA-256 as a
trailer field in the last chunk (HTTP/1.1), computed as it streams; HTTP/1.0 gets the body alone;
curl shows the trailer as it reads it."""
import hashlib
import shutil
import subprocess

import pytest

from rivet_e2e import SLOW, build_request


def test_streamed_body_ends_with_its_checksum_as_a_trailer(server):
    with server.connect() as c:
        for pieces in (4, 1, 0, 500):  # one connection: it goes on after each trailer block
            r = c.request("GET", f"/trailers?pieces={pieces}")
            assert r.status == 200, r
            assert r.header("Transfer-Encoding") == "chunked", r
            assert r.header("Content-Length") is None, r
            assert r.body.count(b"\n") == pieces, r
            assert r.trailers == [("checksum", hashlib.sha256(r.body).hexdigest())], r.trailers
        # The connection still answers a plain request after the trailers.
        r = c.request("GET", "/hello")
        assert r.status == 200 and r.body == b"Hello, World!", r


def test_the_last_chunk_carries_the_field_byte_for_byte(server):
    with server.connect() as c:
        c.send(build_request("GET", "/trailers?pieces=2", headers={"Connection": "close"}))
        raw, closed = c.read_until_close(timeout=5)
    assert closed, raw
    body = b"piece 1 of 2\npiece 2 of 2\n"
    digest = hashlib.sha256(body).hexdigest().encode()
    assert raw.endswith(b"d\r\npiece 1 of 2\n\r\nd\r\npiece 2 of 2\n\r\n0\r\nchecksum: " + digest +
                        b"\r\n\r\n"), raw


def test_http10_gets_the_body_without_trailers(server):
    with server.connect() as c:
        c.send(b"GET /trailers?pieces=3 HTTP/1.0\r\n\r\n")
        raw, closed = c.read_until_close(timeout=5)
    assert closed, raw
    head, _, body = raw.partition(b"\r\n\r\n")
    assert b"Transfer-Encoding" not in head, raw
    assert body == b"piece 1 of 3\npiece 2 of 3\npiece 3 of 3\n", raw
    assert b"checksum" not in raw


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl not installed")
def test_curl_raw_shows_the_trailer(server):
    out = subprocess.run(["curl", "-sS", "--raw", f"http://{server.host}:{server.port}/trailers?pieces=3"],
                         capture_output=True, timeout=30 * SLOW, check=True).stdout
    body = b"".join(f"piece {i} of 3\n".encode() for i in (1, 2, 3))
    assert out.endswith(b"0\r\nchecksum: " + hashlib.sha256(body).hexdigest().encode() +
                        b"\r\n\r\n"), out
    # Without --raw curl decodes the chunks and hands over the body alone.
    plain = subprocess.run(["curl", "-sS", f"http://{server.host}:{server.port}/trailers?pieces=3"],
                           capture_output=True, timeout=30 * SLOW, check=True).stdout
    assert plain == body
