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
#   bash bench/run.sh --websocket   WebSocket, per core (bench/ws_bench.py): rivet against
#                                Boost.Beast and Rust's fastwebsockets with our own load generator
#                                (bench/ws_load): echo of 32 B and 16 KiB messages over 100 and
#                                10,000 connections, permessage-deflate, bytes per idle
#                                connection, publish to 10,000 subscribers; prints a table
#                                (~10 min with --reps 3 --duration 3); with --smoke: every
#                                scenario once over 200 connections (~1 min), peers not built
#                                skipped with the reason
#   bash bench/run.sh --http2    HTTP/2, per core (bench/h2_bench.py): rivet against nginx and h2o
#                                with h2load: /hello over TLS with 100 connections × 10 streams
#                                and × 1, a 1 KiB and a 100 KiB file, h2c /hello, bytes per idle
#                                h2 connection (TLS and h2c); prints a table (~6 min with the
#                                default 2 runs of 3 s); with --smoke: every scenario once with
#                                2,000 requests or 100 idle connections (~10 s)
#   bash bench/run.sh --pg       PostgreSQL and the HTTP client, per core (bench/pg_bench.py):
#                                bench/pg_server.cpp (rivet::pg, rivet::HttpClient) against Go's
#                                net/http + pgx v5 (bench/peers/go_pg): TechEmpower's single
#                                query and 20 queries, /hello p99 idle and while 50 requests wait
#                                on pg_sleep(0.2), a GET to nginx through each one's client; its
#                                own PostgreSQL 15; prints a table (~3 min with the default 3
#                                runs of 5 s); with --smoke: every scenario once for 1 s (~25 s)
#   bash bench/run.sh --smoke    CI smoke test (~1 min): every server started, answered correctly
#                                and produced a row; figures not asserted; docs untouched.
#                                Uses oha only if bench/tools.sh already built it.
#   RIVET_BASE_BIN=<old rivet> bash bench/run.sh --engine [--reps N] [--duration S]
#                                issue 20's speed check (~10 min on 2 cores with --reps 3
#                                --duration 3): this build against RIVET_BASE_BIN and nginx, per
#                                core, interleaved: bench.py's "engine" set (hello_c100,
#                                hello_c10000, pipeline16_c100, close_c100, static_1k_c100, and
#                                for the two rivets work_c100, wait_c100, cpu_c100), then tls_bench.py's
#                                keep-alive and handshake scenarios; prints both tables; builds
#                                nothing (no oha, no plots), docs untouched.
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

for a in "$@"; do
  if [ "$a" = --pg ] && [ ! -x "${PG_BENCH_SERVER:-build/pg_bench_server}" ]; then
    echo "bench: build/pg_bench_server missing; building it (make build; needs libpq-dev)" >&2
    make --no-print-directory build >&2
  fi
done
if [ -z "${RIVET_BIN:-}" ] && [ ! -x build/rivet ]; then
  echo "bench: build/rivet missing; building it (make build)" >&2
  make --no-print-directory build >&2
fi

script=bench/bench.py
tools_args=()
engine=0
for a in "$@"; do
  case "$a" in
    --models) script=bench/models.py ;;
    --tls) script=bench/tls_bench.py; tools_args=(--no-build) ;;
    --websocket) script=bench/ws_bench.py; tools_args=(--no-build) ;;
    --http2) script=bench/h2_bench.py; tools_args=(--no-build) ;;
    --pg) script=bench/pg_bench.py; tools_args=(--no-build) ;;
    --smoke) tools_args=(--no-build) ;;
    --engine) engine=1; tools_args=(--no-build) ;;
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
if [ "$engine" = 1 ]; then
  if [ -z "${RIVET_BASE_BIN:-}" ] || [ ! -x "$RIVET_BASE_BIN" ]; then
    echo "bench --engine: set RIVET_BASE_BIN to the rivet binary built before the change" >&2
    exit 2
  fi
  # Only --reps, --duration and --smoke reach the two scripts (both take them).
  pass=()
  prev=""
  for a in "${args[@]}"; do
    case "$prev" in --reps|--duration) pass+=("$prev" "$a") ;; esac
    case "$a" in --reps=*|--duration=*|--smoke) pass+=("$a") ;; esac
    prev="$a"
  done
  status=0
  python3 bench/bench.py --servers rivet,rivet_base,nginx --scenarios engine --modes percore \
    --docs no "${pass[@]}" || status=$?
  python3 bench/tls_bench.py --servers rivet,rivet_base,nginx \
    --scenarios tls_hello_c100,tls_full_close,tls_resumed_close "${pass[@]}" || status=$?
  exit "$status"
fi
exec python3 "$script" "${args[@]}"
