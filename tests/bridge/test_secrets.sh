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
# (`;jsessionid=SECRET`) and a JAEGER_AGENT_HOST with user info (refused, masked); a password
# holding a quote, '<', '>', a space, '/' or '#' and a query value holding a space or a quote
# (whole-URL redaction, wire/core/redact.h), values that are not URLs (never shown), config
# and map files with a secret on a line that is not KEY = VALUE, an unknown option's value,
# and a running agent's log, /metrics, /healthz, spool files, summary and SIGHUP reload.
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
    "OTEL_TRACES_SAMPLER=jaeger_remote|OTEL_TRACES_SAMPLER_ARG=endpoint=http://u:$secret@127.0.0.1:$closed" \
    "JAEGER_ENDPOINT=http://u:pa\"ss$secret@127.0.0.1:$closed/api/traces" \
    "JAEGER_ENDPOINT=http://u:pa'<ss>$secret@127.0.0.1:$closed/api/traces" \
    "JAEGER_ENDPOINT=http://u:pa/ss$secret@127.0.0.1:$closed/api/traces" \
    "JAEGER_ENDPOINT=http://u:$secret#ss@127.0.0.1:$closed/api/traces" \
    "JAEGER_ENDPOINT=http://u:PW $secret@127.0.0.1:$closed/api/traces" \
    "JAEGER_ENDPOINT=http://127.0.0.1:$closed/api/traces?api_key=a b $secret" \
    "JAEGER_ENDPOINT=http://127.0.0.1:$closed/api/traces?api_key=a\"$secret" \
    "JAEGER_ENDPOINT=not a url $secret" \
    "OTEL_TRACES_EXPORTER=otlp|OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=not a url $secret" \
    "OTEL_TRACES_EXPORTER=otlp|OTEL_EXPORTER_OTLP_ENDPOINT=http://u:pa\"ss$secret@127.0.0.1:$closed" \
    "TRACEWIRE_REPORTER=zipkin|TRACEWIRE_ZIPKIN_ENDPOINT=http://u:$secret#ss@h/api/v2/spans" \
    "JAEGER_SAMPLING_ENDPOINT=http://u:pa\"ss$secret@127.0.0.1:$closed/sampling|JAEGER_SAMPLER_TYPE=remote" \
    "JAEGER_SAMPLING_ENDPOINT=http://127.0.0.1:$closed/sampling?k=<$secret>|JAEGER_SAMPLER_TYPE=remote" \
    "JAEGER_SAMPLING_ENDPOINT=not a url $secret|JAEGER_SAMPLER_TYPE=remote"; do
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
    "--sendd=http://u:$secret@127.0.0.1/api/v2/spans" \
    "--heder=Authorization: Bearer $secret" \
    "--send|http://u:pa/ss$secret@127.0.0.1:$closed/v1/traces" \
    "--send|http://u:PW $secret@host:4318/v1/traces" \
    "--send|http://127.0.0.1:$closed/v1/traces?api_key=a b $secret" \
    "--send|http://u:$secret#ss@127.0.0.1:$closed/v1/traces" \
    "--send|http://u:$secret#ss@127.0.0.1:$closed/v1/traces|--send-format|zipkin" \
    "--send|not a url $secret|--send-format|zipkin" \
    "--send|udp://u:pa ss$secret@h:6831"; do
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
for where in "?token=$secret" "?$secret" "#$secret" ";jsessionid=$secret" ";$secret" \
    "?token=a\"$secret" "?k='$secret&x=<$secret>"; do
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
    "--send|http://127.0.0.1:$closed/api/v2/spans;jsessionid=$secret" \
    "--send|http://u:pa\"ss$secret@127.0.0.1:$closed/v1/traces" \
    "--send|http://u:pa'<ss>$secret@127.0.0.1:$closed/v1/traces" \
    "--send|http://u:pa/ss$secret@127.0.0.1:$closed/v1/traces" \
    "--send|http://u:PW $secret@host:4318/v1/traces" \
    "--send|http://127.0.0.1:$closed/v1/traces?api_key=a b $secret" \
    "--send|http://u:$secret#ss@127.0.0.1:$closed/v1/traces" \
    "--send|http://u:$secret#ss@127.0.0.1:$closed/v1/traces|--send-format|zipkin" \
    "--send|not a url $secret" \
    "--send|udp://u:pa ss$secret@h:6831" \
    "--heder=Authorization: Bearer $secret"; do
    old_ifs=$IFS
    IFS='|'
    # shellcheck disable=SC2086
    set -- $args
    IFS=$old_ifs
    check "agent $*" env -i PATH="$PATH" timeout -s INT -k 5 2 "$tw" agent -v --no-metrics \
        --zipkin 127.0.0.1:0 --retries 0 --timeout-ms 300 "$@"
done

