#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
/*
 * tests/interop/bridge_cli/check_outputs.js: checks what the built
 * `tracewire convert` wrote for each real fixture (run_convert_interop.sh
 * puts one directory per fixture under WORKDIR) with tools that share no
 * code with tracewire. The schema and protobuf parts are the ones of
 * tests/interop/http/validate.js, required from there:
 *
 *  - zipkin-v2.json (--to zipkin-v2-json): ajv against Zipkin's published
 *    OpenAPI document (tests/interop/http/zipkin2-api.yaml), definition
 *    ListOfSpans, and the stricter reading of it (closed objects, anchored
 *    id patterns, ports 1..65535, timestamps >= 1). Then what the schema
 *    cannot say: `shared` only on SERVER spans (Zipkin's model: the server
 *    half of a shared span), `duration` >= 1 when present, span and
 *    annotation timestamps exact integers (safe in a double), a parent never
 *    the span itself, no `error` tag "false" (Zipkin treats any error tag as
 *    failure, so the bridge must omit a false one), and a 32-hex traceId
 *    never with a zero high half (Zipkin writes those as 16 hex).
 *  - otlp.json (--to otlp-json): fromObject -> verify -> protobuf binary ->
 *    decode -> toObject through the protobufjs classes of opentelemetry-proto
 *    (@opentelemetry/otlp-transformer) must give back the document key for
 *    key (an empty array is compared as absent: proto3 JSON reads both as the
 *    empty repeated field, and toObject omits it); plus every span ends at or
 *    after its start and has a SpanKind other than UNSPECIFIED. A resource
 *    with an empty or no service.name is printed as a NOTE, not a failure:
 *    OTLP carries it, only the semantic conventions ask for a name.
 *
 * Usage: node check_outputs.js WORKDIR   (NODE_PATH must reach the npm
 * packages). Each WORKDIR/NNN/ holds `fixture` (its name), `from`, and the
 * outputs. Prints a PASS or FAIL line per fixture and output, then a count.
 * Exit status: 0 when every output is valid, 1 otherwise.
 */
'use strict';

const fs = require('fs');
const path = require('path');
const {zipkinSchemas, otlpRoundTrip, sameValue} = require('../http/validate.js');

const work = process.argv[2];
const tally = {pass: 0, fail: 0};

/* Runs one check of one output; problems are strings. */
function report(label, fixture, problems, detail) {
    if (problems.length === 0) {
        tally.pass++;
        console.log(`PASS: ${label}: ${fixture} (${detail})`);
        return;
    }
    tally.fail++;
    console.log(`FAIL: ${label}: ${fixture}`);
    for (const p of problems.slice(0, 12)) console.log(`  ${p}`);
    if (problems.length > 12) console.log(`  ... ${problems.length - 12} more`);
}

