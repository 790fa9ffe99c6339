/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/wire/test_zipkin_json.c: suite "wire/zipkin_json", the contract
 * of the Zipkin v2 JSON encoder (sdk/wire/zipkin/zipkin_v2_json.h).
 *
 * Spans are built through the model API (span_builder.c), encoded, the bytes
 * parsed back with Jansson's own parser (json_loadb, strict: rejects invalid
 * UTF-8 and duplicate keys are detected by the loader flag) and compared key
 * by key with the record. The mapping rules of the header are each checked:
 * ids, kind, duration rounding, endpoints from process and peer tags, tag
 * stringification, error tag rules, annotations, repeated keys, UTF-8
 * repair, and allocation failure at every step (Jansson's allocator is
 * swapped for one that fails on the n-th call). tests/interop/http/ checks
 * the same output against Zipkin's published OpenAPI schema. Two of the
 * encoder's fast helpers are held to their references here: the IPv4
 * measuring check (tw__ipv4_canonical_len against tw__ipv4_is_canonical)
 * and the SSE2 id writer (tw__json_hex64 against tw__hex_u64).
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
#include "wire/core/hex.h"
#include "wire/core/json_write.h"
#include "wire/model/conventions.h"
#include "wire/zipkin/zipkin_v2_json.h"

/* ---- fixtures --------------------------------------------------------------------------- */

static tw__process process_tagged; /* service "frontend", ip 192.168.1.10, hostname, version */
static tw__span_data *span_every_field;
static tw__span_data *span_root_64bit;

