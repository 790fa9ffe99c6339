/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/core/test_context.c: suite "core/context": construction
 * rules, reference counting (owned vs borrowed), baggage copy-on-write and
 * hex formatting.
 */
#include <string.h>

#include "harness.h"
#include "tracewire/tracewire.h"

static void test_zero_ids_are_rejected(void)
{
    tw_error *err = NULL;
    CU_ASSERT_PTR_NULL(tw_span_context_new(0, 0, 1, 0, 1, &err));
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_INVALID_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), "trace id"));
    tw_error_free(err);
    err = NULL;
    CU_ASSERT_PTR_NULL(tw_span_context_new(0, 5, 0, 0, 1, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), "span id"));
    tw_error_free(err);
}

static void test_accessors_and_flags(void)
{
    tw_span_context *c = tw_span_context_new(0x1122334455667788ULL, 0x99aabbccddeeff00ULL, 7, 3,
                                             TW_FLAG_SAMPLED | TW_FLAG_DEBUG, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(tw_span_context_trace_id_high(c), 0x1122334455667788ULL);
    CU_ASSERT_EQUAL(tw_span_context_trace_id_low(c), 0x99aabbccddeeff00ULL);
    CU_ASSERT_EQUAL(tw_span_context_span_id(c), 7);
    CU_ASSERT_EQUAL(tw_span_context_parent_id(c), 3);
    CU_ASSERT(tw_span_context_is_sampled(c));
    CU_ASSERT(tw_span_context_is_debug(c));
    char hex[33];
    CU_ASSERT_STRING_EQUAL(tw_span_context_trace_id_hex(c, hex, sizeof hex),
                           "112233445566778899aabbccddeeff00");
    CU_ASSERT_PTR_NULL(tw_span_context_trace_id_hex(c, hex, 10)); /* too small */
    tw_span_context_unref(c);
    CU_ASSERT_EQUAL(tw_span_context_span_id(NULL), 0);
    CU_ASSERT_FALSE(tw_span_context_is_sampled(NULL));
}

static void test_ref_counts_owned_contexts(void)
{
    tw_span_context *c = tw_span_context_new(0, 1, 2, 0, 0, NULL);
    tw_span_context *again = tw_span_context_ref(c);
    CU_ASSERT_PTR_EQUAL(again, c);
    tw_span_context_unref(c);
    CU_ASSERT_EQUAL(tw_span_context_span_id(again), 2); /* still alive */
    tw_span_context_unref(again);
    tw_span_context_unref(NULL);
    CU_ASSERT_PTR_NULL(tw_span_context_ref(NULL));
}

static void test_baggage_is_copy_on_write(void)
{
    tw_span_context *c = tw_span_context_new(0, 1, 2, 0, 1, NULL);
    tw_span_context *b1 = tw_span_context_with_baggage(c, "k", "v1");
    tw_span_context *b2 = tw_span_context_with_baggage(b1, "k", "v2");
    tw_span_context *b3 = tw_span_context_with_baggage(b2, "other", "x");
    tw_span_context *removed = tw_span_context_with_baggage(b3, "k", NULL);
    CU_ASSERT_PTR_NULL(tw_span_context_baggage_get(c, "k"));
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(b1, "k"), "v1");
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(b2, "k"), "v2");
    CU_ASSERT_EQUAL(tw_span_context_baggage_count(b3), 2);
    CU_ASSERT_EQUAL(tw_span_context_baggage_count(removed), 1);
    const char *key, *value;
    CU_ASSERT(tw_span_context_baggage_item(removed, 0, &key, &value));
    CU_ASSERT_STRING_EQUAL(key, "other");
    CU_ASSERT_FALSE(tw_span_context_baggage_item(removed, 1, &key, &value));
    CU_ASSERT_PTR_NULL(tw_span_context_with_baggage(c, "", "v"));
    tw_span_context_unref(c);
    tw_span_context_unref(b1);
    tw_span_context_unref(b2);
    tw_span_context_unref(b3);
    tw_span_context_unref(removed);
}

static void test_ref_of_borrowed_context_outlives_span(void)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "ctx");
    tw_tracer_options_set_reporter(opts, tw_reporter_memory_new(0));
    tw_tracer *tracer = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    tw_span *s = tw_span_start(tracer, "s", NULL);
    tw_span_set_baggage(s, "k", "v");
    const tw_span_context *borrowed = tw_span_get_context(s);
    uint64_t id = tw_span_context_span_id(borrowed);
    tw_span_context *kept = tw_span_context_ref(borrowed);
    CU_ASSERT_PTR_NOT_EQUAL(kept, borrowed);
    /* Unref of a borrowed context is refused, not a double free. */
    tw_span_context_unref((tw_span_context *)borrowed);
    tw_span_finish(s);
    CU_ASSERT_EQUAL(tw_span_context_span_id(kept), id);
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(kept, "k"), "v");
    tw_span_context_unref(kept);
    tw_tracer_free(tracer);
}

