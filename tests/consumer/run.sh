#!/usr/bin/env bash
# rivet as its users get it. Installs the library from an existing build into a temporary
# prefix, then checks:
#   1. the install tree: headers, library, CMake package files, rivet.pc; no private header;
#   2. pkg-config: version, flags (-pthread, -lrivet, nlohmann_json through Requires);
#   3. every public header compiles on its own with only the installed include directory;
#   4. the consumer (main.cpp: one route, one real request over TCP) built three ways and run:
#      a. find_package(rivet) against the prefix (and a version it cannot satisfy is refused),
#      b. add_subdirectory of this checkout: library only, no GoogleTest, no GMP, no src/; the
#         consumer sets BUILD_SHARED_LIBS=ON there, so this builds librivet.so (one more compile
#         of the library serves both this and 5),
#      c. a plain Makefile with pkg-config;
#   5. that librivet.so installed (RIVET_INSTALL=ON) and used through find_package, as in 4a;
#   6. when rivet_pg (PostgreSQL) was built: find_package(rivet COMPONENTS pg) and
#      pkg-config rivet-pg (tests/consumer/pg), linked with libpq and run.
# Usage: tests/consumer/run.sh [BUILD_DIR]   (default build; `make consumers` passes $(BUILD))
# Every check runs even when an earlier one failed; the exit status is 1 if any failed.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
here=$repo/tests/consumer
build=$(cd "${1:-$repo/build}" && pwd) || { echo "consumers: no build directory ${1:-build}"; exit 1; }
jobs=$(nproc)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rivet-consumer.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
version=$(sed -n 's/^#define RIVET_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' \
    "$repo/include/rivet/version.hpp" | paste -sd.)

failures=()
label=""  # the current step's number, to tell apart the summary's "build" failures
ok() { echo "  ok    $*"; }
fail() { echo "  FAIL  $*"; failures+=("${label:+$label: }$*"); }
check() {  # check "what" command...: ok or FAIL (and the command's output); returns 0 or 1
    local what=$1 log=$tmp/check.log
    shift
    if "$@" >"$log" 2>&1; then
        ok "$what"
        return 0
    fi
    fail "$what"
    sed 's/^/        /' "$log" | tail -40
    return 1
}
step() {
    label=${1%%.*}
    echo
    echo "== $* (at ${SECONDS}s)"
}

step "install rivet $version from $build into a temporary prefix"
prefix=$tmp/prefix
check "library built (ninja rivet)" ninja -C "$build" -j "$jobs" rivet
check "cmake --install $build --prefix PREFIX" cmake --install "$build" --prefix "$prefix"

step "1. the install tree"
for f in lib/librivet.a lib/cmake/rivet/rivetConfig.cmake lib/cmake/rivet/rivetConfigVersion.cmake \
    lib/cmake/rivet/rivetTargets.cmake lib/pkgconfig/rivet.pc include/rivet/version.hpp; do
    check "PREFIX/$f" test -f "$prefix/$f"
done
check "headers installed = include/rivet/*.hpp, nothing else under include/" diff \
    <(cd "$repo/include" && find . -type f | sort) <(cd "$prefix/include" && find . -type f | sort)
check "rivetConfig.cmake finds Threads and nlohmann_json with find_dependency" grep -q \
    'find_dependency(nlohmann_json' "$prefix/lib/cmake/rivet/rivetConfig.cmake"
targets_include_dirs() {  # the installed rivet::rivet's include directories: include/ alone
    local line
    line=$(grep INTERFACE_INCLUDE_DIRECTORIES "$prefix/lib/cmake/rivet/rivetTargets.cmake")
    echo "$line"
    [ "$line" = '  INTERFACE_INCLUDE_DIRECTORIES "${_IMPORT_PREFIX}/include"' ]
}
check "rivet::rivet's include directory is PREFIX/include only (no src/)" targets_include_dirs

