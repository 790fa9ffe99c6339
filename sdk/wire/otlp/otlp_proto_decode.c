/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/otlp/otlp_proto_decode.c: OTLP protobuf -> span model (the decoding
 * half of otlp_proto.h), for `tracewire convert --from otlp-proto` and the
 * tests. The reading rules are wire/otlp/otlp_map.h's, shared with the
 * OTLP/JSON reader; this file turns the protobuf wire format into the plain
 * fields those builders take.
 *
 * It reads the wire format itself (wire/core/pb_read.h's field reader), in
 * one pass per message, straight into the model: no message structs, no
 * second pass to check the input first. Measured on the benchmark's spans
 * (callgrind), checking and unpacking a span with protobuf-c cost about
 * 18,000 instructions, a third of a whole otlp-proto -> zipkin-v2-json
 * conversion; this reader costs a tenth of that. The guards protobuf-c's
 * unpack needed are built in: every length is checked against its message
 * before it is used, nothing is allocated but the model (bounded by the
 * input), and values nest at most TW__OTLP_PROTO_MAX_VALUE_DEPTH deep (the
 * one recursion). protobuf-c stays the reference: the unit suite and the
 * fuzz target decode every span both ways (protobuf-c's unpack of the
 * generated code, then the same mapping) and compare the models. The
 * KeyValue layout every exporter writes is read in one step
 * (kv_common), beside the general reading that takes every other layout
 * and names every error; the unit suite and the fuzz target decode with
 * it off and on (otlp_proto_int.h) and compare spans and rejects.
 *
 * Protobuf's rules are kept: fields in any order, unknown fields skipped, a
 * singular scalar given twice takes the last, a singular message given twice
 * is the merge of both (resource attributes append, a later scope or status
 * field replaces an earlier one), a oneof takes its last member.
 *
 * Memory: one span's record at a time, plus the JSON text of array and
 * kvlist values. Locking: none.
 */
#include "wire/otlp/otlp_proto.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "tracewire/common.h"
#include "wire/core/pb_read.h"
#include "wire/core/pb_write.h"
#include "wire/core/json_common.h"
#include "wire/otlp/otlp_map.h"
#include "wire/otlp/otlp_proto_fields.h"
#include "wire/otlp/otlp_proto_int.h"

/* ---- context and reasons -------------------------------------------------------------------- */

/* Where a message sits, for reasons: a chain on the stack, printed only on
 * failure ("events[1].attributes[0].value"). */
typedef struct path {
    const struct path *up;
    const char *name;
    size_t index; /* SIZE_MAX: not repeated */
} path;

typedef struct ctx {
    const tw__otlp_proto_sink *sink;
    const uint8_t *base; /* the buffer byte offsets count from */
    uint64_t base_offset;
    tw__buf text;    /* scratch: a NUL-terminated key */
    char small[128]; /* ...or here when it is short */
    char why[320];
    bool is_nomem;
} ctx;

static size_t path_text(const path *p, char *out, size_t size)
{
    if (!p)
        return 0;
    size_t n = path_text(p->up, out, size);
    if (n >= size)
        return n;
    int w = p->index == SIZE_MAX
                ? snprintf(out + n, size - n, "%s%s", n ? "." : "", p->name)
                : snprintf(out + n, size - n, "%s%s[%zu]", n ? "." : "", p->name, p->index);
    return n + (w > 0 ? (size_t)w : 0);
}

/* Sets c->why to "PATH: byte N: reason"; returns false. */
static bool fail_at(ctx *c, const path *p, const uint8_t *at, const char *fmt, ...) TW_PRINTF(4, 5);
static bool fail_at(ctx *c, const path *p, const uint8_t *at, const char *fmt, ...)
{
    /* Deep paths are long: keep the first levels and the end of the reason. */
    char where[160];
    where[0] = '\0';
    size_t n = path_text(p, where, sizeof where);
    if (n >= sizeof where)
        memcpy(where + sizeof where - 4, "...", 4);
    int w = snprintf(c->why, sizeof c->why, "%s%sbyte %" PRIu64 ": ", where, n ? ": " : "",
                     c->base_offset + (uint64_t)(at - c->base));
    if (w > 0 && (size_t)w < sizeof c->why) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->why + w, sizeof c->why - (size_t)w, fmt, ap);
        va_end(ap);
    }
    return false;
}

/* The next field of data[0..len); false with c->why when the bytes are not
 * protobuf, or @want (a wire type, or -1 for any) does not match a field
 * the caller knows. */
static tw__pb_next next_field(ctx *c, const path *p, const uint8_t *data, size_t len, size_t *pos,
                              tw__pb_field *f)
{
    const char *why;
    tw__pb_next next = tw__pb_next_field(data, len, pos, f, &why);
    if (next == TW__PB_NEXT_BAD)
        fail_at(c, p, data + *pos, "%s", why);
    return next;
}

static bool wire_type_is(ctx *c, const path *p, const uint8_t *data, const tw__pb_field *f,
                         uint8_t want, const char *name)
{
    if (f->wire_type == want)
        return true;
    return fail_at(c, p, data + f->offset, "%s has wire type %u where its type needs %u", name,
                   (unsigned)f->wire_type, (unsigned)want);
}

static uint64_t be64(const uint8_t *p)
{
    /* Spelled out: compilers make it one load and a byte swap (the loop it
     * replaces was a loop). */
    return (uint64_t)p[0] << 56 | (uint64_t)p[1] << 48 | (uint64_t)p[2] << 40 |
           (uint64_t)p[3] << 32 | (uint64_t)p[4] << 24 | (uint64_t)p[5] << 16 |
           (uint64_t)p[6] << 8 | (uint64_t)p[7];
}

