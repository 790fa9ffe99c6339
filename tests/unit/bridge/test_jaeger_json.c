/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/bridge/test_jaeger_json.c: suite "bridge/jaeger_json": the
 * jaeger-json reader (sdk/wire/jaeger/jaeger_json_decode.c) and writer
 * (sdk/wire/jaeger/jaeger_json_encode.c). Every document shape (query API envelope,
 * UI state dump, bare trace, bare spans with an embedded process, NDJSON),
 * ids, the parent rule of references, typed values, timing and process
 * rules; every real jaeger-json fixture (INDEX rows 38-48) reads with the
 * counts INDEX gives (row 43's non-hex ids are rejects); the writer's
 * framing, process keys, Jaeger error rule, start-time rule and typed
 * output; and jaeger-json -> model -> jaeger-json -> model is exact on
 * every fixture.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "read_capture.h"

#define R TW_REAL_FIXTURES "/"
#define UI R "jaegertracing__jaeger-ui/packages__jaeger-ui__src__"

static const struct {
    const char *path;
    size_t n_spans, n_rejects;
} fixtures[] = {
    {R "jaegertracing__jaeger/"
       "cmd__jaeger__internal__extension__jaegerquery__internal__fixture__otlp2jaeger-out.json",
     2, 0},
    {R "jaegertracing__jaeger/internal__uimodel__converter__v1__json__fixtures__ui_01.json", 5, 0},
    {R "jaegertracing__jaeger/model__json__fixture.json", 3, 0},
    {R "jaegertracing__jaeger/cmd__anonymizer__app__uiconv__fixtures__trace_success.json", 2, 0},
    {UI "components__TracePage__TraceFlamegraph__testTrace.json", 4, 0},
    {UI "components__TracePage__TraceGraph__testTrace.json", 0, 11},
    {UI "components__TracePage__TraceStatistics__tableValuesTestTrace__"
        "spanAmongEachOtherGroupedAndSpans.json",
     17, 0},
    {UI "components__TracePage__TraceStatistics__tableValuesTestTrace__testTraceNormal.json", 5, 0},
    {UI "components__TracePage__TraceStatistics__tableValuesTestTrace__"
        "traceWithSingleChildLongerThanParentAndStartsAfterParent.json",
     2, 0},
    {UI "components__TracePage__TraceTimelineViewer__genaiTestTrace.json", 57, 0},
    {UI "utils__fixtures__oltp2jaeger-multi-out.json", 4, 0},
};
#define N_FIXTURES (sizeof fixtures / sizeof fixtures[0])

static void read_text(read_capture *c, const char *json)
{
    capture_init(c);
    CU_ASSERT_EQUAL(capture_read_mem(c, &twb_reader_jaeger_json, json, strlen(json)), TW_OK);
}

static const tw__tag *tag_of(const tw__span_data *s, const char *key)
{
    return capture_tag(s, key);
}

/* ---- reader -------------------------------------------------------------------------------- */

static void test_every_real_fixture_reads_with_index_counts(void)
{
    for (size_t i = 0; i < N_FIXTURES; i++) {
        read_capture c;
        capture_init(&c);
        tw_status st = capture_read_file(&c, &twb_reader_jaeger_json, fixtures[i].path);
        if (c.n_spans != fixtures[i].n_spans || c.n_rejects != fixtures[i].n_rejects)
            fprintf(stderr, "%s: %zu spans, %zu rejects\n", fixtures[i].path, c.n_spans,
                    c.n_rejects);
        CU_ASSERT_EQUAL(st, TW_OK);
        CU_ASSERT_EQUAL(c.n_spans, fixtures[i].n_spans);
        CU_ASSERT_EQUAL(c.n_rejects, fixtures[i].n_rejects);
        for (size_t k = 0; k < c.n_rejects; k++)
            CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[k].reason, "traceID"));
        capture_free(&c);
    }
}

