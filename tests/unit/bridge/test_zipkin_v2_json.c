/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/bridge/test_zipkin_v2_json.c: suite "bridge/zipkin_v2_json": the
 * zipkin-v2-json reader (sdk/wire/zipkin/zipkin_v2_json_decode.c) and the
 * zipkin-v1-json writer (sdk/wire/zipkin/zipkin_v1_json_encode.c). Each mapping rule
 * of the reader (ids, kind, shared, timing, endpoints, annotations, tags,
 * flags, rejects and warnings, the four input shapes, detection); every
 * real zipkin-v2-json fixture (INDEX rows 18-37) reads with the span count
 * INDEX gives; and each of them goes model -> v1 JSON, checked against
 * Zipkin's V2SpanConverter rules span by span.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "read_capture.h"
#include "wire/core/json_common.h"
#include "wire/core/json_stream.h"

#define R TW_REAL_FIXTURES "/"

static const struct {
    const char *path;
    size_t n_spans;
} fixtures[] = {
    {R "openzipkin__zipkin/zipkin-ui__testdata__netflix.json", 8},
    {R "openzipkin__zipkin/zipkin-lens__testdata__ascend.json", 8},
    {R "openzipkin__zipkin/zipkin-lens__testdata__envoy.json", 1},
    {R "openzipkin__zipkin/zipkin-lens__testdata__messaging-kafka.json", 28},
    {R "openzipkin__zipkin/zipkin-lens__testdata__messaging.json", 4},
    {R "openzipkin__zipkin/zipkin-lens__testdata__messaging2.json", 11},
    {R "openzipkin__zipkin/zipkin-lens__testdata__simple-db-p6.json", 5},
    {R "openzipkin__zipkin/zipkin-lens__testdata__skew.json", 4},
    {R "openzipkin__zipkin/zipkin-lens__testdata__smartthings-mobile-web-install.json", 1041},
    {R "openzipkin__zipkin/zipkin-lens__testdata__smartthings-oauth-authorization.json", 175},
    {R "openzipkin__zipkin/zipkin-lens__testdata__yelp.json", 16},
    {R "openzipkin__zipkin/zipkin-lens__src__test__data__malformed.json", 7},
    {R "openzipkin__zipkin/benchmarks__src__test__resources__zipkin2-chinese.json", 1},
    {R "jaegertracing__jaeger/cmd__collector__app__handler__testdata__zipkin_v1_merged_spans.json",
     2},
    {R "jaegertracing__jaeger/cmd__collector__app__zipkin__fixtures__zipkin_01.json", 1},
    {R "jaegertracing__jaeger/cmd__collector__app__zipkin__fixtures__zipkin_03.json", 1},
    {R "open-telemetry__opentelemetry-collector/receiver__zipkinreceiver__testdata__sample1.json",
     9},
    {R "open-telemetry__opentelemetry-collector-contrib/"
       "receiver__zipkinreceiver__testdata__sample3.json",
     1},
    {R "open-telemetry__opentelemetry-collector-contrib/"
       "receiver__zipkinreceiver__testdata__sample4.json",
     1},
    {R "honeycombio__honeycomb-opentracing-proxy/app__testdata__payload_1.json", 1},
};
#define N_FIXTURES (sizeof fixtures / sizeof fixtures[0])

static void read_text(read_capture *c, const char *json)
{
    capture_init(c);
    CU_ASSERT_EQUAL(capture_read_mem(c, &twb_reader_zipkin_v2_json, json, strlen(json)), TW_OK);
}

static bool tag_is(const tw__span_data *s, const char *key, const char *want)
{
    const tw__tag *t = capture_tag(s, key);
    return t && t->type == TW_VALUE_STRING && strcmp(t->v.str, want) == 0;
}

static bool tag_is_i64(const tw__tag *tags, size_t n, const char *key, int64_t want)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(tags[i].key, key) == 0)
            return tags[i].type == TW_VALUE_INT64 && tags[i].v.i64 == want;
    }
    return false;
}

static const tw__tag *proc_tag(const tw__process *p, const char *key)
{
    return tw__process_find_tag(p, key);
}

/* ---- reader: fixtures ---------------------------------------------------------------------- */

static void test_every_real_fixture_reads_with_index_counts(void)
{
    for (size_t i = 0; i < N_FIXTURES; i++) {
        read_capture c;
        capture_init(&c);
        tw_status st = capture_read_file(&c, &twb_reader_zipkin_v2_json, fixtures[i].path);
        if (st != TW_OK || c.n_spans != fixtures[i].n_spans || c.n_rejects != 0)
            fprintf(stderr, "%s: status %d, %zu spans (want %zu), %zu rejects %s\n",
                    fixtures[i].path, st, c.n_spans, fixtures[i].n_spans, c.n_rejects,
                    c.n_rejects ? c.rejects[0].reason : "");
        CU_ASSERT_EQUAL(st, TW_OK);
        CU_ASSERT_EQUAL(c.n_spans, fixtures[i].n_spans);
        CU_ASSERT_EQUAL(c.n_rejects, 0);
        for (size_t k = 0; k < c.n_spans; k++) {
            CU_ASSERT(c.spans[k].data->span_id != 0);
            CU_ASSERT(c.spans[k].data->flags & TW__FLAG_SAMPLED);
        }
        capture_free(&c);
    }
}

