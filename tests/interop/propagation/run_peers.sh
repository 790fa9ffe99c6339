#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/interop/propagation/run_peers.sh: the propagation interop test (make check).
#
# Installs the pinned npm peers (install_peers.sh: jaeger-client and the
# OpenTelemetry Jaeger, W3C and B3 propagators) into the build tree once, then
# runs peers.js, which drives `tracewire context inject|extract` against each
# of them in both directions and checks the recorded disagreement probes.
#
# Exit status follows automake: 0 pass, 1 fail, 77 skip (node or npm missing,
# or the npm registry unreachable on the first run; the reason is printed).
#
# Usage: run_peers.sh [TRACEWIRE]
#   TRACEWIRE defaults to ./bridge/tracewire, relative to the top build
#   directory, where make check runs this script. TW_INTEROP_CACHE overrides
#   the install directory (default ./tests/interop/.cache/propagation-peers);
#   NODE and NPM the programs.

set -u

here=$(cd "$(dirname "$0")" && pwd)
tracewire=${1:-./bridge/tracewire}
node=${NODE:-node}
cache_dir=${TW_INTEROP_CACHE:-./tests/interop/.cache}/propagation-peers

[ -x "$tracewire" ] || {
    echo "FAIL: $tracewire is not built"
    exit 1
}
command -v "$node" >/dev/null 2>&1 || {
    echo "SKIP: node not found; the propagation peers are Node.js packages"
    exit 77
}

# The helper explains a skip on stderr; keep it next to our SKIP line in the log.
sh "$here/install_peers.sh" "$cache_dir" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
    [ $rc -eq 77 ] && echo "SKIP: the npm peers could not be installed (reason above)"
    exit $rc
fi

# NODE_PATH makes the packages resolvable from peers.js, which lies outside
# the install directory.
NODE_PATH=$(cd "$cache_dir" && pwd)/node_modules${NODE_PATH:+:$NODE_PATH}
export NODE_PATH
exec "$node" "$here/peers.js" "$(cd "$(dirname "$tracewire")" && pwd)/$(basename "$tracewire")"
