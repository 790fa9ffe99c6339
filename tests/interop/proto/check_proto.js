#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
/*
 * tests/interop/proto/check_proto.js: tracewire's protobuf output read, and
 * its protobuf input written, by protobufjs with the official .proto files
 * (proto/ of the source tree: opentelemetry-proto and zipkin-api, unmodified)
 * and by the classes @opentelemetry/otlp-transformer generated from
 * opentelemetry-proto. No tracewire code takes part.
 *
 *   check-otlp DIR       DIR holds what proto_capture sent: otlp-json-*.json and
 *                        otlp-proto-*.bin of the same spans. Each protobuf body
 *                        must decode (protobufjs from proto/, and
 *                        otlp-transformer's classes, which must agree), and every
 *                        span, with its resource, must equal the same span of the
 *                        JSON bodies field by field (ids as hex, 64-bit integers
 *                        as strings, enums as numbers; proto3 leaves out what
 *                        JSON writes as "" or "0"). Every span arrives once in each.
 *   check-zipkin JSON BIN  BIN (--to zipkin-v2-proto) decoded as a ListOfSpans
 *                        must equal JSON (--to zipkin-v2-json of the same input)
 *                        span by span (ids hex, addresses as text).
 *   encode-otlp JSON BIN   writes the OTLP/JSON request JSON as protobuf
 *                        (protobufjs fromObject + encode), for our reader.
 *   encode-zipkin JSON BIN writes the Zipkin v2 JSON array as a proto3 ListOfSpans.
 *
 * Usage: node check_proto.js PROTO_DIR COMMAND ARGS... (NODE_PATH must reach
 * protobufjs and @opentelemetry/otlp-transformer). Exit 0 when valid, else 1.
 */
'use strict';

const fs = require('fs');
const path = require('path');
const protobuf = require('protobufjs');

const protoDir = process.argv[2];
const command = process.argv[3];
const args = process.argv.slice(4);
let failures = 0;

function fail(where, what) {
    failures++;
    if (failures <= 40) console.log(`FAIL: ${where}: ${what}`);
}

function loadRoot() {
    const root = new protobuf.Root();
    root.resolvePath = (origin, target) => path.join(protoDir, target);
    root.loadSync(['opentelemetry/proto/collector/trace/v1/trace_service.proto',
        'zipkin/zipkin.proto']);
    root.resolveAll();
    return root;
}

const root = loadRoot();
const Request = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
const ListOfSpans = root.lookupType('zipkin.proto3.ListOfSpans');
const TO_OBJECT = {longs: String, enums: Number, bytes: String, json: true};

/* ---- helpers ------------------------------------------------------------------------------ */

const b64hex = (b64) => Buffer.from(b64, 'base64').toString('hex');
const hexb64 = (hex) => Buffer.from(hex, 'hex').toString('base64');

