/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/sampling/test_sampler.c: suite "sampling/sampler": the const,
 * probabilistic, rate-limiting, per-operation and adaptive samplers, the
 * tags each decision carries, which samplers read (and so draw) a new
 * trace's id, and invalid parameters. Time is simulated
 * through the tw__sampling_now_ns seam (frozen_clock), so a minute of
 * traffic runs in milliseconds and nothing sleeps.
 */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "sampling/sampling.h"
#include "tracewire/tracewire.h"

static void test_const_sampler_decides_always_the_same(void)
{
    tw_sampler *yes = tw_sampler_const_new(true);
    tw_sampler *no = tw_sampler_const_new(false);
    CU_ASSERT_STRING_EQUAL(tw_sampler_type(yes), "const");
    for (uint64_t id = 1; id < 1000; id += 7) {
        CU_ASSERT(tw_sampler_is_sampled(yes, 0, id, "op"));
        CU_ASSERT_FALSE(tw_sampler_is_sampled(no, 0, id, "op"));
    }
    tw_sampler_free(yes);
    tw_sampler_free(no);
    tw_sampler_free(NULL);
}

static void test_probabilistic_follows_jaeger_boundary(void)
{
    tw_sampler *half = tw_sampler_probabilistic_new(0.5, NULL);
    CU_ASSERT_STRING_EQUAL(tw_sampler_type(half), "probabilistic");
    /* boundary = 0x7fffffffffffffff * 0.5; the top bit of the id is ignored. */
    CU_ASSERT(tw_sampler_is_sampled(half, 0, 1, "op"));
    CU_ASSERT(tw_sampler_is_sampled(half, 0, 0x3fffffffffffffffULL, "op"));
    CU_ASSERT_FALSE(tw_sampler_is_sampled(half, 0, 0x4000000000000010ULL, "op"));
    CU_ASSERT(tw_sampler_is_sampled(half, 0, 0x8000000000000001ULL, "op"));
    tw_sampler_free(half);
    tw_sampler *all = tw_sampler_probabilistic_new(1.0, NULL);
    CU_ASSERT(tw_sampler_is_sampled(all, 0, 0xffffffffffffffffULL, "op"));
    tw_sampler_free(all);
    tw_sampler *none = tw_sampler_probabilistic_new(0.0, NULL);
    CU_ASSERT_FALSE(tw_sampler_is_sampled(none, 0, 0x8000000000000000ULL, "op"));
    tw_sampler_free(none);
}

static void test_probabilistic_rate_is_close_to_requested(void)
{
    tw_sampler *tenth = tw_sampler_probabilistic_new(0.1, NULL);
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    int sampled = 0;
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        sampled += tw_sampler_is_sampled(tenth, 0, x, "op");
    }
    CU_ASSERT(sampled > 9500 && sampled < 10500);
    tw_sampler_free(tenth);
}

static void test_invalid_rates_are_errors(void)
{
    double bad[] = {-0.1, 1.5, NAN};
    for (size_t i = 0; i < 3; i++) {
        tw_error *err = NULL;
        CU_ASSERT_PTR_NULL(tw_sampler_probabilistic_new(bad[i], &err));
        CU_ASSERT_EQUAL(tw_error_status(err), TW_E_INVALID_ARG);
        CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), "outside [0, 1]"));
        tw_error_free(err);
    }
    CU_ASSERT_FALSE(tw_sampler_is_sampled(NULL, 0, 1, "op"));
}

static void test_root_span_carries_probabilistic_tags(void)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "sampled");
    tw_tracer_options_set_sampler(opts, tw_sampler_probabilistic_new(1.0, NULL));
    tw_reporter *memory = tw_reporter_memory_new(0);
    tw_tracer_options_set_reporter(opts, memory);
    tw_tracer *tracer = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    tw_span_finish(tw_span_start(tracer, "root", NULL));
    const tw_finished_span *f = tw_memory_reporter_span(memory, 0);
    tw_value v;
    CU_ASSERT(tw_finished_span_find_tag(f, "sampler.type", &v) &&
              strcmp(v.as.str, "probabilistic") == 0);
    CU_ASSERT(tw_finished_span_find_tag(f, "sampler.param", &v) && v.type == TW_VALUE_DOUBLE &&
              v.as.dbl == 1.0);
    tw_tracer_free(tracer);
}

