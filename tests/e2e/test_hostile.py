"""Defects found by hostile testing (issue 12), each reproduced on the real binary: a deeply
nested configuration, descriptor exhaustion through the file cache, a request received just
before SIGTERM, directory listings of symlinks that leave the root, and the log of a paused
accept loop."""
import signal
import subprocess
import time

import pytest

from ops_e2e import rss_kib, wait_for, write_config
from rivet_e2e import BIN, SANITIZED, SLOW

# The sanitizers' runtime needs descriptors of its own: UBSan's vptr check tests that memory is
# readable by writing it into a pipe, and with no descriptor left it reports "object has invalid
# vptr" for a valid object. Tests that exhaust the process's descriptors run unsanitized only.
needs_unsanitized = pytest.mark.skipif(
    SANITIZED, reason="the sanitizer runtime needs descriptors (a pipe) to check memory")

# ---------------------------------------------------------------------------------------------
# 1. A deeply nested configuration


def deep_config(path, depth=100_000):
    path.write_text('{"server":\n' + "[" * depth + "]" * depth + "}")
    return path


def test_deep_config_is_refused_at_start_quickly(tmp_path):
    cfg = deep_config(tmp_path / "deep.json")
    for extra in ((), ("--check-config",)):
        t0 = time.monotonic()
        p = subprocess.run([str(BIN), "--config", str(cfg), *extra], capture_output=True,
                           text=True, timeout=20 * SLOW, stdin=subprocess.DEVNULL)
        took = time.monotonic() - t0
        assert p.returncode == 2, (p.returncode, p.stderr[-500:])
        assert "deep.json:2: nested deeper than 16 levels" in p.stderr, p.stderr[-500:]
        assert took < 5 * SLOW, took  # before the fix: 1.4 s at depth 20k, unbounded at 100k


def test_deep_config_on_sighup_is_refused_and_later_reloads_work(rivet, tmp_path):
    cfg = tmp_path / "rivet.json"
    write_config(cfg, {"limits": {"max_body_bytes": 1000}})
    srv = rivet(args=("--config", cfg, "--threads", "1", "--workers", "1"))
    before = rss_kib(srv.proc.pid)
    deep_config(cfg)
    srv.send_signal(signal.SIGHUP)
    wait_for(lambda: "nested deeper than 16 levels" in srv.stderr(), what="the refusal")
    # Memory did not grow per level (before the fix: some 260 MB/s, without end).
    assert rss_kib(srv.proc.pid) < before + 20_000
    assert srv.post("/echo", b"y" * 500).status == 200  # the old configuration still holds
    # A later reload is processed.
    write_config(cfg, {"limits": {"max_body_bytes": 100}})
    srv.send_signal(signal.SIGHUP)
    wait_for(lambda: "applied" in srv.stderr(), what="the next reload")
    wait_for(lambda: srv.post("/echo", b"y" * 500).status == 413, what="the new limit")
    # And SIGTERM ends it (the fixture's teardown checks exit code 0 within 15 s).


# ---------------------------------------------------------------------------------------------
# 5. A directory listing must tell nothing about what lies outside the root


def test_listing_leaves_out_symlinks_that_leave_the_root(rivet, tmp_path):
    import os
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "files" / "inner").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_bytes(b"x" * 15)
    (root / "files" / "a.txt").write_bytes(b"abc")
    (root / "files" / "big.txt").write_bytes(b"y" * 4321)
    os.symlink("../../outside/secret.txt", root / "files" / "leak")
    os.symlink("/etc", root / "files" / "etc")
    os.symlink(outside, root / "files" / "outdir")
    os.symlink("big.txt", root / "files" / "inside-link")
    os.symlink("inner", root / "files" / "inside-dir")
    os.symlink("missing", root / "files" / "dangling")
    srv = rivet(root=root)
    for name in ("leak", "etc/", "outdir/"):
        assert srv.get("/files/" + name).status == 403, name
    page = srv.get("/files/").body.decode()
    for name in ("leak", "etc", "outdir", "dangling"):
        assert f'"./{name}' not in page and f">{name}" not in page, (name, page)
    assert '>15<' not in page, page  # the outside file's size
    # Links that stay inside are listed as what a GET would serve.
    assert 'href="./inside-link">inside-link</a>' in page and ">4321<" in page, page
    assert 'href="./inside-dir/">inside-dir/</a>' in page, page
    assert 'href="./a.txt">a.txt</a>' in page and 'href="./inner/">inner/</a>' in page, page
    assert srv.get("/files/inside-link").body == b"y" * 4321


# ---------------------------------------------------------------------------------------------
# 6. Out of descriptors: the pause of accepting is logged once, and its end once


