"""The servers of the benchmark: how each is built or configured, started, and measured.

Every server is started fresh for every run from the files in bench/peers/ (configuration
templates with @NAMES@ filled in here) and answers the same URLs from the same document root:

    GET /hello        `Hello, World!`  (a 13-byte file for h2o and lighttpd, which have no
                                        fixed-response directive in Debian's builds)
    GET /1k.txt, GET /100k.txt         files of 1,024 and 102,400 bytes in the run's root
    POST /echo        the body back    (rivet, lighttpd via mod_magnet, cpp-httplib)
    POST /json        rivet's /json    (rivet, cpp-httplib)
    GET /work?n=100, GET /wait?ms=0, GET /cpu?ms=0    rivet's demo routes (rivet, rivet_base)

Two modes: per-core (the server pinned to one core, one thread/process doing the work) and
whole-machine (no pinning, one thread or process per core where the server has a setting).
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
PEERS = BENCH_DIR / "peers"
PAGE = os.sysconf("SC_PAGE_SIZE")

HELLO = b"Hello, World!"
# name -> size of the files of the static scenarios (deterministic content, printable).
STATIC_FILES = {"1k.txt": 1024, "100k.txt": 100 * 1024}

# What each server can be asked, and why not where it cannot (shown in the n/a cells).
ALL_FEATURES = ("hello", "pipeline", "close", "static", "echo", "json", "work", "wait", "cpu")
# rivet's own demo routes that the engine's hand-offs are measured on (bench.py's work_c100 and
# wait_c100): no peer has them.
_RIVET_ONLY = {
    "work": "no /work: rivet's offloaded demo route (a request handed to the worker pool and back)",
    "wait": "no /wait: rivet's awaiting demo route (a coroutine handler)",
    "cpu": "no /cpu: rivet's demo route awaiting the worker pool (a coroutine handler)",
}
UNSUPPORTED = {
    "rivet": {},
    # Another build of rivet (RIVET_BASE_BIN) beside this one, for before/after figures of a
    # change from one interleaved run; only when asked for (--servers rivet,rivet_base,...).
    "rivet_base": {},
    "nginx": {
        **_RIVET_ONLY,
        "echo": "nginx-light cannot send a request body back without a backend or a module",
        "json": "nginx-light has no scripting to compute a JSON answer",
    },
    "h2o": {
        **_RIVET_ONLY,
        "echo": "Debian's h2o is built without mruby: no handler can send a body back",
        "json": "Debian's h2o is built without mruby: no handler can compute JSON",
    },
    "lighttpd": {
        **_RIVET_ONLY,
        "json": "no JSON library in lighttpd's Lua (mod_magnet)",
    },
    "httplib": {
        **_RIVET_ONLY,
        "pipeline": "cpp-httplib 0.11 answers only the first of pipelined requests",
    },
    "floor": {
        **_RIVET_ONLY,
        "close": "the floor ignores `Connection: close` (it is not an HTTP server)",
        "static": "the floor answers only /hello",
        "echo": "the floor answers only /hello",
        "json": "the floor answers only /hello",
    },
}
KNOWN_SERVERS = tuple(UNSUPPORTED)
SERVERS = tuple(n for n in UNSUPPORTED if n != "rivet_base")  # the default set
# Helper processes a server forks that do no serving (h2o's crash-report helper).
IGNORED_CHILDREN = {"h2o": {"perl"}}


def log(msg: str) -> None:
    import sys

    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# /proc


def children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                data = f.read()
        except OSError:
            continue
        ppid = int(data[data.rindex(")") + 2 :].split()[1])
        kids.setdefault(ppid, []).append(int(entry))
    return kids


def proc_comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def process_tree(pid: int, ignore: set[str] = frozenset()) -> list[int]:
    """pid and its descendants (processes, not threads), less helpers named in `ignore`."""
    kids = children_map()
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        if p != pid and proc_comm(p) in ignore:
            continue
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def proc_cpu_ticks(pid: int) -> int:
    """utime + stime of one process (all its threads), in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        data = f.read()
    fields = data[data.rindex(")") + 2 :].split()
    return int(fields[11]) + int(fields[12])


def proc_rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * PAGE


