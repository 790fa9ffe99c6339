#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/bench/agent/run_agent_bench.sh BUILDDIR SRCDIR: the agent's part of `make bench`
# (run_agent_bench.py says what is measured and how). TW_AGENT_BENCH_SECONDS: seconds per case
# (default 5).
set -u
builddir=$(cd "$1" && pwd)
srcdir=$(cd "$2" && pwd)
[ -x "$builddir/bridge/tracewire" ] || { echo "run_agent_bench.sh: build tracewire first"; exit 1; }
exec "${TW_PYTHON3:-python3}" "$srcdir/tests/bench/agent/run_agent_bench.py" "$builddir" \
    "${TW_AGENT_BENCH_SECONDS:-5}"
