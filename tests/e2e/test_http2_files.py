"""Static files and compression over HTTP/2, as test_static.py and test_compression.py check
them over HTTP/1.1: ranges (single and multipart), If-None-Match / If-Modified-Since 304s,
If-Range, precompressed variants, directory listings, gzip/br/zstd negotiated and decoded, and
a 100 KiB and a 100 MiB file whole and in ranges (the large one sent in DATA frames within the
client's windows); over TLS (ALPN h2) and h2c, through httpx and curl."""
import gzip
import hashlib
import random
import re
import time

import brotli
import pytest
import zstandard
from hyperframe.frame import DataFrame, SettingsFrame, WindowUpdateFrame

from h2_features_e2e import MODES, client, curl, is_h2, peak_rss_bytes, raw_body, start
from h2_frames import h2c
from rivet_e2e import SANITIZED, SLOW

DECODE = {
    "gzip": gzip.decompress,
    "br": brotli.decompress,
    "zstd": lambda b: zstandard.ZstdDecompressor().decompressobj().decompress(b),
}
SIZES = {"100k.bin": 100 << 10, "100m.bin": 100 << 20}


def text_bytes(size: int, seed: str) -> bytes:
    """Text that compresses as a page does."""
    out = bytearray()
    i = 0
    while len(out) < size:
        out += f"<li class=\"{seed}\">item {i} of the list, value {i * 7919 % 1000}</li>\n".encode()
        i += 1
    return bytes(out[:size])


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("h2-static")
    (root / "hello.txt").write_bytes(b"hello static\n")
    (root / "page.html").write_bytes(text_bytes(20_000, "page"))
    (root / "small.txt").write_bytes(b"short and sweet\n" * 10)
    js = text_bytes(20_000, "js")
    (root / "app.js").write_bytes(js)
    (root / "app.js.gz").write_bytes(gzip.compress(js, 9, mtime=0))
    (root / "app.js.br").write_bytes(brotli.compress(js))
    rnd = random.Random(22)
    for name, size in SIZES.items():
        (root / name).write_bytes(rnd.randbytes(size))
    (root / "files").mkdir()
    for name in ("a.txt", "<b>.txt", "caf\u00e9.txt"):
        (root / "files" / name).write_bytes(b"x")
    (root / "files" / ".hidden").write_bytes(b"h")
    (root / "sub").mkdir()
    (root / "sub" / "index.html").write_bytes(b"<p>sub index</p>\n")
    return root


@pytest.fixture(params=MODES)
def mode(request):
    return request.param


@pytest.fixture
def srv(rivet, tls_certs, site):
    return start(rivet, tls_certs, root=site)


@pytest.fixture
def h2(srv, mode, tls_certs):
    with client(srv, mode, tls_certs) as c:
        yield c


def multipart(r, body: bytes):
    m = re.fullmatch(r"multipart/byteranges; boundary=(\S+)", r.headers["content-type"])
    assert m, r.headers
    pieces = body.split(b"\r\n--" + m.group(1).encode())
    assert pieces[0] == b"" and pieces[-1] == b"--\r\n", body[:200]
    parts = []
    for p in pieces[1:-1]:
        head, _, data = p[2:].partition(b"\r\n\r\n")
        fields = dict(line.split(": ", 1) for line in head.decode().split("\r\n"))
        parts.append((fields["Content-Range"], data))
    return parts


# ---- files, listings, validators ----

