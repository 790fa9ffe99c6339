/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/wire/test_otlp_json.c: suite "wire/otlp_json", the contract of
 * the OTLP/JSON encoder (sdk/wire/otlp/otlp_json.h), and its differential
 * guard against the Jansson encoder it replaced (oracle_otlp.c).
 *
 * Spans built through the model API are encoded into a whole
 * ExportTraceServiceRequest, parsed back with Jansson (duplicate keys
 * rejected) and compared key by key: the envelope (resource attributes,
 * scope), ids in hex, kind numbers, times as decimal strings of
 * nanoseconds, typed attributes (int64 as strings, non-finite doubles as
 * strings, bytes as base64), events from logs, links from references other
 * than the parent, and the status rules. tests/interop/http/ decodes the
 * same output with the protobuf classes generated from opentelemetry-proto.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <jansson.h>

#include "harness.h"
#include "span_builder.h"
#include "tracewire/tracewire.h"
#include "oracle.h"
#include "span_corpus.h"
#include "wire/otlp/otlp_json.h"

static tw__process process_tagged; /* service "frontend", hostname, ip, an int tag */
static tw__span_data *span_every_field;
static tw__span_data *span_root_64bit;

static int suite_init(void)
{
    tw__process_init(&process_tagged);
    tw_value host = tw_test_str("host-1");
    tw_value ip = tw_test_str("192.168.1.10");
    tw_value workers = tw_test_i64(8);
    tw_value service = tw_test_str("ignored");
    if (!tw__process_set_service(&process_tagged, "frontend") ||
        !tw__process_add_tag(&process_tagged, "hostname", &host) ||
        !tw__process_add_tag(&process_tagged, "ip", &ip) ||
        !tw__process_add_tag(&process_tagged, "workers", &workers) ||
        !tw__process_add_tag(&process_tagged, "service.name", &service))
        return 1;
    span_every_field = tw_test_span_every_field();
    span_root_64bit = tw_test_span_root_64bit();
    return span_every_field && span_root_64bit ? 0 : 1;
}

static int suite_cleanup(void)
{
    tw__span_data_unref(span_every_field);
    tw__span_data_unref(span_root_64bit);
    tw__process_clear(&process_tagged);
    return 0;
}

static tw__span_data *span_child(void)
{
    tw__span_data *s = tw__span_data_new();
    if (!s)
        return NULL;
    s->trace_id_high = 0x0af7651916cd43ddu;
    s->trace_id_low = 0x8448eb211c80319cu;
    s->span_id = 0xb7ad6b7169203331u;
    s->parent_id = 0x00f067aa0ba902b7u;
    s->flags = TW__FLAG_SAMPLED;
    s->start_us = 1700000000000000;
    s->duration_us = 1500;
    tw__span_data_set_operation(s, "GET /users", strlen("GET /users"));
    return s;
}

/* Encodes a one-span request, parses it back and returns the document (new
 * reference); *span_out is the span object inside it (borrowed). */
static json_t *round_trip(const tw__span_data *s, const tw__process *p, json_t **span_out)
{
    tw__buf out;
    tw__buf_init(&out);
    tw__span_data *list[1] = {(tw__span_data *)s};
    json_t *doc = NULL;
    *span_out = NULL;
    if (tw__otlp_encode_request(list, 1, p, &out)) {
        json_error_t error;
        doc = json_loadb((const char *)out.data, out.len, JSON_REJECT_DUPLICATES, &error);
        CU_ASSERT_PTR_NOT_NULL(doc);
        json_t *spans = json_object_get(
            json_array_get(json_object_get(json_array_get(json_object_get(doc, "resourceSpans"), 0),
                                           "scopeSpans"),
                           0),
            "spans");
        CU_ASSERT_EQUAL(json_array_size(spans), 1);
        *span_out = json_array_get(spans, 0);
    }
    tw__buf_free(&out);
    return doc;
}

