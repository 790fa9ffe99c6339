/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/wire/test_buf.c: suite "wire/buf", the growable byte buffer
 * of sdk/wire/core/buf.c that encoders fill and senders transmit.
 *
 * The contract: a zeroed buffer is valid and empty, appends keep earlier
 * bytes and grow as needed, reset keeps the memory for reuse, a failed
 * append leaves the buffer unchanged, and free accepts NULL.
 */
#include <stdint.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "harness.h"
#include "wire/core/buf.h"

static void test_zeroed_buffer_is_empty_and_accepts_appends(void)
{
    tw__buf buf = {0};
    CU_ASSERT_EQUAL(buf.len, 0);
    CU_ASSERT_TRUE(tw__buf_append(&buf, "abc", 3));
    CU_ASSERT_EQUAL_FATAL(buf.len, 3);
    CU_ASSERT(memcmp(buf.data, "abc", 3) == 0);
    tw__buf_free(&buf);
}

static void test_appends_keep_earlier_bytes_across_growth(void)
{
    tw__buf buf;
    tw__buf_init(&buf);
    uint8_t chunk[100];
    for (size_t round = 0; round < 1000; round++) {
        memset(chunk, (int)(round & 0xff), sizeof(chunk));
        CU_ASSERT_TRUE_FATAL(tw__buf_append(&buf, chunk, sizeof(chunk)));
    }
    CU_ASSERT_EQUAL_FATAL(buf.len, 100000);
    CU_ASSERT(buf.cap >= buf.len);
    size_t wrong = 0;
    for (size_t i = 0; i < buf.len; i++)
        wrong += buf.data[i] != (uint8_t)((i / 100) & 0xff);
    CU_ASSERT_EQUAL(wrong, 0);
    tw__buf_free(&buf);
}

static void test_empty_append_is_a_no_op(void)
{
    tw__buf buf = {0};
    CU_ASSERT_TRUE(tw__buf_append(&buf, NULL, 0));
    CU_ASSERT_EQUAL(buf.len, 0);
    CU_ASSERT_PTR_NULL(buf.data); /* nothing allocated for nothing */
    tw__buf_free(&buf);
}

static void test_reset_keeps_memory_for_reuse(void)
{
    tw__buf buf = {0};
    CU_ASSERT_TRUE_FATAL(tw__buf_append(&buf, "0123456789", 10));
    uint8_t *data = buf.data;
    size_t cap = buf.cap;
    tw__buf_reset(&buf);
    CU_ASSERT_EQUAL(buf.len, 0);
    CU_ASSERT_PTR_EQUAL(buf.data, data);
    CU_ASSERT_EQUAL(buf.cap, cap);
    CU_ASSERT_TRUE_FATAL(tw__buf_append(&buf, "xy", 2));
    CU_ASSERT_PTR_EQUAL(buf.data, data);
    CU_ASSERT(memcmp(buf.data, "xy", 2) == 0);
    tw__buf_free(&buf);
}

/* A length that cannot be added without overflow is refused before any
 * allocation or copy, so the bogus source pointer is never read. */
static void test_impossible_append_fails_and_leaves_buffer_unchanged(void)
{
    tw__buf buf = {0};
    CU_ASSERT_TRUE_FATAL(tw__buf_append(&buf, "keep", 4));
    uint8_t *data = buf.data;
    CU_ASSERT_FALSE(tw__buf_append(&buf, "x", SIZE_MAX));
    CU_ASSERT_FALSE(tw__buf_append(&buf, "x", SIZE_MAX - 2));
    CU_ASSERT_EQUAL(buf.len, 4);
    CU_ASSERT_PTR_EQUAL(buf.data, data);
    CU_ASSERT(memcmp(buf.data, "keep", 4) == 0);
    tw__buf_free(&buf);
}

static void test_free_empties_and_accepts_null(void)
{
    tw__buf buf = {0};
    CU_ASSERT_TRUE_FATAL(tw__buf_append(&buf, "abc", 3));
    tw__buf_free(&buf);
    CU_ASSERT_PTR_NULL(buf.data);
    CU_ASSERT_EQUAL(buf.len, 0);
    CU_ASSERT_EQUAL(buf.cap, 0);
    tw__buf_free(&buf); /* freeing an empty buffer again is harmless */
    tw__buf_free(NULL);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("wire/buf", NULL, NULL);
    if (!suite)
        return;
    CU_ADD_TEST(suite, test_zeroed_buffer_is_empty_and_accepts_appends);
    CU_ADD_TEST(suite, test_appends_keep_earlier_bytes_across_growth);
    CU_ADD_TEST(suite, test_empty_append_is_a_no_op);
    CU_ADD_TEST(suite, test_reset_keeps_memory_for_reuse);
    CU_ADD_TEST(suite, test_impossible_append_fails_and_leaves_buffer_unchanged);
    CU_ADD_TEST(suite, test_free_empties_and_accepts_null);
}
