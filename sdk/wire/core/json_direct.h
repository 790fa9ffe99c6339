/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/json_direct.h: inline primitives for schema-directed JSON
 * readers: decoders that know the exact text a writer produces for a
 * record (its keys in order, no blanks) and read it straight from the
 * input instead of scanning it into tokens first (the Dapper log's direct
 * decoder, wire/dapper/dapper_log_direct.c; the Zipkin v2 JSON one, which
 * takes keys in any order and blanks, wire/zipkin/zipkin_v2_json_direct.c).
 *
 * Contract: every primitive reads only c->p .. c->e - 1 and either
 * consumes what it recognises and returns true, or returns false. A false
 * means "not the shape this reader handles" (the text may still be valid
 * JSON): the caller then gives the whole text to a general parser. What a
 * primitive accepts, it reads with Jansson's values (json_loadb with
 * JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, as wire/core/json_scan.h does):
 *   - strings: valid UTF-8 (utf8.h, as Jansson's utf.c), no raw byte below
 *     0x20, the eight short escapes and \uXXXX (a surrogate only as a
 *     high-low pair); \u0000 is declined (callers keep C strings). Plain
 *     runs are scanned 16 bytes at a time with SSE2 where the target has
 *     it (x86-64), else 8 at a time (SWAR);
 *   - integers: -?(0|[1-9][0-9]*) within strtoll's range (Jansson fails
 *     beyond it; declined);
 *   - reals: as strtod reads them (Jansson's reading), the simple ones
 *     without calling it; longer than 63 bytes they are declined;
 *   - hex ids: 1..max digits of either case, as wire/core/hex.h reads them
 *     (tw__jd_hex16: exactly sixteen, with SSE2 where there is SSE2).
 *
 * No state, no locks: any thread.
 */
#ifndef TW_WIRE_CORE_JSON_DIRECT_H
#define TW_WIRE_CORE_JSON_DIRECT_H

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "wire/core/hex.h"
#include "wire/core/json_unescape.h"
#include "wire/core/json_write.h" /* the SWAR masks and digit helpers, tw__json_plain_run */
#include "wire/core/utf8.h"

/* A read position in a text. */
typedef struct tw__jd {
    const char *p; /* next byte */
    const char *e; /* end of the text */
} tw__jd;

/* Room for the strings that had escapes (their unescaped bytes, each
 * followed by a NUL): the caller's buffer, never grown, so the pointers
 * handed out stay valid while the record is built. */
typedef struct tw__jd_scratch {
    char *buf;
    size_t used, cap;
} tw__jd_scratch;

/* Whether the @n bytes at @p are those of @lit: with @n and @lit constant
 * (TW__JD_LIT), a few word compares (libc's memcmp is not inlined). */
static inline __attribute__((always_inline)) bool tw__jd_same(const char *p, const char *lit,
                                                              size_t n)
{
    uint64_t a, b, diff = 0;
    if (n >= 8) {
        size_t i = 0;
        for (; i + 8 <= n; i += 8) {
            memcpy(&a, p + i, 8);
            memcpy(&b, lit + i, 8);
            diff |= a ^ b;
        }
        if (i < n) { /* the last eight bytes, overlapping */
            memcpy(&a, p + n - 8, 8);
            memcpy(&b, lit + n - 8, 8);
            diff |= a ^ b;
        }
        return diff == 0;
    }
    if (n >= 4) {
        uint32_t x, y, z, w;
        memcpy(&x, p, 4);
        memcpy(&y, lit, 4);
        memcpy(&z, p + n - 4, 4);
        memcpy(&w, lit + n - 4, 4);
        return ((x ^ y) | (z ^ w)) == 0;
    }
    if (n >= 2) {
        uint16_t x, y, z, w;
        memcpy(&x, p, 2);
        memcpy(&y, lit, 2);
        memcpy(&z, p + n - 2, 2);
        memcpy(&w, lit + n - 2, 2);
        return ((x ^ y) | (z ^ w)) == 0;
    }
    return n == 0 || *p == *lit;
}

/* Consumes the @n bytes of @lit when the text continues with them. */
static inline __attribute__((always_inline)) bool tw__jd_lit(tw__jd *c, const char *lit, size_t n)
{
    if ((size_t)(c->e - c->p) < n || !tw__jd_same(c->p, lit, n))
        return false;
    c->p += n;
    return true;
}
#define TW__JD_LIT(c, lit) tw__jd_lit((c), (lit), sizeof(lit) - 1)

/* Consumes one byte @b when it is next. */
static inline bool tw__jd_byte(tw__jd *c, char b)
{
    if (c->p == c->e || *c->p != b)
        return false;
    c->p++;
    return true;
}

/* The string whose content starts at @start (just after its opening quote)
 * and whose first escape is at c->p, unescaped into @sc. */
/* Out of line and cold: the plain scan below stays small (few registers
 * to save) for the common string, which has no escape. */
static __attribute__((noinline, cold, unused)) bool
tw__jd_unescape(tw__jd *c, tw__jd_scratch *sc, const char *start, const char **s, size_t *len)
{
    const char *p = start;
    const char *e = c->e;
    /* Unescaped text is never longer than its source (a \uXXXX gives at
     * most 3 bytes, a pair 4 for 12): the source up to the closing quote
     * (the first one not after a backslash) bounds the room it needs. */
    const char *q = start;
    while (q < e && *q != '"')
        q += *q == '\\' ? 2 : 1;
    if (q >= e || sc->cap - sc->used < (size_t)(q - start) + 1)
        return false;
    char *o = sc->buf + sc->used;
    char *out = o;
    for (;;) {
        size_t run = tw__json_plain_run((const unsigned char *)p, (size_t)(e - p));
        memcpy(o, p, run);
        o += run;
        p += run;
        if (p == e)
            return false;
        unsigned char b = (unsigned char)*p;
        if (b == '"')
            break;
        if (b >= 0x80) {
            size_t n = tw__utf8_sequence((const unsigned char *)p, (size_t)(e - p));
            if (n == 0)
                return false;
            memcpy(o, p, n);
            o += n;
            p += n;
            continue;
        }
        if (b != '\\')
            return false; /* a raw control byte */
        /* \u0000 (0) is declined: callers keep C strings. */
        const unsigned char *u = (const unsigned char *)p;
        if (tw__json_unescape(&u, (const unsigned char *)e, &o) <= 0)
            return false;
        p = (const char *)u;
    }
    *o = '\0';
    *s = out;
    *len = (size_t)(o - out);
    sc->used += *len + 1;
    c->p = p + 1;
    return true;
}

/* The plain run at @p: up to the first byte that needs a look ('"', '\\',
 * a control byte, a non-ASCII one) or @e. Sixteen bytes at a time with
 * SSE2 (x86-64's baseline: a signed compare with 0x20 finds the control
 * and the non-ASCII bytes at once), else eight at a time
 * (tw__json_special_mask: its lowest set bit is exact); the bytes left at
 * the end one by one. */
static inline __attribute__((always_inline)) const char *tw__jd_run(const char *p, const char *e)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x20);
    while (e - p >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i stop =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
                         _mm_cmplt_epi8(x, space));
        unsigned m = (unsigned)_mm_movemask_epi8(stop);
        if (m)
            return p + __builtin_ctz(m);
        p += 16;
    }
