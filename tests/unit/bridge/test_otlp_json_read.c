/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/bridge/test_otlp_json_read.c: `--from otlp-json`
 * (sdk/wire/otlp/otlp_json_decode.c): the two real OTLP/JSON files (one document;
 * NDJSON), a round trip through the SDK's encoder (wire/otlp/otlp_json.h), each
 * mapping rule of the reader's header comment, and the rejections.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "internal.h"
#include "model_equal.h"
#include "read_capture.h"
#include "span_builder.h"
#include "wire/otlp/otlp_json.h"

#define FIXTURE_ONE                                                                                \
    TW_REAL_FIXTURES "/jaegertracing__jaeger/"                                                     \
                     "cmd__jaeger__internal__extension__jaegerquery__internal__fixture__"          \
                     "otlp2jaeger-in.json"
#define FIXTURE_NDJSON                                                                             \
    TW_REAL_FIXTURES "/jaegertracing__jaeger-ui/"                                                  \
                     "packages__jaeger-ui__src__utils__fixtures__otlp2jaeger-multi-in.json.txt"

static int suite_cleanup(void)
{
    tw__span_data_pool_trim();
    return 0;
}

static bool tag_is_str(const tw__span_data *s, const char *key, const char *want)
{
    const tw__tag *t = capture_tag(s, key);
    return t && t->type == TW_VALUE_STRING && strcmp(t->v.str, want) == 0;
}

static tw_status read_text(read_capture *c, const char *text)
{
    return capture_read_mem(c, &twb_reader_otlp_json, text, strlen(text));
}

/* ---- real files ----------------------------------------------------------------------------- */

static void test_real_document_reads_two_server_spans(void)
{
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(capture_read_file(&c, &twb_reader_otlp_json, FIXTURE_ONE), TW_OK);
    CU_ASSERT_EQUAL(c.n_rejects, 0);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 2);
    for (size_t i = 0; i < 2; i++) {
        const tw__span_data *s = c.spans[i].data;
        CU_ASSERT_STRING_EQUAL(c.spans[i].process->service_name, "telemetrygen");
        CU_ASSERT_EQUAL(c.spans[i].process->n_tags, 0);
        CU_ASSERT_EQUAL(s->trace_id_high, 0x83a9efd15c1c98a9u);
        CU_ASSERT_EQUAL(s->trace_id_low, 0x77e0711cc93ee28bu);
        CU_ASSERT_EQUAL(s->span_id, 0xe127af99e3b3e074u);
        CU_ASSERT_EQUAL(s->parent_id, 0x909541b92cf05311u);
        CU_ASSERT_EQUAL_FATAL(s->n_refs, 1);
        CU_ASSERT_EQUAL(s->refs[0].type, TW__REF_CHILD_OF);
        CU_ASSERT_EQUAL(s->refs[0].span_id, s->parent_id);
        CU_ASSERT_STRING_EQUAL(s->operation, "okey-dokey-0");
        CU_ASSERT_EQUAL(s->start_us, 1706678909209712);
        CU_ASSERT_EQUAL(s->duration_us, 123);
        CU_ASSERT_EQUAL(s->flags, TW__FLAG_SAMPLED);
        CU_ASSERT(tag_is_str(s, "span.kind", "server"));
        CU_ASSERT(tag_is_str(s, "peer.service", "telemetrygen-client"));
        CU_ASSERT(tag_is_str(s, "otel.scope.name", "telemetrygen"));
        CU_ASSERT_PTR_NULL(capture_tag(s, "error")); /* "status": {} is UNSET */
        CU_ASSERT_EQUAL(s->n_tags, 4);
    }
    capture_free(&c);
}

