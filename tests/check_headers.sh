#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# tests/check_headers.sh: every public header stands alone (CONTRIBUTING.md, "Code conventions"; "Plain C
# headers"). Run by `make check` (TESTS) with top_srcdir, top_builddir, CC and CXX set
# through TESTS_ENVIRONMENT.
#
# For each sdk/include/tracewire/*.h in the source tree, plus the configure-generated
# version.h in the build tree, it:
#   1. includes the header (twice: the guard must hold) into an otherwise empty file and
#      compiles it as C11 (-std=c11 -pedantic -Wall -Wextra -Wstrict-prototypes -Werror)
#      and as C++11 (-std=c++11 -pedantic -Werror), with only the tracewire include
#      directories on the path: no GLib, curl, Thrift or OpenSSL;
#   2. checks that it includes nothing but <stddef.h> <stdint.h> <stdbool.h> <stdarg.h>
#      and other tracewire/ headers;
#   3. checks that a header declaring functions (TW_EXTERN) has extern "C" guards.
# Contrib headers (instrumentation of one library: curl.h, microhttpd.h, glib.h,
# pthread.h; see contrib_module below) are the exception to 1 and 2: they include their
# library's header, so they are compiled with that library's cflags (from pkg-config;
# skipped, not failed, when it is not installed) and may include anything; in exchange
# tracewire.h must not include them.
# Exit status: 0 all good, 1 a header failed (named in the output), 77 (automake's
# "skipped") when no working C++ compiler is found.

top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
CC=${CC:-cc}

# configure.ac may not run AC_PROG_CXX, which leaves CXX empty: then use whichever C++
# compiler is on PATH. A compiler that cannot build an empty file counts as missing.
if [ -z "${CXX:-}" ]; then
    for candidate in c++ g++ clang++; do
        if command -v "$candidate" >/dev/null 2>&1; then
            CXX=$candidate
            break
        fi
    done
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tw-check-headers.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 99' HUP INT TERM

if [ -z "${CXX:-}" ]; then
    echo "SKIP: no C++ compiler (CXX is empty and none of c++ g++ clang++ is on PATH)"
    exit 77
fi
echo 'int main(void) { return 0; }' >"$tmp/probe.cc"
# shellcheck disable=SC2086 # CC/CXX may carry flags ("gcc -std=gnu11").
if ! $CXX -c -o "$tmp/probe.o" "$tmp/probe.cc" >/dev/null 2>&1; then
    echo "SKIP: C++ compiler '$CXX' does not work"
    exit 77
fi

src_inc="$top_srcdir/sdk/include"
build_inc="$top_builddir/sdk/include"

# The headers to check: every *.h in the source tree, and version.h from the build tree
# (in an in-tree build both are the same file: listed once).
headers=""
for h in "$src_inc"/tracewire/*.h; do
    [ -f "$h" ] && headers="$headers $h"
done
if [ -f "$build_inc/tracewire/version.h" ] && [ ! -f "$src_inc/tracewire/version.h" ]; then
    headers="$headers $build_inc/tracewire/version.h"
fi
if [ -z "$headers" ]; then
    echo "FAIL: no headers found under $src_inc/tracewire"
    exit 1
fi
if [ ! -f "$build_inc/tracewire/version.h" ] && [ ! -f "$src_inc/tracewire/version.h" ]; then
    echo "FAIL: version.h not generated (expected $build_inc/tracewire/version.h)"
    exit 1
fi

c_flags="-std=c11 -pedantic -Wall -Wextra -Wstrict-prototypes -Werror"
cxx_flags="-std=c++11 -pedantic -Werror"
inc_flags="-I$src_inc -I$build_inc"

is_public_header() {
    # $1: an include as written, e.g. <tracewire/span.h> or "span.h" (a sibling).
    case "$1" in
    '<tracewire/'*'.h>' | '"tracewire/'*'.h"')
        file=$(printf '%s' "$1" | sed 's/^[<"]//; s/[>"]$//')
        ;;
    '"'*'.h"')
        file=tracewire/$(printf '%s' "$1" | sed 's/^"//; s/"$//')
        ;;
    *) return 1 ;;
    esac
    case "$file" in
    */../* | tracewire/*/*) return 1 ;;
    esac
    [ -f "$src_inc/$file" ] || [ -f "$build_inc/$file" ]
}

