"""The host's network links, shared by two kinds of e2e test that must not overlap.

Chromium watches the host's links and addresses (netlink) and aborts every request in flight
with net::ERR_NETWORK_CHANGED when one comes or goes. The image test adds and removes links (a
Docker bridge, each container's veth). Under pytest-xdist the two can run at the same moment on
different workers, so a page failed to load in CI while a container started. Browsers hold this
lock shared, a test that changes links holds it exclusively: a reader-writer lock across
processes (flock on one file), for every worker of every run on this machine."""
from __future__ import annotations

import fcntl
import os
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

LOCK_FILE = Path(tempfile.gettempdir()) / "rivet-e2e-host-links.lock"
# A bound for a stuck holder, not an expectation: holders keep it for seconds.
WAIT_S = 600


def _open_lock_file() -> int:
    # Read-only is enough for flock, and lets another user share a file root made (O_CREAT
    # on someone else's file in /tmp is refused where fs.protected_regular is set).
    try:
        return os.open(LOCK_FILE, os.O_RDONLY)
    except FileNotFoundError:
        return os.open(LOCK_FILE, os.O_RDONLY | os.O_CREAT, 0o644)


@contextmanager
def _held(mode: int, what: str):
    fd = _open_lock_file()
    try:
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{LOCK_FILE} not free for {what} within {WAIT_S} s")
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # releases the lock


def browsing():
    """Held while a browser runs: no test adds or removes a host link meanwhile."""
    return _held(fcntl.LOCK_SH, "a browser")


def changing_links():
    """Held while a test adds or removes host links: no browser runs meanwhile."""
    return _held(fcntl.LOCK_EX, "changing the host's links")
