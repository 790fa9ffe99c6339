/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/handlers/test_latency_metrics.c: suite "handlers/latency_metrics":
 * the metrics count 100% of spans while the sampler reports 1%; count, sum and
 * max are exact; percentiles stay within the documented 1/64 of the true
 * nearest-rank value on known distributions (uniform, exponential, constant,
 * small exact values); operations beyond max_operations go to the overflow
 * entry; iteration; reference counting against the tracer; and threads
 * finishing spans of shared operations at once (run under TSan).
 *
 * Durations are exact: spans get an explicit start and finish time.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "harness.h"

#define START_US 1700000000000000LL

static tw_latency_metrics *metrics_shared; /* fed by tracer_unsampled */
static tw_tracer *tracer_unsampled;        /* const(false): every span is local */
static tw_span_options *explicit_start;

static int suite_init(void)
{
    metrics_shared = tw_latency_metrics_new(0);
    explicit_start = tw_span_options_new();
    if (!metrics_shared || !explicit_start)
        return 1;
    tw_span_options_set_start_time_us(explicit_start, START_US);
    tw_span_handler h = tw_latency_metrics_handler(metrics_shared);
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "metrics-test");
    tw_tracer_options_set_sampler(opts, tw_sampler_const_new(false));
    tw_tracer_options_set_reporter(opts, tw_reporter_memory_new(0));
    if (tw_tracer_options_add_handler(opts, &h) != TW_OK)
        return 1;
    tracer_unsampled = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    return tracer_unsampled ? 0 : 1;
}

static int suite_cleanup(void)
{
    tw_tracer_free(tracer_unsampled);
    tw_latency_metrics_free(metrics_shared);
    tw_span_options_free(explicit_start);
    return 0;
}

static void finish_after(tw_tracer *tracer, const char *op, int64_t duration_us)
{
    tw_span *s = tw_span_start(tracer, op, explicit_start);
    tw_span_finish_at(s, START_US + duration_us);
}

static int compare_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The nearest-rank q-quantile of sorted[0..n). */
static int64_t nearest_rank(const int64_t *sorted, size_t n, double q)
{
    size_t rank = (size_t)ceil(q * (double)n);
    if (rank < 1)
        rank = 1;
    return sorted[rank - 1];
}

/* Feeds @n durations to operation @op and checks count, sum, max and the
 * percentiles against the exact values. */
static void check_distribution(const char *op, int64_t *durations, size_t n)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        finish_after(tracer_unsampled, op, durations[i]);
        sum += (uint64_t)durations[i];
    }
    qsort(durations, n, sizeof(int64_t), compare_i64);
    CU_ASSERT_EQUAL(tw_latency_metrics_count(metrics_shared, op), n);
    CU_ASSERT_EQUAL(tw_latency_metrics_sum_us(metrics_shared, op), sum);
    CU_ASSERT_EQUAL(tw_latency_metrics_max_us(metrics_shared, op), durations[n - 1]);
    CU_ASSERT_EQUAL(tw_latency_metrics_percentile_us(metrics_shared, op, 0.0), durations[0]);
    CU_ASSERT_EQUAL(tw_latency_metrics_percentile_us(metrics_shared, op, 1.0), durations[n - 1]);
    static const double qs[] = {0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999};
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        int64_t truth = nearest_rank(durations, n, qs[i]);
        int64_t got = tw_latency_metrics_percentile_us(metrics_shared, op, qs[i]);
        double error = truth ? fabs((double)(got - truth)) / (double)truth : (double)got;
        if (error > 1.0 / 64) {
            printf("\n  %s p%g: got %lld, true %lld (error %.4f)", op, qs[i] * 100, (long long)got,
                   (long long)truth, error);
        }
        CU_ASSERT(error <= 1.0 / 64);
    }
}

/* ---- tests -------------------------------------------------------------------------------- */

static void test_metrics_count_every_span_while_one_percent_is_reported(void)
{
    tw_latency_metrics *metrics = tw_latency_metrics_new(0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(metrics);
    tw_span_handler h = tw_latency_metrics_handler(metrics);
    CU_ASSERT(h.wants_unsampled);
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "one-percent");
    tw_error *err = NULL;
    tw_tracer_options_set_sampler(opts, tw_sampler_probabilistic_new(0.01, &err));
    tw_reporter *memory = tw_reporter_memory_new(0);
    tw_tracer_options_set_reporter(opts, memory);
    CU_ASSERT_EQUAL(tw_tracer_options_add_handler(opts, &h), TW_OK);
    tw_tracer *tracer = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tracer);
    for (int i = 0; i < 10000; i++)
        finish_after(tracer, "GET /price", 1000 + i % 100);
    size_t reported = tw_memory_reporter_count(memory);
    CU_ASSERT_EQUAL(tw_latency_metrics_count(metrics, "GET /price"), 10000);
    /* Binomial(10000, 0.01): mean 100, sd 10; outside 40..170 is below 1e-8. */
    CU_ASSERT(reported >= 40 && reported <= 170);
    CU_ASSERT_EQUAL(tw_tracer_counter(tracer, TW_TRACER_SPANS_RECORDED_LOCALLY), 10000 - reported);
    CU_ASSERT_EQUAL(tw_tracer_counter(tracer, TW_TRACER_SPANS_FINISHED_SAMPLED), reported);
    CU_ASSERT_EQUAL(tw_latency_metrics_sum_us(metrics, "GET /price"),
                    10000ull * 1000 + 100ull * (99 * 100 / 2));
    /* Free the metrics first: the tracer's handler still holds them. */
    tw_latency_metrics_free(metrics);
    finish_after(tracer, "GET /price", 5);
    tw_tracer_free(tracer);
}

