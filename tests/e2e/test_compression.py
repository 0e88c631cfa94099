"""Response compression end to end (rivet::compression on the demo server's routes): the real
binary, decoded by curl --compressed and by Python's gzip, brotli and zstandard to the identity
body byte for byte; what must not be compressed (ranges, precompressed files, small bodies,
sendfile bodies, images) is not; Vary, ETag and HEAD as the GET; --no-compression."""
import gzip
import json
import shutil
import subprocess

import brotli
import pytest
import zstandard

from rivet_e2e import SLOW

CURL = shutil.which("curl")
DECODE = {
    "gzip": gzip.decompress,
    "br": brotli.decompress,
    "zstd": lambda b: zstandard.ZstdDecompressor().decompressobj().decompress(b),
}


def text_bytes(size: int, seed: str) -> bytes:
    """Text that compresses the way a page does: repeated words, varied numbers."""
    out = bytearray()
    i = 0
    while len(out) < size:
        out += f"<li class=\"{seed}\">item {i} of the list, value {i * 7919 % 1000}</li>\n".encode()
        i += 1
    return bytes(out[:size])


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "page.html").write_bytes(text_bytes(20_000, "page"))       # from memory
    (root / "small.txt").write_bytes(b"short and sweet\n" * 10)        # 160 B: below 1 KiB
    (root / "big.txt").write_bytes(text_bytes(300_000, "big"))         # sent with sendfile
    (root / "photo.png").write_bytes(text_bytes(20_000, "png"))        # image/png: never
    app_js = text_bytes(20_000, "js")
    (root / "app.js").write_bytes(app_js)
    (root / "app.js.gz").write_bytes(gzip.compress(app_js, 9))         # precompressed variants
    (root / "app.js.br").write_bytes(brotli.compress(app_js))
    return root


@pytest.fixture
def srv(rivet, site):
    return rivet(root=site)


def get(srv, target, accept=None, method="GET", extra=None):
    headers = dict(extra or {})
    if accept is not None:
        headers["Accept-Encoding"] = accept
    return srv.request(method, target, headers=headers)


def varies_on_accept_encoding(r) -> bool:
    return any("accept-encoding" in [t.strip().lower() for t in v.split(",")]
               for v in r.header_all("Vary"))


@pytest.mark.parametrize("coding", ["gzip", "br", "zstd"])
def test_each_coding_decodes_to_the_identity_body(srv, site, coding):
    identity = get(srv, "/page.html")
    assert identity.status == 200 and identity.header("Content-Encoding") is None
    assert identity.body == (site / "page.html").read_bytes()
    assert varies_on_accept_encoding(identity)  # caches must keep the variants apart

    r = get(srv, "/page.html", accept=coding)
    assert r.status == 200
    assert r.header("Content-Encoding") == coding
    assert varies_on_accept_encoding(r)
    assert int(r.header("Content-Length")) == len(r.body) < len(identity.body) // 3
    assert DECODE[coding](r.body) == identity.body
    # The strong validator of the identity body becomes weak on the encoded one.
    assert r.header("ETag") == "W/" + identity.header("ETag")
    assert r.header("Accept-Ranges") is None


def test_handler_json_is_compressed(srv):
    doc = {"items": [{"id": i, "name": f"user{i}", "active": i % 2 == 0} for i in range(300)]}
    body = json.dumps(doc).encode()
    plain = srv.post("/echo", body, headers={"Content-Type": "application/json"})
    assert plain.body == body and plain.header("Content-Encoding") is None
    for coding in DECODE:
        r = srv.post("/echo", body, headers={"Content-Type": "application/json",
                                             "Accept-Encoding": coding})
        assert r.header("Content-Encoding") == coding
        assert json.loads(DECODE[coding](r.body)) == doc


def test_negotiation_on_the_wire(srv):
    # Browsers' lists: zstd first among equals, then br.
    assert get(srv, "/page.html", "gzip, deflate, br, zstd").header("Content-Encoding") == "zstd"
    assert get(srv, "/page.html", "gzip, deflate, br").header("Content-Encoding") == "br"
    assert get(srv, "/page.html", "br;q=0.5, gzip").header("Content-Encoding") == "gzip"
    assert get(srv, "/page.html", "*;q=0.1, zstd;q=0").header("Content-Encoding") == "br"
    for refused in ("gzip;q=0", "identity", "deflate", "*;q=0", ""):
        r = get(srv, "/page.html", refused)
        assert r.status == 200 and r.header("Content-Encoding") is None, refused
        assert len(r.body) == 20_000