/* A trace id: 16 bytes (8 are a 64-bit id), not all zero. */
static bool trace_id(ctx *c, const path *p, const uint8_t *at, const char *what, const uint8_t *b,
                     size_t len, uint64_t *high, uint64_t *low)
{
    if (len != 16 && len != 8)
        return fail_at(c, p, at, "%s is %zu bytes, not 16", what, len);
    *high = len == 16 ? be64(b) : 0;
    *low = be64(b + len - 8);
    if ((*high | *low) == 0)
        return fail_at(c, p, at, "%s is all zeros", what);
    return true;
}

/* A span id: 8 bytes, not zero (a parent may be empty or zero: none). */
static bool span_id(ctx *c, const path *p, const uint8_t *at, const char *what, const uint8_t *b,
                    size_t len, bool is_parent, uint64_t *id)
{
    *id = 0;
    if (is_parent && len == 0)
        return true;
    if (len != 8)
        return fail_at(c, p, at, "%s is %zu bytes, not 8", what, len);
    *id = be64(b);
    if (*id == 0 && !is_parent)
        return fail_at(c, p, at, "%s is all zeros", what);
    return true;
}

/* A key as a C string (the model's keys are; a NUL byte ends it there):
 * in c->small when it fits, else in c->text. */
static const char *key_text(ctx *c, const uint8_t *key, size_t len)
{
    if (len < sizeof c->small) {
        memcpy(c->small, key, len);
        c->small[len] = '\0';
        return c->small;
    }
    tw__buf_reset(&c->text);
    static const char nul = 0;
    if (!tw__buf_append(&c->text, key, len) || !tw__buf_append(&c->text, &nul, 1)) {
        c->is_nomem = true;
        return NULL;
    }
    return (const char *)c->text.data;
}

/* ---- values ---------------------------------------------------------------------------------- */

static json_t *plain_json(ctx *c, const path *p, const uint8_t *data, size_t len, unsigned depth);

/* The plain JSON of an ArrayValue's or a KeyValueList's items. */
static json_t *list_json(ctx *c, const path *p, const uint8_t *data, size_t len, bool is_kvlist,
                         unsigned depth)
{
    json_t *out = is_kvlist ? json_object() : json_array();
    if (!out) {
        c->is_nomem = true;
        return NULL;
    }
    size_t pos = 0, i = 0;
    tw__pb_field f;
    tw__pb_next next;
    while ((next = next_field(c, p, data, len, &pos, &f)) == TW__PB_NEXT_FIELD) {
        if (f.number != LIST_VALUES)
            continue;
        path here = {p, "values", i++};
        if (!wire_type_is(c, &here, data, &f, TW__PB_LEN, "values"))
            goto fail;
        if (!is_kvlist) {
            json_t *v = plain_json(c, &here, f.data, f.len, depth + 1);
            if (!v || !tw__json_push(out, v))
                goto fail_nomem_or_why;
            continue;
        }
        /* A KeyValue: key, value (AnyValue), in any order. */
        const uint8_t *key = (const uint8_t *)"", *value = NULL;
        size_t key_len = 0, value_len = 0, kpos = 0;
        tw__pb_field kf;
        tw__pb_next knext;
        while ((knext = next_field(c, &here, f.data, f.len, &kpos, &kf)) == TW__PB_NEXT_FIELD) {
            if (kf.number == KV_KEY && wire_type_is(c, &here, f.data, &kf, TW__PB_LEN, "key")) {
                key = kf.data;
                key_len = kf.len;
            } else if (kf.number == KV_VALUE &&
                       wire_type_is(c, &here, f.data, &kf, TW__PB_LEN, "value")) {
                value = kf.data;
                value_len = kf.len;
            } else if (kf.number == KV_KEY || kf.number == KV_VALUE) {
                goto fail;
            }
        }
        if (knext == TW__PB_NEXT_BAD)
            goto fail;
        path vpath = {&here, "value", SIZE_MAX};
        json_t *v = value ? plain_json(c, &vpath, value, value_len, depth + 1) : json_string("");
        const char *k = v ? key_text(c, key, key_len) : NULL;
        if (!v || !k || !tw__json_set(out, k, strlen(k), v)) {
            if (v && !k)
                json_decref(v);
            goto fail_nomem_or_why;
        }
    }
    if (next == TW__PB_NEXT_BAD)
        goto fail;
    return out;
fail_nomem_or_why:
    if (!c->why[0])
        c->is_nomem = true;
fail:
    json_decref(out);
    return NULL;
}

/* An AnyValue's members in data[0..len): the last member set wins (a oneof). */
typedef struct any {
    int which; /* 0: none, else the field number */
    uint64_t scalar;
    const uint8_t *data;
    size_t len;
} any;

static bool read_any(ctx *c, const path *p, const uint8_t *data, size_t len, any *a)
{
    a->which = 0;
    size_t pos = 0;
    tw__pb_field f;
    tw__pb_next next;
    while ((next = next_field(c, p, data, len, &pos, &f)) == TW__PB_NEXT_FIELD) {
        static const uint8_t wire[8] = {0,          TW__PB_LEN, TW__PB_VARINT, TW__PB_VARINT,
                                        TW__PB_I64, TW__PB_LEN, TW__PB_LEN,    TW__PB_LEN};
        static const char *const names[8] = {"",
                                             "string_value",
                                             "bool_value",
                                             "int_value",
                                             "double_value",
                                             "array_value",
                                             "kvlist_value",
                                             "bytes_value"};
        if (f.number < ANY_STRING || f.number > ANY_BYTES)
            continue;
        if (!wire_type_is(c, p, data, &f, wire[f.number], names[f.number]))
            return false;
        a->which = (int)f.number;
        a->scalar = f.value;
        a->data = f.data;
        a->len = f.len;
    }
    return next != TW__PB_NEXT_BAD;
}

