#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/bench/views/run_views_bench.sh BUILDDIR SRCDIR: the views' benchmark of `make bench`:
# `tracewire stats` and `tracewire deps` over generated span logs (tests/bench/convert/gen_spans:
# traces of 10 spans over 5 services, RPC halves), end to end and without the readers.
#
# 1. End to end, one core (taskset -c 0), timed by `measure` (wall, CPU, peak RSS): stats and
#    deps over zipkin-v1-thrift inputs of 200,000, 1,000,000 and 5,000,000 records (the fastest
#    format to read; a record with both RPC halves is two spans, so the span counts are
#    tracewire's own, from its summary) and over Dapper span logs of 200,000 and 1,000,000
#    spans (JSON lines, slower to read). spans/s = spans / wall seconds. Peak RSS at each size
#    shows whether memory stays flat. Each row is the median of 3 runs by wall time, with
#    cache_probe's latency of a load over 8 MiB just before it ("load ns", as in the conversion
#    table): this machine's speed drifts by up to 2.4x for hours, and one slow moment must not
#    decide a row.
# 2. The views alone (bench_views): spans read once into memory, then replayed through the
#    assembler (Jaeger ids, window 10,000) and each view's work; spans/s and the share of it
#    inside the view's own code.
# 3. Callgrind instructions per span: end to end (the command on 20,000 records vs an empty
#    input) and the views alone (bench_views ir with 1 pass vs 0 passes).
# The target of the views is 500,000 spans/s on one core with flat memory; each figure is
# printed next to it. Where the reader is the bottleneck, (1) and (2) differ and both are shown.
#
# Environment: TW_BENCH_VIEWS_SIZES (default "200000 1000000 5000000"), TW_BENCH_VIEWS_TIMEOUT
# (seconds per command, default 1800). Exit status: 0 when every run worked (a missed target is
# reported, not an error), 1 when a tool is missing or a command failed.
set -u
# Callgrind runs keep glibc's vector copy loops: valgrind counts each byte a
# `rep movsb` moves as one instruction, and glibc copies 2 KiB to 512 KiB that
# way, so a large memcpy would count 10-30x what it executes (CONTRIBUTING.md).
cg_tunables="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.cpu.x86_rep_movsb_threshold=0xffffffffffffffff"
builddir=$(cd "$1" && pwd)
srcdir=$(cd "$2" && pwd)
work="$builddir/tests/bench/.out"
sizes=${TW_BENCH_VIEWS_SIZES:-200000 1000000 5000000}
timeout_s=${TW_BENCH_VIEWS_TIMEOUT:-1800}
tracewire="$builddir/bridge/tracewire"
gen="$builddir/tests/bench/convert/gen_spans"
measure="$builddir/tests/bench/convert/measure"
cache_probe="$builddir/tests/bench/convert/cache_probe"
bench="$builddir/tests/bench/views/bench_views"
target=500000
mkdir -p "$work"

die() {
    echo "views bench: FAILED: $*" >&2
    exit 1
}
for tool in "$tracewire" "$gen" "$measure" "$bench" "$cache_probe"; do
    [ -x "$tool" ] || die "$tool is missing (make ${tool#"$builddir"/})"
done
pin=()
if command -v taskset >/dev/null && taskset -c 0 true 2>/dev/null; then
    pin=(taskset -c 0)
    pinned="pinned to CPU 0 (taskset -c 0)"
else
    pinned="NOT pinned (taskset missing or refused)"
fi
echo "== views: tracewire stats and deps; $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); $pinned"

# make_input FORMAT N: the generated input (reused while its size matches), path on stdout.
make_input() {
    local format=$1 n=$2 ext=log
    [ "$format" = zipkin-v1-thrift ] && ext=thrift
    local path="$work/views-$n.$format.$ext" stamp="$work/views-$n.$format.$ext.stamp"
    if [ ! -f "$path" ] || [ ! -f "$stamp" ] || [ "$gen" -nt "$path" ] ||
        [ "$(cat "$stamp")" != "$n $(stat -c %s "$path")" ]; then
        rm -f "$stamp"
        echo "input: generating $path" >&2
        "$gen" "$format" "$n" "$path.tmp" >&2 || die "gen_spans $format $n failed"
        mv "$path.tmp" "$path" && echo "$n $(stat -c %s "$path")" >"$stamp"
    fi
    echo "$path"
}

rows=()
# timed VIEW FORMAT N: three end-to-end runs; appends a row with the median one.
timed() {
    local view=$1 format=$2 n=$3 input result wall cpu rss status spans probe k runs=()
    input=$(make_input "$format" "$n") || exit 1
    cat -- "$input" >/dev/null # into the page cache
    local err="$work/views.$view.$format.$n.err"
    for ((k = 0; k < 3; k++)); do
        probe=$("${pin[@]}" "$cache_probe" 8) || probe="?"
        result=$("$measure" "$timeout_s" /dev/null "$err" "${pin[@]}" "$tracewire" "$view" \
            --no-progress --from "$format" "$input") || die "measure failed"
        read -r wall cpu rss status _ <<<"$result"
        [ "$status" = 0 ] || {
            tail -n 5 "$err" >&2
            die "tracewire $view --from $format ($n): exit status $status"
        }
        runs+=("$wall $cpu $rss $probe")
    done
    read -r wall cpu rss probe <<<"$(printf '%s\n' "${runs[@]}" | sort -n -k1,1 | sed -n 2p)"
    # spans as tracewire counts them: convert's summary on the same input is the reference
    spans=$(sed -n 's/^\([0-9]*\) spans.*/\1/p' "$work/views.spans.$format.$n" 2>/dev/null)
    if [ -z "$spans" ]; then
        "$tracewire" stats --from "$format" --json "$input" 2>/dev/null |
            python3 -c 'import json,sys; print(sum(r["count"] for r in json.load(sys.stdin)), "spans")' \
                >"$work/views.spans.$format.$n" || die "cannot count the spans of $input"
        spans=$(sed -n 's/^\([0-9]*\) spans.*/\1/p' "$work/views.spans.$format.$n")
    fi
    rows+=("$(awk -v v="$view" -v f="$format" -v n="$n" -v s="$spans" -v w="$wall" -v c="$cpu" \
        -v r="$rss" -v t=$target -v p="$probe" 'BEGIN {
        printf "%-5s %-16s %9d %9d | %7.2f %7.2f %10.0f %10.0f %7.1f %7s | wall: %s, cpu: %s", v,
            f, n, s, w, c, s / w, s / c, r / 1024, p, (s / w >= t ? "met" : "NOT met"),
            (s / c >= t ? "met" : "NOT met") }')")
}

