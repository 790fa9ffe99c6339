/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/json_write.c: the JSON writing primitives of the direct
 * encoders (wire/core/json_write.h says what and why). No state, no locks.
 */
#include "wire/core/json_write.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/core/base64.h"
#include "wire/core/hex.h"
#include "wire/core/utf8.h"

/* The escaper's way past the first byte that is not plain: @o is where
 * the output goes on (the buffer has room for the worst case), s[i] that
 * byte. Apart so that the plain case stays a small function. */
static __attribute__((noinline)) uint8_t *escape_rest(uint8_t *o, const unsigned char *s, size_t i,
                                                      size_t len)
{
    static const char hex_upper[] = "0123456789ABCDEF";
    for (;;) {
        unsigned char c = s[i];
        if (c >= 0x80) {
            size_t n = tw__utf8_sequence(s + i, len - i);
            if (n == 0) {
                memcpy(o, TW__UTF8_REPLACEMENT, 3);
                o += 3;
                i++;
            } else {
                memcpy(o, s + i, n);
                o += n;
                i += n;
            }
        } else {
            *o++ = '\\';
            switch (c) {
            case '"':
            case '\\':
                *o++ = c;
                break;
            case '\b':
                *o++ = 'b';
                break;
            case '\f':
                *o++ = 'f';
                break;
            case '\n':
                *o++ = 'n';
                break;
            case '\r':
                *o++ = 'r';
                break;
            case '\t':
                *o++ = 't';
                break;
            default:
                memcpy(o, "u00", 3);
                o[3] = (uint8_t)hex_upper[c >> 4];
                o[4] = (uint8_t)hex_upper[c & 0xf];
                o += 5;
                break;
            }
            i++;
        }
        /* The run up to the next such byte, copied with its scan (o has
         * room for len - i bytes). */
        size_t run = tw__json_run_copy(s + i, len - i, o);
        o += run;
        i += run;
        if (i == len)
            break;
    }
    *o++ = '"';
    return o;
}

uint8_t *tw__json_write_text(uint8_t *o, const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)(text ? text : "");
    *o++ = '"';
    /* Usually the whole text is one plain run, copied with its scan. */
    size_t run = len ? tw__json_run_copy(s, len, o) : 0;
    if (run < len)
        return escape_rest(o + run, s, run, len);
    o += len;
    *o++ = '"';
    return o;
}

bool tw__json_append_text(tw__buf *out, const char *text, size_t len)
{
    if (!tw__json_room(out, len, 0))
        return false;
    out->len = (size_t)(tw__json_write_text(out->data + out->len, text, len) - out->data);
    return true;
}

/* ---- numbers -------------------------------------------------------------------------------- */

#ifdef TW__JSON_SWAR
/* The digit values of @v (below 10^8), zero-padded to eight, most
 * significant first, one per byte of a little-endian word: the value split
 * into two 4-digit halves (one per 32-bit lane), each half into two 2-digit
 * quarters (16-bit lanes), each quarter into its two digits, every lane at
 * once. x * 10486 >> 20 is x / 100 for x below 43,699 and x * 103 >> 10 is
 * x / 10 below 179; no lane's product reaches the next lane's bits that the
 * masks keep. (A division per two digits cost four times as much.) */
static inline uint64_t eight_digits(uint32_t v)
{
    uint64_t x = (v / 10000) | (uint64_t)(v % 10000) << 32;
    uint64_t hundreds = ((x * 10486) >> 20) & UINT64_C(0x0000007f0000007f);
    x = hundreds | (x - hundreds * 100) << 16;
    uint64_t tens = ((x * 103) >> 10) & UINT64_C(0x000f000f000f000f);
    return tens | (x - tens * 10) << 8;
}

#define ASCII_ZEROS UINT64_C(0x3030303030303030)

/* Writes the digits of eight_digits(@v) (@v not 0) without their leading
 * zeros at @o; returns their end. The zeros are the word's lowest bytes:
 * shifted out, so that the bytes shifted in past the digits are written
 * (the caller reserved 8 bytes) and then written over or left past the end. */
static inline uint8_t *write_leading_group(uint8_t *o, uint32_t v)
{
    uint64_t w = eight_digits(v);
    unsigned zeros = (unsigned)__builtin_ctzll(w) >> 3;
    w = (w >> (zeros * 8)) + ASCII_ZEROS;
    memcpy(o, &w, 8);
    return o + 8 - zeros;
}

static inline uint8_t *write_group(uint8_t *o, uint32_t v)
{
    uint64_t w = eight_digits(v) + ASCII_ZEROS;
    memcpy(o, &w, 8);
    return o + 8;
}

