#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/bench/convert/run_convert_bench.sh BUILDDIR SRCDIR: the conversion benchmark of
# `make bench` (CONTRIBUTING.md, "Benchmark"). For each of
#
#   dapper -> zipkin-v2-json            peer: jq (dapper_to_zipkin.jq)
#   zipkin-v1-thrift -> jaeger-thrift   peer: python3-thrift (zipkin_v1_to_jaeger.py);
#                                       jq cannot read Thrift
#
# it generates a 1-million-span input (gen_spans; kept in BUILDDIR/tests/bench/.out and
# reused while its size matches), runs `tracewire convert` with its default options and the
# peer one after the other, each pinned to CPU 0 (taskset -c 0, when it works) and timed by
# `measure` (wall time, CPU time, peak RSS), checks both outputs (check_output.py: well-formed,
# span counts, and the first 50,000 spans compared field by field), and prints one table
# row per conversion with the ratio tracewire spans/s / peer spans/s. spans/s = input
# spans / wall seconds. The target is 500,000 spans/s on one core.
#
# Environment: TW_BENCH_CONVERT_SPANS (default 1000000), TW_BENCH_CONVERT_TIMEOUT (seconds
# per command, default 1800), TW_BENCH_KEEP_OUTPUT=1 keeps the converted files.
# Exit status: 0 when every run and check passed (a missed target is reported, not an
# error); 1 when a tool is missing, a command failed or timed out, or an output is wrong.
set -u
builddir=$(cd "$1" && pwd)
srcdir=$(cd "$2" && pwd)
here="$srcdir/tests/bench/convert"
work="$builddir/tests/bench/.out"
n=${TW_BENCH_CONVERT_SPANS:-1000000}
timeout_s=${TW_BENCH_CONVERT_TIMEOUT:-1800}
tracewire="$builddir/bridge/tracewire"
gen="$builddir/tests/bench/convert/gen_spans"
measure="$builddir/tests/bench/convert/measure"
target=500000
mkdir -p "$work"

die() {
    echo "convert bench: FAILED: $*" >&2
    exit 1
}

echo "== conversion: tracewire convert against peers, $n spans per input"
[ -x "$tracewire" ] || die "$tracewire is missing: build it first (make bridge/tracewire)"
for tool in "$gen" "$measure"; do
    [ -x "$tool" ] || die "$tool is missing (make ${tool#"$builddir"/})"
done
# Debian's python3 holds python3-thrift; a pyenv or venv python3 earlier on PATH does not.
python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3) || die "python3 is missing (scripts/deps.sh)"
command -v jq >/dev/null || die "jq is missing: it is the peer (scripts/deps.sh installs it)"
command -v thrift >/dev/null || die "the thrift compiler is missing (thrift-compiler)"
"$python" -c 'import thrift.protocol.TBinaryProtocol' 2>/dev/null ||
    die "$python has no thrift module (python3-thrift)"
if "$python" -c 'from thrift.protocol import fastbinary' 2>/dev/null; then
    py_codec="TBinaryProtocolAccelerated, C extension fastbinary"
else
    py_codec="TBinaryProtocolAccelerated WITHOUT its C extension (pure Python)"
fi

pin=()
if command -v taskset >/dev/null && taskset -c 0 true 2>/dev/null; then
    pin=(taskset -c 0)
    pinned="pinned to CPU 0 (taskset -c 0)"
else
    pinned="NOT pinned (taskset missing or refused)"
fi
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); runs $pinned"

# ---- inputs ------------------------------------------------------------------------------
# FILE.stamp holds "N SIZE" of the last generation; a newer gen_spans regenerates.
make_input() { # format path
    local format=$1 path=$2 stamp="$2.stamp"
    if [ -f "$path" ] && [ -f "$stamp" ] && [ ! "$gen" -nt "$path" ] &&
        [ "$(cat "$stamp")" = "$n $(stat -c %s "$path")" ]; then
        echo "input: reusing $path"
        return 0
    fi
    rm -f "$stamp"
    echo "input: generating $path"
    "$gen" "$format" "$n" "$path.tmp" || die "gen_spans $format failed"
    mv "$path.tmp" "$path" && echo "$n $(stat -c %s "$path")" >"$stamp"
}
dapper_in="$work/convert-$n.dapper.log"
v1_in="$work/convert-$n.zipkin-v1.thrift"
make_input dapper "$dapper_in"
make_input zipkin-v1-thrift "$v1_in"

