/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/hex.h: the project's one hex codec for ids: writing 64- and
 * 128-bit ids as lower-case hex, and the one parser of hex (and decimal)
 * ids that the propagation codecs, the span-log decoders and the
 * `tracewire` command all use.
 *
 * Ids on the wire (Jaeger, B3, W3C, Zipkin, OTLP JSON, the Dapper log):
 * 64-bit span ids, 64- or 128-bit trace ids; text forms are 1..16 or 1..32
 * hex digits, left-padded (Jaeger's receivers accept short ids). Old Zipkin
 * logs wrote ids as signed decimal i64: tw__parse_trace_id and
 * tw__parse_span_id read those too (two's complement).
 *
 * No state, no locks: any thread.
 */
#ifndef TW_WIRE_CORE_HEX_H
#define TW_WIRE_CORE_HEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
/* tw__hex16 reads its sixteen digits in one register (_mm_cvtsi128_si64:
 * 64-bit x86 only). */
#define TW__HEX16_SSE2 1
#endif

/* Digit values: 0-15 for 0-9 and a-f, 0x10|value for A-F, -1 for anything else. */
extern const int8_t tw__hex_value[256];
extern const char tw__hex_digits[16]; /* lower case */

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The eight hex digits of @h, most significant first, as the eight bytes
 * of a little-endian word (SWAR: every id of every JSON span goes through
 * here, and a table lookup per digit cost twice as much). The nibbles are
 * spread one to a byte (halves, then quarters, then nibbles moved apart),
 * the bytes reversed so that the first digit lands in the lowest byte,
 * and each nibble n becomes '0' + n, plus 'a' - '0' - 10 when n > 9 (the
 * + 6 carries into bit 4 exactly then). */
static inline uint64_t tw__hex_word(uint32_t h)
{
    uint64_t x = h;
    x = ((x & UINT64_C(0xffff0000)) << 16) | (x & UINT64_C(0xffff));
    x = ((x & UINT64_C(0x0000ff000000ff00)) << 8) | (x & UINT64_C(0x000000ff000000ff));
    x = ((x & UINT64_C(0x00f000f000f000f0)) << 4) | (x & UINT64_C(0x000f000f000f000f));
    x = __builtin_bswap64(x);
    uint64_t letters = ((x + UINT64_C(0x0606060606060606)) >> 4) & UINT64_C(0x0101010101010101);
    return x + UINT64_C(0x3030303030303030) + letters * ('a' - '0' - 10);
}

/* Writes @v as exactly 16 lower-case hex digits (no NUL). */
static inline void tw__hex_u64(char *out, uint64_t v)
{
    uint64_t hi = tw__hex_word((uint32_t)(v >> 32)), lo = tw__hex_word((uint32_t)v);
    memcpy(out, &hi, 8);
    memcpy(out + 8, &lo, 8);
}
#else
/* Writes @v as exactly 16 lower-case hex digits (no NUL). */
static inline void tw__hex_u64(char *out, uint64_t v)
{
    for (int i = 14; i >= 0; i -= 2) { /* a byte (two digits) per step */
        out[i] = tw__hex_digits[(v >> 4) & 0xf];
        out[i + 1] = tw__hex_digits[v & 0xf];
        v >>= 8;
    }
}
#endif

/* Lower-case hex of a 64-bit id: 16 characters and a NUL. */
void tw__hex64(uint64_t id, char out[17]);
/* Lower-case hex of a 128-bit id (high half first): 32 characters and a NUL. */
void tw__hex128(uint64_t high, uint64_t low, char out[33]);
/* A trace id as the JSON formats write it: 16 digits when @high is 0, else
 * 32. Returns the length (16 or 32); @out gets a NUL after it. */
size_t tw__trace_id_hex(uint64_t high, uint64_t low, char out[33]);

/* Why a hex field was refused (tw__parse_hex). */
typedef enum tw__hex_error {
    TW__HEX_OK = 0,
    TW__HEX_EMPTY,
    TW__HEX_TOO_LONG,
    TW__HEX_BAD_DIGIT, /* *bad_at says where */
    TW__HEX_UPPER      /* an A-F digit where only lower case is allowed */
} tw__hex_error;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define TW__HEX8_SWAR 1
/* The value of the eight hex digits at @s (SWAR: the ids of every span the
 * JSON readers read are 16 and 32 digits, and a table lookup per digit
 * cost twice as much): the one such reader, used by tw__parse_hex, tw__hex16
 * and the readers that find an id's bytes themselves. Returns 0, or not 0 when a byte is not a hex
 * digit, or is an upper-case one and @lower_only (the caller then
 * locates it; *out is then meaningless).
 *
 * Per byte, on its low seven bits y (no sum below carries out of a byte):
 * y + 0x80 - c has bit 7 set exactly when y >= c, so a digit is in
 * '0'..'9' and a letter, once bit 0x20 is set (lower case), in 'a'..'f';
 * a byte with bit 7 set is neither. A digit's value is its low nibble, a
 * letter's its low nibble + 9. The nibbles (first digit in the lowest
 * byte) are then joined pairwise: bytes, 16-bit halves, the word. */
static inline uint64_t tw__hex8(const char *s, bool lower_only, uint32_t *out)
{
    const uint64_t ones = UINT64_C(0x0101010101010101), highs = UINT64_C(0x8080808080808080);
    uint64_t x;
    memcpy(&x, s, 8);
    uint64_t y = x & ~highs, z = y | ones * 0x20;
    uint64_t is_ascii = ~x & highs;
    uint64_t digit = (y + ones * (0x80 - '0')) & ~(y + ones * (0x80 - '9' - 1)) & is_ascii;
    uint64_t letter = (z + ones * (0x80 - 'a')) & ~(z + ones * (0x80 - 'f' - 1)) & is_ascii;
    uint64_t bad = (digit | letter) ^ highs;
    /* x << 2 puts each byte's bit 0x20 (lower case) at its bit 0x80. */
    if (lower_only)
        bad |= letter & ~(x << 2);
    uint64_t v = (x & ones * 0x0f) + (letter >> 7) * 9;
    v = ((v << 4) | (v >> 8)) & UINT64_C(0x00ff00ff00ff00ff);
    v = ((v << 8) | (v >> 16)) & UINT64_C(0x0000ffff0000ffff);
    *out = (uint32_t)((v << 16) | (v >> 32));
    return bad;
}
#endif

/* Exactly sixteen hex digits of either case at @p (the caller checked the
 * length) into *v, the first digit the highest: the ids JSON writers write,
 * read before the general parser. Same value as tw__parse_hex for the same
 * text; false when a byte is not a hex digit (or where there is neither
 * SSE2 nor a SWAR reader), and the caller then asks tw__parse_hex, which
 * explains.
 *
 * With SSE2, the sixteen bytes at once (every id of every span the JSON
 * readers read comes here: two eight-byte tw__hex8 calls cost about a
 * hundred instructions, this about twenty). Signed compares: a byte >= 0x80
 * is negative, so neither a digit nor a letter. A digit's value is its low
 * nibble, a letter's (bit 0x20 set: lower case) its low nibble + 9; each
 * pair of digits (the first in the low byte of a 16-bit lane) becomes one
 * byte, the eight bytes are packed, the first pair first, and the word's
 * bytes reversed so that it is the highest. */
static inline bool tw__hex16(const char *p, uint64_t *v)
{
#if defined(TW__HEX16_SSE2)
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i lower = _mm_or_si128(x, _mm_set1_epi8(0x20));
    __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8('0' - 1)),
                                  _mm_cmplt_epi8(x, _mm_set1_epi8('9' + 1)));
    __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(lower, _mm_set1_epi8('a' - 1)),
                                   _mm_cmplt_epi8(lower, _mm_set1_epi8('f' + 1)));
    if (_mm_movemask_epi8(_mm_or_si128(digit, letter)) != 0xffff)
        return false;
    __m128i nib = _mm_add_epi8(_mm_and_si128(x, _mm_set1_epi8(0x0f)),
                               _mm_and_si128(letter, _mm_set1_epi8(9)));
    __m128i pairs = _mm_and_si128(_mm_or_si128(_mm_slli_epi16(nib, 4), _mm_srli_epi16(nib, 8)),
                                  _mm_set1_epi16(0x00ff));
    *v = __builtin_bswap64((uint64_t)_mm_cvtsi128_si64(_mm_packus_epi16(pairs, pairs)));
    return true;
