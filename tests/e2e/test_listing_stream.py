"""Directory listings are streamed and bounded (issue 26, item 10). Before, a 100,000-entry
directory was an 18.5 MB page built whole on the I/O thread: 40 slow readers held 412 MB and a
/hello on the same loop timed out. Now the directory is read in batches between other work, at
most `static.listing_max_entries` rows are listed (the page says when it was cut), and the page
leaves in slices as the client reads."""
import os
import re
import socket
import subprocess
import threading
import urllib.parse

import pytest

from ops_e2e import rss_kib, wait_for, write_config
from rivet_e2e import BIN, SANITIZED, SLOW, Conn, build_request

HUGE = 100_000      # files in the huge directory
DEFAULT_MAX = 10_000  # static.listing_max_entries' default
READERS = 40
ROW = re.compile(r'<tr><td><a href="\./([^"]*)">')


@pytest.fixture(scope="module")
def huge_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("listing")
    huge = root / "huge"
    huge.mkdir()
    fd = os.open(huge, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for i in range(HUGE):
            os.close(os.open(f"file-{i:06d}.txt", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
    finally:
        os.close(fd)
    return root


def rows(page: str) -> list:
    """The links of the entries' rows (not the "../" row's)."""
    return ROW.findall(page)


def test_a_huge_directory_is_listed_up_to_the_bound_with_the_cut_notice(rivet, huge_root):
    srv = rivet(root=huge_root)
    r = srv.get("/huge/", timeout=30)
    assert r.status == 200 and r.header("Content-Type") == "text/html; charset=utf-8", r
    assert r.header("Transfer-Encoding") == "chunked", r  # streamed, not built whole
    page = r.body.decode()
    listed = rows(page)
    assert len(listed) == DEFAULT_MAX, len(listed)
    assert f"Listing cut at {DEFAULT_MAX} entries" in page, page[-500:]
    assert page.endswith("</html>\n"), page[-200:]
    names = listed
    assert names == sorted(names) and len(set(names)) == DEFAULT_MAX  # sorted, no repeats
    assert srv.request("HEAD", "/huge/").body == b""


def small_directory(root, files: int):
    d = root / "small"
    d.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        (d / f"f{i}").write_bytes(b"x")
    return root


@pytest.mark.parametrize("limit,cut", [(5, True), (6, False)])
def test_listing_max_entries_from_the_command_line(rivet, tmp_path, limit, cut):
    root = small_directory(tmp_path / "root", 6)
    srv = rivet(args=("--threads", "1", "--workers", "1", "--listing-max-entries", str(limit)),
                root=root)
    page = srv.get("/small/").body.decode()
    assert len(rows(page)) == min(limit, 6), page
    assert (f"Listing cut at {limit} entries" in page) == cut, page


def test_listing_max_entries_from_the_configuration_file(rivet, tmp_path):
    root = small_directory(tmp_path / "root", 6)
    cfg = write_config(tmp_path / "rivet.json", {"static": {"listing_max_entries": 2}})
    srv = rivet(args=("--config", cfg, "--threads", "1", "--workers", "1"), root=root)
    page = srv.get("/small/").body.decode()
    assert len(rows(page)) == 2 and "Listing cut at 2 entries" in page, page


def test_a_listing_max_entries_of_zero_is_refused():
    p = subprocess.run([str(BIN), "--listing-max-entries", "0", "--port", "0"],
                       capture_output=True, text=True, timeout=10 * SLOW,
                       stdin=subprocess.DEVNULL)
    assert p.returncode == 2, p
    assert "--listing-max-entries: expected an integer from 1 to 10000000" in p.stderr, p


def slow_reader(host: str, port: int, asked: list, started: list, failures: list,
                stop: threading.Event):
    """Asks for the huge listing, reads its first 64 KiB (the rows have begun: the directory
    was read and sorted), then reads nothing until told to stop."""
    try:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(60 * SLOW)
        s.connect((host, port))
        s.sendall(build_request("GET", "/huge/"))
        asked.append(s)
        got = 0
        while got < 64 * 1024:
            chunk = s.recv(4096)
            if not chunk:
                failures.append(f"closed after {got} bytes")
                return
            got += len(chunk)
        started.append(s)
        stop.wait(120 * SLOW)
        s.close()
    except OSError as e:
        failures.append(repr(e))


@pytest.mark.skipif(SANITIZED, reason="the sanitizers' allocator and shadow memory move RSS")
def test_slow_readers_of_a_huge_listing_hold_bounded_memory_and_the_loop_serves_others(
        rivet, huge_root):
    srv = rivet(args=("--threads", "1", "--workers", "1"), root=huge_root)
    pid = srv.proc.pid
    before = rss_kib(pid)
    asked: list = []
    started: list = []
    failures: list = []
    stop = threading.Event()
    threads = [threading.Thread(target=slow_reader,
                                args=(srv.host, srv.port, asked, started, failures, stop))
               for _ in range(READERS)]
    for t in threads:
        t.start()
    try:
        # A canary on the same (only) loop once the 40 listings were asked for: they are being
        # read and sent meanwhile.
        wait_for(lambda: len(asked) + len(failures) == READERS, timeout=60,
                 what=f"{READERS} listings asked for")
        with Conn(srv.host, srv.port, timeout=30 * SLOW) as c:
            r = c.request("GET", "/hello")
            assert r.status == 200 and r.body == b"Hello, World!", r
        wait_for(lambda: len(started) + len(failures) == READERS, timeout=120,
                 what=f"{READERS} slow readers past their first 64 KiB")
        assert not failures, failures
        # Every listing is now stalled on its reader, each holding what it holds while waiting.
        with Conn(srv.host, srv.port, timeout=30 * SLOW) as c:
            assert c.request("GET", "/hello").status == 200
        peak = rss_kib(pid, "VmHWM")
        # Before: each listing was its whole 18.5 MB page (and 100,000 entries): 40 of them
        # held 412 MB. Now each holds at most 10,000 entries (~1 MB) and a slice of its page.
        assert peak - before < 160 * 1024, \
            f"RSS {before // 1024} MiB before, peak {peak // 1024} MiB with {READERS} readers"
        print(f"RSS before {before // 1024} MiB, peak {peak // 1024} MiB")
    finally:
        stop.set()
        for t in threads:
            t.join()


def test_hostile_names_are_escaped_in_a_page_of_many_slices(rivet, tmp_path):
    hostile = [b"<script>alert(1)<\\script>", b'"quoted" & \'single\'', b"bad\xff\xfe.txt",
               b"cut\xc3", b"javascript:alert(2)", b"new\nline", b"caf\xc3\xa9"]
    root = tmp_path / "root"
    d = root / "files"
    d.mkdir(parents=True)
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    names = set()
    try:
        for i in range(400):  # enough rows for many 32 KiB slices
            for h in hostile:
                name = h + b"-" + str(i).encode() + b"x" * 60
                os.close(os.open(name, os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
                names.add(name)
    finally:
        os.close(fd)
    srv = rivet(root=root)
    r = srv.get("/files/", timeout=30)
    assert r.status == 200, r
    page = r.body.decode("utf-8")  # strict: the page is UTF-8 whatever the names' bytes
    assert "<script" not in page and '"quoted"' not in page, page[:2000]
    assert "&lt;script&gt;alert(1)&lt;\\script&gt;-0" in page
    assert "&quot;quoted&quot; &amp; &#39;single&#39;-0" in page
    assert "bad\ufffd\ufffd.txt-0" in page and "cut\ufffd-0" in page and "caf\u00e9-0" in page
    assert 'href="./javascript%3Aalert%282%29-0' in page  # never a javascript: URL
    # Every row survived the slicing whole, and every link leads to the bytes of its name.
    hrefs = rows(page)
    assert len(hrefs) == len(names), (len(hrefs), len(names))
    assert {urllib.parse.unquote_to_bytes(h) for h in hrefs} == names
    for h in (hrefs[0], hrefs[len(hrefs) // 2], hrefs[-1]):
        assert srv.get("/files/" + h).status == 200, h