static void test_fixture_details_survive(void)
{
    read_capture c;
    capture_init(&c);
    /* Row 32: 128-bit trace, one-digit ids, debug + shared on a CLIENT (cleared). */
    CU_ASSERT_EQUAL_FATAL(
        capture_read_file(&c, &twb_reader_zipkin_v2_json,
                          R "jaegertracing__jaeger/cmd__collector__app__zipkin__fixtures__"
                            "zipkin_01.json"),
        TW_OK);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 1);
    const tw__span_data *s = c.spans[0].data;
    CU_ASSERT(s->trace_id_high != 0);
    CU_ASSERT_EQUAL(s->span_id, 2);
    CU_ASSERT_EQUAL(s->parent_id, 1);
    CU_ASSERT(s->flags & TW__FLAG_DEBUG);
    CU_ASSERT(tag_is(s, "span.kind", "client"));
    CU_ASSERT_FALSE(s->shared);
    CU_ASSERT_EQUAL(s->start_us, 1);
    CU_ASSERT_EQUAL(s->duration_us, 10);
    capture_free(&c);

    /* Row 20: shared on a SERVER root, local endpoint with only an ipv4. */
    capture_init(&c);
    CU_ASSERT_EQUAL_FATAL(capture_read_file(&c, &twb_reader_zipkin_v2_json,
                                            R
                                            "openzipkin__zipkin/zipkin-lens__testdata__envoy.json"),
                          TW_OK);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 1);
    CU_ASSERT(c.spans[0].data->shared);
    CU_ASSERT_STRING_EQUAL(c.spans[0].process->service_name, "");
    CU_ASSERT_STRING_EQUAL(tw__tag_str(proc_tag(c.spans[0].process, "ip")), "169.254.65.45");
    capture_free(&c);

    /* Row 33: a 15-digit parent id is left-padded. */
    capture_init(&c);
    CU_ASSERT_EQUAL_FATAL(
        capture_read_file(&c, &twb_reader_zipkin_v2_json,
                          R "jaegertracing__jaeger/cmd__collector__app__zipkin__fixtures__"
                            "zipkin_03.json"),
        TW_OK);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 1);
    CU_ASSERT_EQUAL(c.spans[0].data->parent_id, 0x0c26551047c72d19ull);
    capture_free(&c);
}

/* ---- reader: rules ------------------------------------------------------------------------- */

static void test_ids_any_case_left_padded(void)
{
    read_capture c;
    read_text(&c, "{\"traceId\":\"ABCDEF\",\"id\":\"1F\",\"parentId\":\"0000000000000000\"}"
                  "{\"traceId\":\"1234567890abcdef1\",\"id\":\"2\",\"parentId\":\"2\"}"
                  "{\"traceId\":\"a\",\"id\":\"3\",\"parentId\":\"Ff\"}");
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 3);
    CU_ASSERT_EQUAL(c.spans[0].data->trace_id_high, 0);
    CU_ASSERT_EQUAL(c.spans[0].data->trace_id_low, 0xabcdef);
    CU_ASSERT_EQUAL(c.spans[0].data->span_id, 0x1f);
    CU_ASSERT_EQUAL(c.spans[0].data->parent_id, 0); /* zero parent: root */
    CU_ASSERT_EQUAL(c.spans[1].data->trace_id_high, 1);
    CU_ASSERT_EQUAL(c.spans[1].data->trace_id_low, 0x234567890abcdef1ull);
    CU_ASSERT_EQUAL(c.spans[1].data->parent_id, 0); /* parent == id: root */
    CU_ASSERT_EQUAL(c.spans[2].data->parent_id, 0xff);
    capture_free(&c);
}

static bool reason_has(const read_capture *c, size_t i, const char *needle)
{
    return i < c->n_rejects && strstr(c->rejects[i].reason, needle) != NULL;
}

static void test_bad_records_rejected_naming_the_field(void)
{
    read_capture c;
    read_text(&c, "{\"traceId\":\"0000\",\"id\":\"1\"}\n"
                  "{\"traceId\":\"1\",\"id\":\"0\"}\n"
                  "{\"traceId\":\"1\",\"id\":\"xyz\"}\n"
                  "{\"id\":\"1\"}\n"
                  "{\"traceId\":\"1\",\"id\":\"1\",\"parentId\":\"nothex\"}\n"
                  "{\"traceId\":\"1\",\"id\":\"1\",\"name\":7}\n"
                  "{\"traceId\":\"1\",\"id\":\"1\",\"name\": }\n"
                  "{\"traceId\":\"1\",\"id\":\"1\"}\n");
    CU_ASSERT_EQUAL(c.n_spans, 1);
    CU_ASSERT_EQUAL_FATAL(c.n_rejects, 7);
    CU_ASSERT(reason_has(&c, 0, "traceId"));
    CU_ASSERT(reason_has(&c, 1, "id:"));
    CU_ASSERT(reason_has(&c, 2, "id:"));
    CU_ASSERT(reason_has(&c, 3, "traceId"));
    CU_ASSERT(reason_has(&c, 4, "parentId"));
    CU_ASSERT(reason_has(&c, 5, "name"));
    CU_ASSERT(reason_has(&c, 6, "JSON"));
    for (size_t i = 0; i < c.n_rejects; i++)
        CU_ASSERT_EQUAL(c.rejects[i].line_no, i + 1);
    /* the raw bytes of the record go to --rejects verbatim */
    CU_ASSERT_EQUAL(c.rejects[1].raw_len, strlen("{\"traceId\":\"1\",\"id\":\"0\"}"));
    CU_ASSERT(memcmp(c.rejects[1].raw, "{\"traceId\":\"1\",\"id\":\"0\"}", c.rejects[1].raw_len) ==
              0);
    capture_free(&c);
}

static void test_kind_becomes_lower_case_tag_and_shared_only_off_client(void)
{
    read_capture c;
    read_text(&c, "[{\"traceId\":\"1\",\"id\":\"1\",\"kind\":\"SERVER\",\"shared\":true},"
                  "{\"traceId\":\"1\",\"id\":\"2\",\"kind\":\"CLIENT\",\"shared\":true},"
                  "{\"traceId\":\"1\",\"id\":\"3\",\"kind\":\"PRODUCER\"},"
                  "{\"traceId\":\"1\",\"id\":\"4\",\"kind\":\"consumer\"},"
                  "{\"traceId\":\"1\",\"id\":\"5\",\"kind\":\"INTERNAL\"},"
                  "{\"traceId\":\"1\",\"id\":\"6\"}]");
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 6);
    CU_ASSERT(tag_is(c.spans[0].data, "span.kind", "server"));
    CU_ASSERT(c.spans[0].data->shared);
    CU_ASSERT(tag_is(c.spans[1].data, "span.kind", "client"));
    CU_ASSERT_FALSE(c.spans[1].data->shared);
    CU_ASSERT(tag_is(c.spans[2].data, "span.kind", "producer"));
    CU_ASSERT(tag_is(c.spans[3].data, "span.kind", "consumer"));
    CU_ASSERT(tag_is(c.spans[4].data, "span.kind", "INTERNAL")); /* unknown: kept, warned */
    CU_ASSERT_PTR_NULL(capture_tag(c.spans[5].data, "span.kind"));
    CU_ASSERT_EQUAL(c.n_warnings, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.last_warning, "kind"));
    capture_free(&c);
}

