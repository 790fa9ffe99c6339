#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/bridge/test_context_cmd.sh: the contract of `tracewire context extract|inject`
# (docs/bridge.md), driven through the built command as a user would (make check).
#
# Covers: every format read (Jaeger, B3 multi and single, W3C) and written, with the JSON
# compared byte for byte (the output's key order and spacing are part of the contract);
# round trips inject -> extract for every format, 64- and 128-bit ids, sampled, unsampled,
# deferred, debug, firehose, the random trace id, baggage and tracestate; the W3C Trace
# Context rules (flags, tracestate grammar, limits, duplicates); hints (jaeger-debug-id alone, b3: 1);
# the auto order (jaeger, w3c, b3); header text tolerance (CRLF, start line, folding, case);
# malformed headers and JSON (exit 1, the reason on stderr, nothing on stdout); usage errors
# (exit 2) and --help (exit 0).
#
# Usage: test_context_cmd.sh [TRACEWIRE]   (default ./bridge/tracewire, relative to the top
# build directory, where make check runs it). TW_TEST_WRAPPER prefixes every run of the
# command, e.g. TW_TEST_WRAPPER="valgrind -q --error-exitcode=99 --leak-check=full".

set -u

tw=${1:-./bridge/tracewire}
[ -x "$tw" ] || {
    echo "FAIL: $tw is not built"
    exit 1
}
work=$(mktemp -d "${TMPDIR:-/tmp}/tw-context-cmd.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 1' INT TERM

passed=0
failed=0

# run INPUT ARGS...: runs the command with INPUT (printf format) on stdin; sets rc and
# leaves stdout and stderr in $work/out and $work/err.
run() {
    input=$1
    shift
    # shellcheck disable=SC2059 # INPUT is a printf format on purpose (\r\n, %%)
    printf "$input" >"$work/in"
    # shellcheck disable=SC2086 # the wrapper is a word list
    ${TW_TEST_WRAPPER:-} "$tw" "$@" <"$work/in" >"$work/out" 2>"$work/err"
    rc=$?
}

pass() {
    passed=$((passed + 1))
    echo "PASS: $1"
}

fail() {
    failed=$((failed + 1))
    echo "FAIL: $1"
    shift
    for line in "$@"; do echo "  $line"; done
    echo "  stdout: $(cat "$work/out")"
    echo "  stderr: $(cat "$work/err")"
}

# ok NAME INPUT EXPECTED_STDOUT ARGS...: exit 0, stdout exactly EXPECTED_STDOUT (printf
# format, a final newline added), nothing on stderr.
ok() {
    name=$1 input=$2 expected=$3
    shift 3
    run "$input" "$@"
    # shellcheck disable=SC2059
    printf "$expected\n" >"$work/expected"
    if [ "$rc" -ne 0 ]; then
        fail "$name" "exit $rc, expected 0"
    elif ! cmp -s "$work/expected" "$work/out"; then
        fail "$name" "expected: $(cat "$work/expected")"
    elif [ -s "$work/err" ]; then
        fail "$name" "unexpected stderr"
    else
        pass "$name"
    fi
}

# ok_warn NAME INPUT EXPECTED_STDOUT WARNING_PATTERN ARGS...: as ok, plus a warning on stderr
# matching WARNING_PATTERN, printed once.
ok_warn() {
    name=$1 input=$2 expected=$3 pattern=$4
    shift 4
    run "$input" "$@"
    # shellcheck disable=SC2059
    printf "$expected\n" >"$work/expected"
    if [ "$rc" -ne 0 ]; then
        fail "$name" "exit $rc, expected 0"
    elif ! cmp -s "$work/expected" "$work/out"; then
        fail "$name" "expected: $(cat "$work/expected")"
    elif ! grep -q "^tracewire: warning: .*$pattern" "$work/err"; then
        fail "$name" "stderr lacks a warning matching: $pattern"
    elif [ "$(grep -c "$pattern" "$work/err")" -ne 1 ]; then
        fail "$name" "the warning is printed more than once: $(cat "$work/err")"
    else
        pass "$name"
    fi
}

# bad NAME STATUS ERR_PATTERN INPUT ARGS...: exit STATUS, nothing on stdout, stderr says
# "tracewire: ..." and matches ERR_PATTERN (grep -E).
bad() {
    name=$1 status=$2 pattern=$3 input=$4
    shift 4
    run "$input" "$@"
    if [ "$rc" -ne "$status" ]; then
        fail "$name" "exit $rc, expected $status"
    elif [ -s "$work/out" ]; then
        fail "$name" "unexpected stdout"
    elif ! grep -q '^tracewire: ' "$work/err" || ! grep -Eq -e "$pattern" "$work/err"; then
        fail "$name" "stderr does not match: $pattern"
    else
        pass "$name"
    fi
}

# JSON the command prints: ctx TRACE SPAN PARENT SAMPLED DEBUG FIREHOSE BAGGAGE TRACESTATE
# DEBUG_ID, each already in JSON form; "random_trace_id" is false. ctx_random: the same
# with "random_trace_id": true (W3C traceparent flag 0x02).
ctx_with() { # RANDOM_TRACE_ID TRACE SPAN PARENT SAMPLED DEBUG FIREHOSE BAGGAGE TRACESTATE DEBUG_ID
    printf '{"trace_id": %s, "span_id": %s, "parent_id": %s, "sampled": %s, "debug": %s, "firehose": %s, "random_trace_id": %s, "baggage": %s, "tracestate": %s, "debug_id": %s}' \
        "$2" "$3" "$4" "$5" "$6" "$7" "$1" "$8" "$9" "${10}"
}
ctx() {
    ctx_with false "$@"
}
ctx_random() {
    ctx_with true "$@"
}

T128=0af7651916cd43dd8448eb211c80319c
T64=00000000000000000000000000000abc
SPAN=00f067aa0ba902b7
PARENT=0020000000000001

# ---- extract: Jaeger ---------------------------------------------------------------------
ok "extract jaeger: 128-bit, parent, debug, %%-encoded baggage, CRLF, stops at empty line" \
    "uber-trace-id: $T128:$SPAN:$PARENT:3\r\nuberctx-user-id: alice%%20smith\r\nuberctx-q: a%%3Db+c\r\n\r\nuber-trace-id: ignored\r\n" \
    "$(ctx "\"$T128\"" "\"$SPAN\"" "\"$PARENT\"" true true false '{"user-id": "alice smith", "q": "a=b c"}' null null)" \
    context extract --format jaeger
