// SPDX-License-Identifier: Apache-2.0
// tests/interop/propagation/peers.js: trace-context headers, tracewire against
// independent implementations, both directions (run by run_peers.sh in make check).
//
// Peers (npm, versions pinned in install_peers.sh):
//   jaeger-client         the Jaeger Node.js client: its tracer's HTTP_HEADERS codec
//                         (TextMapCodec with URL encoding) and its ZipkinB3TextMapCodec
//   otel-jaeger           @opentelemetry/propagator-jaeger JaegerPropagator
//   otel-w3c              @opentelemetry/core W3CTraceContextPropagator + W3CBaggagePropagator
//   otel-b3-multi/single  @opentelemetry/propagator-b3 B3Propagator (MULTI_HEADER / SINGLE_HEADER
//                         injection; its extract reads both)
//
// tracewire is driven through its command only (`tracewire context inject|extract`), so the test
// sees what a user sees. For every case and every peer that speaks the case's features:
//   ours -> theirs: `tracewire context inject --format F` prints header lines; the peer extracts
//                   them and its view of the context, in tracewire's JSON form, must equal the case.
//   theirs -> ours: the peer injects the case; `tracewire context extract --format F` reads its
//                   headers and must print the case.
// What a format cannot carry is taken out of the case before comparing (PEERS[].project): W3C has
// no parent id, OpenTelemetry keeps no parent id and no Jaeger debug bit, and so on. A loss the
// spec forces is a projection; a loss where implementations *disagree* is a probe (PROBES below):
// fixed headers read by every implementation of that format, each one's reading recorded and
// asserted, so that the table documents the disagreements and fails when a peer changes. Every
// probe's comment says who disagrees and what tracewire does. FORWARDS do the same for what a
// W3C implementation sends on after reading headers (extract, then inject of that context), and a
// last check records a writer that turns W3C's random-trace-id bit into Jaeger's debug bit.
//
// Carriers are plain objects with lower-case keys, as Node's http module hands headers to
// applications; OpenTelemetry's default getter looks keys up exactly, so that matters.
//
// Usage: node peers.js TRACEWIRE_BINARY   (the packages must be resolvable: run_peers.sh sets
// NODE_PATH). Prints one line per check and a closing "N passed, N failed"; exits 1 on a failure.
'use strict';

const { spawnSync } = require('child_process');
const assert = require('assert');

const api = require('@opentelemetry/api');
const core = require('@opentelemetry/core');
const { JaegerPropagator } = require('@opentelemetry/propagator-jaeger');
const { B3Propagator, B3InjectEncoding } = require('@opentelemetry/propagator-b3');
// The B3 debug flag lives in a context key the package does not export; its build layout is
// stable for the pinned version.
const { B3_DEBUG_FLAG_KEY } = require('@opentelemetry/propagator-b3/build/src/common');
const opentracing = require('opentracing');
const jaeger = require('jaeger-client');
const JaegerSpanContext = require('jaeger-client/dist/src/span_context').default;
const ZipkinB3TextMapCodec = require('jaeger-client/dist/src/propagators/zipkin_b3_text_map_codec')
    .default;

const TRACEWIRE = process.argv[2];
if (!TRACEWIRE) {
    console.error('usage: node peers.js TRACEWIRE_BINARY');
    process.exit(2);
}

// ---- tracewire through its command ------------------------------------------------------------

function runTracewire(args, input) {
    const r = spawnSync(TRACEWIRE, ['context', ...args], { input, encoding: 'utf8' });
    if (r.error) throw r.error;
    return { status: r.status, stdout: r.stdout, stderr: r.stderr.trim() };
}

// Header lines -> carrier (lower-case keys; a repeated name becomes an array, as Node does for
// headers it does not join).
function linesToCarrier(text) {
    const carrier = {};
    for (const line of text.split('\n')) {
        if (line === '') continue;
        const i = line.indexOf(':');
        const key = line.slice(0, i).toLowerCase();
        const value = line.slice(i + 1).trim();
        if (key in carrier) carrier[key] = [].concat(carrier[key], value);
        else carrier[key] = value;
    }
    return carrier;
}

function carrierToLines(carrier) {
    const lines = [];
    for (const [k, v] of Object.entries(carrier)) {
        for (const one of [].concat(v)) lines.push(`${k}: ${one}\n`);
    }
    return lines.join('');
}

function ourInject(format, ctx) {
    const r = runTracewire(['inject', '--format', format], JSON.stringify(ctx));
    if (r.status !== 0) throw new Error(`tracewire inject --format ${format} exited ${r.status}: ${r.stderr}`);
    return linesToCarrier(r.stdout);
}

// Returns the context JSON, or null when tracewire found none / refused the headers (exit 1).
function ourExtract(format, carrier) {
    const r = runTracewire(['extract', '--format', format], carrierToLines(carrier));
    if (r.status === 1) return null;
    if (r.status !== 0) throw new Error(`tracewire extract exited ${r.status}: ${r.stderr}`);
    return JSON.parse(r.stdout);
}

// ---- the canonical form: tracewire's JSON -----------------------------------------------------

const pad = (hex, n) => hex.padStart(n, '0');
const isZero = (hex) => /^0*$/.test(hex);