function readJson(file, problems) {
    try {
        return JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (e) {
        problems.push(`${path.basename(file)}: not JSON: ${e.message}`);
        return undefined;
    }
}

/* ---- Zipkin v2 --------------------------------------------------------------------------- */

const zipkin = zipkinSchemas();

function zipkinSemantics(doc, problems) {
    doc.forEach((span, i) => {
        const at = `span[${i}] ${span.traceId}/${span.id}`;
        if (span.shared === true && span.kind !== 'SERVER')
            problems.push(`${at}: shared:true on a ${span.kind || 'kind-less'} span (SERVER only)`);
        if (span.duration !== undefined && !(Number.isSafeInteger(span.duration) && span.duration >= 1))
            problems.push(`${at}: duration ${span.duration} is not an integer >= 1`);
        if (span.timestamp !== undefined && !Number.isSafeInteger(span.timestamp))
            problems.push(`${at}: timestamp ${span.timestamp} is not an exact integer`);
        for (const a of span.annotations || [])
            if (!Number.isSafeInteger(a.timestamp))
                problems.push(`${at}: annotation ${JSON.stringify(a.value)} timestamp ${a.timestamp} ` +
                              'is not an exact integer');
        if (span.parentId !== undefined && span.parentId === span.id) problems.push(`${at}: its own parent`);
        if (span.tags && span.tags.error === 'false')
            problems.push(`${at}: error tag "false" (Zipkin reads any error tag as a failure)`);
        if (typeof span.traceId === 'string' && /^0{16}[0-9a-f]{16}$/.test(span.traceId))
            problems.push(`${at}: 128-bit traceId with a zero high half (should be 16 hex)`);
    });
}

function checkZipkin(dir, fixture) {
    const problems = [];
    const doc = readJson(path.join(dir, 'zipkin-v2.json'), problems);
    let n = 0;
    if (doc !== undefined) {
        if (!zipkin.published(doc))
            problems.push('zipkin2-api.yaml ListOfSpans: ' + zipkin.ajv.errorsText(zipkin.published.errors));
        if (!zipkin.strict(doc))
            problems.push('strict reading: ' + zipkin.ajv.errorsText(zipkin.strict.errors));
        if (Array.isArray(doc)) {
            n = doc.length;
            zipkinSemantics(doc, problems);
        }
    }
    report('zipkin-v2-json', fixture, problems, `${n} spans valid against zipkin2-api.yaml ListOfSpans, ` +
           'its strict reading and Zipkin semantics');
    return n;
}

/* ---- OTLP -------------------------------------------------------------------------------- */

/* The document without its empty arrays (proto3: the same message). */
function withoutEmptyArrays(value) {
    if (Array.isArray(value)) return value.map(withoutEmptyArrays);
    if (value && typeof value === 'object') {
        const out = {};
        for (const [k, v] of Object.entries(value))
            if (!(Array.isArray(v) && v.length === 0)) out[k] = withoutEmptyArrays(v);
        return out;
    }
    return value;
}

function checkOtlp(dir, fixture) {
    const problems = [];
    const sent = readJson(path.join(dir, 'otlp.json'), problems);
    let n = 0;
    if (sent !== undefined) {
        try {
            sameValue(withoutEmptyArrays(sent), otlpRoundTrip(sent), 'request', problems);
        } catch (e) {
            problems.push(`opentelemetry-proto: ${e.message}`);
        }
        for (const rs of sent.resourceSpans || []) {
            const attrs = (rs.resource && rs.resource.attributes) || [];
            if (!attrs.some((a) => a.key === 'service.name' && a.value && a.value.stringValue))
                console.log(`NOTE: otlp-json: ${fixture}: a resource has an empty or no service.name`);
            for (const ss of rs.scopeSpans || []) {
                for (const span of ss.spans || []) {
                    n++;
                    const at = `span ${span.traceId}/${span.spanId}`;
                    if (!Number.isInteger(span.kind) || span.kind < 1 || span.kind > 5)
                        problems.push(`${at}: kind ${span.kind} is not a SpanKind other than UNSPECIFIED`);
                    try {
                        if (BigInt(span.endTimeUnixNano) < BigInt(span.startTimeUnixNano))
                            problems.push(`${at}: ends before it starts`);
                    } catch (e) {
                        problems.push(`${at}: times are not integers: ${e.message}`);
                    }
                }
            }
        }
    }
    report('otlp-json', fixture, problems, `${n} spans round-trip through opentelemetry-proto's ` +
           'ExportTraceServiceRequest and protobuf binary unchanged');
}

for (const sub of fs.readdirSync(work).filter((d) => /^[0-9]+$/.test(d)).sort()) {
    const dir = path.join(work, sub);
    const fixture = fs.readFileSync(path.join(dir, 'fixture'), 'utf8').trim();
    for (const [label, run] of [['zipkin-v2-json', checkZipkin], ['otlp-json', checkOtlp]]) {
        try {
            run(dir, fixture);
        } catch (e) {
            report(label, fixture, [e.stack || String(e)], '');
        }
    }
}
console.log(`zipkin-v2-json and otlp-json checks: ${tally.pass} passed, ${tally.fail} failed`);
process.exit(tally.fail || tally.pass === 0 ? 1 : 0);
