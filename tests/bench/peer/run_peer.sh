#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/bench/peer/run_peer.sh: runs the Jaeger Node.js client benchmark, the
# peer that `make bench` divides tracewire's figures by.
#
# Installs jaeger-client@3.19.0 into CACHE_DIR with npm unless that exact
# version is already there, so re-runs work offline, then runs
# jaeger_client_bench.js with node and passes its one line of JSON through on
# stdout. The version is pinned because the script reaches into the
# package's internals (UDPSender, Metrics, the agent IDL).
#
# Exit status follows automake: 0 done, 77 skip (node or npm missing, or the
# install failed; one line on stderr says which), anything else the
# benchmark's own failure. NODE and NPM override the programs used.
#
# Usage: run_peer.sh CACHE_DIR SINK_PORT [ITERATIONS]

set -u

JAEGER_CLIENT_VERSION=3.19.0

here=$(cd "$(dirname "$0")" && pwd)
node=${NODE:-node}
npm=${NPM:-npm}

skip() {
    echo "run_peer.sh: SKIP: $*" >&2
    exit 77
}

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    echo "usage: run_peer.sh CACHE_DIR SINK_PORT [ITERATIONS]" >&2
    exit 2
fi
cache_dir=$1
shift

command -v "$node" >/dev/null 2>&1 || skip "node not found; cannot run the jaeger-client peer"

# Asks node rather than grepping package.json, so the check means "node can
# load this version from here".
installed_version() {
    "$node" -e 'try {
        process.stdout.write(require(process.argv[1] + "/package.json").version);
    } catch (e) {}' "$cache_dir/node_modules/jaeger-client" 2>/dev/null
}

if [ "$(installed_version)" != "$JAEGER_CLIENT_VERSION" ]; then
    command -v "$npm" >/dev/null 2>&1 ||
        skip "npm not found; cannot install jaeger-client@$JAEGER_CLIENT_VERSION"
    mkdir -p "$cache_dir" || skip "cannot create $cache_dir"
    log=$cache_dir/npm-install.log
    # Short timeouts turn an unreachable registry into a prompt skip rather
    # than a hang of several minutes.
    if ! "$npm" install --prefix "$cache_dir" --no-audit --no-fund \
        --fetch-timeout=30000 --fetch-retries=1 \
        "jaeger-client@$JAEGER_CLIENT_VERSION" >"$log" 2>&1; then
        skip "npm install jaeger-client@$JAEGER_CLIENT_VERSION failed (registry unreachable?):" \
            "$(tail -n 3 "$log" | tr '\n' ' ')"
    fi
    [ "$(installed_version)" = "$JAEGER_CLIENT_VERSION" ] ||
        skip "npm install did not leave jaeger-client@$JAEGER_CLIENT_VERSION in $cache_dir"
fi

# NODE_PATH makes the package resolvable from this script's directory, which
# lies outside CACHE_DIR; the sink worker thread inherits it.
NODE_PATH=$(cd "$cache_dir" && pwd)/node_modules${NODE_PATH:+:$NODE_PATH}
export NODE_PATH
exec "$node" "$here/jaeger_client_bench.js" "$@"
