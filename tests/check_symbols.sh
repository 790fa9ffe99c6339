#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# tests/check_symbols.sh: the ABI guard. Each shared library must export exactly the
# symbols its list in sdk/abi/ names (one name per line, sorted; `#` lines are comments),
# so that no public function appears or disappears by accident. Run by `make check`
# (TESTS, with top_srcdir and top_builddir set) and by `make update-symbols` (--update),
# which rewrites the lists from the libraries just built.
#
# Besides the list, every exported name must start with tw_ and not tw__ (tw__ is
# internal: the libraries are built with -fvisibility=hidden and export TW_EXTERN only).
# Uses GNU nm (-D): exit 77 (skipped) where it is missing or when no shared library was
# built (--disable-shared). libtracewire-microhttpd is checked when it was built.
# docs/VERSIONING.md says what a change to a list means for -version-info.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-.}
NM_CMD=${TW_NM:-nm}
LC_ALL=C
export LC_ALL

update=0
[ "${1:-}" = "--update" ] && update=1

# The shared object a libtool .la names (dlname), or nothing.
shared_object() {
    la=$top_builddir/$1.la
    [ -f "$la" ] || return 0
    dlname=$(sed -n "s/^dlname='\(.*\)'$/\1/p" "$la")
    [ -n "$dlname" ] && [ -f "$top_builddir/.libs/$dlname" ] && echo "$top_builddir/.libs/$dlname"
}

# The defined, global dynamic symbols of a shared object, sorted. The linker's own
# markers (_init, _end, ...) are not part of the ABI.
exported() {
    $NM_CMD -D --defined-only "$1" | awk 'NF >= 3 && $2 ~ /^[A-Z]$/ { print $3 }' |
        sed 's/@.*//' | grep -vxE '_init|_fini|_edata|_end|__bss_start' | sort -u
}

listed() {
    grep -v '^#' "$1" | grep -v '^[[:space:]]*$' | sort -u
}

if ! $NM_CMD --version 2>/dev/null | grep -q 'GNU'; then
    echo "check_symbols: GNU nm (-D) not found: skipped"
    exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tw-check-symbols.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT

checked=0
failed=0
for lib in libtracewire libtracewire-microhttpd; do
    list=$top_srcdir/sdk/abi/$lib.symbols
    so=$(shared_object "$lib")
    if [ -z "$so" ]; then
        if [ "$lib" = libtracewire ]; then
            echo "check_symbols: no shared libtracewire was built (--disable-shared?): skipped"
            exit 77
        fi
        echo "check_symbols: $lib was not built (configure found no libmicrohttpd): not checked"
        continue
    fi
    if ! exported "$so" >"$tmp/$lib.now" || [ ! -s "$tmp/$lib.now" ]; then
        echo "check_symbols: $so: nm found no exported symbol"
        failed=1
        continue
    fi
    checked=$((checked + 1))
    bad=$(grep -E -v '^tw_' "$tmp/$lib.now"; grep -E '^tw__' "$tmp/$lib.now")
    if [ -n "$bad" ]; then
        echo "check_symbols: $so exports names outside the public tw_ prefix (mark only public"
        echo "functions TW_EXTERN; internal ones are tw__ and hidden):"
        echo "$bad" | sed 's/^/    /'
        failed=1
    fi
    if [ "$update" = 1 ]; then
        {
            echo "# SPDX-License-Identifier: Apache-2.0"
            echo "# Symbols exported by $lib.so, one per line, sorted (LC_ALL=C)."
            echo "# Checked by tests/check_symbols.sh; regenerate with \`make update-symbols\`"
            echo "# and read docs/VERSIONING.md before committing a change to this list."
            cat "$tmp/$lib.now"
        } >"$list.new" && mv "$list.new" "$list"
        echo "check_symbols: wrote $list ($(wc -l <"$tmp/$lib.now") symbols)"
        continue
    fi
    if [ ! -f "$list" ]; then
        echo "check_symbols: $list is missing; create it with \`make update-symbols\`"
        failed=1
        continue
    fi
    listed "$list" >"$tmp/$lib.listed"
    if ! cmp -s "$tmp/$lib.listed" "$tmp/$lib.now"; then
        echo "check_symbols: $lib.so does not export what sdk/abi/$lib.symbols lists:"
        comm -13 "$tmp/$lib.listed" "$tmp/$lib.now" | sed 's/^/    new:     /'
        comm -23 "$tmp/$lib.listed" "$tmp/$lib.now" | sed 's/^/    missing: /'
        echo "If the change is intended, run \`make update-symbols\` in the build directory,"
        echo "commit sdk/abi/$lib.symbols, and change -version-info as docs/VERSIONING.md says"
        echo "(a new symbol is an addition; a missing or changed one breaks the ABI)."
        failed=1
        continue
    fi
    echo "check_symbols: $lib.so exports the $(wc -l <"$tmp/$lib.now") listed symbols"
done
[ "$update" = 1 ] && exit "$failed"
[ "$checked" -eq 0 ] && exit 77
exit "$failed"