ok "extract jaeger: short 64-bit ids are left-padded, parent 0 is a root" \
    "uber-trace-id: abc:f067aa0ba902b7:0:1\n" \
    "$(ctx "\"$T64\"" "\"$SPAN\"" null true false false '{}' null null)" \
    context extract --format jaeger
ok "extract jaeger: firehose, unsampled, upper-case header name" \
    "UBER-TRACE-ID: $T128:$SPAN:0:8\n" \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null false false true '{}' null null)" \
    context extract --format jaeger
ok "extract jaeger: jaeger-baggage header merges with uberctx-" \
    "uber-trace-id: $T128:$SPAN:0:1\nuberctx-a: 1\njaeger-baggage: b=2, c=3\n" \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null true false false '{"a": "1", "b": "2", "c": "3"}' null null)" \
    context extract --format jaeger
ok "extract jaeger: jaeger-debug-id alone is a hint (no ids, debug id kept)" \
    "jaeger-debug-id: my-debug-request\n" \
    "$(ctx null null null true true false '{}' null '"my-debug-request"')" \
    context extract --format jaeger
ok_warn "extract jaeger: a badly %%-encoded baggage value is kept raw, with a warning" \
    "uber-trace-id: $T128:$SPAN:0:1\nuberctx-k: 100%%zz\n" \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null true false false '{"k": "100%%zz"}' null null)" \
    "bad percent-encoding" context extract --format jaeger
ok_warn "extract jaeger: baggage that is not UTF-8 is shown with U+FFFD, with a warning" \
    "uber-trace-id: $T128:$SPAN:0:1\nuberctx-k: a%%FFb\n" \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null true false false '{"k": "a\357\277\275b"}' null null)" \
    "not valid UTF-8" context extract --format jaeger

# ---- extract: B3 -------------------------------------------------------------------------
ok "extract b3 multi: 64-bit, parent, unsampled" \
    "X-B3-TraceId: 0000000000000abc\nX-B3-SpanId: $SPAN\nX-B3-ParentSpanId: $PARENT\nX-B3-Sampled: 0\n" \
    "$(ctx "\"$T64\"" "\"$SPAN\"" "\"$PARENT\"" false false false '{}' null null)" \
    context extract --format b3
ok "extract b3 multi: X-B3-Flags: 1 is debug and sampled" \
    "x-b3-traceid: $T128\nx-b3-spanid: $SPAN\nx-b3-flags: 1\n" \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null true true false '{}' null null)" \
    context extract --format b3
