#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/interop/jaeger_thrift/run_reader_interop.sh: the jaeger-thrift reader
# against an independent encoder (make check). Apache Thrift's Python library
# (Debian's python3-thrift) with code that `thrift --gen py` generates here
# from thrift/jaeger.thrift and thrift/agent.thrift (which includes zipkincore.thrift) writes Batch structs and an
# emitBatch message in the binary and the compact protocol
# (write_batches.py); our reader reads them (read_driver.c) and the two JSON
# documents are compared field by field.
#
# Exit status follows automake: 0 pass, 1 fail, 77 skip (python3-thrift or
# the thrift compiler missing). Environment: TW_PYTHON3 (default
# /usr/bin/python3), THRIFT, top_srcdir (set by make check).
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=${top_srcdir:-$here/../../..}
driver=${1:-./tests/interop/jaeger_thrift/read_driver}
python=${TW_PYTHON3:-/usr/bin/python3}
thrift=${THRIFT:-thrift}

skip() {
    echo "SKIP: $*"
    exit 77
}
fail() {
    echo "FAIL: $*"
    exit 1
}

[ -x "$driver" ] || fail "driver $driver is not built"
"$python" -c 'import thrift.protocol.TCompactProtocol' 2>/dev/null ||
    skip "$python cannot import Apache Thrift (apt-get install python3-thrift)"
command -v "$thrift" >/dev/null 2>&1 || skip "no thrift compiler ($thrift)"

work=$(mktemp -d "${TMPDIR:-/tmp}/tw-jaeger-read.XXXXXX") || fail "no temporary directory"
trap 'rm -rf "$work"' EXIT
trap 'exit 1' INT TERM

mkdir "$work/gen" || fail "mkdir"
for idl in jaeger zipkincore agent; do
    "$thrift" -I "$srcdir/thrift" --gen py -out "$work/gen" "$srcdir/thrift/$idl.thrift" ||
        fail "thrift --gen py $idl.thrift"
done
"$python" "$here/write_batches.py" "$work/gen" "$work" || fail "write_batches.py"
status=0
for proto in binary compact; do
    if ! "$driver" "$work/$proto.bin" >"$work/$proto.json"; then
        echo "FAIL: $proto: the reader rejected or failed"
        status=1
        continue
    fi
    if "$python" - "$work/expected.json" "$work/$proto.json" <<'PY'; then
import json, sys
want = json.load(open(sys.argv[1]))
got = json.load(open(sys.argv[2]))
bad = 0
if len(want) != len(got):
    print("span count: want %d, got %d" % (len(want), len(got)))
    sys.exit(1)
for i, (w, g) in enumerate(zip(want, got)):
    for k in w:
        if w[k] != g.get(k):
            print("span %d field %s: want %r, got %r" % (i, k, w[k], g.get(k)))
            bad += 1
sys.exit(1 if bad else 0)
PY
        echo "PASS: $proto: $(grep -c '"span_id"' "$work/$proto.json") spans equal field by field"
    else
        echo "FAIL: $proto: the spans differ"
        status=1
    fi
done
exit $status
