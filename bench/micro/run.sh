#!/usr/bin/env bash
# Builds bench/micro/request_build.cpp against this checkout's library (build/) and, when
# RIVET_BASE_SRC names another checkout with a Release build in its build/, against that one
# too; runs them interleaved on one core, 5 times each. Usage: bash bench/micro/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
build() {  # SRC NAME
    g++ -std=c++20 -O2 -I"$1/include" -I"$1/src" bench/micro/request_build.cpp \
        "$1/build/librivet.a" -lpthread -o "$out/$2"
}
build "$PWD" current
[ -n "${RIVET_BASE_SRC:-}" ] && build "$RIVET_BASE_SRC" base
for i in 1 2 3 4 5; do
    for b in base current; do
        [ -x "$out/$b" ] || continue
        printf '%-8s ' "$b"
        taskset -c "${BENCH_SERVER_CPU:-0}" "$out/$b"
    done
done
