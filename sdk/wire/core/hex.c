/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/hex.c: hex ids (wire/core/hex.h): the digit table and the one
 * parser of hex ids (the propagation codecs' hot path, the span-log
 * decoders), the writers of 16- and 32-digit ids, and the readers' id rules
 * (hex or signed decimal, all zeros refused) with messages that quote the
 * bad text.
 *
 * No state, no locks.
 */
#include "wire/core/hex.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tracewire/common.h" /* TW_PRINTF */

/* ---- the digit table and the parser
 * ---------------------------------------------------------------------------------- */

#define H(v) (int8_t)(v)
#define U(v) (int8_t)(0x10 | (v))
/* clang-format off */
const int8_t tw__hex_value[256] = {
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    H(0), H(1), H(2), H(3), H(4), H(5), H(6), H(7), H(8), H(9), -1, -1, -1, -1, -1, -1,
    -1, U(10), U(11), U(12), U(13), U(14), U(15), -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, H(10), H(11), H(12), H(13), H(14), H(15), -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
};
/* clang-format on */
#undef H
#undef U

const char tw__hex_digits[16] = "0123456789abcdef";

tw__hex_error tw__parse_hex(const char *s, size_t n, size_t max_digits, bool lower_only,
                            uint64_t *hi, uint64_t *lo, size_t *bad_at)
{
    if (n == 0)
        return TW__HEX_EMPTY;
    if (n > max_digits)
        return TW__HEX_TOO_LONG;
    uint64_t h = 0, l = 0;
#ifdef TW__HEX8_SWAR
    /* Ids of 8, 16, 24 or 32 digits (nearly all: 16 and 32) eight digits
     * at a time, each group shifted into the 128-bit value, one test for
     * them all; any bad digit goes to the byte loops below, which locate
     * it. */
    if ((n & 7) == 0) {
        uint32_t v[4];
        uint64_t bad = 0;
        size_t groups = n / 8;
        if (groups == 2) { /* unrolled: span ids and 64-bit trace ids */
            bad = tw__hex8(s, lower_only, &v[0]) | tw__hex8(s + 8, lower_only, &v[1]);
            l = (uint64_t)v[0] << 32 | v[1];
        } else if (groups == 4) { /* 128-bit trace ids */
            bad = tw__hex8(s, lower_only, &v[0]) | tw__hex8(s + 8, lower_only, &v[1]) |
                  tw__hex8(s + 16, lower_only, &v[2]) | tw__hex8(s + 24, lower_only, &v[3]);
            h = (uint64_t)v[0] << 32 | v[1];
            l = (uint64_t)v[2] << 32 | v[3];
        } else {
            for (size_t g = 0; g < groups; g++) {
                bad |= tw__hex8(s + 8 * g, lower_only, &v[g]);
                h = (h << 32) | (l >> 32);
                l = (l << 32) | v[g];
            }
        }
        if (!bad) {
            if (hi)
                *hi = h;
            *lo = l;
            return TW__HEX_OK;
        }
        h = l = 0;
    }
#endif
    /* The last 16 digits are the low half, any before them the high half.
     * Hot path (every extract): no branch per digit; a bad digit shows in
     * `seen` (-1 sets the sign bit, an upper-case one bit 4) and is located
     * afterwards. */
    size_t split = n > 16 ? n - 16 : 0, i = 0;
    int seen = 0;
    for (; i < split; i++) {
        int v = tw__hex_value[(unsigned char)s[i]];
        seen |= v;
        h = (h << 4) | (uint64_t)(v & 0xf);
    }
    for (; i < n; i++) {
        int v = tw__hex_value[(unsigned char)s[i]];
        seen |= v;
        l = (l << 4) | (uint64_t)(v & 0xf);
    }
    if (seen < 0 || (lower_only && (seen & 0x10))) {
        for (i = 0; i < n; i++) {
            int v = tw__hex_value[(unsigned char)s[i]];
            if (v < 0 || (lower_only && (v & 0x10))) {
                if (bad_at)
                    *bad_at = i;
                return v < 0 ? TW__HEX_BAD_DIGIT : TW__HEX_UPPER;
            }
        }
    }
    if (hi)
        *hi = h;
    *lo = l;
    return TW__HEX_OK;
}

/* ---- writing ----------------------------------------------------------------------------- */

void tw__hex64(uint64_t id, char out[17])
{
    tw__hex_u64(out, id);
    out[16] = '\0';
}

void tw__hex128(uint64_t high, uint64_t low, char out[33])
{
    tw__hex_u64(out, high);
    tw__hex_u64(out + 16, low);
    out[32] = '\0';
}

