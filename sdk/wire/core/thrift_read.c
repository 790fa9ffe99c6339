/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/thrift_read.c: the one Thrift reader, binary and compact
 * protocols (wire/core/thrift.h has the protocol facts and the contract).
 * The Jaeger Thrift decoder and the Zipkin v1 Thrift decoder walk their
 * structs with it. Pure functions over a caller's bounded byte range; no
 * allocation, no state beyond the reader, no locks.
 */
#include "wire/core/thrift.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void tw__thrift_reader_init(tw__thrift_reader *r, const uint8_t *data, size_t len,
                            tw__thrift_protocol proto, int max_depth)
{
    r->data = data;
    r->len = len;
    r->pos = 0;
    r->proto = proto;
    r->state = TW__THRIFT_OK;
    r->need = 0;
    r->err_at = 0;
    r->max_depth = max_depth;
    r->pending_bool = -1;
    r->why[0] = '\0';
}

bool tw__thrift_fail(tw__thrift_reader *r, tw__thrift_result state, size_t at, const char *fmt, ...)
{
    if (r->state != TW__THRIFT_OK)
        return false;
    r->state = state;
    r->err_at = at;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, sizeof r->why, fmt, ap);
    va_end(ap);
    return false;
}

static __attribute__((noinline)) bool short_of(tw__thrift_reader *r, size_t n)
{
    if (r->state != TW__THRIFT_OK)
        return false;
    r->need = n > SIZE_MAX - r->pos ? SIZE_MAX : r->pos + n;
    return tw__thrift_fail(r, TW__THRIFT_SHORT, r->pos, "the input ends inside a value");
}

/* The check every read makes first, inlined: a reader that has failed
 * reads nothing more, and a read past the end is SHORT. */
static inline bool need(tw__thrift_reader *r, size_t n)
{
    if (__builtin_expect(r->state == TW__THRIFT_OK && r->len - r->pos >= n, 1))
        return true;
    return short_of(r, n);
}

bool tw__thrift_need(tw__thrift_reader *r, size_t n)
{
    return need(r, n);
}

static inline bool get_byte(tw__thrift_reader *r, uint8_t *out)
{
    if (!need(r, 1))
        return false;
    *out = r->data[r->pos++];
    return true;
}

bool tw__thrift_read_byte(tw__thrift_reader *r, uint8_t *out)
{
    return get_byte(r, out);
}