/* ---- a frozen clock and a deterministic id stream ----------------------------------------- */

static int64_t frozen_ns;
static int64_t frozen_clock(void)
{
    return frozen_ns;
}

static uint64_t id_state = 0x9e3779b97f4a7c15ULL;
static uint64_t next_id(void)
{
    id_state ^= id_state << 13;
    id_state ^= id_state >> 7;
    id_state ^= id_state << 17;
    return id_state;
}

static void decide(tw_sampler *s, const char *op, tw__sampling_decision *d)
{
    tw__sampler_decide(s, 0, next_id(), op, d);
}

static int64_t (*real_clock)(void);

static int suite_init(void)
{
    frozen_ns = 1000000000000LL;
    real_clock = tw__sampling_now_ns;
    tw__sampling_now_ns = frozen_clock;
    return 0;
}

static int suite_cleanup(void)
{
    tw__sampling_now_ns = real_clock;
    return 0;
}

static void test_rate_limiting_admits_rate_and_burst(void)
{
    tw_sampler *s = tw_sampler_rate_limiting_new(2.0, NULL);
    CU_ASSERT_STRING_EQUAL(tw_sampler_type(s), "ratelimiting");
    tw__sampling_decision d;
    int sampled = 0;
    /* Starts full: a burst of max(rate, 1) = 2 passes at once. */
    for (int i = 0; i < 10; i++) {
        decide(s, "op", &d);
        sampled += d.is_sampled;
    }
    CU_ASSERT_EQUAL(sampled, 2);
    CU_ASSERT_STRING_EQUAL(d.type, "ratelimiting");
    CU_ASSERT(d.param.type == TW_VALUE_DOUBLE && d.param.as.dbl == 2.0);
    /* Then 2 per second: 60 simulated seconds, 100 requests each. */
    sampled = 0;
    for (int sec = 0; sec < 60; sec++) {
        for (int i = 0; i < 100; i++) {
            frozen_ns += 10000000; /* 10 ms */
            decide(s, "op", &d);
            sampled += d.is_sampled;
        }
    }
    CU_ASSERT(sampled >= 119 && sampled <= 121);
    tw_sampler_free(s);
}

static void test_rate_limiting_handles_fractional_rates(void)
{
    tw_sampler *s = tw_sampler_rate_limiting_new(0.1, NULL);
    tw__sampling_decision d;
    int sampled = 0;
    for (int sec = 0; sec < 100; sec++) { /* one request a second for 100 s */
        decide(s, "op", &d);
        sampled += d.is_sampled;
        frozen_ns += 1000000000;
    }
    CU_ASSERT(sampled >= 10 && sampled <= 11); /* one at start, then one per 10 s */
    tw_sampler_free(s);
    tw_error *err = NULL;
    CU_ASSERT_PTR_NULL(tw_sampler_rate_limiting_new(0.0, &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), "positive"));
    tw_error_free(err);
    CU_ASSERT_PTR_NULL(tw_sampler_rate_limiting_new(NAN, NULL));
    CU_ASSERT_PTR_NULL(tw_sampler_rate_limiting_new(INFINITY, NULL));
}

static void test_per_operation_guarantees_lower_bound(void)
{
    /* Probability 0 everywhere: only the lower bound (1/s) samples. */
    tw_sampler *s = tw_sampler_per_operation_new(0.0, 1.0, 0, NULL);
    CU_ASSERT_STRING_EQUAL(tw_sampler_type(s), "per-operation");
    tw__sampling_decision d;
    int rare = 0, busy = 0;
    for (int sec = 0; sec < 30; sec++) {
        for (int i = 0; i < 1000; i++) {
            frozen_ns += 1000000;
            decide(s, "busy", &d);
            busy += d.is_sampled;
        }
        decide(s, "rare", &d);
        rare += d.is_sampled;
    }
    CU_ASSERT_EQUAL(rare, 30); /* every second's single call is kept */
    CU_ASSERT(busy >= 30 && busy <= 31);
    CU_ASSERT_STRING_EQUAL(d.type, "lowerbound");
    CU_ASSERT(d.param.as.dbl == 0.0);
    tw_sampler_free(s);
}