static const char *str_at(json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

/* The value object of attribute @key in the list @attrs, or NULL. */
static json_t *attr(json_t *attrs, const char *key)
{
    size_t i;
    json_t *kv;
    json_array_foreach(attrs, i, kv)
    {
        const char *k = str_at(kv, "key");
        if (k && strcmp(k, key) == 0)
            return json_object_get(kv, "value");
    }
    return NULL;
}

#define ASSERT_STR(actual, expected)                                                               \
    do {                                                                                           \
        const char *a_ = (actual);                                                                 \
        CU_ASSERT_PTR_NOT_NULL(a_);                                                                \
        if (a_)                                                                                    \
            CU_ASSERT_STRING_EQUAL(a_, expected);                                                  \
    } while (0)

static void test_envelope_has_resource_and_scope(void)
{
    json_t *span;
    json_t *doc = round_trip(span_root_64bit, &process_tagged, &span);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    CU_ASSERT_EQUAL(json_object_size(doc), 1);
    json_t *rs = json_array_get(json_object_get(doc, "resourceSpans"), 0);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(doc, "resourceSpans")), 1);
    json_t *attrs = json_object_get(json_object_get(rs, "resource"), "attributes");
    CU_ASSERT_EQUAL(json_array_size(attrs), 4); /* service.name, host.name, ip, workers */
    ASSERT_STR(str_at(json_object_get(json_array_get(attrs, 0), "value"), "stringValue"),
               "frontend");
    ASSERT_STR(str_at(json_array_get(attrs, 0), "key"), "service.name");
    ASSERT_STR(str_at(attr(attrs, "host.name"), "stringValue"), "host-1");
    CU_ASSERT_PTR_NULL(attr(attrs, "hostname"));
    ASSERT_STR(str_at(attr(attrs, "ip"), "stringValue"), "192.168.1.10");
    ASSERT_STR(str_at(attr(attrs, "workers"), "intValue"), "8");
    json_t *ss = json_array_get(json_object_get(rs, "scopeSpans"), 0);
    json_t *scope = json_object_get(ss, "scope");
    ASSERT_STR(str_at(scope, "name"), "tracewire");
    ASSERT_STR(str_at(scope, "version"), tw_version());
    json_decref(doc);

    /* No process: an empty resource. */
    doc = round_trip(span_root_64bit, NULL, &span);
    rs = json_array_get(json_object_get(doc, "resourceSpans"), 0);
    CU_ASSERT_EQUAL(json_object_size(json_object_get(rs, "resource")), 0);
    json_decref(doc);
}