static void test_percentiles_of_a_uniform_distribution(void)
{
    size_t n = 100000;
    int64_t *d = malloc(n * sizeof(int64_t));
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    for (size_t i = 0; i < n; i++)
        d[i] = (int64_t)((i * 7919) % n) + 1; /* 1..100000, shuffled */
    check_distribution("uniform", d, n);
    free(d);
}

static void test_percentiles_of_an_exponential_distribution(void)
{
    size_t n = 50000;
    int64_t *d = malloc(n * sizeof(int64_t));
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    uint64_t x = 88172645463325252ull; /* xorshift64: a fixed, portable sequence */
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double u = ((double)(x >> 11) + 0.5) / 9007199254740992.0; /* (0, 1) */
        d[i] = (int64_t)(-log(u) * 20000.0);                       /* mean 20 ms, tail to seconds */
    }
    check_distribution("exponential", d, n);
    free(d);
}

static void test_small_and_constant_durations_are_exact(void)
{
    int64_t d[64];
    for (int i = 0; i < 64; i++)
        d[i] = i; /* 0..63 µs: one bucket each */
    check_distribution("small", d, 64);
    for (int q = 0; q <= 100; q += 10)
        CU_ASSERT_EQUAL(tw_latency_metrics_percentile_us(metrics_shared, "small", q / 100.0),
                        nearest_rank(d, 64, q / 100.0));
    for (int i = 0; i < 100; i++)
        finish_after(tracer_unsampled, "constant", 123457);
    CU_ASSERT_EQUAL(tw_latency_metrics_percentile_us(metrics_shared, "constant", 0.5), 123457);
    CU_ASSERT_EQUAL(tw_latency_metrics_percentile_us(metrics_shared, "constant", 0.99), 123457);
}

static void test_unknown_operations_and_bad_quantiles_read_as_absent(void)
{
    CU_ASSERT_EQUAL(tw_latency_metrics_count(metrics_shared, "never seen"), 0);
    CU_ASSERT_EQUAL(tw_latency_metrics_sum_us(metrics_shared, "never seen"), 0);
    CU_ASSERT_EQUAL(tw_latency_metrics_max_us(metrics_shared, "never seen"), -1);
    CU_ASSERT_EQUAL(tw_latency_metrics_percentile_us(metrics_shared, "never seen", 0.5), -1);
    finish_after(tracer_unsampled, "seen", 10);
    CU_ASSERT_EQUAL(tw_latency_metrics_percentile_us(metrics_shared, "seen", -0.1), -1);
    CU_ASSERT_EQUAL(tw_latency_metrics_percentile_us(metrics_shared, "seen", 1.5), -1);
    CU_ASSERT_EQUAL(tw_latency_metrics_percentile_us(metrics_shared, "seen", NAN), -1);
    CU_ASSERT_EQUAL(tw_latency_metrics_count(NULL, "seen"), 0);
    CU_ASSERT_EQUAL(tw_latency_metrics_operation_count(NULL), 0);
    tw_latency_metrics_free(NULL);
    tw_span_handler none = tw_latency_metrics_handler(NULL);
    CU_ASSERT_PTR_NULL(none.on_finish);
    tw_tracer_options *opts = tw_tracer_options_new();
    CU_ASSERT_EQUAL(tw_tracer_options_add_handler(opts, &none), TW_E_INVALID_ARG);
    tw_tracer_options_free(opts);
}

static void test_operations_beyond_the_limit_share_the_overflow_entry(void)
{
    tw_latency_metrics *metrics = tw_latency_metrics_new(2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(metrics);
    tw_span_handler h = tw_latency_metrics_handler(metrics);
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "overflow");
    tw_tracer_options_set_sampler(opts, tw_sampler_const_new(false));
    tw_tracer_options_set_reporter(opts, tw_reporter_memory_new(0));
    CU_ASSERT_EQUAL(tw_tracer_options_add_handler(opts, &h), TW_OK);
    tw_tracer *tracer = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tracer);
    static const char *const ops[] = {"b", "a", "b", "c", "d", "c"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        finish_after(tracer, ops[i], 100);
    CU_ASSERT_EQUAL(tw_latency_metrics_operation_count(metrics), 2);
    CU_ASSERT_STRING_EQUAL(tw_latency_metrics_operation(metrics, 0), "b"); /* first seen */
    CU_ASSERT_STRING_EQUAL(tw_latency_metrics_operation(metrics, 1), "a");
    CU_ASSERT_PTR_NULL(tw_latency_metrics_operation(metrics, 2));
    CU_ASSERT_EQUAL(tw_latency_metrics_count(metrics, "b"), 2);
    CU_ASSERT_EQUAL(tw_latency_metrics_count(metrics, "a"), 1);
    CU_ASSERT_EQUAL(tw_latency_metrics_count(metrics, "c"), 0);  /* not tracked... */
    CU_ASSERT_EQUAL(tw_latency_metrics_count(metrics, NULL), 3); /* ...counted here */
    CU_ASSERT_EQUAL(tw_latency_metrics_percentile_us(metrics, NULL, 0.5), 100);
    tw_tracer_free(tracer);
    tw_latency_metrics_free(metrics);
}

