#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# sdk/abi/localize-static.sh ARCHIVE PREFIX: rewrites an installed static archive so that it
# defines no global symbol outside PREFIX (tw_ for libtracewire.a: the public tw_ and the
# internal tw__ functions, which must stay global because the archive's objects call each
# other). Run by `make install` (sdk/abi/Makefile.inc, install-exec-hook) on the copy in
# $(DESTDIR)$(libdir); the shared libraries need nothing (-fvisibility=hidden).
#
# Why: the Thrift code generated at build time defines free functions (toString_TagType,
# twire_jaeger_*_get_type, ...) that a program linking libtracewire.a statically would
# otherwise see and could clash with. The IDL's c_glib namespace renames the twire_ ones
# but not toString_*, and a -D rename list would have to follow every Thrift release. So:
# link every member into one relocatable object (ld -r), make every global symbol outside
# PREFIX local (objcopy --keep-global-symbol), and put that one object in the archive.
# Calls between the former members are resolved inside the object, so nothing breaks;
# a static link now pulls the whole library (it did in practice: the members reference
# each other). Undefined references (GLib, libc, ...) stay as they are.
#
# Environment: LD (e.g. "ld -m elf_x86_64"), OBJCOPY, NM, AR, RANLIB, as configure found
# them. Exit 0 when done, 1 on failure (the archive is left as it was).
set -eu
archive=$1
prefix=$2
LD=${LD:-ld}
OBJCOPY=${OBJCOPY:-objcopy}
NM=${NM:-nm}
AR=${AR:-ar}
RANLIB=${RANLIB:-ranlib}

[ -f "$archive" ] || { echo "localize-static: $archive: no such file" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tw-localize.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
name=$(basename "$archive" .a)

# shellcheck disable=SC2086 # LD may carry options ("ld -m elf_x86_64")
$LD -r -o "$tmp/$name.o" --whole-archive "$archive"
$OBJCOPY --wildcard --keep-global-symbol="$prefix*" "$tmp/$name.o"
# shellcheck disable=SC2086
leaks=$($NM -g --defined-only "$tmp/$name.o" | awk 'NF >= 3 { print $3 }' | grep -v "^$prefix" || true)
if [ -n "$leaks" ]; then
    echo "localize-static: $archive: still global after objcopy:" >&2
    echo "$leaks" | sed 's/^/    /' >&2
    exit 1
fi
rm -f "$tmp/$name.a"
$AR cr "$tmp/$name.a" "$tmp/$name.o"
$RANLIB "$tmp/$name.a"
cp "$tmp/$name.a" "$archive.tmp" && mv "$archive.tmp" "$archive"
