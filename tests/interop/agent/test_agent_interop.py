# SPDX-License-Identifier: Apache-2.0
"""tests/interop/agent/test_agent_interop.py: `tracewire agent` with independent clients (run by
run_agent_interop.sh). Each client's spans, as the client says it sent them, must arrive once
at each destination (OTLP/JSON, Zipkin v2, Jaeger Thrift), with the same ids, names, service and
tags, and times within a microsecond of rounding.

Usage: test_agent_interop.py TRACEWIRE GEN_DIR WORK_DIR SAMPLER_DRIVER CLIENTS_JS
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bridge"))
from agent_harness import *  # noqa: E402,F401,F403

TRACEWIRE, GEN, WORK, DRIVER, CLIENTS = sys.argv[1:6]
TH = Thrift(GEN)
NODE = os.environ.get("NODE", "node")
os.makedirs(WORK, exist_ok=True)


def tag_value(v):
    """jaeger-client sends JS numbers as doubles: 100 arrives as 100.0 (Jaeger, OTLP) or
    1e+02 (Zipkin's text of a double); compare numbers as numbers."""
    try:
        f = float(v)
        return repr(f)
    except ValueError:
        return v


def key(s, with_times):
    k = (s["trace"].rjust(32, "0"), s["span"], s.get("parent", ""), s["name"], s["service"],
         tuple(sorted((a, tag_value(b)) for a, b in s["tags"].items())))
    return k + ((s["start"], s["duration"]) if with_times else ())


def compare(name, sent, got, with_times=True):
    got_keys = {}
    for s in got:
        got_keys[key(s, False)] = got_keys.get(key(s, False), []) + [s]
    missing = [s for s in sent if key(s, False) not in got_keys]
    dups = [k for k, v in got_keys.items() if len(v) > 1]
    bad_times = []
    if with_times:
        for s in sent:
            for g in got_keys.get(key(s, False), []):
                # Jaeger and Zipkin targets give a zero duration 1 µs (0 means "absent" there).
                if abs(g["start"] - s["start"]) > 1 or abs(g["duration"] - s["duration"]) > 2:
                    bad_times.append((s, g))
    check(name, not missing and not dups and not bad_times and len(got) == len(sent),
          "sent %d, got %d, missing %d, duplicated %d, times off %d" %
          (len(sent), len(got), len(missing), len(dups), len(bad_times)),
          *(["missing e.g. %s" % missing[:1]] if missing else []),
          *(["got e.g. %s" % got[:1]] if got else []),
          *(["times e.g. %s" % (bad_times[:1],)] if bad_times else []))


def node(*args):
    p = subprocess.run([NODE, CLIENTS] + list(args), capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise RuntimeError("node clients.js %s failed:\n%s" % (" ".join(args), p.stderr[-3000:]))
    return json.loads(p.stdout.strip().splitlines()[-1])


strategies = os.path.join(WORK, "strategies.json")
with open(strategies, "w") as f:
    json.dump({"default_strategy": {"type": "probabilistic", "param": 0.5},
               "service_strategies": [{"service": "foo", "type": "probabilistic", "param": 0.8,
                                       "operation_strategies": [
                                           {"operation": "op1", "type": "probabilistic",
                                            "param": 0.2}]}]}, f)
otlp, zipkin, jaeger = Backend(), Backend(), Backend()
a = Agent(TRACEWIRE, ["--jaeger-compact=127.0.0.1:0", "--jaeger-binary=127.0.0.1:0",
                      "--zipkin=127.0.0.1:0", "--otlp=127.0.0.1:0", "--sampling=127.0.0.1:0",
                      "--sampling-strategies", strategies, "--flush-ms", "100",
                      "--send", otlp.url("/v1/traces"), "--send", zipkin.url("/api/v2/spans"),
                      "--send", jaeger.url("/api/traces")], os.path.join(WORK, "agent.log"))
try:
    host, port = a.host_port("jaeger-binary")
    sampling_url = a.url("sampling", "/sampling")
    r = node("jaeger", host, str(port), sampling_url)
    sent = r["spans"]
    s = r["sampling"] or {}
    check("jaeger-client's remote sampler takes the agent's strategy (per operation, default 0.8)",
          s.get("sampler") == "PerOperationSampler" and abs((s.get("default_rate") or 0) - 0.8) < 1e-9,
          s)
    r = node("otlp-json", a.url("otlp", "/v1/traces"))
    check("the OTLP/HTTP JSON exporter reports success", r["results"] and all(c == 0 for c in r["results"]),
          r["results"])
    sent += r["spans"]
    # protobuf: accepted when this build has the protobuf decoder (it always does now; the
    # refusal branch stays for builds of the agent without it)
    st, _ = post(a.url("otlp", "/v1/traces"), b"", "application/x-protobuf")
    has_proto = st == 200
    r = node("otlp-proto", a.url("otlp", "/v1/traces"))
    if has_proto:
        check("the OTLP/HTTP protobuf exporter reports success", all(c == 0 for c in r["results"]),
              r["results"])
        sent += r["spans"]
    else:
        rejected = a.metric("tracewire_agent_requests_rejected_total", receiver="otlp")
        check("the OTLP/HTTP protobuf exporter is refused (415, no decoder in this build yet)",
              r["results"] and all(c != 0 for c in r["results"]) and rejected >= 2,
              r["results"], rejected)
    r = node("zipkin", a.url("zipkin", "/api/v2/spans"))
    zipkin_sent = r["spans"]
    total = len(sent) + len(zipkin_sent)
    ok = wait_for(lambda: a.metric("tracewire_agent_spans_forwarded_total") >= 3 * total, 30)
    check("every client's spans are forwarded to the three destinations", ok,
          a.metric("tracewire_agent_spans_forwarded_total"), 3 * total)

    def only(spans, services):
        return [x for x in spans if x["service"] in services]
    for label, reader, backend in (("OTLP/JSON", read_otlp, otlp), ("Zipkin v2", read_zipkin, zipkin),
                                   ("Jaeger Thrift", TH.read_jaeger_batches, jaeger)):
        got = []
        for _, _, body in backend.bodies():
            got.extend(reader(body))
        for svc in ("node-jaeger", "node-otlp-json", "node-otlp-proto"):
            mine = only(sent, [svc])
            if mine:
                compare("%s: %s spans arrive once, field by field" % (label, svc), mine,
                        only(got, [svc]))
        compare("%s: zipkin-transport-http spans arrive once" % label, zipkin_sent,
                only(got, ["node-zipkin"]), with_times=False)
    # tracewire's own remote sampler against the agent
    p = subprocess.run([DRIVER, sampling_url, "foo", "op1", "other"], capture_output=True,
                       text=True, timeout=60)
    d = json.loads(p.stdout) if p.returncode == 0 else {}
    sh = d.get("shares", {})
    check("tracewire's remote sampler takes the agent's strategy (op1 0.2, others 0.8)",
          d.get("updates_ok", 0) >= 1 and abs(sh.get("op1", 0) - 0.2) < 0.02 and
          abs(sh.get("other", 0) - 0.8) < 0.02, d, p.stderr)
finally:
    rc = a.stop()
    for b in (otlp, zipkin, jaeger):
        b.close()
check("the agent exits 0 on SIGTERM", rc == 0, rc)
print("%d passed, %d failed" % (RESULTS["passed"], RESULTS["failed"]))
sys.exit(1 if RESULTS["failed"] else 0)
