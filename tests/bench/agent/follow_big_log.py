# SPDX-License-Identifier: Apache-2.0
"""tests/bench/agent/follow_big_log.py BUILDDIR [MIB]: `tracewire agent --follow` over one large
span log (default 2048 MiB of Dapper lines, written here first), forwarded to otlp_sink (Zipkin
v2 JSON, gzip). Samples the agent's RSS every second and prints one JSON line: lines, spans
forwarded, seconds, spans/s, RSS at 10%, 50% and 90% of the file and the peak. Memory must stay
flat: the follower reads 256 KiB at a time and waits for room in the queues.

Not part of make check (it writes MIB of disk and takes minutes); run by hand or from
`make bench` with TW_AGENT_BIG_LOG_MB set.
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

BUILD = os.path.abspath(sys.argv[1])
MIB = int(sys.argv[2]) if len(sys.argv) > 2 else 2048
TW = os.path.join(BUILD, "bridge", "tracewire")
SINK = os.path.join(BUILD, "tests", "bench", "agent", "otlp_sink")


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1])
    return 0


def main():
    work = tempfile.mkdtemp(prefix="tw-agent-big-")
    log = os.path.join(work, "spans.log")
    template = ('{"v":1,"trace_id":"%016x%016x","span_id":"%016x","parent_id":"%016x",'
                '"name":"GET /api/v1/items","kind":"server","start_us":%d,"end_us":%d,"flags":1,'
                '"tags":[{"key":"http.method","type":"string","value":"GET"},'
                '{"key":"http.status_code","type":"int64","value":200},'
                '{"key":"http.url","type":"string","value":"http://backend:8080/api/v1/items"}],'
                '"process":{"service":"big-log","host":"host-1","ip":"192.0.2.1","tags":[]}}\n')
    lines = 0
    target = MIB << 20
    with open(log, "w") as f:
        written = 0
        chunk = []
        while written < target:
            lines += 1
            s = template % (7, lines, lines, lines + 1, 1700000000000000 + lines,
                            1700000000001000 + lines)
            chunk.append(s)
            written += len(s)
            if len(chunk) == 10000:
                f.write("".join(chunk))
                chunk = []
        f.write("".join(chunk))
    sink = subprocess.Popen([SINK], stdout=subprocess.PIPE, text=True)
    port = int(sink.stdout.readline())
    agent_log = os.path.join(work, "agent.log")
    agent = subprocess.Popen([TW, "agent", "--metrics=127.0.0.1:0", "--follow", log,
                              "--checkpoint", os.path.join(work, "ckpt"),
                              "--send", "http://127.0.0.1:%d/api/v2/spans" % port],
                             stderr=open(agent_log, "w"))
    start = time.time()
    samples = []
    try:
        while True:
            time.sleep(1)
            with urllib.request.urlopen("http://127.0.0.1:%d/count" % port) as r:
                got = json.loads(r.read())["spans"]
            samples.append((got / lines, rss_kib(agent.pid)))
            if got >= lines or agent.poll() is not None or time.time() - start > 3600:
                break
    finally:
        agent.send_signal(signal.SIGTERM)
        agent.wait(60)
        sink.send_signal(signal.SIGTERM)
        sink.wait(10)
    took = time.time() - start

    def at(frac):
        for done, rss in samples:
            if done >= frac:
                return round(rss / 1024, 1)
        return None
    print(json.dumps({"file_mib": MIB, "lines": lines, "forwarded": got, "seconds": round(took, 1),
                      "spans_per_s": round(got / took), "rss_mib_at_10pct": at(0.1),
                      "rss_mib_at_50pct": at(0.5), "rss_mib_at_90pct": at(0.9),
                      "rss_mib_peak": round(max(r for _, r in samples) / 1024, 1)}))
    os.unlink(log)
    _ = re


main()
