#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/interop/http/run_http_interop.sh: the Zipkin and OTLP/HTTP interop test
# (make check, with libmicrohttpd).
#
# Runs http_capture, which sends spans through the real Zipkin, OTLP/HTTP and
# Jaeger collector reporters (public API) to a loopback receiver and writes
# every request body, then validates the bodies with validate.js: Zipkin's
# against Zipkin's own OpenAPI schema (zipkin2-api.yaml, copied unmodified from
# openzipkin/zipkin-api 069ec8d, Apache-2.0) with ajv, OTLP's through the
# protobuf classes generated from opentelemetry-proto
# (@opentelemetry/otlp-transformer ships them) with a binary round trip. The
# Jaeger bodies are decoded by ../jaeger_thrift_decode.py (Apache Thrift's
# Python library, the IDL from the jaeger-client npm package, as in
# run_jaeger_udp.sh) and checked by check_jaeger.py; that part is skipped, and
# says so, without python3-thrift or the thrift compiler. No tracewire code
# takes part in the validation.
#
# Exit status follows automake: 0 pass, 1 fail, 77 skip. It skips, saying why,
# when node or npm is missing or the npm registry cannot be reached. The
# packages are installed once into the build tree (tests/interop/.cache/http),
# pinned to the versions below.
#
# Usage: run_http_interop.sh [DRIVER]
#   DRIVER defaults to ./tests/interop/http/http_capture, relative to the top
#   build directory, where make check runs this script. The environment can
#   override NODE, NPM, TW_PYTHON3, THRIFT and TW_INTEROP_CACHE (a directory).

set -u

PACKAGES="ajv@8.17.1 ajv-formats@3.0.1 js-yaml@4.1.0 @opentelemetry/otlp-transformer@0.57.2"
JAEGER_CLIENT_VERSION=3.19.0
IDL_PATH=package/dist/src/jaeger-idl/thrift

here=$(cd "$(dirname "$0")" && pwd)
driver=${1:-${TW_HTTP_CAPTURE:-./tests/interop/http/http_capture}}
node=${NODE:-node}
npm=${NPM:-npm}
python=${TW_PYTHON3:-/usr/bin/python3}
thrift=${THRIFT:-thrift}
interop_cache=${TW_INTEROP_CACHE:-./tests/interop/.cache}
cache_dir=$interop_cache/http
stamp=$cache_dir/installed
# The same file run_jaeger_udp.sh caches (written through a .part name by both).
jaeger_tgz=$interop_cache/jaeger-client-$JAEGER_CLIENT_VERSION.tgz

skip() {
    echo "SKIP: $*"
    exit 77
}

fail() {
    echo "FAIL: $*"
    exit 1
}

[ -x "$driver" ] || fail "driver $driver is not built"
command -v "$node" >/dev/null 2>&1 || skip "node not found (apt-get install nodejs)"

mkdir -p "$cache_dir" || fail "cannot create $cache_dir"
if [ "$(cat "$stamp" 2>/dev/null)" != "$PACKAGES" ]; then
    command -v "$npm" >/dev/null 2>&1 || skip "npm not found: cannot install $PACKAGES"
    rm -rf "$cache_dir/node_modules" "$stamp"
    # A private npm cache keeps the user's ~/.npm out of it; short timeouts turn
    # an unreachable registry into a prompt skip instead of a hang.
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

"$driver" "$work" || fail "$driver could not capture the reporters' requests"
NODE_PATH=$cache_dir/node_modules "$node" "$here/validate.js" "$work" ||
    fail "the bodies are not valid (see above)"

# Jaeger: optional, as it needs python3-thrift and the thrift compiler.
check_jaeger() {
    "$python" -c 'import thrift.protocol.TBinaryProtocol' 2>/dev/null || {
        echo "SKIP: jaeger part: $python cannot import Apache Thrift (apt-get install python3-thrift)"
        return 0
    }
    command -v "$thrift" >/dev/null 2>&1 || {
        echo "SKIP: jaeger part: no thrift compiler ($thrift)"
        return 0
    }
    if [ ! -s "$jaeger_tgz" ]; then
        "$npm" pack "jaeger-client@$JAEGER_CLIENT_VERSION" --pack-destination "$work" \
            --cache "$cache_dir/npm-cache" --fetch-timeout=30000 --fetch-retries=1 \
            --loglevel=error >"$work/pack.log" 2>&1 || {
            echo "SKIP: jaeger part: npm pack jaeger-client@$JAEGER_CLIENT_VERSION failed"
            return 0
        }
        mv "$work/jaeger-client-$JAEGER_CLIENT_VERSION.tgz" "$jaeger_tgz.part.$$" &&
            mv "$jaeger_tgz.part.$$" "$jaeger_tgz" || fail "cannot cache $jaeger_tgz"
    fi
    tar -xzf "$jaeger_tgz" -C "$work" "$IDL_PATH/agent.thrift" "$IDL_PATH/jaeger.thrift" \
        "$IDL_PATH/zipkincore.thrift" || fail "$jaeger_tgz does not hold Jaeger's Thrift IDL"
    mkdir -p "$work/jaeger" && mv "$work"/jaeger-*.bin "$work/jaeger/" ||
        fail "no Jaeger bodies were captured"
    TMPDIR=$work "$python" "$here/../jaeger_thrift_decode.py" --idl "$work/$IDL_PATH" \
        --thrift "$thrift" "$work/jaeger" >"$work/jaeger.json" 2>"$work/jaeger.err" || {
        cat "$work/jaeger.err"
        fail "Apache Thrift (Python) could not decode the Jaeger collector bodies"
    }
    "$python" "$here/check_jaeger.py" "$work/jaeger.json" "$work/expected.json" ||
        fail "the Jaeger collector bodies are not what was sent"
}
check_jaeger
echo "PASS: Zipkin, OTLP/HTTP and Jaeger collector bodies validated by independent decoders"
exit 0
