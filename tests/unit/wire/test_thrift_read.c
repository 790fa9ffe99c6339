/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/wire/test_thrift_read.c: suite "wire/thrift_read", the one
 * Thrift reader (sdk/wire/core/thrift.h, thrift_read.c).
 *
 * The reads the decoders make most (field header, integer, string) have an
 * inline fast path in the header and a general function (`_any`) that
 * handles every case. The contract tested here: on any bytes, at any
 * position, with any bytes left, both give the same answer: the same
 * value, the same cursor, and on failure the same state, offset, need and
 * reason. Plus the protocol facts at the edges (varint lengths, i16/i32
 * ranges, long field ids, the end of the input).
 */
#include <stdint.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "harness.h"
#include "wire/core/thrift.h"

static bool same_reader(const tw__thrift_reader *a, const tw__thrift_reader *b)
{
    return a->pos == b->pos && a->state == b->state && a->need == b->need &&
           a->err_at == b->err_at && a->pending_bool == b->pending_bool &&
           strcmp(a->why, b->why) == 0;
}

/* Reads one value of each kind at @pos of @data[0..len) both ways; counts
 * disagreements. */
static size_t compare_at(const uint8_t *data, size_t len, size_t pos, tw__thrift_protocol proto)
{
    size_t wrong = 0;
    tw__thrift_reader fast, any;

    for (int bits = 16; bits <= 64; bits *= 2) {
        tw__thrift_reader_init(&fast, data, len, proto, 8);
        tw__thrift_reader_init(&any, data, len, proto, 8);
        fast.pos = any.pos = pos;
        int64_t vf = 0x5a5a, va = 0x5a5a;
        bool rf = tw__thrift_read_int(&fast, bits, &vf);
        bool ra = tw__thrift_read_int_any(&any, bits, &va);
        wrong += rf != ra || (rf && vf != va) || !same_reader(&fast, &any);
    }

    tw__thrift_reader_init(&fast, data, len, proto, 8);
    tw__thrift_reader_init(&any, data, len, proto, 8);
    fast.pos = any.pos = pos;
    const uint8_t *pf = NULL, *pa = NULL;
    size_t nf = 7, na = 7;
    bool rf = tw__thrift_read_bytes(&fast, &pf, &nf);
    bool ra = tw__thrift_read_bytes_any(&any, &pa, &na);
    wrong += rf != ra || (rf && (pf != pa || nf != na)) || !same_reader(&fast, &any);

    for (int16_t last = -3; last <= 3; last += 3) {
        tw__thrift_reader_init(&fast, data, len, proto, 8);
        tw__thrift_reader_init(&any, data, len, proto, 8);
        fast.pos = any.pos = pos;
        int tf = -9, ta = -9;
        int16_t idf = 99, ida = 99, lf = last, la = last;
        rf = tw__thrift_read_field(&fast, &tf, &idf, &lf);
        ra = tw__thrift_read_field_any(&any, &ta, &ida, &la);
        wrong += rf != ra || tf != ta || (rf && tf != TW__T_STOP && (idf != ida || lf != la)) ||
                 !same_reader(&fast, &any);
    }
    return wrong;
}

static void test_fast_and_general_reads_agree_on_every_short_input(void)
{
    /* Every input of up to 2 bytes, read from each position, in both
     * protocols (the fast paths only serve compact; binary must be left
     * alone). */
    uint8_t buf[2];
    size_t wrong = 0;
    for (unsigned a = 0; a < 256; a++) {
        buf[0] = (uint8_t)a;
        wrong += compare_at(buf, 1, 0, TW__THRIFT_COMPACT);
        wrong += compare_at(buf, 1, 1, TW__THRIFT_COMPACT);
        for (unsigned b = 0; b < 256; b++) {
            buf[1] = (uint8_t)b;
            for (size_t pos = 0; pos <= 2; pos++) {
                wrong += compare_at(buf, 2, pos, TW__THRIFT_COMPACT);
                wrong += compare_at(buf, 2, pos, TW__THRIFT_BINARY);
            }
        }
    }
    CU_ASSERT_EQUAL(wrong, 0);
}

static void test_fast_and_general_reads_agree_on_random_inputs(void)
{
    /* Inputs of 1..24 bytes weighted towards varint continuation bytes,
     * read at every position and with every length cut. */
    uint64_t x = 0x9e3779b97f4a7c15u;
    uint8_t buf[24];
    size_t wrong = 0;
    for (int round = 0; round < 4000; round++) {
        size_t len = 1 + (size_t)(round % 24);
        for (size_t i = 0; i < len; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint8_t byte = (uint8_t)x;
            buf[i] = (x >> 8) % 3 == 0 ? (uint8_t)(byte | 0x80) : byte;
        }
        for (size_t cut = 1; cut <= len; cut++)
            for (size_t pos = 0; pos < cut; pos++)
                wrong += compare_at(buf, cut, pos, TW__THRIFT_COMPACT);
    }
    CU_ASSERT_EQUAL(wrong, 0);
}

