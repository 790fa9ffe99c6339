// SPDX-License-Identifier: Apache-2.0
// tests/bench/peer/jaeger_client_bench.js: the peer half of `make bench`.
//
// tracewire reports its benchmark figures as ratios against the official
// Jaeger Node.js client (npm jaeger-client 3.19.0) measured in the same run,
// so that a slower or faster machine moves both sides together. This script
// times that client through the path a real application takes (tracer ->
// RemoteReporter -> UDPSender -> UDP datagram to an agent) and prints one JSON
// object on stdout. run_peer.sh installs the package and runs it; nothing here
// is part of tracewire itself.
//
// Usage: node jaeger_client_bench.js SINK_PORT [ITERATIONS]
//   jaeger-client must be resolvable (run_peer.sh sets NODE_PATH). SINK_PORT
//   receives the sampled phase's datagrams (nobody need listen). ITERATIONS
//   (default 1,000,000) is the unsampled span count; the sampled and delivery
//   phases use a fifth of it, keeping the default 1,000,000/200,000 split.
//   TW_PEER_SINK_RCVBUF_BYTES sets the phase-3 sink's socket buffer.
//
// Phases: (1) unsampled_ns and (2) sampled_ns, the caller's time per span;
// (3) spans delivered per second of wall time to a sink this process opens,
// and how many were lost on the way, split into client and sink losses.
// Measured on 3.19.0 (2 cores, node 20): the client has no span queue, so it
// never drops for lack of room, but UDPSender.append re-adds the span that
// overflowed a batch only in the send callback, without a size check. When
// those late spans land in an almost full batch, the next datagram exceeds
// 65,507 bytes, send fails with EMSGSIZE and the whole batch (~160 spans) is
// dropped; only the logger and the dropped counter hear of it, and both are
// no-ops by default.
//
// The same file is also the entry point of the sink worker thread (phase 3).
'use strict';

const { isMainThread, parentPort, workerData, Worker } = require('worker_threads');
const dgram = require('dgram');
const fs = require('fs');
const { createRequire } = require('module');

// Requested sink SO_RCVBUF unless TW_PEER_SINK_RCVBUF_BYTES says otherwise
// (0: the OS default, which is also jaeger-agent's default). The client sends
// ~65 KB datagrams back to back; a default 208 KiB buffer holds three, so a
// sink thread that loses the CPU for a moment on a 2-core machine drops some
// of them, and that loss would be the sink's, not the client's. Linux clamps
// the request to net.core.rmem_max; the JSON reports what getsockopt says
// was granted, which on Linux is twice the usable size.
const SINK_RCVBUF_BYTES = 4 * 1024 * 1024;
// Spans per timed slice. Between slices the event loop runs, which is where
// this client does its socket I/O; a single synchronous loop would instead
// pile every datagram up until the end and then send them in one burst.
const CHUNK = 1000;
// Phase 3 sink: after the tracer's close callback every datagram is already in
// the sink's socket buffer (loopback delivers inside sendmsg) or was dropped,
// so a short silence means the sink has drained it.
const SINK_QUIET_MS = 200;
const PEER_VERSION = '3.19.0';
const SERVICE_DELIVERY = 'tracewire-peer-delivery';

function loadClient(fromFile) {
    // Internal paths are stable because run_peer.sh pins the version; the
    // index does not export UDPSender, Metrics or the Thrift helpers.
    const req = fromFile ? createRequire(fromFile) : require;
    const main = req.resolve('jaeger-client');
    const clientReq = createRequire(main);
    return {
        main,
        jaeger: clientReq('jaeger-client'),
        pkg: clientReq('jaeger-client/package.json'),
        UDPSender: clientReq('jaeger-client/dist/src/reporters/udp_sender.js').default,
        Metrics: clientReq('jaeger-client/dist/src/metrics/metrics.js').default,
        ThriftUtils: clientReq('jaeger-client/dist/src/thrift.js').default,
        // thriftrw is the client's own dependency: decode with the very
        // library and IDL objects its UDPSender encodes with.
        Thrift: clientReq('thriftrw').Thrift,
    };
}

