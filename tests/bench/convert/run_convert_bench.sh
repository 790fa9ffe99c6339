#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/bench/convert/run_convert_bench.sh BUILDDIR SRCDIR: the conversion benchmark of
# `make bench` (CONTRIBUTING.md, "Benchmark"). The five conversion paths of the wire layer's
# performance targets, each on an input of N spans (default 1,000,000):
#
#   dapper -> zipkin-v2-json            peer: jq (dapper_to_zipkin.jq)
#   zipkin-v2-json -> jaeger-json       no peer: Jaeger JSON groups spans by trace, which a
#                                       streaming jq program cannot do
#   zipkin-v1-thrift -> jaeger-thrift   peer: python3-thrift (zipkin_v1_to_jaeger.py);
#                                       jq cannot read Thrift
#   jaeger-thrift -> otlp-json          no peer (jq cannot read Thrift)
#   otlp-proto -> zipkin-v2-json        no peer (jq cannot read protobuf)
#
# gen_spans writes the Dapper log and the Zipkin v1 Thrift file; the other three inputs are
# made from them by `tracewire convert` (zipkin-v2-json and otlp-proto from the Dapper log,
# jaeger-thrift from the Zipkin v1 file). All are kept in BUILDDIR/tests/bench/.out and reused
# while their size matches. Each command runs pinned to CPU 0 (taskset -c 0, when it works) and
# timed by `measure` (wall time, CPU time, peak RSS); paired rows check both outputs
# (check_output.py: well-formed, span counts, the first 50,000 spans compared field by field),
# every row checks that tracewire converted every span it read. spans/s = input spans / wall s,
# for tracewire the median of TW_BENCH_CONVERT_RUNS runs (default 3; the peer runs once).
# Before each timed command (tracewire and peer alike) a scratch file of
# TW_BENCH_CONVERT_WARM_MIB (default 2048) is written and deleted, so that the command's
# output lands in page-cache pages this machine has used before. On this project's virtual
# machine the first write of 1 GiB into never-used memory cost 1.11 s of kernel time, the same
# write again 0.26 s (dd, 2026-12-03): without the warm-up a row measured that first touch of
# the host's memory, not the conversion. The table shows each command's kernel (sys) seconds.
# Every timed command writes a new output file: an earlier run's is deleted first (see timed).
# Before each of tracewire's runs, cache_probe measures the latency of a load over 8 MiB, the
# machine's state at that moment; the table shows it next to each row ("load ns").
#
# Then, per path: callgrind instructions per span (the whole command on a 20,000-span input, a
# run on an empty input subtracted; needs valgrind, else "-"), and the peak RSS of the command
# at 200,000 and 5,000,000 spans, the input streamed through a FIFO from gen_spans (and, for the
# derived inputs, a `tracewire convert` making it) so that no 5 GB file is written.
#
# One table at the end: a row per path with each target next to its figure: >= 500,000 spans/s
# on one core, >= 20x jq where jq expresses the mapping, peak RSS <= 32 MiB at both sizes.
#
# Environment: TW_BENCH_CONVERT_SPANS (default 1000000), TW_BENCH_CONVERT_TIMEOUT (seconds
# per command, default 1800), TW_BENCH_CONVERT_WARM_MIB (default 2048; 0: no warm-up),
# TW_BENCH_CONVERT_RUNS (tracewire's runs per row, default 3), TW_BENCH_CONVERT_RSS_SPANS
# (default "200000 5000000"; empty: skip), TW_BENCH_CONVERT_CALLGRIND=0 skips callgrind,
# TW_BENCH_KEEP_OUTPUT=1 keeps the converted files.
# Exit status: 0 when every run and check passed (a missed target is reported, not an
# error); 1 when a tool is missing, a command failed or timed out, or an output is wrong.
set -u
# Callgrind runs keep glibc's vector copy loops: valgrind counts each byte a
# `rep movsb` moves as one instruction, and glibc copies 2 KiB to 512 KiB that
# way, so a large memcpy would count 10-30x what it executes (CONTRIBUTING.md).
cg_tunables="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.cpu.x86_rep_movsb_threshold=0xffffffffffffffff"
builddir=$(cd "$1" && pwd)
srcdir=$(cd "$2" && pwd)
here="$srcdir/tests/bench/convert"
work="$builddir/tests/bench/.out"
n=${TW_BENCH_CONVERT_SPANS:-1000000}
timeout_s=${TW_BENCH_CONVERT_TIMEOUT:-1800}
tracewire="$builddir/bridge/tracewire"
gen="$builddir/tests/bench/convert/gen_spans"
measure="$builddir/tests/bench/convert/measure"
cache_probe="$builddir/tests/bench/convert/cache_probe"
target=500000
warm_mib=${TW_BENCH_CONVERT_WARM_MIB:-2048}
tw_runs=${TW_BENCH_CONVERT_RUNS:-3}
case $tw_runs in '' | *[!0-9]* | 0) echo "TW_BENCH_CONVERT_RUNS must be a count >= 1" >&2 && exit 1 ;; esac
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