static void test_a_handler_value_never_added_is_released(void)
{
    tw_latency_metrics *metrics = tw_latency_metrics_new(1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(metrics);
    tw_span_handler h = tw_latency_metrics_handler(metrics);
    tw_latency_metrics_free(metrics); /* the handler's reference keeps it */
    tw_span_handler_free(&h);         /* the last reference: freed (ASan/valgrind) */
}

/* ---- threads ------------------------------------------------------------------------------ */

#define THREADS 4
#define SPANS_PER_THREAD 5000

static tw_latency_metrics *metrics_threads;
static tw_tracer *tracer_threads;

static void *finish_many(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    static const char *const ops[] = {"op0", "op1", "op2", "op3", "op4", "op5", "op6", "op7"};
    tw_span_options *o = tw_span_options_new();
    tw_span_options_set_start_time_us(o, START_US);
    for (int i = 0; i < SPANS_PER_THREAD; i++) {
        /* Threads race to add the same new operations, then share them. */
        tw_span *s = tw_span_start(tracer_threads, ops[(i + (int)id) % 8], o);
        tw_span_finish_at(s, START_US + 10 + i % 1000);
    }
    tw_span_options_free(o);
    return NULL;
}

static void test_threads_feed_shared_operations_at_once(void)
{
    metrics_threads = tw_latency_metrics_new(0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(metrics_threads);
    tw_span_handler h = tw_latency_metrics_handler(metrics_threads);
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "metrics-threads");
    tw_error *err = NULL;
    tw_tracer_options_set_sampler(opts, tw_sampler_probabilistic_new(0.1, &err));
    tw_tracer_options_set_reporter(opts, tw_reporter_memory_new(0));
    CU_ASSERT_EQUAL(tw_tracer_options_add_handler(opts, &h), TW_OK);
    tracer_threads = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tracer_threads);
    pthread_t threads[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        CU_ASSERT_EQUAL(pthread_create(&threads[i], NULL, finish_many, (void *)i), 0);
    /* A reader while they run. */
    for (int k = 0; k < 50; k++) {
        for (size_t i = 0; tw_latency_metrics_operation(metrics_threads, i); i++)
            (void)tw_latency_metrics_percentile_us(
                metrics_threads, tw_latency_metrics_operation(metrics_threads, i), 0.99);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    uint64_t total = 0;
    CU_ASSERT_EQUAL(tw_latency_metrics_operation_count(metrics_threads), 8);
    for (size_t i = 0; i < 8; i++) {
        const char *op = tw_latency_metrics_operation(metrics_threads, i);
        CU_ASSERT_EQUAL(tw_latency_metrics_count(metrics_threads, op),
                        (uint64_t)THREADS * SPANS_PER_THREAD / 8);
        total += tw_latency_metrics_count(metrics_threads, op);
    }
    CU_ASSERT_EQUAL(total, (uint64_t)THREADS * SPANS_PER_THREAD);
    CU_ASSERT_EQUAL(tw_latency_metrics_count(metrics_threads, NULL), 0);
    tw_tracer_free(tracer_threads);
    tw_latency_metrics_free(metrics_threads);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("handlers/latency_metrics", suite_init, suite_cleanup);
    CU_add_test(suite, "metrics_count_every_span_while_one_percent_is_reported",
                test_metrics_count_every_span_while_one_percent_is_reported);
    CU_add_test(suite, "percentiles_of_a_uniform_distribution",
                test_percentiles_of_a_uniform_distribution);
    CU_add_test(suite, "percentiles_of_an_exponential_distribution",
                test_percentiles_of_an_exponential_distribution);
    CU_add_test(suite, "small_and_constant_durations_are_exact",
                test_small_and_constant_durations_are_exact);
    CU_add_test(suite, "unknown_operations_and_bad_quantiles_read_as_absent",
                test_unknown_operations_and_bad_quantiles_read_as_absent);
    CU_add_test(suite, "operations_beyond_the_limit_share_the_overflow_entry",
                test_operations_beyond_the_limit_share_the_overflow_entry);
    CU_add_test(suite, "a_handler_value_never_added_is_released",
                test_a_handler_value_never_added_is_released);
    CU_add_test(suite, "threads_feed_shared_operations_at_once",
                test_threads_feed_shared_operations_at_once);
}