def proc_status_kb(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def proc_threads(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


# --------------------------------------------------------------------------------------------
# Ports and processes


def port_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


class Ports:
    def __init__(self, base: int):
        self.next = base

    def take(self) -> int:
        while not port_free(self.next):
            self.next += 1
        self.next += 1
        return self.next - 1


def wait_listening(proc: subprocess.Popen, port: int, timeout: float = 10.0) -> str | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return f"exited with status {proc.returncode} before listening"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return None
        except OSError:
            time.sleep(0.02)
    return f"not listening on port {port} after {timeout:.0f} s"


def tail(path: Path, n: int = 600) -> str:
    try:
        return path.read_text(errors="replace")[-n:]
    except OSError:
        return ""


def cpu_list(text: str) -> list[int]:
    """A `taskset -c` list (0-7,12) as CPU numbers; ValueError when it is not one."""
    cpus: list[int] = []
    for part in filter(None, text.replace(" ", "").split(",")):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            raise ValueError(text)
        a, b = int(m[1]), int(m[2] or m[1])
        if b < a:
            raise ValueError(text)
        cpus += range(a, b + 1)
    return cpus


def run_text(cmd: list[str]) -> str:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
        return (r.stdout + r.stderr).strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"({e})"


class Server:
    """A fresh server process for one run."""

    def __init__(self, name: str, port: int, cmd: list[str], logdir: Path):
        self.name, self.port, self.cmd = name, port, cmd
        self.log = logdir / f"{name}-{port}.log"
        self.proc: subprocess.Popen | None = None
        self.exit_status: int | None = None
        self.stop_note = ""
        self.ignore = IGNORED_CHILDREN.get(name, set())

    def start(self) -> str | None:
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(
                self.cmd, cwd=REPO, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True,
            )  # fmt: skip
        err = wait_listening(self.proc, self.port)
        if err:
            self.stop()
            return f"{err}; log: {tail(self.log).strip()!r}"
        return None

    @property
    def pid(self) -> int:
        assert self.proc
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def tree(self) -> list[int]:
        return process_tree(self.pid, self.ignore)

    def cpu_ticks(self) -> int:
        total = 0
        for p in self.tree():
            try:
                total += proc_cpu_ticks(p)
            except OSError:
                pass
        return total

    def rss_bytes(self) -> int:
        total = 0
        for p in self.tree():
            try:
                total += proc_rss_bytes(p)
            except OSError:
                pass
        return total

    def peak_rss_bytes(self) -> int:
        """Sum over the server's processes of their peak resident set (VmHWM)."""
        total = 0
        for p in self.tree():
            try:
                total += proc_status_kb(p, "VmHWM") * 1024
            except OSError:
                pass
        return total

    def threads(self) -> int:
        return sum(proc_threads(p) for p in self.tree())

    def pause(self) -> None:
        """SIGSTOP every process of the server (it runs in a session of its own)."""
        os.killpg(self.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.killpg(self.pid, signal.SIGCONT)

    def stop(self) -> None:
        if not self.proc:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.stop_note = "did not exit within 10 s of SIGTERM; killed"
                self.proc.kill()
                self.proc.wait()
        # Worker processes (nginx, lighttpd in whole-machine mode) share the session.
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        self.exit_status = self.proc.returncode


# --------------------------------------------------------------------------------------------
# The fleet


def static_content(size: int) -> bytes:
    """Deterministic printable bytes, a newline every 64: the file every server serves."""
    return bytes(10 if i % 64 == 63 else 33 + (i * 31 + i // 64) % 94 for i in range(size))


def cached_path(src: Path, out_dir: Path) -> Path:
    """Where build_cached keeps the binary of src: one per content of the source."""
    return out_dir / f"{src.stem}-{hashlib.sha256(src.read_bytes()).hexdigest()[:16]}"


def build_cached(src: Path, out_dir: Path, cmd_for: "callable") -> tuple[Path | None, str]:
    """Compile src once per content: the binary is kept in out_dir."""
    out = cached_path(src, out_dir)
    if out.exists():
        return out, ""
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp_out = out.with_suffix(".tmp")
    cmd = cmd_for(tmp_out)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, f"{' '.join(cmd[:3])}… failed: {r.stderr.strip()[-400:]}"
    tmp_out.rename(out)
    return out, ""


class Fleet:
    """Knows how to start each server in each mode; owns the run's temp dir and document root."""

    def __init__(self, settings: dict, tmp: Path, rivet_bin: Path, cache: Path):
        self.s, self.tmp, self.rivet_bin, self.cache = settings, tmp, rivet_bin, cache
        self.ports = Ports(settings["port_base"])
        self.logs = tmp / "logs"
        self.logs.mkdir()
        self.prefix = tmp / "conf"
        self.prefix.mkdir()
        self.root = tmp / "www"
        self.root.mkdir()
        (self.root / "hello").write_bytes(HELLO)
        for name, size in STATIC_FILES.items():
            (self.root / name).write_bytes(static_content(size))
        self.setup_errors: dict[str, str] = {}
        self.versions: dict[str, str] = {}
        self.nofile = __import__("resource").getrlimit(__import__("resource").RLIMIT_NOFILE)[0]
        spec = settings.get("machine_server_cpus", "")
        # Whole-machine mode: one thread or worker per core the server may use.
        self.cores = len(cpu_list(spec)) if spec else len(os.sched_getaffinity(0))
        self.machine_pin = ["taskset", "-c", spec] if spec else []
        self._prepare()

    def _prepare(self) -> None:
        names = self.s["servers"]
        if "rivet" in names:
            if not os.access(self.rivet_bin, os.X_OK):
                self.setup_errors["rivet"] = f"{self.rivet_bin} not found (build it: make build)"
            else:
                self.versions["rivet"] = run_text([str(self.rivet_bin), "--version"])
        if "rivet_base" in names:
            self.rivet_base_bin = os.environ.get("RIVET_BASE_BIN", "")
            if not self.rivet_base_bin or not os.access(self.rivet_base_bin, os.X_OK):
                self.setup_errors["rivet_base"] = "set RIVET_BASE_BIN to the rivet binary to compare with"
            else:
                self.versions["rivet_base"] = (run_text([self.rivet_base_bin, "--version"])
                                               + f" (base: {self.rivet_base_bin})")  # fmt: skip
        for name, binary, vflag in (("nginx", "nginx", "-v"), ("h2o", "h2o", "--version"),
                                    ("lighttpd", "lighttpd", "-v")):  # fmt: skip
            if name not in names:
                continue
            path = shutil.which(binary) or f"/usr/sbin/{binary}"
            setattr(self, f"{name}_bin", path)
            if not os.access(path, os.X_OK):
                self.setup_errors[name] = f"{binary} not installed (bash scripts/setup.sh installs it)"
            else:
                self.versions[name] = run_text([path, vflag]).splitlines()[0]
        if "lighttpd" in names and "lighttpd" not in self.setup_errors:
            if not Path("/usr/lib/lighttpd/mod_magnet.so").exists():
                self.setup_errors["lighttpd"] = "lighttpd-modules-lua (mod_magnet) not installed"
        if "httplib" in names:
            src = PEERS / "httplib_hello.cpp"
            flags = run_text(["pkg-config", "--cflags", "--libs", "cpp-httplib"])
            # The version beside the binary, for a machine without the headers that has the
            # binary from bench/portable.sh.
            built = cached_path(src, self.cache / "bin")
            version_file = built.with_suffix(".version")
            if not Path("/usr/include/httplib.h").exists() or "httplib" not in flags:
                if built.exists() and version_file.exists():
                    self.httplib_bin = built
                    self.versions["httplib"] = version_file.read_text().strip()
                else:
                    self.setup_errors["httplib"] = "libcpp-httplib-dev not installed"
            else:
                cxx = shutil.which("g++") or "g++"
                parts = shlex.split(flags)
                cflags = [p for p in parts if not p.startswith("-l")]
                libs = [p for p in parts if p.startswith("-l")]
                self.httplib_bin, err = build_cached(
                    src, self.cache / "bin",
                    lambda out: [cxx, "-O2", "-std=c++17", "-pthread", *cflags, "-o", str(out),
                                 str(src), *libs],
                )  # fmt: skip
                if err:
                    self.setup_errors["httplib"] = err
                ver = re.search(r'CPPHTTPLIB_VERSION "([^"]+)"', Path("/usr/include/httplib.h").read_text())
                self.versions["httplib"] = f"cpp-httplib {ver.group(1) if ver else '?'} (Debian), " + (
                    run_text([cxx, "--version"]).splitlines()[0])  # fmt: skip
                if self.httplib_bin:
                    version_file.write_text(self.versions["httplib"] + "\n")
        if "floor" in names:
            cc = shutil.which("gcc") or "gcc"
            src = BENCH_DIR / "floor.c"
            self.floor_bin, err = build_cached(
                src, self.cache / "bin", lambda out: [cc, "-O2", "-o", str(out), str(src)]
            )
            if err:
                self.setup_errors["floor"] = err
            self.versions["floor"] = "bench/floor.c, " + run_text([cc, "--version"]).splitlines()[0]

    def supports(self, name: str, feature: str) -> str | None:
        """None when `name` can serve `feature`, else why not."""
        return UNSUPPORTED[name].get(feature)

    def _template(self, name: str, file: str, port: int, mode: str) -> Path:
        whole = mode == "machine"
        n = self.cores if whole else 1
        root_user = os.geteuid() == 0
        subs = {
            "@PREFIX@": str(self.prefix),
            "@PORT@": str(port),
            "@NOFILE@": str(self.nofile),
            "@ROOT@": str(self.root),
            "@BENCH@": str(BENCH_DIR),
            "@MASTER@": "on" if whole else "off",
            "@WORKERS@": str(n if whole else (1 if name == "nginx" else 0)),
            "@THREADS@": str(n),
            "@MAXCONN@": str(min(20000, self.nofile // 2)),
            # Running as root, nginx's workers and h2o would switch to `nobody`, who cannot read
            # the run's private temp dir: keep the current user.
            "@USER@": ("user root;" if name == "nginx" else "user: root") if root_user else "",
        }
        text = (PEERS / file).read_text()
        for k, v in subs.items():
            text = text.replace(k, v)
        conf = self.prefix / f"{name}-{port}.conf"
        conf.write_text(text)
        return conf

    def command(self, name: str, port: int, mode: str, rivet: dict | None = None) -> list[str]:
        """The server's command line; `rivet` overrides rivet's threads/workers and adds flags
        (bench/models.py: {"threads": 2, "workers": 4, "flags": [...]})."""
        whole = mode == "machine"
        pin = self.machine_pin if whole else ["taskset", "-c", str(self.s["server_cpu"])]
        n = str(self.cores if whole else 1)
        if name in ("rivet", "rivet_base"):
            r = rivet or {}
            return pin + [
                str(self.rivet_bin if name == "rivet" else self.rivet_base_bin), "--port", str(port), "--bind", "127.0.0.1",
                "--threads", str(r.get("threads", n)), "--workers", str(r.get("workers", 1)),
                "--root", str(self.root),
            ] + list(r.get("flags", []))  # fmt: skip
        if name == "nginx":
            conf = self._template(name, "nginx.conf", port, mode)
            return pin + [self.nginx_bin, "-p", str(self.prefix), "-e",
                          str(self.prefix / "error.log"), "-c", str(conf)]  # fmt: skip
        if name == "h2o":
            return pin + [self.h2o_bin, "-c", str(self._template(name, "h2o.conf", port, mode))]
        if name == "lighttpd":
            conf = self._template(name, "lighttpd.conf", port, mode)
            return pin + [self.lighttpd_bin, "-D", "-f", str(conf)]
        if name == "httplib":
            return pin + [str(self.httplib_bin), str(port), str(self.root)]
        if name == "floor":
            return pin + [str(self.floor_bin), str(port)]
        raise ValueError(name)

    def command_template(self, name: str, mode: str, rivet: dict | None = None) -> str:
        if name in self.setup_errors:
            return "(not available)"
        text = " ".join(shlex.quote(c) for c in self.command(name, 0, mode, rivet))
        text = text.replace(str(self.tmp), "$TMP").replace(str(self.cache), "$CACHE")
        text = text.replace(str(REPO) + "/", "")
        return re.sub(r"(--port |floor-[0-9a-f]+ |hello-[0-9a-f]+ |-)0\b", r"\1$PORT", text)

    def start(self, name: str, mode: str, rivet: dict | None = None) -> tuple[Server | None, str | None]:
        if name in self.setup_errors:
            return None, self.setup_errors[name]
        port = self.ports.take()
        srv = Server(name, port, self.command(name, port, mode, rivet), self.logs)
        err = srv.start()
        if err:
            return None, f"failed to start: {err}"
        return srv, None