# derive_input SOURCE FROM TO PATH: PATH made from SOURCE by tracewire (regenerated when the
# source or tracewire is newer).
derive_input() {
    local source=$1 from=$2 to=$3 path=$4
    if [ -f "$path" ] && [ ! "$source" -nt "$path" ] && [ ! "$tracewire" -nt "$path" ]; then
        echo "input: reusing $path"
        return 0
    fi
    echo "input: making $path from $source (tracewire convert --to $to)"
    "$tracewire" convert --no-progress --from "$from" --to "$to" -o "$path.tmp" "$source" \
        2>"$path.err" || die "making $path failed: $(tail -n 3 "$path.err")"
    mv "$path.tmp" "$path"
}
z2_in="$work/convert-$n.zipkin-v2.json"
jt_in="$work/convert-$n.jaeger.thrift"
op_in="$work/convert-$n.otlp.pb"
derive_input "$dapper_in" dapper zipkin-v2-json "$z2_in"
derive_input "$v1_in" zipkin-v1-thrift jaeger-thrift "$jt_in"
derive_input "$dapper_in" dapper otlp-proto "$op_in"

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
# OUT is deleted first, so that every run writes a new file: on ext4, opening an earlier run's
# 525 MiB output with O_TRUNC waited 0.41 s for its pages, and closing a file truncated that
# way starts its writeback (auto_da_alloc), 0.33 s more, both outside the process's CPU time
# (CONTRIBUTING.md, "Benchmark").
timed() {
    local name=$1 out=$2
    shift 2
    local err="$work/$name.err" result status
    if [ -f "$out" ]; then rm -f -- "$out"; fi # a regular file only (never /dev/null)
    cat -- "${@: -1}" >/dev/null 2>&1 # the input into the page cache, for both sides alike
    if [ "$warm_mib" -gt 0 ]; then    # see "warm-up" at the top
        dd if=/dev/zero of="$work/warm.scratch" bs=1M count="$warm_mib" status=none ||
            die "writing the warm-up file $work/warm.scratch failed"
        rm -f "$work/warm.scratch"
    fi
    result=$("$measure" "$timeout_s" "$out" "$err" "$@") || die "measure failed for $name"
    read -r wall cpu rss status sys <<<"$result"
    if [ "$status" = 124 ]; then
        die "$name: still running after ${timeout_s}s, killed ($*)"
    elif [ "$status" != 0 ]; then
        echo "--- $err (last lines):" >&2
        tail -n 20 "$err" >&2
        die "$name: exit status $status ($*)"
    fi
}

# timed_tw NAME OUT COMMAND... INPUT: tracewire's side, run $tw_runs times (each as timed
# runs it); wall, cpu, rss and sys are those of the run with the median wall time, walls lists
# every run's wall time. This machine's speed drifts by up to 2.4x for hours (CONTRIBUTING.md,
# "Benchmark"): one slow moment must not decide a row. The peer runs once (jq takes minutes).
# Before each run, cache_probe measures the latency of a load over 8 MiB (the machine's state:
# see cache_probe.c); probe_ns is the one before the median run, probes lists them all.
timed_tw() {
    local runs=() k median p
    for ((k = 0; k < tw_runs; k++)); do
        p=$("${pin[@]}" "$cache_probe" 8) || p="?"
        timed "$@"
        runs+=("$wall $cpu $rss $sys $p")
    done
    median=$(printf '%s\n' "${runs[@]}" | sort -n -k1,1 | sed -n "$(((tw_runs + 1) / 2))p")
    read -r wall cpu rss sys probe_ns <<<"$median"
    walls=$(printf '%s\n' "${runs[@]}" | awk '{ printf "%s%s", (NR > 1 ? " " : ""), $1 }')
    probes=$(printf '%s\n' "${runs[@]}" | awk '{ printf "%s%s", (NR > 1 ? " " : ""), $5 }')
}

