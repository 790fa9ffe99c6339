#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
/*
 * tests/interop/bridge_json/validate.js: checks what `tracewire convert`'s
 * zipkin-v1-json and jaeger-json writers made of the real fixtures
 * (json_capture writes them) with code that shares nothing with tracewire.
 *
 * Zipkin v1 (zipkin-v1-*.json): each body against Zipkin's own v1 OpenAPI
 * document (tests/interop/http/zipkin-api.yaml, openzipkin/zipkin-api
 * 069ec8d, unmodified), definition ListOfSpans, compiled by ajv with
 * ajv-formats (ipv4/ipv6). One reading is needed: the published schema
 * types BinaryAnnotation.value as a string, while its own description (and
 * Zipkin's V1SpanWriter) gives address annotations (ca, sa, ma) the boolean
 * value true; the check allows `true` there and only there. A stricter
 * second pass closes every object (additionalProperties: false), anchors
 * the id patterns (16/32 and 16 lower-case hex), bounds port to 1..65535,
 * duration and timestamps to >= 1.
 *
 * Jaeger (jaeger-*.json): what jaeger-ui's JSON upload relies on, from its
 * source (packages/jaeger-ui/src/model/transform-trace-data.tsx and
 * selectors/trace.tsx, getTraceSpanIdsAsTree) and Jaeger's uimodel
 * (internal/uimodel/converter/v1/json/from_domain.go):
 *  - the document is {data: [trace...], total, limit, offset, errors: null};
 *  - a trace has a non-empty lower-case hex traceID (16 or 32 digits),
 *    spans, processes keyed p1..pN (consecutive, each used by a span) with
 *    a non-empty serviceName and typed tags, warnings null or strings;
 *  - a span has the trace's traceID, a 16-hex spanID, an integer flags,
 *    a string operationName, an integer startTime > 0 (the UI drops spans
 *    whose startTime is falsy), an integer duration >= 0, a processID that
 *    the processes map holds (the UI dereferences it), warnings null or
 *    strings, references whose refType is CHILD_OF or FOLLOWS_FROM (the UI
 *    throws on anything else) with hex ids;
 *  - tags and log fields are {key, type, value} with type string|bool|
 *    int64|float64|binary and a value of that type: int64 a safe integer,
 *    or a decimal string outside +-(2^53-1) (Jaeger's rule); float64 a
 *    number or "NaN"/"Infinity"/"-Infinity"; binary base64; logs have an
 *    integer timestamp and a fields array;
 *  - the span tree the UI builds from references[0] (getTraceSpanIdsAsTree)
 *    reaches every span from the root: no span is lost in a cycle.
 * Duplicate span ids are allowed: the UI renames them (here they only come
 * from Zipkin shared spans that did not pass through the assembler).
 *
 * Usage: node validate.js DIR YAML   (NODE_PATH must reach ajv, ajv-formats,
 * js-yaml). Exit 0 when everything is valid, 1 otherwise (details on stdout).
 */
'use strict';

const fs = require('fs');
const path = require('path');

const [dir, yamlPath] = process.argv.slice(2);
let failures = 0;

function fail(where, what) {
    failures++;
    if (failures <= 50) console.log(`FAIL: ${where}: ${what}`);
}

function files(prefix) {
    return fs.readdirSync(dir).filter((f) => f.startsWith(prefix) && f.endsWith('.json')).sort();
}

function load(file) {
    try {
        return JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    } catch (e) {
        fail(file, `not JSON: ${e.message}`);
        return undefined;
    }
}

/* ---- Zipkin v1 ---------------------------------------------------------------------------- */

