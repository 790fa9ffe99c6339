/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/propagation/test_jaeger.c: suite "propagation/jaeger": the
 * uber-trace-id header (what inject writes, what extract accepts, every
 * malformed form and its reason), uberctx-* and jaeger-baggage baggage with
 * their encodings and limits, and jaeger-debug-id (docs/PROPAGATION.md,
 * "Jaeger").
 */
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "harness.h"
#include "prop_test.h"

#define HTTP TW_FORMAT_HTTP_HEADERS
#define MAP TW_FORMAT_TEXT_MAP
#define JAEGER TW_CODEC_JAEGER

/* ---- inject ------------------------------------------------------------------------------- */

static void test_inject_pads_64bit_ids_and_writes_hex_flags(void)
{
    tw_span_context *c = make_context(0, 0xabc, 0xdef, 0, TW_FLAG_SAMPLED, NULL);
    tw_status st;
    tw_headers *h = inject_with(JAEGER, HTTP, c, &st);
    CU_ASSERT_EQUAL(st, TW_OK);
    CU_ASSERT_EQUAL(tw_headers_count(h), 1);
    CU_ASSERT_STRING_EQUAL(tw_headers_get(h, "uber-trace-id"),
                           "0000000000000abc:0000000000000def:0000000000000000:1");
    tw_headers_free(h);
    tw_span_context_unref(c);
}

static void test_inject_writes_32_digits_when_high_is_set(void)
{
    tw_span_context *c = make_context(0x1, 0x2, 0x3, 0x4, 0, NULL);
    tw_headers *h = inject_with(JAEGER, MAP, c, NULL);
    CU_ASSERT_STRING_EQUAL(tw_headers_get(h, "uber-trace-id"),
                           "00000000000000010000000000000002:0000000000000003:0000000000000004:0");
    tw_headers_free(h);
    tw_span_context_unref(c);
}

