"""sd_notify (systemd's Type=notify) on the real binary: a unix datagram socket of the test's
stands in for systemd's NOTIFY_SOCKET (a path, or an abstract '@' name) and reads each message
with its sender's pid, as systemd does (SO_PASSCRED).

READY=1 (MAINPID = the server) after the listening line, RELOADING=1 then READY=1 around SIGHUP
with a good and with a bad file, STOPPING=1 at SIGTERM; WATCHDOG=1 pings while the loops run
and none while a loop is held; an in-place upgrade names the new main pid; without
NOTIFY_SOCKET nothing is sent and nothing fails.
"""
from __future__ import annotations

import os
import select
import signal
import socket
import struct
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from ops_e2e import free_port, write_config
from rivet_e2e import BIN, LISTEN_RE, PUBLIC, SLOW, RivetServer, build_request
from test_upgrade import read_pid, running, wait_until

WATCHDOG_USEC = 200_000  # pings every 100 ms


@dataclass
class Message:
    fields: dict
    pid: int  # the sender's, from its credentials

    def __contains__(self, key: str) -> bool:
        return key in self.fields


class NotifySocket:
    """The service manager's end: a unix datagram socket at a path or an abstract name."""

    def __init__(self, tmp_path: Path, abstract: bool):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        if abstract:
            name = f"rivet-notify-{os.getpid()}-{id(self)}"
            self.sock.bind("\0" + name)
            self.address = "@" + name
        else:
            self.address = str(tmp_path / "notify.sock")
            self.sock.bind(self.address)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.seen: list[Message] = []

    def env(self, **more) -> dict:
        return {"NOTIFY_SOCKET": self.address, "WATCHDOG_USEC": None, "WATCHDOG_PID": None,
                **more}

    def receive(self, timeout: float) -> Message | None:
        ready, _, _ = select.select([self.sock], [], [], timeout)
        if not ready:
            return None
        data, ancillary, _, _ = self.sock.recvmsg(4096, socket.CMSG_SPACE(12))
        pid = 0
        for level, kind, value in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                pid = struct.unpack("iII", value[:12])[0]
        fields = dict(line.split("=", 1) for line in data.decode().split("\n") if line)
        message = Message(fields, pid)
        self.seen.append(message)
        return message

    def until(self, predicate, what: str, timeout: float = 10.0) -> Message:
        """The first message (from now) that `predicate` accepts."""
        deadline = time.monotonic() + timeout * SLOW
        while (left := deadline - time.monotonic()) > 0:
            m = self.receive(left)
            if m is not None and predicate(m):
                return m
        raise AssertionError(f"no {what} within {timeout * SLOW:.0f}s; got "
                             f"{[m.fields for m in self.seen]}")

    def pending(self) -> list[Message]:
        """What has arrived and is not read yet."""
        out = []
        while (m := self.receive(0)) is not None:
            out.append(m)
        return out

    def close(self):
        self.sock.close()


@pytest.fixture(params=["path", "abstract"])
def notify(request, tmp_path):
    s = NotifySocket(tmp_path, abstract=request.param == "abstract")
    yield s
    s.close()


def is_ping(m: Message) -> bool:
    return m.fields.get("WATCHDOG") == "1"


def start_seen_ready(srv: RivetServer, notify: NotifySocket) -> Message:
    """Starts `srv` and returns its READY=1, checking the listening line came before it."""
    started = threading.Thread(target=srv.start)
    started.start()
    ready = notify.until(lambda m: "READY" in m, "READY=1")
    # What stdout held when READY arrived. Not guarded by srv.proc: on a loaded machine the
    # server can send READY before the starting thread has stored Popen's result (a run beside
    # stress-ng read "" so); stdout's file is named before the server is started.
    printed = srv.stdout()
    started.join()
    assert LISTEN_RE.search(printed), printed
    assert ready.fields["READY"] == "1"
    assert int(ready.fields["MAINPID"]) == srv.proc.pid == ready.pid
    assert ready.fields["STATUS"].startswith(f"serving http://127.0.0.1:{srv.port} "), ready
    return ready


