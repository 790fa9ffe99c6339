/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/wire/test_dapper_log.c: suite "wire/dapper_log": the span log's
 * one encoder and one decoder (sdk/wire/dapper/dapper_log.h,
 * docs/dapper-log-format.md). Encode -> decode gives back the same model and
 * process for every field and value type (NaN, -0.0, infinities, INT64
 * limits, binary with NUL bytes, 128- and 64-bit ids); one line is one
 * record; the RPC annotations follow kind and timing; the decoder accepts
 * the tolerant forms other writers produce and rejects malformed records
 * with "line N: reason"; the line reader skips blank lines, reports bad and
 * oversized ones and goes on.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "harness.h"
#include "oracle.h"
#include "span_corpus.h"
#include "internal.h"
#include "span_builder.h"
#include "model_equal.h"
#include "wire/dapper/dapper_log.h"

static bool processes_equal(const tw__process *a, const tw__process *b)
{
    return strcmp(a->service_name, b->service_name) == 0 &&
           tw_test_tags_equal(a->tags, a->n_tags, b->tags, b->n_tags);
}

/* ---- fixtures ----------------------------------------------------------------------------- */

static tw__process process_with_host; /* built in suite init */

static int suite_init(void)
{
    tw__process_init(&process_with_host);
    tw_value host = tw_test_str("db-7.example"), ip = tw_test_str("10.1.2.3"),
             uuid = tw_test_str("4f8e0a9c-1111-2222-3333-444455556666"), shard = tw_test_i64(12);
    static const uint8_t key_id[3] = {0x00, 0x01, 0xfe};
    tw_value bin = tw_test_bin(key_id, sizeof key_id);
    bool ok = tw__process_set_service(&process_with_host, "billing") &&
              tw__process_add_tag(&process_with_host, "hostname", &host) &&
              tw__process_add_tag(&process_with_host, "ip", &ip) &&
              tw__process_add_tag(&process_with_host, "client-uuid", &uuid) &&
              tw__process_add_tag(&process_with_host, "shard", &shard) &&
              tw__process_add_tag(&process_with_host, "key.id", &bin);
    return ok ? 0 : 1;
}

static int suite_cleanup(void)
{
    tw__process_clear(&process_with_host);
    return 0;
}

/* Encodes @span with @process into a NUL-terminated line (malloc'd). */
static char *encode_line(const tw__process *process, const tw__span_data *span)
{
    tw__dapper_log_encoder *enc = tw__dapper_log_encoder_new(process);
    CU_ASSERT_PTR_NOT_NULL_FATAL(enc);
    tw__buf out;
    tw__buf_init(&out);
    bool ok = tw__dapper_log_encode_span(enc, span, &out) && tw__buf_append(&out, "", 1);
    tw__dapper_log_encoder_free(enc);
    CU_ASSERT_FATAL(ok);
    return (char *)out.data;
}

/* Encodes, checks the line's shape, decodes and compares. */
static void check_round_trip(const tw__process *process, const tw__span_data *span)
{
    char *line = encode_line(process, span);
    size_t len = strlen(line);
    CU_ASSERT(len > 2 && line[0] == '{' && line[len - 1] == '\n');
    CU_ASSERT_PTR_EQUAL(strchr(line, '\n'), line + len - 1); /* one line, one record */
    tw__span_data *got = NULL;
    tw__process got_process;
    tw_error *err = NULL;
    CU_ASSERT_EQUAL_FATAL(tw__dapper_log_decode(line, len, 1, &got, &got_process, &err), TW_OK);
    CU_ASSERT_PTR_NULL(err);
    CU_ASSERT(tw_test_spans_equal(span, got));
    CU_ASSERT(processes_equal(process, &got_process));
    tw__span_data_unref(got);
    tw__process_clear(&got_process);
    free(line);
}

/* ---- round trips -------------------------------------------------------------------------- */

static void test_every_field_and_value_type_round_trips(void)
{
    tw__span_data *span = tw_test_span_every_field();
    CU_ASSERT_PTR_NOT_NULL_FATAL(span);
    check_round_trip(&process_with_host, span);
    tw__span_data_unref(span);
}

