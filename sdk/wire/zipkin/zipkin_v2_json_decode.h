/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/zipkin/zipkin_v2_json_decode.h: the Zipkin v2 JSON decoder's rules
 * for one span object, for the decoders of other Zipkin v2 encodings: the
 * proto3 reader (wire/zipkin/zipkin_proto_read.c) rewrites each span into
 * the JSON object these rules read, so that both encodings read alike. The
 * decoder itself is tw__zipkin_v2_json_decoder (wire/formats.h).
 *
 * Locking: none (the caller's thread).
 */
#ifndef TW_WIRE_ZIPKIN_ZIPKIN_V2_JSON_DECODE_H
#define TW_WIRE_ZIPKIN_ZIPKIN_V2_JSON_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "wire/core/input.h"

/* Decodes the Zipkin v2 span object @obj: the span goes to in->emit (after
 * tw__wire_admit_span), or @raw is rejected with the reason. Times are µs
 * and ids hex whatever the options say. False when the run must stop;
 * *is_nomem on allocation failure. */
bool tw__zipkin_v2_emit_object(tw__wire_input *in, size_t line_no, const json_t *obj,
                               const void *raw, size_t raw_len, bool *is_nomem);

/* Eight hex digits of either case at @p into *v (the first digit the
 * highest), eight bytes at a time: false when any byte is not a hex digit.
 * Each byte b < 0x80 is a digit when b - '0' < 10 and a letter when
 * (b | 0x20) - 'a' < 6, both tested on all bytes at once with additions
 * that cannot carry across bytes (b + 0x50 <= 0xcf, b + 0x46 <= 0xc5);
 * a digit's value is its low nibble, a letter's that plus 9. The nibbles
 * are then gathered pairwise into bytes, words and the result. */
static inline bool tw__zipkin_hex8(const char *p, uint32_t *v)
{
    const uint64_t ones = UINT64_C(0x0101010101010101), highs = ones * 0x80;
    uint64_t x;
    memcpy(&x, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    x = __builtin_bswap64(x);
#endif
    uint64_t y = x | ones * 0x20;
    uint64_t digit = (x + ones * (0x80 - '0')) & ~(x + ones * (0x7f - '9'));
    uint64_t letter = (y + ones * (0x80 - 'a')) & ~(y + ones * (0x7f - 'f'));
    if ((x & highs) || ((digit | letter) & highs) != highs)
        return false;
    uint64_t n = (x & ones * 0x0f) + ((letter & highs) >> 7) * 9;
    n = ((n << 4) | (n >> 8)) & UINT64_C(0x00ff00ff00ff00ff);
    n = ((n << 8) | (n >> 16)) & UINT64_C(0x0000ffff0000ffff);
    *v = (uint32_t)((n << 16) | (n >> 32));
    return true;
}

/* Sixteen hex digits: the ids Zipkin writes (16 or 32 digits), the
 * decoder's fast path in front of tw__parse_trace_id / tw__parse_span_id.
 * Same value as tw__parse_hex for the same text; false for anything but
 * hex digits, which the general parser then explains. Here, not in the
 * .c, so that tests and the fuzz target hold it to tw__parse_hex. */
static inline bool tw__zipkin_hex16(const char *p, uint64_t *v)
{
    uint32_t hi, lo;
    if (!tw__zipkin_hex8(p, &hi) || !tw__zipkin_hex8(p + 8, &lo))
        return false;
    *v = (uint64_t)hi << 32 | lo;
    return true;
}

#endif /* TW_WIRE_ZIPKIN_ZIPKIN_V2_JSON_DECODE_H */
