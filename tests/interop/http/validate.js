#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
/*
 * tests/interop/http/validate.js: validates what the tracewire HTTP
 * reporters sent (http_capture writes the bodies) with tools that share no
 * code with tracewire:
 *
 *  - Zipkin: each body against Zipkin's own OpenAPI document
 *    (zipkin2-api.yaml of openzipkin/zipkin-api, copied unmodified beside
 *    this file), definition ListOfSpans, compiled by ajv (with ajv-formats
 *    for ipv4/ipv6). A second, stricter pass closes the objects
 *    (additionalProperties: false) and anchors the id patterns, which the
 *    published schema leaves open, so a misspelt key or an upper-case id
 *    cannot slip through.
 *  - OTLP: each body through the protobuf classes that protobufjs generated
 *    from opentelemetry-proto (shipped by @opentelemetry/otlp-transformer):
 *    OTLP/JSON -> ExportTraceServiceRequest (fromObject, with the hex ids
 *    that OTLP/JSON uses turned into bytes) -> verify -> protobuf binary ->
 *    decode -> toObject in the proto3 JSON forms (int64 as strings, enums as
 *    numbers, bytes as base64) -> ids back to hex, and the result must equal
 *    the body we sent, key for key. An unknown field, a wrong JSON type or a
 *    value out of range does not survive the round trip unchanged.
 *  - Both: every span the driver finished (expected.json) arrived exactly
 *    once, with its ids and name.
 *
 * Usage: node validate.js DIR   (NODE_PATH must reach the npm packages)
 * Exit status: 0 when everything is valid, 1 otherwise (details on stdout).
 * Required as a module (tests/interop/bridge_cli/check_outputs.js), it runs
 * nothing and exports zipkinSchemas() and otlpRoundTrip(), the two checks
 * above, for other outputs.
 */
'use strict';

const fs = require('fs');
const path = require('path');

const dir = process.argv[2];
let failures = 0;

function fail(where, what) {
    failures++;
    console.log(`FAIL: ${where}: ${what}`);
}

function bodies(prefix) {
    return fs.readdirSync(dir)
        .filter((f) => f.startsWith(prefix + '-') && f.endsWith('.json'))
        .sort()
        .map((f) => ({file: f, text: fs.readFileSync(path.join(dir, f), 'utf8')}));
}

let expected; /* read by the main part below */

/* Every expected span seen exactly once: key "traceId32/spanId" -> name. */
function checkArrivals(label, seen) {
    const want = new Map();
    for (const e of expected[label]) want.set(`${e.traceId}/${e.spanId}`, e.name);
    for (const [key, names] of seen) {
        if (!want.has(key)) fail(label, `span ${key} was never finished`);
        else if (names.length !== 1) fail(label, `span ${key} arrived ${names.length} times`);
        else if (names[0] !== want.get(key))
            fail(label, `span ${key} is named ${JSON.stringify(names[0])}, not ` +
                 JSON.stringify(want.get(key)));
    }
    for (const key of want.keys()) if (!seen.has(key)) fail(label, `span ${key} never arrived`);
    return want.size;
}

function note(seen, key, name) {
    if (!seen.has(key)) seen.set(key, []);
    seen.get(key).push(name);
}

/* ---- Zipkin ------------------------------------------------------------------------------ */

