/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/propagation/test_composite.c: suite "propagation/composite":
 * building propagators (tw_propagator_new/parse), inject with several
 * codecs, extract's choice between codecs (first present trace context,
 * then hints, baggage merged), the single carrier scan, carrier contracts,
 * the tw_headers carrier, and the tracer integration (options, inject,
 * extract, the warnings counter, JAEGER_PROPAGATION) (docs/PROPAGATION.md,
 * "Combining codecs").
 */
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "harness.h"
#include "prop_test.h"

#define HTTP TW_FORMAT_HTTP_HEADERS
#define MAP TW_FORMAT_TEXT_MAP
#define TP "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

static tw_span_context *extract_list(const char *list, const tw_headers *h, collected_warnings *w,
                                     tw_error **err)
{
    tw_propagator *p = tw_propagator_parse(list, NULL);
    CU_ASSERT_PTR_NOT_NULL(p);
    tw_carrier_reader r = tw_headers_reader(h);
    tw_span_context *c = tw_propagator_extract(p, HTTP, &r, w ? collect_warning : NULL, w, err);
    tw_propagator_free(p);
    return c;
}

/* ---- building ----------------------------------------------------------------------------- */

static void test_new_refuses_bad_codec_lists(void)
{
    tw_error *err = NULL;
    tw_codec dup[] = {TW_CODEC_W3C, TW_CODEC_JAEGER, TW_CODEC_W3C};
    tw_codec unknown[] = {TW_CODEC_JAEGER, (tw_codec)42};
    CU_ASSERT_PTR_NULL(tw_propagator_new(dup, 0, &err));
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_INVALID_ARG);
    tw_error_free(err);
    err = NULL;
    CU_ASSERT_PTR_NULL(tw_propagator_new(NULL, 1, &err));
    tw_error_free(err);
    err = NULL;
    CU_ASSERT_PTR_NULL(tw_propagator_new(dup, 3, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), "codec w3c listed twice"));
    tw_error_free(err);
    err = NULL;
    CU_ASSERT_PTR_NULL(tw_propagator_new(unknown, 2, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), "unknown codec 42"));
    tw_error_free(err);
    tw_codec all[] = {TW_CODEC_W3C, TW_CODEC_B3_SINGLE, TW_CODEC_B3, TW_CODEC_JAEGER};
    tw_propagator *p = tw_propagator_new(all, 4, NULL);
    CU_ASSERT_PTR_NOT_NULL(p);
    tw_propagator_free(p);
    tw_propagator_free(NULL);
}

static void test_parse_reads_jaeger_propagation_lists(void)
{
    static const char *const good[] = {
        "jaeger", "b3", "b3-single", "w3c", "jaeger,b3,w3c", " W3C ,\tJaeger ", "B3-Single,b3"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        tw_error *err = NULL;
        tw_propagator *p = tw_propagator_parse(good[i], &err);
        CU_ASSERT_PTR_NOT_NULL(p);
        CU_ASSERT_PTR_NULL(err);
        tw_propagator_free(p);
    }
    static const struct {
        const char *list, *reason;
    } bad[] = {
        {"", "empty entry"},
        {" ", "empty entry"},
        {"jaeger,,b3", "empty entry"},
        {"jaeger,", "empty entry"},
        {"zipkin", "unknown format \"zipkin\" (use jaeger, b3, b3-single, w3c)"},
        {"jaeger,tracecontext", "unknown format \"tracecontext\""},
        {"jaeger,JAEGER", "\"JAEGER\" is listed twice"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tw_error *err = NULL;
        CU_ASSERT_PTR_NULL(tw_propagator_parse(bad[i].list, &err));
        CU_ASSERT_EQUAL(tw_error_status(err), TW_E_CONFIG);
        CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), bad[i].reason));
        tw_error_free(err);
    }
    tw_error *err = NULL;
    CU_ASSERT_PTR_NULL(tw_propagator_parse(NULL, &err));
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_INVALID_ARG);
    tw_error_free(err);
}

