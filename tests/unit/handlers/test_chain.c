/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/handlers/test_chain.c: suite "handlers/chain": the finished-span
 * handler chain: order, what a drop does and how it is counted, sample local
 * (unsampled spans recorded for the handlers that want them, never reported,
 * context unchanged), that nothing records without such a handler, the
 * add/destroy contract, spans finished after close, and threads finishing
 * spans through a chain at once (run under TSan).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "harness.h"
#include "internal.h"

/* ---- recording handlers ------------------------------------------------------------------- */

/* What one test handler saw; single-threaded tests only. */
typedef struct {
    char name; /* appended to call_order on each call */
    int calls;
    int destroyed;
    bool saw_sampled; /* tw_mutable_span_is_sampled of the last call */
    bool saw_tag;     /* the last span had the tag "k" */
    size_t saw_logs;  /* log count of the last span */
    tw_handler_result result;
    const char *drop_op; /* drop spans with this name (NULL: keep all) */
} probe;

static char call_order[64];

static tw_handler_result probe_on_finish(void *user_data, tw_mutable_span *span)
{
    probe *p = user_data;
    p->calls++;
    size_t n = strlen(call_order);
    if (n + 1 < sizeof call_order) {
        call_order[n] = p->name;
        call_order[n + 1] = '\0';
    }
    p->saw_sampled = tw_mutable_span_is_sampled(span);
    p->saw_tag = tw_mutable_span_find_tag(span, "k", NULL);
    p->saw_logs = tw_mutable_span_log_count(span);
    if (p->drop_op && strcmp(tw_mutable_span_operation(span), p->drop_op) == 0)
        return TW_HANDLER_DROP;
    return p->result;
}

static void probe_destroy(void *user_data)
{
    ((probe *)user_data)->destroyed++;
}

static tw_span_handler probe_handler(probe *p, bool wants_unsampled)
{
    return (tw_span_handler){.size = sizeof(tw_span_handler),
                             .wants_unsampled = wants_unsampled,
                             .on_finish = probe_on_finish,
                             .destroy = probe_destroy,
                             .user_data = p};
}

/* A tracer with @sampler, a memory reporter and @n handlers. */
static tw_tracer *tracer_with(tw_sampler *sampler, const tw_span_handler *handlers, size_t n,
                              tw_reporter **memory_out)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "handlers-test");
    tw_tracer_options_set_sampler(opts, sampler);
    tw_reporter *memory = tw_reporter_memory_new(0);
    tw_tracer_options_set_reporter(opts, memory);
    for (size_t i = 0; i < n; i++)
        CU_ASSERT_EQUAL(tw_tracer_options_add_handler(opts, &handlers[i]), TW_OK);
    tw_tracer *tracer = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    if (memory_out)
        *memory_out = memory;
    return tracer;
}

static int suite_init(void)
{
    return 0;
}

static int suite_cleanup(void)
{
    return 0;
}

/* ---- tests -------------------------------------------------------------------------------- */

/* A handler that tags the span with how many handlers ran before it. */
static tw_handler_result tag_position(void *user_data, tw_mutable_span *span)
{
    const char *key = user_data;
    tw_value v;
    int64_t before = tw_mutable_span_find_tag(span, "position", &v) ? v.as.i64 : 0;
    tw_mutable_span_set_tag_int64(span, "position", before + 1);
    tw_mutable_span_set_tag_int64(span, key, before + 1);
    return TW_HANDLER_KEEP;
}

static void test_handlers_run_in_the_order_added_and_see_earlier_writes(void)
{
    tw_span_handler chain[3];
    static const char *keys[] = {"first", "second", "third"};
    for (size_t i = 0; i < 3; i++)
        chain[i] = (tw_span_handler){
            .size = sizeof chain[i], .on_finish = tag_position, .user_data = (void *)keys[i]};
    tw_reporter *memory;
    tw_tracer *tracer = tracer_with(tw_sampler_const_new(true), chain, 3, &memory);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tracer);
    tw_span_finish(tw_span_start(tracer, "ordered", NULL));
    const tw_finished_span *f = finished_named(memory, "ordered");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    tw_value v;
    CU_ASSERT(tw_finished_span_find_tag(f, "first", &v) && v.as.i64 == 1);
    CU_ASSERT(tw_finished_span_find_tag(f, "second", &v) && v.as.i64 == 2);
    CU_ASSERT(tw_finished_span_find_tag(f, "third", &v) && v.as.i64 == 3);
    CU_ASSERT(tw_finished_span_find_tag(f, "position", &v) && v.as.i64 == 3);
    tw_tracer_free(tracer);
}