for n in $sizes; do
    for view in stats deps; do
        timed "$view" zipkin-v1-thrift "$n"
    done
done
for n in $sizes; do
    [ "$n" -gt 1000000 ] && continue # a 5M-span Dapper log is 5.6 GB: the thrift rows show memory
    for view in stats deps; do
        timed "$view" dapper "$n"
    done
done

echo
echo "== end to end: tracewire VIEW --from FORMAT FILE (one core; spans/s = tracewire's spans / wall s)"
printf "%-5s %-16s %9s %9s | %7s %7s %10s %10s %7s %7s | %s\n" view format records spans "wall s" \
    "cpu s" "spans/s" "spans/cpu" "RSS MiB" "load ns" "target $target spans/s"
echo "(CPU time is the fairer measure when other work shares the machine: load average above;"
echo " each row the median of 3 runs; load ns: cache_probe's latency of one load over 8 MiB just"
echo " before that run: about 20 ns when the L3 cache was ours, 120-225 ns when other tenants held it)"
for row in "${rows[@]}"; do
    echo "$row"
done

echo
echo "== the views alone: spans in memory, replayed through the assembler and the view (bench_views)"
small=$(make_input zipkin-v1-thrift 200000) || exit 1
"${pin[@]}" "$bench" table zipkin-v1-thrift "$small" 5 >"$work/views.alone" || die "bench_views failed"
printf "%-5s %9s %6s %8s %8s %12s %12s %12s | %s\n" view spans passes "wall s" "cpu s" \
    "spans/s" "spans/cpu s" "in the view" "target $target spans/s (by CPU time)"
while read -r view spans passes wall cpu rate cpu_rate share; do
    awk -v v="$view" -v s="$spans" -v p="$passes" -v w="$wall" -v c="$cpu" -v r="$rate" \
        -v cr="$cpu_rate" -v sh="$share" -v t=$target 'BEGIN {
        printf "%-5s %9d %6d %8.2f %8.2f %12.0f %12.0f %11.0f%% | %s (assembly + view); the view alone: %.0f spans/cpu s\n",
            v, s, p, w, c, r, cr, sh * 100, (cr >= t ? "met" : "NOT met"), cr / sh }'
done <"$work/views.alone"

if command -v valgrind >/dev/null; then
    echo
    echo "== callgrind instructions per span (20,000 zipkin-v1-thrift records)"
    cg_input=$(make_input zipkin-v1-thrift 20000) || exit 1
    empty="$work/views-empty.thrift"
    : >"$empty"
    cg_total() { # out-file command... -> total instructions
        local out=$1
        shift
        GLIBC_TUNABLES="$cg_tunables" valgrind --tool=callgrind --callgrind-out-file="$out" "$@" >/dev/null 2>"$out.log" ||
            die "callgrind failed: $out.log"
        awk '/^(summary|totals):/ {print $2; exit}' "$out"
    }
    cg_spans=$(sed -n 's/^\([0-9]*\) spans.*/\1/p' "$work/views.spans.zipkin-v1-thrift.20000" 2>/dev/null)
    if [ -z "$cg_spans" ]; then
        cg_spans=$("$bench" ir stats zipkin-v1-thrift "$cg_input" 0 | sed -n 's/^\([0-9]*\) spans/\1/p')
    fi
    for view in stats deps; do
        e0=$(cg_total "$work/cg.views.$view.0" "$tracewire" "$view" --from zipkin-v1-thrift "$empty")
        e1=$(cg_total "$work/cg.views.$view.1" "$tracewire" "$view" --from zipkin-v1-thrift "$cg_input")
        a0=$(cg_total "$work/cg.views.alone.$view.0" "$bench" ir "$view" zipkin-v1-thrift "$cg_input" 0)
        a1=$(cg_total "$work/cg.views.alone.$view.1" "$bench" ir "$view" zipkin-v1-thrift "$cg_input" 1)
        awk -v v="$view" -v n="$cg_spans" -v e0="$e0" -v e1="$e1" -v a0="$a0" -v a1="$a1" 'BEGIN {
            printf "%-5s end to end %6.0f instructions/span; assembler + view %5.0f; reading and checking %6.0f\n",
                v, (e1 - e0) / n, (a1 - a0) / n, (e1 - e0 - (a1 - a0)) / n }'
    done
else
    echo "valgrind missing: no instruction counts" >&2
fi
exit 0