static void test_inject_flags_as_minimal_hex(void)
{
    static const struct {
        uint32_t flags;
        const char *suffix;
    } cases[] = {
        {TW_FLAG_SAMPLED | TW_FLAG_DEBUG, ":3"},
        {TW_FLAG_SAMPLED | TW_FLAG_DEBUG | TW_FLAG_FIREHOSE, ":b"},
        {0x11, ":11"},
        {0xff, ":ff"},
        {TW__FLAG_DEFERRED, ":0"}, /* deferred is written not sampled */
        {TW__FLAG_DEFERRED | TW_FLAG_FIREHOSE, ":8"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tw_span_context *c = make_context(0, 1, 2, 0, cases[i].flags, NULL);
        tw_headers *h = inject_with(JAEGER, HTTP, c, NULL);
        const char *v = tw_headers_get(h, "uber-trace-id");
        CU_ASSERT_PTR_NOT_NULL_FATAL(v);
        size_t n = strlen(v), m = strlen(cases[i].suffix);
        CU_ASSERT(n > m && strcmp(v + n - m, cases[i].suffix) == 0 && v[n - m - 1] == '0');
        tw_headers_free(h);
        tw_span_context_unref(c);
    }
}

static void test_inject_refuses_hints_and_bad_arguments(void)
{
    tw__context_parts parts = {.flags = TW_FLAG_SAMPLED | TW_FLAG_DEBUG, .debug_id = "x"};
    tw_span_context *hint = tw__span_context_build(&parts);
    tw_status st;
    tw_headers *h = inject_with(JAEGER, HTTP, hint, &st);
    CU_ASSERT_EQUAL(st, TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_headers_count(h), 0);
    tw_headers_free(h);

    tw_span_context *c = make_context(0, 1, 2, 0, 1, NULL);
    tw_propagator *p = tw_propagator_parse("jaeger", NULL);
    tw_headers *out = tw_headers_new();
    tw_carrier_writer w = tw_headers_writer(out);
    tw_carrier_writer no_set = {NULL, out};
    CU_ASSERT_EQUAL(tw_propagator_inject(NULL, c, HTTP, &w), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_propagator_inject(p, NULL, HTTP, &w), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_propagator_inject(p, c, HTTP, NULL), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_propagator_inject(p, c, HTTP, &no_set), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_propagator_inject(p, c, TW_FORMAT_BINARY, &w), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_propagator_inject(p, c, (tw_format)7, &w), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_headers_count(out), 0);
    tw_headers_free(out);
    tw_propagator_free(p);
    tw_span_context_unref(c);
    tw_span_context_unref(hint);
}

static void test_inject_baggage_http_encodes_values(void)
{
    tw_span_context *c =
        make_context(0, 1, 2, 0, 1, "user", "a b+c/\xc3\xa9~_.-", "empty", "", NULL);
    tw_headers *h = inject_with(JAEGER, HTTP, c, NULL);
    CU_ASSERT_STRING_EQUAL(tw_headers_get(h, "uberctx-user"), "a%20b%2Bc%2F%C3%A9~_.-");
    CU_ASSERT_STRING_EQUAL(tw_headers_get(h, "uberctx-empty"), "");
    tw_headers_free(h);
    /* TEXT_MAP: raw. */
    h = inject_with(JAEGER, MAP, c, NULL);
    CU_ASSERT_STRING_EQUAL(tw_headers_get(h, "uberctx-user"), "a b+c/\xc3\xa9~_.-");
    tw_headers_free(h);
    tw_span_context_unref(c);
}

static void test_inject_http_skips_keys_that_are_not_header_names(void)
{
    tw_span_context *c = make_context(0, 1, 2, 0, 1, "bad key", "v", "good", "w", NULL);
    tw_headers *h = inject_with(JAEGER, HTTP, c, NULL);
    CU_ASSERT_PTR_NULL(tw_headers_get(h, "uberctx-bad key"));
    CU_ASSERT_STRING_EQUAL(tw_headers_get(h, "uberctx-good"), "w");
    tw_headers_free(h);
    h = inject_with(JAEGER, MAP, c, NULL); /* a map carries any key */
    CU_ASSERT_STRING_EQUAL(tw_headers_get(h, "uberctx-bad key"), "v");
    tw_headers_free(h);
    tw_span_context_unref(c);
}

static void test_inject_never_writes_debug_id(void)
{
    tw__context_parts parts = {
        .trace_id_low = 1, .span_id = 2, .flags = TW_FLAG_SAMPLED, .debug_id = "dbg"};
    tw_span_context *c = tw__span_context_build(&parts);
    tw_headers *h = inject_with(JAEGER, HTTP, c, NULL);
    CU_ASSERT_EQUAL(tw_headers_count(h), 1);
    CU_ASSERT_PTR_NULL(tw_headers_get(h, "jaeger-debug-id"));
    tw_headers_free(h);
    tw_span_context_unref(c);
}

static tw_status failing_set(void *user_data, const char *key, const char *value)
{
    (void)key;
    (void)value;
    int *calls = user_data;
    return ++*calls == 2 ? TW_E_IO : TW_OK;
}

static void test_inject_returns_the_carrier_error(void)
{
    tw_span_context *c = make_context(0, 1, 2, 0, 1, "a", "1", "b", "2", NULL);
    tw_propagator *p = tw_propagator_parse("jaeger", NULL);
    int calls = 0;
    tw_carrier_writer w = {failing_set, &calls};
    CU_ASSERT_EQUAL(tw_propagator_inject(p, c, HTTP, &w), TW_E_IO);
    CU_ASSERT_EQUAL(calls, 2); /* stopped at the failure */
    tw_propagator_free(p);
    tw_span_context_unref(c);
}

/* ---- round trips -------------------------------------------------------------------------- */

static void test_round_trip_keeps_ids_flags_and_baggage(void)
{
    static const struct {
        uint64_t hi, lo, span, parent;
        uint32_t flags;
    } cases[] = {
        {0, 0x1, 0x1, 0, TW_FLAG_SAMPLED},
        {0, 0xffffffffffffffffULL, 0xfedcba9876543210ULL, 0x1234, 0},
        {0x0123456789abcdefULL, 0xfedcba9876543210ULL, 42, 43,
         TW_FLAG_SAMPLED | TW_FLAG_DEBUG | TW_FLAG_FIREHOSE},
        {0xffffffffffffffffULL, 0, 1, 0xffffffffffffffffULL, 0x80},
    };
    tw_format formats[] = {HTTP, MAP};
    for (size_t f = 0; f < 2; f++) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            tw_span_context *c =
                make_context(cases[i].hi, cases[i].lo, cases[i].span, cases[i].parent,
                             cases[i].flags, "k", "v w+x%y=z,;\"", "unicode", "\xe2\x82\xac", NULL);
            tw_headers *h = inject_with(JAEGER, formats[f], c, NULL);
            collected_warnings w = {0};
            tw_error *err = NULL;
            tw_span_context *back = extract_with(JAEGER, formats[f], h, &w, &err);
            CU_ASSERT_PTR_NOT_NULL_FATAL(back);
            CU_ASSERT(ids_equal(back, cases[i].hi, cases[i].lo, cases[i].span, cases[i].parent));
            CU_ASSERT_EQUAL(tw_span_context_flags(back), cases[i].flags);
            CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(back, "k"), "v w+x%y=z,;\"");
            CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(back, "unicode"), "\xe2\x82\xac");
            CU_ASSERT_EQUAL(w.n, 0);
            tw_span_context_unref(back);
            tw_headers_free(h);
            tw_span_context_unref(c);
        }
    }
}

