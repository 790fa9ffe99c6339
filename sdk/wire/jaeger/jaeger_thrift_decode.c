/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/jaeger/jaeger_thrift_decode.c: decodes jaeger.thrift Batch structs and
 * Agent.emitBatch messages (binary and compact protocols) into the span
 * model; see wire/jaeger/jaeger_thrift_decode.h for the rules and
 * wire/jaeger/jaeger_thrift.h for the field tables.
 *
 * The protocols are read with the one Thrift reader (wire/core/thrift.h,
 * which states the protocol facts); types are its binary-protocol ids.
 * No state, no locks.
 */
#include "wire/core/copy_short.h"
#include "wire/jaeger/jaeger_thrift_decode.h"

#include "wire/core/input.h" /* tw__wire_admit_span */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define bad_at(c, at, ...) tw__thrift_fail((c), TW__THRIFT_MALFORMED, (at), __VA_ARGS__)

/* Nesting levels, counted as tw__thrift_skip counts them: the Batch's
 * fields are at 1, a span's fields at 2, a process tag's at 3, the fields
 * of a span's tags, references and logs at 4, a log's tags' at 6. Every
 * value is read or skipped at the level of a walk of the whole record, so
 * a record nested too deep fails at the same byte whatever its fields are. */
enum {
    DEPTH_BATCH = 1,
    DEPTH_SPAN = 2,
    DEPTH_PROCESS_TAG = 3,
    DEPTH_SPAN_ITEM = 4,
    DEPTH_LOG_TAG = 6
};

/* A message header; true when it is emitBatch (CALL or ONEWAY). */
static bool read_message_header(tw__thrift_reader *c)
{
    size_t start = c->pos;
    const uint8_t *name;
    size_t name_len;
    int type;
    int32_t seq;
    if (!tw__thrift_read_message_begin(c, &name, &name_len, &type, &seq))
        return false;
    if (name_len != 9 || memcmp(name, "emitBatch", 9) != 0)
        return bad_at(c, start, "message is not emitBatch");
    if (type != TW__THRIFT_CALL && type != TW__THRIFT_ONEWAY)
        return bad_at(c, start, "emitBatch message of type %d (not CALL or ONEWAY)", type);
    return true;
}

/* ---- building the model ------------------------------------------------------------ */

typedef struct decoder {
    tw__thrift_reader c;
    tw__buf scratch; /* NUL-terminated copies of keys and names */
    tw__thrift_result result;
    const tw__jaeger_sink *sink; /* nullable */
    bool is_fast;                /* tags are tried with read_tag_fast first */
    char why[320];
} decoder;

/* @len bytes and a NUL in the scratch buffer; NULL on allocation failure. */
static const char *cstr(decoder *d, const uint8_t *p, size_t len)
{
    tw__buf_reset(&d->scratch);
    static const uint8_t nul = 0;
    if (!tw__buf_append(&d->scratch, p, len) || !tw__buf_append(&d->scratch, &nul, 1))
        return NULL;
    return (const char *)d->scratch.data;
}

typedef struct tag_in {
    const uint8_t *key;
    size_t key_len;
    int64_t vtype;
    bool has_vtype;
    tw_value value;
} tag_in;

static void why_set(decoder *d, const char *fmt, ...) TW_PRINTF(2, 3);
static void why_set(decoder *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->why, sizeof d->why, fmt, ap);
    va_end(ap);
}

/* A list header that must hold structs (or be empty): its size in *n.
 * False on a cursor error, or with d->why naming @what. */
static bool read_struct_list(decoder *d, const char *what, size_t *n)
{
    int et;
    if (!tw__thrift_read_list(&d->c, &et, n))
        return false;
    if (*n > 0 && et != TW__T_STRUCT) {
        why_set(d, "%s", what);
        return false;
    }
    return true;
}

/* Reads one Tag, a struct at nesting @depth. False on a cursor error or a
 * semantic error (d->why set, d->c still OK). */
static bool read_tag(decoder *d, tag_in *tag, int depth)
{
    tw__thrift_reader *c = &d->c;
    const uint8_t *str = NULL, *bin = NULL;
    size_t str_len = 0, bin_len = 0;
    double dbl = 0;
    bool boolean = false;
    int64_t i64 = 0;
    *tag = (tag_in){.key = (const uint8_t *)"", .key_len = 0};
    int16_t last = 0;
    for (;;) {
        int t;
        int16_t id;
        if (!tw__thrift_read_field(c, &t, &id, &last))
            return false;
        if (t == TW__T_STOP)
            break;
        bool ok;
        if (id == 1 && t == TW__T_STRING) {
            ok = tw__thrift_read_bytes(c, &tag->key, &tag->key_len);
        } else if (id == 2 && t == TW__T_I32) {
            ok = tw__thrift_read_int(c, 32, &tag->vtype);
            tag->has_vtype = true;
        } else if (id == 3 && t == TW__T_STRING) {
            ok = tw__thrift_read_bytes(c, &str, &str_len);
        } else if (id == 4 && t == TW__T_DOUBLE) {
            ok = tw__thrift_read_double(c, &dbl);
        } else if (id == 5 && t == TW__T_BOOL) {
            ok = tw__thrift_read_bool(c, &boolean);
        } else if (id == 6 && t == TW__T_I64) {
            ok = tw__thrift_read_int(c, 64, &i64);
        } else if (id == 7 && t == TW__T_STRING) {
            ok = tw__thrift_read_bytes(c, &bin, &bin_len);
        } else {
            ok = tw__thrift_skip(c, t, depth + 1);
        }
        if (!ok)
            return false;
    }
    if (!tag->has_vtype) {
        why_set(d, "tag \"%.*s\" has no vType", (int)(tag->key_len > 64 ? 64 : tag->key_len),
                (const char *)tag->key);
        return false;
    }
    switch (tag->vtype) {
    case 0:
        tag->value =
            (tw_value){.type = TW_VALUE_STRING, .len = str_len, .as.str = (const char *)str};
        break;
    case 1:
        tag->value = (tw_value){.type = TW_VALUE_DOUBLE, .as.dbl = dbl};
        break;
    case 2:
        tag->value = (tw_value){.type = TW_VALUE_BOOL, .as.boolean = boolean};
        break;
    case 3:
        tag->value = (tw_value){.type = TW_VALUE_INT64, .as.i64 = i64};
        break;
    case 4:
        tag->value = (tw_value){.type = TW_VALUE_BINARY, .len = bin_len, .as.bin = bin};
        break;
    default:
        why_set(d, "tag \"%.*s\" has unknown vType %lld",
                (int)(tag->key_len > 64 ? 64 : tag->key_len), (const char *)tag->key,
                (long long)tag->vtype);
        return false;
    }
    return true;
}

