# SPDX-License-Identifier: Apache-2.0
"""tests/bench/agent/callgrind_agent.py BUILDDIR [DATAGRAMS] [FORMAT]: instructions per span of
`tracewire agent` on its throughput path (Jaeger compact UDP in, OTLP/HTTP out, no gzip), whole
process and per thread, counted by callgrind (stable on a shared machine, unlike timings).

Two runs of the agent under `valgrind --tool=callgrind --separate-threads=yes`, each idle for the
same wall time: one that receives DATAGRAMS datagrams of 100 spans (default 200, sent by udp_blast
at 8 datagrams/s to --jaeger-compact on a free port) and forwards them to otlp_sink (--send,
FORMAT "protobuf" (default) or "json"), and one that receives nothing. Each run ends with
SIGTERM after the sink has counted every span. The difference of the two, divided by the spans
the sink counted, is the cost per span: startup, shutdown and idle wake-ups cancel out. Threads
are told apart by what they run: "udp" (udp_run: receive, decode, queue, and the early encoding
when the destination is behind: valgrind runs one thread at a time, and at
a higher rate the destination thread falls behind and the receiver encodes, which moves cost
between the threads; "encoded_early" says how many spans it encoded), "dest" (the destination thread:
batch, encode, send), "other" (main, metrics server). Prints one JSON line.
"""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

BUILD = os.path.abspath(sys.argv[1])
DATAGRAMS = int(sys.argv[2]) if len(sys.argv) > 2 else 200
FORMAT = sys.argv[3] if len(sys.argv) > 3 else "protobuf"
PER = 100
DPS = 8  # datagrams per second: low enough for the agent under valgrind never to fall behind
TW = os.path.join(BUILD, "bridge", "tracewire")
BLAST = os.path.join(BUILD, "tests", "bench", "agent", "udp_blast")
SINK = os.path.join(BUILD, "tests", "bench", "agent", "otlp_sink")


def sink_count(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/count" % port, timeout=5) as r:
        return json.loads(r.read())["spans"]


def thread_kind(path):
    with open(path, errors="replace") as f:
        text = f.read()
    if re.search(r"^fn=(?:\(\d+\) )?udp_run$", text, re.M):
        return "udp"
    if re.search(r"^fn=(?:\(\d+\) )?(?:twa_batcher_tick|run)$", text, re.M):
        return "dest"
    return "other"


def totals(path):
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith(("totals:", "summary:")):
                return int(line.split()[1])
    return 0

# glibc's vector copy loops, not `rep movsb`: valgrind counts each byte a rep
# movsb moves as one instruction (glibc copies 2 KiB to 512 KiB that way), so a
# large memcpy would count 10-30x what it executes (CONTRIBUTING.md).
CG_ENV = dict(os.environ)
CG_ENV["GLIBC_TUNABLES"] = ":".join(
    t for t in (os.environ.get("GLIBC_TUNABLES"),
                "glibc.cpu.x86_rep_movsb_threshold=0xffffffffffffffff") if t)


def run(sink_port, datagrams, workdir):
    out = os.path.join(workdir, "callgrind.out")
    log = os.path.join(workdir, "agent.log")
    send = ["--send", "http://127.0.0.1:%d/v1/traces" % sink_port, "--no-gzip"]
    if FORMAT == "protobuf":
        send.append("--send-format=otlp-http-protobuf")
    p = subprocess.Popen(["valgrind", "--tool=callgrind", "--separate-threads=yes",
                          # names in full in every thread's file: compressed, a name is
                          # written only where it first occurs, maybe in another thread's file
                          "--compress-strings=no",
                          "--callgrind-out-file=" + out, TW, "agent", "--log-level", "info",
                          "--metrics=127.0.0.1:0",
                          "--jaeger-compact=127.0.0.1:0"] + send,
                         stderr=open(log, "w"), stdout=subprocess.DEVNULL, env=CG_ENV)
    deadline = time.time() + 120
    addr = None
    while time.time() < deadline and not addr:
        m = re.search(r"listening: jaeger-compact udp (\S+)", open(log).read())
        if m and "running (pid" in open(log).read():
            addr = m.group(1)
        time.sleep(0.1)
    if not addr:
        p.kill()
        raise RuntimeError(open(log).read())
    base = sink_count(sink_port)
    host, port = addr.rsplit(":", 1)
    seconds = max(datagrams, DATAGRAMS) / DPS
    rate = PER * DPS if datagrams else 0
    blast = subprocess.run([BLAST, "compact", host, port, str(rate), str(seconds), str(PER)],
                           capture_output=True, text=True, check=True)
    offered = json.loads(blast.stdout)["spans"]
    # flush_ms is 1 s: wait for the last batch (and valgrind's slowness)
    t0 = time.time()
    while sink_count(sink_port) - base < offered and time.time() - t0 < 120:
        time.sleep(0.2)
    spans = sink_count(sink_port) - base
    metrics = re.search(r"listening: metrics \S+ (\S+)", open(log).read()).group(1)
    early = 0
    with urllib.request.urlopen("http://%s/metrics" % metrics, timeout=5) as r:
        for line in r.read().decode().splitlines():
            if line.startswith("tracewire_agent_spans_encoded_early_total"):
                early += int(float(line.rsplit(" ", 1)[1]))
    p.send_signal(signal.SIGTERM)
    p.wait(120)
    per_kind = {}
    for path in glob.glob(out + "*"):
        kind = thread_kind(path)
        per_kind[kind] = per_kind.get(kind, 0) + totals(path)
    return offered, spans, early, per_kind


def main():
    if not shutil.which("valgrind"):
        print("callgrind_agent.py: valgrind is not installed")
        return 77
    sink = subprocess.Popen([SINK], stdout=subprocess.PIPE, text=True)
    sink_port = int(sink.stdout.readline())
    work = tempfile.mkdtemp(prefix="tw-agent-cg-")
    try:
        os.mkdir(os.path.join(work, "load"))
        os.mkdir(os.path.join(work, "idle"))
        offered, spans, early, load = run(sink_port, DATAGRAMS, os.path.join(work, "load"))
        _, _, _, idle = run(sink_port, 0, os.path.join(work, "idle"))
    finally:
        sink.send_signal(signal.SIGTERM)
        sink.wait(10)
    if spans != offered:
        print("callgrind_agent.py: %d spans offered, %d forwarded" % (offered, spans))
        return 1
    kinds = sorted(set(load) | set(idle))
    per_thread = {k: round((load.get(k, 0) - idle.get(k, 0)) / spans) for k in kinds}
    total = sum(load.values()) - sum(idle.values())
    print(json.dumps({"format": "otlp-" + FORMAT, "spans": spans,
                      "ir_per_span": round(total / spans), "ir_per_span_by_thread": per_thread, "encoded_early": early,
                      "files": work}))
    return 0


sys.exit(main())
