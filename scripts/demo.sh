#!/usr/bin/env bash
#
# scripts/demo.sh: build tracewire and run examples/hello, which starts a parent span
# with two children and prints every span it reports (JAEGER_REPORTER_LOG_SPANS=true).
# No Jaeger agent is needed: the UDP datagrams go to localhost:6831 whether or not
# anything listens there, and hello's last line counts what was sent and what failed.
#
# Installs the Debian packages (scripts/deps.sh), bootstraps with autoreconf if the tree
# has no configure script yet, and builds in _build/demo (or in the source directory
# when that is already configured in-tree). Re-runs only rebuild what changed.
#
# Environment: TW_JOBS (make -j, default 2), TW_SKIP_DEPS=1 (skip deps.sh), TW_BUILD_ROOT
# (default <source>/_build). Any JAEGER_* variable you set overrides the demo's value.
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JOBS=${TW_JOBS:-2}
BUILD_ROOT=${TW_BUILD_ROOT:-$SRC/_build}

bash "$SRC/scripts/deps.sh"

if [ -f "$SRC/config.status" ]; then
    # Configured in-tree by hand: build there (VPATH builds would refuse this tree).
    BUILD=$SRC
else
    if [ ! -x "$SRC/configure" ] || [ ! -f "$SRC/Makefile.in" ]; then
        echo "demo: bootstrapping (autoreconf -fi)"
        (cd "$SRC" && autoreconf -fi)
    fi
    BUILD=$BUILD_ROOT/demo
    if [ ! -f "$BUILD/config.status" ]; then
        mkdir -p "$BUILD"
        rel=$(realpath --relative-to="$BUILD" "$SRC")
        echo "demo: configuring $BUILD"
        (cd "$BUILD" && "$rel/configure" --quiet)
    fi
fi

echo "demo: building in $BUILD"
# `all` (not just examples/hello): it makes BUILT_SOURCES, the generated Thrift code, first.
# Test programs are not part of `all`.
make -C "$BUILD" -j"$JOBS"

echo "demo: running examples/hello"
echo
cd "$BUILD"
exec env \
    JAEGER_SERVICE_NAME="${JAEGER_SERVICE_NAME:-hello}" \
    JAEGER_SAMPLER_TYPE="${JAEGER_SAMPLER_TYPE:-const}" \
    JAEGER_SAMPLER_PARAM="${JAEGER_SAMPLER_PARAM:-1}" \
    JAEGER_REPORTER_LOG_SPANS="${JAEGER_REPORTER_LOG_SPANS:-true}" \
    ./examples/hello
