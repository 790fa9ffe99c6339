#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/examples/test_first_run.sh: the README's first snippet (examples/readme.c) is what
# the README shows, and its first run is not silent: with no variable set it prints the
# remote sampler's warning; with JAEGER_SAMPLER_TYPE=const JAEGER_SAMPLER_PARAM=1 it sends
# its spans to the agent (a loopback UDP socket here), or, when no agent listens, says that
# spans are being dropped. Every run gets a clean environment (env -i).
#
# Usage: test_first_run.sh [READme PROGRAM] [README.md]  (defaults: ./examples/readme and
# $top_srcdir/README.md, from the top build directory where make check runs it).

set -u

prog=${1:-./examples/readme}
readme=${2:-${top_srcdir:-.}/README.md}
example=${top_srcdir:-.}/examples/readme.c
[ -x "$prog" ] || {
    echo "FAIL: $prog is not built"
    exit 1
}
command -v python3 >/dev/null || {
    echo "SKIP: python3 is needed for the agent socket"
    exit 77
}
work=$(mktemp -d "${TMPDIR:-/tmp}/tw-first-run.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 1' INT TERM
failed=0
pass() { echo "PASS: $1"; }
fail() {
    failed=$((failed + 1))
    echo "FAIL: $1"
    [ -f "$work/err" ] && echo "  stderr: $(cat "$work/err")"
}

# The README shows exactly the program's snippet.
awk '/README snippet begins/ {on = 1; next} /README snippet ends/ {on = 0} on' "$example" \
    >"$work/from-example"
# The README's block starts with its #include lines and a blank line, which the program
# has outside the markers.
awk '/^## Use/ {use = 1} use && /^```c$/ {on = 1; next} on && /^```$/ {exit}
     on && !body {if ($0 == "") body = 1; next} on {print}' "$readme" >"$work/from-readme"
if [ -s "$work/from-example" ] && cmp -s "$work/from-example" "$work/from-readme"; then
    pass "the README snippet is examples/readme.c"
else
    fail "the README snippet is examples/readme.c: $(diff "$work/from-example" "$work/from-readme")"
fi

# No variable: a warning on stderr, exit 0.
env -i PATH="$PATH" ${TW_TEST_WRAPPER:-} "$prog" >"$work/out" 2>"$work/err"
rc=$?
if [ $rc -eq 0 ] && grep -q '^tracewire: warning: remote sampler: .*sampling stays at probabilistic 0.001' "$work/err"; then
    pass "run as written, it says why nothing is sampled"
else
    fail "run as written, it says why nothing is sampled (exit $rc)"
fi

# const 1 and an agent: the spans arrive.
python3 - "$work" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
open(sys.argv[1] + "/port.tmp", "w").write(str(s.getsockname()[1]))
__import__("os").rename(sys.argv[1] + "/port.tmp", sys.argv[1] + "/port")
s.settimeout(30)
data, _ = s.recvfrom(65536)
open(sys.argv[1] + "/datagram", "wb").write(data)
PY
agent=$!
tries=0
while [ ! -s "$work/port" ] && [ $tries -lt 100 ]; do
    sleep 0.1
    tries=$((tries + 1))
done
port=$(cat "$work/port")
env -i PATH="$PATH" JAEGER_SAMPLER_TYPE=const JAEGER_SAMPLER_PARAM=1 JAEGER_AGENT_HOST=127.0.0.1 \
    JAEGER_AGENT_PORT="$port" ${TW_TEST_WRAPPER:-} "$prog" >"$work/out" 2>"$work/err"
rc=$?
wait $agent
if [ $rc -eq 0 ] && [ -s "$work/datagram" ] && grep -q 'emitBatch' "$work/datagram" &&
    grep -q 'POST /orders' "$work/datagram" && grep -q 'insert order' "$work/datagram" &&
    [ ! -s "$work/err" ]; then
    pass "with JAEGER_SAMPLER_TYPE=const JAEGER_SAMPLER_PARAM=1 the agent gets both spans, quietly"
else
    fail "with JAEGER_SAMPLER_TYPE=const JAEGER_SAMPLER_PARAM=1 the agent gets both spans (exit $rc)"
fi

# const 1 and no agent: it says spans are being dropped.
closed=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
env -i PATH="$PATH" JAEGER_SAMPLER_TYPE=const JAEGER_SAMPLER_PARAM=1 JAEGER_AGENT_HOST=127.0.0.1 \
    JAEGER_AGENT_PORT="$closed" ${TW_TEST_WRAPPER:-} "$prog" >"$work/out" 2>"$work/err"
rc=$?
if [ $rc -eq 0 ] && grep -q "spans are being dropped (nothing listens there" "$work/err" &&
    grep -q "2 spans could not be sent" "$work/err"; then
    pass "with no agent it says the spans are dropped, and how many"
else
    fail "with no agent it says the spans are dropped (exit $rc)"
fi

[ $failed -eq 0 ]