rows=()
notes=()
failed=0
declare -A tw_rate peer_ratio peer_name probe_at

# run_pair TITLE IN TW_OUT TW_ARGS PEER_LABEL PEER_OUT CHECK_MODE PEER_COMMAND...
run_pair() {
    local title=$1 input=$2 tw_out=$3 tw_args=$4 peer_label=$5 peer_out=$6 mode=$7
    shift 7
    local in_mb tw_wall tw_cpu tw_rss tw_sys summary read_n written check
    in_mb=$(awk -v b="$(stat -c %s "$input")" 'BEGIN { printf "%.1f", b / 1048576 }')
    echo "-- $title: tracewire"
    # shellcheck disable=SC2086 # tw_args is a fixed word list
    timed_tw "tracewire.$mode" "$tw_out" "${pin[@]}" "$tracewire" convert $tw_args "$input"
    tw_wall=$wall tw_cpu=$cpu tw_rss=$rss tw_sys=$sys
    summary=$(grep 'convert: read ' "$work/tracewire.$mode.err" | tail -n 1)
    echo "   $summary"
    echo "   wall s of the $tw_runs runs: $walls (the median counts)"
    echo "   ns per load over 8 MiB just before each: $probes"
    probe_at[$title]=$probe_ns
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
        -v tws_="$tw_sys" -v twr="$tw_rss" -v pw="$peer_wall" -v pc="$peer_cpu" -v pr="$peer_rss" 'BEGIN {
        tws = n / tw; ps = n / pw
        printf "%-34s %8s | %8.2f %7.2f %6.2f %10.0f %8.1f | %8.2f %7.2f %10.0f %8.1f | %7.2f %7.2f",
            t, mb, tw, twc, tws_, tws, twr / 1024, pw, pc, ps, pr / 1024, tws / ps, (n / twc) / (n / pc)
        }')")
    tw_rate[$title]=$(awk -v n="$n" -v w="$tw_wall" 'BEGIN { printf "%.0f", n / w }')
    peer_ratio[$title]=$(awk -v tw="$tw_wall" -v pw="$peer_wall" 'BEGIN { printf "%.1f", pw / tw }')
    peer_name[$title]=$peer_label
    [ "${TW_BENCH_KEEP_OUTPUT:-0}" = 1 ] || rm -f "$tw_out" "$peer_out"
}

# run_solo TITLE IN OUT TW_ARGS: a path without a peer: tracewire alone, its summary checked.
run_solo() {
    local title=$1 input=$2 tw_out=$3 tw_args=$4
    local in_mb summary read_n written rejected
    in_mb=$(awk -v b="$(stat -c %s "$input")" 'BEGIN { printf "%.1f", b / 1048576 }')
    echo "-- $title: tracewire"
    # shellcheck disable=SC2086 # tw_args is a fixed word list
    timed_tw "tracewire.solo" "$tw_out" "${pin[@]}" "$tracewire" convert $tw_args "$input"
    summary=$(grep 'convert: read ' "$work/tracewire.solo.err" | tail -n 1)
    echo "   $summary"
    echo "   wall s of the $tw_runs runs: $walls (the median counts)"
    echo "   ns per load over 8 MiB just before each: $probes"
    probe_at[$title]=$probe_ns
    read_n=$(sed -n 's/.*read \([0-9]*\) spans.*/\1/p' <<<"$summary")
    written=$(sed -n 's/.*; converted \([0-9]*\);.*/\1/p' <<<"$summary")
    rejected=$(sed -n 's/.*; rejected \([0-9]*\) records.*/\1/p' <<<"$summary")
    if [ -z "$read_n" ] || [ "$read_n" != "$written" ] || [ "$rejected" != 0 ]; then
        die "$title: read ${read_n:-?} spans, converted ${written:-?}, rejected ${rejected:-?}"
    fi
    [ -s "$tw_out" ] || die "$title: empty output"
    # Per input span: the jaeger-thrift input (made from the Zipkin v1 file) holds 1.6 spans
    # per v1 span, so its rate counts the spans it read.
    tw_rate[$title]=$(awk -v n="$read_n" -v w="$wall" 'BEGIN { printf "%.0f", n / w }')
    rows+=("$(awk -v t="$title" -v mb="$in_mb" -v n="$read_n" -v tw="$wall" -v twc="$cpu" \
        -v tws_="$sys" -v twr="$rss" 'BEGIN {
        printf "%-34s %8s | %8.2f %7.2f %6.2f %10.0f %8.1f | %8s %7s %10s %8s | %7s %7s",
            t, mb, tw, twc, tws_, n / tw, twr / 1024, "-", "-", "-", "-", "-", "-" }')")
    [ "${TW_BENCH_KEEP_OUTPUT:-0}" = 1 ] || rm -f "$tw_out"
}