def test_files_index_redirect_and_listing(h2, site):
    r = is_h2(h2.get("/hello.txt"))
    assert r.status_code == 200 and r.content == b"hello static\n"
    assert r.headers["content-type"] == "text/plain; charset=utf-8"
    assert r.headers["accept-ranges"] == "bytes" and r.headers["etag"], r.headers
    assert r.headers["content-length"] == "13"
    r = is_h2(h2.get("/sub"))
    assert r.status_code == 301 and r.headers["location"] == "/sub/", r
    assert is_h2(h2.get("/sub/")).content == b"<p>sub index</p>\n"
    assert is_h2(h2.get("/missing.txt")).status_code == 404
    r = is_h2(h2.head("/100m.bin"))
    assert r.status_code == 200 and r.headers["content-length"] == str(100 << 20)
    assert r.content == b""
    r = is_h2(h2.get("/files/"))
    assert r.status_code == 200 and r.headers["content-type"] == "text/html; charset=utf-8"
    page = r.text
    assert 'href="./a.txt"' in page and "&lt;b&gt;.txt" in page and "<b>" not in page
    assert 'href="./caf%C3%A9.txt"' in page and ".hidden" not in page
    assert is_h2(h2.get("/files/caf%C3%A9.txt")).content == b"x"


def test_conditional_requests(h2):
    r = is_h2(h2.get("/hello.txt"))
    etag, lm = r.headers["etag"], r.headers["last-modified"]
    cases = [({"if-none-match": etag}, 304), ({"if-none-match": "W/" + etag}, 304),
             ({"if-none-match": '"nope"'}, 200), ({"if-modified-since": lm}, 304),
             ({"if-modified-since": "Thu, 01 Jan 1970 00:00:00 GMT"}, 200),
             ({"if-none-match": '"nope"', "if-modified-since": lm}, 200),
             ({"if-match": '"nope"'}, 412),
             ({"if-unmodified-since": "Thu, 01 Jan 1970 00:00:00 GMT"}, 412)]
    for headers, status in cases:
        r = is_h2(h2.get("/hello.txt", headers=headers))
        assert r.status_code == status, (headers, r)
        if status == 304:
            assert r.content == b"" and r.headers["etag"] == etag, r.headers
            assert "content-length" not in r.headers and r.headers["last-modified"] == lm
        if status == 200:
            assert r.content == b"hello static\n"
    big = is_h2(h2.head("/100m.bin")).headers["etag"]
    r = is_h2(h2.get("/100m.bin", headers={"if-none-match": big}))
    assert r.status_code == 304 and r.content == b""


# ---- ranges: 100 KiB and 100 MiB ----