function ctxOf(fields) {
    return Object.assign({
        trace_id: null, span_id: null, parent_id: null, sampled: true, debug: false,
        firehose: false, random_trace_id: false, baggage: {}, tracestate: null, debug_id: null,
    }, fields);
}

// ---- peers -----------------------------------------------------------------------------------

// jaeger-client ids come from Buffers, as its tracer makes them, so it writes them the way it
// does for real spans: leading zeros stripped ("removeLeadingZeros").
function hexBuffer(hex) {
    return Buffer.from(hex, 'hex');
}

function jaegerClientContext(c) {
    const high = c.trace_id.slice(0, 16);
    const traceBuf = hexBuffer(isZero(high) ? c.trace_id.slice(16) : c.trace_id);
    const flags = (c.sampled ? 1 : 0) | (c.debug ? 2 : 0) | (c.firehose ? 8 : 0);
    return JaegerSpanContext.withBinaryIds(traceBuf, hexBuffer(c.span_id),
        c.parent_id ? hexBuffer(c.parent_id) : null, flags, Object.assign({}, c.baggage),
        c.debug_id || '');
}

// Ids are left as jaeger-client keeps them (padded only), so that case differences show.
function fromJaegerClient(sc) {
    if (!sc) return null;
    if (!sc.isValid) {
        // A "container" context: no ids, but a jaeger-debug-id or baggage.
        if (!sc.debugId && !Object.keys(sc.baggage || {}).length) return null;
        return ctxOf({
            sampled: sc.isSampled(), debug: sc.isDebug(), baggage: Object.assign({}, sc.baggage),
            debug_id: sc.debugId || null,
        });
    }
    const parent = sc.parentIdStr;
    return ctxOf({
        trace_id: pad(sc.traceIdStr, 32),
        span_id: pad(sc.spanIdStr, 16),
        parent_id: parent && !isZero(parent) ? pad(parent, 16) : null,
        sampled: sc.isSampled(),
        debug: sc.isDebug(),
        firehose: sc._samplingState.isFirehose(),
        baggage: Object.assign({}, sc.baggage),
        debug_id: sc.debugId || null,
    });
}

const jaegerTracer = new jaeger.Tracer('tracewire-interop', new jaeger.NoopReporter(),
    new jaeger.ConstSampler(true));

function otelContext(c) {
    let ctx = api.ROOT_CONTEXT;
    ctx = api.trace.setSpanContext(ctx, {
        traceId: c.trace_id,
        spanId: c.span_id,
        // W3C Level 2's random-trace-id bit (0x02) has no name in @opentelemetry/api 1.9.
        traceFlags: (c.sampled ? api.TraceFlags.SAMPLED : api.TraceFlags.NONE) | (c.random_trace_id ? 2 : 0),
        traceState: c.tracestate ? new core.TraceState(c.tracestate) : undefined,
        isRemote: false,
    });
    const entries = Object.entries(c.baggage);
    if (entries.length) {
        const b = {};
        for (const [k, v] of entries) b[k] = { value: v };
        ctx = api.propagation.setBaggage(ctx, api.propagation.createBaggage(b));
    }
    return ctx;
}

function fromOtel(ctx) {
    const sc = api.trace.getSpanContext(ctx);
    const baggage = {};
    const bag = api.propagation.getBaggage(ctx);
    if (bag) for (const [k, e] of bag.getAllEntries()) baggage[k] = e.value;
    if (!sc || !api.isSpanContextValid(sc)) {
        return Object.keys(baggage).length ? ctxOf({ sampled: null, baggage }) : null;
    }
    const debug = ctx.getValue(B3_DEBUG_FLAG_KEY);
    return ctxOf({
        trace_id: sc.traceId,
        span_id: sc.spanId,
        sampled: (sc.traceFlags & api.TraceFlags.SAMPLED) === api.TraceFlags.SAMPLED,
        debug: debug === '1' || debug === 'd',
        random_trace_id: (sc.traceFlags & 2) === 2,
        baggage,
        tracestate: sc.traceState ? sc.traceState.serialize() : null,
    });
}

// @debugValue: what OpenTelemetry's B3 extract leaves in the debug context key, '1' from
// X-B3-Flags, 'd' from a single header. Its single-header inject writes the key's value as the
// sampling state, so a debug decision read from multi headers leaves as "-1" (sampled, debug
// lost) when forwarded in a single header: an inconsistency inside OpenTelemetry, not at the
// wire, so the cases set the value each encoding expects.
function otelPeer(propagator, debugValue = '1') {
    return {
        inject(c) {
            const carrier = {};
            let ctx = otelContext(c);
            if (c.debug) ctx = ctx.setValue(B3_DEBUG_FLAG_KEY, debugValue);
            propagator.inject(ctx, carrier, api.defaultTextMapSetter);
            return carrier;
        },
        extract(carrier) {
            return fromOtel(propagator.extract(api.ROOT_CONTEXT, carrier, api.defaultTextMapGetter));
        },
    };
}

