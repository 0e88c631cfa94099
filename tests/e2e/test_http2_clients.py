"""Real HTTP/2 clients against rivet: curl (--http2 over TLS, --http2-prior-knowledge over h2c),
nghttp, Go's net/http over TLS (tests/e2e/go with -h2), Python httpx with h2, h2load (every
request 2xx) and headless Chromium loading the demo page over https. Each checks that HTTP/2
is what was spoken, not only that an answer came."""
import json
import re
import shutil
import ssl
import subprocess
import time

import pytest

from h2_frames import MAX_CONCURRENT_STREAMS, STREAM_WINDOW
from rivet_e2e import SLOW
from tls_e2e import curl, start_tls

GO = shutil.which("go")
NGHTTP = shutil.which("nghttp")
H2LOAD = shutil.which("h2load")
HELLO = "Hello, World!"


@pytest.fixture
def srv(rivet, tls_certs):
    return start_tls(rivet, tls_certs)


def url(srv, path="/hello", tls=True) -> str:
    return (f"https://localhost:{srv.tls_port}{path}" if tls
            else f"http://127.0.0.1:{srv.port}{path}")


# -- curl --


def test_curl_http2_over_tls(srv, tls_certs):
    p = curl("--http2", "--cacert", tls_certs.ca, "-w", "\n%{http_version} %{response_code}",
             url(srv))
    assert p.returncode == 0, p.stderr
    body, _, tail = p.stdout.decode().rpartition("\n")
    assert body == HELLO and tail == "2 200", p.stdout


def test_curl_prior_knowledge_h2c(srv):
    p = curl("--http2-prior-knowledge", "-w", "\n%{http_version} %{response_code}",
             url(srv, tls=False))
    assert p.returncode == 0, p.stderr
    body, _, tail = p.stdout.decode().rpartition("\n")
    assert body == HELLO and tail == "2 200", p.stdout


def test_curl_http2_many_requests_one_connection(srv, tls_certs):
    """Ten URLs in one curl run share one h2 connection (curl reuses it)."""
    urls = [url(srv, f"/echo?i={i}") for i in range(10)]
    args = []
    for u in urls:
        args += ["-o", "/dev/null", u]
    p = curl("--http2", "--cacert", tls_certs.ca, "-w", "%{http_version} %{num_connects}\n",
             *args)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.decode().split()
    assert lines[0::2] == ["2"] * 10, p.stdout
    assert sum(int(n) for n in lines[1::2]) == 1, f"more than one connection: {p.stdout}"


# -- nghttp --


@pytest.mark.skipif(NGHTTP is None, reason="nghttp is not installed (scripts/setup.sh)")
@pytest.mark.parametrize("tls", [True, False], ids=["tls", "h2c"])
def test_nghttp(srv, tls):
    p = subprocess.run([NGHTTP, "-nv", url(srv, tls=tls)], capture_output=True, text=True,
                       timeout=30 * SLOW)
    assert p.returncode == 0, p.stdout + p.stderr
    out = p.stdout
    if tls:
        assert "The negotiated protocol: h2" in out, out
    assert re.search(r"recv \(stream_id=\d+\) :status: 200", out), out
    assert "recv SETTINGS frame" in out and "recv DATA frame" in out, out
    # The SETTINGS of the contract.
    assert f"[SETTINGS_MAX_CONCURRENT_STREAMS(0x03):{MAX_CONCURRENT_STREAMS}]" in out, out
    assert f"[SETTINGS_INITIAL_WINDOW_SIZE(0x04):{STREAM_WINDOW}]" in out, out


# -- Go net/http --


