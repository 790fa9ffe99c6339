#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Decode Jaeger agent datagrams with Apache Thrift's Python library.

tests/interop/jaeger_thrift_decode.py: the independent reader of the Jaeger
Thrift interop test (run_jaeger_udp.sh). It shares nothing with tracewire's
C encoder or with our thrift/ IDL: it generates Python code from the IDL that
Jaeger itself publishes (run_jaeger_udp.sh takes it from the jaeger-client npm
package) and decodes with Apache Thrift's own protocol classes.

Input: datagram files, or directories whose *.bin files are taken in name
order. The format is detected from the first byte: 0x82 is a compact-protocol
message (agent UDP 6831), 0x80 a strict binary-protocol message (agent UDP
6832), anything else a bare Batch struct in the binary protocol (collector
HTTP body). A message must be a oneway "emitBatch" and must be used up
exactly.

Output (stdout): one canonical JSON document, {"datagrams": [...]}, each entry
{"file", "format", "message"?: {"name", "type", "seqid"}, "batch": {...}}.
Keys are sorted and only fields present on the wire appear. Ids are 16 hex
digits of the unsigned value; doubles are the 16 hex digits of their IEEE-754
bits (exact, NaN included); binaries are hex. --canonicalize FILE re-prints a
JSON file in the same form, so that the test can diff what the C driver says
it sent against what was decoded.

--by-process reads the datagrams a real reporter sent, in any arrival order,
and prints {"processes": [...]}: one entry per distinct Batch.process (one
per tracer: client-uuid tells them apart) with its datagrams taken in seqNo
order, all their spans in that order, and what the datagrams say about the
transport: "datagrams" and "bytes" (counts), "formats", "datagramsWithSeqNo",
"datagramsWithStats", "seqNoSteps" (the distinct differences between
consecutive seqNos: [1] when none was lost or repeated), "seqidIsSeqNo"
(every message seqid is its Batch's seqNo modulo 2^31) and "statsRuns" (the
ClientStats, each run of equal values once). Processes are sorted by service
name and process tags by key, here and by --canonicalize: a tracer's process
tags are a set in Jaeger's model, and tracewire's API reads them by key.

The jaeger-client 3.19.0 IDL predates Batch.seqNo (3) and Batch.stats (4).
When the generated Batch lacks them, Thrift skips those fields; this script
then reads the skipped values through the same protocol object and reports
them under the names the current jaeger-idl gives them. Any other field that
the IDL does not know is listed under "unknownFields", so it shows in a diff.
"""

import argparse
import importlib
import json
import os
import struct
import subprocess
import sys
import tempfile

from thrift.Thrift import TMessageType, TType
from thrift.protocol import TBinaryProtocol, TCompactProtocol
from thrift.transport import TTransport

# Batch fields added to jaeger-idl after jaeger-client 3.19.0 vendored it.
LATE_BATCH_FIELDS = {3: ("seqNo", TType.I64), 4: ("stats", TType.STRUCT)}
CLIENT_STATS_FIELDS = {1: "fullQueueDroppedSpans", 2: "tooLargeDroppedSpans",
                       3: "failedToEmitSpans"}
MESSAGE_TYPES = {TMessageType.CALL: "CALL", TMessageType.REPLY: "REPLY",
                 TMessageType.EXCEPTION: "EXCEPTION", TMessageType.ONEWAY: "ONEWAY"}


class DecodeError(Exception):
    pass


class RecordingMixin:
    """Keeps what the generated readers skip, with its struct depth."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.depth = 0
        self.last_field_id = None
        self.skipped = []  # (depth, field id, thrift type, value)

    def readStructBegin(self):
        self.depth += 1
        return super().readStructBegin()

    def readStructEnd(self):
        self.depth -= 1
        return super().readStructEnd()

    def readFieldBegin(self):
        name, ttype, fid = super().readFieldBegin()
        self.last_field_id = fid
        return name, ttype, fid

    def skip(self, ttype):
        depth, fid = self.depth, self.last_field_id
        self.skipped.append((depth, fid, ttype, self.read_any(ttype)))

    def read_any(self, ttype):
        """Reads one value of any type, as skip() would, but keeps it."""
        simple = {TType.BOOL: self.readBool, TType.BYTE: self.readByte,
                  TType.I16: self.readI16, TType.I32: self.readI32,
                  TType.I64: self.readI64, TType.DOUBLE: self.readDouble}
        if ttype in simple:
            return simple[ttype]()
        if ttype == TType.STRING:
            return self.readBinary().hex()
        if ttype == TType.STRUCT:
            fields = {}
            self.readStructBegin()
            while True:
                _, ftype, fid = self.readFieldBegin()
                if ftype == TType.STOP:
                    break
                fields[fid] = self.read_any(ftype)
                self.readFieldEnd()
            self.readStructEnd()
            return fields
        if ttype in (TType.LIST, TType.SET):
            begin, end = ((self.readListBegin, self.readListEnd) if ttype == TType.LIST
                          else (self.readSetBegin, self.readSetEnd))
            etype, size = begin()
            items = [self.read_any(etype) for _ in range(size)]
            end()
            return items
        if ttype == TType.MAP:
            ktype, vtype, size = self.readMapBegin()
            items = [[self.read_any(ktype), self.read_any(vtype)] for _ in range(size)]
            self.readMapEnd()
            return items
        raise DecodeError("cannot skip a field of thrift type %d" % ttype)


