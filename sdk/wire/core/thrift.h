/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/thrift.h: the project's one Thrift reader and one Thrift
 * writer, for both the binary and the compact protocol. The Jaeger codecs
 * (jaeger.thrift, agent.thrift) and the Zipkin v1 decoder (zipkincore.thrift)
 * are written on them; the IDL in thrift/ stays the source of truth of every
 * field id and type, and Apache Thrift c_glib stays the reference of the
 * bytes (docs/DEPENDENCIES.md, "Thrift: the direct writer").
 *
 * Protocol facts (Apache Thrift, doc/specs/thrift-binary-protocol.md and
 * thrift-compact-protocol.md):
 *   binary   field header: type byte (0 = stop), i16 id big-endian;
 *            integers big-endian; double 8 bytes big-endian; string/binary
 *            = i32 length + bytes; list/set = element type byte + i32 size;
 *            map = key type, value type, i32 size; bool = 1 byte. Message
 *            header: i32 0x8001_00TT, name, i32 seq id (or the old form:
 *            name, type byte, i32 seq id).
 *   compact  field header: id delta (high nibble; 0 = an i16 zigzag varint
 *            id follows) | type (low nibble; a bool field carries its value
 *            as the type, 1 true, 2 false); i16/i32/i64 = zigzag varints;
 *            double = 8 bytes little-endian; string = varint length + bytes;
 *            list/set = size (high nibble; 15 = a varint follows) | element
 *            type; map = varint size, then key type << 4 | value type when
 *            not empty; a bool in a container is one byte. Message header:
 *            0x82, version 1 | type << 5, varint seq id, name.
 * Types are carried as binary-protocol type ids (tw__thrift_type) in both.
 *
 * Reader: a cursor over a bounded byte range that tells "the bytes end
 * inside this value, more may complete it" (TW__THRIFT_SHORT, with how many
 * bytes are needed) from "these bytes cannot be valid" (MALFORMED, with the
 * offset and a reason). Every length and count is checked against the bytes
 * present before anything is read (so a claimed 2 GiB string in a 20-byte
 * input allocates nothing) and nesting is bounded. It allocates nothing:
 * strings come back as pointers into the input. Why not c_glib's protocol
 * objects for reading: they g_malloc the length a string claims before
 * checking the bytes exist (an abort on hostile input), make a GObject per
 * struct, and cannot say "read more".
 *
 * Writer: appends fields to a tw__buf, the protocol chosen at init. It
 * keeps the compact protocol's stack of last field ids (bounded depth) and
 * writes exactly c_glib's bytes (tests/unit/wire/test_thrift_write.c and
 * tests/fuzz/fuzz_thrift_write.c compare them on random messages).
 * Allocation failure sets `failed`; check it once at the end.
 *
 * Locking: none; a reader or writer belongs to one thread.
 */
#ifndef TW_WIRE_CORE_THRIFT_H
#define TW_WIRE_CORE_THRIFT_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tracewire/common.h"
#include "wire/core/buf.h"

typedef enum tw__thrift_protocol {
    TW__THRIFT_COMPACT = 0, /* Jaeger agent UDP 6831 */
    TW__THRIFT_BINARY = 1   /* Jaeger agent UDP 6832, collector HTTP, Zipkin v1 */
} tw__thrift_protocol;

/* Thrift types, by their binary-protocol ids. */
typedef enum tw__thrift_type {
    TW__T_STOP = 0,
    TW__T_BOOL = 2,
    TW__T_BYTE = 3,
    TW__T_DOUBLE = 4,
    TW__T_I16 = 6,
    TW__T_I32 = 8,
    TW__T_I64 = 10,
    TW__T_STRING = 11, /* also binary */
    TW__T_STRUCT = 12,
    TW__T_MAP = 13,
    TW__T_SET = 14,
    TW__T_LIST = 15
} tw__thrift_type;

/* Message types (Thrift TMessageType). */
enum { TW__THRIFT_CALL = 1, TW__THRIFT_REPLY = 2, TW__THRIFT_EXCEPTION = 3, TW__THRIFT_ONEWAY = 4 };

