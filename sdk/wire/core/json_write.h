/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/json_write.h: the JSON writing primitives of the direct
 * encoders (Zipkin v2, OTLP/JSON, Jaeger JSON, the Dapper log): the
 * project's one JSON string escaper, integers, doubles, ids, and the one
 * typed-tag writer ({"key","type","value"}: the Jaeger JSON and Dapper log
 * form). They append to a tw__buf; no JSON tree is built.
 *
 * Why not Jansson here: building and dumping a Jansson tree per span cost
 * the JSON transports 60-120k instructions per span (callgrind,
 * tests/bench/bench_encode.c), a Jansson value and a hash table per member.
 * These writers emit the bytes Jansson's compact dump would (the escaper
 * restates its rules; the differential suites in tests/unit/wire/ parse
 * every direct encoder's output back with Jansson and compare it with the
 * reference Jansson encoders on large random corpora).
 *
 * Every writer returns false on allocation failure (the buffer may then
 * hold part of the value: callers restore its length). No state, no locks.
 */
#ifndef TW_WIRE_CORE_JSON_WRITE_H
#define TW_WIRE_CORE_JSON_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wire/core/buf.h"
#include "wire/core/hex.h"
#include "wire/model/span_data.h"

/* Bytes looked at eight at a time (SWAR: portable C, 64-bit loads by
 * memcpy; little-endian only, else byte loops). A mask has bit 0x80 set in
 * the byte of the first byte it looks for, and no set bit below it. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define TW__JSON_SWAR 1
#define TW__SWAR_ONES UINT64_C(0x0101010101010101)
#define TW__SWAR_HIGHS UINT64_C(0x8080808080808080)

/* Bytes of @x equal to @b (the usual "byte is zero" test: its false
 * positives, from borrows, only sit above a true one). */
static inline uint64_t tw__swar_eq(uint64_t x, unsigned char b)
{
    uint64_t y = x ^ (TW__SWAR_ONES * b);
    return (y - TW__SWAR_ONES) & ~y & TW__SWAR_HIGHS;
}

/* Whether the eight bytes of @x are all ASCII digits. */
static inline bool tw__json_eight_digits(uint64_t x)
{
    const uint64_t highs = UINT64_C(0xf0f0f0f0f0f0f0f0);
    return ((x & highs) | (((x + UINT64_C(0x0606060606060606)) & highs) >> 4)) ==
           UINT64_C(0x3333333333333333);
}

/* The value of eight ASCII digits @x (the first digit in the lowest byte):
 * neighbouring digits, then pairs, then quadruples combined in place. */
static inline uint64_t tw__json_eight_digits_value(uint64_t x)
{
    x -= TW__SWAR_ONES * '0';
    x = (x * 10 + (x >> 8)) & UINT64_C(0x00ff00ff00ff00ff);
    x = (x * 100 + (x >> 16)) & UINT64_C(0x0000ffff0000ffff);
    return (x * 10000 + (x >> 32)) & UINT64_C(0xffffffff);
}

/* Bytes that JSON strings cannot hold as they are: '"', '\\', below 0x20,
 * above 0x7f. Only the lowest set bit is exact, which is all the users
 * need: below the first such byte, every byte is in 0x20-0x7f and not a
 * quote or backslash, so none of the three subtractions borrows or sets
 * bit 0x80 there (y - 1 for y = byte ^ '"' in 1-0x7f, byte - 0x20 in
 * 0-0x5f); at that byte, '"' or '\\' gives 0 - 1, a control byte wraps
 * below 0x20, and a byte above 0x7f has the bit itself. */
static inline uint64_t tw__json_special_mask(uint64_t x)
{
    const uint64_t ones = TW__SWAR_ONES;
    return (((x ^ (ones * '"')) - ones) | ((x ^ (ones * '\\')) - ones) | (x - ones * 0x20) | x) &
           TW__SWAR_HIGHS;
}
#endif

#if defined(TW__JSON_SWAR) && defined(__SSE2__)
#include <emmintrin.h>
#define TW__JSON_SSE2 1

/* The bytes of @v that JSON strings cannot hold as they are, one bit each
 * (bit i for byte i, every bit exact): '"', '\\', and, by one signed
 * compare with 0x20, the bytes below 0x20 and those above 0x7f (negative
 * as signed bytes). Six instructions for 16 bytes, where
 * tw__json_special_mask takes about ten for eight. */