static void test_drop_ends_the_chain_and_is_counted_not_reported(void)
{
    probe dropper = {.name = 'd', .drop_op = "noise"};
    probe later = {.name = 'l'};
    tw_span_handler chain[] = {probe_handler(&dropper, false), probe_handler(&later, false)};
    tw_reporter *memory;
    tw_tracer *tracer = tracer_with(tw_sampler_const_new(true), chain, 2, &memory);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tracer);
    call_order[0] = '\0';
    tw_span_finish(tw_span_start(tracer, "noise", NULL));
    tw_span_finish(tw_span_start(tracer, "signal", NULL));
    CU_ASSERT_STRING_EQUAL(call_order, "ddl"); /* the dropped span never reached 'l' */
    CU_ASSERT_EQUAL(tw_memory_reporter_count(memory), 1);
    CU_ASSERT_PTR_NULL(finished_named(memory, "noise"));
    CU_ASSERT_PTR_NOT_NULL(finished_named(memory, "signal"));
    CU_ASSERT_EQUAL(tw_tracer_counter(tracer, TW_TRACER_SPANS_DROPPED_BY_HANDLER), 1);
    CU_ASSERT_EQUAL(tw_tracer_counter(tracer, TW_TRACER_SPANS_FINISHED_SAMPLED), 2);
    CU_ASSERT_EQUAL(tw_reporter_counter(memory, TW_COUNTER_SPANS_REPORTED), 1);
    CU_ASSERT_EQUAL(tw_tracer_counter(tracer, TW_TRACER_SPANS_RECORDED_LOCALLY), 0);
    tw_tracer_free(tracer);
    CU_ASSERT_EQUAL(dropper.destroyed, 1);
    CU_ASSERT_EQUAL(later.destroyed, 1);
}

static void test_unsampled_spans_reach_only_handlers_that_want_them(void)
{
    probe local = {.name = 'w'};
    probe sampled_only = {.name = 's'};
    tw_span_handler chain[] = {probe_handler(&local, true), probe_handler(&sampled_only, false)};
    tw_reporter *memory;
    tw_tracer *tracer = tracer_with(tw_sampler_const_new(false), chain, 2, &memory);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tracer);
    tw_span *s = tw_span_start(tracer, "quiet", NULL);
    tw_span_set_tag_str(s, "k", "v");
    tw_span_log_kv(s, "event", "e", NULL);
    tw_span_finish(s);
    CU_ASSERT_EQUAL(local.calls, 1);
    CU_ASSERT_FALSE(local.saw_sampled);
    CU_ASSERT(local.saw_tag); /* tags and logs were recorded for it */
    CU_ASSERT_EQUAL(local.saw_logs, 1);
    CU_ASSERT_EQUAL(sampled_only.calls, 0);
    CU_ASSERT_EQUAL(tw_memory_reporter_count(memory), 0);
    CU_ASSERT_EQUAL(tw_reporter_counter(memory, TW_COUNTER_SPANS_REPORTED), 0);
    CU_ASSERT_EQUAL(tw_tracer_counter(tracer, TW_TRACER_SPANS_RECORDED_LOCALLY), 1);
    CU_ASSERT_EQUAL(tw_tracer_counter(tracer, TW_TRACER_SPANS_STARTED_SAMPLED), 0);
    CU_ASSERT_EQUAL(tw_tracer_counter(tracer, TW_TRACER_SPANS_FINISHED_SAMPLED), 0);
    CU_ASSERT_EQUAL(tw_tracer_counter(tracer, TW_TRACER_TRACES_STARTED_SAMPLED), 0);
    tw_tracer_free(tracer);
}