static int suite_init(void)
{
    tw__process_init(&process_tagged);
    tw_value ip = tw_test_str("192.168.1.10");
    tw_value host = tw_test_str("host-1");
    tw_value version = tw_test_str("C-0.1.0");
    if (!tw__process_set_service(&process_tagged, "frontend") ||
        !tw__process_add_tag(&process_tagged, "ip", &ip) ||
        !tw__process_add_tag(&process_tagged, "hostname", &host) ||
        !tw__process_add_tag(&process_tagged, "jaeger.version", &version))
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

/* A span with the ids of a typical child and the given tags added by the test. */
static tw__span_data *span_child(void)
{
    tw__span_data *s = tw__span_data_new();
    if (!s)
        return NULL;
    s->trace_id_low = 0x4bf92f3577b34da6u;
    s->span_id = 0x00f067aa0ba902b7u;
    s->parent_id = 0x53995c3f42cd8ad8u;
    s->flags = TW__FLAG_SAMPLED;
    s->start_us = 1700000000000000;
    s->duration_us = 1500;
    tw__span_data_set_operation(s, "get /users", strlen("get /users"));
    return s;
}

/* Encodes as a one-span list and parses the text back; returns the span
 * object (a new reference) or NULL. The text must be compact and strict. */
static json_t *round_trip(const tw__span_data *s, const tw__process *p)
{
    tw__buf out;
    tw__buf_init(&out);
    tw__span_data *list[1] = {(tw__span_data *)s};
    json_t *span = NULL;
    if (tw__zipkin_encode_spans(list, 1, p, &out)) {
        json_error_t error;
        json_t *doc = json_loadb((const char *)out.data, out.len,
                                 JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &error);
        CU_ASSERT_PTR_NOT_NULL(doc);
        CU_ASSERT_PTR_NULL(memchr(out.data, '\n', out.len)); /* compact */
        if (doc && json_is_array(doc) && json_array_size(doc) == 1)
            span = json_incref(json_array_get(doc, 0));
        json_decref(doc);
    }
    tw__buf_free(&out);
    return span;
}

static const char *str_at(json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static const char *tag(json_t *span, const char *key)
{
    return str_at(json_object_get(span, "tags"), key);
}

#define ASSERT_STR(actual, expected)                                                               \
    do {                                                                                           \
        const char *a_ = (actual);                                                                 \
        CU_ASSERT_PTR_NOT_NULL(a_);                                                                \
        if (a_)                                                                                    \
            CU_ASSERT_STRING_EQUAL(a_, expected);                                                  \
    } while (0)

/* ---- tests ---------------------------------------------------------------------------------- */

static void test_every_field_maps_key_by_key(void)
{
    json_t *span = round_trip(span_every_field, &process_tagged);
    CU_ASSERT_PTR_NOT_NULL_FATAL(span);
    ASSERT_STR(str_at(span, "traceId"), "8000000000000001ffffffffffffffff");
    ASSERT_STR(str_at(span, "parentId"), "7fffffffffffffff");
    ASSERT_STR(str_at(span, "id"), "8000000000000000");
    ASSERT_STR(str_at(span, "name"), span_every_field->operation);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(span, "timestamp")), 1700000000123456);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(span, "duration")), 987654);
    CU_ASSERT(json_is_true(json_object_get(span, "debug")));
    CU_ASSERT_PTR_NULL(json_object_get(span, "shared"));
    CU_ASSERT_PTR_NULL(json_object_get(span, "kind"));
    CU_ASSERT_PTR_NULL(json_object_get(span, "remoteEndpoint"));

    json_t *local = json_object_get(span, "localEndpoint");
    CU_ASSERT_EQUAL(json_object_size(local), 2);
    ASSERT_STR(str_at(local, "serviceName"), "frontend");
    ASSERT_STR(str_at(local, "ipv4"), "192.168.1.10");

    /* Process tags (except ip), then the span's, every value a string. */
    json_t *tags = json_object_get(span, "tags");
    CU_ASSERT_EQUAL(json_object_size(tags), 2 + 13);
    ASSERT_STR(tag(span, "hostname"), "host-1");
    ASSERT_STR(tag(span, "jaeger.version"), "C-0.1.0");
    CU_ASSERT_PTR_NULL(tag(span, "ip"));
    ASSERT_STR(tag(span, "http.url"), "https://example.com/a?b=c");
    ASSERT_STR(tag(span, "empty"), "");
    ASSERT_STR(tag(span, "pi"), "3.141592653589793");
    ASSERT_STR(tag(span, "negative_zero"), "-0");
    ASSERT_STR(tag(span, "infinity"), "Infinity");
    ASSERT_STR(tag(span, "nan"), "NaN");
    ASSERT_STR(tag(span, "error"), "true"); /* no error log: no message */
    ASSERT_STR(tag(span, "cache.hit"), "false");
    ASSERT_STR(tag(span, "min"), "-9223372036854775808");
    ASSERT_STR(tag(span, "max"), "9223372036854775807");
    ASSERT_STR(tag(span, "minus_one"), "-1");
    ASSERT_STR(tag(span, "blob"), "AP8QAH8=");
    ASSERT_STR(tag(span, "empty_blob"), "");
    const char *key;
    json_t *value;
    json_object_foreach(tags, key, value)
    {
        CU_ASSERT(json_is_string(value));
    }

    /* Three logs, one without fields: two annotations. */
    json_t *annotations = json_object_get(span, "annotations");
    CU_ASSERT_EQUAL_FATAL(json_array_size(annotations), 2);
    json_t *first = json_array_get(annotations, 0);
    json_t *second = json_array_get(annotations, 1);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(first, "timestamp")), 1700000000200000);
    ASSERT_STR(str_at(first, "value"), "retry attempt=3 delay_s=0.25");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(second, "timestamp")), 1700000000400000);
    ASSERT_STR(str_at(second, "value"), "is_final=false payload=AP8QAH8=");
    json_decref(span);
}

static void test_64bit_root_has_short_trace_id_and_no_parent(void)
{
    json_t *span = round_trip(span_root_64bit, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(span);
    ASSERT_STR(str_at(span, "traceId"), "00000000075bcd15");
    ASSERT_STR(str_at(span, "id"), "00000000075bcd15");
    CU_ASSERT_PTR_NULL(json_object_get(span, "parentId"));
    CU_ASSERT_PTR_NULL(json_object_get(span, "name")); /* empty operation */
    CU_ASSERT_PTR_NULL(json_object_get(span, "debug"));
    CU_ASSERT_PTR_NULL(json_object_get(span, "localEndpoint")); /* no process */
    CU_ASSERT_PTR_NULL(json_object_get(span, "tags"));
    CU_ASSERT_PTR_NULL(json_object_get(span, "annotations"));
    /* Finished within its first microsecond: duration rounds up to 1. */
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(span, "timestamp")), 1);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(span, "duration")), 1);
    json_decref(span);
}

