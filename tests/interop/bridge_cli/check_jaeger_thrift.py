#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Decode `tracewire convert --to jaeger-thrift` output with Jaeger's IDL and Apache Thrift.

tests/interop/bridge_cli/check_jaeger_thrift.py: the Jaeger Thrift part of
run_convert_interop.sh. For each fixture directory WORKDIR/NNN/ it decodes
jaeger.thrift (the bridge writes CONCATENATED binary-protocol Batch structs,
one per process) with Apache Thrift's Python library and Python code that the
thrift compiler generates from the jaeger.thrift Jaeger publishes (the
jaeger-client npm package ships it), struct after struct until the end of the
file: a truncated struct, trailing bytes that are not a whole Batch, a
missing required field or a field the IDL does not know fail. Nothing of
tracewire's thrift/ IDL or C code takes part in the decoding; the helpers of
../jaeger_thrift_decode.py (the project's independent decoder) are reused.

The decoded spans must then be the spans of jaeger.json (`--to jaeger-json`
of the same fixture), as a multiset of (traceID, spanID, operationName,
references with the parentSpanId folded in as Jaeger's own Thrift-to-model
converter does, startTime, duration, flags, process serviceName and tags,
span tags, logs). Both files are tracewire outputs, but the Thrift side is
read by Jaeger's IDL, so equality shows the binary holds what the JSON says.

Usage: check_jaeger_thrift.py --idl IDL_DIR [--thrift THRIFT] WORKDIR
Prints a PASS or FAIL line per fixture, then a count; exit 0 when all pass.
"""

import argparse
import base64
import collections
import json
import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import jaeger_thrift_decode as jtd  # noqa: E402  (tests/interop/jaeger_thrift_decode.py)
from thrift.transport import TTransport  # noqa: E402


def hex64(value):
    return "%016x" % (value & 0xFFFFFFFFFFFFFFFF)


def double_key(value):
    """Doubles by their IEEE-754 bits, so NaN and -0.0 compare exactly."""
    return struct.pack(">d", float(value)).hex()


def thrift_tag(tag, jaeger):
    vtype = jaeger.TagType._VALUES_TO_NAMES[tag.vType]
    value = {"STRING": tag.vStr, "BOOL": tag.vBool, "LONG": tag.vLong,
             "DOUBLE": tag.vDouble, "BINARY": tag.vBinary}[vtype]
    if value is None:
        raise ValueError("tag %r of type %s has no v%s" % (tag.key, vtype, vtype.title()))
    if vtype == "DOUBLE":
        value = double_key(value)
    elif vtype == "BINARY":
        value = bytes(value).hex()
    return (tag.key, vtype, value)


JSON_TYPES = {"string": "STRING", "bool": "BOOL", "int64": "LONG", "float64": "DOUBLE",
              "binary": "BINARY"}


JS_MAX_SAFE_INTEGER = 2 ** 53 - 1


def json_tag(tag):
    """A Jaeger JSON tag as Jaeger writes them: int64 beyond +-(2^53-1) as a
    decimal string, NaN and the infinities as strings, binary in base64."""
    vtype = JSON_TYPES.get(tag.get("type"))
    if vtype is None:
        raise ValueError("tag %r has type %r" % (tag.get("key"), tag.get("type")))
    value = tag.get("value")
    if vtype == "LONG" and isinstance(value, str):
        if not value.lstrip("-").isdigit() or abs(int(value)) <= JS_MAX_SAFE_INTEGER:
            raise ValueError("int64 tag %r is the string %r" % (tag["key"], value))
        value = int(value)
    elif vtype == "LONG" and (not isinstance(value, int) or isinstance(value, bool)):
        raise ValueError("int64 tag %r is %r" % (tag["key"], value))
    elif vtype == "DOUBLE":
        if isinstance(value, str) and value not in ("NaN", "Infinity", "-Infinity"):
            raise ValueError("float64 tag %r is the string %r" % (tag["key"], value))
        value = double_key(value)
    elif vtype == "BINARY":
        value = base64.b64decode(value, validate=True).hex()
    return (tag["key"], vtype, value)


def tags_key(tags):
    return tuple(sorted(tags, key=repr))


def refs_key(refs, trace, parent):
    """References as Jaeger reads them: parentSpanId becomes a CHILD_OF unless
    a reference already names that span."""
    refs = list(refs)
    if parent and not any(r[2] == parent for r in refs):
        refs.append(("CHILD_OF", trace, parent))
    return tuple(sorted(refs))


def decode_batches(path, jaeger):
    """All Batch structs of the file, in order; raises on anything left over."""
    with open(path, "rb") as f:
        data = f.read()
    transport = TTransport.TMemoryBuffer(data)
    batches = []
    while transport._buffer.tell() < len(data):
        at = transport._buffer.tell()
        protocol = jtd.RecordingBinary(transport)
        batch = jaeger.Batch()
        try:
            batch.read(protocol)
            batch.validate()
            batch.process.validate()
            for span in batch.spans:
                span.validate()
                for item in (span.tags or []) + (batch.process.tags or []):
                    item.validate()
                for ref in span.references or []:
                    ref.validate()
                for log in span.logs or []:
                    log.validate()
        except Exception as exc:  # any decoding failure is the finding
            raise ValueError("Batch #%d at byte %d of %d: %s: %s"
                             % (len(batches) + 1, at, len(data), type(exc).__name__, exc))
        _, unknown = jtd.batch_json(batch, protocol.skipped, 1, jaeger)
        if unknown:
            raise ValueError("Batch #%d at byte %d: fields Jaeger's IDL does not know: %s"
                             % (len(batches) + 1, at, unknown))
        batches.append(batch)
    return batches


def thrift_spans(batches, jaeger):
    out = collections.Counter()
    for batch in batches:
        process = (batch.process.serviceName,
                   tags_key(thrift_tag(t, jaeger) for t in batch.process.tags or []))
        for s in batch.spans:
            trace = hex64(s.traceIdHigh) + hex64(s.traceIdLow)
            refs = [(jaeger.SpanRefType._VALUES_TO_NAMES[r.refType],
                     hex64(r.traceIdHigh) + hex64(r.traceIdLow), hex64(r.spanId))
                    for r in s.references or []]
            parent = hex64(s.parentSpanId) if s.parentSpanId else None
            logs = tuple(sorted((log.timestamp, tags_key(thrift_tag(t, jaeger) for t in log.fields))
                                for log in s.logs or []))
            out[(trace, hex64(s.spanId), s.operationName, refs_key(refs, trace, parent),
                 s.startTime, s.duration, s.flags, process,
                 tags_key(thrift_tag(t, jaeger) for t in s.tags or []), logs)] += 1
    return out


def json_spans(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    out = collections.Counter()
    for trace_doc in doc["data"]:
        processes = {pid: (p["serviceName"], tags_key(json_tag(t) for t in p.get("tags") or []))
                     for pid, p in trace_doc["processes"].items()}
        for s in trace_doc["spans"]:
            trace = s["traceID"].rjust(32, "0")
            refs = [(r["refType"], r["traceID"].rjust(32, "0"), r["spanID"].rjust(16, "0"))
                    for r in s.get("references") or []]
            logs = tuple(sorted((log["timestamp"],
                                 tags_key(json_tag(t) for t in log["fields"] or []))
                                for log in s.get("logs") or []))
            out[(trace, s["spanID"].rjust(16, "0"), s["operationName"], refs_key(refs, trace, None),
                 s["startTime"], s["duration"], s.get("flags", 0), processes[s["processID"]],
                 tags_key(json_tag(t) for t in s.get("tags") or []), logs)] += 1
    return out


FIELDS = ("traceID", "spanID", "operationName", "references", "startTime", "duration", "flags",
          "process", "tags", "logs")


def describe(key, only=FIELDS):
    return ", ".join("%s=%s" % (name, json.dumps(value)[:160])
                     for name, value in zip(FIELDS, key) if name in only)


def check(directory, jaeger):
    with open(os.path.join(directory, "fixture"), encoding="utf-8") as f:
        fixture = f.read().strip()
    problems = []
    batches = []
    try:
        batches = decode_batches(os.path.join(directory, "jaeger.thrift"), jaeger)
        got = thrift_spans(batches, jaeger)
        want = json_spans(os.path.join(directory, "jaeger.json"))
    except Exception as exc:  # report the fixture, then go on with the next
        problems.append("%s: %s" % (type(exc).__name__, exc))
        got = want = collections.Counter()
    if not problems:
        extra, missing = got - want, want - got
        # Same span id on both sides: name the fields that differ.
        for key in list(missing):
            twin = [k for k in extra if k[:2] == key[:2]]
            if twin:
                diff = [name for name, a, b in zip(FIELDS, key, twin[0]) if a != b]
                problems.append("span %s/%s: %s differ: jaeger-json {%s} vs Thrift {%s}" % (
                    key[0], key[1], ", ".join(diff),
                    describe(key, diff), describe(twin[0], diff)))
                missing.pop(key)
                extra.pop(twin[0])
        for key in missing.elements():
            problems.append("only in jaeger-json: " + describe(key))
        for key in extra.elements():
            problems.append("only in the Thrift batches: " + describe(key))
        ids = collections.Counter(k[:2] for k in want.elements())
        for (trace, span), n in ids.items():
            if n > 1:
                print("NOTE: %s: span id %s/%s appears %d times in the Jaeger output"
                      % (fixture, trace, span, n))
    if problems:
        print("FAIL: jaeger-thrift: %s" % fixture)
        for p in problems[:12]:
            print("  " + p)
        if len(problems) > 12:
            print("  ... %d more" % (len(problems) - 12))
        return False
    print("PASS: jaeger-thrift: %s (%d Batch structs, %d spans decoded by Apache Thrift with "
          "Jaeger's IDL = jaeger-json)" % (fixture, len(batches), sum(got.values())))
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--idl", required=True, help="directory of Jaeger's .thrift files")
    parser.add_argument("--thrift", default="thrift", help="Thrift compiler (default: thrift)")
    parser.add_argument("workdir")
    args = parser.parse_args()
    dirs = sorted(d for d in os.listdir(args.workdir) if d.isdigit())
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="jaeger-idl-py.") as gen_dir:
        jaeger = jtd.generate_python(args.idl, args.thrift, gen_dir)["jaeger"]
        for d in dirs:
            if check(os.path.join(args.workdir, d), jaeger):
                passed += 1
            else:
                failed += 1
    print("jaeger-thrift checks: %d passed, %d failed" % (passed, failed))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
