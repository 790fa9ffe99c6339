/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/zipkin_thrift.c: the Zipkin v1 Thrift (TBinaryProtocol) decoder and
 * the v1 span builders; see zipkin_thrift.h for the layout, the rules and
 * the ownership. Pure functions over a bounded byte range: every length is
 * checked against the bytes left before anything is read or allocated, so a
 * claimed 2 GiB string in a 20-byte input is TW__ZIPKIN_SHORT, not an
 * allocation. No locks.
 */
#include "wire/zipkin_thrift.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Thrift TType values. */
enum {
    T_STOP = 0,
    T_BOOL = 2,
    T_BYTE = 3,
    T_DOUBLE = 4,
    T_I16 = 6,
    T_I32 = 8,
    T_I64 = 10,
    T_STRING = 11,
    T_STRUCT = 12,
    T_MAP = 13,
    T_SET = 14,
    T_LIST = 15
};

#define MAX_DEPTH 64

/* ---- the span struct ------------------------------------------------------------------------ */

void tw__zipkin_v1_span_init(tw__zipkin_v1_span *s)
{
    memset(s, 0, offsetof(tw__zipkin_v1_span, arena));
    s->name = "";
    tw__arena_init_inline(&s->arena, s->inline_arena, sizeof s->inline_arena);
}

void tw__zipkin_v1_span_clear(tw__zipkin_v1_span *s)
{
    tw__arena_release(&s->arena);
    tw__zipkin_v1_span_init(s);
}

/* Grows an arena array by doubling (the old copy stays in the arena: at most
 * as much again, freed with it). */
static void *grow(tw__zipkin_v1_span *s, void *items, size_t n, size_t *cap, size_t elem)
{
    if (n < *cap)
        return items;
    size_t ncap = *cap ? *cap * 2 : 4;
    void *fresh = tw__arena_alloc(&s->arena, ncap * elem);
    if (!fresh)
        return NULL;
    if (n)
        memcpy(fresh, items, n * elem);
    *cap = ncap;
    return fresh;
}

static bool room_for_item(const tw__zipkin_v1_span *s)
{
    return s->n_annotations + s->n_binary_annotations < TW__ZIPKIN_MAX_ITEMS;
}

tw__zipkin_annotation *tw__zipkin_v1_add_annotation(tw__zipkin_v1_span *s)
{
    if (!room_for_item(s))
        return NULL;
    tw__zipkin_annotation *a =
        grow(s, s->annotations, s->n_annotations, &s->cap_annotations, sizeof *a);
    if (!a)
        return NULL;
    s->annotations = a;
    a = &s->annotations[s->n_annotations++];
    memset(a, 0, sizeof *a);
    a->value = "";
    return a;
}

tw__zipkin_binary_annotation *tw__zipkin_v1_add_binary_annotation(tw__zipkin_v1_span *s)
{
    if (!room_for_item(s))
        return NULL;
    tw__zipkin_binary_annotation *b = grow(s, s->binary_annotations, s->n_binary_annotations,
                                           &s->cap_binary_annotations, sizeof *b);
    if (!b)
        return NULL;
    s->binary_annotations = b;
    b = &s->binary_annotations[s->n_binary_annotations++];
    memset(b, 0, sizeof *b);
    b->key = "";
    b->type = TW__ZIPKIN_STRING;
    return b;
}

tw__zipkin_endpoint *tw__zipkin_v1_new_endpoint(tw__zipkin_v1_span *s)
{
    tw__zipkin_endpoint *e = tw__arena_alloc(&s->arena, sizeof *e);
    if (!e)
        return NULL;
    memset(e, 0, sizeof *e);
    e->service_name = "";
    return e;
}

char *tw__zipkin_v1_strdup(tw__zipkin_v1_span *s, const char *text, size_t len)
{
    return tw__arena_strndup(&s->arena, text, len);
}

/* ---- the byte cursor ------------------------------------------------------------------------ */

typedef struct cursor {
    const uint8_t *start, *p, *end;
    tw__zipkin_decode status; /* first failure; TW__ZIPKIN_DECODED while fine */
    char *why;
    size_t why_size;
    /* TCompactProtocol (the agent's emitZipkinBatch): varint integers,
     * delta field ids, bool fields in the field header. */
    bool compact;
    int has_bool; /* compact: a bool field's value came with its header: 0 none, 1 false, 2 true */
} cursor;