function validateZipkinV1() {
    const Ajv = require('ajv');
    const addFormats = require('ajv-formats');
    const yaml = require('js-yaml');
    const api = yaml.load(fs.readFileSync(yamlPath, 'utf8'));
    const ajv = new Ajv({allErrors: true, strict: true});
    addFormats(ajv, ['ipv4', 'ipv6']);
    ajv.addKeyword('example');
    ajv.addFormat('int64', {type: 'number', validate: (n) => Number.isInteger(n)});

    const defs = JSON.parse(JSON.stringify(api.definitions));
    /* The one reading: address annotations carry boolean true (see above). */
    const value = defs.BinaryAnnotation.properties.value;
    defs.BinaryAnnotation.properties.value = {anyOf: [value, {const: true}]};
    const published = ajv.compile({definitions: defs, $ref: '#/definitions/ListOfSpans'});

    const strictDefs = JSON.parse(JSON.stringify(defs));
    for (const name of ['Span', 'Endpoint', 'Annotation', 'BinaryAnnotation'])
        strictDefs[name].additionalProperties = false;
    const p = strictDefs.Span.properties;
    p.traceId.pattern = '^([a-f0-9]{16}|[a-f0-9]{32})$';
    p.id.pattern = '^[a-f0-9]{16}$';
    p.parentId.pattern = '^[a-f0-9]{16}$';
    p.timestamp.minimum = 1;
    strictDefs.Endpoint.properties.port.minimum = 1;
    strictDefs.Endpoint.properties.port.maximum = 65535;
    strictDefs.Annotation.properties.timestamp.minimum = 1;
    const strict = ajv.compile({definitions: strictDefs, $ref: '#/definitions/ListOfSpans'});

    const list = files('zipkin-v1-');
    if (list.length < 10) fail('zipkin-v1', `expected a body per fixture, got ${list.length}`);
    let spans = 0;
    for (const file of list) {
        const doc = load(file);
        if (doc === undefined) continue;
        if (!published(doc)) fail(file, 'zipkin-api.yaml: ' + ajv.errorsText(published.errors));
        if (!strict(doc)) fail(file, 'strict reading: ' + ajv.errorsText(strict.errors));
        for (const span of Array.isArray(doc) ? doc : []) {
            spans++;
            for (const b of span.binaryAnnotations || []) {
                const isAddress = ['ca', 'sa', 'ma'].includes(b.key);
                if (isAddress !== (b.value === true))
                    fail(file, `binary annotation ${b.key}: value ${JSON.stringify(b.value)}`);
                if (isAddress && !b.endpoint) fail(file, `address ${b.key} without an endpoint`);
            }
            if (span.parentId !== undefined && span.parentId === span.id)
                fail(file, 'circular parent');
        }
    }
    console.log(`zipkin-v1: ${list.length} bodies, ${spans} spans checked against zipkin-api.yaml ` +
                '(ListOfSpans) and its strict reading');
}

/* ---- Jaeger ------------------------------------------------------------------------------- */

const HEX16 = /^[0-9a-f]{16}$/;
const TRACE_HEX = /^([0-9a-f]{16}|[0-9a-f]{32})$/;
const BASE64 = /^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function checkKv(where, kv) {
    if (!kv || typeof kv !== 'object') return fail(where, 'not an object');
    if (typeof kv.key !== 'string') fail(where, 'key is not a string');
    const v = kv.value;
    switch (kv.type) {
    case 'string':
        if (typeof v !== 'string') fail(where, `string tag with ${typeof v}`);
        break;
    case 'bool':
        if (typeof v !== 'boolean') fail(where, `bool tag with ${typeof v}`);
        break;
    case 'int64':
        if (typeof v === 'number') {
            if (!Number.isSafeInteger(v)) fail(where, `int64 ${v} is not a safe integer`);
        } else if (typeof v !== 'string' || !/^-?[0-9]+$/.test(v) ||
                   (BigInt(v) <= BigInt(Number.MAX_SAFE_INTEGER) &&
                    BigInt(v) >= -BigInt(Number.MAX_SAFE_INTEGER))) {
            fail(where, `int64 ${JSON.stringify(v)}: a string only outside +-(2^53-1)`);
        }
        break;
    case 'float64':
        if (typeof v !== 'number' && !['NaN', 'Infinity', '-Infinity'].includes(v))
            fail(where, `float64 ${JSON.stringify(v)}`);
        break;
    case 'binary':
        if (typeof v !== 'string' || !BASE64.test(v)) fail(where, 'binary is not base64');
        break;
    default:
        fail(where, `type ${JSON.stringify(kv.type)}`);
    }
}

function checkWarnings(where, w) {
    if (w !== null && !(Array.isArray(w) && w.every((s) => typeof s === 'string')))
        fail(where, 'warnings is neither null nor strings');
}

