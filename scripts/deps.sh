#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# scripts/deps.sh: install every Debian 12 package that tracewire's build, tests, demo and
# benchmarks need (docs/DEPENDENCIES.md says why each one is there).
#
# Idempotent and cheap to re-run: it asks dpkg which packages are already installed and
# touches apt only when one is missing. Runs as root, or through sudo when not root.
# nodejs and npm are installed only when the `node` / `npm` commands are missing: a
# machine may carry another Node.js build (e.g. one that bundles npm), and Debian's npm
# package would conflict with it.
#
# Environment: TW_SKIP_DEPS=1 skips everything (for machines where you manage packages
# yourself; the build's configure still checks what it needs).
set -euo pipefail

if [ "${TW_SKIP_DEPS:-0}" = 1 ]; then
    echo "deps: TW_SKIP_DEPS=1, not checking packages"
    exit 0
fi

packages=(
    # toolchain and build system
    build-essential autoconf automake libtool pkg-config git ca-certificates
    # build-time code generator and libraries
    thrift-compiler libthrift-c-glib-dev libglib2.0-dev libcurl4-openssl-dev libssl-dev
    # the one JSON library (bridge, JSON wire formats)
    libjansson-dev
    # protobuf formats (OTLP, Zipkin proto3): code generated from proto/*.proto, and its library
    protobuf-c-compiler libprotobuf-c-dev
    zlib1g-dev
    # optional for the library: the microhttpd contrib, its tests and the demo (scripts/demo.sh)
    libmicrohttpd-dev
    # tests
    libcunit1-dev python3 python3-thrift valgrind clang libclang-rt-14-dev clang-format
    # benchmarks: jq is the peer that `make bench` runs against `tracewire convert`
    jq
    # manual pages (built by scdoc, linted by groff and mandoc), bash completion's
    # directory, the API reference (make docs), the CMake consumer test
    scdoc groff-base mandoc bash-completion doxygen cmake
    # the package stage: Debian packages, built and checked
    debhelper dpkg-dev fakeroot lintian
    # tests of the views: `deps --svg` runs Graphviz's dot; the HTML page runs in Chromium
    graphviz chromium
)

command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "deps: dpkg-query not found: this script supports Debian 12 (bookworm) only" >&2
    exit 1
fi

missing=()
for pkg in "${packages[@]}"; do
    # db:Status-Abbrev is "ii " for an installed package; anything else (rc, un, not
    # known at all) means it has to be installed.
    status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null || true)
    case "$status" in
    ii*) ;;
    *) missing+=("$pkg") ;;
    esac
done

if [ "${#missing[@]}" -eq 0 ]; then
    echo "deps: all ${#packages[@]} packages already installed"
    exit 0
fi

echo "deps: installing ${missing[*]}"

if [ "$(id -u)" -eq 0 ]; then
    as_root=(env)
elif command -v sudo >/dev/null 2>&1; then
    # -n: never prompt (CI has no stdin); fails at once if a password would be needed.
    as_root=(sudo -n env)
else
    echo "deps: not root and sudo is not available; install as root:" >&2
    echo "  apt-get install ${missing[*]}" >&2
    exit 1
fi

apt_opts=(-y -q -o Dpkg::Use-Pty=0 -o Acquire::Retries=3 -o DPkg::Lock::Timeout=300)

"${as_root[@]}" DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" update </dev/null
"${as_root[@]}" DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install \
    --no-install-recommends "${missing[@]}" </dev/null

# apt-get exits 0 for some partial outcomes; confirm every package is now installed.
still_missing=()
for pkg in "${missing[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null || true)
    case "$status" in
    ii*) ;;
    *) still_missing+=("$pkg") ;;
    esac
done
if [ "${#still_missing[@]}" -ne 0 ]; then
    echo "deps: still not installed: ${still_missing[*]}" >&2
    exit 1
fi
echo "deps: done"
