#!/usr/bin/env bash
# The layer rules (docs/ARCHITECTURE.md, "Layers") are enforced by the build: each layer's sources
# compile against an include root that holds only that layer and the ones below it
# (CMakeLists.txt, RIVET_LAYER_RULES). This checks, with the build's own compile commands (taken
# from ninja, so the flags are the ones the library is built with), that the rules hold:
#   1. a file of src/http/ that includes an engine header does not compile, and for that reason
#      ("No such file or directory"); the same line compiles in the engine layer, and a legal
#      include compiles in http, so the check cannot pass because nothing compiles;
#   2. every layer includes one header of every layer and of the public API: found where the
#      rules below allow it, not found elsewhere (preprocessor only: that is where it fails);
#   3. every private header is preprocessed under its own layer's rules, so a header that only
#      layers above include is held to its layer's rules too.
# The rules are written here as well as in CMakeLists.txt on purpose: loosening the build's is a
# change this test must be told about.
# Usage: tests/layers/check.sh [BUILD_DIR]   (default build; `make layers` passes $(BUILD))
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd) || { echo "layers: no build directory ${1:-build}"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rivet-layers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# What each layer may include ("rivet" is the public API, include/rivet/).
declare -A allowed=(
    [core]="core"
    [net]="core net"
    [tls]="core tls"
    [http]="core http"
    [engine]="core net tls http engine"
    [client]="core net tls http client"
    [redis]="core net redis"
    [app]="core net tls http engine client redis app rivet"
)
layers=(core net tls http engine client redis app)

failures=0
ok() { echo "  ok    $*"; }
fail() { echo "  FAIL  $*"; failures=$((failures + 1)); }

# The flags a layer's sources are compiled with: the first compile command of its target, cut
# before the dependency file and output options. core has no sources (headers only): it gets
# net's command with net's include root swapped for its own.
flags_of() {
    local layer=$1 target=rivet_layer_$1 cmd
    [[ $layer == core ]] && target=rivet_layer_net
    # Read whole, then searched: grep -m1 on the pipe would stop ninja by SIGPIPE (and pipefail).
    cmd=$(ninja -C "$build" -t commands "$target" 2>/dev/null) || return 1
    cmd=$(grep -m1 -E " -c [^ ]*/src/${layer/core/net}/" <<<"$cmd") || return 1
    cmd=${cmd%% -MD *}
    cmd=${cmd%% -o *}
    [[ $layer == core ]] && cmd=${cmd//"$build/layers/net"/"$build/layers/core"}
    printf '%s' "$cmd"
}
declare -A flags
for layer in "${layers[@]}"; do
    flags[$layer]=$(flags_of "$layer") || { echo "layers: no compile command for $layer in $build (built?)"; exit 1; }
    # Without its include root a layer would see no private header at all, and every "not
    # found" below would prove nothing.
    [[ ${flags[$layer]} == *"-I$build/layers/$layer"* ]] ||
        { echo "layers: $layer is not compiled against $build/layers/$layer"; exit 1; }
done

# probe LAYER MODE LINE: compiles (MODE -fsyntax-only) or preprocesses (MODE -E) a file holding
# LINE as a file of src/LAYER/ would be; the compiler's output is left in $tmp/out.
probe() {
    local layer=$1 mode=$2 line=$3 dir=$tmp/src/$1
    mkdir -p "$dir"
    printf '%s\n' "$line" >"$dir/probe.cpp"
    # shellcheck disable=SC2086  # the command's words
    (cd "$build" && ${flags[$layer]} $mode "$dir/probe.cpp" -o /dev/null) >"$tmp/out" 2>&1
}
first_header() {  # the first header of a folder of src/, as included ("engine/x.hpp")
    (cd "$repo/src" && find "$1" -name '*.hpp' | sort | head -1)
}

echo "== 1. src/http/ includes an engine header: the build refuses it"
engine_header=$(first_header engine)
http_header=$(first_header http)
line="#include \"$engine_header\""
if probe engine -fsyntax-only "$line"; then
    ok "engine layer: $line compiles"
else
    fail "engine layer: $line does not compile, so the next check would prove nothing:"
    sed 's/^/        /' "$tmp/out" | head -20
fi
if probe http -fsyntax-only "$line"; then
    fail "http layer: $line compiles"
elif grep -q "$engine_header: No such file or directory" "$tmp/out"; then
    ok "http layer: $line fails: $(grep -m1 -o "$engine_header: No such file or directory" "$tmp/out")"
else
    fail "http layer: $line fails, but not for the rules:"
    sed 's/^/        /' "$tmp/out" | head -20
fi
if probe http -fsyntax-only "#include \"$http_header\""; then
    ok "http layer: #include \"$http_header\" compiles"
else
    fail "http layer: #include \"$http_header\" does not compile:"
    sed 's/^/        /' "$tmp/out" | head -20
fi

echo
echo "== 2. every layer against every layer and the public API"
declare -A sample=([rivet]=rivet/version.hpp)
for layer in "${layers[@]}"; do
    sample[$layer]=$(first_header "$layer")
done
for layer in "${layers[@]}"; do
    seen="" hidden=""
    for other in "${layers[@]}" rivet; do
        header=${sample[$other]}
        if [[ " ${allowed[$layer]} " == *" $other "* ]]; then
            if probe "$layer" -E "#include \"$header\""; then
                seen+=" $other"
            else
                fail "$layer may include $header, but:"
                sed 's/^/        /' "$tmp/out" | head -10
            fi
        elif probe "$layer" -E "#include \"$header\""; then
            fail "$layer includes $header, which the rules forbid"
        elif grep -q "$header: No such file or directory" "$tmp/out"; then
            hidden+=" $other"
        else
            fail "$layer including $header fails, but not for the rules:"
            sed 's/^/        /' "$tmp/out" | head -10
        fi
    done
    ok "$layer sees:${seen:- nothing}; not:${hidden:- nothing}"
done

echo
echo "== 3. every private header under its own layer's rules"
for layer in "${layers[@]}"; do
    headers=$(cd "$repo/src" && find "$layer" -name '*.hpp' | sort)
    count=$(printf '%s\n' "$headers" | grep -c .)
    if probe "$layer" -E "$(printf '#include "%s"\n' $headers)"; then
        ok "$layer: $count headers"
    else
        fail "$layer: a header includes what its layer may not:"
        grep -E "error|In file included" "$tmp/out" | sed 's/^/        /' | head -10
    fi
done

echo
if ((failures)); then
    echo "layers: $failures check(s) failed"
    exit 1
fi
echo "layers: the build enforces the layer rules"
