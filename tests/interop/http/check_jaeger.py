#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Check the Jaeger collector bodies that jaeger_thrift_decode.py decoded.

tests/interop/http/check_jaeger.py DECODED_JSON EXPECTED_JSON: the decoder
(Apache Thrift's Python library with the IDL Jaeger publishes) has read every
body as a bare binary-protocol Batch; this checks that each span the driver
finished (expected.json, key "jaeger") arrived exactly once with its ids and
operation name, that each body carries a Process with a service name, and
that seqNo counts the bodies of each reporter 0, 1, 2, ... in arrival order.
Exit status 0 or 1 (the problems on stdout).
"""

import json
import sys


def main():
    decoded = json.load(open(sys.argv[1], encoding="utf-8"))
    expected = json.load(open(sys.argv[2], encoding="utf-8"))["jaeger"]
    problems = []
    want = {(e["traceId"], e["spanId"]): e["name"] for e in expected}
    seen = {}
    next_seq = {}
    for body in decoded["datagrams"]:
        if body["format"] != "binary-struct":
            problems.append(f"{body['file']}: format {body['format']}, not a bare binary Batch")
        batch = body["batch"]
        process = batch.get("process", {})
        service = process.get("serviceName")
        if not service:
            problems.append(f"{body['file']}: no Process.serviceName")
        uuid = next((t.get("vStr") for t in process.get("tags", []) if t["key"] == "client-uuid"),
                    service)
        if batch.get("seqNo") != next_seq.get(uuid, 0):
            problems.append(f"{body['file']}: seqNo {batch.get('seqNo')}, expected "
                            f"{next_seq.get(uuid, 0)}")
        next_seq[uuid] = next_seq.get(uuid, 0) + 1
        if "stats" not in batch:
            problems.append(f"{body['file']}: no ClientStats")
        for span in batch.get("spans", []):
            key = (span.get("traceIdHigh", "0" * 16) + span["traceIdLow"], span["spanId"])
            seen.setdefault(key, []).append(span.get("operationName"))
    for key, names in seen.items():
        if key not in want:
            problems.append(f"span {key} was never finished")
        elif names != [want[key]]:
            problems.append(f"span {key}: arrived as {names}, expected [{want[key]!r}]")
    problems += [f"span {key} never arrived" for key in want if key not in seen]
    for p in problems[:20]:
        print(f"FAIL: jaeger: {p}")
    if problems:
        return 1
    print(f"jaeger: {len(decoded['datagrams'])} bodies, {len(want)} spans: decoded by Apache "
          "Thrift (Python) with Jaeger's IDL as bare binary Batches, seqNo in order")
    return 0


if __name__ == "__main__":
    sys.exit(main())
