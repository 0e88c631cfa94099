#!/usr/bin/env bash
# Builds each bench/micro/*.cpp (request_build: building a Request; router_find: route lookups)
# against this checkout's library (build/) and, when RIVET_BASE_SRC names another checkout with
# a Release build in its build/, against that one too; runs them interleaved on one core, 5
# times each. Usage: bash bench/micro/run.sh [NAME...]   (default: every bench)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
build() {  # SRC BENCH NAME
    g++ -std=c++20 -O2 -I"$1/include" -I"$1/src" "bench/micro/$2.cpp" \
        "$1/build/librivet.a" -lz -lbrotlienc -lzstd -lpthread -o "$out/$3"
}
benches=("$@")
[ ${#benches[@]} -gt 0 ] || benches=(request_build router_find)
for bench in "${benches[@]}"; do
    echo "== $bench"
    build "$PWD" "$bench" current
    rm -f "$out/base"
    [ -n "${RIVET_BASE_SRC:-}" ] && build "$RIVET_BASE_SRC" "$bench" base
    for i in 1 2 3 4 5; do
        for b in base current; do
            [ -x "$out/$b" ] || continue
            printf '%-8s ' "$b"
            taskset -c "${BENCH_SERVER_CPU:-0}" "$out/$b"
        done
    done
done
