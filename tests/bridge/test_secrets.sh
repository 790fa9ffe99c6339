#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/bridge/test_secrets.sh: no secret is ever printed. Runs the library (through
# examples/readme, whose default logger writes to stderr), `tracewire config` (with and
# without --probe), `tracewire convert`'s usage errors and `tracewire agent`'s starts with
# a planted secret in every place one goes: OTEL_EXPORTER_OTLP_HEADERS items (well formed and malformed),
# JAEGER_ENDPOINT credentials (valid URL and not), JAEGER_PASSWORD, JAEGER_AUTH_TOKEN (also
# with a line break), `--send http://user:SECRET@...`, `-H 'Authorization: ...'`, `--user`,
# query values (`?token=SECRET`: a backend may take its key there, under any name), a query
# component without '=' (`?SECRET`), a fragment (`#SECRET`), a path parameter
# (`;jsessionid=SECRET`) and a JAEGER_AGENT_HOST with user info (refused, masked).
# The whole output of every run (stdout and stderr) is grepped for the secret.
#
# Usage: test_secrets.sh [TRACEWIRE] [README PROGRAM]  (defaults ./bridge/tracewire and
# ./examples/readme, from the top build directory).

set -u

tw=${1:-./bridge/tracewire}
prog=${2:-./examples/readme}
secret=PLANTED-s3cr3t
[ -x "$tw" ] && [ -x "$prog" ] || {
    echo "FAIL: $tw or $prog is not built"
    exit 1
}
work=$(mktemp -d "${TMPDIR:-/tmp}/tw-secrets.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 1' INT TERM
runs=0
leaks=0

# check NAME COMMAND...: runs COMMAND (a clean environment given by the caller through env -i)
# and fails when the secret is anywhere in its output.
check() {
    name=$1
    shift
    "$@" >"$work/out" 2>&1 </dev/null
    runs=$((runs + 1))
    if grep -q "$secret" "$work/out"; then
        leaks=$((leaks + 1))
        [ "$name" = self-test ] && return
        echo "FAIL: $name printed the secret:"
        sed 's/^/  /' "$work/out"
    fi
}

# The check itself can fail: a run that prints the secret is caught.
check "self-test" echo "$secret"
if [ $leaks -ne 1 ]; then
    echo "FAIL: the check does not see a printed secret"
    exit 1
fi
leaks=0
echo "PASS: a printed secret is caught (self-test)"

closed=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 9)
nl='
'

# The library and `tracewire config`, for each planted variable.
for setting in \
    "OTEL_TRACES_EXPORTER=otlp|OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer $secret" \
    "OTEL_TRACES_EXPORTER=otlp|OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer $secret,broken" \
    "OTEL_TRACES_EXPORTER=otlp|OTEL_EXPORTER_OTLP_TRACES_HEADERS=x-api-key=$secret%zz" \
    "OTEL_TRACES_EXPORTER=otlp|OTEL_EXPORTER_OTLP_HEADERS=Content-Type=$secret" \
    "OTEL_TRACES_EXPORTER=otlp|OTEL_EXPORTER_OTLP_HEADERS=bad name=$secret" \
    "OTEL_TRACES_EXPORTER=otlp|OTEL_EXPORTER_OTLP_ENDPOINT=http://u:$secret@127.0.0.1:$closed" \
    "JAEGER_ENDPOINT=http://user:$secret@127.0.0.1:$closed/api/traces" \
    "JAEGER_ENDPOINT=htp:/user:$secret@collector/api/traces" \
    "JAEGER_ENDPOINT=user:$secret@collector:14268/api/traces" \
    "JAEGER_ENDPOINT=http://127.0.0.1:$closed/api/traces?token=$secret" \
    "OTEL_TRACES_EXPORTER=otlp|OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:$closed/v1/traces?api-key=$secret" \
    "JAEGER_ENDPOINT=http://127.0.0.1:$closed/api/traces?$secret" \
    "JAEGER_ENDPOINT=http://127.0.0.1:$closed/api/traces?a=1&$secret" \
    "JAEGER_ENDPOINT=http://127.0.0.1:$closed/api/traces#$secret" \
    "JAEGER_ENDPOINT=http://127.0.0.1:$closed/api/traces;jsessionid=$secret" \
    "OTEL_TRACES_EXPORTER=otlp|OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:$closed/v1/traces;$secret" \
    "JAEGER_SAMPLING_ENDPOINT=http://127.0.0.1:$closed/sampling#$secret|JAEGER_SAMPLER_TYPE=remote" \
    "JAEGER_AGENT_HOST=u:$secret@127.0.0.1" \
    "JAEGER_AGENT_HOST=u:$secret@127.0.0.1|JAEGER_SAMPLER_TYPE=remote" \
    "JAEGER_ENDPOINT=http://127.0.0.1:$closed/api/traces|JAEGER_USER=me|JAEGER_PASSWORD=$secret" \
    "JAEGER_ENDPOINT=http://127.0.0.1:$closed/api/traces|JAEGER_PASSWORD=$secret" \
    "JAEGER_ENDPOINT=http://127.0.0.1:$closed/api/traces|JAEGER_AUTH_TOKEN=$secret" \
    "JAEGER_ENDPOINT=http://127.0.0.1:$closed/api/traces|JAEGER_AUTH_TOKEN=$secret${nl}x" \
    "TRACEWIRE_REPORTER=zipkin|TRACEWIRE_ZIPKIN_ENDPOINT=ftp://u:$secret@h/api/v2/spans" \
    "JAEGER_SAMPLING_ENDPOINT=http://u:$secret@127.0.0.1:$closed/sampling|JAEGER_SAMPLER_TYPE=remote" \
    "OTEL_TRACES_SAMPLER=jaeger_remote|OTEL_TRACES_SAMPLER_ARG=endpoint=http://u:$secret@127.0.0.1:$closed"; do
    old_ifs=$IFS
    IFS='|'
    # shellcheck disable=SC2086 # split on | on purpose
    set -- $setting
    IFS=$old_ifs
    check "readme with $*" env -i PATH="$PATH" TRACEWIRE_LOG_LEVEL=debug JAEGER_SAMPLER_TYPE=const \
        JAEGER_SAMPLER_PARAM=1 TRACEWIRE_SAMPLER_FIRST_POLL_TIMEOUT=300 "$@" "$prog"
    check "config with $*" env -i PATH="$PATH" "$@" "$tw" config --service s
    check "config --probe with $*" env -i PATH="$PATH" "$@" "$tw" config --service s --probe \
        --timeout-ms 300