static void test_timing_rules(void)
{
    read_capture c;
    read_text(
        &c, "{\"traceId\":\"1\",\"id\":\"1\",\"timestamp\":1000,\"duration\":20}\n"
            "{\"traceId\":\"1\",\"id\":\"2\",\"annotations\":[{\"timestamp\":900,\"value\":\"b\"},"
            "{\"timestamp\":700,\"value\":\"a\"}]}\n"
            "{\"traceId\":\"1\",\"id\":\"3\",\"timestamp\":1000.6,\"duration\":2.4}\n"
            "{\"traceId\":\"1\",\"id\":\"4\",\"timestamp\":0,\"duration\":-5}\n");
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 4);
    CU_ASSERT_EQUAL(c.spans[0].data->start_us, 1000);
    CU_ASSERT_EQUAL(c.spans[0].data->duration_us, 20);
    CU_ASSERT_FALSE(c.spans[0].data->is_duration_unknown);
    CU_ASSERT_EQUAL(c.spans[1].data->start_us, 700); /* the earliest annotation */
    CU_ASSERT_EQUAL(c.spans[1].data->duration_us, 0);
    CU_ASSERT(c.spans[1].data->is_duration_unknown);
    CU_ASSERT_EQUAL(c.spans[2].data->start_us, 1001); /* rounded, warned */
    CU_ASSERT_EQUAL(c.spans[2].data->duration_us, 2);
    CU_ASSERT_EQUAL(c.spans[3].data->start_us, 0);
    CU_ASSERT(c.spans[3].data->is_duration_unknown);
    CU_ASSERT_EQUAL(c.n_warnings, 3); /* two fractions, one negative duration */
    capture_free(&c);

    /* --time-unit ms scales timestamps and durations alike */
    capture_init(&c);
    c.opts.time_unit = TWB_TIME_MS;
    const char *ms = "{\"traceId\":\"1\",\"id\":\"1\",\"timestamp\":1500,\"duration\":3}";
    CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_zipkin_v2_json, ms, strlen(ms)), TW_OK);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 1);
    CU_ASSERT_EQUAL(c.spans[0].data->start_us, 1500000);
    CU_ASSERT_EQUAL(c.spans[0].data->duration_us, 3000);
    capture_free(&c);
}

/* The time unit by magnitude: a start that is no date between 1980 and 2100
 * in µs but is one in ms, s or ns is read in that unit (start, duration
 * and annotations alike) with one warning per input; a start that is no
 * date in any unit is kept, with one warning; --time-unit turns it off. */
static void test_time_unit_by_magnitude(void)
{
    static const struct {
        const char *timestamp, *duration, *annotation, *unit;
        int64_t start_us, duration_us, annotation_us;
    } cases[] = {
        {"1700000000123", "5", "1700000000124", "milliseconds", INT64_C(1700000000123000), 5000,
         INT64_C(1700000000124000)},
        {"1700000000", "2", "1700000001", "seconds", INT64_C(1700000000000000), 2000000,
         INT64_C(1700000001000000)},
        {"1700000000123456789", "5000", "1700000000123457000", "nanoseconds",
         INT64_C(1700000000123457), 5, INT64_C(1700000000123457)},
        {"1700000000123456", "5", "1700000000123457", NULL, INT64_C(1700000000123456), 5,
         INT64_C(1700000000123457)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 "{\"traceId\":\"1\",\"id\":\"1\",\"timestamp\":%s,\"duration\":%s,"
                 "\"annotations\":[{\"timestamp\":%s,\"value\":\"a\"}]}\n"
                 "{\"traceId\":\"1\",\"id\":\"2\",\"timestamp\":%s,\"duration\":%s}\n",
                 cases[i].timestamp, cases[i].duration, cases[i].annotation, cases[i].timestamp,
                 cases[i].duration);
        read_capture c;
        read_text(&c, text);
        CU_ASSERT_EQUAL_FATAL(c.n_spans, 2);
        for (size_t k = 0; k < 2; k++) {
            CU_ASSERT_EQUAL(c.spans[k].data->start_us, cases[i].start_us);
            CU_ASSERT_EQUAL(c.spans[k].data->duration_us, cases[i].duration_us);
        }
        CU_ASSERT_EQUAL_FATAL(c.spans[0].data->n_logs, 1);
        CU_ASSERT_EQUAL(c.spans[0].data->logs[0].timestamp_us, cases[i].annotation_us);
        CU_ASSERT_EQUAL(c.n_warnings, cases[i].unit ? 1 : 0); /* once per input */
        if (cases[i].unit)
            CU_ASSERT_PTR_NOT_NULL(strstr(c.last_warning, cases[i].unit));
        CU_ASSERT_EQUAL(c.n_date_warnings, 0);
        capture_free(&c);
    }

    /* No date in any unit: kept, one warning for the input. */
    read_capture c;
    read_text(&c, "{\"traceId\":\"1\",\"id\":\"1\",\"timestamp\":1000,\"duration\":5}\n"
                  "{\"traceId\":\"1\",\"id\":\"2\",\"timestamp\":2000,\"duration\":5}\n");
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 2);
    CU_ASSERT_EQUAL(c.spans[0].data->start_us, 1000);
    CU_ASSERT_EQUAL(c.spans[1].data->start_us, 2000);
    CU_ASSERT_EQUAL(c.n_warnings, 0);
    CU_ASSERT_EQUAL(c.n_date_warnings, 1);
    capture_free(&c);

    /* --time-unit us: read as µs, no guess, no warning. */
    capture_init(&c);
    c.opts.time_unit = TWB_TIME_US;
    const char *ms = "{\"traceId\":\"1\",\"id\":\"1\",\"timestamp\":1700000000123,\"duration\":3}";
    CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_zipkin_v2_json, ms, strlen(ms)), TW_OK);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 1);
    CU_ASSERT_EQUAL(c.spans[0].data->start_us, INT64_C(1700000000123));
    CU_ASSERT_EQUAL(c.spans[0].data->duration_us, 3);
    CU_ASSERT_EQUAL(c.n_warnings + c.n_date_warnings, 0);
    capture_free(&c);
}