size_t tw__trace_id_hex(uint64_t high, uint64_t low, char out[33])
{
    if (high) {
        tw__hex128(high, low, out);
        return 32;
    }
    tw__hex64(low, out);
    return 16;
}

/* ---- the readers' id rules ------------------------------------------------------------------ */

static void why_set(char *why, size_t why_size, const char *fmt, ...) TW_PRINTF(3, 4);
static void why_set(char *why, size_t why_size, const char *fmt, ...)
{
    if (!why || why_size == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_size, fmt, ap);
    va_end(ap);
}

/* A short, printable excerpt of bad input for messages. */
static void quote(const char *text, size_t len, char *out, size_t size)
{
    size_t n = 0;
    for (size_t i = 0; i < len && n + 5 < size; i++) {
        unsigned char c = (unsigned char)text[i];
        out[n++] = (c >= 0x20 && c < 0x7f && c != '"') ? (char)c : '?';
        if (i == 40 && len > 44) {
            memcpy(out + n, "...", 3);
            n += 3;
            break;
        }
    }
    out[n] = '\0';
}

/* Decimal text (an optional '-') to the 64 bits it names: negative values
 * by two's complement, as old Zipkin logs wrote signed i64 ids. */
static bool parse_decimal(const char *text, size_t len, uint64_t *out, char *why, size_t why_size)
{
    char shown[64];
    quote(text, len, shown, sizeof shown);
    bool is_negative = len > 0 && text[0] == '-';
    size_t i = is_negative ? 1 : 0;
    if (i == len) {
        why_set(why, why_size, "\"%s\" is not a decimal number", shown);
        return false;
    }
    uint64_t v = 0;
    for (; i < len; i++) {
        if (text[i] < '0' || text[i] > '9') {
            why_set(why, why_size, "\"%s\" is not a decimal number", shown);
            return false;
        }
        unsigned d = (unsigned)(text[i] - '0');
        if (v > (UINT64_MAX - d) / 10) {
            why_set(why, why_size, "\"%s\" does not fit in 64 bits", shown);
            return false;
        }
        v = v * 10 + d;
    }
    if (is_negative) {
        if (v > (uint64_t)INT64_MAX + 1) {
            why_set(why, why_size, "\"%s\" is below the signed 64-bit range", shown);
            return false;
        }
        v = (uint64_t)0 - v;
    }
    *out = v;
    return true;
}

static bool parse_hex(const char *text, size_t len, size_t max_digits, uint64_t *high,
                      uint64_t *low, char *why, size_t why_size)
{
    char shown[64];
    switch (tw__parse_hex(text, len, max_digits, false, high, low, NULL)) {
    case TW__HEX_OK:
        return true;
    case TW__HEX_EMPTY:
        why_set(why, why_size, "empty id");
        return false;
    case TW__HEX_TOO_LONG:
        quote(text, len, shown, sizeof shown);
        why_set(why, why_size, "\"%s\" has %zu hex digits (at most %zu)", shown, len, max_digits);
        return false;
    default:
        quote(text, len, shown, sizeof shown);
        why_set(why, why_size, "\"%s\" is not hexadecimal", shown);
        return false;
    }
}

static bool use_decimal(const char *text, size_t len, tw__id_base base)
{
    if (base == TW__ID_DEC)
        return true;
    if (base == TW__ID_HEX)
        return false;
    return len > 0 && text[0] == '-';
}

bool tw__parse_trace_id(const char *text, size_t len, tw__id_base base, uint64_t *high,
                        uint64_t *low, char *why, size_t why_size)
{
    if (!text) {
        why_set(why, why_size, "missing id");
        return false;
    }
    uint64_t hi = 0, lo = 0;
    if (use_decimal(text, len, base)) {
        if (!parse_decimal(text, len, &lo, why, why_size))
            return false;
    } else if (!parse_hex(text, len, 32, &hi, &lo, why, why_size)) {
        return false;
    }
    if (hi == 0 && lo == 0) {
        why_set(why, why_size, "the trace id is all zeros");
        return false;
    }
    *high = hi;
    *low = lo;
    return true;
}

bool tw__parse_span_id(const char *text, size_t len, tw__id_base base, bool allow_zero,
                       uint64_t *id, char *why, size_t why_size)
{
    if (!text) {
        why_set(why, why_size, "missing id");
        return false;
    }
    uint64_t hi = 0, lo = 0;
    if (use_decimal(text, len, base)) {
        if (!parse_decimal(text, len, &lo, why, why_size))
            return false;
    } else if (!parse_hex(text, len, 16, &hi, &lo, why, why_size)) {
        return false;
    }
    if (lo == 0 && !allow_zero) {
        why_set(why, why_size, "the span id is all zeros");
        return false;
    }
    *id = lo;
    return true;
}
