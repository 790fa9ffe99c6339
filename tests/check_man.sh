#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# tests/check_man.sh: every manual page source (docs/man/*.scd) is built and renders
# without a single warning, as `man -l` would show it: groff -t -man -ww (all warnings) to
# nowhere, and, when mandoc is installed, mandoc -T lint -W warning. mandoc's "skipping
# paragraph macro" notes are left out: scdoc writes a .P after each heading, which both
# formatters ignore. Also checks that each page has the sections a reader looks for.
# Run by `make check` (TESTS) with top_srcdir and top_builddir set.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-.}

if ! command -v groff >/dev/null 2>&1; then
    echo "check_man: groff not found: skipped"
    exit 77
fi

failed=0
count=0
for src in "$top_srcdir"/docs/man/*.scd; do
    [ -f "$src" ] || continue
    name=$(basename "$src" .scd)
    page=$top_builddir/docs/man/$name
    count=$((count + 1))
    if [ ! -f "$page" ]; then
        echo "check_man: $name: not built (is docs/man/$name listed in TW_MAN_PAGES, docs/man/Makefile.inc?)"
        failed=1
        continue
    fi
    out=$(LC_ALL=C.UTF-8 groff -t -man -ww -z -Tutf8 "$page" 2>&1)
    if [ -n "$out" ]; then
        echo "check_man: $name: groff warns:"
        echo "$out" | sed 's/^/    /'
        failed=1
    fi
    if command -v mandoc >/dev/null 2>&1; then
        out=$(mandoc -T lint -W warning "$page" 2>&1 | grep -v 'WARNING: skipping paragraph macro')
        if [ -n "$out" ]; then
            echo "check_man: $name: mandoc -T lint warns:"
            echo "$out" | sed 's/^/    /'
            failed=1
        fi
    fi
    if grep -n '@[A-Z_]*@' "$page" >"$page.markers" 2>/dev/null && [ -s "$page.markers" ]; then
        echo "check_man: $name: markers left unsubstituted:"
        sed 's/^/    /' "$page.markers"
        failed=1
    fi
    rm -f "$page.markers"
    for section in NAME DESCRIPTION 'SEE ALSO'; do
        if ! grep -q "^\\.SH \"\\{0,1\\}$section\"\\{0,1\\}\$" "$page"; then
            echo "check_man: $name: no $section section"
            failed=1
        fi
    done
done
if [ "$count" -eq 0 ]; then
    echo "check_man: no docs/man/*.scd under $top_srcdir"
    exit 1
fi
[ "$failed" -eq 0 ] && echo "check_man: $count pages render without warnings"
exit "$failed"
