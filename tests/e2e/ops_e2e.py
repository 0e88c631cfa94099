"""Helpers for the operations tests (configuration, logs, rate limiting, metrics): writing a
configuration file, sending from another loopback source address, waiting for a log line, and
the nginx "combined" line format."""
from __future__ import annotations

import json
import re
import socket
import time
from pathlib import Path

from rivet_e2e import SLOW, Conn, build_request

# nginx's combined format, as GoAccess's COMBINED reads it.
COMBINED_RE = re.compile(
    r'^(?P<addr>\S+) - (?P<user>\S+) \[(?P<time>\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2} '
    r'[+-]\d{4})\] "(?P<request>[^"]*)" (?P<status>\d{3}) (?P<bytes>\d+) '
    r'"(?P<referer>[^"]*)" "(?P<agent>[^"]*)"$'
)
COMMON_RE = re.compile(
    r'^(?P<addr>\S+) - (?P<user>\S+) \[(?P<time>[^\]]+)\] "(?P<request>[^"]*)" '
    r'(?P<status>\d{3}) (?P<bytes>\d+)$'
)


def write_config(path: Path, doc) -> Path:
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=2))
    return path


def conn_from(srv, source: str, timeout: float = 10.0) -> Conn:
    """A connection to the server from another loopback address (127.0.0.0/8 is all ours)."""
    c = Conn.__new__(Conn)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(timeout * SLOW)
    sock.bind((source, 0))
    sock.connect((srv.host, srv.port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    c.sock = sock
    from rivet_e2e import Reader
    c.reader = Reader(lambda: sock.recv(1 << 16))
    return c


def statuses(conn: Conn, requests: list[bytes]) -> list[int]:
    """Sends the requests pipelined in one write and returns the statuses in order."""
    conn.send(b"".join(requests))
    return [conn.read_response().status for _ in requests]


def get(target: str, headers=None) -> bytes:
    return build_request("GET", target, headers=headers)


# 30 s: a deadline for an event, returned from as soon as it happens; a loaded machine may need
# more than a few seconds for a reload or a restart.
def wait_for(predicate, timeout: float = 30.0, what: str = "condition"):
    deadline = time.monotonic() + timeout * SLOW
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def log_lines(path: Path) -> list[str]:
    return path.read_text(errors="replace").splitlines() if path.exists() else []


def rss_kib(pid: int, key: str = "VmRSS") -> int:
    """The process's resident set now, or its peak with key="VmHWM"."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {key}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
