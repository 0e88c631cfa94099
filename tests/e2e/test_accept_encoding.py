"""One Accept-Encoding negotiation (RFC 9110 §12.5.3) for the compressor and the precompressed
static files: for the same hostile field both choose the same coding (x-gzip, duplicated codings,
invalid q-values, "*", identity, case), and "Vary: Accept-Encoding" is on every answer whose
coding could have depended on the field: identity ones and 304s included."""
import gzip

import brotli
import pytest

from test_compression import DECODE, text_bytes, varies_on_accept_encoding

# Hostile and odd values; each must get the same coding from both paths.
HOSTILE = [
    "", "gzip", "br", "GZIP", "Br", "x-gzip", "X-Gzip;q=0.5, br;q=0.4",
    "gzip;q=0, x-gzip", "x-gzip;q=0, gzip", "gzip, gzip;q=0", "gzip;q=0, gzip",
    "br;q=0.1, br;q=1, gzip;q=0.5", "gzip;q=0.2, br;q=0.5, gzip;q=1",
    "gzip;q=2, br;q=0.1", "gzip;q=1.5", "br;q=1.001, gzip;q=0.1", "gzip;q=0.0001, br;q=0.001",
    "gzip;q=abc", "gzip;q=, br;q=0.2", "gzip;q", "gzip;q=-0", "gzip;q=.5, br;q=0.1",
    "gzip;q=0.5;q=1, br;q=0.1", "br;level=11", "br;level=11;q=0, gzip;q=0.1",
    "*", "*;q=0", "*;q=0, gzip", "*, br;q=0", "*;q=0.5, br;q=0.1, gzip;q=0.1",
    "*;q=bad, gzip;q=0.3", "identity", "identity;q=0", "identity;q=0, *;q=0",
    "gzip;q=0.5, identity", "IDENTITY;q=1, br;q=0.999", "identity;q=0.9, identity;q=0, br;q=0.5",
    "g zip, br;q=0.1", "\"br\", gzip;q=0.1", ";;;,,,", " , ,gzip , ", "\tbr\t",
    "deflate, compress", "gzip;q=1.000, br;q=0.999", "br;q=0.", "gzip;q=1., br;q=1",
    ", ".join(["gzip;q=0.5"] * 200) + ", br",
]


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    app_js = text_bytes(20_000, "js")                                  # from memory
    (root / "app.js").write_bytes(app_js)
    (root / "app.js.gz").write_bytes(gzip.compress(app_js, 9))
    (root / "app.js.br").write_bytes(brotli.compress(app_js))
    big = text_bytes(300_000, "big")                                   # sent with sendfile
    (root / "big.txt").write_bytes(big)
    (root / "big.txt.gz").write_bytes(gzip.compress(big, 9))
    (root / "photo.png").write_bytes(text_bytes(20_000, "png"))        # no variant, not compressed
    return root


@pytest.fixture
def srv(rivet, site):
    return rivet(args=("--threads", "1", "--workers", "1"), root=site)


def coding_of(r) -> str:
    return r.header("Content-Encoding") or "identity"


def decoded(r) -> bytes:
    coding = r.header("Content-Encoding")
    return DECODE[coding](r.body) if coding else r.body


@pytest.mark.parametrize("accept", HOSTILE)
def test_files_and_compressor_choose_the_same_coding(srv, site, accept):
    # The compressor also offers zstd, which the files have no variant of: a leading
    # "zstd;q=0" (its first element, which is the one that counts) takes it out of both offers.
    field = "zstd;q=0, " + accept
    file = srv.get("/app.js", headers={"Accept-Encoding": field})
    body = text_bytes(20_000, "echo")
    echo = srv.post("/echo", body, headers={"Content-Type": "text/plain",
                                            "Accept-Encoding": field})
    assert file.status == 200 and echo.status == 200
    assert coding_of(file) == coding_of(echo), (accept, coding_of(file), coding_of(echo))
    assert decoded(file) == (site / "app.js").read_bytes()
    assert decoded(echo) == body
    assert varies_on_accept_encoding(file) and varies_on_accept_encoding(echo), accept
    assert len(file.header_all("Vary")) == 1


def test_hostile_values_choose_what_rfc_9110_says(srv):
    def files(accept):
        return coding_of(srv.get("/app.js", headers={"Accept-Encoding": accept}))
    assert files("x-gzip") == "gzip"
    assert files("gzip;q=0, gzip") == "identity"      # the first element of a coding counts
    assert files("gzip;q=5, br;q=0.1") == "br"        # an invalid q: the element is not there
    assert files("gzip;q=abc") == "identity"          # ... not a q of 1
    # "*" gives identity 0.5, above the variants' 0.1 (zstd, which the compressor would take
    # from "*" for the identity file, refused).
    assert files("zstd;q=0, *;q=0.5, br;q=0.1, gzip;q=0.1") == "identity"
    assert files("gzip;q=0.9, br;q=0.8") == "gzip"    # q, not the server's order, first


def test_vary_on_every_answer_a_variant_could_have_changed(srv, site):
    for target in ("/app.js", "/big.txt"):
        for accept in (None, "identity", "gzip;q=0, br;q=0", "deflate"):
            headers = {} if accept is None else {"Accept-Encoding": accept}
            r = srv.get(target, headers=headers)
            assert r.status == 200 and coding_of(r) == "identity", (target, accept)
            assert r.body == (site / target[1:]).read_bytes()
            assert varies_on_accept_encoding(r), (target, accept)
            h = srv.request("HEAD", target, headers=headers)
            assert varies_on_accept_encoding(h), (target, accept, "HEAD")
            # A 304 says what its 200 would have said (RFC 9110 §15.4.5).
            again = srv.get(target, headers={**headers, "If-None-Match": r.header("ETag")})
            assert again.status == 304, (target, accept)
            assert varies_on_accept_encoding(again), (target, accept, "304")
        r = srv.get(target, headers={"Accept-Encoding": "gzip"})
        assert coding_of(r) == "gzip" and varies_on_accept_encoding(r)
        again = srv.get(target, headers={"Accept-Encoding": "gzip",
                                         "If-None-Match": r.header("ETag")})
        assert again.status == 304 and varies_on_accept_encoding(again)
    # Nothing could have changed a PNG with no variant: no Vary.
    r = srv.get("/photo.png", headers={"Accept-Encoding": "gzip, br, zstd"})
    assert coding_of(r) == "identity" and not varies_on_accept_encoding(r)
