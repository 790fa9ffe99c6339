#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# scripts/test.sh: the whole test suite, as CI runs it (.ci/run). Installs the Debian
# packages (scripts/deps.sh), bootstraps the source tree once (autoreconf) and then runs
# each stage in its own VPATH build directory under _build/:
#
#   plain      configure --enable-werror; make; make check           (_build/plain)
#              (make check is left to distcheck when that stage runs too: it runs the
#              same suite, from the tarball, so the suite does not run twice)
#   distcheck  make distcheck: the tarball builds and passes check    (_build/plain)
#   valgrind   the TW_VALGRIND_TESTS programs under valgrind (memcheck), TW_JOBS at a
#              time, the TW_VALGRIND_FIRST ones (the longest) first   (_build/plain)
#   asan       configure --enable-werror --enable-sanitizers; make check (ASan+UBSan)
#   tsan       configure --enable-tsan; the TW_TSAN_TESTS programs (the unit suites with
#              threads, declared in the Makefile fragments) under TSan
#   fuzz       each libFuzzer target (tests/fuzz/fuzz_*.c) built with clang and the
#              sanitizers and run for TW_FUZZ_SECONDS (tests/fuzz/run_fuzz.sh; needs
#              the generated headers of _build/plain)
#   format     clang-format --dry-run --Werror over the git-tracked *.c and *.h
#   docs       make docs: the API reference from the public headers (Doxygen, warnings
#              are errors)                                            (_build/plain)
#   package    the Debian packages from the `make dist` tarball (dpkg-buildpackage -b,
#              nocheck: the other stages run the tests), lintian with no error, then
#              dpkg -i, debian/tests/installed (hello.c with pkg-config, the command, a
#              CMake consumer) and dpkg --purge. Needs root or sudo; refuses to run when
#              tracewire packages are installed already   (_build/package)
#
# A failing stage does not stop the others; a failing step inside a stage (a build, say)
# ends that stage. At the end it prints one line per stage and "N passed, N failed"
# (stages), and exits 1 if any stage failed.
#
# Environment:
#   TW_TEST_STAGES  stages to run, space separated (default: all, in the order above)
#   TW_JOBS         make -j value (default 2: the CI machine has 2 cores)
#   TW_FUZZ_SECONDS how long each fuzz target runs (default 20)
#   TW_BUILD_ROOT   where the build directories go (default: <source>/_build)
#   TW_CLEAN=1      delete the build directories first (default: reuse, make rebuilds
#                   what changed)
#   TW_AUTORECONF=1 run autoreconf -fi even when configure exists
#   TW_SKIP_DEPS=1  do not run scripts/deps.sh
#
# The source directory must not be configured in-tree (automake's VPATH builds refuse
# it): if it is, this script runs `make distclean` there first.
set -uo pipefail
exec </dev/null

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JOBS=${TW_JOBS:-2}
BUILD_ROOT=${TW_BUILD_ROOT:-$SRC/_build}
ALL_STAGES="plain distcheck valgrind asan tsan fuzz format docs package"
STAGES=${TW_TEST_STAGES:-$ALL_STAGES}

# Wall-clock limits, so a hung test fails its stage instead of eating CI's budget.
# On the 2-core CI machine a whole `make check` takes about 2 minutes, under ASan about 2 to 3.
CHECK_TIMEOUT=${TW_CHECK_TIMEOUT:-1200}     # one `make check` / `make distcheck`, seconds
PROGRAM_TIMEOUT=${TW_PROGRAM_TIMEOUT:-180} # one program under valgrind or TSan, seconds
# Fuzzing is bounded by time, not by coverage: 20 s per target (each on a core of its own,
# TW_JOBS at a time) finds the shallow bugs (a read past a NUL, a leak on an error path) at
# each CI run; longer runs are for a developer's machine (TW_FUZZ_SECONDS=3600).
FUZZ_SECONDS=${TW_FUZZ_SECONDS:-20}

for stage in $STAGES; do
    case " $ALL_STAGES " in
    *" $stage "*) ;;
    *)
        echo "test.sh: unknown stage '$stage' in TW_TEST_STAGES (known: $ALL_STAGES)" >&2
        exit 2
        ;;
    esac