// ---------------------------------------------------------------------------
// Sink worker: receives the agent datagrams of phase 3 and counts the spans.
// It runs on its own thread (own event loop) so that it reads while the main
// thread is busy creating spans, as a separate jaeger-agent process would; a
// sink on the main thread could only read between slices and would measure
// its own socket buffer instead of the client.
if (!isMainThread) {
    const client = loadClient(workerData.clientMain);
    const datagrams = [];
    let lastArrival = 0n;
    // recvBufferSize 0 keeps the OS default, as jaeger-agent's
    // server-socket-buffer-size does by default.
    const sock = dgram.createSocket(workerData.recvBufferBytes
        ? { type: 'udp4', recvBufferSize: workerData.recvBufferBytes } : 'udp4');
    sock.on('message', (msg) => {
        datagrams.push(msg);
        lastArrival = process.hrtime.bigint();
    });
    sock.on('error', (err) => {
        parentPort.postMessage({ type: 'error', message: String(err) });
    });
    sock.bind(0, '127.0.0.1', () => {
        parentPort.postMessage({
            type: 'ready',
            port: sock.address().port,
            recvBufferBytes: sock.getRecvBufferSize(),
        });
    });
    parentPort.on('message', (cmd) => {
        if (cmd !== 'drain') return;
        const poll = setInterval(() => {
            const quietNs = process.hrtime.bigint() - lastArrival;
            if (quietNs < BigInt(SINK_QUIET_MS) * 1000000n) return;
            clearInterval(poll);
            sock.close();
            parentPort.postMessage(Object.assign({ type: 'result' }, decodeAll(client, datagrams)));
            parentPort.close();
        }, SINK_QUIET_MS / 4);
    });
    return;
}

// Decodes jaeger-agent datagrams with the agent IDL that ships in the package
// (dist/src/thriftrw-idl/agent.thrift, including jaeger-idl's jaeger.thrift).
// thriftrw speaks only the binary protocol, so UDPSender emits a strict binary
// "emitBatch" oneway message: the agent's 6832 port format, not the compact
// 6831 one. Anything else counts as a decode error.
function decodeAll(client, datagrams) {
    const agent = new client.Thrift({
        entryPoint: client.ThriftUtils.buildAgentThriftPath(),
        allowOptionalArguments: true,
        allowFilesystemAccess: true,
    });
    const rw = agent.Agent.emitBatch.argumentsMessageRW;
    let spans = 0;
    let foreignSpans = 0;
    let decodeErrors = 0;
    let maxBytes = 0;
    let firstError = null;
    for (const buf of datagrams) {
        maxBytes = Math.max(maxBytes, buf.length);
        // 0x80 0x01: strict binary version 1; 0x00 0x04: message type ONEWAY.
        const res = buf.length >= 4 && buf.readUInt32BE(0) === 0x80010004
            ? rw.readFrom(buf, 0) : { err: 'not a strict binary oneway message' };
        if (res.err || res.offset !== buf.length || res.value.name !== 'emitBatch') {
            decodeErrors++;
            firstError = firstError || String(res.err || 'trailing or foreign bytes');
            continue;
        }
        const batch = res.value.body.batch;
        // Count only this run's spans, in case something else hits the port.
        if (batch.process.serviceName === SERVICE_DELIVERY) spans += batch.spans.length;
        else foreignSpans += batch.spans.length;
    }
    return { datagrams: datagrams.length, spans, foreignSpans, decodeErrors, firstError, maxBytes };
}

// ---------------------------------------------------------------------------
// Main thread.

function usage(msg) {
    process.stderr.write(`jaeger_client_bench.js: ${msg}\n` +
        'usage: node jaeger_client_bench.js SINK_PORT [ITERATIONS]\n');
    process.exit(2);
}

function parsePositive(text, what, max) {
    if (!/^[0-9]+$/.test(text)) usage(`${what} must be a positive integer, not "${text}"`);
    const n = Number(text);
    if (n < 1 || n > max) usage(`${what} must be between 1 and ${max}`);
    return n;
}

// Counts what the client reports about itself. The client has no span queue
// and no queue-full drop: reporter_spans{result=dropped} counts only spans
// that failed to convert or were larger than one datagram, and
// {result=err} only batches whose send failed.
function countingMetrics(client, counts) {
    const factory = {
        createCounter(name, tags) {
            const key = name + (tags && tags.result ? `:${tags.result}` : '');
            counts[key] = counts[key] || 0;
            return { increment(delta) { counts[key] += delta === undefined ? 1 : delta; } };
        },
        createGauge() { return { update() {} }; },
        createTimer() { return { record() {} }; },
    };
    return new client.Metrics(factory);
}

// The client logs (rather than returns) every reporter and sender error, and
// its default logger discards them; keep a count and the first one.
function countingLogger(counts) {
    return {
        info() {},
        error(msg) {
            counts.loggedErrors = (counts.loggedErrors || 0) + 1;
            counts.firstLoggedError = counts.firstLoggedError || String(msg);
        },
    };
}

