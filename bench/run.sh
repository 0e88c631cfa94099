#!/usr/bin/env bash
# rivet's benchmark suite (docs/BENCHMARKS.md explains what it measures).
#   bash bench/run.sh            `make bench`: quick profile (~6 min), both modes, all peers;
#                                rewrites the per-core and whole-machine sections of
#                                docs/BENCHMARKS.md and the plots in docs/img/
#   bash bench/run.sh --full     `make bench-full`: 3 × 5 s runs, every scenario in both modes,
#                                and a 10-minute soak of rivet (~40 min)
#   bash bench/run.sh --models   `make bench-models`: concurrency models under CPU-heavy load
#   bash bench/run.sh --tls      rivet against nginx over TLS, per core (bench/tls_bench.py): the
#                                same certificate, OpenSSL and resumption; prints a table
#   bash bench/run.sh --smoke    CI smoke test (~1 min): every server started, answered correctly
#                                and produced a row; figures not asserted; docs untouched.
#                                Uses oha only if bench/tools.sh already built it.
# Other arguments go to bench/bench.py (--servers, --scenarios, --modes, --reps, --duration).
# Environment: BENCH_REPS, BENCH_DURATION, RIVET_BIN (default build/rivet), BENCH_CACHE; on a
# many-core machine BENCH_MACHINE_SERVER_CPUS / BENCH_MACHINE_CLIENT_CPUS, BENCH_OPEN_CLIENT_CPUS
# and BENCH_HOST (docs/BENCHMARKS.md, "Many cores").
# Raw results go to bench/results/<timestamp>-<profile>.json.
set -euo pipefail
cd "$(dirname "$0")/.."

# 10,000 connections need more descriptors than the usual 1024 (servers, wrk and the idle client
# inherit this); where the hard limit is lower than 65536, take what the hard limit allows.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

if [ -z "${RIVET_BIN:-}" ] && [ ! -x build/rivet ]; then
  echo "bench: build/rivet missing; building it (make build)" >&2
  make --no-print-directory build >&2
fi

script=bench/bench.py
tools_args=()
for a in "$@"; do
  case "$a" in
    --models) script=bench/models.py ;;
    --tls) script=bench/tls_bench.py; tools_args=(--no-build) ;;
    --smoke) tools_args=(--no-build) ;;
  esac
done
eval "$(bash bench/tools.sh "${tools_args[@]}")"
export OHA_BIN BENCH_PLOT_PYTHON

args=()
for a in "$@"; do [ "$a" = "--models" ] || args+=("$a"); done
# The command as the report shows it, with the settings given through the environment.
envs=""
for v in BENCH_REPS BENCH_DURATION BENCH_QUIET_WAIT BENCH_QUIET_BUDGET BENCH_NOISE_RETAKES BENCH_NOISE_MAX \
         BENCH_SOAK BENCH_MANY_CONNECTIONS RIVET_BASE_BIN BENCH_HOST BENCH_SERVER_CPU BENCH_CLIENT_CPU \
         BENCH_MACHINE_SERVER_CPUS BENCH_MACHINE_CLIENT_CPUS BENCH_OPEN_CLIENT_CPUS; do
  [ -n "${!v:-}" ] && envs+="$v=${!v} "
done
export BENCH_COMMAND="${envs}bash bench/run.sh${*:+ $*}"
exec python3 "$script" "${args[@]}"