static void test_no_timestamp_leaves_out_a_zero_duration(void)
{
    tw__span_data *s = span_child();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    s->start_us = 0;
    s->duration_us = 0;
    json_t *span = round_trip(s, NULL);
    CU_ASSERT_PTR_NULL(json_object_get(span, "timestamp"));
    CU_ASSERT_PTR_NULL(json_object_get(span, "duration"));
    json_decref(span);
    s->duration_us = 42;
    span = round_trip(s, NULL);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(span, "duration")), 42);
    json_decref(span);
    tw__span_data_unref(s);
}

static void test_parent_equal_to_id_is_dropped(void)
{
    tw__span_data *s = span_child();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    s->parent_id = s->span_id;
    json_t *span = round_trip(s, NULL);
    CU_ASSERT_PTR_NULL(json_object_get(span, "parentId"));
    json_decref(span);
    tw__span_data_unref(s);
}

static void test_span_kind_tag_becomes_kind_and_is_not_repeated(void)
{
    static const struct {
        const char *tag;
        const char *kind; /* NULL: no kind, the tag stays */
    } cases[] = {{"client", "CLIENT"},     {"server", "SERVER"},
                 {"producer", "PRODUCER"}, {"consumer", "CONSUMER"},
                 {"SeRvEr", "SERVER"},     {"CONSUMER", "CONSUMER"},
                 {"Producer", "PRODUCER"}, {"cLiEnT", "CLIENT"},
                 {"internal", NULL},       {"", NULL},
                 {"clientx", NULL},        {"consume", NULL},
                 {"serve", NULL},          {"#lient", NULL},
                 {"rpc-client", NULL}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tw__span_data *s = span_child();
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        CU_ASSERT_FATAL(tw_test_add_tag(s, "span.kind", tw_test_str(cases[i].tag)));
        json_t *span = round_trip(s, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(span);
        if (cases[i].kind) {
            ASSERT_STR(str_at(span, "kind"), cases[i].kind);
            CU_ASSERT_PTR_NULL(tag(span, "span.kind"));
        } else {
            CU_ASSERT_PTR_NULL(json_object_get(span, "kind"));
            ASSERT_STR(tag(span, "span.kind"), cases[i].tag);
        }
        json_decref(span);
        tw__span_data_unref(s);
    }
}

static void test_peer_tags_become_remote_endpoint(void)
{
    tw__span_data *s = span_child();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_FATAL(tw_test_add_tag(s, "peer.service", tw_test_str("users-db")) &&
                    tw_test_add_tag(s, "peer.ipv4", tw_test_str("10.1.2.3")) &&
                    tw_test_add_tag(s, "peer.ipv6", tw_test_str("2001:DB8:0:0::1")) &&
                    tw_test_add_tag(s, "peer.port", tw_test_i64(5432)) &&
                    tw_test_add_tag(s, "peer.hostname", tw_test_str("db.local")));
    json_t *span = round_trip(s, NULL);
    json_t *remote = json_object_get(span, "remoteEndpoint");
    CU_ASSERT_EQUAL(json_object_size(remote), 4);
    ASSERT_STR(str_at(remote, "serviceName"), "users-db");
    ASSERT_STR(str_at(remote, "ipv4"), "10.1.2.3");
    ASSERT_STR(str_at(remote, "ipv6"), "2001:db8::1"); /* canonical form */
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(remote, "port")), 5432);
    /* Mapped tags are not repeated; the unmapped one stays. */
    json_t *tags = json_object_get(span, "tags");
    CU_ASSERT_EQUAL(json_object_size(tags), 1);
    ASSERT_STR(tag(span, "peer.hostname"), "db.local");
    json_decref(span);
    tw__span_data_unref(s);
}