/* Times are checked once, where spans enter the model: a span whose start,
 * duration or end lies beyond what every encoder can write (+-2^63 ns) is
 * rejected alone, naming the span and the value; the others are read. */
static void test_times_outside_the_model_range_reject_the_span_alone(void)
{
    read_capture c;
    read_text(&c, "{\"traceId\":\"1\",\"id\":\"a\",\"timestamp\":9223372036854775000,"
                  "\"duration\":10000}\n"
                  "{\"traceId\":\"1\",\"id\":\"b\",\"timestamp\":1700000000000000,"
                  "\"duration\":9223372036854775000}\n"
                  "{\"traceId\":\"1\",\"id\":\"c\",\"timestamp\":1700000000000000,"
                  "\"duration\":5}\n");
    CU_ASSERT_EQUAL(c.n_spans, 1);
    CU_ASSERT_EQUAL_FATAL(c.n_rejects, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[0].reason, "000000000000000a"));
    CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[0].reason, "start time"));
    CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[1].reason, "duration"));
    CU_ASSERT_EQUAL(c.rejects[0].line_no, 1); /* the record goes to --rejects verbatim */
    CU_ASSERT(c.rejects[0].raw_len > 0);
    capture_free(&c);
}

/* NDJSON with a record cut off at the end of its line: that record alone is
 * rejected and reading goes on at the next line (the cut record used to
 * swallow the rest of the file into one reject). Both when the input ends
 * inside the swallowed region and when a later line closes it. */
static void test_a_truncated_ndjson_record_resynchronises_at_the_next_line(void)
{
    static const char *const inputs[] = {
        "{\"traceId\":\"1\",\"id\":\"a\",\"timestamp\":1700000000000000}\n"
        "{\"traceId\":\"1\",\"id\": \n"
        "{\"traceId\":\"1\",\"id\":\"b\",\"timestamp\":1700000000000001}\n"
        "{\"traceId\":\"1\",\"id\":\"c\",\"timestamp\":1700000000000002}\n",
        "{\"traceId\":\"1\",\"id\":\"a\",\"timestamp\":1700000000000000}\n"
        "{\"traceId\":\"1\",\"id\": \n"
        "{\"traceId\":\"1\",\"id\":\"b\",\"timestamp\":1700000000000001}\n"
        "{\"traceId\":\"1\",\"id\":\"c\",\"timestamp\":1700000000000002}}\n"
        "{\"traceId\":\"1\",\"id\":\"d\",\"timestamp\":1700000000000003}\n"};
    static const size_t spans[] = {3, 4};
    for (size_t i = 0; i < 2; i++) {
        read_capture c;
        read_text(&c, inputs[i]);
        CU_ASSERT_EQUAL(c.n_spans, spans[i]);
        CU_ASSERT(c.n_rejects >= 1);
        if (c.n_rejects >= 1) {
            CU_ASSERT_EQUAL(c.rejects[0].line_no, 2);
            CU_ASSERT(c.rejects[0].raw_len < 40); /* the cut record, not the rest */
        }
        capture_free(&c);
    }
}

/* What the splitter spills: the bytes of regions over its limit, in order. */
typedef struct spilled {
    char bytes[512];
    size_t len;
} spilled;

static bool keep_spilled(void *arg, const void *bytes, size_t len)
{
    spilled *s = arg;
    if (s->len + len > sizeof s->bytes)
        return false;
    if (len)
        memcpy(s->bytes + s->len, bytes, len);
    s->len += len;
    return true;
}

/* The splitter's size limit, small here (40 bytes) so that the paths the
 * 16 MiB limit guards are cheap to reach: a record over the limit is handed
 * whole to the spill function and comes back BAD without bytes; an NDJSON
 * record cut off at the end of its line is cut there when the limit is
 * reached, and everything after it is read (the bytes past the limit used
 * to be dropped, records and all). */
static void test_the_splitter_keeps_what_passes_its_limit(void)
{
    static const char big[] = "{\"c\":\"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\"}";
    static const char text[] = "{\"a\":\n"
                               "{\"b\":1}\n"
                               "{\"c\":\"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\"}\n"
                               "{\"d\":2}\n";
    FILE *f = fmemopen((void *)text, strlen(text), "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    tw__json_stream *js = tw__json_stream_new(f, 40);
    CU_ASSERT_PTR_NOT_NULL_FATAL(js);
    spilled s = {.len = 0};
    tw__json_stream_set_spill(js, keep_spilled, &s);
    const char *rec, *why;
    size_t len, line;
    /* The cut record: its own line, without the line end. */
    CU_ASSERT_EQUAL(tw__json_stream_next(js, &rec, &len, &line, &why), TW__JSON_BAD);
    CU_ASSERT_EQUAL(line, 1);
    CU_ASSERT(len == 5 && memcmp(rec, "{\"a\":", 5) == 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "before line 2"));
    CU_ASSERT_EQUAL(s.len, 0);
    CU_ASSERT_EQUAL(tw__json_stream_next(js, &rec, &len, &line, &why), TW__JSON_RECORD);
    CU_ASSERT(line == 2 && len == 7 && memcmp(rec, "{\"b\":1}", 7) == 0);
    /* Over the limit: spilled whole, no bytes with the BAD. */
    CU_ASSERT_EQUAL(tw__json_stream_next(js, &rec, &len, &line, &why), TW__JSON_BAD);
    CU_ASSERT(line == 3 && len == 0);
    CU_ASSERT(s.len == strlen(big) && memcmp(s.bytes, big, s.len) == 0);
    CU_ASSERT_EQUAL(tw__json_stream_next(js, &rec, &len, &line, &why), TW__JSON_RECORD);
    CU_ASSERT(line == 4 && len == 7 && memcmp(rec, "{\"d\":2}", 7) == 0);
    CU_ASSERT_EQUAL(tw__json_stream_next(js, &rec, &len, &line, &why), TW__JSON_END);
    tw__json_stream_free(js);
    fclose(f);
}

