#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/bench/run_bench.sh BUILDDIR SRCDIR: what `make bench` runs.
#
# 1. The peer: jaeger-client for Node.js, measured now on this machine
#    (tests/bench/peer/run_peer.sh); skipped with a note when npm is unreachable.
# 2. Instruction counts with callgrind (deterministic, unlike wall time): the
#    `ir` mode of bench_tracer run with N spans and with 0 spans; the
#    difference divided by N is the cost per span, per thread (the caller is
#    thread 1) and for the whole process.
# 3. The timed table (bench_tracer table), which prints ratios against the peer.
# 4. Propagation: the OpenTelemetry propagators for Node.js measured now
#    (tests/bench/peer/propagation_bench.js, packages installed by
#    tests/interop/propagation/install_peers.sh into the cache the interop test
#    uses), callgrind instruction counts per call (bench_propagation ir), then
#    bench_propagation's table with ratios against the peer.
set -u
# Callgrind runs keep glibc's vector copy loops: valgrind counts each byte a
# `rep movsb` moves as one instruction, and glibc copies 2 KiB to 512 KiB that
# way, so a large memcpy would count 10-30x what it executes (CONTRIBUTING.md).
cg_tunables="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.cpu.x86_rep_movsb_threshold=0xffffffffffffffff"
builddir=$(cd "$1" && pwd)
srcdir=$(cd "$2" && pwd)
bench="$builddir/tests/bench/bench_tracer"
work="$builddir/tests/bench/.out"
mkdir -p "$work"

# Sums the "totals:" / "summary:" Ir of every per-thread callgrind file of a run.
callgrind_ir() { # mode n -> prints "caller_total process_total"
    local mode=$1 n=$2 out="$work/cg.$1.$2"
    rm -f "$out"*
    GLIBC_TUNABLES="$cg_tunables" valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$out" \
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
    # A sampled span through the three ready-made finished-span handlers.
    read -r h_c0 _ <<<"$(callgrind_ir sampled_handlers 0)"
    read -r h_c1 _ <<<"$(callgrind_ir sampled_handlers $n)"
    awk -v n=$n -v uc0="$u_c0" -v uc1="$u_c1" -v sc0="$s_c0" -v sc1="$s_c1" \
        -v sp0="$s_p0" -v sp1="$s_p1" -v hc0="$h_c0" -v hc1="$h_c1" 'BEGIN {
        printf "{\"unsampled\": %.1f, \"sampled_caller\": %.1f, \"sampled_process\": %.1f, ",
            (uc1 - uc0) / n, (sc1 - sc0) / n, (sp1 - sp0) / n
        printf "\"sampled_handlers_caller\": %.1f}\n", (hc1 - hc0) / n }' >"$ir_json"
    cat "$ir_json"
else
    echo "valgrind missing: no instruction counts" >&2
    rm -f "$ir_json"
fi

echo "== timed table"
"$bench" table "$peer_json" "$ir_json"

echo "== propagation peer: OpenTelemetry propagators (Node.js)"
prop_peer_json="$work/propagation_peer.json"
rm -f "$prop_peer_json"
prop_cache="$builddir/tests/interop/.cache/propagation-peers"
if [ -x "$(command -v node)" ] && sh "$srcdir/tests/interop/propagation/install_peers.sh" "$prop_cache"; then
    if NODE_PATH="$prop_cache/node_modules" node "$srcdir/tests/bench/peer/propagation_bench.js" \
        >"$prop_peer_json.tmp"; then
        mv "$prop_peer_json.tmp" "$prop_peer_json"
        cat "$prop_peer_json"
    else
        echo "propagation peer failed; ratios will be n/a"
    fi
else
    echo "propagation peer not available in this run (see above); ratios will be n/a"
fi

# Instructions per call of each propagation row: callgrind runs of the `ir`
# mode with N calls and with 0, the difference divided by N (setup cancels).
prop_bench="$builddir/tests/bench/bench_propagation"
prop_ir() { # row op n -> prints the run's total instructions
    local out="$work/cg.prop.$1.$2.$3"
    rm -f "$out"
    if ! GLIBC_TUNABLES="$cg_tunables" valgrind --tool=callgrind --callgrind-out-file="$out" "$prop_bench" ir "$1" "$2" "$3" \
        >/dev/null 2>"$out.log"; then
        echo "callgrind run failed: see $out.log" >&2
        echo 0
        return
    fi
    awk '/^(summary|totals):/ {print $2; exit}' "$out"
}
prop_ir_json="$work/propagation_ir.json"
rm -f "$prop_ir_json"
if command -v valgrind >/dev/null; then
    echo "== propagation: callgrind instruction counts"
    n=10000
    sep=""
    {
        printf "{"
        for row in jaeger jaeger_baggage b3_multi b3_multi_baggage b3_single b3_single_baggage \
            w3c w3c_baggage binary binary_baggage; do
            printf '%s"%s": {' "$sep" "$row"
            sep=", "
            opsep=""
            for op in inject extract; do
                i0=$(prop_ir "$row" "$op" 0)
                i1=$(prop_ir "$row" "$op" $n)
                awk -v s="$opsep" -v op="$op" -v n=$n -v i0="$i0" -v i1="$i1" \
                    'BEGIN { printf "%s\"%s\": %.1f", s, op, (i1 - i0) / n }'
                opsep=", "
            done
            printf "}"
        done
        printf "}\n"
    } >"$prop_ir_json"
    cat "$prop_ir_json"
else
    echo "valgrind missing: no propagation instruction counts" >&2
fi

echo "== propagation table"
"$prop_bench" table "$([ -s "$prop_peer_json" ] && echo "$prop_peer_json")" \
    "$([ -s "$prop_ir_json" ] && echo "$prop_ir_json")"

# 5. Transports: spans/s per transport to real receivers on loopback (built when
#    libmicrohttpd is available).
transports="$builddir/tests/bench/bench_transports"
if [ -x "$transports" ]; then
    echo "== transports"
    "$transports" 200000
else
    echo "== transports: not built (configure did not find libmicrohttpd)"
fi

# 6. Encoders on the reporter thread's terms (no transport): spans/s of each wire encoder
#    with the target of the HTTP senders' encoders (>= 500k spans/s), and callgrind
#    instructions per span (N spans minus 0, divided by N).
encode="$builddir/tests/bench/bench_encode"
echo "== encoders"
if command -v valgrind >/dev/null; then
    n=20000
    for f in jaeger-compact jaeger-binary zipkin-json otlp-json otlp-proto dapper; do
        i0=0 i1=0
        for k in 0 $n; do
            out="$work/cg.encode.$f.$k"
            rm -f "$out"
            if GLIBC_TUNABLES="$cg_tunables" valgrind --tool=callgrind --callgrind-out-file="$out" "$encode" ir "$f" "$k" \
                >/dev/null 2>"$out.log"; then
                v=$(awk '/^(summary|totals):/ {print $2; exit}' "$out")
            else
                echo "callgrind run failed: see $out.log" >&2
                v=0
            fi
            if [ "$k" = 0 ]; then i0=$v; else i1=$v; fi
        done
        awk -v f="$f" -v n=$n -v i0="$i0" -v i1="$i1" \
            'BEGIN { printf "   %-14s %8.1f instructions per span (callgrind)\n", f, (i1 - i0) / n }'
    done
fi
"$encode" table 1000000