static bool fail(cursor *c, tw__zipkin_decode status, const char *fmt, ...) TW_PRINTF(3, 4);
static bool fail(cursor *c, tw__zipkin_decode status, const char *fmt, ...)
{
    if (c->status != TW__ZIPKIN_DECODED)
        return false;
    c->status = status;
    if (c->why && c->why_size) {
        int n = snprintf(c->why, c->why_size, "byte %zu: ", (size_t)(c->p - c->start));
        if (n >= 0 && (size_t)n < c->why_size) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(c->why + n, c->why_size - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return false;
}

static bool need(cursor *c, size_t n, const char *what)
{
    if ((size_t)(c->end - c->p) >= n)
        return true;
    return fail(c, TW__ZIPKIN_SHORT, "input ends inside %s", what);
}

static bool read_u8(cursor *c, uint8_t *v, const char *what)
{
    if (!need(c, 1, what))
        return false;
    *v = *c->p++;
    return true;
}

/* Compact: an unsigned LEB128 varint of at most @max_bytes. */
static bool read_varint(cursor *c, uint64_t *v, int max_bytes, const char *what)
{
    uint64_t x = 0;
    for (int i = 0; i < max_bytes; i++) {
        uint8_t b;
        if (!read_u8(c, &b, what))
            return false;
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *v = x;
            return true;
        }
    }
    return fail(c, TW__ZIPKIN_MALFORMED, "varint longer than %d bytes in %s", max_bytes, what);
}

static int64_t unzigzag(uint64_t n)
{
    return (int64_t)(n >> 1) ^ -(int64_t)(n & 1);
}

static bool read_i16(cursor *c, int16_t *v, const char *what)
{
    if (c->compact) {
        uint64_t x = 0;
        if (!read_varint(c, &x, 3, what))
            return false;
        *v = (int16_t)unzigzag(x);
        return true;
    }
    if (!need(c, 2, what))
        return false;
    *v = (int16_t)(uint16_t)((unsigned)c->p[0] << 8 | c->p[1]);
    c->p += 2;
    return true;
}

/* An i32 (binary: big-endian; compact: zigzag varint), as its bits. */
static bool read_u32(cursor *c, uint32_t *v, const char *what)
{
    if (c->compact) {
        uint64_t x = 0;
        if (!read_varint(c, &x, 5, what))
            return false;
        *v = (uint32_t)(int32_t)unzigzag(x);
        return true;
    }
    if (!need(c, 4, what))
        return false;
    *v = (uint32_t)c->p[0] << 24 | (uint32_t)c->p[1] << 16 | (uint32_t)c->p[2] << 8 | c->p[3];
    c->p += 4;
    return true;
}

static bool read_u64(cursor *c, uint64_t *v, const char *what)
{
    if (c->compact) {
        uint64_t x = 0;
        if (!read_varint(c, &x, 10, what))
            return false;
        *v = (uint64_t)unzigzag(x);
        return true;
    }
    if (!need(c, 8, what))
        return false;
    uint64_t x = 0;
    for (int i = 0; i < 8; i++)
        x = x << 8 | c->p[i];
    c->p += 8;
    *v = x;
    return true;
}

/* A length or count: a negative i32 is malformed. Compact lengths are
 * unsigned varints. */
static bool read_size(cursor *c, uint32_t *n, const char *what)
{
    if (c->compact) {
        uint64_t x = 0;
        if (!read_varint(c, &x, 5, what))
            return false;
        if (x > INT32_MAX)
            return fail(c, TW__ZIPKIN_MALFORMED, "length %llu too large for %s",
                        (unsigned long long)x, what);
        *n = (uint32_t)x;
        return true;
    }
    if (!read_u32(c, n, what))
        return false;
    if (*n > INT32_MAX)
        return fail(c, TW__ZIPKIN_MALFORMED, "negative length %d for %s", (int32_t)*n, what);
    return true;
}

/* Compact type ids to the binary protocol's TType (0: unknown). */
static uint8_t compact_type(uint8_t t)
{
    static const uint8_t map[13] = {0,        T_BOOL,   T_BOOL, T_BYTE, T_I16, T_I32,   T_I64,
                                    T_DOUBLE, T_STRING, T_LIST, T_SET,  T_MAP, T_STRUCT};
    return t < 13 ? map[t] : 0xff;
}

/* A field header: *type (T_STOP at the end of the struct) and *id. @last is
 * the previous field id of this struct (compact ids are deltas). */
static bool read_field(cursor *c, uint8_t *type, int16_t *id, int16_t *last)
{
    uint8_t b;
    if (!read_u8(c, &b, "a field header"))
        return false;
    if (!c->compact) {
        *type = b;
        return b == T_STOP || read_i16(c, id, "a field header");
    }
    c->has_bool = 0;
    if (b == 0) {
        *type = T_STOP;
        return true;
    }
    uint8_t t = b & 0x0f, delta = b >> 4;
    if (delta) {
        *id = (int16_t)(*last + delta);
    } else if (!read_i16(c, id, "a field header")) {
        return false;
    }
    *last = *id;
    *type = compact_type(t);
    if (*type == 0xff || *type == 0)
        return fail(c, TW__ZIPKIN_MALFORMED, "unknown compact field type %u", t);
    if (t == 1 || t == 2)
        c->has_bool = t == 1 ? 2 : 1;
    return true;
}

/* A bool value: compact bool fields carry it in their header. */
static bool read_bool(cursor *c, bool *v, const char *what)
{
    if (c->compact && c->has_bool) {
        *v = c->has_bool == 2;
        c->has_bool = 0;
        return true;
    }
    uint8_t b;
    if (!read_u8(c, &b, what))
        return false;
    *v = c->compact ? b == 1 : b != 0;
    return true;
}

/* A list or set header: element type (binary TType) and count. */
static bool read_list_header(cursor *c, uint8_t *elem, uint32_t *n, const char *what)
{
    if (!c->compact)
        return read_u8(c, elem, what) && read_size(c, n, what);
    uint8_t b;
    if (!read_u8(c, &b, what))
        return false;
    *elem = compact_type(b & 0x0f);
    if (*elem == 0xff || *elem == 0)
        return fail(c, TW__ZIPKIN_MALFORMED, "unknown compact element type %u", b & 0x0f);
    if ((b >> 4) != 0x0f) {
        *n = b >> 4;
        return true;
    }
    return read_size(c, n, what);
}

/* A string/binary: pointer into the input. */
static bool read_bytes(cursor *c, const uint8_t **data, size_t *len, const char *what)
{
    uint32_t n;
    if (!read_size(c, &n, what) || !need(c, n, what))
        return false;
    *data = c->p;
    *len = n;
    c->p += n;
    return true;
}

static bool skip_value(cursor *c, uint8_t type, int depth);

static bool skip_struct(cursor *c, int depth)
{
    if (depth > MAX_DEPTH)
        return fail(c, TW__ZIPKIN_MALFORMED, "structures nested more than %d deep", MAX_DEPTH);
    int16_t last = 0;
    for (;;) {
        uint8_t type;
        int16_t id = 0;
        if (!read_field(c, &type, &id, &last))
            return false;
        if (type == T_STOP)
            return true;
        if (!skip_value(c, type, depth + 1))
            return false;
    }
}

/* Fixed wire size of a scalar type; 0 for the others (and for compact's
 * varint integers). */
static size_t fixed_size(const cursor *c, uint8_t type)
{
    if (c->compact && (type == T_I16 || type == T_I32 || type == T_I64))
        return 0;
    switch (type) {
    case T_BOOL:
    case T_BYTE:
        return 1;
    case T_I16:
        return 2;
    case T_I32:
        return 4;
    case T_DOUBLE:
    case T_I64:
        return 8;
    default:
        return 0;
    }
}

/* The fewest bytes a value of @type takes on the wire. */
static size_t min_size(const cursor *c, uint8_t type)
{
    size_t size = fixed_size(c, type);
    if (size)
        return size;
    if (c->compact)
        return 1; /* a varint, a length, a list header or a STOP */
    switch (type) {
    case T_STRING:
        return 4; /* the length */
    case T_MAP:
        return 6; /* key type, value type, count */
    case T_SET:
    case T_LIST:
        return 5; /* element type, count */
    default:
        return 1; /* a struct's STOP */
    }
}

static bool skip_elements(cursor *c, uint8_t type, uint32_t n, int depth)
{
    /* A count larger than the bytes left can hold cannot be complete. */
    if (!need(c, (size_t)n * min_size(c, type), "a container"))
        return false;
    size_t size = fixed_size(c, type);
    if (size) {
        c->p += (size_t)n * size;
        return true;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!skip_value(c, type, depth))
            return false;
    }
    return true;
}