// project(case) -> the case as this peer pair can carry it. No case has `sampled: null` (B3's
// deferred decision): only tracewire keeps it, so it is a probe ("b3: no X-B3-Sampled").
//
// How the writers differ (all readers here accept every variant, so these are not probes):
// - ids: jaeger-client strips leading zeros in uber-trace-id and in B3 (against B3's 16/32
//   digits); OpenTelemetry always writes 32-digit trace ids, so a 64-bit id leaves as 16 zeros
//   plus the id; tracewire writes 16 digits for a 64-bit id and 32 otherwise, in every format.
// - uber-trace-id parent: jaeger-client writes the parent (or "0"), OpenTelemetry always "0",
//   tracewire the parent or 16 zeros (Go's form). Flags: jaeger-client one hex digit,
//   OpenTelemetry "00"/"01", tracewire one or two digits, as needed.
// - B3 debug: everyone writes X-B3-Flags: 1 without X-B3-Sampled (spec). jaeger-client always
//   writes X-B3-Sampled otherwise; tracewire omits it when the decision is deferred.
// - B3 baggage: jaeger-client sends uberctx-* next to B3 headers; no one else reads them there.
const keep = (c, over) => Object.assign({}, c, over);
const b3Codec = new ZipkinB3TextMapCodec({ urlEncoding: true });

const PEERS = [
    {
        name: 'jaeger-client', format: 'jaeger',
        // Everything Jaeger has: 64/128-bit ids, parent, sampled, debug, firehose, baggage.
        // No format but W3C has a random-trace-id bit: the others' projections drop it.
        project: (c) => keep(c, { random_trace_id: false, tracestate: null, debug_id: null }),
        inject(c) {
            const carrier = {};
            jaegerTracer.inject(jaegerClientContext(c), opentracing.FORMAT_HTTP_HEADERS, carrier);
            return carrier;
        },
        extract: (carrier) => fromJaegerClient(jaegerTracer.extract(opentracing.FORMAT_HTTP_HEADERS, carrier)),
    },
    {
        name: 'jaeger-client-b3', format: 'b3',
        // B3 multi has no baggage (jaeger-client puts uberctx- headers next to it, which
        // tracewire's B3 codec does not read) and no firehose.
        project: (c) => keep(c, { baggage: {}, firehose: false, random_trace_id: false, tracestate: null, debug_id: null }),
        inject(c) {
            const carrier = {};
            b3Codec.inject(jaegerClientContext(keep(c, { baggage: {} })), carrier);
            return carrier;
        },
        extract: (carrier) => fromJaegerClient(b3Codec.extract(carrier)),
    },
    Object.assign({
        name: 'otel-jaeger', format: 'jaeger',
        // OpenTelemetry's span context has no parent id, no debug and no firehose bit: it writes
        // parent "0" and flags 00/01, and reads only the sampled bit.
        project: (c) => keep(c, { parent_id: null, debug: false, firehose: false, random_trace_id: false, tracestate: null, debug_id: null }),
    }, otelPeer(new JaegerPropagator())),
    Object.assign({
        name: 'otel-w3c', format: 'w3c',
        // traceparent has no parent id and no debug; the random-trace-id flag (Level 2),
        // tracestate and W3C baggage ride along.
        project: (c) => keep(c, { parent_id: null, debug: false, firehose: false, debug_id: null }),
    }, otelPeer(new core.CompositePropagator({
        propagators: [new core.W3CTraceContextPropagator(), new core.W3CBaggagePropagator()],
    }))),
    Object.assign({
        name: 'otel-b3-multi', format: 'b3',
        // OpenTelemetry neither writes nor keeps X-B3-ParentSpanId.
        project: (c) => keep(c, { parent_id: null, baggage: {}, firehose: false, random_trace_id: false, tracestate: null, debug_id: null }),
    }, otelPeer(new B3Propagator({ injectEncoding: B3InjectEncoding.MULTI_HEADER }))),
    Object.assign({
        name: 'otel-b3-single', format: 'b3-single',
        // Same for the parent field of the single header.
        project: (c) => keep(c, { parent_id: null, baggage: {}, firehose: false, random_trace_id: false, tracestate: null, debug_id: null }),
    }, otelPeer(new B3Propagator({ injectEncoding: B3InjectEncoding.SINGLE_HEADER }), 'd')),
];

// ---- cases -----------------------------------------------------------------------------------

// Ids chosen with leading zero nibbles, so that zero-stripping writers (jaeger-client) and
// left-padding readers are exercised; the 128-bit one is the W3C spec's example.
const T128 = '0af7651916cd43dd8448eb211c80319c';
const T64 = '0000000000000000' + '03c2a1f0e5d4b697';
const SPAN = '00f067aa0ba902b7';
const PARENT = '0020000000000001';