# The OTLP endpoint variable as the agent's destination, not a URL.
check "agent with OTEL_EXPORTER_OTLP_TRACES_ENDPOINT not a URL" env -i PATH="$PATH" \
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="not a url $secret" timeout -s INT -k 5 2 "$tw" agent -v \
    --no-metrics --otlp 127.0.0.1:0
check "agent with OTEL_EXPORTER_OTLP_ENDPOINT with a quote in the password" env -i PATH="$PATH" \
    OTEL_EXPORTER_OTLP_ENDPOINT="http://u:pa\"ss$secret@127.0.0.1:$closed" \
    timeout -s INT -k 5 2 "$tw" agent -v --no-metrics --otlp 127.0.0.1:0

# Config files: GLib's message quotes a line that is not KEY = VALUE; an unknown key's whole
# "--key=value" is quoted by GOption's.
printf '[agent]\notlp = 127.0.0.1:0\nsend = http://127.0.0.1:%s/v1/traces\nheader Authorization: Bearer %s\n' \
    "$closed" "$secret" >"$work/noeq.ini"
check "agent --config with a line without =" env -i PATH="$PATH" timeout -s INT -k 5 2 "$tw" agent \
    -v --no-metrics --config "$work/noeq.ini"
grep -q "line 4 is not KEY = VALUE" "$work/out" || {
    echo "FAIL: agent --config: the bad line's number is not said:"
    sed 's/^/  /' "$work/out"
    leaks=$((leaks + 1))
}
printf '[agent]\notlp = 127.0.0.1:0\nsend = http://127.0.0.1:%s/v1/traces\nheder = Authorization: Bearer %s\n' \
    "$closed" "$secret" >"$work/unknown.ini"
check "agent --config with an unknown key" env -i PATH="$PATH" timeout -s INT -k 5 2 "$tw" agent \
    -v --no-metrics --config "$work/unknown.ini"
printf 'trace_id = id\nAuthorization: Bearer %s\n' "$secret" >"$work/map.txt"
check "convert --map-file with a line without =" env -i PATH="$PATH" "$tw" convert --from custom \
    --map-file "$work/map.txt" --to dapper "$work/in.json"

# A running agent whose destination's password holds a quote and whose query holds a key:
# its log (and --log-file), every /metrics label, /healthz, the spool's destination file,
# the shutdown summary and a config reloaded on SIGHUP with a bad line.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
url="http://u:pa\"ss$secret@127.0.0.1:$closed/v1/traces?api_key=$secret"
printf '[agent]\notlp = 127.0.0.1:0\n' >"$work/run.ini"
env -i PATH="$PATH" "$tw" agent -v --config "$work/run.ini" --metrics "127.0.0.1:$port" \
    --spool "$work/spool" --log-file "$work/agent.log" --retries 0 --timeout-ms 300 \
    --send "$url" >"$work/run.out" 2>&1 &
pid=$!
i=0
while [ $i -lt 50 ] && ! python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$port/healthz', timeout=1)" 2>/dev/null; do
    sleep 0.1
    i=$((i + 1))
done
python3 -c "import urllib.request as u; print(u.urlopen('http://127.0.0.1:$port/metrics', timeout=2).read().decode())" >"$work/metrics" 2>&1
python3 -c "import urllib.request as u; print(u.urlopen('http://127.0.0.1:$port/healthz', timeout=2).read().decode())" >"$work/healthz" 2>&1
printf '[agent]\notlp = 127.0.0.1:0\nheader Authorization: Bearer %s\n' "$secret" >"$work/run.ini"
kill -HUP $pid
sleep 0.5
kill -TERM $pid
wait $pid
runs=$((runs + 1))
grep -q 'destination=' "$work/metrics" || {
    echo "FAIL: the running agent's /metrics did not answer"
    leaks=$((leaks + 1))
}
for f in "$work/run.out" "$work/agent.log" "$work/metrics" "$work/healthz" "$work"/spool/*/*; do
    if [ -f "$f" ] && grep -q "$secret" "$f"; then
        leaks=$((leaks + 1))
        echo "FAIL: the running agent printed the secret in ${f#"$work"/}:"
        grep "$secret" "$f" | sed 's/^/  /'
    fi
done
# The separator after a masked label stays: "...?api_key=***: enqueued", not "***enqueued".
grep -q 'v1/traces?api_key=\*\*\*: enqueued' "$work/agent.log" || {
    echo "FAIL: the summary lost the ': ' after the masked destination:"
    grep summary "$work/agent.log" | sed 's/^/  /'
    leaks=$((leaks + 1))
}
grep -q "line 3 is not KEY = VALUE" "$work/agent.log" || {
    echo "FAIL: the reloaded config's bad line is not reported by number:"
    sed 's/^/  /' "$work/agent.log"
    leaks=$((leaks + 1))
}

echo "$runs runs, $leaks printed the secret"
[ $leaks -eq 0 ]
