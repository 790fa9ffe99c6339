#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# scripts/demo.sh: build tracewire and run the three-process demo (examples/demo/): a
# `frontend` HTTP service (libmicrohttpd) that calls `backend-a` and `backend-b` over HTTP
# (libcurl, instrumented with tracewire/curl.h); backend-b fans out on a GLib thread pool.
# tests/demo/demo_trace plays the Jaeger agent (a UDP port on loopback), starts the three
# processes with JAEGER_AGENT_PORT pointing at it, sends one request, stops them (each
# closes its tracer, which flushes), saves what the agent port received (agent.thrift) and
# the driver's own span log (spans.log) in _build/demo/demo-out/, draws the trace with
# `tracewire show --trace PREFIX spans.log agent.thrift` and checks it. No Jaeger is
# needed. The same program is a `make check` test.
#
# Installs the Debian packages (scripts/deps.sh), bootstraps with autoreconf if the tree
# has no configure script yet, and builds in _build/demo (or in the source directory
# when that is already configured in-tree). Re-runs only rebuild what changed.
#
# Environment: TW_JOBS (make -j, default 2), TW_SKIP_DEPS=1 (skip deps.sh), TW_BUILD_ROOT
# (default <source>/_build), TW_DEMO_TIMEOUT_S (the demo's watchdog, default 60). JAEGER_*
# variables other than the service name, agent and sampler pass through to the three
# services (JAEGER_PROPAGATION=b3 runs the demo with B3 headers).
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

# A build configured before libmicrohttpd was installed has no demo: configure again, with
# the same arguments, now that deps.sh has installed it.
if ! grep -Eq '^MHD_LIBS = .+' "$BUILD/Makefile"; then
    echo "demo: reconfiguring $BUILD (libmicrohttpd was not found last time)"
    (cd "$BUILD" && ./config.status --recheck >/dev/null && ./config.status >/dev/null)
fi

echo "demo: building in $BUILD"
# `all` first: it makes BUILT_SOURCES (the generated Thrift code), the libraries and the
# demo services; the driver is a test program, so it is named explicitly.
make -C "$BUILD" -j"$JOBS"
make -C "$BUILD" -j"$JOBS" tests/demo/demo_trace

echo "demo: running the three-process demo"
echo
cd "$BUILD"
export TW_DEMO_OUT="$BUILD/demo-out"
./tests/demo/demo_trace
status=$?
if [ "$status" -eq 0 ]; then
    echo
    echo "demo: the span files stay in $TW_DEMO_OUT; look at them again with, e.g.:"
    echo "  $BUILD/bridge/tracewire show --critical-path $TW_DEMO_OUT/spans.log $TW_DEMO_OUT/agent.thrift"
    echo "  $BUILD/bridge/tracewire show --html trace.html $TW_DEMO_OUT/spans.log $TW_DEMO_OUT/agent.thrift"
    echo "  $BUILD/bridge/tracewire deps $TW_DEMO_OUT/spans.log $TW_DEMO_OUT/agent.thrift"
fi
exit "$status"
