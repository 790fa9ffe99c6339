/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/span_builder.h: builds model records (wire/model/span_data.h) by hand
 * for the wire tests and the interop driver, the way span.c fills them:
 * push a slot, fill it, then commit the count.
 */
#ifndef TW_TESTS_SPAN_BUILDER_H
#define TW_TESTS_SPAN_BUILDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/model/span_data.h"

tw_value tw_test_str(const char *s);
tw_value tw_test_bin(const uint8_t *b, size_t len);
tw_value tw_test_dbl(double d);
tw_value tw_test_bool(bool b);
tw_value tw_test_i64(int64_t i);

/* Appends a tag (no value cap); false on allocation failure. */
bool tw_test_add_tag(tw__span_data *s, const char *key, tw_value value);

typedef struct tw_test_field {
    const char *key;
    tw_value value;
} tw_test_field;

/* Appends a log with these fields; false on allocation failure. */
bool tw_test_add_log(tw__span_data *s, int64_t timestamp_us, const tw_test_field *fields, size_t n);

/* Five bytes with NULs inside, for binary values. */
extern const uint8_t tw_test_blob_with_nul[5];

/* 128-bit ids with the top bit set, every tag type (NaN, -0.0, infinities,
 * INT64 limits, binary with NULs, empty values), logs (one empty), both
 * reference types, a UTF-8 name with quotes. NULL on allocation failure. */
tw__span_data *tw_test_span_every_field(void);
/* 64-bit root span: no parent, refs, tags or logs; empty operation name. */
tw__span_data *tw_test_span_root_64bit(void);

#endif /* TW_TESTS_SPAN_BUILDER_H */
