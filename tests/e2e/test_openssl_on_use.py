"""The server loads OpenSSL at its first call, not at start (src/server/openssl_on_use.cpp): a
server without TLS maps neither libssl nor libcrypto until a WebSocket handshake needs SHA-1,
one with TLS loads them while it reads its certificate. A libssl that cannot be loaded stops a
TLS server at start with a line saying why; a plain server goes on serving, answers 503 to what
needed it, and loads it at a later call once it can."""
import os
import re
import subprocess
import time

from rivet_e2e import BIN, SLOW
from test_tls_cli import make_cert
from ws_e2e import WsConn, new_key, upgrade_request


def openssl_mapped(pid: int) -> set[str]:
    """The OpenSSL libraries in the process's address space, by file name."""
    names = set()
    with open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            for lib in ("libssl.so", "libcrypto.so"):
                if lib in path.rsplit("/", 1)[-1]:
                    names.add(lib)
    return names


def test_a_server_without_tls_loads_openssl_at_its_first_websocket_handshake(rivet):
    server = rivet()
    assert server.get("/hello").status == 200
    assert openssl_mapped(server.proc.pid) == set(), "loaded before anything needed it"
    ws = WsConn(server.host, server.port)
    ws.open("/ws/echo")  # asserts the 101 and its SHA-1 accept key
    ws.send_text("after the load")
    assert ws.recv_message() == (1, b"after the load")
    ws.close()
    assert openssl_mapped(server.proc.pid) == {"libssl.so", "libcrypto.so"}


def test_a_server_with_tls_has_loaded_openssl_when_it_listens(rivet, tmp_path):
    cert, key = make_cert(tmp_path)
    server = rivet(["--tls-port", "0", "--tls-cert", cert, "--tls-key", key])
    assert openssl_mapped(server.proc.pid) == {"libssl.so", "libcrypto.so"}


def broken_libssl(tmp_path):
    """A directory for LD_LIBRARY_PATH whose libssl.so.3 is no ELF file: the dynamic linker
    looks there first, and dlopen fails as on a damaged installation."""
    broken = tmp_path / "lib"
    broken.mkdir()
    (broken / "libssl.so.3").write_bytes(b"not a shared object\n")
    return broken


def test_a_libssl_that_cannot_be_loaded_stops_a_tls_server_at_start(tmp_path):
    broken = broken_libssl(tmp_path)
    cert, key = make_cert(tmp_path)
    p = subprocess.run([str(BIN), "--port", "0", "--tls-port", "0", "--tls-cert", str(cert),
                        "--tls-key", str(key)], capture_output=True, text=True,
                       timeout=30 * SLOW, stdin=subprocess.DEVNULL,
                       env=dict(os.environ, LD_LIBRARY_PATH=str(broken)))
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert "cannot load OpenSSL (libssl.so.3): " in p.stderr, p.stderr
    assert str(broken / "libssl.so.3") in p.stderr, p.stderr
    assert "rivet: TLS: " in p.stderr, p.stderr
    assert "listening" not in p.stdout, p.stdout


def handshake(server) -> "Response":
    """An upgrade to /ws/echo on a new connection: the server's response (the 101's or the
    refusal's); the connection is closed."""
    ws = WsConn(server.host, server.port)
    try:
        ws.send(upgrade_request("/ws/echo", new_key()))
        return ws.read_response()
    finally:
        ws.close()


def test_a_plain_server_that_cannot_load_libssl_answers_503_and_loads_it_later(rivet, tmp_path):
    broken = broken_libssl(tmp_path)
    server = rivet(env={"LD_LIBRARY_PATH": broken})
    for _ in range(3):  # the first tries the load; those within a second after fail at once
        r = handshake(server)
        assert r.status == 503, r
        assert "the handshake's key cannot be computed now" in r.text, r.text
    assert server.get("/hello").status == 200
    assert server.alive()
    assert server.stderr().count("cannot load OpenSSL (libssl.so.3): ") == 1, server.stderr()

    # Mended (the broken file gone, the system's found): a handshake a second or more after the
    # last failed load loads it. Waited for by outcome, with a generous deadline.
    (broken / "libssl.so.3").unlink()
    deadline = time.monotonic() + 30 * SLOW
    while (r := handshake(server)).status == 503:
        assert time.monotonic() < deadline, "the load was never tried again"
        time.sleep(0.1)
    assert r.status == 101, r
    ws = WsConn(server.host, server.port)
    ws.open("/ws/echo")
    ws.send_text("loaded")
    assert ws.recv_message() == (1, b"loaded")
    ws.close()
    assert openssl_mapped(server.proc.pid) == {"libssl.so", "libcrypto.so"}
    assert re.search(r"OpenSSL loaded after [1-9]\d* failed attempts", server.stderr())
