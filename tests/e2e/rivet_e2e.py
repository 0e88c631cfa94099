"""Shared helpers for rivet's end-to-end tests: starting the real binary, raw sockets, and a small
HTTP/1.1 response reader (Content-Length, chunked, read-until-close, informational responses,
pipelined responses).

Only the standard library: the tests talk to the server the way a client on the wire would.
"""
from __future__ import annotations

import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("RIVET_BIN", REPO / "build" / "rivet"))
if not BIN.is_absolute():
    BIN = REPO / BIN
SANITIZED = os.environ.get("RIVET_SANITIZED", "") not in ("", "0")
PUBLIC = REPO / "public"

# Sanitized builds start and run several times slower: every wait scales by this.
SLOW = 4.0 if SANITIZED else 1.0

LISTEN_RE = re.compile(
    r"rivet listening on http://(?P<host>[^\s]+):(?P<port>\d+) "
    r"\((?P<threads>\d+) threads, (?P<workers>\d+) workers\)"
)
# The TLS listener's line (--tls-cert/--tls-key or a "tls" section), beside the plain one.
HTTPS_LISTEN_RE = re.compile(r"rivet listening on https://(?P<host>[^\s]+):(?P<port>\d+)")
SANITIZER_RE = re.compile(
    r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|ThreadSanitizer|"
    r"UndefinedBehaviorSanitizer|SUMMARY: \w+Sanitizer"
)
HTTP_DATE_RE = re.compile(
    r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
    r"\d{4} \d{2}:\d{2}:\d{2} GMT$"
)


# ---------------------------------------------------------------------------------------------
# The server process


