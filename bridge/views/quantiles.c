/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/views/quantiles.c: latency percentiles for `tracewire stats` and
 * `diff` (views.h, twv_quantiles; docs/views.md, "Percentiles").
 *
 * Exact while an operation has at most TWV_EXACT_MAX timed spans (the values
 * are kept and sorted on demand); past that, the values move into a
 * log-bucket sketch with DDSketch's mapping: value v > 0 falls in bucket
 * i = ceil(log(v) / log(gamma)), gamma = (1 + a) / (1 - a), a =
 * TWV_SKETCH_ALPHA, so bucket i holds (gamma^(i-1), gamma^i]; the estimate of
 * a bucket is 2 gamma^i / (gamma + 1), within a * v of every v in it. The
 * quantile p is the value of rank ceil(p * n) (nearest rank), exact or the
 * estimate of the bucket holding that rank, rounded to whole µs: so
 * |estimate - exact| <= a * exact + 0.5. The maximum is always exact.
 *
 * Memory per operation: the exact values (8 KB at most), then one 32-bit
 * counter per bucket between the smallest and largest value seen: the ratio
 * of the two decides, about 115 buckets per factor of 10 for a = 1%.
 * Locking: none.
 */
#include "views/views.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double gamma_value(void)
{
    return (1.0 + TWV_SKETCH_ALPHA) / (1.0 - TWV_SKETCH_ALPHA);
}

static double log_gamma(void)
{
    static double lg;
    if (lg == 0.0)
        lg = log(gamma_value());
    return lg;
}

int32_t twv_sketch_index(int64_t value)
{
    return (int32_t)ceil(log((double)value) / log_gamma());
}

double twv_sketch_value(int32_t index)
{
    double g = gamma_value();
    return 2.0 * pow(g, (double)index) / (g + 1.0);
}

void twv_quantiles_init(twv_quantiles *q)
{
    memset(q, 0, sizeof *q);
}

void twv_quantiles_free(twv_quantiles *q)
{
    free(q->exact);
    free(q->buckets);
    memset(q, 0, sizeof *q);
}

/* Counts @value in the sketch, growing the bucket range as needed. */
static bool sketch_add(twv_quantiles *q, int64_t value, uint32_t times)
{
    if (value <= 0) {
        q->n_zero += times;
        return true;
    }
    int32_t i = twv_sketch_index(value);
    if (q->n_buckets == 0) {
        q->buckets = calloc(1, sizeof *q->buckets);
        if (!q->buckets)
            return false;
        q->min_index = i;
        q->n_buckets = 1;
    } else if (i < q->min_index) {
        size_t extra = (size_t)(q->min_index - i);
        uint32_t *grown = realloc(q->buckets, (q->n_buckets + extra) * sizeof *grown);
        if (!grown)
            return false;
        memmove(grown + extra, grown, q->n_buckets * sizeof *grown);
        memset(grown, 0, extra * sizeof *grown);
        q->buckets = grown;
        q->n_buckets += extra;
        q->min_index = i;
    } else if ((size_t)(i - q->min_index) >= q->n_buckets) {
        size_t want = (size_t)(i - q->min_index) + 1;
        uint32_t *grown = realloc(q->buckets, want * sizeof *grown);
        if (!grown)
            return false;
        memset(grown + q->n_buckets, 0, (want - q->n_buckets) * sizeof *grown);
        q->buckets = grown;
        q->n_buckets = want;
    }
    q->buckets[i - q->min_index] += times;
    return true;
}

bool twv_quantiles_add(twv_quantiles *q, int64_t value)
{
    if (q->count == 0 || value > q->max)
        q->max = value;
    if (!q->is_sketch) {
        if (q->n_exact < TWV_EXACT_MAX) {
            if (q->n_exact == q->cap_exact) {
                size_t cap = q->cap_exact ? 2 * q->cap_exact : 8;
                if (cap > TWV_EXACT_MAX)
                    cap = TWV_EXACT_MAX;
                int64_t *grown = realloc(q->exact, cap * sizeof *grown);
                if (!grown)
                    return false;
                q->exact = grown;
                q->cap_exact = cap;
            }
            q->exact[q->n_exact++] = value;
            q->count++;
            return true;
        }
        /* Switch to the sketch: every value so far goes in. */
        for (size_t i = 0; i < q->n_exact; i++) {
            if (!sketch_add(q, q->exact[i], 1))
                return false;
        }
        free(q->exact);
        q->exact = NULL;
        q->n_exact = q->cap_exact = 0;
        q->is_sketch = true;
    }
    if (!sketch_add(q, value, 1))
        return false;
    q->count++;
    return true;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int64_t twv_quantiles_get(twv_quantiles *q, double p)
{
    if (q->count == 0)
        return 0;
    uint64_t rank = (uint64_t)ceil(p * (double)q->count);
    if (rank < 1)
        rank = 1;
    if (rank > q->count)
        rank = q->count;
    if (!q->is_sketch) {
        qsort(q->exact, q->n_exact, sizeof *q->exact, cmp_i64);
        return q->exact[rank - 1];
    }
    if (rank <= q->n_zero)
        return 0;
    uint64_t seen = q->n_zero;
    for (size_t i = 0; i < q->n_buckets; i++) {
        seen += q->buckets[i];
        if (seen >= rank) {
            double v = twv_sketch_value(q->min_index + (int32_t)i);
            int64_t est = (int64_t)llround(v);
            return est > q->max ? q->max : est;
        }
    }
    return q->max;
}