const CASES = [
    { name: 'sampled, 128-bit', ctx: ctxOf({ trace_id: T128, span_id: SPAN, parent_id: PARENT }) },
    { name: 'unsampled, 128-bit', ctx: ctxOf({ trace_id: T128, span_id: SPAN, parent_id: PARENT, sampled: false }) },
    { name: 'sampled, 64-bit', ctx: ctxOf({ trace_id: T64, span_id: SPAN, parent_id: PARENT }) },
    { name: 'unsampled, 64-bit, root', ctx: ctxOf({ trace_id: T64, span_id: SPAN, sampled: false }) },
    { name: 'debug', ctx: ctxOf({ trace_id: T128, span_id: SPAN, parent_id: PARENT, debug: true }) },
    { name: 'firehose', ctx: ctxOf({ trace_id: T64, span_id: SPAN, firehose: true }), only: ['jaeger-client'] },
    {
        name: 'baggage',
        // Values need %-encoding in every format: space, '=', ',', '%', ';', '+', non-ASCII.
        ctx: ctxOf({
            trace_id: T128, span_id: SPAN, parent_id: PARENT,
            baggage: { 'user-id': 'alice smith', 'query': 'a=1,b=2;c%d', 'city': 'Zürich +1' },
        }),
    },
    {
        name: 'baggage, unsampled 64-bit',
        ctx: ctxOf({ trace_id: T64, span_id: SPAN, sampled: false, baggage: { tenant: 'acme' } }),
    },
    {
        name: 'tracestate',
        ctx: ctxOf({ trace_id: T128, span_id: SPAN, tracestate: 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7' }),
        only: ['otel-w3c'],
    },
    // The W3C Level 2 random-trace-id flag: carried by W3C, dropped by the formats without the
    // bit. Not for otel-jaeger, whose writer turns it into Jaeger's debug bit (a writer
    // disagreement, checked below).
    {
        name: 'random trace id, sampled',
        ctx: ctxOf({ trace_id: T128, span_id: SPAN, random_trace_id: true }),
        only: ['otel-w3c', 'jaeger-client', 'jaeger-client-b3', 'otel-b3-multi', 'otel-b3-single'],
    },
    {
        name: 'random trace id, unsampled, 64-bit',
        ctx: ctxOf({ trace_id: T64, span_id: SPAN, sampled: false, random_trace_id: true }),
        only: ['otel-w3c', 'jaeger-client', 'jaeger-client-b3', 'otel-b3-multi', 'otel-b3-single'],
    },
];

// ---- probes: fixed headers, every reader of the format, each reading recorded -----------------

const NONE = null; // "no context"
const P128 = (over) => ctxOf(Object.assign({ trace_id: T128, span_id: SPAN }, over));

// Readers by format; each returns a context in the canonical form, or null.
const READERS = {
    jaeger: {
        tracewire: (h) => ourExtract('jaeger', h),
        'jaeger-client': PEERS[0].extract,
        'otel-jaeger': PEERS[2].extract,
    },
    b3: {
        tracewire: (h) => ourExtract('b3', h),
        'jaeger-client-b3': PEERS[1].extract,
        'otel-b3': PEERS[4].extract,
    },
    w3c: {
        tracewire: (h) => ourExtract('w3c', h),
        'otel-w3c': PEERS[3].extract,
    },
};

// Each probe: headers as they arrive, and what every reader of the format makes of them. The
// comment says who disagrees and what tracewire does (and why); docs/PROPAGATION.md has the
// rules. `--print-probes` prints the current readings.
const U = 'uber-trace-id';
const TS = `${T128}:${SPAN}`;
const TP = `00-${T128}-${SPAN}-01`;
const C = P128(); // the probes' context read correctly: sampled, no parent
const UPPER = ctxOf({ trace_id: T128.toUpperCase(), span_id: SPAN.toUpperCase() });
const same = (readers, value) => Object.fromEntries(readers.map((r) => [r, value]));
const MEMBERS_33 = Array.from({ length: 33 }, (_, i) => `k${i + 1}=${i + 1}`).join(',');
const JAEGER_READERS = ['tracewire', 'jaeger-client', 'otel-jaeger'];
const B3_READERS = ['tracewire', 'jaeger-client-b3', 'otel-b3'];

const PROBES = [
    // ---- uber-trace-id (docs/wire/propagation.md) ----
    // jaeger-client writes ids without leading zeros; every reader left-pads. Agreement.
    {
        name: 'jaeger: zero-stripped ids', format: 'jaeger',
        headers: { [U]: 'af7651916cd43dd8448eb211c80319c:f067aa0ba902b7:0:1' },
        expect: same(JAEGER_READERS, C),
    },
    // otel-jaeger keeps only the sampled bit (traceFlags & 1): debug and firehose are lost on
    // the way through an OpenTelemetry service. tracewire and jaeger-client keep all flags.
    {
        name: 'jaeger: flags 3 (debug)', format: 'jaeger', headers: { [U]: `${TS}:0:3` },
        expect: { tracewire: P128({ debug: true }), 'jaeger-client': P128({ debug: true }), 'otel-jaeger': C },
    },
    {
        name: 'jaeger: flags b (debug, firehose)', format: 'jaeger', headers: { [U]: `${TS}:0:b` },
        expect: {
            tracewire: P128({ debug: true, firehose: true }),
            'jaeger-client': P128({ debug: true, firehose: true }),
            'otel-jaeger': C,
        },
    },
    // Flags that are not hex: otel-jaeger falls back to *sampled* (its `: 1` default), so a
    // corrupt header turns sampling on. jaeger-client rejects the header (parseInt NaN); so does
    // tracewire (malformed: no context, the reason in the error), as a bad field must not decide.
    {
        name: 'jaeger: flags not hex', format: 'jaeger', headers: { [U]: `${TS}:0:x` },
        expect: { tracewire: NONE, 'jaeger-client': NONE, 'otel-jaeger': C },
    },
    // The value %-encoded (as some HTTP stacks send it): everyone decodes. Agreement.
    {
        name: 'jaeger: %-encoded colons', format: 'jaeger',
        headers: { [U]: `${T128}%3A${SPAN}%3A0%3A1` },
        expect: same(JAEGER_READERS, C),
    },
    // jaeger-client validates ids with parseInt, which stops at the first non-hex character,
    // so it accepts "...bg" and passes the bogus string on. otel-jaeger (isValidSpanId) and
    // tracewire reject the header.
    {
        name: 'jaeger: non-hex tail in the span id', format: 'jaeger',
        headers: { [U]: `${T128}:00f067aa0ba902bg:0:1` },
        expect: { tracewire: NONE, 'jaeger-client': P128({ span_id: '00f067aa0ba902bg' }), 'otel-jaeger': NONE },
    },
    // Upper-case hex: all accept, but both peers keep (and re-emit) the upper-case string, which
    // W3C and B3 receivers downstream may refuse. tracewire stores numbers: lower case out.
    {
        name: 'jaeger: upper-case hex', format: 'jaeger',
        headers: { [U]: `${T128.toUpperCase()}:${SPAN.toUpperCase()}:0:1` },
        expect: { tracewire: C, 'jaeger-client': UPPER, 'otel-jaeger': UPPER },
    },
    {
        name: 'jaeger: zero trace id', format: 'jaeger', headers: { [U]: `0:${SPAN}:0:1` },
        expect: same(JAEGER_READERS, NONE),
    },
    // A raw '+' in an HTTP baggage value: Go (QueryUnescape) and Java (URLDecoder) read a space,
    // and so does tracewire (docs/wire/propagation.md: decode '+' as space); both Node peers use
    // decodeURIComponent and keep '+'. All of them *write* '+' as %2B, so values written by any
    // of these survive everywhere; only a raw '+' from a form-encoding writer differs.
    {
        name: 'jaeger: baggage value with +', format: 'jaeger',
        headers: { [U]: `${TS}:0:1`, 'uberctx-k': 'a+b' },
        expect: {
            tracewire: P128({ baggage: { k: 'a b' } }),
            'jaeger-client': P128({ baggage: { k: 'a+b' } }),
            'otel-jaeger': P128({ baggage: { k: 'a+b' } }),
        },
    },
    // Bad %-encoding: otel-jaeger drops the item silently; jaeger-client keeps the raw value (as
    // Go does), and so does tracewire, with a warning: baggage problems never cost data.
    {
        name: 'jaeger: baggage with bad %-encoding', format: 'jaeger',
        headers: { [U]: `${TS}:0:1`, 'uberctx-k': '100%zz', 'uberctx-j': '1' },
        expect: {
            tracewire: P128({ baggage: { k: '100%zz', j: '1' } }),
            'jaeger-client': P128({ baggage: { k: '100%zz', j: '1' } }),
            'otel-jaeger': P128({ baggage: { j: '1' } }),
        },
    },
    // jaeger-baggage (baggage from uninstrumented callers such as curl): otel-jaeger ignores it.
    {
        name: 'jaeger: jaeger-baggage header', format: 'jaeger',
        headers: { [U]: `${TS}:0:1`, 'jaeger-baggage': 'k1=v1, k2=v2' },
        expect: {
            tracewire: P128({ baggage: { k1: 'v1', k2: 'v2' } }),
            'jaeger-client': P128({ baggage: { k1: 'v1', k2: 'v2' } }),
            'otel-jaeger': C,
        },
    },
    // jaeger-debug-id without a trace: jaeger-client returns a "container" context (flags 0)
    // and turns on sampled + debug when a span starts from it; tracewire's hint carries
    // sampled + debug already (the outcome is the same trace). otel-jaeger ignores the header.
    {
        name: 'jaeger: jaeger-debug-id alone', format: 'jaeger',
        headers: { 'jaeger-debug-id': 'req-42' },
        expect: {
            tracewire: ctxOf({ sampled: true, debug: true, debug_id: 'req-42' }),
            'jaeger-client': ctxOf({ sampled: false, debug_id: 'req-42' }),
            'otel-jaeger': NONE,
        },
    },
    // With a trace context the debug id rides along (jaeger-client, tracewire); OTel drops it.
    {
        name: 'jaeger: jaeger-debug-id with a context', format: 'jaeger',
        headers: { [U]: `${TS}:0:1`, 'jaeger-debug-id': 'req-42' },
        expect: {
            tracewire: P128({ debug_id: 'req-42' }),
            'jaeger-client': P128({ debug_id: 'req-42' }),
            'otel-jaeger': C,
        },
    },

    // ---- B3 (docs/wire/propagation.md) ----
    // No X-B3-Sampled means "defer" in the B3 spec. Both peers read it as *not sampled*, so
    // the next service cannot sample the trace; tracewire keeps the deferral (sampled null) and
    // lets its own sampler decide.
    {
        name: 'b3: no X-B3-Sampled (defer)', format: 'b3',
        headers: { 'x-b3-traceid': T128, 'x-b3-spanid': SPAN },
        expect: { tracewire: P128({ sampled: null }), 'jaeger-client-b3': P128({ sampled: false }), 'otel-b3': P128({ sampled: false }) },
    },
    {
        name: 'b3: X-B3-Sampled true', format: 'b3',
        headers: { 'x-b3-traceid': T128, 'x-b3-spanid': SPAN, 'x-b3-sampled': 'true' },
        expect: same(B3_READERS, C),
    },
    // Debug with a contradicting Sampled: 0: debug implies accept for everyone. Agreement.
    {
        name: 'b3: X-B3-Flags 1 with X-B3-Sampled 0', format: 'b3',
        headers: { 'x-b3-traceid': T128, 'x-b3-spanid': SPAN, 'x-b3-sampled': '0', 'x-b3-flags': '1' },
        expect: same(B3_READERS, P128({ debug: true })),
    },
    // jaeger-client's B3 codec writes ids without leading zeros (against the spec's 16/32
    // digits). OpenTelemetry pads the trace id but requires exactly 16 span-id digits, so it
    // drops the context of 1 in 16 spans coming from jaeger-client. tracewire left-pads both,
    // as for uber-trace-id, and writes exactly 16/32 digits itself.
    {
        name: 'b3: zero-stripped ids', format: 'b3',
        headers: { 'x-b3-traceid': 'af7651916cd43dd8448eb211c80319c', 'x-b3-spanid': 'f067aa0ba902b7', 'x-b3-sampled': '1' },
        expect: { tracewire: C, 'jaeger-client-b3': C, 'otel-b3': NONE },
    },
    // An empty X-B3-ParentSpanId: the B3 spec calls empty values malformed, and tracewire
    // refuses the context; both peers ignore the empty header and keep the trace.
    {
        name: 'b3: empty X-B3-ParentSpanId', format: 'b3',
        headers: { 'x-b3-traceid': T128, 'x-b3-spanid': SPAN, 'x-b3-parentspanid': '', 'x-b3-sampled': '1' },
        expect: { tracewire: NONE, 'jaeger-client-b3': C, 'otel-b3': C },
    },
    // OpenTelemetry never reads (or writes) the parent span id, multi or single.
    {
        name: 'b3: multi with parent', format: 'b3',
        headers: { 'x-b3-traceid': T128, 'x-b3-spanid': SPAN, 'x-b3-parentspanid': PARENT, 'x-b3-sampled': '1' },
        expect: { tracewire: P128({ parent_id: PARENT }), 'jaeger-client-b3': P128({ parent_id: PARENT }), 'otel-b3': C },
    },
    // jaeger-client's B3 codec does not know the single b3 header at all.
    {
        name: 'b3: single with parent', format: 'b3', headers: { b3: `${T128}-${SPAN}-1-${PARENT}` },
        expect: { tracewire: P128({ parent_id: PARENT }), 'jaeger-client-b3': NONE, 'otel-b3': C },
    },
    // A single header without a sampling state defers (spec); OpenTelemetry reads not sampled.
    {
        name: 'b3: single without sampling state', format: 'b3', headers: { b3: `${T128}-${SPAN}` },
        expect: { tracewire: P128({ sampled: null }), 'jaeger-client-b3': NONE, 'otel-b3': P128({ sampled: false }) },
    },
    // "b3: 1" carries a decision without ids (spec); OpenTelemetry ignores it, tracewire
    // returns a hint so the next trace keeps the decision.
    {
        name: 'b3: single decision only', format: 'b3', headers: { b3: '1' },
        expect: { tracewire: ctxOf({ sampled: true }), 'jaeger-client-b3': NONE, 'otel-b3': NONE },
    },
    // OpenTelemetry matches its b3 regex anywhere in the value (no anchors), so trailing
    // garbage passes; tracewire refuses the header (malformed).
    {
        name: 'b3: single with trailing garbage', format: 'b3', headers: { b3: `${T128}-${SPAN}-1-garbage` },
        expect: { tracewire: NONE, 'jaeger-client-b3': NONE, 'otel-b3': C },
    },
    // Upper-case hex: OpenTelemetry's single-header regex is lower-case only; tracewire accepts
    // either case on input (as for uber-trace-id) and writes lower case.
    {
        name: 'b3: single upper-case', format: 'b3', headers: { b3: `${T128.toUpperCase()}-${SPAN}-1` },
        expect: { tracewire: C, 'jaeger-client-b3': NONE, 'otel-b3': NONE },
    },

    // ---- W3C trace context and baggage (docs/PROPAGATION.md, "W3C Trace Context") ----
    { name: 'w3c: upper-case traceparent', format: 'w3c', headers: { traceparent: `00-${T128.toUpperCase()}-${SPAN}-01` }, expect: same(['tracewire', 'otel-w3c'], NONE) },
    { name: 'w3c: version 01 with an extra field', format: 'w3c', headers: { traceparent: `01-${T128}-${SPAN}-01-what-comes-next` }, expect: same(['tracewire', 'otel-w3c'], C) },
    { name: 'w3c: version 00 with an extra field', format: 'w3c', headers: { traceparent: `00-${T128}-${SPAN}-01-extra` }, expect: same(['tracewire', 'otel-w3c'], NONE) },
    // Level 2's random-trace-id flag (0x02): both read it as a bit, apart from sampled.
    { name: 'w3c: flags 03 (sampled, random trace id)', format: 'w3c', headers: { traceparent: `00-${T128}-${SPAN}-03` }, expect: same(['tracewire', 'otel-w3c'], P128({ random_trace_id: true })) },
    { name: 'w3c: flags 02 (random trace id only)', format: 'w3c', headers: { traceparent: `00-${T128}-${SPAN}-02` }, expect: same(['tracewire', 'otel-w3c'], P128({ sampled: false, random_trace_id: true })) },
    // Unknown flags: both read the two defined bits alike (what each re-sends differs: see
    // FORWARDS below).
    { name: 'w3c: flags fd (unknown bits)', format: 'w3c', headers: { traceparent: `00-${T128}-${SPAN}-fd` }, expect: same(['tracewire', 'otel-w3c'], C) },
    // A tracestate list with a member that is not key=value: OpenTelemetry drops that member
    // and re-serialises the rest without spaces; tracewire discards the whole list with a
    // warning (the spec allows either), so it never forwards a list it could not validate.
    {
        name: 'w3c: tracestate with spaces and a bad member', format: 'w3c',
        headers: { traceparent: TP, tracestate: 'a=1 , b=2,bad,c=3' },
        expect: { tracewire: C, 'otel-w3c': P128({ tracestate: 'a=1,b=2,c=3' }) },
    },
    // A repeated key ("vendors MAY also discard duplicate keys"): OpenTelemetry keeps the key's
    // first position with its last value; tracewire keeps the first member whole (the left-most
    // is the most recent position), with a warning.
    {
        name: 'w3c: tracestate with a repeated key', format: 'w3c',
        headers: { traceparent: TP, tracestate: 'a=1,b=2,a=3' },
        expect: { tracewire: P128({ tracestate: 'a=1,b=2' }), 'otel-w3c': P128({ tracestate: 'a=3,b=2' }) },
    },
    // The current key grammar, key = ( lcalpha / DIGIT ) 0*255 ( keychar ) with '@' among the
    // key characters: OpenTelemetry (1.x and 2.x) still checks the first Recommendation's
    // grammar (a simple key starts with a letter; tenant@system with at most 241 and 14
    // characters and one '@') and drops such members one by one; tracewire keeps them.
    {
        name: 'w3c: tracestate key starting with a digit', format: 'w3c',
        headers: { traceparent: TP, tracestate: '1foo=1,bar=2' },
        expect: { tracewire: P128({ tracestate: '1foo=1,bar=2' }), 'otel-w3c': P128({ tracestate: 'bar=2' }) },
    },
    {
        name: 'w3c: tracestate keys with @ beyond the old tenant@system form', format: 'w3c',
        headers: { traceparent: TP, tracestate: 'foo@bar@baz=1,foo@=2,t@vvvvvvvvvvvvvvv=3,bar=4' },
        expect: {
            tracewire: P128({ tracestate: 'foo@bar@baz=1,foo@=2,t@vvvvvvvvvvvvvvv=3,bar=4' }),
            'otel-w3c': P128({ tracestate: 'bar=4' }),
        },
    },
    // More than 32 members: OpenTelemetry keeps the first 32; tracewire discards the list
    // (the grammar allows 32: it cannot be parsed), with a warning.
    {
        name: 'w3c: tracestate with 33 members', format: 'w3c',
        headers: { traceparent: TP, tracestate: MEMBERS_33 },
        expect: { tracewire: C, 'otel-w3c': P128({ tracestate: MEMBERS_33.slice(0, MEMBERS_33.lastIndexOf(',')) }) },
    },
    { name: 'w3c: baggage with properties', format: 'w3c', headers: { traceparent: TP, baggage: 'k=v;p=1,j=2' }, expect: same(['tracewire', 'otel-w3c'], P128({ baggage: { k: 'v', j: '2' } })) },
    // W3C baggage is %-encoded, not form-encoded: '+' stays '+' for both.
    { name: 'w3c: baggage value with +', format: 'w3c', headers: { traceparent: TP, baggage: 'k=a+b' }, expect: same(['tracewire', 'otel-w3c'], P128({ baggage: { k: 'a+b' } })) },
    // Bad %-encoding: OpenTelemetry drops the item; tracewire keeps it raw, with a warning.
    {
        name: 'w3c: baggage with bad %-encoding', format: 'w3c',
        headers: { traceparent: TP, baggage: 'k=100%zz,j=1' },
        expect: { tracewire: P128({ baggage: { k: '100%zz', j: '1' } }), 'otel-w3c': P128({ baggage: { j: '1' } }) },
    },
    // The spec's key is a token and is not %-decoded; OpenTelemetry decodes keys anyway.
    // tracewire keeps the key as sent.
    {
        name: 'w3c: baggage key %-encoded', format: 'w3c', headers: { traceparent: TP, baggage: 'k%20x=v' },
        expect: { tracewire: P128({ baggage: { 'k%20x': 'v' } }), 'otel-w3c': P128({ baggage: { 'k x': 'v' } }) },
    },
    // Baggage without a trace: both keep it (tracewire as a hint with no sampling decision).
    { name: 'w3c: baggage alone', format: 'w3c', headers: { baggage: 'k=v' }, expect: same(['tracewire', 'otel-w3c'], ctxOf({ sampled: null, baggage: { k: 'v' } })) },
];

// ---- forwarding: headers in, the same context out ----------------------------------------------

// What a W3C implementation sends on when it forwards the context it read (extract, then inject
// of the same context: the parent id stays, only what the implementation keeps survives).
const FORWARDERS = {
    tracewire: (h) => {
        const ctx = ourExtract('w3c', h);
        return ctx ? ourInject('w3c', ctx) : null;
    },
    'otel-w3c': (h) => {
        const carrier = {};
        const prop = new core.W3CTraceContextPropagator();
        prop.inject(prop.extract(api.ROOT_CONTEXT, h, api.defaultTextMapGetter), carrier,
            api.defaultTextMapSetter);
        return carrier;
    },
};

const FORWARDS = [
    // "Vendors MUST set those [other flags] to zero" / "set all unparsed / unknown trace-flags
    // to 0 on outgoing requests": tracewire keeps the bits it knows (sampled, random); OpenTelemetry
    // re-sends the byte it read, and writes a value of 0x10 or more with a third digit
    // ("0" + "fd"), a traceparent every strict reader (tracewire included) refuses.
    {
        name: 'w3c: unknown flags forwarded',
        headers: { traceparent: `00-${T128}-${SPAN}-fd` },
        expect: {
            tracewire: { traceparent: `00-${T128}-${SPAN}-01` },
            'otel-w3c': { traceparent: `00-${T128}-${SPAN}-0fd` },
        },
    },
    // The random-trace-id flag is forwarded by both.
    {
        name: 'w3c: random flag forwarded',
        headers: { traceparent: `00-${T128}-${SPAN}-02`, tracestate: 'congo=t61rcWkgMzE' },
        expect: same(['tracewire', 'otel-w3c'], { traceparent: `00-${T128}-${SPAN}-02`, tracestate: 'congo=t61rcWkgMzE' }),
    },
];

// ---- running ---------------------------------------------------------------------------------

let passed = 0;
let failed = 0;

function check(label, fn) {
    try {
        fn();
        passed++;
        console.log(`PASS: ${label}`);
    } catch (e) {
        failed++;
        console.log(`FAIL: ${label}\n  ${String(e.message).split('\n').join('\n  ')}`);
    }
}

if (process.argv[3] === '--print-probes') {
    // For updating PROBES after a peer upgrade: every reader's current reading.
    for (const probe of PROBES) {
        const got = {};
        for (const [reader, read] of Object.entries(READERS[probe.format])) {
            try {
                got[reader] = read(Object.assign({}, probe.headers));
            } catch (e) {
                got[reader] = `threw: ${e.message}`;
            }
        }
        console.log(JSON.stringify({ name: probe.name, got }));
    }
    process.exit(0);
}

for (const peer of PEERS) {
    for (const cs of CASES) {
        if (cs.only && !cs.only.includes(peer.name)) continue;
        const want = peer.project(cs.ctx);
        check(`${peer.name}: ${cs.name}: tracewire writes, ${peer.name} reads`, () => {
            const carrier = ourInject(peer.format, cs.ctx);
            assert.deepStrictEqual(peer.extract(carrier), want,
                `headers: ${JSON.stringify(carrier)}`);
        });
        check(`${peer.name}: ${cs.name}: ${peer.name} writes, tracewire reads`, () => {
            const carrier = peer.inject(cs.ctx);
            assert.deepStrictEqual(ourExtract(peer.format, carrier), want,
                `headers: ${JSON.stringify(carrier)}`);
        });
    }
}

for (const probe of PROBES) {
    for (const [reader, read] of Object.entries(READERS[probe.format])) {
        if (!(reader in probe.expect)) {
            failed++;
            console.log(`FAIL: probe ${probe.name}: no expectation recorded for ${reader}`);
            continue;
        }
        check(`probe ${probe.name}: ${reader}`, () => {
            assert.deepStrictEqual(read(Object.assign({}, probe.headers)), probe.expect[reader],
                `headers: ${JSON.stringify(probe.headers)}`);
        });
    }
}

for (const fwd of FORWARDS) {
    for (const [who, forward] of Object.entries(FORWARDERS)) {
        check(`forward ${fwd.name}: ${who}`, () => {
            assert.deepStrictEqual(forward(Object.assign({}, fwd.headers)), fwd.expect[who],
                `headers: ${JSON.stringify(fwd.headers)}`);
        });
    }
}

// A writer disagreement: OpenTelemetry's Jaeger propagator writes the whole W3C trace-flags byte
// as the Jaeger flags, so a context that arrived with traceparent flags 03 (sampled, random trace
// id) leaves as uber-trace-id flags 03, which every Jaeger reader (jaeger-client, tracewire, the
// Go and Java clients) takes for *debug*: one W3C hop forces debug sampling downstream. tracewire
// keeps the two bits apart and writes 1.
{
    const random = ctxOf({ trace_id: T128, span_id: SPAN, random_trace_id: true });
    check('writer: random trace id into uber-trace-id: otel-jaeger writes debug', () => {
        const carrier = PEERS[2].inject(random);
        assert.strictEqual(carrier['uber-trace-id'], `${T128}:${SPAN}:0:03`);
        assert.deepStrictEqual(ourExtract('jaeger', carrier), P128({ debug: true }));
        assert.deepStrictEqual(PEERS[0].extract(carrier), P128({ debug: true }));
    });
    check('writer: random trace id into uber-trace-id: tracewire writes sampled only', () => {
        const carrier = ourInject('jaeger', random);
        assert.strictEqual(carrier['uber-trace-id'], `${T128}:${SPAN}:0000000000000000:1`);
        assert.deepStrictEqual(PEERS[0].extract(carrier), C);
    });
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
