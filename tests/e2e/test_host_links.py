"""host_links.py, the lock that keeps a browser and a test that changes the host's links apart,
across processes as pytest-xdist's workers are. On a lock file of the test's own."""
import subprocess
import sys
from pathlib import Path

import pytest

import host_links

HOLDER = """
import sys
sys.path.insert(0, sys.argv[1])
import host_links
host_links.LOCK_FILE = host_links.Path(sys.argv[2])
with host_links.browsing():
    print("held", flush=True)
    sys.stdin.readline()
"""


def test_a_link_change_waits_for_a_browser_in_another_process(tmp_path, monkeypatch):
    monkeypatch.setattr(host_links, "LOCK_FILE", tmp_path / "links.lock")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(Path(__file__).parent), str(host_links.LOCK_FILE)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        with host_links.browsing():  # browsers share it
            pass
        monkeypatch.setattr(host_links, "WAIT_S", 0.3)
        with pytest.raises(RuntimeError, match="not free for changing the host's links"):
            with host_links.changing_links():
                pass
    finally:
        holder.stdin.close()  # the holder's readline returns: it lets go and exits
        assert holder.wait(timeout=30) == 0
    with host_links.changing_links():  # free once the browser is gone
        pass