#endif
#ifdef TW__JSON_SWAR
    while (e - p >= 8) {
        uint64_t x;
        memcpy(&x, p, 8);
        uint64_t m = tw__json_special_mask(x);
        if (m)
            return p + ((size_t)__builtin_ctzll(m) >> 3);
        p += 8;
    }
#endif
    while (p < e && !tw__json_is_special((unsigned char)*p))
        p++;
    return p;
}

/* The rest of a string that is not one plain run (tw__jd_string): @p is at
 * its first byte that needs a look. Out of line and cold, so that the
 * plain scan stays small and saves few registers. */
static __attribute__((noinline, cold, unused)) bool
tw__jd_string_rest(tw__jd *c, tw__jd_scratch *sc, const char *start, const char *p, const char **s,
                   size_t *len)
{
    const char *e = c->e;
    for (;;) {
        if (p == e)
            return false;
        unsigned char b = (unsigned char)*p;
        if (b == '"')
            break;
        if (b >= 0x80) {
            size_t n = tw__utf8_sequence((const unsigned char *)p, (size_t)(e - p));
            if (n == 0)
                return false;
            p = tw__jd_run(p + n, e);
            continue;
        }
        if (b != '\\')
            return false; /* a raw control byte */
        c->p = p;
        return tw__jd_unescape(c, sc, start, s, len);
    }
    *s = start;
    *len = (size_t)(p - start);
    c->p = p + 1;
    return true;
}

/* A string's content, c->p just after its opening quote; consumes the
 * closing quote. Plain strings (the common case) are handed out in place
 * (@len bytes, not NUL-terminated: the closing quote follows); strings
 * with escapes are unescaped into @sc (NUL-terminated). */