/* ---- inject ------------------------------------------------------------------------------- */

static void test_inject_writes_every_codec_in_order(void)
{
    tw_propagator *p = tw_propagator_parse("w3c,jaeger,b3-single", NULL);
    tw_span_context *c = make_context(0, 1, 2, 0, TW_FLAG_SAMPLED, "k", "v", NULL);
    tw_headers *h = tw_headers_new();
    tw_carrier_writer w = tw_headers_writer(h);
    CU_ASSERT_EQUAL(tw_propagator_inject(p, c, HTTP, &w), TW_OK);
    static const char *const keys[] = {"traceparent", "baggage", "uber-trace-id", "uberctx-k",
                                       "b3"};
    CU_ASSERT_EQUAL(tw_headers_count(h), 5);
    for (size_t i = 0; i < 5; i++) {
        const char *k = NULL;
        CU_ASSERT(tw_headers_item(h, i, &k, NULL) && strcmp(k, keys[i]) == 0);
    }
    /* Injecting again replaces, so a forwarded request never carries two contexts. */
    tw_span_context *c2 = make_context(0, 3, 4, 0, 0, NULL);
    CU_ASSERT_EQUAL(tw_propagator_inject(p, c2, HTTP, &w), TW_OK);
    CU_ASSERT_EQUAL(tw_headers_count(h), 5);
    CU_ASSERT_STRING_EQUAL(tw_headers_get(h, "b3"), "0000000000000003-0000000000000004-0");
    tw_headers_free(h);
    tw_span_context_unref(c2);
    tw_span_context_unref(c);
    tw_propagator_free(p);
}

/* ---- extract: choosing ---------------------------------------------------------------------- */

static void test_first_codec_with_a_context_wins(void)
{
    tw_headers *h = headers_of("traceparent", TP, "uber-trace-id", "1:2:0:1", "b3", "3-4-1", NULL);
    tw_span_context *c = extract_list("jaeger,w3c,b3", h, NULL, NULL);
    CU_ASSERT(ids_equal(c, 0, 1, 2, 0));
    tw_span_context_unref(c);
    c = extract_list("w3c,jaeger", h, NULL, NULL);
    CU_ASSERT(ids_equal(c, 0x0af7651916cd43ddULL, 0x8448eb211c80319cULL, 0xb7ad6b7169203331ULL, 0));
    tw_span_context_unref(c);
    c = extract_list("b3-single,jaeger", h, NULL, NULL);
    CU_ASSERT(ids_equal(c, 0, 3, 4, 0));
    tw_span_context_unref(c);
    tw_headers_free(h);
}

static void test_absent_codecs_are_skipped(void)
{
    tw_headers *h = headers_of("traceparent", TP, NULL);
    tw_span_context *c = extract_list("jaeger,b3,w3c", h, NULL, NULL);
    CU_ASSERT(ids_equal(c, 0x0af7651916cd43ddULL, 0x8448eb211c80319cULL, 0xb7ad6b7169203331ULL, 0));
    tw_span_context_unref(c);
    tw_headers_free(h);
}

static void test_a_context_beats_an_earlier_codecs_hint(void)
{
    tw_headers *h = headers_of("b3", "0", "jaeger-debug-id", "dbg", "traceparent", TP, NULL);
    tw_span_context *c = extract_list("b3,jaeger,w3c", h, NULL, NULL);
    CU_ASSERT(tw_span_context_is_valid(c));
    CU_ASSERT(tw_span_context_is_sampled(c)); /* traceparent's decision, not b3's */
    tw_span_context_unref(c);
    tw_headers_free(h);
    /* Without a context, the first hint decides. */
    h = headers_of("b3", "0", "jaeger-debug-id", "dbg", NULL);
    c = extract_list("b3,jaeger", h, NULL, NULL);
    CU_ASSERT_FALSE(tw_span_context_is_valid(c));
    CU_ASSERT_EQUAL(tw_span_context_flags(c), 0);
    CU_ASSERT_PTR_NULL(tw_span_context_debug_id(c));
    tw_span_context_unref(c);
    c = extract_list("jaeger,b3", h, NULL, NULL);
    CU_ASSERT_STRING_EQUAL(tw_span_context_debug_id(c), "dbg");
    tw_span_context_unref(c);
    tw_headers_free(h);
}

