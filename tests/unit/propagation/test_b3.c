/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/propagation/test_b3.c: suite "propagation/b3": the X-B3-*
 * headers (TW_CODEC_B3) and the single b3 header (TW_CODEC_B3_SINGLE):
 * what each writes for sampled, unsampled, debug and deferred contexts, the
 * decision-only forms, precedence of the single header, lenient sampling
 * values, and every malformed form with its reason (docs/PROPAGATION.md, "B3").
 */
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "harness.h"
#include "prop_test.h"

#define HTTP TW_FORMAT_HTTP_HEADERS
#define MAP TW_FORMAT_TEXT_MAP
#define B3 TW_CODEC_B3
#define B3S TW_CODEC_B3_SINGLE

#define TRACE64 "463ac35c9f6413ad"
#define TRACE128 "80f198ee56343ba864fe8b2a57d3eff7"
#define SPAN "a2fb4a1d1a96d312"
#define PARENT "05e3ac9a4f6e3b90"

/* ---- inject: multi ------------------------------------------------------------------------ */

static void test_multi_inject_writes_canonical_names_in_http(void)
{
    tw_span_context *c =
        make_context(0, 0x463ac35c9f6413adULL, 0xa2fb4a1d1a96d312ULL, 0, TW_FLAG_SAMPLED, NULL);
    tw_headers *h = inject_with(B3, HTTP, c, NULL);
    CU_ASSERT_EQUAL(tw_headers_count(h), 3);
    const char *k, *v;
    CU_ASSERT(tw_headers_item(h, 0, &k, &v) && strcmp(k, "X-B3-TraceId") == 0 &&
              strcmp(v, TRACE64) == 0);
    CU_ASSERT(tw_headers_item(h, 1, &k, &v) && strcmp(k, "X-B3-SpanId") == 0 &&
              strcmp(v, SPAN) == 0);
    CU_ASSERT(tw_headers_item(h, 2, &k, &v) && strcmp(k, "X-B3-Sampled") == 0 &&
              strcmp(v, "1") == 0);
    CU_ASSERT_PTR_NULL(tw_headers_get(h, "X-B3-ParentSpanId")); /* a root has none */
    tw_headers_free(h);
    tw_span_context_unref(c);
}

static void test_multi_inject_writes_lower_case_names_in_text_map(void)
{
    tw_span_context *c = make_context(0x80f198ee56343ba8ULL, 0x64fe8b2a57d3eff7ULL,
                                      0xa2fb4a1d1a96d312ULL, 0x05e3ac9a4f6e3b90ULL, 0, NULL);
    tw_headers *h = inject_with(B3, MAP, c, NULL);
    const char *k, *v;
    static const char *const want[4][2] = {{"x-b3-traceid", TRACE128},
                                           {"x-b3-spanid", SPAN},
                                           {"x-b3-parentspanid", PARENT},
                                           {"x-b3-sampled", "0"}};
    CU_ASSERT_EQUAL(tw_headers_count(h), 4);
    for (size_t i = 0; i < 4; i++) {
        CU_ASSERT(tw_headers_item(h, i, &k, &v) && strcmp(k, want[i][0]) == 0 &&
                  strcmp(v, want[i][1]) == 0);
    }
    tw_headers_free(h);
    tw_span_context_unref(c);
}

static void test_multi_inject_debug_writes_flags_without_sampled(void)
{
    tw_span_context *c =
        make_context(0, 1, 2, 3, TW_FLAG_SAMPLED | TW_FLAG_DEBUG | TW_FLAG_FIREHOSE, NULL);
    tw_headers *h = inject_with(B3, HTTP, c, NULL);
    CU_ASSERT_STRING_EQUAL(tw_headers_get(h, "X-B3-Flags"), "1");
    CU_ASSERT_PTR_NULL(tw_headers_get(h, "X-B3-Sampled"));
    CU_ASSERT_STRING_EQUAL(tw_headers_get(h, "X-B3-ParentSpanId"), "0000000000000003");
    CU_ASSERT_STRING_EQUAL(tw_headers_get(h, "X-B3-TraceId"), "0000000000000001");
    tw_headers_free(h);
    tw_span_context_unref(c);
}

