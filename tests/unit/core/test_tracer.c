/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/core/test_tracer.c: suite "core/tracer": creation errors,
 * process tags, 64-bit mode, close/free contract (close twice, use after
 * close), unsampled spans record nothing, and concurrent use by many threads
 * (also run under ThreadSanitizer by scripts/test.sh).
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "harness.h"

static void test_missing_service_is_a_config_error(void)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_reporter(opts, tw_reporter_memory_new(0));
    tw_error *err = NULL;
    CU_ASSERT_PTR_NULL(tw_tracer_new(opts, &err));
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), "service name"));
    tw_error_free(err);
    tw_tracer_options_free(opts);
    CU_ASSERT_PTR_NULL(tw_tracer_new(NULL, NULL));
}

static void test_process_tags_are_jaeger_conventional(void)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_add_tag_str(opts, "team", "core");
    tw_tracer_options_add_tag_int64(opts, "shard", 3);
    tw_tracer *tracer = tracer_always_sampled(NULL, opts);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tracer);
    CU_ASSERT_STRING_EQUAL(tw_tracer_service_name(tracer), "unit-test");
    tw_value v;
    CU_ASSERT(tw_tracer_process_tag(tracer, "jaeger.version", &v) &&
              strcmp(v.as.str, "C-" TW_VERSION_STRING) == 0);
    CU_ASSERT(tw_tracer_process_tag(tracer, "tracewire.version", &v) &&
              strcmp(v.as.str, tw_version()) == 0);
    CU_ASSERT(tw_tracer_process_tag(tracer, "hostname", &v) && v.len > 0);
    CU_ASSERT(tw_tracer_process_tag(tracer, "client-uuid", &v) && v.len == 36 &&
              v.as.str[14] == '4');
    CU_ASSERT(tw_tracer_process_tag(tracer, "team", &v) && strcmp(v.as.str, "core") == 0);
    CU_ASSERT(tw_tracer_process_tag(tracer, "shard", &v) && v.type == TW_VALUE_INT64 &&
              v.as.i64 == 3);
    tw_tracer_free(tracer);
}

static void test_user_hostname_tag_replaces_detected_one(void)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_add_tag_str(opts, "hostname", "override");
    tw_tracer_options_add_tag_str(opts, "ip", "10.1.2.3");
    tw_tracer *tracer = tracer_always_sampled(NULL, opts);
    tw_value v;
    CU_ASSERT(tw_tracer_process_tag(tracer, "hostname", &v) && strcmp(v.as.str, "override") == 0);
    CU_ASSERT(tw_tracer_process_tag(tracer, "ip", &v) && strcmp(v.as.str, "10.1.2.3") == 0);
    tw_tracer_free(tracer);
}

static void test_64bit_mode_leaves_high_half_zero(void)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_trace_id_128bit(opts, false);
    tw_tracer *tracer = tracer_always_sampled(NULL, opts);
    tw_span *s = tw_span_start(tracer, "short", NULL);
    CU_ASSERT_EQUAL(tw_span_context_trace_id_high(tw_span_get_context(s)), 0);
    CU_ASSERT(tw_span_context_trace_id_low(tw_span_get_context(s)) != 0);
    char hex[33];
    CU_ASSERT_EQUAL(strlen(tw_span_context_trace_id_hex(tw_span_get_context(s), hex, sizeof hex)),
                    16);
    tw_span_finish(s);
    tw_tracer_free(tracer);
}

static void test_close_twice_and_use_after_close_are_clear_errors(void)
{
    tw_reporter *memory;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    tw_span *open_span = tw_span_start(tracer, "open-across-close", NULL);
    CU_ASSERT_EQUAL(tw_tracer_close(tracer), TW_OK);
    CU_ASSERT(tw_tracer_is_closed(tracer));
    CU_ASSERT_EQUAL(tw_tracer_close(tracer), TW_E_CLOSED);
    CU_ASSERT_EQUAL(tw_tracer_flush(tracer, 10), TW_E_CLOSED);
    CU_ASSERT_PTR_NULL(tw_span_start(tracer, "after-close", NULL));
    tw_span_finish(open_span); /* dropped and counted, not reported */
    CU_ASSERT_EQUAL(tw_tracer_counter(tracer, TW_TRACER_SPANS_FINISHED_AFTER_CLOSE), 1);
    CU_ASSERT_EQUAL(tw_memory_reporter_count(memory), 0);
    tw_tracer_free(tracer);
    tw_tracer_free(NULL);
}