static json_t *plain_json(ctx *c, const path *p, const uint8_t *data, size_t len, unsigned depth)
{
    if (depth > TW__OTLP_PROTO_MAX_VALUE_DEPTH) {
        fail_at(c, p, data, "values nested deeper than %d levels", TW__OTLP_PROTO_MAX_VALUE_DEPTH);
        return NULL;
    }
    any a;
    if (!read_any(c, p, data, len, &a))
        return NULL;
    switch (a.which) {
    case ANY_STRING:
        return tw__json_text((const char *)a.data, a.len);
    case ANY_BOOL:
        return json_boolean(a.scalar != 0);
    case ANY_INT:
        return json_integer((json_int_t)a.scalar);
    case ANY_DOUBLE: {
        double d;
        memcpy(&d, &a.scalar, sizeof d);
        if (isfinite(d))
            return json_real(d);
        char text[32];
        tw__double_text(d, text, sizeof text);
        return json_string(text);
    }
    case ANY_BYTES: {
        char *b64 = tw__base64(a.data, a.len);
        json_t *s = b64 ? json_string(b64) : NULL;
        free(b64);
        return s;
    }
    case ANY_ARRAY:
    case ANY_KVLIST: {
        path here = {p, a.which == ANY_ARRAY ? "array_value" : "kvlist_value", SIZE_MAX};
        return list_json(c, &here, a.data, a.len, a.which == ANY_KVLIST, depth);
    }
    default:
        return json_string(""); /* an empty AnyValue */
    }
}

/* The AnyValue @a (read from data[0..len); NULL data: none) as a typed value;
 * text made here goes to *owned (the caller frees it). False with c->why, or
 * c->is_nomem. */
static bool any_to_value(ctx *c, const path *p, const any *a, const uint8_t *data, size_t len,
                         tw_value *out, char **owned)
{
    *owned = NULL;
    *out = (tw_value){.type = TW_VALUE_STRING, .len = 0, .as.str = ""};
    if (!data)
        return true;
    switch (a->which) {
    case ANY_STRING:
        out->as.str = (const char *)a->data;
        out->len = a->len;
        return true;
    case ANY_BOOL:
        *out = (tw_value){.type = TW_VALUE_BOOL, .as.boolean = a->scalar != 0};
        return true;
    case ANY_INT:
        *out = (tw_value){.type = TW_VALUE_INT64, .as.i64 = (int64_t)a->scalar};
        return true;
    case ANY_DOUBLE:
        out->type = TW_VALUE_DOUBLE;
        memcpy(&out->as.dbl, &a->scalar, sizeof out->as.dbl);
        return true;
    case ANY_BYTES:
        *out = (tw_value){.type = TW_VALUE_BINARY, .len = a->len, .as.bin = a->data};
        return true;
    case ANY_ARRAY:
    case ANY_KVLIST: {
        json_t *plain = plain_json(c, p, data, len, 0);
        char *text =
            plain ? json_dumps(plain, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY) : NULL;
        json_decref(plain);
        if (!text) {
            if (!c->why[0])
                c->is_nomem = true;
            return false;
        }
        *owned = text;
        out->as.str = text;
        out->len = strlen(text);
        return true;
    }
    default:
        return true; /* an empty AnyValue: "" */
    }
}

/* Calls @add(target, key, key_len, value) for the KeyValue in data[0..len):
 * key_len stops at the key's first NUL byte (the model's keys are C strings,
 * as protobuf-c's are), and the key need not be NUL-terminated. */
typedef bool (*add_fn)(void *target, const char *key, size_t key_len, const tw_value *value);

static size_t key_len_to_nul(const uint8_t *key, size_t len)
{
    const uint8_t *nul = len ? memchr(key, 0, len) : NULL;
    return nul ? (size_t)(nul - key) : len;
}

/* The KeyValue every OTLP exporter writes, read in one step: the key
 * (field 1), then the value (field 2) ending the message, both with
 * one-byte lengths, the value empty or holding one member: a string, a
 * bool, an int, a double or bytes. True with what key_value's general
 * reading gives for the same bytes (the key to its first NUL); false for
 * every other layout, which the general reading then takes (it alone
 * names errors). Measured on the benchmark's spans (callgrind), the
 * general reading (a field loop per message, the AnyValue read twice, the
 * key copied to be measured) cost ~340 instructions an attribute before
 * the tag was added; this costs about 100. */
