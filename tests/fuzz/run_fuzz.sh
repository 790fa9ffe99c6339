#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# tests/fuzz/run_fuzz.sh: builds each libFuzzer target (tests/fuzz/fuzz_<name>.c) with clang
# and runs it for a bounded time; the `fuzz` stage of scripts/test.sh calls it.
#
# The library sources (sdk/src/**/*.c, sdk/wire/**/*.c, sdk/transport/*.c, sdk/offline/*.c)
# are compiled here with clang and the sanitizers, so the code under test is instrumented:
# linking the gcc-built libtracewire-core.a would give libFuzzer no coverage of it and ASan no
# view of its memory.
# Code the build generates (tracewire/version.h, the Thrift c_glib headers under sdk/gen/, the
# protobuf-c code under proto/gen/) comes from BUILDDIR, which must have been built (`make`)
# first.
#
# Per target: seeds from tests/fuzz/corpus/<name>/ (read only), a libFuzzer dictionary
# from tests/fuzz/<name>.dict if present. The program is BUILDDIR/tests/fuzz/fuzz_<name>;
# objects, the log, the inputs it adds to the corpus (never the seed directory, even in an
# in-tree build) and any crash, leak or timeout input go under BUILDDIR/tests/fuzz/run/,
# and the command that reproduces a finding is printed.
#
# Exit status: 0 when every target ran its time without a finding, 1 when one found
# something (or did not build), 2 on a usage or set-up error.
#
# Usage: run_fuzz.sh SRCDIR BUILDDIR SECONDS [NAME...]
#   NAME: targets to run (default: every tests/fuzz/fuzz_*.c), e.g. config_env.
#   Environment: CLANG (default clang), TW_FUZZ_TIMEOUT (seconds one input may take,
#   default 10), TW_FUZZ_RSS_MB (memory limit, default 2048), TW_FUZZ_JOBS (compilers and
#   targets run at once, default the number of CPUs: each target still runs SECONDS on a core
#   of its own).
set -uo pipefail

usage() {
    echo "usage: $0 SRCDIR BUILDDIR SECONDS [NAME...]" >&2
    exit 2
}

[ $# -ge 3 ] || usage
src=$(cd "$1" && pwd) || usage
build=$(cd "$2" && pwd) || usage
seconds=$3
shift 3
case "$seconds" in
'' | *[!0-9]* | 0)
    echo "run_fuzz.sh: SECONDS must be a positive number, got '$seconds'" >&2
    exit 2
    ;;
esac
clang=${CLANG:-clang}
input_timeout=${TW_FUZZ_TIMEOUT:-10}
rss_mb=${TW_FUZZ_RSS_MB:-2048}
jobs=${TW_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
case "$jobs" in
'' | *[!0-9]* | 0)
    echo "run_fuzz.sh: TW_FUZZ_JOBS must be a positive number, got '$jobs'" >&2
    exit 2
    ;;
esac