static void test_a_malformed_first_context_is_not_replaced(void)
{
    tw_headers *h = headers_of("uber-trace-id", "1:2:0", "traceparent", TP, NULL);
    tw_error *err = NULL;
    tw_span_context *c = extract_list("jaeger,w3c", h, NULL, &err);
    ASSERT_MALFORMED(c, err, "uber-trace-id", "3 fields");
    c = extract_list("w3c,jaeger", h, NULL, NULL); /* the other order finds w3c first */
    CU_ASSERT(tw_span_context_is_valid(c));
    tw_span_context_unref(c);
    tw_headers_free(h);
}

static void test_baggage_is_merged_from_every_codec(void)
{
    tw_headers *h = headers_of("traceparent", TP, "baggage", "shared=w3c,only-w3c=1",
                               "uberctx-shared", "jaeger", "uberctx-only-jaeger", "2", NULL);
    tw_span_context *c = extract_list("jaeger,w3c", h, NULL, NULL);
    CU_ASSERT(tw_span_context_is_valid(c)); /* the w3c context ... */
    CU_ASSERT_EQUAL(tw_span_context_baggage_count(c), 3);
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "shared"),
                           "jaeger"); /* ... jaeger first */
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "only-w3c"), "1");
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "only-jaeger"), "2");
    tw_span_context_unref(c);
    c = extract_list("w3c,jaeger", h, NULL, NULL);
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "shared"), "w3c");
    tw_span_context_unref(c);
    /* A codec that is not configured contributes nothing. */
    c = extract_list("w3c", h, NULL, NULL);
    CU_ASSERT_EQUAL(tw_span_context_baggage_count(c), 2);
    tw_span_context_unref(c);
    tw_headers_free(h);
}

static void test_merged_baggage_obeys_the_limits(void)
{
    tw_headers *h = headers_of("traceparent", TP, NULL);
    char key[32], header[4096] = "";
    for (int i = 0; i < 100; i++) {
        snprintf(key, sizeof key, "uberctx-j%d", i);
        tw_headers_add(h, key, "v");
        snprintf(key, sizeof key, "%sw%d=v", i ? "," : "", i);
        strcat(header, key);
    }
    tw_headers_add(h, "baggage", header);
    collected_warnings w = {0};
    tw_span_context *c = extract_list("jaeger,w3c", h, &w, NULL);
    CU_ASSERT_EQUAL(tw_span_context_baggage_count(c), TW_BAGGAGE_MAX_ITEMS);
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "j99"), "v");
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "w79"), "v");
    CU_ASSERT_PTR_NULL(tw_span_context_baggage_get(c, "w80"));
    CU_ASSERT(warned(&w, "baggage item \"w80\" dropped: the merged baggage exceeds 180 items"));
    tw_span_context_unref(c);
    tw_headers_free(h);
}

static void test_nothing_found_names_the_codecs(void)
{
    tw_headers *h = headers_of("content-type", "text/plain", NULL);
    tw_error *err = NULL;
    CU_ASSERT_PTR_NULL(extract_list("jaeger,b3,w3c", h, NULL, &err));
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_NOT_FOUND);
    CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), "(jaeger, b3, w3c)"));
    tw_error_free(err);
    tw_headers_free(h);
    h = tw_headers_new(); /* an empty carrier */
    err = NULL;
    CU_ASSERT_PTR_NULL(extract_list("jaeger", h, NULL, &err));
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_NOT_FOUND);
    tw_error_free(err);
    tw_headers_free(h);
}

/* ---- carriers ----------------------------------------------------------------------------- */

typedef struct counting_reader {
    size_t foreach_calls;
    const tw_headers *headers;
    bool has_null_pairs;
    tw_status fail_with;
} counting_reader;

