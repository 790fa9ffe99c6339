#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/interop/propagation/install_peers.sh DIR: installs the npm packages that the
# propagation interop test (peers.js) and the propagation benchmark peer
# (tests/bench/peer/propagation_bench.js) run against, into DIR/node_modules.
#
# Versions are pinned: the tests record each peer's exact behaviour, and peers.js
# reaches into two package internals (jaeger-client's SpanContext and B3 codec,
# the B3 debug-flag context key). The 2.x line of the OpenTelemetry packages is
# the newest that runs on Node 18.19+/20 (3.x needs Node >= 22.15); api 1.9.x is
# what its peerDependencies accept.
#
# Idempotent and offline once done: node itself is asked whether every pinned
# version loads from DIR, and npm runs only when one does not. Exit status: 0
# ready, 77 (skip) when node or npm is missing or the registry cannot be
# reached; one line on stderr says which. NODE and NPM override the programs.

set -u

PEERS="jaeger-client@3.19.0 @opentelemetry/api@1.9.1 @opentelemetry/core@2.12.0 \
@opentelemetry/propagator-jaeger@2.12.0 @opentelemetry/propagator-b3@2.12.0"

node=${NODE:-node}
npm=${NPM:-npm}

skip() {
    echo "install_peers.sh: SKIP: $*" >&2
    exit 77
}

[ $# -eq 1 ] || {
    echo "usage: install_peers.sh DIR" >&2
    exit 2
}
dir=$1

command -v "$node" >/dev/null 2>&1 || skip "node not found"

# Prints the name@version pairs that do not load from DIR at the pinned version.
missing() {
    # shellcheck disable=SC2086 # PEERS is a word list on purpose
    "$node" -e '
        const path = require("path");
        const dir = path.resolve(process.argv[1], "node_modules");
        for (const spec of process.argv.slice(2)) {
            const at = spec.lastIndexOf("@");
            const name = spec.slice(0, at), want = spec.slice(at + 1);
            let got = "";
            try { got = require(path.join(dir, name, "package.json")).version; } catch (e) {}
            if (got !== want) console.log(spec);
        }' "$dir" $PEERS
}

todo=$(missing)
[ -z "$todo" ] && exit 0

command -v "$npm" >/dev/null 2>&1 || skip "npm not found; cannot install $todo"
mkdir -p "$dir" || skip "cannot create $dir"
log=$dir/npm-install.log
# All pinned packages at once, so npm resolves one consistent tree. Short
# timeouts turn an unreachable registry into a prompt skip, not a hang; a
# private cache keeps the user's ~/.npm out of it.
# shellcheck disable=SC2086
if ! "$npm" install --prefix "$dir" --cache "$dir/.npm-cache" --no-audit --no-fund \
    --no-save --fetch-timeout=30000 --fetch-retries=1 $PEERS >"$log" 2>&1; then
    skip "npm install failed (registry unreachable?): $(tail -n 3 "$log" | tr '\n' ' ')"
fi
todo=$(missing)
[ -z "$todo" ] || skip "npm install did not leave these in $dir: $todo"
exit 0
