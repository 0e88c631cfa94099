"""Helpers for the TLS end-to-end tests: starting rivet with a TLS listener, Python ssl clients
(Conn over an SSL socket, so the raw response reader works unchanged), curl and openssl s_client
on the command line, and the TLS counters of /metrics."""
from __future__ import annotations

import re
import shutil
import socket
import ssl
import subprocess

from rivet_e2e import SLOW, Conn, Reader

BASE_ARGS = ("--threads", "2", "--workers", "2")


def start_tls(rivet, certs, *extra, leaf=None, base=BASE_ARGS, **kw):
    """rivet with the default test certificate (or `leaf`) on an ephemeral TLS port."""
    leaf = leaf or certs.server
    return rivet(args=(*base, *leaf.args(), "--tls-port", "0", *extra), **kw)


def live_copy(tmp_path, leaf):
    """The leaf's files copied to names the server keeps (live.pem, live.key)."""
    cert, key = tmp_path / "live.pem", tmp_path / "live.key"
    shutil.copyfile(leaf.cert, cert)
    shutil.copyfile(leaf.key, key)
    return cert, key


def replace(path, data: bytes):
    """Atomically, as a deploy tool would (write beside, rename over)."""
    tmp = path.with_suffix(".new")
    tmp.write_bytes(data)
    tmp.rename(path)


def client_context(certs, min_version=None, max_version=None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(certs.ca))
    if min_version:
        ctx.minimum_version = min_version
    if max_version:
        ctx.maximum_version = max_version
    return ctx


class TlsConn(Conn):
    """A Conn whose socket is TLS (handshake done, certificate verified for server_hostname)."""

    def __init__(self, host: str, port: int, ctx: ssl.SSLContext, server_hostname="localhost",
                 timeout: float = 10.0):
        raw = socket.create_connection((host, port), timeout=timeout * SLOW)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = ctx.wrap_socket(raw, server_hostname=server_hostname)
        self.reader = Reader(lambda: self.sock.recv(1 << 16))

    def version(self) -> str:
        return self.sock.version()

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def tls_connect(srv, certs, server_hostname="localhost", timeout: float = 10.0,
                **ctx_kw) -> TlsConn:
    return TlsConn(srv.host, srv.tls_port, client_context(certs, **ctx_kw), server_hostname,
                   timeout)


def tls_get(srv, certs, target: str, **kw):
    from rivet_e2e import build_request
    with tls_connect(srv, certs) as c:
        c.send(build_request("GET", target, **kw))
        return c.read_response()


def curl(*args, timeout: float = 20.0) -> subprocess.CompletedProcess:
    return subprocess.run(["curl", "-sS", *map(str, args)], capture_output=True,
                          timeout=timeout * SLOW)


def s_client(port: int, *args, stdin: str = "", host: str = "127.0.0.1",
             timeout: float = 20.0) -> tuple[int, str]:
    """openssl s_client against host:port with the given options; (exit status, stdout+stderr).
    With empty stdin s_client ends after the handshake."""
    p = subprocess.run(["openssl", "s_client", "-connect", f"{host}:{port}", *map(str, args)],
                       input=stdin, capture_output=True, text=True, timeout=timeout * SLOW)
    return p.returncode, p.stdout + p.stderr


def handshake_ok(out: str) -> bool:
    """Whether s_client's output shows a negotiated session (a cipher other than (NONE))."""
    m = re.search(r"(?:New|Reused), (TLSv[\d.]+), Cipher is (\S+)", out)
    return bool(m) and m[2] != "(NONE)"


def tls_metrics(srv) -> dict:
    """rivet_tls_* samples of /metrics (plain port): {(name, frozenset(labels)): value}."""
    from prometheus_client import parser
    r = srv.get("/metrics")
    assert r.status == 200, r
    out = {}
    for fam in parser.text_string_to_metric_families(r.text):
        for s in fam.samples:
            if s.name.startswith("rivet_tls"):
                out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def metric_sum(samples: dict, name: str, **labels) -> float:
    """The sum of `name`'s samples whose labels include `labels`."""
    return sum(v for (n, ls), v in samples.items()
               if n == name and all((k, v2) in ls for k, v2 in labels.items()))