run_pair "dapper -> zipkin-v2-json" "$dapper_in" "$work/convert.tracewire.zipkin.json" \
    "--from dapper --to zipkin-v2-json" "$(jq --version 2>&1)" \
    "$work/convert.peer.zipkin.json" zipkin \
    jq -n -r -f "$here/dapper_to_zipkin.jq" "$dapper_in"
run_pair "zipkin-v1-thrift -> jaeger-thrift" "$v1_in" "$work/convert.tracewire.jaeger.thrift" \
    "--from zipkin-v1-thrift --to jaeger-thrift" "python3-thrift" \
    "$work/convert.peer.jaeger.thrift" jaeger \
    "$python" "$here/zipkin_v1_to_jaeger.py" "$gen_py" "$v1_in"
run_solo "zipkin-v2-json -> jaeger-json" "$z2_in" "$work/convert.tracewire.jaeger.json" \
    "--from zipkin-v2-json --to jaeger-json"
run_solo "jaeger-thrift -> otlp-json" "$jt_in" "$work/convert.tracewire.otlp.json" \
    "--from jaeger-thrift --to otlp-json"
run_solo "otlp-proto -> zipkin-v2-json" "$op_in" "$work/convert.tracewire.zipkin2.json" \
    "--from otlp-proto --to zipkin-v2-json"

# ---- instructions per span (callgrind) -----------------------------------------------------
# Per span of the input, as spans/s: a Zipkin v1 span holding both RPC halves is one span
# (1.6 model spans on average), a Jaeger span of the jaeger-thrift input made from it is one.
paths=("dapper -> zipkin-v2-json" "zipkin-v2-json -> jaeger-json"
    "zipkin-v1-thrift -> jaeger-thrift" "jaeger-thrift -> otlp-json"
    "otlp-proto -> zipkin-v2-json")