static void test_peer_values_that_do_not_map_stay_tags(void)
{
    tw__span_data *s = span_child();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    /* A packed int IPv4 maps (Jaeger's Java client); bad text, an out of
     * range port and an empty service do not. */
    CU_ASSERT_FATAL(tw_test_add_tag(s, "peer.ipv4", tw_test_i64(0x0a000001)) &&
                    tw_test_add_tag(s, "peer.port", tw_test_str("70000")) &&
                    tw_test_add_tag(s, "peer.service", tw_test_str("")) &&
                    tw_test_add_tag(s, "peer.ipv6", tw_test_str("not-an-address")));
    json_t *span = round_trip(s, NULL);
    json_t *remote = json_object_get(span, "remoteEndpoint");
    CU_ASSERT_EQUAL(json_object_size(remote), 1);
    ASSERT_STR(str_at(remote, "ipv4"), "10.0.0.1");
    ASSERT_STR(tag(span, "peer.port"), "70000");
    ASSERT_STR(tag(span, "peer.service"), "");
    ASSERT_STR(tag(span, "peer.ipv6"), "not-an-address");
    CU_ASSERT_PTR_NULL(tag(span, "peer.ipv4"));
    json_decref(span);

    /* Port as digits, IPv6 as 16 raw bytes (Jaeger's Zipkin converter). */
    tw__span_data *t = span_child();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    static const uint8_t loopback6[16] = {[15] = 1};
    CU_ASSERT_FATAL(tw_test_add_tag(t, "peer.port", tw_test_str("443")) &&
                    tw_test_add_tag(t, "peer.ipv6", tw_test_bin(loopback6, 16)));
    span = round_trip(t, NULL);
    remote = json_object_get(span, "remoteEndpoint");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(remote, "port")), 443);
    ASSERT_STR(str_at(remote, "ipv6"), "::1");
    json_decref(span);
    tw__span_data_unref(s);
    tw__span_data_unref(t);
}

static void test_local_endpoint_takes_ipv6_and_packed_ip(void)
{
    static const struct {
        tw_value ip;
        const char *key;
        const char *want;
    } cases[] = {
        {{.type = TW_VALUE_STRING, .len = 11, .as.str = "fe80::1:2:3"}, "ipv6", "fe80::1:2:3"},
        {{.type = TW_VALUE_INT64, .as.i64 = -1062731519}, "ipv4", "192.168.1.1"},
        {{.type = TW_VALUE_STRING, .len = 7, .as.str = "unknown"}, NULL, NULL}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tw__process p;
        tw__process_init(&p);
        CU_ASSERT_FATAL(tw__process_set_service(&p, "svc") &&
                        tw__process_add_tag(&p, "ip", &cases[i].ip));
        json_t *span = round_trip(span_root_64bit, &p);
        json_t *local = json_object_get(span, "localEndpoint");
        ASSERT_STR(str_at(local, "serviceName"), "svc");
        if (cases[i].key) {
            ASSERT_STR(str_at(local, cases[i].key), cases[i].want);
            CU_ASSERT_PTR_NULL(tag(span, "ip"));
        } else {
            CU_ASSERT_EQUAL(json_object_size(local), 1);
            ASSERT_STR(tag(span, "ip"), "unknown"); /* not an address: stays a tag */
        }
        json_decref(span);
        tw__process_clear(&p);
    }
}