static inline __attribute__((always_inline)) bool tw__jd_string(tw__jd *c, tw__jd_scratch *sc,
                                                                const char **s, size_t *len)
{
    const char *start = c->p;
    const char *p = tw__jd_run(start, c->e);
    if (p == c->e || *p != '"')
        return tw__jd_string_rest(c, sc, start, p, s, len);
    *s = start;
    *len = (size_t)(p - start);
    c->p = p + 1;
    return true;
}

#ifdef __SIZEOF_INT128__
/* @mant / 10^@frac (mant not 0, frac 1..19) correctly rounded to a double
 * (to nearest, ties to even: what strtod gives), in integer arithmetic:
 * q = floor(mant * 2^k / 10^frac) is taken with 55 bits or more, so its
 * bits beyond the 53 kept, with the division's remainder as a sticky bit,
 * decide the rounding exactly. The result, m * 2^e with e in -120..8, is a
 * normal double: the product is exact. */
static inline double tw__jd_decimal(uint64_t mant, unsigned frac)
{
    static const uint64_t pow10[20] = {UINT64_C(1),
                                       UINT64_C(10),
                                       UINT64_C(100),
                                       UINT64_C(1000),
                                       UINT64_C(10000),
                                       UINT64_C(100000),
                                       UINT64_C(1000000),
                                       UINT64_C(10000000),
                                       UINT64_C(100000000),
                                       UINT64_C(1000000000),
                                       UINT64_C(10000000000),
                                       UINT64_C(100000000000),
                                       UINT64_C(1000000000000),
                                       UINT64_C(10000000000000),
                                       UINT64_C(100000000000000),
                                       UINT64_C(1000000000000000),
                                       UINT64_C(10000000000000000),
                                       UINT64_C(100000000000000000),
                                       UINT64_C(1000000000000000000),
                                       UINT64_C(10000000000000000000)};
    __extension__ typedef unsigned __int128 u128;
    uint64_t d = pow10[frac];
    int bits_mant = 64 - __builtin_clzll(mant), bits_d = 64 - __builtin_clzll(d);
    /* bits(mant << k) = 55 + bits(d) <= 119: q has 55 or 56 bits (more,
     * at most 61, when k would be negative and is 0). */
    int k = 55 + bits_d - bits_mant;
    if (k < 0)
        k = 0;
    u128 n = (u128)mant << k;
    uint64_t q = (uint64_t)(n / d);
    bool is_inexact = (uint64_t)(n % d) != 0;
    int s = (64 - __builtin_clzll(q)) - 53; /* 2..8 bits below the kept ones */
    uint64_t m = q >> s;
    uint64_t rest = q & ((UINT64_C(1) << s) - 1), half = UINT64_C(1) << (s - 1);
    if (rest > half || (rest == half && (is_inexact || (m & 1))))
        m++;
    int e = s - k;
    if (m == UINT64_C(1) << 53) {
        m >>= 1;
        e++;
    }
    uint64_t scale_bits = (uint64_t)(1023 + e) << 52;
    double scale;
    memcpy(&scale, &scale_bits, sizeof scale);
    return (double)m * scale;
}
#endif

/* A JSON number at c->p as Jansson reads it (load.c, lex_scan_number):
 * -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?. Without '.', 'e' or 'E'
 * it is an integer (json_integer): *is_real false, *i its value, declined
 * beyond strtoll's range (Jansson: "too big integer"). Otherwise a real
 * (json_real): *is_real true, *d as strtod reads the text (Jansson's
 * reading, with '.' as the locale's decimal point: declined when that is
 * not '.'), declined when it overflows (Jansson: "real number overflow")
 * or is longer than 63 bytes. Reals without an exponent need no strtod:
 * with at most 15 significant and 22 fraction digits, the digits as an
 * integer below 2^53 and a power of ten up to 10^22 are exact doubles, so
 * their correctly rounded quotient is the correctly rounded value of the
 * text (Clinger's fast path); with at most 19 of each, tw__jd_decimal.
 * Declined: c->p unchanged. The one reader of JSON numbers: the token
 * scanner (wire/core/json_scan.c) reads its numbers here too. */