function checkTrace(file, t, ti) {
    const at = `${file} data[${ti}]`;
    if (typeof t.traceID !== 'string' || !TRACE_HEX.test(t.traceID)) fail(at, `traceID ${t.traceID}`);
    if (!Array.isArray(t.spans) || t.spans.length === 0) return fail(at, 'no spans');
    const procs = t.processes || {};
    const keys = Object.keys(procs);
    keys.forEach((k, i) => {
        if (k !== `p${i + 1}`) fail(at, `process key ${k} is not p${i + 1}`);
        const p = procs[k];
        if (typeof p.serviceName !== 'string' || !p.serviceName) fail(`${at} ${k}`, 'serviceName');
        if (!Array.isArray(p.tags)) fail(`${at} ${k}`, 'tags is not an array');
        else p.tags.forEach((kv, i) => checkKv(`${at} ${k}.tags[${i}]`, kv));
    });
    checkWarnings(at, t.warnings);
    const used = new Set();
    for (const [si, s] of t.spans.entries()) {
        const w = `${at} spans[${si}]`;
        if (s.traceID !== t.traceID) fail(w, 'traceID differs from the trace');
        if (typeof s.spanID !== 'string' || !HEX16.test(s.spanID)) fail(w, `spanID ${s.spanID}`);
        if (!Number.isInteger(s.flags) || s.flags < 0) fail(w, 'flags');
        if (typeof s.operationName !== 'string') fail(w, 'operationName');
        if (!Number.isInteger(s.startTime) || !s.startTime) fail(w, `startTime ${s.startTime}`);
        if (!Number.isInteger(s.duration) || s.duration < 0) fail(w, `duration ${s.duration}`);
        if (!(s.processID in procs)) fail(w, `processID ${s.processID} not in processes`);
        used.add(s.processID);
        checkWarnings(w, s.warnings);
        if (!Array.isArray(s.references)) fail(w, 'references is not an array');
        for (const r of s.references || []) {
            if (r.refType !== 'CHILD_OF' && r.refType !== 'FOLLOWS_FROM') fail(w, `refType ${r.refType}`);
            if (!TRACE_HEX.test(r.traceID) || !HEX16.test(r.spanID)) fail(w, 'reference ids');
        }
        if (!Array.isArray(s.tags)) fail(w, 'tags is not an array');
        else s.tags.forEach((kv, i) => checkKv(`${w}.tags[${i}]`, kv));
        if (!Array.isArray(s.logs)) fail(w, 'logs is not an array');
        for (const [li, l] of (s.logs || []).entries()) {
            if (!Number.isInteger(l.timestamp)) fail(`${w}.logs[${li}]`, 'timestamp');
            if (!Array.isArray(l.fields)) fail(`${w}.logs[${li}]`, 'fields');
            else l.fields.forEach((kv, i) => checkKv(`${w}.logs[${li}].fields[${i}]`, kv));
        }
    }
    for (const k of keys) if (!used.has(k)) fail(at, `process ${k} is used by no span`);
    /* The UI's tree: parent = references[0].spanID when in the trace, else the root. */
    const children = new Map([['__root__', []]]);
    const ids = new Set(t.spans.map((s) => s.spanID));
    for (const s of t.spans) {
        const ref = (s.references || [])[0];
        const parent = ref && ids.has(ref.spanID) ? ref.spanID : '__root__';
        if (!children.has(parent)) children.set(parent, []);
        children.get(parent).push(s.spanID);
    }
    const seen = new Set();
    const stack = ['__root__'];
    while (stack.length) {
        const id = stack.pop();
        if (seen.has(id)) continue;
        seen.add(id);
        for (const c of children.get(id) || []) stack.push(c);
    }
    for (const id of ids) if (!seen.has(id)) fail(at, `span ${id} is not reachable from the root`);
    return t.spans.length;
}

function validateJaeger() {
    const list = files('jaeger-');
    if (list.length < 20) fail('jaeger', `expected a body per fixture, got ${list.length}`);
    let traces = 0, spans = 0;
    for (const file of list) {
        const doc = load(file);
        if (doc === undefined) continue;
        if (!Array.isArray(doc.data)) { fail(file, 'data is not an array'); continue; }
        for (const k of ['total', 'limit', 'offset'])
            if (!Number.isInteger(doc[k])) fail(file, `${k} is not an integer`);
        if (doc.errors !== null) fail(file, 'errors is not null');
        doc.data.forEach((t, i) => { traces++; spans += checkTrace(file, t, i) || 0; });
    }
    console.log(`jaeger: ${list.length} bodies, ${traces} traces, ${spans} spans: the shape ` +
                "jaeger-ui's transformTraceData and getTraceSpanIdsAsTree rely on");
}

for (const [label, run] of [['zipkin-v1', validateZipkinV1], ['jaeger', validateJaeger]]) {
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
