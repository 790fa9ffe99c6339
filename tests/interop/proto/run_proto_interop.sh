#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/interop/proto/run_proto_interop.sh: tracewire's protobuf formats against protobufjs
# (make check, with libmicrohttpd).
#
# 1. The SDK transport: proto_capture sends the same spans through the real OTLP/HTTP
#    reporter in JSON and in protobuf to a loopback receiver; check_proto.js decodes every
#    protobuf body with protobufjs loading the official .proto files (proto/ of the source
#    tree) and with @opentelemetry/otlp-transformer's generated classes (both must agree and
#    protobufjs must re-encode the same bytes), and compares each span with its OTLP/JSON
#    twin field by field.
# 2. `tracewire convert --to zipkin-v2-proto` on real Zipkin fixtures, decoded by protobufjs
#    as a ListOfSpans, equals `--to zipkin-v2-json` of the same file span by span.
# 3. The other way: protobufjs encodes our OTLP/JSON bodies and Zipkin v2 JSON as protobuf,
#    and `tracewire convert --from otlp-proto` / `--from zipkin-v2-proto` reads them back to
#    exactly what the JSON readers make of the JSON.
#
# Exit status follows automake: 0 pass, 1 fail, 77 skip (node or npm missing, or the npm
# registry unreachable). The packages, pinned below, are installed once into the build tree
# (tests/interop/.cache/proto).
#
# Usage: run_proto_interop.sh [DRIVER [TRACEWIRE]], relative to the top build directory
# (defaults ./tests/interop/proto/proto_capture and ./bridge/tracewire). NODE, NPM,
# TW_INTEROP_CACHE and top_srcdir may be set in the environment.

set -u

PACKAGES="protobufjs@7.6.6 @opentelemetry/otlp-transformer@0.57.2"

here=$(cd "$(dirname "$0")" && pwd)
src=${top_srcdir:-$here/../../..}
src=$(cd "$src" && pwd)
fixtures=${TW_FIXTURES_DIR:-$src/tests/fixtures/real}
driver=${1:-./tests/interop/proto/proto_capture}
tw=${2:-./bridge/tracewire}
node=${NODE:-node}
npm=${NPM:-npm}
interop_cache=${TW_INTEROP_CACHE:-./tests/interop/.cache}
cache_dir=$interop_cache/proto
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
[ -x "$tw" ] || fail "$tw is not built"
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

check() {
    NODE_PATH=$cache_dir/node_modules "$node" "$here/check_proto.js" "$src/proto" "$@"
}

# 1. The SDK's OTLP/HTTP transport, both encodings.
mkdir -p "$work/sdk"
"$driver" "$work/sdk" || fail "$driver could not capture the reporter's requests"
check check-otlp "$work/sdk" || fail "the OTLP protobuf bodies are not their JSON twins"

# 2. and 3. Zipkin proto3 both ways, on real Zipkin v2 fixtures.
for f in zipkin-lens__testdata__messaging-kafka.json zipkin-lens__testdata__yelp.json \
    zipkin-ui__testdata__netflix.json benchmarks__src__test__resources__zipkin2-chinese.json \
    zipkin-lens__testdata__smartthings-oauth-authorization.json; do
    in=$fixtures/openzipkin__zipkin/$f
    "$tw" convert --to zipkin-v2-json "$in" >"$work/$f.json" 2>"$work/err" ||
        fail "$f -> zipkin-v2-json: $(cat "$work/err")"
    "$tw" convert --to zipkin-v2-proto "$in" >"$work/$f.pb" 2>"$work/err" ||
        fail "$f -> zipkin-v2-proto: $(cat "$work/err")"
    check check-zipkin "$work/$f.json" "$work/$f.pb" || fail "$f: proto3 and JSON differ"
    check encode-zipkin "$work/$f.json" "$work/$f.pbjs" || fail "$f: protobufjs cannot encode it"
    "$tw" convert --from zipkin-v2-proto --to zipkin-v2-json "$work/$f.pbjs" \
        >"$work/$f.back" 2>"$work/err" || fail "$f: our reader refuses protobufjs's proto3: $(cat "$work/err")"
    "$tw" convert --from zipkin-v2-json --to zipkin-v2-json "$work/$f.json" \
        >"$work/$f.again" 2>/dev/null || fail "$f: zipkin-v2-json does not read back"
    cmp -s "$work/$f.back" "$work/$f.again" ||
        fail "$f: protobufjs's proto3 reads back otherwise than the JSON it came from"
done
echo "PASS: zipkin-v2-proto: protobufjs reads our ListOfSpans as our JSON, and we read its"

# 3. OTLP: protobufjs encodes the reporter's OTLP/JSON bodies; we read them back.
n=0
for j in "$work"/sdk/otlp-json-*.json; do
    check encode-otlp "$j" "$j.pbjs" || fail "$j: protobufjs cannot encode it"
    "$tw" convert --from otlp-proto --to otlp-json --window 0 "$j.pbjs" >"$j.back" 2>"$work/err" ||
        fail "$j: our reader refuses protobufjs's request: $(cat "$work/err")"
    "$tw" convert --from otlp-json --to otlp-json --window 0 "$j" >"$j.again" 2>/dev/null ||
        fail "$j: otlp-json does not read back"
    cmp -s "$j.back" "$j.again" ||
        fail "$j: protobufjs's protobuf reads back otherwise than the JSON it came from"
    n=$((n + 1))
done
for j in "$fixtures"/jaegertracing__jaeger/*otlp2jaeger-in.json; do
    b=$work/$(basename "$j")
    check encode-otlp "$j" "$b.pbjs" || fail "$j: protobufjs cannot encode it"
    "$tw" convert --from otlp-proto --to otlp-json "$b.pbjs" >"$b.back" 2>/dev/null &&
        "$tw" convert --from otlp-json --to otlp-json "$j" >"$b.again" 2>/dev/null &&
        cmp -s "$b.back" "$b.again" || fail "$j: protobuf and JSON read back differently"
done
echo "PASS: otlp-proto: $n request bodies encoded by protobufjs read back as their JSON"
echo "PASS: OTLP protobuf and Zipkin proto3 validated against protobufjs and the official .proto files"
exit 0
