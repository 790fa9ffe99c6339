/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/thrift_reference.c: Apache Thrift c_glib (generated structs
 * and protocol objects) as the reference of the direct Thrift writer; see
 * thrift_reference.h.
 */
#include "thrift_reference.h"

#include <string.h>

#include <glib-object.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/protocol/thrift_compact_protocol.h>
#include <thrift/c_glib/transport/thrift_memory_buffer.h>

#include "jaeger_decode.h" /* tw_test_patch_thrift_finalizers */
#include "twire_jaeger_jaeger_types.h"
#include "wire/core/utf8.h"

/* ---- a c_glib protocol writing into a byte array --------------------------------------------- */

static ThriftProtocol *protocol_new(tw__thrift_protocol proto)
{
    static bool is_patched;
    if (!is_patched)
        is_patched = tw_test_patch_thrift_finalizers();
    ThriftTransport *transport = g_object_new(THRIFT_TYPE_MEMORY_BUFFER, "buf", g_byte_array_new(),
                                              "owner", TRUE, "buf_size", (guint)G_MAXUINT32, NULL);
    GType type =
        proto == TW__THRIFT_COMPACT ? THRIFT_TYPE_COMPACT_PROTOCOL : THRIFT_TYPE_BINARY_PROTOCOL;
    ThriftProtocol *p = g_object_new(type, "transport", transport, NULL);
    g_object_unref(transport); /* the protocol keeps its own reference */
    return p;
}

/* Moves what @p wrote into @out and frees @p. */
static bool protocol_finish(ThriftProtocol *p, bool ok, tw__buf *out)
{
    GByteArray *bytes = THRIFT_MEMORY_BUFFER(p->transport)->buf;
    ok = ok && tw__buf_append(out, bytes->data, bytes->len);
    g_object_unref(p);
    return ok;
}

/* ---- a span through the generated structs ---------------------------------------------------- */

static bool has_nul(const char *s, size_t len)
{
    return memchr(s, '\0', len) != NULL;
}

bool tw_test_reference_can_carry(const tw__span_data *s)
{
    if (s->operation && has_nul(s->operation, strlen(s->operation)))
        return false; /* (a C string: never, but the check states the rule) */
    for (size_t i = 0; i < s->n_tags; i++) {
        const tw__tag *t = &s->tags[i];
        if (has_nul(t->key, t->key_len) ||
            (t->type == TW_VALUE_STRING && has_nul(t->v.str, t->len)))
            return false;
    }
    for (size_t l = 0; l < s->n_logs; l++) {
        for (size_t i = 0; i < s->logs[l].n_fields; i++) {
            const tw__tag *t = &s->logs[l].fields[i];
            if (has_nul(t->key, t->key_len) ||
                (t->type == TW_VALUE_STRING && has_nul(t->v.str, t->len)))
                return false;
        }
    }
    return true;
}

/* A C string of @text made valid UTF-8 (g_free it). */
static gchar *text_copy(const char *text, size_t len)
{
    tw__buf b = {0};
    gchar *copy = NULL;
    if (tw__utf8_repair_append(&b, text, len, NULL))
        copy = g_strndup(b.data ? (const char *)b.data : "", b.len);
    tw__buf_free(&b);
    return copy;
}

static TwireJaegerTag *tag_new(const tw__tag *t)
{
    TwireJaegerTag *tag = g_object_new(TWIRE_JAEGER_TYPE_TAG, NULL);
    tag->key = text_copy(t->key, t->key_len);
    switch (t->type) {
    case TW_VALUE_STRING:
        tag->vType = TWIRE_JAEGER_TAG_TYPE_STRING;
        tag->vStr = text_copy(t->v.str, t->len);
        tag->__isset_vStr = TRUE;
        break;
    case TW_VALUE_DOUBLE:
        tag->vType = TWIRE_JAEGER_TAG_TYPE_DOUBLE;
        tag->vDouble = t->v.dbl;
        tag->__isset_vDouble = TRUE;
        break;
    case TW_VALUE_BOOL:
        tag->vType = TWIRE_JAEGER_TAG_TYPE_BOOL;
        tag->vBool = t->v.boolean;
        tag->__isset_vBool = TRUE;
        break;
    case TW_VALUE_INT64:
        tag->vType = TWIRE_JAEGER_TAG_TYPE_LONG;
        tag->vLong = t->v.i64;
        tag->__isset_vLong = TRUE;
        break;
    case TW_VALUE_BINARY:
        tag->vType = TWIRE_JAEGER_TAG_TYPE_BINARY;
        tag->vBinary = g_byte_array_new();
        g_byte_array_append(tag->vBinary, t->v.bin, (guint)t->len);
        tag->__isset_vBinary = TRUE;
        break;
    }
    return tag;
}