static bool skip_list_elements(cursor *c, uint8_t elem, uint32_t n, int depth)
{
    if (n && !fixed_size(c, elem) && elem != T_I16 && elem != T_I32 && elem != T_I64 &&
        elem != T_STRING && elem != T_STRUCT && elem != T_MAP && elem != T_SET && elem != T_LIST)
        return fail(c, TW__ZIPKIN_MALFORMED, "unknown element type %u", elem);
    return skip_elements(c, elem, n, depth);
}

static bool skip_value(cursor *c, uint8_t type, int depth)
{
    if (depth > MAX_DEPTH)
        return fail(c, TW__ZIPKIN_MALFORMED, "values nested more than %d deep", MAX_DEPTH);
    if (type == T_BOOL) {
        bool b;
        return read_bool(c, &b, "a bool");
    }
    size_t size = fixed_size(c, type);
    if (size) {
        if (!need(c, size, "a value"))
            return false;
        c->p += size;
        return true;
    }
    const uint8_t *data;
    size_t len;
    uint8_t k, v;
    uint32_t n;
    uint64_t x;
    switch (type) {
    case T_I16:
    case T_I32:
    case T_I64: /* compact only: binary ints have fixed sizes */
        return read_varint(c, &x, 10, "an integer");
    case T_STRING:
        return read_bytes(c, &data, &len, "a string");
    case T_STRUCT:
        return skip_struct(c, depth + 1);
    case T_MAP:
        if (c->compact) {
            uint8_t kv = 0;
            if (!read_size(c, &n, "a map"))
                return false;
            if (n && !read_u8(c, &kv, "a map header"))
                return false;
            k = compact_type(kv >> 4);
            v = compact_type(kv & 0x0f);
            if (n && (k == 0xff || v == 0xff || !k || !v))
                return fail(c, TW__ZIPKIN_MALFORMED, "unknown compact map types %u", kv);
        } else if (!read_u8(c, &k, "a map header") || !read_u8(c, &v, "a map header") ||
                   !read_size(c, &n, "a map")) {
            return false;
        }
        if (n == 0)
            return true;
        if (!need(c, (size_t)n * (min_size(c, k) + min_size(c, v)), "a map"))
            return false;
        for (uint32_t i = 0; i < n; i++) {
            if (!skip_value(c, k, depth + 1) || !skip_value(c, v, depth + 1))
                return false;
        }
        return true;
    case T_SET:
    case T_LIST:
        if (!read_list_header(c, &k, &n, "a list"))
            return false;
        return skip_list_elements(c, k, n, depth + 1);
    default:
        return fail(c, TW__ZIPKIN_MALFORMED, "unknown field type %u", type);
    }
}