@pytest.mark.parametrize("name", list(SIZES))
def test_single_ranges(h2, site, name):
    data = (site / name).read_bytes()
    n = len(data)
    cases = [("bytes=0-99", 0, 99), (f"bytes={n - 10}-", n - 10, n - 1),
             ("bytes=-10", n - 10, n - 1), (f"bytes=100-{n * 10}", 100, n - 1),
             ("bytes=0-0", 0, 0), (f"bytes={n // 4}-{n // 4 + 70000}", n // 4, n // 4 + 70000),
             ("bytes=0-9,10-19", 0, 19), (f"bytes=1000-{n - 1001}", 1000, n - 1001)]
    for spec, first, last in cases:
        r = is_h2(h2.get(f"/{name}", headers={"range": spec}))
        assert r.status_code == 206, (spec, r)
        assert r.headers["content-range"] == f"bytes {first}-{last}/{n}", (spec, r.headers)
        assert r.content == data[first:last + 1], spec
        assert int(r.headers["content-length"]) == last - first + 1
    for spec in (f"bytes={n}-", "bytes=-0"):
        r = is_h2(h2.get(f"/{name}", headers={"range": spec}))
        assert r.status_code == 416 and r.headers["content-range"] == f"bytes */{n}", spec


@pytest.mark.parametrize("name", list(SIZES))
def test_whole_file_and_multipart_ranges(srv, h2, site, name):
    data = (site / name).read_bytes()
    n = len(data)
    start_peak = peak_rss_bytes(srv.proc.pid)
    with h2.stream("GET", f"/{name}") as r:
        is_h2(r)
        got = hashlib.sha256()
        size = 0
        for piece in r.iter_raw():
            got.update(piece)
            size += len(piece)
    assert r.status_code == 200 and size == n
    assert got.hexdigest() == hashlib.sha256(data).hexdigest()
    if not SANITIZED:
        # Sent in frames as the client's window opens, read from the file piece by piece: a
        # server that read the 100 MiB file whole would grow by it (measured: 1 to 2 MiB).
        grew = peak_rss_bytes(srv.proc.pid) - start_peak
        assert grew < 24 << 20, f"peak RSS grew {grew >> 20} MiB sending a {n >> 20} MiB file"
    spec = f"bytes=0-9, {n // 3}-{n // 3 + 65535}, -5"
    r, body = raw_body(h2, "GET", f"/{name}", headers={"range": spec})
    assert r.status_code == 206 and int(r.headers["content-length"]) == len(body)
    assert multipart(r, body) == [
        (f"bytes 0-9/{n}", data[:10]),
        (f"bytes {n // 3}-{n // 3 + 65535}/{n}", data[n // 3:n // 3 + 65536]),
        (f"bytes {n - 5}-{n - 1}/{n}", data[-5:])]
    etag = r.headers["etag"]
    r = is_h2(h2.get(f"/{name}", headers={"range": "bytes=0-4", "if-range": etag}))
    assert r.status_code == 206 and r.content == data[:5]
    r, body = raw_body(h2, "GET", f"/{name}", headers={"range": "bytes=0-4",
                                                        "if-range": '"stale"'})
    assert r.status_code == 200 and len(body) == n


@pytest.mark.parametrize("name", list(SIZES))
def test_curl_ranges(srv, mode, tls_certs, site, name):
    data = (site / name).read_bytes()
    n = len(data)
    for spec, want in (("100-199", data[100:200]), ("-500", data[-500:]),
                       (f"{n - 70000}-", data[n - 70000:])):
        p, version = curl(srv, mode, tls_certs, f"/{name}", "--range", spec)
        assert p.returncode == 0 and version == "2", (spec, p.stderr, version)
        assert p.stdout == want, spec
    p, version = curl(srv, mode, tls_certs, f"/{name}", timeout=120)
    assert p.returncode == 0 and version == "2" and p.stdout == data


# ---- compression (the demo's middleware) and precompressed variants ----

@pytest.mark.parametrize("coding", list(DECODE))
def test_each_coding_decodes_to_the_identity_body(h2, site, coding):
    identity = (site / "page.html").read_bytes()
    plain, body = raw_body(h2, "GET", "/page.html")
    assert plain.status_code == 200 and body == identity
    assert "content-encoding" not in plain.headers
    r, body = raw_body(h2, "GET", "/page.html", headers={"accept-encoding": coding})
    assert r.status_code == 200 and r.headers["content-encoding"] == coding
    assert "accept-encoding" in r.headers["vary"].lower()
    assert int(r.headers["content-length"]) == len(body) < len(identity) // 3
    assert DECODE[coding](body) == identity
    assert r.headers["etag"] == "W/" + plain.headers["etag"]
    # A handler's JSON goes through the same middleware.
    doc = b'{"items": [' + b", ".join(b'{"id": %d, "name": "user%d"}' % (i, i)
                                       for i in range(300)) + b"]}"
    r, body = raw_body(h2, "POST", "/echo", content=doc,
                       headers={"content-type": "application/json", "accept-encoding": coding})
    assert r.headers["content-encoding"] == coding and DECODE[coding](body) == doc


def test_negotiation_and_what_is_not_compressed(h2, site):
    def coding(accept, target="/page.html", **headers):
        r, _ = raw_body(h2, "GET", target, headers={"accept-encoding": accept, **headers})
        return r.headers.get("content-encoding")

    assert coding("gzip, deflate, br, zstd") == "zstd"
    assert coding("gzip, deflate, br") == "br"
    assert coding("br;q=0.5, gzip") == "gzip"
    assert coding("gzip;q=0") is None and coding("identity") is None
    assert coding("gzip, br, zstd", "/small.txt") is None
    r, body = raw_body(h2, "GET", "/page.html", headers={"accept-encoding": "gzip, br, zstd",
                                                         "range": "bytes=100-1999"})
    assert r.status_code == 206 and "content-encoding" not in r.headers
    assert body == (site / "page.html").read_bytes()[100:2000]
    r, body = raw_body(h2, "GET", "/page.html", headers={"accept-encoding": "br"})
    again = is_h2(h2.get("/page.html", headers={"accept-encoding": "br",
                                                "if-none-match": r.headers["etag"]}))
    assert again.status_code == 304 and again.content == b""


def test_precompressed_variants(h2, site):
    js = (site / "app.js").read_bytes()
    for accept, suffix in (("gzip", ".gz"), ("gzip, deflate, br", ".br")):
        r, body = raw_body(h2, "GET", "/app.js", headers={"accept-encoding": accept})
        assert r.headers["content-encoding"] == accept.split(", ")[-1]
        assert body == (site / ("app.js" + suffix)).read_bytes()
        assert r.headers["content-type"] == "text/javascript; charset=utf-8"
    r, body = raw_body(h2, "GET", "/app.js", headers={"accept-encoding": "gzip",
                                                      "range": "bytes=0-1"})
    assert r.status_code == 206 and body == b"\x1f\x8b"
    r, body = raw_body(h2, "GET", "/app.js", headers={"accept-encoding": "zstd"})
    assert r.headers["content-encoding"] == "zstd" and DECODE["zstd"](body) == js


@pytest.mark.parametrize("coding", [None, "gzip", "br", "zstd"])
def test_curl_compressed(srv, mode, tls_certs, site, coding):
    args = ["--compressed", "-D", "-"] + (["-H", f"accept-encoding: {coding}"] if coding else [])
    p, version = curl(srv, mode, tls_certs, "/page.html", *args)
    assert p.returncode == 0 and version == "2", (p.stderr, version)
    head, _, body = p.stdout.partition(b"\r\n\r\n")
    assert body == (site / "page.html").read_bytes()
    encoding = [line.split(b":", 1)[1].strip() for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-encoding:")]
    assert encoding == [coding.encode() if coding else b"zstd"], head


def test_a_cached_file_behind_a_closed_window_is_sent_as_it_was(rivet, tmp_path):
    """A file the cache holds in memory (under 64 KiB) is answered from the cache's own bytes.
    Here the client's stream window (1 KiB) holds most of it back; meanwhile the file changes
    on disk and the cache takes the new bytes (the old entry leaves it). When the window opens,
    the first stream gets the old bytes whole, the new request the new ones (under ASan: no
    read of freed memory)."""
    root = tmp_path / "root"
    root.mkdir()
    old, new = random.Random(1).randbytes(48 << 10), random.Random(2).randbytes(40 << 10)
    (root / "page.bin").write_bytes(old)
    srv = rivet(args=("--threads", "1", "--workers", "1", "--root", str(root)))
    with h2c(srv, settings={SettingsFrame.INITIAL_WINDOW_SIZE: 1024}) as c:
        sid = c.request("/page.bin")
        c.wait_for(lambda f: isinstance(f, DataFrame) and f.stream_id == sid,
                   what="the first 1 KiB of the file")
        (root / "page.new").write_bytes(new)
        (root / "page.new").rename(root / "page.bin")
        # The cache trusts an entry for its TTL (1 s), then sees the new file: wait for it.
        deadline = time.monotonic() + 30 * SLOW
        while srv.get("/page.bin").body != new:
            assert time.monotonic() < deadline, "the cache never took the changed file"
            time.sleep(0.2)
        held = sum(len(f.data) for f in c.frames if isinstance(f, DataFrame) and f.stream_id == sid)
        assert held <= 1024, f"{held} bytes sent past a 1 KiB window"
        c.send_frames([WindowUpdateFrame(sid, window_increment=len(old))])
        headers, body = c.response(sid)
        assert headers[":status"] == "200" and body == old, (len(body), c.summary())