gen_py="$work/gen-py"
if [ ! -f "$gen_py/jaeger/ttypes.py" ] || [ "$srcdir/thrift/jaeger.thrift" -nt "$gen_py/jaeger/ttypes.py" ] ||
    [ "$srcdir/thrift/zipkincore.thrift" -nt "$gen_py/zipkincore/ttypes.py" ]; then
    if ! { rm -rf "$gen_py" && mkdir -p "$gen_py" &&
        thrift --gen py -out "$gen_py" "$srcdir/thrift/zipkincore.thrift" &&
        thrift --gen py -out "$gen_py" "$srcdir/thrift/jaeger.thrift"; }; then
        die "thrift --gen py failed"
    fi
fi

# ---- timed runs --------------------------------------------------------------------------
# timed NAME OUT COMMAND... INPUT: runs the command (stdout to OUT, stderr to $work/NAME.err)
# and sets wall, cpu, rss (KiB); dies when it fails or times out. The last argument must be
# the input file: it is read once first, so that both sides start with it in the page cache.
timed() {
    local name=$1 out=$2
    shift 2
    local err="$work/$name.err" result status
    cat -- "${@: -1}" >/dev/null 2>&1 # the input into the page cache, for both sides alike
    result=$("$measure" "$timeout_s" "$out" "$err" "$@") || die "measure failed for $name"
    read -r wall cpu rss status <<<"$result"
    if [ "$status" = 124 ]; then
        die "$name: still running after ${timeout_s}s, killed ($*)"
    elif [ "$status" != 0 ]; then
        echo "--- $err (last lines):" >&2
        tail -n 20 "$err" >&2
        die "$name: exit status $status ($*)"
    fi
}

rows=()
notes=()
failed=0

# run_pair TITLE IN TW_OUT TW_ARGS PEER_LABEL PEER_OUT CHECK_MODE PEER_COMMAND...
run_pair() {
    local title=$1 input=$2 tw_out=$3 tw_args=$4 peer_label=$5 peer_out=$6 mode=$7
    shift 7
    local in_mb tw_wall tw_cpu tw_rss summary read_n written check
    in_mb=$(awk -v b="$(stat -c %s "$input")" 'BEGIN { printf "%.1f", b / 1048576 }')
    echo "-- $title: tracewire"
    # shellcheck disable=SC2086 # tw_args is a fixed word list
    timed "tracewire.$mode" "$tw_out" "${pin[@]}" "$tracewire" convert $tw_args "$input"
    tw_wall=$wall tw_cpu=$cpu tw_rss=$rss
    summary=$(grep 'convert: read ' "$work/tracewire.$mode.err" | tail -n 1)
    echo "   $summary"
    read_n=$(sed -n 's/.*read \([0-9]*\) spans.*/\1/p' <<<"$summary")
    written=$(sed -n 's/.*; converted \([0-9]*\);.*/\1/p' <<<"$summary")
    # "read" counts model spans: a Zipkin v1 record with both RPC halves counts 2.
    if [ "$mode" = zipkin ] && [ "$read_n" != "$n" ]; then
        die "$title: tracewire read '${read_n:-?}' spans, the input has $n"
    fi
    echo "-- $title: peer ($peer_label)"
    timed "peer.$mode" "$peer_out" "${pin[@]}" "$@"
    [ -s "$work/peer.$mode.err" ] && sed 's/^/   /' "$work/peer.$mode.err"
    local peer_wall=$wall peer_cpu=$cpu peer_rss=$rss
    echo "-- $title: checking both outputs"
    if [ "$mode" = zipkin ]; then
        check=$("$python" "$here/check_output.py" zipkin "$tw_out" "$peer_out")
    else
        check=$("$python" "$here/check_output.py" jaeger "$gen_py" "$tw_out" "$peer_out")
    fi
    local check_status=$?
    # shellcheck disable=SC2001 # indents every line
    sed 's/^/   /' <<<"$check"
    [ "$check_status" = 0 ] || die "$title: tracewire's output is malformed (above)"
    local spans peer_spans differ batches peer_batches
    spans=$(sed -n 's/^spans=\([0-9]*\) .*/\1/p' <<<"$check" | head -n 1)
    batches=$(sed -n 's/.* batches=\([0-9]*\) .*/\1/p' <<<"$check" | head -n 1)
    peer_spans=$(sed -n 's/.* peer_spans=\([0-9]*\) .*/\1/p' <<<"$check" | head -n 1)
    peer_batches=$(sed -n 's/.* peer_batches=\([0-9]*\) .*/\1/p' <<<"$check" | head -n 1)
    differ=$(sed -n 's/.* differ=\([0-9]*\)$/\1/p' <<<"$check" | head -n 1)
    [ "$spans" = "$written" ] ||
        die "$title: the output holds $spans spans, tracewire's summary says it wrote $written"
    if [ "$mode" = zipkin ] && [ "$spans" != "$n" ]; then
        # One record is one span here (distinct ids): a difference is a merge or a loss.
        die "$title: $n records in, $spans spans out (see the summary above)"
    fi
    if [ "$spans" != "$peer_spans" ] || [ "$batches" != "$peer_batches" ]; then
        notes+=("$title: tracewire wrote $spans spans in $batches batches, the peer $peer_spans in $peer_batches")
    fi
    [ "${differ:-0}" = 0 ] || notes+=("$title: $differ of the compared spans differ from the peer's (shown above)")
    rows+=("$(awk -v t="$title" -v mb="$in_mb" -v n="$n" -v tw="$tw_wall" -v twc="$tw_cpu" \
        -v twr="$tw_rss" -v pw="$peer_wall" -v pc="$peer_cpu" -v pr="$peer_rss" 'BEGIN {
        tws = n / tw; ps = n / pw
        printf "%-34s %8s | %8.2f %7.2f %10.0f %8.1f | %8.2f %7.2f %10.0f %8.1f | %7.2f %7.2f",
            t, mb, tw, twc, tws, twr / 1024, pw, pc, ps, pr / 1024, tws / ps, (n / twc) / (n / pc)
        }')")
    [ "${TW_BENCH_KEEP_OUTPUT:-0}" = 1 ] || rm -f "$tw_out" "$peer_out"
}

