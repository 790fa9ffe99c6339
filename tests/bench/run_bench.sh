#!/usr/bin/env bash
# tests/bench/run_bench.sh BUILDDIR SRCDIR: what `make bench` runs.
#
# 1. The peer: jaeger-client for Node.js, measured now on this machine
#    (tests/bench/peer/run_peer.sh); skipped with a note when npm is unreachable.
# 2. Instruction counts with callgrind (deterministic, unlike wall time): the
#    `ir` mode of bench_tracer run with N spans and with 0 spans; the
#    difference divided by N is the cost per span, per thread (the caller is
#    thread 1) and for the whole process.
# 3. The timed table (bench_tracer table), which prints ratios against the peer.
set -u
builddir=$(cd "$1" && pwd)
srcdir=$(cd "$2" && pwd)
bench="$builddir/tests/bench/bench_tracer"
work="$builddir/tests/bench/.out"
mkdir -p "$work"

# Sums the "totals:" / "summary:" Ir of every per-thread callgrind file of a run.
callgrind_ir() { # mode n -> prints "caller_total process_total"
    local mode=$1 n=$2 out="$work/cg.$1.$2"
    rm -f "$out"*
    valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$out" \
        "$bench" ir "$mode" "$n" >/dev/null 2>"$work/cg.$mode.$n.log" || {
        echo "callgrind run failed: see $work/cg.$mode.$n.log" >&2
        echo "0 0"
        return
    }
    local caller process
    caller=$(awk '/^(summary|totals):/ {print $2; exit}' "$out"-01)
    process=$(cat "$out"-* | awk '/^summary:/ {s += $2} END {print s}')
    echo "$caller $process"
}

peer_json="$work/peer.json"
rm -f "$peer_json"
if [ -x "$(command -v node)" ]; then
    echo "== peer: jaeger-client (Node.js)"
    if bash "$srcdir/tests/bench/peer/run_peer.sh" "$builddir/tests/bench/.peer-cache" 9 >"$peer_json.tmp"; then
        mv "$peer_json.tmp" "$peer_json"
        cat "$peer_json"
    else
        echo "peer not available in this run (see above); ratios will be n/a"
    fi
fi

ir_json="$work/ir.json"
if command -v valgrind >/dev/null; then
    echo "== callgrind instruction counts (this takes a minute)"
    n=100000
    read -r u_c0 u_p0 <<<"$(callgrind_ir unsampled 0)"
    read -r u_c1 u_p1 <<<"$(callgrind_ir unsampled $n)"
    read -r s_c0 s_p0 <<<"$(callgrind_ir sampled 0)"
    read -r s_c1 s_p1 <<<"$(callgrind_ir sampled $n)"
    awk -v n=$n -v uc0="$u_c0" -v uc1="$u_c1" -v sc0="$s_c0" -v sc1="$s_c1" \
        -v sp0="$s_p0" -v sp1="$s_p1" 'BEGIN {
        printf "{\"unsampled\": %.1f, \"sampled_caller\": %.1f, \"sampled_process\": %.1f}\n",
            (uc1 - uc0) / n, (sc1 - sc0) / n, (sp1 - sp0) / n }' >"$ir_json"
    cat "$ir_json"
else
    echo "valgrind missing: no instruction counts" >&2
    rm -f "$ir_json"
fi

echo "== timed table"
"$bench" table "$peer_json" "$ir_json"