class RecordingCompact(RecordingMixin, TCompactProtocol.TCompactProtocol):
    pass


class RecordingBinary(RecordingMixin, TBinaryProtocol.TBinaryProtocol):
    pass


def generate_python(idl_dir, thrift, out_dir):
    for name in ("zipkincore", "jaeger", "agent"):
        subprocess.run([thrift, "--gen", "py", "-I", idl_dir, "-out", out_dir,
                        os.path.join(idl_dir, name + ".thrift")], check=True)
    sys.path.insert(0, out_dir)
    return {"jaeger": importlib.import_module("jaeger.ttypes"),
            "agent": importlib.import_module("agent.Agent")}


def hex64(value):
    return "%016x" % (value & 0xFFFFFFFFFFFFFFFF)


def tag_json(tag, jaeger):
    out = {"key": tag.key, "vType": jaeger.TagType._VALUES_TO_NAMES[tag.vType]}
    for name in ("vStr", "vDouble", "vBool", "vLong", "vBinary"):
        value = getattr(tag, name)
        if value is None:
            continue
        if name == "vDouble":
            value = struct.pack(">d", value).hex()
        elif name == "vBinary":
            value = bytes(value).hex()
        out[name] = value
    return out


def span_json(span, jaeger):
    out = {"traceIdLow": hex64(span.traceIdLow), "traceIdHigh": hex64(span.traceIdHigh),
           "spanId": hex64(span.spanId), "parentSpanId": hex64(span.parentSpanId),
           "operationName": span.operationName, "flags": span.flags,
           "startTime": span.startTime, "duration": span.duration}
    if span.references is not None:
        out["references"] = [
            {"refType": jaeger.SpanRefType._VALUES_TO_NAMES[ref.refType],
             "traceIdLow": hex64(ref.traceIdLow), "traceIdHigh": hex64(ref.traceIdHigh),
             "spanId": hex64(ref.spanId)} for ref in span.references]
    if span.tags is not None:
        out["tags"] = [tag_json(t, jaeger) for t in span.tags]
    if span.logs is not None:
        out["logs"] = [{"timestamp": log.timestamp,
                        "fields": [tag_json(t, jaeger) for t in log.fields]}
                       for log in span.logs]
    return out


def stats_json(stats):
    return {name: getattr(stats, name) for name in CLIENT_STATS_FIELDS.values()}


def batch_json(batch, skipped, batch_depth, jaeger):
    process = {"serviceName": batch.process.serviceName}
    if batch.process.tags is not None:
        process["tags"] = [tag_json(t, jaeger) for t in batch.process.tags]
    out = {"process": process, "spans": [span_json(s, jaeger) for s in batch.spans]}
    if getattr(batch, "seqNo", None) is not None:
        out["seqNo"] = batch.seqNo
    if getattr(batch, "stats", None) is not None:
        out["stats"] = stats_json(batch.stats)
    unknown = []
    for depth, fid, ttype, value in skipped:
        late = LATE_BATCH_FIELDS.get(fid)
        if depth == batch_depth and late and late[1] == ttype and late[0] not in out:
            if late[0] == "stats":
                if sorted(value) != sorted(CLIENT_STATS_FIELDS):
                    raise DecodeError("Batch.stats has fields %s" % sorted(value))
                value = {CLIENT_STATS_FIELDS[k]: v for k, v in value.items()}
            out[late[0]] = value
            continue
        unknown.append({"depth": depth, "id": fid, "type": ttype, "value": value})
    return out, unknown


def decode(path, modules):
    with open(path, "rb") as f:
        data = f.read()
    if not data:
        raise DecodeError("empty datagram")
    transport = TTransport.TMemoryBuffer(data)
    if data[0] == 0x82:
        fmt, protocol = "compact-message", RecordingCompact(transport)
    elif data[0] == 0x80:
        fmt, protocol = "binary-message", RecordingBinary(transport)
    else:
        fmt, protocol = "binary-struct", RecordingBinary(transport)
    entry = {"file": os.path.basename(path), "format": fmt}
    if fmt.endswith("-message"):
        name, mtype, seqid = protocol.readMessageBegin()
        if name != "emitBatch" or mtype != TMessageType.ONEWAY:
            raise DecodeError("message %r of type %d is not a oneway emitBatch" % (name, mtype))
        args = modules["agent"].emitBatch_args()
        args.read(protocol)
        protocol.readMessageEnd()
        if args.batch is None:
            raise DecodeError("emitBatch without its batch argument")
        entry["message"] = {"name": name, "type": MESSAGE_TYPES[mtype], "seqid": seqid}
        batch, batch_depth = args.batch, 2
    else:
        batch = modules["jaeger"].Batch()
        batch.read(protocol)
        batch_depth = 1
    batch.validate()
    rest = transport.read(len(data))
    if rest:
        raise DecodeError("%d bytes after the end of the %s" % (len(rest), fmt))
    entry["batch"], unknown = batch_json(batch, protocol.skipped, batch_depth,
                                         modules["jaeger"])
    if unknown:
        entry["unknownFields"] = unknown
    return entry


