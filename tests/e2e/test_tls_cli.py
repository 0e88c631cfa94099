"""The rivet executable's HTTPS flags and tls section on the real binary: refusals with exit 2
and one line saying why, --check-config printing the section, and (once tls::check is in)
checking the certificate files."""
import json
import subprocess

import pytest

from ops_e2e import write_config
from rivet_e2e import BIN, REPO, SLOW



def run(*args, timeout=10):
    return subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout * SLOW, stdin=subprocess.DEVNULL)


def refused(*args) -> str:
    p = run(*args)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert p.stdout == ""
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    return lines[0]


def make_cert(tmp_path, name="site", days=30):
    cert, key = tmp_path / f"{name}.pem", tmp_path / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-days", str(days), "-subj",
                    "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
                    "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    return cert, key


@pytest.mark.parametrize("args,says", [
    (("--tls-cert", "x.pem"), "rivet: --tls-cert needs --tls-key (its private key)"),
    (("--tls-key", "x.key"), "rivet: --tls-key needs --tls-cert (the certificate it belongs to)"),
    (("--tls-cert", "c", "--tls-key", "k", "--tls-port", "65536"),
     "rivet: invalid value '65536' for --tls-port: expected a port from 0 to 65535"),
    (("--tls-cert", "c", "--tls-key", "k", "--tls-min-version", "1.1"),
     "rivet: invalid value '1.1' for --tls-min-version: expected 1.2 or 1.3"),
    (("--tls-cert", "c", "--tls-key", "k", "--hsts", "63072001"),
     "rivet: invalid value '63072001' for --hsts: expected whole seconds from 0 to 63072000 "
     "(two years)"),
    (("--handshake-timeout", "0"),
     "rivet: invalid value '0' for --handshake-timeout: expected seconds from 0.001 to 3600"),
    (("--redirect-https",),
     "rivet: --redirect-https: HTTPS is off; give --tls-cert and --tls-key (or the "
     "configuration file's tls section)"),
    (("--tls-cert", "c", "--tls-key", "k", "--port", "9000", "--tls-port", "9000"),
     "rivet: the HTTPS port 9000 is the plain HTTP port too (--tls-port, tls.port)"),
])
def test_bad_tls_flags_exit_2_with_one_line(args, says):
    assert refused(*args) == says


@pytest.mark.parametrize("text,says", [
    ('{\n  "tls": {\n    "port": 9443\n  }\n}',
     'rivet: bad.json:2: tls: the section turns HTTPS on and needs "certificates": '
     '[{"cert": FILE, "key": FILE}]'),
    ('{\n  "tls": {\n    "certificates": [{"cert": "c.pem"}]\n  }\n}',
     'rivet: bad.json:3: tls.certificates: [0]: "key" is missing'),
    ('{\n  "tls": {"certificates": [{"cert": "c", "key": "k"}],\n   "hsts": -1}\n}',
     'rivet: bad.json:3: tls.hsts: expected an integer from 0 to 63072000, got -1'),
])
def test_bad_tls_section_names_key_and_line(tmp_path, text, says):
    path = write_config(tmp_path / "bad.json", text)
    assert refused("--config", path).replace(str(tmp_path) + "/", "") == says


def test_check_config_prints_the_tls_section(tmp_path):
    cert, key = make_cert(tmp_path)
    path = write_config(tmp_path / "rivet.json", {"tls": {
        "certificates": [{"cert": str(cert), "key": str(key)}], "port": 9443,
        "session_tickets": False}})
    p = run("--config", path, "--check-config", "--hsts", "60", "--handshake-timeout", "3")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["tls"]["certificates"] == [{"cert": str(cert), "key": str(key)}]
    assert doc["tls"]["port"] == 9443
    assert doc["tls"]["session_tickets"] is False
    assert doc["tls"]["hsts"] == 60  # the flag wins
    assert doc["limits"]["handshake_timeout"] == 3
    assert "is valid" in p.stderr
    # Without a certificate there is no tls section: what is printed reads back the same.
    plain = run("--check-config")
    assert plain.returncode == 0 and "tls" not in json.loads(plain.stdout)


def test_check_config_names_a_missing_certificate_file(tmp_path):
    _, key = make_cert(tmp_path)
    missing = tmp_path / "missing.pem"
    p = run("--tls-cert", missing, "--tls-key", key, "--check-config")
    assert p.returncode == 2, p.stderr
    problems = [line for line in p.stderr.splitlines() if str(missing) in line]
    assert problems and problems[0].startswith("rivet: "), p.stderr
    assert "is not usable" in p.stderr


def test_help_lists_the_tls_flags():
    p = run("--help")
    for flag in ("--tls-cert", "--tls-key", "--tls-port", "--tls-min-version",
                 "--tls-allow-expired", "--redirect-https", "--hsts", "--handshake-timeout"):
        assert flag in p.stdout, flag
