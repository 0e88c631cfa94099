"""HTML forms (rivet/form.hpp) through the demo's POST /upload-form: multipart/form-data from
curl -F, Python requests and headless Chromium posting the demo's upload page, urlencoded bodies
from curl --data-urlencode, a 1 GiB upload in bounded memory, and hostile bodies, each refused
with its status and nothing written outside the upload directory (nor left in it by a refused
form)."""
import json
import os
import subprocess
from pathlib import Path

import pytest
import requests

from chromium import CHROMIUM, DevToolsPage
from rivet_e2e import SANITIZED, SLOW, build_request, chunked

BOUNDARY = "----rivetFormBoundary7MA4YWxk"
TYPE = f"multipart/form-data; boundary={BOUNDARY}"


@pytest.fixture
def forms(rivet, tmp_path, monkeypatch):
    """A server whose $TMPDIR is a fresh directory: its upload directory is made under it."""
    tmp = tmp_path / "tmpdir"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    srv = rivet(args=("--threads", "1", "--workers", "1"))
    srv.tmpdir = tmp
    srv.url = f"http://{srv.host}:{srv.port}/upload-form"
    return srv


def stored_files(srv) -> list[Path]:
    """Every file under the server's $TMPDIR, wherever it is."""
    return sorted(p for p in srv.tmpdir.rglob("*") if p.is_file())


def upload_dir(srv) -> Path:
    dirs = list(srv.tmpdir.glob("rivet-uploads-*"))
    assert len(dirs) == 1, dirs
    return dirs[0]


def assert_inside_upload_dir(srv, files: list[dict]) -> None:
    root = upload_dir(srv).resolve()
    for f in files:
        assert Path(f["path"]).resolve().parent == root, f
    # Nothing else anywhere under $TMPDIR, and nothing in the server's working directory.
    assert all(p.parent.resolve() == root for p in stored_files(srv)), stored_files(srv)


def part(name: str, content: bytes, filename: str | None = None, ctype: str | None = None,
         disposition: bool = True) -> bytes:
    head = f"--{BOUNDARY}\r\n"
    if disposition:
        head += f'Content-Disposition: form-data; name="{name}"'
        if filename is not None:
            head += f'; filename="{filename}"'
        head += "\r\n"
    if ctype:
        head += f"Content-Type: {ctype}\r\n"
    return head.encode() + b"\r\n" + content + b"\r\n"


def multipart(*parts: bytes) -> bytes:
    return b"".join(parts) + f"--{BOUNDARY}--\r\n".encode()


def post_raw(srv, body: bytes, target: str = "/upload-form", ctype: str = TYPE):
    """Posts the body; a refusal may come (and the connection close) before all of it is sent:
    what the server answered is still read."""
    with srv.connect(timeout=60) as c:
        try:
            c.send(build_request("POST", target, headers={"Content-Type": ctype}, body=body))
        except (BrokenPipeError, ConnectionResetError):
            pass
        return c.read_response()


def curl(*args: str) -> dict:
    out = subprocess.run(["curl", "-sS", "--max-time", str(int(60 * SLOW)), *args],
                         capture_output=True, check=True, timeout=120 * SLOW)
    return json.loads(out.stdout)


# -- well-formed forms ---------------------------------------------------------------------------


def test_curl_one_file_and_fields(forms, tmp_path):
    doc = tmp_path / "report.pdf"
    doc.write_bytes(bytes(range(256)) * 1200)  # 300 kB, every byte value
    got = curl("-F", "title=Quarterly report", "-F", "tags=a&b=c",
               "-F", f"doc=@{doc};type=application/pdf", forms.url)
    assert got["fields"] == [{"name": "title", "value": "Quarterly report"},
                             {"name": "tags", "value": "a&b=c"}], got
    [f] = got["files"]
    assert (f["name"], f["filename"], f["size"], f["content_type"]) == \
        ("doc", "report.pdf", doc.stat().st_size, "application/pdf"), f
    assert Path(f["path"]).read_bytes() == doc.read_bytes()
    assert_inside_upload_dir(forms, got["files"])


