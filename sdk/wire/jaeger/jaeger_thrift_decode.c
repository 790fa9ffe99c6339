/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/jaeger_thrift_decode.c: decodes jaeger.thrift Batch structs and
 * Agent.emitBatch messages (binary and compact protocols) into the span
 * model; see wire/jaeger_thrift_decode.h for the rules and
 * wire/jaeger_thrift.h for the field tables.
 *
 * Protocol facts used (Apache Thrift protocol specs, doc/specs/
 * thrift-binary-protocol.md and thrift-compact-protocol.md):
 *   binary   field header: type byte (0 = stop), i16 id big-endian; integers
 *            big-endian; double = 8 bytes big-endian; string/binary = i32
 *            length + bytes; list/set = elem type byte + i32 size; map = key
 *            type, value type, i32 size; bool = 1 byte. Message header:
 *            i32 0x8001_00TT, name, i32 seq id (or the old form: name, type
 *            byte, i32 seq id).
 *   compact  field header: delta (high nibble, 0 = an i16 zigzag varint id
 *            follows) | type (low nibble; 1/2 = bool true/false, the value
 *            itself); i16/i32/i64 = zigzag varints; double = 8 bytes
 *            little-endian; string = varint length + bytes; list/set = size
 *            (high nibble, 15 = a varint follows) | elem type; map = varint
 *            size, then key type << 4 | value type when not empty; a bool in
 *            a container is one byte (1 = true). Message header: 0x82,
 *            version 1 | type << 5, varint seq id, name.
 *
 * Types are carried as binary-protocol type ids (TT_*) in both protocols.
 * No state, no locks.
 */
#include "wire/jaeger/jaeger_thrift_decode.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    TT_STOP = 0,
    TT_BOOL = 2,
    TT_BYTE = 3,
    TT_DOUBLE = 4,
    TT_I16 = 6,
    TT_I32 = 8,
    TT_I64 = 10,
    TT_STRING = 11,
    TT_STRUCT = 12,
    TT_MAP = 13,
    TT_SET = 14,
    TT_LIST = 15
};

typedef enum cursor_state { C_OK = 0, C_TRUNC, C_BAD } cursor_state;

typedef struct cursor {
    const uint8_t *data;
    size_t len;
    size_t pos;
    tw__thrift_protocol proto;
    cursor_state state;
    size_t need;   /* C_TRUNC: bytes needed from data */
    size_t err_at; /* C_BAD: offset of the bad item */
    char why[192];
    int pending_bool; /* compact: a bool field's value from its header; -1 none */
} cursor;

static void cursor_init(cursor *c, const uint8_t *data, size_t len, tw__thrift_protocol proto)
{
    c->data = data;
    c->len = len;
    c->pos = 0;
    c->proto = proto;
    c->state = C_OK;
    c->need = 0;
    c->err_at = 0;
    c->why[0] = '\0';
    c->pending_bool = -1;
}

static bool bad_at(cursor *c, size_t at, const char *fmt, ...) TW_PRINTF(3, 4);
static bool bad_at(cursor *c, size_t at, const char *fmt, ...)
{
    if (c->state != C_OK)
        return false;
    c->state = C_BAD;
    c->err_at = at;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, sizeof c->why, fmt, ap);
    va_end(ap);
    return false;
}

/* True when @n more bytes are present; else the record is truncated. */
static bool have(cursor *c, size_t n)
{
    if (c->state != C_OK)
        return false;
    if (c->len - c->pos >= n)
        return true;
    c->state = C_TRUNC;
    c->need = n > SIZE_MAX - c->pos ? SIZE_MAX : c->pos + n;
    return false;
}

static bool read_u8(cursor *c, uint8_t *out)
{
    if (!have(c, 1))
        return false;
    *out = c->data[c->pos++];
    return true;
}