bool tw_test_reference_span(tw__thrift_protocol proto, const tw__span_data *s, tw__buf *out)
{
    TwireJaegerSpan *span = g_object_new(TWIRE_JAEGER_TYPE_SPAN, NULL);
    span->traceIdLow = (gint64)s->trace_id_low;
    span->traceIdHigh = (gint64)s->trace_id_high;
    span->spanId = (gint64)s->span_id;
    span->parentSpanId = (gint64)s->parent_id;
    span->operationName =
        text_copy(s->operation ? s->operation : "", s->operation ? strlen(s->operation) : 0);
    for (size_t i = 0; i < s->n_refs; i++) {
        TwireJaegerSpanRef *ref = g_object_new(TWIRE_JAEGER_TYPE_SPAN_REF, NULL);
        ref->refType = s->refs[i].type == TW__REF_FOLLOWS_FROM
                           ? TWIRE_JAEGER_SPAN_REF_TYPE_FOLLOWS_FROM
                           : TWIRE_JAEGER_SPAN_REF_TYPE_CHILD_OF;
        ref->traceIdLow = (gint64)s->refs[i].trace_id_low;
        ref->traceIdHigh = (gint64)s->refs[i].trace_id_high;
        ref->spanId = (gint64)s->refs[i].span_id;
        g_ptr_array_add(span->references, ref);
    }
    span->__isset_references = s->n_refs > 0; /* optional: written when not empty */
    span->flags = (gint32)s->flags;
    span->startTime = s->start_us;
    span->duration = s->duration_us;
    for (size_t i = 0; i < s->n_tags; i++)
        g_ptr_array_add(span->tags, tag_new(&s->tags[i]));
    span->__isset_tags = s->n_tags > 0;
    for (size_t l = 0; l < s->n_logs; l++) {
        TwireJaegerLog *log = g_object_new(TWIRE_JAEGER_TYPE_LOG, NULL);
        log->timestamp = s->logs[l].timestamp_us;
        for (size_t i = 0; i < s->logs[l].n_fields; i++)
            g_ptr_array_add(log->fields, tag_new(&s->logs[l].fields[i]));
        g_ptr_array_add(span->logs, log);
    }
    span->__isset_logs = s->n_logs > 0;

    ThriftProtocol *p = protocol_new(proto);
    GError *err = NULL;
    bool ok = thrift_struct_write(THRIFT_STRUCT(span), p, &err) >= 0;
    g_clear_error(&err);
    g_object_unref(span);
    return protocol_finish(p, ok, out);
}

/* ---- writer programs ------------------------------------------------------------------------- */

/* The program's reader: bytes, then zeros. */
typedef struct {
    const uint8_t *p;
    size_t len, pos;
} program;

static uint64_t take(program *pg, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v << 8 | (pg->pos < pg->len ? pg->p[pg->pos++] : 0);
    return v;
}

/* One side of the comparison: the same operations on either writer. */
typedef struct {
    tw__thrift_writer *ours;
    ThriftProtocol *theirs;
    GError *err;
    bool theirs_ok;
} sides;

static void check(sides *s, gint32 rc)
{
    if (rc < 0)
        s->theirs_ok = false;
    g_clear_error(&s->err);
}

static int16_t field_id(program *pg)
{
    /* Mostly small steps (the compact protocol's short form), sometimes
     * anything, negative ids included. */
    uint8_t b = (uint8_t)take(pg, 1);
    return b < 200 ? (int16_t)(b % 24) : (int16_t)take(pg, 2);
}