static void test_real_ndjson_reads_four_internal_spans(void)
{
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(capture_read_file(&c, &twb_reader_otlp_json, FIXTURE_NDJSON), TW_OK);
    CU_ASSERT_EQUAL(c.n_rejects, 0);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 4);
    for (size_t i = 0; i < 4; i++) {
        CU_ASSERT_PTR_EQUAL(c.spans[i].process, c.spans[0].process);   /* one process */
        CU_ASSERT_PTR_NULL(capture_tag(c.spans[i].data, "span.kind")); /* INTERNAL */
        CU_ASSERT_EQUAL(c.spans[i].data->trace_id_low, c.spans[0].data->trace_id_low);
    }
    const tw__process *p = c.spans[0].process;
    CU_ASSERT_STRING_EQUAL(p->service_name, "example-trace");
    CU_ASSERT_EQUAL(p->n_tags, 3);
    const tw__tag *lang = tw__process_find_tag(p, "telemetry.sdk.language");
    CU_ASSERT(lang && strcmp(lang->v.str, "nodejs") == 0);
    const tw__span_data *first = c.spans[0].data;
    CU_ASSERT_STRING_EQUAL(first->operation, "ohboy.do");
    /* 1711138246978000000 .. 1711138247024460625 ns: the end rounds up. */
    CU_ASSERT_EQUAL(first->start_us, 1711138246978000);
    CU_ASSERT_EQUAL(first->duration_us, 46461);
    capture_free(&c);
}

/* ---- round trip through the SDK's encoder ----------------------------------------------- */

static tw__span_data *span_in_reader_order(uint64_t span_id)
{
    tw__span_data *s = tw__span_data_new();
    if (!s)
        return NULL;
    s->trace_id_high = 0x8000000000000001u;
    s->trace_id_low = 0xfffffffffffffffeu;
    s->span_id = span_id;
    s->parent_id = 0x7fffffffffffffffu;
    s->flags = TW__FLAG_SAMPLED;
    s->start_us = 1700000000123456;
    s->duration_us = 987654;
    const char *op = "GET /users/{id} \xc3\xbcnic\xc3\xb6";
    const tw_test_field retry[] = {{"event", tw_test_str("retry")},
                                   {"attempt", tw_test_i64(3)},
                                   {"delay_s", tw_test_dbl(0.25)}};
    const tw_test_field odd[] = {
        {"is_final", tw_test_bool(false)},
        {"payload", tw_test_bin(tw_test_blob_with_nul, sizeof tw_test_blob_with_nul)}};
    bool ok = tw__span_data_set_operation(s, op, strlen(op)) &&
              tw__span_data_add_ref(s, TW__REF_CHILD_OF, s->trace_id_high, s->trace_id_low,
                                    s->parent_id) &&
              tw__span_data_add_ref(s, TW__REF_FOLLOWS_FROM, 0, 0x1234, 0xfedcba9876543210u) &&
              tw__span_data_add_ref(s, TW__REF_CHILD_OF, 0, 0x99, 0x77) &&
              tw_test_add_tag(s, "http.url", tw_test_str("https://example.com/a?b=c")) &&
              tw_test_add_tag(s, "empty", tw_test_str("")) &&
              tw_test_add_tag(s, "pi", tw_test_dbl(3.141592653589793)) &&
              tw_test_add_tag(s, "negative_zero", tw_test_dbl(-0.0)) &&
              tw_test_add_tag(s, "infinity", tw_test_dbl(INFINITY)) &&
              tw_test_add_tag(s, "nan", tw_test_dbl(NAN)) &&
              tw_test_add_tag(s, "cache.hit", tw_test_bool(false)) &&
              tw_test_add_tag(s, "min", tw_test_i64(INT64_MIN)) &&
              tw_test_add_tag(s, "max", tw_test_i64(INT64_MAX)) &&
              tw_test_add_tag(s, "blob",
                              tw_test_bin(tw_test_blob_with_nul, sizeof tw_test_blob_with_nul)) &&
              tw_test_add_tag(s, "span.kind", tw_test_str("client")) &&
              tw_test_add_tag(s, "error", tw_test_bool(true)) &&
              tw_test_add_log(s, 1700000000200000, retry, 3) &&
              tw_test_add_log(s, 1700000000300000, NULL, 0) &&
              tw_test_add_log(s, 1700000000400000, odd, 2);
    if (!ok) {
        tw__span_data_unref(s);
        return NULL;
    }
    return s;
}