static void test_span_outliving_tracer_free_is_safe(void)
{
    tw_tracer *tracer = tracer_always_sampled(NULL, NULL);
    tw_span *s = tw_span_start(tracer, "orphan", NULL);
    tw_tracer_free(tracer);
    /* The span holds the tracer's memory: finishing it drops the span. */
    tw_span_set_tag_str(s, "late", "yes");
    tw_span_finish(s);
}

static void test_unsampled_spans_record_nothing(void)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "never");
    tw_tracer_options_set_sampler(opts, tw_sampler_const_new(false));
    tw_reporter *memory = tw_reporter_memory_new(0);
    tw_tracer_options_set_reporter(opts, memory);
    tw_tracer *tracer = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    tw_span *s = tw_span_start(tracer, "quiet", NULL);
    CU_ASSERT_FALSE(tw_span_is_sampled(s));
    CU_ASSERT_FALSE(tw_span_context_is_sampled(tw_span_get_context(s)));
    tw_span_set_tag_str(s, "k", "v");
    tw_span_log_event(s, "e");
    tw_span_set_baggage(s, "b", "kept"); /* baggage still propagates */
    tw_span *child = tw_span_start_child(tracer, "quiet-child", tw_span_get_context(s));
    CU_ASSERT_STRING_EQUAL(tw_span_get_baggage(child, "b"), "kept");
    CU_ASSERT_FALSE(tw_span_is_sampled(child));
    tw_span_finish(child);
    tw_span_finish(s);
    CU_ASSERT_EQUAL(tw_memory_reporter_count(memory), 0);
    CU_ASSERT_EQUAL(tw_tracer_counter(tracer, TW_TRACER_SPANS_STARTED_SAMPLED), 0);
    tw_tracer_free(tracer);
}

static void test_sampling_priority_forces_and_unsamples(void)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "prio");
    tw_tracer_options_set_sampler(opts, tw_sampler_const_new(false));
    tw_reporter *memory = tw_reporter_memory_new(0);
    tw_tracer_options_set_reporter(opts, memory);
    tw_tracer *tracer = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);

    /* As a start tag: the span records from the start, with its tags. */
    tw_span_options *so = tw_span_options_new();
    tw_span_options_add_tag_str(so, "before", "kept");
    tw_span_options_add_tag_int64(so, "sampling.priority", 1);
    tw_span *forced = tw_span_start(tracer, "forced", so);
    tw_span_options_free(so);
    CU_ASSERT(tw_span_is_sampled(forced));
    CU_ASSERT(tw_span_context_is_debug(tw_span_get_context(forced)));
    tw_span *child = tw_span_start_child(tracer, "forced-child", tw_span_get_context(forced));
    CU_ASSERT(tw_span_is_sampled(child)); /* the decision propagates */
    tw_span_finish(child);
    tw_span_finish(forced);

    /* Set later on an unsampled span: records from then on, name kept. */
    tw_span *late = tw_span_start(tracer, "late-forced", NULL);
    tw_span_set_tag_str(late, "lost", "before the decision");
    tw_span_set_tag_str(late, "sampling.priority", "1");
    tw_span_set_tag_str(late, "after", "kept");
    tw_span_finish(late);

    /* Priority 0 unsamples a sampled span. */
    tw_span_options *so2 = tw_span_options_new();
    tw_span_options_add_tag_int64(so2, "sampling.priority", 1);
    tw_span *unsampled = tw_span_start(tracer, "unsampled-later", so2);
    tw_span_options_free(so2);
    tw_span_set_tag_double(unsampled, "sampling.priority", 0.0);
    tw_span_finish(unsampled);

    const tw_finished_span *f = finished_named(memory, "forced");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(tw_finished_span_flags(f), TW_FLAG_SAMPLED | TW_FLAG_DEBUG);
    CU_ASSERT(tag_equals_str(f, "before", "kept"));
    CU_ASSERT_PTR_NOT_NULL(finished_named(memory, "forced-child"));
    const tw_finished_span *l = finished_named(memory, "late-forced");
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT(tag_equals_str(l, "after", "kept"));
    CU_ASSERT_FALSE(tw_finished_span_find_tag(l, "lost", NULL));
    CU_ASSERT_PTR_NULL(finished_named(memory, "unsampled-later"));
    tw_tracer_free(tracer);
}

/* ---- concurrency ---------------------------------------------------------------------------- */

#define THREADS 4
#define SPANS_PER_THREAD 2000

typedef struct {
    tw_tracer *tracer;
    const tw_span_context *shared_parent; /* read by all threads */
} worker_arg;

static void *worker(void *p)
{
    worker_arg *arg = p;
    for (int i = 0; i < SPANS_PER_THREAD; i++) {
        tw_span *s = tw_span_start_child(arg->tracer, "work", arg->shared_parent);
        tw_span_set_tag_int64(s, "i", i);
        tw_span *inner = tw_span_start_child(arg->tracer, "inner", tw_span_get_context(s));
        tw_span_finish(inner);
        tw_span_finish(s);
    }
    return NULL;
}