static void test_fixture_details_survive(void)
{
    read_capture c;
    capture_init(&c);
    /* Row 44: a 31-digit trace id and a 15-digit span id are left-padded. */
    CU_ASSERT_EQUAL_FATAL(capture_read_file(&c, &twb_reader_jaeger_json, fixtures[6].path), TW_OK);
    bool has_128 = false;
    for (size_t i = 0; i < c.n_spans; i++)
        has_128 = has_128 || (c.spans[i].data->trace_id_high >> 60) == 0;
    CU_ASSERT(has_128);
    capture_free(&c);

    /* Row 41: embedded processes, the error bool given as a string. */
    capture_init(&c);
    CU_ASSERT_EQUAL_FATAL(capture_read_file(&c, &twb_reader_jaeger_json, fixtures[3].path), TW_OK);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 2);
    CU_ASSERT_STRING_EQUAL(c.spans[0].process->service_name, "16af988c443cff37");
    const tw__tag *error = tag_of(c.spans[1].data, "error");
    CU_ASSERT_FATAL(error != NULL);
    CU_ASSERT_EQUAL(error->type, TW_VALUE_BOOL);
    CU_ASSERT(error->v.boolean);
    CU_ASSERT_EQUAL(c.n_warnings, 1);
    CU_ASSERT_EQUAL(c.spans[0].data->parent_id, 0x492770a15935810full);
    capture_free(&c);

    /* Row 42: references embed their span recursively; only the ids count. */
    capture_init(&c);
    CU_ASSERT_EQUAL_FATAL(capture_read_file(&c, &twb_reader_jaeger_json, fixtures[4].path), TW_OK);
    CU_ASSERT_EQUAL(c.n_spans, 4);
    size_t n_roots = 0;
    for (size_t i = 0; i < c.n_spans; i++) {
        const tw__span_data *s = c.spans[i].data;
        n_roots += s->parent_id == 0;
        CU_ASSERT_EQUAL(s->n_refs, s->parent_id ? 1 : 0);
        CU_ASSERT(s->n_refs == 0 || s->refs[0].span_id == s->parent_id);
    }
    CU_ASSERT_EQUAL(n_roots, 1);
    capture_free(&c);
}

static const char *const span_a =
    "{\"traceID\":\"ABC\",\"spanID\":\"1\",\"operationName\":\"a\",\"references\":[],"
    "\"startTime\":10,\"duration\":2,\"tags\":[],\"logs\":[],\"processID\":\"p1\"}";

/* @form with each "%s" replaced by span_a (into @out, @size bytes). */
static void with_span(const char *form, char *out, size_t size)
{
    size_t used = 0;
    for (const char *p = form; *p && used + 1 < size; p++) {
        if (p[0] == '%' && p[1] == 's') {
            used += (size_t)snprintf(out + used, size - used, "%s", span_a);
            p++;
        } else {
            out[used++] = *p;
        }
    }
    out[used < size ? used : size - 1] = '\0';
}

static void test_every_document_shape(void)
{
    char doc[2048];
    const char *forms[] = {
        "{\"data\":[{\"traceID\":\"abc\",\"spans\":[%s],\"processes\":{\"p1\":{\"serviceName\":"
        "\"s\",\"tags\":[]}}}],\"total\":0}",
        "{\"data\":{\"traceID\":\"abc\",\"spans\":[%s],\"processes\":{\"p1\":{\"serviceName\":"
        "\"s\"}}},\"id\":\"abc\",\"state\":\"FETCH_DONE\"}",
        "{\"traceID\":\"abc\",\"spans\":[%s],\"processes\":{\"p1\":{\"serviceName\":\"s\"}}}",
        "{\"traceID\":\"abc\",\"spans\":[%s],\"processes\":{\"p1\":{\"serviceName\":\"s\"}}}\n"
        "{\"data\":[{\"traceID\":\"abc\",\"spans\":[%s],\"processes\":{\"p1\":{\"serviceName\":"
        "\"s\"}}}]}\n",
    };
    for (size_t i = 0; i < 4; i++) {
        with_span(forms[i], doc, sizeof doc);
        read_capture c;
        read_text(&c, doc);
        CU_ASSERT_EQUAL(c.n_spans, i == 3 ? 2 : 1);
        CU_ASSERT_EQUAL(c.n_rejects, 0);
        if (c.n_spans) {
            CU_ASSERT_EQUAL(c.spans[0].data->trace_id_low, 0xabc);
            CU_ASSERT_STRING_EQUAL(c.spans[0].process->service_name, "s");
            CU_ASSERT_STRING_EQUAL(c.spans[0].data->operation, "a");
        }
        capture_free(&c);
    }
    /* a bare array of spans, each with its process */
    read_capture c;
    read_text(&c, "[{\"traceID\":\"1\",\"spanID\":\"1\",\"startTime\":5,\"process\":"
                  "{\"serviceName\":\"x\",\"tags\":[{\"key\":\"ip\",\"type\":\"string\","
                  "\"value\":\"10.0.0.1\"}]}},"
                  "{\"traceID\":\"1\",\"spanID\":\"2\",\"startTime\":5,\"process\":"
                  "{\"serviceName\":\"x\",\"tags\":[{\"key\":\"ip\",\"type\":\"string\","
                  "\"value\":\"10.0.0.1\"}]}}]");
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 2);
    CU_ASSERT_PTR_EQUAL(c.spans[0].process, c.spans[1].process);
    CU_ASSERT_EQUAL(c.spans[0].process->n_tags, 1);
    capture_free(&c);
    /* an empty query result and a document that is none of these */
    read_text(&c, "{\"data\":null,\"errors\":[{\"code\":404}]}\n{\"hello\":1}\n");
    CU_ASSERT_EQUAL(c.n_spans, 0);
    CU_ASSERT_EQUAL_FATAL(c.n_rejects, 1);
    CU_ASSERT_EQUAL(c.rejects[0].line_no, 2);
    capture_free(&c);
}