done
case "$JOBS" in
'' | *[!0-9]*)
    echo "test.sh: TW_JOBS must be a number, got '$JOBS'" >&2
    exit 2
    ;;
esac
case "$FUZZ_SECONDS" in
'' | *[!0-9]* | 0)
    echo "test.sh: TW_FUZZ_SECONDS must be a positive number, got '$FUZZ_SECONDS'" >&2
    exit 2
    ;;
esac

# ---- helpers ---------------------------------------------------------------------------

banner() {
    printf '\n==== %s ====\n' "$*"
}

# run CMD...: echo the command, then run it.
run() {
    printf '+ %s\n' "$*"
    "$@"
}

# run_limited SECONDS CMD...: like run, but ends CMD (and everything it started) after
# SECONDS, so a hung test fails its stage instead of eating CI's time budget.
run_limited() {
    local limit=$1
    shift
    printf '+ %s\n' "$*"
    timeout -k 30 "$limit" "$@"
    local rc=$?
    [ "$rc" -eq 124 ] && echo "test.sh: timed out after $limit s: $*" >&2
    return "$rc"
}

# note TEXT: the reason a stage failed, shown in the summary.
note() {
    STAGE_NOTE=$1
    echo "test.sh: stage $CURRENT_STAGE: $1" >&2
}

# configure_in NAME ARGS...: configure $BUILD_ROOT/NAME with ARGS unless it already is
# (same arguments). Uses a relative path to configure, as in `../../configure`.
configure_in() {
    local dir="$BUILD_ROOT/$1"
    shift
    mkdir -p "$dir" || return 1
    if [ -f "$dir/config.status" ] && [ -f "$dir/Makefile" ] &&
        [ "$(cat "$dir/.tw-configure-args" 2>/dev/null)" = "$*" ]; then
        echo "$dir: already configured with: $*"
        return 0
    fi
    rm -f "$dir/.tw-configure-args"
    local rel
    rel=$(realpath --relative-to="$dir" "$SRC") || return 1
    (cd "$dir" && run "$rel/configure" "$@") || return 1
    printf '%s' "$*" >"$dir/.tw-configure-args"
}

# make_in NAME ARGS...: make in $BUILD_ROOT/NAME.
make_in() {
    local dir="$BUILD_ROOT/$1"
    shift
    run make -C "$dir" -j"$JOBS" "$@"
}

# print_capped FILE LINES: print FILE indented, at most LINES lines of it (a leak report
# repeated for every test can run to thousands of lines; the first ones tell the story).
print_capped() {
    local total
    total=$(wc -l <"$1")
    head -n "$2" "$1" | sed 's/^/    /'
    if [ "$total" -gt "$2" ]; then
        echo "    ... $((total - $2)) more lines in $1"
    fi
}

# show_test_logs NAME: after a failed `make check`, print automake's test-suite.log, which
# holds the log of every failed test.
show_test_logs() {
    local log="$BUILD_ROOT/$1/test-suite.log"
    if [ -f "$log" ]; then
        banner "$log"
        print_capped "$log" 2000
    else
        echo "(no $log: the tests did not run)"
    fi
}

# make_var NAME VAR: the value of the make variable VAR (Makefile.am and its fragments) as
# make sees it in $BUILD_ROOT/NAME. Make itself evaluates the variable (continuations, +=,
# conditionals, references), through an extra makefile with a print rule, so Makefile.am
# needs no helper target. Empty when that fails.
make_var() {
    local dir="$BUILD_ROOT/$1" mk="$BUILD_ROOT/.tw-print-var.mk"
    # shellcheck disable=SC2016 # $($*) is make syntax, not shell
    printf 'tw-print-var-%%:\n\t@echo $($*)\n' >"$mk"
    make -s --no-print-directory -C "$dir" -f Makefile -f "$mk" "tw-print-var-$2" 2>/dev/null
}

# core_tests NAME: the value of TW_VALGRIND_TESTS (Makefile.am), as make sees it in
# $BUILD_ROOT/NAME (make_var). If that fails, the plain assignment lines in
# tests/Makefile.inc are read instead.
core_tests() {
    local value
    value=$(make_var "$1" TW_VALGRIND_TESTS)
    if [ -z "${value// /}" ]; then
        value=$(sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta' "$SRC/tests/Makefile.inc" |
            sed -n 's/^TW_CORE_TESTS[[:space:]]*+\{0,1\}=[[:space:]]*//p' | tr -s ' \t' '  ')
    fi
    # shellcheck disable=SC2086 # unquoted on purpose: one space between names
    echo $value
}

