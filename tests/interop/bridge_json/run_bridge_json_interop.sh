#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/interop/bridge_json/run_bridge_json_interop.sh: the zipkin-v1-json and
# jaeger-json writers' output on every real fixture, checked by validate.js
# (ajv against Zipkin's v1 API schema, tests/interop/http/zipkin-api.yaml;
# jaeger-ui's invariants for Jaeger JSON). make check runs it.
#
# Exit status follows automake: 0 pass, 1 fail, 77 skip (no node or npm, or
# the npm registry cannot be reached). The npm packages (pinned below, the
# same as tests/interop/http uses) are installed once into the build tree
# (tests/interop/.cache/bridge_json).
#
# Usage: run_bridge_json_interop.sh [DRIVER [FIXTURES_DIR]]
#   DRIVER defaults to ./tests/interop/bridge_json/json_capture (relative to
#   the top build directory); FIXTURES_DIR to $TW_FIXTURES_DIR. The
#   environment can override NODE, NPM and TW_INTEROP_CACHE.

set -u

PACKAGES="ajv@8.17.1 ajv-formats@3.0.1 js-yaml@4.1.0"

here=$(cd "$(dirname "$0")" && pwd)
driver=${1:-./tests/interop/bridge_json/json_capture}
fixtures=${2:-${TW_FIXTURES_DIR:-$here/../../fixtures/real}}
node=${NODE:-node}
npm=${NPM:-npm}
cache_dir=${TW_INTEROP_CACHE:-./tests/interop/.cache}/bridge_json
stamp=$cache_dir/installed

skip() {
    echo "SKIP: $*"
    exit 77
}

fail() {
    echo "FAIL: $*"
    exit 1
}

[ -x "$driver" ] || fail "driver $driver is not built"
[ -d "$fixtures" ] || fail "no fixtures directory $fixtures"
command -v "$node" >/dev/null 2>&1 || skip "node not found (apt-get install nodejs)"

mkdir -p "$cache_dir" || fail "cannot create $cache_dir"
if [ "$(cat "$stamp" 2>/dev/null)" != "$PACKAGES" ]; then
    command -v "$npm" >/dev/null 2>&1 || skip "npm not found: cannot install $PACKAGES"
    rm -rf "$cache_dir/node_modules" "$stamp"
    # shellcheck disable=SC2086 # the package list splits on purpose
    if ! "$npm" install --prefix "$cache_dir" --no-save --no-audit --no-fund \
        --ignore-scripts --cache "$cache_dir/npm-cache" --fetch-timeout=30000 \
        --fetch-retries=1 --loglevel=error $PACKAGES >"$cache_dir/npm.log" 2>&1; then
        skip "npm install failed (registry unreachable?): $(tail -n 3 "$cache_dir/npm.log" | tr '\n' ' ')"
    fi
    echo "$PACKAGES" >"$stamp"
fi

work=$(mktemp -d "$cache_dir/run.XXXXXX") || fail "cannot create a temporary directory"
trap 'rm -rf "$work"' EXIT
trap 'exit 1' INT TERM

"$driver" "$fixtures" "$work" || fail "$driver could not convert the fixtures"
NODE_PATH=$cache_dir/node_modules "$node" "$here/validate.js" "$work" \
    "$here/../http/zipkin-api.yaml" || fail "the writers' output is not valid (see above)"
echo "PASS: zipkin-v1-json and jaeger-json output validated independently"
exit 0
