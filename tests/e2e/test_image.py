"""The container image (`make image`, scripts/image.sh) on a Docker daemon of the test's own.

dockerd is started by hand with everything under a temporary directory (data root, exec root,
socket, its managed containerd), no default bridge and no iptables rules; the image is built there
with the project's script, run on a bridge network of the test's own (no browser runs meanwhile:
host_links.py) with its port published the way users do (`-p`), and checked: it answers, runs as
non-root, turns healthy through its own HEALTHCHECK, holds no shell, and `docker stop` (SIGTERM)
ends it with exit 0 after answering the request in flight. Everything is removed at the end, the
images with the data root. Skipped (with the reason) where dockerd is absent or cannot start, and
under sanitizers: the image ships the release binary.
"""
import io
import json
import os
import shutil
import signal
import subprocess
import tarfile
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from host_links import changing_links
from rivet_e2e import BIN, REPO, SANITIZED
from ws_e2e import WsConn

pytestmark = pytest.mark.skipif(SANITIZED, reason="the image ships the release binary")

HEALTHCHECK = ["CMD", "/usr/local/bin/rivet", "--healthcheck", "http://127.0.0.1:8080/healthz"]
DAEMON_START_S = 30


class Docker:
    """The `docker` client bound to the test's daemon."""

    def __init__(self, root: Path):
        self.env = dict(os.environ, DOCKER_HOST=f"unix://{root}/docker.sock",
                        DOCKER_CONFIG=str(root / "client"))

    def run(self, *args, check=True, timeout=60, **kw):
        p = subprocess.run(["docker", *args], env=self.env, capture_output=True, text=True,
                           timeout=timeout, stdin=subprocess.DEVNULL, **kw)
        if check and p.returncode != 0:
            raise AssertionError(f"docker {' '.join(args)}: {p.returncode}\n{p.stdout}{p.stderr}")
        return p

    def out(self, *args, **kw) -> str:
        return self.run(*args, **kw).stdout.strip()


def start_daemon(root: Path):
    """dockerd with all its state under root; returns the process, or the reason it failed."""
    (root / "daemon.json").write_text("{}")  # not the host's /etc/docker/daemon.json
    log = open(root / "dockerd.log", "wb")
    proc = subprocess.Popen(
        ["dockerd", "--config-file", f"{root}/daemon.json", "--data-root", f"{root}/data",
         "--exec-root", f"{root}/exec", "--pidfile", f"{root}/dockerd.pid",
         "--host", f"unix://{root}/docker.sock", "--bridge=none", "--iptables=false",
         "--ip6tables=false"],
        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    log.close()
    docker = Docker(root)
    deadline = time.monotonic() + DAEMON_START_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        if docker.run("info", check=False, timeout=10).returncode == 0:
            return proc, None
        time.sleep(0.3)
    what = (f"dockerd exited with {proc.returncode}" if proc.poll() is not None
            else f"dockerd did not answer within {DAEMON_START_S} s")
    stop_daemon(proc)
    tail = (root / "dockerd.log").read_text(errors="replace")[-1500:]
    return None, f"{what}:\n{tail}"


def stop_daemon(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)  # it stops its containerd too
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the group this test started
            proc.wait(timeout=10)


def unmount_under(root: Path):
    """What a daemon that stopped badly left mounted under root (its netns, its data root),
    deepest first, so that root can be removed."""
    points = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()]
    for point in sorted((p for p in points if p.startswith(f"{root}/")), reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True)


@pytest.fixture(scope="module")
def docker():
    if not shutil.which("dockerd") or not shutil.which("docker"):
        pytest.skip("docker.io is not installed (scripts/setup.sh installs it)")
    if os.geteuid() != 0:
        pytest.skip("dockerd needs root here")
    # Short: the daemon's sockets live under it (sun_path holds 108 bytes).
    root = Path(tempfile.mkdtemp(prefix="rivet-docker-"))
    proc, why = start_daemon(root)
    if proc is None:
        shutil.rmtree(root, ignore_errors=True)
        pytest.skip(why)
    client = Docker(root)
    client.root = root
    try:
        yield client
    finally:
        remove_containers(client)
        stop_daemon(proc)
        unmount_under(root)
        shutil.rmtree(root, ignore_errors=True)


def remove_containers(docker: Docker):
    ids = docker.out("ps", "-aq", check=False).split()
    if ids:
        docker.run("rm", "-f", *ids, check=False)


