#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/interop/agent/run_agent_interop.sh: `tracewire agent` against independent clients from
# npm (make check): jaeger-client over UDP (and its remote sampler against the agent's sampling
# endpoint), the OpenTelemetry JS OTLP/HTTP exporters (JSON and protobuf),
# zipkin with zipkin-transport-http; and tracewire's own remote sampler (sampler_driver). What
# arrives at loopback backends in OTLP/JSON, Zipkin v2 and Jaeger Thrift is checked span by
# span (test_agent_interop.py). Packages are pinned and installed once into the build tree.
#
# Exit status follows automake: 0 pass, 1 fail, 77 skip (node, npm, the registry,
# python3-thrift or the thrift compiler missing).
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=${top_srcdir:-$here/../../..}
tracewire=${1:-./bridge/tracewire}
driver=${2:-./tests/interop/agent/sampler_driver}
python=${TW_PYTHON3:-/usr/bin/python3}
thrift=${THRIFT:-thrift}
node=${NODE:-node}
npm=${NPM:-npm}
cache=${TW_AGENT_PEERS:-tests/interop/.cache/agent-peers}

PEERS="jaeger-client@3.19.0 @opentelemetry/api@1.9.1 @opentelemetry/sdk-trace-base@2.5.1 \
@opentelemetry/resources@2.5.1 @opentelemetry/exporter-trace-otlp-http@0.212.0 \
@opentelemetry/exporter-trace-otlp-proto@0.212.0 zipkin@0.22.0 zipkin-transport-http@0.22.0"

skip() {
    echo "SKIP: $*"
    exit 77
}

[ -x "$tracewire" ] || { echo "FAIL: $tracewire is not built"; exit 1; }
command -v "$node" >/dev/null 2>&1 || skip "node not found"
"$python" -c 'import thrift.protocol.TCompactProtocol' 2>/dev/null ||
    skip "$python cannot import Apache Thrift (apt-get install python3-thrift)"
command -v "$thrift" >/dev/null 2>&1 || skip "no thrift compiler ($thrift)"

missing() {
    # shellcheck disable=SC2086
    "$node" -e '
        const path = require("path");
        const dir = path.resolve(process.argv[1], "node_modules");
        for (const spec of process.argv.slice(2)) {
            const at = spec.lastIndexOf("@");
            let got = "";
            try { got = require(path.join(dir, spec.slice(0, at), "package.json")).version; } catch (e) {}
            if (got !== spec.slice(at + 1)) console.log(spec);
        }' "$cache" $PEERS
}
if [ -n "$(missing)" ]; then
    command -v "$npm" >/dev/null 2>&1 || skip "npm not found"
    mkdir -p "$cache" || skip "cannot create $cache"
    # shellcheck disable=SC2086
    "$npm" install --prefix "$cache" --cache "$cache/.npm-cache" --no-audit --no-fund --no-save \
        --fetch-timeout=30000 --fetch-retries=1 $PEERS >"$cache/npm-install.log" 2>&1 ||
        skip "npm install failed (registry unreachable?): $(tail -n 3 "$cache/npm-install.log" | tr '\n' ' ')"
    [ -z "$(missing)" ] || skip "npm install did not leave the pinned versions in $cache"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/tw-agent-interop.XXXXXX") || { echo "FAIL: mktemp"; exit 1; }
trap 'rm -rf "$work"' EXIT
trap 'exit 1' INT TERM
mkdir "$work/gen" || exit 1
for idl in jaeger zipkincore agent; do
    "$thrift" -I "$srcdir/thrift" --gen py -out "$work/gen" "$srcdir/thrift/$idl.thrift" ||
        { echo "FAIL: thrift --gen py $idl.thrift"; exit 1; }
done
TW_NODE_MODULES=$(cd "$cache" && pwd)/node_modules NODE=$node \
    "$python" "$here/test_agent_interop.py" "$tracewire" "$work/gen" "$work/run" "$driver" \
    "$here/clients.js"