def sorted_process(process):
    out = dict(process)
    if "tags" in out:
        out["tags"] = sorted(out["tags"], key=lambda t: (t["key"], json.dumps(t, sort_keys=True)))
    return out


def normalize_processes(document):
    """The --by-process order: processes by service name, process tags by key."""
    processes = []
    for entry in document["processes"]:
        entry = dict(entry)
        entry["process"] = sorted_process(entry["process"])
        processes.append(entry)
    processes.sort(key=lambda e: (e["process"]["serviceName"],
                                  json.dumps(e["process"], sort_keys=True)))
    return {**document, "processes": processes}


def by_process(entries):
    """Joins the datagrams of each Batch.process; entries are (entry, size)."""
    groups = {}
    for entry, size in entries:
        key = json.dumps(entry["batch"]["process"], sort_keys=True)
        groups.setdefault(key, []).append((entry, size))
    processes = []
    for key, items in groups.items():
        items.sort(key=lambda item: (item[0]["batch"].get("seqNo", -1), item[0]["file"]))
        batches = [entry["batch"] for entry, _ in items]
        seq_nos = [b["seqNo"] for b in batches if "seqNo" in b]
        stats_runs = []
        for b in batches:
            if "stats" in b and (not stats_runs or stats_runs[-1] != b["stats"]):
                stats_runs.append(b["stats"])
        out = {
            "process": json.loads(key),
            "datagrams": len(items),
            "bytes": sum(size for _, size in items),
            "formats": sorted({entry["format"] for entry, _ in items}),
            "datagramsWithSeqNo": len(seq_nos),
            "datagramsWithStats": sum(1 for b in batches if "stats" in b),
            "seqNoSteps": sorted({b - a for a, b in zip(seq_nos, seq_nos[1:])}),
            "seqidIsSeqNo": all("message" in entry and "seqNo" in entry["batch"] and
                                entry["message"]["seqid"] == entry["batch"]["seqNo"] & 0x7FFFFFFF
                                for entry, _ in items),
            "statsRuns": stats_runs,
            "spans": [span for b in batches for span in b["spans"]],
        }
        unknown = [dict(u, file=entry["file"]) for entry, _ in items
                   for u in entry.get("unknownFields", [])]
        if unknown:
            out["unknownFields"] = unknown
        processes.append(out)
    return normalize_processes({"processes": processes})


def datagram_paths(inputs):
    paths = []
    for item in inputs:
        if os.path.isdir(item):
            paths.extend(os.path.join(item, n) for n in sorted(os.listdir(item))
                         if n.endswith(".bin"))
        else:
            paths.append(item)
    return paths


def dump(document):
    json.dump(document, sys.stdout, sort_keys=True, indent=1, ensure_ascii=True)
    sys.stdout.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--idl", help="directory holding Jaeger's agent, jaeger and "
                        "zipkincore .thrift files")
    parser.add_argument("--thrift", default="thrift", help="Thrift compiler (default: thrift)")
    parser.add_argument("--canonicalize", metavar="JSON",
                        help="re-print this JSON file canonically and exit")
    parser.add_argument("--by-process", action="store_true",
                        help="join the datagrams of each process in seqNo order")
    parser.add_argument("inputs", nargs="*", help="datagram files or directories of *.bin")
    args = parser.parse_args()

    if args.canonicalize:
        with open(args.canonicalize, encoding="utf-8") as f:
            document = json.load(f)
        dump(normalize_processes(document) if "processes" in document else document)
        return 0
    if not args.idl or not args.inputs:
        parser.error("--idl and at least one input are required")
    paths = datagram_paths(args.inputs)
    if not paths:
        parser.error("no datagrams found")
    with tempfile.TemporaryDirectory(prefix="jaeger-idl-py.") as gen_dir:
        modules = generate_python(args.idl, args.thrift, gen_dir)
        if not hasattr(modules["jaeger"].Batch(), "seqNo"):
            print("note: this Jaeger IDL has no Batch.seqNo/stats; fields 3 and 4 are read "
                  "as the fields Thrift skipped", file=sys.stderr)
        datagrams = []
        for path in paths:
            try:
                datagrams.append((decode(path, modules), os.path.getsize(path)))
            except Exception as exc:  # report which datagram, then fail
                print("%s: cannot decode: %s" % (path, exc), file=sys.stderr)
                return 1
    if args.by_process:
        dump(by_process(datagrams))
    else:
        dump({"datagrams": [entry for entry, _ in datagrams]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