/* The layout of a Tag that Jaeger clients write (jaeger.thrift field ids:
 * 1 key, 2 vType, 3 vStr, 4 vDouble, 5 vBool, 6 vLong, 7 vBinary): the key,
 * vType (0..4), the one value field that vType names, the stop byte; in the
 * compact protocol with one-byte string lengths and a varint of at most nine
 * bytes. read_tag_fast reads exactly that, in one pass over the bytes and
 * with no per-field dispatch (read_tag costs several times as much per tag,
 * and tags are most of a span's bytes), and declines anything else, the
 * reader untouched, so that read_tag reads it: a tag read either way is the
 * same tag (tests/unit/wire/test_jaeger_thrift.c and
 * tests/fuzz/fuzz_jaeger_thrift.c decode with and without it and compare). */

/* 8 bytes little-endian (compact double) or big-endian (binary). */
static inline uint64_t load_le64(const uint8_t *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
#else
    uint64_t v = 0;
    for (size_t i = 8; i > 0; i--)
        v = (v << 8) | p[i - 1];
    return v;
#endif
}

/* Compact: 0x18 = field 1 (delta 1), string; 0x15 = field 2, i32; the value
 * field's header is its delta from 2 and its compact type. */
static bool read_tag_fast_compact(tw__thrift_reader *c, tag_in *tag)
{
    const uint8_t *p = c->data + c->pos, *end = c->data + c->len;
    /* key header, key length, vType header, vType, value header */
    if (end - p < 5 || p[0] != 0x18 || p[1] >= 0x80)
        return false;
    size_t key_len = p[1];
    if ((size_t)(end - p) - 2 < key_len + 3)
        return false;
    const uint8_t *key = p + 2;
    p += 2 + key_len;
    if (p[0] != 0x15 || p[1] > 8 || (p[1] & 1))
        return false;
    int vtype = p[1] >> 1; /* zigzag 0, 2, 4, 6, 8 -> 0..4 */
    p += 2;
    tw_value v;
    switch (vtype) {
    case 0:   /* 0x18: field 3, string */
    case 4: { /* 0x58: field 7, binary */
        if (p[0] != (vtype == 0 ? 0x18 : 0x58) || end - p < 3 || p[1] >= 0x80)
            return false;
        size_t n = p[1];
        if ((size_t)(end - p) - 2 < n + 1)
            return false;
        v = vtype == 0
                ? (tw_value){.type = TW_VALUE_STRING, .len = n, .as.str = (const char *)p + 2}
                : (tw_value){.type = TW_VALUE_BINARY, .len = n, .as.bin = p + 2};
        p += 2 + n;
        break;
    }
    case 1: { /* 0x27: field 4, double, 8 bytes little-endian */
        if (p[0] != 0x27 || end - p < 10)
            return false;
        uint64_t bits = load_le64(p + 1);
        v = (tw_value){.type = TW_VALUE_DOUBLE};
        memcpy(&v.as.dbl, &bits, sizeof bits);
        p += 9;
        break;
    }
    case 2: /* 0x31 / 0x32: field 5, bool true / false in the header */
        if ((p[0] != 0x31 && p[0] != 0x32) || end - p < 2)
            return false;
        v = (tw_value){.type = TW_VALUE_BOOL, .as.boolean = p[0] == 0x31};
        p++;
        break;
    default: { /* 3, 0x46: field 6, i64, a zigzag varint */
        if (p[0] != 0x46)
            return false;
        p++;
        uint64_t u = 0;
        size_t i = 0;
        for (;; i++) {
            if (i == 9 || end - p <= (ptrdiff_t)(i + 1))
                return false; /* longer, or no stop byte after it: read_tag decides */
            u |= (uint64_t)(p[i] & 0x7f) << (7 * i);
            if (!(p[i] & 0x80))
                break;
        }
        v = (tw_value){.type = TW_VALUE_INT64, .as.i64 = (int64_t)(u >> 1) ^ -(int64_t)(u & 1)};
        p += i + 1;
        break;
    }
    }
    if (p >= end || p[0] != 0)
        return false;
    *tag = (tag_in){.key = key, .key_len = key_len, .vtype = vtype, .has_vtype = true, .value = v};
    c->pos = (size_t)(p + 1 - c->data);
    c->pending_bool = -1;
    return true;
}

