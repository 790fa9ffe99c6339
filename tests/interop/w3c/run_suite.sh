#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/interop/w3c/run_suite.sh: runs the official W3C Trace Context test suite
# (github.com/w3c/trace-context, test/test.py) at its strictest settings, STRICT_LEVEL=2
# SPEC_LEVEL=2 (Level 2 included), against w3c_service, on loopback. Part of make check,
# where it skips unless a checkout of the suite is named.
#
# Usage: run_suite.sh [SUITE]
#   SUITE (or TW_W3C_SUITE): a w3c/trace-context checkout, or its test/ directory. This tree
#   does not ship the suite; fetch it yourself (docs/PROPAGATION.md).
#   TW_W3C_SERVICE: the service (default ./tests/interop/w3c/w3c_service, relative to the top
#   build directory, where make check runs this script).
#   PYTHON: the interpreter (default: python3, else /usr/bin/python3, the first with aiohttp,
#   which the suite needs: python3-aiohttp).
#   STRICT_LEVEL, SPEC_LEVEL: default 2 and 2.
#
# Both ends listen on 127.0.0.1 only, on ports the system picks: the service binds port 0
# and says which it got; the harness port is found free just before the suite starts (and
# the run is retried if another program takes it in between).
#
# Exit status: 0 when every test passes (the suite's summary line is printed), 1 when one
# fails or the run breaks (the suite's output is printed), 77 (skip) when no suite is
# named or Python lacks aiohttp.

set -u

suite=${1:-${TW_W3C_SUITE:-}}
service=${TW_W3C_SERVICE:-./tests/interop/w3c/w3c_service}

if [ -z "$suite" ]; then
    echo "SKIP: no W3C trace-context suite named (TW_W3C_SUITE=DIR, a w3c/trace-context checkout)"
    exit 77
fi
[ -f "$suite/test/test.py" ] && suite=$suite/test
[ -f "$suite/test.py" ] || {
    echo "FAIL: $suite has no test.py (want a w3c/trace-context checkout or its test/ directory)"
    exit 1
}
# The first interpreter that has aiohttp: $PYTHON, else python3 on the PATH, else the
# system's (Debian's python3-aiohttp is installed for /usr/bin/python3, which a pyenv or
# virtualenv python3 earlier on the PATH does not see).
python=
for candidate in ${PYTHON:-python3 /usr/bin/python3}; do
    if "$candidate" -c 'import aiohttp' 2>/dev/null; then
        python=$candidate
        break
    fi
done
[ -n "$python" ] || {
    echo "SKIP: ${PYTHON:-python3} cannot import aiohttp, which the suite needs (apt-get install python3-aiohttp)"
    exit 77
}
[ -x "$service" ] || {
    echo "FAIL: $service is not built"
    exit 1
}

work=$(mktemp -d "${TMPDIR:-/tmp}/tw-w3c-suite.XXXXXX") || exit 1
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

"$service" >"$work/service.out" 2>"$work/service.err" &
pid=$!
url=
tries=0
while [ -z "$url" ] && [ $tries -lt 100 ]; do
    url=$(sed -n 's/^w3c_service listening on \(http:[^ ]*\)$/\1/p' "$work/service.out")
    [ -n "$url" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
    tries=$((tries + 1))
done
if [ -z "$url" ]; then
    echo "FAIL: $service did not start"
    cat "$work/service.err"
    exit 1
fi

free_port() {
    "$python" -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

commit=
if command -v git >/dev/null 2>&1; then
    commit=$(git -C "$suite" rev-parse HEAD 2>/dev/null)
fi
echo "suite: $suite${commit:+ (commit $commit)}"
echo "service: $url"

attempt=0
while :; do
    attempt=$((attempt + 1))
    port=$(free_port) || exit 1
    (cd "$suite" && HARNESS_HOST=127.0.0.1 HARNESS_PORT=$port HARNESS_BIND_HOST=127.0.0.1 \
        HARNESS_BIND_PORT=$port STRICT_LEVEL=${STRICT_LEVEL:-2} SPEC_LEVEL=${SPEC_LEVEL:-2} \
        "$python" test.py "$url") >"$work/suite.log" 2>&1
    rc=$?
    # Another program took the harness port between the check and the bind: try another.
    if [ $rc -ne 0 ] && [ $attempt -lt 3 ] && grep -q "address already in use" "$work/suite.log"; then
        continue
    fi
    break
done

# Stop the service the way an operator would (SIGTERM): it must exit cleanly, which under
# the sanitizers also means without a leak report.
kill "$pid" 2>/dev/null
wait "$pid"
service_rc=$?
pid=

ran=$(grep -E '^Ran [0-9]+ tests? in' "$work/suite.log")
result=$(grep -E '^(OK|FAILED)' "$work/suite.log" | tail -n 1)
echo "STRICT_LEVEL=${STRICT_LEVEL:-2} SPEC_LEVEL=${SPEC_LEVEL:-2}: $ran: $result"
# Every test must run and pass: "OK (skipped=N)" is not a pass at these settings.
if [ $rc -eq 0 ] && [ "$result" = "OK" ] && [ $service_rc -eq 0 ]; then
    exit 0
fi
[ $service_rc -eq 0 ] || echo "FAIL: $service exited with status $service_rc"
cat "$work/suite.log"
echo "--- $service stderr:"
cat "$work/service.err"
exit 1