def raise_nofile(n: int) -> None:
    """Raises this process's RLIMIT_NOFILE soft limit to n (capped by the hard limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = n if hard == resource.RLIM_INFINITY else min(n, hard)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def no_drain_grace_unless_set(args) -> list:
    """The server's default lame duck (7 s) would add its seconds to every stop: tests that do
    not test it run without, unless their arguments set it."""
    args = [str(a) for a in args]
    return args if "--drain-grace" in args else ["--drain-grace", "0", *args]


class RivetServer:
    """The real rivet binary on an ephemeral port of 127.0.0.1."""

    def __init__(self, workdir: Path, args=(), nofile: int | None = None, root: Path = PUBLIC,
                 nofile_cap: int | None = None, command: list | None = None,
                 tls: bool | None = None, env: dict | None = None):
        """nofile raises the descriptor limit to at least n; nofile_cap lowers it to n (as
        `ulimit -n n` would). `command`: another program built on rivet (an example) instead of
        the rivet binary, started as given; it must listen on an ephemeral port and print the
        listening line. `tls`: also wait for the https listening line and keep its port in
        `tls_port` (None: when the arguments name --tls-cert). `env`: variables set (a value of
        None: removed) in the environment the server inherits from the tests."""
        self.command = [str(c) for c in command] if command else None
        self.workdir = Path(workdir)
        self.args = [str(a) for a in args]
        self.nofile = nofile
        self.nofile_cap = nofile_cap
        self.root = root
        self.proc: subprocess.Popen | None = None
        self.host = "127.0.0.1"
        self.port = 0
        self.threads = 0
        self.workers = 0
        self.returncode: int | None = None
        self.tls = ("--tls-cert" in self.args) if tls is None else tls
        self.tls_port = 0
        self.env = None
        if env is not None:
            self.env = {k: v for k, v in os.environ.items() if k not in env}
            self.env.update({k: str(v) for k, v in env.items() if v is not None})

    def __iter__(self):
        """Unpacks as (host, port, process)."""
        return iter((self.host, self.port, self.proc))

    # -- lifecycle --

    def start(self, timeout: float = 10.0) -> "RivetServer":
        program = Path(self.command[0]) if self.command else BIN
        if not program.exists():
            raise RuntimeError(f"{program} not found (set RIVET_BIN to the build's rivet)")
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.stdout_path = self.workdir / "rivet.stdout"
        self.stderr_path = self.workdir / "rivet.stderr"
        out = open(self.stdout_path, "wb")
        err = open(self.stderr_path, "wb")
        if self.command:
            cmd = self.command
        else:
            cmd = [str(BIN), "--port", "0", "--bind", self.host]
            if self.root is not None:
                cmd += ["--root", str(self.root)]
            cmd += no_drain_grace_unless_set(self.args)
        nofile, cap = self.nofile, self.nofile_cap

        def preexec():
            if nofile:
                raise_nofile(nofile)
            if cap:
                hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
                resource.setrlimit(resource.RLIMIT_NOFILE, (cap, hard))

        try:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                         preexec_fn=preexec, cwd=self.workdir, env=self.env)
        finally:
            out.close()
            err.close()
        deadline = time.monotonic() + timeout * SLOW
        while True:
            out = self.stdout()
            m = LISTEN_RE.search(out)
            tm = HTTPS_LISTEN_RE.search(out) if self.tls else None
            if m and (tm or not self.tls):
                if tm:
                    self.tls_port = int(tm["port"])
                self.port = int(m["port"])
                self.threads = int(m["threads"])
                self.workers = int(m["workers"])
                assert m["host"] == self.host or (self.command and m["host"] == "0.0.0.0")
                return self
            if self.proc.poll() is not None:
                raise RuntimeError(f"rivet exited with {self.proc.returncode} before listening:\n"
                                   f"{self.stderr()}")
            if time.monotonic() > deadline:
                self.proc.kill()
                self.proc.wait()
                raise RuntimeError(f"rivet printed no listening line in {timeout}s:\n"
                                   f"stdout: {self.stdout()}\nstderr: {self.stderr()}")
            time.sleep(0.01)

    def send_signal(self, sig=signal.SIGTERM) -> None:
        self.proc.send_signal(sig)

    def wait(self, timeout: float) -> int:
        self.returncode = self.proc.wait(timeout=timeout)
        return self.returncode

    def stop(self, sig=signal.SIGTERM, timeout: float = 15.0) -> int:
        """Signals the server and waits for it; kills it (and raises) if it does not exit."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.wait(timeout * SLOW)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"rivet did not exit within {timeout * SLOW}s of signal {sig}")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stdout(self) -> str:
        return self.stdout_path.read_text(errors="replace")

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def diagnosis(self) -> str:
        """For a failed test's report: the end of stderr and, if the server still answers, the
        counters that say why it closed connections (TLS failures, WebSocket closes, limits)."""
        lines = [f"stderr (end):\n{self.stderr()[-3000:]}"]
        if self.proc is not None and self.alive() and self.port:
            try:
                with self.connect(timeout=2) as c:
                    c.send(build_request("GET", "/metrics", headers={"Connection": "close"}))
                    body = c.read_response().body.decode(errors="replace")
                wanted = re.compile(r"^rivet_(tls|connections|websocket_closes|rate_limited|"
                                    r"worker_rejections|http_requests_total)")
                lines.append("metrics (those not 0):\n" + "\n".join(
                    line for line in body.splitlines()
                    if wanted.match(line) and line.rsplit(" ", 1)[-1] != "0"))
            except Exception as e:  # a server that no longer answers says so by this
                lines.append(f"metrics: not read ({e!r})")
        return "\n".join(lines)

    def sanitizer_report(self) -> str | None:
        text = self.stderr()
        return text if SANITIZER_RE.search(text) else None

    # -- clients --

    def connect(self, timeout: float = 10.0) -> "Conn":
        return Conn(self.host, self.port, timeout * SLOW)

    def request(self, method: str, target: str, body: bytes | None = None,
                headers: dict | None = None, timeout: float = 10.0) -> "Response":
        """One request on a fresh connection, read with the raw reader."""
        with self.connect(timeout) as c:
            c.send(build_request(method, target, headers=headers, body=body))
            return c.read_response(head_request=(method == "HEAD"))

    def get(self, target: str, **kw) -> "Response":
        return self.request("GET", target, **kw)

    def post(self, target: str, body: bytes | str, **kw) -> "Response":
        if isinstance(body, str):
            body = body.encode()
        return self.request("POST", target, body=body, **kw)


# ---------------------------------------------------------------------------------------------
# Requests


