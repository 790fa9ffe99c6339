/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/bridge/test_views_quantiles.c: suite "bridge/views/quantiles":
 * the percentiles of `tracewire stats` (bridge/views/quantiles.c). Exact
 * values up to TWV_EXACT_MAX per operation, nearest-rank definition; past
 * that, the documented bound |estimate - exact| <= TWV_SKETCH_ALPHA * exact
 * + 0.5 µs, checked against the exact sorted values on many distributions
 * (uniform, log-normal, bimodal, heavy-tailed, constant, tiny and huge
 * values) at many percentiles; the bucket count stays bounded.
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdlib.h>

#include "harness.h"
#include "views/views.h"

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static uint64_t rng = 0x243f6a8885a308d3ull;

static double uniform01(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) * 0x1p-53;
}

static double normal(void)
{
    double u = uniform01(), v = uniform01();
    return sqrt(-2.0 * log(u > 0 ? u : 1e-300)) * cos(6.283185307179586 * v);
}

typedef enum dist {
    UNIFORM,
    LOGNORMAL,
    BIMODAL,
    PARETO,
    CONSTANT,
    TINY,
    HUGE_VALUES,
    N_DISTS
} dist;
static const char *const dist_names[] = {"uniform",  "log-normal", "bimodal", "pareto",
                                         "constant", "tiny",       "huge"};

static int64_t draw(dist d)
{
    switch (d) {
    case UNIFORM:
        return 1 + (int64_t)(uniform01() * 1e6);
    case LOGNORMAL:
        return 1 + (int64_t)exp(8.0 + 1.5 * normal());
    case BIMODAL:
        return uniform01() < 0.9 ? 800 + (int64_t)(uniform01() * 400)
                                 : 2000000 + (int64_t)(uniform01() * 500000);
    case PARETO:
        return (int64_t)(100.0 / pow(1.0 - uniform01() * 0.999999, 1.0 / 1.2));
    case CONSTANT:
        return 4242;
    case TINY:
        return 1 + (int64_t)(uniform01() * 9);
    case HUGE_VALUES:
        return INT64_C(1000000000000) + (int64_t)(uniform01() * 1e12);
    case N_DISTS:
        break;
    }
    return 1;
}

static void test_small_inputs_are_exact_with_nearest_rank(void)
{
    twv_quantiles q;
    twv_quantiles_init(&q);
    for (int64_t v = 100; v >= 1; v--)
        CU_ASSERT_TRUE(twv_quantiles_add(&q, v));
    CU_ASSERT_FALSE(q.is_sketch);
    CU_ASSERT_EQUAL(twv_quantiles_get(&q, 0.50), 50);
    CU_ASSERT_EQUAL(twv_quantiles_get(&q, 0.90), 90);
    CU_ASSERT_EQUAL(twv_quantiles_get(&q, 0.99), 99);
    CU_ASSERT_EQUAL(twv_quantiles_get(&q, 1.0), 100);
    CU_ASSERT_EQUAL(q.max, 100);
    twv_quantiles_free(&q);

    twv_quantiles_init(&q);
    CU_ASSERT_EQUAL(twv_quantiles_get(&q, 0.5), 0); /* empty */
    twv_quantiles_add(&q, 7);
    CU_ASSERT_EQUAL(twv_quantiles_get(&q, 0.5), 7);
    twv_quantiles_add(&q, 3);
    CU_ASSERT_EQUAL(twv_quantiles_get(&q, 0.5), 3); /* rank ceil(0.5 x 2) = 1 */
    CU_ASSERT_EQUAL(twv_quantiles_get(&q, 0.51), 7);
    twv_quantiles_free(&q);
}

static void test_exact_up_to_the_limit_then_a_sketch(void)
{
    twv_quantiles q;
    twv_quantiles_init(&q);
    for (int i = 0; i < TWV_EXACT_MAX; i++)
        twv_quantiles_add(&q, i + 1);
    CU_ASSERT_FALSE(q.is_sketch);
    CU_ASSERT_EQUAL(twv_quantiles_get(&q, 0.5), TWV_EXACT_MAX / 2);
    twv_quantiles_add(&q, TWV_EXACT_MAX + 1);
    CU_ASSERT_TRUE(q.is_sketch);
    CU_ASSERT_PTR_NULL(q.exact);
    CU_ASSERT_EQUAL(q.count, TWV_EXACT_MAX + 1);
    CU_ASSERT_EQUAL(q.max, TWV_EXACT_MAX + 1);
    twv_quantiles_free(&q);
}

