"""Autobahn|Testsuite conformance of /ws/echo (RFC 6455 and RFC 7692), driven by kosoku (PyPI:
it runs Autobahn's own fuzzing-client case files on Python 3), over ws:// and over wss://.

Every case's behavior must be OK, NON-STRICT or INFORMATIONAL (never FAILED, UNIMPLEMENTED or
ERROR), and so must its closing behavior (never FAILED, WRONG CODE, UNCLEAN...); the number of
cases that ran must be the suite's.

kosoku is built without TLS ("TLS support not compiled in"), so the wss:// pass goes through a
relay in this process: kosoku speaks plain TCP to the relay, which carries each connection over
TLS (verified against the test CA) to rivet's TLS listener, and closes either side when the other
ends. Every byte rivet reads and writes in that pass crosses its TLS layer.
"""
import asyncio
import json
import os
import shutil
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rivet_e2e import SANITIZED, SLOW
from tls_e2e import start_tls

KOSOKU = shutil.which("kosoku")
pytestmark = pytest.mark.skipif(KOSOKU is None, reason="kosoku is not installed "
                                "(scripts/setup.sh: pip install kosoku)")

ALL_CASES = 517  # kosoku 0.1.0's suite: sections 1-7, 9, 10, 12, 13 (compression included)
PATH = "/ws/echo"
PARALLELISM = 2  # cases in flight at once: kosoku's -p
# The whole suite over ws:// takes about 4 minutes on a 2-core machine, nearly all of it the
# 1000-message compression cases 12.* and 13.* at 128 KiB and up (measured: 12.*.10-18 and
# 13.*.10-18 are 380 of the suite's 470 case-seconds). So `make test` runs:
#   ws://  sections 1-10 whole (framing, fragmentation, UTF-8, close, large messages up to
#          16 MiB); 12.1 and 13.1 (the default deflate offer, either side's window) at every size;
#          the other 10 deflate offer/accept groups at sizes 1-9 (16 B to 64 KiB): 427 cases,
#          about a minute;
#   wss:// sections 1-10 whole and every deflate group at the 6 smallest sizes (16 B to 8 KiB):
#          301 + 72 cases, a minute or so.
# RIVET_AUTOBAHN=full (`make conformance`) runs the whole suite (517 cases) over ws://.
PLAIN_EXCLUDE = [f"12.{group}.{size}" for group in range(2, 6) for size in range(10, 19)] + \
    [f"13.{group}.{size}" for group in range(2, 8) for size in range(10, 19)]
PLAIN_CASE_COUNT = ALL_CASES - len(PLAIN_EXCLUDE)
TLS_EXCLUDE = [f"{section}.*.{size}" for section in (12, 13) for size in range(7, 19)]
TLS_CASE_COUNT = 373
FULL = os.environ.get("RIVET_AUTOBAHN") == "full"
RUN_TIMEOUT = 900  # seconds, per pass (times SLOW)

# kosoku 0.1.0's own error (its py2-era case code hashes a str) when an echo comes back
# uncompressed on a permessage-deflate connection, as RFC 7692 allows for any message: seen with
# rivet's compression_min_size (64) in the 16-byte cases, and with Go's coder/websocket.
KOSOKU_UNCOMPRESSED_ECHO = "Strings must be encoded before hashing"

GOOD_BEHAVIOR = {"OK", "NON-STRICT", "INFORMATIONAL"}
GOOD_CLOSE = {"OK", "INFORMATIONAL"}  # Autobahn's acceptable closing behaviors


def run_kosoku(url: str, outdir: Path, exclude=()) -> tuple[dict, float, int]:
    """Runs the suite (less the `exclude` globs) against `url`; returns ({case id: report
    entry}, seconds, exit status)."""
    cmd = [KOSOKU, "-o", str(outdir), "-p", str(PARALLELISM)]
    for glob in exclude:
        cmd += ["-x", glob]
    t0 = time.monotonic()
    p = subprocess.run([*cmd, url], capture_output=True, text=True,
                       timeout=RUN_TIMEOUT * SLOW)
    elapsed = time.monotonic() - t0
    output = p.stdout + p.stderr
    index_file = outdir / "index.json"
    assert index_file.exists(), f"kosoku wrote no report (exit {p.returncode}):\n{output[-4000:]}"
    # Cases by agent: the Server header of the 101, or the address where a case ended before it.
    cases = {}
    for by_agent in json.loads(index_file.read_text()).values():
        cases.update(by_agent)
    return cases, elapsed, p.returncode


