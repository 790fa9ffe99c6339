/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/bridge/test_api_v2_json.c: suite "bridge/jaeger_api_v2_json":
 * Jaeger api_v2 protobuf-JSON (sdk/wire/jaeger/api_v2_json.c) read through
 * `--from jaeger-api-v2-json` (sdk/wire/jaeger/api_v2_json_read.c) into the
 * span model.
 *
 * - RFC 3339 times to nanoseconds: fractions of any length, offsets, leap
 *   days; malformed ones refused.
 * - The three Elastic APM Server fixtures (real HotROD captures,
 *   tests/fixtures/real/INDEX.md rows 52-54) convert, with their ids, times,
 *   durations, typed tags (v_type left out for STRING), logs, references and
 *   process as the files say.
 * - The lowerCamelCase spelling, v_type names, "1.5s" durations, int64 as
 *   strings and binary values; a span with bad ids is refused alone with the
 *   reason; a bad time is dropped with a warning.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/read_capture.h"
#include "harness.h"
#include "wire/jaeger/api_v2_json.h"
#include "wire/core/json_common.h"

#define APM TW_REAL_FIXTURES "/elastic__apm-server/"

static void test_rfc3339(void)
{
    int64_t ns = 0;
    CU_ASSERT(tw__rfc3339_to_ns("1970-01-01T00:00:00Z", 20, &ns) && ns == 0);
    CU_ASSERT(tw__rfc3339_to_ns("2019-12-20T07:41:44.953864Z", 27, &ns) &&
              ns == 1576827704953864000);
    CU_ASSERT(tw__rfc3339_to_ns("2019-12-20T07:41:45.18667Z", 26, &ns) &&
              ns == 1576827705186670000);
    CU_ASSERT(tw__rfc3339_to_ns("2019-12-20T08:41:44.000000001+01:00", 35, &ns) &&
              ns == 1576827704000000001);
    CU_ASSERT(tw__rfc3339_to_ns("2024-02-29t23:59:59.1234567891z", 31, &ns) &&
              ns == 1709251199123456789);
    CU_ASSERT(tw__rfc3339_to_ns("1969-12-31T23:59:59Z", 20, &ns) && ns == -1000000000);
    static const char *const bad[] = {"2023-02-29T00:00:00Z", "2019-12-20 07:41:44Z",
                                      "2019-12-20T07:41:44",  "2019-12-20T07:41:44.Z",
                                      "2019-13-01T00:00:00Z", "2019-12-20T07:41:44+0100",
                                      "2019-12-20T24:00:00Z", "20191220T074144Z"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CU_ASSERT_FALSE(tw__rfc3339_to_ns(bad[i], strlen(bad[i]), &ns));
}

static const tw__tag *field(const tw__log *log, const char *key)
{
    for (size_t i = 0; i < log->n_fields; i++) {
        if (strcmp(log->fields[i].key, key) == 0)
            return &log->fields[i];
    }
    return NULL;
}

static void test_apm_fixtures_convert(void)
{
    static const struct {
        const char *file;
        size_t spans;
    } files[] = {{APM "testdata__jaeger__batch_0.json", 1},
                 {APM "testdata__jaeger__batch_1.json", 14},
                 {APM "beater__jaeger__testdata__batch_2.json", 3}};
    for (size_t i = 0; i < 3; i++) {
        read_capture c;
        capture_init(&c);
        CU_ASSERT_EQUAL(capture_read_file(&c, &twb_reader_jaeger_api_v2_json, files[i].file),
                        TW_OK);
        CU_ASSERT_EQUAL(c.n_spans, files[i].spans);
        CU_ASSERT_EQUAL(c.n_rejects, 0);
        if (c.n_warnings)
            fprintf(stderr, "%s: %s\n", files[i].file, c.last_warning);
        CU_ASSERT_EQUAL(c.n_warnings, 0);
        if (i == 0 && c.n_spans == 1) {
            const tw__span_data *s = c.spans[0].data;
            CU_ASSERT_EQUAL(s->trace_id_high, 0);
            CU_ASSERT_EQUAL(s->trace_id_low, 0x7be2fd98d0973be3u);
            CU_ASSERT_EQUAL(s->span_id, 0x7be2fd98d0973be3u);
            CU_ASSERT_EQUAL(s->parent_id, 0);
            CU_ASSERT_STRING_EQUAL(s->operation, "Driver::findNearest");
            CU_ASSERT_EQUAL(s->flags, 1);
            CU_ASSERT_EQUAL(s->start_us, 1576827704953864);
            CU_ASSERT_EQUAL(s->duration_us, 243417);
            const tw__tag *t = capture_tag(s, "sampler.param");
            CU_ASSERT(t && t->type == TW_VALUE_BOOL && t->v.boolean);
            t = capture_tag(s, "peer.port");
            CU_ASSERT(t && t->type == TW_VALUE_INT64 && t->v.i64 == 50535);
            CU_ASSERT_STRING_EQUAL(tw__tag_str(capture_tag(s, "sampler.type")), "const");
            CU_ASSERT_EQUAL_FATAL(s->n_logs, 6);
            CU_ASSERT_EQUAL(s->logs[1].timestamp_us, 1576827704954050);
            CU_ASSERT_STRING_EQUAL(tw__tag_str(field(&s->logs[1], "event")),
                                   "Searching for nearby drivers");
            CU_ASSERT_EQUAL(field(&s->logs[2], "retry_no")->v.i64, 1);
            const tw__process *p = c.spans[0].process;
            CU_ASSERT_STRING_EQUAL(p->service_name, "driver");
            CU_ASSERT_STRING_EQUAL(tw__tag_str(tw__process_find_tag(p, "ip")), "10.0.0.13");
        }
        if (i == 1 && c.n_spans == 14) {
            /* References with ref_type left out are CHILD_OF: the parent. */
            const tw__span_data *s = c.spans[0].data;
            CU_ASSERT_EQUAL(s->parent_id, 0x7be2fd98d0973be3u);
            CU_ASSERT_EQUAL(s->n_refs, 1);
            CU_ASSERT_EQUAL(s->refs[0].type, TW__REF_CHILD_OF);
            size_t n_errors = 0;
            for (size_t k = 0; k < c.n_spans; k++) {
                const tw__tag *e = capture_tag(c.spans[k].data, "error");
                n_errors += e && e->type == TW_VALUE_BOOL && e->v.boolean;
            }
            CU_ASSERT_EQUAL(n_errors, 3);
        }
        capture_free(&c);
    }
}

static void test_camel_case_and_every_type(void)
{
    static const char doc[] =
        "{\"spans\":[{\"traceId\":\"AQIDBAUGBwgJCgsMDQ4PEA==\",\"spanId\":\"AAAAAAAAAAE=\","
        "\"operationName\":\"op\",\"startTime\":\"2020-01-01T00:00:00.5Z\",\"duration\":\"1.25s\","
        "\"references\":[{\"traceId\":\"AQIDBAUGBwgJCgsMDQ4PEA==\",\"spanId\":\"AAAAAAAAAAI=\","
        "\"refType\":\"FOLLOWS_FROM\"}],"
        "\"tags\":[{\"key\":\"s\"},{\"key\":\"b\",\"vType\":\"BOOL\",\"vBool\":true},"
        "{\"key\":\"i\",\"vType\":\"INT64\",\"vInt64\":\"-9007199254740993\"},"
        "{\"key\":\"f\",\"vType\":\"FLOAT64\",\"vFloat64\":\"NaN\"},"
        "{\"key\":\"x\",\"vType\":\"BINARY\",\"vBinary\":\"AP8\"},"
        "{\"key\":\"u\",\"vType\":7}],"
        "\"process\":{\"serviceName\":\"svc\",\"tags\":[{\"key\":\"k\",\"vStr\":\"v\"}]}},"
        "{\"traceId\":\"bm90IGFuIGlk\",\"spanId\":\"AAAAAAAAAAE=\"},"
        "{\"traceId\":\"AQIDBAUGBwgJCgsMDQ4PEA==\",\"spanId\":\"AAAAAAAAAAM=\","
        "\"startTime\":\"yesterday\"}]}\n";
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_jaeger_api_v2_json, doc, sizeof doc - 1),
                    TW_OK);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 2);
    CU_ASSERT_EQUAL_FATAL(c.n_rejects, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[0].reason, "spans[1]: trace_id"));
    CU_ASSERT(c.n_warnings >= 2); /* the unknown v_type and the bad start */
    const tw__span_data *s = c.spans[0].data;
    CU_ASSERT_EQUAL(s->trace_id_high, 0x0102030405060708u);
    CU_ASSERT_EQUAL(s->trace_id_low, 0x090a0b0c0d0e0f10u);
    CU_ASSERT_EQUAL(s->span_id, 1);
    CU_ASSERT_EQUAL(s->parent_id, 2); /* no CHILD_OF: the FOLLOWS_FROM in the trace */
    CU_ASSERT_EQUAL(s->start_us, 1577836800500000);
    CU_ASSERT_EQUAL(s->duration_us, 1250000);
    CU_ASSERT_STRING_EQUAL(tw__tag_str(capture_tag(s, "s")), "");
    CU_ASSERT(capture_tag(s, "b") && capture_tag(s, "b")->v.boolean);
    CU_ASSERT(capture_tag(s, "i") && capture_tag(s, "i")->v.i64 == -9007199254740993LL);
    CU_ASSERT(capture_tag(s, "f") && capture_tag(s, "f")->v.dbl != capture_tag(s, "f")->v.dbl);
    const tw__tag *x = capture_tag(s, "x");
    CU_ASSERT(x && x->type == TW_VALUE_BINARY && x->len == 2 && x->v.bin[1] == 0xff);
    CU_ASSERT_PTR_NULL(capture_tag(s, "u"));
    CU_ASSERT_STRING_EQUAL(c.spans[0].process->service_name, "svc");
    capture_free(&c);
}