static inline __attribute__((always_inline)) bool
kv_common(const uint8_t *data, size_t len, const char **key, size_t *key_len, tw_value *v)
{
    if (len < 4 || data[0] != TW__PB_TAG(KV_KEY, TW__PB_LEN) || data[1] >= 0x80)
        return false;
    size_t kl = data[1];
    if (kl > len - 4 || data[2 + kl] != TW__PB_TAG(KV_VALUE, TW__PB_LEN) || data[3 + kl] >= 0x80 ||
        data[3 + kl] != len - 4 - kl)
        return false;
    const uint8_t *a = data + 4 + kl;
    size_t al = len - 4 - kl; /* < 128 */
    if (al == 0) {
        *v = (tw_value){.type = TW_VALUE_STRING, .len = 0, .as.str = ""}; /* an empty AnyValue */
    } else {
        switch (a[0]) {
        case TW__PB_TAG(ANY_STRING, TW__PB_LEN):
        case TW__PB_TAG(ANY_BYTES, TW__PB_LEN):
            if (al < 2 || a[1] != al - 2)
                return false;
            if (a[0] == TW__PB_TAG(ANY_STRING, TW__PB_LEN))
                *v = (tw_value){
                    .type = TW_VALUE_STRING, .len = al - 2, .as.str = (const char *)a + 2};
            else
                *v = (tw_value){.type = TW_VALUE_BINARY, .len = al - 2, .as.bin = a + 2};
            break;
        case TW__PB_TAG(ANY_BOOL, TW__PB_VARINT):
        case TW__PB_TAG(ANY_INT, TW__PB_VARINT): {
            size_t p = 1;
            uint64_t x;
            if (!tw__pb_read_varint(a, al, &p, &x) || p != al)
                return false;
            if (a[0] == TW__PB_TAG(ANY_BOOL, TW__PB_VARINT))
                *v = (tw_value){.type = TW_VALUE_BOOL, .as.boolean = x != 0};
            else
                *v = (tw_value){.type = TW_VALUE_INT64, .as.i64 = (int64_t)x};
            break;
        }
        case TW__PB_TAG(ANY_DOUBLE, TW__PB_I64): {
            if (al != 9)
                return false;
            uint64_t x = 0;
            for (int i = 8; i >= 1; i--)
                x = x << 8 | a[i]; /* little-endian */
            *v = (tw_value){.type = TW_VALUE_DOUBLE};
            memcpy(&v->as.dbl, &x, sizeof v->as.dbl);
            break;
        }
        default:
            return false;
        }
    }
    *key = (const char *)data + 2;
    *key_len = key_len_to_nul(data + 2, kl);
    return true;
}

bool tw__otlp_proto_key_value_common(const uint8_t *data, size_t len, const char **key,
                                     size_t *key_len, tw_value *v)
{
    return kv_common(data, len, key, key_len, v);
}

/* Test hook (otlp_proto_int.h): whether key_value tries the one-step
 * reading first. Written only by tests, before they decode. */
static bool is_common_kv_off;

void tw__otlp_proto_set_common_kv(bool on)
{
    is_common_kv_off = !on;
}

static bool key_value(ctx *c, const path *p, const uint8_t *data, size_t len, add_fn add,
                      void *target)
{
    const char *ckey;
    size_t ckey_len;
    tw_value cv;
    if (!is_common_kv_off && kv_common(data, len, &ckey, &ckey_len, &cv)) {
        if (add(target, ckey, ckey_len, &cv))
            return true;
        c->is_nomem = true;
        return false;
    }
    any a = {0};
    const uint8_t *key = (const uint8_t *)"", *value = NULL;
    size_t key_len = 0, value_len = 0, pos = 0;
    tw__pb_field f;
    tw__pb_next next;
    path vpath = {p, "value", SIZE_MAX};
    while ((next = next_field(c, p, data, len, &pos, &f)) == TW__PB_NEXT_FIELD) {
        if (f.number == KV_KEY) {
            if (!wire_type_is(c, p, data, &f, TW__PB_LEN, "key"))
                return false;
            key = f.data;
            key_len = f.len;
        } else if (f.number == KV_VALUE) {
            if (!wire_type_is(c, p, data, &f, TW__PB_LEN, "value"))
                return false;
            /* A value given twice merges: the member the later one sets wins. */
            any next_a;
            if (!read_any(c, &vpath, f.data, f.len, &next_a))
                return false;
            if (next_a.which || !value) {
                value = f.data;
                value_len = f.len;
                a = next_a;
            }
        }
    }
    if (next == TW__PB_NEXT_BAD)
        return false;
    tw_value v;
    char *owned;
    if (!any_to_value(c, &vpath, &a, value, value_len, &v, &owned))
        return false;
    bool ok = add(target, (const char *)key, key_len_to_nul(key, key_len), &v);
    free(owned);
    if (!ok)
        c->is_nomem = true;
    return ok;
}

/* ---- the span -------------------------------------------------------------------------------- */

static bool add_span_attribute(void *target, const char *key, size_t key_len, const tw_value *value)
{
    return tw__otlp_span_add_attribute_n(target, key, key_len, value);
}

/* A span attribute: the common KeyValue straight to the record, without
 * key_value's indirect call. */
static bool span_attribute(ctx *c, const path *p, const uint8_t *data, size_t len, tw__span_data *s)
{
    const char *key;
    size_t key_len;
    tw_value v;
    if (is_common_kv_off || !kv_common(data, len, &key, &key_len, &v))
        return key_value(c, p, data, len, add_span_attribute, s);
    if (tw__otlp_span_add_attribute_n(s, key, key_len, &v))
        return true;
    c->is_nomem = true;
    return false;
}

typedef struct event_target {
    tw__span_data *span;
    tw__log *log;
} event_target;

static bool add_event_attribute(void *target, const char *key, size_t key_len,
                                const tw_value *value)
{
    event_target *e = target;
    return tw__otlp_event_add_attribute_n(e->span, e->log, key, key_len, value);
}

/* Resource attributes (a few per thousand spans) take C-string keys. */
typedef struct process_target {
    ctx *c;
    tw__process *process;
} process_target;

static bool add_process_tag(void *target, const char *key, size_t key_len, const tw_value *value)
{
    process_target *t = target;
    const char *k = key_text(t->c, (const uint8_t *)key, key_len);
    if (!k)
        return false;
    return tw__otlp_is_service_key(k) ? tw__otlp_process_set_service(t->process, value)
                                      : tw__process_add_tag(t->process, k, value);
}