static void test_local_recording_does_not_change_what_propagates(void)
{
    probe local = {.name = 'w'};
    tw_span_handler h = probe_handler(&local, true);
    tw_tracer *tracer = tracer_with(tw_sampler_const_new(false), &h, 1, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tracer);
    tw_span *root = tw_span_start(tracer, "root", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(root->data);  /* it records... */
    CU_ASSERT_FALSE(tw_span_is_sampled(root)); /* ...but is not sampled */
    const tw_span_context *c = tw_span_get_context(root);
    CU_ASSERT_FALSE(tw_span_context_is_sampled(c));
    CU_ASSERT_EQUAL(tw_span_context_flags(c), 0);
    tw_headers *headers = tw_headers_new();
    tw_carrier_writer w = tw_headers_writer(headers);
    CU_ASSERT_EQUAL(tw_tracer_inject(tracer, c, TW_FORMAT_TEXT_MAP, &w), TW_OK);
    const char *uber = tw_headers_get(headers, "uber-trace-id");
    CU_ASSERT_PTR_NOT_NULL_FATAL(uber);
    CU_ASSERT(strlen(uber) > 2 && strcmp(uber + strlen(uber) - 2, ":0") == 0);
    tw_span *child = tw_span_start_child(tracer, "child", c);
    CU_ASSERT_FALSE(tw_span_context_is_sampled(tw_span_get_context(child)));
    tw_span_finish(child);
    tw_span_finish(root);
    CU_ASSERT_EQUAL(local.calls, 2);
    tw_headers_free(headers);
    tw_tracer_free(tracer);
}

static void test_without_a_handler_wanting_them_unsampled_spans_record_nothing(void)
{
    probe sampled_only = {.name = 's'};
    tw_span_handler h = probe_handler(&sampled_only, false);
    tw_tracer *tracer = tracer_with(tw_sampler_const_new(false), &h, 1, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tracer);
    CU_ASSERT_FALSE(tracer->records_unsampled);
    tw_span *s = tw_span_start(tracer, "quiet", NULL);
    CU_ASSERT_PTR_NULL(s->data); /* the unsampled fast path: no record */
    tw_span_set_tag_str(s, "k", "v");
    tw_span_finish(s);
    CU_ASSERT_EQUAL(sampled_only.calls, 0);
    CU_ASSERT_EQUAL(tw_tracer_counter(tracer, TW_TRACER_SPANS_RECORDED_LOCALLY), 0);
    tw_tracer_free(tracer);
}

static void test_sampling_priority_turns_a_local_record_into_a_reported_span(void)
{
    probe local = {.name = 'w'};
    probe sampled_only = {.name = 's'};
    tw_span_handler chain[] = {probe_handler(&local, true), probe_handler(&sampled_only, false)};
    tw_reporter *memory;
    tw_tracer *tracer = tracer_with(tw_sampler_const_new(false), chain, 2, &memory);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tracer);
    tw_span *s = tw_span_start(tracer, "promoted", NULL);
    tw_span_set_tag_str(s, "k", "kept from before"); /* recorded locally, kept */
    tw_span_set_tag_int64(s, "sampling.priority", 1);
    CU_ASSERT(tw_span_is_sampled(s));
    tw_span_finish(s);
    CU_ASSERT_EQUAL(sampled_only.calls, 1);
    CU_ASSERT(sampled_only.saw_sampled);
    const tw_finished_span *f = finished_named(memory, "promoted");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT(tag_equals_str(f, "k", "kept from before"));
    CU_ASSERT_EQUAL(tw_tracer_counter(tracer, TW_TRACER_SPANS_STARTED_SAMPLED), 1);
    CU_ASSERT_EQUAL(tw_tracer_counter(tracer, TW_TRACER_SPANS_FINISHED_SAMPLED), 1);
    CU_ASSERT_EQUAL(tw_tracer_counter(tracer, TW_TRACER_SPANS_RECORDED_LOCALLY), 0);
    tw_tracer_free(tracer);
}

static void test_add_handler_refuses_bad_vtables_and_leaves_them_to_the_caller(void)
{
    probe p = {.name = 'p'};
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_span_handler good = probe_handler(&p, false);
    CU_ASSERT_EQUAL(tw_tracer_options_add_handler(NULL, &good), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_tracer_options_add_handler(opts, NULL), TW_E_INVALID_ARG);
    tw_span_handler short_size = good;
    short_size.size = sizeof(size_t) + sizeof(bool);
    CU_ASSERT_EQUAL(tw_tracer_options_add_handler(opts, &short_size), TW_E_INVALID_ARG);
    tw_span_handler no_callback = good;
    no_callback.on_finish = NULL;
    CU_ASSERT_EQUAL(tw_tracer_options_add_handler(opts, &no_callback), TW_E_INVALID_ARG);
    CU_ASSERT_PTR_NULL(opts->handlers); /* nothing was added */
    tw_tracer_options_free(opts);
    CU_ASSERT_EQUAL(p.destroyed, 0); /* refused: still the caller's */
    tw_span_handler_free(&good);
    CU_ASSERT_EQUAL(p.destroyed, 1);
    tw_span_handler_free(NULL);
}