static void test_many_threads_share_one_tracer(void)
{
    tw_reporter *memory;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    tw_span *root = tw_span_start(tracer, "root", NULL);
    tw_span_set_baggage(root, "tenant", "t1");
    tw_span_context *shared = tw_span_context_ref(tw_span_get_context(root));
    worker_arg arg = {tracer, shared};
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&threads[i], NULL, worker, &arg);
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    tw_span_finish(root);
    CU_ASSERT_EQUAL(tw_memory_reporter_count(memory), THREADS * SPANS_PER_THREAD * 2 + 1);
    CU_ASSERT_EQUAL(tw_tracer_counter(tracer, TW_TRACER_SPANS_FINISHED_SAMPLED),
                    THREADS * SPANS_PER_THREAD * 2 + 1);
    tw_span_context_unref(shared);
    tw_tracer_free(tracer);
}

static void *finisher(void *p)
{
    tw_span_finish(p);
    return NULL;
}

static void test_span_finished_on_another_thread(void)
{
    tw_reporter *memory;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    tw_span *s = tw_span_start(tracer, "handoff", NULL);
    pthread_t th;
    pthread_create(&th, NULL, finisher, s);
    pthread_join(th, NULL);
    CU_ASSERT_PTR_NOT_NULL(finished_named(memory, "handoff"));
    tw_tracer_free(tracer);
}

/* ---- every failure of tw_tracer_new names its real cause --------------------------------------
 */

static char log_text[8192];
static void keep_log(tw_log_level level, const char *message, void *user_data)
{
    (void)level;
    (void)user_data;
    size_t len = strlen(log_text);
    snprintf(log_text + len, sizeof log_text - len, "%s\n", message);
}

static void test_new_reports_the_real_cause_not_nomem(void)
{
    /* The default reporter cannot open its socket (no file descriptor
     * left): TW_E_IO, and no "out of memory" anywhere (it used to log one). */
    int probe = open("/dev/null", O_RDONLY);
    CU_ASSERT_FATAL(probe >= 0);
    close(probe);
    struct rlimit saved, low;
    CU_ASSERT_FATAL(getrlimit(RLIMIT_NOFILE, &saved) == 0);
    low = saved;
    low.rlim_cur = (rlim_t)probe; /* the next descriptor is refused */
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "svc");
    log_text[0] = '\0';
    tw_set_logger(keep_log, NULL, TW_LOG_DEBUG);
    tw_error *err = NULL;
    CU_ASSERT_FATAL(setrlimit(RLIMIT_NOFILE, &low) == 0);
    tw_tracer *t = tw_tracer_new(opts, &err);
    setrlimit(RLIMIT_NOFILE, &saved);
    tw_set_logger(tw_log_default, NULL, TW_LOG_WARN);
    CU_ASSERT_PTR_NULL(t);
    tw_tracer_free(t);
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), "socket"));
    CU_ASSERT_PTR_NOT_NULL(strstr(log_text, "socket")); /* the real cause reaches the log */
    CU_ASSERT_PTR_NULL(strstr(log_text, "out of memory"));
    tw_error_free(err);
    tw_tracer_options_free(opts);

    /* The reporter refuses its configuration as it starts: TW_E_CONFIG. */
    opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "svc");
    char big[700];
    memset(big, 'v', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    tw_tracer_options_add_tag_str(opts, "huge", big);
    tw_reporter_options *ro = tw_reporter_options_new();
    tw_reporter_options_set_max_packet_size(ro, 512);
    tw_tracer_options_set_reporter(opts, tw_reporter_jaeger_udp_new(ro, NULL));
    tw_reporter_options_free(ro);
    err = NULL;
    CU_ASSERT_PTR_NULL(tw_tracer_new(opts, &err));
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), "max packet size"));
    tw_error_free(err);
    tw_tracer_options_free(opts);
}

/* ---- the global tracer ---------------------------------------------------------------------- */