/* The fields of a Status message (merged over its occurrences). */
static bool read_status(ctx *c, const path *p, const uint8_t *data, size_t len,
                        tw__otlp_span_fields *f)
{
    size_t pos = 0;
    tw__pb_field sf;
    tw__pb_next next;
    while ((next = next_field(c, p, data, len, &pos, &sf)) == TW__PB_NEXT_FIELD) {
        if (sf.number == STATUS_MESSAGE) {
            if (!wire_type_is(c, p, data, &sf, TW__PB_LEN, "message"))
                return false;
            f->status_message = (const char *)sf.data;
            f->status_message_len = sf.len;
        } else if (sf.number == STATUS_CODE) {
            if (!wire_type_is(c, p, data, &sf, TW__PB_VARINT, "code"))
                return false;
            f->status_code = (int64_t)(int32_t)sf.value;
        }
    }
    return next != TW__PB_NEXT_BAD;
}

static bool read_link(ctx *c, const path *p, const uint8_t *data, size_t len, tw__span_data *s)
{
    const uint8_t *tid = NULL, *sid = NULL;
    size_t tid_len = 0, sid_len = 0, pos = 0, i = 0;
    bool is_child_of = false;
    tw__pb_field f;
    tw__pb_next next;
    while ((next = next_field(c, p, data, len, &pos, &f)) == TW__PB_NEXT_FIELD) {
        if (f.number == LINK_TRACE_ID || f.number == LINK_SPAN_ID) {
            if (!wire_type_is(c, p, data, &f, TW__PB_LEN,
                              f.number == LINK_TRACE_ID ? "trace_id" : "span_id"))
                return false;
            if (f.number == LINK_TRACE_ID) {
                tid = f.data;
                tid_len = f.len;
            } else {
                sid = f.data;
                sid_len = f.len;
            }
        } else if (f.number == LINK_ATTRIBUTES) {
            path ap = {p, "attributes", i++};
            if (!wire_type_is(c, &ap, data, &f, TW__PB_LEN, "attributes"))
                return false;
            /* Only opentracing.ref_type matters: a string value "child_of". */
            const uint8_t *key = (const uint8_t *)"", *value = NULL;
            size_t key_len = 0, value_len = 0, kpos = 0;
            tw__pb_field kf;
            tw__pb_next knext;
            while ((knext = next_field(c, &ap, f.data, f.len, &kpos, &kf)) == TW__PB_NEXT_FIELD) {
                if (kf.number == KV_KEY && kf.wire_type == TW__PB_LEN) {
                    key = kf.data;
                    key_len = kf.len;
                } else if (kf.number == KV_VALUE && kf.wire_type == TW__PB_LEN) {
                    value = kf.data;
                    value_len = kf.len;
                }
            }
            if (knext == TW__PB_NEXT_BAD)
                return false;
            any a = {0};
            path vp = {&ap, "value", SIZE_MAX};
            if (value && !read_any(c, &vp, value, value_len, &a))
                return false;
            const char *k = key_text(c, key, key_len);
            if (!k)
                return false;
            if (a.which == ANY_STRING &&
                tw__otlp_link_attribute_is_child_of(k, (const char *)a.data, a.len))
                is_child_of = true;
        }
    }
    if (next == TW__PB_NEXT_BAD)
        return false;
    uint64_t hi, lo, id;
    if (!trace_id(c, p, data, "trace_id", tid, tid_len, &hi, &lo) ||
        !span_id(c, p, data, "span_id", sid, sid_len, false, &id))
        return false;
    if (!tw__otlp_span_add_link(s, hi, lo, id, is_child_of)) {
        c->is_nomem = true;
        return false;
    }
    return true;
}

static bool read_event(ctx *c, const path *p, const uint8_t *data, size_t len, tw__span_data *s)
{
    uint64_t time_ns = 0;
    const uint8_t *name = NULL;
    size_t name_len = 0, n_attrs = 0, pos = 0;
    tw__pb_field f;
    tw__pb_next next;
    size_t first_attr = SIZE_MAX; /* where the second pass starts */
    /* First the scalars and the attribute count (the log's size). */
    while ((next = next_field(c, p, data, len, &pos, &f)) == TW__PB_NEXT_FIELD) {
        if (f.number == EVENT_ATTRIBUTES && first_attr == SIZE_MAX)
            first_attr = f.offset;
        if (f.number == EVENT_TIME) {
            if (!wire_type_is(c, p, data, &f, TW__PB_I64, "time_unix_nano"))
                return false;
            time_ns = f.value;
        } else if (f.number == EVENT_NAME) {
            if (!wire_type_is(c, p, data, &f, TW__PB_LEN, "name"))
                return false;
            name = f.data;
            name_len = f.len;
        } else if (f.number == EVENT_ATTRIBUTES) {
            if (!wire_type_is(c, p, data, &f, TW__PB_LEN, "attributes"))
                return false;
            n_attrs++;
        }
    }
    if (next == TW__PB_NEXT_BAD)
        return false;
    if (time_ns > INT64_MAX)
        return fail_at(c, p, data, "time_unix_nano is past the year 2262");
    event_target e = {
        s, tw__otlp_span_add_event(s, (int64_t)time_ns, (const char *)name, name_len, n_attrs)};
    if (!e.log) {
        c->is_nomem = true;
        return false;
    }
    pos = first_attr == SIZE_MAX ? len : first_attr;
    size_t i = 0;
    while (tw__pb_next_field(data, len, &pos, &f, &(const char *){NULL}) == TW__PB_NEXT_FIELD) {
        if (f.number != EVENT_ATTRIBUTES)
            continue;
        path ap = {p, "attributes", i++};
        if (!key_value(c, &ap, f.data, f.len, add_event_attribute, &e))
            return false;
    }
    return true;
}

/* Reads the Span in data[0..len) into a new record. NULL with c->why (or
 * c->is_nomem); *is_end_before_start for the warning. */