function makeTracer(client, serviceName, isSampled, port, counts) {
    const logger = countingLogger(counts);
    const metrics = countingMetrics(client, counts);
    // Defaults everywhere else: maxPacketSize 65000, flush interval 1 s.
    const sender = new client.UDPSender({ host: '127.0.0.1', port, logger });
    const reporter = new client.jaeger.RemoteReporter(sender, { logger, metrics });
    const sampler = new client.jaeger.ConstSampler(isSampled);
    return new client.jaeger.Tracer(serviceName, reporter, sampler, { logger, metrics });
}

// The measured unit, the same in every phase and in the C benchmark: one
// root span, a string tag, an integer tag, finish. The client encodes the
// integer tag as a DOUBLE (it maps every JS number to TagType.DOUBLE), adds
// sampler.type and sampler.param tags to each sampled root span, and writes
// all five value fields of every tag, so a span is 394 bytes on the wire.
function spans(tracer, n) {
    for (let i = 0; i < n; i++) {
        const span = tracer.startSpan('op');
        span.setTag('http.method', 'GET');
        span.setTag('http.status_code', 200);
        span.finish();
    }
}

const yieldToLoop = () => new Promise((resolve) => setImmediate(resolve));

// Returns the nanoseconds spent inside spans() for n spans, excluding the
// event-loop turns between slices (where the client's socket sends run).
async function timeSpans(tracer, n) {
    let total = 0n;
    for (let done = 0; done < n; done += CHUNK) {
        const k = Math.min(CHUNK, n - done);
        const t0 = process.hrtime.bigint();
        spans(tracer, k);
        total += process.hrtime.bigint() - t0;
        await yieldToLoop();
    }
    return total;
}

const closeTracer = (tracer) => new Promise((resolve) => tracer.close(resolve));

// Per-span cost on the caller's thread. Warm-up lets V8 optimise the path
// before the clock starts.
async function perSpanNs(client, isSampled, port, n) {
    const counts = {};
    const tracer = makeTracer(client, `tracewire-peer-${isSampled ? 's' : 'u'}`, isSampled, port,
                              counts);
    await timeSpans(tracer, Math.min(n, 100000));
    const ns = await timeSpans(tracer, n);
    await closeTracer(tracer);
    return { ns: Number(ns) / n, counts };
}

function udpRcvbufErrors() {
    // Linux only; system-wide, so only indicative on a busy host.
    try {
        const lines = fs.readFileSync('/proc/net/snmp', 'ascii').split('\n')
            .filter((l) => l.startsWith('Udp:'));
        const names = lines[0].split(/\s+/);
        const values = lines[1].split(/\s+/);
        return Number(values[names.indexOf('RcvbufErrors')]);
    } catch (e) {
        return null;
    }
}

function startSink(client) {
    const env = process.env.TW_PEER_SINK_RCVBUF_BYTES;
    let recvBufferBytes = SINK_RCVBUF_BYTES;
    if (env === '0') recvBufferBytes = 0;
    else if (env) recvBufferBytes = parsePositive(env, 'TW_PEER_SINK_RCVBUF_BYTES', 1 << 30);
    const worker = new Worker(__filename, { workerData: { clientMain: client.main, recvBufferBytes } });
    const messages = [];
    const waiters = [];
    worker.on('message', (m) => {
        const w = waiters.findIndex((x) => x.type === m.type);
        if (w >= 0) waiters.splice(w, 1)[0].resolve(m);
        // A sink that cannot bind would otherwise leave main() waiting.
        else if (m.type === 'error') throw new Error(`sink: ${m.message}`);
        else messages.push(m);
    });
    worker.on('error', (err) => { throw err; });
    const next = (type) => new Promise((resolve) => {
        const i = messages.findIndex((m) => m.type === type);
        if (i >= 0) resolve(messages.splice(i, 1)[0]);
        else waiters.push({ type, resolve });
    });
    return { worker, next };
}

