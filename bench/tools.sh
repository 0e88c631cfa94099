#!/usr/bin/env bash
# The benchmark's own tools, installed once into a cache (default ~/.cache/rivet-bench, or
# $BENCH_CACHE) and reused by every later run:
#   oha      open-loop load with coordinated-omission correction: `cargo install oha --locked`
#            from crates.io (one-time build: about 12 minutes on 2 cores)
#   venv     a Python virtual environment with matplotlib from PyPI, for the plots (only when
#            python3 itself lacks matplotlib)
# Prints `OHA_BIN=...` and `BENCH_PLOT_PYTHON=...` lines for bench/run.sh; an empty value means
# the tool could not be installed (the harness then marks open-loop rows n/a / skips plots).
#   bash bench/tools.sh [--no-build]    --no-build: report what is cached, install nothing
set -uo pipefail

CACHE=${BENCH_CACHE:-$HOME/.cache/rivet-bench}
OHA_VERSION=1.16.0
build=1
[ "${1:-}" = "--no-build" ] && build=0
mkdir -p "$CACHE"

oha=""
if [ -x "$CACHE/bin/oha" ] && "$CACHE/bin/oha" --version 2>/dev/null | grep -q " $OHA_VERSION"; then
  oha="$CACHE/bin/oha"
elif [ "$build" = 1 ]; then
  cargo=$(command -v cargo || echo "$HOME/.cargo/bin/cargo")
  if [ -x "$cargo" ]; then
    echo "tools: building oha $OHA_VERSION from crates.io into $CACHE (once; ~12 min on 2 cores)" >&2
    if "$cargo" install oha --version "$OHA_VERSION" --locked --root "$CACHE" >"$CACHE/oha-build.log" 2>&1; then
      oha="$CACHE/bin/oha"
    else
      echo "tools: cargo install oha failed (log: $CACHE/oha-build.log); open-loop rows will read n/a" >&2
    fi
  else
    echo "tools: no cargo (Rust from rustup: https://rustup.rs): open-loop rows will read n/a" >&2
  fi
fi

plot_python=""
if python3 -c 'import matplotlib' >/dev/null 2>&1; then
  plot_python=$(command -v python3)
elif [ -x "$CACHE/venv/bin/python" ] && "$CACHE/venv/bin/python" -c 'import matplotlib' >/dev/null 2>&1; then
  plot_python="$CACHE/venv/bin/python"
elif [ "$build" = 1 ]; then
  echo "tools: installing matplotlib from PyPI into $CACHE/venv (once)" >&2
  rm -rf "$CACHE/venv"
  if python3 -m venv "$CACHE/venv" >&2 && "$CACHE/venv/bin/pip" install -q matplotlib >&2; then
    plot_python="$CACHE/venv/bin/python"
  else
    echo "tools: could not install matplotlib: no plots" >&2
  fi
fi

echo "OHA_BIN=$oha"
echo "BENCH_PLOT_PYTHON=$plot_python"
