/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/pb_write.h: writing the protobuf wire format directly into a
 * tw__buf (internal; the encoding of protobuf.dev "Encoding": varints,
 * tags, fixed 32/64-bit little-endian, length-delimited fields).
 *
 * Used by the OTLP protobuf encoder (wire/otlp/otlp_proto.c), which writes
 * bytes itself rather than building protobuf-c message structs per span
 * (its header says why and how it is checked against protobuf-c's packer).
 * Everything is written as protobuf-c's packer and the reference C++
 * implementation write it: fields in the order the caller gives (field
 * number order), minimal varints, packed nothing.
 *
 * Nested messages: pb_begin() writes the field's tag and one byte for the
 * length and returns its offset; pb_end() writes the real length there,
 * moving the message body up when the length needs more than one byte
 * (messages of 128 bytes and more). Strings are written as valid UTF-8:
 * each byte that does not start a valid sequence becomes U+FFFD, exactly
 * as the JSON encoders repair text (wire/core/utf8.h), because proto3
 * string fields must hold UTF-8 and Go and Java decoders refuse the whole
 * message otherwise.
 *
 * Errors: every function returns false on allocation failure and leaves
 * the buffer's bytes beyond the last complete field undefined; callers
 * reset or discard the buffer then. Locking: none.
 */
#ifndef TW_WIRE_CORE_PB_WRITE_H
#define TW_WIRE_CORE_PB_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/core/buf.h"
#include "wire/core/utf8.h" /* tw__utf8_sequence */

/* Wire types. */
enum { TW__PB_VARINT = 0, TW__PB_I64 = 1, TW__PB_LEN = 2, TW__PB_I32 = 5 };

/* The first byte(s) of a field: (number << 3) | wire type, itself a varint. */
#define TW__PB_TAG(number, wire_type) (((uint32_t)(number) << 3) | (uint32_t)(wire_type))

static inline size_t tw__pb_varint_size(uint64_t v)
{
    /* Seven bits a byte, without a loop: bits * 9 / 64 rounds up the same
     * way as bits / 7 for 1..64 bits (a batch's lengths take three bytes,
     * and the agent sizes a body on every span). */
    size_t bits = 64 - (size_t)__builtin_clzll(v | 1);
    return (bits * 9 + 64) / 64;
}

/* Capacity for @n more bytes (doubling). */
static inline bool tw__pb_reserve(tw__buf *b, size_t n)
{
    if (n <= b->cap - b->len)
        return true;
    if (n > SIZE_MAX / 2 - b->len)
        return false;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n)
        cap *= 2;
    uint8_t *grown = realloc(b->data, cap);
    if (!grown)
        return false;
    b->data = grown;
    b->cap = cap;
    return true;
}

/* Writes a varint into reserved space. */
static inline void tw__pb_raw_varint(tw__buf *b, uint64_t v)
{
    uint8_t *p = b->data + b->len;
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    b->len = (size_t)(p - b->data);
}

static inline bool tw__pb_varint_field(tw__buf *b, uint32_t number, uint64_t v)
{
    if (!tw__pb_reserve(b, 15))
        return false;
    tw__pb_raw_varint(b, TW__PB_TAG(number, TW__PB_VARINT));
    tw__pb_raw_varint(b, v);
    return true;
}

/* @v's 8 bytes little-endian (fixed64) or big-endian (ids) at @p: one store
 * where the host allows (a byte loop through b->data costs a reload of the
 * buffer per byte, the stores being chars that may alias it). */
static inline void tw__pb__store_le64(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, &v, 8);
#else
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
#endif
}

static inline void tw__pb__store_be64(uint8_t *p, uint64_t v)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
    memcpy(p, &v, 8);
#else
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * (7 - i)));
#endif
}

static inline bool tw__pb_fixed64_field(tw__buf *b, uint32_t number, uint64_t v)
{
    if (!tw__pb_reserve(b, 13))
        return false;
    tw__pb_raw_varint(b, TW__PB_TAG(number, TW__PB_I64));
    tw__pb__store_le64(b->data + b->len, v);
    b->len += 8;
    return true;
}

static inline bool tw__pb_double_field(tw__buf *b, uint32_t number, double d)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return tw__pb_fixed64_field(b, number, bits);
}