static uint64_t be_bytes(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

static __attribute__((noinline)) bool varint_slow(tw__thrift_reader *r, size_t max_bytes,
                                                  uint64_t *out)
{
    size_t start = r->pos;
    uint64_t v = 0;
    for (size_t i = 0; i < max_bytes; i++) {
        uint8_t b;
        if (!get_byte(r, &b))
            return false;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return tw__thrift_fail(r, TW__THRIFT_MALFORMED, start, "varint longer than %zu bytes",
                           max_bytes);
}

/* An unsigned varint of at most @max_bytes bytes (5 for 32 bits, 10 for 64).
 * Most are one byte (field ids, lengths, tag types); when @max_bytes are
 * left, no byte needs its own bounds check. */
static inline bool read_varint(tw__thrift_reader *r, size_t max_bytes, uint64_t *out)
{
    if (__builtin_expect(r->state != TW__THRIFT_OK || r->len - r->pos < max_bytes, 0))
        return varint_slow(r, max_bytes, out);
    const uint8_t *p = r->data + r->pos;
    if (!(p[0] & 0x80)) {
        r->pos++;
        *out = p[0];
        return true;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < max_bytes; i++) {
        v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            r->pos += i + 1;
            *out = v;
            return true;
        }
    }
    return tw__thrift_fail(r, TW__THRIFT_MALFORMED, r->pos, "varint longer than %zu bytes",
                           max_bytes);
}

static int64_t unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

bool tw__thrift_read_int_any(tw__thrift_reader *r, int bits, int64_t *out)
{
    if (r->proto == TW__THRIFT_BINARY) {
        size_t n = (size_t)bits / 8;
        if (!need(r, n))
            return false;
        const uint8_t *p = r->data + r->pos;
        r->pos += n;
        if (bits == 16)
            *out = (int16_t)(uint16_t)tw__thrift__load_be(p, 2);
        else if (bits == 32)
            *out = (int32_t)(uint32_t)tw__thrift__load_be(p, 4);
        else
            *out = (int64_t)tw__thrift__load_be(p, 8);
        return true;
    }
    size_t start = r->pos;
    uint64_t v = 0;
    if (!read_varint(r, bits == 64 ? 10 : 5, &v))
        return false;
    int64_t s = unzigzag(v);
    if ((bits == 16 && (s < INT16_MIN || s > INT16_MAX)) ||
        (bits == 32 && (s < INT32_MIN || s > INT32_MAX)))
        return tw__thrift_fail(r, TW__THRIFT_MALFORMED, start, "i%d varint out of range", bits);
    *out = s;
    return true;
}

bool tw__thrift_read_double(tw__thrift_reader *r, double *out)
{
    if (!need(r, 8))
        return false;
    uint64_t bits;
    if (r->proto == TW__THRIFT_BINARY) {
        bits = be_bytes(r->data + r->pos, 8);
    } else {
        bits = 0;
        for (size_t i = 8; i > 0; i--)
            bits = (bits << 8) | r->data[r->pos + i - 1];
    }
    r->pos += 8;
    memcpy(out, &bits, sizeof *out);
    return true;
}

bool tw__thrift_read_bool(tw__thrift_reader *r, bool *out)
{
    if (r->proto == TW__THRIFT_COMPACT && r->pending_bool >= 0) {
        *out = r->pending_bool == 1;
        r->pending_bool = -1;
        return true;
    }
    uint8_t b;
    if (!get_byte(r, &b))
        return false;
    *out = r->proto == TW__THRIFT_COMPACT ? b == 1 : b != 0;
    return true;
}

/* A length or count: an i32 (binary) or a varint (compact); negative is
 * malformed. */
static bool read_size(tw__thrift_reader *r, const char *what, int64_t *n)
{
    size_t start = r->pos;
    if (r->proto == TW__THRIFT_BINARY) {
        if (!tw__thrift_read_int(r, 32, n))
            return false;
    } else {
        uint64_t u = 0;
        if (!read_varint(r, 5, &u))
            return false;
        *n = (int32_t)(uint32_t)u;
    }
    if (*n < 0)
        return tw__thrift_fail(r, TW__THRIFT_MALFORMED, start, "negative length %lld for %s",
                               (long long)*n, what);
    return true;
}

bool tw__thrift_read_bytes_any(tw__thrift_reader *r, const uint8_t **out, size_t *out_len)
{
    int64_t n;
    if (!read_size(r, "a string", &n) || !need(r, (size_t)n))
        return false;
    *out = r->data + r->pos;
    *out_len = (size_t)n;
    r->pos += (size_t)n;
    return true;
}

static int compact_to_type(uint8_t t)
{
    static const int map[13] = {-1,        TW__T_BOOL, TW__T_BOOL,   TW__T_BYTE,   TW__T_I16,
                                TW__T_I32, TW__T_I64,  TW__T_DOUBLE, TW__T_STRING, TW__T_LIST,
                                TW__T_SET, TW__T_MAP,  TW__T_STRUCT};
    return t < 13 ? map[t] : -1;
}

static inline bool is_type(int t)
{
    /* Bit t set for BOOL 2, BYTE 3, DOUBLE 4, I16 6, I32 8, I64 10, STRING 11,
     * STRUCT 12, MAP 13, SET 14, LIST 15. */
    _Static_assert(TW__T_BOOL == 2 && TW__T_BYTE == 3 && TW__T_DOUBLE == 4 && TW__T_I16 == 6 &&
                       TW__T_I32 == 8 && TW__T_I64 == 10 && TW__T_STRING == 11 &&
                       TW__T_STRUCT == 12 && TW__T_MAP == 13 && TW__T_SET == 14 && TW__T_LIST == 15,
                   "Thrift type ids");
    return t >= 0 && t < 16 && ((TW__THRIFT_TYPE_BITS >> t) & 1);
}

/* Fixed wire size of a scalar type (binary protocol), 0 for the others. */
static size_t fixed_size(const tw__thrift_reader *r, int t)
{
    if (t == TW__T_DOUBLE)
        return 8;
    if (r->proto == TW__THRIFT_COMPACT)
        return t == TW__T_BYTE ? 1 : 0; /* bools in containers too, but keep it simple */
    switch (t) {
    case TW__T_BOOL:
    case TW__T_BYTE:
        return 1;
    case TW__T_I16:
        return 2;
    case TW__T_I32:
        return 4;
    case TW__T_I64:
        return 8;
    default:
        return 0;
    }
}

/* Fewest bytes one value of type @t takes (bounds container sizes). */
static size_t min_size(const tw__thrift_reader *r, int t)
{
    size_t fixed = fixed_size(r, t);
    if (fixed)
        return fixed;
    if (r->proto == TW__THRIFT_COMPACT)
        return 1;
    switch (t) {
    case TW__T_STRING:
        return 4; /* the length */
    case TW__T_LIST:
    case TW__T_SET:
        return 5; /* element type, count */
    case TW__T_MAP:
        return 6; /* key type, value type, count */
    default:
        return 1; /* a struct's stop byte */
    }
}

bool tw__thrift_read_field_any(tw__thrift_reader *r, int *type, int16_t *id, int16_t *last_id)
{
    size_t start = r->pos;
    if (r->proto == TW__THRIFT_BINARY && r->state == TW__THRIFT_OK && r->len - r->pos >= 3) {
        /* The common case in one go: type byte and i16 id. */
        uint8_t b = r->data[start];
        if (b == 0) {
            r->pos++;
            *type = TW__T_STOP;
            return true;
        }
        if (is_type(b)) {
            *type = b;
            *id = (int16_t)(uint16_t)tw__thrift__load_be(r->data + start + 1, 2);
            r->pos += 3;
            return true;
        }
    }
    uint8_t b;
    if (!get_byte(r, &b))
        return false;
    if (b == 0) {
        *type = TW__T_STOP;
        return true;
    }
    if (r->proto == TW__THRIFT_BINARY) {
        if (!is_type(b))
            return tw__thrift_fail(r, TW__THRIFT_MALFORMED, start, "unknown field type %u", b);
        int64_t v;
        if (!tw__thrift_read_int(r, 16, &v))
            return false;
        *type = b;
        *id = (int16_t)v;
        return true;
    }
    int t = compact_to_type(b & 0x0f);
    if (t < 0)
        return tw__thrift_fail(r, TW__THRIFT_MALFORMED, start, "unknown field type %u", b & 0x0fu);
    uint8_t delta = b >> 4;
    if (delta) {
        *id = (int16_t)(*last_id + delta);
    } else {
        int64_t v;
        if (!tw__thrift_read_int(r, 16, &v))
            return false;
        *id = (int16_t)v;
    }
    *last_id = *id;
    *type = t;
    r->pending_bool = t == TW__T_BOOL ? ((b & 0x0f) == 1 ? 1 : 0) : -1;
    return true;
}

/* Whether @n elements of at least @each bytes can be present; SHORT when
 * the bytes left cannot hold them. */
static bool room_for(tw__thrift_reader *r, size_t n, size_t each)
{
    /* n < 2^31 and each <= 12: the product cannot overflow. */
    return n <= (r->len - r->pos) / each || need(r, n * each);
}

bool tw__thrift_read_list_any(tw__thrift_reader *r, int *elem_type, size_t *size)
{
    size_t start = r->pos;
    int64_t n;
    int t;
    uint8_t b;
    if (!get_byte(r, &b))
        return false;
    if (r->proto == TW__THRIFT_BINARY) {
        t = b;
        if (!read_size(r, "a list", &n))
            return false;
    } else {
        t = compact_to_type(b & 0x0f);
        n = b >> 4;
        if (n == 15 && !read_size(r, "a list", &n))
            return false;
    }
    if (n > 0 && (t < 0 || !is_type(t)))
        return tw__thrift_fail(r, TW__THRIFT_MALFORMED, start, "unknown element type %d", t);
    if (!room_for(r, (size_t)n, t < 0 ? 1 : min_size(r, t)))
        return false;
    *elem_type = t;
    *size = (size_t)n;
    return true;
}

bool tw__thrift_read_map(tw__thrift_reader *r, int *key_type, int *value_type, size_t *size)
{
    size_t start = r->pos;
    int64_t n;
    if (r->proto == TW__THRIFT_BINARY) {
        uint8_t k, v;
        if (!get_byte(r, &k) || !get_byte(r, &v) || !read_size(r, "a map", &n))
            return false;
        *key_type = k;
        *value_type = v;
    } else {
        if (!read_size(r, "a map", &n))
            return false;
        *key_type = *value_type = TW__T_BYTE;
        if (n > 0) {
            uint8_t b;
            if (!get_byte(r, &b))
                return false;
            *key_type = compact_to_type(b >> 4);
            *value_type = compact_to_type(b & 0x0f);
        }
    }
    if (n > 0 && (!is_type(*key_type) || !is_type(*value_type)))
        return tw__thrift_fail(r, TW__THRIFT_MALFORMED, start, "map of unknown key or value type");
    if (n > 0 && !room_for(r, (size_t)n, min_size(r, *key_type) + min_size(r, *value_type)))
        return false;
    *size = (size_t)n;
    return true;
}

static bool too_deep(tw__thrift_reader *r)
{
    return tw__thrift_fail(r, TW__THRIFT_MALFORMED, r->pos, "nested deeper than %d levels",
                           r->max_depth);
}

/* The fields of a struct at nesting @depth (<= max_depth), up to and with
 * its stop byte: what tw__thrift_skip(r, TW__T_STRUCT, depth) does, without
 * its dispatch, for the structs that lists hold. */
static bool skip_struct(tw__thrift_reader *r, int depth)
{
    /* Binary: the wire size of a fixed-size field type (bool, byte,
     * double, i16, i32, i64), 0 for the others. */
    static const uint8_t binary_fixed[16] = {0, 0, 1, 1, 8, 0, 2, 0, 4, 0, 8, 0, 0, 0, 0, 0};
    int16_t last = 0;
    int64_t i;
    const uint8_t *p;
    size_t n;
    for (;;) {
        int ft;
        int16_t id;
        if (!tw__thrift_read_field(r, &ft, &id, &last))
            return false;
        if (ft == TW__T_STOP)
            return true;
        /* The scalars most fields are, read inline; the rest (and
         * anything past the depth limit, which fails) recursively. */
        bool ok;
        if (depth >= r->max_depth)
            ok = too_deep(r);
        else if (r->proto == TW__THRIFT_BINARY && binary_fixed[ft & 15])
            ok = need(r, binary_fixed[ft & 15]) && (r->pos += binary_fixed[ft & 15], true);
        else if (ft == TW__T_I64 || ft == TW__T_I32 || ft == TW__T_I16)
            ok = tw__thrift_read_int(r, ft == TW__T_I64 ? 64 : ft == TW__T_I32 ? 32 : 16, &i);
        else if (ft == TW__T_STRING)
            ok = tw__thrift_read_bytes(r, &p, &n);
        else if (ft == TW__T_BOOL && r->proto == TW__THRIFT_COMPACT)
            ok = (r->pending_bool = -1, true); /* its value was in the header */
        else
            ok = tw__thrift_skip(r, ft, depth + 1);
        if (!ok)
            return false;
    }
}

bool tw__thrift_skip(tw__thrift_reader *r, int t, int depth)
{
    if (depth > r->max_depth)
        return too_deep(r);
    if (t == TW__T_STRUCT)
        return skip_struct(r, depth);
    size_t fixed = fixed_size(r, t);
    if (fixed && t != TW__T_BOOL) {
        if (!need(r, fixed))
            return false;
        r->pos += fixed;
        return true;
    }
    int64_t i;
    bool b;
    const uint8_t *p;
    size_t n = 0;
    switch (t) {
    case TW__T_BOOL:
        return tw__thrift_read_bool(r, &b);
    case TW__T_I16:
        return tw__thrift_read_int(r, 16, &i);
    case TW__T_I32:
        return tw__thrift_read_int(r, 32, &i);
    case TW__T_I64:
        return tw__thrift_read_int(r, 64, &i);
    case TW__T_STRING:
        return tw__thrift_read_bytes(r, &p, &n);
    case TW__T_LIST:
    case TW__T_SET: {
        int et;
        if (!tw__thrift_read_list(r, &et, &n))
            return false;
        size_t each = fixed_size(r, et);
        if (each && et != TW__T_BOOL) { /* checked present by read_list */
            r->pos += n * each;
            return true;
        }
        if (et == TW__T_STRUCT) { /* spans, tags, logs, annotations */
            if (n > 0 && depth + 1 > r->max_depth) {
                r->pending_bool = -1;
                return too_deep(r);
            }
            for (size_t k = 0; k < n; k++) {
                r->pending_bool = -1;
                if (!skip_struct(r, depth + 1))
                    return false;
            }
            return true;
        }
        for (size_t k = 0; k < n; k++) {
            r->pending_bool = -1;
            if (!tw__thrift_skip(r, et, depth + 1))
                return false;
        }
        return true;
    }
    case TW__T_MAP: {
        int kt, vt;
        if (!tw__thrift_read_map(r, &kt, &vt, &n))
            return false;
        for (size_t k = 0; k < n; k++) {
            r->pending_bool = -1;
            if (!tw__thrift_skip(r, kt, depth + 1))
                return false;
            r->pending_bool = -1;
            if (!tw__thrift_skip(r, vt, depth + 1))
                return false;
        }
        return true;
    }
    default:
        return tw__thrift_fail(r, TW__THRIFT_MALFORMED, r->pos, "unknown type %d", t);
    }
}

bool tw__thrift_read_message_begin(tw__thrift_reader *r, const uint8_t **name, size_t *name_len,
                                   int *type, int32_t *seq_id)
{
    size_t start = r->pos;
    int64_t seq;
    if (r->proto == TW__THRIFT_BINARY) {
        int64_t v;
        if (!tw__thrift_read_int(r, 32, &v))
            return false;
        if (v < 0) {
            if (((uint32_t)v & 0xffff0000u) != 0x80010000u)
                return tw__thrift_fail(r, TW__THRIFT_MALFORMED, start,
                                       "bad binary protocol version 0x%08x", (unsigned)v);
            *type = (int)((uint32_t)v & 0xff);
            if (!tw__thrift_read_bytes(r, name, name_len) || !tw__thrift_read_int(r, 32, &seq))
                return false;
        } else {
            r->pos = start; /* the old form: the i32 was the name's length */
            uint8_t b;
            if (!tw__thrift_read_bytes(r, name, name_len) || !get_byte(r, &b) ||
                !tw__thrift_read_int(r, 32, &seq))
                return false;
            *type = b;
        }
    } else {
        uint8_t id, vt;
        if (!get_byte(r, &id) || !get_byte(r, &vt))
            return false;
        if (id != 0x82 || (vt & 0x1f) != 1)
            return tw__thrift_fail(r, TW__THRIFT_MALFORMED, start,
                                   "not a compact protocol message header");
        *type = vt >> 5;
        uint64_t u;
        if (!read_varint(r, 5, &u) || !tw__thrift_read_bytes(r, name, name_len))
            return false;
        seq = (int32_t)(uint32_t)u;
    }
    *seq_id = (int32_t)seq;
    return true;
}
