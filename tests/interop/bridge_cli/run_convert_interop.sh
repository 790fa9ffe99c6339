#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/interop/bridge_cli/run_convert_interop.sh: the built `tracewire
# convert` on every real fixture of a supported input format, its outputs
# checked by tools that share no code with tracewire (make check runs it):
#
#   --to zipkin-v2-json  ajv against Zipkin's published API schema
#                        (tests/interop/http/zipkin2-api.yaml, ListOfSpans), the
#                        stricter reading of tests/interop/http/validate.js, and
#                        Zipkin semantics the schema cannot say (check_outputs.js);
#   --to otlp-json       opentelemetry-proto's protobufjs classes: the document
#                        must survive fromObject/verify/encode/decode/toObject
#                        unchanged (check_outputs.js, validate.js's round trip);
#   --to jaeger-thrift   decoded, Batch after Batch, by Apache Thrift's Python
#                        library with the IDL Jaeger publishes (jaeger-client on
#                        npm ships it), and compared span for span with
#                        --to jaeger-json of the same fixture
#                        (check_jaeger_thrift.py).
#
# The fixtures are the rows of $TW_FIXTURES_DIR/INDEX.md whose format is
# zipkin-v1-json, zipkin-v2-json, jaeger-json, otlp-json, zipkin-v1-thrift or
# jaeger-thrift (the two .thrift files), each converted with --from its format.
# A conversion may exit 1 when it rejected records (it must say so); any other
# status, or a crash, fails.
#
# Exit status follows automake: 0 pass, 1 fail, 77 skip (no node, npm,
# python3-thrift or thrift compiler, or the npm registry cannot be reached).
# The npm packages (pinned below, the versions tests/interop/http uses) are
# installed once into the build tree (tests/interop/.cache/bridge_cli); the
# jaeger-client tarball is the one run_jaeger_udp.sh caches
# (tests/interop/.cache/jaeger-client-3.19.0.tgz).
#
# Usage: run_convert_interop.sh [TRACEWIRE [FIXTURES_DIR]]
#   TRACEWIRE defaults to ./bridge/tracewire (relative to the top build
#   directory); FIXTURES_DIR to $TW_FIXTURES_DIR. The environment can override
#   NODE, NPM, TW_PYTHON3 (default /usr/bin/python3, which Debian's
#   python3-thrift serves), THRIFT and TW_INTEROP_CACHE.

set -u

PACKAGES="ajv@8.17.1 ajv-formats@3.0.1 js-yaml@4.1.0 @opentelemetry/otlp-transformer@0.57.2"
JAEGER_CLIENT_VERSION=3.19.0
IDL_PATH=package/dist/src/jaeger-idl/thrift

here=$(cd "$(dirname "$0")" && pwd)
tracewire=${1:-./bridge/tracewire}
fixtures=${2:-${TW_FIXTURES_DIR:-$here/../../fixtures/real}}
node=${NODE:-node}
npm=${NPM:-npm}
python=${TW_PYTHON3:-/usr/bin/python3}
thrift=${THRIFT:-thrift}
interop_cache=${TW_INTEROP_CACHE:-./tests/interop/.cache}
cache_dir=$interop_cache/bridge_cli
stamp=$cache_dir/installed
jaeger_tgz=$interop_cache/jaeger-client-$JAEGER_CLIENT_VERSION.tgz

skip() {
    echo "SKIP: $*"
    exit 77
}

fail() {
    echo "FAIL: $*"
    exit 1
}

[ -x "$tracewire" ] || fail "$tracewire is not built"
[ -f "$fixtures/INDEX.md" ] || fail "no fixtures index $fixtures/INDEX.md"
command -v "$node" >/dev/null 2>&1 || skip "node not found (apt-get install nodejs)"
"$python" -c 'import thrift.protocol.TBinaryProtocol' 2>/dev/null ||
    skip "$python cannot import Apache Thrift (apt-get install python3-thrift)"
command -v "$thrift" >/dev/null 2>&1 || skip "no thrift compiler ($thrift) to generate Python code"

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