/* ---- extract: accepted forms -------------------------------------------------------------- */

static void test_extract_left_pads_short_ids(void)
{
    tw_error *err = NULL;
    tw_span_context *c = extract_pairs(JAEGER, HTTP, NULL, &err, "uber-trace-id", "1:2:3:1", NULL);
    CU_ASSERT(ids_equal(c, 0, 1, 2, 3));
    CU_ASSERT_EQUAL(tw_span_context_flags(c), TW_FLAG_SAMPLED);
    tw_span_context_unref(c);
    /* 17 to 32 digits: the leading ones are the high half. */
    c = extract_pairs(JAEGER, HTTP, NULL, &err, "uber-trace-id", "10000000000000002:3:0:0", NULL);
    CU_ASSERT(ids_equal(c, 1, 2, 3, 0));
    tw_span_context_unref(c);
    CU_ASSERT_PTR_NULL(err);
}

static void test_extract_accepts_either_hex_case(void)
{
    tw_span_context *c = extract_pairs(JAEGER, HTTP, NULL, NULL, "uber-trace-id",
                                       "ABCDEF0123456789aBcDeF:FEDCBA:0:B", NULL);
    CU_ASSERT(ids_equal(c, 0xabcdef, 0x0123456789abcdefULL, 0xfedcba, 0));
    CU_ASSERT_EQUAL(tw_span_context_flags(c), 0xb);
    tw_span_context_unref(c);
}

static void test_extract_accepts_a_url_encoded_value(void)
{
    static const char *const values[] = {"abc%3Adef%3A0%3A1", "abc%3adef%3a0%3a1", "%61bc:def:0:1"};
    for (size_t f = 0; f < 2; f++) {
        for (size_t i = 0; i < 3; i++) {
            tw_span_context *c =
                extract_pairs(JAEGER, f ? MAP : HTTP, NULL, NULL, "uber-trace-id", values[i], NULL);
            CU_ASSERT(ids_equal(c, 0, 0xabc, 0xdef, 0));
            tw_span_context_unref(c);
        }
    }
}

static void test_extract_matches_header_names_ignoring_case(void)
{
    tw_span_context *c = extract_pairs(JAEGER, HTTP, NULL, NULL, "UBER-Trace-ID", "1:2:0:1",
                                       "UberCtx-Tenant", "acme", "JAEGER-DEBUG-ID", "d", NULL);
    CU_ASSERT(ids_equal(c, 0, 1, 2, 0));
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "tenant"), "acme");
    CU_ASSERT_STRING_EQUAL(tw_span_context_debug_id(c), "d");
    tw_span_context_unref(c);
}

static void test_extract_trims_surrounding_white_space(void)
{
    tw_span_context *c =
        extract_pairs(JAEGER, HTTP, NULL, NULL, "uber-trace-id", " \t1:2:0:1\t ", NULL);
    CU_ASSERT(ids_equal(c, 0, 1, 2, 0));
    tw_span_context_unref(c);
}

