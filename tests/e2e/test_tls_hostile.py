"""Hostile clients on the TLS port: a handshake that stops half-way, 1,000 connections that never
send a byte, random bytes, a truncated ClientHello, plain HTTP, and a TLS exchange written one
byte at a time. Each time the server closes what it must, keeps serving the others, and lives."""
import os
import select
import socket
import ssl
import time

import pytest

from rivet_e2e import SLOW, Reader, build_request, exchange, raise_nofile
from tls_e2e import client_context, start_tls, tls_get, tls_metrics

HANDSHAKE_TIMEOUT = ("--handshake-timeout", "1")
SILENT = 1000


def failures(srv, reason: str) -> float:
    """Handshake failures counted under `reason` (the rivet_tls_*failure* family of /metrics)."""
    return sum(v for (name, labels), v in tls_metrics(srv).items()
               if "fail" in name and ("reason", reason) in labels and not name.endswith("_created"))


def client_hello(certs) -> bytes:
    """A real ClientHello (what a Python ssl client sends first)."""
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = client_context(certs).wrap_bio(inc, out, server_hostname="localhost")
    with pytest.raises(ssl.SSLWantReadError):
        obj.do_handshake()
    hello = out.read()
    assert hello[0] == 0x16 and len(hello) > 100, hello[:16]
    return hello


def raw(srv) -> socket.socket:
    s = socket.create_connection((srv.host, srv.tls_port), timeout=10 * SLOW)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def closed_within(sock: socket.socket, seconds: float) -> bool:
    """True once the peer closes (EOF or reset; an alert before it is fine) within `seconds`."""
    deadline = time.monotonic() + seconds * SLOW
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            if not sock.recv(4096):
                return True
        except ConnectionResetError:
            return True
        except socket.timeout:
            return False
    return False


def served(srv, certs) -> bool:
    r = tls_get(srv, certs, "/hello")
    return r.status == 200 and r.body == b"Hello, World!"


def test_half_a_client_hello_is_closed_by_the_handshake_timeout(rivet, tls_certs):
    srv = start_tls(rivet, tls_certs, *HANDSHAKE_TIMEOUT)
    hello = client_hello(tls_certs)
    with raw(srv) as s:
        s.sendall(hello[:len(hello) // 2])
        for _ in range(3):  # meanwhile others are served
            assert served(srv, tls_certs)
        assert closed_within(s, 10), "a stalled handshake outlived the handshake timeout"
    assert failures(srv, "timeout") >= 1
    assert served(srv, tls_certs)


def test_thousand_silent_connections_are_closed_while_others_are_served(rivet, tls_certs):
    raise_nofile(SILENT + 1000)
    srv = start_tls(rivet, tls_certs, *HANDSHAKE_TIMEOUT, nofile=SILENT + 2000)
    silent = []
    try:
        for _ in range(SILENT):
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex((srv.host, srv.tls_port))
            silent.append(s)
        open_ = {s.fileno(): s for s in silent}
        poller = select.poll()
        for fd in open_:
            poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        # A kernel that defers accepting until data arrives (TCP_DEFER_ACCEPT) hands these over
        # after a few seconds; then the 1 s handshake timeout closes them.
        deadline = time.monotonic() + 30 * SLOW
        requests = 0
        while open_ and time.monotonic() < deadline:
            assert served(srv, tls_certs)
            requests += 1
            for fd, _ in poller.poll(100):
                s = open_.pop(fd, None)
                if s is not None:
                    poller.unregister(fd)
                    try:
                        s.recv(1)
                    except OSError:
                        pass
        assert not open_, f"{len(open_)} of {SILENT} silent connections still open"
        assert requests > 0
    finally:
        for s in silent:
            s.close()
    assert failures(srv, "timeout") >= SILENT
    assert served(srv, tls_certs)


@pytest.mark.parametrize("first", [None, 0x16])
def test_random_bytes_are_closed(rivet, tls_certs, first):
    srv = start_tls(rivet, tls_certs)
    junk = bytearray(os.urandom(4096))
    if first is not None:
        junk[0] = first  # looks like a handshake record, then nonsense
    else:
        junk[0] = junk[0] & 0x0F  # neither a TLS record nor a letter: not plain HTTP either
    with raw(srv) as s:
        try:
            s.sendall(junk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert closed_within(s, 10)
    assert srv.alive() and served(srv, tls_certs)


def test_truncated_client_hello_then_close(rivet, tls_certs):
    srv = start_tls(rivet, tls_certs)
    hello = client_hello(tls_certs)
    for cut in (1, 5, 6, len(hello) // 2, len(hello) - 1):
        s = raw(srv)
        s.sendall(hello[:cut])
        s.close()
    with raw(srv) as s:  # and one that half-closes, waiting for an answer that cannot come
        s.sendall(hello[:len(hello) // 3])
        s.shutdown(socket.SHUT_WR)
        assert closed_within(s, 10)
    assert srv.alive() and served(srv, tls_certs)


def test_plain_http_to_the_tls_port_is_answered_400_and_closed(rivet, tls_certs):
    srv = start_tls(rivet, tls_certs)
    responses, closed, data = exchange(srv.host, srv.tls_port,
                                       build_request("GET", "/hello", headers={"Host": "x"}))
    assert closed, data
    assert len(responses) == 1 and responses[0].status == 400, data
    assert failures(srv, "plain_http") >= 1
    assert served(srv, tls_certs)


def test_tls_written_one_byte_at_a_time(rivet, tls_certs):
    """The handshake and the request as ciphertext from an ssl.SSLObject over memory BIOs,
    written to the socket one byte per send (TCP_NODELAY: one segment each)."""
    srv = start_tls(rivet, tls_certs)
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = client_context(tls_certs).wrap_bio(inc, out, server_hostname="localhost")
    with raw(srv) as s:
        def flush():
            for b in out.read():
                s.send(bytes([b]))

        def pull() -> bool:
            data = s.recv(65536)
            if not data:
                inc.write_eof()
                return False
            inc.write(data)
            return True

        while True:
            try:
                obj.do_handshake()
                break
            except ssl.SSLWantReadError:
                flush()
                assert pull(), "closed during the handshake"
        flush()
        obj.write(build_request("GET", "/hello") + build_request("GET", "/fibonacci?number=30"))
        flush()

        def recv():
            while True:
                try:
                    return obj.read(65536)
                except ssl.SSLWantReadError:
                    if not pull():
                        return b""
                except ssl.SSLZeroReturnError:
                    return b""

        reader = Reader(recv)
        a, b = reader.read_response(), reader.read_response()
    assert a.status == 200 and a.body == b"Hello, World!", a
    assert b.status == 200 and b.json()["number"] == 30, b
