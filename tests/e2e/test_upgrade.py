"""In-place upgrade (SIGUSR2, `rivet --upgrade`) and systemd socket activation, on the real binary.

The new process is the old one's child, not ours: it is found through the pid file, watched
through /proc, and stopped by pid at the end (its stderr goes to the same file as the old one's).
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from nginx_e2e import NGINX, start_nginx, stop_nginx
from rivet_e2e import (BIN, PUBLIC, SANITIZED, SLOW, SANITIZER_RE, WRK, RivetServer,
                       WrkUntilStopped, no_drain_grace_unless_set)

HELLO = b"GET /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"


# ---------------------------------------------------------------------------------------------
# Processes that are not our children


def running(pid: int) -> bool:
    """Alive and not a zombie (an orphan may wait a while to be reaped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def wait_until(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout * SLOW
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.01)
    raise AssertionError(f"timed out after {timeout * SLOW:.0f}s waiting for {what}")


def read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None


def stop_pid(pid: int, timeout: float = 15.0) -> None:
    if running(pid):
        os.kill(pid, signal.SIGTERM)
        wait_until(lambda: not running(pid), timeout, f"pid {pid} to exit")


def hello(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10 * SLOW) as s:
        s.sendall(HELLO)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return data


class Upgraded:
    """A rivet started with a pid file; follows it across upgrades and stops what is left."""

    def __init__(self, tmp_path: Path, args=(), program: Path | None = None):
        self.pid_file = tmp_path / "rivet.pid"
        cmd = [str(program or BIN), "--port", "0", "--bind", "127.0.0.1", "--root", str(PUBLIC),
               "--pid-file", str(self.pid_file), *no_drain_grace_unless_set(map(str, args))]
        self.server = RivetServer(tmp_path / "run", command=cmd).start()
        self.first = self.server.proc.pid
        wait_until(lambda: read_pid(self.pid_file) == self.first, 10, "the pid file")

    @property
    def port(self) -> int:
        return self.server.port

    def stderr(self) -> str:
        return self.server.stderr()

    def wait_for_new_pid(self, old: int) -> int:
        return wait_until(lambda: (p := read_pid(self.pid_file)) not in (None, old) and p,
                          15, "a new pid in the pid file")

    def finish(self) -> None:
        """Stops whoever serves now; the pid file goes with it; no sanitizer report."""
        pid = read_pid(self.pid_file)
        if pid and pid != self.first:
            stop_pid(pid)
        if self.server.alive():
            assert self.server.stop(signal.SIGTERM) == 0, self.stderr()[-3000:]
        wait_until(lambda: not self.pid_file.exists(), 5, "the pid file to be removed")
        assert not SANITIZER_RE.search(self.stderr()), self.stderr()[-8000:]


@pytest.fixture
def upgraded(tmp_path):
    started = []

    def start(args=("--threads", "2", "--workers", "1"), program=None):
        u = Upgraded(tmp_path / f"u{len(started)}", args, program)
        started.append(u)
        return u

    yield start
    for u in started:
        u.finish()


class Hammer(threading.Thread):
    """Connection per request in a tight loop: counts answers, refusals and other failures."""

    def __init__(self, port: int):
        super().__init__(daemon=True)
        self.port = port
        self.stop = threading.Event()
        self.ok = self.refused = 0
        self.failed: list[str] = []

    def run(self):
        while not self.stop.is_set():
            try:
                data = hello(self.port)
                if data.startswith(b"HTTP/1.1 200") and data.endswith(b"Hello, World!"):
                    self.ok += 1
                else:
                    self.failed.append(repr(data[:80]))
            except ConnectionRefusedError:
                self.refused += 1
            except OSError as e:
                self.failed.append(repr(e))

    def finish(self):
        self.stop.set()
        self.join(30)


def rivet_upgrade(*args, timeout_ms: int = 20_000):
    p = subprocess.run([str(BIN), "--upgrade", *map(str, args), "--timeout-ms",
                        str(int(timeout_ms * SLOW))], capture_output=True, text=True,
                       timeout=60 * SLOW)
    return p.returncode, p.stdout + p.stderr


# ---------------------------------------------------------------------------------------------
# SIGUSR2


def test_usr2_hands_the_port_to_a_new_process_without_refusing_a_connection(upgraded):
    u = upgraded()
    hammers = [Hammer(u.port) for _ in range(3)]
    for h in hammers:
        h.start()
    wait_until(lambda: all(h.ok >= 50 for h in hammers), 10, "requests before the upgrade")
    u.server.send_signal(signal.SIGUSR2)
    new = u.wait_for_new_pid(u.first)
    assert u.server.wait(15 * SLOW) == 0  # the old one drained and exited
    before = [h.ok for h in hammers]
    wait_until(lambda: all(h.ok >= b + 50 for h, b in zip(hammers, before)), 10,
               "requests after the upgrade")
    for h in hammers:
        h.finish()
        assert h.refused == 0 and h.failed == [], (h.refused, h.failed[:5])
    assert running(new) and hello(u.port).endswith(b"Hello, World!")
    err = u.stderr()
    assert f"upgrade: the new process (pid {new}) is serving; pid {u.first} drains" in err
    # The new process serves the same sockets: it bound nothing (a second bind would fail
    # claim_port) and says so on the same port.
    assert u.server.stdout().count(f"127.0.0.1:{u.port} (2 threads") == 2


@pytest.mark.parametrize("started_as", ["absolute", "relative", "PATH"])
def test_usr2_runs_the_file_a_repointed_symlink_names(upgraded, tmp_path, monkeypatch,
                                                      started_as):
    """A symlink-swap install (/usr/local/bin/rivet -> /opt/rivet-1.2/rivet, repointed to 1.3):
    the upgrade runs what the path the process was started from names now, however the shell
    found that path (rivet runs in tmp_path/u0/run)."""
    first, second = copied_binary(tmp_path, "1.2"), copied_binary(tmp_path, "1.3")
    link = tmp_path / "bin" / "rivet"
    link.parent.mkdir()
    link.symlink_to(first)
    # RivetServer looks for the program from here, rivet is started from its own directory.
    workdir = tmp_path / "u0" / "run"
    workdir.mkdir(parents=True)
    if started_as == "relative":
        monkeypatch.chdir(workdir)
    if started_as == "PATH":
        monkeypatch.setenv("PATH", f"{link.parent}:{os.environ['PATH']}")
        monkeypatch.chdir(link.parent)
    program = {"absolute": link, "relative": Path("../../bin/rivet"), "PATH": "rivet"}[started_as]
    u = upgraded(program=program)
    assert os.readlink(f"/proc/{u.first}/exe") == str(first)
    temp = tmp_path / "rivet.new"
    temp.symlink_to(second)
    os.replace(temp, link)
    u.server.send_signal(signal.SIGUSR2)
    new = u.wait_for_new_pid(u.first)
    assert os.readlink(f"/proc/{new}/exe") == str(second)
    named = f"{workdir}/{program}" if started_as == "relative" else link  # not resolved
    # Logged once fork() has returned in the old process, which may be after the new one wrote
    # its pid file: waited for, not read at once.
    wait_until(lambda: f"upgrade: started {named} as pid {new}" in u.stderr(), 20,
               "the line naming the new process")
    assert u.server.wait(15 * SLOW) == 0


def test_upgrade_under_keepalive_and_per_request_load_loses_nothing(upgraded):
    """The old process answers with Connection: close during its lame-duck period, so a
    keep-alive client never sends a request onto a connection being closed."""
    if WRK is None:
        pytest.skip("wrk is not installed (scripts/setup.sh)")
    if SANITIZED:
        pytest.skip("a load test: release builds only")
    u = upgraded(("--threads", "2", "--workers", "1", "--drain-grace", "1"))
    hammers = [Hammer(u.port) for _ in range(2)]
    for h in hammers:
        h.start()
    # Health checks during the change: the old process hands over (stops accepting) rather
    # than failing /healthz for its grace, so a prober never sees the instance as down.
    health = {"ok": 0, "other": []}
    probing = threading.Event()

    def probe():
        while not probing.is_set():
            with socket.create_connection(("127.0.0.1", u.port), timeout=10 * SLOW) as s:
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
                data = b""
                while chunk := s.recv(65536):
                    data += chunk
            if data.startswith(b"HTTP/1.1 200"):
                health["ok"] += 1
            else:
                health["other"].append(data[:40])
            time.sleep(0.005)

    prober = threading.Thread(target=probe, daemon=True)
    prober.start()
    # The whole upgrade happens under load: wrk runs until it is stopped, after the old process
    # has exited.
    with WrkUntilStopped(f"http://127.0.0.1:{u.port}/hello", 16, threads=2) as load:
        time.sleep(1)
        u.server.send_signal(signal.SIGUSR2)
        u.wait_for_new_pid(u.first)
        assert u.server.wait(15) == 0
        _, _, _, out = load.stop()
    for h in hammers:
        h.finish()
    probing.set()
    prober.join(30)
    assert health["other"] == [] and health["ok"] > 50, health
    assert "handed over: open connections get 1000 ms" in u.stderr()
    assert "Socket errors" not in out and "Non-2xx" not in out, out
    requests = int(out.split(" requests in")[0].split()[-1])
    assert requests > 1000, out
    for h in hammers:
        assert h.refused == 0 and h.failed == [] and h.ok > 50, (h.ok, h.refused, h.failed[:5])


NGINX_HTTP = """\
    access_log off;
    upstream rivets {{
{servers}
        keepalive 16;
    }}
    server {{
        listen 127.0.0.1:{front};
        location / {{
            proxy_pass http://rivets;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_next_upstream off;
        }}
    }}
"""


def test_three_rivets_behind_nginx_upgraded_in_turn_lose_nothing(upgraded, tmp_path):
    """nginx without retries (proxy_next_upstream off) and with a keep-alive upstream pool: any
    reset, refused connection or connection closed under a request is a 502 to the client.
    Open-source nginx has no active health checks, so a stop/start restart refuses connections
    whatever the server does; the in-place upgrade never closes the port, and the lame duck
    ends each pooled connection after an answer that says so."""
    if NGINX is None:
        pytest.skip("nginx is not installed (scripts/setup.sh)")
    if WRK is None:
        pytest.skip("wrk is not installed (scripts/setup.sh)")
    if SANITIZED:
        pytest.skip("a load test: release builds only")
    rivets = [upgraded(("--threads", "1", "--workers", "1", "--drain-grace", "1"))
              for _ in range(3)]
    front = free_port()
    prefix = tmp_path / "nginx"
    servers = "\n".join(f"        server 127.0.0.1:{u.port};" for u in rivets)
    nginx = start_nginx(prefix, NGINX_HTTP.format(front=front, servers=servers), front)
    try:
        wait_until(lambda: hello_or_none(front), 10, "nginx to answer through the rivets")
        # Every change happens under load: wrk runs until it is stopped, after the last.
        with WrkUntilStopped(f"http://127.0.0.1:{front}/hello", 32) as load:
            time.sleep(1)
            for u in rivets:
                u.server.send_signal(signal.SIGUSR2)
                u.wait_for_new_pid(u.first)
                assert u.server.wait(15) == 0, u.stderr()[-3000:]
            _, _, _, out = load.stop()
        assert "Socket errors" not in out and "Non-2xx" not in out, out
        requests = int(out.split(" requests in")[0].split()[-1])
        assert requests > 1000, out
        log = (prefix / "error.log").read_text()
        assert "upstream" not in log, log[-3000:]  # no "prematurely closed", no refused connect
        for u in rivets:
            assert hello(u.port).endswith(b"Hello, World!")  # the new processes serve
    finally:
        stop_nginx(nginx)


def hello_or_none(port: int) -> bytes | None:
    try:
        data = hello(port)
    except OSError:
        return None
    return data if data.startswith(b"HTTP/1.1 200") else None


def replace_file(path: Path, text: str | None = None, source: Path | None = None) -> None:
    """Installs a new file at `path` by a rename, as a package manager does (a running binary
    cannot be written in place)."""
    temp = path.with_suffix(".new")
    if source:
        shutil.copy2(source, temp)
    else:
        temp.write_text(text)
    temp.chmod(0o755)
    os.replace(temp, path)


def test_failed_new_process_leaves_the_old_one_serving(upgraded, tmp_path):
    program = tmp_path / "bin" / "rivet"
    program.parent.mkdir()
    shutil.copy2(BIN, program)
    u = upgraded(program=program)
    replace_file(program, "#!/bin/sh\necho 'broken build' >&2\nexit 3\n")
    hammer = Hammer(u.port)
    hammer.start()
    code, out = rivet_upgrade("--pid-file", u.pid_file)
    assert code == 1 and f"the new process failed; pid {u.first} still serves" in out, out
    err = wait_until(lambda: "upgrade failed" in u.stderr() and u.stderr(), 5, "the log line")
    assert "broken build" in err
    assert "upgrade failed: the new process exited with status 3; still serving" in err
    assert u.server.alive() and read_pid(u.pid_file) == u.first
    before = hammer.ok
    wait_until(lambda: hammer.ok >= before + 20, 10, "requests after the failure")
    # The fixed binary goes in: the same command now upgrades.
    replace_file(program, source=BIN)
    code, out = rivet_upgrade("--pid-file", u.pid_file)
    assert code == 0, out
    new = read_pid(u.pid_file)
    assert out.strip() == f"rivet: upgraded: pid {u.first} -> {new} ({u.first} drains and exits)"
    assert u.server.wait(15 * SLOW) == 0
    hammer.finish()
    assert hammer.refused == 0 and hammer.failed == [], (hammer.refused, hammer.failed[:5])


def copied_binary(tmp_path: Path, name: str = "bin") -> Path:
    program = tmp_path / name / "rivet"
    program.parent.mkdir()
    shutil.copy2(BIN, program)
    return program


def started_child(u: Upgraded) -> int:
    err = wait_until(lambda: "upgrade: started" in u.stderr() and u.stderr(), 20,
                     "the upgrade to start")
    return int(re.search(r"upgrade: started \S+ as pid (\d+)", err).group(1))


def test_hung_new_process_is_stopped_after_the_timeout(upgraded, tmp_path):
    program = copied_binary(tmp_path)
    # Long enough that the second SIGUSR2 surely comes while the first is in progress.
    timeout = max(3, 3 * SLOW)
    u = upgraded(("--threads", "1", "--workers", "1", "--upgrade-timeout", timeout),
                 program=program)
    replace_file(program, "#!/bin/sh\nexec sleep 60\n")
    u.server.send_signal(signal.SIGUSR2)
    child = started_child(u)
    u.server.send_signal(signal.SIGUSR2)  # while one is in progress
    wait_until(lambda: "upgrade failed" in u.stderr(), timeout + 10, "the timeout")
    err = u.stderr()
    assert "upgrade refused: one is in progress" in err
    assert f"upgrade failed: the new process was not ready within {int(timeout * 1000)} ms and " \
           "was stopped (SIGTERM): it was killed by signal 15; still serving" in err
    assert not running(child)
    assert u.server.alive() and hello(u.port).endswith(b"Hello, World!")


def test_upgrade_command_says_an_upgrade_is_already_in_progress(upgraded, tmp_path):
    """The server refuses a SIGUSR2 while an upgrade is in progress: `rivet --upgrade` says so
    at once, rather than wait and report the other upgrade's end (here a failure) as its own."""
    program = copied_binary(tmp_path)
    timeout = max(3, 3 * SLOW)  # the hung upgrade's, long enough to ask while it runs
    u = upgraded(("--threads", "1", "--workers", "1", "--upgrade-timeout", timeout),
                 program=program)
    replace_file(program, "#!/bin/sh\nexec sleep 60\n")
    u.server.send_signal(signal.SIGUSR2)
    child = started_child(u)
    code, out = rivet_upgrade("--pid-file", u.pid_file)
    assert code == 1, out
    assert f"an upgrade is already in progress (new process {child}); pid {u.first} still " \
           "serves" in out, out
    assert "failed" not in out, out
    wait_until(lambda: "upgrade failed" in u.stderr(), timeout + 10, "the hung upgrade's end")
    assert "upgrade refused" not in u.stderr()  # nothing was sent to be refused
    assert u.server.alive() and read_pid(u.pid_file) == u.first


def test_new_process_that_ignores_sigterm_is_killed(upgraded, tmp_path):
    program = copied_binary(tmp_path)
    # 2 s for the shell to have run its trap before the SIGTERM, even on a loaded machine.
    u = upgraded(("--threads", "1", "--workers", "1", "--upgrade-timeout", 2,
                  "--drain-timeout", 0.5), program=program)
    replace_file(program, "#!/bin/sh\ntrap '' TERM\nexec sleep 60\n")  # ignored across exec
    u.server.send_signal(signal.SIGUSR2)
    child = started_child(u)
    wait_until(lambda: "upgrade failed" in u.stderr(), 20, "the timeout")
    assert "upgrade failed: the new process was not ready within 2000 ms and was killed " \
           "(SIGKILL) after not exiting within 1500 ms of SIGTERM; still serving" in u.stderr()
    assert not running(child)
    assert u.server.alive() and hello(u.port).endswith(b"Hello, World!")


def test_status_126_is_explained(upgraded, tmp_path):
    program = copied_binary(tmp_path)
    u = upgraded(program=program)
    replace_file(program, "#!/bin/sh\nexit 126\n")
    u.server.send_signal(signal.SIGUSR2)
    err = wait_until(lambda: "upgrade failed" in u.stderr() and u.stderr(), 10, "the failure")
    assert "the new process exited with status 126 (it could not move the listening sockets " \
           "to descriptors 3 and up" in err and "RLIMIT_NOFILE" in err, err[-2000:]
    assert u.server.alive() and hello(u.port).endswith(b"Hello, World!")


def test_stop_while_the_new_process_starts_stops_it_too(upgraded, tmp_path):
    """SIGTERM to the old process while the new one is still starting: left alone, the new one
    would serve on as an orphan after the service was told to stop."""
    program = copied_binary(tmp_path)
    u = upgraded(("--threads", "1", "--workers", "1", "--upgrade-timeout", 60), program=program)
    port = u.port
    # Slow to start: sleeps (without the listening socket, 3, and the ready pipe, 4), then
    # becomes rivet, which would serve.
    delay = 2 * SLOW
    replace_file(program, f'#!/bin/sh\nsleep {delay} 3>&- 4>&-\nexec "{BIN}" "$@"\n')
    u.server.send_signal(signal.SIGUSR2)
    child = started_child(u)
    assert running(child)
    u.server.send_signal(signal.SIGTERM)
    assert u.server.wait(15 * SLOW) == 0
    assert not running(child)
    err = u.stderr()
    assert f"upgrade: stopping while the new process (pid {child}) is still starting: " \
           "stopping it too" in err
    assert f"upgrade: the new process (pid {child}) was stopped (SIGTERM): it was killed by " \
           "signal 15" in err
    time.sleep(delay + 0.5)  # when the new one would have been serving
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    assert read_pid(u.pid_file) is None  # no process wrote it


def test_new_process_ready_while_the_old_one_drains_is_stopped_too(upgraded, tmp_path):
    """SIGTERM to the old process while the new one starts, and the new one becomes ready
    during the old one's lame duck: the stop was meant for the service, so the hand-over is
    refused and the new process is stopped as well."""
    program = copied_binary(tmp_path)
    grace = 4 * SLOW
    u = upgraded(("--threads", "1", "--workers", "1", "--upgrade-timeout", 60,
                  "--drain-grace", grace), program=program)
    port = u.port
    delay = 1 * SLOW  # ready well inside the old one's grace
    replace_file(program, f'#!/bin/sh\nsleep {delay} 3>&- 4>&-\nexec "{BIN}" "$@"\n')
    u.server.send_signal(signal.SIGUSR2)
    child = started_child(u)
    u.server.send_signal(signal.SIGTERM)
    assert u.server.wait(30 * SLOW) == 0
    assert not running(child)
    err = u.stderr()
    assert f"upgrade: the new process (pid {child}) is ready, but this one is stopping: " \
           "stopping it too" in err, err[-3000:]
    assert "is serving; pid" not in err  # no hand-over
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


# ---------------------------------------------------------------------------------------------
# rivet --upgrade: its refusals


def test_upgrade_command_refuses_what_it_cannot_do(tmp_path):
    code, out = rivet_upgrade("--pid-file", tmp_path / "none.pid")
    assert code == 1 and "cannot read the pid file" in out and "No such file" in out, out
    gone = subprocess.Popen(["true"])
    gone.wait()  # reaped: its pid names no process now
    stale = tmp_path / "stale.pid"
    stale.write_text(f"{gone.pid}\n")
    code, out = rivet_upgrade("--pid-file", stale)
    assert code == 1 and "stale pid file" in out, out
    # A live process that is not rivet: not signalled (SIGUSR2 would kill it).
    other = subprocess.Popen(["sleep", "30"])
    try:
        stale.write_text(f"{other.pid}\n")
        code, out = rivet_upgrade("--pid-file", stale)
        assert code == 1 and "does not handle SIGUSR2" in out, out
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()
    garbage = tmp_path / "garbage.pid"
    garbage.write_text("twelve\n")
    code, out = rivet_upgrade("--pid-file", garbage)
    assert code == 1 and "holds no process id" in out, out
    for bad in ([], ["--pid-file"], ["--bogus", "x"]):
        p = subprocess.run([str(BIN), "--upgrade", *bad], capture_output=True, text=True)
        assert p.returncode == 2 and "usage" in p.stderr, (bad, p.stderr)
    config = tmp_path / "c.json"
    config.write_text('{"server": {"port": 8080}}')
    p = subprocess.run([str(BIN), "--upgrade", "--config", str(config)], capture_output=True,
                       text=True)
    assert p.returncode == 2 and "sets no server.pid_file" in p.stderr, p.stderr


def test_upgrade_command_reads_the_pid_file_from_the_config(upgraded, tmp_path):
    u = upgraded()
    config = tmp_path / "c.json"
    config.write_text('{"server": {"pid_file": "%s"}}' % u.pid_file)
    code, out = rivet_upgrade("--config", config)
    assert code == 0 and f"upgraded: pid {u.first} -> " in out, out
    assert u.server.wait(15 * SLOW) == 0


def test_upgrade_command_waits_longer_than_the_server_by_default(upgraded, tmp_path):
    """Without --timeout-ms, `rivet --upgrade` waits the server's upgrade timeout (from the
    config), the time to stop a hung new process, and 5 s: the server's verdict comes first.
    A stopped server gives no verdict, so the command's own wait shows."""
    config = tmp_path / "c.json"
    config.write_text('{"server": {"pid_file": "%s", "upgrade_timeout": 0.1}, '
                      '"limits": {"drain_timeout": 0.5, "drain_grace": 0}}'
                      % (tmp_path / "u0" / "rivet.pid"))
    u = upgraded(("--threads", "1", "--workers", "1", "--config", config))
    assert config.read_text().count(str(u.pid_file)) == 1
    u.server.send_signal(signal.SIGSTOP)
    try:
        p = subprocess.run([str(BIN), "--upgrade", "--config", str(config)], capture_output=True,
                           text=True, timeout=60 * SLOW)
    finally:
        u.server.send_signal(signal.SIGCONT)  # then the pending SIGUSR2 upgrades it
    assert p.returncode == 1, p.stderr
    # 100 ms + (0 + 500 + 1000) ms + 5000 ms
    assert f"no new process served within 6600 ms; pid {u.first} still serves" in p.stderr
    # Either verdict on that late upgrade (100 ms is short); the fixture stops who serves.
    wait_until(lambda: re.search(r"upgrade failed|upgrade: the new process \(pid \d+\) is serving",
                                 u.stderr()), 10, "the late upgrade's end")


# ---------------------------------------------------------------------------------------------
# systemd socket activation

# Runs rivet as this very process, so LISTEN_PID can name it: moves the descriptors named in
# argv[1] onto 3, 4, ... and sets the variables, then execs argv[2:].
ACTIVATE = r"""
import fcntl, os, sys
fds = [int(f) for f in sys.argv[1].split(",")]
parked = [fcntl.fcntl(f, fcntl.F_DUPFD, 100) for f in fds]  # above every target
for i, f in enumerate(parked):
    os.dup2(f, 3 + i)
os.environ["LISTEN_FDS"] = str(len(fds))
os.environ["LISTEN_PID"] = str(os.getpid())
names = os.environ.pop("TEST_FDNAMES", "")
if names:
    os.environ["LISTEN_FDNAMES"] = names
os.execv(sys.argv[2], sys.argv[2:])
"""


def activated(tmp_path, sockets, args, names=""):
    fds = [s.fileno() for s in sockets]
    out = open(tmp_path / "out", "wb")
    err = open(tmp_path / "err", "wb")
    env = dict(os.environ, TEST_FDNAMES=names)
    proc = subprocess.Popen([sys.executable, "-c", ACTIVATE, ",".join(map(str, fds)), str(BIN),
                             "--root", str(PUBLIC), *map(str, args)], pass_fds=fds,
                            stdout=out, stderr=err, env=env)
    out.close()
    err.close()
    return proc


def listener(reuse_port=False) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # blocking, as systemd makes it
    if reuse_port:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    return s


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_socket_activation_serves_the_inherited_sockets(tmp_path):
    http, admin = listener(), listener()
    unused = free_port()  # --port and --admin-port name ports that must stay unbound
    proc = activated(tmp_path, [http, admin],
                     ["--port", unused, "--admin-port", unused, "--threads", "2", "--workers", "1"],
                     names="rivet.socket:admin")
    try:
        port, admin_port = http.getsockname()[1], admin.getsockname()[1]
        http.close()  # rivet holds them now
        admin.close()
        line = f"rivet listening on http://127.0.0.1:{port} (2 threads"
        wait_until(lambda: line in (tmp_path / "out").read_text(), 10, "the listening line")
        assert f"admin endpoints on http://127.0.0.1:{admin_port}" in (tmp_path / "out").read_text()
        for _ in range(10):
            assert hello(port).endswith(b"Hello, World!")
        with socket.create_connection(("127.0.0.1", admin_port)) as s:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            assert s.recv(100).startswith(b"HTTP/1.1 200")
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", unused), timeout=2).close()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15 * SLOW) == 0
    err = (tmp_path / "err").read_text()
    assert not SANITIZER_RE.search(err), err


def test_socket_activated_rivet_upgrades_in_place(tmp_path):
    """The variables systemd set are not passed on: the new process gets its own LISTEN_PID
    and both sockets again, under their names."""
    http, admin = listener(reuse_port=True), listener()
    pid_file = tmp_path / "rivet.pid"
    proc = activated(tmp_path, [http, admin], ["--admin-port", free_port(), "--threads", "1",
                                               "--workers", "1", "--pid-file", pid_file],
                     names="http:admin")
    port, admin_port = http.getsockname()[1], admin.getsockname()[1]
    http.close()
    admin.close()
    new = None
    try:
        wait_until(lambda: read_pid(pid_file) == proc.pid, 10, "the pid file")
        proc.send_signal(signal.SIGUSR2)
        new = wait_until(lambda: (p := read_pid(pid_file)) not in (None, proc.pid) and p, 15,
                         "the new process")
        assert proc.wait(15 * SLOW) == 0
        assert hello(port).endswith(b"Hello, World!")
        with socket.create_connection(("127.0.0.1", admin_port)) as s:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            assert s.recv(100).startswith(b"HTTP/1.1 200")
        assert f"admin endpoints on http://127.0.0.1:{admin_port}" in \
            (tmp_path / "out").read_text().split("rivet listening")[-1]
    finally:
        if proc.poll() is None:
            proc.kill()
        if new:
            stop_pid(new)
    err = (tmp_path / "err").read_text()
    assert not SANITIZER_RE.search(err), err


def test_socket_activation_refuses_a_descriptor_that_is_not_a_listener(tmp_path):
    r, w = os.pipe()
    with os.fdopen(r, "rb") as reader, os.fdopen(w, "wb"):
        proc = activated(tmp_path, [reader], ["--port", "0"])
        assert proc.wait(15 * SLOW) == 1
    err = (tmp_path / "err").read_text()
    assert "rivet: inherited listening sockets (LISTEN_FDS): descriptor 3 is not a socket" in err
    bound = socket.socket()  # bound but not listening
    bound.bind(("127.0.0.1", 0))
    proc = activated(tmp_path, [bound], ["--port", "0"])
    assert proc.wait(15 * SLOW) == 1
    bound.close()
    assert "descriptor 3 is not listening" in (tmp_path / "err").read_text()