static void test_ids_and_per_span_rejects(void)
{
    read_capture c;
    read_text(&c, "{\"traceID\":\"1\",\"spans\":["
                  "{\"spanID\":\"00AB\",\"startTime\":5},"
                  "{\"traceID\":\"trace-1\",\"spanID\":\"1\",\"startTime\":5},"
                  "{\"spanID\":\"span-2\",\"startTime\":5},"
                  "{\"spanID\":\"0\",\"startTime\":5},"
                  "{\"traceID\":\"123456789abcdef0123456789ABCDEF\",\"spanID\":\"F\","
                  "\"startTime\":5}]}");
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 2);
    CU_ASSERT_EQUAL(c.spans[0].data->trace_id_low, 1); /* the trace's traceID */
    CU_ASSERT_EQUAL(c.spans[0].data->span_id, 0xab);
    CU_ASSERT_EQUAL(c.spans[1].data->trace_id_high, 0x0123456789abcdefull);
    CU_ASSERT_EQUAL(c.spans[1].data->trace_id_low, 0x0123456789abcdefull);
    CU_ASSERT_EQUAL_FATAL(c.n_rejects, 3);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[0].reason, "traceID"));
    CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[1].reason, "spanID"));
    CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[2].reason, "spanID"));
    /* the raw record of a rejected span is that span's JSON */
    CU_ASSERT(c.rejects[0].raw_len > 0 && c.rejects[0].raw[0] == '{');
    CU_ASSERT_PTR_NOT_NULL(memmem(c.rejects[0].raw, c.rejects[0].raw_len, "trace-1", 7));
    capture_free(&c);
}

