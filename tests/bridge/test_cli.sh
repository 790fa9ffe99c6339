#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/bridge/test_cli.sh: what a user meets before any subcommand does its work, driven
# through the built command (make check):
#   - a mistyped command, subcommand or option is answered with the nearest known one;
#   - under a UTF-8 locale GLib's help reads "[OPTION…]", not "[OPTION?]" (setlocale);
#   - every command's --help names its manual page, and that page has a source in
#     docs/man/ (so a new command cannot ship without one);
#   - convert writes nothing, and creates no --output, when no input could be opened
#     (exit 2), and still converts the inputs that open when only some do (exit 1);
#   - the bash completion (bridge/completion/tracewire.bash) is valid bash and completes
#     commands, subcommands, options and format names, asking the built command.
# Usage: test_cli.sh [TRACEWIRE] (default ./bridge/tracewire, from the top build directory).
set -u

tw=${1:-./bridge/tracewire}
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
completion=$top_srcdir/bridge/completion/tracewire.bash
[ -x "$tw" ] || {
    echo "FAIL: $tw is not built"
    exit 1
}
case $tw in /*) ;; *) tw=$(pwd)/$tw ;; esac
work=$(mktemp -d "${TMPDIR:-/tmp}/tw-cli.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 1' INT TERM

passed=0
failed=0
pass() {
    passed=$((passed + 1))
    echo "PASS: $1"
}
fail() {
    failed=$((failed + 1))
    echo "FAIL: $1"
    shift
    for line in "$@"; do echo "  $line"; done
}

# expect NAME STATUS STDERR_REGEX ARGS...: exit STATUS, nothing on stdout, stderr matching.
expect() {
    name=$1 status=$2 pattern=$3
    shift 3
    "$tw" "$@" </dev/null >"$work/out" 2>"$work/err"
    rc=$?
    if [ "$rc" -eq "$status" ] && [ ! -s "$work/out" ] && grep -Eq -- "$pattern" "$work/err"; then
        pass "$name"
    else
        fail "$name" "exit $rc (expected $status); stderr: $(cat "$work/err")" \
            "stdout: $(head -c 200 "$work/out")"
    fi
}

# ---- suggestions ---------------------------------------------------------------------------
expect "a mistyped command suggests the nearest" 2 "unknown command 'conver'; did you mean 'convert'" conver
expect "a command prefix suggests the command" 2 "did you mean 'context'" cont
expect "a mistyped top-level option suggests --version" 2 "did you mean '--version'" --verison
expect "a word near nothing suggests nothing" 2 "^tracewire: unknown command 'frobnicate'$" frobnicate
expect "a mistyped subcommand suggests the nearest" 2 "did you mean 'extract'" context extrct
expect "a mistyped convert option suggests the nearest" 2 \
    "Unknown option --fromm \\(did you mean --from\\?\\)" convert --fromm dapper
expect "a mistyped option in --opt=value form" 2 "did you mean --window\\?" convert --windw=3 --to dapper
expect "a mistyped context option suggests the nearest" 2 "did you mean --pretty\\?" \
    context extract --prety
expect "an option near nothing gets no suggestion" 2 "Unknown option --zzzzzzzz \\(see" \
    convert --zzzzzzzz

# ---- locale: GLib's help in the user's character set -----------------------------------------
utf8=""
for loc in C.UTF-8 C.utf8 en_US.UTF-8 en_US.utf8; do
    if locale -a 2>/dev/null | grep -qx "$loc"; then
        utf8=$loc
        break
    fi
done
if [ -n "$utf8" ]; then
    LC_ALL=$utf8 "$tw" convert --help >"$work/out" 2>&1
    if grep -qF '[OPTION…]' "$work/out" && ! grep -qF '[OPTION?]' "$work/out"; then
        pass "LC_ALL=$utf8: convert --help reads [OPTION…]"
    else
        fail "LC_ALL=$utf8: convert --help reads [OPTION…]" "$(head -n 3 "$work/out")"
    fi
else
    echo "SKIP: no UTF-8 locale installed (locale -a): the [OPTION…] check"
fi

# ---- every command's --help names its manual page ---------------------------------------------
"$tw" --help >"$work/top" 2>&1
if grep -q 'tracewire(1)' "$work/top"; then
    pass "tracewire --help names tracewire(1)"
else
    fail "tracewire --help names tracewire(1)" "$(cat "$work/top")"
fi
commands=$(awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 } on && /^  [a-z]/ { print $1 }' "$work/top")
[ -n "$commands" ] || fail "tracewire --help lists commands" "$(cat "$work/top")"
for cmd in $commands; do
    "$tw" "$cmd" --help >"$work/out" 2>&1
    if grep -q "tracewire-$cmd(1)" "$work/out"; then
        pass "tracewire $cmd --help names tracewire-$cmd(1)"
    else
        fail "tracewire $cmd --help names tracewire-$cmd(1)" "$(tail -n 3 "$work/out")"
    fi
    if [ -f "$top_srcdir/docs/man/tracewire-$cmd.1.scd" ]; then
        pass "docs/man/tracewire-$cmd.1.scd exists"
    else
        fail "docs/man/tracewire-$cmd.1.scd exists" "every command has a manual page (CONTRIBUTING.md)"
    fi
done
for sub in extract inject; do
    "$tw" context "$sub" --help >"$work/out" 2>&1
    if grep -q "tracewire-context(1)" "$work/out"; then
        pass "tracewire context $sub --help names tracewire-context(1)"
    else
        fail "tracewire context $sub --help names tracewire-context(1)" "$(tail -n 3 "$work/out")"
    fi
done

# ---- convert: nothing written when no input opens -------------------------------------------
printf 'keep me\n' >"$work/existing.json"
expect "convert: no input opens: exit 2, nothing on stdout" 2 \
    "missing-1: cannot open: No such file or directory" \
    convert --to zipkin-v2-json "$work/missing-1" "$work"
if grep -q "no input could be opened" "$work/err" && grep -q "Is a directory" "$work/err"; then
    pass "convert: each input is named, a directory too"
else
    fail "convert: each input is named, a directory too" "$(cat "$work/err")"
fi
expect "convert -o: no input opens: exit 2" 2 "no input could be opened" \
    convert --to zipkin-v2-json -o "$work/new.json" "$work/missing-1"
if [ ! -e "$work/new.json" ]; then
    pass "convert -o: the output file is not created"
else
    fail "convert -o: the output file is not created"
fi
expect "convert -o over an existing file: exit 2" 2 "no input could be opened" \
    convert --to zipkin-v2-json -o "$work/existing.json" "$work/missing-1"
if [ "$(cat "$work/existing.json")" = "keep me" ]; then
    pass "convert -o: an existing output file is left untouched"
else
    fail "convert -o: an existing output file is left untouched" "$(head -c 100 "$work/existing.json")"
fi
: >"$work/empty.log"
"$tw" convert --from dapper --to zipkin-v2-json "$work/missing-1" "$work/empty.log" \
    >"$work/out" 2>"$work/err"
rc=$?
if [ "$rc" -eq 1 ] && [ "$(tr -d ' \n' <"$work/out")" = "[]" ]; then
    pass "convert: one input opens: it converts, exit 1 for the other"
else
    fail "convert: one input opens: it converts, exit 1 for the other" "exit $rc" \
        "stdout: $(head -c 100 "$work/out")" "stderr: $(cat "$work/err")"
fi

# ---- bash completion ------------------------------------------------------------------------
if ! command -v bash >/dev/null 2>&1; then
    echo "SKIP: no bash: the completion checks"
else
    if bash -n "$completion"; then
        pass "completion: bash -n"
    else
        fail "completion: bash -n"
    fi
    # complete WORD...: what the completion offers for the command line "tracewire WORD...",
    # the last word being the one under the cursor; one candidate per line, sorted.
    complete() {
        # shellcheck disable=SC2016 # expanded by the inner bash
        bash --norc --noprofile -c '
            source "$0" || exit 1
            COMP_WORDS=("$@")
            COMP_CWORD=$(($# - 1))
            _tracewire
            printf "%s\n" "${COMPREPLY[@]}"' "$completion" "$tw" "$@" 2>&1 | sort
    }
    # offers NAME EXPECTED WORD...: the candidates include every word of EXPECTED.
    offers() {
        name=$1 expected=$2
        shift 2
        got=$(complete "$@")
        for word in $expected; do
            if ! printf '%s\n' "$got" | grep -qxF -- "$word"; then
                fail "completion: $name" "missing '$word' in: $(echo $got)"
                return
            fi
        done
        pass "completion: $name"
    }
    # exactly NAME EXPECTED WORD...: the candidates are exactly EXPECTED.
    exactly() {
        name=$1 expected=$2
        shift 2
        got=$(complete "$@" | tr '\n' ' ' | sed 's/ $//')
        if [ "$got" = "$expected" ]; then
            pass "completion: $name"
        else
            fail "completion: $name" "got '$got', expected '$expected'"
        fi
    }
    # shellcheck disable=SC2086 # the list of commands
    offers "every command of tracewire --help" "$(echo $commands) --help --version" ""
    offers "a command prefix" "context convert" co
    exactly "context's subcommands" "extract inject" context ""
    exactly "an option of context extract" "--format" context extract --f
    offers "context --format values" "auto jaeger b3 b3-single w3c" context extract --format ""
    offers "convert options" "--from --to --output --send --window --list-formats --help" convert --
    exactly "a convert option prefix" "--window" convert --win
    offers "convert --to: the output formats" "dapper zipkin-v2-json jaeger-json otlp-json" \
        convert --to ""
    if complete convert --to "" | grep -qx 'zipkin-v1-thrift\|custom'; then
        fail "completion: convert --to offers no input-only format"
    else
        pass "completion: convert --to offers no input-only format"
    fi
    exactly "convert --from prefix" "zipkin-v1-json zipkin-v1-thrift zipkin-v2-json zipkin-v2-proto" \
        convert --from zipkin-
    exactly "convert --to=VALUE form" "--to=otlp-json --to=otlp-proto" convert --to=otl
    exactly "convert --skew values" "adjust off" convert --skew ""
    : >"$work/spans-one.log"
    exactly "convert: input files" "$work/spans-one.log" convert "$work/spans-o"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