static void test_root_64bit_span_with_empty_name_round_trips(void)
{
    tw__span_data *span = tw_test_span_root_64bit();
    tw__process bare;
    tw__process_init(&bare); /* service "", no tags */
    check_round_trip(&bare, span);
    char *line = encode_line(&bare, span);
    CU_ASSERT_PTR_NOT_NULL(strstr(line, "\"trace_id\":\"00000000075bcd15\""));
    CU_ASSERT_PTR_NULL(strstr(line, "parent_id")); /* a root has none */
    CU_ASSERT_PTR_NULL(strstr(line, "\"kind\""));
    CU_ASSERT_PTR_NULL(strstr(line, "\"tags\""));
    free(line);
    tw__span_data_unref(span);
}

static void test_line_is_canonical_json(void)
{
    /* The exact bytes of a small record: keys in a fixed order, no spaces,
     * int64 beyond 2^53 as a string, binary as base64, process last. */
    tw__span_data *s = tw__span_data_new();
    s->trace_id_high = 0x0af7651916cd43ddu;
    s->trace_id_low = 0x8448eb211c80319cu;
    s->span_id = 0xb7ad6b7169203331u;
    s->parent_id = 0x00f067aa0ba902b7u;
    s->flags = TW__FLAG_SAMPLED;
    s->start_us = 1700000000000000;
    s->duration_us = 1500;
    static const uint8_t bytes[4] = {0xde, 0xad, 0xbe, 0xef};
    CU_ASSERT_FATAL(tw__span_data_set_operation(s, "GET /a", 6) &&
                    tw_test_add_tag(s, "span.kind", tw_test_str("client")) &&
                    tw_test_add_tag(s, "big", tw_test_i64(INT64_C(9007199254740992))) &&
                    tw_test_add_tag(s, "bin", tw_test_bin(bytes, 4)));
    tw__process p;
    tw__process_init(&p);
    tw__process_set_service(&p, "web");
    char *line = encode_line(&p, s);
    CU_ASSERT_STRING_EQUAL(
        line, "{\"v\":1,\"trace_id\":\"0af7651916cd43dd8448eb211c80319c\","
              "\"span_id\":\"b7ad6b7169203331\",\"parent_id\":\"00f067aa0ba902b7\","
              "\"name\":\"GET /a\",\"kind\":\"client\",\"start_us\":1700000000000000,"
              "\"end_us\":1700000000001500,\"flags\":1,"
              "\"annotations\":[{\"ts_us\":1700000000000000,\"value\":\"cs\"},"
              "{\"ts_us\":1700000000001500,\"value\":\"cr\"}],"
              "\"tags\":[{\"key\":\"span.kind\",\"type\":\"string\",\"value\":\"client\"},"
              "{\"key\":\"big\",\"type\":\"int64\",\"value\":\"9007199254740992\"},"
              "{\"key\":\"bin\",\"type\":\"binary\",\"value\":\"3q2+7w==\"}],"
              "\"process\":{\"service\":\"web\"}}\n");
    check_round_trip(&p, s);
    free(line);
    tw__process_clear(&p);
    tw__span_data_unref(s);
}

/* The annotations a span of @kind gets for this duration. */
static char *annotations_of(const char *kind, int64_t duration_us)
{
    tw__span_data *s = tw__span_data_new();
    s->trace_id_low = 1;
    s->span_id = 2;
    s->start_us = 100;
    s->duration_us = duration_us;
    tw_test_add_tag(s, "span.kind", tw_test_str(kind));
    tw__process p;
    tw__process_init(&p);
    char *line = encode_line(&p, s);
    check_round_trip(&p, s); /* the kind comes back as the same one tag */
    tw__span_data_unref(s);
    char *a = strstr(line, "\"annotations\":");
    char *copy = a ? strndup(a, (size_t)(strchr(a, ']') - a + 1)) : strdup("");
    free(line);
    return copy;
}