/* Operation names are cut as span names are (TW__MAX_NAME_BYTES, on a UTF-8
 * boundary): two names that differ only past the cut are one operation, and
 * a table entry never holds more than the cut (it used to copy the whole
 * name, a megabyte per entry for megabyte names). */
static void test_samplers_key_names_as_spans_cut_them(void)
{
    enum { LONG = 3 * TW__MAX_NAME_BYTES };
    char *a = malloc(LONG + 1), *b = malloc(LONG + 1);
    CU_ASSERT_FATAL(a && b);
    memset(a, 'n', LONG);
    a[LONG] = '\0';
    memcpy(b, a, LONG + 1);
    b[TW__MAX_NAME_BYTES + 7] = 'x'; /* differs past the cut only */
    tw_sampler *s = tw_sampler_per_operation_new(0.0, 0.0, 4, NULL);
    CU_ASSERT_EQUAL(tw_sampler_per_operation_set(s, a, 1.0), TW_OK);
    tw__sampling_decision d;
    decide(s, b, &d);
    CU_ASSERT(d.is_sampled); /* a's entry: probability 1 */
    CU_ASSERT(d.param.as.dbl == 1.0);
    tw_sampler_free(s);
    tw_sampler *ad = tw_sampler_adaptive_new(10.0, 4, NULL);
    decide(ad, a, &d);
    CU_ASSERT(tw_sampler_adaptive_probability(ad, b) > 0.0); /* the entry a made */
    tw_sampler_free(ad);
    free(a);
    free(b);
}

static void test_per_operation_probability_and_tags(void)
{
    tw_sampler *s = tw_sampler_per_operation_new(0.0, 0.0, 2, NULL);
    CU_ASSERT_EQUAL(tw_sampler_per_operation_set(s, "all", 1.0), TW_OK);
    CU_ASSERT_EQUAL(tw_sampler_per_operation_set(s, "half", 0.5), TW_OK);
    CU_ASSERT_EQUAL(tw_sampler_per_operation_set(s, "third", 0.3), TW_E_LIMIT); /* max 2 */
    CU_ASSERT_EQUAL(tw_sampler_per_operation_set(s, "all", 1.5), TW_E_INVALID_ARG);
    tw__sampling_decision d;
    decide(s, "all", &d);
    CU_ASSERT(d.is_sampled);
    CU_ASSERT_STRING_EQUAL(d.type, "probabilistic");
    CU_ASSERT(d.param.as.dbl == 1.0);
    int half = 0;
    for (int i = 0; i < 10000; i++) {
        decide(s, "half", &d);
        half += d.is_sampled;
    }
    CU_ASSERT(half > 4700 && half < 5300);
    /* A lower bound of 0 is no bound: probability 0 never samples. */
    for (int i = 0; i < 10; i++) {
        decide(s, "half", &d);
        if (!d.is_sampled)
            CU_ASSERT_STRING_EQUAL(d.type, "lowerbound");
    }
    /* Past max_operations: the default probability (0) decides alone. */
    decide(s, "unknown", &d);
    CU_ASSERT_FALSE(d.is_sampled);
    CU_ASSERT_STRING_EQUAL(d.type, "probabilistic");
    tw_sampler *other = tw_sampler_const_new(true);
    CU_ASSERT_EQUAL(tw_sampler_per_operation_set(other, "x", 0.5), TW_E_INVALID_ARG);
    tw_sampler_free(other);
    tw_sampler_free(s);
    CU_ASSERT_PTR_NULL(tw_sampler_per_operation_new(2.0, 1.0, 0, NULL));
    CU_ASSERT_PTR_NULL(tw_sampler_per_operation_new(0.5, -1.0, 0, NULL));
}

/* Offers @rate traces/s of @op for @seconds; returns how many were sampled. */
static int offer(tw_sampler *s, const char *op, int rate, int seconds)
{
    tw__sampling_decision d;
    int sampled = 0;
    int64_t step = 1000000000LL / rate;
    for (int64_t i = 0; i < (int64_t)rate * seconds; i++) {
        frozen_ns += step;
        decide(s, op, &d);
        sampled += d.is_sampled;
    }
    return sampled;
}

