/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/zipkin_thrift.c: the Zipkin v1 Thrift (TBinaryProtocol) decoder and
 * the v1 span builders; see zipkin_thrift.h for the layout, the rules and
 * the ownership. Pure functions over a bounded byte range: every length is
 * checked against the bytes left before anything is read or allocated, so a
 * claimed 2 GiB string in a 20-byte input is TW__ZIPKIN_SHORT, not an
 * allocation. No locks.
 */
#include "wire/zipkin/zipkin_v1_thrift.h"

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

static bool read_i16(cursor *c, int16_t *v, const char *what)
{
    if (!need(c, 2, what))
        return false;
    *v = (int16_t)(uint16_t)((unsigned)c->p[0] << 8 | c->p[1]);
    c->p += 2;
    return true;
}

static bool read_u32(cursor *c, uint32_t *v, const char *what)
{
    if (!need(c, 4, what))
        return false;
    *v = (uint32_t)c->p[0] << 24 | (uint32_t)c->p[1] << 16 | (uint32_t)c->p[2] << 8 | c->p[3];
    c->p += 4;
    return true;
}

static bool read_u64(cursor *c, uint64_t *v, const char *what)
{
    if (!need(c, 8, what))
        return false;
    uint64_t x = 0;
    for (int i = 0; i < 8; i++)
        x = x << 8 | c->p[i];
    c->p += 8;
    *v = x;
    return true;
}

/* A length or count: a negative i32 is malformed. */
static bool read_size(cursor *c, uint32_t *n, const char *what)
{
    if (!read_u32(c, n, what))
        return false;
    if (*n > INT32_MAX)
        return fail(c, TW__ZIPKIN_MALFORMED, "negative length %d for %s", (int32_t)*n, what);
    return true;
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
    for (;;) {
        uint8_t type;
        int16_t id;
        if (!read_u8(c, &type, "a field header"))
            return false;
        if (type == T_STOP)
            return true;
        if (!read_i16(c, &id, "a field header") || !skip_value(c, type, depth + 1))
            return false;
    }
}

/* Fixed wire size of a scalar type; 0 for the others. */
static size_t fixed_size(uint8_t type)
{
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
static size_t min_size(uint8_t type)
{
    size_t size = fixed_size(type);
    if (size)
        return size;
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
    if (!need(c, (size_t)n * min_size(type), "a container"))
        return false;
    size_t size = fixed_size(type);
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
    if (n && !fixed_size(elem) && elem != T_STRING && elem != T_STRUCT && elem != T_MAP &&
        elem != T_SET && elem != T_LIST)
        return fail(c, TW__ZIPKIN_MALFORMED, "unknown element type %u", elem);
    return skip_elements(c, elem, n, depth);
}

static bool skip_value(cursor *c, uint8_t type, int depth)
{
    if (depth > MAX_DEPTH)
        return fail(c, TW__ZIPKIN_MALFORMED, "values nested more than %d deep", MAX_DEPTH);
    size_t size = fixed_size(type);
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
    switch (type) {
    case T_STRING:
        return read_bytes(c, &data, &len, "a string");
    case T_STRUCT:
        return skip_struct(c, depth + 1);
    case T_MAP:
        if (!read_u8(c, &k, "a map header") || !read_u8(c, &v, "a map header") ||
            !read_size(c, &n, "a map"))
            return false;
        if (n == 0)
            return true;
        if (!need(c, (size_t)n * (min_size(k) + min_size(v)), "a map"))
            return false;
        for (uint32_t i = 0; i < n; i++) {
            if (!skip_value(c, k, depth + 1) || !skip_value(c, v, depth + 1))
                return false;
        }
        return true;
    case T_SET:
    case T_LIST:
        if (!read_u8(c, &k, "a list header") || !read_size(c, &n, "a list"))
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
static bool field_begin(decoder *d, uint8_t *type, int16_t *id)
{
    if (!read_u8(&d->c, type, "a field header"))
        return false;
    if (*type == T_STOP)
        return true;
    return read_i16(&d->c, id, "a field header");
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
    tw__zipkin_endpoint *e = tw__zipkin_v1_new_endpoint(d->span);
    if (!e)
        return nomem(d);
    int saved = d->depth;
    d->depth = ENDPOINT_FIELD_DEPTH;
    for (;;) {
        uint8_t type;
        int16_t id = 0;
        if (!field_begin(d, &type, &id))
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
    int64_t ts = 0;
    const uint8_t *value = NULL;
    size_t value_len = 0;
    const tw__zipkin_endpoint *host = NULL;
    for (;;) {
        uint8_t type;
        int16_t id = 0;
        if (!field_begin(d, &type, &id))
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
    const uint8_t *key = NULL, *value = NULL;
    size_t key_len = 0, value_len = 0;
    int32_t ba_type = TW__ZIPKIN_STRING; /* absent: Zipkin's default reading is a string */
    const tw__zipkin_endpoint *host = NULL;
    for (;;) {
        uint8_t type;
        int16_t id = 0;
        if (!field_begin(d, &type, &id))
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
    if (!read_u8(&d->c, &elem, what) || !read_size(&d->c, &n, what))
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

tw__zipkin_decode tw__zipkin_thrift_decode_span(const uint8_t *data, size_t len,
                                                tw__zipkin_v1_span *out, size_t *size, char *why,
                                                size_t why_size)
{
    decoder d;
    cursor_init(&d.c, data, len, why, why_size);
    d.span = out;
    d.depth = SPAN_FIELD_DEPTH;
    tw__zipkin_v1_span_clear(out);
    for (;;) {
        uint8_t type;
        int16_t id = 0;
        if (!field_begin(&d, &type, &id))
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
            uint8_t b;
            ok = read_u8(&d.c, &b, "the debug flag");
            out->debug = ok && b != 0;
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