static tw_status counting_foreach(void *user_data, tw_carrier_handler_fn handler, void *data)
{
    counting_reader *r = user_data;
    r->foreach_calls++;
    if (r->fail_with != TW_OK)
        return r->fail_with;
    if (r->has_null_pairs) {
        handler(data, NULL, "x");
        handler(data, "uber-trace-id", NULL);
    }
    /* Each pair through a scratch buffer that is overwritten afterwards: the codecs must copy
     * what they keep (the reader contract). */
    for (size_t i = 0; i < tw_headers_count(r->headers); i++) {
        const char *k, *v;
        tw_headers_item(r->headers, i, &k, &v);
        char key[64], value[256];
        snprintf(key, sizeof key, "%s", k);
        snprintf(value, sizeof value, "%s", v);
        tw_status st = handler(data, key, value);
        memset(key, 'X', sizeof key - 1);
        memset(value, 'X', sizeof value - 1);
        if (st != TW_OK)
            return st;
    }
    return TW_OK;
}

static void test_the_carrier_is_read_once_and_values_are_copied(void)
{
    tw_headers *h = headers_of("traceparent", TP, "uber-trace-id", "1:2:0:1", "X-B3-TraceId", "5",
                               "X-B3-SpanId", "6", "tracestate", "a=1", "uberctx-k", "v", NULL);
    counting_reader cr = {0, h, true, TW_OK};
    tw_carrier_reader r = {counting_foreach, &cr};
    tw_propagator *p = tw_propagator_parse("b3,w3c,jaeger", NULL);
    tw_span_context *c = tw_propagator_extract(p, HTTP, &r, NULL, NULL, NULL);
    CU_ASSERT_EQUAL(cr.foreach_calls, 1);
    CU_ASSERT(ids_equal(c, 0, 5, 6, 0));
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "k"), "v");
    tw_span_context_unref(c);
    tw_propagator_free(p);
    p = tw_propagator_parse("w3c", NULL);
    c = tw_propagator_extract(p, HTTP, &r, NULL, NULL, NULL);
    CU_ASSERT_STRING_EQUAL(tw_span_context_tracestate(c), "a=1");
    tw_span_context_unref(c);
    tw_propagator_free(p);
    tw_headers_free(h);
}

static void test_carrier_and_argument_errors(void)
{
    tw_headers *h = headers_of("uber-trace-id", "1:2:0:1", NULL);
    counting_reader cr = {0, h, false, TW_E_IO};
    tw_carrier_reader failing = {counting_foreach, &cr};
    tw_carrier_reader good = tw_headers_reader(h);
    tw_carrier_reader no_foreach = {NULL, h};
    tw_propagator *p = tw_propagator_parse("jaeger", NULL);
    tw_error *err = NULL;
    CU_ASSERT_PTR_NULL(tw_propagator_extract(p, HTTP, &failing, NULL, NULL, &err));
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_IO);
    tw_error_free(err);
    err = NULL;
    CU_ASSERT_PTR_NULL(tw_propagator_extract(p, TW_FORMAT_BINARY, &good, NULL, NULL, &err));
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_INVALID_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), "tw_binary_extract"));
    tw_error_free(err);
    err = NULL;
    CU_ASSERT_PTR_NULL(tw_propagator_extract(NULL, HTTP, &good, NULL, NULL, &err));
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_INVALID_ARG);
    tw_error_free(err);
    err = NULL;
    CU_ASSERT_PTR_NULL(tw_propagator_extract(p, HTTP, &no_foreach, NULL, NULL, &err));
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_INVALID_ARG);
    tw_error_free(err);
    CU_ASSERT_PTR_NULL(tw_propagator_extract(p, HTTP, NULL, NULL, NULL, NULL));
    tw_propagator_free(p);
    tw_headers_free(h);
}

static tw_status stop_at_second(void *data, const char *key, const char *value)
{
    (void)key;
    (void)value;
    return ++*(int *)data == 2 ? TW_E_STATE : TW_OK;
}