static void test_every_field_maps_key_by_key(void)
{
    json_t *span;
    json_t *doc = round_trip(span_every_field, &process_tagged, &span);
    CU_ASSERT_PTR_NOT_NULL_FATAL(span);
    ASSERT_STR(str_at(span, "traceId"), "8000000000000001ffffffffffffffff");
    ASSERT_STR(str_at(span, "spanId"), "8000000000000000");
    ASSERT_STR(str_at(span, "parentSpanId"), "7fffffffffffffff");
    ASSERT_STR(str_at(span, "name"), span_every_field->operation);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(span, "kind")), 1);
    ASSERT_STR(str_at(span, "startTimeUnixNano"), "1700000000123456000");
    ASSERT_STR(str_at(span, "endTimeUnixNano"), "1700000001111110000");

    json_t *attrs = json_object_get(span, "attributes");
    CU_ASSERT_EQUAL(json_array_size(attrs), 12); /* 13 tags, error went to the status */
    ASSERT_STR(str_at(attr(attrs, "http.url"), "stringValue"), "https://example.com/a?b=c");
    ASSERT_STR(str_at(attr(attrs, "empty"), "stringValue"), "");
    CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_object_get(attr(attrs, "pi"), "doubleValue")),
                           3.141592653589793, 0);
    json_t *negative_zero = json_object_get(attr(attrs, "negative_zero"), "doubleValue");
    CU_ASSERT(json_is_real(negative_zero) && signbit(json_real_value(negative_zero)));
    ASSERT_STR(str_at(attr(attrs, "infinity"), "doubleValue"), "Infinity");
    ASSERT_STR(str_at(attr(attrs, "nan"), "doubleValue"), "NaN");
    CU_ASSERT(json_is_false(json_object_get(attr(attrs, "cache.hit"), "boolValue")));
    ASSERT_STR(str_at(attr(attrs, "min"), "intValue"), "-9223372036854775808");
    ASSERT_STR(str_at(attr(attrs, "max"), "intValue"), "9223372036854775807");
    ASSERT_STR(str_at(attr(attrs, "minus_one"), "intValue"), "-1");
    ASSERT_STR(str_at(attr(attrs, "blob"), "bytesValue"), "AP8QAH8=");
    ASSERT_STR(str_at(attr(attrs, "empty_blob"), "bytesValue"), "");
    CU_ASSERT_PTR_NULL(attr(attrs, "error"));

    json_t *status = json_object_get(span, "status");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(status, "code")), 2);
    CU_ASSERT_PTR_NULL(json_object_get(status, "message")); /* no error log */

    json_t *events = json_object_get(span, "events");
    CU_ASSERT_EQUAL_FATAL(json_array_size(events), 3);
    json_t *retry = json_array_get(events, 0);
    ASSERT_STR(str_at(retry, "timeUnixNano"), "1700000000200000000");
    ASSERT_STR(str_at(retry, "name"), "retry");
    json_t *retry_attrs = json_object_get(retry, "attributes");
    CU_ASSERT_EQUAL(json_array_size(retry_attrs), 2);
    ASSERT_STR(str_at(attr(retry_attrs, "attempt"), "intValue"), "3");
    CU_ASSERT_DOUBLE_EQUAL(
        json_real_value(json_object_get(attr(retry_attrs, "delay_s"), "doubleValue")), 0.25, 0);
    json_t *empty = json_array_get(events, 1);
    CU_ASSERT_EQUAL(json_object_size(empty), 1); /* only its time */
    json_t *odd = json_array_get(events, 2);
    CU_ASSERT_PTR_NULL(json_object_get(odd, "name"));
    ASSERT_STR(str_at(attr(json_object_get(odd, "attributes"), "payload"), "bytesValue"),
               "AP8QAH8=");

    /* The ChildOf reference is the parent; the FollowsFrom one is a link. */
    json_t *links = json_object_get(span, "links");
    CU_ASSERT_EQUAL_FATAL(json_array_size(links), 1);
    json_t *link = json_array_get(links, 0);
    ASSERT_STR(str_at(link, "traceId"), "00000000000000000000000000001234");
    ASSERT_STR(str_at(link, "spanId"), "fedcba9876543210");
    ASSERT_STR(
        str_at(attr(json_object_get(link, "attributes"), "opentracing.ref_type"), "stringValue"),
        "follows_from");
    json_decref(doc);
}

static void test_64bit_root(void)
{
    json_t *span;
    json_t *doc = round_trip(span_root_64bit, NULL, &span);
    CU_ASSERT_PTR_NOT_NULL_FATAL(span);
    ASSERT_STR(str_at(span, "traceId"), "000000000000000000000000075bcd15");
    ASSERT_STR(str_at(span, "spanId"), "00000000075bcd15");
    CU_ASSERT_PTR_NULL(json_object_get(span, "parentSpanId"));
    ASSERT_STR(str_at(span, "name"), "");
    ASSERT_STR(str_at(span, "startTimeUnixNano"), "1000");
    ASSERT_STR(str_at(span, "endTimeUnixNano"), "1000");
    CU_ASSERT_PTR_NULL(json_object_get(span, "attributes"));
    CU_ASSERT_PTR_NULL(json_object_get(span, "events"));
    CU_ASSERT_PTR_NULL(json_object_get(span, "links"));
    CU_ASSERT_PTR_NULL(json_object_get(span, "status"));
    json_decref(doc);
}