@pytest.mark.skipif(CURL is None, reason="curl not installed")
@pytest.mark.parametrize("coding", [None, "gzip", "br", "zstd"])
def test_curl_compressed(srv, site, coding):
    """curl --compressed (its own Accept-Encoding, or one coding) decodes to the file's bytes."""
    url = f"http://{srv.host}:{srv.port}/page.html"
    args = [CURL, "-sS", "--compressed", "-D", "-", "-o", "-", url]
    if coding:
        args[1:1] = ["-H", f"Accept-Encoding: {coding}"]
    out = subprocess.run(args, capture_output=True, timeout=20 * SLOW, check=True).stdout
    head, _, body = out.partition(b"\r\n\r\n")
    assert body == (site / "page.html").read_bytes()
    encoding = [line.split(b":", 1)[1].strip() for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-encoding:")]
    assert encoding == [coding.encode() if coding else b"zstd"]


def test_range_request_is_not_compressed(srv, site):
    r = get(srv, "/page.html", "gzip, br, zstd", extra={"Range": "bytes=100-1999"})
    assert r.status == 206
    assert r.header("Content-Encoding") is None
    assert r.body == (site / "page.html").read_bytes()[100:2000]
    # If-Range with the weak ETag of a compressed answer never matches: the whole body, as 200.
    weak = get(srv, "/page.html", "gzip").header("ETag")
    r = get(srv, "/page.html", None, extra={"Range": "bytes=0-9", "If-Range": weak})
    assert r.status == 200 and len(r.body) == 20_000


def test_precompressed_file_is_not_compressed_twice(srv, site):
    for coding, suffix in (("gzip", ".gz"), ("br", ".br")):
        r = get(srv, "/app.js", coding)
        assert r.header("Content-Encoding") == coding
        assert r.body == (site / ("app.js" + suffix)).read_bytes()
        assert r.header_all("Content-Encoding") == [coding]
    # zstd has no precompressed variant here: the identity file compressed on the fly.
    r = get(srv, "/app.js", "zstd")
    assert r.header("Content-Encoding") == "zstd"
    assert DECODE["zstd"](r.body) == (site / "app.js").read_bytes()
    assert len(r.header_all("Vary")) == 1


def test_small_image_and_sendfile_bodies_are_sent_as_they_are(srv, site):
    for name in ("small.txt", "photo.png", "big.txt"):
        r = get(srv, f"/{name}", "gzip, br, zstd")
        assert r.status == 200, name
        assert r.header("Content-Encoding") is None, name
        assert r.body == (site / name).read_bytes(), name
    assert get(srv, "/hello", "gzip").body == b"Hello, World!"  # a handler's 13 bytes


def test_head_gets_the_fields_of_get(srv):
    for coding in ("gzip", "br", "zstd", None):
        g = get(srv, "/page.html", coding)
        h = get(srv, "/page.html", coding, method="HEAD")
        assert h.body == b""
        drop = {"date"}
        assert [(k, v) for k, v in h.headers if k.lower() not in drop] == \
            [(k, v) for k, v in g.headers if k.lower() not in drop], coding


def test_weak_etag_revalidates(srv):
    r = get(srv, "/page.html", "br")
    etag = r.header("ETag")
    assert etag.startswith("W/")
    again = get(srv, "/page.html", "br", extra={"If-None-Match": etag})
    assert again.status == 304 and again.body == b""


def test_odd_accept_encoding_values_are_harmless(srv):
    for value in ("gzip;q=", "gzip;q=abc", ";;;,,,", "*;q=0, identity;q=0", "x" * 4000,
                  ", ".join(["gzip;q=0.5"] * 500), "GZIP", "x-gzip", "\tbr\t"):
        r = get(srv, "/page.html", value)
        assert r.status == 200, value
        coding = r.header("Content-Encoding")
        body = DECODE[coding](r.body) if coding else r.body
        assert len(body) == 20_000, value


def test_no_compression_flag(rivet, site):
    srv = rivet(args=("--threads", "1", "--workers", "1", "--no-compression"), root=site)
    r = get(srv, "/page.html", "gzip, br, zstd")
    assert r.header("Content-Encoding") is None
    assert not varies_on_accept_encoding(r)
    assert r.body == (site / "page.html").read_bytes()


def test_config_key_turns_it_off(rivet, site, tmp_path):
    cfg = tmp_path / "rivet.json"
    cfg.write_text(json.dumps({"compression": {"enabled": False}}))
    srv = rivet(args=("--threads", "1", "--workers", "1", "--config", str(cfg)), root=site)
    assert get(srv, "/page.html", "gzip").header("Content-Encoding") is None