static tw__span_data *read_span(ctx *c, const uint8_t *data, size_t len, const char *scope_name,
                                size_t scope_name_len, const char *scope_version,
                                size_t scope_version_len, bool *is_end_before_start)
{
    tw__otlp_span_fields fl;
    memset(&fl, 0, sizeof fl);
    const uint8_t *tid = NULL, *sid = NULL, *pid = NULL;
    size_t tid_len = 0, sid_len = 0, pid_len = 0, pos = 0;
    uint64_t start = 0, end = 0;
    uint32_t kind = 0;
    tw__pb_field f;
    tw__pb_next next;
    /* Where pass 2 starts: the first list field (exporters write the lists
     * after the scalars, so pass 2 skips reading those again). */
    size_t first_list = SIZE_MAX;
    /* Pass 1: the scalar fields (they may come after the lists) and the status. */
    while ((next = next_field(c, NULL, data, len, &pos, &f)) == TW__PB_NEXT_FIELD) {
        if (first_list == SIZE_MAX &&
            (f.number == SPAN_ATTRIBUTES || f.number == SPAN_EVENTS || f.number == SPAN_LINKS))
            first_list = f.offset;
        switch (f.number) {
        case SPAN_TRACE_ID:
        case SPAN_SPAN_ID:
        case SPAN_PARENT_SPAN_ID:
        case SPAN_TRACE_STATE:
        case SPAN_NAME:
        case SPAN_ATTRIBUTES:
        case SPAN_EVENTS:
        case SPAN_LINKS:
        case SPAN_STATUS: {
            static const char *const names[16] = {[SPAN_TRACE_ID] = "trace_id",
                                                  [SPAN_SPAN_ID] = "span_id",
                                                  [SPAN_PARENT_SPAN_ID] = "parent_span_id",
                                                  [SPAN_TRACE_STATE] = "trace_state",
                                                  [SPAN_NAME] = "name",
                                                  [SPAN_ATTRIBUTES] = "attributes",
                                                  [SPAN_EVENTS] = "events",
                                                  [SPAN_LINKS] = "links",
                                                  [SPAN_STATUS] = "status"};
            if (!wire_type_is(c, NULL, data, &f, TW__PB_LEN, names[f.number]))
                return NULL;
            if (f.number == SPAN_TRACE_ID) {
                tid = f.data;
                tid_len = f.len;
            } else if (f.number == SPAN_SPAN_ID) {
                sid = f.data;
                sid_len = f.len;
            } else if (f.number == SPAN_PARENT_SPAN_ID) {
                pid = f.data;
                pid_len = f.len;
            } else if (f.number == SPAN_TRACE_STATE) {
                fl.trace_state = (const char *)f.data;
                fl.trace_state_len = f.len;
            } else if (f.number == SPAN_NAME) {
                fl.name = (const char *)f.data;
                fl.name_len = f.len;
            } else if (f.number == SPAN_STATUS) {
                path sp = {NULL, "status", SIZE_MAX};
                if (!read_status(c, &sp, f.data, f.len, &fl))
                    return NULL;
            }
            break;
        }
        case SPAN_KIND:
            if (!wire_type_is(c, NULL, data, &f, TW__PB_VARINT, "kind"))
                return NULL;
            kind = (uint32_t)f.value;
            break;
        case SPAN_START:
        case SPAN_END:
            if (!wire_type_is(c, NULL, data, &f, TW__PB_I64,
                              f.number == SPAN_START ? "start_time_unix_nano"
                                                     : "end_time_unix_nano"))
                return NULL;
            *(f.number == SPAN_START ? &start : &end) = f.value;
            break;
        default:
            break; /* counts, flags, fields of later versions */
        }
    }
    if (next == TW__PB_NEXT_BAD)
        return NULL;
    if (!trace_id(c, NULL, data, "trace_id", tid, tid_len, &fl.trace_id_high, &fl.trace_id_low) ||
        !span_id(c, NULL, data, "span_id", sid, sid_len, false, &fl.span_id) ||
        !span_id(c, NULL, data, "parent_span_id", pid, pid_len, true, &fl.parent_id))
        return NULL;
    if ((int32_t)kind < 0 || kind > 5) {
        fail_at(c, NULL, data, "kind %d is not a SpanKind", (int)(int32_t)kind);
        return NULL;
    }
    if (start > INT64_MAX || end > INT64_MAX) {
        fail_at(c, NULL, data, "%s is past the year 2262",
                start > INT64_MAX ? "start_time_unix_nano" : "end_time_unix_nano");
        return NULL;
    }
    if (!fl.name) {
        fl.name = "";
        fl.name_len = 0;
    }
    fl.kind = kind;
    fl.has_start = start != 0;
    fl.start_ns = (int64_t)start;
    fl.has_end = end != 0;
    fl.end_ns = (int64_t)end;

    tw__span_data *s;
    tw__otlp_build built = tw__otlp_span_new(&fl, &s, is_end_before_start);
    if (built == TW__OTLP_BUILD_NO_START) {
        fail_at(c, NULL, data, "start_time_unix_nano is missing or 0");
        return NULL;
    }
    if (built != TW__OTLP_BUILD_OK) {
        c->is_nomem = true;
        return NULL;
    }
    /* Pass 2: links (the references), attributes (the tags), events (the logs),
     * each list in its own array, so one pass keeps otlp_map.h's order; the
     * tags the scalar fields make come after the attributes. */
    size_t n_links = 0, n_attributes = 0, n_events = 0;
    pos = first_list == SIZE_MAX ? len : first_list;
    while (tw__pb_next_field(data, len, &pos, &f, &(const char *){NULL}) == TW__PB_NEXT_FIELD) {
        bool ok = true;
        if (f.number == SPAN_LINKS) {
            path p = {NULL, "links", n_links++};
            ok = read_link(c, &p, f.data, f.len, s);
        } else if (f.number == SPAN_ATTRIBUTES) {
            path p = {NULL, "attributes", n_attributes++};
            ok = span_attribute(c, &p, f.data, f.len, s);
        } else if (f.number == SPAN_EVENTS) {
            path p = {NULL, "events", n_events++};
            ok = read_event(c, &p, f.data, f.len, s);
        }
        if (!ok)
            goto fail;
    }
    if (!tw__otlp_span_add_field_tags(s, &fl, scope_name, scope_name_len, scope_version,
                                      scope_version_len)) {
        c->is_nomem = true;
        goto fail;
    }
    return s;
fail:
    tw__span_data_unref(s);
    return NULL;
}