/* A caller built against a newer header, whose vtable has one more member. */
typedef struct {
    tw_span_handler v1;
    void (*future_member)(void *user_data);
} newer_handler;

static void test_vtable_is_copied_and_newer_sizes_are_accepted(void)
{
    probe p = {.name = 'p'};
    newer_handler newer = {.v1 = probe_handler(&p, false), .future_member = NULL};
    newer.v1.size = sizeof newer;
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "copy");
    tw_tracer_options_set_sampler(opts, tw_sampler_const_new(true));
    tw_reporter *memory = tw_reporter_memory_new(0);
    tw_tracer_options_set_reporter(opts, memory);
    CU_ASSERT_EQUAL(tw_tracer_options_add_handler(opts, &newer.v1), TW_OK);
    memset(&newer, 0, sizeof newer); /* the options hold their own copy */
    tw_tracer *tracer = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tracer);
    tw_span_finish(tw_span_start(tracer, "copied", NULL));
    CU_ASSERT_EQUAL(p.calls, 1);
    tw_tracer_free(tracer);
    CU_ASSERT_EQUAL(p.destroyed, 1);
}

static void test_destroy_runs_once_whoever_ends_up_owning_the_handler(void)
{
    /* Options freed without a tracer. */
    probe a = {.name = 'a'};
    tw_span_handler ha = probe_handler(&a, true);
    tw_tracer_options *opts = tw_tracer_options_new();
    CU_ASSERT_EQUAL(tw_tracer_options_add_handler(opts, &ha), TW_OK);
    tw_tracer_options_free(opts);
    CU_ASSERT_EQUAL(a.destroyed, 1);

    /* tw_tracer_new fails (no service name): the handlers die with it. */
    probe b = {.name = 'b'};
    tw_span_handler hb = probe_handler(&b, true);
    opts = tw_tracer_options_new();
    tw_tracer_options_set_reporter(opts, tw_reporter_memory_new(0));
    CU_ASSERT_EQUAL(tw_tracer_options_add_handler(opts, &hb), TW_OK);
    tw_error *err = NULL;
    CU_ASSERT_PTR_NULL(tw_tracer_new(opts, &err));
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_CONFIG);
    tw_error_free(err);
    CU_ASSERT_EQUAL(b.destroyed, 1);
    tw_tracer_options_free(opts); /* the options no longer hold it */
    CU_ASSERT_EQUAL(b.destroyed, 1);

    /* A tracer: at tw_tracer_free, not at close. */
    probe c = {.name = 'c'};
    tw_span_handler hc = probe_handler(&c, false);
    tw_tracer *tracer = tracer_with(tw_sampler_const_new(true), &hc, 1, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tracer);
    tw_tracer_close(tracer);
    CU_ASSERT_EQUAL(c.destroyed, 0);
    tw_tracer_free(tracer);
    CU_ASSERT_EQUAL(c.destroyed, 1);
}

static void test_spans_finished_after_close_skip_the_handlers(void)
{
    probe local = {.name = 'w'};
    tw_span_handler h = probe_handler(&local, true);
    tw_tracer *tracer = tracer_with(tw_sampler_const_new(true), &h, 1, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tracer);
    tw_span *late = tw_span_start(tracer, "late", NULL);
    tw_tracer_close(tracer);
    tw_span_finish(late);
    CU_ASSERT_EQUAL(local.calls, 0);
    CU_ASSERT_EQUAL(tw_tracer_counter(tracer, TW_TRACER_SPANS_FINISHED_AFTER_CLOSE), 1);
    tw_tracer_free(tracer);
}

/* ---- threads ------------------------------------------------------------------------------ */

#define THREADS 4
#define SPANS_PER_THREAD 3000

/* Thread-safe handlers: one that edits every span, one that drops a name,
 * one that counts unsampled spans with an atomic. */
static tw_handler_result edit_span(void *user_data, tw_mutable_span *span)
{
    (void)user_data;
    tw_mutable_span_set_tag_str(span, "edited", "yes");
    tw_mutable_span_remove_tag(span, "secret");
    return TW_HANDLER_KEEP;
}

static tw_handler_result drop_odd(void *user_data, tw_mutable_span *span)
{
    (void)user_data;
    return strcmp(tw_mutable_span_operation(span), "odd") == 0 ? TW_HANDLER_DROP : TW_HANDLER_KEEP;
}