static void check_adaptive_lands_on_target(int traffic_per_second)
{
    const double target = 5.0;
    tw_sampler *s = tw_sampler_adaptive_new(target, 0, NULL);
    int sampled = offer(s, "op", traffic_per_second, 60);
    double expected = target * 60;
    if (fabs(sampled - expected) > 0.2 * expected)
        fprintf(stderr, "adaptive at %d/s: %d sampled in a minute, target %.0f\n",
                traffic_per_second, sampled, expected);
    CU_ASSERT(fabs(sampled - expected) <= 0.2 * expected);
    tw_sampler_free(s);
}

static void test_adaptive_lands_within_20_percent_at_10_per_second(void)
{
    check_adaptive_lands_on_target(10);
}

static void test_adaptive_lands_within_20_percent_at_10000_per_second(void)
{
    check_adaptive_lands_on_target(10000);
}

static void test_adaptive_favours_quiet_operations(void)
{
    tw_sampler *s = tw_sampler_adaptive_new(20.0, 0, NULL);
    tw__sampling_decision d;
    int quiet = 0, loud = 0;
    for (int sec = 0; sec < 60; sec++) {
        for (int i = 0; i < 2000; i++) {
            frozen_ns += 500000;
            decide(s, "loud", &d);
            loud += d.is_sampled;
            if (i % 400 == 0) { /* 5/s */
                decide(s, "quiet", &d);
                quiet += d.is_sampled;
            }
        }
    }
    /* The quiet one keeps everything (after the first window); the loud one
     * gets the rest of the 20/s. */
    CU_ASSERT(tw_sampler_adaptive_probability(s, "quiet") == 1.0);
    CU_ASSERT(tw_sampler_adaptive_probability(s, "loud") < 0.02);
    CU_ASSERT(quiet >= 290);
    CU_ASSERT(fabs((quiet + loud) - 1200.0) <= 240.0);
    CU_ASSERT(tw_sampler_adaptive_probability(s, "never-seen") == -1.0);
    tw_sampler_free(s);
    CU_ASSERT_PTR_NULL(tw_sampler_adaptive_new(0.0, 0, NULL));
}

static void test_adaptive_bounds_tracked_operations(void)
{
    tw_sampler *s = tw_sampler_adaptive_new(10.0, 3, NULL);
    char name[32];
    tw__sampling_decision d;
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof name, "op-%d", i);
        decide(s, name, &d);
    }
    CU_ASSERT(tw_sampler_adaptive_probability(s, "op-2") > 0);
    CU_ASSERT(tw_sampler_adaptive_probability(s, "op-50") == -1.0); /* shares "other" */
    tw_sampler_free(s);
}

/* A new trace's id, not drawn yet, as span.c hands it to a sampler. */
static tw__trace_id undrawn(void)
{
    return (tw__trace_id){.high = 0, .low = 0, .is_drawn = false, .is_128bit = true};
}

static void test_only_samplers_that_read_the_trace_id_draw_it(void)
{
    tw__sampling_decision d;
    tw_sampler *never = tw_sampler_const_new(false), *always = tw_sampler_const_new(true);
    tw_sampler *zero = tw_sampler_probabilistic_new(0.0, NULL);
    tw_sampler *limited = tw_sampler_rate_limiting_new(10.0, NULL);
    tw_sampler *const blind[] = {never, always, zero, limited};
    for (size_t i = 0; i < sizeof blind / sizeof blind[0]; i++) {
        tw__trace_id id = undrawn();
        tw__sampler_decide_lazy(blind[i], &id, "op", &d);
        CU_ASSERT_FALSE(id.is_drawn);
        CU_ASSERT_EQUAL(d.type_len, strlen(d.type));
    }
    /* Probability 0.5 reads it: drawn (128 bits), and decided by Jaeger's
     * rule on the id drawn. */
    tw_sampler *half = tw_sampler_probabilistic_new(0.5, NULL);
    int sampled = 0;
    for (int i = 0; i < 400; i++) {
        tw__trace_id id = undrawn();
        tw__sampler_decide_lazy(half, &id, "op", &d);
        CU_ASSERT_FATAL(id.is_drawn);
        CU_ASSERT(id.low != 0 && id.high != 0);
        CU_ASSERT_EQUAL(d.is_sampled, tw_sampler_is_sampled(half, id.high, id.low, "op"));
        CU_ASSERT_STRING_EQUAL(d.type, "probabilistic");
        CU_ASSERT_EQUAL(d.type_len, strlen("probabilistic"));
        sampled += d.is_sampled;
    }
    CU_ASSERT(sampled > 120 && sampled < 280);
    /* A 64-bit trace id: the high half stays 0. */
    tw__trace_id id64 = undrawn();
    id64.is_128bit = false;
    tw__sampler_decide_lazy(half, &id64, "op", &d);
    CU_ASSERT(id64.is_drawn && id64.high == 0 && id64.low != 0);
    /* A given id is never redrawn. */
    tw__trace_id given = {.high = 7, .low = 1, .is_drawn = true, .is_128bit = true};
    tw__sampler_decide_lazy(half, &given, "op", &d);
    CU_ASSERT(given.high == 7 && given.low == 1 && d.is_sampled);
    tw_sampler_free(never);
    tw_sampler_free(always);
    tw_sampler_free(zero);
    tw_sampler_free(limited);
    tw_sampler_free(half);
}