#elif defined(TW__HEX8_SWAR)
    uint32_t a, b;
    if (tw__hex8(p, false, &a) | tw__hex8(p + 8, false, &b))
        return false;
    *v = (uint64_t)a << 32 | b;
    return true;
#else
    (void)p;
    (void)v;
    return false;
#endif
}

/* Parses 1..@max_digits (at most 32) hex digits of @s[0..n) into a 128-bit
 * value (@hi, which may be NULL, is 0 for up to 16 digits; shorter input is
 * left-padded, as Jaeger's receivers must). Either case unless @lower_only.
 * On error the outputs are unchanged and *bad_at (if not NULL) is the
 * offending index. */
tw__hex_error tw__parse_hex(const char *s, size_t n, size_t max_digits, bool lower_only,
                            uint64_t *hi, uint64_t *lo, size_t *bad_at);

/* How the span-log decoders read a textual id. */
typedef enum tw__id_base {
    TW__ID_AUTO = 0, /* hex; decimal when the text starts with '-' */
    TW__ID_HEX,
    TW__ID_DEC
} tw__id_base;

/* A trace id from text: hex of any case, 1..32 digits, left-padded; decimal
 * when @base says so (or AUTO and the text starts with '-'): a signed
 * 64-bit value maps by two's complement, an unsigned one up to 2^64-1 is
 * taken as is. All zeros is an error. On error returns false and writes a
 * reason (quoting the text, made printable) to @why. */
bool tw__parse_trace_id(const char *text, size_t len, tw__id_base base, uint64_t *high,
                        uint64_t *low, char *why, size_t why_size);
/* A span or parent id: the same rules, at most 16 hex digits. @allow_zero:
 * a zero value is valid (parents: zero means root). */
bool tw__parse_span_id(const char *text, size_t len, tw__id_base base, bool allow_zero,
                       uint64_t *id, char *why, size_t why_size);

#endif /* TW_WIRE_CORE_HEX_H */