/* ---- measuring ------------------------------------------------------------------------------ */

static void cursor_init(cursor *c, const uint8_t *data, size_t len, char *why, size_t why_size)
{
    c->start = c->p = data;
    c->end = data + len;
    c->status = TW__ZIPKIN_DECODED;
    c->why = why;
    c->why_size = why_size;
    c->compact = false;
    c->has_bool = 0;
    if (why && why_size)
        why[0] = '\0';
}

tw__zipkin_decode tw__zipkin_thrift_list_begin(const uint8_t *data, size_t len, uint32_t *count,
                                               size_t *size, char *why, size_t why_size)
{
    cursor c;
    cursor_init(&c, data, len, why, why_size);
    uint8_t type;
    if (read_u8(&c, &type, "a list header") && type != T_STRUCT)
        fail(&c, TW__ZIPKIN_MALFORMED, "list element type %u, expected 12 (Span struct)", type);
    if (c.status == TW__ZIPKIN_DECODED && read_size(&c, count, "a list header"))
        *size = (size_t)(c.p - c.start);
    return c.status;
}

tw__zipkin_decode tw__zipkin_thrift_measure_span(const uint8_t *data, size_t len, size_t *size,
                                                 char *why, size_t why_size)
{
    cursor c;
    cursor_init(&c, data, len, why, why_size);
    if (skip_struct(&c, 0))
        *size = (size_t)(c.p - c.start);
    return c.status;
}

/* ---- decoding ------------------------------------------------------------------------------- */