ok "extract b3 multi: no X-B3-Sampled is a deferred decision (sampled null)" \
    "X-B3-TraceId: $T128\nX-B3-SpanId: $SPAN\n" \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null null false false '{}' null null)" \
    context extract --format b3
ok "extract b3 single: debug state d, parent" \
    "b3: $T128-$SPAN-d-$PARENT\n" \
    "$(ctx "\"$T128\"" "\"$SPAN\"" "\"$PARENT\"" true true false '{}' null null)" \
    context extract --format b3
ok "extract b3: the single header wins over multi headers" \
    "X-B3-TraceId: 0000000000000abc\nX-B3-SpanId: 0000000000000001\nb3: $T128-$SPAN-1\n" \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null true false false '{}' null null)" \
    context extract --format b3
ok "extract b3: 'b3: 0' alone is a hint carrying only the decision" \
    "b3: 0\n" \
    "$(ctx null null null false false false '{}' null null)" \
    context extract --format b3

# ---- extract: W3C ------------------------------------------------------------------------
ok "extract w3c: traceparent, two tracestate headers joined, baggage" \
    "traceparent: 00-$T128-$SPAN-01\ntracestate: congo=t61rcWkgMzE\ntracestate: rojo=00f067aa0ba902b7\nbaggage: user-id=alice%%20smith,tenant=acme;prop=1\n" \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null true false false '{"user-id": "alice smith", "tenant": "acme"}' '"congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"' null)" \
    context extract --format w3c
ok "extract w3c: unsampled, --pretty indents" \
    "traceparent: 00-$T128-$SPAN-00\n" \
    "{\n  \"trace_id\": \"$T128\",\n  \"span_id\": \"$SPAN\",\n  \"parent_id\": null,\n  \"sampled\": false,\n  \"debug\": false,\n  \"firehose\": false,\n  \"random_trace_id\": false,\n  \"baggage\": {},\n  \"tracestate\": null,\n  \"debug_id\": null\n}" \
    context extract --format w3c --pretty

# ---- extract: the W3C Trace Context rules (Level 2; docs/PROPAGATION.md quotes the spec) ---
# The same rules run through tw_headers and the curl_slist carriers in the unit suites
# (tests/unit/propagation/w3c_rules.h).
ok "extract w3c: flag 0x02 is the random trace id, not debug" \
    "traceparent: 00-$T128-$SPAN-02\n" \
    "$(ctx_random "\"$T128\"" "\"$SPAN\"" null false false false '{}' null null)" \
    context extract --format w3c
ok "extract w3c: flags 03, sampled and random" \
    "traceparent: 00-$T128-$SPAN-03\n" \
    "$(ctx_random "\"$T128\"" "\"$SPAN\"" null true false false '{}' null null)" \
    context extract --format w3c
ok "extract w3c: unknown flags are not kept (fd: sampled only)" \
    "traceparent: 00-$T128-$SPAN-fd\n" \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null true false false '{}' null null)" \
    context extract --format w3c
ok "extract jaeger: Jaeger's 0x02 is debug, never the random trace id" \
    "uber-trace-id: $T128:$SPAN:0:3\n" \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null true true false '{}' null null)" \
    context extract --format jaeger
ok "extract w3c: a tracestate key may start with a digit and contain @" \
    "traceparent: 00-$T128-$SPAN-01\ntracestate: 1foo=1,foo@=2,foo@@bar=3,foo@bar@baz=4,t@vvvvvvvvvvvvvvv=5\n" \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null true false false '{}' '"1foo=1,foo@=2,foo@@bar=3,foo@bar@baz=4,t@vvvvvvvvvvvvvvv=5"' null)" \
    context extract --format w3c
ok "extract w3c: empty members and OWS are allowed, leading spaces of a value kept" \
    "traceparent: 00-$T128-$SPAN-01\ntracestate: , foo=  a b \t,\t, bar=2 \ntracestate: \n" \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null true false false '{}' '"foo=  a b,bar=2"' null)" \
    context extract --format w3c
ok_warn "extract w3c: a repeated tracestate key keeps the first member, with a warning" \
    "traceparent: 00-$T128-$SPAN-01\ntracestate: foo=1,bar=2\ntracestate: foo=3\n" \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null true false false '{}' '"foo=1,bar=2"' null)" \
    "member \"foo\" .* dropped: its key occurs earlier" context extract --format w3c
ok_warn "extract w3c: a tracestate that cannot be parsed is discarded whole, with a warning" \
    "traceparent: 00-$T128-$SPAN-01\ntracestate: foo=1,@bar=2\n" \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null true false false '{}' null null)" \
    "invalid key .* the whole tracestate is discarded" context extract --format w3c