static void test_parent_rule_of_references(void)
{
    read_capture c;
    read_text(&c, "{\"traceID\":\"1\",\"spans\":["
                  /* CHILD_OF in the trace: the parent, not a ref; the others stay refs */
                  "{\"spanID\":\"10\",\"startTime\":5,\"references\":["
                  "{\"refType\":\"FOLLOWS_FROM\",\"traceID\":\"1\",\"spanID\":\"7\"},"
                  "{\"refType\":\"CHILD_OF\",\"traceID\":\"1\",\"spanID\":\"8\"},"
                  "{\"refType\":\"CHILD_OF\",\"traceID\":\"ff\",\"spanID\":\"9\"}]},"
                  /* FOLLOWS_FROM only: the parent, and it stays a ref */
                  "{\"spanID\":\"11\",\"startTime\":5,\"references\":["
                  "{\"refType\":\"FOLLOWS_FROM\",\"traceID\":\"1\",\"spanID\":\"7\"}]},"
                  /* another trace only: no parent */
                  "{\"spanID\":\"12\",\"startTime\":5,\"references\":["
                  "{\"refType\":\"CHILD_OF\",\"traceID\":\"2\",\"spanID\":\"7\"}]},"
                  /* parentSpanID, no refType (CHILD_OF), a bad ref dropped */
                  "{\"spanID\":\"13\",\"startTime\":5,\"parentSpanID\":\"5\",\"references\":["
                  "{\"refType\":\"SIBLING\",\"spanID\":\"1\"},{\"spanID\":\"zz\"}]},"
                  "{\"spanID\":\"14\",\"startTime\":5,\"references\":[{\"spanID\":\"6\"}]}]}");
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 5);
    const tw__span_data *s = c.spans[0].data;
    CU_ASSERT_EQUAL(s->parent_id, 8);
    CU_ASSERT_EQUAL_FATAL(s->n_refs, 3); /* every reference stays, in order */
    CU_ASSERT_EQUAL(s->refs[0].type, TW__REF_FOLLOWS_FROM);
    CU_ASSERT_EQUAL(s->refs[0].span_id, 7);
    CU_ASSERT_EQUAL(s->refs[1].span_id, 8);
    CU_ASSERT_EQUAL(s->refs[2].trace_id_low, 0xff);
    s = c.spans[1].data;
    CU_ASSERT_EQUAL(s->parent_id, 7);
    CU_ASSERT_EQUAL(s->n_refs, 1);
    s = c.spans[2].data;
    CU_ASSERT_EQUAL(s->parent_id, 0);
    CU_ASSERT_EQUAL(s->n_refs, 1);
    s = c.spans[3].data;
    CU_ASSERT_EQUAL(s->parent_id, 5);
    CU_ASSERT_EQUAL(s->n_refs, 0);
    s = c.spans[4].data;
    CU_ASSERT_EQUAL(s->parent_id, 6);
    CU_ASSERT_EQUAL(s->n_refs, 1);
    CU_ASSERT_EQUAL(s->refs[0].type, TW__REF_CHILD_OF);
    /* the two bad references, and no process for each of the five spans */
    CU_ASSERT_EQUAL(c.n_warnings, 7);
    capture_free(&c);
}

static void test_typed_values(void)
{
    read_capture c;
    read_text(&c, "{\"traceID\":\"1\",\"spanID\":\"1\",\"startTime\":5,\"tags\":["
                  "{\"key\":\"s\",\"type\":\"string\",\"value\":\"x\"},"
                  "{\"key\":\"b\",\"type\":\"bool\",\"value\":false},"
                  "{\"key\":\"bs\",\"type\":\"bool\",\"value\":\"true\"},"
                  "{\"key\":\"i\",\"type\":\"int64\",\"value\":-42},"
                  "{\"key\":\"big\",\"type\":\"int64\",\"value\":\"9223372036854775807\"},"
                  "{\"key\":\"f\",\"type\":\"float64\",\"value\":0.25},"
                  "{\"key\":\"nan\",\"type\":\"float64\",\"value\":\"NaN\"},"
                  "{\"key\":\"bin\",\"type\":\"binary\",\"value\":\"AAEC/w==\"},"
                  "{\"key\":\"up\",\"type\":\"INT64\",\"value\":7},"
                  "{\"key\":\"badbin\",\"type\":\"binary\",\"value\":\"@@\"},"
                  "{\"key\":\"badint\",\"type\":\"int64\",\"value\":\"12x\"},"
                  "{\"type\":\"string\",\"value\":\"no key\"}],"
                  "\"logs\":[{\"timestamp\":6,\"fields\":[{\"key\":\"event\",\"type\":"
                  "\"string\",\"value\":\"e\"},{\"key\":\"n\",\"type\":\"int64\",\"value\":3}]},"
                  "{\"fields\":[]}],"
                  "\"process\":{\"serviceName\":\"svc\",\"tags\":[{\"key\":\"ip\",\"type\":"
                  "\"int64\",\"value\":167772161}]}}");
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 1);
    const tw__span_data *s = c.spans[0].data;
    CU_ASSERT_EQUAL_FATAL(s->n_tags, 11);
    CU_ASSERT_EQUAL(tag_of(s, "s")->type, TW_VALUE_STRING);
    CU_ASSERT(tag_of(s, "b")->type == TW_VALUE_BOOL && !tag_of(s, "b")->v.boolean);
    CU_ASSERT(tag_of(s, "bs")->type == TW_VALUE_BOOL && tag_of(s, "bs")->v.boolean);
    CU_ASSERT(tag_of(s, "i")->type == TW_VALUE_INT64 && tag_of(s, "i")->v.i64 == -42);
    CU_ASSERT(tag_of(s, "big")->type == TW_VALUE_INT64 && tag_of(s, "big")->v.i64 == INT64_MAX);
    CU_ASSERT(tag_of(s, "f")->type == TW_VALUE_DOUBLE && tag_of(s, "f")->v.dbl == 0.25);
    CU_ASSERT(tag_of(s, "nan")->type == TW_VALUE_DOUBLE && isnan(tag_of(s, "nan")->v.dbl));
    const tw__tag *bin = tag_of(s, "bin");
    CU_ASSERT(bin->type == TW_VALUE_BINARY && bin->len == 4 &&
              memcmp(bin->v.bin, "\x00\x01\x02\xff", 4) == 0);
    CU_ASSERT(tag_of(s, "up")->type == TW_VALUE_INT64);
    CU_ASSERT(tag_of(s, "badbin")->type == TW_VALUE_STRING);
    CU_ASSERT(tag_of(s, "badint")->type == TW_VALUE_STRING);
    /* bool as a string, the bad binary, the bad int, the keyless tag, the log with no time */
    CU_ASSERT_EQUAL(c.n_warnings, 5);
    CU_ASSERT_EQUAL_FATAL(s->n_logs, 1);
    CU_ASSERT_EQUAL(s->logs[0].timestamp_us, 6);
    CU_ASSERT_EQUAL(s->logs[0].n_fields, 2);
    CU_ASSERT_EQUAL(s->logs[0].fields[1].type, TW_VALUE_INT64);
    const tw__tag *ip = tw__process_find_tag(c.spans[0].process, "ip");
    CU_ASSERT(ip && ip->type == TW_VALUE_INT64 && ip->v.i64 == 167772161);
    capture_free(&c);
}