/* Depths at which measuring skips a field of a Span, of an (Binary)Annotation
 * and of their Endpoint; decoding skips at the same depths, so that both
 * meet the nesting limit at the same place. */
enum { SPAN_FIELD_DEPTH = 1, ITEM_FIELD_DEPTH = 4, ENDPOINT_FIELD_DEPTH = 6 };

typedef struct decoder {
    cursor c;
    tw__zipkin_v1_span *span;
    int depth; /* where an unknown field is skipped: one of the *_FIELD_DEPTH */
} decoder;

static bool nomem(decoder *d)
{
    return fail(&d->c, TW__ZIPKIN_NOMEM, "out of memory");
}

/* Reads a field header; *type 0 at the end of the struct. */
static bool field_begin(decoder *d, uint8_t *type, int16_t *id, int16_t *last)
{
    return read_field(&d->c, type, id, last);
}

static bool read_i64_field(decoder *d, uint8_t type, int64_t *v, bool *has)
{
    if (type != T_I64)
        return skip_value(&d->c, type, d->depth);
    uint64_t x;
    if (!read_u64(&d->c, &x, "an i64"))
        return false;
    *v = (int64_t)x;
    if (has)
        *has = true;
    return true;
}

static bool decode_endpoint(decoder *d, const tw__zipkin_endpoint **out)
{
    int16_t last = 0;
    tw__zipkin_endpoint *e = tw__zipkin_v1_new_endpoint(d->span);
    if (!e)
        return nomem(d);
    int saved = d->depth;
    d->depth = ENDPOINT_FIELD_DEPTH;
    for (;;) {
        uint8_t type;
        int16_t id = 0;
        if (!field_begin(d, &type, &id, &last))
            return false;
        if (type == T_STOP)
            break;
        const uint8_t *bytes;
        size_t len;
        uint32_t u32;
        int16_t i16;
        if (id == 1 && type == T_I32) {
            if (!read_u32(&d->c, &u32, "an Endpoint ipv4"))
                return false;
            e->ipv4 = u32;
        } else if (id == 2 && type == T_I16) {
            if (!read_i16(&d->c, &i16, "an Endpoint port"))
                return false;
            e->port = (uint16_t)i16; /* unsigned in practice [Z-TEP] */
        } else if (id == 3 && type == T_STRING) {
            if (!read_bytes(&d->c, &bytes, &len, "an Endpoint service_name"))
                return false;
            char *name = tw__zipkin_v1_strdup(d->span, (const char *)bytes, len);
            if (!name)
                return nomem(d);
            e->service_name = name;
            e->service_len = len;
        } else if (id == 4 && type == T_STRING) {
            if (!read_bytes(&d->c, &bytes, &len, "an Endpoint ipv6"))
                return false;
            if (len == 16) {
                memcpy(e->ipv6, bytes, 16);
                e->has_ipv6 = true;
            } else if (len) {
                d->span->bad_ipv6++;
            }
        } else if (!skip_value(&d->c, type, d->depth)) {
            return false;
        }
    }
    d->depth = saved;
    *out = e;
    return true;
}

static bool decode_annotation(decoder *d)
{
    int16_t last = 0;
    int64_t ts = 0;
    const uint8_t *value = NULL;
    size_t value_len = 0;
    const tw__zipkin_endpoint *host = NULL;
    for (;;) {
        uint8_t type;
        int16_t id = 0;
        if (!field_begin(d, &type, &id, &last))
            return false;
        if (type == T_STOP)
            break;
        bool ok;
        if (id == 1)
            ok = read_i64_field(d, type, &ts, NULL);
        else if (id == 2 && type == T_STRING)
            ok = read_bytes(&d->c, &value, &value_len, "an Annotation value");
        else if (id == 3 && type == T_STRUCT)
            ok = decode_endpoint(d, &host);
        else
            ok = skip_value(&d->c, type, d->depth);
        if (!ok)
            return false;
    }
    if (ts == 0 || value_len == 0) {
        d->span->dropped_annotations++;
        return true;
    }
    tw__zipkin_annotation *a = tw__zipkin_v1_add_annotation(d->span);
    if (!a) {
        if (!room_for_item(d->span))
            return fail(&d->c, TW__ZIPKIN_MALFORMED, "more than %u annotations in one span",
                        TW__ZIPKIN_MAX_ITEMS);
        return nomem(d);
    }
    a->timestamp_us = ts;
    a->value = (const char *)value;
    a->value_len = value_len;
    a->host = host;
    return true;
}

