/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/utf8.c: UTF-8 validation and repair (wire/core/utf8.h). Used
 * by every text encoder of the wire layer and by the decoders that repair
 * their input before parsing it. No state, no locks.
 */
#include "wire/core/utf8.h"

#include <string.h>

size_t tw__utf8_sequence(const unsigned char *s, size_t len)
{
    unsigned char c = s[0];
    size_t n;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n > len)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

size_t tw__utf8_valid_prefix(const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    while (i < len) {
        /* ASCII, eight bytes at a time: most text is. */
        while (len - i >= 8) {
            uint64_t x;
            memcpy(&x, s + i, 8);
            if (x & UINT64_C(0x8080808080808080))
                break;
            i += 8;
        }
        if (i == len)
            break;
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        size_t n = tw__utf8_sequence(s + i, len - i);
        if (n == 0)
            return i;
        i += n;
    }
    return len;
}

bool tw__utf8_repair_append(tw__buf *out, const char *text, size_t len, size_t *n_repaired)
{
    size_t repaired = 0;
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    while (i < len) {
        size_t valid = tw__utf8_valid_prefix(text + i, len - i);
        if (!tw__buf_put(out, s + i, valid))
            return false;
        i += valid;
        if (i == len)
            break;
        if (!tw__buf_put(out, TW__UTF8_REPLACEMENT, 3))
            return false;
        repaired++;
        i++;
    }
    if (n_repaired)
        *n_repaired = repaired;
    return true;
}