# run_program LOG TIMEOUT CMD...: run a test program in $BUILD_DIR with its output in
# LOG; print PASS/FAIL, and the log on failure.
run_program() {
    local log=$1 limit=$2
    shift 2
    local start=$SECONDS rc
    (cd "$BUILD_DIR" && timeout -k 10 "$limit" "$@") >"$log" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ]; then
        echo "PASS: ${*: -1} ($((SECONDS - start)) s)"
        return 0
    fi
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "FAIL: ${*: -1}: timed out after $limit s"
    else
        echo "FAIL: ${*: -1}: exit status $rc"
    fi
    print_capped "$log" 300
    # The caller may want the failures again (with diagnostics that cost too much to pay on
    # every run): one program per line.
    [ -n "${FAILED_LIST:-}" ] && echo "${*: -1}" >>"$FAILED_LIST"
    return 1
}

# shellcheck source=tests/job_pool.sh
. "$SRC/tests/job_pool.sh"

# run_programs LOGDIR TIMEOUT PREFIX... -- PROGRAM...: run_program for each PROGRAM (as
# PREFIX... ./PROGRAM, its output in LOGDIR/<name>.log), JOBS of them at a time; each result is
# printed whole when its program ends. Returns the number that failed (at most 100).
run_programs() {
    local logdir=$1 limit=$2
    shift 2
    local prefix=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        prefix+=("$1")
        shift
    done
    shift
    local t name
    POOL_JOBS=$JOBS
    pool_failed=0
    for t in "$@"; do
        name=$(basename "$t")
        pool_start "$logdir/$name.result" run_program "$logdir/$name.log" "$limit" \
            "${prefix[@]}" "./$t"
    done
    pool_wait
    [ "$pool_failed" -le 100 ] || return 100
    return "$pool_failed"
}

# ---- stages ----------------------------------------------------------------------------
# Each returns 0 on success; on failure it calls note() and returns 1.

stage_plain() {
    configure_in plain --enable-werror || { note "configure failed"; return 1; }
    make_in plain || { note "build failed"; return 1; }
    case " $STAGES " in
    *" distcheck "*)
        # The same `make check`, from the tarball: running it here as well cost CI two
        # minutes for no test more (both ran the same 94 tests).
        echo "make check: run by the distcheck stage, from the tarball"
        return 0
        ;;
    esac
    if ! run_limited "$CHECK_TIMEOUT" make -C "$BUILD_ROOT/plain" -j"$JOBS" check; then
        show_test_logs plain
        note "make check failed"
        return 1
    fi
}

