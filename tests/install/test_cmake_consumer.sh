#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# tests/install/test_cmake_consumer.sh: find_package(tracewire) works for a CMake project.
# The project in tests/install/cmake/ is configured against the staged installation
# (tests/install/Makefile.inc) with CMAKE_PREFIX_PATH=<stage><prefix>, built and run:
#   1. the shared library (tracewire::tracewire, SHARED IMPORTED); with libmicrohttpd also
#      the microhttpd component (tracewire::microhttpd);
#   2. tracewire_USE_STATIC_LIBS=ON: the static archive, its dependencies coming from the
#      target (and the binary must not need libtracewire.so);
#   3. version rules: asking for a version the package cannot satisfy fails.
# Exit 77 (skipped) without cmake.
set -u
top_srcdir=${top_srcdir:-.}
env_file=${top_builddir:-.}/tests/install/stage.env
[ -f "$env_file" ] || { echo "FAIL: $env_file missing (make check stages the install first)"; exit 1; }
. "$env_file"
case ${CMAKE:-no} in
no | "") CMAKE=$(command -v cmake || true) ;;
esac
[ -n "$CMAKE" ] && [ -x "$CMAKE" ] || { echo "SKIP: cmake not found"; exit 77; }
"$CMAKE" --version | head -n 1

work=$(mktemp -d "${TMPDIR:-/tmp}/tw-cmake-consumer.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
failed=0
fail() {
    failed=1
    echo "FAIL: $*"
}
src=$top_srcdir/tests/install/cmake
case $src in /*) ;; *) src=$(pwd)/$src ;; esac

# build NAME CMAKE_ARGS...: configure, build and run the consumer.
build() {
    name=$1
    shift
    dir=$work/$name
    if ! "$CMAKE" -S "$src" -B "$dir" -DCMAKE_C_COMPILER="${CC%% *}" \
        -DCMAKE_PREFIX_PATH="$TW_STAGE$TW_PREFIX" -DTW_EXPECT_VERSION="$TW_VERSION" \
        -DCMAKE_C_FLAGS="${TW_SAN_CFLAGS:-}" -DCMAKE_EXE_LINKER_FLAGS="${TW_SAN_CFLAGS:-}" "$@" \
        >"$work/$name.configure.log" 2>&1; then
        fail "$name: cmake configure"
        sed 's/^/    /' "$work/$name.configure.log" | tail -n 30
        return 1
    fi
    grep 'tracewire::tracewire:' "$work/$name.configure.log" | sed 's/^-- /    /'
    if ! "$CMAKE" --build "$dir" >"$work/$name.build.log" 2>&1; then
        fail "$name: cmake --build"
        sed 's/^/    /' "$work/$name.build.log" | tail -n 30
        return 1
    fi
    if ! LD_LIBRARY_PATH="$TW_STAGE$TW_LIBDIR" "$dir/consumer" >"$work/$name.run.log" 2>&1; then
        fail "$name: the consumer failed: $(cat "$work/$name.run.log")"
        return 1
    fi
    echo "PASS: $name: find_package(tracewire), build, run: $(cat "$work/$name.run.log")"
}

mhd=OFF
[ "$TW_HAVE_MHD" = yes ] && mhd=ON
build shared -DTW_WITH_MHD="$mhd"
if [ -f "$TW_STAGE$TW_LIBDIR/libtracewire.a" ]; then
    if build static -Dtracewire_USE_STATIC_LIBS=ON &&
        command -v ldd >/dev/null 2>&1 && ldd "$work/static/consumer" | grep -q libtracewire; then
        fail "static: the consumer still needs a shared libtracewire"
    fi
else
    echo "SKIP: static: libtracewire.a not installed"
fi

# The version file: 0.x minor releases are not interchangeable; a newer one is refused.
major=${TW_VERSION%%.*}
rest=${TW_VERSION#*.}
minor=${rest%%.*}
for wanted in "$major.$((minor + 1))" "$((major + 1)).0"; do
    sed "s/find_package(tracewire 0.1 REQUIRED)/find_package(tracewire $wanted REQUIRED)/" \
        "$src/CMakeLists.txt" >"$work/CMakeLists.txt"
    cp "$src/consumer.c" "$work/"
    if "$CMAKE" -S "$work" -B "$work/v$wanted" -DCMAKE_PREFIX_PATH="$TW_STAGE$TW_PREFIX" \
        -DTW_EXPECT_VERSION="$TW_VERSION" >"$work/v$wanted.log" 2>&1; then
        fail "find_package(tracewire $wanted) accepted version $TW_VERSION"
    elif grep -q "tracewireConfig.cmake, version: $TW_VERSION" "$work/v$wanted.log"; then
        echo "PASS: find_package(tracewire $wanted) refuses $TW_VERSION"
    else
        fail "find_package(tracewire $wanted) failed for another reason:"
        tail -n 20 "$work/v$wanted.log" | sed 's/^/    /'
    fi
done
exit "$failed"