ok_warn "extract w3c: an empty tracestate value: discarded whole" \
    "traceparent: 00-$T128-$SPAN-01\ntracestate: foo=,bar=3\n" \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null true false false '{}' null null)" \
    "invalid value" context extract --format w3c
members32="a01=1,a02=2,a03=3,a04=4,a05=5,a06=6,a07=7,a08=8,a09=9,a10=10,a11=11,a12=12,a13=13,a14=14,a15=15,a16=16,a17=17,a18=18,a19=19,a20=20,a21=21,a22=22,a23=23,a24=24,a25=25,a26=26,a27=27,a28=28,a29=29,a30=30,a31=31,a32=32"
ok "extract w3c: 32 tracestate members are kept" \
    "traceparent: 00-$T128-$SPAN-01\ntracestate: $members32\n" \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null true false false '{}' "\"$members32\"" null)" \
    context extract --format w3c
ok_warn "extract w3c: more than 32 tracestate members: discarded whole" \
    "traceparent: 00-$T128-$SPAN-01\ntracestate: $members32\ntracestate: a33=33\n" \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null true false false '{}' null null)" \
    "more than 32 members" context extract --format w3c
bad "extract w3c: tracestate without traceparent is discarded (no context)" 1 "no trace context" \
    "tracestate: foo=1\n" context extract --format w3c
bad "extract w3c: two traceparent headers" 1 "2 traceparent headers" \
    "traceparent: 00-$T128-$SPAN-01\ntraceparent: 00-$T128-$SPAN-01\n" context extract --format w3c

# ---- extract: auto and the header text ---------------------------------------------------
ok "extract auto: jaeger wins over traceparent and b3" \
    "b3: 0000000000000001-0000000000000002-1\ntraceparent: 00-$T128-0000000000000003-01\nuber-trace-id: $T128:$SPAN:0:1\n" \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null true false false '{}' null null)" \
    context extract
ok "extract auto: traceparent wins over b3" \
    "b3: 0000000000000001-0000000000000002-1\ntraceparent: 00-$T128-$SPAN-01\n" \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null true false false '{}' null null)" \
    context extract --format auto
ok "extract auto: b3 when it is the only format" \
    "X-B3-TraceId: $T128\nX-B3-SpanId: $SPAN\nX-B3-Sampled: 1\n" \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null true false false '{}' null null)" \
    context extract
ok "extract auto: baggage merges from every format's headers, the first value of a key wins" \
    "baggage: k=w3c,w=1\nuber-trace-id: $T128:$SPAN:0:1\nuberctx-k: jaeger\n" \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null true false false '{"k": "jaeger", "w": "1"}' null null)" \
    context extract
ok "extract: a response start line is skipped (curl -sD - output), other headers ignored" \
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\ntraceparent: 00-$T128-$SPAN-01\r\n\r\n" \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null true false false '{}' null null)" \
    context extract
ok "extract: a request start line is skipped, values are trimmed, no final newline" \
    "GET /index.html HTTP/1.1\ntraceparent: \t 00-$T128-$SPAN-01  " \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null true false false '{}' null null)" \
    context extract
ok "extract: a folded line continues the value (tracestate comes back without spaces)" \
    "tracestate: a=1,\n b=2\ntraceparent: 00-$T128-$SPAN-01\n" \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null true false false '{}' '"a=1,b=2"' null)" \
    context extract --format w3c
ok "extract: a comma list of formats is tried in its order" \
    "traceparent: 00-$T128-$SPAN-01\nX-B3-TraceId: $T128\nX-B3-SpanId: 0000000000000001\nX-B3-Sampled: 0\n" \
    "$(ctx "\"$T128\"" "\"0000000000000001\"" null false false false '{}' null null)" \
    context extract --format b3,w3c

# ---- extract: failures (exit 1) ----------------------------------------------------------
bad "extract: no context headers" 1 "no trace context" \
    "Host: example.com\nAccept: */*\n" context extract
bad "extract: empty input" 1 "no trace context" "" context extract
bad "extract: the wrong format's headers only" 1 "no trace context" \
    "traceparent: 00-$T128-$SPAN-01\n" context extract --format jaeger
bad "extract: uber-trace-id with 3 fields names the header" 1 "uber-trace-id.*fields" \
    "uber-trace-id: $T128:$SPAN:1\n" context extract --format jaeger
bad "extract: uber-trace-id with a zero trace id" 1 "uber-trace-id" \
    "uber-trace-id: 0:$SPAN:0:1\n" context extract --format jaeger