stage_distcheck() {
    configure_in plain --enable-werror || { note "configure failed"; return 1; }
    if ! run_limited "$CHECK_TIMEOUT" make -C "$BUILD_ROOT/plain" -j"$JOBS" distcheck; then
        # distcheck builds in plain/tracewire-<version>/_build/sub.
        local log
        for log in "$BUILD_ROOT"/plain/*/_build/sub/test-suite.log; do
            [ -f "$log" ] && { banner "$log"; print_capped "$log" 2000; }
        done
        note "make distcheck failed"
        return 1
    fi
}

stage_valgrind() {
    configure_in plain --enable-werror || { note "configure failed"; return 1; }
    # `all` first: it makes BUILT_SOURCES (the generated Thrift code); then the programs.
    make_in plain || { note "build failed"; return 1; }
    local tests first t
    tests=$(core_tests plain)
    if [ -z "$tests" ]; then
        note "TW_CORE_TESTS is empty or could not be read"
        return 1
    fi
    # The longest programs start first, so that the last to end is not a long one started
    # late (one ran 152 s under memcheck while the other job had nothing left to do).
    local ordered=""
    first=$(make_var plain TW_VALGRIND_FIRST)
    for t in $first; do
        case " $tests " in *" $t "*) ordered="$ordered $t" ;; esac
    done
    for t in $tests; do
        case " $first " in *" $t "*) ;; *) ordered="$ordered $t" ;; esac
    done
    tests=${ordered# }
    echo "core tests: $tests"
    # shellcheck disable=SC2086 # a list of make targets
    make_in plain $tests || { note "building the core tests failed"; return 1; }

    # --track-origins=yes (where an uninitialised value came from) finds nothing more and
    # doubled the run time (test_thrift_read: 45 s with it, 25 s without), so only a
    # program that failed runs again with it, for its report.
    # shellcheck disable=SC2054 # the commas belong to valgrind's option values
    local vg=(valgrind -q --error-exitcode=1 --leak-check=full
        --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect
        --num-callers=30)
    [ -f "$SRC/tests/valgrind.supp" ] && vg+=(--suppressions="$SRC/tests/valgrind.supp")
    local logdir="$BUILD_ROOT/plain/valgrind-logs" failed t
    mkdir -p "$logdir"
    BUILD_DIR="$BUILD_ROOT/plain"
    FAILED_LIST="$logdir/failed"
    rm -f "$FAILED_LIST"
    # GLib: plain malloc instead of slices, and cleared memory, so that valgrind sees every
    # block (GLib's documented settings for valgrind runs). Valgrind runs a program's threads
    # one at a time, so JOBS programs at once keep JOBS cores busy.
    local env_vg=(env srcdir="$SRC" G_SLICE=always-malloc G_DEBUG=gc-friendly
        ./libtool --mode=execute)
    # shellcheck disable=SC2086 # a list of programs
    run_programs "$logdir" "$PROGRAM_TIMEOUT" "${env_vg[@]}" "${vg[@]}" -- $tests
    failed=$?
    if [ "$failed" -ne 0 ]; then
        local list=$FAILED_LIST
        FAILED_LIST=
        if [ -f "$list" ]; then
            while read -r t; do
                banner "again with --track-origins=yes: $t"
                run_program "$logdir/$(basename "$t").origins.log" "$PROGRAM_TIMEOUT" \
                    "${env_vg[@]}" "${vg[@]}" --track-origins=yes -- "$t"
            done <"$list"
        fi
        note "$failed program(s) failed under valgrind"
        return 1
    fi
    FAILED_LIST=
}

stage_asan() {
    configure_in asan --enable-werror --enable-sanitizers || { note "configure failed"; return 1; }
    make_in asan || { note "build failed"; return 1; }
    local asan=detect_leaks=1:abort_on_error=1
    local env_asan=(UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 G_SLICE=always-malloc
        G_DEBUG=gc-friendly)
    if ! run_limited "$CHECK_TIMEOUT" env ASAN_OPTIONS="$asan" "${env_asan[@]}" \
        make -C "$BUILD_ROOT/asan" -j"$JOBS" check; then
        show_test_logs asan
        # The failed tests again, for their reports: GLib and Thrift are built without frame
        # pointers, so the fast unwinder stops at g_malloc and a leak report would not say who
        # leaked; the slow one (fast_unwind_on_malloc=0) does. It is not the default because
        # it made the suite four times slower (test_dapper_fast: 136 s against 8 s), and it
        # finds nothing more. The stage has failed whatever the second run says.
        banner "the failed tests again, with fast_unwind_on_malloc=0 (full allocation stacks)"
        cp "$BUILD_ROOT/asan/test-suite.log" "$BUILD_ROOT/asan/test-suite.first.log" 2>/dev/null
        run_limited "$CHECK_TIMEOUT" env ASAN_OPTIONS="$asan:fast_unwind_on_malloc=0" \
            "${env_asan[@]}" make -C "$BUILD_ROOT/asan" -j"$JOBS" recheck
        show_test_logs asan
        note "make check failed under ASan/UBSan"
        return 1
    fi
}

stage_tsan() {
    # No --enable-werror: GCC warns (-Wtsan) about constructs TSan cannot model, such as
    # atomic_thread_fence, and that is TSan's limit, not a bug in the code.
    configure_in tsan --enable-tsan || { note "configure failed"; return 1; }
    make_in tsan || { note "build failed"; return 1; }
    # The unit programs with threads, declared next to each suite in the Makefile fragments.
    local tests
    tests=$(make_var tsan TW_TSAN_TESTS)
    # shellcheck disable=SC2086 # one space between names
    tests=$(echo $tests)
    if [ -z "$tests" ]; then
        note "TW_TSAN_TESTS is empty or could not be read"
        return 1
    fi
    echo "TSan tests: $tests"
    # shellcheck disable=SC2086
    make_in tsan $tests || { note "building the TSan tests failed"; return 1; }

    # die_after_fork=0: the fork suites start reporter threads in the child of a
    # multi-threaded process, which is what they test (TSan's default kills such a child).
    local opts="halt_on_error=1:second_deadlock_stack=1:die_after_fork=0"
    [ -f "$SRC/tests/tsan.supp" ] && opts="$opts:suppressions=$SRC/tests/tsan.supp"
    # TSan needs a particular address-space layout; on kernels with high mmap
    # randomisation it stops with "unexpected memory mapping". Running without ASLR
    # (setarch -R) avoids that and changes nothing else for these tests.
    local norand=()
    if setarch "$(uname -m)" -R true >/dev/null 2>&1; then
        norand=(setarch "$(uname -m)" -R)
    fi
    local logdir="$BUILD_ROOT/tsan/tsan-logs" t failed=0
    mkdir -p "$logdir"
    BUILD_DIR="$BUILD_ROOT/tsan"
    for t in $tests; do
        run_program "$logdir/$(basename "$t").log" "$PROGRAM_TIMEOUT" \
            env srcdir="$SRC" TSAN_OPTIONS="$opts" "${norand[@]}" "./$t" ||
            failed=$((failed + 1))
    done
    if [ "$failed" -ne 0 ]; then
        note "$failed program(s) failed under TSan"
        return 1
    fi
}

stage_fuzz() {
    configure_in plain --enable-werror || { note "configure failed"; return 1; }
    # `all` makes the generated headers (version.h, sdk/gen/) that run_fuzz.sh compiles
    # against; the library itself is compiled again there, with clang and the sanitizers.
    make_in plain || { note "build failed"; return 1; }
    local targets
    targets=$(find "$SRC/tests/fuzz" -maxdepth 1 -name 'fuzz_*.c' | wc -l)
    if [ "$targets" -eq 0 ]; then
        echo "no tests/fuzz/fuzz_*.c: fuzz stage skipped"
        STAGE_SKIPPED=1
        return 0
    fi
    # run_fuzz.sh bounds each target itself; this limit (its time plus building) only
    # catches a hang of the script.
    run_limited $((targets * (FUZZ_SECONDS + 180) + 300)) \
        env TW_FUZZ_JOBS="$JOBS" bash "$SRC/tests/fuzz/run_fuzz.sh" "$SRC" "$BUILD_ROOT/plain" \
        "$FUZZ_SECONDS"
    case $? in
    0) return 0 ;;
    2) note "fuzz targets could not be set up (clang, libclang-rt-14-dev, generated headers)" ;;
    *) note "a fuzz target found a crash, leak or timeout, did not build, or hung (see above)" ;;
    esac
    return 1
}

stage_format() {
    if ! git -C "$SRC" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        echo "not a git checkout: format check skipped"
        STAGE_SKIPPED=1
        return 0
    fi
    local list="$BUILD_ROOT/.tw-format-files" out="$BUILD_ROOT/.tw-format.log"
    git -C "$SRC" ls-files -z -- '*.c' '*.h' >"$list" || { note "git ls-files failed"; return 1; }
    local count
    count=$(tr -cd '\0' <"$list" | wc -c)
    if [ "$count" -eq 0 ]; then
        echo "no tracked *.c/*.h files: format check skipped"
        STAGE_SKIPPED=1
        return 0
    fi
    if ! command -v clang-format >/dev/null 2>&1; then
        note "clang-format is not installed (scripts/deps.sh installs it)"
        return 1
    fi
    clang-format --version
    echo "checking $count files"
    if (cd "$SRC" && xargs -0 clang-format --dry-run --Werror <"$list") >"$out" 2>&1; then
        return 0
    fi
    # One "file:line:col: error: code should be clang-formatted" per difference: list the
    # files, then the first differences.
    echo "files that differ from .clang-format (fix with: make format):"
    sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: .*/    \1/p' "$out" | sort -u
    echo "first differences:"
    head -n 60 "$out"
    note "clang-format differences (run make format)"
    return 1
}

