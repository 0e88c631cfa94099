"""Issue 13's container pieces: `rivet --healthcheck URL` (a HEALTHCHECK without curl) and
`--user NAME` (bind ports as root, then serve as NAME)."""
import os
import pwd
import socket
import subprocess
import time

import pytest

from ops_e2e import free_port
from rivet_e2e import BIN, SLOW

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="privilege tests need root")


def healthcheck(url, *extra, timeout=10):
    return subprocess.run([str(BIN), "--healthcheck", url, *extra], capture_output=True,
                          text=True, timeout=timeout * SLOW, stdin=subprocess.DEVNULL)


# -- --healthcheck --

def test_healthcheck_healthz_is_0_and_404_is_1(server):
    url = f"http://127.0.0.1:{server.port}/healthz"
    p = healthcheck(url)
    assert p.returncode == 0, p
    assert f"healthcheck: {url}: 200" in p.stderr
    p = healthcheck(f"http://localhost:{server.port}/no-such-page")  # a name, resolved
    assert p.returncode == 1, p
    assert p.stderr.strip().endswith(": 404"), p.stderr


def test_healthcheck_without_admin_endpoints_is_1(rivet):
    srv = rivet(("--threads", "1", "--workers", "1", "--no-admin"))
    p = healthcheck(f"http://127.0.0.1:{srv.port}/healthz")
    assert p.returncode == 1, p


