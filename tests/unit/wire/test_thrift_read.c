/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/wire/test_thrift_read.c: suite "wire/thrift_read", the one
 * Thrift reader (sdk/wire/core/thrift.h, thrift_read.c).
 *
 * The reads the decoders make most (field header, integer, string, list of
 * structs) have an
 * inline fast path in the header and a general function (`_any`) that
 * handles every case. The contract tested here: on any bytes, at any
 * position, with any bytes left, both give the same answer: the same
 * value, the same cursor, and on failure the same state, offset, need and
 * reason. The same for skipping, against a reference skip written on the
 * general reads. Plus the protocol facts at the edges (varint lengths,
 * i16/i32 ranges, long field ids, binary lengths, the end of the input).
 */
#include <stdint.h>
#include <stdlib.h>
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

    tw__thrift_reader_init(&fast, data, len, proto, 8);
    tw__thrift_reader_init(&any, data, len, proto, 8);
    fast.pos = any.pos = pos;
    int ef = -9, ea = -9;
    size_t sf = 99, sa = 99;
    rf = tw__thrift_read_list(&fast, &ef, &sf);
    ra = tw__thrift_read_list_any(&any, &ea, &sa);
    wrong += rf != ra || (rf && (ef != ea || sf != sa)) || !same_reader(&fast, &any);
    return wrong;
}