static void test_extract_flags_take_one_or_two_hex_digits(void)
{
    static const struct {
        const char *flags;
        unsigned int want;
    } cases[] = {{"0", 0}, {"1", 1}, {"01", 1}, {"3", 3}, {"b", 0xb}, {"0b", 0xb}, {"ff", 0xff}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char v[64];
        snprintf(v, sizeof v, "1:2:0:%s", cases[i].flags);
        tw_span_context *c = extract_pairs(JAEGER, HTTP, NULL, NULL, "uber-trace-id", v, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        CU_ASSERT_EQUAL(tw_span_context_flags(c), cases[i].want);
        CU_ASSERT_FALSE(tw_span_context_is_sampling_deferred(c));
        tw_span_context_unref(c);
    }
}

static void test_extract_reads_every_parent_id_form(void)
{
    static const char *const values[] = {"1:2:0:1", "1:2:0000000000000000:1", "1:2:00:1"};
    for (size_t i = 0; i < 3; i++) {
        tw_span_context *c =
            extract_pairs(JAEGER, HTTP, NULL, NULL, "uber-trace-id", values[i], NULL);
        CU_ASSERT(ids_equal(c, 0, 1, 2, 0));
        tw_span_context_unref(c);
    }
}

/* ---- extract: malformed ------------------------------------------------------------------- */

static void test_malformed_context_is_an_error_with_the_reason(void)
{
    char *long_value = repeat('1', TW__UBER_TRACE_ID_MAX + 1);
    const struct {
        const char *value;
        const char *reason;
    } cases[] = {
        {"", "empty value"},
        {"   ", "empty value"},
        {"abc:def:0", "3 fields, expected 4"},
        {"abc:def:0:1:5", "5 fields, expected 4"},
        {"abc", "1 fields, expected 4"},
        {"xyz:def:0:1", "trace id is not hex"},
        {"abc:d-f:0:1", "span id is not hex"},
        {"abc:def:z:1", "parent id is not hex"},
        {"abc:def:0:1g", "flags is not hex"},
        {"abc:def:0:+1", "flags is not hex"},
        {"123456789012345678901234567890123:def:0:1", "trace id has too many digits"},
        {"abc:12345678901234567:0:1", "span id has too many digits"},
        {"abc:def:12345678901234567:1", "parent id has too many digits"},
        {"abc:def:0:123", "flags has too many digits"},
        {":def:0:1", "trace id is empty"},
        {"abc::0:1", "span id is empty"},
        {"abc:def::1", "parent id is empty"},
        {"abc:def:0:", "flags is empty"},
        {"0:def:0:1", "trace id is zero"},
        {"00000000000000000000000000000000:def:0:1", "trace id is zero"},
        {"abc:0:0:1", "span id is zero"},
        {"abc:0000000000000000:0:1", "span id is zero"},
        {"abc%3:def:0:1", "bad percent-encoding"},
        {"abc%3Zdef:0:1", "bad percent-encoding"},
        {"abc%00def:0:1", "bad percent-encoding"},
        {"abc:def:0:1%", "bad percent-encoding"},
        {"abc : def:0:1", "trace id is not hex"},
        {long_value, "more than 512"},
    };
    for (size_t f = 0; f < 2; f++) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            tw_error *err = NULL;
            tw_span_context *c = extract_pairs(JAEGER, f ? MAP : HTTP, NULL, &err, "uber-trace-id",
                                               cases[i].value, NULL);
            ASSERT_MALFORMED(c, err, "uber-trace-id", cases[i].reason);
        }
    }
    free(long_value);
}

static void test_malformed_context_costs_the_baggage_too(void)
{
    tw_error *err = NULL;
    tw_span_context *c = extract_pairs(JAEGER, HTTP, NULL, &err, "uberctx-a", "1", "uber-trace-id",
                                       "abc:def:0", "jaeger-debug-id", "d", NULL);
    ASSERT_MALFORMED(c, err, "uber-trace-id", "3 fields");
}

static void test_error_message_quotes_untrusted_bytes_safely(void)
{
    tw_error *err = NULL;
    tw_span_context *c =
        extract_pairs(JAEGER, HTTP, NULL, &err, "uber-trace-id", "ab\"\x01\n:def:0:1", NULL);
    CU_ASSERT_PTR_NULL(c);
    CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), "ab\\x22\\x01\\x0a"));
    CU_ASSERT_PTR_NULL(strchr(tw_error_message(err), '\n'));
    tw_error_free(err);
}

static void test_missing_context_is_not_found(void)
{
    tw_error *err = NULL;
    tw_span_context *c = extract_pairs(JAEGER, HTTP, NULL, &err, "traceparent",
                                       "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                                       "uber-trace-id-x", "1:2:0:1", "uberctx", "x", NULL);
    CU_ASSERT_PTR_NULL(c);
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_NOT_FOUND);
    tw_error_free(err);
    /* err may be NULL. */
    CU_ASSERT_PTR_NULL(extract_pairs(JAEGER, HTTP, NULL, NULL, "x", "y", NULL));
}