def host_links() -> set[str]:
    return {line.split(":")[1].strip().split("@")[0] for line in
            subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True,
                           check=True).stdout.splitlines()}


@pytest.fixture
def network(docker):
    """A bridge network of the test's own, its name. Its bridge and each container's veth are
    links on the host, which a browser in another test would see as its network changing: the
    test holds the host's links (host_links) until the links it added are gone."""
    bridge = f"rvt{os.getpid() % 100000}"
    with changing_links():
        before = host_links()
        docker.run("network", "create", "-o", f"com.docker.network.bridge.name={bridge}",
                   "rivet-test")
        try:
            yield "rivet-test"
        finally:
            added = host_links() - before  # the bridge, the containers' veths
            remove_containers(docker)
            docker.run("network", "rm", "rivet-test", check=False)
            subprocess.run(["ip", "link", "delete", bridge], capture_output=True)  # if left
            # A container's veth may go after `docker rm` returns (its namespace's cleanup).
            wait_for(f"the test's links ({', '.join(sorted(added))}) gone from the host",
                     lambda: not host_links() & added, 60)


@pytest.fixture(scope="module")
def image(docker):
    """Builds the image with scripts/image.sh from RIVET_BIN's build directory; its tag."""
    p = subprocess.run(["bash", str(REPO / "scripts/image.sh"), str(BIN.parent)],
                       env=dict(docker.env, IMAGE_CONTEXT=str(docker.root / "context")),
                       capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stdout + p.stderr
    print(p.stdout.splitlines()[-2])  # its size (pytest -s)
    version = subprocess.run([str(BIN), "--version"], capture_output=True,
                             text=True).stdout.split()[1]
    tag = f"rivet:{version}"
    assert docker.out("image", "inspect", "--format", "{{.Id}}", tag) == \
        docker.out("image", "inspect", "--format", "{{.Id}}", "rivet:latest")
    return tag


def test_image_holds_only_the_server_and_runs_as_nonroot(docker, image):
    config = json.loads(docker.out("image", "inspect", "--format", "{{json .Config}}", image))
    assert config["User"] == "65532:65532"
    assert config["StopSignal"] == "SIGTERM"
    assert config["Healthcheck"]["Test"] == HEALTHCHECK
    assert config["Entrypoint"] == ["/usr/local/bin/rivet"]
    assert "8080/tcp" in config["ExposedPorts"]

    # Its files: the binary, libraries and the loader, /etc's three files, the site.
    cid = docker.out("create", image)
    exported = subprocess.run(["docker", "export", cid], env=docker.env, capture_output=True,
                              timeout=60, stdin=subprocess.DEVNULL)
    assert exported.returncode == 0, exported.stderr
    files = {m.name.removeprefix("./") for m in
             tarfile.open(fileobj=io.BytesIO(exported.stdout)).getmembers() if m.isfile()}
    site = {str(p.relative_to(REPO / "public")) for p in (REPO / "public").rglob("*")
            if p.is_file()}
    assert "usr/local/bin/rivet" in files
    assert {f"srv/www/{f}" for f in site} <= files
    assert any(f.startswith("lib64/ld-linux") for f in files)
    others = {f for f in files if not (f.startswith(("lib/", "lib64/", "srv/www/")) or
                                       f in ("usr/local/bin/rivet", ".dockerenv"))}
    # /etc/hosts, resolv.conf, hostname and /dev/console: what docker adds to every container.
    assert others <= {"etc/passwd", "etc/group", "etc/nsswitch.conf", "etc/hosts",
                      "etc/resolv.conf", "etc/hostname", "dev/console"}, others
    assert all(".so." in f for f in files if f.startswith(("lib/", "lib64/"))), files

    # No shell: the exec fails.
    p = docker.run("run", "--rm", "--entrypoint", "/bin/sh", image, "-c", "true", check=False)
    assert p.returncode != 0 and "no such file" in p.stderr.lower(), p.stderr
    # The user has a name (/etc/passwd), so `--user rivet` resolves.
    assert docker.out("run", "--rm", "--user", "rivet", image, "--version").startswith("rivet ")


def settings(dockerfile: str) -> list:
    """The instructions after a Dockerfile's last COPY (continuations joined, comments and
    LABEL left out): what the final image is configured with."""
    text = dockerfile.replace("\\\n", " ")
    lines = [" ".join(line.split()) for line in text.splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    last_copy = max(i for i, line in enumerate(lines) if line.startswith("COPY "))
    return [line for line in lines[last_copy + 1:] if not line.startswith("LABEL ")]


def test_repository_dockerfile_configures_the_image_as_make_image_does(tmp_path):
    """The Dockerfile for users with a registry cannot be built here (no debian:12); its final
    stage must at least say what the generated one says."""
    script = str(REPO / "scripts/image.sh")
    p = subprocess.run(["bash", script, "--context-only", str(BIN.parent)],
                       env=dict(os.environ, IMAGE_CONTEXT=str(tmp_path / "context")),
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stdout + p.stderr
    generated = settings((tmp_path / "context/Dockerfile").read_text())
    assert any(line.startswith("USER 65532") for line in generated), generated
    assert settings((REPO / "Dockerfile").read_text()) == generated
    assert (tmp_path / "context/rootfs/usr/local/bin/rivet").read_bytes() == BIN.read_bytes()


def wait_for(what, predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"{what}: not within {timeout} s")


def get(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read()


def test_image_serves_healthy_and_stops_gracefully(docker, image, network):
    # As users run it (read-only, without capabilities: docs/OPERATIONS.md's Kubernetes
    # settings), only the health check's interval shortened; -p picks a free host port.
    cid = docker.out("run", "-d", "--network", network, "-p", "127.0.0.1::8080",
                     "--read-only", "--cap-drop", "ALL", "--health-interval", "1s",
                     "--health-start-period", "30s", image)
    port = int(docker.out("port", cid, "8080/tcp").splitlines()[0].rsplit(":", 1)[1])
    base = f"http://127.0.0.1:{port}"

    def answers():
        try:
            return get(f"{base}/hello", timeout=2) == (200, b"Hello, World!")
        except OSError:
            return False

    wait_for("GET /hello through the published port", answers, 20)
    status, page = get(f"{base}/")
    assert status == 200 and page == (REPO / "public/index.html").read_bytes()
    # The server opens libssl at its first OpenSSL call, which ldd cannot see
    # (src/server/openssl_on_use.cpp): a WebSocket handshake's SHA-1 needs it from the image.
    ws = WsConn("127.0.0.1", port)
    ws.open("/ws/echo")  # asserts the 101 and its accept key
    ws.close()

    # The server process (as the host sees it) runs as 65532, not root.
    pid = int(docker.out("inspect", "--format", "{{.State.Pid}}", cid))
    ids = {line.split(":")[0]: line.split()[1:] for line in
           Path(f"/proc/{pid}/status").read_text().splitlines()
           if line.startswith(("Uid:", "Gid:"))}
    assert ids == {"Uid": ["65532"] * 4, "Gid": ["65532"] * 4}, ids

    wait_for("health status healthy", lambda: docker.out(
        "inspect", "--format", "{{.State.Health.Status}}", cid) == "healthy", 30)

    # A request in flight when `docker stop` sends SIGTERM is answered before the exit.
    in_flight = {}

    def slow():
        try:
            in_flight["answer"] = get(f"{base}/wait?ms=1500", timeout=30)
        except OSError as e:
            in_flight["error"] = e

    def open_connections():
        text = get(f"{base}/metrics")[1].decode()
        return int(next(line.split()[1] for line in text.splitlines()
                        if line.startswith("rivet_connections_open ")))

    t = threading.Thread(target=slow)
    t.start()
    # Open: the slow one and this scrape's own; then a moment for its bytes to arrive.
    wait_for("the slow request's connection", lambda: open_connections() >= 2, 10)
    time.sleep(0.3)
    started = time.monotonic()
    docker.run("stop", "--time", "20", cid, timeout=60)
    stop_s = time.monotonic() - started
    t.join(timeout=30)
    assert in_flight.get("answer", (None,))[0] == 200, in_flight
    state = json.loads(docker.out("inspect", "--format", "{{json .State}}", cid))
    assert state["ExitCode"] == 0 and not state["OOMKilled"], state
    assert stop_s < 20, f"docker stop took {stop_s:.1f} s: SIGKILL after the timeout?"
    logs = docker.run("logs", cid)
    assert "signal 15, draining" in logs.stdout + logs.stderr
    assert '"GET /wait?ms=1500 HTTP/1.1" 200' in logs.stdout  # the access log on stdout