static void test_rpc_annotations_follow_kind_and_timing(void)
{
    static const struct {
        const char *kind;
        int64_t duration_us;
        const char *want;
    } cases[] = {
        {"client", 5,
         "\"annotations\":[{\"ts_us\":100,\"value\":\"cs\"},{\"ts_us\":105,\"value\":\"cr\"}]"},
        {"server", 5,
         "\"annotations\":[{\"ts_us\":100,\"value\":\"sr\"},{\"ts_us\":105,\"value\":\"ss\"}]"},
        {"producer", 5,
         "\"annotations\":[{\"ts_us\":100,\"value\":\"ms\"},{\"ts_us\":105,\"value\":\"ws\"}]"},
        {"consumer", 5,
         "\"annotations\":[{\"ts_us\":100,\"value\":\"wr\"},{\"ts_us\":105,\"value\":\"mr\"}]"},
        /* A zero duration is "unknown" to Zipkin: only the begin annotation
         * (a consumer's is its receive, mr). */
        {"client", 0, "\"annotations\":[{\"ts_us\":100,\"value\":\"cs\"}]"},
        {"server", 0, "\"annotations\":[{\"ts_us\":100,\"value\":\"sr\"}]"},
        {"consumer", 0, "\"annotations\":[{\"ts_us\":100,\"value\":\"mr\"}]"},
        /* Not an RPC kind: no kind member, no annotations. */
        {"internal", 5, ""},
        /* The tag is read in any case, as by the Zipkin and OTLP encoders. */
        {"CLIENT", 5,
         "\"annotations\":[{\"ts_us\":100,\"value\":\"cs\"},{\"ts_us\":105,\"value\":\"cr\"}]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = annotations_of(cases[i].kind, cases[i].duration_us);
        CU_ASSERT_STRING_EQUAL(got, cases[i].want);
        free(got);
    }
}

static void test_invalid_utf8_is_replaced_not_fatal(void)
{
    tw__span_data *s = tw_test_span_root_64bit();
    const char bad[] = {'o', 'k', (char)0xff, (char)0xc3, 'x', 0};
    tw_value v = {.type = TW_VALUE_STRING, .as.str = bad, .len = 5};
    tw_test_add_tag(s, "raw", v);
    tw__process p;
    tw__process_init(&p);
    char *line = encode_line(&p, s);
    tw__span_data *got = NULL;
    tw__process gp;
    CU_ASSERT_EQUAL_FATAL(tw__dapper_log_decode(line, strlen(line), 1, &got, &gp, NULL), TW_OK);
    const tw__tag *t = tw__span_data_find_tag(got, "raw");
    CU_ASSERT(t && t->len == 9 &&
              memcmp(t->v.str,
                     "ok\xEF\xBF\xBD\xEF\xBF\xBD"
                     "x",
                     9) == 0);
    tw__span_data_unref(got);
    tw__process_clear(&gp);
    free(line);
    tw__span_data_unref(s);
}

static void test_encoder_refuses_null_and_overflowing_spans(void)
{
    tw__process p;
    tw__process_init(&p);
    tw__dapper_log_encoder *enc = tw__dapper_log_encoder_new(&p);
    tw__span_data *s = tw_test_span_root_64bit();
    tw__buf out;
    tw__buf_init(&out);
    CU_ASSERT_FALSE(tw__dapper_log_encode_span(NULL, s, &out));
    CU_ASSERT_FALSE(tw__dapper_log_encode_span(enc, NULL, &out));
    CU_ASSERT_FALSE(tw__dapper_log_encode_span(enc, s, NULL));
    s->start_us = INT64_MAX - 1;
    s->duration_us = 2; /* the end does not fit an int64 */
    CU_ASSERT_FALSE(tw__dapper_log_encode_span(enc, s, &out));
    CU_ASSERT_EQUAL(out.len, 0); /* unchanged */
    CU_ASSERT_PTR_NULL(tw__dapper_log_encoder_new(NULL));
    tw__span_data_unref(s);
    tw__dapper_log_encoder_free(enc);
    tw__dapper_log_encoder_free(NULL);
    tw__buf_free(&out);
}

/* ---- decoding what other writers write ---------------------------------------------------- */

static tw__span_data *decode_ok(const char *line, tw__process *process)
{
    tw__span_data *span = NULL;
    tw_error *err = NULL;
    tw_status st = tw__dapper_log_decode(line, strlen(line), 1, &span, process, &err);
    if (st != TW_OK)
        fprintf(stderr, "unexpected: %s\n", tw_error_message(err));
    CU_ASSERT_EQUAL_FATAL(st, TW_OK);
    return span;
}

static void test_tolerant_forms_of_other_writers_are_read(void)
{
    /* Upper-case and short ids, int64 as a decimal string, a float64 as an
     * integer, an empty tag key, no flags, kind only in the annotations, a plain annotation, a
     * process with host/ip members but no tags, CRLF line end. */
    const char *line =
        "{\"v\":1,\"trace_id\":\"ABC\",\"span_id\":\"1F\",\"parent_id\":\"0\",\"name\":\"rpc\","
        "\"start_us\":10,\"end_us\":30,"
        "\"annotations\":[{\"ts_us\":10,\"value\":\"sr\"},{\"ts_us\":20,\"value\":\"cache miss\"},"
        "{\"ts_us\":30,\"value\":\"ss\"}],"
        "\"tags\":[{\"key\":\"n\",\"type\":\"int64\",\"value\":\"-42\"},"
        "{\"key\":\"x\",\"type\":\"float64\",\"value\":2},"
        "{\"key\":\"\",\"type\":\"bool\",\"value\":true}],"
        "\"future_member\":{\"ignored\":true},"
        "\"process\":{\"service\":\"legacy\",\"host\":\"h1\",\"ip\":\"192.0.2.1\"}}\r\n";
    tw__process p;
    tw__span_data *s = decode_ok(line, &p);
    CU_ASSERT_EQUAL(s->trace_id_high, 0);
    CU_ASSERT_EQUAL(s->trace_id_low, 0xabc);
    CU_ASSERT_EQUAL(s->span_id, 0x1f);
    CU_ASSERT_EQUAL(s->parent_id, 0); /* "0": a root */
    CU_ASSERT_EQUAL(s->flags, TW__FLAG_SAMPLED);
    CU_ASSERT_EQUAL(s->start_us, 10);
    CU_ASSERT_EQUAL(s->duration_us, 20);
    const tw__tag *t = tw__span_data_find_tag(s, "n");
    CU_ASSERT(t && t->type == TW_VALUE_INT64 && t->v.i64 == -42);
    t = tw__span_data_find_tag(s, "x");
    CU_ASSERT(t && t->type == TW_VALUE_DOUBLE && t->v.dbl == 2.0);
    t = tw__span_data_find_tag(s, ""); /* an empty key, as the SDK may write one */
    CU_ASSERT(t && t->type == TW_VALUE_BOOL && t->v.boolean);
    t = tw__span_data_find_tag(s, "span.kind");
    CU_ASSERT(t && t->type == TW_VALUE_STRING && strcmp(t->v.str, "server") == 0);
    CU_ASSERT_EQUAL_FATAL(s->n_logs, 1);
    CU_ASSERT_EQUAL(s->logs[0].timestamp_us, 20);
    CU_ASSERT_STRING_EQUAL(s->logs[0].fields[0].key, "event");
    CU_ASSERT_STRING_EQUAL(s->logs[0].fields[0].v.str, "cache miss");
    CU_ASSERT_STRING_EQUAL(p.service_name, "legacy");
    t = tw__process_find_tag(&p, "hostname");
    CU_ASSERT(t && strcmp(t->v.str, "h1") == 0);
    t = tw__process_find_tag(&p, "ip");
    CU_ASSERT(t && strcmp(t->v.str, "192.0.2.1") == 0);
    tw__span_data_unref(s);
    tw__process_clear(&p);
}

static void test_client_and_server_halves_share_a_span_id(void)
{
    /* Dapper and Zipkin v1: the two halves of one RPC, logged on two hosts
     * under one span id; each decodes on its own, kind telling them apart. */
    const char *client = "{\"v\":1,\"trace_id\":\"aa\",\"span_id\":\"bb\",\"parent_id\":\"cc\","
                         "\"name\":\"get\",\"kind\":\"client\",\"start_us\":100,\"end_us\":200,"
                         "\"process\":{\"service\":\"front\",\"host\":\"a\"}}";
    const char *server = "{\"v\":1,\"trace_id\":\"aa\",\"span_id\":\"bb\",\"parent_id\":\"cc\","
                         "\"name\":\"get\",\"kind\":\"server\",\"start_us\":120,\"end_us\":180,"
                         "\"process\":{\"service\":\"back\",\"host\":\"b\"}}";
    tw__process pc, ps;
    tw__span_data *c = decode_ok(client, &pc);
    tw__span_data *s = decode_ok(server, &ps);
    CU_ASSERT_EQUAL(c->span_id, s->span_id);
    CU_ASSERT_STRING_EQUAL(tw__span_data_find_tag(c, "span.kind")->v.str, "client");
    CU_ASSERT_STRING_EQUAL(tw__span_data_find_tag(s, "span.kind")->v.str, "server");
    CU_ASSERT_STRING_EQUAL(pc.service_name, "front");
    CU_ASSERT_STRING_EQUAL(ps.service_name, "back");
    tw__span_data_unref(c);
    tw__span_data_unref(s);
    tw__process_clear(&pc);
    tw__process_clear(&ps);
}

/* ---- malformed records -------------------------------------------------------------------- */

#define HEAD                                                                                       \
    "{\"v\":1,\"trace_id\":\"1\",\"span_id\":\"2\",\"name\":\"n\",\"start_us\":1,\"end_us\":2,"
#define PROC "\"process\":{\"service\":\"s\"}"

static void test_malformed_records_name_line_and_reason(void)
{
    static const struct {
        const char *line;
        const char *reason; /* after "line 7: " */
    } cases[] = {
        {"", "not a JSON object"},
        {"not json", "not a JSON object"},
        {"[1,2]", "the record is not a JSON object"},
        {"{\"trace_id\":\"1\"}", "v (the format version) is missing"},
        {"{\"v\":\"1\"}", "v is not an integer"},
        {"{\"v\":2}", "format version 2 is not supported"},
        {"{\"v\":1,\"trace_id\":\"xyz\"}", "trace_id is not 1 to 32 hex digits"},
        {"{\"v\":1,\"trace_id\":\"123456789012345678901234567890123\"}",
         "trace_id is not 1 to 32 hex digits"},
        {"{\"v\":1,\"trace_id\":\"000\",\"span_id\":\"1\"}", "trace_id is all zeros"},
        {"{\"v\":1,\"trace_id\":\"1\"}", "span_id is missing"},
        {"{\"v\":1,\"trace_id\":\"1\",\"span_id\":\"0\"}", "span_id is all zeros"},
        {"{\"v\":1,\"trace_id\":\"1\",\"span_id\":\"2\",\"parent_id\":\"2\"}",
         "parent_id equals span_id"},
        {"{\"v\":1,\"trace_id\":\"1\",\"span_id\":\"2\",\"name\":\"a\\u0000b\"}",
         "name contains a NUL character"},
        {"{\"v\":1,\"trace_id\":\"1\",\"span_id\":\"2\",\"name\":\"n\",\"start_us\":5,"
         "\"end_us\":4}",
         "end_us is before start_us"},
        {"{\"v\":1,\"trace_id\":\"1\",\"span_id\":\"2\",\"name\":\"n\",\"start_us\":1.5}",
         "start_us is not an integer"},
        {"{\"v\":1,\"trace_id\":\"1\",\"span_id\":\"2\",\"start_us\":1}", "name is missing"},
        {"{\"v\":1,\"trace_id\":\"1\",\"span_id\":\"2\",\"name\":\"n\",\"start_us\":1}",
         "end_us is missing"},
        {HEAD "\"flags\":-1," PROC "}", "flags is not between 0 and 4294967295"},
        {HEAD "\"tags\":{}," PROC "}", "tags is not an array"},
        {HEAD "\"tags\":[{\"key\":\"k\",\"type\":\"date\",\"value\":1}]," PROC "}",
         "tags[0].type is not one of string, bool, int64, float64, binary"},
        {HEAD "\"tags\":[{\"key\":\"k\\u0000\",\"type\":\"bool\",\"value\":true}]," PROC "}",
         "tags[0].key contains a NUL character"},
        {HEAD "\"tags\":[{\"key\":\"k\",\"type\":\"binary\",\"value\":\"abc\"}]," PROC "}",
         "tags[0].value is not base64"},
        {HEAD "\"tags\":[{\"key\":\"k\",\"type\":\"int64\",\"value\":1.5}]," PROC "}",
         "tags[0].value is not an int64"},
        {HEAD
         "\"tags\":[{\"key\":\"k\",\"type\":\"int64\",\"value\":\"99999999999999999999\"}]," PROC
         "}",
         "tags[0].value is not an int64"},
        {HEAD "\"tags\":[{\"key\":\"k\",\"type\":\"float64\",\"value\":\"nan\"}]," PROC "}",
         "tags[0].value is not a float64"},
        {HEAD "\"tags\":[{\"key\":\"k\",\"type\":\"string\"}]," PROC "}",
         "tags[0].value is missing"},
        {HEAD
         "\"logs\":[{\"ts_us\":1,\"fields\":[{\"key\":\"k\",\"type\":\"bool\",\"value\":1}]}]," PROC
         "}",
         "logs[0].fields[0].value is not a bool"},
        {HEAD "\"logs\":[{\"fields\":[]}]," PROC "}", "logs[0].ts_us is missing"},
        {HEAD "\"kind\":\"rpc\"," PROC "}",
         "kind is not one of client, server, producer, consumer"},
        {HEAD "\"kind\":\"client\",\"annotations\":[{\"ts_us\":1,\"value\":\"sr\"}]," PROC "}",
         "the annotations are those of a server span but kind is client"},
        {HEAD
         "\"annotations\":[{\"ts_us\":1,\"value\":\"cs\"},{\"ts_us\":1,\"value\":\"sr\"}]," PROC
         "}",
         "annotations[1].value \"sr\" belongs to a server span"},
        {HEAD "\"kind\":\"server\",\"tags\":[{\"key\":\"span.kind\",\"type\":\"string\","
              "\"value\":\"client\"}]," PROC "}",
         "kind server contradicts the span.kind tag"},
        {HEAD "\"refs\":[{\"type\":\"parent\",\"trace_id\":\"1\",\"span_id\":\"1\"}]," PROC "}",
         "refs[0].type is neither child_of nor follows_from"},
        {HEAD "\"refs\":[{\"type\":\"child_of\",\"trace_id\":\"1\"}]," PROC "}",
         "refs[0].span_id is missing"},
        {HEAD "\"name\":\"twice\"," PROC "}", "not a JSON object: duplicate object key"},
        {HEAD "\"x\":1}", "process is missing"},
        {HEAD "\"process\":{}}", "process.service is missing"},
        {HEAD "\"process\":{\"service\":\"s\",\"tags\":[{\"key\":\"k\",\"type\":\"string\","
              "\"value\":false}]}}",
         "process.tags[0].value is not a string"},
        {HEAD "\"process\":{\"service\":\"s\",\"host\":7}}", "process.host is not a string"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tw__span_data *span = (tw__span_data *)&span; /* must stay untouched */
        tw__process process;
        tw_error *err = NULL;
        tw_status st =
            tw__dapper_log_decode(cases[i].line, strlen(cases[i].line), 7, &span, &process, &err);
        char want[256];
        snprintf(want, sizeof want, "line 7: %s", cases[i].reason);
        bool is_match = st == TW_E_MALFORMED && err && tw_error_status(err) == TW_E_MALFORMED &&
                        strncmp(tw_error_message(err), want, strlen(want)) == 0;
        if (!is_match)
            fprintf(stderr, "case %zu: want \"%s\", got \"%s\"\n", i, want,
                    err ? tw_error_message(err) : "(no error)");
        CU_ASSERT(is_match);
        CU_ASSERT_PTR_EQUAL(span, (tw__span_data *)&span);
        /* Control flow never depends on err: the same result without it. */
        CU_ASSERT_EQUAL(
            tw__dapper_log_decode(cases[i].line, strlen(cases[i].line), 7, &span, &process, NULL),
            st);
        tw_error_free(err);
    }
}

static void test_decode_refuses_null_arguments(void)
{
    tw__span_data *span = NULL;
    tw__process p;
    tw_error *err = NULL;
    CU_ASSERT_EQUAL(tw__dapper_log_decode(NULL, 0, 3, &span, &p, &err), TW_E_MALFORMED);
    CU_ASSERT_PTR_NOT_NULL(err);
    tw_error_free(err);
    CU_ASSERT_EQUAL(tw__dapper_log_decode("{}", 2, 3, NULL, &p, NULL), TW_E_MALFORMED);
    CU_ASSERT_PTR_NULL(span);
}

/* ---- the line reader ---------------------------------------------------------------------- */

static void test_reader_skips_blank_reports_bad_and_goes_on(void)
{
    tw__span_data *span = tw_test_span_every_field();
    char *good = encode_line(&process_with_host, span);
    tw__span_data_unref(span);
    FILE *f = tmpfile();
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char longer[5000];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    /* line 1 good, 2 blank, 3 bad, 4 a NUL byte inside, 5 too long (limit
     * below), 6 good without a final newline. */
    fputs(good, f);
    fputs("  \r\n", f);
    fputs("{\"v\":1}\n", f);
    fwrite("{\"v\":1\0}\n", 1, 9, f);
    fprintf(f, "%s\n", longer);
    fwrite(good, 1, strlen(good) - 1, f);
    rewind(f);
    tw__dapper_log_reader *r = tw__dapper_log_reader_new(f, strlen(good) + 10);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    tw__span_data *got;
    tw__process p;
    tw_error *err = NULL;
    CU_ASSERT_EQUAL(tw__dapper_log_reader_next(r, &got, &p, &err), TW_OK);
    CU_ASSERT_EQUAL(tw__dapper_log_reader_line(r), 1);
    tw__span_data_unref(got);
    tw__process_clear(&p);
    CU_ASSERT_EQUAL(tw__dapper_log_reader_next(r, &got, &p, &err), TW_E_MALFORMED);
    CU_ASSERT(err && strncmp(tw_error_message(err), "line 3: trace_id is missing", 27) == 0);
    tw_error_free(err);
    err = NULL;
    CU_ASSERT_EQUAL(tw__dapper_log_reader_next(r, &got, &p, &err), TW_E_MALFORMED);
    CU_ASSERT(err && strncmp(tw_error_message(err), "line 4: not a JSON object", 25) == 0);
    tw_error_free(err);
    err = NULL;
    CU_ASSERT_EQUAL(tw__dapper_log_reader_next(r, &got, &p, &err), TW_E_MALFORMED);
    CU_ASSERT(err && strncmp(tw_error_message(err), "line 5: longer than", 19) == 0);
    tw_error_free(err);
    err = NULL;
    CU_ASSERT_EQUAL(tw__dapper_log_reader_next(r, &got, &p, &err), TW_OK);
    CU_ASSERT_EQUAL(tw__dapper_log_reader_line(r), 6);
    tw__span_data_unref(got);
    tw__process_clear(&p);
    CU_ASSERT_EQUAL(tw__dapper_log_reader_next(r, &got, &p, &err), TW_E_NOT_FOUND);
    CU_ASSERT_PTR_NULL(err);
    tw__dapper_log_reader_free(r);
    tw__dapper_log_reader_free(NULL);
    CU_ASSERT_PTR_NULL(tw__dapper_log_reader_new(NULL, 0));
    fclose(f);
    free(good);
}

/* The differential guard of the direct encoder: for every span of a large
 * random corpus (every tag type, NaN and infinities, big ints, invalid
 * UTF-8 and NUL bytes, kinds with their RPC annotations, refs, empty logs,
 * many tags, times at their edges), with its process, the line written
 * equals the reference Jansson encoder's line once both are parsed (doubles
 * are written in their shortest form instead of %.17g: equal values), in
 * key order, and decodes back to a record. */
#define N_RANDOM 6000

static void test_random_corpus_equals_the_jansson_oracle(void)
{
    size_t differing = 0;
    const size_t rounds = tw_test_rounds(N_RANDOM);
    for (size_t i = 0; i < rounds; i++) {
        tw__process p;
        bool has_process = false;
        tw__span_data *s = corpus_span(13, i, &p, &has_process, CORPUS_INVALID_KEYS);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        tw__dapper_log_encoder *enc = tw__dapper_log_encoder_new(&p);
        oracle_dapper_encoder *ref = oracle_dapper_encoder_new(&p);
        CU_ASSERT_FATAL(enc && ref);
        tw__buf ours = {0}, theirs = {0};
        bool ok = tw__dapper_log_encode_span(enc, s, &ours);
        bool ref_ok = oracle_dapper_encode_span(ref, s, &theirs);
        bool same = ok == ref_ok;
        if (same && ok) {
            json_t *a = json_loadb((const char *)ours.data, ours.len, JSON_ALLOW_NUL, NULL);
            json_t *b = json_loadb((const char *)theirs.data, theirs.len, JSON_ALLOW_NUL, NULL);
            char *da = a ? json_dumps(a, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
            char *db = b ? json_dumps(b, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
            same = a && b && json_equal(a, b) && da && db && strcmp(da, db) == 0 &&
                   ours.data[ours.len - 1] == '\n' && !memchr(ours.data, '\n', ours.len - 1);
            if (!same && differing < 3)
                fprintf(stderr, "\nspan %zu differs:\n oracle: %s\n direct: %.*s\n", i,
                        db ? db : "-", (int)ours.len, (const char *)ours.data);
            free(da);
            free(db);
            json_decref(a);
            json_decref(b);
            tw__span_data *back = NULL;
            tw__process back_p;
            tw_error *err = NULL;
            if (same && tw__dapper_log_decode((const char *)ours.data, ours.len, 1, &back, &back_p,
                                              &err) == TW_OK) {
                same = back->span_id == s->span_id && back->start_us == s->start_us &&
                       back->duration_us == s->duration_us && back->n_logs == s->n_logs &&
                       back->n_refs == s->n_refs;
                tw__span_data_unref(back);
                tw__process_clear(&back_p);
            } else if (same) {
                /* Records the decoder refuses (an empty key) are the corpus's, not ours. */
                same = err != NULL;
            }
            tw_error_free(err);
        }
        if (!same)
            differing++;
        tw__buf_free(&ours);
        tw__buf_free(&theirs);
        tw__dapper_log_encoder_free(enc);
        oracle_dapper_encoder_free(ref);
        tw__span_data_unref(s);
        tw__process_clear(&p);
    }
    CU_ASSERT_EQUAL(differing, 0);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("wire/dapper_log", suite_init, suite_cleanup);
    CU_add_test(suite, "random_corpus_equals_the_jansson_oracle",
                test_random_corpus_equals_the_jansson_oracle);
    CU_add_test(suite, "every_field_and_value_type_round_trips",
                test_every_field_and_value_type_round_trips);
    CU_add_test(suite, "root_64bit_span_with_empty_name_round_trips",
                test_root_64bit_span_with_empty_name_round_trips);
    CU_add_test(suite, "line_is_canonical_json", test_line_is_canonical_json);
    CU_add_test(suite, "rpc_annotations_follow_kind_and_timing",
                test_rpc_annotations_follow_kind_and_timing);
    CU_add_test(suite, "invalid_utf8_is_replaced_not_fatal",
                test_invalid_utf8_is_replaced_not_fatal);
    CU_add_test(suite, "encoder_refuses_null_and_overflowing_spans",
                test_encoder_refuses_null_and_overflowing_spans);
    CU_add_test(suite, "tolerant_forms_of_other_writers_are_read",
                test_tolerant_forms_of_other_writers_are_read);
    CU_add_test(suite, "client_and_server_halves_share_a_span_id",
                test_client_and_server_halves_share_a_span_id);
    CU_add_test(suite, "malformed_records_name_line_and_reason",
                test_malformed_records_name_line_and_reason);
    CU_add_test(suite, "decode_refuses_null_arguments", test_decode_refuses_null_arguments);
    CU_add_test(suite, "reader_skips_blank_reports_bad_and_goes_on",
                test_reader_skips_blank_reports_bad_and_goes_on);
}