bad "extract: uber-trace-id with non-hex digits" 1 "uber-trace-id" \
    "uber-trace-id: xyz:$SPAN:0:1\n" context extract
bad "extract: a malformed jaeger header is not skipped for a valid traceparent" 1 "uber-trace-id" \
    "uber-trace-id: bad\ntraceparent: 00-$T128-$SPAN-01\n" context extract
bad "extract: traceparent version ff" 1 "traceparent" \
    "traceparent: ff-$T128-$SPAN-01\n" context extract --format w3c
bad "extract: traceparent with a 31-digit trace id" 1 "traceparent" \
    "traceparent: 00-af7651916cd43dd8448eb211c80319c-$SPAN-01\n" context extract --format w3c
bad "extract: X-B3-SpanId without X-B3-TraceId" 1 "B3" \
    "X-B3-SpanId: $SPAN\n" context extract --format b3
bad "extract: b3 with an unknown sampling state" 1 "b3" \
    "b3: $T128-$SPAN-x\n" context extract --format b3
bad "extract: a line without a colon" 1 "line 2: not a header" \
    "traceparent: 00-$T128-$SPAN-01\nthis is not a header\n" context extract
bad "extract: white space before the colon" 1 "line 1: header name.*white space" \
    "traceparent : 00-$T128-$SPAN-01\n" context extract
bad "extract: a control byte in a value" 1 "line 1: control byte 0x01" \
    "traceparent: 00-\001\n" context extract
bad "extract: a NUL byte" 1 "line 1: NUL byte" "traceparent: a\000b\n" context extract
bad "extract: a folded line with nothing to continue" 1 "line 1: starts with white space" \
    " traceparent: 00-$T128-$SPAN-01\n" context extract
head -c 1100000 /dev/zero | tr '\0' 'a' | sed 's/^/x-big: /' >"$work/big"
big=$(cat "$work/big")
bad "extract: more than 1 MiB of headers" 1 "longer than 1048576 bytes" "$big\n" context extract

# endless NAME ARGS...: the command reads an endless input (from a generator on a pipe)
# and must stop at the 1 MiB bound with exit 1 and the reason, within 60 s (before the
# bound applied to the read, /dev/zero grew one line to 1.4 GB in 10 s). The generator's
# output is given as a shell word list in $gen.
endless() {
    name=$1
    shift
    # shellcheck disable=SC2086 # the wrapper and the generator are word lists
    sh -c "$gen" 2>/dev/null | timeout -k 5 60 ${TW_TEST_WRAPPER:-} "$tw" "$@" \
        >"$work/out" 2>"$work/err"
    rc=$?
    if [ "$rc" -ne 1 ]; then
        fail "$name" "exit $rc, expected 1 (124: it did not stop at the bound)"
    elif ! grep -q "longer than 1048576 bytes" "$work/err"; then
        fail "$name" "stderr does not give the bound"
    elif [ -s "$work/out" ]; then
        fail "$name" "unexpected stdout"
    else
        pass "$name"
    fi
}
gen="cat /dev/zero"
endless "extract: an endless line (/dev/zero) stops at the bound" context extract
gen="printf 'x-a: '; cat /dev/zero | tr '\\000' a"
endless "extract: an endless header value stops at the bound" context extract
gen="printf '{\"trace_id\": \"'; cat /dev/zero | tr '\\000' a"
endless "inject: an endless JSON string stops at the bound" context inject --format jaeger

# ---- inject ------------------------------------------------------------------------------
full="{\"trace_id\": \"$T128\", \"span_id\": \"$SPAN\", \"parent_id\": \"$PARENT\", \"sampled\": true, \"baggage\": {\"user-id\": \"alice smith\", \"q\": \"a=1,b\"}, \"tracestate\": \"congo=t61rcWkgMzE\"}"
ok "inject jaeger: 128-bit, parent, %%-encoded baggage" "$full" \
    "uber-trace-id: $T128:$SPAN:$PARENT:1\nuberctx-user-id: alice%%20smith\nuberctx-q: a%%3D1%%2Cb" \
    context inject --format jaeger
ok "inject b3 multi" "$full" \
    "X-B3-TraceId: $T128\nX-B3-SpanId: $SPAN\nX-B3-ParentSpanId: $PARENT\nX-B3-Sampled: 1" \
    context inject --format b3