declare -A cg_ips rss_at
cg_n=20000
if [ "${TW_BENCH_CONVERT_CALLGRIND:-1}" != 0 ] && command -v valgrind >/dev/null; then
    echo "-- callgrind: $cg_n-span inputs"
    cg_dapper="$work/cg-$cg_n.dapper.log" cg_v1="$work/cg-$cg_n.zipkin-v1.thrift"
    "$gen" dapper "$cg_n" "$cg_dapper" || die "gen_spans dapper $cg_n failed"
    "$gen" zipkin-v1-thrift "$cg_n" "$cg_v1" || die "gen_spans zipkin-v1-thrift $cg_n failed"
    "$tracewire" convert --no-progress --from dapper --to zipkin-v2-json -o "$work/cg.z2" \
        "$cg_dapper" 2>/dev/null || die "making the callgrind inputs failed"
    "$tracewire" convert --no-progress --from zipkin-v1-thrift --to jaeger-thrift \
        -o "$work/cg.jt" "$cg_v1" 2>"$work/cg.jt.err" || die "making the callgrind inputs failed"
    cg_jt_n=$(sed -n 's/.*; converted \([0-9]*\);.*/\1/p' "$work/cg.jt.err")
    "$tracewire" convert --no-progress --from dapper --to otlp-proto -o "$work/cg.op" \
        "$cg_dapper" 2>/dev/null || die "making the callgrind inputs failed"
    : >"$work/cg.empty"
    instructions() { # FROM TO INPUT
        GLIBC_TUNABLES="$cg_tunables" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$tracewire" convert \
            --no-progress --from "$1" --to "$2" -o /dev/null "$3" 2>&1 >/dev/null |
            sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
    }
    cg_inputs=("$cg_dapper" "$work/cg.z2" "$cg_v1" "$work/cg.jt" "$work/cg.op")
    for k in "${!paths[@]}"; do
        from=${paths[$k]%% -> *} to=${paths[$k]##* -> }
        full=$(instructions "$from" "$to" "${cg_inputs[$k]}")
        empty=$(instructions "$from" "$to" "$work/cg.empty")
        if [ -z "$full" ] || [ -z "$empty" ]; then
            die "callgrind failed on ${paths[$k]}"
        fi
        spans=$cg_n
        [ "$k" = 3 ] && spans=${cg_jt_n:?} # the spans the jaeger-thrift input holds
        cg_ips[${paths[$k]}]=$(((full - empty) / spans))
        echo "   ${paths[$k]}: ${cg_ips[${paths[$k]}]} instructions per span"
    done
    rm -f "$cg_dapper" "$cg_v1" "$work/cg.z2" "$work/cg.jt" "$work/cg.jt.err" "$work/cg.op" \
        "$work/cg.empty"
else
    notes+=("callgrind skipped (valgrind missing or TW_BENCH_CONVERT_CALLGRIND=0)")
fi

# ---- peak RSS against input size ------------------------------------------------------------
# The input comes through a FIFO: gen_spans (and for derived inputs a tracewire making them)
# writes it, `measure` runs the measured tracewire alone, so its peak RSS is its own.
rss_sizes=${TW_BENCH_CONVERT_RSS_SPANS-200000 5000000}
feed() { # PATH_INDEX SPANS FIFO: writes that path's input of SPANS spans into FIFO
    case $1 in
    0) "$gen" dapper "$2" "$3" ;;
    1) "$gen" dapper "$2" /dev/stdout | "$tracewire" convert --no-progress --from dapper \
        --to zipkin-v2-json -o "$3" - ;;
    2) "$gen" zipkin-v1-thrift "$2" "$3" ;;
    3) "$gen" zipkin-v1-thrift "$2" /dev/stdout | "$tracewire" convert --no-progress \
        --from zipkin-v1-thrift --to jaeger-thrift -o "$3" - ;;
    4) "$gen" dapper "$2" /dev/stdout | "$tracewire" convert --no-progress --from dapper \
        --to otlp-proto -o "$3" - ;;
    esac
}
for size in $rss_sizes; do
    for k in "${!paths[@]}"; do
        from=${paths[$k]%% -> *} to=${paths[$k]##* -> }
        fifo="$work/rss.fifo"
        rm -f "$fifo"
        mkfifo "$fifo" || die "mkfifo failed"
        echo "-- peak RSS: ${paths[$k]}, $size spans (streamed)"
        feed "$k" "$size" "$fifo" 2>"$work/rss.feed.err" &
        feeder=$!
        result=$("$measure" "$timeout_s" /dev/null "$work/rss.err" "$tracewire" convert \
            --no-progress --from "$from" --to "$to" "$fifo") || die "measure failed"
        wait "$feeder" || die "feeding ${paths[$k]} ($size spans) failed: $(tail -n 3 "$work/rss.feed.err")"
        rm -f "$fifo"
        read -r _ _ rss_kib status _ <<<"$result"
        [ "$status" = 0 ] || die "${paths[$k]} at $size spans: exit status $status: $(tail -n 3 "$work/rss.err")"
        rss_at[${paths[$k]}.$size]=$rss_kib
        echo "   $(grep 'convert: read ' "$work/rss.err" | tail -n 1 | cut -c1-100); peak RSS $((rss_kib / 1024)) MiB"
    done
done

echo
echo "== conversion results ($n input spans each; spans/s = input spans / wall s, tracewire's the"
echo "   median of $tw_runs runs; $pinned)"
printf "%-34s %8s | %-45s | %-38s | %s\n" "" "" "tracewire convert" "peer" "ratio"
printf "%-34s %8s | %8s %7s %6s %10s %8s | %8s %7s %10s %8s | %7s %7s\n" "conversion" "in MiB" \
    "wall s" "cpu s" "sys s" "spans/s" "RSS MiB" "wall s" "cpu s" "spans/s" "RSS MiB" "wall" "cpu"
for row in "${rows[@]}"; do
    echo "$row"
done
echo "ratio = tracewire spans/s / peer spans/s, by wall time and by CPU time; RSS = peak"
echo "resident set of the process (getrusage of the child); sys s = the kernel's part of cpu s"
echo "(reading the input, writing the output file through the page cache); warm-up: ${warm_mib} MiB."
echo "peers: dapper row: $(jq --version 2>&1) running tests/bench/convert/dapper_to_zipkin.jq"
echo "  (jq -n -r: streams one record at a time; the same mapping, no trace assembly);"
echo "  zipkin-v1-thrift row: $python $("$python" -c 'import sys; print(sys.version.split()[0])')"
echo "  with python3-thrift ($py_codec)"
echo "  and classes from thrift --gen py, running tests/bench/convert/zipkin_v1_to_jaeger.py"
echo "  (the same mapping and Jaeger ids)."

# ---- the targets, one row per path ----------------------------------------------------------
read -r rss_lo rss_hi _ <<<"$rss_sizes"
echo
echo "== targets (one core): spans/s >= $target; x jq >= 20 where jq expresses the mapping;"
echo "   peak RSS <= 32 MiB and flat from ${rss_lo:-?} to ${rss_hi:-?} spans; instr/span from callgrind"
printf "%-34s | %10s %-7s | %10s | %-12s | %9s %9s %-7s | %s\n" "path" "spans/s" "target" \
    "instr/span" "x jq (>=20)" "RSS ${rss_lo:-?}" "RSS ${rss_hi:-?}" "<=32MiB" "load ns"
for p in "${paths[@]}"; do
    rate=${tw_rate[$p]:-0}
    met=$([ "$rate" -ge "$target" ] && echo met || echo "NOT met")
    if [ -n "${peer_ratio[$p]:-}" ] && [ "${peer_name[$p]}" != python3-thrift ]; then
        jq_cell="${peer_ratio[$p]}x $(awk -v r="${peer_ratio[$p]}" 'BEGIN { print (r >= 20 ? "met" : "NOT") }')"
    else
        jq_cell="n/a"
    fi
    lo=${rss_at[$p.$rss_lo]:-} hi=${rss_at[$p.$rss_hi]:-}
    rss_cell="-"
    if [ -n "$lo" ] && [ -n "$hi" ]; then
        rss_cell=$([ "$hi" -le 32768 ] && [ "$lo" -le 32768 ] && echo met || echo "NOT met")
    fi
    printf "%-34s | %10s %-7s | %10s | %-12s | %9s %9s %-7s | %s\n" "$p" "$rate" "$met" \
        "${cg_ips[$p]:--}" "$jq_cell" "${lo:+$((lo / 1024)) MiB}" "${hi:+$((hi / 1024)) MiB}" \
        "$rss_cell" "${probe_at[$p]:--}"
done
echo "x jq: jq's wall time / tracewire's on the same input in this run; n/a: jq cannot read the"
echo "input (Thrift, protobuf) or express the mapping in a streaming program (Jaeger JSON groups"
echo "spans by trace). The zipkin-v1-thrift row's peer is python3-thrift (table above)."
echo "load ns: cache_probe's latency of one load over 8 MiB just before the counted run. On this"
echo "project's virtual machine it read about 20 ns when the 32 MiB L3 was ours and 120-225 ns when"
echo "other tenants hold it; the conversions revisit each span 10,000 spans after decoding it and"
echo "slow down with it (CONTRIBUTING.md, \"Benchmark\")."
for note in "${notes[@]}"; do
    echo "note: $note"
done
exit $failed