static void test_span_kind_numbers(void)
{
    static const struct {
        const char *tag;
        int kind;
        bool is_kept; /* the tag stays an attribute */
    } cases[] = {{"server", 2, false},   {"client", 3, false},   {"producer", 4, false},
                 {"consumer", 5, false}, {"internal", 1, false}, {"Client", 3, false},
                 {"weird", 1, true}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tw__span_data *s = span_child();
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        CU_ASSERT_FATAL(tw_test_add_tag(s, "span.kind", tw_test_str(cases[i].tag)));
        json_t *span;
        json_t *doc = round_trip(s, NULL, &span);
        CU_ASSERT_EQUAL(json_integer_value(json_object_get(span, "kind")), cases[i].kind);
        json_t *kept = attr(json_object_get(span, "attributes"), "span.kind");
        CU_ASSERT_EQUAL(kept != NULL, cases[i].is_kept);
        json_decref(doc);
        tw__span_data_unref(s);
    }
}

static void test_status_rules(void)
{
    static const struct {
        const char *key1;
        tw_value v1;
        const char *key2; /* NULL: one tag */
        tw_value v2;
        bool has_error_log;
        int code;            /* 0: no status */
        const char *message; /* NULL: none */
        const char *kept;    /* an attribute that must remain, or NULL */
    } cases[] = {
        {"error", {.type = TW_VALUE_BOOL, .as.boolean = true}, NULL, {0}, true, 2, "boom", NULL},
        {"error", {.type = TW_VALUE_BOOL, .as.boolean = false}, NULL, {0}, true, 0, NULL, NULL},
        {"error",
         {.type = TW_VALUE_STRING, .len = 7, .as.str = "timeout"},
         NULL,
         {0},
         false,
         2,
         "timeout",
         NULL},
        {"otel.status_code",
         {.type = TW_VALUE_STRING, .len = 2, .as.str = "OK"},
         NULL,
         {0},
         false,
         1,
         NULL,
         NULL},
        {"otel.status_code",
         {.type = TW_VALUE_STRING, .len = 5, .as.str = "error"},
         "otel.status_description",
         {.type = TW_VALUE_STRING, .len = 4, .as.str = "bad!"},
         false,
         2,
         "bad!",
         NULL},
        {"otel.status_code",
         {.type = TW_VALUE_STRING, .len = 5, .as.str = "maybe"},
         NULL,
         {0},
         false,
         0,
         NULL,
         "otel.status_code"},
        {"error",
         {.type = TW_VALUE_BOOL, .as.boolean = true},
         "otel.status_code",
         {.type = TW_VALUE_STRING, .len = 2, .as.str = "OK"},
         false,
         2,
         NULL,
         "otel.status_code"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tw__span_data *s = span_child();
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        CU_ASSERT_FATAL(tw_test_add_tag(s, cases[i].key1, cases[i].v1));
        if (cases[i].key2)
            CU_ASSERT_FATAL(tw_test_add_tag(s, cases[i].key2, cases[i].v2));
        if (cases[i].has_error_log) {
            const tw_test_field fields[] = {{"event", tw_test_str("error")},
                                            {"message", tw_test_str("boom")}};
            CU_ASSERT_FATAL(tw_test_add_log(s, s->start_us + 1, fields, 2));
        }
        json_t *span;
        json_t *doc = round_trip(s, NULL, &span);
        json_t *status = json_object_get(span, "status");
        if (cases[i].code) {
            CU_ASSERT_EQUAL(json_integer_value(json_object_get(status, "code")), cases[i].code);
        } else {
            CU_ASSERT_PTR_NULL(status);
        }
        if (cases[i].message)
            ASSERT_STR(str_at(status, "message"), cases[i].message);
        else
            CU_ASSERT_PTR_NULL(json_object_get(status, "message"));
        json_t *attrs = json_object_get(span, "attributes");
        CU_ASSERT_PTR_NULL(attr(attrs, "error"));
        CU_ASSERT_EQUAL(json_array_size(attrs), cases[i].kept ? 1 : 0);
        if (cases[i].kept)
            CU_ASSERT_PTR_NOT_NULL(attr(attrs, cases[i].kept));
        json_decref(doc);
        tw__span_data_unref(s);
    }
}

static void test_links_skip_only_the_parent_reference(void)
{
    tw__span_data *s = span_child();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    /* A FollowsFrom-only span: its parent comes from that reference. */
    CU_ASSERT_FATAL(tw__span_data_add_ref(s, TW__REF_FOLLOWS_FROM, s->trace_id_high,
                                          s->trace_id_low, s->parent_id));
    json_t *span;
    json_t *doc = round_trip(s, NULL, &span);
    CU_ASSERT_PTR_NULL(json_object_get(span, "links"));
    json_decref(doc);
    /* A second ChildOf (another trace) and the same parent id twice. */
    CU_ASSERT_FATAL(tw__span_data_add_ref(s, TW__REF_CHILD_OF, 0, 77, 88) &&
                    tw__span_data_add_ref(s, TW__REF_CHILD_OF, s->trace_id_high, s->trace_id_low,
                                          s->parent_id));
    doc = round_trip(s, NULL, &span);
    json_t *links = json_object_get(span, "links");
    CU_ASSERT_EQUAL_FATAL(json_array_size(links), 2);
    json_t *other = json_array_get(links, 0);
    ASSERT_STR(str_at(other, "traceId"), "0000000000000000000000000000004d");
    ASSERT_STR(str_at(other, "spanId"), "0000000000000058");
    ASSERT_STR(
        str_at(attr(json_object_get(other, "attributes"), "opentracing.ref_type"), "stringValue"),
        "child_of");
    ASSERT_STR(str_at(json_array_get(links, 1), "spanId"), "00f067aa0ba902b7");
    json_decref(doc);
    tw__span_data_unref(s);
}

static void test_repeated_keys_last_wins(void)
{
    tw__span_data *s = span_child();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_FATAL(tw_test_add_tag(s, "k", tw_test_str("first")) &&
                    tw_test_add_tag(s, "other", tw_test_bool(true)) &&
                    tw_test_add_tag(s, "k", tw_test_dbl(1.5)));
    const tw_test_field fields[] = {
        {"event", tw_test_str("e")}, {"f", tw_test_i64(1)}, {"f", tw_test_i64(2)}};
    CU_ASSERT_FATAL(tw_test_add_log(s, s->start_us, fields, 3));
    json_t *span;
    json_t *doc = round_trip(s, NULL, &span);
    json_t *attrs = json_object_get(span, "attributes");
    CU_ASSERT_EQUAL(json_array_size(attrs), 2);
    CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_object_get(attr(attrs, "k"), "doubleValue")), 1.5,
                           0);
    json_t *ev_attrs =
        json_object_get(json_array_get(json_object_get(span, "events"), 0), "attributes");
    CU_ASSERT_EQUAL(json_array_size(ev_attrs), 1);
    ASSERT_STR(str_at(attr(ev_attrs, "f"), "intValue"), "2");
    json_decref(doc);
    tw__span_data_unref(s);
}