/* How a Thrift read (and the decoders on it) ended. */
typedef enum tw__thrift_result {
    TW__THRIFT_OK = 0,
    TW__THRIFT_SHORT,     /* the bytes end inside the value; more may complete it */
    TW__THRIFT_MALFORMED, /* not valid whatever follows */
    TW__THRIFT_NOMEM,
    TW__THRIFT_STOPPED /* a decoder's callback asked to stop */
} tw__thrift_result;

/* Strings, binaries and containers carry i32 sizes. */
#define TW__THRIFT_MAX_LEN ((size_t)INT32_MAX)

/* ---- reading ------------------------------------------------------------------------------ */

typedef struct tw__thrift_reader {
    const uint8_t *data;
    size_t len;
    size_t pos;
    tw__thrift_protocol proto;
    tw__thrift_result state; /* the first failure; TW__THRIFT_OK while fine */
    size_t need;             /* SHORT: bytes needed, counted from data */
    size_t err_at;           /* SHORT, MALFORMED: offset of the value that failed */
    int max_depth;           /* nesting allowed to tw__thrift_skip */
    int pending_bool;        /* compact: a bool field's value from its header; -1 none */
    char why[192];           /* SHORT, MALFORMED: the reason, without the offset */
} tw__thrift_reader;

void tw__thrift_reader_init(tw__thrift_reader *r, const uint8_t *data, size_t len,
                            tw__thrift_protocol proto, int max_depth);
/* Records the first failure (@state SHORT, MALFORMED or NOMEM) at offset
 * @at with a reason; returns false so that callers can `return fail(...)`. */
bool tw__thrift_fail(tw__thrift_reader *r, tw__thrift_result state, size_t at, const char *fmt, ...)
    TW_PRINTF(4, 5);
/* True when @n more bytes are present; else the read is SHORT. */
bool tw__thrift_need(tw__thrift_reader *r, size_t n);

/* Each returns false once the reader has failed (state says why). */
bool tw__thrift_read_byte(tw__thrift_reader *r, uint8_t *out);
/* An i16, i32 or i64 (@bits 16, 32, 64); compact varints out of the type's
 * range are malformed. */
bool tw__thrift_read_int_any(tw__thrift_reader *r, int bits, int64_t *out);
bool tw__thrift_read_double(tw__thrift_reader *r, double *out);
/* A bool value: from the compact field header when there is one. */
bool tw__thrift_read_bool(tw__thrift_reader *r, bool *out);
/* A string or binary: a pointer into the input, not NUL-terminated. */
bool tw__thrift_read_bytes_any(tw__thrift_reader *r, const uint8_t **out, size_t *out_len);
/* A field header: *type TW__T_STOP at the end of the struct. @last_id: the
 * previous field id of this struct (compact deltas), 0 at its start. */
bool tw__thrift_read_field_any(tw__thrift_reader *r, int *type, int16_t *id, int16_t *last_id);
/* A list or set header; the size is checked against the bytes left (each
 * element takes at least one byte, or its fixed size). */
bool tw__thrift_read_list_any(tw__thrift_reader *r, int *elem_type, size_t *size);
bool tw__thrift_read_map(tw__thrift_reader *r, int *key_type, int *value_type, size_t *size);
/* Skips one value of @type at nesting @depth (malformed beyond max_depth). */
bool tw__thrift_skip(tw__thrift_reader *r, int type, int depth);
/* A message header: its name (a pointer into the input), type and seq id. */
bool tw__thrift_read_message_begin(tw__thrift_reader *r, const uint8_t **name, size_t *name_len,
                                   int *type, int32_t *seq_id);

/* The common cases of the three reads the decoders make most (a field
 * header, an integer, a string), inline in the decoders' loops, for both
 * protocols: binary, a field header whose type byte is a Thrift type, a
 * big-endian integer, a string whose non-negative length fits in the bytes
 * left; compact, a field header with an id delta, a varint that fits its
 * type, a string whose length is one varint byte. Every other case, and
 * every failure, goes to the _any function, which handles all of them
 * (tests/unit/wire/test_thrift_read.c checks that both agree on any bytes). */

/* Bit t set for the binary-protocol type ids 2..4, 6, 8, 10..15. */
#define TW__THRIFT_TYPE_BITS 0xfd5cu

