/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/bridge/zipkin_v1_span_equal.h: field-by-field equality of two
 * decoded Zipkin v1 spans (sdk/wire/zipkin/zipkin_v1_thrift.h), for the tests
 * and the fuzz target that hold the binary decoder's fast path to the
 * protocol-neutral one. Endpoints are compared by content, not address:
 * which items share one endpoint struct is the decoders' own business.
 */
#ifndef TW_TEST_ZIPKIN_V1_SPAN_EQUAL_H
#define TW_TEST_ZIPKIN_V1_SPAN_EQUAL_H

#include <stdbool.h>
#include <string.h>

#include "wire/zipkin/zipkin_v1_thrift.h"

static inline bool tw_test_bytes_equal(const void *a, size_t a_len, const void *b, size_t b_len)
{
    return a_len == b_len && (a_len == 0 || memcmp(a, b, a_len) == 0);
}

static inline bool tw_test_v1_endpoints_equal(const tw__zipkin_endpoint *a,
                                              const tw__zipkin_endpoint *b)
{
    if (!a || !b)
        return a == b;
    return tw_test_bytes_equal(a->service_name, a->service_len, b->service_name, b->service_len) &&
           a->service_name[a->service_len] == '\0' && b->service_name[b->service_len] == '\0' &&
           a->ipv4 == b->ipv4 && a->port == b->port && a->has_ipv6 == b->has_ipv6 &&
           (!a->has_ipv6 || memcmp(a->ipv6, b->ipv6, 16) == 0);
}

static inline bool tw_test_v1_spans_equal(const tw__zipkin_v1_span *a, const tw__zipkin_v1_span *b)
{
    if (a->trace_id_high != b->trace_id_high || a->trace_id != b->trace_id || a->id != b->id ||
        a->parent_id != b->parent_id || a->has_parent_id != b->has_parent_id ||
        a->has_timestamp != b->has_timestamp || a->has_duration != b->has_duration ||
        a->debug != b->debug || a->timestamp_us != b->timestamp_us ||
        a->duration_us != b->duration_us ||
        !tw_test_bytes_equal(a->name, a->name_len, b->name, b->name_len) ||
        a->n_annotations != b->n_annotations ||
        a->n_binary_annotations != b->n_binary_annotations ||
        a->dropped_annotations != b->dropped_annotations || a->bad_ipv6 != b->bad_ipv6)
        return false;
    for (size_t i = 0; i < a->n_annotations; i++) {
        const tw__zipkin_annotation *x = &a->annotations[i], *y = &b->annotations[i];
        if (x->timestamp_us != y->timestamp_us ||
            !tw_test_bytes_equal(x->value, x->value_len, y->value, y->value_len) ||
            !tw_test_v1_endpoints_equal(x->host, y->host))
            return false;
    }
    for (size_t i = 0; i < a->n_binary_annotations; i++) {
        const tw__zipkin_binary_annotation *x = &a->binary_annotations[i],
                                           *y = &b->binary_annotations[i];
        if (x->type != y->type || !tw_test_bytes_equal(x->key, x->key_len, y->key, y->key_len) ||
            !tw_test_bytes_equal(x->value, x->value_len, y->value, y->value_len) ||
            !tw_test_v1_endpoints_equal(x->host, y->host))
            return false;
    }
    return true;
}

#endif /* TW_TEST_ZIPKIN_V1_SPAN_EQUAL_H */
