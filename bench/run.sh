#!/usr/bin/env bash
# Side-by-side benchmark: rivet vs nginx vs the floor (bench/floor.c). `make bench` runs this.
#   bash bench/run.sh            full run (~5 min), rewrites docs/BENCHMARKS.md
#   bash bench/run.sh --smoke    CI smoke test (BENCH_QUICK: 2 s runs, 1 rep, 1,000 connections);
#                                exits non-zero if a server failed to start, answer or produce a row
# Environment: BENCH_REPS (default 3), BENCH_QUICK=1, RIVET_BIN (default build/rivet).
# Raw results go to bench/results/<timestamp>.json.
set -euo pipefail
cd "$(dirname "$0")/.."

# 10,000 connections need more descriptors than the usual 1024 (servers, wrk and the idle client
# inherit this); where the hard limit is lower than 65536, take what the hard limit allows.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

if [ -z "${RIVET_BIN:-}" ] && [ ! -x build/rivet ]; then
  echo "bench: build/rivet missing; building it (make build)" >&2
  make --no-print-directory build >&2
fi

export BENCH_COMMAND="bash bench/run.sh${*:+ $*}${BENCH_REPS:+ (BENCH_REPS=$BENCH_REPS)}${BENCH_QUICK:+ (BENCH_QUICK=$BENCH_QUICK)}"
exec python3 bench/bench.py "$@"