static uint64_t be_bytes(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

/* An unsigned varint of at most @max_bytes bytes (5 for 32 bits, 10 for 64). */
static bool read_varint(cursor *c, size_t max_bytes, uint64_t *out)
{
    size_t start = c->pos;
    uint64_t v = 0;
    for (size_t i = 0; i < max_bytes; i++) {
        uint8_t b;
        if (!read_u8(c, &b))
            return false;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return bad_at(c, start, "varint longer than %zu bytes", max_bytes);
}

static int64_t unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static bool read_int(cursor *c, int bits, int64_t *out)
{
    if (c->proto == TW__THRIFT_BINARY) {
        size_t n = (size_t)bits / 8;
        if (!have(c, n))
            return false;
        uint64_t v = be_bytes(c->data + c->pos, n);
        c->pos += n;
        if (bits == 16)
            *out = (int16_t)(uint16_t)v;
        else if (bits == 32)
            *out = (int32_t)(uint32_t)v;
        else
            *out = (int64_t)v;
        return true;
    }
    size_t start = c->pos;
    uint64_t v;
    if (!read_varint(c, bits == 64 ? 10 : 5, &v))
        return false;
    int64_t s = unzigzag(v);
    if ((bits == 16 && (s < INT16_MIN || s > INT16_MAX)) ||
        (bits == 32 && (s < INT32_MIN || s > INT32_MAX)))
        return bad_at(c, start, "i%d varint out of range", bits);
    *out = s;
    return true;
}

static bool read_double(cursor *c, double *out)
{
    if (!have(c, 8))
        return false;
    uint64_t bits;
    if (c->proto == TW__THRIFT_BINARY) {
        bits = be_bytes(c->data + c->pos, 8);
    } else {
        bits = 0;
        for (size_t i = 8; i > 0; i--)
            bits = (bits << 8) | c->data[c->pos + i - 1];
    }
    c->pos += 8;
    memcpy(out, &bits, sizeof *out);
    return true;
}

/* A bool value: from the compact field header when there is one. */
static bool read_bool(cursor *c, bool *out)
{
    if (c->proto == TW__THRIFT_COMPACT && c->pending_bool >= 0) {
        *out = c->pending_bool == 1;
        c->pending_bool = -1;
        return true;
    }
    uint8_t b;
    if (!read_u8(c, &b))
        return false;
    *out = c->proto == TW__THRIFT_COMPACT ? b == 1 : b != 0;
    return true;
}

/* A string or binary: pointer into the input (not NUL-terminated). */
static bool read_bytes(cursor *c, const uint8_t **out, size_t *out_len)
{
    size_t start = c->pos;
    int64_t n;
    if (c->proto == TW__THRIFT_BINARY) {
        if (!read_int(c, 32, &n))
            return false;
    } else {
        uint64_t u;
        if (!read_varint(c, 5, &u))
            return false;
        n = (int32_t)(uint32_t)u;
    }
    if (n < 0)
        return bad_at(c, start, "negative string length %lld", (long long)n);
    if (!have(c, (size_t)n))
        return false;
    *out = c->data + c->pos;
    *out_len = (size_t)n;
    c->pos += (size_t)n;
    return true;
}

static int compact_to_tt(uint8_t t)
{
    static const int map[13] = {-1,        TT_BOOL,   TT_BOOL, TT_BYTE, TT_I16, TT_I32,   TT_I64,
                                TT_DOUBLE, TT_STRING, TT_LIST, TT_SET,  TT_MAP, TT_STRUCT};
    return t < 13 ? map[t] : -1;
}

static bool is_tt(int t)
{
    return t == TT_BOOL || t == TT_BYTE || t == TT_DOUBLE || t == TT_I16 || t == TT_I32 ||
           t == TT_I64 || t == TT_STRING || t == TT_STRUCT || t == TT_MAP || t == TT_SET ||
           t == TT_LIST;
}

/* Fewest bytes one value of type @t takes (bounds container sizes). */
static size_t min_size(const cursor *c, int t)
{
    if (t == TT_DOUBLE)
        return 8;
    if (c->proto == TW__THRIFT_COMPACT)
        return 1;
    switch (t) {
    case TT_I16:
        return 2;
    case TT_I32:
    case TT_STRING:
        return 4;
    case TT_I64:
        return 8;
    case TT_LIST:
    case TT_SET:
        return 5;
    case TT_MAP:
        return 6;
    default:
        return 1;
    }
}

/* A field header: *type TT_STOP at the end of the struct. @last_id: the
 * previous field id of this struct (compact deltas). */
static bool read_field(cursor *c, int *type, int16_t *id, int16_t *last_id)
{
    size_t start = c->pos;
    uint8_t b;
    if (!read_u8(c, &b))
        return false;
    if (b == 0) {
        *type = TT_STOP;
        return true;
    }
    if (c->proto == TW__THRIFT_BINARY) {
        if (!is_tt(b))
            return bad_at(c, start, "unknown field type %u", b);
        int64_t v;
        if (!read_int(c, 16, &v))
            return false;
        *type = b;
        *id = (int16_t)v;
        return true;
    }
    int t = compact_to_tt(b & 0x0f);
    if (t < 0)
        return bad_at(c, start, "unknown compact field type %u", b & 0x0fu);
    uint8_t delta = b >> 4;
    if (delta) {
        *id = (int16_t)(*last_id + delta);
    } else {
        int64_t v;
        if (!read_int(c, 16, &v))
            return false;
        *id = (int16_t)v;
    }
    *last_id = *id;
    *type = t;
    c->pending_bool = t == TT_BOOL ? ((b & 0x0f) == 1 ? 1 : 0) : -1;
    return true;
}

/* A list or set header; the size is checked against the bytes left. */
static bool read_list(cursor *c, int *elem, size_t *size)
{
    size_t start = c->pos;
    int64_t n;
    int t;
    if (c->proto == TW__THRIFT_BINARY) {
        uint8_t b;
        if (!read_u8(c, &b) || !read_int(c, 32, &n))
            return false;
        t = b;
    } else {
        uint8_t b;
        if (!read_u8(c, &b))
            return false;
        n = b >> 4;
        t = compact_to_tt(b & 0x0f);
        if (n == 15) {
            uint64_t u;
            if (!read_varint(c, 5, &u))
                return false;
            n = (int32_t)(uint32_t)u;
        }
    }
    if (n < 0)
        return bad_at(c, start, "negative list size %lld", (long long)n);
    if (n > 0 && (t < 0 || !is_tt(t)))
        return bad_at(c, start, "list of unknown element type");
    size_t each = t < 0 ? 1 : min_size(c, t);
    if ((size_t)n > (c->len - c->pos) / each && !have(c, (size_t)n * each))
        return false; /* (size_t)n * each cannot overflow: n < 2^31, each <= 8 */
    *elem = t;
    *size = (size_t)n;
    return true;
}

static bool read_map(cursor *c, int *kt, int *vt, size_t *size)
{
    size_t start = c->pos;
    int64_t n;
    if (c->proto == TW__THRIFT_BINARY) {
        uint8_t k, v;
        if (!read_u8(c, &k) || !read_u8(c, &v) || !read_int(c, 32, &n))
            return false;
        *kt = k;
        *vt = v;
    } else {
        uint64_t u;
        if (!read_varint(c, 5, &u))
            return false;
        n = (int32_t)(uint32_t)u;
        *kt = *vt = TT_BYTE;
        if (n > 0) {
            uint8_t b;
            if (!read_u8(c, &b))
                return false;
            *kt = compact_to_tt(b >> 4);
            *vt = compact_to_tt(b & 0x0f);
        }
    }
    if (n < 0)
        return bad_at(c, start, "negative map size %lld", (long long)n);
    if (n > 0 && (!is_tt(*kt) || !is_tt(*vt)))
        return bad_at(c, start, "map of unknown key or value type");
    size_t each = n > 0 ? min_size(c, *kt) + min_size(c, *vt) : 1;
    if ((size_t)n > (c->len - c->pos) / each && !have(c, (size_t)n * each))
        return false;
    *size = (size_t)n;
    return true;
}

/* Skips one value of type @t, at most @depth levels of nesting. */
static bool skip(cursor *c, int t, int depth)
{
    if (depth > TW__JAEGER_MAX_DEPTH)
        return bad_at(c, c->pos, "nested deeper than %d levels", TW__JAEGER_MAX_DEPTH);
    int64_t i;
    double d;
    bool b;
    const uint8_t *p;
    size_t n = 0;
    switch (t) {
    case TT_BOOL:
        return read_bool(c, &b);
    case TT_BYTE:
        return have(c, 1) && (c->pos++, true);
    case TT_I16:
        return read_int(c, 16, &i);
    case TT_I32:
        return read_int(c, 32, &i);
    case TT_I64:
        return read_int(c, 64, &i);
    case TT_DOUBLE:
        return read_double(c, &d);
    case TT_STRING:
        return read_bytes(c, &p, &n);
    case TT_STRUCT: {
        int16_t last = 0;
        for (;;) {
            int ft;
            int16_t id;
            if (!read_field(c, &ft, &id, &last))
                return false;
            if (ft == TT_STOP)
                return true;
            if (!skip(c, ft, depth + 1))
                return false;
        }
    }
    case TT_LIST:
    case TT_SET: {
        int et;
        if (!read_list(c, &et, &n))
            return false;
        for (size_t k = 0; k < n; k++) {
            c->pending_bool = -1;
            if (!skip(c, et, depth + 1))
                return false;
        }
        return true;
    }
    case TT_MAP: {
        int kt, vt;
        if (!read_map(c, &kt, &vt, &n))
            return false;
        for (size_t k = 0; k < n; k++) {
            c->pending_bool = -1;
            if (!skip(c, kt, depth + 1))
                return false;
            c->pending_bool = -1;
            if (!skip(c, vt, depth + 1))
                return false;
        }
        return true;
    }
    default:
        return bad_at(c, c->pos, "unknown type %d", t);
    }
}

/* ---- pass 1: the record's layout ------------------------------------------------------ */

typedef struct layout {
    size_t process_at; /* the Process struct (after its field header); 0: none */
    size_t spans_at;   /* the spans list header; 0: none */
    size_t n_spans;
} layout;

static bool scan_batch(cursor *c, layout *lay)
{
    size_t batch_start = c->pos;
    int16_t last = 0;
    for (;;) {
        int t;
        int16_t id;
        if (!read_field(c, &t, &id, &last))
            return false;
        if (t == TT_STOP)
            break;
        if (id == 1 && t == TT_STRUCT) {
            lay->process_at = c->pos;
        } else if (id == 2 && t == TT_LIST) {
            size_t at = c->pos;
            int et;
            size_t n;
            if (!read_list(c, &et, &n))
                return false;
            if (n > 0 && et != TT_STRUCT)
                return bad_at(c, at, "Batch.spans is not a list of structs");
            lay->spans_at = at;
            lay->n_spans = n;
            c->pos = at;
        }
        if (!skip(c, t, 1))
            return false;
    }
    if (!lay->process_at)
        return bad_at(c, batch_start, "Batch has no process (field 1)");
    if (!lay->spans_at)
        return bad_at(c, batch_start, "Batch has no spans (field 2)");
    return true;
}

/* A message header; true when it is emitBatch (CALL or ONEWAY). */
static bool scan_message_header(cursor *c)
{
    size_t start = c->pos;
    const uint8_t *name;
    size_t name_len;
    int type;
    int64_t seq;
    if (c->proto == TW__THRIFT_BINARY) {
        int64_t v;
        if (!read_int(c, 32, &v))
            return false;
        if (v < 0) {
            if (((uint32_t)v & 0xffff0000u) != 0x80010000u)
                return bad_at(c, start, "bad binary protocol version 0x%08x", (unsigned)v);
            type = (int)((uint32_t)v & 0xff);
            if (!read_bytes(c, &name, &name_len) || !read_int(c, 32, &seq))
                return false;
        } else {
            c->pos = start; /* the old form: the i32 was the name's length */
            uint8_t b;
            if (!read_bytes(c, &name, &name_len) || !read_u8(c, &b) || !read_int(c, 32, &seq))
                return false;
            type = b;
        }
    } else {
        uint8_t id, vt;
        if (!read_u8(c, &id) || !read_u8(c, &vt))
            return false;
        if (id != 0x82 || (vt & 0x1f) != 1)
            return bad_at(c, start, "not a compact protocol message header");
        type = vt >> 5;
        uint64_t u;
        if (!read_varint(c, 5, &u) || !read_bytes(c, &name, &name_len))
            return false;
    }
    if (name_len != 9 || memcmp(name, "emitBatch", 9) != 0)
        return bad_at(c, start, "message is not emitBatch");
    if (type != 1 && type != 4)
        return bad_at(c, start, "emitBatch message of type %d (not CALL or ONEWAY)", type);
    return true;
}

/* The args struct: returns the Batch's offset in *batch_at. */
static bool scan_args(cursor *c, size_t *batch_at, layout *lay)
{
    size_t start = c->pos;
    int16_t last = 0;
    *batch_at = 0;
    for (;;) {
        int t;
        int16_t id;
        if (!read_field(c, &t, &id, &last))
            return false;
        if (t == TT_STOP)
            break;
        if (id == 1 && t == TT_STRUCT) {
            *batch_at = c->pos;
            *lay = (layout){0, 0, 0};
            if (!scan_batch(c, lay))
                return false;
        } else if (!skip(c, t, 1)) {
            return false;
        }
    }
    if (!*batch_at)
        return bad_at(c, start, "emitBatch without a batch (field 1)");
    return true;
}

/* ---- pass 2: building the model ------------------------------------------------------- */

typedef struct decoder {
    cursor c;
    tw__buf scratch; /* NUL-terminated copies of keys and names */
    tw__jaeger_decode_result result;
    char why[192];
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

/* Reads one Tag. False on a cursor error or a semantic error (d->why set,
 * d->c still OK). */
static bool read_tag(decoder *d, tag_in *tag)
{
    cursor *c = &d->c;
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
        if (!read_field(c, &t, &id, &last))
            return false;
        if (t == TT_STOP)
            break;
        bool ok;
        if (id == 1 && t == TT_STRING) {
            ok = read_bytes(c, &tag->key, &tag->key_len);
        } else if (id == 2 && t == TT_I32) {
            ok = read_int(c, 32, &tag->vtype);
            tag->has_vtype = true;
        } else if (id == 3 && t == TT_STRING) {
            ok = read_bytes(c, &str, &str_len);
        } else if (id == 4 && t == TT_DOUBLE) {
            ok = read_double(c, &dbl);
        } else if (id == 5 && t == TT_BOOL) {
            ok = read_bool(c, &boolean);
        } else if (id == 6 && t == TT_I64) {
            ok = read_int(c, 64, &i64);
        } else if (id == 7 && t == TT_STRING) {
            ok = read_bytes(c, &bin, &bin_len);
        } else {
            ok = skip(c, t, 2);
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

/* Decodes a list<Tag> into tw__tag slots given by @push (span tags, log
 * fields or process tags). Returns false on error (d->why or cursor). */
typedef enum tag_dest { DEST_SPAN, DEST_LOG, DEST_PROCESS } tag_dest;

static bool read_tags(decoder *d, tag_dest dest, tw__span_data *span, tw__log *log,
                      tw__process *process)
{
    int et;
    size_t n;
    if (!read_list(&d->c, &et, &n))
        return false;
    if (n > 0 && et != TT_STRUCT) {
        why_set(d, "a tag list of non-structs");
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        tag_in tag;
        if (!read_tag(d, &tag))
            return false;
        const char *key = cstr(d, tag.key, tag.key_len);
        bool ok = key != NULL;
        bool cut = false;
        if (ok && dest == DEST_PROCESS) {
            ok = tw__process_add_tag(process, key, &tag.value);
        } else if (ok && dest == DEST_SPAN) {
            tw__tag *slot = tw__span_data_push_tag(span);
            ok = slot && tw__tag_set(&span->arena, slot, key, &tag.value, SIZE_MAX, &cut);
            if (ok)
                span->n_tags++;
        } else if (ok) {
            ok = tw__tag_set(&span->arena, &log->fields[log->n_fields], key, &tag.value, SIZE_MAX,
                             &cut);
            if (ok)
                log->n_fields++;
        }
        if (!ok) {
            d->result = TW__JAEGER_NOMEM;
            return false;
        }
    }
    return true;
}

static bool read_process(decoder *d, tw__process *p)
{
    cursor *c = &d->c;
    int16_t last = 0;
    const uint8_t *name = (const uint8_t *)"";
    size_t name_len = 0;
    for (;;) {
        int t;
        int16_t id;
        if (!read_field(c, &t, &id, &last))
            return false;
        if (t == TT_STOP)
            break;
        bool ok;
        if (id == 1 && t == TT_STRING) {
            ok = read_bytes(c, &name, &name_len);
        } else if (id == 2 && t == TT_LIST) {
            /* A repeated field: the last one wins, as in generated code. */
            p->n_tags = 0;
            ok = read_tags(d, DEST_PROCESS, NULL, NULL, p);
        } else {
            ok = skip(c, t, 2);
        }
        if (!ok)
            return false;
    }
    const char *service = cstr(d, name, name_len);
    if (!service || !tw__process_set_service(p, service)) {
        d->result = TW__JAEGER_NOMEM;
        return false;
    }
    return true;
}

static bool read_logs(decoder *d, tw__span_data *span)
{
    cursor *c = &d->c;
    int et;
    size_t n;
    if (!read_list(c, &et, &n))
        return false;
    if (n > 0 && et != TT_STRUCT) {
        why_set(d, "logs is not a list of structs");
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t ts = 0;
        tw__log *log = NULL;
        int16_t last = 0;
        for (;;) {
            int t;
            int16_t id;
            if (!read_field(c, &t, &id, &last))
                return false;
            if (t == TT_STOP)
                break;
            bool ok;
            if (id == 1 && t == TT_I64) {
                ok = read_int(c, 64, &ts);
            } else if (id == 2 && t == TT_LIST) {
                /* The field count is known before the fields: one array. */
                size_t at = c->pos;
                int ft;
                size_t nf;
                if (!read_list(c, &ft, &nf))
                    return false;
                c->pos = at;
                if (!log) {
                    log = tw__span_data_push_log(span, nf);
                    if (!log) {
                        d->result = TW__JAEGER_NOMEM;
                        return false;
                    }
                    span->n_logs++;
                } else if (nf > 0) {
                    log->fields = tw__arena_alloc(&span->arena, nf * sizeof(tw__tag));
                    if (!log->fields) {
                        d->result = TW__JAEGER_NOMEM;
                        return false;
                    }
                }
                log->n_fields = 0;
                ok = read_tags(d, DEST_LOG, span, log, NULL);
            } else {
                ok = skip(c, t, 3);
            }
            if (!ok)
                return false;
        }
        if (!log) {
            log = tw__span_data_push_log(span, 0);
            if (!log) {
                d->result = TW__JAEGER_NOMEM;
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
    cursor *c = &d->c;
    int et;
    size_t n;
    if (!read_list(c, &et, &n))
        return false;
    if (n > 0 && et != TT_STRUCT) {
        why_set(d, "references is not a list of structs");
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t type = 0, lo = 0, hi = 0, id64 = 0;
        bool has_type = false, has_lo = false, has_id = false;
        int16_t last = 0;
        for (;;) {
            int t;
            int16_t id;
            if (!read_field(c, &t, &id, &last))
                return false;
            if (t == TT_STOP)
                break;
            bool ok;
            if (id == 1 && t == TT_I32) {
                ok = read_int(c, 32, &type);
                has_type = true;
            } else if (id == 2 && t == TT_I64) {
                ok = read_int(c, 64, &lo);
                has_lo = true;
            } else if (id == 3 && t == TT_I64) {
                ok = read_int(c, 64, &hi);
            } else if (id == 4 && t == TT_I64) {
                ok = read_int(c, 64, &id64);
                has_id = true;
            } else {
                ok = skip(c, t, 3);
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
            d->result = TW__JAEGER_NOMEM;
            return false;
        }
    }
    return true;
}

/* One Span struct. Returns the record, or NULL with d->why (a bad span),
 * d->result NOMEM, or a cursor error. *warned: the duration was negative. */
static tw__span_data *read_span(decoder *d, bool *warned)
{
    cursor *c = &d->c;
    tw__span_data *s = tw__span_data_new();
    if (!s) {
        d->result = TW__JAEGER_NOMEM;
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
        if (!read_field(c, &t, &id, &last))
            goto fail;
        if (t == TT_STOP)
            break;
        bool ok;
        if (t == TT_I64 && (id == 1 || id == 2 || id == 3 || id == 4 || id == 8 || id == 9)) {
            int64_t v;
            ok = read_int(c, 64, &v);
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
        } else if (id == 5 && t == TT_STRING) {
            ok = read_bytes(c, &op, &op_len);
        } else if (id == 6 && t == TT_LIST) {
            s->n_refs = 0; /* a repeated field: the last one wins */
            ok = read_refs(d, s);
        } else if (id == 7 && t == TT_I32) {
            ok = read_int(c, 32, &flags);
        } else if (id == 10 && t == TT_LIST) {
            s->n_tags = 0;
            ok = read_tags(d, DEST_SPAN, s, NULL, NULL);
        } else if (id == 11 && t == TT_LIST) {
            s->n_logs = 0;
            ok = read_logs(d, s);
        } else {
            ok = skip(c, t, 2);
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
        d->result = TW__JAEGER_NOMEM;
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

/* ---- the record ----------------------------------------------------------------------- */

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

tw__jaeger_decode_result tw__jaeger_decode(const uint8_t *data, size_t len,
                                           tw__thrift_protocol protocol, bool is_message,
                                           const tw__jaeger_sink *sink, tw__jaeger_record *info,
                                           size_t *need, size_t *err_offset, char *why,
                                           size_t why_size)
{
    if (protocol != TW__THRIFT_BINARY && protocol != TW__THRIFT_COMPACT) {
        if (why && why_size)
            snprintf(why, why_size, "unknown protocol");
        if (err_offset)
            *err_offset = 0;
        return TW__JAEGER_MALFORMED;
    }
    if (why && why_size)
        why[0] = '\0';
    decoder d;
    cursor_init(&d.c, data, len, protocol);
    tw__buf_init(&d.scratch);
    d.result = TW__JAEGER_OK;
    d.why[0] = '\0';

    /* Pass 1. */
    layout lay = {0, 0, 0};
    size_t batch_at = 0;
    bool ok = is_message ? scan_message_header(&d.c) && scan_args(&d.c, &batch_at, &lay)
                         : scan_batch(&d.c, &lay);
    if (!ok) {
        if (d.c.state == C_TRUNC) {
            if (need)
                *need = d.c.need;
            return TW__JAEGER_TRUNCATED;
        }
        if (err_offset)
            *err_offset = d.c.err_at;
        if (why && why_size)
            snprintf(why, why_size, "%s", d.c.why);
        return TW__JAEGER_MALFORMED;
    }
    size_t size = d.c.pos;
    if (info)
        *info = (tw__jaeger_record){size, lay.n_spans, is_message, protocol};

    /* Pass 2: the structure is known to be sound, so cursor errors cannot
     * happen here; they are still handled as MALFORMED. */
    tw__process process;
    tw__process_init(&process);
    tw__jaeger_decode_result result = TW__JAEGER_OK;
    d.c.pos = lay.process_at;
    if (!read_process(&d, &process)) {
        result = d.result == TW__JAEGER_NOMEM ? TW__JAEGER_NOMEM : TW__JAEGER_MALFORMED;
        if (result == TW__JAEGER_MALFORMED) {
            if (err_offset)
                *err_offset = lay.process_at;
            if (why && why_size)
                snprintf(why, why_size, "Batch.process: %s", d.c.state ? d.c.why : d.why);
        }
        goto done;
    }
    d.c.pos = lay.spans_at;
    int et;
    size_t n;
    if (!read_list(&d.c, &et, &n)) {
        result = TW__JAEGER_MALFORMED;
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        size_t at = d.c.pos;
        bool warned = false;
        tw__span_data *span = read_span(&d, &warned);
        if (d.result == TW__JAEGER_NOMEM) {
            result = TW__JAEGER_NOMEM;
            goto done;
        }
        if (d.c.state != C_OK) {
            result = TW__JAEGER_MALFORMED;
            if (err_offset)
                *err_offset = d.c.err_at;
            if (why && why_size)
                snprintf(why, why_size, "%s", d.c.why);
            goto done;
        }
        if (!span) {
            /* A bad span: its extent, for the caller's reject. */
            d.c.state = C_OK;
            d.c.pos = at;
            d.c.pending_bool = -1;
            char reason[sizeof d.why];
            memcpy(reason, d.why, sizeof reason);
            if (!skip(&d.c, TT_STRUCT, 1)) {
                result = TW__JAEGER_MALFORMED;
                goto done;
            }
            if (sink && sink->bad_span &&
                !sink->bad_span(sink->user_data, i, at, d.c.pos - at, reason)) {
                result = TW__JAEGER_STOPPED;
                goto done;
            }
            continue;
        }
        if (warned && sink && sink->warn)
            sink->warn(sink->user_data, i, "negative duration: set to 0");
        if (sink && sink->span) {
            if (!sink->span(sink->user_data, span, &process)) {
                result = TW__JAEGER_STOPPED;
                goto done;
            }
        } else {
            tw__span_data_unref(span);
        }
    }
done:
    if (result == TW__JAEGER_MALFORMED && why && why_size && !why[0])
        snprintf(why, why_size, "inconsistent record");
    tw__process_clear(&process);
    tw__buf_free(&d.scratch);
    return result;
}
