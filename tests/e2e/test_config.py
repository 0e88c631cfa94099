"""The configuration file: seed 003's as written, errors with key and line (exit 2),
--check-config, flags over the file, and SIGHUP with a good and with a bad file."""
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from ops_e2e import get, statuses, wait_for, write_config
from rivet_e2e import BIN, REPO, SLOW, build_request, exchange

SEED = REPO / "tests" / "fixtures" / "config" / "seed003_config.json"


def run(*args, timeout=10):
    return subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout * SLOW, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("text,expect", [
    ('{\n  "server": {\n    "port": 8080,\n    "hostname": "x"\n  }\n}',
     'bad.json:4: unknown key "server.hostname"'),
    ('{\n  "logging": {}, \n  "http3": {}\n}', 'bad.json:3: unknown key "http3"'),
    ('{\n  "server": {\n    "port": "8080"\n  }\n}',
     'bad.json:3: server.port: expected an integer from 0 to 65535, got "8080"'),
    ('{\n  "rate_limiting": {\n    "enabled": "yes"\n  }\n}',
     'bad.json:3: rate_limiting.enabled: expected true or false, got "yes"'),
    ('{\n  "limits": {\n\n    "max_body_bytes": -1\n  }\n}',
     'bad.json:4: limits.max_body_bytes: expected an integer from 0 to 1099511627776, got -1'),
    ('{\n  "limits": {"header_timeout": -2}\n}',
     'bad.json:2: limits.header_timeout: expected seconds from 0.001 to 86400, got -2'),
    ('{\n  "threading": {"thread_pool_size": 8, "max_queue_size": 0}\n}',
     'bad.json:2: threading.max_queue_size: expected an integer from 1 to 10000000, got 0'),
    ('{\n  "rate_limiting": {"allow": ["10.0.0.0/40"]}\n}',
     'bad.json:2: rate_limiting.allow: expected a list of addresses or CIDR networks'),
    ('{\n  "server": {"port": 80,}\n}', "bad.json:2: invalid JSON"),
])
def test_bad_configuration_names_key_and_line_exit_2(tmp_path, text, expect):
    path = write_config(tmp_path / "bad.json", text)
    p = run("--config", path, "--port", "0")
    assert p.returncode == 2, p
    assert expect in p.stderr, p.stderr
    assert "listening" not in p.stdout


def test_unreadable_configuration_file_exit_2(tmp_path):
    p = run("--config", tmp_path / "missing.json")
    assert p.returncode == 2, p
    assert "missing.json: cannot read the configuration file" in p.stderr, p.stderr
    p = run("--config", tmp_path)  # a directory
    assert p.returncode == 2, p
    assert "cannot read the configuration file" in p.stderr, p.stderr


def test_a_fifo_as_configuration_file_is_refused_at_start(tmp_path):
    """Opening a FIFO for reading waits for a writer: rivet must refuse it, not hang."""
    fifo = tmp_path / "rivet.json"
    os.mkfifo(fifo)
    for extra in ((), ("--check-config",)):
        p = run("--config", fifo, "--port", "0", *extra)
        assert p.returncode == 2, p
        assert f"{fifo}: cannot read the configuration file: it is a FIFO, not a regular file" \
            in p.stderr, p.stderr
    p = run("--config", tmp_path)
    assert "it is a directory, not a regular file" in p.stderr, p.stderr


def test_sighup_with_a_fifo_as_configuration_file_keeps_the_old_one_and_sigterm_stops(
        rivet, tmp_path):
    """SIGHUP and SIGTERM are taken by the same thread: a reload must never block it."""
    cfg = write_config(tmp_path / "rivet.json", {"limits": {"max_body_bytes": 100}})
    srv = rivet(args=("--config", cfg, "--threads", "1", "--workers", "1"))
    cfg.unlink()
    os.mkfifo(cfg)
    srv.send_signal(signal.SIGHUP)
    wait_for(lambda: "configuration refused" in srv.stderr(), what="the refusal")
    assert "it is a FIFO, not a regular file" in srv.stderr()
    assert srv.post("/echo", b"y" * 200).status == 413  # the old configuration stays
    assert srv.stop(signal.SIGTERM, timeout=10) == 0


