"""Shared TLS session tickets (issue 24): rivets that read the same ticket key file resume each
other's sessions, TLS 1.2 and 1.3; rivets with different files do not; a rotated file read at
SIGHUP (new key first, old key second) seals with the new key and still opens the old tickets;
a bad file at start stops it, at SIGHUP keeps the keys in use. Sessions are carried by openssl
s_client -sess_out / -sess_in, and `Reused` is what it says."""
import os
import re
import signal
import subprocess
import uuid

import pytest

from ops_e2e import wait_for
from rivet_e2e import BIN, SLOW
from tls_e2e import s_client, start_tls

REQUEST = "GET /hello HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"


def key_file(path, *keys):
    path.write_bytes(b"".join(keys))
    path.chmod(0o600)
    return path


class Sessions:
    """s_client connections that save their session and may offer a saved one."""

    def __init__(self, tmp_path, version):
        self.dir = tmp_path
        self.version = version

    def connect(self, srv, offer=None):
        """(New|Reused, the session file this connection saved)."""
        saved = self.dir / f"{uuid.uuid4().hex}.pem"
        # Connection: close and -ign_eof: s_client stays until rivet closes, so a TLS 1.3 ticket
        # (sent after the handshake) is in the saved session.
        args = [self.version, "-servername", "localhost", "-ign_eof", "-sess_out", saved]
        if offer is not None:
            args += ["-sess_in", offer]
        rc, out = s_client(srv.tls_port, *args, stdin=REQUEST)
        assert "Hello, World!" in out, out
        m = re.search(r"^(New|Reused), TLSv1\.[23]", out, re.M)
        assert m, out
        return m[1], saved


@pytest.fixture(params=["-tls1_2", "-tls1_3"])
def sessions(request, tmp_path):
    return Sessions(tmp_path, request.param)


def test_same_key_file_resumes_on_another_instance(rivet, tls_certs, tmp_path, sessions):
    keys = key_file(tmp_path / "ticket.keys", os.urandom(80), os.urandom(80))
    one = start_tls(rivet, tls_certs, "--tls-ticket-key-file", keys)
    two = start_tls(rivet, tls_certs, "--tls-ticket-key-file", keys)
    outcome, session = sessions.connect(one)
    assert outcome == "New"
    assert sessions.connect(two, offer=session)[0] == "Reused"
    # And back: a session made on instance 2 resumes on instance 1.
    outcome, session = sessions.connect(two)
    assert outcome == "New"
    assert sessions.connect(one, offer=session)[0] == "Reused"


def test_different_key_files_do_not_resume(rivet, tls_certs, tmp_path, sessions):
    one = start_tls(rivet, tls_certs, "--tls-ticket-key-file",
                    key_file(tmp_path / "a.keys", os.urandom(80)))
    two = start_tls(rivet, tls_certs, "--tls-ticket-key-file",
                    key_file(tmp_path / "b.keys", os.urandom(80)))
    _, session = sessions.connect(one)
    assert sessions.connect(one, offer=session)[0] == "Reused"  # the session itself is good
    assert sessions.connect(two, offer=session)[0] == "New"


def test_without_a_key_file_instances_do_not_share(rivet, tls_certs, sessions):
    one = start_tls(rivet, tls_certs)
    two = start_tls(rivet, tls_certs)
    _, session = sessions.connect(one)
    assert sessions.connect(two, offer=session)[0] == "New"


def test_rotation_at_sighup_keeps_old_sessions(rivet, tls_certs, tmp_path, sessions):
    old_key, new_key = os.urandom(80), os.urandom(80)
    keys = key_file(tmp_path / "ticket.keys", old_key)
    srv = start_tls(rivet, tls_certs, "--tls-ticket-key-file", keys)
    # A witness that knows only the new key: it resumes what was sealed with the new key.
    witness = start_tls(rivet, tls_certs, "--tls-ticket-key-file",
                        key_file(tmp_path / "new-only.keys", new_key))
    _, old_session = sessions.connect(srv)
    assert sessions.connect(witness, offer=old_session)[0] == "New"

    key_file(keys, new_key, old_key)  # the new key first, the old one after it
    srv.send_signal(signal.SIGHUP)

    def sealed_with_new_key():
        _, fresh = sessions.connect(srv)
        return sessions.connect(witness, offer=fresh)[0] == "Reused"

    wait_for(sealed_with_new_key, 10, what="new tickets sealed with the rotated file's first key")
    assert sessions.connect(srv, offer=old_session)[0] == "Reused"  # old tickets still open
    assert "TLS reload failed" not in srv.stderr()

    # Dropping the old key: its tickets no longer resume.
    key_file(keys, new_key)
    srv.send_signal(signal.SIGHUP)
    wait_for(lambda: sessions.connect(srv, offer=old_session)[0] == "New", 10,
             what="the dropped key's tickets refused")


def test_bad_file_at_sighup_keeps_the_keys_in_use(rivet, tls_certs, tmp_path, sessions):
    keys = key_file(tmp_path / "ticket.keys", os.urandom(80))
    srv = start_tls(rivet, tls_certs, "--tls-ticket-key-file", keys)
    _, session = sessions.connect(srv)
    keys.write_bytes(os.urandom(79))  # not a whole key
    srv.send_signal(signal.SIGHUP)
    wait_for(lambda: "TLS reload failed" in srv.stderr(), 10, what="the reload failure line")
    line = next(x for x in srv.stderr().splitlines() if "TLS reload failed" in x)
    assert str(keys) in line and "79 bytes" in line, line
    assert sessions.connect(srv, offer=session)[0] == "Reused"


def start_fails(tls_certs, keys) -> str:
    """Starts rivet with `keys` and expects it to refuse; returns what it said."""
    p = subprocess.Popen([str(BIN), "--port", "0", "--bind", "127.0.0.1", "--tls-port", "0",
                          *tls_certs.server.args(), "--tls-ticket-key-file", str(keys)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         stdin=subprocess.DEVNULL)
    try:
        out, err = p.communicate(timeout=10 * SLOW)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        raise AssertionError(f"rivet started with the ticket key file {keys}:\n{out}\n{err}")
    assert p.returncode != 0, (out, err)
    return out + err


@pytest.mark.parametrize("size", [0, 79, 81, 48, 65 * 80])
def test_bad_file_stops_the_start(tls_certs, tmp_path, size):
    keys = tmp_path / "ticket.keys"
    keys.write_bytes(os.urandom(size))
    said = start_fails(tls_certs, keys)
    assert str(keys) in said and f"{size} bytes" in said, said
    missing = tmp_path / "missing.keys"
    assert str(missing) in start_fails(tls_certs, missing)
    # --check-config says the same without starting.
    p = subprocess.run([str(BIN), *tls_certs.server.args(), "--tls-ticket-key-file", str(keys),
                        "--check-config"], capture_output=True, text=True, timeout=10 * SLOW)
    assert p.returncode != 0 and f"{size} bytes" in p.stdout + p.stderr, p
