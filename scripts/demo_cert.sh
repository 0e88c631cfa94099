#!/usr/bin/env bash
# `make run`'s HTTPS certificate: a self-signed one for localhost (127.0.0.1 and ::1 too), made
# at first start into DIR (under the git-ignored build directory: never committed) and reused
# until it has less than 30 days left. ECDSA P-256, valid 365 days.
#   scripts/demo_cert.sh DIR [PORT]   -> DIR/cert.pem, DIR/key.pem; says how to trust them
set -euo pipefail

dir=${1:?usage: scripts/demo_cert.sh DIR [HTTPS_PORT]}
port=${2:-8443}
cert=$dir/cert.pem
key=$dir/key.pem
renew_before=$((30 * 24 * 3600))

say_how_to_trust() {
  echo "  trust it with: curl --cacert $cert https://localhost:$port/hello"
}

if [ -s "$cert" ] && [ -s "$key" ] &&
  openssl x509 -in "$cert" -noout -checkend "$renew_before" >/dev/null 2>&1; then
  echo "demo TLS certificate for localhost: $cert (self-signed, made earlier)"
  say_how_to_trust
  exit 0
fi

mkdir -p "$dir"
# The key is written under a temporary name and readable by its owner only; the pair appears
# together (rename), so an interrupted run never leaves a certificate without its key.
umask 077
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 365 \
  -subj "/CN=localhost" \
  -addext "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1" \
  -addext "basicConstraints=critical,CA:FALSE" \
  -addext "keyUsage=critical,digitalSignature" \
  -addext "extendedKeyUsage=serverAuth" \
  -keyout "$key.tmp" -out "$cert.tmp" 2>/dev/null
mv "$key.tmp" "$key"
mv "$cert.tmp" "$cert"
chmod 644 "$cert"

echo "demo TLS certificate for localhost: $cert (key $key), self-signed, made now for 365 days"
say_how_to_trust