static void test_many_spans_share_one_envelope(void)
{
    tw__span_data *list[3] = {span_every_field, span_root_64bit, span_every_field};
    tw__buf out;
    tw__buf_init(&out);
    CU_ASSERT_FATAL(tw__otlp_encode_request(list, 3, &process_tagged, &out));
    json_t *doc = json_loadb((const char *)out.data, out.len, JSON_REJECT_DUPLICATES, NULL);
    json_t *spans = json_object_get(
        json_array_get(
            json_object_get(json_array_get(json_object_get(doc, "resourceSpans"), 0), "scopeSpans"),
            0),
        "spans");
    CU_ASSERT_EQUAL(json_array_size(spans), 3);
    json_decref(doc);
    tw__buf_free(&out);
}

/* Times near INT64_MAX: the end is never before the start (start + duration
 * overflowed: an end before the start), and nanoseconds saturate. */
static void test_times_near_int64_max_do_not_overflow(void)
{
    tw__span_data *s = tw_test_span_root_64bit();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    s->start_us = INT64_MAX - 5;
    s->duration_us = 10;
    json_t *span;
    json_t *doc = round_trip(s, NULL, &span);
    CU_ASSERT_PTR_NOT_NULL_FATAL(span);
    const char *start = json_string_value(json_object_get(span, "startTimeUnixNano"));
    const char *end = json_string_value(json_object_get(span, "endTimeUnixNano"));
    CU_ASSERT_FATAL(start && end);
    CU_ASSERT(strtoull(end, NULL, 10) >= strtoull(start, NULL, 10));
    CU_ASSERT_STRING_EQUAL(start, "18446744073709551615");
    json_decref(doc);
    tw__span_data_unref(s);
}