static void test_global_tracer_is_noop_until_set(void)
{
    tw_tracer *g = tw_tracer_global();
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT(tw_tracer_is_noop(g));
    CU_ASSERT_PTR_EQUAL(tw_tracer_global(), g); /* one no-op tracer */
    /* Spans work, record nothing, and nothing is injected. */
    tw_span *s = tw_span_start(g, "library work", NULL);
    CU_ASSERT_PTR_NOT_NULL(s);
    CU_ASSERT_FALSE(tw_span_is_sampled(s));
    tw_headers *h = tw_headers_new();
    tw_carrier_writer w = tw_headers_writer(h);
    CU_ASSERT_EQUAL(tw_tracer_inject(g, tw_span_get_context(s), TW_FORMAT_HTTP_HEADERS, &w), TW_OK);
    CU_ASSERT_EQUAL(tw_headers_count(h), 0);
    tw_span_finish(s);
    tw_headers_set(h, "uber-trace-id", "1:2:0:1");
    tw_carrier_reader r = tw_headers_reader(h);
    tw_error *err = NULL;
    CU_ASSERT_PTR_NULL(tw_tracer_extract(g, TW_FORMAT_HTTP_HEADERS, &r, &err));
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_NOT_FOUND);
    tw_error_free(err);
    tw_headers_free(h);
    /* It is never closed or freed. */
    CU_ASSERT_EQUAL(tw_tracer_close(g), TW_E_INVALID_ARG);
    tw_tracer_free(g);
    CU_ASSERT_FALSE(tw_tracer_is_closed(g));

    tw_reporter *memory;
    tw_tracer *t = tracer_always_sampled(&memory, NULL);
    tw_tracer_set_global(t);
    CU_ASSERT_PTR_EQUAL(tw_tracer_global(), t);
    CU_ASSERT_FALSE(tw_tracer_is_noop(t));
    s = tw_span_start(tw_tracer_global(), "through the global", NULL);
    tw_span_finish(s);
    CU_ASSERT_EQUAL(tw_memory_reporter_count(memory), 1);
    /* Freeing the global tracer resets the global to the no-op tracer. */
    tw_tracer_free(t);
    CU_ASSERT_PTR_EQUAL(tw_tracer_global(), g);
    t = tracer_always_sampled(&memory, NULL);
    tw_tracer_set_global(t);
    tw_tracer_set_global(NULL);
    CU_ASSERT_PTR_EQUAL(tw_tracer_global(), g);
    tw_tracer_free(t);
    CU_ASSERT_FALSE(tw_tracer_is_noop(NULL));
}

static void test_parent_based_off_lets_the_sampler_decide_every_span(void)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "svc");
    tw_tracer_options_set_reporter(opts, tw_reporter_memory_new(0));
    tw_tracer_options_set_sampler(opts, tw_sampler_const_new(false));
    CU_ASSERT_EQUAL(tw_tracer_options_set_parent_based(opts, false), TW_OK);
    CU_ASSERT_EQUAL(tw_tracer_options_set_parent_based(NULL, false), TW_E_INVALID_ARG);
    tw_tracer *t = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    tw_span_context *sampled = tw_span_context_new(0, 7, 8, 0, TW_FLAG_SAMPLED, NULL);
    tw_span *child = tw_span_start_child(t, "child", sampled);
    CU_ASSERT_FALSE(tw_span_is_sampled(child)); /* the sampler said no; the parent is ignored */
    CU_ASSERT_EQUAL(tw_span_context_trace_id_low(tw_span_get_context(child)), 7); /* same trace */
    tw_span_finish(child);
    tw_span_context_unref(sampled);
    tw_tracer_free(t);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("core/tracer", NULL, NULL);
    CU_add_test(suite, "missing_service_is_a_config_error", test_missing_service_is_a_config_error);
    CU_add_test(suite, "process_tags_are_jaeger_conventional",
                test_process_tags_are_jaeger_conventional);
    CU_add_test(suite, "user_hostname_tag_replaces_detected_one",
                test_user_hostname_tag_replaces_detected_one);
    CU_add_test(suite, "64bit_mode_leaves_high_half_zero", test_64bit_mode_leaves_high_half_zero);
    CU_add_test(suite, "close_twice_and_use_after_close_are_clear_errors",
                test_close_twice_and_use_after_close_are_clear_errors);
    CU_add_test(suite, "span_outliving_tracer_free_is_safe",
                test_span_outliving_tracer_free_is_safe);
    CU_add_test(suite, "unsampled_spans_record_nothing", test_unsampled_spans_record_nothing);
    CU_add_test(suite, "sampling_priority_forces_and_unsamples",
                test_sampling_priority_forces_and_unsamples);
    CU_add_test(suite, "many_threads_share_one_tracer", test_many_threads_share_one_tracer);
    CU_add_test(suite, "span_finished_on_another_thread", test_span_finished_on_another_thread);
    CU_add_test(suite, "new_reports_the_real_cause_not_nomem",
                test_new_reports_the_real_cause_not_nomem);
    CU_add_test(suite, "global_tracer_is_noop_until_set", test_global_tracer_is_noop_until_set);
    CU_add_test(suite, "parent_based_off_lets_the_sampler_decide_every_span",
                test_parent_based_off_lets_the_sampler_decide_every_span);
}