/* ---- requests ----------------------------------------------------------------------------------
 */

static tw__otlp_proto_status reject(ctx *c, const char *where, const uint8_t *raw, size_t len)
{
    if (c->sink->reject && !c->sink->reject(c->sink->arg, where, c->why, raw, len))
        return TW__OTLP_PROTO_STOPPED;
    return TW__OTLP_PROTO_OK;
}

/* One ScopeSpans message (number @j of resource_spans[@i]). */
static tw__otlp_proto_status read_scope_spans(ctx *c, const uint8_t *data, size_t len, size_t i,
                                              size_t j, const tw__process *process)
{
    const uint8_t *name = NULL, *version = NULL;
    size_t name_len = 0, version_len = 0, pos = 0;
    tw__pb_field f;
    tw__pb_next next;
    path ss = {NULL, "scope", SIZE_MAX};
    char where[96];
    /* The scope first (it may come after the spans; merged over its occurrences). */
    while ((next = next_field(c, NULL, data, len, &pos, &f)) == TW__PB_NEXT_FIELD) {
        if (f.number == SS_SPANS && !wire_type_is(c, NULL, data, &f, TW__PB_LEN, "spans"))
            break;
        if (f.number != SS_SCOPE)
            continue;
        if (!wire_type_is(c, NULL, data, &f, TW__PB_LEN, "scope"))
            break;
        size_t spos = 0;
        tw__pb_field sf;
        tw__pb_next snext;
        while ((snext = next_field(c, &ss, f.data, f.len, &spos, &sf)) == TW__PB_NEXT_FIELD) {
            if ((sf.number == SCOPE_NAME || sf.number == SCOPE_VERSION) &&
                !wire_type_is(c, &ss, f.data, &sf, TW__PB_LEN,
                              sf.number == SCOPE_NAME ? "name" : "version"))
                break;
            /* proto3 merge: an empty string leaves the earlier value. */
            if (sf.number == SCOPE_NAME && sf.len) {
                name = sf.data;
                name_len = sf.len;
            } else if (sf.number == SCOPE_VERSION && sf.len) {
                version = sf.data;
                version_len = sf.len;
            }
        }
        if (c->why[0])
            break;
    }
    if (c->why[0]) {
        snprintf(where, sizeof where, "resource_spans[%zu].scope_spans[%zu]", i, j);
        return reject(c, where, data, len);
    }
    const char *sname = name ? (const char *)name : "";
    const char *sversion = version ? (const char *)version : "";
    tw__otlp_proto_status st = TW__OTLP_PROTO_OK;
    size_t k = 0;
    pos = 0;
    while (st == TW__OTLP_PROTO_OK &&
           tw__pb_next_field(data, len, &pos, &f, &(const char *){NULL}) == TW__PB_NEXT_FIELD) {
        if (f.number != SS_SPANS)
            continue;
        bool is_end_before_start = false;
        c->why[0] = '\0';
        /* Offsets in reasons count from the span's own first byte's place in the input. */
        tw__span_data *s = read_span(c, f.data, f.len, sname, name_len, sversion, version_len,
                                     &is_end_before_start);
        if (!s && c->is_nomem) {
            st = TW__OTLP_PROTO_NOMEM;
            break;
        }
        bool needs_where = !s || is_end_before_start;
        if (needs_where)
            snprintf(where, sizeof where, "resource_spans[%zu].scope_spans[%zu].spans[%zu]", i, j,
                     k);
        k++;
        if (!s) {
            st = reject(c, where, f.data, f.len);
            continue;
        }
        if (is_end_before_start && c->sink->warn)
            c->sink->warn(c->sink->arg, where, "end_time_unix_nano before start: duration 0");
        if (!c->sink->span(c->sink->arg, s, process, f.data, f.len))
            st = TW__OTLP_PROTO_STOPPED;
    }
    return st;
}