static bool decode_binary_annotation(decoder *d)
{
    int16_t last = 0;
    const uint8_t *key = NULL, *value = NULL;
    size_t key_len = 0, value_len = 0;
    int32_t ba_type = TW__ZIPKIN_STRING; /* absent: Zipkin's default reading is a string */
    const tw__zipkin_endpoint *host = NULL;
    for (;;) {
        uint8_t type;
        int16_t id = 0;
        if (!field_begin(d, &type, &id, &last))
            return false;
        if (type == T_STOP)
            break;
        bool ok;
        uint32_t u32;
        if (id == 1 && type == T_STRING) {
            ok = read_bytes(&d->c, &key, &key_len, "a BinaryAnnotation key");
        } else if (id == 2 && type == T_STRING) {
            ok = read_bytes(&d->c, &value, &value_len, "a BinaryAnnotation value");
        } else if (id == 3 && type == T_I32) {
            ok = read_u32(&d->c, &u32, "a BinaryAnnotation annotation_type");
            ba_type = (int32_t)u32;
        } else if (id == 4 && type == T_STRUCT) {
            ok = decode_endpoint(d, &host);
        } else {
            ok = skip_value(&d->c, type, d->depth);
        }
        if (!ok)
            return false;
    }
    if (key_len == 0) {
        d->span->dropped_annotations++;
        return true;
    }
    tw__zipkin_binary_annotation *b = tw__zipkin_v1_add_binary_annotation(d->span);
    if (!b) {
        if (!room_for_item(d->span))
            return fail(&d->c, TW__ZIPKIN_MALFORMED, "more than %u annotations in one span",
                        TW__ZIPKIN_MAX_ITEMS);
        return nomem(d);
    }
    char *k = tw__zipkin_v1_strdup(d->span, (const char *)key, key_len);
    if (!k)
        return nomem(d);
    b->key = k;
    b->key_len = key_len;
    b->value = value;
    b->value_len = value_len;
    b->type = ba_type;
    b->host = host;
    return true;
}

/* A list<struct> field: each element through @element. */
static bool decode_struct_list(decoder *d, uint8_t type, bool (*element)(decoder *d),
                               const char *what)
{
    if (type != T_LIST && type != T_SET)
        return skip_value(&d->c, type, SPAN_FIELD_DEPTH);
    uint8_t elem;
    uint32_t n;
    if (!read_list_header(&d->c, &elem, &n, what))
        return false;
    if (elem != T_STRUCT) /* not the IDL's type: skipped, as any mistyped field */
        return skip_list_elements(&d->c, elem, n, SPAN_FIELD_DEPTH + 1);
    /* Every element takes at least its STOP byte: a count larger than the
     * bytes left cannot be complete. */
    if (!need(&d->c, n, what))
        return false;
    d->depth = ITEM_FIELD_DEPTH;
    for (uint32_t i = 0; i < n; i++) {
        if (!element(d))
            return false;
    }
    d->depth = SPAN_FIELD_DEPTH;
    return true;
}

