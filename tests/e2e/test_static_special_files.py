"""What a document root holds but must not serve as a file: a UNIX socket or a FIFO (403, as
docs/STATIC.md says), dot files and dot directories (404 unless --dot-files or
static.dot_files), with /.well-known/ served either way (ACME's challenges)."""
import os
import socket

import pytest

from ops_e2e import write_config

HIDDEN = {"/.env": b"SECRET_KEY=hunter2\n", "/.git/config": b"[core]\n",
          "/sub/.htpasswd": b"admin:$apr1$x\n", "/.git/objects/ab/cd": b"blob\n"}
CHALLENGE = "/.well-known/acme-challenge/t0k3n"


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "hello.txt").write_bytes(b"hello\n")
    for path, body in {**HIDDEN, CHALLENGE: b"t0k3n.thumbprint\n"}.items():
        (root / path[1:]).parent.mkdir(parents=True, exist_ok=True)
        (root / path[1:]).write_bytes(body)
    return root


def test_a_unix_socket_or_fifo_in_the_root_is_403(rivet, root):
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(str(root / "app.sock"))  # a socket left by a service sharing the root
        listener.listen(1)
        os.mkfifo(root / "pipe")
        srv = rivet(root=root)
        for target in ("/app.sock", "/pipe"):
            r = srv.get(target)
            assert r.status == 403, (target, r)
            assert srv.get(target, headers={"Range": "bytes=0-1"}).status == 403
        assert srv.get("/hello.txt").body == b"hello\n"  # nothing else was disturbed
    finally:
        listener.close()


def test_dot_files_and_dot_directories_are_404_by_default(rivet, root):
    srv = rivet(root=root)
    targets = [*HIDDEN, "/.git/", "/.git", "/%2eenv", "/sub/%2Ehtpasswd", "/sub/../.env",
               "/.well-known/../.env"]
    for target in targets:
        r = srv.get(target)
        assert r.status == 404, (target, r)
        assert not any(body in r.body for body in HIDDEN.values()), (target, r.body)
    r = srv.get(CHALLENGE)
    assert r.status == 200 and r.body == b"t0k3n.thumbprint\n", r
    assert srv.get("/hello.txt").body == b"hello\n"


@pytest.mark.parametrize("how", ["flag", "config"])
def test_dot_files_are_served_when_allowed(rivet, root, tmp_path, how):
    if how == "flag":
        args = ("--dot-files",)
    else:
        config = write_config(tmp_path / "rivet.json", {"static": {"dot_files": True}})
        args = ("--config", config)
    srv = rivet(root=root, args=("--threads", "1", "--workers", "1", *args))
    for target, body in HIDDEN.items():
        r = srv.get(target)
        assert r.status == 200 and r.body == body, (target, r)
    assert srv.get(CHALLENGE).status == 200