/* Binary: type byte, i16 id big-endian; lengths i32 big-endian. */
static bool read_tag_fast_binary(tw__thrift_reader *c, tag_in *tag)
{
    const uint8_t *p = c->data + c->pos, *end = c->data + c->len;
    /* key header and length, vType header and value, value header */
    if (end - p < 7 || p[0] != TW__T_STRING || p[1] != 0 || p[2] != 1)
        return false;
    uint32_t key_len = (uint32_t)tw__thrift__load_be(p + 3, 4);
    if (key_len > (uint32_t)INT32_MAX || (size_t)(end - p) - 7 < (size_t)key_len + 10)
        return false;
    const uint8_t *key = p + 7;
    p += 7 + key_len;
    if (p[0] != TW__T_I32 || p[1] != 0 || p[2] != 2)
        return false;
    uint32_t vtype = (uint32_t)tw__thrift__load_be(p + 3, 4);
    if (vtype > 4)
        return false;
    p += 7;
    /* the value's field header: type, 0, id */
    static const uint8_t headers[5] = {TW__T_STRING, TW__T_DOUBLE, TW__T_BOOL, TW__T_I64,
                                       TW__T_STRING};
    if (end - p < 3 || p[0] != headers[vtype] || p[1] != 0 || p[2] != 3 + vtype)
        return false;
    p += 3;
    tw_value v;
    if (vtype == 0 || vtype == 4) {
        if (end - p < 4)
            return false;
        uint32_t n = (uint32_t)tw__thrift__load_be(p, 4);
        if (n > (uint32_t)INT32_MAX || (size_t)(end - p) - 4 < (size_t)n + 1)
            return false;
        v = vtype == 0
                ? (tw_value){.type = TW_VALUE_STRING, .len = n, .as.str = (const char *)p + 4}
                : (tw_value){.type = TW_VALUE_BINARY, .len = n, .as.bin = p + 4};
        p += 4 + (size_t)n;
    } else if (vtype == 2) {
        if (end - p < 2)
            return false;
        v = (tw_value){.type = TW_VALUE_BOOL, .as.boolean = p[0] != 0};
        p++;
    } else {
        if (end - p < 9)
            return false;
        uint64_t bits = tw__thrift__load_be(p, 8);
        if (vtype == 1) {
            v = (tw_value){.type = TW_VALUE_DOUBLE};
            memcpy(&v.as.dbl, &bits, sizeof bits);
        } else {
            v = (tw_value){.type = TW_VALUE_INT64, .as.i64 = (int64_t)bits};
        }
        p += 8;
    }
    if (p[0] != 0)
        return false;
    *tag = (tag_in){
        .key = key, .key_len = key_len, .vtype = (int64_t)vtype, .has_vtype = true, .value = v};
    c->pos = (size_t)(p + 1 - c->data);
    return true;
}

/* True when the tag at the cursor had the common layout and was read. */
static inline bool read_tag_fast(decoder *d, tag_in *tag)
{
    tw__thrift_reader *c = &d->c;
    if (!d->is_fast || c->state != TW__THRIFT_OK)
        return false;
    return c->proto == TW__THRIFT_COMPACT ? read_tag_fast_compact(c, tag)
                                          : read_tag_fast_binary(c, tag);
}

/* The bytes of @key before its first NUL (the model's keys are C strings).
 * Keys are short: for 4..16 bytes two overlapping words say that there is
 * none without a call to memchr, which costs more than the test. A word
 * has a zero byte exactly when (w - 0x01..01) & ~w & 0x80..80 is not 0. */
static inline size_t key_to_nul(const uint8_t *key, size_t len)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    if (len >= 8 && len <= 16) {
        uint64_t a, z;
        memcpy(&a, key, 8);
        memcpy(&z, key + len - 8, 8);
        if (((((a - ones) & ~a) | ((z - ones) & ~z)) & highs) == 0)
            return len;
    } else if (len >= 4 && len < 8) {
        uint32_t a, z;
        memcpy(&a, key, 4);
        memcpy(&z, key + len - 4, 4);
        uint64_t w = (uint64_t)a << 32 | z;
        if ((((w - ones) & ~w) & highs) == 0)
            return len;
    }
    const uint8_t *nul = len ? memchr(key, 0, len) : NULL;
    return nul ? (size_t)(nul - key) : len;
}

/* Decodes a list<Tag> (its structs at nesting @depth) into span tags, log
 * fields or process tags. Returns false on error (d->why or cursor). */
typedef enum tag_dest { DEST_SPAN, DEST_LOG, DEST_PROCESS } tag_dest;

static bool read_tags(decoder *d, tag_dest dest, tw__span_data *span, tw__log *log,
                      tw__process *process, int depth)
{
    size_t n;
    if (!read_struct_list(d, "a tag list of non-structs", &n))
        return false;
    for (size_t i = 0; i < n; i++) {
        tag_in tag;
        if (!read_tag_fast(d, &tag) && !read_tag(d, &tag, depth))
            return false;
        bool ok;
        if (dest == DEST_PROCESS) {
            const char *key = cstr(d, tag.key, tag.key_len);
            ok = key && tw__process_add_tag(process, key, &tag.value);
        } else {
            /* The model's keys are C strings: a key ends at its first NUL. */
            size_t key_len = key_to_nul(tag.key, tag.key_len);
            tw__tag *slot = dest == DEST_LOG                ? &log->fields[log->n_fields]
                            : span->n_tags < span->cap_tags ? &span->tags[span->n_tags]
                                                            : tw__span_data_push_tag(span);
            ok = slot &&
                 tw__tag_store(&span->arena, slot, (const char *)tag.key, key_len, &tag.value);
            if (ok && dest == DEST_SPAN)
                span->n_tags++;
            else if (ok)
                log->n_fields++;
        }
        if (!ok) {
            d->result = TW__THRIFT_NOMEM;
            return false;
        }
    }
    return true;
}

