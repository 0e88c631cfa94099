"""Certificates for the TLS tests, made at test time with the `openssl` command line (never
committed): a CA, an intermediate signed by it, and leaves signed by the intermediate, each leaf's
file holding the full chain (leaf, then intermediate), as a server is given it.

    ca               the trust anchor clients are given (--cacert, cafile=)
    server           localhost and 127.0.0.1, the default certificate
    server_b         the same names, another serial and subject (the SIGHUP swap)
    other            other.test, chosen by SNI
    expired          localhost, valid for a day in 2020
    mismatched_key   a key that belongs to no certificate here

All keys are ECDSA P-256 (the benchmark gives nginx the same). `tls_certs` in conftest.py makes
them once per session.
"""
from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Leaf:
    cert: Path  # leaf + intermediate, PEM
    key: Path
    subject_cn: str
    serial: int

    def args(self) -> list[str]:
        return ["--tls-cert", str(self.cert), "--tls-key", str(self.key)]


def openssl(*args, cwd: Path, stdin: str | None = None) -> str:
    p = subprocess.run(["openssl", *map(str, args)], cwd=cwd, input=stdin, capture_output=True,
                       text=True, timeout=30)
    if p.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(map(str, args))} failed:\n{p.stderr}")
    return p.stdout


CA_EXT = "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n"
INTERMEDIATE_EXT = "basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\n"


def leaf_ext(sans: list[str]) -> str:
    return ("basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
            f"extendedKeyUsage=serverAuth\nsubjectAltName={','.join(sans)}\n")


# `openssl ca` is the only command line way to a validity period in the past (x509 -days takes
# no negative number): a minimal CA database for the expired leaf.
CA_CONF = """
[ca]
default_ca = ca_sect
[ca_sect]
database = {dir}/index.txt
new_certs_dir = {dir}
serial = {dir}/serial
default_md = sha256
policy = policy_any
copy_extensions = none
unique_subject = no
[policy_any]
commonName = supplied
[leaf_ext]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost,IP:127.0.0.1
"""


class TlsCerts:
    def __init__(self, d: Path):
        self.dir = Path(d)
        self.dir.mkdir(parents=True, exist_ok=True)
        self._serial = 0x1000
        self.ca = self.dir / "ca.pem"
        self._ca_key = self._key("ca")
        self._self_signed(self._ca_key, "rivet test CA", self.ca)
        self.intermediate = self.dir / "intermediate.pem"
        self._int_key = self._key("intermediate")
        self._sign(self._int_key, "rivet test intermediate", self.intermediate, self.ca,
                   self._ca_key, INTERMEDIATE_EXT)
        localhost = ["DNS:localhost", "IP:127.0.0.1"]
        self.server = self.leaf("server", "localhost", localhost)
        self.server_b = self.leaf("server_b", "localhost B", localhost)
        self.other = self.leaf("other", "other.test", ["DNS:other.test"])
        self.expired = self._expired_leaf()
        self.mismatched_key = self._key("mismatched")

    # -- pieces --

    def _key(self, name: str) -> Path:
        path = self.dir / f"{name}.key"
        openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                "-pkeyopt", "ec_param_enc:named_curve", "-out", path, cwd=self.dir)
        return path

    def _next_serial(self) -> int:
        self._serial += 1
        return self._serial

    def _self_signed(self, key: Path, cn: str, out: Path) -> None:
        ext = self.dir / "ca.ext"
        ext.write_text(CA_EXT)
        openssl("req", "-new", "-x509", "-key", key, "-subj", f"/CN={cn}", "-days", "3650",
                "-sha256", "-set_serial", self._next_serial(), "-extensions", "v3",
                "-config", self._req_conf(ext), "-out", out, cwd=self.dir)

    def _req_conf(self, ext: Path) -> Path:
        conf = ext.with_suffix(".cnf")
        conf.write_text("[req]\ndistinguished_name=dn\n[dn]\n[v3]\n" + ext.read_text())
        return conf

    def _sign(self, key: Path, cn: str, out: Path, issuer: Path, issuer_key: Path,
              ext_text: str, days: int = 825) -> int:
        csr = out.with_suffix(".csr")
        ext = out.with_suffix(".ext")
        ext.write_text(ext_text)
        openssl("req", "-new", "-key", key, "-subj", f"/CN={cn}", "-out", csr, cwd=self.dir)
        serial = self._next_serial()
        openssl("x509", "-req", "-in", csr, "-CA", issuer, "-CAkey", issuer_key, "-days", str(days),
                "-sha256", "-set_serial", serial, "-extfile", ext, "-out", out, cwd=self.dir)
        return serial

    def leaf(self, name: str, cn: str, sans: list[str], days: int = 825) -> Leaf:
        """A new leaf signed by the intermediate, valid `days` from now; its file holds leaf +
        intermediate."""
        key = self._key(name)
        only = self.dir / f"{name}.leaf.pem"
        serial = self._sign(key, cn, only, self.intermediate, self._int_key, leaf_ext(sans), days)
        chain = self.dir / f"{name}.pem"
        chain.write_text(only.read_text() + self.intermediate.read_text())
        return Leaf(chain, key, cn, serial)

    def _expired_leaf(self) -> Leaf:
        cadir = self.dir / "ca-db"
        cadir.mkdir(exist_ok=True)
        (cadir / "index.txt").write_text("")
        serial = self._next_serial()
        (cadir / "serial").write_text(f"{serial:X}\n")
        conf = cadir / "ca.cnf"
        conf.write_text(CA_CONF.format(dir=cadir))
        key = self._key("expired")
        csr = self.dir / "expired.csr"
        openssl("req", "-new", "-key", key, "-subj", "/CN=localhost expired", "-out", csr,
                cwd=self.dir)
        only = self.dir / "expired.leaf.pem"
        openssl("ca", "-batch", "-config", conf, "-cert", self.intermediate, "-keyfile",
                self._int_key, "-in", csr, "-out", only, "-notext", "-extensions", "leaf_ext",
                "-startdate", "20200101000000Z", "-enddate", "20200102000000Z", cwd=self.dir)
        chain = self.dir / "expired.pem"
        chain.write_text(only.read_text() + self.intermediate.read_text())
        return Leaf(chain, key, "localhost expired", serial)


def served_certificate(host: str, port: int, servername: str | None = None,
                       cafile: Path | None = None) -> dict:
    """The leaf a TLS server presents: {"subject", "serial" (int), "issuer"}, read with
    `openssl s_client` (with -servername when given, -noservername otherwise)."""
    sni = ["-servername", servername] if servername else ["-noservername"]
    p = subprocess.run(["openssl", "s_client", "-connect", f"{host}:{port}", *sni,
                        *(["-CAfile", str(cafile)] if cafile else [])],
                       input="", capture_output=True, text=True, timeout=20)
    pem_start = p.stdout.find("-----BEGIN CERTIFICATE-----")
    if pem_start < 0:
        raise AssertionError(f"no certificate from {host}:{port}:\n{p.stdout}\n{p.stderr}")
    pem_end = p.stdout.index("-----END CERTIFICATE-----", pem_start) + 25
    x = subprocess.run(["openssl", "x509", "-noout", "-subject", "-serial", "-issuer",
                        "-nameopt", "RFC2253"], input=p.stdout[pem_start:pem_end],
                       capture_output=True, text=True, timeout=10)
    out = {}
    for line in x.stdout.splitlines():
        k, _, v = line.partition("=")
        out[k.strip()] = v.strip()
    return {"subject": out.get("subject", ""), "serial": int(out.get("serial", "0"), 16),
            "issuer": out.get("issuer", ""), "verify": p.stdout}
