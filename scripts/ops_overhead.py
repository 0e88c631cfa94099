#!/usr/bin/env python3
"""Server CPU per /hello request with the access log and rate limiting on, against both off.

Side by side and interleaved: for each repetition, a server of each kind (pinned to core 0 with
taskset) takes a wrk run (pinned to core 1); CPU µs per request = the server's utime+stime
(/proc/PID/stat, all its threads, the log writer included) over the requests wrk completed.

    python3 scripts/ops_overhead.py [--reps 3] [--seconds 5] [--bin build/rivet]
"""
import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_ticks(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime


def wait_listening(port, proc):
    for _ in range(500):
        if proc.poll() is not None:
            sys.exit(f"rivet exited: {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return
        except OSError:
            time.sleep(0.01)
    sys.exit("rivet did not listen")


def run_one(binary, extra, seconds, logdir):
    port = free_port()
    cmd = ["taskset", "-c", "0", binary, "--port", str(port), "--bind", "127.0.0.1",
           "--threads", "1", "--workers", "1", "--no-admin", *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=logdir)
    try:
        wait_listening(port, proc)
        # Warm-up, then the measured run.
        subprocess.run(["taskset", "-c", "1", "wrk", "-t1", "-c100", "-d1s",
                        f"http://127.0.0.1:{port}/hello"], capture_output=True, check=True)
        before = cpu_ticks(proc.pid)
        out = subprocess.run(["taskset", "-c", "1", "wrk", "-t1", "-c100", f"-d{seconds}s",
                              f"http://127.0.0.1:{port}/hello"], capture_output=True,
                             text=True, check=True).stdout
        after = cpu_ticks(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    return (after - before) / TICK * 1e6 / requests, rps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--bin", default=str(REPO / "build" / "rivet"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as logdir:
        kinds = {
            "off": [],
            "log+limit": ["--access-log", f"{logdir}/access.log", "--rate-limit", "1000000000",
                          "--rate-burst", "1000000000"],
        }
        results = {k: [] for k in kinds}
        for rep in range(a.reps):
            for name, extra in kinds.items():
                us, rps = run_one(a.bin, extra, a.seconds, logdir)
                results[name].append(us)
                print(f"rep {rep + 1} {name:10s} {us:6.3f} µs/req  {rps:10.0f} req/s", flush=True)
        lines = sum(1 for _ in open(f"{logdir}/access.log"))
    med = {k: sorted(v)[len(v) // 2] for k, v in results.items()}
    print(f"median: off {med['off']:.3f} µs/req, log+limit {med['log+limit']:.3f} µs/req, "
          f"overhead {100 * (med['log+limit'] / med['off'] - 1):+.1f}%  ({lines} log lines)")


if __name__ == "__main__":
    main()