ok "inject b3 single" "$full" "b3: $T128-$SPAN-1-$PARENT" context inject --format b3-single
ok "inject w3c: traceparent, tracestate, baggage" "$full" \
    "traceparent: 00-$T128-$SPAN-01\ntracestate: congo=t61rcWkgMzE\nbaggage: user-id=alice%%20smith,q=a=1%%2Cb" \
    context inject --format w3c
ok "inject b3 multi: debug writes X-B3-Flags and no X-B3-Sampled" \
    "{\"trace_id\": \"abc\", \"span_id\": \"1\", \"debug\": true}" \
    "X-B3-TraceId: 0000000000000abc\nX-B3-SpanId: 0000000000000001\nX-B3-Flags: 1" \
    context inject --format b3
ok "inject b3 single: no decision (sampled null) writes no sampling state" \
    "{\"trace_id\": \"ABC\", \"span_id\": \"1\", \"sampled\": null}" \
    "b3: 0000000000000abc-0000000000000001" context inject --format b3-single
ok "inject jaeger: firehose and debug flags" \
    "{\"trace_id\": \"$T64\", \"span_id\": \"$SPAN\", \"debug\": true, \"firehose\": true}" \
    "uber-trace-id: 0000000000000abc:$SPAN:0000000000000000:b" context inject --format jaeger
ok "inject: a comma list writes every format" \
    "{\"trace_id\": \"$T128\", \"span_id\": \"$SPAN\", \"sampled\": false}" \
    "uber-trace-id: $T128:$SPAN:0000000000000000:0\ntraceparent: 00-$T128-$SPAN-00" \
    context inject --format jaeger,w3c
ok "inject w3c: random_trace_id sets flag 0x02 (sampled: 03)" \
    "{\"trace_id\": \"$T128\", \"span_id\": \"$SPAN\", \"sampled\": true, \"debug\": true, \"random_trace_id\": true}" \
    "traceparent: 00-$T128-$SPAN-03" context inject --format w3c
ok "inject w3c: random_trace_id, not sampled: 02" \
    "{\"trace_id\": \"$T128\", \"span_id\": \"$SPAN\", \"sampled\": false, \"random_trace_id\": true}" \
    "traceparent: 00-$T128-$SPAN-02" context inject --format w3c
ok "inject: Jaeger and B3 have no random bit (debug stays Jaeger's 0x02)" \
    "{\"trace_id\": \"$T128\", \"span_id\": \"$SPAN\", \"sampled\": true, \"random_trace_id\": true}" \
    "uber-trace-id: $T128:$SPAN:0000000000000000:1\nb3: $T128-$SPAN-1" \
    context inject --format jaeger,b3-single
ok_warn "inject: a baggage key that is not a header name is left out, with a warning" \
    "{\"trace_id\": \"$T128\", \"span_id\": \"$SPAN\", \"sampled\": true, \"baggage\": {\"a b\": \"1\", \"c\": \"2\"}}" \
    "uber-trace-id: $T128:$SPAN:0000000000000000:1\nuberctx-c: 2" "a b" \
    context inject --format jaeger

# ---- round trips: inject then extract gives the same JSON --------------------------------
roundtrip() { # NAME FORMAT JSON (in the command's output form)
    name=$1 format=$2 json=$3
    run "$json" context inject --format "$format"
    if [ "$rc" -ne 0 ]; then
        fail "round trip $format: $name" "inject exit $rc"
        return
    fi
    # The headers become a printf format in ok(): double their '%'.
    sed 's/%/%%/g' "$work/out" >"$work/headers"
    ok "round trip $format: $name" "$(cat "$work/headers")" "$json" context extract --format "$format"
}
for f in jaeger b3 b3-single w3c; do
    roundtrip "sampled 128-bit" $f "$(ctx "\"$T128\"" "\"$SPAN\"" null true false false '{}' null null)"
    roundtrip "unsampled 64-bit" $f "$(ctx "\"$T64\"" "\"$SPAN\"" null false false false '{}' null null)"
done
for f in jaeger b3 b3-single; do
    roundtrip "parent, debug" $f "$(ctx "\"$T128\"" "\"$SPAN\"" "\"$PARENT\"" true true false '{}' null null)"
done
for f in b3 b3-single; do
    roundtrip "deferred" $f "$(ctx "\"$T128\"" "\"$SPAN\"" null null false false '{}' null null)"
done
roundtrip "firehose" jaeger "$(ctx "\"$T64\"" "\"$SPAN\"" null true false true '{}' null null)"
for f in jaeger w3c; do
    roundtrip "baggage that needs encoding" $f \
        "$(ctx "\"$T128\"" "\"$SPAN\"" null true false false '{"user-id": "alice smith", "q": "a=1,b;c%%d+e", "city": "Zürich"}' null null)"