def test_every_problem_is_reported_at_once(tmp_path):
    path = write_config(tmp_path / "bad.json", {"server": {"port": -1, "x": 1}, "y": 2})
    p = run("--config", path)
    assert p.returncode == 2
    assert p.stderr.count("rivet: ") == 3, p.stderr


def test_check_config_prints_the_effective_configuration():
    p = run("--config", SEED, "--check-config", "--port", "9999", "--log-format", "json")
    assert p.returncode == 0, p
    doc = json.loads(p.stdout)
    assert doc["server"]["port"] == 9999  # the flag wins
    assert doc["server"]["max_connections"] == 1000
    assert doc["threading"] == {"thread_pool_size": 8, "max_queue_size": 10000}
    assert doc["cache"] == {"enabled": True, "max_size_mb": 100, "ttl_seconds": 300}
    assert doc["rate_limiting"]["enabled"] is True
    assert doc["rate_limiting"]["requests_per_second"] == 100
    assert doc["rate_limiting"]["burst_size"] == 200
    assert doc["logging"]["format"] == "json"
    assert doc["limits"]["keepalive_timeout"] == 30  # server.socket_timeout
    for section in ("server", "threading", "cache", "rate_limiting", "logging", "limits",
                    "static", "metrics"):
        assert section in doc


def test_check_config_refuses_a_bad_file(tmp_path):
    path = write_config(tmp_path / "bad.json", {"server": {"port": 70000}})
    p = run("--config", path, "--check-config")
    assert p.returncode == 2
    assert "server.port" in p.stderr


def test_seed_configuration_serves(rivet):
    srv = rivet(args=("--config", SEED, "--threads", "2", "--workers", "2"))
    assert srv.get("/hello").text == "Hello, World!"
    assert srv.get("/healthz").text == "ok"


def test_sighup_applies_a_good_file_and_keeps_the_old_on_a_bad_one(rivet, tmp_path):
    cfg = tmp_path / "rivet.json"
    write_config(cfg, {"rate_limiting": {"enabled": False}})
    srv = rivet(args=("--config", cfg, "--threads", "1", "--workers", "1"))
    with srv.connect() as c:
        assert statuses(c, [get("/hello")] * 5) == [200] * 5

    # A good file: a rate limit of burst 2, and a 100-byte body limit.
    write_config(cfg, {"rate_limiting": {"enabled": True, "requests_per_second": 0.01,
                                         "burst_size": 2},
                       "limits": {"max_body_bytes": 100}})
    srv.send_signal(signal.SIGHUP)
    wait_for(lambda: "applied" in srv.stderr(), what="the reload")
    with srv.connect() as c:
        assert statuses(c, [get("/hello")] * 3) == [200, 200, 429]
    r = srv.post("/echo", b"x" * 200)
    assert r.status in (413, 429), r  # the new body limit (or the rate limit) refuses it

    # A bad file: reported, and the old configuration stays (still limited).
    write_config(cfg, '{"rate_limiting": {"enabled": "maybe"}}')
    srv.send_signal(signal.SIGHUP)
    wait_for(lambda: "configuration refused" in srv.stderr(), what="the refusal")
    assert 'rate_limiting.enabled: expected true or false' in srv.stderr()
    assert srv.alive()
    assert srv.get("/hello").status == 429


def test_sighup_changes_limits_live(rivet, tmp_path):
    cfg = tmp_path / "rivet.json"
    write_config(cfg, {"limits": {"max_body_bytes": 1000}})
    srv = rivet(args=("--config", cfg, "--threads", "1", "--workers", "1"))
    assert srv.post("/echo", b"y" * 500).status == 200
    write_config(cfg, {"limits": {"max_body_bytes": 100}})
    srv.send_signal(signal.SIGHUP)
    wait_for(lambda: "applied" in srv.stderr(), what="the reload")
    time.sleep(0.05)
    assert srv.post("/echo", b"y" * 500).status == 413