run_pair "dapper -> zipkin-v2-json" "$dapper_in" "$work/convert.tracewire.zipkin.json" \
    "--from dapper --to zipkin-v2-json" "$(jq --version 2>&1)" \
    "$work/convert.peer.zipkin.json" zipkin \
    jq -n -r -f "$here/dapper_to_zipkin.jq" "$dapper_in"
run_pair "zipkin-v1-thrift -> jaeger-thrift" "$v1_in" "$work/convert.tracewire.jaeger.thrift" \
    "--from zipkin-v1-thrift --to jaeger-thrift" "python3-thrift" \
    "$work/convert.peer.jaeger.thrift" jaeger \
    "$python" "$here/zipkin_v1_to_jaeger.py" "$gen_py" "$v1_in"

echo
echo "== conversion results ($n input spans each; spans/s = input spans / wall s; $pinned)"
printf "%-34s %8s | %-38s | %-38s | %s\n" "" "" "tracewire convert" "peer" "ratio"
printf "%-34s %8s | %8s %7s %10s %8s | %8s %7s %10s %8s | %7s %7s\n" "conversion" "in MiB" \
    "wall s" "cpu s" "spans/s" "RSS MiB" "wall s" "cpu s" "spans/s" "RSS MiB" "wall" "cpu"
for row in "${rows[@]}"; do
    echo "$row"
done
echo "ratio = tracewire spans/s / peer spans/s, by wall time and by CPU time; RSS = peak"
echo "resident set of the process (getrusage of the child)."
echo "peers: dapper row: $(jq --version 2>&1) running tests/bench/convert/dapper_to_zipkin.jq"
echo "  (jq -n -r: streams one record at a time; the same mapping, no trace assembly);"
echo "  zipkin-v1-thrift row: $python $("$python" -c 'import sys; print(sys.version.split()[0])')"
echo "  with python3-thrift ($py_codec)"
echo "  and classes from thrift --gen py, running tests/bench/convert/zipkin_v1_to_jaeger.py"
echo "  (the same mapping and Jaeger ids)."
for row in "${rows[@]}"; do
    awk -v row="$row" -v target=$target 'BEGIN {
        split(row, f, "|"); split(f[2], tw, " "); title = substr(row, 1, 34); sub(/ +$/, "", title)
        printf "target %d spans/s on one core: %s: %s (%.0f spans/s)\n", target, title,
            (tw[3] >= target ? "met" : "NOT met"), tw[3] }'
done
for note in "${notes[@]}"; do
    echo "note: $note"
done
exit $failed