static void test_headers_list(void)
{
    tw_headers *h = tw_headers_new();
    CU_ASSERT_EQUAL(tw_headers_count(h), 0);
    CU_ASSERT_EQUAL(tw_headers_add(h, "A", "1"), TW_OK);
    CU_ASSERT_EQUAL(tw_headers_add(h, "b", "2"), TW_OK);
    CU_ASSERT_EQUAL(tw_headers_add(h, "a", "3"), TW_OK); /* duplicates are kept */
    CU_ASSERT_EQUAL(tw_headers_count(h), 3);
    CU_ASSERT_STRING_EQUAL(tw_headers_get(h, "a"), "1"); /* first, ignoring case */
    CU_ASSERT_PTR_NULL(tw_headers_get(h, "c"));
    /* set: the first "a" changes in place, the later one goes. */
    CU_ASSERT_EQUAL(tw_headers_set(h, "a", "4"), TW_OK);
    CU_ASSERT_EQUAL(tw_headers_count(h), 2);
    const char *k, *v;
    CU_ASSERT(tw_headers_item(h, 0, &k, &v) && strcmp(k, "a") == 0 && strcmp(v, "4") == 0);
    CU_ASSERT(tw_headers_item(h, 1, &k, &v) && strcmp(k, "b") == 0);
    CU_ASSERT_FALSE(tw_headers_item(h, 2, &k, &v));
    CU_ASSERT_EQUAL(tw_headers_set(h, "new", "5"), TW_OK);
    CU_ASSERT_EQUAL(tw_headers_count(h), 3);
    /* The reader stops at a handler's error and returns it. */
    tw_carrier_reader r = tw_headers_reader(h);
    int calls = 0;
    CU_ASSERT_EQUAL(r.foreach (r.user_data, stop_at_second, &calls), TW_E_STATE);
    CU_ASSERT_EQUAL(calls, 2);
    /* Bad arguments. */
    CU_ASSERT_EQUAL(tw_headers_add(NULL, "a", "b"), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_headers_add(h, NULL, "b"), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_headers_set(h, "a", NULL), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_headers_count(NULL), 0);
    CU_ASSERT_PTR_NULL(tw_headers_get(NULL, "a"));
    CU_ASSERT_FALSE(tw_headers_item(NULL, 0, NULL, NULL));
    tw_headers_clear(h);
    CU_ASSERT_EQUAL(tw_headers_count(h), 0);
    CU_ASSERT_EQUAL(tw_headers_add(h, "after", "clear"), TW_OK);
    tw_headers_free(h);
    tw_headers_free(NULL);
    tw_headers_clear(NULL);
}

/* ---- tracer integration ------------------------------------------------------------------- */

static void test_tracer_uses_jaeger_by_default(void)
{
    tw_tracer *tracer = tracer_always_sampled(NULL, NULL);
    tw_span *s = tw_span_start(tracer, "op", NULL);
    tw_headers *h = tw_headers_new();
    tw_carrier_writer w = tw_headers_writer(h);
    CU_ASSERT_EQUAL(tw_tracer_inject(tracer, tw_span_get_context(s), HTTP, &w), TW_OK);
    CU_ASSERT_EQUAL(tw_headers_count(h), 1);
    CU_ASSERT_PTR_NOT_NULL(tw_headers_get(h, "uber-trace-id"));
    CU_ASSERT_EQUAL(tw_tracer_inject(tracer, tw_span_get_context(s), TW_FORMAT_BINARY, &w),
                    TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_tracer_inject(NULL, tw_span_get_context(s), HTTP, &w), TW_E_INVALID_ARG);
    tw_carrier_reader r = tw_headers_reader(h);
    tw_span_context *c = tw_tracer_extract(tracer, HTTP, &r, NULL);
    CU_ASSERT_EQUAL(tw_span_context_span_id(c), tw_span_context_span_id(tw_span_get_context(s)));
    tw_span_context_unref(c);
    tw_error *err = NULL;
    CU_ASSERT_PTR_NULL(tw_tracer_extract(NULL, HTTP, &r, &err));
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_INVALID_ARG);
    tw_error_free(err);
    tw_span_finish(s);
    tw_headers_free(h);
    tw_tracer_free(tracer);
}

