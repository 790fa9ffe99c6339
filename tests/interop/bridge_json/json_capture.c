/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/interop/bridge_json/json_capture.c: writes what the zipkin-v1-json
 * and jaeger-json writers make of every real fixture, for validate.js.
 *
 * Usage: json_capture FIXTURES_DIR OUT_DIR
 * Reads each zipkin-v2-json fixture (INDEX rows 18-37) with the
 * zipkin-v2-json reader and writes OUT_DIR/zipkin-v1-NN.json (zipkin-v1-json
 * writer) and OUT_DIR/jaeger-zNN.json (jaeger-json writer); reads each
 * jaeger-json fixture (rows 38-48) and writes OUT_DIR/jaeger-jNN.json.
 * Spans go to the writers in groups of up to 7 per write() call, so that the
 * streamed framing is exercised. Exit 0, or 1 when a fixture cannot be read
 * or a writer fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/read_capture.h"

static const char *const zipkin_v2[] = {
    "openzipkin__zipkin/zipkin-ui__testdata__netflix.json",
    "openzipkin__zipkin/zipkin-lens__testdata__ascend.json",
    "openzipkin__zipkin/zipkin-lens__testdata__envoy.json",
    "openzipkin__zipkin/zipkin-lens__testdata__messaging-kafka.json",
    "openzipkin__zipkin/zipkin-lens__testdata__messaging.json",
    "openzipkin__zipkin/zipkin-lens__testdata__messaging2.json",
    "openzipkin__zipkin/zipkin-lens__testdata__simple-db-p6.json",
    "openzipkin__zipkin/zipkin-lens__testdata__skew.json",
    "openzipkin__zipkin/zipkin-lens__testdata__smartthings-mobile-web-install.json",
    "openzipkin__zipkin/zipkin-lens__testdata__smartthings-oauth-authorization.json",
    "openzipkin__zipkin/zipkin-lens__testdata__yelp.json",
    "openzipkin__zipkin/zipkin-lens__src__test__data__malformed.json",
    "openzipkin__zipkin/benchmarks__src__test__resources__zipkin2-chinese.json",
    "jaegertracing__jaeger/cmd__collector__app__handler__testdata__zipkin_v1_merged_spans.json",
    "jaegertracing__jaeger/cmd__collector__app__zipkin__fixtures__zipkin_01.json",
    "jaegertracing__jaeger/cmd__collector__app__zipkin__fixtures__zipkin_03.json",
    "open-telemetry__opentelemetry-collector/receiver__zipkinreceiver__testdata__sample1.json",
    "open-telemetry__opentelemetry-collector-contrib/"
    "receiver__zipkinreceiver__testdata__sample3.json",
    "open-telemetry__opentelemetry-collector-contrib/"
    "receiver__zipkinreceiver__testdata__sample4.json",
    "honeycombio__honeycomb-opentracing-proxy/app__testdata__payload_1.json",
};

static const char *const jaeger[] = {
    "jaegertracing__jaeger/"
    "cmd__jaeger__internal__extension__jaegerquery__internal__fixture__otlp2jaeger-out.json",
    "jaegertracing__jaeger/internal__uimodel__converter__v1__json__fixtures__ui_01.json",
    "jaegertracing__jaeger/model__json__fixture.json",
    "jaegertracing__jaeger/cmd__anonymizer__app__uiconv__fixtures__trace_success.json",
    "jaegertracing__jaeger-ui/"
    "packages__jaeger-ui__src__components__TracePage__TraceFlamegraph__testTrace.json",
    "jaegertracing__jaeger-ui/packages__jaeger-ui__src__components__TracePage__TraceStatistics__"
    "tableValuesTestTrace__spanAmongEachOtherGroupedAndSpans.json",
    "jaegertracing__jaeger-ui/packages__jaeger-ui__src__components__TracePage__TraceStatistics__"
    "tableValuesTestTrace__testTraceNormal.json",
    "jaegertracing__jaeger-ui/packages__jaeger-ui__src__components__TracePage__TraceStatistics__"
    "tableValuesTestTrace__traceWithSingleChildLongerThanParentAndStartsAfterParent.json",
    "jaegertracing__jaeger-ui/"
    "packages__jaeger-ui__src__components__TracePage__TraceTimelineViewer__genaiTestTrace.json",
    "jaegertracing__jaeger-ui/"
    "packages__jaeger-ui__src__utils__fixtures__oltp2jaeger-multi-out.json",
};

static bool write_file(const read_capture *c, const twb_writer_vtable *vt, const char *path)
{
    FILE *out = fopen(path, "w");
    if (!out)
        return false;
    twb_writer *w = vt->new_writer(out, NULL, NULL);
    bool ok = w != NULL;
    for (size_t i = 0; ok && i < c->n_spans; i += 7) {
        size_t n = c->n_spans - i < 7 ? c->n_spans - i : 7;
        ok = vt->write(w, c->spans + i, n, NULL) == TW_OK;
    }
    ok = ok && vt->finish(w, NULL) == TW_OK;
    vt->free_writer(w);
    return fclose(out) == 0 && ok;
}

static bool convert(const char *dir, const char *name, const twb_reader *reader, const char *out,
                    char tag, size_t index)
{
    char path[4096], target[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    read_capture c;
    capture_init(&c);
    bool ok = capture_read_file(&c, reader, path) == TW_OK && c.n_spans > 0;
    if (ok && tag == 'z') {
        snprintf(target, sizeof target, "%s/zipkin-v1-%02zu.json", out, index);
        ok = write_file(&c, &twb_writer_zipkin_v1_json, target);
    }
    snprintf(target, sizeof target, "%s/jaeger-%c%02zu.json", out, tag, index);
    ok = ok && write_file(&c, &twb_writer_jaeger_json, target);
    if (!ok)
        fprintf(stderr, "json_capture: %s: cannot convert\n", path);
    capture_free(&c);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: json_capture FIXTURES_DIR OUT_DIR\n");
        return 2;
    }
    bool ok = true;
    for (size_t i = 0; i < sizeof zipkin_v2 / sizeof zipkin_v2[0]; i++)
        ok = convert(argv[1], zipkin_v2[i], &twb_reader_zipkin_v2_json, argv[2], 'z', i) && ok;
    for (size_t i = 0; i < sizeof jaeger / sizeof jaeger[0]; i++)
        ok = convert(argv[1], jaeger[i], &twb_reader_jaeger_json, argv[2], 'j', i) && ok;
    return ok ? 0 : 1;
}