static void test_fast_and_general_reads_agree_on_every_short_input(void)
{
    /* Every input of up to 2 bytes, read from each position, in both
     * protocols. */
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
    for (size_t round = 0; round < tw_test_rounds(4000); round++) {
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

/* List headers of every element type and of sizes around what the bytes
 * left can hold (the fast path takes lists of structs), both protocols,
 * cut at every length. */
static void test_fast_and_general_list_headers_agree(void)
{
    static const int64_t sizes[] = {0, 1, 2, 3, 5, 14, 15, 16, 17, 20, 127, 128, INT32_MAX, -1};
    size_t wrong = 0;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        for (unsigned type = 0; type < 16; type++) {
            uint8_t buf[24];
            memset(buf, 0, sizeof buf);
            /* binary: element type, i32 size big-endian */
            buf[0] = (uint8_t)type;
            uint32_t n = (uint32_t)sizes[k];
            buf[1] = (uint8_t)(n >> 24), buf[2] = (uint8_t)(n >> 16);
            buf[3] = (uint8_t)(n >> 8), buf[4] = (uint8_t)n;
            for (size_t cut = 1; cut <= sizeof buf; cut++)
                wrong += compare_at(buf, cut, 0, TW__THRIFT_BINARY);
            /* compact: size in the high nibble (15: a varint follows) */
            memset(buf, 0, sizeof buf);
            if (sizes[k] >= 0 && sizes[k] < 15) {
                buf[0] = (uint8_t)(sizes[k] << 4 | type);
            } else {
                buf[0] = (uint8_t)(0xf0 | type);
                buf[1] = (uint8_t)(n | 0x80), buf[2] = (uint8_t)(n >> 7 | 0x80);
                buf[3] = (uint8_t)(n >> 14 | 0x80), buf[4] = (uint8_t)(n >> 21 | 0x80);
                buf[5] = (uint8_t)(n >> 28);
            }
            for (size_t cut = 1; cut <= sizeof buf; cut++)
                wrong += compare_at(buf, cut, 0, TW__THRIFT_COMPACT);
        }
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

static void test_fast_and_general_reads_agree_on_random_binary_inputs(void)
{
    /* Binary: bytes weighted towards what its fast paths look at (type
     * bytes, zero and 0x7f/0x80/0xff length bytes), read at every position
     * and with every length cut. */
    uint64_t x = 0x2545f4914f6cdd1du;
    uint8_t buf[24];
    size_t wrong = 0;
    static const uint8_t edge[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0x0b, 0x0a, 0x0c};
    for (size_t round = 0; round < tw_test_rounds(4000); round++) {
        size_t len = 1 + (size_t)(round % 24);
        for (size_t i = 0; i < len; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            unsigned pick = (unsigned)(x >> 8) % 4;
            buf[i] = pick == 0   ? (uint8_t)x
                     : pick == 1 ? (uint8_t)((x >> 16) % 17) /* a type id, or 16 */
                                 : edge[(x >> 20) % sizeof edge];
        }
        for (size_t cut = 1; cut <= len; cut++)
            for (size_t pos = 0; pos < cut; pos++)
                wrong += compare_at(buf, cut, pos, TW__THRIFT_BINARY);
    }
    CU_ASSERT_EQUAL(wrong, 0);
}

/* ---- skipping: tw__thrift_skip against a reference built on the general reads ---- */

static size_t ref_fixed_size(const tw__thrift_reader *r, int t)
{
    if (t == TW__T_DOUBLE)
        return 8;
    if (r->proto == TW__THRIFT_COMPACT)
        return t == TW__T_BYTE ? 1 : 0;
    switch (t) {
    case TW__T_BOOL:
    case TW__T_BYTE:
        return 1;
    case TW__T_I16:
        return 2;
    case TW__T_I32:
        return 4;
    case TW__T_I64:
        return 8;
    default:
        return 0;
    }
}

/* The skip as the protocol describes it, one value at a time through the
 * general (_any) reads: the reference of the reader's skip, whose struct
 * and list loops take the inline fast paths. */
static bool ref_skip(tw__thrift_reader *r, int t, int depth)
{
    if (depth > r->max_depth)
        return tw__thrift_fail(r, TW__THRIFT_MALFORMED, r->pos, "nested deeper than %d levels",
                               r->max_depth);
    size_t fixed = ref_fixed_size(r, t);
    if (fixed && t != TW__T_BOOL)
        return tw__thrift_need(r, fixed) && (r->pos += fixed, true);
    int64_t i;
    bool b;
    const uint8_t *p;
    size_t n = 0;
    switch (t) {
    case TW__T_BOOL:
        return tw__thrift_read_bool(r, &b);
    case TW__T_I16:
    case TW__T_I32:
    case TW__T_I64:
        return tw__thrift_read_int_any(r, t == TW__T_I16 ? 16 : t == TW__T_I32 ? 32 : 64, &i);
    case TW__T_STRING:
        return tw__thrift_read_bytes_any(r, &p, &n);
    case TW__T_STRUCT: {
        int16_t last = 0;
        for (;;) {
            int ft;
            int16_t id;
            if (!tw__thrift_read_field_any(r, &ft, &id, &last))
                return false;
            if (ft == TW__T_STOP)
                return true;
            bool ok;
            if (ft == TW__T_BOOL && r->proto == TW__THRIFT_COMPACT && depth < r->max_depth)
                ok = (r->pending_bool = -1, true);
            else
                ok = ref_skip(r, ft, depth + 1);
            if (!ok)
                return false;
        }
    }
    case TW__T_LIST:
    case TW__T_SET: {
        int et;
        if (!tw__thrift_read_list(r, &et, &n))
            return false;
        size_t each = ref_fixed_size(r, et);
        if (each && et != TW__T_BOOL) {
            r->pos += n * each;
            return true;
        }
        for (size_t k = 0; k < n; k++) {
            r->pending_bool = -1;
            if (!ref_skip(r, et, depth + 1))
                return false;
        }
        return true;
    }
    case TW__T_MAP: {
        int kt, vt;
        if (!tw__thrift_read_map(r, &kt, &vt, &n))
            return false;
        for (size_t k = 0; k < n; k++) {
            r->pending_bool = -1;
            if (!ref_skip(r, kt, depth + 1))
                return false;
            r->pending_bool = -1;
            if (!ref_skip(r, vt, depth + 1))
                return false;
        }
        return true;
    }
    default:
        return tw__thrift_fail(r, TW__THRIFT_MALFORMED, r->pos, "unknown type %d", t);
    }
}

typedef struct gen {
    uint64_t x;
    uint8_t *buf;
    size_t len, cap;
} gen;

static uint64_t gen_next(gen *g)
{
    g->x ^= g->x << 13, g->x ^= g->x >> 7, g->x ^= g->x << 17;
    return g->x;
}

static void gen_byte(gen *g, uint8_t b)
{
    if (g->len < g->cap)
        g->buf[g->len++] = b;
}

static void gen_be(gen *g, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--)
        gen_byte(g, (uint8_t)(v >> (8 * i)));
}

/* A binary-protocol value of type @t, now and then with a wrong byte
 * (an unknown type, a negative or too long length). */
static void gen_binary(gen *g, int t, int depth)
{
    static const int types[] = {TW__T_BOOL, TW__T_BYTE, TW__T_DOUBLE, TW__T_I16,
                                TW__T_I32,  TW__T_I64,  TW__T_STRING, TW__T_STRUCT,
                                TW__T_MAP,  TW__T_SET,  TW__T_LIST};
    uint64_t r = gen_next(g);
    if (r % 97 == 0) { /* a wrong byte where the value starts */
        gen_byte(g, (uint8_t)(r >> 8));
        return;
    }
    size_t n;
    switch (t) {
    case TW__T_BOOL:
    case TW__T_BYTE:
        gen_byte(g, (uint8_t)(r >> 8));
        break;
    case TW__T_I16:
        gen_be(g, r >> 8, 2);
        break;
    case TW__T_I32:
        gen_be(g, r >> 8, 4);
        break;
    case TW__T_DOUBLE:
    case TW__T_I64:
        gen_be(g, r >> 8, 8);
        break;
    case TW__T_STRING:
        n = (r >> 8) % 6;
        gen_be(g, r % 53 == 0 ? 0x80000001u : r % 59 == 0 ? n + 3 : n, 4);
        for (size_t i = 0; i < n; i++)
            gen_byte(g, (uint8_t)(r >> (16 + i)));
        break;
    case TW__T_STRUCT:
        for (n = (r >> 8) % (depth > 3 ? 2 : 5); n > 0; n--) {
            int ft = types[gen_next(g) % (sizeof types / sizeof types[0])];
            gen_byte(g, (uint8_t)ft);
            gen_be(g, gen_next(g) % 20, 2);
            gen_binary(g, depth > 5 ? TW__T_I32 : ft, depth + 1);
        }
        gen_byte(g, 0);
        break;
    case TW__T_MAP: {
        int kt = types[(r >> 8) % 7], vt = types[(r >> 12) % 11];
        n = (r >> 16) % 3;
        gen_byte(g, (uint8_t)kt);
        gen_byte(g, (uint8_t)vt);
        gen_be(g, n, 4);
        for (size_t i = 0; i < n; i++) {
            gen_binary(g, kt, depth + 1);
            gen_binary(g, depth > 5 ? TW__T_I32 : vt, depth + 1);
        }
        break;
    }
    default: { /* list, set */
        int et = (r >> 8) % 3 == 0 ? TW__T_STRUCT : types[(r >> 12) % 11];
        n = (r >> 16) % 4;
        gen_byte(g, (uint8_t)et);
        gen_be(g, n, 4);
        for (size_t i = 0; i < n; i++)
            gen_binary(g, depth > 5 ? TW__T_I32 : et, depth + 1);
        break;
    }
    }
}

static size_t compare_skip(const uint8_t *data, size_t len, tw__thrift_protocol proto,
                           int max_depth)
{
    size_t wrong = 0;
    static const int types[] = {TW__T_STRUCT, TW__T_LIST, TW__T_MAP,
                                TW__T_STRING, TW__T_I64,  TW__T_BOOL};
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        tw__thrift_reader a, b;
        tw__thrift_reader_init(&a, data, len, proto, max_depth);
        tw__thrift_reader_init(&b, data, len, proto, max_depth);
        bool ra = tw__thrift_skip(&a, types[k], 1);
        bool rb = ref_skip(&b, types[k], 1);
        wrong += ra != rb || !same_reader(&a, &b);
    }
    return wrong;
}

static void test_skip_agrees_with_the_reference_on_random_structs(void)
{
    /* Random binary structs (some with a wrong byte), skipped whole and
     * cut at every length, with nesting limits that they reach; and
     * random bytes in the compact protocol. */
    gen g = {.x = 0x9e3779b97f4a7c15u, .cap = 4096};
    g.buf = calloc(g.cap, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g.buf);
    size_t wrong = 0, whole = 0, rounds = tw_test_rounds(600);
    for (size_t round = 0; round < rounds; round++) {
        g.len = 0;
        gen_binary(&g, TW__T_STRUCT, 0);
        int max_depth = 2 + round % 5;
        tw__thrift_reader r;
        tw__thrift_reader_init(&r, g.buf, g.len, TW__THRIFT_BINARY, max_depth);
        whole += tw__thrift_skip(&r, TW__T_STRUCT, 1) && r.pos == g.len;
        for (size_t cut = 0; cut <= g.len; cut++) {
            wrong += compare_skip(g.buf, cut, TW__THRIFT_BINARY, max_depth);
            if (round % 4 == 0 && cut < 40)
                wrong += compare_skip(g.buf, cut, TW__THRIFT_COMPACT, max_depth);
        }
    }
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT(whole > rounds / 6); /* the generator makes sound structs too */
    free(g.buf);
}

static void test_binary_edges(void)
{
    tw__thrift_reader r;
    const uint8_t *p;
    size_t n;
    int t;
    int16_t id, last = 0;
    int64_t v;

    /* A string whose length is negative is malformed, at the length. */
    const uint8_t neg[] = {0x80, 0x00, 0x00, 0x00, 'a'};
    tw__thrift_reader_init(&r, neg, sizeof neg, TW__THRIFT_BINARY, 8);
    CU_ASSERT_FALSE(tw__thrift_read_bytes(&r, &p, &n));
    CU_ASSERT_EQUAL(r.state, TW__THRIFT_MALFORMED);
    CU_ASSERT_EQUAL(r.err_at, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.why, "negative length"));

    /* One that ends exactly at the end, and one a byte short of it. */
    const uint8_t str[] = {0x00, 0x00, 0x00, 0x02, 'h', 'i'};
    tw__thrift_reader_init(&r, str, sizeof str, TW__THRIFT_BINARY, 8);
    CU_ASSERT_TRUE(tw__thrift_read_bytes(&r, &p, &n));
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT(p == str + 4);
    CU_ASSERT_EQUAL(r.pos, 6);
    tw__thrift_reader_init(&r, str, sizeof str - 1, TW__THRIFT_BINARY, 8);
    CU_ASSERT_FALSE(tw__thrift_read_bytes(&r, &p, &n));
    CU_ASSERT_EQUAL(r.state, TW__THRIFT_SHORT);
    CU_ASSERT_EQUAL(r.need, 6);

    /* A field header cut after its type byte is short; an unknown type
     * byte is malformed; the stop byte needs no id. */
    const uint8_t field[] = {0x0a, 0x00};
    tw__thrift_reader_init(&r, field, sizeof field, TW__THRIFT_BINARY, 8);
    CU_ASSERT_FALSE(tw__thrift_read_field(&r, &t, &id, &last));
    CU_ASSERT_EQUAL(r.state, TW__THRIFT_SHORT);
    CU_ASSERT_EQUAL(r.need, 3);
    const uint8_t bad[] = {0x05, 0x00, 0x01};
    tw__thrift_reader_init(&r, bad, sizeof bad, TW__THRIFT_BINARY, 8);
    CU_ASSERT_FALSE(tw__thrift_read_field(&r, &t, &id, &last));
    CU_ASSERT_EQUAL(r.state, TW__THRIFT_MALFORMED);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.why, "unknown field type 5"));
    const uint8_t stop[] = {0x00};
    tw__thrift_reader_init(&r, stop, sizeof stop, TW__THRIFT_BINARY, 8);
    CU_ASSERT_TRUE(tw__thrift_read_field(&r, &t, &id, &last));
    CU_ASSERT_EQUAL(t, TW__T_STOP);
    CU_ASSERT_EQUAL(r.pos, 1);

    /* Integers are big-endian and signed. */
    const uint8_t ints[] = {0xff, 0xfe, 0x80, 0x00, 0x00, 0x00, 0x01,
                            0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
    tw__thrift_reader_init(&r, ints, sizeof ints, TW__THRIFT_BINARY, 8);
    CU_ASSERT_TRUE(tw__thrift_read_int(&r, 16, &v));
    CU_ASSERT_EQUAL(v, -2);
    CU_ASSERT_TRUE(tw__thrift_read_int(&r, 32, &v));
    CU_ASSERT_EQUAL(v, INT32_MIN);
    CU_ASSERT_TRUE(tw__thrift_read_int(&r, 64, &v));
    CU_ASSERT_EQUAL(v, 0x0102030405060708);
    CU_ASSERT_FALSE(tw__thrift_read_int(&r, 16, &v));
    CU_ASSERT_EQUAL(r.state, TW__THRIFT_SHORT);
}