static void test_every_value_is_within_alpha_of_its_bucket_estimate(void)
{
    for (double v = 1; v < 1e15; v *= 1.0007) {
        int64_t x = (int64_t)v;
        double est = twv_sketch_value(twv_sketch_index(x));
        CU_ASSERT_TRUE(fabs(est - (double)x) <= TWV_SKETCH_ALPHA * (double)x * (1 + 1e-9));
        if (fabs(est - (double)x) > TWV_SKETCH_ALPHA * (double)x * (1 + 1e-9)) {
            fprintf(stderr, "value %lld: estimate %f\n", (long long)x, est);
            break;
        }
    }
}

/* The documented bound, on every distribution and percentile. */
static void test_sketch_estimates_stay_within_the_documented_bound(void)
{
    static const double ps[] = {0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1.0};
    const size_t n = 40000;
    int64_t *values = malloc(n * sizeof *values);
    CU_ASSERT_PTR_NOT_NULL_FATAL(values);
    double worst = 0;
    for (int d = 0; d < N_DISTS; d++) {
        twv_quantiles q;
        twv_quantiles_init(&q);
        for (size_t i = 0; i < n; i++) {
            values[i] = draw((dist)d);
            CU_ASSERT_TRUE_FATAL(twv_quantiles_add(&q, values[i]));
        }
        CU_ASSERT_TRUE(q.is_sketch);
        qsort(values, n, sizeof *values, cmp_i64);
        for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
            size_t rank = (size_t)ceil(ps[k] * (double)n);
            int64_t exact = values[(rank ? rank : 1) - 1];
            int64_t est = twv_quantiles_get(&q, ps[k]);
            double err = fabs((double)(est - exact));
            double bound = TWV_SKETCH_ALPHA * (double)exact + 0.5;
            CU_ASSERT_TRUE(err <= bound);
            if (err > bound)
                fprintf(stderr, "%s p%g: exact %lld, estimate %lld\n", dist_names[d], ps[k] * 100,
                        (long long)exact, (long long)est);
            if (err / bound > worst)
                worst = err / bound;
        }
        CU_ASSERT_EQUAL(q.max, values[n - 1]); /* the maximum is exact */
        /* memory: one bucket per factor gamma between the extremes, no more */
        double span = log((double)values[n - 1] / (double)values[0]) /
                      log((1 + TWV_SKETCH_ALPHA) / (1 - TWV_SKETCH_ALPHA));
        CU_ASSERT_TRUE((double)q.n_buckets <= span + 2);
        twv_quantiles_free(&q);
    }
    printf("\n    largest error seen: %.3f of the bound\n", worst);
    free(values);
}

static void test_values_at_or_below_zero_are_counted_first(void)
{
    twv_quantiles q;
    twv_quantiles_init(&q);
    for (int i = 0; i < 2 * TWV_EXACT_MAX; i++)
        twv_quantiles_add(&q, i < TWV_EXACT_MAX ? 0 : 1000);
    CU_ASSERT_TRUE(q.is_sketch);
    CU_ASSERT_EQUAL(q.n_zero, TWV_EXACT_MAX);
    CU_ASSERT_EQUAL(twv_quantiles_get(&q, 0.5), 0);
    int64_t p90 = twv_quantiles_get(&q, 0.9);
    CU_ASSERT_TRUE(p90 >= 990 && p90 <= 1010);
    twv_quantiles_free(&q);
}

void tw_test_register(void)
{
    CU_pSuite s = CU_add_suite("bridge/views/quantiles", NULL, NULL);
    CU_add_test(s, "small inputs are exact, with nearest rank",
                test_small_inputs_are_exact_with_nearest_rank);
    CU_add_test(s, "exact up to the limit, then a sketch",
                test_exact_up_to_the_limit_then_a_sketch);
    CU_add_test(s, "every value is within alpha of its bucket's estimate",
                test_every_value_is_within_alpha_of_its_bucket_estimate);
    CU_add_test(s, "sketch estimates stay within the documented bound",
                test_sketch_estimates_stay_within_the_documented_bound);
    CU_add_test(s, "values at or below zero are counted first",
                test_values_at_or_below_zero_are_counted_first);
}