static void test_tracer_with_a_propagator_joins_the_upstream_trace(void)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    CU_ASSERT_EQUAL(tw_tracer_options_set_propagator(opts, NULL), TW_E_INVALID_ARG);
    /* Setting twice frees the first. */
    tw_tracer_options_set_propagator(opts, tw_propagator_parse("jaeger", NULL));
    tw_tracer_options_set_propagator(opts, tw_propagator_parse("w3c,b3", NULL));
    tw_reporter *memory = NULL;
    tw_tracer *tracer = tracer_always_sampled(&memory, opts);
    tw_headers *in = headers_of("traceparent", TP, "tracestate", "congo=t61rcWkgMzE", "baggage",
                                "user=alice,bad", NULL);
    tw_carrier_reader r = tw_headers_reader(in);
    tw_span_context *up = tw_tracer_extract(tracer, HTTP, &r, NULL);
    CU_ASSERT_EQUAL(tw_tracer_counter(tracer, TW_TRACER_EXTRACT_WARNINGS), 1);
    tw_span *server = tw_span_start_child(tracer, "server", up);
    tw_headers *out = tw_headers_new();
    tw_carrier_writer w = tw_headers_writer(out);
    CU_ASSERT_EQUAL(tw_tracer_inject(tracer, tw_span_get_context(server), HTTP, &w), TW_OK);
    const char *tp = tw_headers_get(out, "traceparent");
    CU_ASSERT_PTR_NOT_NULL_FATAL(tp);
    CU_ASSERT_EQUAL(strncmp(tp, "00-0af7651916cd43dd8448eb211c80319c-", 36), 0);
    CU_ASSERT_STRING_EQUAL(tw_headers_get(out, "tracestate"), "congo=t61rcWkgMzE");
    CU_ASSERT_STRING_EQUAL(tw_headers_get(out, "baggage"), "user=alice");
    CU_ASSERT_STRING_EQUAL(tw_headers_get(out, "X-B3-TraceId"), "0af7651916cd43dd8448eb211c80319c");
    CU_ASSERT_STRING_EQUAL(tw_headers_get(out, "X-B3-Sampled"), "1");
    CU_ASSERT_PTR_NULL(tw_headers_get(out, "uber-trace-id"));
    tw_span_finish(server);
    const tw_finished_span *f = finished_named(memory, "server");
    CU_ASSERT_PTR_NOT_NULL(f);
    tw_headers_free(out);
    tw_headers_free(in);
    tw_span_context_unref(up);
    tw_tracer_free(tracer);
}

static void test_jaeger_propagation_variable(void)
{
    setenv("JAEGER_SERVICE_NAME", "prop-env", 1);
    setenv("JAEGER_SAMPLER_TYPE", "const", 1);
    setenv("JAEGER_SAMPLER_PARAM", "1", 1);
    setenv("JAEGER_PROPAGATION", " W3C , b3-single ", 1);
    tw_error *err = NULL;
    tw_tracer *tracer = tw_tracer_new_from_env(NULL, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tracer);
    tw_span *s = tw_span_start(tracer, "op", NULL);
    tw_headers *h = tw_headers_new();
    tw_carrier_writer w = tw_headers_writer(h);
    CU_ASSERT_EQUAL(tw_tracer_inject(tracer, tw_span_get_context(s), HTTP, &w), TW_OK);
    CU_ASSERT_PTR_NOT_NULL(tw_headers_get(h, "traceparent"));
    CU_ASSERT_PTR_NOT_NULL(tw_headers_get(h, "b3"));
    CU_ASSERT_PTR_NULL(tw_headers_get(h, "uber-trace-id"));
    tw_span_finish(s);
    tw_headers_free(h);
    tw_tracer_free(tracer);

    setenv("JAEGER_PROPAGATION", "jaeger,zipkin", 1);
    CU_ASSERT_PTR_NULL(tw_tracer_new_from_env(NULL, &err));
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_CONFIG);
    CU_ASSERT_EQUAL(strncmp(tw_error_message(err), "JAEGER_PROPAGATION=\"jaeger,zipkin\": ", 36),
                    0);
    CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), "unknown format \"zipkin\""));
    tw_error_free(err);

    unsetenv("JAEGER_PROPAGATION"); /* unset: Jaeger only */
    tracer = tw_tracer_new_from_env(NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tracer);
    s = tw_span_start(tracer, "op", NULL);
    h = tw_headers_new();
    w = tw_headers_writer(h);
    tw_tracer_inject(tracer, tw_span_get_context(s), HTTP, &w);
    CU_ASSERT_EQUAL(tw_headers_count(h), 1);
    CU_ASSERT_PTR_NOT_NULL(tw_headers_get(h, "uber-trace-id"));
    tw_span_finish(s);
    tw_headers_free(h);
    tw_tracer_free(tracer);
    unsetenv("JAEGER_SERVICE_NAME");
    unsetenv("JAEGER_SAMPLER_TYPE");
    unsetenv("JAEGER_SAMPLER_PARAM");
}

