#!/usr/bin/env python3
"""Server CPU of a multipart/form-data upload to disk against the same bytes as a plain streamed
body to disk (issue 25's speed check: at most 1.2x). The demo's POST /upload-form (rivet/form.hpp:
the multipart parser, then the file) and POST /upload-file (the body written as it is), side by
side: one rivet pinned to one core (--threads 1), the client on another, the two kinds
interleaved, each upload's server CPU read from /proc/PID/task/*/schedstat before and after.

    python3 bench/forms_bench.py [--mib 100] [--reps 5] [--server-cpu 0] [--client-cpu 1]

Prints CPU ms per upload for each kind (median of the reps) and their ratio."""
import argparse
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BOUNDARY = "----rivetBenchBoundary0123456789"
BLOCK = bytes(range(256)) * 1024  # 256 KiB, as a client's file read would give


def server_cpu_s(pid: int) -> float:
    """The CPU time of all the server's threads, in ns steps (/proc/PID/stat's ticks are 10 ms:
    too coarse for a 100 ms upload)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with open(task / "schedstat") as f:
            total += int(f.read().split()[0])
    return total / 1e9


def body(mib: int, multipart: bool):
    if multipart:
        yield (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=file; filename=big.bin\r\n"
               "Content-Type: application/octet-stream\r\n\r\n").encode()
    for _ in range(mib * 4):
        yield BLOCK
    if multipart:
        yield f"\r\n--{BOUNDARY}--\r\n".encode()


def upload(port: int, mib: int, multipart: bool) -> Path:
    length = (mib << 20) + (len(b"".join(list(body(0, True)))) if multipart else 0)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    ctype = f"multipart/form-data; boundary={BOUNDARY}" if multipart else "application/octet-stream"
    conn.putrequest("POST", "/upload-form" if multipart else "/upload-file")
    conn.putheader("Content-Type", ctype)
    conn.putheader("Content-Length", str(length))
    conn.endheaders()
    for piece in body(mib, multipart):
        conn.send(piece)
    r = conn.getresponse()
    answer = json.loads(r.read())
    conn.close()
    if r.status != 200:
        sys.exit(f"upload failed: {r.status} {answer}")
    path = Path(answer["files"][0]["path"] if multipart else answer["path"])
    if path.stat().st_size != mib << 20:
        sys.exit(f"{path}: {path.stat().st_size} bytes stored, {mib << 20} sent")
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=100)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--server-cpu", default="0")
    ap.add_argument("--client-cpu", default="1")
    ap.add_argument("--bin", default=os.environ.get("RIVET_BIN", str(REPO / "build" / "rivet")))
    a = ap.parse_args()
    os.sched_setaffinity(0, {int(a.client_cpu)})
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, TMPDIR=tmp)
        proc = subprocess.Popen(["taskset", "-c", a.server_cpu, a.bin, "--port", "0", "--bind",
                                 "127.0.0.1", "--threads", "1", "--workers", "1",
                                 "--root", str(REPO / "public")],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                                text=True)
        try:
            port = 0
            while not port:
                line = proc.stdout.readline()
                if not line:
                    sys.exit("rivet exited before listening")
                m = re.search(r"rivet listening on http://127\.0\.0\.1:(\d+) ", line)
                port = int(m[1]) if m else 0
            cpu = {"multipart": [], "plain": []}
            for rep in range(a.reps + 1):  # the first round warms the page cache and is dropped
                for kind in ("plain", "multipart"):
                    before = server_cpu_s(proc.pid)
                    path = upload(port, a.mib, kind == "multipart")
                    spent = server_cpu_s(proc.pid) - before
                    path.unlink()
                    if rep:
                        cpu[kind].append(spent)
        finally:
            proc.terminate()
            proc.wait()
    plain, multi = statistics.median(cpu["plain"]), statistics.median(cpu["multipart"])
    print(f"{a.mib} MiB upload to disk, server CPU per upload (median of {a.reps}):")
    for name, kind, med in (("plain streamed body", "plain", plain),
                            ("multipart/form-data", "multipart", multi)):
        runs = ", ".join(f"{c * 1000:.1f}" for c in cpu[kind])
        print(f"  {name}  {med * 1000:8.1f} ms   ({runs})")
    print(f"  ratio multipart / plain: {multi / plain:.2f}")


if __name__ == "__main__":
    main()