static void test_round_trip_through_the_sdk_encoder(void)
{
    tw__span_data *spans[2] = {span_in_reader_order(0x8000000000000000u),
                               tw_test_span_root_64bit()};
    CU_ASSERT_FATAL(spans[0] && spans[1]);
    tw__process process;
    tw__process_init(&process);
    tw_value ip = tw_test_str("10.0.0.1"), shard = tw_test_i64(-3);
    CU_ASSERT_FATAL(tw__process_set_service(&process, "billing") &&
                    tw__process_add_tag(&process, "ip", &ip) &&
                    tw__process_add_tag(&process, "shard", &shard));
    tw__buf doc;
    tw__buf_init(&doc);
    CU_ASSERT_FATAL(tw__otlp_encode_request(spans, 2, &process, &doc));
    /* Twice: as NDJSON. */
    static const char nl = '\n';
    size_t one = doc.len;
    char *copy = malloc(one);
    CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
    memcpy(copy, doc.data, one);
    CU_ASSERT_FATAL(tw__buf_append(&doc, &nl, 1) && tw__buf_append(&doc, copy, one));
    free(copy);

    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_otlp_json, doc.data, doc.len), TW_OK);
    CU_ASSERT_EQUAL(c.n_rejects, 0);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 4);
    /* The encoder's own scope ("tracewire") names this library, not the
     * instrumentation: the reader adds no tag for it, so the trip is exact. */
    for (size_t i = 0; i < 4; i++) {
        CU_ASSERT(tw_test_spans_equal(c.spans[i].data, spans[i % 2]));
        CU_ASSERT(capture_processes_equal(c.spans[i].process, &process));
    }
    capture_free(&c);
    tw__buf_free(&doc);
    tw__process_clear(&process);
    tw__span_data_unref(spans[0]);
    tw__span_data_unref(spans[1]);
}

/* ---- mapping rules ----------------------------------------------------------------------- */

static const char rules_doc[] =
    "{\"resourceSpans\":[{\"resource\":{\"attributes\":["
    "{\"key\":\"host.name\",\"value\":{\"stringValue\":\"h1\"}},"
    "{\"key\":\"service.name\",\"value\":{\"stringValue\":\"svc\"}},"
    "{\"key\":\"pid\",\"value\":{\"intValue\":42}}]},"
    "\"instrumentationLibrarySpans\":[{\"instrumentationLibrary\":{\"name\":\"lib\","
    "\"version\":\"1.2\"},\"spans\":["
    /* 0: base64 ids, kind by name, typed attributes, status ERROR with a message */
    "{\"traceId\":\"AAAAAAAAAAAAAAAAAAAAAQ==\",\"spanId\":\"AAAAAAAAAAI=\","
    "\"parentSpanId\":\"\",\"name\":\"a\",\"kind\":\"SPAN_KIND_CLIENT\","
    "\"startTimeUnixNano\":1000000000000000000,\"endTimeUnixNano\":\"1000000000000000400\","
    "\"attributes\":["
    "{\"key\":\"i\",\"value\":{\"intValue\":\"-7\"}},"
    "{\"key\":\"d\",\"value\":{\"doubleValue\":\"-Infinity\"}},"
    "{\"key\":\"b\",\"value\":{\"bytesValue\":\"AP8=\"}},"
    "{\"key\":\"arr\",\"value\":{\"arrayValue\":{\"values\":[{\"stringValue\":\"x\"},"
    "{\"intValue\":\"1\"},{\"boolValue\":true}]}}},"
    "{\"key\":\"map\",\"value\":{\"kvlistValue\":{\"values\":[{\"key\":\"k\",\"value\":"
    "{\"doubleValue\":2.5}}]}}},"
    "{\"key\":\"none\",\"value\":{}}],"
    "\"status\":{\"code\":2,\"message\":\"boom\"},\"traceState\":\"k=v\"},"
    /* 1: kind PRODUCER by short name, events, links, OK status, end before start */
    "{\"traceId\":\"0000000000000000000000000000000A\",\"spanId\":\"00000000000000b\","
    "\"parentSpanId\":\"000000000000000b\",\"name\":\"b\",\"kind\":\"PRODUCER\","
    "\"startTimeUnixNano\":\"2000000000000000000\",\"endTimeUnixNano\":\"1000000000000000000\","
    "\"events\":[{\"timeUnixNano\":\"2000000000000001000\",\"name\":\"retry\","
    "\"attributes\":[{\"key\":\"n\",\"value\":{\"intValue\":\"2\"}}]},"
    "{\"timeUnixNano\":\"2000000000000002000\",\"name\":\"\"}],"
    "\"links\":[{\"traceId\":\"0a\",\"spanId\":\"0c\"},"
    "{\"traceId\":\"0a\",\"spanId\":\"0d\",\"attributes\":[{\"key\":\"opentracing.ref_type\","
    "\"value\":{\"stringValue\":\"child_of\"}}]}],"
    "\"status\":{\"code\":\"STATUS_CODE_OK\"}}"
    "]}]}]}\n";