def test_ready_reloading_and_stopping(notify, tmp_path):
    cfg = write_config(tmp_path / "rivet.json", {"limits": {"max_body_bytes": 100}})
    srv = RivetServer(tmp_path / "run", ("--config", cfg, "--threads", "1", "--workers", "1"),
                      env=notify.env())
    start_seen_ready(srv, notify)

    for text, outcome in (('{"limits": {"max_body_bytes": 200}}', "reload applied"),
                          ('{"limits": {"max_body_bytes": "big"}}', "reload refused")):
        write_config(cfg, text)
        before_us = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        srv.send_signal(signal.SIGHUP)
        reloading = notify.until(lambda m: "RELOADING" in m, "RELOADING=1")
        after_us = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        assert reloading.fields["RELOADING"] == "1" and reloading.pid == srv.proc.pid
        assert before_us <= int(reloading.fields["MONOTONIC_USEC"]) <= after_us
        ready = notify.until(lambda m: "READY" in m, "READY=1 after the reload")
        assert outcome in ready.fields["STATUS"], ready
        assert int(ready.fields["MAINPID"]) == srv.proc.pid

    srv.send_signal(signal.SIGTERM)
    stopping = notify.until(lambda m: "STOPPING" in m, "STOPPING=1")
    assert stopping.fields["STOPPING"] == "1" and stopping.fields["STATUS"].startswith("stopping")
    assert srv.wait(15 * SLOW) == 0, srv.stderr()
    assert "service manager" not in srv.stderr()  # nothing failed, nothing to warn of


def test_stopping_comes_at_the_lame_duck_s_start(tmp_path):
    notify = NotifySocket(tmp_path, abstract=True)
    srv = RivetServer(tmp_path / "run", ("--threads", "1", "--drain-grace", "60"),
                      env=notify.env())
    start_seen_ready(srv, notify)
    srv.send_signal(signal.SIGTERM)
    stopping = notify.until(lambda m: "STOPPING" in m, "STOPPING=1")
    assert "lame duck for 60000 ms" in stopping.fields["STATUS"], stopping
    assert srv.alive()  # told before the grace, not after it
    srv.send_signal(signal.SIGTERM)  # a second one: drain now
    assert srv.wait(15 * SLOW) == 0, srv.stderr()
    notify.close()


def test_watchdog_pings_while_the_loops_run(notify, tmp_path):
    srv = RivetServer(tmp_path / "run", ("--threads", "2", "--admin-port", free_port()),
                      env=notify.env(WATCHDOG_USEC=WATCHDOG_USEC))
    start_seen_ready(srv, notify)
    for _ in range(3):
        ping = notify.until(is_ping, "WATCHDOG=1")
        assert ping.pid == srv.proc.pid
    assert srv.stop() == 0
    assert "watchdog every 200 ms" in srv.stderr()


def test_watchdog_of_another_process_is_not_pinged(tmp_path):
    notify = NotifySocket(tmp_path, abstract=True)
    srv = RivetServer(tmp_path / "run", ("--threads", "1",),
                      env=notify.env(WATCHDOG_USEC=WATCHDOG_USEC, WATCHDOG_PID=1))
    start_seen_ready(srv, notify)
    # Ten intervals of pings, had they been ours: none come (an absence cannot fail by load).
    notify.receive(1.0)
    srv.send_signal(signal.SIGTERM)
    notify.until(lambda m: "STOPPING" in m, "STOPPING=1")
    assert srv.wait(15 * SLOW) == 0
    assert not [m for m in notify.seen if is_ping(m)], [m.fields for m in notify.seen]
    notify.close()


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def test_a_held_loop_stops_the_pings_until_it_is_free(tmp_path):
    """One loop, held by a long computation on it (--inline-heavy /calc, ~1.5 s of CPU): from
    the moment the server has certainly been computing (its CPU time grew by 0.2 s since the
    request left) until the answer arrives, at most one ping (the one whose probe the loop ran
    just before it was held) can come; a sender that pinged on time regardless would send one
    every 100 ms. Then the pings resume."""
    notify = NotifySocket(tmp_path, abstract=True)
    srv = RivetServer(tmp_path / "run", ("--threads", "1", "--workers", "1", "--inline-heavy"),
                      env=notify.env(WATCHDOG_USEC=WATCHDOG_USEC))
    start_seen_ready(srv, notify)
    for _ in range(3):
        notify.until(is_ping, "WATCHDOG=1 before the hold")
    with socket.create_connection((srv.host, srv.port), timeout=60 * SLOW) as c:
        cpu_before = cpu_seconds(srv.proc.pid)
        c.sendall(build_request("GET", "/calc?value=0.5&terms=50000000",
                                headers={"Connection": "close"}))
        deadline = time.monotonic() + 30 * SLOW
        while cpu_seconds(srv.proc.pid) < cpu_before + 0.2:  # marker 1: the loop is held
            assert time.monotonic() < deadline, "the computation never started"
            assert not select.select([c], [], [], 0.005)[0], "answered before it was seen held"
        notify.pending()  # arrived before marker 1
        during = []
        while not select.select([c], [], [], 0)[0]:  # marker 2: the answer arrives
            assert time.monotonic() < deadline, "no answer to /calc"
            m = notify.receive(0.01)
            if m is not None and is_ping(m):
                during.append(m)
        answer = b""
        while chunk := c.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    assert cpu_seconds(srv.proc.pid) > cpu_before + 0.5  # the hold outlasted several pings
    assert len(during) <= 1, f"{len(during)} pings while the loop was held"
    for _ in range(2):
        notify.until(is_ping, "WATCHDOG=1 after the hold")
    assert srv.stop() == 0
    notify.close()