static bool read_process(decoder *d, tw__process *p)
{
    tw__thrift_reader *c = &d->c;
    int16_t last = 0;
    const uint8_t *name = (const uint8_t *)"";
    size_t name_len = 0;
    for (;;) {
        int t;
        int16_t id;
        if (!tw__thrift_read_field(c, &t, &id, &last))
            return false;
        if (t == TW__T_STOP)
            break;
        bool ok;
        if (id == 1 && t == TW__T_STRING) {
            ok = tw__thrift_read_bytes(c, &name, &name_len);
        } else if (id == 2 && t == TW__T_LIST) {
            /* A repeated field: the last one wins, as in generated code. */
            p->n_tags = 0;
            ok = read_tags(d, DEST_PROCESS, NULL, NULL, p, DEPTH_PROCESS_TAG);
        } else {
            ok = tw__thrift_skip(c, t, DEPTH_BATCH + 1);
        }
        if (!ok)
            return false;
    }
    const char *service = cstr(d, name, name_len);
    if (!service || !tw__process_set_service(p, service)) {
        d->result = TW__THRIFT_NOMEM;
        return false;
    }
    return true;
}

static bool read_logs(decoder *d, tw__span_data *span)
{
    tw__thrift_reader *c = &d->c;
    size_t n;
    if (!read_struct_list(d, "logs is not a list of structs", &n))
        return false;
    for (size_t i = 0; i < n; i++) {
        int64_t ts = 0;
        tw__log *log = NULL;
        int16_t last = 0;
        for (;;) {
            int t;
            int16_t id;
            if (!tw__thrift_read_field(c, &t, &id, &last))
                return false;
            if (t == TW__T_STOP)
                break;
            bool ok;
            if (id == 1 && t == TW__T_I64) {
                ok = tw__thrift_read_int(c, 64, &ts);
            } else if (id == 2 && t == TW__T_LIST) {
                /* The field count is known before the fields: one array. */
                size_t at = c->pos;
                int ft;
                size_t nf;
                if (!tw__thrift_read_list(c, &ft, &nf))
                    return false;
                c->pos = at;
                if (!log) {
                    log = tw__span_data_push_log(span, nf);
                    if (!log) {
                        d->result = TW__THRIFT_NOMEM;
                        return false;
                    }
                    span->n_logs++;
                } else if (nf > 0) {
                    log->fields = tw__arena_alloc(&span->arena, nf * sizeof(tw__tag));
                    if (!log->fields) {
                        d->result = TW__THRIFT_NOMEM;
                        return false;
                    }
                }
                log->n_fields = 0;
                ok = read_tags(d, DEST_LOG, span, log, NULL, DEPTH_LOG_TAG);
            } else {
                ok = tw__thrift_skip(c, t, DEPTH_SPAN_ITEM + 1);
            }
            if (!ok)
                return false;
        }
        if (!log) {
            log = tw__span_data_push_log(span, 0);
            if (!log) {
                d->result = TW__THRIFT_NOMEM;
                return false;
            }
            span->n_logs++;
        }
        log->timestamp_us = ts;
    }
    return true;
}

static bool read_refs(decoder *d, tw__span_data *span)
{
    tw__thrift_reader *c = &d->c;
    size_t n;
    if (!read_struct_list(d, "references is not a list of structs", &n))
        return false;
    for (size_t i = 0; i < n; i++) {
        int64_t type = 0, lo = 0, hi = 0, id64 = 0;
        bool has_type = false, has_lo = false, has_id = false;
        int16_t last = 0;
        for (;;) {
            int t;
            int16_t id;
            if (!tw__thrift_read_field(c, &t, &id, &last))
                return false;
            if (t == TW__T_STOP)
                break;
            bool ok;
            if (id == 1 && t == TW__T_I32) {
                ok = tw__thrift_read_int(c, 32, &type);
                has_type = true;
            } else if (id == 2 && t == TW__T_I64) {
                ok = tw__thrift_read_int(c, 64, &lo);
                has_lo = true;
            } else if (id == 3 && t == TW__T_I64) {
                ok = tw__thrift_read_int(c, 64, &hi);
            } else if (id == 4 && t == TW__T_I64) {
                ok = tw__thrift_read_int(c, 64, &id64);
                has_id = true;
            } else {
                ok = tw__thrift_skip(c, t, DEPTH_SPAN_ITEM + 1);
            }
            if (!ok)
                return false;
        }
        if (!has_type || !has_lo || !has_id) {
            why_set(d, "reference %zu lacks refType, traceIdLow or spanId", i);
            return false;
        }
        if (type != 0 && type != 1) {
            why_set(d, "reference %zu has unknown refType %lld", i, (long long)type);
            return false;
        }
        if (!tw__span_data_add_ref(span, type == 0 ? TW__REF_CHILD_OF : TW__REF_FOLLOWS_FROM,
                                   (uint64_t)hi, (uint64_t)lo, (uint64_t)id64)) {
            d->result = TW__THRIFT_NOMEM;
            return false;
        }
    }
    return true;
}