static tw__zipkin_decode decode_span(const uint8_t *data, size_t len, bool compact,
                                     tw__zipkin_v1_span *out, size_t *size, char *why,
                                     size_t why_size)
{
    decoder d;
    int16_t last = 0;
    cursor_init(&d.c, data, len, why, why_size);
    d.c.compact = compact;
    d.span = out;
    d.depth = SPAN_FIELD_DEPTH;
    tw__zipkin_v1_span_clear(out);
    for (;;) {
        uint8_t type;
        int16_t id = 0;
        if (!field_begin(&d, &type, &id, &last))
            break;
        if (type == T_STOP) {
            *size = (size_t)(d.c.p - d.c.start);
            return TW__ZIPKIN_DECODED;
        }
        bool ok;
        int64_t v;
        const uint8_t *name;
        size_t name_len;
        switch (id) {
        case 1:
            ok = read_i64_field(&d, type, &v, NULL);
            if (ok && type == T_I64)
                out->trace_id = (uint64_t)v;
            break;
        case 3:
            if (type != T_STRING) {
                ok = skip_value(&d.c, type, SPAN_FIELD_DEPTH);
                break;
            }
            ok = read_bytes(&d.c, &name, &name_len, "the Span name");
            if (ok) {
                out->name = (const char *)name;
                out->name_len = name_len;
            }
            break;
        case 4:
            ok = read_i64_field(&d, type, &v, NULL);
            if (ok && type == T_I64)
                out->id = (uint64_t)v;
            break;
        case 5:
            ok = read_i64_field(&d, type, &v, &out->has_parent_id);
            if (ok && type == T_I64)
                out->parent_id = (uint64_t)v;
            break;
        case 6:
            ok = decode_struct_list(&d, type, decode_annotation, "the annotations list");
            break;
        case 8:
            ok = decode_struct_list(&d, type, decode_binary_annotation,
                                    "the binary_annotations list");
            break;
        case 9:
            if (type != T_BOOL) {
                ok = skip_value(&d.c, type, SPAN_FIELD_DEPTH);
                break;
            }
            bool b = false;
            ok = read_bool(&d.c, &b, "the debug flag");
            out->debug = ok && b;
            break;
        case 10:
            ok = read_i64_field(&d, type, &out->timestamp_us, &out->has_timestamp);
            break;
        case 11:
            ok = read_i64_field(&d, type, &out->duration_us, &out->has_duration);
            break;
        case 12:
            ok = read_i64_field(&d, type, &v, NULL);
            if (ok && type == T_I64)
                out->trace_id_high = (uint64_t)v;
            break;
        default:
            ok = skip_value(&d.c, type, SPAN_FIELD_DEPTH);
            break;
        }
        if (!ok)
            break;
    }
    tw__zipkin_v1_span_clear(out);
    return d.c.status;
}

tw__zipkin_decode tw__zipkin_thrift_decode_span(const uint8_t *data, size_t len,
                                                tw__zipkin_v1_span *out, size_t *size, char *why,
                                                size_t why_size)
{
    return decode_span(data, len, false, out, size, why, why_size);
}

tw__zipkin_decode tw__zipkin_compact_decode_span(const uint8_t *data, size_t len,
                                                 tw__zipkin_v1_span *out, size_t *size, char *why,
                                                 size_t why_size)
{
    return decode_span(data, len, true, out, size, why, why_size);
}

tw__zipkin_decode tw__zipkin_compact_emit_begin(const uint8_t *data, size_t len, uint32_t *count,
                                                size_t *size, char *why, size_t why_size)
{
    static const char name[] = "emitZipkinBatch";
    cursor c;
    cursor_init(&c, data, len, why, why_size);
    c.compact = true;
    uint8_t b0, b1;
    if (!read_u8(&c, &b0, "the message header") || !read_u8(&c, &b1, "the message header"))
        return c.status;
    if (b0 != 0x82 || (b1 & 0x1f) != 1 || ((b1 >> 5) != 1 && (b1 >> 5) != 4)) {
        fail(&c, TW__ZIPKIN_MALFORMED,
             "not a compact Thrift CALL or ONEWAY message (bytes %02x %02x)", b0, b1);
        return c.status;
    }
    uint64_t seq;
    const uint8_t *text;
    size_t text_len;
    uint32_t n;
    if (!read_varint(&c, &seq, 5, "the message seq id") || !read_size(&c, &n, "the method name") ||
        !need(&c, n, "the method name"))
        return c.status;
    text = c.p;
    text_len = n;
    c.p += n;
    if (text_len != sizeof name - 1 || memcmp(text, name, text_len) != 0) {
        fail(&c, TW__ZIPKIN_MALFORMED, "method \"%.*s\", expected emitZipkinBatch",
             (int)(text_len > 64 ? 64 : text_len), (const char *)text);
        return c.status;
    }
    /* The args struct: field 1, list<Span>. */
    uint8_t type, elem;
    int16_t id = 0, last = 0;
    if (!read_field(&c, &type, &id, &last))
        return c.status;
    if (type != T_LIST || id != 1) {
        fail(&c, TW__ZIPKIN_MALFORMED, "emitZipkinBatch: field %d of type %u, expected 1 (list)",
             id, type);
        return c.status;
    }
    if (!read_list_header(&c, &elem, count, "the span list"))
        return c.status;
    if (elem != T_STRUCT) {
        fail(&c, TW__ZIPKIN_MALFORMED, "list element type %u, expected a Span struct", elem);
        return c.status;
    }
    *size = (size_t)(c.p - c.start);
    return c.status;
}