bool tw_test_run_thrift_program(tw__thrift_protocol proto, const uint8_t *bytes, size_t len,
                                tw__buf *ours, tw__buf *theirs)
{
    program pg = {bytes, len, 0};
    tw__thrift_writer w;
    tw__thrift_writer_init(&w, proto, ours);
    sides s = {&w, protocol_new(proto), NULL, true};
    ThriftProtocol *p = s.theirs;

    if (take(&pg, 1) & 1) { /* a message header first */
        int type = 1 + (int)take(&pg, 1) % 4;
        int32_t seq = (int32_t)take(&pg, 4);
        tw__thrift_message_begin(&w, "emitBatch", type, seq);
        check(&s, thrift_protocol_write_message_begin(p, "emitBatch", (ThriftMessageType)type, seq,
                                                      &s.err));
    }
    tw__thrift_struct_begin(&w);
    check(&s, thrift_protocol_write_struct_begin(p, "S", &s.err));
    int depth = 0;
    for (int ops = 0; pg.pos < pg.len && ops < 4096; ops++) {
        uint8_t op = (uint8_t)take(&pg, 1) % 9;
        int16_t id = op < 7 ? field_id(&pg) : 0;
        switch (op) {
        case 0: {
            int32_t v = (int32_t)take(&pg, 4);
            tw__thrift_field_i32(&w, id, v);
            check(&s, thrift_protocol_write_field_begin(p, "f", T_I32, id, &s.err));
            check(&s, thrift_protocol_write_i32(p, v, &s.err));
            check(&s, thrift_protocol_write_field_end(p, &s.err));
            break;
        }
        case 1: {
            int64_t v = (int64_t)take(&pg, 8);
            tw__thrift_field_i64(&w, id, v);
            check(&s, thrift_protocol_write_field_begin(p, "f", T_I64, id, &s.err));
            check(&s, thrift_protocol_write_i64(p, v, &s.err));
            check(&s, thrift_protocol_write_field_end(p, &s.err));
            break;
        }
        case 2: {
            uint64_t bits = take(&pg, 8);
            double v;
            memcpy(&v, &bits, sizeof v);
            tw__thrift_field_double(&w, id, v);
            check(&s, thrift_protocol_write_field_begin(p, "f", T_DOUBLE, id, &s.err));
            check(&s, thrift_protocol_write_double(p, v, &s.err));
            check(&s, thrift_protocol_write_field_end(p, &s.err));
            break;
        }
        case 3: {
            bool v = take(&pg, 1) & 1;
            tw__thrift_field_bool(&w, id, v);
            check(&s, thrift_protocol_write_field_begin(p, "f", T_BOOL, id, &s.err));
            check(&s, thrift_protocol_write_bool(p, v, &s.err));
            check(&s, thrift_protocol_write_field_end(p, &s.err));
            break;
        }
        case 4: {
            size_t n = (size_t)take(&pg, 1);
            uint8_t data[256];
            for (size_t i = 0; i < n; i++)
                data[i] = (uint8_t)take(&pg, 1);
            tw__thrift_field_bytes(&w, id, data, n);
            check(&s, thrift_protocol_write_field_begin(p, "f", T_STRING, id, &s.err));
            check(&s, thrift_protocol_write_binary(p, data, (guint32)n, &s.err));
            check(&s, thrift_protocol_write_field_end(p, &s.err));
            break;
        }
        case 5: /* a nested struct begins */
            if (depth + 2 >= TW__THRIFT_WRITE_MAX_DEPTH)
                break;
            depth++;
            tw__thrift_field_begin(&w, TW__T_STRUCT, id);
            tw__thrift_struct_begin(&w);
            check(&s, thrift_protocol_write_field_begin(p, "f", T_STRUCT, id, &s.err));
            check(&s, thrift_protocol_write_struct_begin(p, "S", &s.err));
            break;
        case 6: { /* a list of i64 or of small structs */
            size_t n = (size_t)take(&pg, 1) % 40;
            bool of_structs = take(&pg, 1) & 1;
            tw__thrift_field_list(&w, id, of_structs ? TW__T_STRUCT : TW__T_I64, n);
            check(&s, thrift_protocol_write_field_begin(p, "f", T_LIST, id, &s.err));
            check(&s, thrift_protocol_write_list_begin(p, of_structs ? T_STRUCT : T_I64, (guint32)n,
                                                       &s.err));
            for (size_t i = 0; i < n; i++) {
                int64_t v = (int64_t)take(&pg, 2) - 30000;
                if (!of_structs) {
                    tw__thrift_write_i64(&w, v);
                    check(&s, thrift_protocol_write_i64(p, v, &s.err));
                    continue;
                }
                tw__thrift_struct_begin(&w);
                tw__thrift_field_i64(&w, 1, v);
                tw__thrift_field_bool(&w, 3, v & 1);
                tw__thrift_struct_end(&w);
                check(&s, thrift_protocol_write_struct_begin(p, "E", &s.err));
                check(&s, thrift_protocol_write_field_begin(p, "a", T_I64, 1, &s.err));
                check(&s, thrift_protocol_write_i64(p, v, &s.err));
                check(&s, thrift_protocol_write_field_end(p, &s.err));
                check(&s, thrift_protocol_write_field_begin(p, "b", T_BOOL, 3, &s.err));
                check(&s, thrift_protocol_write_bool(p, v & 1, &s.err));
                check(&s, thrift_protocol_write_field_end(p, &s.err));
                check(&s, thrift_protocol_write_field_stop(p, &s.err));
                check(&s, thrift_protocol_write_struct_end(p, &s.err));
            }
            check(&s, thrift_protocol_write_list_end(p, &s.err));
            check(&s, thrift_protocol_write_field_end(p, &s.err));
            break;
        }
        case 7:
        case 8: /* the nested struct ends */
            if (depth == 0)
                break;
            depth--;
            tw__thrift_struct_end(&w);
            check(&s, thrift_protocol_write_field_stop(p, &s.err));
            check(&s, thrift_protocol_write_struct_end(p, &s.err));
            check(&s, thrift_protocol_write_field_end(p, &s.err));
            break;
        }
    }
    for (; depth > 0; depth--) {
        tw__thrift_struct_end(&w);
        check(&s, thrift_protocol_write_field_stop(p, &s.err));
        check(&s, thrift_protocol_write_struct_end(p, &s.err));
        check(&s, thrift_protocol_write_field_end(p, &s.err));
    }
    tw__thrift_struct_end(&w);
    check(&s, thrift_protocol_write_field_stop(p, &s.err));
    check(&s, thrift_protocol_write_struct_end(p, &s.err));
    return protocol_finish(p, s.theirs_ok, theirs) && !w.failed;
}