static void test_null_span_is_refused_and_output_kept(void)
{
    tw__buf out;
    tw__buf_init(&out);
    CU_ASSERT_FATAL(tw__buf_append(&out, "keep", 4));
    CU_ASSERT_FALSE(tw__otlp_encode_span(NULL, &out));
    tw__span_data *list[2] = {span_every_field, NULL};
    CU_ASSERT_FALSE(tw__otlp_encode_request(list, 2, NULL, &out));
    CU_ASSERT_EQUAL(out.len, 4);
    CU_ASSERT(memcmp(out.data, "keep", 4) == 0);
    tw__buf_free(&out);
}

/* The differential guard of the direct encoder: on a large random corpus
 * (every tag type, NaN and infinities, invalid UTF-8 in keys and values,
 * NUL bytes, repeated keys, every status rule, links, many tags, times at
 * their edges) the request it writes, parsed with Jansson, equals the tree
 * of the reference Jansson encoder (oracle_otlp.c), key order included. */
#define N_RANDOM 6000

static void test_random_corpus_equals_the_jansson_oracle(void)
{
    size_t differing = 0;
    const size_t rounds = tw_test_rounds(N_RANDOM);
    for (size_t i = 0; i < rounds; i++) {
        tw__process p;
        bool has_process = false;
        tw__span_data *s =
            corpus_span(11, i, &p, &has_process, CORPUS_INVALID_KEYS | CORPUS_EMPTY_KEYS);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        tw__span_data *list[2] = {s, s};
        size_t n = 1 + i % 2;
        tw__buf out;
        tw__buf_init(&out);
        CU_ASSERT_FATAL(tw__otlp_encode_request(list, n, has_process ? &p : NULL, &out));
        json_error_t error;
        json_t *got = json_loadb((const char *)out.data, out.len,
                                 JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &error);
        json_t *spans = NULL;
        json_t *expected = oracle_otlp_request_json(has_process ? &p : NULL, &spans);
        for (size_t k = 0; k < n; k++)
            json_array_append_new(spans, oracle_otlp_span_json(list[k]));
        bool same = got && expected && json_equal(got, expected);
        /* json_equal ignores key order: compare the dumps too. */
        char *a = got ? json_dumps(got, TW__JSON_FLAGS) : NULL;
        char *b = expected ? json_dumps(expected, TW__JSON_FLAGS) : NULL;
        same = same && a && b && strcmp(a, b) == 0;
        if (!same && differing++ < 3)
            fprintf(stderr, "\nspan %zu differs:\n oracle: %s\n direct: %s\n", i, b ? b : "-",
                    got ? a : error.text);
        free(a);
        free(b);
        json_decref(got);
        json_decref(expected);
        tw__buf_free(&out);
        tw__span_data_unref(s);
        tw__process_clear(&p);
    }
    CU_ASSERT_EQUAL(differing, 0);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("wire/otlp_json", suite_init, suite_cleanup);
    if (!suite)
        return;
    CU_ADD_TEST(suite, test_envelope_has_resource_and_scope);
    CU_ADD_TEST(suite, test_every_field_maps_key_by_key);
    CU_ADD_TEST(suite, test_64bit_root);
    CU_ADD_TEST(suite, test_span_kind_numbers);
    CU_ADD_TEST(suite, test_status_rules);
    CU_ADD_TEST(suite, test_links_skip_only_the_parent_reference);
    CU_ADD_TEST(suite, test_repeated_keys_last_wins);
    CU_ADD_TEST(suite, test_many_spans_share_one_envelope);
    CU_ADD_TEST(suite, test_null_span_is_refused_and_output_kept);
    CU_ADD_TEST(suite, test_times_near_int64_max_do_not_overflow);
    CU_ADD_TEST(suite, test_random_corpus_equals_the_jansson_oracle);
}