static void test_never_sampling_samplers_are_recognised(void)
{
    tw_sampler *never = tw_sampler_const_new(false), *always = tw_sampler_const_new(true);
    tw_sampler *zero = tw_sampler_probabilistic_new(0.0, NULL);
    tw_sampler *tiny = tw_sampler_probabilistic_new(1e-9, NULL);
    tw_sampler *limited = tw_sampler_rate_limiting_new(0.001, NULL);
    CU_ASSERT(tw__sampler_never_samples(never));
    CU_ASSERT(tw__sampler_never_samples(zero));
    CU_ASSERT_FALSE(tw__sampler_never_samples(always));
    CU_ASSERT_FALSE(tw__sampler_never_samples(tiny));
    CU_ASSERT_FALSE(tw__sampler_never_samples(limited));
    tw_sampler_free(never);
    tw_sampler_free(always);
    tw_sampler_free(zero);
    tw_sampler_free(tiny);
    tw_sampler_free(limited);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("sampling/sampler", suite_init, suite_cleanup);
    CU_add_test(suite, "const_sampler_decides_always_the_same",
                test_const_sampler_decides_always_the_same);
    CU_add_test(suite, "probabilistic_follows_jaeger_boundary",
                test_probabilistic_follows_jaeger_boundary);
    CU_add_test(suite, "probabilistic_rate_is_close_to_requested",
                test_probabilistic_rate_is_close_to_requested);
    CU_add_test(suite, "invalid_rates_are_errors", test_invalid_rates_are_errors);
    CU_add_test(suite, "root_span_carries_probabilistic_tags",
                test_root_span_carries_probabilistic_tags);
    CU_add_test(suite, "rate_limiting_admits_rate_and_burst",
                test_rate_limiting_admits_rate_and_burst);
    CU_add_test(suite, "rate_limiting_handles_fractional_rates",
                test_rate_limiting_handles_fractional_rates);
    CU_add_test(suite, "per_operation_guarantees_lower_bound",
                test_per_operation_guarantees_lower_bound);
    CU_add_test(suite, "samplers_key_names_as_spans_cut_them",
                test_samplers_key_names_as_spans_cut_them);
    CU_add_test(suite, "per_operation_probability_and_tags",
                test_per_operation_probability_and_tags);
    CU_add_test(suite, "adaptive_lands_within_20_percent_at_10_per_second",
                test_adaptive_lands_within_20_percent_at_10_per_second);
    CU_add_test(suite, "adaptive_lands_within_20_percent_at_10000_per_second",
                test_adaptive_lands_within_20_percent_at_10000_per_second);
    CU_add_test(suite, "adaptive_favours_quiet_operations", test_adaptive_favours_quiet_operations);
    CU_add_test(suite, "adaptive_bounds_tracked_operations",
                test_adaptive_bounds_tracked_operations);
    CU_add_test(suite, "only_samplers_that_read_the_trace_id_draw_it",
                test_only_samplers_that_read_the_trace_id_draw_it);
    CU_add_test(suite, "never_sampling_samplers_are_recognised",
                test_never_sampling_samplers_are_recognised);
}