def verdict_problems(cases: dict, outdir: Path) -> list[str]:
    """One line per case whose behavior or closing behavior is not acceptable."""
    bad = []
    for case_id, entry in sorted(cases.items(), key=lambda kv: [int(p) for p in kv[0].split(".")]):
        if entry["behavior"] in GOOD_BEHAVIOR and entry["behaviorClose"] in GOOD_CLOSE:
            continue
        detail = json.loads((outdir / entry["reportfile"]).read_text())
        bad.append(f"{case_id}: behavior={entry['behavior']} close={entry['behaviorClose']} "
                   f"(remote close code {entry.get('remoteCloseCode')})\n"
                   f"    case: {detail['description']}\n"
                   f"    expected: {detail['expectation']}\n"
                   f"    result: {detail['result']} / {detail['resultClose']}")
        if detail["result"] == KOSOKU_UNCOMPRESSED_ECHO:
            bad[-1] += ("\n    (kosoku's failure on an echo sent uncompressed: the route must "
                        "compress every message for kosoku, e.g. compression_min_size 0)")
    return bad


def check_run(cases: dict, elapsed: float, status: int, outdir: Path, expected_count: int,
              label: str):
    print(f"{label}: {len(cases)} cases in {elapsed:.1f}s (report: {outdir}/index.html)",
          file=sys.stderr)
    bad = verdict_problems(cases, outdir)
    assert not bad, f"{label}: {len(bad)} of {len(cases)} cases not passed:\n" + "\n".join(bad)
    assert len(cases) == expected_count, f"{label}: {len(cases)} cases ran, not {expected_count}"
    assert status == 0, f"{label}: kosoku exited with {status} though every case passed"


def test_autobahn_plain(rivet, tmp_path):
    srv = rivet()
    # Under ASan/UBSan (make asan) even the default selection's larger compression cases take
    # many minutes: the sanitized build runs the wss:// pass's subset (every section, every
    # deflate group, sizes up to 8 KiB).
    if FULL:
        exclude, expected = (), ALL_CASES
    elif SANITIZED:
        exclude, expected = TLS_EXCLUDE, TLS_CASE_COUNT
    else:
        exclude, expected = PLAIN_EXCLUDE, PLAIN_CASE_COUNT
    cases, elapsed, status = run_kosoku(f"ws://{srv.host}:{srv.port}{PATH}", tmp_path / "report",
                                        exclude)
    check_run(cases, elapsed, status, tmp_path / "report", expected, "ws://")
    assert srv.alive()


# ---------------------------------------------------------------------------------------------
# wss://: a plain-to-TLS relay


class TlsRelay:
    """Listens on 127.0.0.1 (plain TCP) and relays each connection over TLS to host:port."""

    def __init__(self, host: str, port: int, context: ssl.SSLContext):
        self.target = (host, port)
        self.context = context
        self.connections = 0
        self.tls_versions = set()
        self.errors = []
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self.thread.start()
        assert self.ready.wait(10), "the TLS relay did not start"
        return self

    def __exit__(self, *exc):
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(
            asyncio.start_server(self._relay, "127.0.0.1", 0))
        self.port = self.server.sockets[0].getsockname()[1]
        self.ready.set()
        self.loop.run_forever()

    async def _relay(self, client_r, client_w):
        self.connections += 1
        try:
            server_r, server_w = await asyncio.open_connection(
                *self.target, ssl=self.context, server_hostname="localhost")
        except Exception as e:  # noqa: BLE001: reported by the test
            self.errors.append(f"TLS connect: {e!r}")
            client_w.close()
            return
        self.tls_versions.add(server_w.get_extra_info("ssl_object").version())
        await asyncio.gather(self._pump(client_r, server_w), self._pump(server_r, client_w))

    @staticmethod
    async def _pump(reader, writer):
        """Copies until EOF or an error on either side, then closes the writer's side (the
        other pump then ends too: its reader sees the close)."""
        try:
            while data := await reader.read(1 << 16):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, ssl.SSLError, OSError):
            pass
        finally:
            writer.close()


def test_autobahn_tls(rivet, tls_certs, tmp_path):
    srv = start_tls(rivet, tls_certs)
    context = ssl.create_default_context(cafile=str(tls_certs.ca))
    with TlsRelay(srv.host, srv.tls_port, context) as relay:
        cases, elapsed, status = run_kosoku(f"ws://127.0.0.1:{relay.port}{PATH}",
                                            tmp_path / "report", TLS_EXCLUDE)
    assert not relay.errors, relay.errors[:5]
    assert relay.connections >= TLS_CASE_COUNT, relay.connections
    assert relay.tls_versions, "no connection reached rivet's TLS listener"
    check_run(cases, elapsed, status, tmp_path / "report", TLS_CASE_COUNT,
              f"wss:// ({', '.join(sorted(relay.tls_versions))})")
    assert srv.alive()