static void test_every_mapping_rule(void)
{
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(read_text(&c, rules_doc), TW_OK);
    CU_ASSERT_EQUAL(c.n_rejects, 0);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 2);
    const tw__process *p = c.spans[0].process;
    CU_ASSERT_STRING_EQUAL(p->service_name, "svc");
    CU_ASSERT_EQUAL_FATAL(p->n_tags, 2);
    CU_ASSERT_STRING_EQUAL(p->tags[0].key, "host.name");
    CU_ASSERT(p->tags[1].type == TW_VALUE_INT64 && p->tags[1].v.i64 == 42);

    const tw__span_data *a = c.spans[0].data;
    CU_ASSERT_EQUAL(a->trace_id_high, 0);
    CU_ASSERT_EQUAL(a->trace_id_low, 1);
    CU_ASSERT_EQUAL(a->span_id, 2);
    CU_ASSERT_EQUAL(a->parent_id, 0);
    CU_ASSERT_EQUAL(a->n_refs, 0);
    CU_ASSERT_EQUAL(a->start_us, 1000000000000000);
    CU_ASSERT_EQUAL(a->duration_us, 1); /* 400 ns: at least 1 µs */
    const tw__tag *i = capture_tag(a, "i"), *d = capture_tag(a, "d"), *b = capture_tag(a, "b");
    CU_ASSERT(i && i->type == TW_VALUE_INT64 && i->v.i64 == -7);
    CU_ASSERT(d && d->type == TW_VALUE_DOUBLE && isinf(d->v.dbl) && d->v.dbl < 0);
    CU_ASSERT(b && b->type == TW_VALUE_BINARY && b->len == 2 && b->v.bin[0] == 0 &&
              b->v.bin[1] == 0xff);
    CU_ASSERT(tag_is_str(a, "arr", "[\"x\",1,true]"));
    CU_ASSERT(tag_is_str(a, "map", "{\"k\":2.5}"));
    CU_ASSERT(tag_is_str(a, "none", ""));
    CU_ASSERT(tag_is_str(a, "span.kind", "client"));
    const tw__tag *err = capture_tag(a, "error");
    CU_ASSERT(err && err->type == TW_VALUE_BOOL && err->v.boolean);
    CU_ASSERT(tag_is_str(a, "otel.status_description", "boom"));
    CU_ASSERT(tag_is_str(a, "w3c.tracestate", "k=v"));
    CU_ASSERT(tag_is_str(a, "otel.scope.name", "lib"));
    CU_ASSERT(tag_is_str(a, "otel.scope.version", "1.2"));
    CU_ASSERT_STRING_EQUAL(a->tags[a->n_tags - 1].key, "otel.scope.version");

    const tw__span_data *s = c.spans[1].data;
    CU_ASSERT_EQUAL(s->trace_id_low, 10);
    CU_ASSERT_EQUAL(s->parent_id, 0); /* equal to the span id: root */
    CU_ASSERT_EQUAL(s->duration_us, 0);
    CU_ASSERT_EQUAL(c.n_warnings, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.last_warning, "spans[1]: endTimeUnixNano before start"));
    CU_ASSERT(tag_is_str(s, "span.kind", "producer"));
    CU_ASSERT(tag_is_str(s, "otel.status_code", "OK"));
    CU_ASSERT_PTR_NULL(capture_tag(s, "error"));
    CU_ASSERT_EQUAL_FATAL(s->n_logs, 2);
    CU_ASSERT_EQUAL(s->logs[0].timestamp_us, 2000000000000001);
    CU_ASSERT_EQUAL_FATAL(s->logs[0].n_fields, 2);
    CU_ASSERT_STRING_EQUAL(s->logs[0].fields[0].key, "event");
    CU_ASSERT_STRING_EQUAL(s->logs[0].fields[0].v.str, "retry");
    CU_ASSERT_EQUAL(s->logs[0].fields[1].v.i64, 2);
    CU_ASSERT_EQUAL(s->logs[1].n_fields, 0); /* an empty name adds no field */
    CU_ASSERT_EQUAL_FATAL(s->n_refs, 2);
    CU_ASSERT(s->refs[0].type == TW__REF_FOLLOWS_FROM && s->refs[0].span_id == 0xc);
    CU_ASSERT(s->refs[1].type == TW__REF_CHILD_OF && s->refs[1].span_id == 0xd);
    capture_free(&c);
}