static void test_endpoints_map_to_process_and_peer_tags(void)
{
    read_capture c;
    read_text(&c, "{\"traceId\":\"1\",\"id\":\"1\",\"localEndpoint\":{\"serviceName\":\"Front\","
                  "\"ipv4\":\"10.0.0.1\",\"ipv6\":\"2001:DB8:0:0::1\",\"port\":8080},"
                  "\"remoteEndpoint\":{\"serviceName\":\"db\",\"ipv6\":\"::ffff:192.168.1.2\","
                  "\"port\":5432}}\n"
                  "{\"traceId\":\"1\",\"id\":\"2\",\"localEndpoint\":{\"ipv6\":\"::1\",\"port\":0},"
                  "\"remoteEndpoint\":{\"ipv4\":\"not-an-ip\",\"port\":70000}}\n"
                  "{\"traceId\":\"1\",\"id\":\"3\",\"localEndpoint\":{\"serviceName\":\"Front\","
                  "\"ipv4\":\"10.0.0.1\",\"ipv6\":\"2001:db8::1\",\"port\":8080}}\n");
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 3);
    /* one local endpoint, one process (interned) */
    CU_ASSERT(capture_processes_equal(c.spans[0].process, c.spans[2].process));
    CU_ASSERT_PTR_EQUAL(c.spans[0].process, c.spans[2].process);
    CU_ASSERT_FALSE(capture_processes_equal(c.spans[0].process, c.spans[1].process));
    const tw__process *p = c.spans[0].process;
    CU_ASSERT_STRING_EQUAL(p->service_name, "Front"); /* case kept */
    CU_ASSERT_STRING_EQUAL(tw__tag_str(proc_tag(p, "ip")), "10.0.0.1");
    CU_ASSERT_STRING_EQUAL(tw__tag_str(proc_tag(p, "ipv6")), "2001:db8::1"); /* canonical */
    CU_ASSERT(tag_is_i64(p->tags, p->n_tags, "port", 8080));
    const tw__span_data *s = c.spans[0].data;
    CU_ASSERT(tag_is(s, "peer.service", "db"));
    CU_ASSERT(tag_is(s, "peer.ipv4", "192.168.1.2")); /* IPv4-mapped IPv6 -> IPv4 */
    CU_ASSERT_PTR_NULL(capture_tag(s, "peer.ipv6"));
    CU_ASSERT(tag_is_i64(s->tags, s->n_tags, "peer.port", 5432));

    p = c.spans[1].process;
    CU_ASSERT_STRING_EQUAL(p->service_name, "");
    CU_ASSERT_STRING_EQUAL(tw__tag_str(proc_tag(p, "ip")), "::1");
    CU_ASSERT_PTR_NULL(proc_tag(p, "port")); /* 0 is absent */
    CU_ASSERT_EQUAL(c.spans[1].data->n_tags, 0);
    CU_ASSERT_EQUAL(c.n_warnings, 2); /* the bad ipv4 and the port over 65535 */
    capture_free(&c);
}

static void test_annotations_and_tags(void)
{
    read_capture c;
    read_text(&c, "{\"traceId\":\"1\",\"id\":\"1\",\"debug\":true,"
                  "\"annotations\":[{\"timestamp\":5,\"value\":\"cache miss\"},"
                  "{\"timestamp\":6},{\"timestamp\":7,\"value\":42}],"
                  "\"tags\":{\"http.path\":\"/a\",\"n\":42,\"ok\":true,\"o\":{\"x\":1},\"z\":null,"
                  "\"error\":\"boom\"}}");
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 1);
    const tw__span_data *s = c.spans[0].data;
    CU_ASSERT_EQUAL(s->flags, TW__FLAG_SAMPLED | TW__FLAG_DEBUG);
    CU_ASSERT_EQUAL_FATAL(s->n_logs, 2);
    CU_ASSERT_EQUAL(s->logs[0].timestamp_us, 5);
    CU_ASSERT_EQUAL_FATAL(s->logs[0].n_fields, 1);
    CU_ASSERT_STRING_EQUAL(s->logs[0].fields[0].key, "event");
    CU_ASSERT_STRING_EQUAL(s->logs[0].fields[0].v.str, "cache miss");
    CU_ASSERT_STRING_EQUAL(s->logs[1].fields[0].v.str, "42");
    CU_ASSERT(tag_is(s, "http.path", "/a"));
    CU_ASSERT(tag_is(s, "n", "42"));
    CU_ASSERT(tag_is(s, "ok", "true"));
    CU_ASSERT(tag_is(s, "o", "{\"x\":1}"));
    CU_ASSERT(tag_is(s, "error", "boom")); /* as the input had it */
    CU_ASSERT_PTR_NULL(capture_tag(s, "z"));
    /* warnings: annotation without value, non-string annotation, n, ok, o, z */
    CU_ASSERT_EQUAL(c.n_warnings, 6);
    capture_free(&c);
}