/* tw__thrift__load_be takes n = 2, 4 or 8 (its assert refuses others):
 * each reads exactly n bytes, big-endian, so a value at the very end of a
 * heap block of n bytes is read whole and nothing past it (valgrind and
 * the sanitizers watch the block's end). */
static void test_load_be_reads_exactly_n_bytes(void)
{
    static const uint8_t be[8] = {0x81, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0xf8};
    const size_t sizes[] = {2, 4, 8};
    const uint64_t want[] = {0x8102, 0x81020304, 0x81020304050607f8};
    for (size_t i = 0; i < 3; i++) {
        uint8_t *p = malloc(sizes[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        memcpy(p, be, sizes[i]);
        CU_ASSERT_EQUAL(tw__thrift__load_be(p, sizes[i]), want[i]);
        free(p);
    }
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("wire/thrift_read", NULL, NULL);
    CU_add_test(suite, "fast_and_general_reads_agree_on_every_short_input",
                test_fast_and_general_reads_agree_on_every_short_input);
    CU_add_test(suite, "fast_and_general_reads_agree_on_random_inputs",
                test_fast_and_general_reads_agree_on_random_inputs);
    CU_add_test(suite, "fast_and_general_reads_agree_on_random_binary_inputs",
                test_fast_and_general_reads_agree_on_random_binary_inputs);
    CU_add_test(suite, "fast_and_general_list_headers_agree",
                test_fast_and_general_list_headers_agree);
    CU_add_test(suite, "skip_agrees_with_the_reference_on_random_structs",
                test_skip_agrees_with_the_reference_on_random_structs);
    CU_add_test(suite, "integer_edges", test_integer_edges);
    CU_add_test(suite, "binary_edges", test_binary_edges);
    CU_add_test(suite, "load_be_reads_exactly_n_bytes", test_load_be_reads_exactly_n_bytes);
    CU_add_test(suite, "long_field_id_and_strings_at_the_end",
                test_long_field_id_and_strings_at_the_end);
}
