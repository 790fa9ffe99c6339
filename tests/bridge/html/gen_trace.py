#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tests/bridge/html/gen_trace.py N FILE: writes one Zipkin v2 trace of exactly N spans, the
same for the same N (no randomness): a request tree five services deep with fan-out, shared
client/server halves, kind-less local spans, tags on every span, annotations on some, an error
every 97th span. Operation names are unique ("op-0042"), so a test can search for any span.

gen_trace.py --split FILE: writes one Jaeger JSON trace of N spans (N in place of --split is not
taken) that `show --window 1` reads in several parts (a page section each), with CHILD_OF and
FOLLOWS_FROM references inside a part and across parts.
"""
import json
import sys


def split_trace(path):
    trace = "5b1170000000000000000000000000ab"
    t0 = 1700000000000000
    spans = []
    for k in range(1, 9):
        refs = []
        if k > 1:
            refs.append({"refType": "CHILD_OF", "traceID": trace, "spanID": "%016x" % (k // 2)})
        if k > 2:
            refs.append({"refType": "FOLLOWS_FROM", "traceID": trace, "spanID": "%016x" % (k - 1)})
        spans.append({"traceID": trace, "spanID": "%016x" % k, "operationName": "split-%d" % k,
                      "startTime": t0 + 100 * k, "duration": 1000 - 100 * k, "processID": "p1",
                      "references": refs, "tags": [], "logs": []})
    doc = {"data": [{"traceID": trace, "spans": spans,
                     "processes": {"p1": {"serviceName": "splitter", "tags": []}}}]}
    with open(path, "w") as f:
        json.dump(doc, f)


if sys.argv[1] == "--split":
    split_trace(sys.argv[2])
    sys.exit(0)
n = int(sys.argv[1])
path = sys.argv[2]
services = ["gateway", "orders", "pricing", "stock", "ledger"]
trace = "7e57000000000000000000000000cafe"
T0 = 1700000000000000
spans = []
count = 0


def sid(k):
    return "%016x" % (0x1000 + k)


# Breadth first: each span has up to 3 children while spans remain (about 7 levels).
stack = [(0, None, 0, T0, 4000000)]
next_id = 1
while stack and count < n:
    k, parent, depth, start, dur = stack.pop(0)
    svc = services[depth % len(services)]
    s = {"traceId": trace, "id": sid(k), "name": "op-%04d" % k, "timestamp": start,
         "duration": dur, "localEndpoint": {"serviceName": svc, "ipv4": "10.0.0.%d" % (depth % 250 + 1)},
         "tags": {"span.index": str(k), "depth": str(depth)}}
    if parent is not None:
        s["parentId"] = sid(parent)
    if k % 3 == 1:
        s["kind"] = "CLIENT"
        s["remoteEndpoint"] = {"serviceName": services[(depth + 1) % len(services)]}
    elif k % 3 == 2:
        s["kind"] = "SERVER"
    if k % 5 == 0:
        s["annotations"] = [{"timestamp": start + dur // 2, "value": "checkpoint-%d" % k}]
    if k % 97 == 96:
        s["tags"]["error"] = "failure %d" % k
    spans.append(s)
    count += 1
    kids = []
    for c in range(3):
        if next_id + len(kids) >= n:
            break
        cs = start + dur * c // 3 + 10
        kids.append((next_id + len(kids), k, depth + 1, cs, max(dur // 4, 20)))
    next_id += len(kids)
    stack.extend(kids)
assert count == n, (count, n)
with open(path, "w") as f:
    json.dump(spans, f)