def test_curl_several_files_same_name_kept_apart(forms, tmp_path):
    a, b, c = tmp_path / "a.txt", tmp_path / "b.bin", tmp_path / "sub"
    a.write_bytes(b"alpha\r\n--not a boundary\r\n")
    b.write_bytes(os.urandom(70_000))
    c.mkdir()
    (c / "a.txt").write_bytes(b"the other a.txt")
    got = curl("-F", f"files=@{a}", "-F", f"files=@{b}", "-F", f"files=@{c / 'a.txt'}",
               "-F", "note=three", forms.url)
    files = got["files"]
    assert [f["filename"] for f in files] == ["a.txt", "b.bin", "a.txt"], files
    assert [f["size"] for f in files] == [a.stat().st_size, b.stat().st_size, 15], files
    # The same name twice: the second is stored beside the first, never over it.
    assert files[0]["path"] != files[2]["path"]
    assert Path(files[0]["path"]).read_bytes() == a.read_bytes()
    assert Path(files[1]["path"]).read_bytes() == b.read_bytes()
    assert Path(files[2]["path"]).read_bytes() == b"the other a.txt"
    assert got["fields"] == [{"name": "note", "value": "three"}]
    assert_inside_upload_dir(forms, files)


def test_python_requests_multipart(forms):
    content = b"x" * 100_000 + b"\r\n--" + BOUNDARY.encode() + b"x"
    r = requests.post(forms.url, data={"user": "ana", "lang": "pt"},
                      files={"avatar": ("me.png", content, "image/png"),
                             "empty": ("", b"", "application/octet-stream")},
                      timeout=60 * SLOW)
    assert r.status_code == 200, r.text
    got = r.json()
    assert {(f["name"], f["value"]) for f in got["fields"]} == {("user", "ana"), ("lang", "pt")}
    avatar, empty = got["files"]
    assert (avatar["filename"], avatar["size"], avatar["content_type"]) == \
        ("me.png", len(content), "image/png")
    assert Path(avatar["path"]).read_bytes() == content
    assert (empty["filename"], empty["size"]) == ("upload", 0), empty  # no name: one is made
    assert_inside_upload_dir(forms, got["files"])


def test_urlencoded_with_curl(forms):
    got = curl("--data-urlencode", "q=a b&c=d/é", "--data-urlencode", "plus=1+1",
               "--data", "raw=x+y%21", forms.url)
    assert got == {"fields": [{"name": "q", "value": "a b&c=d/é"},
                              {"name": "plus", "value": "1+1"},
                              {"name": "raw", "value": "x y!"}], "files": []}, got


def test_a_boundary_string_inside_content_is_content(forms):
    inside = (f"--{BOUNDARY}x\r\n--{BOUNDARY[:-1]}\r\n\r\n-- {BOUNDARY}\r\n--{BOUNDARY}"
              ).encode() + b"-\r\n"
    r = post_raw(forms, multipart(part("f", inside, "in.txt"), part("after", b"ok")))
    assert r.status == 200, r
    got = r.json()
    assert Path(got["files"][0]["path"]).read_bytes() == inside
    assert got["fields"] == [{"name": "after", "value": "ok"}]


def test_a_body_in_tiny_pieces_across_boundaries(forms):
    body = multipart(part("a", b"1" * 50), part("f", b"\r\n" * 40, "f.txt"), part("b", b""))
    with forms.connect() as c:
        c.send(build_request("POST", "/upload-form",
                             headers={"Content-Type": TYPE, "Transfer-Encoding": "chunked"}))
        for i in range(0, len(body), 7):
            c.send(chunked([body[i:i + 7]])[:-5])  # one chunk, without the last-chunk
        c.send(b"0\r\n\r\n")
        r = c.read_response()
    assert r.status == 200, r
    got = r.json()
    assert got["fields"] == [{"name": "a", "value": "1" * 50}, {"name": "b", "value": ""}]
    assert Path(got["files"][0]["path"]).read_bytes() == b"\r\n" * 40


# -- the demo's form page (public/upload.html) in headless Chromium -----------------------------