static void test_not_api_v2_is_refused(void)
{
    static const char doc[] = "{\"data\":[]}\n[1,2]\n";
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_jaeger_api_v2_json, doc, sizeof doc - 1),
                    TW_OK);
    CU_ASSERT_EQUAL(c.n_spans, 0);
    CU_ASSERT(c.n_rejects >= 1);
    CU_ASSERT(c.n_rejects && strstr(c.rejects[0].reason, "not a Jaeger api_v2 document"));
    capture_free(&c);
}

static void test_detection_prefers_api_v2(void)
{
    static const char snake[] =
        "{\"batch\":{\"spans\":[{\"trace_id\":\"AA==\",\"span_id\":\"AA==\","
        "\"operation_name\":\"x\"}]}}";
    static const char camel[] = "{\"spans\":[{\"traceId\":\"AA==\",\"spanId\":\"AA==\","
                                "\"operationName\":\"x\"}]}";
    static const char query[] = "{\"data\":[{\"traceID\":\"1\",\"spans\":[{\"traceID\":\"1\","
                                "\"spanID\":\"2\",\"operationName\":\"x\"}]}]}";
    CU_ASSERT(tw__jaeger_api_v2_sniff((const uint8_t *)snake, strlen(snake)) >
              twb_reader_jaeger_json.sniff((const uint8_t *)snake, strlen(snake)));
    CU_ASSERT(tw__jaeger_api_v2_sniff((const uint8_t *)camel, strlen(camel)) >
              twb_reader_jaeger_json.sniff((const uint8_t *)camel, strlen(camel)));
    CU_ASSERT_EQUAL(tw__jaeger_api_v2_sniff((const uint8_t *)query, strlen(query)), 0);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("bridge/jaeger_api_v2_json", NULL, NULL);
    CU_add_test(suite, "rfc3339", test_rfc3339);
    CU_add_test(suite, "apm_fixtures_convert", test_apm_fixtures_convert);
    CU_add_test(suite, "camel_case_and_every_type", test_camel_case_and_every_type);
    CU_add_test(suite, "not_api_v2_is_refused", test_not_api_v2_is_refused);
    CU_add_test(suite, "detection_prefers_api_v2", test_detection_prefers_api_v2);
}