def hold_connections(srv, n):
    """n keep-alive connections, each with a request sent (the listener defers accepting until
    data arrives); returns them and how many were answered. Answers are read as they come, until
    more than 20 have (the server has descriptors for that many, however busy the machine: a
    fixed wait could end before a loaded machine answers them) and then none more for a while."""
    import selectors
    from rivet_e2e import Conn
    conns = []
    for _ in range(n):
        c = Conn(srv.host, srv.port, timeout=10 * SLOW)
        c.send(b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        conns.append(c)
    waiting = selectors.DefaultSelector()
    for c in conns:
        waiting.register(c.sock, selectors.EVENT_READ, c)
    answered = 0
    deadline = time.monotonic() + 60 * SLOW
    last_answer = time.monotonic()
    while time.monotonic() < deadline:
        ready = waiting.select(timeout=0.1)
        for key, _ in ready:
            waiting.unregister(key.fileobj)
            try:
                answered += key.data.read_response().status == 200
            except OSError:
                pass
        if ready:
            last_answer = time.monotonic()
        elif answered > 20 and time.monotonic() - last_answer > 0.5 * SLOW:
            break
    waiting.close()
    return conns, answered


@needs_unsanitized
def test_descriptor_shortage_is_logged_once_per_pause(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "1"), nofile_cap=64)
    conns, answered = hold_connections(srv, 80)
    assert 20 < answered < 64, answered  # some were accepted, the rest wait in the backlog
    time.sleep(1.5 * SLOW)  # before the fix: a line every 100 ms, 15 here
    paused = srv.stderr().count("accepting paused")
    assert paused == 1, srv.stderr()[-2000:]
    for c in conns:
        c.close()
    # The end is logged once, with how long the pause lasted and how often it was retried.
    wait_for(lambda: srv.get("/hello").status == 200, what="accepting again")
    wait_for(lambda: "accepting resumed" in srv.stderr(), what="the resume line")
    err = srv.stderr()
    assert err.count("accepting paused") == 1 and err.count("accepting resumed") == 1, err
    import re
    m = re.search(r"accepting resumed after ([\d.]+) s out of file descriptors "
                  r"\((\d+) retries failed\)", err)
    assert m and float(m[1]) >= 1.0 and int(m[2]) >= 3, err[-1000:]


# ---------------------------------------------------------------------------------------------
# 3. A request received before SIGTERM is answered, with Connection: close


def unsent(sock):
    """Bytes of a socket's output not yet acknowledged by the peer (SIOCOUTQ)."""
    import array
    import fcntl
    import termios
    buf = array.array("i", [0])
    fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, buf)
    return buf[0]


def server_unread(server_port, client_port):
    """Bytes waiting in the receive queue of the server's end of a loopback connection."""
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            local, remote, queues = fields[1], fields[2], fields[4]
            if (int(local.split(":")[1], 16) == server_port
                    and int(remote.split(":")[1], 16) == client_port):
                return int(queues.split(":")[1], 16)
    return None


