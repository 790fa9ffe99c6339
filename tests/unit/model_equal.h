/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/model_equal.h: what "the same span model" means, for round-trip
 * tests and fuzz targets (header-only, so a libFuzzer target can include it
 * without a second source file): every id, flag (`shared` and
 * `is_duration_unknown` too), time, name, reference, tag and log field
 * equal; doubles equal bit-for-bit in sign, NaN equals NaN.
 */
#ifndef TW_TESTS_MODEL_EQUAL_H
#define TW_TESTS_MODEL_EQUAL_H

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "wire/model/span_data.h"

static inline bool tw_test_values_equal(const tw__tag *a, const tw__tag *b)
{
    if (strcmp(a->key, b->key) != 0 || a->type != b->type)
        return false;
    switch (a->type) {
    case TW_VALUE_STRING:
    case TW_VALUE_BINARY:
        return a->len == b->len && (a->len == 0 || memcmp(a->v.bin, b->v.bin, a->len) == 0);
    case TW_VALUE_DOUBLE:
        if (isnan(a->v.dbl) || isnan(b->v.dbl))
            return isnan(a->v.dbl) && isnan(b->v.dbl);
        return a->v.dbl == b->v.dbl && signbit(a->v.dbl) == signbit(b->v.dbl);
    case TW_VALUE_BOOL:
        return a->v.boolean == b->v.boolean;
    case TW_VALUE_INT64:
        return a->v.i64 == b->v.i64;
    }
    return false;
}

static inline bool tw_test_tags_equal(const tw__tag *a, size_t na, const tw__tag *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++) {
        if (!tw_test_values_equal(&a[i], &b[i]))
            return false;
    }
    return true;
}

static inline bool tw_test_spans_equal(const tw__span_data *a, const tw__span_data *b)
{
    if (a->trace_id_high != b->trace_id_high || a->trace_id_low != b->trace_id_low ||
        a->span_id != b->span_id || a->parent_id != b->parent_id || a->flags != b->flags ||
        a->shared != b->shared || a->is_duration_unknown != b->is_duration_unknown ||
        strcmp(a->operation, b->operation) != 0 || a->start_us != b->start_us ||
        a->duration_us != b->duration_us || a->n_refs != b->n_refs || a->n_logs != b->n_logs ||
        !tw_test_tags_equal(a->tags, a->n_tags, b->tags, b->n_tags))
        return false;
    for (size_t i = 0; i < a->n_refs; i++) {
        const tw__ref *x = &a->refs[i], *y = &b->refs[i]; /* field by field: padding */
        if (x->type != y->type || x->trace_id_high != y->trace_id_high ||
            x->trace_id_low != y->trace_id_low || x->span_id != y->span_id)
            return false;
    }
    for (size_t i = 0; i < a->n_logs; i++) {
        if (a->logs[i].timestamp_us != b->logs[i].timestamp_us ||
            !tw_test_tags_equal(a->logs[i].fields, a->logs[i].n_fields, b->logs[i].fields,
                                b->logs[i].n_fields))
            return false;
    }
    return true;
}

#endif /* TW_TESTS_MODEL_EQUAL_H */