tw__otlp_proto_status tw__otlp_proto_decode_resource_spans(const uint8_t *data, size_t len,
                                                           size_t index, uint64_t base_offset,
                                                           const tw__otlp_proto_sink *sink)
{
    ctx c;
    memset(&c, 0, sizeof c);
    c.sink = sink;
    c.base = data;
    c.base_offset = base_offset;
    tw__buf_init(&c.text);
    char where[64];
    snprintf(where, sizeof where, "resource_spans[%zu]", index);
    tw__process process;
    tw__process_init(&process);
    tw__otlp_proto_status st = TW__OTLP_PROTO_OK;
    size_t pos = 0, n_attrs = 0;
    tw__pb_field f;
    tw__pb_next next;
    bool ok = tw__process_set_service(&process, "");
    c.is_nomem = !ok;
    /* The resource first (merged over its occurrences), and the level well-formed. */
    while (ok && (next = next_field(&c, NULL, data, len, &pos, &f)) == TW__PB_NEXT_FIELD) {
        if (f.number == RS_SCOPE_SPANS) {
            ok = wire_type_is(&c, NULL, data, &f, TW__PB_LEN, "scope_spans");
            continue;
        }
        if (f.number != RS_RESOURCE)
            continue;
        ok = wire_type_is(&c, NULL, data, &f, TW__PB_LEN, "resource");
        size_t rpos = 0;
        tw__pb_field rf;
        tw__pb_next rnext;
        while (ok &&
               (rnext = next_field(&c, NULL, f.data, f.len, &rpos, &rf)) == TW__PB_NEXT_FIELD) {
            if (rf.number != RESOURCE_ATTRIBUTES)
                continue;
            path ap = {&(path){NULL, "resource", SIZE_MAX}, "attributes", n_attrs++};
            ok = wire_type_is(&c, &ap, f.data, &rf, TW__PB_LEN, "attributes") &&
                 key_value(&c, &ap, rf.data, rf.len, add_process_tag,
                           &(process_target){&c, &process});
        }
        ok = ok && rnext != TW__PB_NEXT_BAD;
    }
    ok = ok && next != TW__PB_NEXT_BAD;
    if (!ok) {
        st = c.is_nomem ? TW__OTLP_PROTO_NOMEM : reject(&c, where, data, len);
    } else {
        size_t j = 0;
        pos = 0;
        while (st == TW__OTLP_PROTO_OK &&
               tw__pb_next_field(data, len, &pos, &f, &(const char *){NULL}) == TW__PB_NEXT_FIELD) {
            if (f.number == RS_SCOPE_SPANS) {
                c.why[0] = '\0';
                st = read_scope_spans(&c, f.data, f.len, index, j++, &process);
            }
        }
    }
    tw__process_clear(&process);
    tw__buf_free(&c.text);
    return st;
}

tw__otlp_proto_status tw__otlp_proto_decode_request(const uint8_t *data, size_t len,
                                                    const tw__otlp_proto_sink *sink)
{
    size_t pos = 0, index = 0;
    tw__pb_field f;
    const char *why;
    tw__pb_next next;
    while ((next = tw__pb_next_field(data, len, &pos, &f, &why)) == TW__PB_NEXT_FIELD) {
        if (f.number != REQUEST_RESOURCE_SPANS)
            continue; /* unknown fields are skipped */
        if (f.wire_type != TW__PB_LEN) {
            why = "resource_spans does not have wire type 2";
            pos = f.offset;
            next = TW__PB_NEXT_BAD;
            break;
        }
        tw__otlp_proto_status st = tw__otlp_proto_decode_resource_spans(
            f.data, f.len, index++, (uint64_t)(f.data - data), sink);
        if (st != TW__OTLP_PROTO_OK)
            return st;
    }
    if (next == TW__PB_NEXT_BAD && sink->reject) {
        char reason[160];
        snprintf(reason, sizeof reason, "byte %zu: %s", pos, why);
        if (!sink->reject(sink->arg, "request", reason, data + pos, len - pos))
            return TW__OTLP_PROTO_STOPPED;
    }
    return TW__OTLP_PROTO_OK;
}

/* ---- detection ------------------------------------------------------------------------------ */

/* Whether data[0..len) (possibly cut short by the end of the head) starts
 * like an ExportTraceServiceRequest: its first field is resource_spans, whose
 * first field is resource or scope_spans. Returns a score. */
static int sniff_request(const uint8_t *head, size_t len)
{
    size_t pos = 0;
    uint64_t tag, n;
    if (!tw__pb_read_varint(head, len, &pos, &tag) || tag != TW__PB_TAG(1, TW__PB_LEN) ||
        !tw__pb_read_varint(head, len, &pos, &n) || n < 2)
        return 0;
    size_t rs_end = n < len - pos ? pos + (size_t)n : len;
    /* The first field of the ResourceSpans. */
    if (!tw__pb_read_varint(head, rs_end, &pos, &tag) ||
        (tag != TW__PB_TAG(1, TW__PB_LEN) && tag != TW__PB_TAG(2, TW__PB_LEN)) ||
        !tw__pb_read_varint(head, rs_end, &pos, &n))
        return 0;
    if (n > (uint64_t)(rs_end - pos) && rs_end < len)
        return 0; /* longer than the ResourceSpans that holds it */
    if (tag == TW__PB_TAG(1, TW__PB_LEN)) {
        /* A Resource: its first field is attributes (a KeyValue), or it is empty. */
        if (n == 0)
            return 60;
        if (pos >= len || head[pos] != TW__PB_TAG(1, TW__PB_LEN))
            return 0;
        /* ...whose first field is the key, a string. */
        size_t p = pos + 1;
        uint64_t kv_len;
        if (!tw__pb_read_varint(head, len, &p, &kv_len))
            return 40;
        return p < len && head[p] == TW__PB_TAG(1, TW__PB_LEN) ? 85 : 0;
    }
    /* A ScopeSpans: scope (1) or spans (2). */
    return pos < len && (head[pos] == TW__PB_TAG(1, TW__PB_LEN) ||
                         head[pos] == TW__PB_TAG(2, TW__PB_LEN))
               ? 70
               : 0;
}

int tw__otlp_proto_sniff(const uint8_t *head, size_t len, bool *is_framed)
{
    *is_framed = false;
    if (len >= 5 && head[0] == 0) {
        /* A 4-byte big-endian length before each message: no bare message starts
         * with byte 0 (field number 0 does not exist). */
        *is_framed = true;
        return sniff_request(head + 4, len - 4);
    }
    return sniff_request(head, len);
}