#ifdef TW__JSON_SSE2
/* Writes the 16 digits of @high (1 to 10^8 - 1) * 10^8 + @low (below 10^8)
 * at @o without their leading zeros; returns their end (16 bytes written).
 * eight_digits' steps for both halves in one register (every span's
 * microsecond timestamp has 16 digits: about 30 instructions, where the
 * two words took about 55): four 4-digit quarters in 16-bit lanes, each
 * split into two 2-digit values (x * 10486 >> 20 is x / 100 below 43,699:
 * the high half of the product, shifted by 4), interleaved so that they
 * stay in order, each of those split into its two digits (y * 6592 >> 16
 * is y * 103 >> 10, y / 10 below 179), the tens in the low byte of a lane
 * and the ones in the high byte: the sixteen digits, first to last. */
static inline uint8_t *write_sixteen(uint8_t *o, uint32_t high, uint32_t low)
{
    uint64_t quarters = (uint64_t)(high / 10000) | (uint64_t)(high % 10000) << 16 |
                        (uint64_t)(low / 10000) << 32 | (uint64_t)(low % 10000) << 48;
    __m128i x = _mm_cvtsi64_si128((long long)quarters);
    __m128i hundreds = _mm_srli_epi16(_mm_mulhi_epu16(x, _mm_set1_epi16(10486)), 4);
    __m128i pairs = _mm_unpacklo_epi16(
        hundreds, _mm_sub_epi16(x, _mm_mullo_epi16(hundreds, _mm_set1_epi16(100))));
    __m128i tens = _mm_mulhi_epu16(pairs, _mm_set1_epi16(6592));
    __m128i ones = _mm_sub_epi16(pairs, _mm_mullo_epi16(tens, _mm_set1_epi16(10)));
    __m128i digits = _mm_add_epi8(_mm_or_si128(tens, _mm_slli_epi16(ones, 8)), _mm_set1_epi8('0'));
    /* The leading zeros (at most 7: @high is not 0) are skipped by copying
     * from past them. */
    unsigned zeros = (unsigned)__builtin_ctz(
        ~(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(digits, _mm_set1_epi8('0'))));
    uint8_t text[32];
    _mm_storeu_si128((__m128i *)(void *)text, digits);
    _mm_storeu_si128((__m128i *)(void *)(text + 16), _mm_setzero_si128());
    memcpy(o, text + zeros, 16);
    return o + 16 - zeros;
}
#endif

/* Writes the decimal digits of @v at @o, without leading zeros ("0" for
 * 0); returns their end. Writes up to 24 bytes at @o whatever the length
 * (the caller reserved them): each 8-digit group is one 8-byte store. */
static inline uint8_t *write_decimal(uint8_t *o, uint64_t v)
{
    if (v < 10) {
        *o = (uint8_t)('0' + v);
        return o + 1;
    }
    if (v < 100000000)
        return write_leading_group(o, (uint32_t)v);
    uint64_t high = v / 100000000;
    uint32_t low = (uint32_t)(v % 100000000);
    if (high < 100000000) { /* 9 to 16 digits: microsecond times */
#ifdef TW__JSON_SSE2
        return write_sixteen(o, (uint32_t)high, low);
#else
        o = write_leading_group(o, (uint32_t)high);
#endif
    } else { /* 17 to 20 digits: nanosecond times */
        o = write_leading_group(o, (uint32_t)(high / 100000000));
        o = write_group(o, (uint32_t)(high % 100000000));
    }
    return write_group(o, low);
}
#else
static const char digit_pairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233"
    "34353637383940414243444546474849505152535455565758596061626364656667"
    "6869707172737475767778798081828384858687888990919293949596979899";

/* Writes the decimal digits of @v at @o (at most 20); returns their end. */
static uint8_t *write_decimal(uint8_t *o, uint64_t v)
{
    char digits[20];
    char *end = digits + sizeof digits, *p = end;
    while (v >= 100) { /* two digits per division */
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        p -= 2;
        memcpy(p, digit_pairs + 2 * r, 2);
    }
    if (v >= 10) {
        p -= 2;
        memcpy(p, digit_pairs + 2 * v, 2);
    } else {
        *--p = (char)('0' + v);
    }
    memcpy(o, p, (size_t)(end - p));
    return o + (end - p);
}
#endif

/* @quote: 0, or '"' around the digits. */
static bool put_number(tw__buf *out, bool negative, uint64_t mag, char quote)
{
    if (out->cap - out->len < 32 && !tw__buf_grow(out, 32))
        return false;
    uint8_t *o = out->data + out->len;
    if (quote)
        *o++ = (uint8_t)quote;
    if (negative)
        *o++ = '-';
    o = write_decimal(o, mag);
    if (quote)
        *o++ = (uint8_t)quote;
    out->len = (size_t)(o - out->data);
    return true;
}

