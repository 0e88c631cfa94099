#!/usr/bin/env bash
# Installs what rivet's build, tests and benchmarks need, and nothing when all of it is there.
# Idempotent and quiet: prints only what it installs.
set -euo pipefail

# Debian packages: the command or file that proves each one is present.
declare -A need=(
  [cmake]=/usr/bin/cmake
  [ninja-build]=/usr/bin/ninja
  [g++]=/usr/bin/g++
  [pkg-config]=/usr/bin/pkg-config
  [nlohmann-json3-dev]=/usr/include/nlohmann/json.hpp
  [libgmp-dev]=/usr/include/x86_64-linux-gnu/gmp.h
  [zlib1g-dev]=/usr/include/zlib.h
  [libbrotli-dev]=/usr/include/brotli/encode.h
  [libzstd-dev]=/usr/include/zstd.h
  [libssl-dev]=/usr/include/openssl/ssl.h
  [libnghttp2-dev]=/usr/include/nghttp2/nghttp2.h
  [libc-ares-dev]=/usr/include/ares.h
  [nghttp2-client]=/usr/bin/h2load
  [openssl]=/usr/bin/openssl
  [libgtest-dev]=/usr/include/gtest/gtest.h
  [clang]=/usr/bin/clang++
  [libclang-rt-14-dev]=/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a
  [clang-format]=/usr/bin/clang-format
  [curl]=/usr/bin/curl
  [wrk]=/usr/bin/wrk
  [valgrind]=/usr/bin/valgrind
  [nginx-light]=/usr/sbin/nginx
  [h2o]=/usr/bin/h2o
  [lighttpd]=/usr/sbin/lighttpd
  [lighttpd-modules-lua]=/usr/lib/lighttpd/mod_magnet.so
  [libcpp-httplib-dev]=/usr/include/httplib.h
  [libboost-dev]=/usr/include/boost/beast.hpp
  [procps]=/usr/bin/ps
  [util-linux]=/usr/bin/taskset
  [chromium]=/usr/bin/chromium
  [haproxy]=/usr/sbin/haproxy
  [docker.io]=/usr/sbin/dockerd
  # rivet::pg (lib/pg/): libpq to build it, PostgreSQL 15 for its tests (tests/e2e/test_pg.py
  # starts its own server in a temporary directory, as an unprivileged user).
  [libpq-dev]=/usr/include/postgresql/libpq-fe.h
  [postgresql]=/usr/lib/postgresql/15/bin/initdb
  # The Redis client (src/redis/, hiredis's async API on the loop) and the Redis its tests and
  # the shared rate limit's tests start (tests/e2e/redis_server.py: a temp dir, a free port).
  [libhiredis-dev]=/usr/include/hiredis/async.h
  [redis-server]=/usr/bin/redis-server
  # `make test-busy`: the suite beside `stress-ng --cpu N`, as on a busy laptop or CI runner.
  [stress-ng]=/usr/bin/stress-ng
  # make test's four builds share what did not change (CMakeLists.txt, RIVET_CCACHE).
  [ccache]=/usr/bin/ccache
)

missing=()
for pkg in "${!need[@]}"; do
  [ -e "${need[$pkg]}" ] || missing+=("$pkg")
done

# Go (the TLS tests' net/http client, tests/e2e/go, and the benchmark's resumption load): any
# go on the PATH will do, else Debian's.
command -v go >/dev/null 2>&1 || missing+=(golang-go)

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # nginx-light, h2o and lighttpd start system services on port 80; the benchmarks run their own.
  if command -v systemctl >/dev/null 2>&1; then
    # haproxy and docker likewise: the tests start their own (docker with a temporary data root).
    # postgresql too: the tests run their own cluster on a port of their own.
    for svc in nginx h2o lighttpd haproxy docker containerd postgresql; do
      $SUDO systemctl disable --now "$svc" >/dev/null 2>&1 || true
    done
  fi
fi

# Python modules of the tests, from PyPI: pytest; brotli and zstandard (the compression tests decode
# with the reference libraries' bindings; gzip is in the standard library); websockets (the
# WebSocket load generator's own test, bench/test_ws_bench.py, checks it against an independent
# server; the e2e tests of examples/notes_feed.cpp and public/chat.html use it as a client);
# requests (test_forms.py: a real client's multipart encoder, streaming a generator; the sessions
# tests, test_sessions.py: a real client's cookie handling).
for module in pytest brotli zstandard websockets requests; do
  if ! python3 -c "import $module" >/dev/null 2>&1; then
    echo "setup: installing $module"
    python3 -m pip install -q "$module"
  fi
done

# PyYAML (imported as yaml): tests/e2e/test_deploy_files.py parses the Kubernetes manifests.
if ! python3 -c "import yaml" >/dev/null 2>&1; then
  echo "setup: installing pyyaml"
  python3 -m pip install -q pyyaml
fi

# Pinned Python packages of the WebSocket tests: kosoku runs the Autobahn|Testsuite cases on
# Python 3 (test_websocket_autobahn.py); websockets is a real client there and the Chromium
# test's DevTools protocol client (test_websocket_clients.py). The HTTP/2 tests: h2 (with its
# hyperframe and hpack, the raw frames of test_http2_attacks.py) and httpx, a real client
# that speaks HTTP/2 through h2 (test_http2_clients.py). pytest-xdist: `make e2e` runs the
# end-to-end tests in two processes (E2E_JOBS). prometheus_client: the /metrics tests read the
# exposition with Prometheus' own parser (text_string_to_metric_families), pinned so that what
# "parses" means does not move under them.
declare -A pinned=([kosoku]=0.1.0 [websockets]=17.4 [h2]=4.3.0 [httpx]=0.28.1 [pytest-xdist]=3.6.1
                   [prometheus_client]=0.26.0)
for pkg in "${!pinned[@]}"; do
  have=$(python3 -c "import importlib.metadata as m; print(m.version('$pkg'))" 2>/dev/null || true)
  if [ "$have" != "${pinned[$pkg]}" ]; then
    echo "setup: installing $pkg==${pinned[$pkg]}"
    python3 -m pip install -q "$pkg==${pinned[$pkg]}"
  fi
done

# h2spec, the HTTP/2 conformance suite (test_http2_conformance.py), built from its Go module
# into `go env GOBIN` or GOPATH/bin, where the test looks. v2.2.1 is the newest version the
# module proxy serves (later tags have a go.mod without the /v2 suffix); its 145 cases are the
# ones issue 22 counts. Rebuilt only when that version is not the one there.
H2SPEC_VERSION=v2.2.1+incompatible
if command -v go >/dev/null 2>&1; then
  gobin=$(go env GOBIN)
  [ -n "$gobin" ] || gobin="$(go env GOPATH | cut -d: -f1)/bin"
  if ! go version -m "$gobin/h2spec" 2>/dev/null | grep -q "summerwind/h2spec[[:space:]]*$H2SPEC_VERSION"; then
    echo "setup: installing h2spec $H2SPEC_VERSION"
    go install "github.com/summerwind/h2spec/cmd/h2spec@$H2SPEC_VERSION"
  fi
fi

# The Go WebSocket client's module (tests/e2e/clients/go: github.com/coder/websocket) into the
# module cache, so that the test builds it without the network; nothing when already there.
if command -v go >/dev/null 2>&1; then
  (cd "$(dirname "$0")/../tests/e2e/clients/go" && go mod download)
  # The benchmark's Go peer of rivet::pg (bench/peers/go_pg: pgx v5), the same way.
  (cd "$(dirname "$0")/../bench/peers/go_pg" && go mod download)
fi
