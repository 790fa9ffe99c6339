/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_hex.c: libFuzzer target for the hex id codec
 * (wire/core/hex.[ch]) and the JSON integer writer (wire/core/json_write.c),
 * differential: tw__parse_hex, whose ids of 8/16/24/32 digits take an
 * eight-digits-per-word path, must return what a byte-by-byte table
 * parser returns (error, bad index, value) in every mode; an id written
 * by tw__hex_u64 must read back; integers must be written as printf
 * writes them. Input: byte 0 picks the mode (bit 0: at most 32 digits,
 * else 16; bit 1: lower case only), the rest is the text, copied to a heap
 * block of its exact length so that ASan sees a read past it. Built and
 * run by tests/fuzz/run_fuzz.sh.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/core/buf.h"
#include "wire/core/hex.h"
#include "wire/core/json_write.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The parser as a table lookup per digit, the first refused one located. */
static tw__hex_error parse_reference(const char *s, size_t n, size_t max_digits, bool lower_only,
                                     uint64_t *hi, uint64_t *lo, size_t *bad_at)
{
    if (n == 0)
        return TW__HEX_EMPTY;
    if (n > max_digits)
        return TW__HEX_TOO_LONG;
    uint64_t h = 0, l = 0;
    for (size_t i = 0; i < n; i++) {
        int v = tw__hex_value[(unsigned char)s[i]];
        if (v < 0 || (lower_only && (v & 0x10))) {
            *bad_at = i;
            return v < 0 ? TW__HEX_BAD_DIGIT : TW__HEX_UPPER;
        }
        if (n - i > 16)
            h = (h << 4) | (uint64_t)(v & 0xf);
        else
            l = (l << 4) | (uint64_t)(v & 0xf);
    }
    *hi = h;
    *lo = l;
    return TW__HEX_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t max_digits = data[0] & 1 ? 32 : 16;
    bool lower_only = data[0] & 2;
    size_t n = size - 1;
    char *s = malloc(n ? n : 1);
    if (!s)
        return 0;
    if (n)
        memcpy(s, data + 1, n);

    uint64_t hi[2] = {7, 7}, lo[2] = {7, 7};
    size_t bad[2] = {99, 99};
    tw__hex_error e0 = tw__parse_hex(s, n, max_digits, lower_only, &hi[0], &lo[0], &bad[0]);
    tw__hex_error e1 = parse_reference(s, n, max_digits, lower_only, &hi[1], &lo[1], &bad[1]);
    if (e0 != e1 || hi[0] != hi[1] || lo[0] != lo[1] || bad[0] != bad[1])
        abort();

    /* The first 8 bytes as a number: its hex reads back, its decimal is printf's. */
    uint64_t v = 0;
    memcpy(&v, s, n < 8 ? n : 8);
    char text[17];
    tw__hex_u64(text, v);
    uint64_t back_hi = 1, back = 0;
    if (tw__parse_hex(text, 16, 16, true, &back_hi, &back, NULL) != TW__HEX_OK || back != v ||
        back_hi != 0)
        abort();
    tw__buf out = {0};
    char expect[48];
    int len = snprintf(expect, sizeof expect, "%" PRId64 "\"%" PRIu64 "\"", (int64_t)v, v);
    if (!tw__json_put_int(&out, (int64_t)v) || !tw__json_put_quoted_uint(&out, v) ||
        out.len != (size_t)len || memcmp(out.data, expect, out.len) != 0)
        abort();
    tw__buf_free(&out);
    free(s);
    return 0;
}