def test_front_page_links_to_the_upload_form(forms):
    r = forms.get("/")
    assert r.status == 200 and b'href="/upload.html"' in r.body, r
    r = forms.get("/upload.html")
    assert r.status == 200 and b'enctype="multipart/form-data" action="/upload-form"' in r.body, r
    assert b"http://" not in r.body and b"https://" not in r.body  # works offline


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (scripts/setup.sh)")
def test_browser_posts_the_upload_page_with_two_files(forms, tmp_path, monkeypatch):
    # The server has its $TMPDIR; Chromium's own must stay short (a socket path lives there).
    monkeypatch.delenv("TMPDIR")
    photo, notes = tmp_path / "photo.bin", tmp_path / "field notes.txt"
    photo.write_bytes(os.urandom(300_000))
    notes.write_bytes("café ☕\r\n--not a boundary\n".encode() * 500)
    with DevToolsPage(tmp_path / "profile") as page:
        try:
            page.navigate(f"http://{forms.host}:{forms.port}/")
        except RuntimeError as e:
            pytest.skip(f"chromium cannot load the page here: {e}")
        # From the front page's link, as a visitor gets there.
        page.wait_across_navigation("document.readyState === 'complete'"
                                    " && !!document.querySelector('a[href=\"/upload.html\"]')")
        page.evaluate("setTimeout(() => document.querySelector('a[href=\"/upload.html\"]')"
                      ".click(), 0)")
        page.wait_across_navigation("document.readyState === 'complete'"
                                    " && !!document.getElementById('upload-form')")
        page.evaluate("document.getElementById('title').value = 'Trip — day 2';"
                      "document.getElementById('note').value = 'line one\\nline two'")
        # A page's script cannot attach files; the DevTools protocol can, as a user choosing them.
        root = page.command("DOM.getDocument")["root"]["nodeId"]
        node = page.command("DOM.querySelector", nodeId=root, selector="#files")["nodeId"]
        page.command("DOM.setFileInputFiles", nodeId=node, files=[str(photo), str(notes)])
        assert page.evaluate("document.getElementById('files').files.length") == 2
        page.evaluate("setTimeout(() => document.getElementById('send').click(), 0)")
        # Chromium shows the JSON answer as text in a <pre>.
        answer = page.wait_across_navigation(
            "location.pathname === '/upload-form' && document.readyState === 'complete'"
            " && document.querySelector('pre') && document.querySelector('pre').textContent")
    got = json.loads(answer)
    # Textarea line breaks are sent as CRLF (HTML's form submission rules).
    assert got["fields"] == [{"name": "title", "value": "Trip — day 2"},
                             {"name": "note", "value": "line one\r\nline two"}], got
    assert [(f["name"], f["filename"], f["size"]) for f in got["files"]] == [
        ("files", "photo.bin", 300_000), ("files", "field notes.txt", notes.stat().st_size)], got
    assert Path(got["files"][0]["path"]).read_bytes() == photo.read_bytes()
    assert Path(got["files"][1]["path"]).read_bytes() == notes.read_bytes()
    assert got["files"][1]["content_type"] == "text/plain", got
    assert_inside_upload_dir(forms, got["files"])


# -- hostile bodies ------------------------------------------------------------------------------


def refused(r, status: int, words: str) -> None:
    assert r.status == status, r
    assert words in r.json()["error"], r.body


def test_a_boundary_that_never_ends(forms):
    body = part("a", b"v") + part("f", b"data, and the closing delimiter never comes", "f.txt")
    refused(post_raw(forms, body), 400, "ends before its closing boundary")
    assert stored_files(forms) == []  # the partial file was removed


def test_hostile_filenames_are_sanitized_and_stay_inside(forms):
    names = ["../../etc/evil name.bin", "..\\..\\windows\\x.ini", "a\tb.txt",
             "..", "/abs/path/.hidden", "é ü.txt", "a;b|c$(rm).sh"]
    body = multipart(*(part("f", f"#{i}".encode(), n) for i, n in enumerate(names)))
    r = post_raw(forms, body)
    assert r.status == 200, r
    files = r.json()["files"]
    assert [f["filename"] for f in files] == [
        "evil name.bin", "x.ini", "ab.txt", "upload", "hidden", "é ü.txt", "a_b_c_(rm).sh"]
    for i, f in enumerate(files):
        assert Path(f["path"]).read_bytes() == f"#{i}".encode()
    assert_inside_upload_dir(forms, files)
    assert not (forms.tmpdir.parent / "etc").exists()


@pytest.mark.parametrize("name", ["a\x00b.txt", "a\x01b.txt", "a\x7fb.txt", "a\rb.txt"])
def test_nul_and_control_characters_in_a_filename_are_refused(forms, name):
    body = multipart(part("ok", b"first", "ok.txt"), part("f", b"x", name))
    r = post_raw(forms, body)
    assert r.status == 400, r
    assert "a part header:" in r.json()["error"], r.body
    assert stored_files(forms) == []  # the file before it was removed too


