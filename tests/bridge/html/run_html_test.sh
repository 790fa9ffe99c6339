#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/bridge/html/run_html_test.sh: the page `tracewire show --html` writes, tested in a real
# headless browser: Debian's Chromium driven over the DevTools protocol by playwright-core (npm,
# pinned, installed once into the build tree; its own browser download is never used). make
# check runs it from the top build directory.
#
# It writes four pages: a generated trace of exactly 1,000 spans (gen_trace.py), the real
# SmartThings trace of the fixtures, a known trace (known-trace.json, the demo's checkout
# request with an error, logs, references and an async span) and a generated trace that
# --window 1 splits into sections with references across them (gen_trace.py --split), then
# check_html.js checks them
# and writes known-trace.png and big-trace.png into tests/bridge/html-out/ (kept: look at them).
#
# Exit status follows automake: 0 pass, 1 fail, 77 skip only when Chromium, node or npm is not
# available (or the npm registry cannot be reached). CHROMIUM, NODE, NPM and TW_INTEROP_CACHE
# override the programs and the cache directory.
set -u

PACKAGES="playwright-core@1.65.1"

here=$(cd "$(dirname "$0")" && pwd)
tracewire=${1:-./bridge/tracewire}
fixtures=${TW_FIXTURES_DIR:-$here/../../fixtures/real}
chromium=${CHROMIUM:-/usr/bin/chromium}
node=${NODE:-node}
npm=${NPM:-npm}
cache_dir=${TW_INTEROP_CACHE:-./tests/interop/.cache}/html
out_dir=./tests/bridge/html-out
stamp=$cache_dir/installed

skip() {
    echo "SKIP: $*"
    exit 77
}

fail() {
    echo "FAIL: $*"
    exit 1
}

[ -x "$tracewire" ] || fail "$tracewire is not built"
[ -x "$chromium" ] || skip "Chromium not found at $chromium (Debian: apt-get install chromium)"
command -v "$node" >/dev/null 2>&1 || skip "node not found (apt-get install nodejs)"

mkdir -p "$cache_dir" "$out_dir" || fail "cannot create $cache_dir or $out_dir"
if [ "$(cat "$stamp" 2>/dev/null)" != "$PACKAGES" ]; then
    command -v "$npm" >/dev/null 2>&1 || skip "npm not found: cannot install $PACKAGES"
    rm -rf "$cache_dir/node_modules" "$stamp"
    # PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: only the library; the browser is Debian's Chromium.
    # shellcheck disable=SC2086 # the package list splits on purpose
    if ! PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 "$npm" install --prefix "$cache_dir" --no-save \
        --no-audit --no-fund --ignore-scripts --cache "$cache_dir/npm-cache" \
        --fetch-timeout=30000 --fetch-retries=1 --loglevel=error $PACKAGES \
        >"$cache_dir/npm.log" 2>&1; then
        skip "npm install failed (registry unreachable?): $(tail -n 3 "$cache_dir/npm.log" | tr '\n' ' ')"
    fi
    echo "$PACKAGES" >"$stamp"
fi

work=$(mktemp -d "$cache_dir/run.XXXXXX") || fail "cannot create a temporary directory"
trap 'rm -rf "$work"' EXIT
trap 'exit 1' INT TERM

python3 "$here/gen_trace.py" 1000 "$work/big.json" || fail "gen_trace.py failed"
"$tracewire" show --html "$work/big.html" "$work/big.json" || fail "show --html (1,000 spans) failed"
smartthings=$fixtures/openzipkin__zipkin/zipkin-lens__testdata__smartthings-mobile-web-install.json
"$tracewire" show --html "$work/real.html" "$smartthings" || fail "show --html (SmartThings) failed"
real_spans=$("$tracewire" show --list "$smartthings" | awk 'NR == 2 { print $(NF - 4) }')
[ -n "$real_spans" ] || fail "cannot count the SmartThings trace's spans"
"$tracewire" show --html "$work/known.html" "$here/known-trace.json" ||
    fail "show --html (known trace) failed"

python3 "$here/gen_trace.py" --split "$work/split.json" || fail "gen_trace.py --split failed"
"$tracewire" show --window 1 --html "$work/split.html" "$work/split.json" 2>/dev/null ||
    fail "show --window 1 --html (split trace) failed"

NODE_PATH=$cache_dir/node_modules "$node" "$here/check_html.js" "$chromium" "$out_dir" \
    "$work/big.html" 1000 "$work/real.html" "$real_spans" "$work/known.html" "$work/split.html" ||
    fail "the page does not behave as documented (above)"
echo "screenshots: $out_dir/known-trace.png $out_dir/big-trace.png"
exit 0