done
roundtrip "random trace id, sampled" w3c \
    "$(ctx_random "\"$T128\"" "\"$SPAN\"" null true false false '{}' null null)"
roundtrip "random trace id, 64-bit, not sampled" w3c \
    "$(ctx_random "\"$T64\"" "\"$SPAN\"" null false false false '{}' null null)"
roundtrip "tracestate with the current key grammar" w3c \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null true false false '{}' '"1tw@x=1,a@b@c=2"' null)"
roundtrip "tracestate" w3c \
    "$(ctx "\"$T128\"" "\"$SPAN\"" null true false false '{}' '"congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"' null)"

# ---- inject: failures (exit 1) -----------------------------------------------------------
bad "inject: not JSON" 1 "stdin:1:.*" "{\"trace_id\": " context inject --format jaeger
bad "inject: empty input" 1 "stdin:" "" context inject --format jaeger
bad "inject: text after the object" 1 "stdin:.*end of file expected" \
    "{\"trace_id\": \"1\", \"span_id\": \"2\"} {}" context inject --format jaeger
bad "inject: duplicate key" 1 "duplicate object key" \
    "{\"trace_id\": \"1\", \"trace_id\": \"2\", \"span_id\": \"2\"}" context inject --format jaeger
bad "inject: an array, not an object" 1 "not a JSON object" "[1, 2]" context inject --format jaeger
bad "inject: unknown key (a typo)" 1 "unknown key \"traceId\"" \
    "{\"traceId\": \"1\", \"span_id\": \"2\"}" context inject --format jaeger
bad "inject: trace_id not hex" 1 "\"trace_id\".*not 1-32 hex digits" \
    "{\"trace_id\": \"xyz\", \"span_id\": \"2\"}" context inject --format jaeger
bad "inject: trace_id of 33 digits" 1 "\"trace_id\".*not 1-32 hex digits" \
    "{\"trace_id\": \"0${T128}\", \"span_id\": \"2\"}" context inject --format jaeger
bad "inject: span_id of 17 digits" 1 "\"span_id\".*not 1-16 hex digits" \
    "{\"trace_id\": \"1\", \"span_id\": \"0${SPAN}\"}" context inject --format jaeger
bad "inject: trace_id a number" 1 "\"trace_id\" must be a string" \
    "{\"trace_id\": 12, \"span_id\": \"2\"}" context inject --format jaeger
bad "inject: zero trace_id" 1 "\"trace_id\" is zero" \
    "{\"trace_id\": \"000\", \"span_id\": \"2\"}" context inject --format jaeger
bad "inject: zero span_id" 1 "\"span_id\" is zero" \
    "{\"trace_id\": \"1\", \"span_id\": \"0\"}" context inject --format jaeger
bad "inject: span_id without trace_id" 1 "\"span_id\" is set but \"trace_id\" is not" \
    "{\"span_id\": \"2\"}" context inject --format jaeger
bad "inject: debug with sampled false" 1 "contradicts" \
    "{\"trace_id\": \"1\", \"span_id\": \"2\", \"sampled\": false, \"debug\": true}" \
    context inject --format jaeger
bad "inject: sampled a string" 1 "\"sampled\" must be true or false or null" \
    "{\"trace_id\": \"1\", \"span_id\": \"2\", \"sampled\": \"yes\"}" context inject --format jaeger
bad "inject: a baggage value that is not a string" 1 "value of \"n\" is not a string" \
    "{\"trace_id\": \"1\", \"span_id\": \"2\", \"baggage\": {\"n\": 1}}" context inject --format jaeger
bad "inject: an empty baggage key" 1 "empty key" \
    "{\"trace_id\": \"1\", \"span_id\": \"2\", \"baggage\": {\"\": \"v\"}}" context inject --format jaeger
# Named in the input's terms, not by Jansson's flag ("without JSON_ALLOW_NUL").
bad "inject: \\\\u0000 in a string" 1 "stdin:1:[0-9]+: a string holds .u0000 \\(NUL\\)" \
    "{\"trace_id\": \"1\", \"span_id\": \"2\", \"debug_id\": \"a\\\\u0000b\"}" context inject --format jaeger
bad "inject: invalid UTF-8" 1 "stdin:" \
    "{\"trace_id\": \"1\", \"span_id\": \"2\", \"debug_id\": \"\377\"}" context inject --format jaeger
bad "inject: a hint cannot be injected" 1 "no trace_id and span_id \\(a hint\\)" \
    "{\"trace_id\": null, \"span_id\": null, \"debug_id\": \"x\"}" context inject --format jaeger