static inline unsigned tw__json_special_bits(__m128i v)
{
    __m128i stop = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
        _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
    return (unsigned)_mm_movemask_epi8(stop);
}
#endif

/* Writes @v as exactly 16 lower-case hex digits at @o (no quotes, no NUL):
 * tw__hex_u64's text. With SSE2 the nibbles are spread in one register
 * (shift, mask, interleave: most significant first after a byte swap) and
 * each becomes '0' + n, plus 'a' - '0' - 10 where n > 9: about a dozen
 * instructions, where the SWAR word form takes some forty (every id of
 * every JSON span comes here). */
static inline void tw__json_hex64(uint8_t *o, uint64_t v)
{
#ifdef TW__JSON_SSE2
    const __m128i low_nibbles = _mm_set1_epi8(0x0f);
    __m128i x = _mm_cvtsi64_si128((long long)__builtin_bswap64(v));
    __m128i n = _mm_unpacklo_epi8(_mm_and_si128(_mm_srli_epi16(x, 4), low_nibbles),
                                  _mm_and_si128(x, low_nibbles));
    __m128i letters =
        _mm_and_si128(_mm_cmpgt_epi8(n, _mm_set1_epi8(9)), _mm_set1_epi8('a' - '0' - 10));
    _mm_storeu_si128((__m128i *)(void *)o,
                     _mm_add_epi8(_mm_add_epi8(n, _mm_set1_epi8('0')), letters));
#else
    tw__hex_u64((char *)o, v);
#endif
}

/* Whether byte @c stops a plain run: the byte-by-byte reference of the
 * runs below. */
static inline bool tw__json_is_special(unsigned char c)
{
    return c < 0x20 || c >= 0x80 || c == '"' || c == '\\';
}

/* The number of leading bytes of @p (at most @n) that JSON strings hold
 * as they are (tw__json_is_special false). Reads only p[0..n-1]. When @dst
 * is not NULL, also copies to it at least those bytes, and at most all @n
 * (dst[0..n-1] must be writable): the caller goes on writing at the end
 * of the run, so the bytes copied past it do not matter. */
static inline __attribute__((always_inline)) size_t tw__json_run_copy(const unsigned char *p,
                                                                      size_t n, unsigned char *dst)
{
#ifdef TW__JSON_SSE2
    /* The loads of the eight-byte form below, tested by tw__json_special_bits. */
    unsigned m;
    if (n < 8) {
        uint64_t x;
        if (n >= 4) {
            /* Bytes 0-3 are p[0..3], bytes 4-7 are p[n-4..n-1]. */
            uint32_t lo, hi;
            memcpy(&lo, p, 4);
            memcpy(&hi, p + n - 4, 4);
            if (dst) {
                memcpy(dst, &lo, 4);
                memcpy(dst + n - 4, &hi, 4);
            }
            x = (uint64_t)hi << 32 | lo;
        } else {
            if (n == 0)
                return 0;
            /* n is 1, 2 or 3: bytes 0-2 are p[0], p[n/2], p[n-1], the others 'a'. */
            if (dst) {
                dst[0] = p[0];
                dst[n >> 1] = p[n >> 1];
                dst[n - 1] = p[n - 1];
            }
            x = UINT64_C(0x6161616161000000) | (uint64_t)p[n - 1] << 16 | (uint64_t)p[n >> 1] << 8 |
                p[0];
        }
        /* (The upper eight bytes of the register are zeros, which stop.) */
        m = tw__json_special_bits(_mm_cvtsi64_si128((long long)x)) & 0xffu;
        if (!m)
            return n;
        size_t k = (size_t)__builtin_ctz(m);
        if (n >= 4)
            return k < 4 ? k : n - 8 + k;
        return k == 0 ? 0 : k == 1 ? n >> 1 : n - 1;
    }
    if (n <= 16) {
        /* The first and the last eight bytes (which may overlap) in one
         * register: bit k is p[k] below 8, else p[n - 16 + k]. */
        uint64_t x, y;
        memcpy(&x, p, 8);
        memcpy(&y, p + n - 8, 8);
        if (dst) {
            memcpy(dst, &x, 8);
            memcpy(dst + n - 8, &y, 8);
        }
        m = tw__json_special_bits(_mm_set_epi64x((long long)y, (long long)x));
        if (!m)
            return n;
        size_t k = (size_t)__builtin_ctz(m);
        return k < 8 ? k : n - 16 + k;
    }
    size_t i = 0;
    for (; n - i >= 16; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        if (dst)
            _mm_storeu_si128((__m128i *)(void *)(dst + i), v);
        m = tw__json_special_bits(v);
        if (m)
            return i + (size_t)__builtin_ctz(m);
    }
    if (i == n)
        return n;
    /* The tail: the last sixteen bytes, p[n-16 .. i-1] known not to stop. */
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + n - 16));
    if (dst)
        _mm_storeu_si128((__m128i *)(void *)(dst + n - 16), v);
    m = tw__json_special_bits(v);
    return m ? n - 16 + (size_t)__builtin_ctz(m) : n;