static void test_timing_and_process_rules(void)
{
    read_capture c;
    read_text(&c, "{\"traceID\":\"1\",\"processes\":{\"p1\":{\"serviceName\":\"a\"},"
                  "\"p2\":{\"serviceName\":\"b\"}},\"spans\":["
                  "{\"spanID\":\"1\",\"startTime\":0,\"duration\":3,\"processID\":\"p2\","
                  "\"logs\":[{\"timestamp\":90,\"fields\":[]},{\"timestamp\":80,\"fields\":[]}]},"
                  "{\"spanID\":\"2\",\"processID\":\"p9\"},"
                  "{\"spanID\":\"3\",\"startTime\":7,\"duration\":-1,\"processID\":\"p1\","
                  "\"flags\":2}]}");
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 3);
    CU_ASSERT_EQUAL(c.spans[0].data->start_us, 80); /* the earliest log */
    CU_ASSERT_EQUAL(c.spans[0].data->duration_us, 3);
    CU_ASSERT_STRING_EQUAL(c.spans[0].process->service_name, "b");
    CU_ASSERT_EQUAL(c.spans[1].data->start_us, 0); /* kept, unknown */
    CU_ASSERT(c.spans[1].data->is_duration_unknown);
    CU_ASSERT_STRING_EQUAL(c.spans[1].process->service_name, ""); /* no such process */
    CU_ASSERT_EQUAL(c.spans[1].data->flags, TW__FLAG_SAMPLED);
    CU_ASSERT_EQUAL(c.spans[2].data->duration_us, 0);
    CU_ASSERT_EQUAL(c.spans[2].data->flags, TW__FLAG_DEBUG); /* as given */
    CU_ASSERT_STRING_EQUAL(c.spans[2].process->service_name, "a");
    /* start from a log, start unknown, no process, negative duration */
    CU_ASSERT_EQUAL(c.n_warnings, 4);
    capture_free(&c);
}

/* One bad value inside a document holding several traces costs that value
 * (repaired), not the document: invalid UTF-8 in a tag value, \u0000 in a
 * member name (Jansson keys are C strings), a raw control byte in a string. */
