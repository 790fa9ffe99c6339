#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# tests/install/test_pkgconfig_consumer.sh: a program built the way the README says,
# `cc hello.c $(pkg-config --cflags --libs tracewire)`, against the staged installation
# (tests/install/Makefile.inc), and run: examples/hello.c, with its tracer writing a
# Dapper-style span log (TRACEWIRE_REPORTER=file, no network), which the installed
# `tracewire convert` then reads back. Done twice: against the shared library, and with
# libtracewire.a linked statically (its dependencies from `pkg-config --static`), which also
# proves the localized archive still links. With libmicrohttpd, a program using
# tracewire/microhttpd.h is compiled and linked through tracewire-microhttpd.pc.
#
# In a sanitizer build the programs get the library's sanitizer flags (TW_SAN_CFLAGS).
# pkg-config sees the stage through PKG_CONFIG_SYSROOT_DIR, its mechanism for staged trees:
# the -I and -L paths of the .pc files get the stage in front.
set -u
top_srcdir=${top_srcdir:-.}
env_file=${top_builddir:-.}/tests/install/stage.env
[ -f "$env_file" ] || { echo "FAIL: $env_file missing (make check stages the install first)"; exit 1; }
. "$env_file"
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
command -v "$PKG_CONFIG" >/dev/null 2>&1 || { echo "SKIP: no pkg-config"; exit 77; }

work=$(mktemp -d "${TMPDIR:-/tmp}/tw-pc-consumer.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
failed=0
fail() {
    failed=1
    echo "FAIL: $*"
}

PKG_CONFIG_PATH=$TW_STAGE$TW_PKGCONFIGDIR${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
PKG_CONFIG_SYSROOT_DIR=$TW_STAGE
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR

version=$($PKG_CONFIG --modversion tracewire) || { echo "FAIL: pkg-config cannot find tracewire"; exit 1; }
if [ "$version" = "$TW_VERSION" ]; then
    echo "PASS: pkg-config --modversion tracewire = $version"
else
    fail "pkg-config --modversion tracewire = $version, expected $TW_VERSION"
fi

# run_hello NAME BINARY: runs hello with a file reporter; the log must hold its spans.
run_hello() {
    log=$work/$1.log
    rm -f "$log"
    if ! env LD_LIBRARY_PATH="$TW_STAGE$TW_LIBDIR" JAEGER_SERVICE_NAME=hello \
        JAEGER_SAMPLER_TYPE=const JAEGER_SAMPLER_PARAM=1 TRACEWIRE_REPORTER=file \
        TRACEWIRE_LOG_FILE="$log" "$2" >"$work/$1.out" 2>&1; then
        fail "$1: hello failed: $(cat "$work/$1.out")"
        return
    fi
    spans=$(cat "$log" 2>/dev/null | grep -c '"trace_id"')
    if [ "$spans" -lt 3 ]; then
        fail "$1: hello logged $spans spans, expected at least 3"
        return
    fi
    echo "PASS: $1: hello ran and logged $spans spans"
    # The installed command reads what the installed library wrote.
    if env LD_LIBRARY_PATH="$TW_STAGE$TW_LIBDIR" "$TW_STAGE$TW_BINDIR/tracewire" convert \
        --from dapper --to zipkin-v2-json "$log" >"$work/$1.json" 2>"$work/$1.err" &&
        [ "$(grep -o '"traceId"' "$work/$1.json" | wc -l)" -eq "$spans" ]; then
        echo "PASS: $1: the installed tracewire converts the log ($spans spans)"
    else
        fail "$1: the installed tracewire convert: $(cat "$work/$1.err")"
    fi
}

cflags=$($PKG_CONFIG --cflags tracewire) && libs=$($PKG_CONFIG --libs tracewire) ||
    { echo "FAIL: pkg-config --cflags --libs tracewire"; exit 1; }
# shellcheck disable=SC2086 # word lists from pkg-config
if $CC -std=c11 ${TW_SAN_CFLAGS:-} -o "$work/hello" "$top_srcdir/examples/hello.c" $cflags $libs 2>"$work/cc.err"; then
    echo "PASS: cc hello.c \$(pkg-config --cflags --libs tracewire)"
    run_hello shared "$work/hello"
    if command -v ldd >/dev/null 2>&1; then
        if LD_LIBRARY_PATH="$TW_STAGE$TW_LIBDIR" ldd "$work/hello" | grep -q "$TW_STAGE$TW_LIBDIR/libtracewire.so"; then
            echo "PASS: shared: hello uses the staged libtracewire.so"
        else
            fail "shared: hello does not use the staged libtracewire.so: $(ldd "$work/hello" | grep tracewire)"
        fi
    fi
else
    fail "cc hello.c with pkg-config: $(cat "$work/cc.err")"
fi

archive=$TW_STAGE$TW_LIBDIR/libtracewire.a
if [ -f "$archive" ]; then
    # libtracewire.a, and its dependencies as shared libraries: the packages tracewire.pc
    # requires privately, and its own Libs.private. (`pkg-config --static` would ask for
    # static builds of the dependencies' dependencies too, which distributions rarely ship.)
    static_libs="-Wl,-Bstatic -ltracewire -Wl,-Bdynamic \
        $($PKG_CONFIG --libs-only-L tracewire) \
        $($PKG_CONFIG --libs $($PKG_CONFIG --print-requires-private tracewire)) -lpthread -lm"
    # shellcheck disable=SC2086
    if $CC -std=c11 ${TW_SAN_CFLAGS:-} -o "$work/hello-static" "$top_srcdir/examples/hello.c" $cflags \
        $static_libs 2>"$work/cc-static.err"; then
        echo "PASS: hello linked with libtracewire.a (-Wl,-Bstatic -ltracewire)"
        if command -v ldd >/dev/null 2>&1 && ldd "$work/hello-static" | grep -q libtracewire; then
            fail "static: hello-static still needs a shared libtracewire"
        fi
        run_hello static "$work/hello-static"
    else
        fail "static link: $(cat "$work/cc-static.err")"
    fi
else
    echo "SKIP: libtracewire.a not installed (--disable-static)"
fi

if [ "$TW_HAVE_MHD" = yes ]; then
    cat >"$work/mhd.c" <<'EOC'
#include <stddef.h>
#include <tracewire/microhttpd.h>
int main(void)
{
    /* NULL arguments are refused without a crash: this only proves the link. */
    tw_span *span = tw_mhd_start_span(NULL, NULL, "GET", "/");
    tw_mhd_finish_span(span, 200);
    return span == NULL ? 0 : 1;
}
EOC
    # shellcheck disable=SC2046
    if $CC -std=c11 ${TW_SAN_CFLAGS:-} -o "$work/mhd" "$work/mhd.c" $($PKG_CONFIG --cflags --libs tracewire-microhttpd) \
        2>"$work/cc-mhd.err" && LD_LIBRARY_PATH="$TW_STAGE$TW_LIBDIR" "$work/mhd"; then
        echo "PASS: a libmicrohttpd program builds and runs with tracewire-microhttpd.pc"
    else
        fail "tracewire-microhttpd.pc consumer: $(cat "$work/cc-mhd.err")"
    fi
fi
exit "$failed"