#elif defined(TW__JSON_SWAR)
    uint64_t x, m;
    if (n < 8) {
        /* Short: loads that stay inside p[0..n-1] and may overlap (a byte
         * that does not stop sets no bit and starts no borrow, so the
         * lowest set bit still falls on the first byte that stops). */
        if (n >= 4) {
            /* Bytes 0-3 are p[0..3], bytes 4-7 are p[n-4..n-1]. */
            uint32_t lo, hi;
            memcpy(&lo, p, 4);
            memcpy(&hi, p + n - 4, 4);
            if (dst) {
                memcpy(dst, &lo, 4);
                memcpy(dst + n - 4, &hi, 4);
            }
            m = tw__json_special_mask((uint64_t)hi << 32 | lo);
            if (!m)
                return n;
            size_t k = (size_t)__builtin_ctzll(m) >> 3;
            return k < 4 ? k : n - 8 + k;
        }
        if (n == 0)
            return 0;
        /* n is 1, 2 or 3: bytes 0-2 are p[0], p[n/2], p[n-1] (ascending
         * indexes), the others 'a' (which stops no run). */
        if (dst) {
            dst[0] = p[0];
            dst[n >> 1] = p[n >> 1];
            dst[n - 1] = p[n - 1];
        }
        x = UINT64_C(0x6161616161000000) | (uint64_t)p[n - 1] << 16 | (uint64_t)p[n >> 1] << 8 |
            p[0];
        m = tw__json_special_mask(x);
        if (!m)
            return n;
        size_t k = (size_t)__builtin_ctzll(m) >> 3;
        return k == 0 ? 0 : k == 1 ? n >> 1 : n - 1;
    }
    if (n <= 16) {
        /* Most keys and values: the first and the last eight bytes (which
         * may overlap), without the loop; past the first word's bytes, the
         * lowest set bit of the second falls on the first byte that stops. */
        uint64_t y;
        memcpy(&x, p, 8);
        memcpy(&y, p + n - 8, 8);
        if (dst) {
            memcpy(dst, &x, 8);
            memcpy(dst + n - 8, &y, 8);
        }
        m = tw__json_special_mask(x);
        if (m)
            return (size_t)__builtin_ctzll(m) >> 3;
        m = tw__json_special_mask(y);
        return m ? n - 8 + ((size_t)__builtin_ctzll(m) >> 3) : n;
    }
    size_t i = 0;
    for (; n - i >= 8; i += 8) {
        memcpy(&x, p + i, 8);
        if (dst)
            memcpy(dst + i, &x, 8);
        m = tw__json_special_mask(x);
        if (m)
            return i + ((size_t)__builtin_ctzll(m) >> 3);
    }
    if (i == n)
        return n;
    /* The tail: the last eight bytes, p[n-8 .. i-1] known not to stop. */
    memcpy(&x, p + n - 8, 8);
    if (dst)
        memcpy(dst + n - 8, &x, 8);
    m = tw__json_special_mask(x);
    return m ? n - 8 + ((size_t)__builtin_ctzll(m) >> 3) : n;
#else
    size_t i = 0;
    while (i < n && !tw__json_is_special(p[i])) {
        if (dst)
            dst[i] = p[i];
        i++;
    }
    return i;
#endif
}