static void test_one_bad_value_does_not_cost_the_document(void)
{
    static const char doc[] =
        "{\"data\":["
        "{\"traceID\":\"a\",\"spans\":[{\"spanID\":\"1\",\"startTime\":1700000000000000,"
        "\"tags\":[{\"key\":\"k\",\"type\":\"string\",\"value\":\"x\xff"
        "y\"}]}]},"
        "{\"traceID\":\"b\",\"spans\":[{\"spanID\":\"2\",\"startTime\":1700000000000000,"
        "\"odd\\u0000member\":1}]},"
        "{\"traceID\":\"c\",\"spans\":[{\"spanID\":\"3\",\"startTime\":1700000000000000,"
        "\"operationName\":\"tab\there\"}]}]}";
    read_capture c;
    read_text(&c, doc);
    CU_ASSERT_EQUAL(c.n_spans, 3);
    CU_ASSERT_EQUAL(c.n_rejects, 0);
    CU_ASSERT(c.n_warnings >= 1); /* the repairs are said */
    if (c.n_spans == 3) {
        const tw__tag *k = tag_of(c.spans[0].data, "k");
        CU_ASSERT(k && k->type == TW_VALUE_STRING && strcmp(k->v.str, "x\xef\xbf\xbdy") == 0);
        CU_ASSERT_STRING_EQUAL(c.spans[2].data->operation, "tab\there");
    }
    capture_free(&c);
}

static void test_sniff(void)
{
    const char *yes[] = {"{\"data\":[{\"traceID\":\"a\"", "[{\"spanID\":\"1\"",
                         " {\"processes\":{}}"};
    const char *no[] = {"[{\"traceId\":\"a\",\"id\":\"b\"}]", "traceID", ""};
    for (size_t i = 0; i < 3; i++) {
        CU_ASSERT(twb_reader_jaeger_json.sniff((const uint8_t *)yes[i], strlen(yes[i])) >= 70);
        CU_ASSERT_EQUAL(twb_reader_jaeger_json.sniff((const uint8_t *)no[i], strlen(no[i])), 0);
    }
}

static void test_stop_from_emit_stops_the_reader(void)
{
    read_capture c;
    capture_init(&c);
    c.stop_after = 1;
    const char *doc = "{\"traceID\":\"1\",\"spans\":[{\"spanID\":\"1\",\"startTime\":1},"
                      "{\"spanID\":\"2\",\"startTime\":1}]}";
    CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_jaeger_json, doc, strlen(doc)), TW_E_STATE);
    CU_ASSERT_EQUAL(c.n_spans, 1);
    capture_free(&c);
}

/* ---- writer -------------------------------------------------------------------------------- */

static char *write_jaeger(const twb_span *spans, size_t n, size_t n_calls)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    CU_ASSERT_FATAL(f != NULL);
    tw_error *err = NULL;
    twb_writer *w = twb_writer_jaeger_json.new_writer(f, NULL, &err);
    CU_ASSERT_FATAL(w != NULL);
    size_t per = n_calls ? (n + n_calls - 1) / n_calls : n;
    for (size_t i = 0; i < n; i += per)
        CU_ASSERT_EQUAL(twb_writer_jaeger_json.write(w, spans + i, n - i < per ? n - i : per, &err),
                        TW_OK);
    CU_ASSERT_EQUAL(twb_writer_jaeger_json.finish(w, &err), TW_OK);
    twb_writer_jaeger_json.free_writer(w);
    fclose(f);
    return text;
}

static const json_t *find_kv(const json_t *list, const char *key)
{
    size_t i;
    const json_t *kv;
    json_array_foreach(list, i, kv)
    {
        if (strcmp(json_string_value(json_object_get(kv, "key")), key) == 0)
            return kv;
    }
    return NULL;
}

static void test_writer_framing_and_empty(void)
{
    CU_ASSERT_EQUAL(twb_writer_jaeger_json.target_flags & TWB_TARGET_JAEGER_IDS,
                    TWB_TARGET_JAEGER_IDS);
    char *text = write_jaeger(NULL, 0, 0);
    CU_ASSERT_STRING_EQUAL(text,
                           "{\"data\":[],\"total\":0,\"limit\":0,\"offset\":0,\"errors\":null}\n");
    free(text);
}