/* ---- rejections ------------------------------------------------------------------------- */

static void test_bad_spans_and_documents_are_rejected_alone(void)
{
    const char *text =
        "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":["
        "{\"traceId\":\"zz\",\"spanId\":\"01\",\"startTimeUnixNano\":\"5\"},"
        "{\"traceId\":\"01\",\"spanId\":\"02\",\"startTimeUnixNano\":\"1000\"},"
        "{\"traceId\":\"01\",\"spanId\":\"03\"},"
        "{\"traceId\":\"00\",\"spanId\":\"03\",\"startTimeUnixNano\":\"1000\"},"
        "{\"traceId\":\"01\",\"spanId\":\"04\",\"startTimeUnixNano\":\"1000\",\"kind\":9},"
        "{\"traceId\":\"01\",\"spanId\":\"05\",\"startTimeUnixNano\":\"1000\","
        "\"attributes\":[{\"key\":\"x\",\"value\":{\"intValue\":\"1.5\"}}]}"
        "]}]}]}\n"
        "{\"resourceSpans\": [oops]}\n"
        "{\"spans\":[]}\n"
        "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{\"traceId\":\"01\",\"spanId\":\"09\","
        "\"startTimeUnixNano\":\"3000\"}]}]}]}\n";
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(read_text(&c, text), TW_OK);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 2);
    CU_ASSERT_EQUAL(c.spans[0].data->span_id, 2);
    CU_ASSERT_EQUAL(c.spans[0].data->start_us, 1);
    CU_ASSERT_STRING_EQUAL(c.spans[0].process->service_name, "");
    CU_ASSERT_EQUAL(c.spans[1].data->span_id, 9);
    CU_ASSERT_EQUAL_FATAL(c.n_rejects, 7);
    CU_ASSERT_EQUAL(c.rejects[0].line_no, 1);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(c.rejects[0].reason, "resourceSpans[0].scopeSpans[0].spans[0]: traceId"));
    CU_ASSERT_EQUAL(c.rejects[0].raw[0], '{');
    CU_ASSERT_PTR_NOT_NULL(strstr((const char *)c.rejects[0].raw, "\"zz\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[1].reason, "spans[2]: startTimeUnixNano"));
    CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[2].reason, "spans[3]: traceId"));
    CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[3].reason, "spans[4]: kind"));
    CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[4].reason, "spans[5]: attributes \"x\": intValue"));
    CU_ASSERT_EQUAL(c.rejects[5].line_no, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[5].reason, "invalid JSON"));
    CU_ASSERT_EQUAL(c.rejects[5].raw_len, strlen("{\"resourceSpans\": [oops]}"));
    CU_ASSERT_EQUAL(c.rejects[6].line_no, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[6].reason, "no resourceSpans"));
    capture_free(&c);
}