static void test_every_input_shape_reads_the_same_spans(void)
{
    static const char *const shapes[] = {
        "[{\"traceId\":\"1\",\"id\":\"1\"},{\"traceId\":\"1\",\"id\":\"2\"}]",
        "[[{\"traceId\":\"1\",\"id\":\"1\"}],[{\"traceId\":\"1\",\"id\":\"2\"}]]",
        "{\"traceId\":\"1\",\"id\":\"1\"}\n{\"traceId\":\"1\",\"id\":\"2\"}\n",
    };
    for (size_t i = 0; i < 3; i++) {
        read_capture c;
        read_text(&c, shapes[i]);
        CU_ASSERT_EQUAL(c.n_spans, 2);
        CU_ASSERT_EQUAL(c.n_rejects, 0);
        if (c.n_spans == 2) {
            CU_ASSERT_EQUAL(c.spans[0].data->span_id, 1);
            CU_ASSERT_EQUAL(c.spans[1].data->span_id, 2);
        }
        capture_free(&c);
    }
    read_capture c;
    read_text(&c, "{\"traceId\":\"1\",\"id\":\"1\"}");
    CU_ASSERT_EQUAL(c.n_spans, 1);
    capture_free(&c);
    read_text(&c, "");
    CU_ASSERT_EQUAL(c.n_spans + c.n_rejects, 0);
    capture_free(&c);
}

static void test_stop_from_emit_stops_the_reader(void)
{
    read_capture c;
    capture_init(&c);
    c.stop_after = 1;
    const char *two = "{\"traceId\":\"1\",\"id\":\"1\"}\n{\"traceId\":\"1\",\"id\":\"2\"}\n";
    CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_zipkin_v2_json, two, strlen(two)), TW_E_STATE);
    CU_ASSERT_EQUAL(c.n_spans, 1);
    capture_free(&c);
}

static void test_sniff(void)
{
    static const struct {
        const char *head;
        bool is_high;
    } cases[] = {
        {"[{\"traceId\":\"a\",\"id\":\"b\",\"localEndpoint\":{}}]", true},
        {"  {\"kind\" : \"CLIENT\"", true},
        {"[{\"traceId\":\"a\",\"tags\": {\"a\":\"b\"}}]", true},
        {"[{\"traceId\":\"a\",\"binaryAnnotations\":[],\"annotations\":[]}]", false},
        {"{\"data\":[{\"traceID\":\"a\",\"spans\":[]}]}", false},
        {"not json", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int score =
            twb_reader_zipkin_v2_json.sniff((const uint8_t *)cases[i].head, strlen(cases[i].head));
        CU_ASSERT_EQUAL(score >= 70, cases[i].is_high);
    }
}

/* ---- zipkin-v1-json writer ----------------------------------------------------------------- */

/* Writes the captured spans with the v1 writer (in @n_calls write() calls)
 * and parses the result. */
static json_t *write_v1(const read_capture *c, size_t n_calls, char **text_out)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    CU_ASSERT_FATAL(f != NULL);
    tw_error *err = NULL;
    twb_writer *w = twb_writer_zipkin_v1_json.new_writer(f, NULL, &err);
    CU_ASSERT_FATAL(w != NULL);
    size_t per = n_calls ? (c->n_spans + n_calls - 1) / n_calls : c->n_spans;
    for (size_t i = 0; i < c->n_spans; i += per) {
        size_t n = c->n_spans - i < per ? c->n_spans - i : per;
        CU_ASSERT_EQUAL(twb_writer_zipkin_v1_json.write(w, c->spans + i, n, &err), TW_OK);
    }
    CU_ASSERT_EQUAL(twb_writer_zipkin_v1_json.finish(w, &err), TW_OK);
    twb_writer_zipkin_v1_json.free_writer(w);
    fclose(f);
    json_error_t jerr;
    json_t *doc = json_loads(text, 0, &jerr);
    CU_ASSERT_PTR_NOT_NULL(doc);
    if (text_out)
        *text_out = text;
    else
        free(text);
    return doc;
}

static const json_t *find_annotation(const json_t *span, const char *value)
{
    size_t i;
    const json_t *a;
    json_array_foreach(json_object_get(span, "annotations"), i, a)
    {
        if (strcmp(json_string_value(json_object_get(a, "value")), value) == 0)
            return a;
    }
    return NULL;
}

static const json_t *find_binary(const json_t *span, const char *key)
{
    size_t i;
    const json_t *b;
    json_array_foreach(json_object_get(span, "binaryAnnotations"), i, b)
    {
        if (strcmp(json_string_value(json_object_get(b, "key")), key) == 0)
            return b;
    }
    return NULL;
}

static json_int_t int_of(const json_t *obj, const char *key)
{
    return json_integer_value(json_object_get(obj, key));
}

