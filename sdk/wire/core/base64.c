/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/base64.c: the project's one base64 codec (wire/core/base64.h):
 * binary tag values in every JSON format, Scribe log lines, OTLP ids
 * written by proto3 JSON libraries. No state, no locks.
 */
#include "wire/core/base64.h"

#include <stdlib.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Writes the base64 of @len bytes at @p (room for it checked by the caller);
 * returns the end. */
static char *encode(const uint8_t *data, size_t len, char *p)
{
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t)data[i] << 16 | (uint32_t)data[i + 1] << 8 | data[i + 2];
        *p++ = alphabet[v >> 18];
        *p++ = alphabet[(v >> 12) & 0x3f];
        *p++ = alphabet[(v >> 6) & 0x3f];
        *p++ = alphabet[v & 0x3f];
    }
    if (i < len) {
        uint32_t v = (uint32_t)data[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)data[i + 1] << 8;
        *p++ = alphabet[v >> 18];
        *p++ = alphabet[(v >> 12) & 0x3f];
        *p++ = i + 1 < len ? alphabet[(v >> 6) & 0x3f] : '=';
        *p++ = '=';
    }
    return p;
}

char *tw__base64(const uint8_t *data, size_t len)
{
    if (len > (SIZE_MAX - 1) / 4 * 3 - 3)
        return NULL;
    char *out = malloc((len + 2) / 3 * 4 + 1);
    if (!out)
        return NULL;
    *encode(data, len, out) = '\0';
    return out;
}

bool tw__base64_append(tw__buf *out, const uint8_t *data, size_t len)
{
    if (len > (SIZE_MAX - 1) / 4 * 3 - 3)
        return false;
    size_t n = (len + 2) / 3 * 4;
    if (!tw__buf_grow(out, n))
        return false;
    encode(data, len, (char *)out->data + out->len);
    out->len += n;
    return true;
}

static int base64_digit(unsigned char c, bool is_strict)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || (!is_strict && c == '-'))
        return 62;
    if (c == '/' || (!is_strict && c == '_'))
        return 63;
    return -1;
}

bool tw__base64_decode_into(const char *text, size_t len, bool is_strict, uint8_t *out,
                            size_t *out_len)
{
    size_t data_len = len;
    while (data_len > 0 && text[data_len - 1] == '=' && len - data_len < 2)
        data_len--;
    if (is_strict || data_len < len) {
        if (len % 4 != 0)
            return false; /* padding (always, when strict) completes the last quantum */
    }
    if (data_len % 4 == 1)
        return false;
    size_t n = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < data_len; i++) {
        int d = base64_digit((unsigned char)text[i], is_strict);
        if (d < 0)
            return false;
        acc = acc << 6 | (uint32_t)d;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (uint8_t)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    *out_len = n;
    return true;
}

bool tw__base64_decode(const char *text, size_t len, bool is_strict, uint8_t **out, size_t *out_len,
                       bool *is_nomem)
{
    *is_nomem = false;
    uint8_t *buf = malloc(len / 4 * 3 + 3);
    if (!buf) {
        *is_nomem = true;
        return false;
    }
    if (!tw__base64_decode_into(text, len, is_strict, buf, out_len)) {
        free(buf);
        return false;
    }
    *out = buf;
    return true;
}
