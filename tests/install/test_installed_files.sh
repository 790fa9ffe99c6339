#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# tests/install/test_installed_files.sh: the staged `make install` (tests/install/
# Makefile.inc) holds what a user expects, where configure said it would go: both shared
# libraries with their development links, the headers, tracewire.pc (and
# tracewire-microhttpd.pc when built), the CMake package files, the tracewire command, the
# man pages and the bash completion. And the installed static archives define no global
# symbol outside tw_ (libtracewire.a) and tw_mhd_ (libtracewire-microhttpd.a): the
# generated Thrift code's toString_* and twire_* are local (sdk/abi/localize-static.sh).
set -u
env_file=${top_builddir:-.}/tests/install/stage.env
[ -f "$env_file" ] || { echo "FAIL: $env_file missing (make check stages the install first)"; exit 1; }
. "$env_file"

failed=0
fail() {
    failed=1
    echo "FAIL: $*"
}
has() {
    if [ -e "$TW_STAGE$1" ]; then
        echo "PASS: installed $1"
    else
        fail "not installed: $1"
    fi
}

libs="libtracewire"
[ "$TW_HAVE_MHD" = yes ] && libs="$libs libtracewire-microhttpd"
for lib in $libs; do
    if [ -e "$TW_STAGE$TW_LIBDIR/$lib.so" ] || [ -e "$TW_STAGE$TW_LIBDIR/$lib.a" ]; then
        echo "PASS: installed $TW_LIBDIR/$lib (.so or .a)"
    else
        fail "neither $lib.so nor $lib.a in $TW_LIBDIR"
    fi
done
for h in tracewire.h common.h context.h span.h tracer.h sampler.h reporter.h propagation.h \
    version.h curl.h; do
    has "$TW_INCLUDEDIR/tracewire/$h"
done
has "$TW_PKGCONFIGDIR/tracewire.pc"
has "$TW_CMAKEDIR/tracewireConfig.cmake"
has "$TW_CMAKEDIR/tracewireConfigVersion.cmake"
has "$TW_BINDIR/tracewire"
if [ "$TW_HAVE_MHD" = yes ]; then
    has "$TW_INCLUDEDIR/tracewire/microhttpd.h"
    has "$TW_PKGCONFIGDIR/tracewire-microhttpd.pc"
fi
if [ "$TW_MAN" = yes ]; then
    for page in man1/tracewire.1 man1/tracewire-context.1 man1/tracewire-convert.1 \
        man3/libtracewire.3 man7/tracewire-environment.7; do
        has "$TW_MANDIR/$page"
    done
fi
[ -n "$TW_BASH_COMPLETION_DIR" ] && has "$TW_BASH_COMPLETION_DIR/tracewire"

# The static archives: every defined global symbol carries the prefix.
check_archive() {
    archive=$TW_STAGE$TW_LIBDIR/$1.a
    if [ ! -f "$archive" ]; then
        echo "SKIP: $1.a not installed (--disable-static)"
        return
    fi
    if ! command -v nm >/dev/null 2>&1; then
        echo "SKIP: no nm: $1.a not checked"
        return
    fi
    defined=$(nm -g --defined-only "$archive" 2>/dev/null | awk 'NF >= 3 { print $3 }')
    if [ -z "$defined" ]; then
        fail "$1.a: nm lists no defined global symbol"
        return
    fi
    leaks=$(printf '%s\n' "$defined" | grep -v "^$2" | sort -u)
    if [ -n "$leaks" ]; then
        fail "$1.a defines global symbols outside $2 ($(printf '%s\n' "$leaks" | wc -l)):"
        printf '%s\n' "$leaks" | head -n 20 | sed 's/^/    /'
    else
        echo "PASS: $1.a: all $(printf '%s\n' "$defined" | wc -l) defined global symbols start with $2"
    fi
}
check_archive libtracewire tw_
[ "$TW_HAVE_MHD" = yes ] && check_archive libtracewire-microhttpd tw_mhd_

exit "$failed"