static uint64_t magnitude(int64_t v)
{
    return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

uint8_t *tw__json_write_int(uint8_t *o, int64_t v)
{
    if (v < 0)
        *o++ = '-';
    return write_decimal(o, magnitude(v));
}

bool tw__json_put_int(tw__buf *out, int64_t v)
{
    return put_number(out, v < 0, magnitude(v), 0);
}

bool tw__json_put_uint(tw__buf *out, uint64_t v)
{
    return put_number(out, false, v, 0);
}

bool tw__json_put_quoted_int(tw__buf *out, int64_t v)
{
    return put_number(out, v < 0, magnitude(v), '"');
}

bool tw__json_put_quoted_uint(tw__buf *out, uint64_t v)
{
    return put_number(out, false, v, '"');
}

/* The text of tw__double_text for the common value with at most six
 * decimals and 15 significant digits, in fixed notation, without printf:
 * 0 when @value is not one (the caller then takes the general way).
 *
 * Why it is the same text: r = |value| * 10^k integral with r / 10^k ==
 * |value| means the decimal r * 10^-k reads back as |value| (strtod and
 * the division both round the same exact quotient). With r below 10^15 no
 * decimal of fewer digits lies within half an ulp, so r's digits are the
 * fewest that read back, which is what the precision loop finds, and
 * %g writes them in fixed notation when the exponent is at least -4 and
 * below the digit count (a last digit that is not 0 ensures the latter). */
static size_t short_decimal_text(double value, char *out, size_t size)
{
    static const double pow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6};
    double a = fabs(value);
    if (!(a >= 1e-4 && a < 1e15) || size < 32)
        return 0;
    size_t k = 0;
    double r = a;
    for (;; k++) {
        if (k == sizeof pow10 / sizeof pow10[0])
            return 0;
        r = a * pow10[k];
        if (r >= 1e15)
            return 0;
        /* (0 < r < 10^15: the truncation is floor(r), without its call.) */
        if (r == (double)(int64_t)r && r / pow10[k] == a)
            break;
    }
    uint64_t digits = (uint64_t)r;
    if (digits % 10 == 0)
        return 0; /* trailing zeros: %g may choose the exponent form */
    char tmp[24];
    size_t n = 0;
    for (uint64_t d = digits; d; d /= 10)
        tmp[n++] = (char)('0' + d % 10); /* reversed */
    if ((long)n - 1 - (long)k < -4)
        return 0; /* %g would write an exponent */
    size_t w = 0;
    if (value < 0)
        out[w++] = '-';
    if (n <= k) {
        out[w++] = '0';
        out[w++] = '.';
        for (size_t z = n; z < k; z++)
            out[w++] = '0';
    }
    for (size_t i = n; i-- > 0;) {
        out[w++] = tmp[i];
        if (i == k && k > 0 && n > k)
            out[w++] = '.';
    }
    out[w] = '\0';
    return w;
}

size_t tw__double_text(double value, char *out, size_t size)
{
    size_t fast = short_decimal_text(value, out, size);
    if (fast)
        return fast;
    const char *special = NULL;
    if (isnan(value))
        special = "NaN";
    else if (isinf(value))
        special = value > 0 ? "Infinity" : "-Infinity";
    if (special) {
        snprintf(out, size, "%s", special);
        return strlen(out);
    }
    /* The fewest significant digits that read back exactly: 0.1 is "0.1",
     * not the "0.10000000000000001" of a fixed %.17g. printf and strtod
     * follow the same LC_NUMERIC, so the round-trip test holds in any
     * locale; the locale's decimal point is then turned into '.'. */
    for (int precision = 1; precision <= 17; precision++) {
        snprintf(out, size, "%.*g", precision, value);
        if (strtod(out, NULL) == value)
            break;
    }
    char point = localeconv()->decimal_point[0];
    if (point != '.' && point != '\0') {
        char *p = strchr(out, point);
        if (p)
            *p = '.';
    }
    return strlen(out);
}

bool tw__json_put_double(tw__buf *out, double value)
{
    char text[40];
    size_t n = tw__double_text(value, text, sizeof text - 2);
    if (!isfinite(value)) {
        return tw__buf_put_byte(out, '"') && tw__buf_put(out, text, n) &&
               tw__buf_put_byte(out, '"');
    }
    /* Read back as a real, not an integer (Jansson's dump does the same). */
    if (!memchr(text, '.', n) && !memchr(text, 'e', n)) {
        memcpy(text + n, ".0", 2);
        n += 2;
    }
    return tw__buf_put(out, text, n);
}

/* ---- ids ------------------------------------------------------------------------------------ */

