#!/usr/bin/env bash
# Builds the Rust WebSocket peer of bench/ws_bench.py (bench/peers/ws_rust: fastwebsockets on
# tokio, versions pinned by its Cargo.lock) into the bench cache and prints the binary's path.
#   bash bench/ws_rust_peer.sh [--no-build]
# The first build fetches its crates from crates.io (about 2 minutes on 2 cores); later ones are
# no-ops. --no-build (the smoke run): only an up-to-date existing build, checked offline; else
# nothing printed, the reason on stderr and status 1 (the bench then skips the peer).
set -uo pipefail
cd "$(dirname "$0")/peers/ws_rust"
CACHE=${BENCH_CACHE:-$HOME/.cache/rivet-bench}
export CARGO_TARGET_DIR="$CACHE/ws_rust-target"
bin="$CARGO_TARGET_DIR/release/ws_rust_echo"
cargo=$(command -v cargo || echo "$HOME/.cargo/bin/cargo")
if [ ! -x "$cargo" ]; then
  echo "no cargo (Rust from rustup: https://rustup.rs): the Rust peer is skipped" >&2
  exit 1
fi
if [ "${1:-}" = "--no-build" ]; then
  if [ ! -x "$bin" ]; then
    echo "not built (bash bench/ws_rust_peer.sh builds it: crates.io, about 2 min)" >&2
    exit 1
  fi
  "$cargo" build --release --locked --offline -q >"$CACHE/ws_rust-build.log" 2>&1 || {
    echo "the cached build is out of date and cannot be rebuilt offline (bash bench/ws_rust_peer.sh)" >&2
    exit 1
  }
else
  echo "ws_rust_peer: cargo build --release --locked (log: $CACHE/ws_rust-build.log)" >&2
  mkdir -p "$CACHE"
  "$cargo" build --release --locked >"$CACHE/ws_rust-build.log" 2>&1 || {
    echo "cargo build failed (log: $CACHE/ws_rust-build.log)" >&2
    exit 1
  }
fi
echo "$bin"