static void test_multi_inject_deferred_omits_the_sampling_state(void)
{
    tw_span_context *c = make_context(0, 1, 2, 0, TW__FLAG_DEFERRED, NULL);
    tw_headers *h = inject_with(B3, HTTP, c, NULL);
    CU_ASSERT_EQUAL(tw_headers_count(h), 2);
    CU_ASSERT_PTR_NULL(tw_headers_get(h, "X-B3-Sampled"));
    CU_ASSERT_PTR_NULL(tw_headers_get(h, "X-B3-Flags"));
    tw_headers_free(h);
    tw_span_context_unref(c);
}

/* ---- inject: single ----------------------------------------------------------------------- */

static void test_single_inject_forms(void)
{
    static const struct {
        uint64_t hi, parent;
        uint32_t flags;
        const char *want;
    } cases[] = {
        {0, 0, TW_FLAG_SAMPLED, TRACE64 "-" SPAN "-1"},
        {0, 0, 0, TRACE64 "-" SPAN "-0"},
        {0, 0x05e3ac9a4f6e3b90ULL, TW_FLAG_SAMPLED, TRACE64 "-" SPAN "-1-" PARENT},
        {0, 0x05e3ac9a4f6e3b90ULL, TW_FLAG_SAMPLED | TW_FLAG_DEBUG, TRACE64 "-" SPAN "-d-" PARENT},
        /* deferred: no state, and then no parent either (the grammar needs the state first) */
        {0, 0x05e3ac9a4f6e3b90ULL, TW__FLAG_DEFERRED, TRACE64 "-" SPAN},
        {0x80f198ee56343ba8ULL, 0, TW_FLAG_SAMPLED, "80f198ee56343ba8463ac35c9f6413ad-" SPAN "-1"},
    };
    for (size_t f = 0; f < 2; f++) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            tw_span_context *c =
                make_context(cases[i].hi, 0x463ac35c9f6413adULL, 0xa2fb4a1d1a96d312ULL,
                             cases[i].parent, cases[i].flags, NULL);
            tw_headers *h = inject_with(B3S, f ? MAP : HTTP, c, NULL);
            CU_ASSERT_EQUAL(tw_headers_count(h), 1);
            CU_ASSERT_STRING_EQUAL(tw_headers_get(h, "b3"), cases[i].want);
            tw_headers_free(h);
            tw_span_context_unref(c);
        }
    }
}

static void test_both_forms_can_be_injected_together(void)
{
    tw_codec both[] = {B3, B3S};
    tw_propagator *p = tw_propagator_new(both, 2, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    tw_span_context *c = make_context(0, 1, 2, 0, TW_FLAG_SAMPLED, NULL);
    tw_headers *h = tw_headers_new();
    tw_carrier_writer w = tw_headers_writer(h);
    CU_ASSERT_EQUAL(tw_propagator_inject(p, c, HTTP, &w), TW_OK);
    CU_ASSERT_EQUAL(tw_headers_count(h), 4);
    CU_ASSERT_STRING_EQUAL(tw_headers_get(h, "b3"), "0000000000000001-0000000000000002-1");
    tw_headers_free(h);
    tw_span_context_unref(c);
    tw_propagator_free(p);
}

/* ---- round trips -------------------------------------------------------------------------- */

static void test_round_trips_in_both_forms(void)
{
    static const struct {
        uint64_t hi, parent;
        uint32_t flags, want_flags;
    } cases[] = {
        {0, 0, TW_FLAG_SAMPLED, TW_FLAG_SAMPLED},
        {0, 7, 0, 0},
        {0x1234, 7, TW_FLAG_SAMPLED | TW_FLAG_DEBUG, TW_FLAG_SAMPLED | TW_FLAG_DEBUG},
        {0x1234, 0, TW__FLAG_DEFERRED, TW__FLAG_DEFERRED},
        /* B3 has no firehose bit */
        {0, 0, TW_FLAG_SAMPLED | TW_FLAG_FIREHOSE, TW_FLAG_SAMPLED},
    };
    tw_codec codecs[] = {B3, B3S};
    for (size_t k = 0; k < 2; k++) {
        for (size_t f = 0; f < 2; f++) {
            for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                tw_span_context *c = make_context(cases[i].hi, 0xfeedULL, 0xbeefULL,
                                                  cases[i].parent, cases[i].flags, "k", "v", NULL);
                tw_headers *h = inject_with(codecs[k], f ? MAP : HTTP, c, NULL);
                tw_span_context *back = extract_with(codecs[k], f ? MAP : HTTP, h, NULL, NULL);
                CU_ASSERT_PTR_NOT_NULL_FATAL(back);
                /* single + deferred drops the parent (see test_single_inject_forms) */
                uint64_t parent =
                    k == 1 && (cases[i].flags & TW__FLAG_DEFERRED) ? 0 : cases[i].parent;
                CU_ASSERT(ids_equal(back, cases[i].hi, 0xfeed, 0xbeef, parent));
                CU_ASSERT_EQUAL(back->flags, cases[i].want_flags);
                CU_ASSERT_EQUAL(tw_span_context_baggage_count(back), 0); /* B3 has no baggage */
                tw_span_context_unref(back);
                tw_headers_free(h);
                tw_span_context_unref(c);
            }
        }
    }
}