static tw_handler_result count_all(void *user_data, tw_mutable_span *span)
{
    (void)span;
    atomic_fetch_add_explicit((atomic_uint_fast64_t *)user_data, 1, memory_order_relaxed);
    return TW_HANDLER_KEEP;
}

static void *finish_spans(void *arg)
{
    tw_tracer *tracer = arg;
    for (int i = 0; i < SPANS_PER_THREAD; i++) {
        tw_span *s = tw_span_start(tracer, i % 2 ? "odd" : "even", NULL);
        tw_span_set_tag_str(s, "secret", "x");
        tw_span_finish(s);
    }
    return NULL;
}

static void test_threads_finish_spans_through_the_chain_at_once(void)
{
    atomic_uint_fast64_t seen;
    atomic_init(&seen, 0);
    tw_span_handler chain[] = {
        {.size = sizeof(tw_span_handler),
         .on_finish = count_all,
         .wants_unsampled = true,
         .user_data = &seen},
        {.size = sizeof(tw_span_handler), .on_finish = edit_span},
        {.size = sizeof(tw_span_handler), .on_finish = drop_odd},
    };
    tw_error *err = NULL;
    tw_reporter *memory;
    tw_tracer *tracer = tracer_with(tw_sampler_probabilistic_new(0.5, &err), chain, 3, &memory);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tracer);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++)
        CU_ASSERT_EQUAL(pthread_create(&threads[i], NULL, finish_spans, tracer), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    uint64_t total = (uint64_t)THREADS * SPANS_PER_THREAD;
    uint64_t sampled = tw_tracer_counter(tracer, TW_TRACER_SPANS_FINISHED_SAMPLED);
    uint64_t local = tw_tracer_counter(tracer, TW_TRACER_SPANS_RECORDED_LOCALLY);
    uint64_t dropped = tw_tracer_counter(tracer, TW_TRACER_SPANS_DROPPED_BY_HANDLER);
    CU_ASSERT_EQUAL(atomic_load(&seen), total);
    CU_ASSERT_EQUAL(sampled + local, total);
    CU_ASSERT(sampled > 0 && local > 0);
    CU_ASSERT_EQUAL(tw_memory_reporter_count(memory), sampled - dropped);
    for (size_t i = 0; i < tw_memory_reporter_count(memory); i++) {
        const tw_finished_span *f = tw_memory_reporter_span(memory, i);
        CU_ASSERT_STRING_EQUAL(tw_finished_span_operation(f), "even");
        CU_ASSERT(tag_equals_str(f, "edited", "yes"));
        CU_ASSERT_FALSE(tw_finished_span_find_tag(f, "secret", NULL));
    }
    tw_tracer_free(tracer);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("handlers/chain", suite_init, suite_cleanup);
    CU_add_test(suite, "handlers_run_in_the_order_added_and_see_earlier_writes",
                test_handlers_run_in_the_order_added_and_see_earlier_writes);
    CU_add_test(suite, "drop_ends_the_chain_and_is_counted_not_reported",
                test_drop_ends_the_chain_and_is_counted_not_reported);
    CU_add_test(suite, "unsampled_spans_reach_only_handlers_that_want_them",
                test_unsampled_spans_reach_only_handlers_that_want_them);
    CU_add_test(suite, "local_recording_does_not_change_what_propagates",
                test_local_recording_does_not_change_what_propagates);
    CU_add_test(suite, "without_a_handler_wanting_them_unsampled_spans_record_nothing",
                test_without_a_handler_wanting_them_unsampled_spans_record_nothing);
    CU_add_test(suite, "sampling_priority_turns_a_local_record_into_a_reported_span",
                test_sampling_priority_turns_a_local_record_into_a_reported_span);
    CU_add_test(suite, "add_handler_refuses_bad_vtables_and_leaves_them_to_the_caller",
                test_add_handler_refuses_bad_vtables_and_leaves_them_to_the_caller);
    CU_add_test(suite, "vtable_is_copied_and_newer_sizes_are_accepted",
                test_vtable_is_copied_and_newer_sizes_are_accepted);
    CU_add_test(suite, "destroy_runs_once_whoever_ends_up_owning_the_handler",
                test_destroy_runs_once_whoever_ends_up_owning_the_handler);
    CU_add_test(suite, "spans_finished_after_close_skip_the_handlers",
                test_spans_finished_after_close_skip_the_handlers);
    CU_add_test(suite, "threads_finish_spans_through_the_chain_at_once",
                test_threads_finish_spans_through_the_chain_at_once);
}