step "2. pkg-config"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
check "pkg-config --validate rivet" pkg-config --validate rivet
check "pkg-config --modversion rivet = $version" test "$(pkg-config --modversion rivet)" = "$version"
cflags=$(pkg-config --cflags rivet) libs=$(pkg-config --libs rivet) requires=$(pkg-config --print-requires rivet)
echo "        --cflags: $cflags"
echo "        --libs:   $libs"
echo "        requires: $requires"
check "--cflags: the prefix's include/ (relocated from \${pcfiledir})" test \
    "$(cd "$(sed -n 's/.*-I\([^ ]*rivet-consumer[^ ]*\).*/\1/p' <<<"$cflags")" && pwd)" = "$prefix/include"
check "--cflags: -pthread" grep -qw -- -pthread <<<"$cflags"
check "--libs: -L PREFIX/lib -lrivet -pthread" grep -Eq -- "-L[^ ]*lib .*-lrivet .*-pthread" <<<"$libs"
check "Requires: nlohmann_json (its -I through pkg-config, /usr/include dropped as a system dir)" \
    grep -q '^nlohmann_json' <<<"$requires"
check "--static --libs works too" pkg-config --static --libs rivet

step "3. every public header on its own: g++ -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I PREFIX/include"
mkdir -p "$tmp/headers"
for h in "$prefix"/include/rivet/*.hpp; do
    name=$(basename "$h")
    echo "#include <rivet/$name>" >"$tmp/headers/${name%.hpp}.cpp"
done
# One translation unit per header, $jobs at a time; each leaves a .ok or a .log.
export prefix
ls "$tmp"/headers/*.cpp | xargs -P "$jobs" -I{} bash -c \
    'g++ -std=c++20 -fsyntax-only -Wall -Wextra -Werror -I"$prefix/include" {} >{}.log 2>&1 &&
     touch {}.ok'
for tu in "$tmp"/headers/*.cpp; do
    name=$(basename "$tu" .cpp).hpp
    if [ -e "$tu.ok" ]; then ok "<rivet/$name>"; else fail "<rivet/$name>"; head -5 "$tu.log" | sed 's/^/        /'; fi
done

# run_consumer BUILD_DIR WHAT: the consumer built there must answer and exit 0; shows its line.
run_consumer() {
    check "$2" timeout 60 "$1/consumer" && sed 's/^/        /' "$tmp/check.log"
}

step "4a. find_package(rivet $version) after cmake --install, static library"
check "configure (CMAKE_PREFIX_PATH=PREFIX)" cmake -S "$here" -B "$tmp/a" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" -DCONSUMER_RIVET_VERSION="$version"
check "it found the installed package, version $version" grep -q \
    "^rivet_DIR:PATH=$prefix/lib/cmake/rivet$" "$tmp/a/CMakeCache.txt"
check "build" ninja -C "$tmp/a" -j "$jobs"
run_consumer "$tmp/a" "run: one request answered"
refuses_version() {
    ! cmake -S "$here" -B "$tmp/a-version" -DCMAKE_PREFIX_PATH="$prefix" -DCONSUMER_RIVET_VERSION="$1"
}
check "find_package(rivet 99.0) is refused by rivetConfigVersion.cmake" refuses_version 99.0

step "4b. add_subdirectory of this checkout (rivet not the top-level project), shared library"
check "configure (BUILD_SHARED_LIBS=ON RIVET_INSTALL=ON)" cmake -S "$here" -B "$tmp/b" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DCONSUMER_RIVET_SOURCE="$repo" -DBUILD_SHARED_LIBS=ON \
    -DRIVET_INSTALL=ON
cp "$tmp/check.log" "$tmp/b.configure"
not_looked_for() {  # not_looked_for REGEX: in neither the configure output nor the cache's entries
    ! grep -Ei "$1" "$tmp/b.configure" <(grep -v '^//' "$tmp/b/CMakeCache.txt")
}
check "GoogleTest was not looked for (configure output, CMakeCache.txt)" not_looked_for 'gtest|googletest'
check "GMP was not looked for (configure output, CMakeCache.txt)" not_looked_for 'gmp'
only_library() {
    ! ninja -C "$tmp/b" -t targets all | grep -E '^(unit_tests|rivet_server|rivet_demo|example_)'
}
check "no tests, server, demo or examples among the targets" only_library
check "build" ninja -C "$tmp/b" -j "$jobs"
no_private_dir() {  # the consumer's own compile line does not see rivet's src/
    local line
    line=$(ninja -C "$tmp/b" -t commands consumer | grep -F 'main.cpp')
    echo "$line"
    [ -n "$line" ] && ! grep -qF -- "-I$repo/src" <<<"$line"
}
check "the consumer's compile line has no -I rivet/src" no_private_dir
loads() { ldd "$1" | grep -F "$2"; }
check "the consumer loads the librivet.so it built" loads "$tmp/b/consumer" "$tmp/b/rivet/librivet.so"
run_consumer "$tmp/b" "run: one request answered"

step "4c. plain Makefile with pkg-config --cflags --libs rivet"
mkdir -p "$tmp/c"
check "make" make -C "$here" BUILD="$tmp/c"
run_consumer "$tmp/c" "run: one request answered"

step "5. the shared librivet.so of 4b, installed, through find_package"
sprefix=$tmp/prefix-shared
check "cmake --install (4b's build) --prefix PREFIX-SHARED" cmake --install "$tmp/b" --prefix "$sprefix"
check "PREFIX-SHARED/lib: librivet.so.$version and its links" test -f \
    "$sprefix/lib/librivet.so.$version" -a -L "$sprefix/lib/librivet.so" -a ! -e "$sprefix/lib/librivet.a"
check "configure" cmake -S "$here" -B "$tmp/s" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$sprefix"
check "build" ninja -C "$tmp/s" -j "$jobs"
check "the consumer loads PREFIX-SHARED's librivet.so" loads "$tmp/s/consumer" "$sprefix/lib/librivet.so"
run_consumer "$tmp/s" "run: one request answered"

if [ -e "$prefix/lib/librivet-pg.a" ]; then
    step "6. rivet::pg: find_package(rivet COMPONENTS pg) and pkg-config rivet-pg"
    check "PREFIX: rivetPgTargets.cmake, rivet-pg.pc" test -f \
        "$prefix/lib/cmake/rivet/rivetPgTargets.cmake" -a -f "$prefix/lib/pkgconfig/rivet-pg.pc"
    check "pkg-config --validate rivet-pg" pkg-config --validate rivet-pg
    check "configure (COMPONENTS pg)" cmake -S "$here/pg" -B "$tmp/pg" -G Ninja \
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix"
    check "build" ninja -C "$tmp/pg" -j "$jobs"
    check "run" "$tmp/pg/pg_consumer"
    # shellcheck disable=SC2046  # the flags are words
    check "g++ with pkg-config --cflags --libs rivet-pg" g++ -std=c++20 -o "$tmp/pg-pc" \
        "$here/pg/main.cpp" $(pkg-config --cflags --libs rivet-pg)
    check "run (pkg-config build)" "$tmp/pg-pc"
    refuses_component() {
        ! cmake -S "$here/pg" -B "$tmp/pg-nocomp" -DCMAKE_PREFIX_PATH="$tmp/prefix-shared"
    }
    [ -e "$tmp/prefix-shared/lib/cmake/rivet/rivetPgTargets.cmake" ] ||
        check "COMPONENTS pg refused by a prefix installed without it" refuses_component
else
    echo
    echo "== 6. rivet::pg: not built (no libpq), skipped"
fi

echo
if [ ${#failures[@]} -eq 0 ]; then
    echo "consumers: all checks passed in ${SECONDS}s"
    exit 0
fi
echo "consumers: ${#failures[@]} check(s) FAILED in ${SECONDS}s:"
printf '  - %s\n' "${failures[@]}"
exit 1