static void test_hex_forms_for_log_correlation(void)
{
    tw_span_context *c64 = tw_span_context_new(0, 0xa1b2c3d4e5f60718ULL, 0x0102030405060708ULL, 0,
                                               TW_FLAG_SAMPLED, NULL);
    tw_span_context *c128 = tw_span_context_new(0x1ULL, 0xfULL, 0xffULL, 0, 0, NULL);
    char trace[TW_TRACE_ID_HEX_SIZE], span[TW_SPAN_ID_HEX_SIZE], tp[TW_TRACEPARENT_SIZE];
    /* Jaeger's short form for 64-bit ids, the 32-digit form always with hex32. */
    CU_ASSERT_STRING_EQUAL(tw_span_context_trace_id_hex(c64, trace, sizeof trace),
                           "a1b2c3d4e5f60718");
    CU_ASSERT_STRING_EQUAL(tw_span_context_trace_id_hex32(c64, trace, sizeof trace),
                           "0000000000000000a1b2c3d4e5f60718");
    CU_ASSERT_STRING_EQUAL(tw_span_context_trace_id_hex32(c128, trace, sizeof trace),
                           "0000000000000001000000000000000f");
    CU_ASSERT_STRING_EQUAL(tw_span_context_span_id_hex(c64, span, sizeof span), "0102030405060708");
    CU_ASSERT_STRING_EQUAL(tw_span_context_span_id_hex(c128, span, sizeof span),
                           "00000000000000ff");
    CU_ASSERT_STRING_EQUAL(tw_span_context_traceparent(c64, tp, sizeof tp),
                           "00-0000000000000000a1b2c3d4e5f60718-0102030405060708-01");
    CU_ASSERT_STRING_EQUAL(tw_span_context_traceparent(c128, tp, sizeof tp),
                           "00-0000000000000001000000000000000f-00000000000000ff-00");
    /* Short buffers and missing contexts. */
    CU_ASSERT_PTR_NULL(tw_span_context_trace_id_hex32(c64, trace, 32));
    CU_ASSERT_PTR_NULL(tw_span_context_span_id_hex(c64, span, 16));
    CU_ASSERT_PTR_NULL(tw_span_context_traceparent(c64, tp, 55));
    CU_ASSERT_PTR_NULL(tw_span_context_traceparent(NULL, tp, sizeof tp));
    CU_ASSERT_STRING_EQUAL(tp, ""); /* nothing active: an empty field */
    CU_ASSERT_PTR_NULL(tw_span_context_span_id_hex(NULL, span, sizeof span));
    tw_span_context_unref(c64);
    tw_span_context_unref(c128);
}

static void test_traceparent_of_the_active_context_is_what_w3c_injects(void)
{
    tw_tracer_options *o = tw_tracer_options_new();
    tw_tracer_options_set_service(o, "svc");
    tw_tracer_options_set_trace_id_128bit(o, false); /* 64-bit: padded in traceparent */
    tw_tracer_options_set_reporter(o, tw_reporter_memory_new(0));
    tw_tracer_options_set_propagator(o, tw_propagator_parse("w3c", NULL));
    tw_tracer *t = tw_tracer_new(o, NULL);
    tw_tracer_options_free(o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    char tp[TW_TRACEPARENT_SIZE];
    CU_ASSERT_PTR_NULL(tw_span_context_traceparent(tw_tracer_active_context(t), tp, sizeof tp));
    tw_span *s = tw_span_start(t, "request", NULL);
    tw_scope *scope = tw_scope_activate(s, true);
    CU_ASSERT_PTR_NOT_NULL(tw_span_context_traceparent(tw_tracer_active_context(t), tp, sizeof tp));
    tw_headers *h = tw_headers_new();
    tw_carrier_writer w = tw_headers_writer(h);
    CU_ASSERT_EQUAL(tw_tracer_inject(t, tw_span_get_context(s), TW_FORMAT_HTTP_HEADERS, &w), TW_OK);
    CU_ASSERT_STRING_EQUAL(tw_headers_get(h, "traceparent"), tp);
    tw_headers_free(h);
    tw_scope_close(scope);
    tw_tracer_free(t);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("core/context", NULL, NULL);
    CU_add_test(suite, "zero_ids_are_rejected", test_zero_ids_are_rejected);
    CU_add_test(suite, "accessors_and_flags", test_accessors_and_flags);
    CU_add_test(suite, "ref_counts_owned_contexts", test_ref_counts_owned_contexts);
    CU_add_test(suite, "baggage_is_copy_on_write", test_baggage_is_copy_on_write);
    CU_add_test(suite, "hex_forms_for_log_correlation", test_hex_forms_for_log_correlation);
    CU_add_test(suite, "traceparent_of_the_active_context_is_what_w3c_injects",
                test_traceparent_of_the_active_context_is_what_w3c_injects);
    CU_add_test(suite, "ref_of_borrowed_context_outlives_span",
                test_ref_of_borrowed_context_outlives_span);
}