def build_request(method: str, target: str, headers: dict | list | None = None,
                  body: bytes | None = None, version: str = "HTTP/1.1",
                  host: str | None = "localhost") -> bytes:
    """A request in bytes. Adds Host (unless host is None or one is given) and Content-Length for
    a body (unless the headers frame it themselves)."""
    items = list(headers.items()) if isinstance(headers, dict) else list(headers or [])
    names = {k.lower() for k, _ in items}
    if host is not None and "host" not in names:
        items.insert(0, ("Host", host))
    if body is not None and "content-length" not in names and "transfer-encoding" not in names:
        items.append(("Content-Length", str(len(body))))
    head = f"{method} {target} {version}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in items)
    return head.encode("latin-1") + b"\r\n" + (body or b"")


def chunked(pieces, trailers: str = "") -> bytes:
    """Encodes byte pieces as a chunked body, ending with the last chunk and `trailers` (raw
    field lines, each ending in CRLF)."""
    out = b""
    for p in pieces:
        out += b"%x\r\n" % len(p) + p + b"\r\n"
    return out + b"0\r\n" + trailers.encode("latin-1") + b"\r\n"


# ---------------------------------------------------------------------------------------------
# Responses


class Closed(Exception):
    """The peer closed (or reset) the connection; `partial` holds the unparsed bytes it left."""

    def __init__(self, partial: bytes, reset: bool = False):
        super().__init__(f"connection {'reset' if reset else 'closed'} with {len(partial)} "
                         f"unparsed bytes: {bytes(partial[:200])!r}")
        self.partial = bytes(partial)
        self.reset = reset


class ProtocolError(Exception):
    pass


@dataclass
class Response:
    version: str
    status: int
    reason: str
    headers: list = field(default_factory=list)
    body: bytes = b""
    trailers: list = field(default_factory=list)
    raw_head: bytes = b""

    def header(self, name: str) -> str | None:
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def header_all(self, name: str) -> list:
        return [v for k, v in self.headers if k.lower() == name.lower()]

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")

    def json(self):
        return json.loads(self.body)

    @property
    def closes(self) -> bool:
        v = self.header("Connection")
        return v is not None and "close" in v.lower()

    def __repr__(self):
        return (f"<Response {self.status} {self.reason} headers={self.headers} "
                f"body={self.body[:300]!r}{'...' if len(self.body) > 300 else ''}>")


class Reader:
    """Parses HTTP/1.x responses from a byte source (a callable returning b'' at EOF)."""

    MAX_HEAD = 256 * 1024

    def __init__(self, recv):
        self._recv = recv
        self.buf = bytearray()
        self.eof = False

    def _fill(self) -> None:
        if self.eof:
            raise Closed(self.buf)
        try:
            data = self._recv()
        except ConnectionResetError:
            self.eof = True
            raise Closed(self.buf, reset=True)
        if not data:
            self.eof = True
            raise Closed(self.buf)
        self.buf += data

    def _take(self, n: int) -> bytes:
        while len(self.buf) < n:
            self._fill()
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def _line(self) -> bytes:
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                return self._take(i + 2)[:-2]
            if len(self.buf) > self.MAX_HEAD:
                raise ProtocolError("line too long")
            self._fill()

    def read_response(self, head_request: bool = False) -> Response:
        """The next response, informational (1xx) ones included."""
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end >= 0:
                break
            if len(self.buf) > self.MAX_HEAD:
                raise ProtocolError("response head too large")
            self._fill()
        raw_head = self._take(end + 4)
        lines = raw_head[:-4].decode("latin-1").split("\r\n")
        m = re.fullmatch(r"(HTTP/1\.[01]) (\d{3}) ([^\r\n]*)", lines[0])
        if not m:
            raise ProtocolError(f"bad status line {lines[0]!r}")
        headers = []
        for line in lines[1:]:
            hm = re.fullmatch(r"([!#$%&'*+\-.^_`|~0-9A-Za-z]+):[ \t]*(.*?)[ \t]*", line)
            if not hm:
                raise ProtocolError(f"bad header line {line!r} in {raw_head!r}")
            headers.append((hm[1], hm[2]))
        r = Response(m[1], int(m[2]), m[3], headers, raw_head=raw_head)
        if head_request or r.status < 200 or r.status in (204, 304):
            return r
        te = r.header("Transfer-Encoding")
        cl = r.header_all("Content-Length")
        if te is not None:
            if te.lower() != "chunked":
                raise ProtocolError(f"unexpected Transfer-Encoding {te!r}")
            if cl:
                raise ProtocolError("both Transfer-Encoding and Content-Length")
            r.body = self._read_chunked(r)
        elif cl:
            if len(cl) != 1 or not cl[0].isdigit():
                raise ProtocolError(f"bad Content-Length {cl!r}")
            r.body = self._take(int(cl[0]))
        else:
            # Delimited by close.
            while True:
                try:
                    self._fill()
                except Closed:
                    break
            r.body = bytes(self.buf)
            self.buf.clear()
        return r

    def _read_chunked(self, r: Response) -> bytes:
        body = bytearray()
        while True:
            size_line = self._line().decode("latin-1")
            size = int(size_line.split(";")[0].strip(), 16)
            if size == 0:
                break
            body += self._take(size)
            if self._take(2) != b"\r\n":
                raise ProtocolError("chunk data not followed by CRLF")
        while True:
            line = self._line()
            if not line:
                break
            k, _, v = line.decode("latin-1").partition(":")
            r.trailers.append((k, v.strip()))
        return bytes(body)

    def read_final(self, head_request: bool = False) -> tuple[Response, list]:
        """The next final response, and the informational responses before it."""
        info = []
        while True:
            r = self.read_response(head_request)
            if r.status >= 200:
                return r, info
            info.append(r)