static void test_integer_edges(void)
{
    struct {
        uint8_t bytes[12];
        size_t len;
        int bits;
        bool ok;
        int64_t value;
        const char *why;
    } cases[] = {
        {{0x00}, 1, 32, true, 0, NULL},
        {{0x01}, 1, 32, true, -1, NULL},
        {{0xfe, 0xff, 0xff, 0xff, 0x0f}, 5, 32, true, INT32_MAX, NULL},
        {{0xff, 0xff, 0xff, 0xff, 0x0f}, 5, 32, true, INT32_MIN, NULL},
        {{0x80, 0x80, 0x80, 0x80, 0x10}, 5, 32, false, 0, "i32 varint out of range"},
        {{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 6, 32, false, 0, "varint longer than 5 bytes"},
        {{0xfe, 0xff, 0x03}, 3, 16, true, INT16_MAX, NULL},
        {{0x80, 0x80, 0x04}, 3, 16, false, 0, "i16 varint out of range"},
        {{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
         10,
         64,
         true,
         INT64_MAX,
         NULL},
        {{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00},
         11,
         64,
         false,
         0,
         "varint longer than 10 bytes"},
        {{0x80, 0x80}, 2, 64, false, 0, "the input ends inside a value"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* once at the end of the input, once followed by padding */
        for (size_t pad = 0; pad <= 12; pad += 12) {
            uint8_t buf[24] = {0};
            memcpy(buf, cases[i].bytes, cases[i].len);
            tw__thrift_reader r;
            tw__thrift_reader_init(&r, buf, cases[i].len + pad, TW__THRIFT_COMPACT, 8);
            int64_t v = 42;
            bool ok = tw__thrift_read_int(&r, cases[i].bits, &v);
            if (cases[i].why && strstr(cases[i].why, "ends inside") && pad)
                continue; /* padding completes it */
            CU_ASSERT_EQUAL(ok, cases[i].ok);
            if (ok) {
                CU_ASSERT_EQUAL(v, cases[i].value);
                CU_ASSERT_EQUAL(r.pos, cases[i].len);
            } else {
                CU_ASSERT_PTR_NOT_NULL(strstr(r.why, cases[i].why));
                /* malformed: the value's offset; short: where the bytes end */
                CU_ASSERT_EQUAL(r.err_at, r.state == TW__THRIFT_SHORT ? cases[i].len : 0);
            }
        }
    }
}

static void test_long_field_id_and_strings_at_the_end(void)
{
    /* A field with delta 0 carries its id as an i16 varint (here 300). */
    const uint8_t field[] = {0x08, 0xd8, 0x04};
    tw__thrift_reader r;
    tw__thrift_reader_init(&r, field, sizeof field, TW__THRIFT_COMPACT, 8);
    int t;
    int16_t id = 0, last = 5;
    CU_ASSERT_TRUE(tw__thrift_read_field(&r, &t, &id, &last));
    CU_ASSERT_EQUAL(t, TW__T_STRING);
    CU_ASSERT_EQUAL(id, 300);
    CU_ASSERT_EQUAL(last, 300);
    CU_ASSERT_EQUAL(r.pos, 3);

    /* A string that ends exactly at the end, and one a byte short. */
    const uint8_t str[] = {0x03, 'a', 'b', 'c'};
    const uint8_t *p;
    size_t n;
    tw__thrift_reader_init(&r, str, sizeof str, TW__THRIFT_COMPACT, 8);
    CU_ASSERT_TRUE(tw__thrift_read_bytes(&r, &p, &n));
    CU_ASSERT_EQUAL(n, 3);
    CU_ASSERT(p == str + 1);
    tw__thrift_reader_init(&r, str, sizeof str - 1, TW__THRIFT_COMPACT, 8);
    CU_ASSERT_FALSE(tw__thrift_read_bytes(&r, &p, &n));
    CU_ASSERT_EQUAL(r.state, TW__THRIFT_SHORT);
    CU_ASSERT_EQUAL(r.need, 4);

    /* Once failed, a reader reads nothing more, fast path or not. */
    CU_ASSERT_FALSE(tw__thrift_read_field(&r, &t, &id, &last));
    int64_t v;
    CU_ASSERT_FALSE(tw__thrift_read_int(&r, 32, &v));
    CU_ASSERT_EQUAL(r.state, TW__THRIFT_SHORT);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("wire/thrift_read", NULL, NULL);
    CU_add_test(suite, "fast_and_general_reads_agree_on_every_short_input",
                test_fast_and_general_reads_agree_on_every_short_input);
    CU_add_test(suite, "fast_and_general_reads_agree_on_random_inputs",
                test_fast_and_general_reads_agree_on_random_inputs);
    CU_add_test(suite, "integer_edges", test_integer_edges);
    CU_add_test(suite, "long_field_id_and_strings_at_the_end",
                test_long_field_id_and_strings_at_the_end);
}