static void test_writer_groups_traces_keys_processes_and_applies_jaeger_rules(void)
{
    read_capture c;
    read_text(&c,
              /* two traces interleaved, three processes (one with an empty service) */
              "{\"traceID\":\"1\",\"spanID\":\"1\",\"startTime\":100,\"duration\":9,"
              "\"process\":{\"serviceName\":\"a\"},\"tags\":[{\"key\":\"error\",\"type\":"
              "\"string\",\"value\":\"disk full\"},{\"key\":\"big\",\"type\":\"int64\","
              "\"value\":\"-9007199254740992\"},{\"key\":\"safe\",\"type\":\"int64\",\"value\":"
              "9007199254740991},{\"key\":\"inf\",\"type\":\"float64\",\"value\":\"-Infinity\"}]}\n"
              "{\"traceID\":\"2\",\"spanID\":\"5\",\"startTime\":50,\"process\":{\"serviceName\":"
              "\"\"},\"tags\":[{\"key\":\"error\",\"type\":\"string\",\"value\":\"\"}]}\n"
              "{\"traceID\":\"1\",\"spanID\":\"2\",\"startTime\":0,\"process\":{\"serviceName\":"
              "\"b\"},\"references\":[{\"refType\":\"FOLLOWS_FROM\",\"traceID\":\"9\",\"spanID\":"
              "\"3\"},{\"refType\":\"CHILD_OF\",\"traceID\":\"1\",\"spanID\":\"1\"}]}\n"
              "{\"traceID\":\"1\",\"spanID\":\"3\",\"process\":{\"serviceName\":\"a\"},"
              "\"tags\":[{\"key\":\"error\",\"type\":\"string\",\"value\":\"false\"}]}\n");
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 4);
    char *text = write_jaeger(c.spans, c.n_spans, 1);
    json_error_t jerr;
    json_t *doc = json_loads(text, 0, &jerr);
    CU_ASSERT_FATAL(doc != NULL);
    const json_t *data = json_object_get(doc, "data");
    CU_ASSERT_FATAL(json_array_size(data) == 2);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(doc, "total")), 0);
    CU_ASSERT(json_is_null(json_object_get(doc, "errors")));
    const json_t *t1 = json_array_get(data, 0), *t2 = json_array_get(data, 1);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(t1, "traceID")), "0000000000000001");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(t2, "traceID")), "0000000000000002");
    const json_t *spans = json_object_get(t1, "spans");
    CU_ASSERT_FATAL(json_array_size(spans) == 3);
    const json_t *procs = json_object_get(t1, "processes");
    CU_ASSERT_EQUAL(json_object_size(procs), 2);
    CU_ASSERT_STRING_EQUAL(
        json_string_value(json_object_get(json_object_get(procs, "p1"), "serviceName")), "a");
    CU_ASSERT_STRING_EQUAL(
        json_string_value(json_object_get(json_object_get(procs, "p2"), "serviceName")), "b");
    CU_ASSERT_STRING_EQUAL(
        json_string_value(json_object_get(json_array_get(spans, 2), "processID")), "p1");
    CU_ASSERT_STRING_EQUAL(
        json_string_value(json_object_get(json_object_get(json_object_get(t2, "processes"), "p1"),
                                          "serviceName")),
        "empty-service-name");

    const json_t *s1 = json_array_get(spans, 0);
    const json_t *tags = json_object_get(s1, "tags");
    const json_t *error = find_kv(tags, "error");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(error, "type")), "bool");
    CU_ASSERT(json_is_true(json_object_get(error, "value")));
    CU_ASSERT_STRING_EQUAL(
        json_string_value(json_object_get(find_kv(tags, "error.message"), "value")), "disk full");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(find_kv(tags, "big"), "value")),
                           "-9007199254740992");
    CU_ASSERT(json_is_integer(json_object_get(find_kv(tags, "safe"), "value")));
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(find_kv(tags, "inf"), "value")),
                           "-Infinity");
    CU_ASSERT(json_is_null(json_object_get(s1, "warnings")));
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(s1, "startTime")), 100);

    const json_t *s2 = json_array_get(spans, 1); /* no start: the trace's; parent first */
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(s2, "startTime")), 100);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(s2, "warnings")), 1);
    const json_t *refs = json_object_get(s2, "references");
    CU_ASSERT_FATAL(json_array_size(refs) == 2);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(refs, 0), "refType")),
                           "CHILD_OF");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(refs, 0), "spanID")),
                           "0000000000000001");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(refs, 1), "refType")),
                           "FOLLOWS_FROM");

    const json_t *s3 = json_array_get(spans, 2);
    CU_ASSERT(
        json_is_false(json_object_get(find_kv(json_object_get(s3, "tags"), "error"), "value")));
    const json_t *s5 = json_array_get(json_object_get(t2, "spans"), 0);
    CU_ASSERT(
        json_is_true(json_object_get(find_kv(json_object_get(s5, "tags"), "error"), "value")));
    CU_ASSERT_PTR_NULL(find_kv(json_object_get(s5, "tags"), "error.message"));
    json_decref(doc);
    free(text);
    capture_free(&c);

    /* a lone span with no start and no logs: 1 µs, never 0 */
    read_text(&c, "{\"traceID\":\"1\",\"spanID\":\"1\"}");
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 1);
    text = write_jaeger(c.spans, 1, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"startTime\":1,"));
    free(text);
    capture_free(&c);
}