// Phase 3: throughput to, and loss at, a sink. Spans are created as fast as
// the caller can, yielding to the event loop every CHUNK spans so the
// client's sends can run; wall time runs from the first span to the close
// callback, which fires once the last datagram has been handed to the kernel.
async function delivery(client, n) {
    const sink = startSink(client);
    const ready = await sink.next('ready');
    const counts = {};
    const tracer = makeTracer(client, SERVICE_DELIVERY, true, ready.port, counts);
    const rcvbufBefore = udpRcvbufErrors();
    const t0 = process.hrtime.bigint();
    for (let done = 0; done < n; done += CHUNK) {
        spans(tracer, Math.min(CHUNK, n - done));
        await yieldToLoop();
    }
    await closeTracer(tracer);
    const wallNs = process.hrtime.bigint() - t0;
    sink.worker.postMessage('drain');
    const got = await sink.next('result');
    const rcvbufAfter = udpRcvbufErrors();
    return {
        wallNs,
        got,
        counts,
        sinkRecvBufferBytes: ready.recvBufferBytes,
        kernelRcvbufErrors: rcvbufBefore === null || rcvbufAfter === null
            ? null : rcvbufAfter - rcvbufBefore,
    };
}

async function main() {
    const args = process.argv.slice(2);
    if (args.length < 1 || args.length > 2) usage('wrong number of arguments');
    const sinkPort = parsePositive(args[0], 'SINK_PORT', 65535);
    const iterations = args[1] === undefined ? 1000000 : parsePositive(args[1], 'ITERATIONS', 1e9);
    const sampledN = Math.max(1, Math.floor(iterations / 5));

    const client = loadClient(null);
    if (client.pkg.version !== PEER_VERSION) {
        throw new Error(`expected jaeger-client ${PEER_VERSION}, found ${client.pkg.version}`);
    }

    const unsampled = await perSpanNs(client, false, sinkPort, iterations);
    // Caller's cost of a sampled span. Per span, finish() converts the span to
    // a plain Thrift-shaped object (spanToThrift) and computes its encoded
    // size with thriftrw (byteLength) to decide whether the 65,000-byte batch
    // is full. The batch is serialised (writeInto) synchronously too, inside
    // whichever finish() overflows it, so that cost is amortised into this
    // figure. Deferred to the event loop, and not in it: the address lookup
    // and the sendmsg of each datagram, and the 1 s timer flush of a partial
    // batch.
    const sampled = await perSpanNs(client, true, sinkPort, sampledN);
    const d = await delivery(client, sampledN);

    const wallS = Number(d.wallNs) / 1e9;
    const sentOk = d.counts['jaeger:reporter_spans:ok'] || 0;
    const result = {
        peer: `jaeger-client (Node.js) ${client.pkg.version}`,
        node: process.version,
        unsampled_ns: Math.round(unsampled.ns * 10) / 10,
        sampled_ns: Math.round(sampled.ns * 10) / 10,
        delivered_spans_per_s: Math.round(d.got.spans / wallS),
        created: sampledN,
        received: d.got.spans,
        lost: sampledN - d.got.spans,
        // lost = lost_in_client + lost_at_sink. reporter_ok counts spans in
        // batches the client handed to the kernel without error, so the
        // rest never left the client (failed sends, or spans stranded by
        // close); lost_at_sink is what the kernel dropped on the sink side.
        lost_in_client: sampledN - sentOk,
        lost_at_sink: sentOk - d.got.spans,
        // What the client itself admits to (see countingMetrics).
        reporter_ok: sentOk,
        reporter_dropped: d.counts['jaeger:reporter_spans:dropped'] || 0,
        reporter_failed: d.counts['jaeger:reporter_spans:err'] || 0,
        reporter_errors_logged: d.counts.loggedErrors || 0,
        first_error: d.counts.firstLoggedError || null,
        // The same for the sampled timing phase (phase 2).
        sampled_phase_reporter_dropped: sampled.counts['jaeger:reporter_spans:dropped'] || 0,
        sampled_phase_reporter_failed: sampled.counts['jaeger:reporter_spans:err'] || 0,
        datagrams: d.got.datagrams,
        max_datagram_bytes: d.got.maxBytes,
        decode_errors: d.got.decodeErrors,
        delivery_wall_s: Math.round(wallS * 1000) / 1000,
        sink_recv_buffer_bytes: d.sinkRecvBufferBytes,
        kernel_udp_rcvbuf_errors: d.kernelRcvbufErrors,
    };
    if (d.got.firstError) result.first_decode_error = d.got.firstError;
    if (d.got.foreignSpans) result.foreign_spans = d.got.foreignSpans;
    process.stdout.write(JSON.stringify(result) + '\n');
}

main().catch((err) => {
    process.stderr.write(`jaeger_client_bench.js: ${err && err.stack || err}\n`);
    process.exit(1);
});
