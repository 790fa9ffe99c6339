/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/handlers/test_drop_names.c: suite "handlers/drop_names": spans
 * whose operation name is in the list are dropped (exact, case-sensitive),
 * counted and not reported; others pass; bad arguments are refused; and with
 * wants_unsampled set, a drop handler placed before the latency metrics keeps
 * the dropped names out of them whatever the sampler decided.
 */
#include <string.h>

#include "fixtures.h"
#include "harness.h"

static tw_tracer *tracer_dropping; /* const(true), memory; drops "health" and "ready" */
static tw_reporter *memory_sender;

static int suite_init(void)
{
    static const char *const names[] = {"ready", "health", "health"};
    tw_span_handler *drop = tw_handler_drop_names_new(names, 3);
    if (!drop)
        return 1;
    tw_tracer_options *opts = tw_tracer_options_new();
    if (tw_tracer_options_add_handler(opts, drop) != TW_OK) {
        tw_span_handler_free(drop);
        tw_tracer_options_free(opts);
        return 1;
    }
    tracer_dropping = tracer_always_sampled(&memory_sender, opts);
    return tracer_dropping ? 0 : 1;
}

static int suite_cleanup(void)
{
    tw_tracer_free(tracer_dropping);
    return 0;
}

static void test_listed_names_are_dropped_and_counted(void)
{
    tw_memory_reporter_clear(memory_sender);
    uint64_t dropped_before =
        tw_tracer_counter(tracer_dropping, TW_TRACER_SPANS_DROPPED_BY_HANDLER);
    static const char *const ops[] = {"health", "GET /orders", "ready",
                                      "Health", "healthz",     "health "};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        tw_span_finish(tw_span_start(tracer_dropping, ops[i], NULL));
    CU_ASSERT_EQUAL(
        tw_tracer_counter(tracer_dropping, TW_TRACER_SPANS_DROPPED_BY_HANDLER) - dropped_before, 2);
    CU_ASSERT_EQUAL(tw_memory_reporter_count(memory_sender), 4);
    CU_ASSERT_PTR_NULL(finished_named(memory_sender, "health"));
    CU_ASSERT_PTR_NULL(finished_named(memory_sender, "ready"));
    CU_ASSERT_PTR_NOT_NULL(finished_named(memory_sender, "GET /orders"));
    CU_ASSERT_PTR_NOT_NULL(finished_named(memory_sender, "Health"));  /* case matters */
    CU_ASSERT_PTR_NOT_NULL(finished_named(memory_sender, "healthz")); /* no prefix match */
    CU_ASSERT_PTR_NOT_NULL(finished_named(memory_sender, "health "));
}

static void test_empty_list_drops_nothing_and_bad_lists_are_refused(void)
{
    tw_span_handler *none = tw_handler_drop_names_new(NULL, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(none);
    tw_span_handler_free(none);
    CU_ASSERT_PTR_NULL(tw_handler_drop_names_new(NULL, 2));
    static const char *const with_null[] = {"a", NULL};
    CU_ASSERT_PTR_NULL(tw_handler_drop_names_new(with_null, 2));
}

/* A first handler that renames spans, so the drop sees the new name. */
static tw_handler_result rename_probe(void *user_data, tw_mutable_span *span)
{
    (void)user_data;
    if (strcmp(tw_mutable_span_operation(span), "/healthz") == 0)
        tw_mutable_span_set_operation(span, "health");
    return TW_HANDLER_KEEP;
}

static void test_drop_sees_names_as_earlier_handlers_left_them(void)
{
    static const char *const names[] = {"health"};
    tw_span_handler rename = {.size = sizeof rename, .on_finish = rename_probe};
    tw_span_handler *drop = tw_handler_drop_names_new(names, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(drop);
    tw_tracer_options *opts = tw_tracer_options_new();
    CU_ASSERT_EQUAL(tw_tracer_options_add_handler(opts, &rename), TW_OK);
    CU_ASSERT_EQUAL(tw_tracer_options_add_handler(opts, drop), TW_OK);
    tw_reporter *memory;
    tw_tracer *tracer = tracer_always_sampled(&memory, opts);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tracer);
    tw_span_finish(tw_span_start(tracer, "/healthz", NULL));
    CU_ASSERT_EQUAL(tw_memory_reporter_count(memory), 0);
    CU_ASSERT_EQUAL(tw_tracer_counter(tracer, TW_TRACER_SPANS_DROPPED_BY_HANDLER), 1);
    tw_tracer_free(tracer);
}

static void test_drop_before_metrics_keeps_dropped_names_out_of_them(void)
{
    static const char *const names[] = {"health"};
    tw_latency_metrics *metrics = tw_latency_metrics_new(0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(metrics);
    tw_span_handler *drop = tw_handler_drop_names_new(names, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(drop);
    drop->wants_unsampled = true; /* a later handler sees unsampled spans */
    tw_span_handler metrics_handler = tw_latency_metrics_handler(metrics);
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "drop-then-measure");
    tw_error *err = NULL;
    tw_tracer_options_set_sampler(opts, tw_sampler_probabilistic_new(0.5, &err));
    tw_tracer_options_set_reporter(opts, tw_reporter_memory_new(0));
    CU_ASSERT_EQUAL(tw_tracer_options_add_handler(opts, drop), TW_OK);
    CU_ASSERT_EQUAL(tw_tracer_options_add_handler(opts, &metrics_handler), TW_OK);
    tw_tracer *tracer = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tracer);
    for (int i = 0; i < 200; i++) {
        tw_span_finish(tw_span_start(tracer, "health", NULL));
        tw_span_finish(tw_span_start(tracer, "work", NULL));
    }
    CU_ASSERT_EQUAL(tw_latency_metrics_count(metrics, "health"), 0);
    CU_ASSERT_EQUAL(tw_latency_metrics_count(metrics, "work"), 200);
    CU_ASSERT(tw_tracer_counter(tracer, TW_TRACER_SPANS_RECORDED_LOCALLY) > 0);
    tw_tracer_free(tracer);
    tw_latency_metrics_free(metrics);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("handlers/drop_names", suite_init, suite_cleanup);
    CU_add_test(suite, "listed_names_are_dropped_and_counted",
                test_listed_names_are_dropped_and_counted);
    CU_add_test(suite, "empty_list_drops_nothing_and_bad_lists_are_refused",
                test_empty_list_drops_nothing_and_bad_lists_are_refused);
    CU_add_test(suite, "drop_sees_names_as_earlier_handlers_left_them",
                test_drop_sees_names_as_earlier_handlers_left_them);
    CU_add_test(suite, "drop_before_metrics_keeps_dropped_names_out_of_them",
                test_drop_before_metrics_keeps_dropped_names_out_of_them);
}
