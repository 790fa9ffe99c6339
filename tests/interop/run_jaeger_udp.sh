#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/interop/run_jaeger_udp.sh: the Jaeger Thrift interop test (make check).
#
# Runs the C driver twice, each run writing datagrams plus expected.json
# saying what they hold: once with datagrams made by our encoder alone
# (jaeger_udp_driver.c: every protocol and extreme value), and once with what
# the real Jaeger UDP reporter sent to a loopback socket, spans made through
# the public API only (--reporter, reporter_capture.c). It decodes the
# datagrams with Apache Thrift's Python library and the IDL that Jaeger
# publishes (jaeger-client 3.19.0 on npm ships jaeger-idl's thrift/ files), the
# reporter's joined per process in seqNo order (--by-process), and diffs each
# pair of JSON documents field by field. Neither tracewire's thrift/ IDL nor
# its C code takes part in the decoding, so an error shared by our encoder and
# our IDL cannot hide.
#
# Exit status follows automake: 0 pass, 1 fail, 77 skip. It skips, and says
# why, when python3-thrift or the thrift compiler is missing or the npm
# registry cannot be reached. The npm tarball is cached in the build tree
# (tests/interop/.cache/) after the first download; TW_JAEGER_CLIENT_TGZ names
# a local copy to use instead of the registry.
#
# Usage: run_jaeger_udp.sh [DRIVER]
#   DRIVER defaults to ./tests/interop/jaeger_udp_driver, relative to the top
#   build directory, where make check runs this script. The environment can
#   override TW_PYTHON3 (default /usr/bin/python3, the interpreter Debian's
#   python3-thrift serves), THRIFT, NPM and TW_INTEROP_CACHE (a directory).

set -u

JAEGER_CLIENT_VERSION=3.19.0
IDL_PATH=package/dist/src/jaeger-idl/thrift

here=$(cd "$(dirname "$0")" && pwd)
decoder=$here/jaeger_thrift_decode.py
driver=${1:-${TW_JAEGER_UDP_DRIVER:-./tests/interop/jaeger_udp_driver}}
python=${TW_PYTHON3:-/usr/bin/python3}
thrift=${THRIFT:-thrift}
npm=${NPM:-npm}
cache_dir=${TW_INTEROP_CACHE:-./tests/interop/.cache}
tgz=$cache_dir/jaeger-client-$JAEGER_CLIENT_VERSION.tgz

skip() {
    echo "SKIP: $*"
    exit 77
}

fail() {
    echo "FAIL: $*"
    exit 1
}

[ -x "$driver" ] || fail "driver $driver is not built"
"$python" -c 'import thrift.protocol.TCompactProtocol' 2>/dev/null ||
    skip "$python cannot import Apache Thrift (apt-get install python3-thrift)"
command -v "$thrift" >/dev/null 2>&1 || skip "no thrift compiler ($thrift) to generate Python code"

mkdir -p "$cache_dir" || fail "cannot create $cache_dir"
work=$(mktemp -d "$cache_dir/jaeger-udp.XXXXXX") || fail "cannot create a temporary directory"
trap 'rm -rf "$work"' EXIT
trap 'exit 1' INT TERM

if [ ! -s "$tgz" ] && [ -n "${TW_JAEGER_CLIENT_TGZ:-}" ]; then
    cp "$TW_JAEGER_CLIENT_TGZ" "$tgz" || fail "cannot copy $TW_JAEGER_CLIENT_TGZ"
fi
if [ ! -s "$tgz" ]; then
    command -v "$npm" >/dev/null 2>&1 ||
        skip "npm not found: cannot fetch jaeger-client@$JAEGER_CLIENT_VERSION for Jaeger's IDL"
    # A private npm cache keeps the user's ~/.npm out of it; short timeouts
    # turn an unreachable registry into a prompt skip instead of a hang.
    if ! "$npm" pack "jaeger-client@$JAEGER_CLIENT_VERSION" --pack-destination "$work" \
        --cache "$work/npm-cache" --fetch-timeout=30000 --fetch-retries=1 \
        --loglevel=error >"$work/npm.log" 2>&1; then
        skip "npm pack jaeger-client@$JAEGER_CLIENT_VERSION failed (registry unreachable?):" \
            "$(tail -n 3 "$work/npm.log" | tr '\n' ' ')"
    fi
    # Through a .part name, so that an interrupted copy is never taken for the cache.
    if ! mv "$work/jaeger-client-$JAEGER_CLIENT_VERSION.tgz" "$tgz.part" ||
        ! mv "$tgz.part" "$tgz"; then
        fail "npm pack did not produce jaeger-client-$JAEGER_CLIENT_VERSION.tgz"
    fi
fi

tar -xzf "$tgz" -C "$work" "$IDL_PATH/agent.thrift" "$IDL_PATH/jaeger.thrift" \
    "$IDL_PATH/zipkincore.thrift" || fail "$tgz does not hold Jaeger's Thrift IDL"

# check NAME LABEL [DECODER OPTION...]: decodes $work/NAME/*.bin and diffs the
# result against $work/NAME/expected.json, both in the decoder's canonical form.
check() {
    name=$1
    label=$2
    shift 2
    set -- "$@" "$work/$name"
    TMPDIR=$work "$python" "$decoder" --idl "$work/$IDL_PATH" --thrift "$thrift" "$@" \
        >"$work/$name.decoded.json" ||
        fail "$label: Apache Thrift (Python) could not decode the datagrams"
    "$python" "$decoder" --canonicalize "$work/$name/expected.json" \
        >"$work/$name.expected.json" || fail "$label: expected.json is not valid JSON"
    if ! diff -u "$work/$name.expected.json" "$work/$name.decoded.json"; then
        fail "$label: what Jaeger's IDL decodes (+) differs from what was sent (-)"
    fi
    set -- "$work/$name"/*.bin
    echo "PASS: $label: $# datagrams decoded by Apache Thrift (Python) with Jaeger's" \
        "jaeger-client@$JAEGER_CLIENT_VERSION IDL match what was sent"
}

"$driver" "$work/encoder" || fail "$driver failed"
"$driver" --reporter "$work/reporter" || fail "$driver --reporter failed"
check encoder "encoder cases"
check reporter "UDP reporter" --by-process
exit 0