/* resourceSpans omitted (or null) is the empty list of proto3 JSON: `{}` is
 * an empty request, not an error. An object of other members stays refused
 * (another format), and so does a resourceSpans that is not a list. */
static void test_empty_request_is_no_spans(void)
{
    const char *text = "{}\n"
                       "{\"resourceSpans\":null}\n"
                       "{\"resourceSpans\":[]}\n"
                       "{\"resourceSpans\":5}\n"
                       "{\"data\":[]}\n";
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(read_text(&c, text), TW_OK);
    CU_ASSERT_EQUAL(c.n_spans, 0);
    CU_ASSERT_EQUAL_FATAL(c.n_rejects, 2);
    CU_ASSERT_EQUAL(c.rejects[0].line_no, 4);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[0].reason, "resourceSpans is not an array"));
    CU_ASSERT_EQUAL(c.rejects[1].line_no, 5);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[1].reason, "no resourceSpans"));
    capture_free(&c);
}

/* Microseconds written into the nanosecond fields (a common mistake of
 * hand-made OTLP) are read as µs by their magnitude, with one warning; no
 * digit is lost (the choice is made on the raw value). */
static void test_time_unit_by_magnitude(void)
{
    const char *text = "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":["
                       "{\"traceId\":\"01\",\"spanId\":\"02\","
                       "\"startTimeUnixNano\":\"1700000000123456\","
                       "\"endTimeUnixNano\":\"1700000000123999\","
                       "\"events\":[{\"timeUnixNano\":\"1700000000123500\",\"name\":\"e\"}]},"
                       "{\"traceId\":\"01\",\"spanId\":\"03\","
                       "\"startTimeUnixNano\":\"1700000000123456789\","
                       "\"endTimeUnixNano\":\"1700000000123999000\"}"
                       "]}]}]}\n";
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(read_text(&c, text), TW_OK);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 2);
    CU_ASSERT_EQUAL(c.spans[0].data->start_us, INT64_C(1700000000123456));
    CU_ASSERT_EQUAL(c.spans[0].data->duration_us, 543);
    CU_ASSERT_EQUAL_FATAL(c.spans[0].data->n_logs, 1);
    CU_ASSERT_EQUAL(c.spans[0].data->logs[0].timestamp_us, INT64_C(1700000000123500));
    CU_ASSERT_EQUAL(c.spans[1].data->start_us, INT64_C(1700000000123457)); /* ns, as it says */
    CU_ASSERT_EQUAL(c.spans[1].data->duration_us, 542);
    CU_ASSERT_EQUAL(c.n_warnings, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.last_warning, "read as microseconds"));
    capture_free(&c);
}

/* A document of @n spans where span @bad carries @value (raw JSON) as the
 * value of a string attribute. malloc'd. */
static char *document_with(size_t n, size_t bad, const char *value)
{
    tw__buf b = {0};
    CU_ASSERT_FATAL(TW__BUF_LIT(&b, "{\"resourceSpans\":[{\"resource\":{},\"scopeSpans\":[{"
                                    "\"spans\":["));
    for (size_t i = 0; i < n; i++) {
        char span[256];
        snprintf(span, sizeof span,
                 "%s{\"traceId\":\"5b8efff798038103d269b633813fc60c\",\"spanId\":"
                 "\"%016zx\",\"name\":\"op\",\"startTimeUnixNano\":\"1700000000000000000\","
                 "\"endTimeUnixNano\":\"1700000000000001000\",\"attributes\":[{\"key\":\"k\","
                 "\"value\":",
                 i ? "," : "", i + 1);
        CU_ASSERT_FATAL(tw__buf_append(&b, span, strlen(span)));
        const char *v = i == bad ? value : "{\"stringValue\":\"fine\"}";
        CU_ASSERT_FATAL(tw__buf_append(&b, v, strlen(v)) && TW__BUF_LIT(&b, "}]}"));
    }
    CU_ASSERT_FATAL(TW__BUF_LIT(&b, "]}]}]}") && tw__buf_put_byte(&b, 0));
    return (char *)b.data;
}