/* The @n big-endian bytes at @p, for n = 2, 4 or 8 only: the sizes of
 * Thrift's i16, i32 and i64 (a byte is read as p[0], never through here).
 * The caller has checked that @n bytes are there. Another @n is a caller's
 * bug, caught by the assert in debug builds; in release builds it takes the
 * byte loop, which reads exactly @n bytes (the swaps would read 2 for
 * n == 1, one past what was checked). Every @n is a constant after
 * inlining, so the tests fold away. */
static inline uint64_t tw__thrift__load_be(const uint8_t *p, size_t n)
{
    assert(n == 2 || n == 4 || n == 8);
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (n == 8) {
        uint64_t x;
        memcpy(&x, p, 8);
        return __builtin_bswap64(x);
    }
    if (n == 4) {
        uint32_t x;
        memcpy(&x, p, 4);
        return __builtin_bswap32(x);
    }
    if (n == 2) {
        uint16_t x;
        memcpy(&x, p, 2);
        return __builtin_bswap16(x);
    }
#endif
    uint64_t v = 0;
    for (size_t i = 0; i < n && i < 8; i++)
        v = (v << 8) | p[i];
    return v;
}

static inline bool tw__thrift_read_field(tw__thrift_reader *r, int *type, int16_t *id,
                                         int16_t *last_id)
{
    if (r->state == TW__THRIFT_OK && r->pos < r->len) {
        uint8_t b = r->data[r->pos];
        if (b == 0) {
            r->pos++;
            *type = TW__T_STOP;
            return true;
        }
        if (r->proto == TW__THRIFT_BINARY) {
            if (b < 16 && ((TW__THRIFT_TYPE_BITS >> b) & 1) && r->len - r->pos >= 3) {
                *type = b;
                *id = (int16_t)(uint16_t)tw__thrift__load_be(r->data + r->pos + 1, 2);
                r->pos += 3;
                return true;
            }
        } else {
            /* compact type nibble -> type; 0 (and 13..15) are not field types */
            static const int8_t types[16] = {-1,           TW__T_BOOL, TW__T_BOOL, TW__T_BYTE,
                                             TW__T_I16,    TW__T_I32,  TW__T_I64,  TW__T_DOUBLE,
                                             TW__T_STRING, TW__T_LIST, TW__T_SET,  TW__T_MAP,
                                             TW__T_STRUCT, -1,         -1,         -1};
            int t = types[b & 0x0f];
            if ((b >> 4) != 0 && t >= 0) {
                r->pos++;
                *id = (int16_t)(*last_id + (b >> 4));
                *last_id = *id;
                *type = t;
                r->pending_bool = t == TW__T_BOOL ? ((b & 0x0f) == 1 ? 1 : 0) : -1;
                return true;
            }
        }
    }
    return tw__thrift_read_field_any(r, type, id, last_id);
}

/* @bits is 16, 32 or 64 (an i16, i32 or i64; a byte is tw__thrift_read_byte). */
static inline bool tw__thrift_read_int(tw__thrift_reader *r, int bits, int64_t *out)
{
    assert(bits == 16 || bits == 32 || bits == 64);
    if (r->proto == TW__THRIFT_BINARY) {
        size_t n = (size_t)bits / 8;
        if (r->state == TW__THRIFT_OK && r->len - r->pos >= n) {
            uint64_t v = tw__thrift__load_be(r->data + r->pos, n);
            r->pos += n;
            *out = bits == 64   ? (int64_t)v
                   : bits == 32 ? (int32_t)(uint32_t)v
                                : (int16_t)(uint16_t)v;
            return true;
        }
    } else if (r->state == TW__THRIFT_OK && r->len - r->pos >= 10) {
        const uint8_t *p = r->data + r->pos;
        uint64_t v = 0;
        for (size_t i = 0; i < 10; i++) {
            v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
            if (!(p[i] & 0x80)) {
                int64_t s = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
                bool fits =
                    bits == 64 || (i < 5 && (bits == 32 ? s >= INT32_MIN && s <= INT32_MAX
                                                        : s >= INT16_MIN && s <= INT16_MAX));
                if (fits) {
                    r->pos += i + 1;
                    *out = s;
                    return true;
                }
                break;
            }
        }
    }
    return tw__thrift_read_int_any(r, bits, out);
}

