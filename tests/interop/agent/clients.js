// SPDX-License-Identifier: Apache-2.0
// tests/interop/agent/clients.js: independent clients sending to `tracewire agent`
// (test_agent_interop.py drives it). Each mode sends spans with the client library's own
// encoder and prints, as JSON on stdout, what it sent (ids, names, service, tags, times) so
// that the test can check what the agent forwarded, field by field.
//
//   node clients.js jaeger HOST PORT SAMPLING_URL   jaeger-client (UDP, binary emitBatch to
//                                                   6832 by default) and its remote sampler
//   node clients.js otlp-json URL                   @opentelemetry/exporter-trace-otlp-http
//   node clients.js otlp-proto URL                  @opentelemetry/exporter-trace-otlp-proto
//   node clients.js zipkin URL                      zipkin + zipkin-transport-http (JSON v2)
'use strict';

const path = require('path');
const modules = process.env.TW_NODE_MODULES || path.join(__dirname, 'node_modules');
const need = (name) => require(path.join(modules, name));

const mode = process.argv[2];
const N = 5;

function hex(s, width) {
  return s.toString().padStart(width, '0');
}

async function jaeger(host, port, samplingUrl) {
  const { initTracer } = need('jaeger-client');
  const sent = [];
  const tracer = initTracer({
    serviceName: 'node-jaeger',
    sampler: { type: 'const', param: 1 },
    reporter: { agentHost: host, agentPort: Number(port), flushIntervalMs: 50 },
  }, { logger: { info() {}, error(e) { console.error('jaeger-client:', e); } } });
  const root = tracer.startSpan('root-op');
  for (let i = 0; i < N; i++) {
    const s = tracer.startSpan('child-' + i, { childOf: root });
    s.setTag('t.str', 'v' + i);
    s.setTag('t.int', 100 + i);
    s.finish();
    sent.push(s);
  }
  root.finish();
  sent.push(root);
  await new Promise((r) => tracer.close(r));
  const out = sent.map((s) => {
    const c = s.context();
    const tags = {};
    for (const t of s._tags) if (t.key === 't.str' || t.key === 't.int') tags[t.key] = String(t.value);
    return {
      trace: c.traceIdStr.padStart(32, '0'), span: hex(c.spanIdStr, 16),
      parent: c.parentIdStr && c.parentIdStr !== '0' ? hex(c.parentIdStr, 16) : '',
      name: s.operationName, service: 'node-jaeger', tags,
      start: Math.round(s._startTime * 1000), duration: Math.round(s._duration * 1000),
    };
  });
  // The remote sampler against the agent's sampling endpoint.
  let sampling = null;
  if (samplingUrl) {
    const u = new URL(samplingUrl);
    const t2 = initTracer({
      serviceName: 'foo',
      sampler: { type: 'remote', param: 0.001, host: u.hostname, port: Number(u.port), refreshIntervalMs: 100 },
      reporter: { agentHost: host, agentPort: Number(port) },
    }, { logger: { info() {}, error() {} } });
    await new Promise((r) => setTimeout(r, 600));
    const inner = t2._sampler && t2._sampler._sampler;
    sampling = {
      sampler: inner ? inner.constructor.name : null,
      default_rate: inner && inner._defaultSampler ? inner._defaultSampler.samplingRate
        : inner && inner.samplingRate,
    };
    await new Promise((r) => t2.close(r));
  }
  return { spans: out, sampling };
}

async function otlp(url, proto) {
  const api = need('@opentelemetry/api');
  const { BasicTracerProvider, SimpleSpanProcessor } = need('@opentelemetry/sdk-trace-base');
  const { resourceFromAttributes } = need('@opentelemetry/resources');
  const { OTLPTraceExporter } = need(proto ? '@opentelemetry/exporter-trace-otlp-proto'
    : '@opentelemetry/exporter-trace-otlp-http');
  const exporter = new OTLPTraceExporter({ url });
  const results = [];
  const wrapped = {
    export(spans, cb) { exporter.export(spans, (r) => { results.push(r.code); cb(r); }); },
    shutdown() { return exporter.shutdown(); },
    forceFlush() { return exporter.forceFlush ? exporter.forceFlush() : Promise.resolve(); },
  };
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': proto ? 'node-otlp-proto' : 'node-otlp-json' }),
    spanProcessors: [new SimpleSpanProcessor(wrapped)],
  });
  const tracer = provider.getTracer('interop');
  const sent = [];
  const root = tracer.startSpan('root-op');
  const ctx = api.trace.setSpan(api.context.active(), root);
  for (let i = 0; i < N; i++) {
    const s = tracer.startSpan('child-' + i, { attributes: { 't.str': 'v' + i, 't.int': 100 + i } }, ctx);
    s.end();
    sent.push(s);
  }
  root.end();
  sent.push(root);
  await provider.forceFlush();
  await new Promise((r) => setTimeout(r, 300));
  await provider.shutdown();
  const us = (hr) => hr[0] * 1000000 + Math.floor(hr[1] / 1000);
  const out = sent.map((s) => {
    const c = s.spanContext();
    const tags = {};
    for (const k of ['t.str', 't.int']) if (k in s.attributes) tags[k] = String(s.attributes[k]);
    const parent = s.parentSpanContext ? s.parentSpanContext.spanId : (s.parentSpanId || '');
    return { trace: c.traceId, span: c.spanId, parent: parent || '', name: s.name,
      service: proto ? 'node-otlp-proto' : 'node-otlp-json', tags,
      start: us(s.startTime), duration: us(s.endTime) - us(s.startTime) };
  });
  return { spans: out, results };
}

async function zipkin(url) {
  const { Tracer, BatchRecorder, ExplicitContext, jsonEncoder, Annotation } = need('zipkin');
  const { HttpLogger } = need('zipkin-transport-http');
  const logger = new HttpLogger({ endpoint: url, jsonEncoder: jsonEncoder.JSON_V2, httpInterval: 50 });
  const recorder = new BatchRecorder({ logger, timeout: 50 });
  const tracer = new Tracer({ ctxImpl: new ExplicitContext(), recorder, localServiceName: 'node-zipkin',
    traceId128Bit: true });
  const sent = [];
  for (let i = 0; i < N; i++) {
    const id = tracer.createRootId();
    tracer.letId(id, () => {
      tracer.recordServiceName('node-zipkin');
      tracer.recordRpc('zipkin-op-' + i);
      tracer.recordBinary('t.str', 'v' + i);
      tracer.recordBinary('t.int', String(100 + i));
      tracer.recordAnnotation(new Annotation.LocalOperationStart('zipkin-op-' + i));
      tracer.recordAnnotation(new Annotation.LocalOperationStop());
    });
    sent.push({ trace: id.traceId.padStart(32, '0'), span: id.spanId, parent: '',
      name: 'zipkin-op-' + i, service: 'node-zipkin', tags: { 't.str': 'v' + i, 't.int': String(100 + i) } });
  }
  await new Promise((r) => setTimeout(r, 800));
  return { spans: sent };
}

(async () => {
  let r;
  if (mode === 'jaeger') r = await jaeger(process.argv[3], process.argv[4], process.argv[5]);
  else if (mode === 'otlp-json') r = await otlp(process.argv[3], false);
  else if (mode === 'otlp-proto') r = await otlp(process.argv[3], true);
  else if (mode === 'zipkin') r = await zipkin(process.argv[3]);
  else throw new Error('unknown mode ' + mode);
  process.stdout.write(JSON.stringify(r) + '\n');
})().catch((e) => { console.error(e); process.exit(1); });