def test_missing_content_disposition(forms):
    body = multipart(part("a", b"v"), part("b", b"w", disposition=False))
    refused(post_raw(forms, body), 400, "without Content-Disposition")


@pytest.mark.parametrize("ctype", [
    "multipart/form-data", "multipart/form-data; boundary=", "multipart/form-data; boundary=" +
    "x" * 71, 'multipart/form-data; boundary="unterminated'])
def test_a_bad_boundary_parameter(forms, ctype):
    refused(post_raw(forms, multipart(part("a", b"v")), ctype=ctype), 400, "boundary parameter")


def test_another_content_type_is_415(forms):
    refused(post_raw(forms, b"{}", ctype="application/json"), 415, "multipart/form-data")


def test_part_headers_of_1_mib(forms):
    huge = f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=a\r\nX-Pad: ".encode() + \
        b"p" * (1 << 20) + b"\r\n\r\nv\r\n" + f"--{BOUNDARY}--\r\n".encode()
    refused(post_raw(forms, huge), 413, "max_part_header_bytes")
    assert forms.get("/hello").status == 200


def test_100000_parts(forms):
    one = part("a", b"v", "f.txt")
    refused(post_raw(forms, multipart(*[one] * 100_000)), 413, "max_parts (1000)")
    assert stored_files(forms) == []  # the 1000 files before the limit were removed


def test_field_and_file_limits(forms):
    refused(post_raw(forms, multipart(part("a", b"v" * 11)), "/upload-form?max_field_bytes=10"),
            413, "form field a is over max_field_bytes (10)")
    assert post_raw(forms, multipart(part("a", b"v" * 10)),
                    "/upload-form?max_field_bytes=10").status == 200
    body = multipart(part("f", b"1" * 100, "ok.bin"), part("g", b"2" * 101, "big.bin"))
    refused(post_raw(forms, body, "/upload-form?max_file_bytes=100"), 413,
            "file big.bin is over max_file_bytes (100)")
    assert stored_files(forms) == []  # ok.bin too: a refused form leaves nothing


def test_urlencoded_limits(forms):
    many = "&".join(f"k{i}=v" for i in range(1001))
    refused(post_raw(forms, many.encode(), ctype="application/x-www-form-urlencoded"), 413,
            "max_parts (1000)")
    big = b"k=" + b"v" * (1 << 20)
    refused(post_raw(forms, big, ctype="application/x-www-form-urlencoded"), 413,
            "max_urlencoded_bytes")
    r = post_raw(forms, b"k=%zz&j=%41", ctype="application/x-www-form-urlencoded")
    # A malformed escape is kept as sent (the query decoder's rule), never a crash.
    assert r.status == 200 and r.json()["fields"] == [{"name": "k", "value": "%zz"},
                                                      {"name": "j", "value": "A"}], r


def vm_kib(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise AssertionError(f"no {key}")


def test_a_large_upload_goes_to_disk_in_bounded_memory(forms):
    # 1 GiB normally; under the sanitizers (slow, and memory is theirs) 64 MiB, size checked only.
    mib = 64 if SANITIZED else 1024
    before = vm_kib(forms.proc.pid, "VmHWM")
    block = bytes(range(256)) * 4096  # 1 MiB
    head = f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=big; filename=big.bin\r\n" \
           f"Content-Type: application/octet-stream\r\n\r\n".encode()
    tail = f"\r\n--{BOUNDARY}--\r\n".encode()

    def body():
        yield head
        for _ in range(mib):
            yield block
        yield tail

    r = requests.post(forms.url, data=body(), headers={"Content-Type": TYPE},
                      timeout=300 * SLOW)
    assert r.status_code == 200, r.text
    [f] = r.json()["files"]
    assert f["size"] == mib << 20
    stored = Path(f["path"])
    assert stored.stat().st_size == mib << 20
    with open(stored, "rb") as s:
        s.seek((mib << 20) - 4096)
        assert s.read() == block[-4096:]
    stored.unlink()  # 1 GiB on the test machine's disk: given back at once
    if not SANITIZED:
        growth = (vm_kib(forms.proc.pid, "VmHWM") - before) * 1024
        print(f"peak RSS growth for {mib} MiB: {growth / 2**20:.1f} MiB")
        assert growth < 200 << 20, f"peak RSS grew {growth >> 20} MiB for a 1 GiB upload"
