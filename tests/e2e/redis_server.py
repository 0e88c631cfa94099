"""A throwaway redis-server for the Redis tests (Debian's redis-server package).

Runs in a temporary directory, on a free port of 127.0.0.1, with persistence off; stop() and
start() again keep the port (a restart, as an operator's would be); `frozen()` stops the process
(SIGSTOP) with its connections open: a Redis that answers nothing. `cli()` talks RESP over a
plain socket, so the tests need nothing beyond the server itself.
"""
from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def available() -> bool:
    return Path(REDIS_SERVER).exists()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _encode(*words) -> bytes:
    out = [f"*{len(words)}\r\n".encode()]
    for w in words:
        b = w if isinstance(w, bytes) else str(w).encode()
        out.append(f"${len(b)}\r\n".encode() + b + b"\r\n")
    return b"".join(out)


def _read_reply(f):
    line = f.readline()
    if not line:
        raise ConnectionError("redis closed the connection")
    kind, rest = line[:1], line[1:-2]
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        raise RuntimeError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        return None if n < 0 else f.read(n + 2)[:-2].decode()
    if kind == b"*":
        n = int(rest)
        return None if n < 0 else [_read_reply(f) for _ in range(n)]
    raise RuntimeError(f"unexpected reply {line!r}")


class RedisServer:
    def __init__(self, password: str | None = None):
        """`password`: Redis's requirepass (the default user's); cli() authenticates with it."""
        self.dir = Path(tempfile.mkdtemp(prefix="rivet-redis-"))
        self.port = free_port()
        self.password = password
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 60.0) -> "RedisServer":
        log = open(self.dir / "redis.log", "ab")
        self.proc = subprocess.Popen(
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir),
             "--save", "", "--appendonly", "no", "--daemonize", "no",
             *(["--requirepass", self.password] if self.password else [])],
            stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.cli("PING") == "PONG":
                    return self
            except (OSError, ConnectionError, RuntimeError):
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"redis-server did not start: {self.log()[-2000:]}")
            time.sleep(0.05)

    @contextmanager
    def frozen(self):
        """Redis stopped (SIGSTOP) inside the block: connections stay open, nothing answers."""
        self.proc.send_signal(signal.SIGSTOP)
        try:
            yield self
        finally:
            self.proc.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)  # a frozen one would never see the SIGTERM
            self.proc.terminate()
            self.proc.wait(timeout=60)
        self.proc = None

    def cli(self, *words, timeout: float = 30.0):
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as s:
            if self.password:
                s.sendall(_encode("AUTH", self.password))
            s.sendall(_encode(*words))
            with s.makefile("rb") as f:
                if self.password:
                    _read_reply(f)
                return _read_reply(f)

    def log(self) -> str:
        p = self.dir / "redis.log"
        return p.read_text(errors="replace") if p.exists() else ""

    def destroy(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