bad "inject: nothing at all" 1 "nothing to inject" "{}" context inject --format b3
bad "inject: a line break in tracestate cannot smuggle a header" 1 "\"tracestate\": byte 0x0a" \
    "{\"trace_id\": \"1\", \"span_id\": \"2\", \"tracestate\": \"a=1\\\\nx-evil: 1\"}" \
    context inject --format w3c
bad "inject: tracestate that is not a W3C list" 1 "\"tracestate\" is not a W3C list.*no '='" \
    "{\"trace_id\": \"1\", \"span_id\": \"2\", \"tracestate\": \"a=1,bad\"}" \
    context inject --format w3c
bad "inject: tracestate with a repeated key is not a list as it would be sent" 1 \
    "\"tracestate\" is not a W3C list.*occurs earlier" \
    "{\"trace_id\": \"1\", \"span_id\": \"2\", \"tracestate\": \"a=1,a=2\"}" \
    context inject --format w3c
bad "inject: random_trace_id without ids" 1 "\"random_trace_id\" needs" \
    "{\"random_trace_id\": true, \"sampled\": true}" context inject --format w3c
bad "inject: random_trace_id a string" 1 "\"random_trace_id\" must be true or false" \
    "{\"trace_id\": \"1\", \"span_id\": \"2\", \"random_trace_id\": \"yes\"}" \
    context inject --format w3c
bad "inject: tracestate without ids" 1 "\"tracestate\" needs" \
    "{\"tracestate\": \"a=1\", \"sampled\": true}" context inject --format w3c

# ---- usage (exit 2) and help (exit 0) ----------------------------------------------------
bad "usage: no command" 2 "missing command" ""
bad "usage: unknown command" 2 "unknown command 'frobnicate'" "" frobnicate
bad "usage: context without a subcommand" 2 "missing subcommand" "" context
bad "usage: unknown subcommand" 2 "unknown subcommand 'eject'" "" context eject
bad "usage: unknown option" 2 "Unknown option --bogus" "" context extract --bogus
bad "usage: unknown format" 2 "--format zipkin: .*unknown format" "" context extract --format zipkin
bad "usage: inject without --format" 2 "--format is required" "{}" context inject
bad "usage: inject does not guess (auto)" 2 "--format auto is for extract only" "{}" \
    context inject --format auto
bad "usage: a stray argument" 2 "unexpected argument 'headers.txt'" "" context extract headers.txt
for args in "--help" "context --help" "context extract --help" "context inject --help"; do
    # shellcheck disable=SC2086
    run "" $args
    if [ "$rc" -eq 0 ] && grep -q "Usage" "$work/out" && [ ! -s "$work/err" ]; then
        pass "help: tracewire $args"
    else
        fail "help: tracewire $args" "exit $rc, expected 0 and a usage text on stdout"
    fi
done
# The manual's schema of extract's output lists every key the command prints, in order.
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
man_keys=$(awk '/always has every key/ { on = 1 } on && /^```$/ { if (++fences == 2) exit; next }
    fences == 1' "$top_srcdir/docs/man/tracewire-context.1.scd" |
    grep -o '"[a-z_]*":' | tr -d '":' | grep -vx key | tr '\n' ' ') # "key": baggage's example
run "traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-03\n" context extract
out_keys=$(grep -o '"[a-z_]*":' "$work/out" | tr -d '":' | tr '\n' ' ')
if [ "$rc" -eq 0 ] && [ -n "$man_keys" ] && [ "$man_keys" = "$out_keys" ]; then
    pass "extract prints the keys of tracewire-context(1), in its order"
else
    fail "extract prints the keys of tracewire-context(1), in its order" \
        "manual: $man_keys; output: $out_keys"
fi
ok_warn "extract: each baggage warning is printed once" \
    "uber-trace-id: 1:1:0:1\nuberctx-bad: %%zz\n" \
    '{"trace_id": "00000000000000000000000000000001", "span_id": "0000000000000001", "parent_id": null, "sampled": true, "debug": false, "firehose": false, "random_trace_id": false, "baggage": {"bad": "%%zz"}, "tracestate": null, "debug_id": null}' \
    "bad percent-encoding" context extract --format jaeger

run "" --version
if [ "$rc" -eq 0 ] && grep -Eq '^tracewire [0-9]+\.[0-9]+\.[0-9]+$' "$work/out"; then
    pass "tracewire --version"
else
    fail "tracewire --version" "exit $rc"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