/* ajv compiled for ListOfSpans of zipkin2-api.yaml: {ajv, published, strict}. */
function zipkinSchemas() {
    const Ajv = require('ajv');
    const addFormats = require('ajv-formats');
    const yaml = require('js-yaml');
    const api = yaml.load(fs.readFileSync(path.join(__dirname, 'zipkin2-api.yaml'), 'utf8'));

    /* The published schema, as published ("example" is an OpenAPI keyword,
     * int64 an OpenAPI format: both are declared, not ignored). */
    const ajv = new Ajv({allErrors: true, strict: true});
    addFormats(ajv, ['ipv4', 'ipv6']);
    ajv.addKeyword('example');
    ajv.addFormat('int64', {type: 'number', validate: (n) => Number.isInteger(n)});
    const published = ajv.compile({definitions: api.definitions, $ref: '#/definitions/ListOfSpans'});

    /* The stricter reading of the same definitions. */
    const strictDefs = JSON.parse(JSON.stringify(api.definitions));
    for (const name of ['Span', 'Endpoint', 'Annotation']) strictDefs[name].additionalProperties = false;
    const idProps = strictDefs.Span.properties;
    idProps.traceId.pattern = '^([a-f0-9]{16}|[a-f0-9]{32})$';
    idProps.id.pattern = '^[a-f0-9]{16}$';
    idProps.parentId.pattern = '^[a-f0-9]{16}$';
    strictDefs.Endpoint.properties.port.minimum = 1;
    strictDefs.Endpoint.properties.port.maximum = 65535;
    strictDefs.Annotation.properties.timestamp.minimum = 1;
    strictDefs.Span.properties.timestamp.minimum = 1;
    const strict = ajv.compile({definitions: strictDefs, $ref: '#/definitions/ListOfSpans'});
    return {ajv, published, strict};
}

function validateZipkin() {
    const before = failures;
    const {ajv, published, strict} = zipkinSchemas();

    const seen = new Map();
    const files = bodies('zipkin');
    if (files.length < 2) fail('zipkin', `expected several bodies, got ${files.length}`);
    for (const {file, text} of files) {
        let doc;
        try {
            doc = JSON.parse(text);
        } catch (e) {
            fail(file, `not JSON: ${e.message}`);
            continue;
        }
        if (!published(doc)) fail(file, 'zipkin2-api.yaml: ' + ajv.errorsText(published.errors));
        if (!strict(doc)) fail(file, 'strict reading: ' + ajv.errorsText(strict.errors));
        for (const span of Array.isArray(doc) ? doc : []) {
            /* A 64-bit trace id is 16 hex in Zipkin; expected.json has 32. */
            note(seen, `${span.traceId.padStart(32, '0')}/${span.id}`, span.name);
            if (span.duration !== undefined && span.duration < 1) fail(file, 'duration below 1');
            if (span.parentId !== undefined && span.parentId === span.id) fail(file, 'circular parent');
        }
    }
    const n = checkArrivals('zipkin', seen);
    if (failures === before) console.log(`zipkin: ${files.length} bodies, ${n} spans: valid against zipkin2-api.yaml ` +
                '(ListOfSpans) and its strict reading');
}

/* ---- OTLP -------------------------------------------------------------------------------- */

const ID_KEYS = new Set(['traceId', 'spanId', 'parentSpanId']);

/* OTLP/JSON ids are hex (the OTLP spec's exception to proto3 JSON); the
 * generated classes speak proto3 JSON, where bytes are base64. */
function mapIds(value, convert) {
    if (Array.isArray(value)) return value.map((v) => mapIds(v, convert));
    if (value && typeof value === 'object') {
        const out = {};
        for (const [k, v] of Object.entries(value))
            out[k] = ID_KEYS.has(k) && typeof v === 'string' ? convert(k, v) : mapIds(v, convert);
        return out;
    }
    return value;
}

function hexToBase64(key, hex) {
    const want = key === 'traceId' ? 32 : 16;
    if (!new RegExp(`^[0-9a-f]{${want}}$`).test(hex)) throw new Error(`${key} "${hex}" is not ${want} lower-case hex`);
    return Buffer.from(hex, 'hex').toString('base64');
}

function base64ToHex(key, b64) {
    return Buffer.from(b64, 'base64').toString('hex');
}

/* Deep equality; numbers by Object.is, so -0 must stay -0 (NaN and the
 * infinities are strings on both sides: proto3 JSON spells them so). */