/* ---- extract ------------------------------------------------------------------------------ */

static void test_single_decision_only_forms_are_hints(void)
{
    static const struct {
        const char *value;
        unsigned int flags;
    } cases[] = {{"0", 0}, {"1", TW_FLAG_SAMPLED}, {"d", TW_FLAG_SAMPLED | TW_FLAG_DEBUG}};
    for (size_t i = 0; i < 3; i++) {
        tw_span_context *c = extract_pairs(B3S, HTTP, NULL, NULL, "b3", cases[i].value, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        CU_ASSERT_FALSE(tw_span_context_is_valid(c));
        CU_ASSERT_EQUAL(tw_span_context_flags(c), cases[i].flags);
        CU_ASSERT_FALSE(tw_span_context_is_sampling_deferred(c));
        tw_span_context_unref(c);
    }
    /* "b3: 0" makes the next span unsampled although the sampler says yes. */
    tw_reporter *memory = NULL;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    tw_span_context *deny = extract_pairs(B3, HTTP, NULL, NULL, "b3", "0", NULL);
    tw_span *s = tw_span_start_child(tracer, "denied", deny);
    CU_ASSERT_FALSE(tw_span_is_sampled(s));
    CU_ASSERT(tw_span_context_is_valid(tw_span_get_context(s)));
    tw_span_finish(s);
    tw_span_context_unref(deny);
    tw_tracer_free(tracer);
}

static void test_single_with_ids_and_optional_fields(void)
{
    tw_span_context *c =
        extract_pairs(B3, HTTP, NULL, NULL, "b3", TRACE128 "-" SPAN "-1-" PARENT, NULL);
    CU_ASSERT(ids_equal(c, 0x80f198ee56343ba8ULL, 0x64fe8b2a57d3eff7ULL, 0xa2fb4a1d1a96d312ULL,
                        0x05e3ac9a4f6e3b90ULL));
    CU_ASSERT_EQUAL(tw_span_context_flags(c), TW_FLAG_SAMPLED);
    tw_span_context_unref(c);
    c = extract_pairs(B3, HTTP, NULL, NULL, "B3", TRACE64 "-" SPAN, NULL);
    CU_ASSERT(ids_equal(c, 0, 0x463ac35c9f6413adULL, 0xa2fb4a1d1a96d312ULL, 0));
    CU_ASSERT(tw_span_context_is_sampling_deferred(c));
    CU_ASSERT_FALSE(tw_span_context_is_sampled(c));
    tw_span_context_unref(c);
    c = extract_pairs(B3, HTTP, NULL, NULL, "b3", TRACE64 "-" SPAN "-d", NULL);
    CU_ASSERT_EQUAL(tw_span_context_flags(c), TW_FLAG_SAMPLED | TW_FLAG_DEBUG);
    tw_span_context_unref(c);
}

static void test_single_header_takes_precedence(void)
{
    tw_span_context *c = extract_pairs(B3, HTTP, NULL, NULL, "X-B3-TraceId", "1", "X-B3-SpanId",
                                       "2", "X-B3-Sampled", "1", "b3", "a-b-0", NULL);
    CU_ASSERT(ids_equal(c, 0, 0xa, 0xb, 0));
    CU_ASSERT_EQUAL(tw_span_context_flags(c), 0);
    tw_span_context_unref(c);
    /* Even a decision-only b3 wins over multi ids (as Brave reads it). */
    c = extract_pairs(B3S, HTTP, NULL, NULL, "X-B3-TraceId", "1", "X-B3-SpanId", "2", "b3", "1",
                      NULL);
    CU_ASSERT_FALSE(tw_span_context_is_valid(c));
    CU_ASSERT_EQUAL(tw_span_context_flags(c), TW_FLAG_SAMPLED);
    tw_span_context_unref(c);
    /* ... and a malformed one is not rescued by them. */
    tw_error *err = NULL;
    c = extract_pairs(B3, HTTP, NULL, &err, "X-B3-TraceId", "1", "X-B3-SpanId", "2", "b3", "x",
                      NULL);
    ASSERT_MALFORMED(c, err, "b3", "a lone sampling state must be 0, 1 or d");
}

static void test_multi_sampling_values(void)
{
    static const struct {
        const char *sampled, *flags;
        unsigned int want;
        bool is_deferred;
    } cases[] = {
        {"1", NULL, TW_FLAG_SAMPLED, false},
        {"0", NULL, 0, false},
        {"true", NULL, TW_FLAG_SAMPLED, false},
        {"TRUE", NULL, TW_FLAG_SAMPLED, false},
        {"False", NULL, 0, false},
        {NULL, NULL, 0, true},
        {NULL, "1", TW_FLAG_SAMPLED | TW_FLAG_DEBUG, false},
        {"0", "1", TW_FLAG_SAMPLED | TW_FLAG_DEBUG, false}, /* debug implies accept */
        {NULL, "0", 0, true},
        {"1", "0", TW_FLAG_SAMPLED, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tw_headers *h = headers_of("x-b3-traceid", "1", "x-b3-spanid", "2", NULL);
        if (cases[i].sampled)
            tw_headers_add(h, "X-B3-Sampled", cases[i].sampled);
        if (cases[i].flags)
            tw_headers_add(h, "X-B3-Flags", cases[i].flags);
        tw_span_context *c = extract_with(B3, HTTP, h, NULL, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        CU_ASSERT_EQUAL(tw_span_context_flags(c), cases[i].want);
        CU_ASSERT_EQUAL(tw_span_context_is_sampling_deferred(c), cases[i].is_deferred);
        tw_span_context_unref(c);
        tw_headers_free(h);
    }
}

static void test_multi_sampling_state_without_ids_is_a_hint(void)
{
    tw_span_context *c = extract_pairs(B3, HTTP, NULL, NULL, "X-B3-Sampled", "0", NULL);
    CU_ASSERT_FALSE(tw_span_context_is_valid(c));
    CU_ASSERT_EQUAL(tw_span_context_flags(c), 0);
    CU_ASSERT_FALSE(tw_span_context_is_sampling_deferred(c));
    tw_span_context_unref(c);
    c = extract_pairs(B3, HTTP, NULL, NULL, "X-B3-Flags", "1", NULL);
    CU_ASSERT_EQUAL(tw_span_context_flags(c), TW_FLAG_SAMPLED | TW_FLAG_DEBUG);
    tw_span_context_unref(c);
    /* "X-B3-Flags: 0" alone says nothing. */
    tw_error *err = NULL;
    c = extract_pairs(B3, HTTP, NULL, &err, "X-B3-Flags", "0", NULL);
    CU_ASSERT_PTR_NULL(c);
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_NOT_FOUND);
    tw_error_free(err);
}

static void test_ids_are_read_leniently(void)
{
    /* Short ids are left-padded, upper case accepted, white space trimmed, a zero parent is a
     * root. */
    tw_span_context *c = extract_pairs(B3, HTTP, NULL, NULL, "x-b3-traceid", " ABC ", "x-b3-spanid",
                                       "1", "x-b3-parentspanid", "0000000000000000", NULL);
    CU_ASSERT(ids_equal(c, 0, 0xabc, 1, 0));
    tw_span_context_unref(c);
}

static void test_first_value_wins(void)
{
    tw_span_context *c =
        extract_pairs(B3, HTTP, NULL, NULL, "X-B3-TraceId", "1", "X-B3-TraceId", "9", "X-B3-SpanId",
                      "2", "X-B3-SpanId", "8", "b3x", "ignored", NULL);
    CU_ASSERT(ids_equal(c, 0, 1, 2, 0));
    tw_span_context_unref(c);
    c = extract_pairs(B3, HTTP, NULL, NULL, "b3", "1-2-1", "b3", "3-4-0", NULL);
    CU_ASSERT(ids_equal(c, 0, 1, 2, 0));
    tw_span_context_unref(c);
}

static void test_malformed_single_header(void)
{
    char *long_value = repeat('a', TW__B3_SINGLE_MAX + 1);
    const struct {
        const char *value, *reason;
    } cases[] = {
        {"", "empty value"},
        {"-", "\"-\" is not a value"},
        {"x", "a lone sampling state must be 0, 1 or d"},
        {"abc", "1 fields, expected 2 to 4"},
        {"1-2-1-3-4", "5 fields, expected 2 to 4"},
        {"1-2-x", "sampling state must be 0, 1 or d"},
        {"1-2-10", "sampling state must be 0, 1 or d"},
        {"1-2--3", "sampling state must be 0, 1 or d"},
        {"1-2-1-", "parent span id is empty"},
        {"1-2-1-xyz", "parent span id has a non-hex character at offset 0"},
        {"-2-1", "trace id is empty"},
        {"1--1", "span id is empty"},
        {"0-2-1", "trace id is zero"},
        {"1-0-1", "span id is zero"},
        {"123456789012345678901234567890123-2", "trace id has 33 digits, at most 32"},
        {"1-12345678901234567", "span id has 17 digits, at most 16"},
        {"1g-2", "trace id has a non-hex character at offset 1"},
        {long_value, "more than 128"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tw_error *err = NULL;
        tw_span_context *c = extract_pairs(B3S, HTTP, NULL, &err, "b3", cases[i].value, NULL);
        ASSERT_MALFORMED(c, err, "b3: ", cases[i].reason);
    }
    free(long_value);
}

static void test_malformed_multi_headers(void)
{
    char *long_value = repeat('a', TW__B3_MULTI_MAX + 1);
    const struct {
        const char *k1, *v1, *k2, *v2;
        const char *header, *reason;
    } cases[] = {
        {"X-B3-TraceId", "1", NULL, NULL, "X-B3-SpanId", "missing (X-B3-TraceId is present)"},
        {"X-B3-SpanId", "1", NULL, NULL, "X-B3-TraceId", "missing (X-B3-SpanId is present)"},
        {"X-B3-TraceId", "", "X-B3-SpanId", "2", "X-B3-TraceId", "empty value"},
        {"X-B3-TraceId", "1", "X-B3-SpanId", "-", "X-B3-SpanId", "\"-\" is not a value"},
        {"X-B3-TraceId", "0", "X-B3-SpanId", "2", "X-B3-TraceId", "trace id is zero"},
        {"X-B3-TraceId", "1", "X-B3-SpanId", "0", "X-B3-SpanId", "span id is zero"},
        {"X-B3-TraceId", "1", "X-B3-SpanId", "x", "X-B3-SpanId", "non-hex character"},
        {"X-B3-TraceId", long_value, "X-B3-SpanId", "2", "X-B3-TraceId", "more than 64"},
        {"X-B3-Sampled", "yes", NULL, NULL, "X-B3-Sampled", "must be 1 or 0 (or true or false)"},
        {"X-B3-Sampled", "", NULL, NULL, "X-B3-Sampled", "empty value"},
        {"X-B3-Sampled", "-", NULL, NULL, "X-B3-Sampled", "\"-\" is not a value"},
        {"X-B3-Flags", "2", NULL, NULL, "X-B3-Flags", "must be 1 (debug) or 0"},
        {"X-B3-ParentSpanId", "1", NULL, NULL, "X-B3-ParentSpanId", "present without"},
        {"X-B3-ParentSpanId", "1", "X-B3-Sampled", "1", "X-B3-ParentSpanId", "present without"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tw_headers *h = headers_of(cases[i].k1, cases[i].v1, NULL);
        if (cases[i].k2)
            tw_headers_add(h, cases[i].k2, cases[i].v2);
        tw_error *err = NULL;
        tw_span_context *c = extract_with(B3, HTTP, h, NULL, &err);
        ASSERT_MALFORMED(c, err, cases[i].header, cases[i].reason);
        tw_headers_free(h);
    }
    /* A bad parent with good ids. */
    tw_error *err = NULL;
    tw_span_context *c = extract_pairs(B3, HTTP, NULL, &err, "X-B3-TraceId", "1", "X-B3-SpanId",
                                       "2", "X-B3-ParentSpanId", "12345678901234567", NULL);
    ASSERT_MALFORMED(c, err, "X-B3-ParentSpanId", "parent span id has 17 digits");
    free(long_value);
}

static void test_no_b3_headers_is_not_found(void)
{
    tw_error *err = NULL;
    tw_span_context *c = extract_pairs(B3, HTTP, NULL, &err, "uber-trace-id", "1:2:0:1", "b3x", "1",
                                       "x-b3-traceidx", "1", NULL);
    CU_ASSERT_PTR_NULL(c);
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_NOT_FOUND);
    CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), "b3"));
    tw_error_free(err);
}

