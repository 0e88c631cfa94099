#!/usr/bin/env bash
# Packs the benchmark's programs, with the shared libraries they load, into one folder that
# runs the suite on a machine with no package manager or no network (such as the 16-core
# machine docs/BENCHMARKS.md reports separately). glibc itself is left out: the other machine
# must have glibc as new as this one's.
#   bash bench/portable.sh pack DIR     here, after scripts/setup.sh, bench/tools.sh and a build
#   . DIR/env.sh                        there, before bench/run.sh: PATH, BENCH_CACHE, RIVET_BIN
#   bash bench/portable.sh check DIR    a smoke run of every server from the packed programs
#                                       alone (they come first on PATH); `make bench-smoke` runs it
# DIR/bin holds one wrapper per program that sets LD_LIBRARY_PATH for it alone (the other
# machine's own Python, for the plots, keeps its own libraries) and execs it, so the server's
# PID stays the one the harness measures.
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}:${2:-}" in
  pack:?* | check:?*) ;;
  *) echo "usage: bash bench/portable.sh pack|check DIR" >&2; exit 2 ;;
esac

if [ "$1" = check ]; then
  d=$(cd "$2" && pwd)
  export PATH="$d/bin:$PATH" BENCH_CACHE="$d/cache" RIVET_BIN="$d/bin/rivet" H2O_ROOT="$d"
  export RIVET_COMMIT="$(cat "$d/commit")"
  for p in rivet wrk nginx h2o lighttpd curl; do
    [ "$(command -v $p)" = "$d/bin/$p" ] || { echo "portable: $p is not the packed one" >&2; exit 1; }
  done
  exec python3 bench/bench.py --smoke --scenarios hello_c100 --modes percore
fi
dir=$(mkdir -p "$2" && cd "$2" && pwd)
rm -rf "${dir:?}"/{bin,real,lib,cache}
mkdir -p "$dir"/{bin,real,lib,cache/bin}

cache=${BENCH_CACHE:-$HOME/.cache/rivet-bench}
# The floor and the cpp-httplib server are compiled once into the cache by the harness: run
# a smoke benchmark of those two first so that they exist.
if ! ls "$cache"/bin/httplib_hello-* "$cache"/bin/floor-* >/dev/null 2>&1; then
  python3 bench/bench.py --smoke --servers httplib,floor --scenarios hello_c100 --modes percore >/dev/null
fi
cp "$cache"/bin/floor-* "$dir/cache/bin/"
if [ -x "$cache/bin/oha" ]; then cp "$cache/bin/oha" "$dir/cache/bin/"; fi

# wrap PROGRAM WRAPPER UP: the program goes to real/; WRAPPER, UP levels below the pack's top,
# runs it with the packed libraries.
wrap() {
  cp "$1" "$dir/real/$(basename "$1")"
  printf '#!/bin/sh\nd=$(dirname "$(readlink -f "$0")")/%s\nLD_LIBRARY_PATH="$d/lib" exec "$d/real/%s" "$@"\n' \
    "$3" "$(basename "$1")" >"$2"
  chmod +x "$2"
}
programs=(build/rivet /usr/bin/wrk /usr/sbin/nginx /usr/bin/h2o /usr/sbin/lighttpd /usr/bin/curl)
for p in "${programs[@]}"; do
  wrap "$p" "$dir/bin/$(basename "$p")" ..
done
for p in "$cache"/bin/httplib_hello-*; do
  case "$p" in
    *.version) cp "$p" "$dir/cache/bin/" ;;
    *) wrap "$p" "$dir/cache/bin/$(basename "$p")" ../.. ; programs+=("$p") ;;
  esac
done
cp -r /usr/lib/lighttpd "$dir/lib/lighttpd"
# h2o starts its crash handler (a Perl script) from $H2O_ROOT/share/h2o.
mkdir -p "$dir/share" && rm -rf "$dir/share/h2o" && cp -r /usr/share/h2o "$dir/share/h2o"

# Every library those programs and lighttpd's modules load, but glibc's own.
glibc='^(linux-vdso|ld-linux|libc|libm|libpthread|libdl|librt|libresolv)\.so'
for f in "${programs[@]}" /usr/lib/lighttpd/*.so "$cache/bin/oha"; do
  ldd "$f" 2>/dev/null | awk '$3 ~ /^\// {print $1, $3}' || true
done | sort -u | while read -r soname path; do
  [[ "$soname" =~ $glibc ]] || cp -L "$path" "$dir/lib/$soname"
done

cat >"$dir/env.sh" <<'EOF'
# Sourced on the other machine: the packed programs come after its own on PATH (its own curl
# and taskset win), the harness's compiled peers and oha come from the packed cache, and
# lighttpd finds its modules where it was built to look (needs root the first time).
d=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PATH="$PATH:$d/bin" BENCH_CACHE="$d/cache" RIVET_BIN="$d/bin/rivet" H2O_ROOT="$d"
export RIVET_COMMIT="$(cat "$d/commit")"
[ -e /usr/lib/lighttpd ] || ln -s "$d/lib/lighttpd" /usr/lib/lighttpd
EOF
# The commit the packed rivet was built from, as the report names it (bench.py source_commit).
python3 -c 'import sys; sys.path.insert(0, "bench"); import bench; print(bench.source_commit(bench.Path("build/rivet")))' >"$dir/commit"
echo "packed $(du -sh "$dir" | cut -f1) into $dir" >&2
