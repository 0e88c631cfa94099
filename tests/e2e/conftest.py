"""Fixtures for rivet's end-to-end tests: the real binary on an ephemeral port.

`server` is a RivetServer (unpacks as host, port, process) started with 2 I/O threads and 2
workers; `rivet` starts servers with other flags. On teardown every server still running gets
SIGTERM and must exit 0 with no sanitizer report on stderr.
"""
import signal
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from rivet_e2e import BIN, RivetServer  # noqa: E402
from redis_server import RedisServer  # noqa: E402


def pytest_report_header(config):
    return f"rivet binary: {BIN}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test's report carries each of its servers' stderr and counters (a flaky
    failure on a busy machine leaves nothing else to read)."""
    outcome = yield
    report = outcome.get_result()
    start = item.funcargs.get("rivet") if hasattr(item, "funcargs") else None
    if report.when != "call" or not report.failed or start is None:
        return
    for i, srv in enumerate(getattr(start, "started", [])):
        if srv.proc is not None:  # one that never started (its program missing) has no stderr
            report.sections.append((f"rivet server {i}", srv.diagnosis()))


@pytest.fixture
def rivet(tmp_path):
    """Starts rivet servers: rivet(args=(...), nofile=None) -> RivetServer (already listening)."""
    started = []

    def start(args=("--threads", "2", "--workers", "2"), nofile=None, **kw):
        srv = RivetServer(tmp_path / f"server{len(started)}", args, nofile=nofile, **kw)
        started.append(srv)
        return srv.start()

    start.started = started  # for a failed test's report (pytest_runtest_makereport)
    yield start

    problems = []
    for srv in started:
        if srv.proc is None:
            continue
        try:
            rc = srv.stop(signal.SIGTERM, timeout=15)
        except AssertionError as e:
            problems.append(str(e))
            continue
        if rc != 0:
            problems.append(f"rivet exited with {rc} (expected 0); stderr:\n{srv.stderr()[-4000:]}")
        report = srv.sanitizer_report()
        if report:
            problems.append(f"sanitizer report on stderr:\n{report[-8000:]}")
    assert not problems, "\n".join(problems)


@pytest.fixture
def server(rivet):
    """A rivet server with --threads 2 --workers 2 and the repository's public/ as --root."""
    return rivet()


@pytest.fixture(scope="session")
def tls_certs(tmp_path_factory):
    """The TLS tests' certificates (tests/e2e/tls_certs.py), made once per session."""
    from tls_certs import TlsCerts
    return TlsCerts(tmp_path_factory.mktemp("tls-certs"))


@pytest.fixture
def redis():
    """A redis-server of the test's own (tests/e2e/redis_server.py), removed at its end."""
    r = RedisServer()
    try:
        yield r.start()
    finally:
        r.destroy()