/* The varint at @p, of which at least 10 bytes may be read: the index of
 * its last byte (0..9) with its value (bits past 64 dropped, as
 * tw__thrift_read_int drops them) in *v, or -1 when none of the 10 bytes
 * ends it. A span's ids and times take 7 to 10 bytes: on little-endian
 * machines the first eight are read as one word, the end found by its
 * first clear high bit, and the 7-bit groups packed in three steps (14, 28,
 * then 56 bits) instead of a step per byte. */
static inline __attribute__((always_inline)) int varint10(const uint8_t *p, uint64_t *v)
{
    if (!(p[0] & 0x80)) { /* one byte: a zero traceIdHigh, a root's parent */
        *v = p[0];
        return 0;
    }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t w;
    memcpy(&w, p, 8);
    uint64_t stops = ~w & 0x8080808080808080u;
    int i = stops ? __builtin_ctzll(stops) >> 3 : 7;
    uint64_t x = w & (0x7f7f7f7f7f7f7f7fu >> (56 - 8 * i)); /* bytes 0..i */
    x = (x & 0x007f007f007f007fu) | ((x & 0x7f007f007f007f00u) >> 1);
    x = (x & 0x00003fff00003fffu) | ((x & 0x3fff00003fff0000u) >> 2);
    x = (x & 0x000000000fffffffu) | ((x & 0x0fffffff00000000u) >> 4);
    if (!stops) { /* eight bytes that go on */
        if (!(p[8] & 0x80)) {
            x |= (uint64_t)p[8] << 56;
            i = 8;
        } else if (!(p[9] & 0x80)) {
            x |= (uint64_t)(p[8] & 0x7f) << 56 | (uint64_t)p[9] << 63;
            i = 9;
        } else {
            return -1;
        }
    }
    *v = x;
    return i;
#else
    uint64_t x = 0;
    for (int i = 0; i < 10; i++) {
        x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            *v = x;
            return i;
        }
    }
    return -1;
#endif
}

/* A span's i64 field: in the compact protocol, with ten bytes left, read
 * with varint10; otherwise, and when it declines, by tw__thrift_read_int,
 * which reads the same value (the fast decoder only: the general one,
 * which tests/fuzz/fuzz_jaeger_thrift.c compares with it, reads every
 * integer with tw__thrift_read_int). */
static inline __attribute__((always_inline)) bool read_i64(decoder *d, int64_t *out)
{
    tw__thrift_reader *c = &d->c;
    if (d->is_fast && c->proto == TW__THRIFT_COMPACT && c->state == TW__THRIFT_OK &&
        c->len - c->pos >= 10) {
        uint64_t v;
        int i = varint10(c->data + c->pos, &v);
        if (i >= 0) {
            c->pos += (size_t)i + 1;
            *out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
            return true;
        }
    }
    return tw__thrift_read_int(c, 64, out);
}

/* One Span struct. Returns the record, or NULL with d->why (a bad span),
 * d->result NOMEM, or a cursor error. *warned: the duration was negative.
 * The span is not admitted yet (emit_span does it): the time unit's
 * warnings must come only for records that are whole and sound. */
static tw__span_data *read_span(decoder *d, bool *warned)
{
    tw__thrift_reader *c = &d->c;
    tw__span_data *s = tw__span_data_new();
    if (!s) {
        d->result = TW__THRIFT_NOMEM;
        return NULL;
    }
    int64_t lo = 0, hi = 0, sid = 0, pid = 0, flags = 0, start = 0, dur = 0;
    bool has_lo = false, has_hi = false, has_sid = false, has_start = false;
    const uint8_t *op = (const uint8_t *)"";
    size_t op_len = 0;
    int16_t last = 0;
    d->why[0] = '\0';
    for (;;) {
        int t;
        int16_t id;
        if (!tw__thrift_read_field(c, &t, &id, &last))
            goto fail;
        if (t == TW__T_STOP)
            break;
        bool ok;
        if (t == TW__T_I64 && (id == 1 || id == 2 || id == 3 || id == 4 || id == 8 || id == 9)) {
            int64_t v;
            ok = read_i64(d, &v);
            switch (id) {
            case 1:
                lo = v, has_lo = true;
                break;
            case 2:
                hi = v, has_hi = true;
                break;
            case 3:
                sid = v, has_sid = true;
                break;
            case 4:
                pid = v;
                break;
            case 8:
                start = v, has_start = true;
                break;
            default:
                dur = v;
                break;
            }
        } else if (id == 5 && t == TW__T_STRING) {
            ok = tw__thrift_read_bytes(c, &op, &op_len);
        } else if (id == 6 && t == TW__T_LIST) {
            s->n_refs = 0; /* a repeated field: the last one wins */
            ok = read_refs(d, s);
        } else if (id == 7 && t == TW__T_I32) {
            ok = tw__thrift_read_int(c, 32, &flags);
        } else if (id == 10 && t == TW__T_LIST) {
            s->n_tags = 0;
            ok = read_tags(d, DEST_SPAN, s, NULL, NULL, DEPTH_SPAN_ITEM);
        } else if (id == 11 && t == TW__T_LIST) {
            s->n_logs = 0;
            ok = read_logs(d, s);
        } else {
            ok = tw__thrift_skip(c, t, DEPTH_SPAN + 1);
        }
        if (!ok)
            goto fail;
    }
    if (!has_lo || !has_hi || !has_sid || !has_start) {
        why_set(d, "span lacks %s",
                !has_lo    ? "traceIdLow (field 1)"
                : !has_hi  ? "traceIdHigh (field 2)"
                : !has_sid ? "spanId (field 3)"
                           : "startTime (field 8)");
        goto fail;
    }
    if (lo == 0 && hi == 0) {
        why_set(d, "the trace id is zero");
        goto fail;
    }
    if (sid == 0) {
        why_set(d, "the span id is zero");
        goto fail;
    }
    if (!tw__span_data_set_operation(s, (const char *)op, op_len)) {
        d->result = TW__THRIFT_NOMEM;
        goto fail;
    }
    s->trace_id_low = (uint64_t)lo;
    s->trace_id_high = (uint64_t)hi;
    s->span_id = (uint64_t)sid;
    s->parent_id = pid == sid ? 0 : (uint64_t)pid;
    if (s->parent_id == 0) {
        for (size_t i = 0; i < s->n_refs; i++) {
            const tw__ref *r = &s->refs[i];
            if (r->type == TW__REF_CHILD_OF && r->trace_id_low == s->trace_id_low &&
                r->trace_id_high == s->trace_id_high && r->span_id != s->span_id) {
                s->parent_id = r->span_id;
                break;
            }
        }
    }
    s->flags = (uint32_t)flags;
    s->start_us = start;
    *warned = dur < 0;
    s->duration_us = dur < 0 ? 0 : dur;
    return s;
fail:
    tw__span_data_unref(s);
    return NULL;
}