static inline __attribute__((always_inline)) bool tw__jd_scan_number(tw__jd *c, bool *is_real,
                                                                     int64_t *i, double *d)
{
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char *at = c->p;
    bool is_negative = tw__jd_byte(c, '-');
    /* The integer part: its first 19 digits kept (below 10^19 < 2^64). */
    const char *p = c->p;
    const char *first = p;
    uint64_t mant = 0;
#ifdef TW__JSON_SWAR
    /* Timestamps have 16 digits: eight at a time. */
    while (c->e - p >= 8 && p - first < 16) {
        uint64_t x;
        memcpy(&x, p, 8);
        if (!tw__json_eight_digits(x))
            break;
        mant = mant * 100000000 + tw__json_eight_digits_value(x);
        p += 8;
    }
#endif
    for (; p < c->e && (unsigned char)(*p - '0') < 10; p++) {
        if (p - first < 19)
            mant = mant * 10 + (uint64_t)(*p - '0');
    }
    size_t n = (size_t)(p - first);
    if (n == 0 || (n > 1 && *first == '0'))
        goto decline;
    c->p = p;
    if (p == c->e || (*p != '.' && *p != 'e' && *p != 'E')) {
        if (n > 19 || mant > (uint64_t)INT64_MAX + is_negative)
            goto decline; /* Jansson: "too big integer" */
        *is_real = false;
        /* -(v - 1) - 1: INT64_MIN without an overflow. */
        *i = is_negative ? (mant ? -(int64_t)(mant - 1) - 1 : 0) : (int64_t)mant;
        return true;
    }
    /* Significant digits: those from the first non-zero one on (the
     * integer part has no leading zero). */
    size_t digits = *first == '0' ? 0 : n, frac = 0;
    bool is_long = n > 19; /* mant no longer holds them all */
    if (*c->p == '.') {
        const char *f = ++c->p;
        for (; c->p < c->e && (unsigned char)(*c->p - '0') < 10; c->p++) {
            if (mant || *c->p != '0')
                digits++;
            if (digits > 19)
                is_long = true;
            else if (!is_long)
                mant = mant * 10 + (uint64_t)(*c->p - '0');
            frac++;
        }
        if (c->p == f)
            goto decline;
    }
    bool has_exponent = false;
    if (c->p < c->e && (*c->p == 'e' || *c->p == 'E')) {
        has_exponent = true;
        c->p++;
        if (c->p < c->e && (*c->p == '+' || *c->p == '-'))
            c->p++;
        const char *x = c->p;
        while (c->p < c->e && (unsigned char)(*c->p - '0') < 10)
            c->p++;
        if (c->p == x)
            goto decline;
    }
    *is_real = true;
    if (!has_exponent && !is_long && digits <= 15 && frac <= 22) {
        double v = (double)mant / pow10[frac];
        *d = is_negative ? -v : v;
        return true;
    }
#ifdef __SIZEOF_INT128__
    if (!has_exponent && !is_long && frac <= 19) {
        double v = mant ? tw__jd_decimal(mant, (unsigned)frac) : 0.0;
        *d = is_negative ? -v : v;
        return true;
    }
#endif
    char buf[64];
    size_t len = (size_t)(c->p - at);
    const char *point = localeconv()->decimal_point;
    if (len >= sizeof buf || point[0] != '.' || point[1] != '\0')
        goto decline;
    memcpy(buf, at, len);
    buf[len] = '\0';
    errno = 0;
    char *end;
    double v = strtod(buf, &end);
    if (end != buf + len || ((v == HUGE_VAL || v == -HUGE_VAL) && errno == ERANGE))
        goto decline; /* Jansson: "real number overflow" */
    *d = v;
    return true;
decline:
    c->p = at;
    return false;
}

/* A JSON integer (what Jansson reads as json_integer: strtoll's range;
 * beyond it Jansson fails, so it is declined). A real is declined. */
static inline __attribute__((always_inline)) bool tw__jd_int64(tw__jd *c, int64_t *out)
{
    /* The common integer first: 1 to 18 digits, the first not 0, no sign,
     * then the text's end or a byte that continues no number (not a digit,
     * '.', 'e' or 'E'): what tw__jd_scan_number reads as that integer (below
     * 10^18, in range), read here in fewer steps; all else goes to it. */
    const char *p = c->p, *e = c->e;
    if (p < e && (unsigned char)(*p - '1') < 9) {
        const char *q = p;
        uint64_t v = 0;
#ifdef TW__JSON_SWAR
        while (e - q >= 8 && q - p < 16) { /* timestamps: 16 digits */
            uint64_t x;
            memcpy(&x, q, 8);
            if (!tw__json_eight_digits(x))
                break;
            v = v * 100000000 + tw__json_eight_digits_value(x);
            q += 8;
        }
#endif
        for (; q < e && (unsigned char)(*q - '0') < 10 && q - p < 18; q++)
            v = v * 10 + (uint64_t)(*q - '0');
        if (q == e || ((unsigned char)(*q - '0') >= 10 && *q != '.' && *q != 'e' && *q != 'E')) {
            *out = (int64_t)v;
            c->p = q;
            return true;
        }
    }
    const char *at = c->p;
    bool is_real;
    double d;
    if (!tw__jd_scan_number(c, &is_real, out, &d))
        return false;
    if (is_real) {
        c->p = at;
        return false;
    }
    return true;
}