if [ ! -s "$jaeger_tgz" ]; then
    command -v "$npm" >/dev/null 2>&1 ||
        skip "npm not found: cannot fetch jaeger-client@$JAEGER_CLIENT_VERSION for Jaeger's IDL"
    "$npm" pack "jaeger-client@$JAEGER_CLIENT_VERSION" --pack-destination "$work" \
        --cache "$cache_dir/npm-cache" --fetch-timeout=30000 --fetch-retries=1 \
        --loglevel=error >"$work/pack.log" 2>&1 ||
        skip "npm pack jaeger-client@$JAEGER_CLIENT_VERSION failed (registry unreachable?):" \
            "$(tail -n 3 "$work/pack.log" | tr '\n' ' ')"
    # Through a .part name, as run_jaeger_udp.sh does: a cut copy is never the cache.
    if ! mv "$work/jaeger-client-$JAEGER_CLIENT_VERSION.tgz" "$jaeger_tgz.part.$$" ||
        ! mv "$jaeger_tgz.part.$$" "$jaeger_tgz"; then
        fail "cannot cache $jaeger_tgz"
    fi
fi
tar -xzf "$jaeger_tgz" -C "$work" "$IDL_PATH/agent.thrift" "$IDL_PATH/jaeger.thrift" \
    "$IDL_PATH/zipkincore.thrift" || fail "$jaeger_tgz does not hold Jaeger's Thrift IDL"

# The fixtures: "format<TAB>saved name" of the INDEX.md rows in the formats above.
awk -F'|' '
    { num = $2; gsub(/ /, "", num) }
    num ~ /^[0-9]+$/ {
        name = $3; fmt = $6
        gsub(/[ `]/, "", name); gsub(/^ +| +$/, "", fmt)
        if (fmt ~ /^(zipkin-v1-json|zipkin-v2-json|jaeger-json|otlp-json)$/ ||
            (fmt ~ /^(zipkin-v1-thrift|jaeger-thrift)$/ && name ~ /\.thrift$/))
            print fmt "\t" name
    }' "$fixtures/INDEX.md" >"$work/fixtures.tsv" || fail "cannot read $fixtures/INDEX.md"
[ -s "$work/fixtures.tsv" ] || fail "no fixture of a supported format in $fixtures/INDEX.md"

# convert DIR FROM FILE TO OUT: one conversion; exit 0, or 1 with rejected records.
failures=0
convert() {
    "$tracewire" convert --from "$2" --to "$4" "$3" >"$1/$5" 2>"$1/$5.err"
    rc=$?
    if [ "$rc" -eq 0 ] || { [ "$rc" -eq 1 ] && grep -q 'rejected [1-9]' "$1/$5.err"; }; then
        return 0
    fi
    echo "FAIL: convert --from $2 --to $4: $(cat "$1/fixture") exited $rc"
    sed 's/^/  /' "$1/$5.err" | head -n 20
    failures=$((failures + 1))
    return 1
}

n=0
tab=$(printf '\t')
while IFS=$tab read -r fmt name; do
    n=$((n + 1))
    dir=$work/$(printf '%03d' "$n")
    mkdir "$dir" || fail "cannot create $dir"
    echo "$name" >"$dir/fixture"
    file=$fixtures/$name
    if [ ! -f "$file" ]; then
        echo "FAIL: fixture $file is missing"
        failures=$((failures + 1))
        continue
    fi
    convert "$dir" "$fmt" "$file" zipkin-v2-json zipkin-v2.json
    convert "$dir" "$fmt" "$file" otlp-json otlp.json
    convert "$dir" "$fmt" "$file" jaeger-thrift jaeger.thrift
    convert "$dir" "$fmt" "$file" jaeger-json jaeger.json
done <"$work/fixtures.tsv"
echo "converted $n fixtures to zipkin-v2-json, otlp-json, jaeger-thrift and jaeger-json"

NODE_PATH=$cache_dir/node_modules "$node" "$here/check_outputs.js" "$work" ||
    failures=$((failures + 1))
TMPDIR=$work "$python" "$here/check_jaeger_thrift.py" --idl "$work/$IDL_PATH" \
    --thrift "$thrift" "$work" || failures=$((failures + 1))

[ "$failures" -eq 0 ] || fail "$failures part(s) failed (see above)"
echo "PASS: tracewire convert output on $n real fixtures validated by independent peers"
exit 0