def test_without_notify_socket_nothing_is_sent_and_nothing_fails(tmp_path):
    listening = NotifySocket(tmp_path, abstract=False)  # there, but not named to the server
    cfg = write_config(tmp_path / "rivet.json", {})
    srv = RivetServer(tmp_path / "run", ("--config", cfg, "--threads", "1"),
                      env={"NOTIFY_SOCKET": None, "WATCHDOG_USEC": WATCHDOG_USEC}).start()
    srv.send_signal(signal.SIGHUP)
    wait_until(lambda: "applied" in srv.stderr(), 10, "the reload")
    assert srv.get("/hello").status == 200
    assert srv.stop() == 0, srv.stderr()
    assert listening.pending() == []
    assert "service manager" not in srv.stderr()
    listening.close()


def test_a_notify_socket_nobody_reads_is_warned_of_once(tmp_path):
    missing = tmp_path / "gone.sock"
    srv = RivetServer(tmp_path / "run", ("--threads", "1",),
                      env={"NOTIFY_SOCKET": missing, "WATCHDOG_USEC": WATCHDOG_USEC}).start()
    srv.send_signal(signal.SIGHUP)
    wait_until(lambda: "reload" in srv.stderr() and srv.stderr().count("service manager:") >= 1,
               10, "the warning")
    assert srv.get("/hello").status == 200
    assert srv.stop() == 0, srv.stderr()
    assert srv.stderr().count(f"NOTIFY_SOCKET={missing}") == 1, srv.stderr()


def test_in_place_upgrade_names_the_new_main_pid(tmp_path):
    """As systemd runs it: WATCHDOG_PID is the main process's. After SIGUSR2 the new process
    says READY=1 with its own MAINPID, the old one names it too (the main pid may always
    speak), never says STOPPING=1 (that would stop the service), and the watchdog's pings come
    from the new process."""
    notify = NotifySocket(tmp_path, abstract=True)
    pid_file = tmp_path / "rivet.pid"
    # exec keeps the shell's pid: WATCHDOG_PID names rivet, as systemd's would.
    cmd = ["/bin/sh", "-c", 'WATCHDOG_PID=$$ exec "$0" "$@"', BIN, "--port", "0", "--bind",
           "127.0.0.1", "--root", PUBLIC, "--pid-file", pid_file, "--threads", "1",
           "--drain-grace", "0"]
    srv = RivetServer(tmp_path / "run", command=cmd, env=notify.env(WATCHDOG_USEC=WATCHDOG_USEC))
    start_seen_ready(srv, notify)
    old = srv.proc.pid
    notify.until(lambda m: is_ping(m) and m.pid == old, "a ping from the first process")
    srv.send_signal(signal.SIGUSR2)
    new = wait_until(lambda: (p := read_pid(pid_file)) not in (None, old) and p, 15,
                     "a new pid in the pid file")
    try:
        # The two come in either order: the old one speaks as it reads the new one's word.
        def from_both(_):
            return ([m for m in notify.seen if "READY" in m and m.pid == new] and
                    [m for m in notify.seen if "MAINPID" in m and m.pid == old and
                     "READY" not in m])
        notify.until(from_both, "READY=1 from the new process and MAINPID= from the old")
        for m in notify.seen[1:]:  # after the old one's own READY=1, only the new pid
            assert int(m.fields.get("MAINPID", new)) == new, m.fields
        assert srv.wait(15 * SLOW) == 0, srv.stderr()
        for _ in range(2):
            notify.until(lambda m: is_ping(m) and m.pid == new, "a ping from the new process")
        assert not [m for m in notify.seen if "STOPPING" in m], [m.fields for m in notify.seen]
        os.kill(new, signal.SIGTERM)
        notify.until(lambda m: "STOPPING" in m and m.pid == new, "STOPPING=1 from the new one")
        wait_until(lambda: not running(new), 15, "the new process to exit")
    finally:
        if running(new):
            os.kill(new, signal.SIGKILL)
        notify.close()
