/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/propagation/test_binary.c: suite "propagation/binary": Jaeger's
 * binary layout byte by byte, the size query, round trips, and extract's
 * bounds checks: short reads and impossible counts are TW_E_MALFORMED, bad
 * or oversized items are dropped with a warning (docs/PROPAGATION.md, "Binary").
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "prop_test.h"

static const uint8_t layout[] = {
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* trace id high */
    0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, /* trace id low */
    0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, /* span id */
    0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, /* parent id */
    0x0b,                                           /* flags */
    0x00, 0x00, 0x00, 0x02,                         /* two items */
    0x00, 0x00, 0x00, 0x01, 'k',                    /* key "k" */
    0x00, 0x00, 0x00, 0x02, 'v',  '1',              /* value "v1" */
    0x00, 0x00, 0x00, 0x02, 'k',  '2',              /* key "k2" */
    0x00, 0x00, 0x00, 0x00,                         /* value "" */
};

static tw_span_context *layout_context(void)
{
    return make_context(0x0102030405060708ULL, 0x1112131415161718ULL, 0x2122232425262728ULL,
                        0x3132333435363738ULL, 0x0b, "k", "v1", "k2", "", NULL);
}

static void test_inject_writes_the_jaeger_layout(void)
{
    tw_span_context *c = layout_context();
    uint8_t buf[256];
    size_t len = 0;
    CU_ASSERT_EQUAL(tw_binary_inject(c, buf, sizeof buf, &len), TW_OK);
    CU_ASSERT_EQUAL(len, sizeof layout);
    CU_ASSERT(memcmp(buf, layout, sizeof layout) == 0);
    tw_span_context_unref(c);
}

static void test_inject_reports_the_size_it_needs(void)
{
    tw_span_context *c = layout_context();
    size_t len = 0;
    CU_ASSERT_EQUAL(tw_binary_inject(c, NULL, 0, &len), TW_E_LIMIT);
    CU_ASSERT_EQUAL(len, sizeof layout);
    uint8_t small[sizeof layout - 1];
    memset(small, 0xee, sizeof small);
    CU_ASSERT_EQUAL(tw_binary_inject(c, small, sizeof small, &len), TW_E_LIMIT);
    CU_ASSERT_EQUAL(len, sizeof layout);
    CU_ASSERT_EQUAL(small[0], 0xee); /* nothing written */
    tw_span_context_unref(c);
}

static void test_inject_refuses_hints_and_bad_arguments(void)
{
    tw__context_parts parts = {.flags = TW_FLAG_SAMPLED};
    tw_span_context *hint = tw__span_context_build(&parts);
    uint8_t buf[64];
    size_t len = 0;
    CU_ASSERT_EQUAL(tw_binary_inject(hint, buf, sizeof buf, &len), TW_E_INVALID_ARG);
    tw_span_context *c = layout_context();
    CU_ASSERT_EQUAL(tw_binary_inject(NULL, buf, sizeof buf, &len), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_binary_inject(c, buf, sizeof buf, NULL), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_binary_inject(c, NULL, 10, &len), TW_E_INVALID_ARG);
    tw_span_context_unref(c);
    tw_span_context_unref(hint);
}

static void test_deferred_is_written_not_sampled(void)
{
    tw_span_context *c = make_context(0, 1, 2, 0, TW__FLAG_DEFERRED | TW_FLAG_FIREHOSE, NULL);
    uint8_t buf[64];
    size_t len = 0;
    CU_ASSERT_EQUAL(tw_binary_inject(c, buf, sizeof buf, &len), TW_OK);
    CU_ASSERT_EQUAL(len, 37);
    CU_ASSERT_EQUAL(buf[32], TW_FLAG_FIREHOSE);
    tw_span_context_unref(c);
}