/* The same without a copy. */
static inline size_t tw__json_plain_run(const unsigned char *p, size_t n)
{
    return tw__json_run_copy(p, n, NULL);
}

/* Appends @len bytes of @text as a JSON string (quotes included), as
 * Jansson's compact dump writes a string: invalid UTF-8 bytes become
 * U+FFFD; '"', '\\' and the controls \b \f \n \r \t get their short escapes,
 * other bytes below 0x20 \u00XX with upper-case hex; '/' and non-ASCII are
 * written as they are. @text may hold NUL bytes (written \u0000). */
bool tw__json_append_text(tw__buf *out, const char *text, size_t len);

/* Makes room in @out for a JSON string of @len bytes of text (the worst
 * case, every byte a 6-byte escape, and the quotes) and @extra more bytes:
 * writers that reserve once, then write with tw__json_write_text and
 * plain stores. False on allocation failure or a size beyond any buffer
 * (len above SIZE_MAX / 8, which also keeps len * 6 + extra from wrapping
 * for the small @extra callers pass). */
static inline bool tw__json_room(tw__buf *out, size_t len, size_t extra)
{
    if (len > SIZE_MAX / 8 || extra > SIZE_MAX / 8)
        return false;
    size_t need = len * 6 + 2 + extra;
    return out->cap - out->len >= need || tw__buf_grow(out, need);
}

/* Writes what tw__json_append_text appends at @o, which has room for it
 * (tw__json_room); returns the end of what it wrote. */
uint8_t *tw__json_write_text(uint8_t *o, const char *text, size_t len);

/* A JSON integer, as Jansson dumps one ("%lld"). */
bool tw__json_put_int(tw__buf *out, int64_t v);
bool tw__json_put_uint(tw__buf *out, uint64_t v);
/* Writes tw__json_put_int's digits at @o, which has room for 32 bytes
 * (the digits are stored eight at a time); returns their end. */
uint8_t *tw__json_write_int(uint8_t *o, int64_t v);
/* The same inside quotes: "123" (proto3 JSON's 64-bit integers). */
bool tw__json_put_quoted_int(tw__buf *out, int64_t v);
bool tw__json_put_quoted_uint(tw__buf *out, uint64_t v);

/* The shortest decimal text that strtod() reads back as exactly @value
 * ("0.25", "3.141592653589793", "1e+21", "-0"); "NaN", "Infinity" and
 * "-Infinity" (the spellings of Java, JavaScript and proto3 JSON) for the
 * non-finite values. @size must be at least 32. Returns the length. */
size_t tw__double_text(double value, char *out, size_t size);
/* A double as a JSON value: a finite one as a number that reads back as a
 * real (tw__double_text, with ".0" added when it would read as an integer:
 * "1.0", "-0.0"); NaN and the infinities as the strings "NaN", "Infinity",
 * "-Infinity" (JSON has no such numbers). */
bool tw__json_put_double(tw__buf *out, double value);

/* A 64-bit id as a 16-digit hex string, quotes included. */
bool tw__json_put_hex64(tw__buf *out, uint64_t id);
/* A trace id as a hex string: 16 digits when @high is 0, else 32. */
bool tw__json_put_trace_id(tw__buf *out, uint64_t high, uint64_t low);
/* A trace id as 32 hex digits always (OTLP), quotes included. */
bool tw__json_put_hex128(tw__buf *out, uint64_t high, uint64_t low);

/* Integers beyond +-(2^53 - 1) do not survive JSON readers that hold
 * numbers as doubles (JavaScript, jq): typed writers put them in strings. */
#define TW__JSON_MAX_SAFE_INTEGER INT64_C(9007199254740991)

/* A typed value as Jaeger JSON and the Dapper log write it: string as a
 * string, bool, int64 as a number (a decimal string beyond
 * +-(2^53-1)), float64 by tw__json_put_double, binary as padded base64. */
bool tw__json_put_typed_value(tw__buf *out, const tw__tag *tag);
/* The type name of that form: "string", "bool", "int64", "float64",
 * "binary". */
const char *tw__json_type_name(tw_value_type type);
/* {"key":K,"type":T,"value":V}: the one typed-tag writer. */
bool tw__json_put_typed_tag(tw__buf *out, const tw__tag *tag);

#endif /* TW_WIRE_CORE_JSON_WRITE_H */