static void test_first_value_wins_for_repeated_headers(void)
{
    tw_span_context *c = extract_pairs(JAEGER, HTTP, NULL, NULL, "uber-trace-id", "1:2:0:1",
                                       "Uber-Trace-Id", "3:4:0:0", NULL);
    CU_ASSERT(ids_equal(c, 0, 1, 2, 0));
    tw_span_context_unref(c);
    /* A bad first value is not rescued by a good second one. */
    tw_error *err = NULL;
    c = extract_pairs(JAEGER, HTTP, NULL, &err, "uber-trace-id", "bad", "uber-trace-id", "3:4:0:0",
                      NULL);
    ASSERT_MALFORMED(c, err, "uber-trace-id", "1 fields");
    c = extract_pairs(JAEGER, HTTP, NULL, NULL, "jaeger-debug-id", "first", "jaeger-debug-id",
                      "second", NULL);
    CU_ASSERT_STRING_EQUAL(tw_span_context_debug_id(c), "first");
    tw_span_context_unref(c);
}

/* ---- jaeger-debug-id ---------------------------------------------------------------------- */

static void test_debug_id_alone_starts_a_debug_trace(void)
{
    tw_error *err = NULL;
    tw_span_context *hint = extract_pairs(JAEGER, HTTP, NULL, &err, "jaeger-debug-id", "req%2042",
                                          "uberctx-tenant", "acme", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(hint);
    CU_ASSERT_FALSE(tw_span_context_is_valid(hint));
    CU_ASSERT_STRING_EQUAL(tw_span_context_debug_id(hint), "req 42");
    CU_ASSERT(tw_span_context_is_sampled(hint) && tw_span_context_is_debug(hint));

    /* A tracer whose sampler says no: the debug id forces sampling anyway. */
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "debug-id");
    tw_tracer_options_set_sampler(opts, tw_sampler_const_new(false));
    tw_reporter *memory = tw_reporter_memory_new(0);
    tw_tracer_options_set_reporter(opts, memory);
    tw_tracer *tracer = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    tw_span *s = tw_span_start_child(tracer, "debugged", hint);
    const tw_span_context *sc = tw_span_get_context(s);
    CU_ASSERT(tw_span_context_is_valid(sc));
    CU_ASSERT_EQUAL(tw_span_context_flags(sc), TW_FLAG_SAMPLED | TW_FLAG_DEBUG);
    CU_ASSERT_STRING_EQUAL(tw_span_get_baggage(s, "tenant"), "acme");
    tw_span_finish(s);
    CU_ASSERT(tag_equals_str(finished_named(memory, "debugged"), "jaeger-debug-id", "req 42"));
    tw_tracer_free(tracer);
    tw_span_context_unref(hint);
}

static void test_debug_id_with_a_context_is_kept(void)
{
    tw_span_context *c = extract_pairs(JAEGER, MAP, NULL, NULL, "jaeger-debug-id", "a%20b",
                                       "uber-trace-id", "1:2:0:0", NULL);
    CU_ASSERT(ids_equal(c, 0, 1, 2, 0));
    CU_ASSERT_EQUAL(tw_span_context_flags(c), 0); /* the context's own decision stands */
    CU_ASSERT_STRING_EQUAL(tw_span_context_debug_id(c), "a%20b"); /* TEXT_MAP: raw */
    tw_span_context_unref(c);
}

static void test_debug_id_problems_are_warnings(void)
{
    char *long_id = repeat('d', TW__DEBUG_ID_MAX + 1);
    collected_warnings w = {0};
    tw_error *err = NULL;
    tw_span_context *c = extract_pairs(JAEGER, HTTP, &w, &err, "jaeger-debug-id", long_id,
                                       "uber-trace-id", "1:2:0:1", NULL);
    CU_ASSERT(ids_equal(c, 0, 1, 2, 0));
    CU_ASSERT_PTR_NULL(tw_span_context_debug_id(c));
    CU_ASSERT(warned(&w, "jaeger-debug-id: 257 bytes, more than 256; ignored"));
    tw_span_context_unref(c);
    /* Empty: ignored, so nothing is found. */
    memset(&w, 0, sizeof w);
    c = extract_pairs(JAEGER, HTTP, &w, &err, "jaeger-debug-id", " ", NULL);
    CU_ASSERT_PTR_NULL(c);
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_NOT_FOUND);
    CU_ASSERT(warned(&w, "jaeger-debug-id: empty value ignored"));
    tw_error_free(err);
    /* Bad %-encoding: kept as received. */
    memset(&w, 0, sizeof w);
    c = extract_pairs(JAEGER, HTTP, &w, NULL, "jaeger-debug-id", "50%", NULL);
    CU_ASSERT_STRING_EQUAL(tw_span_context_debug_id(c), "50%");
    CU_ASSERT(warned(&w, "bad percent-encoding"));
    tw_span_context_unref(c);
    free(long_id);
}