static inline bool tw__thrift_read_bytes(tw__thrift_reader *r, const uint8_t **out, size_t *out_len)
{
    if (r->state == TW__THRIFT_OK && r->pos < r->len) {
        size_t left = r->len - r->pos;
        if (r->proto == TW__THRIFT_BINARY) {
            if (left >= 4) {
                uint32_t n = (uint32_t)tw__thrift__load_be(r->data + r->pos, 4);
                if (n <= (uint32_t)INT32_MAX && left - 4 >= n) {
                    *out = r->data + r->pos + 4;
                    *out_len = n;
                    r->pos += (size_t)n + 4;
                    return true;
                }
            }
        } else {
            size_t n = r->data[r->pos];
            if (n < 0x80 && left - 1 >= n) {
                *out = r->data + r->pos + 1;
                *out_len = n;
                r->pos += n + 1;
                return true;
            }
        }
    }
    return tw__thrift_read_bytes_any(r, out, out_len);
}

/* A list header; inline for a list of structs (tags, spans, logs), the
 * lists the decoders read per span: compact, a size below 15 in the header
 * byte; binary, a non-negative i32 size. Each struct takes at least its
 * stop byte, so the size must not exceed the bytes left. */
static inline bool tw__thrift_read_list(tw__thrift_reader *r, int *elem_type, size_t *size)
{
    if (r->state == TW__THRIFT_OK && r->pos < r->len) {
        size_t left = r->len - r->pos;
        uint8_t b = r->data[r->pos];
        if (r->proto == TW__THRIFT_COMPACT) {
            size_t n = b >> 4;
            if ((b & 0x0f) == 12 && n < 15 && n <= left - 1) { /* 12: compact struct */
                r->pos++;
                *elem_type = TW__T_STRUCT;
                *size = n;
                return true;
            }
        } else if (b == TW__T_STRUCT && left >= 5) {
            uint32_t n = (uint32_t)tw__thrift__load_be(r->data + r->pos + 1, 4);
            if (n <= (uint32_t)INT32_MAX && n <= left - 5) {
                r->pos += 5;
                *elem_type = TW__T_STRUCT;
                *size = n;
                return true;
            }
        }
    }
    return tw__thrift_read_list_any(r, elem_type, size);
}

/* ---- writing ------------------------------------------------------------------------------ */

/* Structs nested deeper than this cannot be written (jaeger.thrift needs 4). */
#define TW__THRIFT_WRITE_MAX_DEPTH 16

typedef struct tw__thrift_writer {
    tw__buf *out;
    tw__thrift_protocol proto;
    bool failed; /* an allocation failed, a size did not fit i32 or structs nested too deep */
    int depth;   /* open structs */
    int16_t last_id[TW__THRIFT_WRITE_MAX_DEPTH + 1]; /* compact: last field id per struct */
} tw__thrift_writer;

/* Appends to @out (borrowed). */
void tw__thrift_writer_init(tw__thrift_writer *w, tw__thrift_protocol proto, tw__buf *out);

/* The writing functions are inline: the span encoder calls them two dozen
 * times per span, and a call each cost more than the bytes. Each makes room
 * for its largest encoding first and then writes without further checks.
 * Always inline: gcc -O2 kept some of them out of line (a call per field,
 * about 47 instructions each for an i32 field: callgrind, the Jaeger
 * Thrift writer), and with the field id and type constant at the call
 * site most of their branches fold. */
#if defined(__GNUC__)
#define TW__THRIFT_WRITE_INLINE static inline __attribute__((always_inline))
#else
#define TW__THRIFT_WRITE_INLINE static inline
#endif

/* Room for @n more bytes; false (and `failed`) when it cannot be made. */
TW__THRIFT_WRITE_INLINE bool tw__thrift_room(tw__thrift_writer *w, size_t n)
{
    if (w->out->cap - w->out->len >= n)
        return true;
    if (!w->failed && tw__buf_grow(w->out, n))
        return true;
    w->failed = true;
    return false;
}

/* Unchecked writers: the caller made room. */
TW__THRIFT_WRITE_INLINE void tw__thrift__byte(tw__thrift_writer *w, uint8_t b)
{
    w->out->data[w->out->len++] = b;
}