/* One bad value in a large document costs that value (repaired) or that
 * span (rejected alone), never the document: the whole request was
 * rejected for one invalid UTF-8 byte, one \u0000 or one number beyond
 * int64. */
static void test_one_bad_value_does_not_cost_the_document(void)
{
    static const struct {
        const char *value;
        size_t spans, rejects;
        const char *repaired; /* the attribute read back, NULL: not checked */
    } cases[] = {
        {"{\"stringValue\":\"a\xff"
         "b\"}",
         1000, 0,
         "a\xef\xbf\xbd"
         "b"},
        {"{\"stringValue\":\"a\\u0000b\"}", 1000, 0, NULL},
        {"{\"stringValue\":\"a\x01"
         "b\"}",
         1000, 0,
         "a\x01"
         "b"},
        {"{\"intValue\":123456789012345678901234567890}", 999, 1, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *doc = document_with(1000, 500, cases[i].value);
        read_capture c;
        capture_init(&c);
        CU_ASSERT_EQUAL(read_text(&c, doc), TW_OK);
        CU_ASSERT_EQUAL(c.n_spans, cases[i].spans);
        CU_ASSERT_EQUAL(c.n_rejects, cases[i].rejects);
        if (cases[i].repaired && c.n_spans == 1000)
            CU_ASSERT(tag_is_str(c.spans[500].data, "k", cases[i].repaired));
        if (cases[i].rejects && c.n_rejects)
            CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[0].reason, "intValue"));
        capture_free(&c);
        free(doc);
    }
}

static void test_stops_when_emit_says_so(void)
{
    read_capture c;
    capture_init(&c);
    c.stop_after = 1;
    CU_ASSERT_EQUAL(capture_read_file(&c, &twb_reader_otlp_json, FIXTURE_NDJSON), TW_E_STATE);
    CU_ASSERT_EQUAL(c.n_spans, 1);
    capture_free(&c);
}

static void test_sniff_finds_resource_spans(void)
{
    static const char doc[] = "{\n  \"resourceSpans\": [";
    static const char zipkin[] = "[{\"traceId\":\"01\"";
    CU_ASSERT(twb_reader_otlp_json.sniff((const uint8_t *)doc, strlen(doc)) > 50);
    CU_ASSERT_EQUAL(twb_reader_otlp_json.sniff((const uint8_t *)zipkin, strlen(zipkin)), 0);
    CU_ASSERT_STRING_EQUAL(twb_reader_otlp_json.name, "otlp-json");
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("bridge/readers/otlp_json", NULL, suite_cleanup);
    CU_add_test(suite, "real_document_reads_two_server_spans",
                test_real_document_reads_two_server_spans);
    CU_add_test(suite, "real_ndjson_reads_four_internal_spans",
                test_real_ndjson_reads_four_internal_spans);
    CU_add_test(suite, "round_trip_through_the_sdk_encoder",
                test_round_trip_through_the_sdk_encoder);
    CU_add_test(suite, "every_mapping_rule", test_every_mapping_rule);
    CU_add_test(suite, "bad_spans_and_documents_are_rejected_alone",
                test_bad_spans_and_documents_are_rejected_alone);
    CU_add_test(suite, "stops_when_emit_says_so", test_stops_when_emit_says_so);
    CU_add_test(suite, "empty_request_is_no_spans", test_empty_request_is_no_spans);
    CU_add_test(suite, "time_unit_by_magnitude", test_time_unit_by_magnitude);
    CU_add_test(suite, "one_bad_value_does_not_cost_the_document",
                test_one_bad_value_does_not_cost_the_document);
    CU_add_test(suite, "sniff_finds_resource_spans", test_sniff_finds_resource_spans);
}
