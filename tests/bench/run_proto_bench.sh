#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tests/bench/run_proto_bench.sh BUILDDIR: the OTLP encodings' part of `make bench`.
#
# 1. callgrind instruction counts per span (deterministic, unlike wall time) of each mode of
#    bench_proto (tests/bench/bench_proto.c): `bench_proto ir MODE N` with N = 20480 and with
#    N = 0; (Ir(N) - Ir(0)) / N is the cost of one span.
# 2. bench_proto's timed table (spans/s, ns/span).
# The reporter as a whole (encoding, batching, HTTP to a loopback receiver) is measured by
# bench_transports (rows otlp-http and otlp-http-proto).
set -u
# Callgrind runs keep glibc's vector copy loops: valgrind counts each byte a
# `rep movsb` moves as one instruction, and glibc copies 2 KiB to 512 KiB that
# way, so a large memcpy would count 10-30x what it executes (CONTRIBUTING.md).
cg_tunables="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.cpu.x86_rep_movsb_threshold=0xffffffffffffffff"
builddir=$(cd "$1" && pwd)
bench="$builddir/tests/bench/bench_proto"
work="$builddir/tests/bench/.out"
mkdir -p "$work"
[ -x "$bench" ] || { echo "run_proto_bench.sh: $bench is not built" >&2; exit 1; }

ir() { # mode n -> total Ir of the run
    local out="$work/cg.proto.$1.$2"
    rm -f "$out"
    GLIBC_TUNABLES="$cg_tunables" valgrind --tool=callgrind --callgrind-out-file="$out" "$bench" ir "$1" "$2" \
        >/dev/null 2>"$out.log" || { echo 0; return; }
    awk '/^(summary|totals):/ {print $2; exit}' "$out"
}

if command -v valgrind >/dev/null; then
    n=20480
    echo "== OTLP encodings: callgrind instructions per standard span ($n spans)"
    printf "| %-18s | %12s |\n" "mode" "Ir/span"
    printf "|--------------------|--------------|\n"
    for mode in encode-direct encode-protobuf-c encode-json decode; do
        a=$(ir "$mode" 0)
        b=$(ir "$mode" "$n")
        awk -v m="$mode" -v a="$a" -v b="$b" -v n="$n" \
            'BEGIN { printf "| %-18s | %12.0f |\n", m, (b - a) / n }'
    done
else
    echo "valgrind not found: no instruction counts"
fi
"$bench" table 1000000
