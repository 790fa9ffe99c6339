/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/json_unescape.h: the one reader of a JSON string's escape
 * sequences, shared by the token scanner (wire/core/json_scan.c) and the
 * schema-directed readers (wire/core/json_direct.h), so that both read
 * escapes exactly as Jansson does (load.c): the eight short escapes and
 * \uXXXX in either case, a surrogate only as a high-low pair.
 *
 * No state, no locks: any thread.
 */
#ifndef TW_WIRE_CORE_JSON_UNESCAPE_H
#define TW_WIRE_CORE_JSON_UNESCAPE_H

#include <stdint.h>

#include "wire/core/hex.h"

/* Four hex digits of either case at @p (the caller checked that four bytes
 * are there): their value, or -1 when one is not a hex digit. */
static inline int32_t tw__json_hex4(const unsigned char *p)
{
    int32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int8_t d = tw__hex_value[p[i]];
        if (d < 0)
            return -1;
        v = v << 4 | (d & 0xf);
    }
    return v;
}

/* The escape sequence at *pp (its backslash; *pp < e), written as UTF-8 at
 * *op: at most 4 bytes, never more than the sequence's own length (2, 6 or
 * 12 bytes), so unescaping in place or into room the size of the source
 * is safe. Advances *pp past the sequence and *op past what it wrote.
 * Returns the code point (0 for \u0000, which is written as one NUL byte:
 * callers that keep C strings refuse it), or -1 when the sequence is not
 * one Jansson reads (unknown escape, a bad hex digit, a lone or unpaired
 * surrogate, a text cut inside it); then *pp and *op are unchanged. */
static inline int32_t tw__json_unescape(const unsigned char **pp, const unsigned char *e, char **op)
{
    const unsigned char *p = *pp;
    char *o = *op;
    if (e - p < 2)
        return -1;
    int32_t cp;
    switch (p[1]) {
    case '"':
    case '\\':
    case '/':
        cp = p[1];
        break;
    case 'b':
        cp = '\b';
        break;
    case 'f':
        cp = '\f';
        break;
    case 'n':
        cp = '\n';
        break;
    case 'r':
        cp = '\r';
        break;
    case 't':
        cp = '\t';
        break;
    case 'u':
        if (e - p < 6 || (cp = tw__json_hex4(p + 2)) < 0 || (cp >= 0xdc00 && cp <= 0xdfff))
            return -1;
        if (cp >= 0xd800 && cp <= 0xdbff) {
            if (e - p < 12 || p[6] != '\\' || p[7] != 'u')
                return -1;
            int32_t low = tw__json_hex4(p + 8);
            if (low < 0xdc00 || low > 0xdfff)
                return -1;
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
            p += 6;
        }
        p += 4;
        break;
    default:
        return -1;
    }
    p += 2;
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xc0 | cp >> 6);
        *o++ = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xe0 | cp >> 12);
        *o++ = (char)(0x80 | (cp >> 6 & 0x3f));
        *o++ = (char)(0x80 | (cp & 0x3f));
    } else {
        *o++ = (char)(0xf0 | cp >> 18);
        *o++ = (char)(0x80 | (cp >> 12 & 0x3f));
        *o++ = (char)(0x80 | (cp >> 6 & 0x3f));
        *o++ = (char)(0x80 | (cp & 0x3f));
    }
    *pp = p;
    *op = o;
    return cp;
}

#endif /* TW_WIRE_CORE_JSON_UNESCAPE_H */