/* ---- the record: one pass, its spans held until it is known whole ------------------------ */

/* At most this many spans, or the spans of this many input bytes, are held;
 * a longer list (a collector body may be tens of MiB) is walked once to the
 * end of its record and then decoded again, one span at a time, so that
 * memory stays bounded by the limits, not by the record. */
#define HOLD_MAX_SPANS ((size_t)4096)
#define HOLD_MAX_BYTES ((size_t)4 << 20)

/* An element of Batch.spans, decoded, waiting for the end of its record. */
typedef struct held_span {
    tw__span_data *span; /* NULL: a bad span, its reason at why_at in batch.reasons */
    size_t at, len;      /* its bytes */
    size_t why_at;
    bool warned; /* its duration was negative */
} held_span;

/* What a Batch's fields gave; a repeated field: the last one wins, as in
 * generated code. */
typedef struct batch {
    size_t process_at; /* the last Process struct; 0: none yet */
    tw__process process;
    tw__thrift_result process_result; /* OK, MALFORMED (process_why) or NOMEM */
    char process_why[320];
    size_t spans_at; /* the last spans list header; 0: none yet */
    size_t n_spans;
    held_span *held; /* n_held of n_spans, unless is_replayed or is_nomem */
    size_t n_held;
    tw__buf reasons;  /* the bad spans' reasons, NUL-terminated */
    bool is_replayed; /* too many to hold: decoded again once the record is whole */
    bool is_nomem;
} batch;

static void drop_held(batch *b)
{
    for (size_t i = 0; i < b->n_held; i++)
        tw__span_data_unref(b->held[i].span);
    free(b->held);
    b->held = NULL;
    b->n_held = 0;
    tw__buf_reset(&b->reasons);
}

static void batch_init(batch *b)
{
    memset(b, 0, sizeof *b);
    tw__process_init(&b->process);
    tw__buf_init(&b->reasons);
}

static void batch_free(batch *b)
{
    drop_held(b);
    tw__buf_free(&b->reasons);
    tw__process_clear(&b->process);
}

/* Goes back to the struct at @at and skips it at nesting @depth: the extent
 * (and the structural errors) of a struct whose decoding stopped early. */
static bool rewind_skip(decoder *d, size_t at, int depth)
{
    d->c.pos = at;
    d->c.pending_bool = -1;
    return tw__thrift_skip(&d->c, TW__T_STRUCT, depth);
}

/* The process struct at the cursor. A process that is not valid, or out
 * of memory, fails the record only once it is known whole; false on a
 * cursor error. */
static bool decode_process(decoder *d, batch *b)
{
    size_t at = d->c.pos;
    tw__process_clear(&b->process);
    tw__process_init(&b->process);
    b->process_at = at;
    b->process_result = TW__THRIFT_OK;
    if (read_process(d, &b->process))
        return true;
    if (d->c.state != TW__THRIFT_OK)
        return false;
    b->process_result = d->result == TW__THRIFT_NOMEM ? TW__THRIFT_NOMEM : TW__THRIFT_MALFORMED;
    memcpy(b->process_why, d->why, sizeof b->process_why);
    d->result = TW__THRIFT_OK;
    return rewind_skip(d, at, DEPTH_BATCH);
}

/* The span at the cursor into *h (its bytes, and NULL with the reason in
 * d->why for a bad span); false on a cursor error. NOMEM: d->result. */
static bool decode_span(decoder *d, held_span *h)
{
    size_t at = d->c.pos;
    d->c.pending_bool = -1;
    *h = (held_span){.at = at};
    h->span = read_span(d, &h->warned);
    if (d->c.state != TW__THRIFT_OK)
        return false;
    if (!h->span && !rewind_skip(d, at, DEPTH_SPAN))
        return false;
    h->len = d->c.pos - at;
    return true;
}

/* Holds the span at the cursor (the list's spans start at @first); false
 * on a cursor error. Out of memory, the rest of the list is only walked:
 * a record that is cut or malformed says so whatever the memory. */
