"""Memory goes back to the system after a spike (issue 26, item 11): glibc keeps what free()
returns in its arenas, so before the fix RSS stayed at its peak for ever. The engine trims the
heap (malloc_trim) once the loops go quiet after traffic."""
import socket
import threading

import pytest

from ops_e2e import rss_kib, wait_for
from rivet_e2e import SANITIZED, build_request

pytestmark = pytest.mark.skipif(SANITIZED, reason="the sanitizers' allocator is not glibc's")

BODY = 8 << 20  # the server's max_body
UPLOADS = 24    # concurrent: some 200 MiB of bodies and answers held at once, well within the budget


def post_echo(host: str, port: int, failures: list) -> None:
    try:
        with socket.create_connection((host, port), timeout=60) as s:
            s.sendall(build_request("POST", "/echo", body=b"x" * BODY,
                                    headers={"Connection": "close"}))
            received = 0
            while chunk := s.recv(1 << 20):
                received += len(chunk)
            if received < BODY:
                failures.append(f"{received} bytes back")
    except OSError as e:
        failures.append(repr(e))


def test_rss_falls_back_after_a_spike_of_large_bodies(rivet):
    srv = rivet(args=("--threads", "2", "--workers", "2"))
    pid = srv.proc.pid
    before = rss_kib(pid)
    failures: list = []
    threads = [threading.Thread(target=post_echo, args=(srv.host, srv.port, failures))
               for _ in range(UPLOADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures
    peak = rss_kib(pid, "VmHWM")
    growth = peak - before
    assert growth > 64 * 1024, f"no spike to return: RSS {before} -> peak {peak} KiB"
    # Quiet now: within a few ticks most of what the spike took goes back (not all: the
    # arenas' tops, caches, buffers kept for reuse).
    wait_for(lambda: rss_kib(pid) < before + growth // 2, timeout=30,
             what=f"RSS under {(before + growth // 2) // 1024} MiB (from {before // 1024} MiB, "
                  f"peak {peak // 1024} MiB, now {rss_kib(pid) // 1024} MiB)")
    print(f"RSS before {before // 1024} MiB, peak {peak // 1024} MiB, "
          f"after {rss_kib(pid) // 1024} MiB")