def test_healthcheck_ipv6_in_brackets(rivet):
    try:
        probe = socket.socket(socket.AF_INET6)
        probe.bind(("::1", 0))
        probe.close()
    except OSError:
        pytest.skip("no IPv6 loopback")
    # RivetServer listens on 127.0.0.1; a second one by hand on ::1.
    proc = subprocess.Popen([str(BIN), "--port", "0", "--bind", "::1", "--threads", "1",
                             "--workers", "1", "--drain-grace", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, stdin=subprocess.DEVNULL)
    try:
        line = proc.stdout.readline()
        port = int(line.rsplit(":", 1)[1].split()[0])
        p = healthcheck(f"http://[::1]:{port}/healthz")
        assert p.returncode == 0, (line, p)
    finally:
        proc.terminate()
        assert proc.wait(timeout=15 * SLOW) == 0


def test_healthcheck_closed_port_is_1():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    p = healthcheck(f"http://127.0.0.1:{port}/healthz")
    assert p.returncode == 1, p
    assert "refused" in p.stderr.lower(), p.stderr


@pytest.mark.parametrize("url", ["https://127.0.0.1:8443/healthz", "127.0.0.1:8080/healthz",
                                 "http://:8080/", "http://127.0.0.1:99999/", "http://[::1/",
                                 "http://127.0.0.1:80x/"])
def test_healthcheck_bad_url_is_2(url):
    p = healthcheck(url)
    assert p.returncode == 2, p
    assert "--healthcheck" in p.stderr and url in p.stderr, p.stderr


def test_healthcheck_missing_url_or_bad_timeout_is_2():
    p = subprocess.run([str(BIN), "--healthcheck"], capture_output=True, text=True, timeout=10)
    assert p.returncode == 2 and "usage" in p.stderr, p
    p = healthcheck("http://127.0.0.1:8080/", "--timeout-ms", "soon")
    assert p.returncode == 2 and "--timeout-ms" in p.stderr, p


def test_healthcheck_silent_server_times_out_with_1():
    """A server that accepts and never answers: exit 1 once --timeout-ms has passed."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    try:
        start = time.monotonic()
        p = healthcheck(f"http://127.0.0.1:{s.getsockname()[1]}/healthz", "--timeout-ms", "500")
        took = time.monotonic() - start
        assert p.returncode == 1, p
        assert "timed out" in p.stderr, p.stderr
        assert 0.4 <= took < 8 * SLOW, took  # the timeout, not the harness's 10 s
    finally:
        s.close()


def test_healthcheck_not_http_answer_is_1():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    port = s.getsockname()[1]
    proc = subprocess.Popen([str(BIN), "--healthcheck", f"http://127.0.0.1:{port}/"],
                            stderr=subprocess.PIPE, text=True)
    conn, _ = s.accept()
    conn.recv(4096)
    conn.sendall(b"SSH-2.0-OpenSSH\r\n")
    conn.close()
    s.close()
    assert proc.wait(timeout=10 * SLOW) == 1
    assert "malformed" in proc.stderr.read()


# -- --user --

def ids(pid):
    fields = {}
    for line in open(f"/proc/{pid}/status"):
        key, _, value = line.partition(":")
        if key in ("Uid", "Gid"):
            fields[key] = [int(v) for v in value.split()]
    return fields


@as_root
def test_user_nobody_serves_as_nobody(rivet):
    """The drop comes before the listening line: every thread is nobody once it is printed."""
    nobody = pwd.getpwnam("nobody")
    srv = rivet(("--threads", "2", "--workers", "2", "--user", "nobody"))
    assert ids(srv.proc.pid) == {"Uid": [nobody.pw_uid] * 4, "Gid": [nobody.pw_gid] * 4}
    # Every thread, not only the main one (glibc's setuid applies to all).
    for tid in os.listdir(f"/proc/{srv.proc.pid}/task"):
        assert ids(f"{srv.proc.pid}/task/{tid}")["Uid"] == [nobody.pw_uid] * 4, tid
    assert srv.get("/hello").status == 200
    assert "running as user nobody" in srv.stderr()
    assert "running as root" not in srv.stderr()


def first_answer(port: int, target: str, proc) -> bytes:
    """The answer to a request sent the moment the port takes connections, before the listening
    line: connection-refused (not bound yet) and a reset (rivet's port probe, closed at once) are
    retried until a deadline; the first request a loop can accept is this one."""
    request = f"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()
    deadline = time.monotonic() + 15 * SLOW
    while True:
        assert proc.poll() is None, "rivet exited"
        assert time.monotonic() < deadline, "the port never answered"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=10 * SLOW) as c:
                c.sendall(request)
                answer = b""
                while chunk := c.recv(65536):
                    answer += chunk
            if answer:
                return answer
        except (ConnectionRefusedError, ConnectionResetError, BrokenPipeError):
            time.sleep(0)  # let the server run: it is binding


@as_root
@pytest.mark.parametrize("how", ["--user", "server.user"])
def test_the_first_request_is_served_unprivileged(tmp_path, how):
    """A file only root may read: the very first request, sent before the listening line, gets
    403, not the file: no loop serves before the drop (issue 26, item 16)."""
    root = tmp_path / "www"
    root.mkdir()
    secret = root / "secret.txt"
    secret.write_text("root only")
    secret.chmod(0o600)
    port = free_port()
    args = [str(BIN), "--port", str(port), "--bind", "127.0.0.1", "--root", str(root),
            "--threads", "2", "--workers", "1", "--drain-grace", "0"]
    if how == "--user":
        args += ["--user", "nobody"]
    else:
        cfg = tmp_path / "rivet.json"
        cfg.write_text('{"server": {"user": "nobody"}}')
        args += ["--config", str(cfg)]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, cwd=tmp_path)
    try:
        answer = first_answer(port, "/secret.txt", proc)
        assert answer.startswith(b"HTTP/1.1 403"), answer[:200]
        line = proc.stdout.readline()
        assert "listening" in line, line
        assert ids(proc.pid)["Uid"] == [pwd.getpwnam("nobody").pw_uid] * 4
    finally:
        proc.terminate()
        assert proc.wait(timeout=15 * SLOW) == 0
    stderr = proc.stderr.read()
    assert "running as user nobody" in stderr, stderr


def test_unknown_user_is_2():
    p = subprocess.run([str(BIN), "--port", "0", "--user", "no-such-user"], capture_output=True,
                       text=True, timeout=10 * SLOW, stdin=subprocess.DEVNULL)
    assert p.returncode == 2, p
    assert "no-such-user" in p.stderr and "no such user" in p.stderr, p.stderr
    assert "listening" not in p.stdout


@as_root
def test_root_without_user_warns(server):
    assert "[warn] running as root" in server.stderr(), server.stderr()


@as_root
def test_user_when_not_root_is_2_unless_already_that_user(tmp_path):
    nobody = pwd.getpwnam("nobody")

    def as_nobody():
        os.setgid(nobody.pw_gid)
        os.setuid(nobody.pw_uid)

    p = subprocess.run([str(BIN), "--port", "0", "--bind", "127.0.0.1", "--user", "root"],
                       capture_output=True, text=True, timeout=10 * SLOW,
                       stdin=subprocess.DEVNULL, preexec_fn=as_nobody, cwd=tmp_path)
    assert p.returncode == 2, p
    assert "only root" in p.stderr, p.stderr
    # Already nobody: --user nobody is kept, and it serves.
    proc = subprocess.Popen([str(BIN), "--port", "0", "--bind", "127.0.0.1", "--threads", "1",
                             "--workers", "1", "--drain-grace", "0", "--user", "nobody"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
                            preexec_fn=as_nobody, cwd=tmp_path)
    try:
        line = proc.stdout.readline()
        assert "listening" in line, (line, proc.stderr)
        port = int(line.rsplit(":", 1)[1].split()[0])
        assert healthcheck(f"http://127.0.0.1:{port}/healthz").returncode == 0
    finally:
        proc.terminate()
        assert proc.wait(timeout=15 * SLOW) == 0