/* Ids are written straight into the buffer: one check, then stores. */
bool tw__json_put_hex64(tw__buf *out, uint64_t id)
{
    if (out->cap - out->len < 18 && !tw__buf_grow(out, 18))
        return false;
    uint8_t *o = out->data + out->len;
    o[0] = '"';
    tw__json_hex64(o + 1, id);
    o[17] = '"';
    out->len += 18;
    return true;
}

bool tw__json_put_hex128(tw__buf *out, uint64_t high, uint64_t low)
{
    if (out->cap - out->len < 34 && !tw__buf_grow(out, 34))
        return false;
    uint8_t *o = out->data + out->len;
    o[0] = '"';
    tw__json_hex64(o + 1, high);
    tw__json_hex64(o + 17, low);
    o[33] = '"';
    out->len += 34;
    return true;
}

bool tw__json_put_trace_id(tw__buf *out, uint64_t high, uint64_t low)
{
    return high ? tw__json_put_hex128(out, high, low) : tw__json_put_hex64(out, low);
}

/* ---- typed values --------------------------------------------------------------------------- */

const char *tw__json_type_name(tw_value_type type)
{
    switch (type) {
    case TW_VALUE_BOOL:
        return "bool";
    case TW_VALUE_INT64:
        return "int64";
    case TW_VALUE_DOUBLE:
        return "float64";
    case TW_VALUE_BINARY:
        return "binary";
    case TW_VALUE_STRING:
        break;
    }
    return "string";
}

bool tw__json_put_typed_value(tw__buf *out, const tw__tag *t)
{
    switch (t->type) {
    case TW_VALUE_STRING:
        return tw__json_append_text(out, t->v.str, t->len);
    case TW_VALUE_BOOL:
        return t->v.boolean ? TW__BUF_LIT(out, "true") : TW__BUF_LIT(out, "false");
    case TW_VALUE_INT64:
        if (t->v.i64 >= -TW__JSON_MAX_SAFE_INTEGER && t->v.i64 <= TW__JSON_MAX_SAFE_INTEGER)
            return tw__json_put_int(out, t->v.i64);
        return tw__json_put_quoted_int(out, t->v.i64);
    case TW_VALUE_DOUBLE:
        return tw__json_put_double(out, t->v.dbl);
    case TW_VALUE_BINARY:
        return tw__buf_put_byte(out, '"') && tw__base64_append(out, t->v.bin, t->len) &&
               tw__buf_put_byte(out, '"');
    }
    return false;
}

bool tw__json_put_typed_tag(tw__buf *out, const tw__tag *t)
{
    /* Everything but a double or binary value in one reserved write: the
     * key, the type and the value (a string's text room with the key's). */
    size_t text_len = t->type == TW_VALUE_STRING ? t->len : 0;
    if (text_len > SIZE_MAX / 8 || !tw__json_room(out, t->key_len + text_len, 64))
        return false;
    uint8_t *o = out->data + out->len;
    memcpy(o, "{\"key\":", 7);
    o = tw__json_write_text(o + 7, t->key, t->key_len);
#define MID(type) ",\"type\":\"" type "\",\"value\":"
#define PUT_MID(type) (memcpy(o, MID(type), sizeof MID(type) - 1), o += sizeof MID(type) - 1)
    switch (t->type) {
    case TW_VALUE_STRING:
        PUT_MID("string");
        o = tw__json_write_text(o, t->v.str, t->len);
        break;
    case TW_VALUE_BOOL:
        PUT_MID("bool");
        if (t->v.boolean) {
            memcpy(o, "true", 4);
            o += 4;
        } else {
            memcpy(o, "false", 5);
            o += 5;
        }
        break;
    case TW_VALUE_INT64:
        PUT_MID("int64");
        if (t->v.i64 >= -TW__JSON_MAX_SAFE_INTEGER && t->v.i64 <= TW__JSON_MAX_SAFE_INTEGER) {
            o = tw__json_write_int(o, t->v.i64);
            break;
        }
        out->len = (size_t)(o - out->data);
        return tw__json_put_quoted_int(out, t->v.i64) && tw__buf_put_byte(out, '}');
    case TW_VALUE_DOUBLE:
        PUT_MID("float64");
        out->len = (size_t)(o - out->data);
        return tw__json_put_double(out, t->v.dbl) && tw__buf_put_byte(out, '}');
    case TW_VALUE_BINARY:
        PUT_MID("binary");
        out->len = (size_t)(o - out->data);
        return tw__json_put_typed_value(out, t) && tw__buf_put_byte(out, '}');
    default:
        return false; /* no such type (tw__json_put_typed_value refuses it too) */
    }
#undef PUT_MID
#undef MID
    *o++ = '}';
    out->len = (size_t)(o - out->data);
    return true;
}