static bool hold_span(decoder *d, batch *b, size_t first)
{
    held_span *h = &b->held[b->n_held];
    if (!decode_span(d, h))
        return false;
    if (d->result == TW__THRIFT_NOMEM) {
        d->result = TW__THRIFT_OK;
        b->is_nomem = true;
    } else if (!h->span) {
        h->why_at = b->reasons.len;
        b->is_nomem = !tw__buf_append(&b->reasons, d->why, strlen(d->why) + 1);
    }
    if (b->is_nomem) {
        drop_held(b);
        return true;
    }
    b->n_held++;
    if (d->c.pos - first > HOLD_MAX_BYTES) {
        drop_held(b);
        b->is_replayed = true;
    }
    return true;
}

/* The @n spans of the list whose header is at @list_at; false on a cursor
 * error. */
static bool decode_spans(decoder *d, batch *b, size_t list_at, size_t n)
{
    drop_held(b);
    b->spans_at = list_at;
    b->n_spans = n;
    b->is_replayed = n > HOLD_MAX_SPANS;
    b->is_nomem = false;
    if (n > 0 && !b->is_replayed) {
        b->held = malloc(n * sizeof *b->held);
        b->is_nomem = !b->held;
    }
    size_t first = d->c.pos;
    for (size_t i = 0; i < n; i++) {
        bool ok = b->is_replayed || b->is_nomem
                      ? (d->c.pending_bool = -1, tw__thrift_skip(&d->c, TW__T_STRUCT, DEPTH_SPAN))
                      : hold_span(d, b, first);
        if (!ok)
            return false;
    }
    return true;
}

static bool decode_batch(decoder *d, batch *b)
{
    tw__thrift_reader *c = &d->c;
    size_t batch_start = c->pos;
    int16_t last = 0;
    for (;;) {
        int t;
        int16_t id;
        if (!tw__thrift_read_field(c, &t, &id, &last))
            return false;
        if (t == TW__T_STOP)
            break;
        bool ok;
        if (id == 1 && t == TW__T_STRUCT) {
            ok = decode_process(d, b);
        } else if (id == 2 && t == TW__T_LIST) {
            size_t at = c->pos;
            int et;
            size_t n;
            if (!tw__thrift_read_list(c, &et, &n))
                return false;
            if (n > 0 && et != TW__T_STRUCT)
                return bad_at(c, at, "Batch.spans is not a list of structs");
            ok = decode_spans(d, b, at, n);
        } else {
            ok = tw__thrift_skip(c, t, DEPTH_BATCH);
        }
        if (!ok)
            return false;
    }
    if (!b->process_at)
        return bad_at(c, batch_start, "Batch has no process (field 1)");
    if (!b->spans_at)
        return bad_at(c, batch_start, "Batch has no spans (field 2)");
    return true;
}

/* The emitBatch args struct: the Batch is its field 1. */
static bool decode_args(decoder *d, batch *b)
{
    tw__thrift_reader *c = &d->c;
    size_t start = c->pos;
    int16_t last = 0;
    bool has_batch = false;
    for (;;) {
        int t;
        int16_t id;
        if (!tw__thrift_read_field(c, &t, &id, &last))
            return false;
        if (t == TW__T_STOP)
            break;
        if (id == 1 && t == TW__T_STRUCT) {
            batch_free(b);
            batch_init(b);
            has_batch = true;
            if (!decode_batch(d, b))
                return false;
        } else if (!tw__thrift_skip(c, t, DEPTH_BATCH)) {
            return false;
        }
    }
    if (!has_batch)
        return bad_at(c, start, "emitBatch without a batch (field 1)");
    return true;
}

/* Hands span @i to the sink: @s once admitted (where it enters the model:
 * its time unit and range), or a bad span with @why; OK or STOPPED. */
static tw__thrift_result emit_span(decoder *d, const tw__process *p, size_t i, tw__span_data *s,
                                   const held_span *h, const char *why)
{
    const tw__jaeger_sink *sink = d->sink;
    if (s) {
        bool is_admitted = sink && sink->input
                               ? tw__wire_admit_span(sink->input, 0, s, d->why, sizeof d->why)
                               : tw__span_data_check_times(s, d->why, sizeof d->why);
        if (!is_admitted) {
            tw__span_data_unref(s);
            s = NULL;
            why = d->why;
        }
    }
    if (!s) {
        bool go_on =
            !sink || !sink->bad_span || sink->bad_span(sink->user_data, i, h->at, h->len, why);
        return go_on ? TW__THRIFT_OK : TW__THRIFT_STOPPED;
    }
    if (h->warned && sink && sink->warn)
        sink->warn(sink->user_data, i, "negative duration: set to 0");
    if (sink && sink->span)
        return sink->span(sink->user_data, s, p) ? TW__THRIFT_OK : TW__THRIFT_STOPPED;
    tw__span_data_unref(s);
    return TW__THRIFT_OK;
}

static tw__thrift_result emit_held(decoder *d, batch *b)
{
    for (size_t i = 0; i < b->n_held; i++) {
        held_span *h = &b->held[i];
        tw__span_data *s = h->span;
        h->span = NULL; /* the sink's now */
        const char *why = s ? NULL : (const char *)b->reasons.data + h->why_at;
        tw__thrift_result r = emit_span(d, &b->process, i, s, h, why);
        if (r != TW__THRIFT_OK)
            return r;
    }
    return TW__THRIFT_OK;
}

/* The spans of a list too long to hold, decoded again one at a time: the
 * record is known whole and sound, so no cursor error can happen here (it
 * would still be MALFORMED). */
