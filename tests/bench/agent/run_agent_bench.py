# SPDX-License-Identifier: Apache-2.0
"""tests/bench/agent/run_agent_bench.py BUILDDIR [SECONDS]: `make bench` for `tracewire agent`.

For each protocol, destination encoding and offered rate: the agent (receivers on loopback, one
destination: otlp_sink, which counts spans in OTLP/JSON, OTLP protobuf and Zipkin v2 JSON bodies),
the load (udp_blast for Jaeger compact/binary datagrams of 100 spans (20 KB), and of 300 spans
(61 KB); a keep-alive Python client posting 500-span OTLP/JSON bodies), then per case one JSON
line: spans offered, received, forwarded, dropped and counted by the agent, spans/s forwarded,
the agent's CPU seconds (utime + stime from /proc) in all and per thread (tw-agent-udp receives
and decodes, tw-agent-dest batches, encodes unless the receiver did, and sends), CPU
microseconds per forwarded span, spans per CPU-second ("per core"), the spans the receiver
encoded because the destination was behind, the agent's RSS at the end and its peak, the
machine's load average when the case started (the machine may be shared: compare CPU per span,
not rates, between runs), and for UDP the datagrams the kernel dropped at the agent's socket
(the `drops` column of /proc/net/udp for its port, and the agent's own
tracewire_agent_udp_datagrams_dropped_total, which must agree). "lost" = offered - forwarded -
counted drops - in flight - kernel drops: spans lost without being counted anywhere (must be 0).

The destination's encoding is named per case ("otlp-json" or "otlp-protobuf": the agent's
`--send .../v1/traces` default is OTLP/JSON; `--send-format otlp-http-protobuf` is what OTLP/HTTP
exporters send by default). No jaeger-agent or OpenTelemetry Collector runs here (neither is a
Debian package, and nothing else may be fetched), so no peer is measured in the same run.
"""
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request

BUILD = os.path.abspath(sys.argv[1])
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
TW = os.path.join(BUILD, "bridge", "tracewire")
BLAST = os.path.join(BUILD, "tests", "bench", "agent", "udp_blast")
SINK = os.path.join(BUILD, "tests", "bench", "agent", "otlp_sink")
TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / TICK


def rss_kib(pid):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for l in f:
            if l.startswith(("VmRSS", "VmHWM")):
                out[l.split(":")[0]] = int(l.split()[1])
    return out


def socket_drops(port):
    """The kernel's drops at the UDP socket bound to @port (IPv4 and IPv6 tables)."""
    total = 0
    for table in ("/proc/net/udp", "/proc/net/udp6"):
        try:
            with open(table) as f:
                for line in f.readlines()[1:]:
                    cols = line.split()
                    if int(cols[1].rsplit(":", 1)[1], 16) == port:
                        total += int(cols[-1])
        except OSError:
            pass
    return total