stage_docs() {
    configure_in plain --enable-werror || { note "configure failed"; return 1; }
    make_in plain docs || { note "make docs failed (Doxygen warnings are errors)"; return 1; }
}

# The packages the package stage builds and installs (not the -dbgsym ones).
TW_DEBS="libtracewire0 libtracewire-dev libtracewire-microhttpd0 libtracewire-microhttpd-dev
tracewire"

# as_root CMD...: CMD as root (sudo -n when not root).
as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    else
        sudo -n "$@"
    fi
}

# dpkg_locked CMD...: CMD, retried for up to 5 minutes while another apt or dpkg holds
# the dpkg lock (other jobs may install packages on the same machine).
dpkg_locked() {
    local tries=0 out
    while :; do
        out=$(as_root "$@" 2>&1) && { printf '%s\n' "$out" | tail -n 3; return 0; }
        if printf '%s' "$out" | grep -q 'lock' && [ "$tries" -lt 30 ]; then
            tries=$((tries + 1))
            sleep 10
            continue
        fi
        printf '%s\n' "$out"
        return 1
    done
}

stage_package() {
    local tool
    for tool in dpkg-buildpackage dh lintian; do
        command -v "$tool" >/dev/null 2>&1 ||
            { note "$tool not found (scripts/deps.sh installs debhelper, lintian)"; return 1; }
    done
    if [ "$(id -u)" -ne 0 ] && ! sudo -n true 2>/dev/null; then
        note "needs root or passwordless sudo (dpkg -i)"
        return 1
    fi
    local pkg installed=""
    for pkg in $TW_DEBS; do
        case $(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null) in
        ii* | iU* | iF* | iH*) installed="$installed $pkg" ;;
        esac
    done
    if [ -n "$installed" ]; then
        note "already installed on this machine:$installed (dpkg --purge them first)"
        return 1
    fi
    configure_in plain --enable-werror || { note "configure failed"; return 1; }
    make_in plain dist >/dev/null || { note "make dist failed"; return 1; }
    local tarball dir log="$BUILD_ROOT/package/build.log"
    tarball=$(ls -t "$BUILD_ROOT"/plain/tracewire-*.tar.gz | head -n 1)
    rm -rf "$BUILD_ROOT/package"
    mkdir -p "$BUILD_ROOT/package"
    tar -xzf "$tarball" -C "$BUILD_ROOT/package" || { note "cannot unpack $tarball"; return 1; }
    dir=$BUILD_ROOT/package/$(basename "$tarball" .tar.gz)
    echo "building the packages in $dir (log: $log)"
    # A whole build from scratch (not incremental like the other stages): twice the limit.
    if ! (cd "$dir" && run_limited $((CHECK_TIMEOUT * 2)) env DEB_BUILD_OPTIONS="nocheck parallel=$JOBS" \
        dpkg-buildpackage -us -uc -b) >"$log" 2>&1; then
        print_capped "$log" 80
        note "dpkg-buildpackage failed"
        return 1
    fi
    ls "$BUILD_ROOT"/package/*.deb | sed 's#.*/#    #'

    echo "lintian:"
    local changes lint="$BUILD_ROOT/package/lintian.log"
    changes=$(ls "$BUILD_ROOT"/package/*.changes)
    run_limited "$PROGRAM_TIMEOUT" lintian --fail-on error --display-info "$changes" >"$lint" 2>&1
    local lint_rc=$?
    grep -v '^running with root privileges' "$lint" | sed 's/^/    /'
    echo "    $(grep -c '^E:' "$lint") errors, $(grep -c '^W:' "$lint") warnings, $(grep -c '^I:' "$lint") infos"
    if [ "$lint_rc" -ne 0 ]; then
        note "lintian found errors"
        return 1
    fi

    local debs=() rc=0
    for pkg in $TW_DEBS; do
        debs+=("$(ls "$BUILD_ROOT"/package/"${pkg}"_*.deb)")
    done
    echo "dpkg -i ${debs[*]##*/}"
    if ! dpkg_locked dpkg -i "${debs[@]}"; then
        note "dpkg -i failed"
        rc=1
    elif ! (cd "$dir" && run_limited "$PROGRAM_TIMEOUT" sh debian/tests/installed); then
        note "the installed packages failed debian/tests/installed"
        rc=1
    fi
    echo "dpkg --purge $(echo $TW_DEBS)"
    # shellcheck disable=SC2086 # a list of package names
    dpkg_locked dpkg --purge $TW_DEBS || { [ "$rc" -eq 0 ] && note "dpkg --purge failed"; rc=1; }
    return "$rc"
}