# contrib_module <basename>: the pkg-config module a contrib header is built against ("-"
# for a header of the C library itself); nothing (status 1) for a plain header.
contrib_module() {
    case "$1" in
    curl.h) echo libcurl ;;
    microhttpd.h) echo libmicrohttpd ;;
    glib.h) echo glib-2.0 ;;
    pthread.h) echo - ;;
    *) return 1 ;;
    esac
}

failed=0
checked=0
skipped=0
for h in $headers; do
    name=tracewire/$(basename "$h")
    ok=yes
    dep_flags=""
    if module=$(contrib_module "$(basename "$h")"); then
        if [ "$module" = - ]; then
            dep_flags=""
        elif ! dep_flags=$(${PKG_CONFIG:-pkg-config} --cflags "$module" 2>/dev/null); then
            echo "skip: $name (contrib header; $module is not installed)"
            skipped=$((skipped + 1))
            continue
        fi
        if grep -q "^[[:space:]]*#[[:space:]]*include[[:space:]]*[<\"]\(tracewire/\)\{0,1\}$(basename "$h")[>\"]" \
            "$src_inc/tracewire/tracewire.h"; then
            echo "FAIL: tracewire.h includes the contrib header $name (it must stay optional)"
            ok=no
        fi
    fi

    # The declaration after the includes keeps the file from being an empty translation
    # unit (an error under -pedantic) when the header holds only macros (version.h).
    printf '#include <%s>\n#include <%s>\ntypedef int tw_check_headers_unit;\n' \
        "$name" "$name" >"$tmp/unit.c"
    cp "$tmp/unit.c" "$tmp/unit.cc"

    # shellcheck disable=SC2086
    if ! $CC $c_flags $inc_flags $dep_flags -fsyntax-only "$tmp/unit.c" >"$tmp/out" 2>&1; then
        echo "FAIL: $name does not compile alone as C11 ($CC $c_flags):"
        sed 's/^/    /' "$tmp/out"
        ok=no
    fi
    # shellcheck disable=SC2086
    if ! $CXX -x c++ $cxx_flags $inc_flags $dep_flags -fsyntax-only "$tmp/unit.cc" >"$tmp/out" 2>&1; then
        echo "FAIL: $name does not compile alone as C++11 ($CXX $cxx_flags):"
        sed 's/^/    /' "$tmp/out"
        ok=no
    fi

    # Includes: only the four freestanding C headers, or other public tracewire headers
    # (either spelling, <...> or "...").
    # Contrib headers may include their library's headers: not checked.
    includes=""
    [ -z "$module" ] && includes=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*\([<"][^>"]*[>"]\).*/\1/p' "$h")
    for inc in $includes; do
        case "$inc" in
        '<stddef.h>' | '<stdint.h>' | '<stdbool.h>' | '<stdarg.h>') ;;
        *)
            if ! is_public_header "$inc"; then
                echo "FAIL: $name includes $inc; public headers may include only" \
                    "<stddef.h> <stdint.h> <stdbool.h> <stdarg.h> and tracewire/ headers"
                ok=no
            fi
            ;;
        esac
    done

    if grep -q 'TW_EXTERN' "$h" && ! grep -q 'extern "C"' "$h"; then
        # common.h defines TW_EXTERN and declares functions, so it is checked like the rest.
        echo "FAIL: $name declares TW_EXTERN functions but has no extern \"C\" guard"
        ok=no
    fi

    checked=$((checked + 1))
    if [ "$ok" = yes ]; then
        echo "ok: $name"
    else
        failed=$((failed + 1))
    fi
done

echo "$checked headers checked, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
