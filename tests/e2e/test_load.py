"""Load with wrk: 10,000 concurrent connections, and steady load at 100 connections, with zero
socket errors and only 2xx answers."""
import pytest

from rivet_e2e import SANITIZED, WRK, raise_nofile, wrk

pytestmark = pytest.mark.skipif(WRK is None, reason="wrk is not installed (scripts/setup.sh)")

NOFILE = 20_000


def check_fd_limit():
    try:
        raise_nofile(NOFILE)
    except (ValueError, OSError):
        pass
    import resource
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 10_500:
        pytest.skip(f"RLIMIT_NOFILE hard limit too low for 10k connections ({soft})")


@pytest.mark.skipif(SANITIZED, reason="10k connections is a release-build load test")
def test_ten_thousand_concurrent_connections(rivet):
    check_fd_limit()
    srv = rivet(args=("--threads", "2", "--workers", "2"), nofile=NOFILE)
    requests, errors, non_2xx, out = wrk(f"http://{srv.host}:{srv.port}/hello", 10_000, 3,
                                         nofile=NOFILE)
    assert errors is None, f"socket errors {errors}:\n{out}"
    assert requests > 10_000, out
    assert non_2xx == 0, out
    assert "out of file descriptors" not in srv.stderr()
    r = srv.get("/hello")
    assert r.status == 200 and r.body == b"Hello, World!"


def test_steady_load_100_connections(server):
    requests, errors, non_2xx, out = wrk(f"http://{server.host}:{server.port}/hello", 100, 2)
    assert errors is None, f"socket errors {errors}:\n{out}"
    assert non_2xx == 0, out
    assert requests > (1_000 if SANITIZED else 20_000), out


def test_steady_load_offloaded_route(server):
    requests, errors, non_2xx, out = wrk(f"http://{server.host}:{server.port}/work?n=1000", 100, 2)
    assert errors is None, f"socket errors {errors}:\n{out}"
    assert non_2xx == 0, out
    assert requests > (500 if SANITIZED else 5_000), out