if [ $# -eq 0 ]; then
    for f in "$src"/tests/fuzz/fuzz_*.c; do
        [ -f "$f" ] || continue
        n=${f##*/fuzz_}
        set -- "$@" "${n%.c}"
    done
fi
[ $# -gt 0 ] || { echo "run_fuzz.sh: no fuzz targets in $src/tests/fuzz" >&2; exit 2; }

command -v "$clang" >/dev/null 2>&1 || {
    echo "run_fuzz.sh: $clang not found (scripts/deps.sh installs clang," \
        "libclang-rt-14-dev)" >&2
    exit 2
}
for generated in sdk/include/tracewire/version.h sdk/gen/twire_jaeger_jaeger_types.h \
    proto/gen/opentelemetry/proto/trace/v1/trace.pb-c.h; do
    [ -f "$build/$generated" ] || {
        echo "run_fuzz.sh: $build/$generated is missing: run make in $build first" >&2
        exit 2
    }
done
# The modules configure.ac asks for the core library.
# shellcheck disable=SC2207 # word splitting of compiler flags is intended
dep_cflags=($(pkg-config --cflags glib-2.0 gobject-2.0 thrift_c_glib openssl libcurl jansson zlib \
    libprotobuf-c)) || exit 2
# shellcheck disable=SC2207
dep_libs=($(pkg-config --libs glib-2.0 gobject-2.0 thrift_c_glib openssl libcurl jansson zlib \
    libprotobuf-c)) || exit 2

out=$build/tests/fuzz
run=$out/run
mkdir -p "$run/obj" "$run/artifacts" || exit 2

# Compilers and targets run $jobs at a time (tests/job_pool.sh).
POOL_JOBS=$jobs
# shellcheck source=tests/job_pool.sh
. "$src/tests/job_pool.sh"

# The project's warnings (configure.ac), not as errors: a warning that only clang gives
# should not stop the fuzzing; the plain and asan stages hold the code to -Werror.
cflags=(-std=c11 -g -O1 -D_GNU_SOURCE -fno-omit-frame-pointer -fno-sanitize-recover=all
    -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wvla
    -I"$src/sdk/include" -I"$build/sdk/include" -I"$src/sdk" -I"$src/sdk/src" -I"$build/sdk/gen"
    -I"$build/proto/gen" -I"$src/tests/unit" -I"$src/bridge"
    "${dep_cflags[@]}")

# The library, once for all targets: instrumented for coverage (fuzzer-no-link) and the
# sanitizers. One object per source, named after its path so that equal base names in
# two folders cannot collide.
echo "run_fuzz.sh: compiling sdk/src, sdk/wire, sdk/transport and sdk/offline with $("$clang" --version | head -n 1)"
objs=()
# compile OBJ CC-ARGS...: one object ($clang CC-ARGS -o OBJ), saying which on failure.
compile() {
    local obj=$1
    shift
    "$clang" "$@" -o "$obj" || { echo "run_fuzz.sh: cannot compile ${*: -1}" >&2; return 1; }
}
n_obj=0
while IFS= read -r -d '' c; do
    rel=${c#"$src"/}
    obj=$run/obj/$(echo "${rel%.c}" | tr / _).o
    pool_start "$run/obj/compile.$((n_obj += 1)).out" compile "$obj" "${cflags[@]}" \
        -fsanitize=fuzzer-no-link,address,undefined -c "$c"
    objs+=("$obj")
done < <({
    find "$src/sdk/src" "$src/sdk/wire" "$src/sdk/transport" "$src/sdk/offline" -name '*.c' \
        ! -name 'microhttpd.c' -print0
    find "$src/bridge" -name '*.c' ! -name 'main.c' ! -name '*_cmd.c' \
        ! -name 'context_json.c' ! -name 'header_lines.c' ! -path "$src/bridge/pipeline.c" \
        ! -name '*_mhd.c' ! -name 'agent_missing.c' \
        ! -path '*/views/show.c' ! -path '*/views/html.c' ! -path '*/views/deps.c' \
        ! -path '*/views/stats.c' ! -path '*/views/diff.c' -print0
} | sort -z)
# (microhttpd.c is the optional libmicrohttpd contrib, not part of the core library. From
# bridge/, the format list, assembler and sinks of `tracewire convert`, the views'
# algorithms and the agent's parts (its pipeline.c too): not the commands' entry points,
# option parsing and shared input pipeline (bridge/pipeline.c), which need main.c, nor the
# agent's libmicrohttpd servers (*_mhd.c), whose decoding the fuzz targets call directly.)

# The reference of the differential targets: the c_glib code generated from thrift/ (not
# ours: compiled without warnings) and the test helpers that drive it.
for c in "$build"/sdk/gen/*.c "$src/tests/unit/thrift_reference.c" "$src/tests/unit/jaeger_decode.c"; do
    [ -f "$c" ] || continue
    obj=$run/obj/ref_$(basename "${c%.c}").o
    pool_start "$run/obj/compile.$((n_obj += 1)).out" compile "$obj" "${cflags[@]}" -w \
        -fsanitize=fuzzer-no-link,address,undefined -c "$c"
    objs+=("$obj")
done
# The code protoc-c generated from proto/ (in the build tree), not ours to instrument for
# warnings but for coverage and the sanitizers like the rest.
while IFS= read -r -d '' c; do
    rel=${c#"$build"/}
    obj=$run/obj/$(echo "${rel%.c}" | tr / _ | tr - _).o
    pool_start "$run/obj/compile.$((n_obj += 1)).out" compile "$obj" -std=c11 -g -O1 \
        -fno-omit-frame-pointer -fno-sanitize-recover=all -w -I"$build/proto/gen" \
        "${dep_cflags[@]}" -fsanitize=fuzzer-no-link,address,undefined -c "$c"
    objs+=("$obj")
done < <(find "$build/proto/gen" -name '*.pb-c.c' -print0 | sort -z)
pool_wait
[ "$pool_failed" -eq 0 ] || exit 1

# Every target is linked first (JOBS at a time), then run JOBS at a time, so no target
# shares its core with a compiler while it fuzzes.
fails=$run/failed.list
: >"$fails"
link_one() { # NAME: builds fuzz_NAME, or records why not
    local name=$1 target=$src/tests/fuzz/fuzz_$1.c
    if [ ! -f "$target" ]; then
        echo "run_fuzz.sh: no $target" >&2
        echo "$name (no source)" >>"$fails"
        return 1
    fi
    "$clang" "${cflags[@]}" -fsanitize=fuzzer,address,undefined "$target" "${objs[@]}" \
        "${dep_libs[@]}" -lpthread -lm -o "$out/fuzz_$name" ||
        { echo "$name (build)" >>"$fails"; return 1; }
}
for name in "$@"; do
    pool_start "$run/link_$name.out" link_one "$name"
done
pool_wait

fuzz_one() { # NAME: runs fuzz_NAME for $seconds s; prints its result
    local name=$1
    local bin=$out/fuzz_$name seeds=$src/tests/fuzz/corpus/$name work=$run/corpus/$name
    local log=$run/fuzz_$name.log start=$SECONDS rc a
    echo
    echo "==== fuzz_$name: $seconds s ===="
    mkdir -p "$work"
    # Findings of an earlier run are not this run's: the corpus keeps what they taught.
    rm -f "$run/artifacts/${name}-"*
    local args=(-max_total_time="$seconds" -timeout="$input_timeout" -rss_limit_mb="$rss_mb"
        -print_final_stats=1 -artifact_prefix="$run/artifacts/${name}-")
    [ -f "$src/tests/fuzz/$name.dict" ] && args+=(-dict="$src/tests/fuzz/$name.dict")
    local corpora=("$work")
    [ -d "$seeds" ] && corpora+=("$seeds")
    # libFuzzer stops itself after max_total_time; the outer limit only catches a hang
    # of libFuzzer itself (a slow input is its own -timeout finding).
    echo "+ $bin ${args[*]} ${corpora[*]}"
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
        UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
        timeout -k 10 $((seconds + 4 * input_timeout + 60)) \
        "$bin" "${args[@]}" "${corpora[@]}" >"$log" 2>&1
    rc=$?
    grep -E '^INFO: .*(files found|seed corpus)|^stat::(number_of_executed_units|peak_rss_mb)' \
        "$log" | sed 's/^/    /'
    if [ "$rc" -eq 0 ]; then
        echo "PASS: fuzz_$name ($((SECONDS - start)) s, log $log)"
        return 0
    fi
    echo "FAIL: fuzz_$name: exit status $rc (log $log); the report:"
    # The finding: from libFuzzer's or a sanitizer's first report line to the end.
    sed -n '/^==[0-9]*==\|^ALARM\|^SUMMARY\|runtime error\|^fuzz_/,$p' "$log" | head -n 80 |
        sed 's/^/    /'
    for a in "$run/artifacts/${name}-"*; do
        [ -f "$a" ] && echo "    reproduce: $bin $a"
    done
    echo "$name" >>"$fails"
    return 1
}
for name in "$@"; do
    [ -x "$out/fuzz_$name" ] && ! grep -q "^$name (" "$fails" || continue
    pool_start "$run/fuzz_$name.out" fuzz_one "$name"
done
pool_wait

echo
if [ -s "$fails" ]; then
    echo "run_fuzz.sh: failed: $(tr '\n' ' ' <"$fails")"
    exit 1
fi
echo "run_fuzz.sh: $# target(s) ran $seconds s each without a finding ($jobs at a time)"