void tw_test_register(void)
{
    CU_pSuite s = CU_add_suite("propagation/b3", NULL, NULL);
    CU_add_test(s, "multi_inject_writes_canonical_names_in_http",
                test_multi_inject_writes_canonical_names_in_http);
    CU_add_test(s, "multi_inject_writes_lower_case_names_in_text_map",
                test_multi_inject_writes_lower_case_names_in_text_map);
    CU_add_test(s, "multi_inject_debug_writes_flags_without_sampled",
                test_multi_inject_debug_writes_flags_without_sampled);
    CU_add_test(s, "multi_inject_deferred_omits_the_sampling_state",
                test_multi_inject_deferred_omits_the_sampling_state);
    CU_add_test(s, "single_inject_forms", test_single_inject_forms);
    CU_add_test(s, "both_forms_can_be_injected_together", test_both_forms_can_be_injected_together);
    CU_add_test(s, "round_trips_in_both_forms", test_round_trips_in_both_forms);
    CU_add_test(s, "single_decision_only_forms_are_hints",
                test_single_decision_only_forms_are_hints);
    CU_add_test(s, "single_with_ids_and_optional_fields", test_single_with_ids_and_optional_fields);
    CU_add_test(s, "single_header_takes_precedence", test_single_header_takes_precedence);
    CU_add_test(s, "multi_sampling_values", test_multi_sampling_values);
    CU_add_test(s, "multi_sampling_state_without_ids_is_a_hint",
                test_multi_sampling_state_without_ids_is_a_hint);
    CU_add_test(s, "ids_are_read_leniently", test_ids_are_read_leniently);
    CU_add_test(s, "first_value_wins", test_first_value_wins);
    CU_add_test(s, "malformed_single_header", test_malformed_single_header);
    CU_add_test(s, "malformed_multi_headers", test_malformed_multi_headers);
    CU_add_test(s, "no_b3_headers_is_not_found", test_no_b3_headers_is_not_found);
}