def parse_responses(data: bytes, head_requests=()) -> list:
    """Every response in `data` (a complete byte string, e.g. all a connection sent until close).
    Raises Closed if the data ends inside a response."""
    chunks = [bytes(data)]
    reader = Reader(lambda: chunks.pop() if chunks else b"")
    out = []
    i = 0
    while True:
        if not reader.buf:
            try:
                reader._fill()
            except Closed:
                return out
        out.append(reader.read_response(head_request=i in head_requests))
        i += 1


class Conn:
    """A client socket with a response reader."""

    def __init__(self, host: str, port: int, timeout: float = 10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.reader = Reader(lambda: self.sock.recv(1 << 16))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def settimeout(self, t: float) -> None:
        self.sock.settimeout(t)

    def send(self, data: bytes | str) -> None:
        if isinstance(data, str):
            data = data.encode("latin-1")
        self.sock.sendall(data)

    def read_response(self, head_request: bool = False) -> Response:
        return self.reader.read_response(head_request)

    def read_final(self, head_request: bool = False):
        return self.reader.read_final(head_request)

    def read_responses(self, n: int, head_requests=()) -> list:
        return [self.read_response(i in head_requests) for i in range(n)]

    def request(self, method: str, target: str, **kw) -> Response:
        self.send(build_request(method, target, **kw))
        return self.read_response(head_request=(method == "HEAD"))

    def read_until_close(self, timeout: float = 5.0, scale: bool = True) -> tuple[bytes, bool]:
        """Everything until EOF (or reset), and whether EOF came within `timeout` (times SLOW
        unless scale is False)."""
        deadline = time.monotonic() + timeout * (SLOW if scale else 1.0)
        data = bytearray(self.reader.buf)
        self.reader.buf.clear()
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return bytes(data), False
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(1 << 16)
            except ConnectionResetError:
                return bytes(data), True
            except socket.timeout:
                return bytes(data), False
            if not chunk:
                return bytes(data), True
            data += chunk

    def closed_by_peer(self, timeout: float = 5.0) -> bool:
        """True if the peer closes with nothing more to say within `timeout`; raises if it sends
        anything."""
        data, closed = self.read_until_close(timeout)
        if data:
            raise AssertionError(f"expected the connection to close, got {data[:300]!r}")
        return closed

    def nothing_within(self, seconds: float) -> bool:
        """True if no byte (and no EOF) arrives within `seconds`."""
        if self.reader.buf:
            return False
        old = self.sock.gettimeout()
        self.sock.settimeout(seconds)
        try:
            chunk = self.sock.recv(1 << 16)
        except (socket.timeout, BlockingIOError):
            return True
        except ConnectionResetError:
            return False
        finally:
            self.sock.settimeout(old)
        self.reader.buf += chunk
        return False

    def reset(self) -> None:
        """Closes with an RST (SO_LINGER 0)."""
        import struct
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.sock.close()

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def exchange(host: str, port: int, data: bytes,
             timeout: float = 5.0) -> tuple[list, bool, bytes]:
    """Sends raw bytes (without closing our side), reads until the server closes or `timeout`;
    returns (responses, closed, raw)."""
    with Conn(host, port, timeout * SLOW) as c:
        try:
            c.send(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused early: what it answered is still readable
        raw, closed = c.read_until_close(timeout)
    return parse_responses(raw), closed, raw


# ---------------------------------------------------------------------------------------------
# Reference values


def fib(n: int) -> int:
    """F(n), exactly, by fast doubling."""
    def pair(k):  # (F(k), F(k+1))
        if k == 0:
            return 0, 1
        a, b = pair(k >> 1)
        c = a * (2 * b - a)
        d = a * a + b * b
        return (d, c + d) if k & 1 else (c, d)
    return pair(n)[0]


def fib_mod(n: int, m: int) -> int:
    """F(n) mod m, by fast doubling."""
    def pair(k):
        if k == 0:
            return 0, 1
        a, b = pair(k >> 1)
        c = a * ((2 * b - a) % m) % m
        d = (a * a + b * b) % m
        return (d, (c + d) % m) if k & 1 else (c, d)
    return pair(n)[0]


def work_result(n: int) -> int:
    """What /work computes: sum of i * 2654435761 for i < n, modulo 2^64."""
    return (2654435761 * (n * (n - 1) // 2)) % (1 << 64)


def calc_result(x: float, terms: int) -> float:
    """/calc's series, summed in the same order: sum_{i<T} (-1)^i x^(i+1) / (i+1)."""
    s = 0.0
    for i in range(terms):
        s += ((-1.0) ** i) * (x ** (i + 1.0)) / (i + 1.0)
    return s


# ---------------------------------------------------------------------------------------------
# Load

WRK = shutil.which("wrk")


def wrk_figures(out: str):
    """(requests, socket_errors dict or None, non_2xx, output) of wrk's output."""
    m = re.search(r"(\d+) requests in", out)
    assert m, out
    errors = None
    e = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if e:
        errors = dict(zip(("connect", "read", "write", "timeout"), map(int, e.groups())))
    n = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return int(m[1]), errors, int(n[1]) if n else 0, out


def wrk_command(url: str, connections: int, seconds: int, threads: int = 1,
                script: Path | None = None) -> list[str]:
    scripted = ["-s", str(script)] if script else []
    return [WRK, f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency", *scripted, url]


def wrk(url: str, connections: int, seconds: int, threads: int = 1, nofile: int | None = None,
        script: Path | None = None):
    """Runs wrk (with a Lua `script` that makes its requests, if given); returns (requests,
    socket_errors dict or None, non_2xx, output)."""
    def preexec():
        if nofile:
            raise_nofile(nofile)

    p = subprocess.run(wrk_command(url, connections, seconds, threads, script),
                       capture_output=True, text=True, timeout=seconds + 60, preexec_fn=preexec)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    return wrk_figures(out)


class WrkUntilStopped:
    """wrk's load for as long as the test needs it: started by `with`, ended by stop() (SIGINT:
    wrk prints its figures for the time it ran and exits 0; left, the `with` kills it). A load that must cover restarts or an
    upgrade cannot be given a fixed duration: a loaded machine takes longer over them, and wrk
    would end first. `bound_s` only ends a run whose test never stops it."""

    def __init__(self, url: str, connections: int, threads: int = 1,
                 script: Path | None = None, bound_s: int = 600):
        self.proc = subprocess.Popen(wrk_command(url, connections, bound_s, threads, script),
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def stop(self):
        """Ends the load; (requests, socket_errors dict or None, non_2xx, output)."""
        still_running = self.proc.poll() is None
        if still_running:
            self.proc.send_signal(signal.SIGINT)
        out, _ = self.proc.communicate(timeout=60)
        assert still_running, f"wrk ended by itself, before the test was done:\n{out}"
        assert self.proc.returncode == 0, out
        return wrk_figures(out)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:  # not stopped: the test failed on the way
            self.proc.kill()
            self.proc.communicate(timeout=60)
