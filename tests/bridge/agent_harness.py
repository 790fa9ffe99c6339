# SPDX-License-Identifier: Apache-2.0
"""tests/bridge/agent_harness.py: what the `tracewire agent` tests share.

- Backend: a loopback HTTP server (ephemeral port) standing for a collector. It
  answers by a plan (status codes, Retry-After, delays, connections closed
  mid-request, 400 for bodies holding a given span) and records every body it
  acknowledged, so a test can check that each span arrived once.
- Agent: runs `tracewire agent` with ephemeral ports, reads the addresses it
  logs ("listening: NAME KIND ADDR"), reads /metrics, stops it with a signal.
- Spans: a test span set and its encoding in every input format the agent
  receives (Thrift through Apache Thrift's Python library, generated at test
  time from thrift/*.thrift), and the decoding of every destination format into
  one canonical form, so that the comparison is field by field.
"""

import gzip
import http.server
import json
import os
import re
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time
import zlib

# ---- the backend ------------------------------------------------------------------------------


class Backend:
    def __init__(self, path_prefix=""):
        self.lock = threading.Lock()
        self.accepted = []  # (path, content_type, body bytes) acknowledged with 2xx
        self.seen = 0  # requests received
        self.plan = []  # responses to give first: dicts (status, headers, delay, wait, close)
        self.refuse_if = None  # callable(body) -> True: answer 400
        self.times = []  # time of each request
        self.encodings = []  # each request's Content-Encoding (None: absent)
        self.answered = []  # time each answer had been written
        self.request_headers = []  # the headers of each request received (a dict)
        backend = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                with backend.lock:
                    step = backend.plan.pop(0) if backend.plan else {}
                    backend.seen += 1
                    backend.times.append(time.time())
                    backend.encodings.append(self.headers.get("Content-Encoding"))
                    backend.request_headers.append(dict(self.headers))
                if step.get("close"):
                    # Close mid-request: read part of the body, then drop the connection.
                    self.rfile.read(min(n, 10))
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                body = self.rfile.read(n)
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if step.get("delay"):
                    time.sleep(step["delay"])
                if step.get("wait"):  # a threading.Event: answer when the test sets it
                    step["wait"].wait(60)
                status = step.get("status", 200)
                if status < 300 and backend.refuse_if and backend.refuse_if(body):
                    status = 400
                headers = step.get("headers", {})
                if callable(headers):
                    headers = headers()
                # Recorded before the answer leaves: a test that sees the agent's
                # counter move must find the body here.
                if status < 300 and not step.get("delay_lost"):
                    with backend.lock:
                        backend.accepted.append(
                            (self.path, self.headers.get("Content-Type"), body))
                try:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    answer = b"refused" if status >= 300 else b""
                    self.send_header("Content-Length", str(len(answer)))
                    self.end_headers()
                    self.wfile.write(answer)
                    self.wfile.flush()
                    with backend.lock:
                        backend.answered.append(time.time())
                except OSError:  # the client gave up (a timeout under test)
                    return

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
            allow_reuse_address = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def bodies(self):
        with self.lock:
            return list(self.accepted)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def free_port():
    """A port nothing listens on (for a destination that is down)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# ---- the agent --------------------------------------------------------------------------------


class Agent:
    def __init__(self, tracewire, args, log, env=None, preexec_fn=None):
        self.log_path = log
        self.logf = open(log, "ab")
        e = dict(os.environ)
        for k in list(e):
            if k.startswith("OTEL_") or k.startswith("JAEGER_"):
                del e[k]
        if env:
            e.update(env)
        has_metrics = any(a.startswith("--metrics") or a == "--no-metrics" for a in args)
        extra = [] if has_metrics else ["--metrics=127.0.0.1:0"]
        self.args = list(args)
        self.proc = subprocess.Popen([tracewire, "agent"] + extra + list(args),
                                     stdout=subprocess.DEVNULL, stderr=self.logf, env=e,
                                     preexec_fn=preexec_fn)
        self.addr = {}
        self.start_offset = 0
        self.wait_running()

    def text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def wait_running(self, timeout=15):
        deadline = time.time() + timeout
        while time.time() < deadline:
            t = self.text()
            if self.proc.poll() is not None:
                raise RuntimeError("the agent exited (%s):\n%s" % (self.proc.returncode, t))
            logfile = None
            for i, arg in enumerate(self.args):
                if arg == "--log-file":
                    logfile = self.args[i + 1]
            if logfile and os.path.exists(logfile):
                with open(logfile, "rb") as f:
                    t += f.read().decode("utf-8", "replace")
            runs = t.count("info: running (pid %d)" % self.proc.pid)
            if runs:
                for m in re.finditer(r"listening: (\S+) (udp|http) (\S+)", t):
                    self.addr[m.group(1)] = m.group(3)
                return
            time.sleep(0.05)
        raise RuntimeError("the agent did not start:\n" + self.text())

    def host_port(self, name):
        a = self.addr[name]
        host, port = a.rsplit(":", 1)
        return host.strip("[]"), int(port)

    def url(self, name, path):
        return "http://%s%s" % (self.addr[name], path)

    def metrics(self):
        import urllib.request
        with urllib.request.urlopen(self.url("metrics", "/metrics"), timeout=5) as r:
            text = r.read().decode()
        out = {}
        for line in text.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            key, value = line.rsplit(" ", 1)
            out[key] = float(value)
        return out

    def metric(self, name, **labels):
        want = ",".join('%s="%s"' % kv for kv in sorted(labels.items()))
        total = 0.0
        for k, v in self.metrics().items():
            m = re.match(r"(\w+)(\{(.*)\})?$", k)
            if not m or m.group(1) != name:
                continue
            have = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
            if all(have.get(a) == b for a, b in labels.items()):
                total += v
        return total

    def wait_metric(self, name, value, timeout=20, **labels):
        deadline = time.time() + timeout
        got = None
        while time.time() < deadline:
            got = self.metric(name, **labels)
            if got >= value:
                return got
            time.sleep(0.05)
        return got

    def send_signal(self, sig):
        self.proc.send_signal(sig)

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.logf.close()
        return rc


# ---- spans ----------------------------------------------------------------------------------


def make_spans(prefix, n, service, trace_high=0):
    """n spans of one trace, ids derived from prefix (1..255)."""
    out = []
    trace_low = (prefix << 48) | 0x1234
    for i in range(n):
        out.append({
            "trace": "%016x%016x" % (trace_high, trace_low),
            "span": "%016x" % ((prefix << 40) | (i + 1)),
            "parent": "%016x" % ((prefix << 40) | i) if i else "",
            "name": "op-%d-%d" % (prefix, i),
            "start": 1700000000000000 + prefix * 1000000 + i * 10,
            "duration": 1000 + i,
            "service": service,
            "tags": {"t.str": "v%d" % i, "t.int": str(100 + i)},
        })
    return out


def canon(span):
    return (span["trace"], span["span"], span["parent"], span["name"], span["start"],
            span["duration"], span["service"], tuple(sorted(span["tags"].items())))


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def unsigned(v):
    return v + (1 << 64) if v < 0 else v


class Thrift:
    """Encoders and decoders generated by `thrift --gen py` (python3-thrift)."""

    def __init__(self, gen_dir):
        sys.path.insert(0, gen_dir)
        from thrift.protocol import TBinaryProtocol, TCompactProtocol
        from thrift.transport import TTransport
        from jaeger import ttypes as jt
        from zipkincore import ttypes as zt
        from agent import Agent as AgentService
        self.TB, self.TC, self.TT = TBinaryProtocol, TCompactProtocol, TTransport
        self.jt, self.zt, self.agent = jt, zt, AgentService

    def _jaeger_batch(self, spans):
        jt = self.jt
        out = []
        for s in spans:
            t = int(s["trace"], 16)
            out.append(jt.Span(
                traceIdLow=signed(t & (2**64 - 1)), traceIdHigh=signed(t >> 64),
                spanId=signed(int(s["span"], 16)),
                parentSpanId=signed(int(s["parent"], 16)) if s["parent"] else 0,
                operationName=s["name"], flags=1, startTime=s["start"], duration=s["duration"],
                tags=[jt.Tag(key="t.str", vType=jt.TagType.STRING, vStr=s["tags"]["t.str"]),
                      jt.Tag(key="t.int", vType=jt.TagType.LONG, vLong=int(s["tags"]["t.int"]))]))
        return jt.Batch(process=jt.Process(serviceName=spans[0]["service"]), spans=out)

    def emit_batch(self, spans, compact):
        buf = self.TT.TMemoryBuffer()
        proto = (self.TC.TCompactProtocol if compact else self.TB.TBinaryProtocol)(buf)
        self.agent.Client(proto, proto).emitBatch(self._jaeger_batch(spans))
        return buf.getvalue()

    def batch_binary(self, spans):
        buf = self.TT.TMemoryBuffer()
        self._jaeger_batch(spans).write(self.TB.TBinaryProtocol(buf))
        return buf.getvalue()

    def _zipkin_spans(self, spans):
        zt = self.zt
        out = []
        for s in spans:
            t = int(s["trace"], 16)
            host = zt.Endpoint(ipv4=0x7f000001, port=80, service_name=s["service"])
            out.append(zt.Span(
                trace_id=signed(t & (2**64 - 1)), trace_id_high=signed(t >> 64) if t >> 64 else None,
                name=s["name"], id=signed(int(s["span"], 16)),
                parent_id=signed(int(s["parent"], 16)) if s["parent"] else None,
                timestamp=s["start"], duration=s["duration"], annotations=[],
                binary_annotations=[
                    zt.BinaryAnnotation(key=k, value=v.encode(),
                                        annotation_type=zt.AnnotationType.STRING, host=host)
                    for k, v in sorted(s["tags"].items())]))
        return out

    def emit_zipkin_batch(self, spans):
        buf = self.TT.TMemoryBuffer()
        proto = self.TC.TCompactProtocol(buf)
        self.agent.Client(proto, proto).emitZipkinBatch(self._zipkin_spans(spans))
        return buf.getvalue()

    def zipkin_list(self, spans):
        buf = self.TT.TMemoryBuffer()
        p = self.TB.TBinaryProtocol(buf)
        zs = self._zipkin_spans(spans)
        p.writeListBegin(self.TB.TType.STRUCT, len(zs))
        for z in zs:
            z.write(p)
        p.writeListEnd()
        return buf.getvalue()

    def read_emit_batch(self, datagram):
        """An Agent.emitBatch datagram (compact or binary, by its first byte) -> canonical spans."""
        proto = self.TC.TCompactProtocol if datagram[:1] == b"\x82" else self.TB.TBinaryProtocol
        p = proto(self.TT.TMemoryBuffer(datagram))
        p.readMessageBegin()
        args = self.agent.emitBatch_args()
        args.read(p)
        buf = self.TT.TMemoryBuffer()
        args.batch.write(self.TB.TBinaryProtocol(buf))
        return self.read_jaeger_batches(buf.getvalue())

    def read_jaeger_batches(self, body):
        """Concatenated binary Batch structs -> canonical spans."""
        buf = self.TT.TMemoryBuffer(body)
        p = self.TB.TBinaryProtocol(buf)
        out = []
        while buf.cstringio_buf.tell() < len(body):
            b = self.jt.Batch()
            b.read(p)
            for s in b.spans:
                trace = (unsigned(s.traceIdHigh) << 64) | unsigned(s.traceIdLow)
                tags = {}
                for t in s.tags or []:
                    if t.key in ("t.str", "t.int"):
                        tt = self.jt.TagType
                        tags[t.key] = {tt.STRING: t.vStr, tt.LONG: str(t.vLong),
                                       tt.DOUBLE: repr(t.vDouble),
                                       tt.BOOL: str(t.vBool).lower()}.get(t.vType, "?")
                out.append({"trace": "%032x" % trace, "span": "%016x" % unsigned(s.spanId),
                            "parent": "%016x" % unsigned(s.parentSpanId) if s.parentSpanId else "",
                            "name": s.operationName, "start": s.startTime,
                            "duration": s.duration, "service": b.process.serviceName,
                            "tags": tags})
        return out


def otlp_doc(spans):
    out = []
    for s in spans:
        attrs = [{"key": "t.str", "value": {"stringValue": s["tags"]["t.str"]}},
                 {"key": "t.int", "value": {"intValue": s["tags"]["t.int"]}}]
        d = {"traceId": s["trace"], "spanId": s["span"], "name": s["name"], "kind": 1,
             "startTimeUnixNano": str(s["start"] * 1000),
             "endTimeUnixNano": str((s["start"] + s["duration"]) * 1000), "attributes": attrs}
        if s["parent"]:
            d["parentSpanId"] = s["parent"]
        out.append(d)
    return {"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name",
                                     "value": {"stringValue": spans[0]["service"]}}]},
        "scopeSpans": [{"scope": {"name": "test"}, "spans": out}]}]}


def zipkin_v2_doc(spans):
    out = []
    for s in spans:
        d = {"traceId": s["trace"], "id": s["span"], "name": s["name"], "timestamp": s["start"],
             "duration": s["duration"], "localEndpoint": {"serviceName": s["service"]},
             "tags": dict(s["tags"])}
        if s["parent"]:
            d["parentId"] = s["parent"]
        out.append(d)
    return out


def zipkin_v1_doc(spans):
    out = []
    for s in spans:
        host = {"serviceName": s["service"], "ipv4": "127.0.0.1", "port": 80}
        d = {"traceId": s["trace"], "id": s["span"], "name": s["name"], "timestamp": s["start"],
             "duration": s["duration"], "annotations": [],
             "binaryAnnotations": [{"key": k, "value": v, "endpoint": host}
                                   for k, v in sorted(s["tags"].items())]}
        if s["parent"]:
            d["parentId"] = s["parent"]
        out.append(d)
    return out


def dapper_line(s):
    d = {"v": 1, "trace_id": s["trace"], "span_id": s["span"], "name": s["name"],
         "start_us": s["start"], "end_us": s["start"] + s["duration"], "flags": 1,
         "tags": [{"key": "t.str", "type": "string", "value": s["tags"]["t.str"]},
                  {"key": "t.int", "type": "int64", "value": int(s["tags"]["t.int"])}],
         "process": {"service": s["service"], "tags": []}}
    if s["parent"]:
        d["parent_id"] = s["parent"]
    return json.dumps(d, separators=(",", ":")) + "\n"


def _hex32(h):
    return "%032x" % int(h, 16)


def _attr(v):
    for k in ("stringValue", "intValue", "boolValue", "doubleValue"):
        if k in v:
            return str(v[k])
    return json.dumps(v)


def read_otlp(body):
    out = []
    for rs in json.loads(body)["resourceSpans"]:
        svc = ""
        for a in rs.get("resource", {}).get("attributes", []):
            if a["key"] == "service.name":
                svc = a["value"]["stringValue"]
        for ss in rs.get("scopeSpans", []):
            for s in ss.get("spans", []):
                tags = {a["key"]: _attr(a["value"]) for a in s.get("attributes", [])
                        if a["key"] in ("t.str", "t.int")}
                start = int(s["startTimeUnixNano"]) // 1000
                out.append({"trace": _hex32(s["traceId"]), "span": s["spanId"],
                            "parent": s.get("parentSpanId", ""), "name": s["name"],
                            "start": start,
                            "duration": int(s["endTimeUnixNano"]) // 1000 - start,
                            "service": svc, "tags": tags})
    return out


def read_zipkin(body):
    out = []
    for s in json.loads(body):
        tags = {k: v for k, v in s.get("tags", {}).items() if k in ("t.str", "t.int")}
        out.append({"trace": _hex32(s["traceId"]), "span": s["id"],
                    "parent": s.get("parentId", ""), "name": s.get("name", ""),
                    "start": s["timestamp"], "duration": s.get("duration", 0),
                    "service": s.get("localEndpoint", {}).get("serviceName", ""), "tags": tags})
    return out


def read_dapper(text):
    out = []
    for line in text.splitlines():
        if not line.strip():
            continue
        d = json.loads(line)
        tags = {t["key"]: str(t["value"]) for t in d.get("tags", [])
                if t["key"] in ("t.str", "t.int")}
        out.append({"trace": _hex32(d["trace_id"]), "span": d["span_id"],
                    "parent": d.get("parent_id", ""), "name": d["name"], "start": d["start_us"],
                    "duration": d["end_us"] - d["start_us"], "service": d["process"]["service"],
                    "tags": tags})
    return out


def normalise(spans):
    for s in spans:
        s["trace"] = _hex32(s["trace"])
    return spans


# ---- checks -----------------------------------------------------------------------------------

RESULTS = {"passed": 0, "failed": 0}


def check(name, cond, *detail):
    if cond:
        RESULTS["passed"] += 1
        print("PASS: %s" % name)
    else:
        RESULTS["failed"] += 1
        print("FAIL: %s" % name)
        for d in detail:
            print("    %s" % (d,))
    sys.stdout.flush()
    return cond


def compare_once(name, want, got, allow_dups=0):
    """Every wanted span arrived exactly once (at most allow_dups extra copies), field by field."""
    wc = {}
    for s in want:
        wc[canon(s)] = wc.get(canon(s), 0) + 1
    gc = {}
    for s in got:
        gc[canon(s)] = gc.get(canon(s), 0) + 1
    missing = [k for k in wc if k not in gc]
    extra = [k for k in gc if k not in wc]
    dups = sum(gc[k] - 1 for k in gc if k in wc and gc[k] > 1)
    return check(name, not missing and not extra and dups <= allow_dups,
                 "want %d spans, got %d (missing %d, unexpected %d, duplicates %d; allowed %d)" %
                 (len(want), len(got), len(missing), len(extra), dups, allow_dups),
                 *(["missing e.g. %s" % (missing[:2],)] if missing else []),
                 *(["unexpected e.g. %s" % (extra[:2],)] if extra else []))


def wait_for(cond, timeout=20, step=0.05):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(step)
    return cond()


def send_udp(host_port, payload):
    host, port = host_port
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.sendto(payload, (host, port))
    s.close()


def post(url, body, content_type, headers=None, gzip_body=False):
    import urllib.error
    import urllib.request
    h = {"Content-Type": content_type}
    if gzip_body:
        body = gzip.compress(body)
        h["Content-Encoding"] = "gzip"
    h.update(headers or {})
    req = urllib.request.Request(url, data=body, headers=h, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")


__all__ = ["Backend", "Agent", "Thrift", "check", "compare_once", "wait_for", "send_udp", "post",
           "make_spans", "otlp_doc", "zipkin_v2_doc", "zipkin_v1_doc", "dapper_line", "read_otlp",
           "read_zipkin", "read_dapper", "normalise", "free_port", "RESULTS", "zlib"]