static void test_v1_writer_core_annotations_and_addresses(void)
{
    read_capture c;
    read_text(&c,
              "{\"traceId\":\"A\",\"id\":\"1\",\"name\":\"get\",\"kind\":\"CLIENT\","
              "\"timestamp\":100,\"duration\":50,\"localEndpoint\":{\"serviceName\":\"fe\","
              "\"ipv4\":\"10.0.0.1\",\"port\":80},\"remoteEndpoint\":{\"serviceName\":\"be\"}}\n"
              "{\"traceId\":\"A\",\"id\":\"1\",\"parentId\":\"9\",\"kind\":\"SERVER\",\"shared\":"
              "true,\"timestamp\":110,\"duration\":30,\"localEndpoint\":{\"serviceName\":\"be\"},"
              "\"remoteEndpoint\":{\"ipv4\":\"10.0.0.1\"}}\n"
              "{\"traceId\":\"A\",\"id\":\"2\",\"kind\":\"PRODUCER\",\"timestamp\":200,"
              "\"duration\":5,\"localEndpoint\":{\"serviceName\":\"fe\"},"
              "\"remoteEndpoint\":{\"serviceName\":\"kafka\"}}\n"
              "{\"traceId\":\"A\",\"id\":\"3\",\"kind\":\"CONSUMER\",\"timestamp\":300,"
              "\"localEndpoint\":{\"serviceName\":\"be\"}}\n"
              "{\"traceId\":\"A\",\"id\":\"4\",\"timestamp\":400,\"duration\":1,"
              "\"localEndpoint\":{\"serviceName\":\"fe\"},\"tags\":{\"component\":\"jdbc\"},"
              "\"remoteEndpoint\":{\"serviceName\":\"db\"}}\n"
              "{\"traceId\":\"A\",\"id\":\"5\",\"timestamp\":500,\"duration\":1,"
              "\"localEndpoint\":{\"serviceName\":\"fe\"}}\n"
              "{\"traceId\":\"A\",\"id\":\"6\",\"timestamp\":600,\"duration\":1,"
              "\"tags\":{\"error\":\"false\",\"k\":\"v\"}}\n");
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 7);
    json_t *doc = write_v1(&c, 3, NULL);
    CU_ASSERT_FATAL(json_is_array(doc) && json_array_size(doc) == 7);

    const json_t *client = json_array_get(doc, 0);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(client, "traceId")),
                           "000000000000000a");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(client, "id")), "0000000000000001");
    CU_ASSERT_EQUAL(int_of(client, "timestamp"), 100);
    CU_ASSERT_EQUAL(int_of(client, "duration"), 50);
    const json_t *cs = find_annotation(client, "cs"), *cr = find_annotation(client, "cr");
    CU_ASSERT_FATAL(cs && cr);
    CU_ASSERT_EQUAL(int_of(cs, "timestamp"), 100);
    CU_ASSERT_EQUAL(int_of(cr, "timestamp"), 150);
    const json_t *ep = json_object_get(cs, "endpoint");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(ep, "serviceName")), "fe");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(ep, "ipv4")), "10.0.0.1");
    CU_ASSERT_EQUAL(int_of(ep, "port"), 80);
    const json_t *sa = find_binary(client, "sa");
    CU_ASSERT_FATAL(sa != NULL);
    CU_ASSERT(json_is_true(json_object_get(sa, "value")));
    CU_ASSERT_STRING_EQUAL(
        json_string_value(json_object_get(json_object_get(sa, "endpoint"), "serviceName")), "be");

    const json_t *server = json_array_get(doc, 1);
    CU_ASSERT_PTR_NULL(json_object_get(server, "timestamp")); /* shared: no timing */
    CU_ASSERT_PTR_NULL(json_object_get(server, "duration"));
    CU_ASSERT_EQUAL(int_of(find_annotation(server, "sr"), "timestamp"), 110);
    CU_ASSERT_EQUAL(int_of(find_annotation(server, "ss"), "timestamp"), 140);
    const json_t *ca = find_binary(server, "ca");
    CU_ASSERT_FATAL(ca != NULL);
    /* serviceName is required in a v1 endpoint */
    CU_ASSERT_STRING_EQUAL(
        json_string_value(json_object_get(json_object_get(ca, "endpoint"), "serviceName")), "");

    const json_t *producer = json_array_get(doc, 2);
    CU_ASSERT_PTR_NOT_NULL(find_annotation(producer, "ms"));
    CU_ASSERT_EQUAL(int_of(find_annotation(producer, "ws"), "timestamp"), 205);
    CU_ASSERT_PTR_NOT_NULL(find_binary(producer, "ma"));

    const json_t *consumer = json_array_get(doc, 3); /* no duration: mr alone */
    CU_ASSERT_EQUAL(int_of(find_annotation(consumer, "mr"), "timestamp"), 300);
    CU_ASSERT_PTR_NULL(find_annotation(consumer, "wr"));
    CU_ASSERT_PTR_NULL(json_object_get(consumer, "duration"));

    const json_t *local = json_array_get(doc, 4); /* no kind: component -> lc, remote -> sa */
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(find_binary(local, "lc"), "value")),
                           "jdbc");
    CU_ASSERT_PTR_NULL(find_binary(local, "component"));
    CU_ASSERT_PTR_NOT_NULL(find_binary(local, "sa"));
    CU_ASSERT_PTR_NULL(json_object_get(local, "annotations"));

    const json_t *bare = json_array_get(doc, 5); /* nothing else: lc = "" keeps the service */
    const json_t *lc = find_binary(bare, "lc");
    CU_ASSERT_FATAL(lc != NULL);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(lc, "value")), "");
    CU_ASSERT_EQUAL(json_array_size(json_object_get(bare, "binaryAnnotations")), 1);

    const json_t *no_error = json_array_get(doc, 6); /* a false error is omitted */
    CU_ASSERT_PTR_NULL(find_binary(no_error, "error"));
    CU_ASSERT_PTR_NOT_NULL(find_binary(no_error, "k"));
    CU_ASSERT_PTR_NULL(find_binary(no_error, "lc")); /* no endpoint: no lc */
    json_decref(doc);
    capture_free(&c);
}

/* The v1 writer computes end annotations from the start and the duration:
 * near INT64_MAX that sum must not overflow (it wrote an end before the
 * start). Such spans cannot come from a decoder (their times are checked
 * where they enter the model); the writer is safe on its own anyway. */
static void test_v1_writer_does_not_overflow_near_int64_max(void)
{
    read_capture c;
    capture_init(&c);
    tw__process p;
    tw__process_init(&p);
    CU_ASSERT_FATAL(tw__process_set_service(&p, "svc"));
    tw__span_data *s = tw__span_data_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    s->trace_id_low = 1;
    s->span_id = 2;
    s->start_us = INT64_MAX - 5;
    s->duration_us = 10;
    CU_ASSERT_FATAL(tw__span_data_add_str_tag(s, "span.kind", "client", 6));
    c.spans = calloc(1, sizeof *c.spans);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c.spans);
    c.spans[0] = (twb_span){s, twb_procs_intern(c.procs, &p)};
    c.n_spans = c.cap_spans = 1;
    json_t *doc = write_v1(&c, 1, NULL);
    size_t i;
    const json_t *a;
    json_array_foreach(json_object_get(json_array_get(doc, 0), "annotations"), i, a)
    {
        CU_ASSERT(int_of(a, "timestamp") >= s->start_us); /* no end before the start */
    }
    json_decref(doc);
    tw__process_clear(&p);
    capture_free(&c);
}