static void test_options_free_releases_an_unused_propagator(void)
{
    /* Checked by ASan/valgrind: no leak when the options die unused or the tracer fails. */
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_propagator(opts, tw_propagator_parse("b3", NULL));
    tw_tracer_options_free(opts);
    opts = tw_tracer_options_new(); /* no service name: tw_tracer_new fails */
    tw_tracer_options_set_propagator(opts, tw_propagator_parse("b3", NULL));
    tw_tracer_options_set_reporter(opts, tw_reporter_memory_new(0));
    tw_error *err = NULL;
    CU_ASSERT_PTR_NULL(tw_tracer_new(opts, &err));
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_CONFIG);
    tw_error_free(err);
    tw_tracer_options_free(opts);
}

void tw_test_register(void)
{
    CU_pSuite s = CU_add_suite("propagation/composite", NULL, NULL);
    CU_add_test(s, "new_refuses_bad_codec_lists", test_new_refuses_bad_codec_lists);
    CU_add_test(s, "parse_reads_jaeger_propagation_lists",
                test_parse_reads_jaeger_propagation_lists);
    CU_add_test(s, "inject_writes_every_codec_in_order", test_inject_writes_every_codec_in_order);
    CU_add_test(s, "first_codec_with_a_context_wins", test_first_codec_with_a_context_wins);
    CU_add_test(s, "absent_codecs_are_skipped", test_absent_codecs_are_skipped);
    CU_add_test(s, "a_context_beats_an_earlier_codecs_hint",
                test_a_context_beats_an_earlier_codecs_hint);
    CU_add_test(s, "a_malformed_first_context_is_not_replaced",
                test_a_malformed_first_context_is_not_replaced);
    CU_add_test(s, "baggage_is_merged_from_every_codec", test_baggage_is_merged_from_every_codec);
    CU_add_test(s, "merged_baggage_obeys_the_limits", test_merged_baggage_obeys_the_limits);
    CU_add_test(s, "nothing_found_names_the_codecs", test_nothing_found_names_the_codecs);
    CU_add_test(s, "the_carrier_is_read_once_and_values_are_copied",
                test_the_carrier_is_read_once_and_values_are_copied);
    CU_add_test(s, "carrier_and_argument_errors", test_carrier_and_argument_errors);
    CU_add_test(s, "headers_list", test_headers_list);
    CU_add_test(s, "tracer_uses_jaeger_by_default", test_tracer_uses_jaeger_by_default);
    CU_add_test(s, "tracer_with_a_propagator_joins_the_upstream_trace",
                test_tracer_with_a_propagator_joins_the_upstream_trace);
    CU_add_test(s, "jaeger_propagation_variable", test_jaeger_propagation_variable);
    CU_add_test(s, "options_free_releases_an_unused_propagator",
                test_options_free_releases_an_unused_propagator);
}
