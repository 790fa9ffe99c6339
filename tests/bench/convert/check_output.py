#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""tests/bench/convert/check_output.py: checks the outputs of the conversion benchmark
(run_convert_bench.sh, `make bench`), outside the timed runs.

    check_output.py zipkin TRACEWIRE_OUT PEER_OUT
    check_output.py jaeger GEN_PY_DIR TRACEWIRE_OUT PEER_OUT

zipkin: both files must be one JSON array of Zipkin v2 spans (read element by element, so
memory stays small whatever the size); every tracewire span needs traceId (16 or 32
lower-case hex), id (16), an integer timestamp and a duration >= 1, a localEndpoint and
string-only tags.
jaeger: both files must be concatenated binary jaeger Batch structs with nothing after the
last one; decoded with python3-thrift and classes generated from thrift/jaeger.thrift.

Then the first SAMPLE spans of the peer's output are compared field by field with the same
spans of tracewire's (found by trace id, span id and kind or process): the peer is meant to
do the same mapping, and this says how close it is.

Prints one line "spans=N batches=B peer_spans=M peer_batches=C compared=K differ=D" (batches
0 for zipkin) and, for differences, the first few of them. Exit 1 when tracewire's output is
malformed, 2 on a usage error.
"""
import json
import re
import sys

SAMPLE = 50000
SHOWN_DIFFS = 3
HEX16 = re.compile(r"^[0-9a-f]{16}$")
HEX_TRACE = re.compile(r"^([0-9a-f]{16}|[0-9a-f]{32})$")


class Malformed(Exception):
    pass


def json_array_items(path):
    """Yields the elements of the JSON array in @path, reading 4 MiB at a time."""
    decoder = json.JSONDecoder()
    with open(path, "r", encoding="utf-8") as f:
        buf, pos, is_eof = "", 0, False

        def more():
            nonlocal buf, pos, is_eof
            chunk = f.read(1 << 22)
            if not chunk:
                is_eof = True
            buf = buf[pos:] + chunk
            pos = 0

        def skip_ws():
            nonlocal pos
            while True:
                while pos < len(buf) and buf[pos] in " \t\r\n":
                    pos += 1
                if pos < len(buf) or is_eof:
                    return
                more()

        skip_ws()
        if pos >= len(buf) or buf[pos] != "[":
            raise Malformed("%s: not a JSON array" % path)
        pos += 1
        first = True
        while True:
            skip_ws()
            if pos >= len(buf):
                raise Malformed("%s: ends inside the array" % path)
            if buf[pos] == "]":
                pos += 1
                skip_ws()
                if pos < len(buf):
                    raise Malformed("%s: data after the array" % path)
                return
            if not first:
                if buf[pos] != ",":
                    raise Malformed("%s: expected ',' between elements" % path)
                pos += 1
                skip_ws()
            while True:
                try:
                    item, end = decoder.raw_decode(buf, pos)
                    break
                except json.JSONDecodeError as e:
                    if is_eof:
                        raise Malformed("%s: %s" % (path, e))
                    more()
            pos = end
            first = False
            yield item
            if len(buf) - pos < (1 << 16) and not is_eof:
                more()


def check_zipkin_span(span, index):
    def bad(why):
        raise Malformed("tracewire span %d: %s: %s" % (index, why, json.dumps(span)[:300]))

    if not isinstance(span, dict):
        bad("not an object")
    if not HEX_TRACE.match(span.get("traceId", "")):
        bad("traceId")
    if not HEX16.match(span.get("id", "")):
        bad("id")
    if "parentId" in span and not HEX16.match(span["parentId"]):
        bad("parentId")
    if not isinstance(span.get("timestamp"), int):
        bad("timestamp")
    if not isinstance(span.get("duration"), int) or span["duration"] < 1:
        bad("duration")
    if not isinstance(span.get("localEndpoint"), dict):
        bad("localEndpoint")
    for key, value in span.get("tags", {}).items():
        if not isinstance(value, str):
            bad("tag %s is not a string" % key)


def zipkin(tw_path, peer_path):
    sample, n_peer = {}, 0
    for span in json_array_items(peer_path):
        if n_peer < SAMPLE:
            sample[(span.get("traceId"), span.get("id"), span.get("kind"))] = span
        n_peer += 1
    n, compared, diffs = 0, 0, []
    for span in json_array_items(tw_path):
        check_zipkin_span(span, n)
        n += 1
        peer = sample.get((span["traceId"], span["id"], span.get("kind")))
        if peer is not None:
            compared += 1
            if peer != span:
                diffs.append((peer, span))
    return n, 0, n_peer, 0, compared, diffs


def jaeger(gen_py, tw_path, peer_path):
    sys.path.insert(0, gen_py)
    from jaeger.ttypes import Batch
    from thrift.protocol import TBinaryProtocol
    from thrift.transport import TTransport

    def batches(path, is_tracewire):
        with open(path, "rb") as f:
            data = f.read()
        trans = TTransport.TMemoryBuffer(data)
        prot = TBinaryProtocol.TBinaryProtocolAccelerated(trans)
        size = len(data)
        del data
        while trans._buffer.tell() < size:
            batch = Batch()
            try:
                batch.read(prot)
            except Exception as e:  # a truncated or corrupt struct
                if is_tracewire:
                    raise Malformed("%s: at byte %d: %s: %s"
                                    % (path, trans._buffer.tell(), type(e).__name__, e))
                raise
            if batch.process is None or batch.spans is None:
                raise Malformed("%s: a Batch without process or spans" % path)
            yield batch

    def norm(batch, span):
        def tags(ts):
            return sorted((t.key, t.vType, t.vStr, t.vDouble, t.vBool, t.vLong, t.vBinary)
                          for t in ts or ())
        logs = sorted((log.timestamp, tuple(tags(log.fields))) for log in span.logs or ())
        return {"process": (batch.process.serviceName, tags(batch.process.tags)),
                "traceIdHigh": span.traceIdHigh, "parentSpanId": span.parentSpanId,
                "operationName": span.operationName, "flags": span.flags,
                "startTime": span.startTime, "duration": span.duration,
                "tags": tags(span.tags), "logs": logs}

    sample, n_peer, n_peer_batches = {}, 0, 0
    for batch in batches(peer_path, False):
        n_peer_batches += 1
        for span in batch.spans:
            if n_peer < SAMPLE:
                sample[(span.traceIdLow, span.spanId)] = norm(batch, span)
            n_peer += 1
    n, n_batches, compared, diffs = 0, 0, 0, []
    for batch in batches(tw_path, True):
        n_batches += 1
        for span in batch.spans:
            n += 1
            if span.traceIdLow == 0 and span.traceIdHigh == 0 or span.spanId == 0:
                raise Malformed("tracewire span %d: zero id" % n)
            peer = sample.get((span.traceIdLow, span.spanId))
            if peer is not None:
                compared += 1
                mine = norm(batch, span)
                if mine != peer:
                    diffs.append(({k: v for k, v in peer.items() if mine[k] != v},
                                  {k: v for k, v in mine.items() if peer[k] != v}))
    return n, n_batches, n_peer, n_peer_batches, compared, diffs


def main():
    try:
        if len(sys.argv) == 4 and sys.argv[1] == "zipkin":
            result = zipkin(sys.argv[2], sys.argv[3])
        elif len(sys.argv) == 5 and sys.argv[1] == "jaeger":
            result = jaeger(sys.argv[2], sys.argv[3], sys.argv[4])
        else:
            sys.stderr.write(__doc__)
            return 2
    except Malformed as e:
        print("malformed: %s" % e)
        return 1
    n, n_batches, n_peer, n_peer_batches, compared, diffs = result
    print("spans=%d batches=%d peer_spans=%d peer_batches=%d compared=%d differ=%d"
          % (n, n_batches, n_peer, n_peer_batches, compared, len(diffs)))
    for peer, mine in diffs[:SHOWN_DIFFS]:
        print("  peer:      %s" % json.dumps(peer, default=repr)[:600])
        print("  tracewire: %s" % json.dumps(mine, default=repr)[:600])
    return 0


if __name__ == "__main__":
    sys.exit(main())