/* ---- baggage ------------------------------------------------------------------------------ */

static void test_uberctx_values_are_decoded_in_http_only(void)
{
    collected_warnings w = {0};
    tw_span_context *c = extract_pairs(JAEGER, HTTP, &w, NULL, "uber-trace-id", "1:2:0:1",
                                       "uberctx-a", "x+y%20z%2B%2b", "uberctx-b", "plain", NULL);
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "a"), "x y z++");
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "b"), "plain");
    CU_ASSERT_EQUAL(w.n, 0);
    tw_span_context_unref(c);
    c = extract_pairs(JAEGER, MAP, &w, NULL, "uber-trace-id", "1:2:0:1", "uberctx-a", "x+y%20z",
                      NULL);
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "a"), "x+y%20z");
    tw_span_context_unref(c);
}

static void test_badly_encoded_baggage_is_kept_raw_with_a_warning(void)
{
    static const char *const bad[] = {"100%", "%zz", "%4", "a%00b"};
    for (size_t i = 0; i < 4; i++) {
        collected_warnings w = {0};
        tw_span_context *c = extract_pairs(JAEGER, HTTP, &w, NULL, "uber-trace-id", "1:2:0:1",
                                           "uberctx-k", bad[i], NULL);
        CU_ASSERT(ids_equal(c, 0, 1, 2, 0)); /* the trace survives */
        CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "k"), bad[i]);
        CU_ASSERT_EQUAL(w.n, 1);
        CU_ASSERT(warned(&w, "uberctx-*: bad percent-encoding in the value of \"k\""));
        tw_span_context_unref(c);
    }
}

static void test_uberctx_keys_come_back_lower_case(void)
{
    tw_span_context *c = extract_pairs(JAEGER, MAP, NULL, NULL, "uber-trace-id", "1:2:0:1",
                                       "uberctx-User-ID", "7", NULL);
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "user-id"), "7");
    CU_ASSERT_PTR_NULL(tw_span_context_baggage_get(c, "User-ID"));
    tw_span_context_unref(c);
}

static void test_jaeger_baggage_header_is_parsed_leniently(void)
{
    collected_warnings w = {0};
    tw_span_context *c =
        extract_pairs(JAEGER, HTTP, &w, NULL, "uber-trace-id", "1:2:0:1", "jaeger-baggage",
                      " k1 = v1 ,k2=dmFsdWU=,, noequals ,=novalue, k3=a%20b, k4=", "Jaeger-Baggage",
                      "k5=5", NULL);
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "k1"), "v1");
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "k2"), "dmFsdWU=");
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "k3"), "a b");
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "k4"), "");
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "k5"), "5");
    CU_ASSERT_EQUAL(tw_span_context_baggage_count(c), 5);
    CU_ASSERT(warned(&w, "jaeger-baggage: item \"noequals\" has no '='; dropped"));
    CU_ASSERT(warned(&w, "jaeger-baggage: baggage item with an empty key dropped"));
    CU_ASSERT_EQUAL(w.n, 2);
    tw_span_context_unref(c);
}

static void test_uberctx_wins_over_jaeger_baggage(void)
{
    /* In either carrier order. */
    for (int order = 0; order < 2; order++) {
        tw_headers *h = order ? headers_of("jaeger-baggage", "k=from-header, other=1", "uberctx-k",
                                           "from-uberctx", NULL)
                              : headers_of("uberctx-k", "from-uberctx", "jaeger-baggage",
                                           "k=from-header, other=1", NULL);
        collected_warnings w = {0};
        tw_span_context *c = extract_with(JAEGER, HTTP, h, &w, NULL);
        CU_ASSERT_FALSE(tw_span_context_is_valid(c)); /* baggage alone: a hint */
        CU_ASSERT(tw_span_context_is_sampling_deferred(c));
        CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "k"), "from-uberctx");
        CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "other"), "1");
        CU_ASSERT_EQUAL(w.n, 0); /* the same key in two headers is not a problem */
        tw_span_context_unref(c);
        tw_headers_free(h);
    }
}

static void test_repeated_baggage_key_keeps_the_first_value(void)
{
    collected_warnings w = {0};
    tw_span_context *c = extract_pairs(JAEGER, HTTP, &w, NULL, "uberctx-k", "1", "UBERCTX-K", "2",
                                       "uberctx-", "empty key", NULL);
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "k"), "1");
    CU_ASSERT(warned(&w, "baggage key \"k\" repeated; the first value is kept"));
    CU_ASSERT(warned(&w, "uberctx-*: baggage item with an empty key dropped"));
    tw_span_context_unref(c);
}