@pytest.fixture(scope="module")
def go_client(tmp_path_factory):
    if GO is None:
        pytest.skip("go is not installed (scripts/setup.sh)")
    out = tmp_path_factory.mktemp("go") / "tlsclient"
    from pathlib import Path
    p = subprocess.run([GO, "build", "-o", str(out), "."], cwd=Path(__file__).parent / "go",
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return out


def test_go_net_http_over_tls(srv, tls_certs, go_client):
    p = subprocess.run([str(go_client), "-url", url(srv), "-ca", str(tls_certs.ca), "-h2",
                        "-n", "3"], capture_output=True, text=True, timeout=60 * SLOW)
    assert p.returncode == 0, p.stderr
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    assert len(rows) == 3, p.stdout
    for r in rows:
        assert r["status"] == 200 and r["body"] == HELLO, r
        assert r["alpn"] == "h2" and r["proto"] == "HTTP/2.0", r


# -- httpx --


@pytest.mark.parametrize("tls", [True, False], ids=["tls", "h2c"])
def test_httpx_http2(srv, tls_certs, tls):
    httpx = pytest.importorskip("httpx")
    pytest.importorskip("h2")
    kw = ({"verify": ssl.create_default_context(cafile=str(tls_certs.ca))} if tls
          else {"http1": False})  # h2c: prior knowledge
    with httpx.Client(http2=True, timeout=20 * SLOW, **kw) as client:
        rs = [client.get(url(srv, f"/echo?n={i}", tls=tls)) for i in range(5)]
        post = client.post(url(srv, "/echo", tls=tls), content=b"x" * 100_000)
    for r in rs:
        assert r.status_code == 200 and r.http_version == "HTTP/2", r
    assert post.status_code == 200 and post.http_version == "HTTP/2"
    assert post.content == b"x" * 100_000


# -- h2load --


@pytest.mark.skipif(H2LOAD is None, reason="h2load is not installed (scripts/setup.sh)")
@pytest.mark.parametrize("tls", [True, False], ids=["tls", "h2c"])
def test_h2load(srv, tls):
    n = 2000
    p = subprocess.run([H2LOAD, "-n", str(n), "-c", "4", "-m", "10", url(srv, tls=tls)],
                       capture_output=True, text=True, timeout=120 * SLOW)
    out = p.stdout
    assert p.returncode == 0, out + p.stderr
    if tls:
        assert "Application protocol: h2" in out, out
    m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
                  r"(\d+) failed, (\d+) errored", out)
    assert m and [int(x) for x in m.groups()] == [n, n, n, n, 0, 0], out
    codes = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", out)
    assert codes and int(codes[1]) == n, out


# -- Chromium --


@pytest.mark.skipif(shutil.which("chromium") is None,
                    reason="chromium is not installed (scripts/setup.sh)")
def test_chromium_loads_the_demo_page_over_h2(srv, tmp_path):
    """The demo page and its resources as Chromium fetched them: DevTools'
    Network.responseReceived says protocol h2 for each, and so does the page's own Resource
    Timing (nextHopProtocol)."""
    from chromium import DevToolsPage
    try:
        page = DevToolsPage(tmp_path / "profile", "--ignore-certificate-errors")
    except RuntimeError as e:
        pytest.skip(f"chromium did not start: {e}")
    with page:
        page.command("Network.enable")
        page.navigate(url(srv, "/"))
        page.wait_for("document.readyState === 'complete' && document.title.includes('rivet')")
        nav = page.evaluate("performance.getEntriesByType('navigation')[0].nextHopProtocol")
        assert nav == "h2", nav
        resources = page.evaluate("performance.getEntriesByType('resource')"
                                  ".map(e => [e.name, e.nextHopProtocol])")
        assert resources, "the page loaded no resources"
        assert all(proto == "h2" for _, proto in resources), resources

        def received():
            return {e["params"]["response"]["url"]: e["params"]["response"].get("protocol")
                    for e in page.events if e["method"] == "Network.responseReceived"}
        # The events come on the DevTools socket beside the replies: read until the document's.
        deadline = time.monotonic() + 20 * SLOW
        while url(srv, "/") not in received() and time.monotonic() < deadline:
            page.evaluate("0")
        got = received()
        assert got.get(url(srv, "/")) == "h2", got
        assert all(proto == "h2" for u, proto in got.items() if u.startswith("https://")), got