/* A JSON number as a double: an integer as json_number_value gives it
 * ((double) of the integer), a real as tw__jd_scan_number reads it. */
static inline bool tw__jd_number(tw__jd *c, double *out)
{
    bool is_real;
    int64_t i;
    if (!tw__jd_scan_number(c, &is_real, &i, out))
        return false;
    if (!is_real)
        *out = (double)i;
    return true;
}

/* tw__hex16 (wire/core/hex.h: exactly sixteen hex digits of either case at
 * @p, the first the highest, into *v; false when a byte is not a hex
 * digit), sixteen bytes at once with SSE2: the ids of every span a JSON
 * reader reads are 16 or 32 digits, and the eight-byte way costs about a
 * hundred instructions per id. Signed compares: a byte >= 0x80 is
 * negative, so neither a digit nor a letter. Where there is no SSE2,
 * tw__hex16 itself. */
static inline __attribute__((always_inline)) bool tw__jd_hex16(const char *p, uint64_t *v)
{
#if defined(__SSE2__)
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i lower = _mm_or_si128(x, _mm_set1_epi8(0x20));
    __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8('0' - 1)),
                                  _mm_cmplt_epi8(x, _mm_set1_epi8('9' + 1)));
    __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(lower, _mm_set1_epi8('a' - 1)),
                                   _mm_cmplt_epi8(lower, _mm_set1_epi8('f' + 1)));
    if (_mm_movemask_epi8(_mm_or_si128(digit, letter)) != 0xffff)
        return false;
    /* A digit's value is its low nibble, a letter's its low nibble + 9. */
    __m128i nib = _mm_add_epi8(_mm_and_si128(x, _mm_set1_epi8(0x0f)),
                               _mm_and_si128(letter, _mm_set1_epi8(9)));
    /* Each pair of digits (the first in the low byte of a 16-bit lane) into
     * one byte, then the eight bytes packed: the first pair first. */
    __m128i pairs = _mm_and_si128(_mm_or_si128(_mm_slli_epi16(nib, 4), _mm_srli_epi16(nib, 8)),
                                  _mm_set1_epi16(0x00ff));
    __m128i bytes = _mm_packus_epi16(pairs, pairs);
    uint64_t le;
    _mm_storel_epi64((__m128i *)(void *)&le, bytes);
    *v = __builtin_bswap64(le);
    return true;
#else
    return tw__hex16(p, v);
#endif
}

/* A hex id's digits, c->p just after its opening quote, through its closing
 * quote: 1..@max_digits (at most 32) of either case, left-padded; the last
 * 16 are the low word (tw__parse_hex's reading). */
static inline __attribute__((always_inline)) bool tw__jd_hex_id(tw__jd *c, size_t max_digits,
                                                                uint64_t *high, uint64_t *low)
{
    const unsigned char *p = (const unsigned char *)c->p;
    const unsigned char *e = (const unsigned char *)c->e;
#if defined(__SSE2__) || defined(TW__HEX8_SWAR)
    /* The encoder's ids: 16 digits (and 32 for a 128-bit trace id), with
     * tw__jd_hex16 (tw__hex16 took about 100 instructions an id). */
    if (e - p > 16 && p[16] == '"') {
        uint64_t l;
        if (tw__jd_hex16((const char *)p, &l)) {
            *high = 0;
            *low = l;
            c->p += 17;
            return true;
        }
    } else if (max_digits >= 32 && e - p > 32 && p[32] == '"') {
        uint64_t h, l;
        if (tw__jd_hex16((const char *)p, &h) && tw__jd_hex16((const char *)p + 16, &l)) {
            *high = h;
            *low = l;
            c->p += 33;
            return true;
        }
    }
#endif
    size_t n = (size_t)(e - p) < max_digits ? (size_t)(e - p) : max_digits;
    uint64_t h = 0, l = 0;
    size_t i = 0;
    for (; i < n; i++) {
        int v = tw__hex_value[p[i]];
        if (v < 0)
            break;
        h = h << 4 | l >> 60;
        l = l << 4 | (uint64_t)(v & 0xf);
    }
    if (i == 0 || p + i == e || p[i] != '"')
        return false;
    *high = h;
    *low = l;
    c->p += i + 1;
    return true;
}

#endif /* TW_WIRE_CORE_JSON_DIRECT_H */
