// SPDX-License-Identifier: Apache-2.0
// tests/bench/peer/propagation_bench.js: the peer half of the propagation rows of
// `make bench` (tests/bench/bench_propagation.c divides this script's times by its own).
//
// Times the OpenTelemetry propagators for Node.js (@opentelemetry/propagator-jaeger,
// @opentelemetry/propagator-b3, @opentelemetry/core's W3C trace-context and baggage
// propagators; versions pinned by tests/interop/propagation/install_peers.sh) on the
// workload bench_propagation.c uses: a 128-bit, sampled context, with and without 3 baggage
// items; inject into an empty carrier object, extract from a request's headers (the format's
// own plus host, user-agent, accept and accept-encoding) keyed in lower case as Node's http
// module delivers them. Prints one JSON object:
//   {"peer": "...", "<format>": {"inject_ns": N, "extract_ns": N}, ...}
// for the formats jaeger, jaeger_baggage, b3_multi, b3_single, w3c, w3c_baggage. Nothing here is
// part of tracewire itself.
//
// Usage: node propagation_bench.js [OPS]   (the packages must be resolvable: NODE_PATH)
'use strict';

const api = require('@opentelemetry/api');
const core = require('@opentelemetry/core');
const { JaegerPropagator } = require('@opentelemetry/propagator-jaeger');
const { B3Propagator, B3InjectEncoding } = require('@opentelemetry/propagator-b3');

const OPS = Number(process.argv[2] || 200000);
const RUNS = 7; // best of RUNS after one warm-up run, as the C side does

const version = (name) => require(`${name}/package.json`).version;

function context(withBaggage) {
    let ctx = api.trace.setSpanContext(api.ROOT_CONTEXT, {
        traceId: '0af7651916cd43dd8448eb211c80319c',
        spanId: '00f067aa0ba902b7',
        traceFlags: api.TraceFlags.SAMPLED,
        isRemote: false,
    });
    if (withBaggage) {
        ctx = api.propagation.setBaggage(ctx, api.propagation.createBaggage({
            'user-id': { value: 'alice' },
            tenant: { value: 'acme corp' },
            'request-class': { value: 'interactive' },
        }));
    }
    return ctx;
}

function bestNs(fn) {
    let best = Infinity;
    for (let run = 0; run <= RUNS; run++) {
        const t0 = process.hrtime.bigint();
        for (let i = 0; i < OPS; i++) fn();
        const ns = Number(process.hrtime.bigint() - t0) / OPS;
        if (run > 0 && ns < best) best = ns;
    }
    return Math.round(best * 10) / 10;
}

let sink = 0; // keeps the JIT from discarding the work

function measure(propagator, withBaggage) {
    const ctx = context(withBaggage);
    const request = {
        host: 'api.example.com',
        'user-agent': 'curl/7.88.1',
        accept: '*/*',
        'accept-encoding': 'gzip, deflate',
    };
    propagator.inject(ctx, request, api.defaultTextMapSetter);
    const injectNs = bestNs(() => {
        const carrier = {};
        propagator.inject(ctx, carrier, api.defaultTextMapSetter);
        sink += Object.keys(carrier).length;
    });
    const extractNs = bestNs(() => {
        const got = propagator.extract(api.ROOT_CONTEXT, request, api.defaultTextMapGetter);
        sink += api.trace.getSpanContext(got) ? 1 : 0;
    });
    return { inject_ns: injectNs, extract_ns: extractNs };
}

const w3c = new core.CompositePropagator({
    propagators: [new core.W3CTraceContextPropagator(), new core.W3CBaggagePropagator()],
});
const out = {
    peer: `OpenTelemetry JS propagators (propagator-jaeger ${version('@opentelemetry/propagator-jaeger')}, ` +
        `propagator-b3 ${version('@opentelemetry/propagator-b3')}, core ${version('@opentelemetry/core')}), ` +
        `Node.js ${process.versions.node}, measured in this run`,
    jaeger: measure(new JaegerPropagator(), false),
    jaeger_baggage: measure(new JaegerPropagator(), true),
    b3_multi: measure(new B3Propagator({ injectEncoding: B3InjectEncoding.MULTI_HEADER }), false),
    b3_single: measure(new B3Propagator({ injectEncoding: B3InjectEncoding.SINGLE_HEADER }), false),
    // tracewire's w3c codec reads and writes traceparent, tracestate and baggage, so the peer is
    // the same composite in both rows.
    w3c: measure(w3c, false),
    w3c_baggage: measure(w3c, true),
};
if (sink < 0) console.error(sink);
console.log(JSON.stringify(out));