static void test_error_tag_rules(void)
{
    static const struct {
        tw_value value;
        bool has_error_log;
        const char *want; /* NULL: no error tag */
    } cases[] = {
        {{.type = TW_VALUE_BOOL, .as.boolean = false}, false, NULL},
        {{.type = TW_VALUE_STRING, .len = 5, .as.str = "False"}, false, NULL},
        {{.type = TW_VALUE_INT64, .as.i64 = 0}, false, NULL},
        {{.type = TW_VALUE_BOOL, .as.boolean = true}, false, "true"},
        {{.type = TW_VALUE_BOOL, .as.boolean = true}, true, "boom"},
        {{.type = TW_VALUE_STRING, .len = 4, .as.str = "TRUE"}, true, "boom"},
        {{.type = TW_VALUE_INT64, .as.i64 = 1}, false, "true"},
        {{.type = TW_VALUE_STRING, .len = 7, .as.str = "timeout"}, true, "timeout"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tw__span_data *s = span_child();
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        CU_ASSERT_FATAL(tw_test_add_tag(s, "error", cases[i].value));
        if (cases[i].has_error_log) {
            /* What tw_span_set_error writes. */
            const tw_test_field fields[] = {{"event", tw_test_str("error")},
                                            {"error.kind", tw_test_str("IOError")},
                                            {"message", tw_test_str("boom")}};
            CU_ASSERT_FATAL(tw_test_add_log(s, s->start_us + 10, fields, 3));
        }
        json_t *span = round_trip(s, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(span);
        if (cases[i].want)
            ASSERT_STR(tag(span, "error"), cases[i].want);
        else
            CU_ASSERT_PTR_NULL(tag(span, "error"));
        if (cases[i].has_error_log) {
            json_t *a = json_array_get(json_object_get(span, "annotations"), 0);
            ASSERT_STR(str_at(a, "value"), "error error.kind=IOError message=boom");
        }
        json_decref(span);
        tw__span_data_unref(s);
    }
}

static void test_repeated_keys_last_wins_and_span_beats_process(void)
{
    tw__span_data *s = span_child();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_FATAL(tw_test_add_tag(s, "k", tw_test_str("first")) &&
                    tw_test_add_tag(s, "hostname", tw_test_str("from-span")) &&
                    tw_test_add_tag(s, "k", tw_test_i64(2)) &&
                    tw_test_add_tag(s, "error", tw_test_bool(true)) &&
                    tw_test_add_tag(s, "error", tw_test_bool(false)));
    json_t *span = round_trip(s, &process_tagged);
    ASSERT_STR(tag(span, "k"), "2");
    ASSERT_STR(tag(span, "hostname"), "from-span");
    CU_ASSERT_PTR_NULL(tag(span, "error")); /* the last error tag says false */
    json_decref(span);
    tw__span_data_unref(s);
}

static void test_many_tags_use_the_hash_index(void)
{
    tw__span_data *s = span_child();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    char key[16];
    for (int i = 0; i < 300; i++) {
        snprintf(key, sizeof key, "k%d", i % 100);
        CU_ASSERT_FATAL(tw_test_add_tag(s, key, tw_test_i64(i)));
    }
    json_t *span = round_trip(s, NULL);
    json_t *tags = json_object_get(span, "tags");
    CU_ASSERT_EQUAL(json_object_size(tags), 100);
    ASSERT_STR(tag(span, "k0"), "200");
    ASSERT_STR(tag(span, "k99"), "299");
    json_decref(span);
    tw__span_data_unref(s);
}

static void test_invalid_utf8_is_repaired_not_rejected(void)
{
    tw__span_data *s = span_child();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    /* A lone continuation byte, an overlong '/', a surrogate, a cut sequence. */
    const char *bad_name = "a\x80"
                           "b\xc0\xaf"
                           "c\xed\xa0\x80"
                           "d\xe2\x82";
    CU_ASSERT_FATAL(tw__span_data_set_operation(s, bad_name, strlen(bad_name)) &&
                    tw_test_add_tag(s, "k\xff", tw_test_str("v\xfe")) &&
                    tw_test_add_tag(s, "ok", tw_test_str("\xc3\xa9t\xc3\xa9")));
    json_t *span = round_trip(s, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(span);
    ASSERT_STR(str_at(span, "name"), "a\xef\xbf\xbd"
                                     "b\xef\xbf\xbd\xef\xbf\xbd"
                                     "c\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                                     "d\xef\xbf\xbd\xef\xbf\xbd");
    ASSERT_STR(tag(span, "k\xef\xbf\xbd"), "v\xef\xbf\xbd");
    ASSERT_STR(tag(span, "ok"), "\xc3\xa9t\xc3\xa9");
    json_decref(span);
    tw__span_data_unref(s);
}

static void test_string_with_nul_and_escapes_round_trips(void)
{
    tw__span_data *s = span_child();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    static const char value[] = "quote\" back\\ nl\n tab\t nul\0end";
    tw_value v = {.type = TW_VALUE_STRING, .len = sizeof(value) - 1, .as.str = value};
    CU_ASSERT_FATAL(tw_test_add_tag(s, "odd", v));
    json_t *span = round_trip(s, NULL);
    json_t *odd = json_object_get(json_object_get(span, "tags"), "odd");
    CU_ASSERT_EQUAL(json_string_length(odd), sizeof(value) - 1);
    CU_ASSERT(odd && memcmp(json_string_value(odd), value, sizeof(value) - 1) == 0);
    json_decref(span);
    tw__span_data_unref(s);
}

/* Zipkin's model clears `shared` on a CLIENT span only: a shared SERVER,
 * CONSUMER (Zipkin's own converter test expects one), PRODUCER or kind-less
 * span keeps it. */
static void test_shared_is_kept_on_every_kind_but_client(void)
{
    static const struct {
        const char *kind; /* NULL: no span.kind tag */
        bool is_kept;
    } cases[] = {{"server", true},  {"consumer", true}, {"producer", true},
                 {"client", false}, {NULL, true},       {"internal", true}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tw__span_data *s = span_child();
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        if (cases[i].kind)
            CU_ASSERT_FATAL(tw_test_add_tag(s, "span.kind", tw_test_str(cases[i].kind)));
        s->shared = true;
        json_t *span = round_trip(s, &process_tagged);
        CU_ASSERT_PTR_NOT_NULL_FATAL(span);
        bool is_written = json_is_true(json_object_get(span, "shared"));
        CU_ASSERT_EQUAL(is_written, cases[i].is_kept);
        json_decref(span);
        tw__span_data_unref(s);
    }
}

static void test_list_holds_every_span_in_order(void)
{
    tw__span_data *list[2] = {span_every_field, span_root_64bit};
    tw__buf out;
    tw__buf_init(&out);
    CU_ASSERT_FATAL(tw__zipkin_encode_spans(list, 2, &process_tagged, &out));
    json_t *doc = json_loadb((const char *)out.data, out.len, JSON_ALLOW_NUL, NULL);
    CU_ASSERT_EQUAL_FATAL(json_array_size(doc), 2);
    ASSERT_STR(str_at(json_array_get(doc, 0), "id"), "8000000000000000");
    ASSERT_STR(str_at(json_array_get(doc, 1), "id"), "00000000075bcd15");
    json_decref(doc);

    tw__buf_reset(&out);
    CU_ASSERT(tw__zipkin_encode_spans(NULL, 0, NULL, &out));
    CU_ASSERT_EQUAL(out.len, 2);
    CU_ASSERT(memcmp(out.data, "[]", 2) == 0);
    tw__buf_free(&out);
}

static void test_null_span_is_refused_and_output_kept(void)
{
    tw__buf out;
    tw__buf_init(&out);
    CU_ASSERT_FATAL(tw__buf_append(&out, "keep", 4));
    CU_ASSERT_FALSE(tw__zipkin_encode_span(NULL, &process_tagged, &out));
    CU_ASSERT_FALSE(tw__zipkin_encode_span(span_every_field, &process_tagged, NULL));
    tw__span_data *list[2] = {span_every_field, NULL};
    CU_ASSERT_FALSE(tw__zipkin_encode_spans(list, 2, NULL, &out));
    CU_ASSERT_EQUAL(out.len, 4);
    CU_ASSERT(memcmp(out.data, "keep", 4) == 0);
    tw__buf_free(&out);
}

/* tw__ipv4_canonical_len (the writer's measuring form) agrees with
 * tw__ipv4_is_canonical on edge cases and on random texts of digits and
 * dots: the length when that says canonical, else 0. */
static void test_ipv4_canonical_len_agrees_with_the_check(void)
{
    static const char *const edges[] = {
        "0.0.0.0",     "255.255.255.255", "256.1.1.1", "1.2.3.256",  "01.2.3.4",   "1.2.3.04",
        "1.2.3.4.",    "1.2.3",           "1.2.3.4x",  "1234.1.1.1", "1.2.3.1234", "10.3.0.14",
        "199.200.9.0", "300.1.1.1",       "",          ".1.2.3",     "1..2.3",     "a.b.c.d"};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        size_t want = tw__ipv4_is_canonical(edges[i]) ? strlen(edges[i]) : 0;
        CU_ASSERT_EQUAL(tw__ipv4_canonical_len(edges[i]), want);
    }
    uint64_t x = 0x9e3779b97f4a7c15u;
    size_t differing = 0;
    for (int n = 0; n < 200000; n++) {
        char text[20];
        x = x * 6364136223846793005u + 1442695040888963407u;
        size_t len = (size_t)(x >> 59) % 19, k = 0;
        for (uint64_t r = x; k < len; k++, r = r * 31 + 7)
            text[k] = "0123456789.........25"[(r >> 33) % 21];
        text[len] = '\0';
        size_t want = tw__ipv4_is_canonical(text) ? len : 0;
        differing += tw__ipv4_canonical_len(text) != want;
    }
    CU_ASSERT_EQUAL(differing, 0);
}

/* tw__json_hex64 (SSE2 where the target has it) writes tw__hex_u64's digits. */
static void test_hex64_matches_the_word_form(void)
{
    uint64_t x = 1;
    for (int n = 0; n < 100000; n++) {
        uint64_t v = n < 64 ? (uint64_t)1 << n : n < 128 ? ~((uint64_t)1 << (n - 64)) : x;
        x = x * 6364136223846793005u + 1442695040888963407u;
        uint8_t fast[16];
        char word[16];
        tw__json_hex64(fast, v);
        tw__hex_u64(word, v);
        if (memcmp(fast, word, 16) != 0) {
            CU_FAIL("tw__json_hex64 differs from tw__hex_u64");
            break;
        }
    }
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("wire/zipkin_json", suite_init, suite_cleanup);
    if (!suite)
        return;
    CU_ADD_TEST(suite, test_every_field_maps_key_by_key);
    CU_ADD_TEST(suite, test_64bit_root_has_short_trace_id_and_no_parent);
    CU_ADD_TEST(suite, test_no_timestamp_leaves_out_a_zero_duration);
    CU_ADD_TEST(suite, test_parent_equal_to_id_is_dropped);
    CU_ADD_TEST(suite, test_span_kind_tag_becomes_kind_and_is_not_repeated);
    CU_ADD_TEST(suite, test_peer_tags_become_remote_endpoint);
    CU_ADD_TEST(suite, test_peer_values_that_do_not_map_stay_tags);
    CU_ADD_TEST(suite, test_local_endpoint_takes_ipv6_and_packed_ip);
    CU_ADD_TEST(suite, test_error_tag_rules);
    CU_ADD_TEST(suite, test_repeated_keys_last_wins_and_span_beats_process);
    CU_ADD_TEST(suite, test_many_tags_use_the_hash_index);
    CU_ADD_TEST(suite, test_invalid_utf8_is_repaired_not_rejected);
    CU_ADD_TEST(suite, test_string_with_nul_and_escapes_round_trips);
    CU_ADD_TEST(suite, test_list_holds_every_span_in_order);
    CU_ADD_TEST(suite, test_null_span_is_refused_and_output_kept);
    CU_ADD_TEST(suite, test_shared_is_kept_on_every_kind_but_client);
    CU_ADD_TEST(suite, test_ipv4_canonical_len_agrees_with_the_check);
    CU_ADD_TEST(suite, test_hex64_matches_the_word_form);
}