function sameValue(a, b, where, problems) {
    if (typeof a !== typeof b || Array.isArray(a) !== Array.isArray(b) || (a === null) !== (b === null)) {
        problems.push(`${where}: sent ${JSON.stringify(a)}, decoded ${JSON.stringify(b)}`);
        return;
    }
    if (Array.isArray(a)) {
        if (a.length !== b.length) problems.push(`${where}: ${a.length} items sent, ${b.length} decoded`);
        else a.forEach((v, i) => sameValue(v, b[i], `${where}[${i}]`, problems));
        return;
    }
    if (a && typeof a === 'object') {
        for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
            if (!(k in b)) problems.push(`${where}.${k}: sent but not in the protobuf message`);
            else if (!(k in a)) problems.push(`${where}.${k}: not sent (decoded ${JSON.stringify(b[k])})`);
            else sameValue(a[k], b[k], `${where}.${k}`, problems);
        }
        return;
    }
    if (!Object.is(a, b)) problems.push(`${where}: sent ${JSON.stringify(a)}, decoded ${JSON.stringify(b)}`);
}

/* An OTLP/JSON document through opentelemetry-proto's classes and protobuf
 * binary, back in OTLP/JSON form; throws when it does not decode or verify. */
function otlpRoundTrip(sent) {
    const root = require('@opentelemetry/otlp-transformer/build/src/generated/root');
    const Request = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
    const message = Request.fromObject(mapIds(sent, hexToBase64));
    const error = Request.verify(message);
    if (error) throw new Error(`verify: ${error}`);
    const wire = Request.encode(message).finish();
    return mapIds(Request.toObject(Request.decode(wire), {
        longs: String, enums: Number, bytes: String, json: true,
    }), base64ToHex);
}

function validateOtlp() {
    const before = failures;
    const root = require('@opentelemetry/otlp-transformer/build/src/generated/root');
    const SpanKind = root.opentelemetry.proto.trace.v1.Span.SpanKind;
    const seen = new Map();
    const files = bodies('otlp');
    if (files.length < 2) fail('otlp', `expected several bodies, got ${files.length}`);
    for (const {file, text} of files) {
        let sent;
        try {
            sent = JSON.parse(text);
        } catch (e) {
            fail(file, `not JSON: ${e.message}`);
            continue;
        }
        let decoded;
        try {
            decoded = otlpRoundTrip(sent);
        } catch (e) {
            fail(file, e.message);
            continue;
        }
        const problems = [];
        sameValue(sent, decoded, 'request', problems);
        for (const p of problems.slice(0, 10)) fail(file, p);
        for (const rs of sent.resourceSpans || []) {
            const attrs = (rs.resource && rs.resource.attributes) || [];
            if (!attrs.some((a) => a.key === 'service.name' && a.value.stringValue))
                fail(file, 'resource has no service.name');
            for (const ss of rs.scopeSpans || []) {
                if (!ss.scope || ss.scope.name !== 'tracewire') fail(file, 'scope is not tracewire');
                for (const span of ss.spans || []) {
                    note(seen, `${span.traceId}/${span.spanId}`, span.name);
                    if (!Object.values(SpanKind).includes(span.kind) || span.kind === 0)
                        fail(file, `kind ${span.kind} is not a SpanKind`);
                    if (BigInt(span.endTimeUnixNano) < BigInt(span.startTimeUnixNano))
                        fail(file, 'ends before it starts');
                }
            }
        }
    }
    const n = checkArrivals('otlp', seen);
    if (failures === before) console.log(`otlp: ${files.length} bodies, ${n} spans: each decodes into opentelemetry-proto's ` +
                'ExportTraceServiceRequest and round-trips through protobuf binary unchanged');
}

module.exports = {zipkinSchemas, otlpRoundTrip, sameValue};

if (require.main === module) {
    expected = JSON.parse(fs.readFileSync(path.join(dir, 'expected.json'), 'utf8'));
    for (const [label, run] of [['zipkin', validateZipkin], ['otlp', validateOtlp]]) {
        try {
            run();
        } catch (e) {
            fail(label, e.stack || String(e));
        }
    }
    if (failures) {
        console.log(`${failures} problem(s)`);
        process.exit(1);
    }
}