static void test_round_trip(void)
{
    tw_span_context *c = layout_context();
    uint8_t buf[256];
    size_t len = 0;
    tw_binary_inject(c, buf, sizeof buf, &len);
    collected_warnings w = {0};
    tw_error *err = NULL;
    tw_span_context *back = tw_binary_extract(buf, len, collect_warning, &w, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    CU_ASSERT(ids_equal(back, 0x0102030405060708ULL, 0x1112131415161718ULL, 0x2122232425262728ULL,
                        0x3132333435363738ULL));
    CU_ASSERT_EQUAL(tw_span_context_flags(back), 0x0b);
    CU_ASSERT_EQUAL(tw_span_context_baggage_count(back), 2);
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(back, "k"), "v1");
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(back, "k2"), "");
    CU_ASSERT_EQUAL(w.n, 0);
    tw_span_context_unref(back);
    tw_span_context_unref(c);

    /* 64-bit, no baggage: exactly the header. */
    c = make_context(0, 5, 6, 0, 1, NULL);
    tw_binary_inject(c, buf, sizeof buf, &len);
    CU_ASSERT_EQUAL(len, 37);
    back = tw_binary_extract(buf, len, NULL, NULL, NULL);
    CU_ASSERT(ids_equal(back, 0, 5, 6, 0));
    CU_ASSERT_EQUAL(tw_span_context_baggage_count(back), 0);
    tw_span_context_unref(back);
    tw_span_context_unref(c);
}

static void expect_malformed(const uint8_t *buf, size_t len, const char *reason)
{
    tw_error *err = NULL;
    tw_span_context *c = tw_binary_extract(buf, len, NULL, NULL, &err);
    ASSERT_MALFORMED(c, err, "binary", reason);
}

static void test_malformed_input_is_an_error_with_the_reason(void)
{
    uint8_t buf[sizeof layout];
    expect_malformed(layout, 0, "0 bytes, shorter than the 37-byte header");
    expect_malformed(layout, 36, "36 bytes, shorter than the 37-byte header");
    memcpy(buf, layout, sizeof buf);
    memset(buf, 0, 16);
    expect_malformed(buf, sizeof buf, "trace id is zero");
    memcpy(buf, layout, sizeof buf);
    memset(buf + 16, 0, 8);
    expect_malformed(buf, sizeof buf, "span id is zero");
    /* Counts that cannot fit in what is left. */
    memcpy(buf, layout, sizeof buf);
    buf[36] = 0x03; /* 3 items need at least 24 bytes; 21 left */
    expect_malformed(buf, sizeof buf, "3 baggage items cannot fit in the 21 bytes left");
    buf[33] = 0xff; /* a count of 4 billion */
    expect_malformed(buf, sizeof buf, "baggage items cannot fit");
    /* Lengths that run past the end. */
    memcpy(buf, layout, sizeof buf);
    buf[40] = 0x50; /* the first key claims 80 bytes */
    expect_malformed(buf, sizeof buf, "item 1 of 2: the key (80 bytes) runs past the end");
    memcpy(buf, layout, sizeof buf);
    buf[57] = 0x01; /* the last value claims 1 byte, none left */
    expect_malformed(buf, sizeof buf, "item 2 of 2: the value (1 bytes) runs past the end");
    expect_malformed(layout, sizeof layout - 1, "item 2 of 2: the value length runs past the end");
    memcpy(buf, layout, sizeof buf);
    buf[36] = 0x01; /* one item, cut after its key */
    expect_malformed(buf, 45, "item 1 of 1: the value length runs past the end");
    memcpy(buf, layout, sizeof buf);
    buf[40] = 0xff;
    buf[37] = 0xff; /* a key of 4 GB */
    expect_malformed(buf, sizeof buf, "the key (4278190335 bytes) runs past the end");
}

static void test_null_buffer_is_invalid(void)
{
    tw_error *err = NULL;
    CU_ASSERT_PTR_NULL(tw_binary_extract(NULL, 37, NULL, NULL, &err));
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_INVALID_ARG);
    tw_error_free(err);
}

/* Builds a header (ids 1/2) followed by @count items written by the caller. */
static size_t put_header(uint8_t *buf, uint32_t count)
{
    memset(buf, 0, 37);
    buf[15] = 1;
    buf[23] = 2;
    buf[32] = 1;
    buf[33] = (uint8_t)(count >> 24);
    buf[34] = (uint8_t)(count >> 16);
    buf[35] = (uint8_t)(count >> 8);
    buf[36] = (uint8_t)count;
    return 37;
}