TW__THRIFT_WRITE_INLINE void tw__thrift__varint(tw__thrift_writer *w, uint64_t v)
{
    uint8_t *p = w->out->data + w->out->len;
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    w->out->len = (size_t)(p - w->out->data);
}

/* @n (2, 4 or 8) big-endian bytes of @v. */
TW__THRIFT_WRITE_INLINE void tw__thrift__be(tw__thrift_writer *w, uint64_t v, size_t n)
{
    uint8_t *p = w->out->data + w->out->len;
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (n == 8) {
        uint64_t x = __builtin_bswap64(v);
        memcpy(p, &x, 8);
    } else if (n == 4) {
        uint32_t x = __builtin_bswap32((uint32_t)v);
        memcpy(p, &x, 4);
    } else {
        uint16_t x = __builtin_bswap16((uint16_t)v);
        memcpy(p, &x, 2);
    }
#else
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
#endif
    w->out->len += n;
}

TW__THRIFT_WRITE_INLINE uint64_t tw__thrift__zigzag64(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

TW__THRIFT_WRITE_INLINE uint32_t tw__thrift__zigzag32(int32_t v)
{
    return ((uint32_t)v << 1) ^ (uint32_t)(v >> 31);
}

/* Compact protocol type ids, indexed by tw__thrift_type. */
TW__THRIFT_WRITE_INLINE uint8_t tw__thrift__ctype(tw__thrift_type t)
{
    static const uint8_t map[16] = {0, 0, 1, 3, 7, 0, 4, 0, 5, 0, 6, 8, 12, 11, 10, 9};
    return map[t & 15];
}

/* A field header; the compact type @ctype (a bool's carries its value). */
TW__THRIFT_WRITE_INLINE void tw__thrift__header(tw__thrift_writer *w, tw__thrift_type type,
                                                uint8_t ctype, int16_t id)
{
    if (w->proto == TW__THRIFT_BINARY) {
        tw__thrift__byte(w, (uint8_t)type);
        tw__thrift__be(w, (uint16_t)id, 2);
        return;
    }
    int16_t last = w->last_id[w->depth];
    if (id > last && id - last <= 15) {
        tw__thrift__byte(w, (uint8_t)((id - last) << 4 | ctype));
    } else {
        tw__thrift__byte(w, ctype);
        tw__thrift__varint(w, tw__thrift__zigzag32(id));
    }
    w->last_id[w->depth] = id;
}

/* A field header (not for bools: use tw__thrift_field_bool). */
TW__THRIFT_WRITE_INLINE void tw__thrift_field_begin(tw__thrift_writer *w, tw__thrift_type type,
                                                    int16_t id)
{
    if (tw__thrift_room(w, 4))
        tw__thrift__header(w, type, tw__thrift__ctype(type), id);
}

/* A struct nested in a field or list element: begin pushes the compact
 * protocol's field id state, end writes the stop byte and pops it. */
TW__THRIFT_WRITE_INLINE void tw__thrift_struct_begin(tw__thrift_writer *w)
{
    if (w->depth >= TW__THRIFT_WRITE_MAX_DEPTH) {
        w->failed = true;
        return;
    }
    w->last_id[++w->depth] = 0;
}

TW__THRIFT_WRITE_INLINE void tw__thrift_struct_end(tw__thrift_writer *w)
{
    if (tw__thrift_room(w, 1))
        tw__thrift__byte(w, 0); /* the stop field */
    if (w->depth > 0)
        w->depth--;
}

/* Values without a field header (list elements, message bodies). */
TW__THRIFT_WRITE_INLINE void tw__thrift_write_i32(tw__thrift_writer *w, int32_t v)
{
    if (!tw__thrift_room(w, 5))
        return;
    if (w->proto == TW__THRIFT_BINARY)
        tw__thrift__be(w, (uint32_t)v, 4);
    else
        tw__thrift__varint(w, tw__thrift__zigzag32(v));
}

TW__THRIFT_WRITE_INLINE void tw__thrift_write_i64(tw__thrift_writer *w, int64_t v)
{
    if (!tw__thrift_room(w, 10))
        return;
    if (w->proto == TW__THRIFT_BINARY)
        tw__thrift__be(w, (uint64_t)v, 8);
    else
        tw__thrift__varint(w, tw__thrift__zigzag64(v));
}

TW__THRIFT_WRITE_INLINE void tw__thrift_field_i32(tw__thrift_writer *w, int16_t id, int32_t v)
{
    if (!tw__thrift_room(w, 4 + 5))
        return;
    tw__thrift__header(w, TW__T_I32, 5, id);
    if (w->proto == TW__THRIFT_BINARY)
        tw__thrift__be(w, (uint32_t)v, 4);
    else
        tw__thrift__varint(w, tw__thrift__zigzag32(v));
}

TW__THRIFT_WRITE_INLINE void tw__thrift_field_i64(tw__thrift_writer *w, int16_t id, int64_t v)
{
    if (!tw__thrift_room(w, 4 + 10))
        return;
    tw__thrift__header(w, TW__T_I64, 6, id);
    if (w->proto == TW__THRIFT_BINARY)
        tw__thrift__be(w, (uint64_t)v, 8);
    else
        tw__thrift__varint(w, tw__thrift__zigzag64(v));
}

TW__THRIFT_WRITE_INLINE void tw__thrift_field_bool(tw__thrift_writer *w, int16_t id, bool v)
{
    if (!tw__thrift_room(w, 4 + 1))
        return;
    if (w->proto == TW__THRIFT_COMPACT) {
        tw__thrift__header(w, TW__T_BOOL, v ? 1 : 2, id);
        return;
    }
    tw__thrift__header(w, TW__T_BOOL, 0, id);
    tw__thrift__byte(w, v ? 1 : 0);
}

void tw__thrift_field_double(tw__thrift_writer *w, int16_t id, double v);

/* A string or binary value: its length, then its bytes. */
TW__THRIFT_WRITE_INLINE void tw__thrift_write_bytes(tw__thrift_writer *w, const void *data,
                                                    size_t len)
{
    if (len > TW__THRIFT_MAX_LEN) {
        w->failed = true;
        return;
    }
    if (!tw__thrift_room(w, 5 + len))
        return;
    if (w->proto == TW__THRIFT_BINARY)
        tw__thrift__be(w, (uint32_t)len, 4);
    else
        tw__thrift__varint(w, len);
    if (len) {
        memcpy(w->out->data + w->out->len, data, len);
        w->out->len += len;
    }
}

TW__THRIFT_WRITE_INLINE void tw__thrift_field_bytes(tw__thrift_writer *w, int16_t id,
                                                    const void *data, size_t len)
{
    tw__thrift_field_begin(w, TW__T_STRING, id);
    tw__thrift_write_bytes(w, data, len);
}

TW__THRIFT_WRITE_INLINE void tw__thrift_list_begin(tw__thrift_writer *w, tw__thrift_type elem_type,
                                                   size_t n)
{
    if (n > TW__THRIFT_MAX_LEN) {
        w->failed = true;
        return;
    }
    if (!tw__thrift_room(w, 6))
        return;
    if (w->proto == TW__THRIFT_BINARY) {
        tw__thrift__byte(w, (uint8_t)elem_type);
        tw__thrift__be(w, (uint32_t)n, 4);
    } else if (n < 15) {
        tw__thrift__byte(w, (uint8_t)(n << 4 | tw__thrift__ctype(elem_type)));
    } else {
        tw__thrift__byte(w, (uint8_t)(0xf0 | tw__thrift__ctype(elem_type)));
        tw__thrift__varint(w, n);
    }
}

/* A list<@elem_type> field's header and the list header. */
TW__THRIFT_WRITE_INLINE void tw__thrift_field_list(tw__thrift_writer *w, int16_t id,
                                                   tw__thrift_type elem_type, size_t n)
{
    tw__thrift_field_begin(w, TW__T_LIST, id);
    tw__thrift_list_begin(w, elem_type, n);
}

/* A message header (binary: the strict form, version 1). */
void tw__thrift_message_begin(tw__thrift_writer *w, const char *name, int type, int32_t seq_id);
/* Bytes that already form whole structs (pre-encoded spans), as they are. */
void tw__thrift_write_raw(tw__thrift_writer *w, const void *data, size_t len);

#endif /* TW_WIRE_CORE_THRIFT_H */