def test_limit_flags(rivet):
    srv = rivet(args=("--threads", "1", "--workers", "1", "--max-body", "10",
                      "--max-requests-per-connection", "2", "--max-headers", "5"))
    assert srv.post("/echo", b"z" * 11).status == 413
    with srv.connect() as c:
        c.send(get("/hello") * 3)
        r1, r2 = c.read_response(), c.read_response()
        assert r2.closes and not r1.closes
    r = srv.get("/hello", headers={f"X-{i}": "v" for i in range(6)})
    assert r.status == 431


def test_help_lists_the_new_flags():
    p = run("--help")
    for flag in ("--config", "--check-config", "--max-connections", "--header-timeout",
                 "--body-timeout", "--keepalive-timeout", "--write-timeout", "--max-body",
                 "--max-requests-per-connection", "--access-log", "--error-log", "--log-format",
                 "--log-level", "--rate-limit", "--rate-burst", "--admin-port", "--no-admin"):
        assert flag in p.stdout, flag


def test_check_config_refuses_the_admin_port_on_the_main_port(tmp_path):
    # Each setting is good alone; together the second listener could not bind at start.
    path = write_config(tmp_path / "r.json", {"server": {"port": 9123},
                                             "metrics": {"admin_port": 9123}})
    p = run("--config", path, "--check-config")
    assert p.returncode == 2, p
    assert ("rivet: metrics.admin_port: the admin port 9123 is the plain HTTP port too"
            in p.stderr), p.stderr
    assert "is not usable" in p.stderr
    assert run("--check-config", "--port", "9123", "--admin-port", "9124").returncode == 0


def test_check_config_refuses_an_access_log_in_a_missing_directory(tmp_path):
    log = tmp_path / "no-such-dir" / "access.log"
    path = write_config(tmp_path / "r.json", {"logging": {"access_log": str(log)}})
    p = run("--config", path, "--check-config")
    assert p.returncode == 2, p
    assert f"logging.access_log (--access-log): cannot create {log}" in p.stderr, p.stderr
    # The same through the flag, and a directory that exists is fine.
    assert run("--check-config", "--access-log", log).returncode == 2
    assert run("--check-config", "--access-log", tmp_path / "access.log").returncode == 0
    assert not (tmp_path / "access.log").exists()  # checking creates nothing


def test_old_flag_names_are_aliases():
    new = run("--check-config", "--io-threads", "3", "--thread-pool-size", "5")
    old = run("--check-config", "--threads", "3", "--workers", "5")
    assert new.returncode == old.returncode == 0, (new.stderr, old.stderr)
    assert new.stdout == old.stdout
    doc = json.loads(new.stdout)
    assert (doc["server"]["io_threads"], doc["threading"]["thread_pool_size"]) == (3, 5)


H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def test_http2_is_on_by_default_and_fixed_until_a_restart(rivet, tmp_path):
    assert json.loads(run("--check-config").stdout)["server"]["http2"] is True
    assert json.loads(run("--check-config", "--no-http2").stdout)["server"]["http2"] is False
    assert "--no-http2" in run("--help").stdout
    cfg = write_config(tmp_path / "rivet.json", {"server": {"http2": False}})
    srv = rivet(args=("--config", cfg, "--threads", "1", "--workers", "1"))

    def preface_refused():  # HTTP/2 off: the preface is an HTTP/1.1 request, and a bad one
        responses, _, raw = exchange(srv.host, srv.port, H2_PREFACE)
        return bool(responses) and responses[0].status in (400, 505)

    assert preface_refused()
    write_config(cfg, {"server": {"http2": True}})
    srv.send_signal(signal.SIGHUP)
    wait_for(lambda: "applied" in srv.stderr(), what="the reload")
    assert "server.http2 changes only at a restart" in srv.stderr()
    assert preface_refused()
    assert srv.get("/hello").status == 200