static tw__thrift_result replay_spans(decoder *d, batch *b)
{
    d->c.pos = b->spans_at;
    int et;
    size_t n;
    if (!tw__thrift_read_list(&d->c, &et, &n))
        return TW__THRIFT_MALFORMED;
    for (size_t i = 0; i < n; i++) {
        held_span h;
        if (!decode_span(d, &h))
            return TW__THRIFT_MALFORMED;
        if (d->result == TW__THRIFT_NOMEM)
            return TW__THRIFT_NOMEM;
        tw__thrift_result r = emit_span(d, &b->process, i, h.span, &h, d->why);
        if (r != TW__THRIFT_OK)
            return r;
    }
    return TW__THRIFT_OK;
}

/* A record known whole and sound: its process's verdict, then its spans. */
static tw__thrift_result finish(decoder *d, batch *b, size_t *err_offset, char *why,
                                size_t why_size)
{
    if (b->process_result == TW__THRIFT_MALFORMED) {
        if (err_offset)
            *err_offset = b->process_at;
        if (why && why_size)
            snprintf(why, why_size, "Batch.process: %s", b->process_why);
        return TW__THRIFT_MALFORMED;
    }
    if (b->process_result == TW__THRIFT_NOMEM || b->is_nomem)
        return TW__THRIFT_NOMEM;
    return b->is_replayed ? replay_spans(d, b) : emit_held(d, b);
}

int tw__jaeger_detect(const uint8_t *data, size_t len, tw__thrift_protocol *protocol,
                      bool *is_message)
{
    if (len < 1)
        return -1;
    switch (data[0]) {
    case 0x0C:
        if (len < 3)
            return -1;
        if (data[1] != 0 || data[2] != 1)
            return 0;
        *protocol = TW__THRIFT_BINARY;
        *is_message = false;
        return 1;
    case 0x1C:
        *protocol = TW__THRIFT_COMPACT;
        *is_message = false;
        return 1;
    case 0x80:
        if (len < 2)
            return -1;
        if (data[1] != 0x01)
            return 0;
        *protocol = TW__THRIFT_BINARY;
        *is_message = true;
        return 1;
    case 0x82:
        if (len < 2)
            return -1;
        if ((data[1] & 0x1f) != 1)
            return 0;
        *protocol = TW__THRIFT_COMPACT;
        *is_message = true;
        return 1;
    case 0x00: {
        static const uint8_t old[13] = {0, 0, 0, 9, 'e', 'm', 'i', 't', 'B', 'a', 't', 'c', 'h'};
        size_t n = len < sizeof old ? len : sizeof old;
        if (memcmp(data, old, n) != 0)
            return 0;
        if (len < sizeof old)
            return -1;
        *protocol = TW__THRIFT_BINARY;
        *is_message = true;
        return 1;
    }
    default:
        return 0;
    }
}

static tw__thrift_result decode(const uint8_t *data, size_t len, tw__thrift_protocol protocol,
                                bool is_message, const tw__jaeger_sink *sink,
                                tw__jaeger_record *info, size_t *need, size_t *err_offset,
                                char *why, size_t why_size, bool is_fast)
{
    if (protocol != TW__THRIFT_BINARY && protocol != TW__THRIFT_COMPACT) {
        if (why && why_size)
            snprintf(why, why_size, "unknown protocol");
        if (err_offset)
            *err_offset = 0;
        return TW__THRIFT_MALFORMED;
    }
    if (why && why_size)
        why[0] = '\0';
    decoder d;
    tw__thrift_reader_init(&d.c, data, len, protocol, TW__JAEGER_MAX_DEPTH);
    tw__buf_init(&d.scratch);
    d.result = TW__THRIFT_OK;
    d.sink = sink;
    d.is_fast = is_fast;
    d.why[0] = '\0';
    batch b;
    batch_init(&b);

    tw__thrift_result result;
    bool ok = is_message ? read_message_header(&d.c) && decode_args(&d, &b) : decode_batch(&d, &b);
    if (!ok && d.c.state == TW__THRIFT_SHORT) {
        if (need)
            *need = d.c.need;
        result = TW__THRIFT_SHORT;
    } else if (!ok) {
        if (err_offset)
            *err_offset = d.c.err_at;
        if (why && why_size)
            snprintf(why, why_size, "%s", d.c.why);
        result = TW__THRIFT_MALFORMED;
    } else {
        if (info)
            *info = (tw__jaeger_record){d.c.pos, b.n_spans, is_message, protocol};
        result = finish(&d, &b, err_offset, why, why_size);
        if (result == TW__THRIFT_MALFORMED && why && why_size && !why[0])
            snprintf(why, why_size, "inconsistent record");
    }
    batch_free(&b);
    tw__buf_free(&d.scratch);
    return result;
}

tw__thrift_result tw__jaeger_decode(const uint8_t *data, size_t len, tw__thrift_protocol protocol,
                                    bool is_message, const tw__jaeger_sink *sink,
                                    tw__jaeger_record *info, size_t *need, size_t *err_offset,
                                    char *why, size_t why_size)
{
    return decode(data, len, protocol, is_message, sink, info, need, err_offset, why, why_size,
                  true);
}

tw__thrift_result tw__jaeger_decode_general(const uint8_t *data, size_t len,
                                            tw__thrift_protocol protocol, bool is_message,
                                            const tw__jaeger_sink *sink, tw__jaeger_record *info,
                                            size_t *need, size_t *err_offset, char *why,
                                            size_t why_size)
{
    return decode(data, len, protocol, is_message, sink, info, need, err_offset, why, why_size,
                  false);
}
