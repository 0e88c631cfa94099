"""nginx started by the tests: in the foreground, one worker, every file under its own prefix
(no /var/lib/nginx, no root), with the http {} block's content the test gives."""
from __future__ import annotations

import shutil
import socket
import subprocess
from pathlib import Path

from ops_e2e import wait_for

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)

MAIN_CONF = """\
daemon off;
master_process off;
worker_processes 1;
error_log {prefix}/error.log warn;
pid {prefix}/nginx.pid;
events {{ worker_connections 1024; }}
http {{
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
{http}
}}
"""


def start_nginx(prefix: Path, http: str, port: int) -> subprocess.Popen:
    """Starts nginx with `http` inside its http {} block (errors in prefix/error.log; requests
    in prefix/logs/access.log unless `http` says otherwise) and returns once 127.0.0.1:port
    accepts connections."""
    (prefix / "logs").mkdir(parents=True, exist_ok=True)
    conf = prefix / "nginx.conf"
    conf.write_text(MAIN_CONF.format(prefix=prefix, http=http))
    proc = subprocess.Popen([NGINX, "-p", str(prefix), "-c", str(conf)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)

    def listening():
        if proc.poll() is not None:
            raise AssertionError(f"nginx exited: {proc.stdout.read().decode(errors='replace')}"
                                 f"{(prefix / 'error.log').read_text(errors='replace')}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            return False

    try:
        wait_for(listening, timeout=10, what="nginx listening")
    except BaseException:
        stop_nginx(proc)
        raise
    return proc


def stop_nginx(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
    proc.wait(timeout=10)