static void test_baggage_limits_drop_items_not_the_trace(void)
{
    tw_headers *h = headers_of("uber-trace-id", "1:2:0:1", NULL);
    char key[32], *big = repeat('v', TW_BAGGAGE_MAX_ITEM_BYTES); /* + key > the item limit */
    tw_headers_add(h, "uberctx-big", big);
    for (int i = 0; i < TW_BAGGAGE_MAX_ITEMS + 5; i++) {
        snprintf(key, sizeof key, "uberctx-k%03d", i);
        tw_headers_add(h, key, "v");
    }
    collected_warnings w = {0};
    tw_span_context *c = extract_with(JAEGER, HTTP, h, &w, NULL);
    CU_ASSERT(ids_equal(c, 0, 1, 2, 0));
    CU_ASSERT_EQUAL(tw_span_context_baggage_count(c), TW_BAGGAGE_MAX_ITEMS);
    CU_ASSERT_PTR_NULL(tw_span_context_baggage_get(c, "big"));
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "k179"), "v");
    CU_ASSERT_PTR_NULL(tw_span_context_baggage_get(c, "k180"));
    CU_ASSERT(warned(&w, "uberctx-*: baggage item \"big\" dropped: key and value exceed 4096"));
    CU_ASSERT(warned(&w, "\"k180\" dropped: more than 180 items"));
    CU_ASSERT_EQUAL(w.n, 6); /* big, and k180 to k184 */
    tw_span_context_unref(c);
    tw_headers_free(h);
    free(big);

    /* The total: 3 items of 3000 bytes exceed 8192. */
    char *v3000 = repeat('x', 3000);
    memset(&w, 0, sizeof w);
    c = extract_pairs(JAEGER, MAP, &w, NULL, "uberctx-a", v3000, "uberctx-b", v3000, "uberctx-c",
                      v3000, NULL);
    CU_ASSERT_EQUAL(tw_span_context_baggage_count(c), 2);
    CU_ASSERT(warned(&w, "\"c\" dropped: baggage exceeds 8192 bytes"));
    tw_span_context_unref(c);
    free(v3000);
}

static void test_many_problems_are_counted_and_summarised(void)
{
    tw_headers *h = headers_of("uber-trace-id", "1:2:0:1", NULL);
    for (int i = 0; i < 40; i++)
        tw_headers_add(h, "jaeger-baggage", "noequals");
    collected_warnings w = {0};
    tw_span_context *c = extract_with(JAEGER, HTTP, h, &w, NULL);
    CU_ASSERT(tw_span_context_is_valid(c));
    CU_ASSERT_EQUAL(w.n, TW__WARNINGS_SHOWN + 1);
    CU_ASSERT(warned(&w, "extract: 24 more baggage/tracestate problems not shown"));
    tw_span_context_unref(c);

    /* Through the tracer: all 40 are counted, and the logger sees them. */
    tw_propagator *p = tw_propagator_parse("jaeger", NULL);
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_propagator(opts, p);
    tw_tracer *tracer = tracer_always_sampled(NULL, opts);
    tw_carrier_reader r = tw_headers_reader(h);
    c = tw_tracer_extract(tracer, HTTP, &r, NULL);
    CU_ASSERT(tw_span_context_is_valid(c));
    CU_ASSERT_EQUAL(tw_tracer_counter(tracer, TW_TRACER_EXTRACT_WARNINGS), 40);
    tw_span_context_unref(c);
    tw_tracer_free(tracer);
    tw_headers_free(h);
}

static size_t logged_warnings;
static char last_logged[512];
static void capture_log(tw_log_level level, const char *message, void *user_data)
{
    (void)user_data;
    if (level == TW_LOG_WARN) {
        logged_warnings++;
        snprintf(last_logged, sizeof last_logged, "%s", message);
    }
}

static void test_warnings_also_reach_the_logger(void)
{
    logged_warnings = 0;
    tw_set_logger(capture_log, NULL, TW_LOG_WARN);
    collected_warnings w = {0};
    tw_span_context *c =
        extract_pairs(JAEGER, HTTP, &w, NULL, "uber-trace-id", "1:2:0:1", "uberctx-k", "%", NULL);
    tw_set_logger(NULL, NULL, TW_LOG_WARN);
    CU_ASSERT_EQUAL(w.n, 1);
    CU_ASSERT_EQUAL(logged_warnings, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(last_logged, "bad percent-encoding"));
    tw_span_context_unref(c);
}

