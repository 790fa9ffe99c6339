#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tests/bridge/test_convert_cmd.py: the contract of `tracewire convert` (docs/bridge.md),
driven through the built command as a user would (make check, via test_convert_cmd.sh).

Covers: usage errors (exit 2) and --list-formats; every real fixture of a supported format
(tests/fixtures/real, INDEX.md) converts to every output format without a crash, with
auto-detection agreeing with --from, and every output parses; round trips A -> B -> A where
B can hold A; bad records reported as file:line, copied verbatim to --rejects, exit 1, and
--strict stopping at the first; the summary's counts; collection-time sampling keeping whole
traces and debug traces; clock-skew adjustment; Jaeger's own ids for shared server spans;
stdin and --output; memory staying bounded on a large generated input; --send against a
scripted local backend (an outage longer than the retries, a permanent outage, 429 with
Retry-After, refused spans), its messages and its usage errors; the formats of the manual
page against --list-formats.

Usage: test_convert_cmd.py TRACEWIRE FIXTURES_DIR. TW_TEST_WRAPPER prefixes runs of the
command (e.g. valgrind) except the large-input check.
"""
import gzip
import http.server
import json
import os
import pty
import random
import re
import resource
import shlex
import signal
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time

TW = sys.argv[1] if len(sys.argv) > 1 else "./bridge/tracewire"
FIX = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "real")
WRAP = shlex.split(os.environ.get("TW_TEST_WRAPPER", ""))
WORK = tempfile.mkdtemp(prefix="tw-convert-cmd.")

passed = 0
failed = 0


def check(name, cond, *detail):
    global passed, failed
    if cond:
        passed += 1
        print("PASS: " + name)
    else:
        failed += 1
        print("FAIL: " + name)
        for d in detail:
            for line in str(d).splitlines()[:40]:
                print("  " + line)


def run(args, stdin=None, wrap=True):
    cmd = (WRAP if wrap else []) + [TW, "convert"] + args
    p = subprocess.run(cmd, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=600)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def fixture(rel):
    return os.path.join(FIX, rel)


def write(name, data):
    path = os.path.join(WORK, name)
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    return path


# The real fixtures of supported formats (INDEX.md rows), by format.
FIXTURES = {
    "zipkin-v1-json": [
        "openzipkin__zipkin/benchmarks__src__main__resources__span-rpc.json",
        "openzipkin__zipkin/benchmarks__src__main__resources__span-rpc-ipv6.json",
        "openzipkin__zipkin/benchmarks__src__main__resources__span-local.json",
        "openzipkin__zipkin/benchmarks__src__main__resources__span-client.json",
        "open-telemetry__opentelemetry-collector/translator__trace__zipkinv1__testdata__zipkin_v1_single_batch.json",
        "open-telemetry__opentelemetry-collector/translator__trace__zipkinv1__testdata__zipkin_v1_multiple_batches.json",
        "open-telemetry__opentelemetry-collector/translator__trace__zipkinv1__testdata__zipkin_v1_error_batch.json",
        "open-telemetry__opentelemetry-collector/translator__trace__zipkinv1__testdata__zipkin_v1_local_component.json",
        "open-telemetry__opentelemetry-collector/translator__trace__zipkinv2__testdata__zipkin_v2_notimestamp.json",
    ],
    "zipkin-v1-thrift": [
        "honeycombio__honeycomb-opentracing-proxy/app__testdata__payload_0.thrift",
    ],
    "jaeger-thrift": [
        "elastic__apm-server/testdata__jaeger__span.thrift",
    ],
    # Jaeger api_v2 protobuf-JSON (PostSpansRequest): INDEX.md rows 52-54.
    "jaeger-api-v2-json": [
        "elastic__apm-server/testdata__jaeger__batch_0.json",
        "elastic__apm-server/testdata__jaeger__batch_1.json",
        "elastic__apm-server/beater__jaeger__testdata__batch_2.json",
    ],
}


def index_rows():
    """(saved name, format) of every INDEX.md row."""
    rows = []
    with open(os.path.join(FIX, "INDEX.md"), encoding="utf-8") as f:
        for line in f:
            cells = [c.strip() for c in line.split("|")]
            if len(cells) > 6 and cells[1].isdigit():
                rows.append((cells[2].strip("`"), cells[5]))
    return rows


for name, fmt in index_rows():
    if fmt in ("zipkin-v2-json", "jaeger-json", "otlp-json"):
        FIXTURES.setdefault(fmt, []).append(name)
    elif fmt == "zipkin-v1-json" and name not in FIXTURES["zipkin-v1-json"]:
        FIXTURES["zipkin-v1-json"].append(name)

OUTPUTS = ["zipkin-v2-json", "zipkin-v1-json", "jaeger-json", "jaeger-thrift", "otlp-json",
           "dapper", "otlp-proto", "zipkin-v2-proto"]


def pb_fields(data):
    """The (field number, wire type, value) of a protobuf message's top level; raises on
    anything that is not the protobuf wire format (protobuf.dev, "Encoding")."""
    fields, i = [], 0

    def varint():
        nonlocal i
        v = shift = 0
        while True:
            b = data[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return v
            if shift > 63:
                raise ValueError("varint longer than 10 bytes")

    while i < len(data):
        tag = varint()
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value = varint()
        elif wire == 1:
            value, i = data[i:i + 8], i + 8
        elif wire == 5:
            value, i = data[i:i + 4], i + 4
        elif wire == 2:
            n = varint()
            value, i = data[i:i + n], i + n
            if len(value) != n:
                raise ValueError("length past the end")
        else:
            raise ValueError("wire type %d" % wire)
        if number == 0 or i > len(data):
            raise ValueError("not protobuf")
        fields.append((number, wire, value))
    return fields


def pb_sub(data, number):
    return [v for n, w, v in pb_fields(data) if n == number and w == 2]


def parse_output(fmt, data):
    """Parses an output; returns a span count or raises."""
    if fmt in ("zipkin-v2-json", "zipkin-v1-json"):
        doc = json.loads(data)
        assert isinstance(doc, list)
        return len(doc)
    if fmt == "jaeger-json":
        doc = json.loads(data)
        return sum(len(t["spans"]) for t in doc["data"])
    if fmt == "otlp-json":
        doc = json.loads(data)
        return sum(len(s["spans"]) for r in doc["resourceSpans"] for s in r["scopeSpans"])
    if fmt == "otlp-proto":
        # ExportTraceServiceRequest.resource_spans[].scope_spans[].spans[]; ids 16 and 8 bytes
        n = 0
        for rs in pb_sub(data, 1):
            for ss in pb_sub(rs, 2):
                for span in pb_sub(ss, 2):
                    assert [len(v) for v in pb_sub(span, 1)] == [16]
                    assert [len(v) for v in pb_sub(span, 2)] == [8]
                    n += 1
        return n
    if fmt == "zipkin-v2-proto":
        spans = pb_sub(data, 1)
        for span in spans:
            assert [len(v) for v in pb_sub(span, 1)] in ([8], [16])
            assert [len(v) for v in pb_sub(span, 3)] == [8]
        return len(spans)
    if fmt == "dapper":
        lines = [l for l in data.decode().split("\n") if l]
        for l in lines:
            json.loads(l)
        return len(lines)
    return len(data)


def summary_count(err, what):
    # "...; converted 5; rejected 0 records; ..."
    for part in err.replace("\n", ";").split(";"):
        words = part.strip().split()
        if what == "read" and part.strip().startswith("tracewire: convert: read"):
            return int(words[3])
        if words and words[0] == what:
            try:
                return int(words[1]) if what != "adjusted" else int(words[3])
            except (IndexError, ValueError):
                pass
        if what == "sampled" and part.strip().startswith("sampled out"):
            return int(words[2])
        if what == "split" and part.strip().startswith("traces split by the window"):
            return int(words[-1])
    return None


# ---- usage -------------------------------------------------------------------------------

rc, out, err = run([])
check("missing --to is a usage error", rc == 2 and "--to" in err, rc, err)
rc, out, err = run(["--from", "nope", "--to", "dapper"])
check("unknown input format is a usage error", rc == 2 and "nope" in err, rc, err)
rc, out, err = run(["--to", "nope"])
check("unknown output format is a usage error", rc == 2 and "nope" in err, rc, err)
rc, out, err = run(["--list-formats"])
check("--list-formats names every format",
      rc == 0 and all(f.encode() in out for f in OUTPUTS + ["zipkin-v1-thrift", "custom",
                                                            "jaeger-api-v2-json"]),
      rc, out)
rc, out, err = run(["--to", "dapper", "--sample", "2"])
check("--sample outside 0..1 is a usage error", rc == 2, rc, err)
rc, out, err = run(["--to", "dapper", os.path.join(WORK, "absent")])
check("a missing file fails with its name, before any output", rc == 2 and "absent" in err and not out,
      rc, err)

# Numeric options are range-checked and refused with the option's name, never wrapped,
# clamped or ignored (4294967297 used to become 1, -7 was ignored).
SKEW = fixture("openzipkin__zipkin/zipkin-lens__testdata__skew.json")
for opt, value, send in [("--retries", "4294967297", True), ("--timeout-ms", "4294967297", True),
                         ("--max-body-bytes", "-7", True), ("--retries", "-1", True),
                         ("--window", "-1", False), ("--window", "99999999999", False),
                         ("--max-value-bytes", "15", False), ("--max-annotations", "-3", False)]:
    target = ["--send", "http://127.0.0.1:1/api/v2/spans"] if send else ["--to", "dapper"]
    rc, out, err = run(target + [opt, value, SKEW])
    check("%s %s is a usage error naming the option" % (opt, value),
          rc == 2 and opt in err and value in err and out == b"", rc, err)

# -o or --rejects naming an input would empty it before it is read: refused, input intact.
victim = write("victim.json", open(SKEW, "rb").read())
for opt in ["-o", "--rejects"]:
    rc, out, err = run(["--to", "zipkin-v2-json", opt, victim, victim])
    check("%s naming the input is refused and the input is kept" % opt,
          rc == 2 and "names the input" in err and
          open(victim, "rb").read() == open(SKEW, "rb").read(), rc, err)

# An incomplete mapping is a usage error before any output exists (it used to fail each
# input in turn, exit 1, with -o created empty); --map without --from custom is refused
# (it used to be ignored, the run then failing on detection).
cjson = write("c.jsonl", '{"tid":"a","sid":"1","t":1700000000}\n')
cout = os.path.join(WORK, "c.out")
for args, want in [(["--from", "custom", "--map", "trace_id=tid,span_id=sid,start=t"],
                    "end= or duration="),
                   (["--map", "trace_id=tid,span_id=sid,start=t,end=t"], "--from custom"),
                   # refused before the file is read: /dev/zero would be read to the bound
                   (["--map-file", "/nonexistent/m.map"], "--from custom")]:
    if os.path.exists(cout):
        os.unlink(cout)
    rc, out, err = run(args + ["--to", "dapper", "-o", cout, cjson])
    check("%s: usage error naming it, no output created" % " ".join(args),
          rc == 2 and want in err and not os.path.exists(cout), rc, err)

# Standard input is an input too: `convert -o FILE < FILE` (no FILE argument, or "-").
for opt in ["-o", "--rejects"]:
    for extra in ([], ["-"]):
        with open(victim, "rb") as stdin_file:
            p = subprocess.run(WRAP + [os.path.abspath(TW), "convert", "--to", "zipkin-v2-json",
                                       opt, victim] + extra, stdin=stdin_file,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
        check("%s naming the file on standard input%s is refused and it is kept" %
              (opt, " (-)" if extra else ""),
              p.returncode == 2 and b"standard input" in p.stderr and
              open(victim, "rb").read() == open(SKEW, "rb").read(), p.returncode, p.stderr)

# -o and --rejects naming one file, even one that does not exist yet (both would write it).
for first, second in [("same.out", "same.out"), ("same.out", "./same.out")]:
    target = os.path.join(WORK, first)
    if os.path.exists(target):
        os.unlink(target)
    rc, out, err = run(["--to", "dapper", "-o", target, "--rejects",
                        os.path.join(WORK, second), SKEW])
    check("-o %s with --rejects %s is refused before anything is written" % (first, second),
          rc == 2 and "name the same file" in err and not os.path.exists(target), rc, err)

# "-o -" is standard output, as "-" is standard input (it used to create a file named "-").
rc_ref, out_ref, _ = run(["--to", "zipkin-v2-json", SKEW])
p = subprocess.run(WRAP + [os.path.abspath(TW), "convert", "--to", "zipkin-v2-json", "-o", "-",
                           os.path.abspath(SKEW)], cwd=WORK, stdout=subprocess.PIPE,
                   stderr=subprocess.PIPE, timeout=600)
check("-o - writes to standard output, no file named '-'",
      p.returncode == rc_ref == 0 and p.stdout == out_ref and out_ref != b"" and
      not os.path.exists(os.path.join(WORK, "-")), p.returncode, p.stderr)

# --to with --send: accepted when it is what the destination takes, refused on a conflict.
rc, out, err = run(["--to", "zipkin-v2-json", "--send", "http://127.0.0.1:1/api/v2/spans",
                    "--retries", "0", "--send-give-up", "1", SKEW])
check("--to matching the --send destination is accepted",
      rc == 1 and "conflicts" not in err and "failed 4" in err, rc, err)
rc, out, err = run(["--to", "jaeger-json", "--send", "http://127.0.0.1:1/api/v2/spans", SKEW])
check("--to conflicting with the --send destination is a usage error",
      rc == 2 and "conflicts" in err and "zipkin-v2-json" in err, rc, err)

# Binary outputs are not written to a terminal (as gzip refuses to): nothing reaches it, exit 2.
# Text outputs are, and binary ones go to a pipe or a file as before.
def run_on_pty(args):
    master, slave = pty.openpty()
    p = subprocess.run(WRAP + [TW, "convert"] + args, stdout=slave, stderr=subprocess.PIPE,
                       timeout=600)
    os.close(slave)
    os.set_blocking(master, False)
    try:
        shown = os.read(master, 65536)
    except (BlockingIOError, OSError):
        shown = b""
    os.close(master)
    return p.returncode, shown, p.stderr.decode("utf-8", "replace")


for fmt in ("otlp-proto", "zipkin-v2-proto", "jaeger-thrift"):
    for extra in ([], ["-o", "-"]):
        rc, shown, err = run_on_pty(["--to", fmt] + extra + [SKEW])
        check("--to %s %s on a terminal: refused (exit 2), nothing written" % (fmt, extra),
              rc == 2 and "writes binary: not to a terminal" in err and shown == b"", rc, err,
              shown[:80])
rc, shown, err = run_on_pty(["--to", "zipkin-v2-json", SKEW])
check("a text output is written to a terminal", rc == 0 and b"traceId" in shown, rc, err)
rc, out, err = run(["--to", "otlp-proto", SKEW])
check("a binary output to a pipe is written", rc == 0 and len(out) > 100, rc, err)

# An option taken as the name of a file to write is refused: `-o --to zipkin-v2-json` made a
# file named "--to" and then asked for --to.
for args, what in ((["-o", "--to", "zipkin-v2-json", SKEW], "--output takes a file, not '--to'"),
                   (["--to", "dapper", "--rejects", "-o", "x", SKEW],
                    "--rejects takes a file, not '-o'")):
    rc, out, err = run(args)
    check("%s: refused (exit 2) with a reason, no file made" % what.split()[0],
          rc == 2 and what in err and "(an option?)" in err and
          not os.path.exists("--to") and not os.path.exists("-o"), rc, err)

# Write errors are said even when the run already failed for another reason (rejects).
if os.path.exists("/dev/full"):
    bad = write("bad.json", "garbage\n")
    rc, out, err = run(["--from", "zipkin-v2-json", "--to", "dapper", "--rejects", "/dev/full",
                        bad])
    check("a --rejects file that cannot be written is reported",
          rc == 1 and "/dev/full: write error" in err, rc, err)
    rc, out, err = run(["--from", "zipkin-v2-json", "--to", "dapper", "-o", "/dev/full", SKEW,
                        bad])
    check("an output that cannot be written is reported with rejects too",
          rc == 1 and "/dev/full: write error" in err, rc, err)

# A configuration file is read whole, but never past its bound: /dev/zero used to grow the
# process until the system killed it.
rc, out, err = run(["--from", "custom", "--map-file", "/dev/zero", "--to", "dapper", "/dev/null"])
check("--map-file /dev/zero is refused at its bound, naming the file",
      rc == 2 and "--map-file /dev/zero: larger than" in err, rc, err)

# ---- every fixture, every output ---------------------------------------------------------

for fmt, files in sorted(FIXTURES.items()):
    for rel in files:
        path = fixture(rel)
        if not os.path.exists(path):
            check("fixture present: " + rel, False, path)
            continue
        short = rel.split("/")[-1]
        rc_auto, out_auto, err_auto = run(["--to", "zipkin-v2-json", path])
        rc_named, out_named, err_named = run(["--from", fmt, "--to", "zipkin-v2-json", path])
        check("auto-detection agrees with --from %s: %s" % (fmt, short),
              rc_auto == rc_named and out_auto == out_named, err_auto, err_named)
        for to in OUTPUTS:
            rc, out, err = run(["--from", fmt, "--to", to, path])
            ok = rc in (0, 1) and "AddressSanitizer" not in err
            n = None
            try:
                n = parse_output(to, out)
            except Exception as e:  # noqa: BLE001 - any parse failure is the finding
                ok = False
                err += "\nunparsable output: %r" % e
            # exit 1 only with a reason: a rejected record or a failed file
            if rc == 1:
                ok = ok and (summary_count(err, "rejected") or 0) > 0
            check("%s -> %s: %s (exit %d, %s spans)" % (fmt, to, short, rc, n), ok, err)

# ---- round trips: A -> B -> A ------------------------------------------------------------


def canon_zipkin(data, can_hold_shared=True):
    spans = json.loads(data)
    for s in spans:
        s.pop("debug", None)
        if not can_hold_shared:
            # OTLP has no `shared` and no "duration unknown": a span ends where it ends
            s.pop("shared", None)
            # nor a resource without a service: it is named "unknown_service"
            if s.get("localEndpoint", {}).get("serviceName") == "unknown_service":
                del s["localEndpoint"]["serviceName"]
            if s.get("tags", {}).get("error") == "":
                s["tags"]["error"] = "true"  # an error without a message
            if "timestamp" in s:
                s.setdefault("duration", 1)
        if "annotations" in s:
            s["annotations"] = sorted(s["annotations"], key=lambda a: (a["timestamp"], a["value"]))
    return sorted(spans, key=lambda s: json.dumps(s, sort_keys=True))


def canon_dapper(data):
    """Lines as objects, references as a set (Jaeger JSON lists the parent first)."""
    spans = []
    for line in data.decode().split("\n"):
        if line:
            s = json.loads(line)
            if "refs" in s:
                s["refs"] = sorted(s["refs"], key=lambda r: json.dumps(r, sort_keys=True))
            spans.append(json.dumps(s, sort_keys=True))
    return sorted(spans)


def convert_via(path, frm, via, back):
    rc1, mid, err1 = run(["--from", frm, "--to", via, path])
    midp = write("mid." + via, mid)
    rc2, out, err2 = run(["--from", via, "--to", back, midp])
    return rc1, rc2, out, err1 + err2


for rel in FIXTURES.get("zipkin-v2-json", [])[:6]:
    path = fixture(rel)
    short = rel.split("/")[-1]
    rc0, direct, err0 = run(["--from", "zipkin-v2-json", "--to", "zipkin-v2-json", path])
    for via in ("dapper", "otlp-json", "zipkin-v1-json"):
        rc1, rc2, out, err = convert_via(path, "zipkin-v2-json", via, "zipkin-v2-json")
        holds = via != "otlp-json"
        same = rc1 == rc0 and canon_zipkin(out, holds) == canon_zipkin(direct, holds)
        check("zipkin-v2-json -> %s -> zipkin-v2-json keeps every span: %s" % (via, short), same,
              err, "direct: " + direct.decode()[:600], "round trip: " + out.decode()[:600])

for rel in FIXTURES.get("zipkin-v2-json", [])[:6]:
    path = fixture(rel)
    short = rel.split("/")[-1]
    rc0, direct, err0 = run(["--from", "zipkin-v2-json", "--to", "zipkin-v2-json", path])
    rc1, rc2, out, err = convert_via(path, "zipkin-v2-json", "zipkin-v2-proto", "zipkin-v2-json")
    check("zipkin-v2-json -> zipkin-v2-proto -> zipkin-v2-json is the identity: %s" % short,
          rc1 == rc0 and out == direct, err, "direct: " + direct.decode()[:600],
          "round trip: " + out.decode()[:600])
    rc1, rc2, out, err = convert_via(path, "zipkin-v2-json", "otlp-proto", "zipkin-v2-json")
    _, _, via_json, _ = convert_via(path, "zipkin-v2-json", "otlp-json", "zipkin-v2-json")
    check("zipkin-v2-json -> otlp-proto -> zipkin-v2-json equals the trip via otlp-json: %s"
          % short, rc1 == rc0 and out == via_json, err)

for rel in FIXTURES.get("otlp-json", []):
    path = fixture(rel)
    short = rel.split("/")[-1]
    rc0, direct, err0 = run(["--from", "otlp-json", "--to", "otlp-json", path])
    rc1, rc2, out, err = convert_via(path, "otlp-json", "otlp-proto", "otlp-json")
    check("otlp-json -> otlp-proto -> otlp-json equals otlp-json -> otlp-json: %s" % short,
          rc1 == rc0 and out == direct, err, direct[:600], out[:600])

# The otlp-proto input forms: one request, or the Collector file exporter's frames (a 4-byte
# big-endian length before each request); both detected.
src = fixture("openzipkin__zipkin/zipkin-lens__testdata__messaging-kafka.json")
rc, bare, err = run(["--to", "otlp-proto", src])
framed = b"".join(len(part).to_bytes(4, "big") + part for part in (bare, bare))
pframed = write("framed.otlpb", framed)
pbare = write("bare.otlpb", bare)
rc1, one, err1 = run(["--to", "zipkin-v2-json", pbare])
rc2, two, err2 = run(["--to", "zipkin-v2-json", pframed])
check("otlp-proto reads a bare request and the file exporter's frames (detected)",
      rc1 == 0 and rc2 == 0 and one == two and len(json.loads(one)) == 28 and
      summary_count(err2, "read") == 2 * summary_count(err1, "read") == 56, err1, err2)
cut = write("cut.otlpb", bare[:len(bare) // 2])
rc, out, err = run(["--from", "otlp-proto", "--to", "zipkin-v2-json", cut])
check("a cut otlp-proto input is rejected with a byte offset, exit 1",
      rc == 1 and "byte " in err and summary_count(err, "rejected") == 1, rc, err)
notpb = write("notpb.otlpb", b"\x0a\x05\x0a\x03abc\xff\xff")
rc, out, err = run(["--from", "otlp-proto", "--to", "zipkin-v2-json", notpb])
check("input that is not protobuf is rejected, not a crash", rc == 1 and out == b"[]\n",
      rc, err)
rc, out, err = run(["--to", "zipkin-v2-json", "--send-format", "otlp-http-proto", src])
check("--send-format without --send is a usage error naming it",
      rc == 2 and "--send-format" in err and out == b"", rc, err)

for rel in FIXTURES.get("jaeger-json", [])[:4]:
    path = fixture(rel)
    short = rel.split("/")[-1]
    rc0, direct, err0 = run(["--from", "jaeger-json", "--to", "dapper", path])
    for via in ("jaeger-thrift", "jaeger-json"):
        rc1, rc2, out, err = convert_via(path, "jaeger-json", via, "dapper")
        check("jaeger-json -> %s -> dapper equals jaeger-json -> dapper: %s" % (via, short),
              canon_dapper(out) == canon_dapper(direct), err)

# ---- bad records ---------------------------------------------------------------------------

good = ('{"traceId":"0af7651916cd43dd","id":"b7ad6b7169203331","name":"get",'
        '"timestamp":1700000000000000,"duration":10,"localEndpoint":{"serviceName":"a"}}')
bad_line = '{"traceId":"zz","id":"b7ad6b7169203331","name":"bad"}'
path = write("mixed.ndjson", good + "\n" + bad_line + "\n" + good.replace("b7ad", "c7ad") + "\n")
rejects = os.path.join(WORK, "rejects.txt")
rc, out, err = run(["--from", "zipkin-v2-json", "--to", "zipkin-v2-json", "--rejects", rejects,
                    path])
check("a bad record is reported as file:line and the run goes on",
      rc == 1 and (path + ":2:") in err and len(json.loads(out)) == 2, rc, err)
check("the rejected record is copied verbatim to --rejects",
      open(rejects).read() == bad_line + "\n", open(rejects).read())
check("the summary counts the reject", summary_count(err, "rejected") == 1, err)
rc, out, err = run(["--from", "zipkin-v2-json", "--to", "zipkin-v2-json", "--strict", path])
check("--strict stops at the first rejected record",
      rc == 1 and "--strict" in err and summary_count(err, "read") == 1, rc, err)

# A --rejects that cannot be written stops the run before anything is written (every
# rejected record of a long run would be lost): a directory, a folder that does not exist.
# (Not a read-only folder: the suite may run as root, which writes there anyway.)
for rej, what in [(WORK, "a directory"), (os.path.join(WORK, "no-such-dir", "r.txt"),
                                          "a path in a missing folder")]:
    outp = os.path.join(WORK, "not-created.json")
    rc, out, err = run(["--from", "zipkin-v2-json", "--to", "zipkin-v2-json", "--rejects", rej,
                        "-o", outp, path])
    check("--rejects naming %s is refused at the start, naming it, -o not created" % what,
          rc == 1 and ("--rejects " + rej + ": cannot open for writing") in err and
          not os.path.exists(outp) and out == b"", rc, err)

# A rejected record larger than a reader holds (16 MiB for these) is still written to --rejects
# whole, byte for byte (it was cut to its first 16 MiB, or left out): the readers hand its
# bytes on as they skip them. Each case: a good record, the huge one, a good record.
HUGE = 16 * 1024 * 1024 + 300000
huge_cases = [
    ("zipkin-v2-json", [], good, '{"traceId":"' + "a" * HUGE + '","id":"1"}',
     good.replace("b7ad", "c7ad")),
    ("zipkin-v2-json", [], good, "x" * HUGE, good.replace("b7ad", "c7ad")),  # not JSON at all
    ("custom", ["--map", "trace_id=1,span_id=2,start=3,duration=4,format=tsv,header=no"],
     "1\t2\t1700000000000000\t10", "1\t3\t" + "9" * HUGE, "1\t4\t1700000000000000\t10"),
    ("dapper", [], '{"v":1,"trace_id":"1","span_id":"2","name":"op","start_us":1700000000000000,'
     '"end_us":1700000000000100,"flags":1,"process":{"service":"svc"}}',
     '{"v":1,"trace_id":"1","span_id":"3","name":"' + "n" * HUGE + '"}',
     '{"v":1,"trace_id":"1","span_id":"4","name":"op","start_us":1700000000000000,'
     '"end_us":1700000000000100,"flags":1,"process":{"service":"svc"}}'),
    ("zipkin-v1-thrift", [], "", "zipkin " + "A" * HUGE, ""),
]
for fmt, extra, first, huge, last in huge_cases:
    lines = [x for x in (first, huge, last) if x]
    big = write("huge.in", "\n".join(lines) + "\n")
    rej = os.path.join(WORK, "huge.rejects")
    rc, out, err = run(["--from", fmt, "--to", "dapper", "--rejects", rej] + extra + [big],
                       wrap=False)
    with open(rej, "rb") as f:
        kept = f.read()
    n_out = len([x for x in out.split(b"\n") if x])
    check("%s: a rejected record of %d bytes is written whole to --rejects" % (fmt, len(huge)),
          rc == 1 and kept == huge.encode() + b"\n" and summary_count(err, "rejected") == 1 and
          n_out == len(lines) - 1, rc, n_out, len(kept), kept[:80], kept[-80:], err)
    del kept
os.unlink(big)

# The same for the length-delimited binary formats: a Zipkin proto3 span over 16 MiB and an
# OTLP ResourceSpans over 64 MiB reach --rejects whole (their payload; they were left out).
def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


for fmt, limit in [("zipkin-v2-proto", 16 << 20), ("otlp-proto", 64 << 20)]:
    rc, one, err = run(["--from", "zipkin-v2-json", "--to", fmt, "-"], stdin=good.encode())
    rc, two, err = run(["--from", "zipkin-v2-json", "--to", fmt, "-"],
                       stdin=good.replace("b7ad", "c7ad").encode())
    payload = b"\x01" * (limit + 1000)  # never decoded: its length alone rejects it
    big = write("huge.pb", one + b"\x0a" + varint(len(payload)) + payload + two)
    rej = os.path.join(WORK, "huge.rejects")
    rc, out, err = run(["--from", fmt, "--to", "dapper", "--rejects", rej, big], wrap=False)
    n_out = len([x for x in out.split(b"\n") if x])
    with open(rej, "rb") as f:
        kept = f.read()
    check("%s: a rejected record of %d bytes is written whole to --rejects" % (fmt, len(payload)),
          rc == 1 and kept == payload + b"\n" and n_out == 2, rc, n_out, len(kept), err)
    del kept, payload
    os.unlink(big)

# An NDJSON record cut off at the end of its line, followed by more than 16 MiB of records:
# it is cut at the next line when the reader's limit is reached, and every record after it
# is read (before, the records past the first 16 MiB were dropped without a word).
filler = "v" * 60000
n_big = 300
recs = ['{"traceId":"0af7651916cd43dd","id":"%016x","name":"op","timestamp":1700000000000000,'
        '"duration":10,"localEndpoint":{"serviceName":"a"},"tags":{"f":"%s"}}' % (i + 1, filler)
        for i in range(n_big)]
cut = '{"traceId":"0af7651916cd43dd","id":'
big = write("cut-then-big.ndjson", cut + "\n" + "\n".join(recs) + "\n")
rej = os.path.join(WORK, "cut.rejects")
rc, out, err = run(["--from", "zipkin-v2-json", "--to", "dapper", "--window", "0", "--rejects",
                    rej, big], wrap=False)
n_out = len([x for x in out.split(b"\n") if x])
check("a cut-off NDJSON record followed by over 16 MiB of records costs only itself",
      rc == 1 and n_out == n_big and summary_count(err, "rejected") == 1 and
      open(rej, "rb").read() == cut.encode() + b"\n", rc, n_out, err)
os.unlink(big)
del recs

# One missing closing quote in a pretty-printed document: the message names the line where
# the string ran past its line end (before, only "ends inside the JSON object that starts on
# line N", the object's first line).
pretty = ('[\n  {\n    "traceId": "0af7651916cd43dd",\n    "id": "0000000000000001",\n'
          '    "name": "op",\n    "timestamp": 1700000000000000\n  },\n  {\n'
          '    "traceId": "0af7651916cd43dd",\n    "id": "0000000000000002",\n'
          '    "name": op",\n    "timestamp": 1700000000000000\n  }\n]\n')
dq = write("damaged-quote.json", pretty)
rc, out, err = run(["--from", "zipkin-v2-json", "--to", "dapper", dq])
check("a missing quote is reported at its line (11), not only at the object's first (8)",
      rc == 1 and "object that starts on line 8" in err and
      "a string runs past the end of line 11" in err, rc, err)

rc, out, err = run(["--from", "zipkin-v2-json", "--to", "dapper", "-"], stdin=good.encode())
check("'-' reads stdin", rc == 0 and len(out.split(b"\n")) == 2, rc, err)
outp = os.path.join(WORK, "out.json")
rc, out, err = run(["--to", "zipkin-v2-json", "-o", outp, path.replace("mixed", "absent"), path])
check("--output writes the file; a missing input fails the run but not the others",
      rc == 1 and len(json.load(open(outp))) == 2 and out == b"", rc, err)

# ---- detection ------------------------------------------------------------------------------
# A Dapper log written by another JSON library (spaces around ':' and ',') that has a "kind":
# detected as dapper whatever the whitespace (it was taken for Zipkin v2, every record
# rejected).
spaced = write("spaced.dapper", '{ "v" : 1, "trace_id" : "1", "span_id" : "2", "name" : "op", '
               '"kind" : "server", "start_us" : 1700000000000000, "end_us" : 1700000000000100, '
               '"flags" : 1, "process" : { "service" : "svc" } }\n')
rc, out, err = run(["--to", "zipkin-v2-json", spaced])
check("a spaced Dapper log with a kind is detected as dapper", rc == 0 and b'"id":"0000000000000002"'
      in out, err)
# When the detected reader rejects the first records and another candidate reads them, the
# message says so and names the option.
looks_v2 = write("looks_v2.json", '{"traceId":"1","id":"2","kind":"SERVER","name":"x",'
                 '"timestamp":"soon","start_us":1700000000000000,"trace_id":"1","span_id":"2",'
                 '"end_us":1700000000000100,"v":1,"process":{"service":"s"}}\n')
rc, out, err = run(["--to", "dapper", looks_v2])
check("a file whose first record the detected reader rejects names the reader that reads it",
      rc == 1 and "reads as zipkin-v2-json: name the format with --from zipkin-v2-json" in err,
      err)

# Times by magnitude, for every format: a Dapper log in milliseconds is read as such (one
# warning); --time-unit is the override.
ms_log = write("ms.dapper", '{"v":1,"trace_id":"1","span_id":"2","name":"op","start_us":'
               '1700000000123,"end_us":1700000000125,"flags":1,"process":{"service":"s"}}\n')
rc, out, err = run(["--to", "zipkin-v2-json", ms_log])
check("a Dapper log in ms is read as ms, with a warning",
      rc == 0 and b'"timestamp":1700000000123000' in out and b'"duration":2000' in out
      and "read as milliseconds" in err, out, err)
rc, out, err = run(["--to", "zipkin-v2-json", "--time-unit", "us", ms_log])
check("--time-unit us keeps the times as they are, without a warning",
      rc == 0 and b'"timestamp":1700000000123,' in out and "read as" not in err, out, err)

# ---- sampling, skew, Jaeger ids ----------------------------------------------------------

lines = []
for t in range(1, 401):
    for s in range(1, 4):
        span = {"traceId": "%016x" % (t * 0x9E3779B97F4A7C15 % (1 << 64) or 1),
                "id": "%016x" % (t * 16 + s), "name": "op", "timestamp": 1700000000000000 + s,
                "duration": 5, "localEndpoint": {"serviceName": "svc%d" % s}}
        if s > 1:
            span["parentId"] = "%016x" % (t * 16 + 1)
        if t == 7:
            span["debug"] = True
        lines.append(json.dumps(span))
path = write("many.ndjson", "\n".join(lines) + "\n")
rc, out, err = run(["--from", "zipkin-v2-json", "--to", "zipkin-v2-json", "--sample", "0.25",
                    path])
kept = json.loads(out)
per_trace = {}
for s in kept:
    per_trace[s["traceId"]] = per_trace.get(s["traceId"], 0) + 1
check("--sample keeps whole traces", rc == 0 and set(per_trace.values()) == {3}, per_trace)
check("--sample 0.25 keeps about a quarter of the traces", 60 <= len(per_trace) <= 140,
      len(per_trace))
debug_id = "%016x" % (7 * 0x9E3779B97F4A7C15 % (1 << 64))
check("--sample keeps debug traces", debug_id in per_trace, sorted(per_trace)[:5])
rc2, out2, err2 = run(["--from", "zipkin-v2-json", "--to", "zipkin-v2-json", "--sample", "0.25",
                       path])
check("--sample decides the same on every run", out2 == out)
rc, out, err = run(["--from", "zipkin-v2-json", "--to", "zipkin-v2-json", "--sample", "0",
                    path])
check("--sample 0 keeps only debug traces",
      {s["traceId"] for s in json.loads(out)} == {debug_id}, out[:300])

skew = fixture("openzipkin__zipkin/zipkin-lens__testdata__skew.json")
rc, out, err = run(["--to", "zipkin-v2-json", "--skew", "adjust", skew])
spans = json.loads(out)
clients = {s["id"]: s for s in spans if s.get("kind") == "CLIENT"}
inside = all(clients[s["id"]]["timestamp"] <= s["timestamp"] for s in spans
             if s.get("kind") == "SERVER" and s["id"] in clients)
check("--skew adjust moves a server into its client's window and reports it",
      rc == 0 and inside and (summary_count(err, "adjusted") or 0) > 0, err, out[:800])
rc, out, err = run(["--to", "zipkin-v2-json", skew])
spans = json.loads(out)
check("clock skew is left alone by default",
      not all(clients[s["id"]]["timestamp"] <= s["timestamp"] for s in spans
              if s.get("kind") == "SERVER" and s["id"] in clients), out[:800])

# Traces whose spans arrive further apart than the window go out in parts, each assembled on
# its own: the summary counts them and one warning says what a larger --window does (before,
# nothing told the user that halves had not been merged).
inter = write("interleaved.ndjson", "".join(
    '{"traceId":"%016x","id":"%016x","name":"op","timestamp":1700000000000000,"duration":10,'
    '"localEndpoint":{"serviceName":"a"}}\n' % (t, 100 * t + i) for i in range(1, 4)
    for t in (1, 2, 3)))
rc, out, err = run(["--from", "zipkin-v2-json", "--to", "zipkin-v2-json", "--window", "2", inter])
check("traces split by --window are counted once each and named in one warning",
      rc == 0 and len(json.loads(out)) == 9 and summary_count(err, "split") == 3 and
      err.count("went out in parts") == 1 and "3 traces went out in parts" in err and
      "(--window 2)" in err and "a larger --window joins them" in err, rc, err)
rc, out, err = run(["--from", "zipkin-v2-json", "--to", "zipkin-v2-json", "--window", "0", inter])
check("with --window 0 interleaved traces are split and the warning says why",
      rc == 0 and summary_count(err, "split") == 3 and "with --window 0 a part ends" in err,
      rc, err)
rc, out, err = run(["--from", "zipkin-v2-json", "--to", "zipkin-v2-json", inter])
check("the default window holds them: nothing split, no warning",
      rc == 0 and summary_count(err, "split") == 0 and "went out in parts" not in err, rc, err)

# The writers that gather spans per process (otlp-proto, jaeger-thrift) keep a trace's spans
# together, so reading their output back with the default window assembles whole traces.
# Service a's spans are large and service b's small: when each process's spans were written
# only once they filled a batch, b's spans came thousands of spans after their traces' a spans,
# and reading back split 14,700 of 25,000 traces (otlp-proto) and 22,550 (jaeger-thrift).
pad = "x" * 1000
loc = []
for t in range(1, 25001):
    loc.append('{"traceId":"%016x","id":"%016x","name":"big","timestamp":1700000000000000,'
               '"duration":10,"localEndpoint":{"serviceName":"a"},"tags":{"pad":"%s"}}'
               % (t, 2 * t, pad))
    loc.append('{"traceId":"%016x","id":"%016x","parentId":"%016x","name":"small",'
               '"timestamp":1700000000000001,"duration":5,"localEndpoint":{"serviceName":"b"}}'
               % (t, 2 * t + 1, 2 * t))
loc_src = write("locality.ndjson", "\n".join(loc) + "\n")
del loc
for fmt in ("otlp-proto", "jaeger-thrift"):
    loc_out = os.path.join(WORK, "locality.out")
    rc, out, err = run(["--from", "zipkin-v2-json", "--to", fmt, "-o", loc_out, loc_src])
    rc2, out2, err2 = run(["--from", fmt, "--to", "zipkin-v2-json", loc_out])
    check(fmt + " output keeps each trace's spans together (read back: none split)",
          rc == 0 and rc2 == 0 and summary_count(err2, "read") == 50000 and
          summary_count(err2, "split") == 0, rc, err, rc2, err2)
    os.unlink(loc_out)
os.unlink(loc_src)

rpc = fixture("openzipkin__zipkin/benchmarks__src__main__resources__span-rpc.json")
rc, out, err = run(["--to", "jaeger-json", rpc])
trace = json.loads(out)["data"][0]
ids = {s["spanID"] for s in trace["spans"]}
server = [s for s in trace["spans"]
          if any(t["key"] == "span.kind" and t["value"] == "server" for t in s["tags"])]
client = [s for s in trace["spans"]
          if any(t["key"] == "span.kind" and t["value"] == "client" for t in s["tags"])]
check("Jaeger gets a shared server span with its own id under its client",
      rc == 0 and len(ids) == 2 and len(server) == 1 and len(client) == 1 and
      server[0]["references"][0]["spanID"] == client[0]["spanID"] and
      server[0]["processID"] != client[0]["processID"], out[:1200])
rc, out, err = run(["--to", "zipkin-v2-json", rpc])
z = json.loads(out)
check("Zipkin keeps the shared span id and marks the server shared",
      len(z) == 2 and z[0]["id"] == z[1]["id"] and
      [s.get("shared") for s in z if s.get("kind") == "SERVER"] == [True], out[:800])

# ---- readers that reuse a process: each span keeps its own -----------------------------------

# The Zipkin v2 and Dapper readers keep recent endpoints/processes (at most a few
# hundred) and hand the same process again with a stamp, so that interning skips
# comparing it; 700 processes in a shuffled order make them replace entries at
# addresses the interning has seen. Every span must come out with its own.
rng = random.Random(7)
picks = [rng.randrange(700) for _ in range(6000)]
z2 = [{"traceId": "%032x" % (i + 1), "id": "%016x" % (i + 1), "name": "op",
       "timestamp": 1700000000000000 + i, "duration": 5,
       "localEndpoint": {"serviceName": "svc%d" % k, "ipv4": "10.0.%d.%d" % (k // 250, k % 250),
                         "port": 1000 + k}} for i, k in enumerate(picks)]
rc, out, err = run(["--to", "zipkin-v2-json", write("many-endpoints.json", json.dumps(z2))])
want = {s["id"]: s["localEndpoint"] for s in z2}
got = json.loads(out) if rc == 0 else []
wrong = [s["id"] for s in got if s.get("localEndpoint") != want.get(s["id"])]
check("zipkin-v2-json: 6,000 spans of 700 recurring endpoints keep their own (%d wrong)"
      % len(wrong), rc == 0 and len(got) == len(z2) and not wrong, err, wrong[:5])
lines = ['{"v":1,"trace_id":"%032x","span_id":"%016x","name":"op","start_us":%d,"end_us":%d,'
         '"flags":1,"process":{"service":"svc%d","host":"h%d","ip":"10.1.%d.%d"}}'
         % (i + 1, i + 1, 1700000000000000 + i, 1700000000000005 + i, k, k, k // 250, k % 250)
         for i, k in enumerate(picks)]
rc, out, err = run(["--to", "zipkin-v2-json", write("many-processes.dapper", "\n".join(lines))])
got = json.loads(out) if rc == 0 else []
wrong = [s["id"] for s in got
         if s.get("localEndpoint", {}).get("serviceName") != "svc%d" % picks[int(s["id"], 16) - 1]]
check("dapper: 6,000 spans of 700 recurring processes keep their own (%d wrong)" % len(wrong),
      rc == 0 and len(got) == len(lines) and not wrong, err, wrong[:5])

# ---- --send against a scripted local backend -------------------------------------------------

class Backend:
    """An HTTP receiver on loopback. script(k) gives the answer to the k-th request (from 1):
    (status, headers). It records when each request arrived and the ids of the Zipkin spans
    it accepted (2xx)."""

    def __init__(self, script):
        self.script = script
        self.lock = threading.Lock()
        self.arrivals = []
        self.accepted = []
        self.encodings = []  # each request's Content-Encoding (None: absent)
        self.accepted_spans = []  # the Zipkin spans accepted, whole
        backend = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with backend.lock:
                    backend.arrivals.append(time.monotonic())
                    backend.encodings.append(self.headers.get("Content-Encoding"))
                    k = len(backend.arrivals)
                status, headers = backend.script(k)
                if 200 <= status < 300 and self.path.endswith("/api/v2/spans"):
                    if self.headers.get("Content-Encoding") == "gzip":
                        body = gzip.decompress(body)
                    with backend.lock:
                        backend.accepted_spans.extend(json.loads(body))
                        backend.accepted.extend(s["id"] for s in json.loads(body))
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", "0")
                self.end_headers()

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d/api/v2/spans" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def dapper_spans(name, n, services=1):
    lines = ['{"v":1,"trace_id":"%016x","span_id":"%016x","name":"op","start_us":%d,'
             '"end_us":%d,"flags":1,"process":{"service":"svc%d","host":"h","ip":"10.0.0.1"}}'
             % (i, i, 1700000000000000 + i, 1700000000000005 + i, i % services)
             for i in range(1, n + 1)]
    return write(name, "\n".join(lines) + "\n")


def timed_run(args):
    start = time.monotonic()
    rc, out, err = run(args)
    return rc, out, err, time.monotonic() - start


# An outage longer than a batch's retries (503 to requests 3 to 6: two rounds of retries used
# up) lost every batch read during the cool-down that followed (200,000 spans: "sent 21751,
# failed 178249"). convert waits it out: every span is delivered, and the summary says so.
SENT_N = 3000
spans_file = dapper_spans("outage.dapper", SENT_N)
be = Backend(lambda k: (503, {}) if 3 <= k <= 6 else (200, {}))
rc, out, err, took = timed_run(["--send", be.url, "--retries", "1", "--max-body-bytes", "20000",
                                spans_file])
be.stop()
check("an outage longer than the retries: every span delivered once, exit 0 (%.1f s)" % took,
      rc == 0 and len(be.accepted) == SENT_N and len(set(be.accepted)) == SENT_N and
      "sent %d spans" % SENT_N in err and "failed 0 spans" in err, rc, len(be.accepted), err)
gap = be.arrivals[6] - be.arrivals[5] if len(be.arrivals) > 6 else 0
check("convert waited out the cool-down before trying the same batch again (%.2f s)" % gap,
      gap >= 0.9, be.arrivals[:8])

# A backend down for good: after --send-give-up failed rounds in a row convert gives up, says
# how many spans were sent, failed after being attempted and never attempted, exit 1, quickly.
be = Backend(lambda k: (200, {}) if k == 1 else (503, {}))
rc, out, err, took = timed_run(["--send", be.url, "--retries", "0", "--send-give-up", "2",
                                "--max-body-bytes", "20000", spans_file])
be.stop()
m = re.search(r"--send gave up after 2 failed rounds of retries in a row \(--send-give-up\): "
              r"(\d+) spans sent, (\d+) failed after being attempted, (\d+) never attempted", err)
counts = [int(x) for x in m.groups()] if m else []
check("a permanent outage: the give-up message with the three counts, exit 1, %.1f s" % took,
      rc == 1 and m is not None and counts[0] == len(be.accepted) > 0 and counts[1] > 0 and
      counts[2] > 0 and sum(counts) == SENT_N and len(be.arrivals) == 3 and took < 30, rc,
      counts, len(be.arrivals), err)
check("the summary is the last line and counts the spans never attempted",
      err.splitlines()[-1].startswith("tracewire: convert: sent %d spans" % counts[0]) and
      "never attempted %d" % counts[2] in err.splitlines()[-1] if counts else False, err)

# 429 Too Many Requests is retried after its Retry-After (OTLP/HTTP lists it as retryable); it
# used to fail the batch at once, as any 4xx.
be = Backend(lambda k: (429, {"Retry-After": "1"}) if k == 1 else (200, {}))
rc, out, err, took = timed_run(["--send", be.url, dapper_spans("few.dapper", 5)])
be.stop()
check("429 with Retry-After: 1 is retried after a second and every span delivered",
      rc == 0 and sorted(be.accepted) == ["%016x" % i for i in range(1, 6)] and
      len(be.arrivals) == 2 and be.arrivals[1] - be.arrivals[0] >= 0.9, rc, err)

# Which statuses are retried is the destination's rule (sdk/transport/http_head.h): OTLP/HTTP
# retries exactly 429, 502, 503 and 504 and never any other status (the OTLP specification);
# Zipkin and the Jaeger collector retry 500 too. A final status fails its batch at once: one
# request, no retry, no cool-down round, counted as failed (an OTLP 500 and any 501 used to be
# retried, then waited out round after round).
def otlp_url(be):
    return "http://127.0.0.1:%d/v1/traces" % be.server.server_address[1]

be = Backend(lambda k: (500, {}) if k == 1 else (200, {}))
rc, out, err, took = timed_run(["--send", be.url, dapper_spans("few.dapper", 5)])
be.stop()
check("Zipkin: a 500 is retried and every span delivered",
      rc == 0 and sorted(be.accepted) == ["%016x" % i for i in range(1, 6)] and
      len(be.arrivals) == 2 and "failed 0 spans" in err, rc, len(be.arrivals), err)

for fmt in [[], ["--send-format", "otlp-http-proto"]]:
    name = "OTLP protobuf" if fmt else "OTLP/JSON"
    be = Backend(lambda k: [(502, {}), (503, {}), (504, {}), (429, {})][k - 1] if k <= 4
                 else (200, {}))
    rc, out, err, took = timed_run(["--send", otlp_url(be), "--retries", "4"] + fmt +
                                   [dapper_spans("few.dapper", 5)])
    be.stop()
    check("%s: 502, 503, 504 and 429 are retried and the batch delivered" % name,
          rc == 0 and len(be.arrivals) == 5 and "sent 5 spans" in err and "failed 0 spans" in err,
          rc, len(be.arrivals), err)
    # Three batches (one process each), every one answered 500: one request each, then the
    # next batch; all 15 spans counted failed, exit 1, no cool-down waited.
    be = Backend(lambda k: (500, {}))
    rc, out, err, took = timed_run(["--send", otlp_url(be)] + fmt +
                                   [dapper_spans("three.dapper", 15, services=3)])
    be.stop()
    check("%s: a 500 is final: one request per batch, every span failed, no wait (%d requests, "
          "%.1f s)" % (name, len(be.arrivals), took),
          rc == 1 and len(be.arrivals) == 3 and "failed 15 spans" in err and
          "(not retried)" in err and took < 5, rc, len(be.arrivals), err)

for url_of in [lambda be: be.url, otlp_url]:
    be = Backend(lambda k: (501, {}))
    rc, out, err, took = timed_run(["--send", url_of(be), "--send-give-up", "1",
                                    dapper_spans("few.dapper", 5)])
    be.stop()
    check("a 501 is never retried (%s): one request, the batch failed" % url_of(be)[-10:],
          rc == 1 and len(be.arrivals) == 1 and "failed 5 spans" in err and took < 5, rc,
          len(be.arrivals), err)

# Spans the backend refuses: each named once, with the prefix and its ids in their own width;
# the summary counts the refused requests ("sent 0 spans in 0 requests" used to be all).
be = Backend(lambda k: (400, {}))
rc, out, err, took = timed_run(["--send", be.url, dapper_spans("refused.dapper", 3)])
be.stop()
refused = [line for line in err.splitlines() if "refused:" in line]
check("each refused span is reported once, prefixed, with 16-digit ids",
      rc == 1 and len(refused) == 3 and
      all(line.startswith("tracewire: convert: --send (zipkin): span %016x/%016x refused"
                          % (i, i)) for i, line in zip(range(1, 4), refused)) and
      not re.search(r"[0-9a-f]{32}", err), err)
check("the summary counts the refused requests",
      "requests made %d" % len(be.arrivals) in err and
      "refused by the backend %d)" % len(be.arrivals) in err and "failed 3 spans" in err, err)

# --undelivered FILE: the spans not delivered, in the format sent (zipkin-v2-json here), so
# that sending FILE delivers exactly the rest. A backend down for good after two requests,
# --send-give-up 1: the third request fails, the rest is never attempted.
def zipkin_by_id(data):
    return {s["id"]: s for s in json.loads(data)}


def span_set(data):
    return sorted(json.dumps(s, sort_keys=True) for s in json.loads(data))


und = os.path.join(WORK, "undelivered.json")
for stale in (und, und + ".tmp"):
    if os.path.exists(stale):
        os.unlink(stale)
expected = zipkin_by_id(run(["--to", "zipkin-v2-json", spans_file])[1])
be = Backend(lambda k: (200, {}) if k <= 2 else (503, {}))
rc, out, err, took = timed_run(["--send", be.url, "--retries", "0", "--send-give-up", "1",
                                "--max-body-bytes", "20000", "--undelivered", und, spans_file])
be.stop()
m = re.search(r"(\d+) spans sent, (\d+) failed after being attempted, (\d+) never attempted", err)
counts = [int(x) for x in m.groups()] if m else [0, 0, 0]
saved = zipkin_by_id(open(und, "rb").read()) if os.path.exists(und) else {}
got = set(be.accepted)
check("--undelivered after giving up: FILE holds exactly the spans the backend did not get "
      "(%d sent, %d in FILE)" % (len(got), len(saved)),
      rc == 1 and len(be.accepted) == len(got) > 0 and counts[1] > 0 and counts[2] > 0 and
      not (got & set(saved)) and got | set(saved) == set(expected) and
      len(saved) == counts[1] + counts[2], rc, counts, err[-1500:])
check("--undelivered: FILE holds each span whole, as convert --to zipkin-v2-json writes it",
      saved and all(saved[i] == expected[i] for i in saved), err[-500:])
check("--undelivered: the summary names FILE and its count, last; no temporary file is left",
      err.splitlines()[-1] == "tracewire: convert: --undelivered: %d spans written to %s "
      "(zipkin-v2-json; send them with: tracewire convert --from zipkin-v2-json --send URL %s)"
      % (len(saved), und, und) and
      not [f for f in os.listdir(WORK) if f.startswith("undelivered.json.tmp")], err[-800:])
be = Backend(lambda k: (200, {}))
rc, out, err, took = timed_run(["--from", "zipkin-v2-json", "--send", be.url, und])
be.stop()
check("sending FILE again delivers the rest: nothing twice, nothing missing",
      rc == 0 and sorted(be.accepted) == sorted(saved) and
      sorted(list(got) + be.accepted) == sorted(expected) and
      all(s == expected[s["id"]] for s in be.accepted_spans), rc, err[-800:])

# The other HTTP formats: FILE is in the format sent and reads back as the spans sent (every
# span undelivered here: the backend answers 503).
for send_format, file_format, path in [("jaeger-http", "jaeger-thrift", "/api/traces"),
                                       ("otlp-http", "otlp-json", "/v1/traces"),
                                       ("otlp-http-proto", "otlp-proto", "/v1/traces")]:
    be = Backend(lambda k: (503, {}))
    url = be.url.replace("/api/v2/spans", path)
    for name, src in [("skew", SKEW), ("3000", spans_file)]:
        if os.path.exists(und):
            os.unlink(und)
        rc, out, err = run(["--send", url, "--send-format", send_format, "--retries", "0",
                            "--send-give-up", "1", "--undelivered", und, src])
        _, direct, _ = run(["--to", file_format, src])
        rc_a, back, err_a = run(["--from", file_format, "--to", "zipkin-v2-json", und])
        _, want, _ = run(["--from", file_format, "--to", "zipkin-v2-json", "-"], stdin=direct)
        check("--undelivered with --send-format %s (%s): FILE is %s and reads back whole"
              % (send_format, name, file_format),
              rc == 1 and rc_a == 0 and span_set(back) == span_set(want) and
              len(json.loads(back)) > 0 and
              "spans written to %s (%s;" % (und, file_format) in err, rc, err[-800:], err_a)
    be.stop()

# A final status: a batch refused whole (401), and spans refused on their own (400) once the
# batch is split (the 3-span body: 400; its halves: 200, then 400 split into 200 and 400).
three = dapper_spans("und3.dapper", 3)
for status, script, lost in [
        (401, lambda k: (401, {}), ["%016x" % i for i in (1, 2, 3)]),
        (400, lambda k: ((400, {}) if k in (1, 3, 5) else (200, {})), ["%016x" % 3])]:
    be = Backend(script)
    rc, out, err, took = timed_run(["--send", be.url, "--undelivered", und, three])
    be.stop()
    saved = zipkin_by_id(open(und, "rb").read()) if os.path.exists(und) else {}
    check("--undelivered: spans the backend answered %d hold are in FILE (%s)"
          % (status, sorted(saved)),
          rc == 1 and sorted(saved) == lost and
          sorted(be.accepted + lost) == ["%016x" % i for i in (1, 2, 3)] and
          "%d spans written to %s" % (len(lost), und) in err, rc, be.accepted, err[-800:])

# Everything delivered: no FILE, and one left by an earlier run is removed (it would be sent
# again); the summary says so.
write("undelivered.json", "[]")
be = Backend(lambda k: (200, {}))
rc, out, err, took = timed_run(["--send", be.url, "--undelivered", und, three])
be.stop()
check("--undelivered with every span delivered: no FILE (the old one removed), said, exit 0",
      rc == 0 and not os.path.exists(und) and len(be.accepted) == 3 and
      "the file of an earlier run was removed" in err and
      err.splitlines()[-1] == "tracewire: convert: --undelivered: 0 spans: every span was "
      "delivered, %s not written" % und, rc, err)

# FILE cannot be written to the end (here the file size limit, EFBIG): said, naming FILE and
# the spans not saved; neither FILE nor the temporary file is left.
def small_files():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


p = subprocess.run(WRAP + [TW, "convert", "--send", "http://127.0.0.1:1/api/v2/spans",
                           "--retries", "0", "--send-give-up", "1", "--undelivered", und,
                           spans_file], preexec_fn=small_files, stdout=subprocess.PIPE,
                   stderr=subprocess.PIPE, timeout=600)
err = p.stderr.decode()
check("--undelivered FILE that cannot be written: an error naming it and the spans lost, exit 1",
      p.returncode == 1 and "--undelivered %s: write error: File too large: %d undelivered spans "
      "were not saved" % (und, SENT_N) in err and "spans written to" not in err and
      not os.path.exists(und) and
      not [f for f in os.listdir(WORK) if f.startswith("undelivered.json.tmp")], p.returncode,
      err[-800:])

# Usage errors, before anything is sent (exit 2): no --send, a directory, an input, the
# --rejects file, a folder that does not exist, a Jaeger agent (it does not answer).
be = Backend(lambda k: (200, {}))
for what, args, says in [
        ("without --send", ["--to", "dapper", "--undelivered", und, three],
         "--undelivered is an option of --send"),
        ("naming a directory", ["--send", be.url, "--undelivered", WORK, three],
         "is a directory"),
        ("naming the input", ["--send", be.url, "--undelivered", three, three],
         "--undelivered names the input"),
        ("naming the --rejects file", ["--send", be.url, "--undelivered", und, "--rejects",
                                       os.path.join(WORK, ".", "undelivered.json"), three],
         "--undelivered and --rejects name the same file"),
        ("in a folder that does not exist",
         ["--send", be.url, "--undelivered", os.path.join(WORK, "no", "such"), three],
         "cannot write beside it"),
        ("with a UDP --send", ["--send", "udp://127.0.0.1:6831", "--undelivered", und,
                               three], "does not answer")]:
    before = open(three, "rb").read()
    rc, out, err = run(args)
    check("--undelivered %s is a usage error, nothing sent" % what,
          rc == 2 and says in err and not be.arrivals and not os.path.exists(und) and
          open(three, "rb").read() == before, rc, err)
be.stop()

# A Jaeger agent that is not there: one warning per run, not one per process.
probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
probe.bind(("127.0.0.1", 0))
udp_port = probe.getsockname()[1]
probe.close()
rc, out, err, took = timed_run(["--send", "udp://127.0.0.1:%d" % udp_port,
                                dapper_spans("procs.dapper", 600, services=150)])
warned = [line for line in err.splitlines() if "not repeated" in line]
check("UDP to no agent: the warning appears once per run (%d)" % len(warned),
      rc == 1 and len(warned) == 1 and "failed 600" in err, err[-1500:])

# The summary is the last line even when the output cannot be written.
if os.path.exists("/dev/full"):
    rc, out, err, took = timed_run(["--to", "zipkin-v2-json", "-o", "/dev/full", SKEW])
    lines = err.splitlines()
    check("a failed write is said before the summary, which stays the last line",
          rc == 1 and "write error" in err and lines[-1].startswith("tracewire: convert: read"),
          rc, err)

# --send-format otlp-http-proto sends what --to otlp-proto writes: accepted together; a --to
# that conflicts is named with the --send-format that would send it.
be = Backend(lambda k: (200, {}))
otlp_url = be.url.replace("/api/v2/spans", "/v1/traces")
rc, out, err = run(["--send", otlp_url, "--send-format", "otlp-http-proto", "--to", "otlp-proto",
                    SKEW])
check("--send-format otlp-http-proto with --to otlp-proto is accepted",
      rc == 0 and len(be.arrivals) >= 1 and "sent 4 spans" in err, rc, err)
be.stop()
rc, out, err = run(["--send", otlp_url, "--to", "otlp-proto", SKEW])
check("--to otlp-proto with an OTLP/JSON --send names the conflict and --send-format",
      rc == 2 and "otlp-json" in err and "--send-format otlp-http-proto" in err, rc, err)

# Bodies are gzipped, except to a Jaeger collector: jaeger-collector 1.x reads /api/traces
# bodies as they come and answers 400 to a gzipped one.
for path, fmt, want in [("/api/traces", "jaeger-http", {None}), ("/api/v2/spans", "zipkin", {"gzip"}),
                        ("/v1/traces", "otlp-http", {"gzip"})]:
    be = Backend(lambda k: (200, {}))
    rc, out, err = run(["--send", be.url.replace("/api/v2/spans", path), SKEW])
    check("--send %s: Content-Encoding %s" % (fmt, "gzip" if want == {"gzip"} else "none"),
          rc == 0 and be.encodings and set(be.encodings) == want, rc, be.encodings, err[-400:])
    be.stop()

# Usage errors (exit 2, naming the option): --user without a colon (the value is not shown),
# the options of --send without it (they were ignored), --send given twice (the last won).
rc, out, err = run(["--send", "http://127.0.0.1:1/api/v2/spans", "-u", "s3cr3t", SKEW])
check("-u without a colon is a usage error naming --user, the value not shown",
      rc == 2 and "--user" in err and "s3cr3t" not in err, rc, err)
# -u and an Authorization header both set the one header: the header won and -u was dropped
# silently. A usage error, neither value shown, whatever the header name's case and spaces.
for hdr in ["Authorization: Bearer T0KEN", "authorization : Bearer T0KEN"]:
    rc, out, err = run(["--send", "http://127.0.0.1:1/api/v2/spans", "-u", "bob:s3cr3t",
                        "-H", hdr, SKEW])
    check("-u with %r is a usage error, no value shown" % hdr.split(":")[0],
          rc == 2 and "-u and an Authorization header both set" in err and "s3cr3t" not in err
          and "T0KEN" not in err and out == b"", rc, err)
for opt in [["--max-body-bytes", "2048"], ["--retries", "1"], ["--timeout-ms", "100"],
            ["--send-give-up", "3"], ["--no-gzip"], ["-H", "X-A: b"], ["--header", "X-A: b"],
            ["-u", "a:b"], ["--user", "a:b"], ["--send-format", "zipkin"]]:
    rc, out, err = run(["--to", "dapper"] + opt + [SKEW])
    name = {"-H": "--header", "-u": "--user"}.get(opt[0], opt[0])
    check("%s without --send is a usage error naming it" % opt[0],
          rc == 2 and "%s is an option of --send" % name in err and out == b"",
          rc, err)
rc, out, err = run(["--send", "http://127.0.0.1:1/api/v2/spans", "--send",
                    "http://127.0.0.1:2/api/v2/spans", SKEW])
check("--send given twice is a usage error", rc == 2 and "--send given twice" in err, rc, err)

# The formats of tracewire-convert(1) are those --list-formats prints, in and out (both ways).
man = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "man",
                   "tracewire-convert.1.scd")
man_in, man_out = set(), set()
with open(man) as f:
    for name, dirs in re.findall(r"^\*([a-z0-9-]+)\* \(((?:in|out)(?:, out)?)\)$", f.read(), re.M):
        if "in" in dirs.split(", "):
            man_in.add(name)
        if "out" in dirs.split(", "):
            man_out.add(name)
rc, out, err = run(["--list-formats"])
listed_in, listed_out, part = set(), set(), None
for line in out.decode().splitlines():
    if line.startswith("Input formats"):
        part = listed_in
    elif line.startswith("Output formats"):
        part = listed_out
    elif line.startswith("  ") and part is not None:
        part.add(line.split()[0])
check("tracewire-convert(1) lists the input formats --list-formats prints, and only those",
      rc == 0 and man_in and man_in == listed_in, sorted(man_in ^ listed_in))
check("tracewire-convert(1) lists the output formats --list-formats prints, and only those",
      rc == 0 and man_out and man_out == listed_out, sorted(man_out ^ listed_out))

# ---- bounded memory on a large input ---------------------------------------------------------

big = os.path.join(WORK, "big.dapper")
with open(big, "w") as f:
    proc = ('"process":{"service":"svc","host":"h1","ip":"10.0.0.1","tags":[{"key":"hostname",'
            '"type":"string","value":"h1"}]}')
    for i in range(1, 200001):
        f.write('{"v":1,"trace_id":"%032x","span_id":"%016x","name":"op %d","start_us":%d,'
                '"end_us":%d,"flags":1,"tags":[{"key":"k","type":"string","value":"%s"}],%s}\n'
                % (i // 10 + 1, i, i, 1700000000000000 + i, 1700000000000100 + i, "v" * 200,
                   proc))
# Measured in a fresh Python process, so that no earlier (or wrapped) run counts.
probe = ("import resource, subprocess, sys\n"
         "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
         "sys.stderr.write(p.stderr.decode()[-500:])\n"
         "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
p = subprocess.run([sys.executable, "-c", probe, TW, "convert", "--to", "zipkin-v2-json", big],
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
rc_big, peak_kib = (int(x) for x in p.stdout.split())
# Under AddressSanitizer the shadow memory and the quarantine are the RSS: the
# bound is checked on plain builds (the plain and valgrind stages of CI).
with open(TW, "rb") as f:
    image = f.read()
is_sanitized = b"libasan" in image or b"libtsan" in image
if is_sanitized:
    check("200,000 spans convert (a sanitizer build: the RSS bound is checked on plain builds)",
          rc_big == 0, p.stderr.decode()[-500:])
else:
    check("200,000 spans (%d MB) convert in bounded memory: peak RSS %d KiB < 64 MiB"
          % (os.path.getsize(big) // 1000000, peak_kib),
          rc_big == 0 and peak_kib < 64 * 1024, p.stderr.decode()[-500:])

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