def test_request_received_before_sigterm_is_answered(rivet):
    from rivet_e2e import build_request
    outcomes = []
    for run in range(3):
        # --inline-heavy: /calc runs on the loop, which it holds. (An 8 MB /json document did,
        # before req.json() refused documents over 1 MiB.)
        srv = rivet(args=("--threads", "1", "--workers", "1", "--inline-heavy",
                          "--drain-timeout", "60"))
        a = srv.connect(timeout=60)
        assert a.request("GET", "/hello").status == 200
        b = srv.connect(timeout=60)
        # About 1.5 s of work on a quiet machine, longer on a busy one (/work's most is 0.3 s).
        post = build_request("GET", "/calc?value=0.5&terms=50000000")
        # All but the last byte first, read by the server; then the last byte: once the server
        # has read it too, the loop is running the work.
        b.send(post[:-1])
        client_port = b.sock.getsockname()[1]
        all_read = lambda: unsent(b.sock) == 0 and server_unread(srv.port, client_port) == 0
        wait_for(all_read, timeout=10, what="the server to read the request so far")
        b.send(post[-1:])
        wait_for(all_read, timeout=10, what="the server to read the last byte")
        # While the loop is busy, A's next request arrives, then the signal: the drain finds A
        # with its request unread in the socket.
        a.send(b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        time.sleep(0.005)
        srv.send_signal(signal.SIGTERM)
        assert b.read_response().status == 200
        raw, closed = a.read_until_close(10 * SLOW)
        outcomes.append(raw[:120])
        assert raw.startswith(b"HTTP/1.1 200 ") and b"Connection: close" in raw, (run, outcomes)
        assert closed
        a.close()
        b.close()
        assert srv.wait(60 * SLOW) == 0


# ---------------------------------------------------------------------------------------------
# 2. The file cache and the descriptor limit


def open_descriptors(pid):
    import os
    fds = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            fds[fd] = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            pass
    return fds


def test_file_cache_fits_the_descriptor_limit(rivet, tmp_path):
    from rivet_e2e import Conn
    root = tmp_path / "root"
    (root / "many").mkdir(parents=True)
    for i in range(1100):
        (root / "many" / f"f{i}.bin").write_bytes(bytes([i % 256]) * 65536)  # sent with sendfile
    (root / "small.txt").write_bytes(b"hello small")
    srv = rivet(args=("--threads", "2", "--workers", "1"), root=root, nofile_cap=1024)
    conns = [srv.connect() for _ in range(4)]  # the kernel spreads them over both loops
    statuses = {}
    for i in range(1100):
        r = conns[i % 4].request("GET", f"/many/f{i}.bin")
        statuses[r.status] = statuses.get(r.status, 0) + 1
        assert r.status != 200 or r.body[:1] == bytes([i % 256]), i
    for c in conns:
        c.close()
    assert statuses == {200: 1100}, statuses  # before the fix: 388 answered 500
    # The caches hold at most a quarter of the limit (256), with room to spare for the rest.
    held = open_descriptors(srv.proc.pid)
    files = [t for t in held.values() if "/many/" in t]
    assert len(files) <= 256, len(files)
    assert len(held) < 512, len(held)  # before the fix: 1,022 held
    # Uncached files and concurrent connections are served as before.
    assert srv.get("/small.txt").body == b"hello small"
    many = [srv.connect() for _ in range(10)]
    for c in many:
        c.send(b"GET /small.txt HTTP/1.1\r\nHost: x\r\n\r\n")
    assert [c.read_response().status for c in many] == [200] * 10
    for c in many:
        c.close()


def test_deleted_file_is_closed_after_its_ttl(rivet, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    big = root / "big.bin"
    big.write_bytes(b"z" * (50 << 20))
    srv = rivet(args=("--threads", "2", "--workers", "1"), root=root)

    def held_open_after_a_lookup() -> bool:
        # One byte of it, so that the look in /proc follows the cache's lookup at once. After a
        # whole 50 MB answer on a loaded machine the entry can be past its 1 s TTL, and swept,
        # before the look: a run beside stress-ng failed so.
        r = srv.get("/big.bin", headers={"Range": "bytes=0-0"}, timeout=30)
        assert r.status == 206 and r.body == b"z", r
        return any(t.endswith("/big.bin") for t in open_descriptors(srv.proc.pid).values())

    # Bounded by tries, not time: each one is a fresh lookup on one loop or the other.
    assert any(held_open_after_a_lookup() for _ in range(50)), "the cache never held it open"
    big.unlink()
    # The cache TTL is 1 s and the sweep runs every second: before the fix the descriptor (and
    # the 50 MB) stayed until the server stopped. The deadline is for a loaded machine.
    wait_for(lambda: not any("big.bin" in t for t in open_descriptors(srv.proc.pid).values()),
             timeout=30, what="the deleted file's descriptor to close")
    assert srv.get("/big.bin").status == 404


@needs_unsanitized
def test_cache_gives_descriptors_back_under_pressure(rivet, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    for i in range(8):
        (root / f"big{i}.bin").write_bytes(b"b" * 100_000)
    for i in range(40):
        (root / f"small{i}.txt").write_bytes(b"small %d" % i)
    cfg = write_config(tmp_path / "rivet.json", {"cache": {"ttl_seconds": 60}})  # no sweep
    srv = rivet(args=("--config", cfg, "--threads", "1", "--workers", "1"), root=root,
                nofile_cap=64)
    x = srv.connect()
    for i in range(5):  # five files held open by the cache
        assert x.request("GET", f"/big{i}.bin").status == 200
    conns, _ = hold_connections(srv, 80)  # every other descriptor goes to a connection
    assert "accepting paused" in srv.stderr()
    # Out of descriptors: the cache closes its own and opens the new file (before the fix: 500).
    r = x.request("GET", "/big5.bin")
    assert r.status == 200 and len(r.body) == 100_000, r
    # Accepting takes the freed descriptors back for the waiting connections; once the cache
    # holds none, a file that cannot be opened is a 503 with Retry-After, never a 500.
    seen = []
    for i in range(40):
        time.sleep(0.3 * SLOW)
        r = x.request("GET", f"/small{i}.txt")
        seen.append(r.status)
        assert r.status in (200, 503), seen
        if r.status == 503:
            assert r.header("Retry-After") == "1", r
            break
    assert 503 in seen, seen
    for c in conns:
        c.close()
    # The 503 was not cached: with descriptors back, the same file is served.
    wait_for(lambda: x.request("GET", f"/small{i}.txt").status == 200, what="the file again")
    x.close()