void tw_test_register(void)
{
    CU_pSuite s = CU_add_suite("propagation/jaeger", NULL, NULL);
    CU_add_test(s, "inject_pads_64bit_ids_and_writes_hex_flags",
                test_inject_pads_64bit_ids_and_writes_hex_flags);
    CU_add_test(s, "inject_writes_32_digits_when_high_is_set",
                test_inject_writes_32_digits_when_high_is_set);
    CU_add_test(s, "inject_flags_as_minimal_hex", test_inject_flags_as_minimal_hex);
    CU_add_test(s, "inject_refuses_hints_and_bad_arguments",
                test_inject_refuses_hints_and_bad_arguments);
    CU_add_test(s, "inject_baggage_http_encodes_values", test_inject_baggage_http_encodes_values);
    CU_add_test(s, "inject_http_skips_keys_that_are_not_header_names",
                test_inject_http_skips_keys_that_are_not_header_names);
    CU_add_test(s, "inject_never_writes_debug_id", test_inject_never_writes_debug_id);
    CU_add_test(s, "inject_returns_the_carrier_error", test_inject_returns_the_carrier_error);
    CU_add_test(s, "round_trip_keeps_ids_flags_and_baggage",
                test_round_trip_keeps_ids_flags_and_baggage);
    CU_add_test(s, "extract_left_pads_short_ids", test_extract_left_pads_short_ids);
    CU_add_test(s, "extract_accepts_either_hex_case", test_extract_accepts_either_hex_case);
    CU_add_test(s, "extract_accepts_a_url_encoded_value", test_extract_accepts_a_url_encoded_value);
    CU_add_test(s, "extract_matches_header_names_ignoring_case",
                test_extract_matches_header_names_ignoring_case);
    CU_add_test(s, "extract_trims_surrounding_white_space",
                test_extract_trims_surrounding_white_space);
    CU_add_test(s, "extract_flags_take_one_or_two_hex_digits",
                test_extract_flags_take_one_or_two_hex_digits);
    CU_add_test(s, "extract_reads_every_parent_id_form", test_extract_reads_every_parent_id_form);
    CU_add_test(s, "malformed_context_is_an_error_with_the_reason",
                test_malformed_context_is_an_error_with_the_reason);
    CU_add_test(s, "malformed_context_costs_the_baggage_too",
                test_malformed_context_costs_the_baggage_too);
    CU_add_test(s, "error_message_quotes_untrusted_bytes_safely",
                test_error_message_quotes_untrusted_bytes_safely);
    CU_add_test(s, "missing_context_is_not_found", test_missing_context_is_not_found);
    CU_add_test(s, "first_value_wins_for_repeated_headers",
                test_first_value_wins_for_repeated_headers);
    CU_add_test(s, "debug_id_alone_starts_a_debug_trace", test_debug_id_alone_starts_a_debug_trace);
    CU_add_test(s, "debug_id_with_a_context_is_kept", test_debug_id_with_a_context_is_kept);
    CU_add_test(s, "debug_id_problems_are_warnings", test_debug_id_problems_are_warnings);
    CU_add_test(s, "uberctx_values_are_decoded_in_http_only",
                test_uberctx_values_are_decoded_in_http_only);
    CU_add_test(s, "badly_encoded_baggage_is_kept_raw_with_a_warning",
                test_badly_encoded_baggage_is_kept_raw_with_a_warning);
    CU_add_test(s, "uberctx_keys_come_back_lower_case", test_uberctx_keys_come_back_lower_case);
    CU_add_test(s, "jaeger_baggage_header_is_parsed_leniently",
                test_jaeger_baggage_header_is_parsed_leniently);
    CU_add_test(s, "uberctx_wins_over_jaeger_baggage", test_uberctx_wins_over_jaeger_baggage);
    CU_add_test(s, "repeated_baggage_key_keeps_the_first_value",
                test_repeated_baggage_key_keeps_the_first_value);
    CU_add_test(s, "baggage_limits_drop_items_not_the_trace",
                test_baggage_limits_drop_items_not_the_trace);
    CU_add_test(s, "many_problems_are_counted_and_summarised",
                test_many_problems_are_counted_and_summarised);
    CU_add_test(s, "warnings_also_reach_the_logger", test_warnings_also_reach_the_logger);
}