/* The writer puts the parent's reference first (jaeger-ui takes
 * references[0] as the parent): the same move on the first model. */
static void parent_ref_first(tw__span_data *s)
{
    for (int pass = 0; pass < 2 && s->parent_id; pass++) {
        for (size_t i = 0; i < s->n_refs; i++) {
            tw__ref r = s->refs[i];
            if ((pass == 1 || r.type == TW__REF_CHILD_OF) && r.span_id == s->parent_id &&
                r.trace_id_high == s->trace_id_high && r.trace_id_low == s->trace_id_low) {
                memmove(&s->refs[1], &s->refs[0], i * sizeof r);
                s->refs[0] = r;
                return;
            }
        }
    }
}

/* Every fixture: jaeger-json -> model -> jaeger-json -> model, exact (with
 * the parent's reference first). */
static void test_fixtures_round_trip_exactly(void)
{
    for (size_t f = 0; f < N_FIXTURES; f++) {
        read_capture first, second;
        capture_init(&first);
        CU_ASSERT_EQUAL_FATAL(capture_read_file(&first, &twb_reader_jaeger_json, fixtures[f].path),
                              TW_OK);
        char *text = write_jaeger(first.spans, first.n_spans, 2);
        capture_init(&second);
        CU_ASSERT_EQUAL(capture_read_mem(&second, &twb_reader_jaeger_json, text, strlen(text)),
                        TW_OK);
        CU_ASSERT_EQUAL(second.n_rejects, 0);
        CU_ASSERT_EQUAL(second.n_warnings, 0);
        CU_ASSERT_EQUAL_FATAL(second.n_spans, first.n_spans);
        for (size_t i = 0; i < first.n_spans; i++) {
            parent_ref_first(first.spans[i].data);
            bool same = tw_test_spans_equal(first.spans[i].data, second.spans[i].data) &&
                        capture_processes_equal(first.spans[i].process, second.spans[i].process);
            if (!same)
                fprintf(stderr, "%s: span %zu differs after the round trip\n", fixtures[f].path, i);
            CU_ASSERT(same);
        }
        free(text);
        capture_free(&first);
        capture_free(&second);
    }
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("bridge/jaeger_json", NULL, NULL);
    CU_add_test(suite, "every_real_fixture_reads_with_index_counts",
                test_every_real_fixture_reads_with_index_counts);
    CU_add_test(suite, "fixture_details_survive", test_fixture_details_survive);
    CU_add_test(suite, "every_document_shape", test_every_document_shape);
    CU_add_test(suite, "ids_and_per_span_rejects", test_ids_and_per_span_rejects);
    CU_add_test(suite, "parent_rule_of_references", test_parent_rule_of_references);
    CU_add_test(suite, "typed_values", test_typed_values);
    CU_add_test(suite, "timing_and_process_rules", test_timing_and_process_rules);
    CU_add_test(suite, "sniff", test_sniff);
    CU_add_test(suite, "one_bad_value_does_not_cost_the_document",
                test_one_bad_value_does_not_cost_the_document);
    CU_add_test(suite, "stop_from_emit_stops_the_reader", test_stop_from_emit_stops_the_reader);
    CU_add_test(suite, "writer_framing_and_empty", test_writer_framing_and_empty);
    CU_add_test(suite, "writer_groups_traces_keys_processes_and_applies_jaeger_rules",
                test_writer_groups_traces_keys_processes_and_applies_jaeger_rules);
    CU_add_test(suite, "fixtures_round_trip_exactly", test_fixtures_round_trip_exactly);
}