# ---- setup -----------------------------------------------------------------------------

setup() {
    if [ "${TW_SKIP_DEPS:-0}" != 1 ]; then
        banner "dependencies (scripts/deps.sh)"
        bash "$SRC/scripts/deps.sh" || { echo "test.sh: scripts/deps.sh failed" >&2; return 1; }
    fi

    if [ -f "$SRC/config.status" ]; then
        banner "source directory is configured in-tree: make distclean"
        echo "VPATH builds need an unconfigured source tree; cleaning $SRC"
        if ! make -C "$SRC" distclean >/dev/null || [ -f "$SRC/config.status" ]; then
            echo "test.sh: $SRC is configured in-tree and 'make distclean' failed." >&2
            echo "test.sh: clean it by hand (make distclean, or git clean -xdf) and re-run." >&2
            return 1
        fi
    fi

    if [ "${TW_CLEAN:-0}" = 1 ]; then
        echo "TW_CLEAN=1: removing $BUILD_ROOT"
        rm -rf "$BUILD_ROOT"
    fi
    mkdir -p "$BUILD_ROOT" || return 1

    if [ "${TW_AUTORECONF:-0}" = 1 ] || [ ! -x "$SRC/configure" ] || [ ! -f "$SRC/Makefile.in" ]; then
        banner "bootstrap (autoreconf -fi)"
        (cd "$SRC" && run autoreconf -fi) || { echo "test.sh: autoreconf failed" >&2; return 1; }
    fi
}

