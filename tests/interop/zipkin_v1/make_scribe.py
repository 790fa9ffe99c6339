#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tests/interop/zipkin_v1/make_scribe.py: Scribe log lines written by an
independent Thrift implementation (Apache Thrift's Python library, Debian's
python3-thrift, with code generated from thrift/zipkincore.thrift by
`thrift --gen py`), read back by tracewire's zipkin-v1-thrift reader
(through tests/interop/zipkin_v1/scribe_dump), compared field by field.

Usage: make_scribe.py GEN_PY_DIR SCRIBE_DUMP WORK_DIR

The log holds, in order: a bare base64 line, a "zipkin\t"-prefixed line,
an entry of another category (skipped), a MIME-wrapped entry (76-column
lines, as Finagle writes), and a raw binary list<Span> written with
TBinaryProtocol in a second file. Expected model spans follow the
conversion rules of sdk/wire/zipkin/zipkin_v1.c (docs/bridge.md).
Exit status 0 when every field matches, 1 otherwise.
"""
import base64
import json
import struct
import subprocess
import sys

sys.path.insert(0, sys.argv[1])
from thrift.protocol import TBinaryProtocol  # noqa: E402
from thrift.transport import TTransport  # noqa: E402
from zipkincore import ttypes as z  # noqa: E402

dump, work = sys.argv[2], sys.argv[3]


def ip(text):
    return struct.unpack("!i", bytes(int(p) for p in text.split(".")))[0]


def ep(service, ipv4="0.0.0.0", port=0, ipv6=None):
    # i16 on the wire: ports above 32767 are written as negative numbers
    return z.Endpoint(ipv4=ip(ipv4), port=port - 65536 if port > 32767 else port,
                      service_name=service, ipv6=ipv6)


def ann(ts, value, host):
    return z.Annotation(timestamp=ts, value=value, host=host)


def ba(key, value, kind, host=None):
    return z.BinaryAnnotation(key=key, value=value, annotation_type=kind, host=host)


web = ep("web", "10.0.0.1")
api = ep("api", "10.0.0.2", 40000)
T = z.AnnotationType

# 1: a client+server RPC in one record, typed binary annotations, 128-bit trace.
rpc = z.Span(
    trace_id=-2, trace_id_high=0x0102030405060708, name="GET /users", id=-3944181038374441761,
    parent_id=77, debug=True,
    annotations=[ann(1000, "cs", web), ann(1100, "sr", api), ann(1200, "cache hit", api),
                 ann(1400, "ss", api), ann(1500, "cr", web)],
    binary_annotations=[
        ba("sa", b"\x01", T.BOOL, ep("api", "10.0.0.2", 40000)),
        ba("ca", b"\x01", T.BOOL, ep("web", "10.0.0.1", 50123)),
        ba("http.path", b"/users", T.STRING, api),
        ba("i16", struct.pack("!h", -2), T.I16, api),
        ba("i32", struct.pack("!i", 70000), T.I32, api),
        ba("i64", struct.pack("!q", -(2 ** 40)), T.I64, api),
        ba("dbl", struct.pack("!d", 2.5), T.DOUBLE, api),
        ba("flag", b"\x00", T.BOOL, api),
        ba("raw", b"\x00\xff", T.BYTES, api),
        ba("bad", b"\x01\x02\x03", T.I64, api),
    ])
# 2: a local span with lc and an IPv6 host.
local = z.Span(trace_id=5, name="compute", id=6, timestamp=2000, duration=30,
               annotations=[],
               binary_annotations=[ba("lc", b"worker", T.STRING,
                                      ep("batch", "0.0.0.0", 0,
                                         bytes.fromhex("20010db8000000000000000000000001")))])
# 3: a server-only half (no span timestamp: shared).
server = z.Span(trace_id=5, name="handle", id=7, parent_id=6,
                annotations=[ann(3000, "sr", api), ann(3040, "ss", api)],
                binary_annotations=[])


def binary(obj):
    buf = TTransport.TMemoryBuffer()
    obj.write(TBinaryProtocol.TBinaryProtocol(buf))
    return buf.getvalue()


def b64(span):
    return base64.b64encode(binary(span)).decode()


mime = base64.encodebytes(binary(rpc)).decode().replace("\n", "\r\n")
assert max(len(line) for line in mime.split("\r\n")) == 76
with open(work + "/scribe.log", "w") as f:
    f.write(b64(local) + "\n")
    f.write("zipkin\t" + b64(server) + "\n")
    f.write("metrics\t" + b64(server) + "\n")
    f.write(mime)

# The raw body of POST /api/v1/spans: a TBinaryProtocol list<Span>.
buf = TTransport.TMemoryBuffer()
proto = TBinaryProtocol.TBinaryProtocol(buf)
proto.writeListBegin(12, 3)  # TType.STRUCT
for span in (local, server, rpc):
    span.write(proto)
proto.writeListEnd()
with open(work + "/spans.thrift", "wb") as f:
    f.write(buf.getvalue())


def h(v):
    return "%016x" % (v & 0xFFFFFFFFFFFFFFFF)


b64v = lambda raw: base64.b64encode(raw).decode()  # noqa: E731
expect_local = {
    "trace_id_high": h(0), "trace_id": h(5), "id": h(6), "parent_id": h(0), "name": "compute",
    "kind": None, "shared": False, "start": 2000, "duration": 30, "flags": 1,
    "service": "batch", "process_tags": {"ip": "2001:db8::1"},
    "tags": {"lc": "worker"}, "logs": []}
expect_server = {
    "trace_id_high": h(0), "trace_id": h(5), "id": h(7), "parent_id": h(6), "name": "handle",
    "kind": "server", "shared": True, "start": 3000, "duration": 40, "flags": 1,
    "service": "api", "process_tags": {"ip": "10.0.0.2", "port": 40000}, "tags": {}, "logs": []}
rpc_common = {"trace_id_high": h(0x0102030405060708), "trace_id": h(-2),
              "id": h(-3944181038374441761), "parent_id": h(77), "name": "GET /users",
              "flags": 3}
expect_client = dict(rpc_common, **{
    "kind": "client", "shared": False, "start": 1000, "duration": 500, "service": "web",
    "process_tags": {"ip": "10.0.0.1"}, "logs": [],
    "tags": {"peer.service": "api", "peer.ipv4": "10.0.0.2", "peer.port": 40000}})
expect_rpc_server = dict(rpc_common, **{
    "kind": "server", "shared": True, "start": 1100, "duration": 300, "service": "api",
    "process_tags": {"ip": "10.0.0.2", "port": 40000}, "logs": [[1200, "cache hit"]],
    "tags": {"peer.service": "web", "peer.ipv4": "10.0.0.1", "peer.port": 50123,
             "http.path": "/users", "i16": -2, "i32": 70000, "i64": -(2 ** 40), "dbl": 2.5,
             "flag": False, "raw": b64v(b"\x00\xff"), "bad": b64v(b"\x01\x02\x03")}})


def run(path, want, want_warnings):
    out = subprocess.run([dump, "thrift", path], capture_output=True, text=True)
    got = [json.loads(line) for line in out.stdout.splitlines()]
    ok = out.returncode == 0
    if not ok:
        print("scribe_dump exit status %d: %s" % (out.returncode, out.stderr))
    if len(got) != len(want):
        print("%s: %d spans, want %d" % (path, len(got), len(want)))
        ok = False
    for i, (g, w) in enumerate(zip(got, want)):
        for key in w:
            if g.get(key) != w[key]:
                print("%s: span %d: %s = %r, want %r" % (path, i, key, g.get(key), w[key]))
                ok = False
    for needle in want_warnings:
        if needle not in out.stderr:
            print("%s: no warning containing %r in %r" % (path, needle, out.stderr))
            ok = False
    return ok


ok = run(work + "/scribe.log",
         [expect_local, expect_server, expect_client, expect_rpc_server],
         ["'bad': I64 value has 3 bytes", "1 Scribe entry of categories other than 'zipkin'"])
ok = run(work + "/spans.thrift",
         [expect_local, expect_server, expect_client, expect_rpc_server],
         ["'bad': I64 value has 3 bytes"]) and ok
print("zipkin v1 Thrift interop (python3-thrift -> tracewire): %s" % ("ok" if ok else "FAILED"))
sys.exit(0 if ok else 1)
