"""Session resumption seen by Go's net/http client (tests/e2e/go, standard library only, built
here with `go build`): the second connection with a ClientSessionCache resumes, over TLS 1.3
and TLS 1.2, across I/O loops, and rivet_tls_handshakes_total{kind="resumed"} counts it."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from rivet_e2e import SLOW
from tls_e2e import metric_sum, start_tls, tls_metrics

GO = shutil.which("go")
GO_SRC = Path(__file__).parent / "go"

pytestmark = pytest.mark.skipif(GO is None, reason="go is not installed (scripts/setup.sh)")


@pytest.fixture(scope="module")
def tlsclient(tmp_path_factory):
    out = tmp_path_factory.mktemp("go") / "tlsclient"
    p = subprocess.run([GO, "build", "-o", str(out), "."], cwd=GO_SRC, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return out


def resumed_total(srv) -> float:
    return metric_sum(tls_metrics(srv), "rivet_tls_handshakes_total", kind="resumed")


@pytest.mark.parametrize("version", ["1.3", "1.2"])
def test_second_connection_resumes(rivet, tls_certs, tlsclient, version):
    srv = start_tls(rivet, tls_certs)
    before = resumed_total(srv)
    p = subprocess.run([str(tlsclient), "-url", f"https://localhost:{srv.tls_port}/hello",
                        "-ca", str(tls_certs.ca), "-max", version, "-n", "6"],
                       capture_output=True, text=True, timeout=60 * SLOW)
    assert p.returncode == 0, p.stderr
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    assert len(rows) == 6, p.stdout
    want = "TLS " + version
    for r in rows:
        assert r["status"] == 200 and r["body"] == "Hello, World!", r
        assert r["version"] == want and r["alpn"] == "http/1.1", r
    # Two I/O loops: the connections may land on either, and every one after the first resumes.
    assert rows[0]["resumed"] is False, rows
    assert all(r["resumed"] for r in rows[1:]), rows
    assert resumed_total(srv) >= before + 5


def test_no_resumption_without_a_cache(rivet, tls_certs, tlsclient):
    """The other side of the check above: without a client cache no handshake resumes."""
    srv = start_tls(rivet, tls_certs)
    before = resumed_total(srv)
    p = subprocess.run([str(tlsclient), "-url", f"https://localhost:{srv.tls_port}/hello",
                        "-ca", str(tls_certs.ca), "-n", "2", "-resume=false"],
                       capture_output=True, text=True, timeout=60 * SLOW)
    assert p.returncode == 0, p.stderr
    assert [json.loads(x)["resumed"] for x in p.stdout.splitlines()] == [False, False]
    assert resumed_total(srv) == before
