/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/zipkin/zipkin_v1_thrift.c: the Zipkin v1 Thrift decoder (TBinaryProtocol,
 * and TCompactProtocol for the Jaeger agent's emitZipkinBatch) and the v1
 * span builders; see zipkin_v1_thrift.h for the layout, the rules and
 * the ownership. Pure functions over a bounded byte range: every length is
 * checked against the bytes left before anything is read or allocated, so a
 * claimed 2 GiB string in a 20-byte input is TW__THRIFT_SHORT, not an
 * allocation. No locks.
 */
#include "wire/zipkin/zipkin_v1_thrift.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAX_DEPTH 64

/* ---- the span struct ------------------------------------------------------------------------ */

static void span_reset(tw__zipkin_v1_span *s)
{
    memset(s, 0, offsetof(tw__zipkin_v1_span, arena));
    s->name = "";
    tw__arena_init_inline(&s->arena, s->inline_arena, sizeof s->inline_arena);
}

void tw__zipkin_v1_span_init(tw__zipkin_v1_span *s)
{
    span_reset(s);
    for (size_t i = 0; i < TW__ZIPKIN_EP_CACHE; i++)
        s->ep_kept[i].raw_len = 0;
    s->ep_gen = 0;
}

void tw__zipkin_v1_span_clear(tw__zipkin_v1_span *s)
{
    tw__arena_release(&s->arena);
    span_reset(s);
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

/* ---- reading: the one Thrift reader (wire/core/thrift.h), binary protocol ------------------- */

/* The result of a read: the reason gets the byte offset in front. */
static tw__thrift_result finish(const tw__thrift_reader *r, char *why, size_t why_size)
{
    if (r->state != TW__THRIFT_OK && why && why_size)
        snprintf(why, why_size, "byte %zu: %s", r->err_at, r->why);
    return r->state;
}

static void reader_init(tw__thrift_reader *r, const uint8_t *data, size_t len,
                        tw__thrift_protocol proto, char *why, size_t why_size)
{
    tw__thrift_reader_init(r, data, len, proto, MAX_DEPTH);
    if (why && why_size)
        why[0] = '\0';
}

tw__thrift_result tw__zipkin_thrift_list_begin(const uint8_t *data, size_t len, uint32_t *count,
                                               size_t *size, char *why, size_t why_size)
{
    tw__thrift_reader r;
    reader_init(&r, data, len, TW__THRIFT_BINARY, why, why_size);
    int elem;
    size_t n;
    if (tw__thrift_read_list(&r, &elem, &n)) {
        if (elem != TW__T_STRUCT) {
            tw__thrift_fail(&r, TW__THRIFT_MALFORMED, 0,
                            "list element type %d, expected 12 (Span struct)", elem);
        } else {
            *count = (uint32_t)n;
            *size = r.pos;
        }
    }
    return finish(&r, why, why_size);
}

tw__thrift_result tw__zipkin_thrift_list_header(const uint8_t *data, size_t len, uint32_t *count,
                                                size_t *size, char *why, size_t why_size)
{
    tw__thrift_reader r;
    reader_init(&r, data, len, TW__THRIFT_BINARY, why, why_size);
    uint8_t elem;
    int64_t n;
    if (tw__thrift_read_byte(&r, &elem) && tw__thrift_read_int(&r, 32, &n)) {
        if (n < 0)
            tw__thrift_fail(&r, TW__THRIFT_MALFORMED, 1, "negative length %lld for a list",
                            (long long)n);
        else if (elem != TW__T_STRUCT)
            tw__thrift_fail(&r, TW__THRIFT_MALFORMED, 0,
                            "list element type %d, expected 12 (Span struct)", elem);
        else {
            *count = (uint32_t)n;
            *size = r.pos;
        }
    }
    return finish(&r, why, why_size);
}

tw__thrift_result tw__zipkin_thrift_measure_span(const uint8_t *data, size_t len, size_t *size,
                                                 char *why, size_t why_size)
{
    tw__thrift_reader r;
    reader_init(&r, data, len, TW__THRIFT_BINARY, why, why_size);
    if (tw__thrift_skip(&r, TW__T_STRUCT, 0))
        *size = r.pos;
    return finish(&r, why, why_size);
}

/* ---- decoding ------------------------------------------------------------------------------- */

/* Depths at which measuring skips a field of a Span, of an (Binary)Annotation
 * and of their Endpoint; decoding skips at the same depths, so that both
 * meet the nesting limit at the same place. */
enum { SPAN_FIELD_DEPTH = 1, ITEM_FIELD_DEPTH = 3, ENDPOINT_FIELD_DEPTH = 4 };

/* An Endpoint decoded earlier in this span (binary protocol only): its raw
 * bytes, the result, and the bad ipv6 values it counted. Instrumentation
 * repeats a span's two or three hosts in every annotation, so most Endpoints
 * are byte copies of a recent one; decoding is a function of those bytes
 * alone (the compact protocol's reader carries state across fields, hence
 * binary only). */
typedef struct endpoint_memo {
    const uint8_t *raw; /* NULL: empty slot */
    size_t len;
    const tw__zipkin_endpoint *decoded;
    size_t bad_ipv6;
    uint64_t head; /* the fast path's: the first 8 raw bytes, when len >= 8 */
} endpoint_memo;

#define N_MEMOS 4 /* the last distinct Endpoints, replaced round robin */

typedef struct decoder {
    tw__thrift_reader c;
    tw__zipkin_v1_span *span;
    int depth; /* where an unknown field is skipped: one of the *_FIELD_DEPTH */
    endpoint_memo memos[N_MEMOS];
    unsigned next_memo; /* the slot the next new Endpoint takes */
} decoder;

static bool nomem(decoder *d)
{
    return tw__thrift_fail(&d->c, TW__THRIFT_NOMEM, d->c.pos, "out of memory");
}

/* Reads a field header; *type 0 at the end of the struct. @last: the
 * previous field id of this struct (the compact protocol's deltas). */
static bool field_begin(decoder *d, int *type, int16_t *id, int16_t *last)
{
    return tw__thrift_read_field(&d->c, type, id, last);
}

static bool read_i64_field(decoder *d, int type, int64_t *v, bool *has)
{
    if (type != TW__T_I64)
        return tw__thrift_skip(&d->c, type, d->depth);
    int64_t x;
    if (!tw__thrift_read_int(&d->c, 64, &x))
        return false;
    *v = x;
    if (has)
        *has = true;
    return true;
}

static bool decode_endpoint_fields(decoder *d, const tw__zipkin_endpoint **out)
{
    tw__zipkin_endpoint *e = tw__zipkin_v1_new_endpoint(d->span);
    if (!e)
        return nomem(d);
    int saved = d->depth;
    d->depth = ENDPOINT_FIELD_DEPTH;
    int16_t last = 0;
    for (;;) {
        int type;
        int16_t id = 0;
        if (!field_begin(d, &type, &id, &last))
            return false;
        if (type == TW__T_STOP)
            break;
        const uint8_t *bytes;
        size_t len;
        int64_t v = 0;
        if (id == 1 && type == TW__T_I32) {
            if (!tw__thrift_read_int(&d->c, 32, &v))
                return false;
            e->ipv4 = (uint32_t)v;
        } else if (id == 2 && type == TW__T_I16) {
            if (!tw__thrift_read_int(&d->c, 16, &v))
                return false;
            e->port = (uint16_t)v; /* unsigned in practice */
        } else if (id == 3 && type == TW__T_STRING) {
            if (!tw__thrift_read_bytes(&d->c, &bytes, &len))
                return false;
            char *name = tw__zipkin_v1_strdup(d->span, (const char *)bytes, len);
            if (!name)
                return nomem(d);
            e->service_name = name;
            e->service_len = len;
        } else if (id == 4 && type == TW__T_STRING) {
            if (!tw__thrift_read_bytes(&d->c, &bytes, &len))
                return false;
            if (len == 16) {
                memcpy(e->ipv6, bytes, 16);
                e->has_ipv6 = true;
            } else if (len) {
                d->span->bad_ipv6++;
            }
        } else if (!tw__thrift_skip(&d->c, type, d->depth)) {
            return false;
        }
    }
    d->depth = saved;
    *out = e;
    return true;
}

/* The memo whose bytes the input at the read position starts with, or NULL. */
static const endpoint_memo *find_memo(const decoder *d)
{
    const uint8_t *at = d->c.data + d->c.pos;
    size_t left = d->c.len - d->c.pos;
    for (unsigned i = 0; i < N_MEMOS; i++) {
        const endpoint_memo *m = &d->memos[i];
        if (m->raw && left >= m->len && memcmp(at, m->raw, m->len) == 0)
            return m;
    }
    return NULL;
}

/* An Endpoint: a memo's when the bytes here repeat one decoded before. */
static bool decode_endpoint(decoder *d, const tw__zipkin_endpoint **out)
{
    const endpoint_memo *hit = d->c.state == TW__THRIFT_OK ? find_memo(d) : NULL;
    if (hit) {
        d->c.pos += hit->len;
        d->span->bad_ipv6 += hit->bad_ipv6;
        *out = hit->decoded;
        return true;
    }
    const uint8_t *at = d->c.data + d->c.pos;
    size_t bad_before = d->span->bad_ipv6;
    if (!decode_endpoint_fields(d, out))
        return false;
    if (d->c.proto == TW__THRIFT_BINARY) {
        d->memos[d->next_memo] = (endpoint_memo){at, (size_t)(d->c.data + d->c.pos - at), *out,
                                                 d->span->bad_ipv6 - bad_before, 0};
        d->next_memo = (d->next_memo + 1) % N_MEMOS;
    }
    return true;
}

static bool decode_annotation(decoder *d)
{
    int64_t ts = 0;
    const uint8_t *value = NULL;
    size_t value_len = 0;
    const tw__zipkin_endpoint *host = NULL;
    int16_t last = 0;
    for (;;) {
        int type;
        int16_t id = 0;
        if (!field_begin(d, &type, &id, &last))
            return false;
        if (type == TW__T_STOP)
            break;
        bool ok;
        if (id == 1)
            ok = read_i64_field(d, type, &ts, NULL);
        else if (id == 2 && type == TW__T_STRING)
            ok = tw__thrift_read_bytes(&d->c, &value, &value_len);
        else if (id == 3 && type == TW__T_STRUCT)
            ok = decode_endpoint(d, &host);
        else
            ok = tw__thrift_skip(&d->c, type, d->depth);
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
            return tw__thrift_fail(&d->c, TW__THRIFT_MALFORMED, d->c.pos,
                                   "more than %u annotations in one span", TW__ZIPKIN_MAX_ITEMS);
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
    int16_t last = 0;
    for (;;) {
        int type;
        int16_t id = 0;
        if (!field_begin(d, &type, &id, &last))
            return false;
        if (type == TW__T_STOP)
            break;
        bool ok;
        int64_t v = 0;
        if (id == 1 && type == TW__T_STRING) {
            ok = tw__thrift_read_bytes(&d->c, &key, &key_len);
        } else if (id == 2 && type == TW__T_STRING) {
            ok = tw__thrift_read_bytes(&d->c, &value, &value_len);
        } else if (id == 3 && type == TW__T_I32) {
            ok = tw__thrift_read_int(&d->c, 32, &v);
            ba_type = (int32_t)v;
        } else if (id == 4 && type == TW__T_STRUCT) {
            ok = decode_endpoint(d, &host);
        } else {
            ok = tw__thrift_skip(&d->c, type, d->depth);
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
            return tw__thrift_fail(&d->c, TW__THRIFT_MALFORMED, d->c.pos,
                                   "more than %u annotations in one span", TW__ZIPKIN_MAX_ITEMS);
        return nomem(d);
    }
    b->key = (const char *)key; /* into the input, as the value: no copy */
    b->key_len = key_len;
    b->value = value;
    b->value_len = value_len;
    b->type = ba_type;
    b->host = host;
    return true;
}

/* A list<struct> field: each element through @element. */
static bool decode_struct_list(decoder *d, int type, bool (*element)(decoder *d))
{
    if (type != TW__T_LIST && type != TW__T_SET)
        return tw__thrift_skip(&d->c, type, SPAN_FIELD_DEPTH);
    size_t at = d->c.pos;
    int elem;
    size_t n;
    if (!tw__thrift_read_list(&d->c, &elem, &n))
        return false;
    if (elem != TW__T_STRUCT) { /* not the IDL's type: skipped, as any mistyped field */
        d->c.pos = at;
        return tw__thrift_skip(&d->c, type, SPAN_FIELD_DEPTH);
    }
    d->depth = ITEM_FIELD_DEPTH;
    for (size_t i = 0; i < n; i++) {
        if (!element(d))
            return false;
    }
    d->depth = SPAN_FIELD_DEPTH;
    return true;
}

static tw__thrift_result decode_span(const uint8_t *data, size_t len, tw__thrift_protocol proto,
                                     tw__zipkin_v1_span *out, size_t *size, char *why,
                                     size_t why_size)
{
    decoder d;
    reader_init(&d.c, data, len, proto, why, why_size);
    d.span = out;
    d.depth = SPAN_FIELD_DEPTH;
    memset(d.memos, 0, sizeof d.memos);
    d.next_memo = 0;
    tw__zipkin_v1_span_clear(out);
    int16_t last = 0;
    for (;;) {
        int type;
        int16_t id = 0;
        if (!field_begin(&d, &type, &id, &last))
            break;
        if (type == TW__T_STOP) {
            *size = d.c.pos;
            return TW__THRIFT_OK;
        }
        bool ok;
        int64_t v = 0;
        const uint8_t *name;
        size_t name_len;
        switch (id) {
        case 1:
            ok = read_i64_field(&d, type, &v, NULL);
            if (ok && type == TW__T_I64)
                out->trace_id = (uint64_t)v;
            break;
        case 3:
            if (type != TW__T_STRING) {
                ok = tw__thrift_skip(&d.c, type, SPAN_FIELD_DEPTH);
                break;
            }
            ok = tw__thrift_read_bytes(&d.c, &name, &name_len);
            if (ok) {
                out->name = (const char *)name;
                out->name_len = name_len;
            }
            break;
        case 4:
            ok = read_i64_field(&d, type, &v, NULL);
            if (ok && type == TW__T_I64)
                out->id = (uint64_t)v;
            break;
        case 5:
            ok = read_i64_field(&d, type, &v, &out->has_parent_id);
            if (ok && type == TW__T_I64)
                out->parent_id = (uint64_t)v;
            break;
        case 6:
            ok = decode_struct_list(&d, type, decode_annotation);
            break;
        case 8:
            ok = decode_struct_list(&d, type, decode_binary_annotation);
            break;
        case 9:
            if (type != TW__T_BOOL) {
                ok = tw__thrift_skip(&d.c, type, SPAN_FIELD_DEPTH);
                break;
            }
            bool debug;
            ok = tw__thrift_read_bool(&d.c, &debug);
            out->debug = ok && debug;
            break;
        case 10:
            ok = read_i64_field(&d, type, &out->timestamp_us, &out->has_timestamp);
            break;
        case 11:
            ok = read_i64_field(&d, type, &out->duration_us, &out->has_duration);
            break;
        case 12:
            ok = read_i64_field(&d, type, &v, NULL);
            if (ok && type == TW__T_I64)
                out->trace_id_high = (uint64_t)v;
            break;
        default:
            ok = tw__thrift_skip(&d.c, type, SPAN_FIELD_DEPTH);
            break;
        }
        if (!ok)
            break;
    }
    tw__zipkin_v1_span_clear(out);
    return finish(&d.c, why, why_size);
}

/* ---- the binary fast path ------------------------------------------------------------------ */

/* The spans real instrumentation writes use the IDL's field ids and types
 * only, and a span is decoded once it is whole. For those, a reader over a
 * bare cursor with the binary protocol's layout written in: it was two
 * thirds of the Thrift decoding's instructions (callgrind) to go through
 * the protocol-neutral reader for every field header. Anything else (an
 * unknown or mistyped field, a set, a bad length, the input ending inside
 * the span, the item cap, no memory) makes it give up, and decode_span
 * decodes the span again from its first byte: the fast path only ever
 * answers when its answer is decode_span's (tests/unit/bridge/test_zipkin_v1.c
 * and tests/fuzz/fuzz_zipkin_v1_thrift.c compare the two). */
typedef struct fast {
    const uint8_t *p, *end;
    tw__zipkin_v1_span *span;
    endpoint_memo memos[N_MEMOS];
    unsigned next_memo;
} fast;

static inline size_t fast_left(const fast *f)
{
    return (size_t)(f->end - f->p);
}

/* A field header: *type 0 (and no id) at the end of a struct. */
static inline bool fast_field(fast *f, unsigned *type, int *id)
{
    const uint8_t *p = f->p;
    if (f->end - p >= 3) { /* one test for most headers, STOP or not */
        unsigned t = p[0];
        *type = t;
        if (t == TW__T_STOP) {
            f->p = p + 1;
            return true;
        }
        *id = (int16_t)(uint16_t)((unsigned)p[1] << 8 | p[2]);
        f->p = p + 3;
        return true;
    }
    if (p == f->end || p[0] != TW__T_STOP)
        return false;
    *type = TW__T_STOP;
    f->p = p + 1;
    return true;
}

static inline bool fast_int(fast *f, size_t n, uint64_t *v)
{
    if (fast_left(f) < n)
        return false;
    *v = tw__thrift__load_be(f->p, n);
    f->p += n;
    return true;
}

static inline bool fast_bytes(fast *f, const uint8_t **bytes, size_t *len)
{
    if (fast_left(f) < 4)
        return false;
    uint32_t n = (uint32_t)tw__thrift__load_be(f->p, 4);
    if (n > TW__THRIFT_MAX_LEN || n > fast_left(f) - 4)
        return false;
    *bytes = f->p + 4;
    *len = n;
    f->p += 4 + (size_t)n;
    return true;
}

static inline uint64_t load8(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* The @len bytes at @p (with @left >= len readable, @head their first 8
 * when len >= 8) are @raw's (@raw_head its first 8). */
static inline bool raw_equal(const uint8_t *p, uint64_t head, const uint8_t *raw, size_t len,
                             uint64_t raw_head)
{
    if (len < 8)
        return memcmp(p, raw, len) == 0;
    if (raw_head != head)
        return false;
    /* The rest 8 bytes a step, the last step overlapping the one before:
     * within both ranges, no call. */
    size_t k = 8;
    while (k + 8 < len && load8(p + k) == load8(raw + k))
        k += 8;
    return k + 8 >= len && load8(p + len - 8) == load8(raw + len - 8);
}

/* The memo of decode_endpoint, with the first 8 bytes compared inline
 * (Endpoints of different hosts mostly differ in the ipv4 there). */
static inline const endpoint_memo *fast_find_memo(const fast *f)
{
    size_t left = fast_left(f);
    uint64_t head = left >= 8 ? load8(f->p) : 0;
    for (unsigned i = 0; i < N_MEMOS; i++) {
        const endpoint_memo *m = &f->memos[i];
        if (m->raw && left >= m->len && raw_equal(f->p, head, m->raw, m->len, m->head))
            return m;
    }
    return NULL;
}

/* An Endpoint not in the memos: decoded, then remembered. */
static bool fast_endpoint_decode(fast *f, const tw__zipkin_endpoint **out)
{
    const uint8_t *at = f->p;
    size_t bad_ipv6 = 0;
    tw__zipkin_endpoint *e = tw__zipkin_v1_new_endpoint(f->span);
    if (!e)
        return false;
    for (;;) {
        unsigned type;
        int id = 0;
        uint64_t v;
        const uint8_t *bytes;
        size_t len;
        if (!fast_field(f, &type, &id))
            return false;
        if (type == TW__T_STOP)
            break;
        if (id == 1 && type == TW__T_I32) {
            if (!fast_int(f, 4, &v))
                return false;
            e->ipv4 = (uint32_t)v;
        } else if (id == 2 && type == TW__T_I16) {
            if (!fast_int(f, 2, &v))
                return false;
            e->port = (uint16_t)v;
        } else if (id == 3 && type == TW__T_STRING) {
            if (!fast_bytes(f, &bytes, &len))
                return false;
            char *name = tw__zipkin_v1_strdup(f->span, (const char *)bytes, len);
            if (!name)
                return false;
            e->service_name = name;
            e->service_len = len;
        } else if (id == 4 && type == TW__T_STRING) {
            if (!fast_bytes(f, &bytes, &len))
                return false;
            if (len == 16) {
                memcpy(e->ipv6, bytes, 16);
                e->has_ipv6 = true;
            } else if (len) {
                bad_ipv6++;
            }
        } else {
            return false;
        }
    }
    f->span->bad_ipv6 += bad_ipv6;
    size_t len = (size_t)(f->p - at);
    f->memos[f->next_memo] = (endpoint_memo){at, len, e, bad_ipv6, len >= 8 ? load8(at) : 0};
    f->next_memo = (f->next_memo + 1) % N_MEMOS;
    *out = e;
    return true;
}

/* The kept slot of the Endpoint whose first 8 bytes are @head. */
static inline tw__zipkin_endpoint_kept *kept_slot(tw__zipkin_v1_span *s, uint64_t head)
{
    return &s->ep_kept[(head * UINT64_C(0x9e3779b97f4a7c15)) >> (64 - TW__ZIPKIN_EP_SLOTS_LOG2)];
}

/* An Endpoint not in this span's memos: the kept one's when its bytes are
 * here (then remembered in the memos too), else decoded, and kept unless
 * its slot is handed out in this span (the span may point at it). */
static bool fast_endpoint_kept(fast *f, const tw__zipkin_endpoint **out)
{
    tw__zipkin_v1_span *s = f->span;
    size_t left = fast_left(f);
    uint64_t head = left >= 8 ? load8(f->p) : 0;
    tw__zipkin_endpoint_kept *k = kept_slot(s, head);
    if (k->raw_len && left >= k->raw_len && raw_equal(f->p, head, k->raw, k->raw_len, k->head)) {
        k->gen = s->ep_gen;
        f->memos[f->next_memo] = (endpoint_memo){f->p, k->raw_len, &k->e, k->bad_ipv6, k->head};
        f->next_memo = (f->next_memo + 1) % N_MEMOS;
        f->p += k->raw_len;
        s->bad_ipv6 += k->bad_ipv6;
        *out = &k->e;
        return true;
    }
    const uint8_t *at = f->p;
    size_t bad_before = s->bad_ipv6;
    if (!fast_endpoint_decode(f, out))
        return false;
    const tw__zipkin_endpoint *e = *out;
    size_t len = (size_t)(f->p - at);
    if (len > TW__ZIPKIN_EP_RAW_MAX || e->service_len > TW__ZIPKIN_EP_NAME_MAX ||
        (k->raw_len && k->gen == s->ep_gen))
        return true;
    k->e = *e;
    memcpy(k->name, e->service_name, e->service_len);
    k->name[e->service_len] = '\0';
    k->e.service_name = k->name;
    memcpy(k->raw, at, len);
    k->raw_len = len;
    k->head = head;
    k->bad_ipv6 = s->bad_ipv6 - bad_before;
    k->gen = s->ep_gen - 1; /* not handed out: this span has the arena's copy */
    return true;
}

#if defined(__GNUC__)
#define FAST_INLINE static inline __attribute__((always_inline))
#else
#define FAST_INLINE static inline
#endif

/* An Endpoint: a memo's when the bytes here repeat one decoded before (the
 * common case, inlined into the item decoders). */
FAST_INLINE bool fast_endpoint(fast *f, const tw__zipkin_endpoint **out)
{
    const endpoint_memo *hit = fast_find_memo(f);
    if (!hit)
        return fast_endpoint_kept(f, out);
    f->p += hit->len;
    f->span->bad_ipv6 += hit->bad_ipv6;
    *out = hit->decoded;
    return true;
}

/* A new item, not zeroed (the callers set every field): in place while
 * the array has room, else through the builders (growth, the item cap). */
static inline tw__zipkin_annotation *fast_add_annotation(tw__zipkin_v1_span *s)
{
    if (s->n_annotations < s->cap_annotations && room_for_item(s))
        return &s->annotations[s->n_annotations++];
    return tw__zipkin_v1_add_annotation(s);
}

static inline tw__zipkin_binary_annotation *fast_add_binary_annotation(tw__zipkin_v1_span *s)
{
    if (s->n_binary_annotations < s->cap_binary_annotations && room_for_item(s))
        return &s->binary_annotations[s->n_binary_annotations++];
    return tw__zipkin_v1_add_binary_annotation(s);
}

static bool fast_annotation(fast *f)
{
    uint64_t ts = 0;
    const uint8_t *value = NULL;
    size_t value_len = 0;
    const tw__zipkin_endpoint *host = NULL;
    for (;;) {
        unsigned type;
        int id = 0;
        if (!fast_field(f, &type, &id))
            return false;
        if (type == TW__T_STOP)
            break;
        bool ok;
        if (id == 1 && type == TW__T_I64)
            ok = fast_int(f, 8, &ts);
        else if (id == 2 && type == TW__T_STRING)
            ok = fast_bytes(f, &value, &value_len);
        else if (id == 3 && type == TW__T_STRUCT)
            ok = fast_endpoint(f, &host);
        else
            ok = false;
        if (!ok)
            return false;
    }
    if (ts == 0 || value_len == 0) {
        f->span->dropped_annotations++;
        return true;
    }
    tw__zipkin_annotation *a = fast_add_annotation(f->span);
    if (!a)
        return false;
    a->timestamp_us = (int64_t)ts;
    a->value = (const char *)value;
    a->value_len = value_len;
    a->host = host;
    return true;
}

static bool fast_binary_annotation(fast *f)
{
    const uint8_t *key = NULL, *value = NULL;
    size_t key_len = 0, value_len = 0;
    uint64_t ba_type = TW__ZIPKIN_STRING;
    const tw__zipkin_endpoint *host = NULL;
    for (;;) {
        unsigned type;
        int id = 0;
        if (!fast_field(f, &type, &id))
            return false;
        if (type == TW__T_STOP)
            break;
        bool ok;
        if (id == 1 && type == TW__T_STRING)
            ok = fast_bytes(f, &key, &key_len);
        else if (id == 2 && type == TW__T_STRING)
            ok = fast_bytes(f, &value, &value_len);
        else if (id == 3 && type == TW__T_I32)
            ok = fast_int(f, 4, &ba_type);
        else if (id == 4 && type == TW__T_STRUCT)
            ok = fast_endpoint(f, &host);
        else
            ok = false;
        if (!ok)
            return false;
    }
    if (key_len == 0) {
        f->span->dropped_annotations++;
        return true;
    }
    tw__zipkin_binary_annotation *b = fast_add_binary_annotation(f->span);
    if (!b)
        return false;
    b->key = (const char *)key;
    b->key_len = key_len;
    b->value = value;
    b->value_len = value_len;
    b->type = (int32_t)(uint32_t)ba_type;
    b->host = host;
    return true;
}

static bool fast_list(fast *f, bool (*element)(fast *f))
{
    if (fast_left(f) < 5 || f->p[0] != TW__T_STRUCT)
        return false;
    uint32_t n = (uint32_t)tw__thrift__load_be(f->p + 1, 4);
    if (n > TW__THRIFT_MAX_LEN || n > fast_left(f) - 5)
        return false;
    f->p += 5;
    for (uint32_t i = 0; i < n; i++) {
        if (!element(f))
            return false;
    }
    return true;
}

/* The Span at @data into @out (cleared first); false: give up (@out is
 * then partly filled, and decode_span clears it again). */
static bool fast_span(const uint8_t *data, size_t len, tw__zipkin_v1_span *out, size_t *size)
{
    fast f = {.p = data, .end = data + len, .span = out};
    tw__zipkin_v1_span_clear(out);
    out->ep_gen++; /* a new span: no kept Endpoint is handed out in it yet */
    for (;;) {
        unsigned type;
        int id = 0;
        uint64_t v;
        if (!fast_field(&f, &type, &id))
            return false;
        if (type == TW__T_STOP) {
            *size = (size_t)(f.p - data);
            return true;
        }
        bool ok;
        if (type == TW__T_I64 &&
            (id == 1 || id == 4 || id == 5 || id == 10 || id == 11 || id == 12)) {
            if (!fast_int(&f, 8, &v))
                return false;
            ok = true;
            switch (id) {
            case 1:
                out->trace_id = v;
                break;
            case 4:
                out->id = v;
                break;
            case 5:
                out->parent_id = v;
                out->has_parent_id = true;
                break;
            case 10:
                out->timestamp_us = (int64_t)v;
                out->has_timestamp = true;
                break;
            case 11:
                out->duration_us = (int64_t)v;
                out->has_duration = true;
                break;
            default:
                out->trace_id_high = v;
                break;
            }
        } else if (id == 3 && type == TW__T_STRING) {
            const uint8_t *name;
            size_t name_len;
            ok = fast_bytes(&f, &name, &name_len);
            if (ok) {
                out->name = (const char *)name;
                out->name_len = name_len;
            }
        } else if (id == 6 && type == TW__T_LIST) {
            ok = fast_list(&f, fast_annotation);
        } else if (id == 8 && type == TW__T_LIST) {
            ok = fast_list(&f, fast_binary_annotation);
        } else if (id == 9 && type == TW__T_BOOL) {
            ok = f.p < f.end; /* one byte, any non-zero value true */
            out->debug = ok && *f.p++ != 0;
        } else {
            ok = false;
        }
        if (!ok)
            return false;
    }
}

tw__thrift_result tw__zipkin_thrift_decode_span(const uint8_t *data, size_t len,
                                                tw__zipkin_v1_span *out, size_t *size, char *why,
                                                size_t why_size)
{
    if (fast_span(data, len, out, size)) {
        if (why && why_size)
            why[0] = '\0';
        return TW__THRIFT_OK;
    }
    return decode_span(data, len, TW__THRIFT_BINARY, out, size, why, why_size);
}

tw__thrift_result tw__zipkin_thrift_decode_span_slow(const uint8_t *data, size_t len,
                                                     tw__zipkin_v1_span *out, size_t *size,
                                                     char *why, size_t why_size)
{
    return decode_span(data, len, TW__THRIFT_BINARY, out, size, why, why_size);
}

tw__thrift_result tw__zipkin_compact_decode_span(const uint8_t *data, size_t len,
                                                 tw__zipkin_v1_span *out, size_t *size, char *why,
                                                 size_t why_size)
{
    return decode_span(data, len, TW__THRIFT_COMPACT, out, size, why, why_size);
}

tw__thrift_result tw__zipkin_compact_emit_begin(const uint8_t *data, size_t len, uint32_t *count,
                                                size_t *size, char *why, size_t why_size)
{
    static const char method[] = "emitZipkinBatch";
    tw__thrift_reader r;
    reader_init(&r, data, len, TW__THRIFT_COMPACT, why, why_size);
    const uint8_t *name;
    size_t name_len;
    int type, elem;
    int32_t seq_id;
    int16_t id = 0, last = 0;
    size_t n;
    if (!tw__thrift_read_message_begin(&r, &name, &name_len, &type, &seq_id))
        return finish(&r, why, why_size);
    if (type != TW__THRIFT_CALL && type != TW__THRIFT_ONEWAY) {
        tw__thrift_fail(&r, TW__THRIFT_MALFORMED, 1, "message type %d, expected CALL or ONEWAY",
                        type);
    } else if (name_len != sizeof method - 1 || memcmp(name, method, name_len) != 0) {
        tw__thrift_fail(&r, TW__THRIFT_MALFORMED, 2, "method \"%.*s\", expected %s",
                        (int)(name_len > 64 ? 64 : name_len), (const char *)name, method);
    } else if (tw__thrift_read_field(&r, &type, &id, &last)) {
        /* The args struct: field 1, list<Span>. */
        size_t at = r.pos;
        if (type != TW__T_LIST || id != 1) {
            tw__thrift_fail(&r, TW__THRIFT_MALFORMED, at,
                            "%s: field %d of type %d, expected 1 (list)", method, id, type);
        } else if (tw__thrift_read_list(&r, &elem, &n)) {
            if (elem != TW__T_STRUCT) {
                tw__thrift_fail(&r, TW__THRIFT_MALFORMED, at,
                                "list element type %d, expected 12 (Span struct)", elem);
            } else {
                *count = (uint32_t)n;
                *size = r.pos;
            }
        }
    }
    return finish(&r, why, why_size);
}