/* A length-delimited field holding @len bytes as they are. */
static inline bool tw__pb_bytes_field(tw__buf *b, uint32_t number, const void *data, size_t len)
{
    if (!tw__pb_reserve(b, 15 + len))
        return false;
    tw__pb_raw_varint(b, TW__PB_TAG(number, TW__PB_LEN));
    tw__pb_raw_varint(b, len);
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    return true;
}

/* An id as protobuf `bytes`: @n_words 64-bit words, big-endian, high first. */
static inline bool tw__pb_id_field(tw__buf *b, uint32_t number, uint64_t high, uint64_t low,
                                   bool is_128)
{
    if (!tw__pb_reserve(b, 2 + 16))
        return false;
    uint8_t *p = b->data + b->len;
    *p++ = (uint8_t)TW__PB_TAG(number, TW__PB_LEN);
    *p++ = is_128 ? 16 : 8;
    if (is_128) {
        tw__pb__store_be64(p, high);
        p += 8;
    }
    tw__pb__store_be64(p, low);
    b->len = (size_t)(p + 8 - b->data);
    return true;
}

/* The length of @len bytes of text once repaired to valid UTF-8 (each bad
 * byte becomes the 3 bytes of U+FFFD); *is_valid when nothing needs it. */
static inline size_t tw__pb_utf8_len(const char *text, size_t len, bool *is_valid)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0, bad = 0;
    while (i < len) {
        /* ASCII eight bytes at a time: most text is. */
        uint64_t x;
        if (len - i >= 8 && (memcpy(&x, s + i, 8), (x & 0x8080808080808080u) == 0)) {
            i += 8;
            continue;
        }
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        size_t n = tw__utf8_sequence(s + i, len - i);
        if (n == 0) {
            bad++;
            i++;
        } else {
            i += n;
        }
    }
    *is_valid = bad == 0;
    return len + 2 * bad;
}

/* A string field (proto3: written only when @is_always or not empty). */
static inline bool tw__pb_string_field(tw__buf *b, uint32_t number, const char *text, size_t len,
                                       bool is_always)
{
    if (len == 0 && !is_always)
        return true;
    bool is_valid;
    size_t out_len = tw__pb_utf8_len(text, len, &is_valid);
    if (is_valid)
        return tw__pb_bytes_field(b, number, text, len);
    if (!tw__pb_reserve(b, 15 + out_len))
        return false;
    tw__pb_raw_varint(b, TW__PB_TAG(number, TW__PB_LEN));
    tw__pb_raw_varint(b, out_len);
    const unsigned char *s = (const unsigned char *)text;
    uint8_t *p = b->data + b->len;
    for (size_t i = 0; i < len;) {
        size_t n = s[i] < 0x80 ? 1 : tw__utf8_sequence(s + i, len - i);
        if (n == 0) {
            memcpy(p, "\xef\xbf\xbd", 3);
            p += 3;
            i++;
        } else {
            memcpy(p, s + i, n);
            p += n;
            i += n;
        }
    }
    b->len = (size_t)(p - b->data);
    return true;
}

/* Starts a nested message field; returns the offset of its length byte
 * (SIZE_MAX on allocation failure). */
static inline size_t tw__pb_begin(tw__buf *b, uint32_t number)
{
    if (!tw__pb_reserve(b, 6))
        return SIZE_MAX;
    tw__pb_raw_varint(b, TW__PB_TAG(number, TW__PB_LEN));
    b->data[b->len] = 0;
    return b->len++;
}

/* Ends the nested message begun at @at (the offset pb_begin returned). */
static inline bool tw__pb_end(tw__buf *b, size_t at)
{
    if (at == SIZE_MAX)
        return false;
    size_t len = b->len - at - 1;
    if (len < 0x80) {
        b->data[at] = (uint8_t)len;
        return true;
    }
    size_t extra = tw__pb_varint_size(len) - 1;
    if (!tw__pb_reserve(b, extra))
        return false;
    memmove(b->data + at + 1 + extra, b->data + at + 1, len);
    size_t end = b->len + extra;
    b->len = at;
    tw__pb_raw_varint(b, len);
    b->len = end;
    return true;
}

#endif /* TW_WIRE_CORE_PB_WRITE_H */