static size_t put_item(uint8_t *p, const char *key, size_t kl, const char *value, size_t vl)
{
    p[0] = (uint8_t)(kl >> 24);
    p[1] = (uint8_t)(kl >> 16);
    p[2] = (uint8_t)(kl >> 8);
    p[3] = (uint8_t)kl;
    memcpy(p + 4, key, kl);
    p += 4 + kl;
    p[0] = (uint8_t)(vl >> 24);
    p[1] = (uint8_t)(vl >> 16);
    p[2] = (uint8_t)(vl >> 8);
    p[3] = (uint8_t)vl;
    memcpy(p + 4, value, vl);
    return 8 + kl + vl;
}

static void test_bad_items_are_dropped_with_warnings(void)
{
    uint8_t *buf = malloc(64 * 1024);
    char *big = repeat('x', TW_BAGGAGE_MAX_ITEM_BYTES);
    size_t n = put_header(buf, 5);
    n += put_item(buf + n, "ok", 2, "1", 1);
    n += put_item(buf + n, "", 0, "empty key", 9);
    n += put_item(buf + n, "n\0l", 3, "v", 1);
    n += put_item(buf + n, "big", 3, big, strlen(big));
    n += put_item(buf + n, "ok", 2, "2", 1);
    buf[n++] = 0xaa; /* trailing bytes */
    buf[n++] = 0xbb;
    collected_warnings w = {0};
    tw_span_context *c = tw_binary_extract(buf, n, collect_warning, &w, NULL);
    CU_ASSERT(ids_equal(c, 0, 1, 2, 0));
    CU_ASSERT_EQUAL(tw_span_context_baggage_count(c), 1);
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "ok"), "1");
    CU_ASSERT(warned(&w, "binary: baggage item with an empty key dropped"));
    CU_ASSERT(warned(&w, "binary: baggage item 3 holds a NUL byte; dropped"));
    CU_ASSERT(warned(&w, "binary: baggage item \"big\" dropped: key and value exceed 4096"));
    CU_ASSERT(warned(&w, "binary: baggage key \"ok\" repeated"));
    CU_ASSERT(warned(&w, "binary: 2 bytes after the last baggage item ignored"));
    CU_ASSERT_EQUAL(w.n, 5);
    tw_span_context_unref(c);

    /* More than 180 items: the first 180 are kept. */
    n = put_header(buf, 200);
    for (int i = 0; i < 200; i++) {
        char key[8];
        int kl = snprintf(key, sizeof key, "k%d", i);
        n += put_item(buf + n, key, (size_t)kl, "v", 1);
    }
    memset(&w, 0, sizeof w);
    c = tw_binary_extract(buf, n, collect_warning, &w, NULL);
    CU_ASSERT_EQUAL(tw_span_context_baggage_count(c), TW_BAGGAGE_MAX_ITEMS);
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "k179"), "v");
    CU_ASSERT_PTR_NULL(tw_span_context_baggage_get(c, "k180"));
    CU_ASSERT_EQUAL(w.n, TW__WARNINGS_SHOWN + 1); /* 16 of the 20 shown, then a summary */
    CU_ASSERT(warned(&w, "4 more baggage/tracestate problems not shown"));
    size_t counted = 0;
    tw_span_context *again = tw__binary_extract(buf, n, NULL, NULL, &counted, NULL);
    CU_ASSERT_EQUAL(counted, 20);
    tw_span_context_unref(again);
    tw_span_context_unref(c);
    free(big);
    free(buf);
}

void tw_test_register(void)
{
    CU_pSuite s = CU_add_suite("propagation/binary", NULL, NULL);
    CU_add_test(s, "inject_writes_the_jaeger_layout", test_inject_writes_the_jaeger_layout);
    CU_add_test(s, "inject_reports_the_size_it_needs", test_inject_reports_the_size_it_needs);
    CU_add_test(s, "inject_refuses_hints_and_bad_arguments",
                test_inject_refuses_hints_and_bad_arguments);
    CU_add_test(s, "deferred_is_written_not_sampled", test_deferred_is_written_not_sampled);
    CU_add_test(s, "round_trip", test_round_trip);
    CU_add_test(s, "malformed_input_is_an_error_with_the_reason",
                test_malformed_input_is_an_error_with_the_reason);
    CU_add_test(s, "null_buffer_is_invalid", test_null_buffer_is_invalid);
    CU_add_test(s, "bad_items_are_dropped_with_warnings", test_bad_items_are_dropped_with_warnings);
}