def thread_cpu_s(pid):
    """CPU seconds per thread name."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                name = f.read().strip()
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                parts = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[name] = round(out.get(name, 0) + (int(parts[11]) + int(parts[12])) / TICK, 2)
    return out


def metric(url, name):
    with urllib.request.urlopen(url, timeout=5) as r:
        total = 0.0
        for l in r.read().decode().splitlines():
            if l.startswith(name + "{") or l.startswith(name + " "):
                total += float(l.rsplit(" ", 1)[1])
        return total


def sink_count(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/count" % port, timeout=5) as r:
        return json.loads(r.read())["spans"]


def start_agent(args, log):
    p = subprocess.Popen([TW, "agent", "--metrics=127.0.0.1:0", "--log-level", "info"] + args,
                         stderr=open(log, "w"), stdout=subprocess.DEVNULL)
    deadline = time.time() + 10
    while time.time() < deadline:
        text = open(log).read()
        if "running (pid" in text:
            return p, dict(re.findall(r"listening: (\S+) \S+ (\S+)", text))
        time.sleep(0.05)
    raise RuntimeError(open(log).read())


def otlp_body(n, k):
    spans = [{"traceId": "%032x" % (k * 100000 + i + 1), "spanId": "%016x" % (k * 100000 + i + 1),
              "name": "GET /api/v1/items", "kind": 2,
              "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000000001234000",
              "attributes": [{"key": "http.method", "value": {"stringValue": "GET"}},
                             {"key": "http.status_code", "value": {"intValue": "200"}}]}
             for i in range(n)]
    return json.dumps({"resourceSpans": [{"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": "bench"}}]},
        "scopeSpans": [{"spans": spans}]}]}).encode()


def http_load(addr, rate, seconds, per=500):
    import http.client
    host, port = addr.rsplit(":", 1)
    bodies = [otlp_body(per, k) for k in range(8)]
    sent = [0]

    def run(share):
        c = http.client.HTTPConnection(host, int(port))
        start = time.time()
        k = 0
        while time.time() - start < seconds:
            due = (time.time() - start) * share
            if k * per < due:
                c.request("POST", "/v1/traces", bodies[k % 8], {"Content-Type": "application/json"})
                r = c.getresponse()
                r.read()
                if r.status == 200:
                    sent[0] += per
                k += 1
            else:
                time.sleep(0.001)
    ts = [threading.Thread(target=run, args=(rate / 2,)) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sent[0]


def run_case(proto, rate, port, gzip=True, dest="otlp-json", per=100):
    log = "/tmp/tw-agent-bench-%d.log" % os.getpid()
    path = "/api/v2/spans" if dest == "zipkin" else "/v1/traces"
    args = ["--jaeger-compact=127.0.0.1:0", "--jaeger-binary=127.0.0.1:0", "--otlp=127.0.0.1:0",
            "--send", "http://127.0.0.1:%d%s" % (port, path)]
    if dest == "otlp-protobuf":
        args.append("--send-format=otlp-http-protobuf")
    if not gzip:
        args.append("--no-gzip")
    p, addr = start_agent(args, log)
    murl = "http://%s/metrics" % addr["metrics"]
    base_sink = sink_count(port)
    load = os.getloadavg()[0]
    cpu0 = cpu_s(p.pid)
    t0 = time.time()
    uport = 0
    if proto in ("compact", "binary"):
        host, uport = addr["jaeger-" + proto].rsplit(":", 1)
        uport = int(uport)
        out = subprocess.run([BLAST, proto, host, str(uport), str(rate), str(SECONDS), str(per)],
                             capture_output=True, text=True)
        offered = json.loads(out.stdout)["spans"]
    else:
        offered = http_load(addr["otlp"], rate, SECONDS)
    # wait until everything received is forwarded or counted as dropped (or 60 s)
    while time.time() - t0 < SECONDS + 60:
        done = sink_count(port) - base_sink + metric(murl, "tracewire_agent_spans_dropped_total")
        if done >= metric(murl, "tracewire_agent_spans_received_total"):
            break
        time.sleep(0.3)
    elapsed = time.time() - t0
    cpu = cpu_s(p.pid) - cpu0
    threads = thread_cpu_s(p.pid)
    mem = rss_kib(p.pid)
    received = metric(murl, "tracewire_agent_spans_received_total")
    forwarded = sink_count(port) - base_sink
    drops = socket_drops(uport) if uport else 0
    agent_drops = metric(murl, "tracewire_agent_udp_datagrams_dropped_total")
    counted = metric(murl, "tracewire_agent_spans_dropped_total")
    in_flight = metric(murl, "tracewire_agent_spans_in_flight")
    early = metric(murl, "tracewire_agent_spans_encoded_early_total")
    p.send_signal(signal.SIGTERM)
    p.wait(30)
    # datagrams of `per` spans; HTTP requests refused (503) were not counted as offered
    lost = offered - forwarded - drops * per - counted - in_flight
    row = {"protocol": proto, "out": dest, "gzip": gzip, "spans_per_datagram": per,
           "offered_spans_per_s": rate, "load_average": round(load, 2),
           "offered": offered, "received": int(received), "forwarded": forwarded,
           "forwarded_per_s": round(forwarded / SECONDS), "agent_cpu_s": round(cpu, 2),
           "thread_cpu_s": threads,
           "cpu_us_per_span": round(cpu * 1e6 / forwarded, 3) if forwarded else None,
           "spans_per_cpu_s": round(forwarded / cpu) if cpu else None,
           "encoded_by_receiver": int(early),
           "rss_mib": round(mem.get("VmRSS", 0) / 1024, 1),
           "peak_rss_mib": round(mem.get("VmHWM", 0) / 1024, 1),
           "kernel_drops_datagrams": drops, "agent_kernel_drops_metric": int(agent_drops),
           "agent_counted_drops": int(counted),
           "lost_uncounted": int(lost), "elapsed_s": round(elapsed, 1)}
    print(json.dumps(row))
    sys.stdout.flush()
    return row


def main():
    sink = subprocess.Popen([SINK], stdout=subprocess.PIPE, text=True)
    port = int(sink.stdout.readline())
    try:
        print("# tracewire agent: %s s per case, loopback, one destination (otlp_sink)" % SECONDS)
        # The throughput goal's path: compact UDP -> OTLP, in both encodings, without gzip
        # (gzip level 1 costs the destination thread more than the encoding).
        for dest in ("otlp-json", "otlp-protobuf"):
            for rate in (200000, 300000, 500000):
                run_case("compact", rate, port, gzip=False, dest=dest)
        run_case("compact", 200000, port, dest="otlp-protobuf")  # gzip (the default)
        for proto in ("compact", "binary"):
            run_case(proto, 50000, port)
        run_case("compact", 50000, port, dest="zipkin")
        run_case("compact", 50000, port, dest="zipkin", per=300)  # 61 KB datagrams
        for rate in (20000, 50000):
            run_case("otlp-json", rate, port)
    finally:
        sink.send_signal(signal.SIGTERM)
        sink.wait(10)


main()
