/*
 * tests/unit/sampling/test_sampler.c: suite "sampling/sampler": the const
 * and probabilistic samplers, Jaeger's boundary rule, and invalid rates.
 */
#include <math.h>
#include <string.h>

#include "harness.h"
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

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("sampling/sampler", NULL, NULL);
    CU_add_test(suite, "const_sampler_decides_always_the_same",
                test_const_sampler_decides_always_the_same);
    CU_add_test(suite, "probabilistic_follows_jaeger_boundary",
                test_probabilistic_follows_jaeger_boundary);
    CU_add_test(suite, "probabilistic_rate_is_close_to_requested",
                test_probabilistic_rate_is_close_to_requested);
    CU_add_test(suite, "invalid_rates_are_errors", test_invalid_rates_are_errors);
    CU_add_test(suite, "root_span_carries_probabilistic_tags",
                test_root_span_carries_probabilistic_tags);
}
