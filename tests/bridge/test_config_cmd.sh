#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/bridge/test_config_cmd.sh: the contract of `tracewire config` (docs/bridge.md),
# driven through the built command as a user would (make check).
#
# Covers: the settings table (value and source) for defaults, JAEGER_*, OTEL_* and a
# conflict between them; errors (exit 1, one line each on stderr); --probe against
# loopback peers started here (tests/bridge/probe_peer.py: an HTTP server that takes the
# empty batches and serves a sampling strategy, a UDP socket), a closed UDP port (the
# missing agent, said in one line), a refusing collector; usage errors (exit 2).
# Every run gets a clean environment (env -i), so the host's variables cannot leak in.
#
# Usage: test_config_cmd.sh [TRACEWIRE]   (default ./bridge/tracewire, relative to the top
# build directory). TW_TEST_WRAPPER prefixes every run of the command (valgrind).

set -u

tw=${1:-./bridge/tracewire}
here=$(cd "$(dirname "$0")" && pwd)
[ -x "$tw" ] || {
    echo "FAIL: $tw is not built"
    exit 1
}
command -v python3 >/dev/null || {
    echo "SKIP: python3 is needed for the probe peers"
    exit 77
}
work=$(mktemp -d "${TMPDIR:-/tmp}/tw-config-cmd.XXXXXX") || exit 1
peer_pid=
cleanup() {
    exec 9>&- 2>/dev/null
    [ -n "$peer_pid" ] && wait "$peer_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

passed=0
failed=0

# run VAR=VALUE... -- ARGS...: the command in a clean environment; rc, $work/out, $work/err.
run() {
    set -- "$@"
    vars=
    while [ "$1" != "--" ]; do
        vars="$vars $1"
        shift
    done
    shift
    # shellcheck disable=SC2086 # word lists on purpose
    env -i PATH="$PATH" $vars ${TW_TEST_WRAPPER:-} "$tw" config "$@" >"$work/out" 2>"$work/err"
    rc=$?
}

pass() {
    passed=$((passed + 1))
    echo "PASS: $1"
}

fail() {
    failed=$((failed + 1))
    echo "FAIL: $1"
    echo "  rc: $rc"
    echo "  stdout: $(cat "$work/out")"
    echo "  stderr: $(cat "$work/err")"
}

# expect NAME RC PATTERN FILE...: exit status RC and every PATTERN (grep -E) found in its
# file (out or err).
expect() {
    name=$1
    want_rc=$2
    shift 2
    if [ "$rc" != "$want_rc" ]; then
        fail "$name (exit $rc, expected $want_rc)"
        return
    fi
    while [ $# -ge 2 ]; do
        if ! grep -Eq -- "$1" "$work/$2"; then
            fail "$name: no '$1' in $2"
            return
        fi
        shift 2
    done
    pass "$name"
}

# ---- the table -------------------------------------------------------------------------

run -- --service shop
expect "defaults: every setting with its source, exit 0" 0 \
    '^service\.name +shop +\(argument\)$' out \
    '^sampler +remote, initial probabilistic 0\.001 +\(default\)$' out \
    '^reporter +jaeger-udp +\(default\)$' out \
    '^jaeger-udp\.agent +localhost:6831 +\(default\)$' out
[ -s "$work/err" ] && fail "defaults: nothing on stderr"

run OTEL_SERVICE_NAME=otel-shop OTEL_TRACES_SAMPLER=parentbased_traceidratio \
    OTEL_TRACES_SAMPLER_ARG=0.25 OTEL_TRACES_EXPORTER=otlp \
    OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318 \
    OTEL_EXPORTER_OTLP_HEADERS=api-key=hidden-value -- 
expect "OTEL_* variables, header values never shown" 0 \
    '^service\.name +otel-shop +\(OTEL_SERVICE_NAME\)$' out \
    '^sampler +probabilistic 0\.25 +\(OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG\)$' out \
    '^reporter +otlp-http +\(OTEL_TRACES_EXPORTER\)$' out \
    '^otlp-http\.endpoint +http://collector:4318/v1/traces' out \
    '^otlp-http\.headers +api-key=\*\*\* ' out
grep -q hidden-value "$work/out" "$work/err" && fail "a header value was printed"

run JAEGER_SERVICE_NAME=a OTEL_SERVICE_NAME=b -- 
expect "a conflict is a warning, exit 1" 1 \
    '^service\.name +a +\(JAEGER_SERVICE_NAME\)$' out \
    '^tracewire: config: warning: OTEL_SERVICE_NAME \(b\) conflicts with JAEGER_SERVICE_NAME \(a\)' err

run JAEGER_AGENT_PORT=70000 OTEL_BSP_SCHEDULE_DELAY=soon -- --service s
expect "errors, one line each, exit 1" 1 \
    '^tracewire: config: error: JAEGER_AGENT_PORT="70000": out of range' err \
    '^tracewire: config: error: OTEL_BSP_SCHEDULE_DELAY="soon"' err

# JAEGER_AGENT_HOST: an IPv6 literal with or without brackets is bracketed where it is
# shown and in the sampler's URL; a host with a port, a path, a bad label or user info is
# refused, the user info masked.
for host in ::1 '[::1]'; do
    run JAEGER_AGENT_HOST="$host" JAEGER_SAMPLER_TYPE=remote -- --service s
    expect "JAEGER_AGENT_HOST=$host: bracketed for the agent and the sampler URL" 0 \
        '^jaeger-udp\.agent +\[::1\]:6831 +\(JAEGER_AGENT_HOST\)$' out \
        '^sampler\.endpoint +http://\[::1\]:5778/sampling +\(JAEGER_AGENT_HOST\)$' out
done
for host in 127.0.0.1:9999 'evil/x?y' -agent; do
    run JAEGER_AGENT_HOST="$host" -- --service s
    expect "JAEGER_AGENT_HOST=$host is refused" 1 \
        '^tracewire: config: error: JAEGER_AGENT_HOST=".*": not a host name, IPv4 or IPv6 literal' err
done
run JAEGER_AGENT_HOST=u:hidden-pw@agent -- --service s
expect "JAEGER_AGENT_HOST with user info is refused, masked" 1 \
    '^tracewire: config: error: JAEGER_AGENT_HOST="\*\*\*@agent": not a host name' err
grep -q hidden-pw "$work/out" "$work/err" && fail "the agent host's password was printed"

run OTEL_TRACES_SAMPLER=always_on OTEL_TRACES_EXPORTER=otlp -- --service s
expect "OTLP defaults to http/protobuf" 0 '^otlp-http\.protocol +http/protobuf +\(default\)$' out
run OTEL_EXPORTER_OTLP_PROTOCOL=grpc OTEL_TRACES_EXPORTER=otlp -- --service s
expect "grpc is refused" 1 'grpc.*not supported' err

# Control bytes in quoted input are escaped: one problem, one line.
nl='
'
env -i PATH="$PATH" "JAEGER_AGENT_PORT=1${nl}tracewire: config: error: forged" \
    ${TW_TEST_WRAPPER:-} "$tw" config --service s >"$work/out" 2>"$work/err"
rc=$?
expect "a value with a line break stays on one line, escaped" 1 \
    'JAEGER_AGENT_PORT="1\\x0atracewire: config: error: forged": not a non-negative' err
[ "$(wc -l <"$work/err")" -eq 1 ] || fail "a value with a line break: exactly one line"
# The same for convert: a file name with a line break, in its reject message.
printf 'not json at all\n' >"$work/bad${nl}name.json"
env -i PATH="$PATH" ${TW_TEST_WRAPPER:-} "$tw" convert --from zipkin-v2-json --to zipkin-v2-json \
    "$work/bad${nl}name.json" >"$work/out" 2>"$work/err"
rc=$?
expect "convert escapes a file name in its messages" 1 'bad\\x0aname\.json' err
grep -q '^name\.json' "$work/err" && fail "convert: a file name broke a line"

# ---- usage ------------------------------------------------------------------------------

run -- --timeout-ms 4294967297
expect "--timeout-ms out of range is a usage error" 2 '--timeout-ms takes milliseconds' err
run -- extra
expect "an argument is a usage error" 2 "unexpected argument 'extra'" err
run -- --help
expect "--help" 0 'tracewire config' out

# ---- --probe -----------------------------------------------------------------------------

# A closed port: bind, read the port, close.
closed=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
run JAEGER_SAMPLER_TYPE=const JAEGER_AGENT_HOST=127.0.0.1 JAEGER_AGENT_PORT="$closed" -- \
    --service s --probe
expect "a missing agent is one line" 1 \
    "^tracewire: config: jaeger-udp agent 127\.0\.0\.1:$closed: nothing listens on UDP port $closed" err
[ "$(wc -l <"$work/err")" -eq 1 ] || fail "a missing agent: exactly one line"

mkfifo "$work/peer-in"
python3 "$here/probe_peer.py" --log "$work/peer.log" <"$work/peer-in" >"$work/ports" &
peer_pid=$!
exec 9>"$work/peer-in"
tries=0
while [ ! -s "$work/ports" ] && [ $tries -lt 100 ]; do
    sleep 0.1
    tries=$((tries + 1))
done
read -r http_port udp_port <"$work/ports"
base=http://127.0.0.1:$http_port
run TRACEWIRE_REPORTER=jaeger-udp,zipkin,otlp-http,jaeger-http JAEGER_AGENT_HOST=127.0.0.1 \
    JAEGER_AGENT_PORT="$udp_port" TRACEWIRE_ZIPKIN_ENDPOINT="$base/api/v2/spans" \
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="$base/v1/traces" JAEGER_ENDPOINT="$base/api/traces" \
    JAEGER_SAMPLING_ENDPOINT="$base/sampling" -- --service s --probe
expect "every endpoint answers: exit 0" 0 \
    "^probe ok: jaeger-udp agent 127\.0\.0\.1:$udp_port: datagram sent" out \
    '^probe ok: zipkin collector .*accepted an empty batch \(HTTP 202\)' out \
    '^probe ok: otlp-http collector .*accepted an empty batch' out \
    '^probe ok: jaeger-http collector .*accepted an empty batch' out \
    '^probe ok: sampling endpoint .*serves probabilistic 0\.5' out
if grep -q 'POST /api/v2/spans .* application/json' "$work/peer.log" &&
    grep -q 'POST /api/traces .* application/x-thrift' "$work/peer.log" &&
    grep -q 'GET /sampling?service=s' "$work/peer.log" && grep -q '^UDP ' "$work/peer.log"; then
    pass "the peers got the probes in each transport's format"
else
    fail "the peers got the probes in each transport's format: $(cat "$work/peer.log")"
fi
run TRACEWIRE_REPORTER=zipkin,otlp-http TRACEWIRE_ZIPKIN_ENDPOINT="$base/missing" \
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="http://user:planted-pw@127.0.0.1:$http_port/auth" \
    JAEGER_SAMPLER_TYPE=const -- --service s --probe
expect "refusing collectors: one line each, the reason named" 1 \
    '^tracewire: config: zipkin collector .*: refused an empty batch: HTTP 404 \(no such path' err \
    '^tracewire: config: otlp-http collector http://\*\*\*@127.*HTTP 401 \(the credentials were refused' err
grep -q planted-pw "$work/out" "$work/err" && fail "URL credentials were printed"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
