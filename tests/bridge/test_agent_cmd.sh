#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/bridge/test_agent_cmd.sh: `tracewire agent` end to end (make check): every receiver,
# every destination format, the HTTP answers, the fault matrix, follow mode across rotation and
# kill -9, the spool, SIGTERM/SIGHUP, the config file and the sampling endpoint
# (test_agent_cmd.py, helpers in agent_harness.py). The Thrift clients are Apache Thrift's
# Python library (Debian's python3-thrift) with code `thrift --gen py` generates here from
# thrift/*.thrift. Every port is ephemeral; every process started is stopped.
#
# Exit status follows automake: 0 pass, 1 fail, 77 skip (python3-thrift or the thrift compiler
# missing). Environment: TW_PYTHON3 (default /usr/bin/python3), THRIFT, top_srcdir.
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=${top_srcdir:-$here/../..}
tracewire=${1:-./bridge/tracewire}
python=${TW_PYTHON3:-/usr/bin/python3}
thrift=${THRIFT:-thrift}

[ -x "$tracewire" ] || { echo "FAIL: $tracewire is not built"; exit 1; }
"$python" -c 'import thrift.protocol.TCompactProtocol' 2>/dev/null ||
    { echo "SKIP: $python cannot import Apache Thrift (apt-get install python3-thrift)"; exit 77; }
command -v "$thrift" >/dev/null 2>&1 || { echo "SKIP: no thrift compiler ($thrift)"; exit 77; }

work=$(mktemp -d "${TMPDIR:-/tmp}/tw-agent.XXXXXX") || { echo "FAIL: no temporary directory"; exit 1; }
trap 'rm -rf "$work"' EXIT
trap 'exit 1' INT TERM
mkdir "$work/gen" || exit 1
for idl in jaeger zipkincore agent; do
    "$thrift" -I "$srcdir/thrift" --gen py -out "$work/gen" "$srcdir/thrift/$idl.thrift" ||
        { echo "FAIL: thrift --gen py $idl.thrift"; exit 1; }
done
"$python" "$here/test_agent_cmd.py" "$tracewire" "$work/gen" "$work/run"
