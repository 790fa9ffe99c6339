/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/utf8.h: the project's one UTF-8 validator and repairer.
 *
 * Every text format tracewire writes (Thrift strings, JSON) must carry
 * valid UTF-8: strict decoders (Python's Thrift, Java's, every JSON parser)
 * refuse anything else and the whole batch would be lost. Names, keys and
 * values come from applications and from files, so an invalid byte is
 * written as U+FFFD (one per bad byte, as Go's encoding/json and Jansson's
 * readers count them) instead of failing the span. The rules are RFC 3629's
 * (and Jansson's utf.c): no overlong forms, no surrogates, nothing above
 * U+10FFFF. U+0000 is valid UTF-8 and kept (the model stores lengths).
 *
 * No state, no locks: any thread.
 */
#ifndef TW_WIRE_CORE_UTF8_H
#define TW_WIRE_CORE_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wire/core/buf.h"

/* The UTF-8 encoding of U+FFFD, what an invalid byte becomes. */
#define TW__UTF8_REPLACEMENT "\xef\xbf\xbd"

/* Length of the valid UTF-8 sequence at @s (at most @len >= 1 bytes), or 0
 * when it is not one. */
size_t tw__utf8_sequence(const unsigned char *s, size_t len);

/* Length of the longest valid UTF-8 prefix of @s (ASCII is checked eight
 * bytes at a time). */
size_t tw__utf8_valid_prefix(const char *s, size_t len);

static inline bool tw__utf8_is_valid(const char *s, size_t len)
{
    /* ASCII, the common case of names, keys and values, eight bytes at a
     * time; anything else through the full check. */
    uint64_t any = 0;
    if (len >= 8) {
        size_t i = 0;
        for (; i + 8 <= len; i += 8) {
            uint64_t x;
            memcpy(&x, s + i, 8);
            any |= x;
        }
        /* The tail as the last eight bytes, overlapping ones already seen. */
        if (i < len) {
            uint64_t x;
            memcpy(&x, s + len - 8, 8);
            any |= x;
        }
    } else {
        /* Short text (most keys): four, two and one bytes, no byte loop. */
        size_t i = 0;
        if (len & 4) {
            uint32_t x;
            memcpy(&x, s, 4);
            any = x;
            i = 4;
        }
        if (len & 2) {
            uint16_t x;
            memcpy(&x, s + i, 2);
            any |= x;
            i += 2;
        }
        if (len & 1)
            any |= (unsigned char)s[i];
    }
    if (!(any & UINT64_C(0x8080808080808080)))
        return true;
    return tw__utf8_valid_prefix(s, len) == len;
}

/* Appends @len bytes of @s to @out with each byte that is not part of a
 * valid sequence replaced by U+FFFD; *n_repaired (nullable) counts them.
 * False on allocation failure (out may hold part of the text). */
bool tw__utf8_repair_append(tw__buf *out, const char *s, size_t len, size_t *n_repaired);

#endif /* TW_WIRE_CORE_UTF8_H */
