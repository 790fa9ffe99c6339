#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/examples/test_log_correlation.sh: runs examples/log_correlation (GLib structured
# logging through a GLogWriterFunc, and syslog) and checks that both log lines carry the
# active span's ids, the trace id in its 32-digit form although the tracer uses 64-bit ids,
# and that they match the traceparent the program prints; and that logging with no span
# active (the program's first lines) makes the library log no error.
#
# Usage: test_log_correlation.sh [PROGRAM]  (default ./examples/log_correlation)

set -u
prog=${1:-./examples/log_correlation}
[ -x "$prog" ] || {
    echo "FAIL: $prog is not built"
    exit 1
}
work=$(mktemp -d "${TMPDIR:-/tmp}/tw-logcorr.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
env -i PATH="$PATH" ${TW_TEST_WRAPPER:-} "$prog" >"$work/out" 2>"$work/err" || {
    echo "FAIL: the program failed"
    cat "$work/err"
    exit 1
}
tp=$(sed -n 's/^traceparent: //p' "$work/out")
trace=$(echo "$tp" | cut -d- -f2)
span=$(echo "$tp" | cut -d- -f3)
failed=0
case $trace in 0000000000000000????????????????) ;; *) failed=1 ;; esac
if grep -q "tracewire: error\|invalid argument" "$work/err"; then
    echo "FAIL: logging with no span active made the library log an error"
    cat "$work/err"
    exit 1
fi
grep -q "service started trace_id= span_id=\$" "$work/err" || {
    echo "FAIL: the syslog line without an active span is missing"
    cat "$work/err"
    exit 1
}
echo "PASS: lines logged with no span active carry no ids and cause no error"
if grep -q "stock looked up trace_id=$trace span_id=$span\$" "$work/err" &&
    [ "$(grep -c "trace_id=$trace span_id=$span" "$work/err")" -eq 2 ] && [ $failed -eq 0 ]; then
    echo "PASS: GLib and syslog lines carry the active span's ids (32-digit trace id)"
else
    echo "FAIL: the log lines lack the ids of $tp"
    cat "$work/out" "$work/err"
    exit 1
fi