done

# `tracewire convert`: usage errors and refused URLs and headers.
echo '{}' >"$work/in.json"
for args in \
    "--send|http://user:$secret@127.0.0.1:$closed/api/v2/spans|--to|zipkin-v2-json" \
    "--send|http://user:$secret@127.0.0.1:$closed/api/v2/spans|-o|$work/x" \
    "--send|user:$secret@collector/api/v2/spans" \
    "--send|htp://user:$secret@collector/api/v2/spans" \
    "--send|udp://user:$secret@host" \
    "--send|http://127.0.0.1:$closed/api/v2/spans|-H|Authorization Bearer $secret" \
    "--send|http://127.0.0.1:$closed/api/v2/spans|-H|Bad Name: Bearer $secret" \
    "--send|http://127.0.0.1:$closed/api/v2/spans|-H|Authorization: Bearer $secret|--retries|x" \
    "--send|http://127.0.0.1:$closed/nowhere|--user|me:$secret" \
    "--send|http://u:$secret@127.0.0.1:$closed/api/v2/spans|--send-format|carrier-pigeon" \
    "--send|http://127.0.0.1:$closed/api/v2/spans?token=$secret" \
    "--send|http://127.0.0.1:$closed/api/v2/spans?a=1&sig=$secret|--send-format|carrier-pigeon" \
    "--send|http://127.0.0.1:$closed/api/v2/spans?$secret|--send-format|carrier-pigeon" \
    "--send|http://127.0.0.1:$closed/api/v2/spans#$secret|--send-format|carrier-pigeon" \
    "--send|http://127.0.0.1:$closed/api/v2/spans;jsessionid=$secret|--send-format|carrier-pigeon" \
    "--sendd=http://u:$secret@127.0.0.1/api/v2/spans"; do
    old_ifs=$IFS
    IFS='|'
    # shellcheck disable=SC2086
    set -- $args
    IFS=$old_ifs
    check "convert $*" env -i PATH="$PATH" "$tw" convert --retries 0 --timeout-ms 300 \
        --send-give-up 2 "$@" "$work/in.json"
done
# A span that is sent, so that the failed request is reported with its URL.
printf '%s\n' '{"traceId":"a1","id":"b2","name":"x","timestamp":1700000000000000,"duration":1}' \
    >"$work/span.json"
for where in "?token=$secret" "?$secret" "#$secret" ";jsessionid=$secret" ";$secret"; do
    check "convert --send ...$where, the request failing" env -i PATH="$PATH" "$tw" convert \
        --retries 0 --timeout-ms 300 --send-give-up 2 \
        --send "http://127.0.0.1:$closed/api/v2/spans$where" "$work/span.json"
done

# `tracewire agent`: its destinations take the same URLs, headers and users as convert --send.
# A start that is accepted runs until the timeout's SIGINT (-v: every info line is printed).
for args in \
    "--send|http://user:$secret@127.0.0.1:$closed/api/v2/spans" \
    "--send|user:$secret@collector/api/v2/spans" \
    "--send|htp://user:$secret@collector/api/v2/spans" \
    "--send|http://127.0.0.1:$closed/api/v2/spans|-H|Authorization Bearer $secret" \
    "--send|http://127.0.0.1:$closed/api/v2/spans|-H|Authorization: Bearer $secret" \
    "--send|http://127.0.0.1:$closed/api/v2/spans|--user|me:$secret" \
    "--send|http://127.0.0.1:$closed/api/v2/spans?api_key=$secret" \
    "--send|http://127.0.0.1:$closed/api/v2/spans?$secret" \
    "--send|http://127.0.0.1:$closed/api/v2/spans#$secret" \
    "--send|http://127.0.0.1:$closed/api/v2/spans;jsessionid=$secret"; do
    old_ifs=$IFS
    IFS='|'
    # shellcheck disable=SC2086
    set -- $args
    IFS=$old_ifs
    check "agent $*" env -i PATH="$PATH" timeout -s INT -k 5 2 "$tw" agent -v --no-metrics \
        --zipkin 127.0.0.1:0 --retries 0 --timeout-ms 300 "$@"
done

echo "$runs runs, $leaks printed the secret"
[ $leaks -eq 0 ]