static void test_v1_writer_framing(void)
{
    read_capture c;
    capture_init(&c);
    char *text;
    json_t *doc = write_v1(&c, 0, &text);
    CU_ASSERT_STRING_EQUAL(text, "[]\n");
    json_decref(doc);
    free(text);
    capture_free(&c);

    read_text(&c, "{\"traceId\":\"1\",\"id\":\"1\",\"name\":\"a\\\"b\"}"
                  "{\"traceId\":\"1\",\"id\":\"2\"}");
    doc = write_v1(&c, 2, &text);
    CU_ASSERT(text[0] == '[' && strstr(text, "},{") != NULL &&
              strcmp(text + strlen(text) - 2, "]\n") == 0);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(doc, 0), "name")),
                           "a\"b");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(doc, 1), "name")),
                           ""); /* required in v1 */
    json_decref(doc);
    free(text);
    capture_free(&c);
}

/* Every fixture, model -> v1: the same spans, ids and names; timing only off
 * shared spans; the core annotations V2SpanConverter gives for the kind;
 * every v2 annotation and every tag (as a string binary annotation). */
static void test_fixtures_round_trip_to_v1(void)
{
    for (size_t f = 0; f < N_FIXTURES; f++) {
        read_capture c;
        capture_init(&c);
        CU_ASSERT_EQUAL_FATAL(capture_read_file(&c, &twb_reader_zipkin_v2_json, fixtures[f].path),
                              TW_OK);
        json_t *doc = write_v1(&c, 1, NULL);
        CU_ASSERT_FATAL(json_array_size(doc) == c.n_spans);
        for (size_t i = 0; i < c.n_spans; i++) {
            const tw__span_data *s = c.spans[i].data;
            const json_t *v1 = json_array_get(doc, i);
            char hex[17];
            snprintf(hex, sizeof hex, "%016llx", (unsigned long long)s->span_id);
            CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(v1, "id")), hex);
            CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(v1, "name")), s->operation);
            CU_ASSERT_EQUAL(json_object_get(v1, "timestamp") != NULL,
                            !s->shared && s->start_us > 0);
            const tw__tag *kind = capture_tag(s, "span.kind");
            const char *begin = NULL;
            if (kind && strcmp(kind->v.str, "client") == 0)
                begin = "cs";
            else if (kind && strcmp(kind->v.str, "server") == 0)
                begin = "sr";
            else if (kind && strcmp(kind->v.str, "producer") == 0)
                begin = "ms";
            if (begin && s->start_us > 0)
                CU_ASSERT_PTR_NOT_NULL(find_annotation(v1, begin));
            for (size_t k = 0; k < s->n_logs; k++)
                CU_ASSERT_PTR_NOT_NULL(find_annotation(v1, s->logs[k].fields[0].v.str));
            for (size_t k = 0; k < s->n_tags; k++) {
                const tw__tag *t = &s->tags[k];
                if (strcmp(t->key, "span.kind") == 0 || strncmp(t->key, "peer.", 5) == 0 ||
                    strcmp(t->key, "component") == 0 || strcmp(t->key, "error") == 0)
                    continue;
                if (tw__span_data_find_tag(s, t->key) != t)
                    continue; /* a repeated key: the last one counts */
                const json_t *b = find_binary(v1, t->key);
                CU_ASSERT_FATAL(b != NULL);
                CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(b, "value")), t->v.str);
            }
        }
        json_decref(doc);
        capture_free(&c);
    }
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("bridge/zipkin_v2_json", NULL, NULL);
    CU_add_test(suite, "every_real_fixture_reads_with_index_counts",
                test_every_real_fixture_reads_with_index_counts);
    CU_add_test(suite, "fixture_details_survive", test_fixture_details_survive);
    CU_add_test(suite, "ids_any_case_left_padded", test_ids_any_case_left_padded);
    CU_add_test(suite, "bad_records_rejected_naming_the_field",
                test_bad_records_rejected_naming_the_field);
    CU_add_test(suite, "kind_becomes_lower_case_tag_and_shared_only_off_client",
                test_kind_becomes_lower_case_tag_and_shared_only_off_client);
    CU_add_test(suite, "timing_rules", test_timing_rules);
    CU_add_test(suite, "a_truncated_ndjson_record_resynchronises_at_the_next_line",
                test_a_truncated_ndjson_record_resynchronises_at_the_next_line);
    CU_add_test(suite, "the_splitter_keeps_what_passes_its_limit",
                test_the_splitter_keeps_what_passes_its_limit);
    CU_add_test(suite, "time_unit_by_magnitude", test_time_unit_by_magnitude);
    CU_add_test(suite, "times_outside_the_model_range_reject_the_span_alone",
                test_times_outside_the_model_range_reject_the_span_alone);
    CU_add_test(suite, "endpoints_map_to_process_and_peer_tags",
                test_endpoints_map_to_process_and_peer_tags);
    CU_add_test(suite, "annotations_and_tags", test_annotations_and_tags);
    CU_add_test(suite, "every_input_shape_reads_the_same_spans",
                test_every_input_shape_reads_the_same_spans);
    CU_add_test(suite, "stop_from_emit_stops_the_reader", test_stop_from_emit_stops_the_reader);
    CU_add_test(suite, "sniff", test_sniff);
    CU_add_test(suite, "v1_writer_core_annotations_and_addresses",
                test_v1_writer_core_annotations_and_addresses);
    CU_add_test(suite, "v1_writer_framing", test_v1_writer_framing);
    CU_add_test(suite, "v1_writer_does_not_overflow_near_int64_max",
                test_v1_writer_does_not_overflow_near_int64_max);
    CU_add_test(suite, "fixtures_round_trip_to_v1", test_fixtures_round_trip_to_v1);
}