# ---- main ------------------------------------------------------------------------------

declare -A RESULT NOTE DURATION
banner "tracewire test suite: stages: $STAGES (make -j$JOBS)"
echo "source: $SRC"
echo "builds: $BUILD_ROOT"
echo "machine: $(nproc) cores, $(uname -srm)"

SETUP_OK=1
needs_setup=0
for stage in $STAGES; do
    [ "$stage" != format ] && needs_setup=1
done
if [ "$needs_setup" = 1 ]; then
    setup || SETUP_OK=0
else
    mkdir -p "$BUILD_ROOT"
fi

for stage in $ALL_STAGES; do
    case " $STAGES " in *" $stage "*) ;; *) continue ;; esac
    CURRENT_STAGE=$stage
    STAGE_NOTE=""
    STAGE_SKIPPED=0
    start=$SECONDS
    banner "stage $stage"
    if [ "$stage" != format ] && [ "$SETUP_OK" != 1 ]; then
        note "not run: setup failed"
        RESULT[$stage]=FAIL
    elif "stage_$stage"; then
        if [ "$STAGE_SKIPPED" = 1 ]; then RESULT[$stage]=SKIP; else RESULT[$stage]=PASS; fi
    else
        RESULT[$stage]=FAIL
    fi
    NOTE[$stage]=$STAGE_NOTE
    DURATION[$stage]=$((SECONDS - start))
    echo "stage $stage: ${RESULT[$stage]} (${DURATION[$stage]} s)"
done

passed=0
failed=0
skipped=0
banner "summary"
printf '%-10s %-6s %7s  %s\n' stage result time note
for stage in $ALL_STAGES; do
    [ -n "${RESULT[$stage]:-}" ] || continue
    printf '%-10s %-6s %6ss  %s\n' "$stage" "${RESULT[$stage]}" "${DURATION[$stage]}" \
        "${NOTE[$stage]}"
    case "${RESULT[$stage]}" in
    PASS) passed=$((passed + 1)) ;;
    FAIL) failed=$((failed + 1)) ;;
    SKIP) skipped=$((skipped + 1)) ;;
    esac
done
echo
if [ "$skipped" -gt 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
else
    echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
