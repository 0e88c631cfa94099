"""A throwaway PostgreSQL 15 cluster for the rivet::pg tests (Debian's postgresql package).

initdb into a temporary directory, run by an unprivileged user (root cannot run postgres:
`nobody` when the tests run as root), listening on a Unix socket only, in that directory, named
after a free port. `conninfo` is what libpq (and rivet::pg) connect with; `sql()` runs psql.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

PG_BIN = Path("/usr/lib/postgresql/15/bin")
PSQL = shutil.which("psql") or "/usr/bin/psql"


def available() -> bool:
    return (PG_BIN / "initdb").exists() and (PG_BIN / "pg_ctl").exists() and Path(PSQL).exists()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgCluster:
    def __init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="rivet-pg-"))
        self.data = self.dir / "data"
        self.log = self.dir / "postgres.log"
        self.port = free_port()
        self.as_user = []
        if os.geteuid() == 0:
            shutil.chown(self.dir, user="nobody")
            self.as_user = ["runuser", "-u", "nobody", "--"]
        self._run(PG_BIN / "initdb", "-D", self.data, "--auth=trust", "-U", "postgres",
                  "--no-sync", "-E", "UTF8", "--locale=C")
        self.conninfo = f"host={self.dir} port={self.port} user=postgres dbname=postgres"

    def _run(self, *cmd, check=True):
        return subprocess.run(self.as_user + [str(c) for c in cmd], check=check,
                              capture_output=True, text=True, timeout=120)

    def start(self) -> None:
        options = (f"-p {self.port} -k {self.dir} -c listen_addresses='' -c fsync=off "
                   "-c max_connections=200")
        self._run(PG_BIN / "pg_ctl", "-D", self.data, "-l", self.log, "-o", options, "-w",
                  "-t", "60", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run(PG_BIN / "pg_ctl", "-D", self.data, "-m", mode, "-w", "-t", "60", "stop",
                  check=False)

    def sql(self, statement: str) -> str:
        """Runs one statement with psql; its rows, unaligned, '|' between fields."""
        r = subprocess.run([PSQL, "-h", str(self.dir), "-p", str(self.port), "-U", "postgres",
                            "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-Atc", statement],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError(f"psql: {statement}: {r.stderr}")
        return r.stdout.strip()

    def destroy(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.dir, ignore_errors=True)