/* Deep equality; numbers by Object.is (-0 stays -0). */
function same(a, b, where, problems) {
    if (typeof a !== typeof b || Array.isArray(a) !== Array.isArray(b) || (a === null) !== (b === null)) {
        problems.push(`${where}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
        return;
    }
    if (Array.isArray(a)) {
        if (a.length !== b.length) problems.push(`${where}: ${a.length} items vs ${b.length}`);
        else a.forEach((v, i) => same(v, b[i], `${where}[${i}]`, problems));
        return;
    }
    if (a && typeof a === 'object') {
        for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
            if (!(k in b)) problems.push(`${where}.${k}: only in the first (${JSON.stringify(a[k])})`);
            else if (!(k in a)) problems.push(`${where}.${k}: only in the second (${JSON.stringify(b[k])})`);
            else same(a[k], b[k], `${where}.${k}`, problems);
        }
        return;
    }
    if (!Object.is(a, b)) problems.push(`${where}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
}

function report(where, problems) {
    for (const p of problems.slice(0, 8)) fail(where, p);
}

/* ---- OTLP ------------------------------------------------------------------------------------ */

const ID_KEYS = new Set(['traceId', 'spanId', 'parentSpanId']);

function mapIds(value, convert) {
    if (Array.isArray(value)) return value.map((v) => mapIds(v, convert));
    if (value && typeof value === 'object') {
        const out = {};
        for (const [k, v] of Object.entries(value))
            out[k] = ID_KEYS.has(k) && typeof v === 'string' ? convert(v) : mapIds(v, convert);
        return out;
    }
    return value;
}

/* What proto3 does not carry: "" names, keys and messages, "0" times. */
function dropDefaults(value) {
    if (Array.isArray(value)) return value.map(dropDefaults);
    if (value && typeof value === 'object') {
        const out = {};
        for (const [k, v] of Object.entries(value)) {
            if ((k === 'name' || k === 'key' || k === 'message') && v === '') continue;
            if (/UnixNano$/.test(k) && v === '0') continue;
            out[k] = dropDefaults(v);
        }
        return out;
    }
    return value;
}

/* Every span of a request with its resource: key "traceId/spanId". */
function spansOf(doc, where, into) {
    for (const rs of doc.resourceSpans || []) {
        for (const ss of rs.scopeSpans || []) {
            for (const span of ss.spans || []) {
                const key = `${span.traceId}/${span.spanId}`;
                if (into.has(key)) fail(where, `span ${key} twice`);
                into.set(key, {span, resource: rs.resource, scope: ss.scope});
            }
        }
    }
}

function checkOtlp(dir) {
    const generated = require('@opentelemetry/otlp-transformer/build/src/generated/root');
    const GenRequest = generated.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
    const files = fs.readdirSync(dir).sort();
    const fromJson = new Map();
    const fromProto = new Map();
    let nProto = 0;
    for (const f of files.filter((f) => /^otlp-json-.*\.json$/.test(f)))
        spansOf(JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')), f, fromJson);
    for (const f of files.filter((f) => /^otlp-proto-.*\.bin$/.test(f))) {
        nProto++;
        const bytes = fs.readFileSync(path.join(dir, f));
        let ours, theirs;
        try {
            ours = Request.toObject(Request.decode(bytes), TO_OBJECT);
            theirs = GenRequest.toObject(GenRequest.decode(bytes), TO_OBJECT);
        } catch (e) {
            fail(f, `does not decode: ${e.message}`);
            continue;
        }
        const problems = [];
        same(ours, theirs, 'request', problems);
        report(`${f} (protobufjs from proto/ vs otlp-transformer's classes)`, problems);
        /* Decoded, then encoded again by protobufjs: the same bytes (field order, varints). */
        const again = Buffer.from(Request.encode(Request.decode(bytes)).finish());
        if (!again.equals(bytes)) fail(f, 'protobufjs re-encodes it into other bytes');
        spansOf(mapIds(ours, b64hex), f, fromProto);
    }
    if (nProto < 2) fail('otlp', `expected several protobuf bodies, got ${nProto}`);
    for (const [key, j] of fromJson) {
        const p = fromProto.get(key);
        if (!p) {
            fail('otlp', `span ${key} is in the JSON bodies only`);
            continue;
        }
        const problems = [];
        same(dropDefaults(j), dropDefaults(p), key, problems);
        report('otlp json vs protobuf', problems);
    }
    for (const key of fromProto.keys())
        if (!fromJson.has(key)) fail('otlp', `span ${key} is in the protobuf bodies only`);
    if (!failures)
        console.log(`otlp: ${nProto} protobuf bodies, ${fromProto.size} spans: each decodes with ` +
                    'protobufjs (proto/ and otlp-transformer agree) and equals its OTLP/JSON twin');
}

function encodeOtlp(jsonPath, binPath) {
    const doc = mapIds(JSON.parse(fs.readFileSync(jsonPath, 'utf8')), hexb64);
    const message = Request.fromObject(doc);
    const error = Request.verify(message);
    if (error) fail(jsonPath, `verify: ${error}`);
    fs.writeFileSync(binPath, Request.encode(message).finish());
}

/* ---- Zipkin ---------------------------------------------------------------------------------- */

const KINDS = ['', 'CLIENT', 'SERVER', 'PRODUCER', 'CONSUMER'];

/* IPv6 text -> 16 bytes (RFC 4291 forms: '::', an embedded IPv4). */
function ipv6Bytes(text) {
    let [head, tail] = text.includes('::') ? text.split('::') : [text, null];
    const parse = (s) => {
        if (!s) return [];
        const out = [];
        for (const g of s.split(':')) {
            if (g.includes('.')) {
                const q = g.split('.').map(Number);
                out.push((q[0] << 8) | q[1], (q[2] << 8) | q[3]);
            } else out.push(parseInt(g, 16));
        }
        return out;
    };
    const h = parse(head), t = parse(tail);
    const groups = tail === null ? h : [...h, ...new Array(8 - h.length - t.length).fill(0), ...t];
    const b = Buffer.alloc(16);
    groups.forEach((g, i) => b.writeUInt16BE(g, 2 * i));
    return b;
}

function endpointJson(ep) {
    const out = {};
    if (ep.serviceName) out.serviceName = ep.serviceName;
    if (ep.ipv4) out.ipv4 = [...Buffer.from(ep.ipv4, 'base64')].join('.');
    if (ep.ipv6) out.ipv6 = Buffer.from(ep.ipv6, 'base64').toString('hex');
    if (ep.port) out.port = ep.port;
    return out;
}

function zipkinJson(span) {
    const out = {};
    out.traceId = b64hex(span.traceId);
    if (span.parentId) out.parentId = b64hex(span.parentId);
    out.id = b64hex(span.id);
    if (span.kind) out.kind = KINDS[span.kind];
    if (span.name) out.name = span.name;
    if (span.timestamp) out.timestamp = Number(span.timestamp);
    if (span.duration) out.duration = Number(span.duration);
    if (span.debug) out.debug = true;
    if (span.shared) out.shared = true;
    if (span.localEndpoint) out.localEndpoint = endpointJson(span.localEndpoint);
    if (span.remoteEndpoint) out.remoteEndpoint = endpointJson(span.remoteEndpoint);
    if (span.annotations)
        out.annotations = span.annotations.map((a) => ({timestamp: Number(a.timestamp), value: a.value}));
    if (span.tags) out.tags = span.tags;
    return out;
}

/* Our JSON in the comparable form: addresses as bytes (hex). */
function zipkinComparable(span) {
    const out = JSON.parse(JSON.stringify(span));
    for (const k of ['localEndpoint', 'remoteEndpoint'])
        if (out[k] && out[k].ipv6) out[k].ipv6 = ipv6Bytes(out[k].ipv6).toString('hex');
    return out;
}

function checkZipkin(jsonPath, binPath) {
    const want = JSON.parse(fs.readFileSync(jsonPath, 'utf8'));
    let got;
    try {
        got = ListOfSpans.toObject(ListOfSpans.decode(fs.readFileSync(binPath)), TO_OBJECT);
    } catch (e) {
        fail(binPath, `does not decode: ${e.message}`);
        return;
    }
    const spans = (got.spans || []).map(zipkinJson);
    const problems = [];
    same(want.map(zipkinComparable), spans, path.basename(jsonPath), problems);
    report('zipkin json vs proto3', problems);
    if (!failures) console.log(`zipkin: ${spans.length} spans of ${path.basename(binPath)} equal their JSON`);
}

function encodeZipkin(jsonPath, binPath) {
    const spans = JSON.parse(fs.readFileSync(jsonPath, 'utf8')).map((s) => {
        const o = {...s, traceId: hexb64(s.traceId), id: hexb64(s.id)};
        if (s.parentId) o.parentId = hexb64(s.parentId);
        if (s.kind) o.kind = KINDS.indexOf(s.kind);
        for (const k of ['localEndpoint', 'remoteEndpoint']) {
            if (!s[k]) continue;
            o[k] = {...s[k]};
            if (s[k].ipv4) o[k].ipv4 = Buffer.from(s[k].ipv4.split('.').map(Number)).toString('base64');
            if (s[k].ipv6) o[k].ipv6 = ipv6Bytes(s[k].ipv6).toString('base64');
        }
        return o;
    });
    const message = ListOfSpans.fromObject({spans});
    const error = ListOfSpans.verify(message);
    if (error) fail(jsonPath, `verify: ${error}`);
    fs.writeFileSync(binPath, ListOfSpans.encode(message).finish());
}

/* ---- main ------------------------------------------------------------------------------------ */

try {
    if (command === 'check-otlp') checkOtlp(args[0]);
    else if (command === 'check-zipkin') checkZipkin(args[0], args[1]);
    else if (command === 'encode-otlp') encodeOtlp(args[0], args[1]);
    else if (command === 'encode-zipkin') encodeZipkin(args[0], args[1]);
    else fail('usage', `unknown command ${command}`);
} catch (e) {
    fail(command, e.stack || String(e));
}
if (failures) console.log(`${failures} problem(s)`);
process.exit(failures ? 1 : 0);
