/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/otlp/otlp_proto_decode.c: OTLP protobuf -> span model (the decoding
 * half of otlp_proto.h), for `tracewire convert --from otlp-proto` and the
 * tests. The reading rules are wire/otlp/otlp_map.h's, shared with the
 * OTLP/JSON reader; this file turns protobuf into the plain fields those
 * builders take.
 *
 * How a request is read: the wire format is walked field by field
 * (wire/core/pb_read.h) down to single spans, so that memory follows one
 * span and one bad span costs only itself. The resource and the scope are
 * merged first (a singular message field that occurs twice is the merge of
 * both, as protobuf says; concatenating their bytes is that merge), then
 * every span is checked and unpacked by protobuf-c into a budgeted arena,
 * reset per span.
 *
 * Memory: the resource's and one span's unpacked structs, the scratch
 * buffers of merged resources. Locking: none.
 */
#include "wire/otlp/otlp_proto.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "opentelemetry/proto/common/v1/common.pb-c.h"
#include "opentelemetry/proto/resource/v1/resource.pb-c.h"
#include "opentelemetry/proto/trace/v1/trace.pb-c.h"
#include "wire/core/pb_read.h"
#include "wire/core/pb_write.h"
#include "wire/json_common.h"
#include "wire/otlp/otlp_map.h"

typedef Opentelemetry__Proto__Common__V1__AnyValue pb_any;
typedef Opentelemetry__Proto__Common__V1__KeyValue pb_kv;
typedef Opentelemetry__Proto__Common__V1__InstrumentationScope pb_scope;
typedef Opentelemetry__Proto__Resource__V1__Resource pb_resource;
typedef Opentelemetry__Proto__Trace__V1__Span pb_span;

#define ANY(x) OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_##x

/* Field numbers of the messages walked here (trace.proto). */
enum {
    REQUEST_RESOURCE_SPANS = 1,
    RS_RESOURCE = 1,
    RS_SCOPE_SPANS = 2,
    SS_SCOPE = 1,
    SS_SPANS = 2,
};

typedef struct ctx {
    const tw__otlp_proto_sink *sink;
    const uint8_t *base; /* the buffer byte offsets count from */
    uint64_t base_offset;
    tw__pb_arena arena; /* one span (or the scope) at a time */
    tw__pb_arena res;   /* the resource of the current ResourceSpans */
    tw__buf merged;     /* bytes of a singular message field seen several times */
    char where[160];
    char why[320];
    bool is_nomem;
} ctx;

static void init_ctx(ctx *c, const tw__otlp_proto_sink *sink, const uint8_t *base,
                     uint64_t base_offset)
{
    memset(c, 0, sizeof *c);
    c->sink = sink;
    c->base = base;
    c->base_offset = base_offset;
    tw__pb_arena_init(&c->arena);
    tw__pb_arena_init(&c->res);
    tw__buf_init(&c->merged);
}

static void free_ctx(ctx *c)
{
    tw__pb_arena_free(&c->arena);
    tw__pb_arena_free(&c->res);
    tw__buf_free(&c->merged);
}

static uint64_t offset_of(const ctx *c, const uint8_t *p)
{
    return c->base_offset + (uint64_t)(p - c->base);
}

static tw__otlp_proto_status reject(ctx *c, const char *where, const uint8_t *raw, size_t len)
{
    if (c->sink->reject && !c->sink->reject(c->sink->arg, where, c->why, raw, len))
        return TW__OTLP_PROTO_STOPPED;
    return TW__OTLP_PROTO_OK;
}

/* ---- values -------------------------------------------------------------------------------- */

static uint64_t be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | p[i];
    return v;
}

/* A trace id: 16 bytes (8 are taken as a 64-bit id), not all zero. */
static bool trace_id(ctx *c, const char *what, const ProtobufCBinaryData *b, uint64_t *high,
                     uint64_t *low)
{
    if (b->len != 16 && b->len != 8) {
        snprintf(c->why, sizeof c->why, "%s is %zu bytes, not 16", what, b->len);
        return false;
    }
    *high = b->len == 16 ? be64(b->data) : 0;
    *low = be64(b->data + b->len - 8);
    if ((*high | *low) == 0) {
        snprintf(c->why, sizeof c->why, "%s is all zeros", what);
        return false;
    }
    return true;
}

/* A span id: 8 bytes, not zero (a parent may be empty or zero: none). */
static bool span_id(ctx *c, const char *what, const ProtobufCBinaryData *b, bool is_parent,
                    uint64_t *id)
{
    *id = 0;
    if (is_parent && b->len == 0)
        return true;
    if (b->len != 8) {
        snprintf(c->why, sizeof c->why, "%s is %zu bytes, not 8", what, b->len);
        return false;
    }
    *id = be64(b->data);
    if (*id == 0 && !is_parent) {
        snprintf(c->why, sizeof c->why, "%s is all zeros", what);
        return false;
    }
    return true;
}

/* The plain JSON of an AnyValue (arrays and key-value lists are kept as this
 * JSON text, as the OTLP/JSON reader keeps them). New reference or NULL. */
static json_t *plain_json(const pb_any *any)
{
    if (!any)
        return json_string("");
    switch (any->value_case) {
    case ANY(STRING_VALUE):
        return tw__json_text(any->string_value, strlen(any->string_value));
    case ANY(BOOL_VALUE):
        return json_boolean(any->bool_value);
    case ANY(INT_VALUE):
        return json_integer(any->int_value);
    case ANY(DOUBLE_VALUE): {
        if (isfinite(any->double_value))
            return json_real(any->double_value);
        char text[32];
        tw__double_text(any->double_value, text, sizeof text);
        return json_string(text);
    }
    case ANY(BYTES_VALUE): {
        char *b64 = tw__base64(any->bytes_value.data, any->bytes_value.len);
        json_t *s = b64 ? json_string(b64) : NULL;
        free(b64);
        return s;
    }
    case ANY(ARRAY_VALUE): {
        json_t *out = json_array();
        for (size_t i = 0; out && any->array_value && i < any->array_value->n_values; i++) {
            if (!tw__json_push(out, plain_json(any->array_value->values[i]))) {
                json_decref(out);
                return NULL;
            }
        }
        return out;
    }
    case ANY(KVLIST_VALUE): {
        json_t *out = json_object();
        for (size_t i = 0; out && any->kvlist_value && i < any->kvlist_value->n_values; i++) {
            const pb_kv *kv = any->kvlist_value->values[i];
            if (!tw__json_set(out, kv->key, strlen(kv->key), plain_json(kv->value))) {
                json_decref(out);
                return NULL;
            }
        }
        return out;
    }
    default:
        return json_string(""); /* an empty AnyValue */
    }
}

/* An AnyValue as a typed value; text made here goes to *owned (freed by
 * the caller). False on allocation failure. */
static bool any_value(const pb_any *any, tw_value *out, char **owned)
{
    *owned = NULL;
    *out = (tw_value){.type = TW_VALUE_STRING, .len = 0, .as.str = ""};
    if (!any)
        return true;
    switch (any->value_case) {
    case ANY(STRING_VALUE):
        out->as.str = any->string_value;
        out->len = strlen(any->string_value);
        return true;
    case ANY(BOOL_VALUE):
        *out = (tw_value){.type = TW_VALUE_BOOL, .as.boolean = any->bool_value != 0};
        return true;
    case ANY(INT_VALUE):
        *out = (tw_value){.type = TW_VALUE_INT64, .as.i64 = any->int_value};
        return true;
    case ANY(DOUBLE_VALUE):
        *out = (tw_value){.type = TW_VALUE_DOUBLE, .as.dbl = any->double_value};
        return true;
    case ANY(BYTES_VALUE):
        *out = (tw_value){
            .type = TW_VALUE_BINARY, .len = any->bytes_value.len, .as.bin = any->bytes_value.data};
        return true;
    case ANY(ARRAY_VALUE):
    case ANY(KVLIST_VALUE): {
        json_t *plain = plain_json(any);
        char *text =
            plain ? json_dumps(plain, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY) : NULL;
        json_decref(plain);
        if (!text)
            return false;
        *owned = text;
        out->as.str = text;
        out->len = strlen(text);
        return true;
    }
    default:
        return true; /* an empty AnyValue: "" */
    }
}

/* ---- resource and scope -------------------------------------------------------------------- */

/* The payload of singular message field @number of data[0..len), merged
 * when it occurs several times (*out NULL, *out_len 0 when absent). False
 * with c->why when the message is not well-formed (or c->is_nomem). */
static bool singular_field(ctx *c, const uint8_t *data, size_t len, uint32_t number,
                           const uint8_t **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    size_t pos = 0, n = 0;
    tw__pb_field f;
    const char *why;
    tw__pb_next next;
    tw__buf_reset(&c->merged);
    while ((next = tw__pb_next_field(data, len, &pos, &f, &why)) == TW__PB_NEXT_FIELD) {
        if (f.number != number)
            continue;
        if (f.wire_type != TW__PB_LEN) {
            snprintf(c->why, sizeof c->why, "byte %" PRIu64 ": field %u has wire type %u, not 2",
                     offset_of(c, data + f.offset), number, (unsigned)f.wire_type);
            return false;
        }
        if (n == 1 && !tw__buf_append(&c->merged, *out, *out_len)) {
            c->is_nomem = true;
            return false;
        }
        if (n >= 1 && !tw__buf_append(&c->merged, f.data, f.len)) {
            c->is_nomem = true;
            return false;
        }
        *out = f.data;
        *out_len = f.len;
        n++;
    }
    if (next == TW__PB_NEXT_BAD) {
        snprintf(c->why, sizeof c->why, "byte %" PRIu64 ": %s", offset_of(c, data + pos), why);
        return false;
    }
    if (n > 1) {
        *out = c->merged.data;
        *out_len = c->merged.len;
    }
    return true;
}

/* The process of a Resource message. False with c->why (or c->is_nomem). */
static bool read_resource(ctx *c, const uint8_t *data, size_t len, tw__process *p)
{
    if (!tw__process_set_service(p, "")) {
        c->is_nomem = true;
        return false;
    }
    if (!data)
        return true;
    char inner[256];
    tw__pb_arena_reset(&c->res);
    const pb_resource *r = (const pb_resource *)tw__pb_unpack(
        &opentelemetry__proto__resource__v1__resource__descriptor, &c->res, data, len,
        TW__OTLP_PROTO_MAX_DEPTH, offset_of(c, data), inner, sizeof inner, &c->is_nomem, NULL);
    if (!r) {
        snprintf(c->why, sizeof c->why, "resource: %s", inner);
        return false;
    }
    for (size_t i = 0; i < r->n_attributes; i++) {
        const pb_kv *kv = r->attributes[i];
        tw_value v;
        char *owned;
        if (!any_value(kv->value, &v, &owned)) {
            c->is_nomem = true;
            return false;
        }
        bool ok = tw__otlp_is_service_key(kv->key) ? tw__otlp_process_set_service(p, &v)
                                                   : tw__process_add_tag(p, kv->key, &v);
        free(owned);
        if (!ok) {
            c->is_nomem = true;
            return false;
        }
    }
    return true;
}

/* ---- the span ------------------------------------------------------------------------------ */

/* Fills a model span from @ps. NULL with c->why (or c->is_nomem). */
static tw__span_data *build_span(ctx *c, const pb_span *ps, const pb_scope *scope,
                                 bool *is_end_before_start)
{
    tw__otlp_span_fields f;
    memset(&f, 0, sizeof f);
    if (!trace_id(c, "trace_id", &ps->trace_id, &f.trace_id_high, &f.trace_id_low) ||
        !span_id(c, "span_id", &ps->span_id, false, &f.span_id) ||
        !span_id(c, "parent_span_id", &ps->parent_span_id, true, &f.parent_id))
        return NULL;
    if ((int)ps->kind < 0 || (int)ps->kind > 5) {
        snprintf(c->why, sizeof c->why, "kind %d is not a SpanKind", (int)ps->kind);
        return NULL;
    }
    if (ps->start_time_unix_nano > INT64_MAX || ps->end_time_unix_nano > INT64_MAX) {
        snprintf(c->why, sizeof c->why, "%s is past the year 2262",
                 ps->start_time_unix_nano > INT64_MAX ? "start_time_unix_nano"
                                                      : "end_time_unix_nano");
        return NULL;
    }
    f.name = ps->name;
    f.name_len = strlen(ps->name);
    f.kind = ps->kind;
    f.has_start = ps->start_time_unix_nano != 0;
    f.start_ns = (int64_t)ps->start_time_unix_nano;
    f.has_end = ps->end_time_unix_nano != 0;
    f.end_ns = (int64_t)ps->end_time_unix_nano;
    if (ps->status) {
        f.status_code = ps->status->code;
        f.status_message = ps->status->message;
        f.status_message_len = strlen(ps->status->message);
    }
    f.trace_state = ps->trace_state;
    f.trace_state_len = strlen(ps->trace_state);

    tw__span_data *s;
    tw__otlp_build built = tw__otlp_span_new(&f, &s, is_end_before_start);
    if (built == TW__OTLP_BUILD_NO_START) {
        snprintf(c->why, sizeof c->why, "start_time_unix_nano is missing or 0");
        return NULL;
    }
    if (built != TW__OTLP_BUILD_OK)
        goto nomem;
    for (size_t i = 0; i < ps->n_links; i++) {
        const Opentelemetry__Proto__Trace__V1__Span__Link *l = ps->links[i];
        uint64_t hi, lo, sid;
        char what[48];
        snprintf(what, sizeof what, "links[%zu].trace_id", i);
        if (!trace_id(c, what, &l->trace_id, &hi, &lo))
            goto fail;
        snprintf(what, sizeof what, "links[%zu].span_id", i);
        if (!span_id(c, what, &l->span_id, false, &sid))
            goto fail;
        bool is_child_of = false;
        for (size_t k = 0; k < l->n_attributes; k++) {
            const pb_kv *kv = l->attributes[k];
            if (kv->value && kv->value->value_case == ANY(STRING_VALUE) &&
                tw__otlp_link_attribute_is_child_of(kv->key, kv->value->string_value,
                                                    strlen(kv->value->string_value)))
                is_child_of = true;
        }
        if (!tw__otlp_span_add_link(s, hi, lo, sid, is_child_of))
            goto nomem;
    }
    for (size_t i = 0; i < ps->n_attributes; i++) {
        tw_value v;
        char *owned;
        if (!any_value(ps->attributes[i]->value, &v, &owned))
            goto nomem;
        bool ok = tw__otlp_span_add_attribute(s, ps->attributes[i]->key, &v);
        free(owned);
        if (!ok)
            goto nomem;
    }
    const char *sn = scope ? scope->name : "", *sv = scope ? scope->version : "";
    if (!tw__otlp_span_add_field_tags(s, &f, sn, strlen(sn), sv, strlen(sv)))
        goto nomem;
    for (size_t i = 0; i < ps->n_events; i++) {
        const Opentelemetry__Proto__Trace__V1__Span__Event *e = ps->events[i];
        if (e->time_unix_nano > INT64_MAX) {
            snprintf(c->why, sizeof c->why, "events[%zu].time_unix_nano is past the year 2262", i);
            goto fail;
        }
        tw__log *log = tw__otlp_span_add_event(s, (int64_t)e->time_unix_nano, e->name,
                                               strlen(e->name), e->n_attributes);
        if (!log)
            goto nomem;
        for (size_t k = 0; k < e->n_attributes; k++) {
            tw_value v;
            char *owned;
            if (!any_value(e->attributes[k]->value, &v, &owned))
                goto nomem;
            bool ok = tw__otlp_event_add_attribute(s, log, e->attributes[k]->key, &v);
            free(owned);
            if (!ok)
                goto nomem;
        }
    }
    return s;
nomem:
    c->is_nomem = true;
fail:
    tw__span_data_unref(s);
    return NULL;
}

/* One ScopeSpans message (number @j of resource_spans[@i]). */
static tw__otlp_proto_status read_scope_spans(ctx *c, const uint8_t *data, size_t len, size_t i,
                                              size_t j, const tw__process *process)
{
    const uint8_t *scope_data;
    size_t scope_len;
    char where[160];
    snprintf(where, sizeof where, "resource_spans[%zu].scope_spans[%zu]", i, j);
    if (!singular_field(c, data, len, SS_SCOPE, &scope_data, &scope_len))
        return c->is_nomem ? TW__OTLP_PROTO_NOMEM : reject(c, where, data, len);
    /* The scope lives in its own arena (the spans' arena is reset per span). */
    tw__pb_arena scope_arena;
    tw__pb_arena_init(&scope_arena);
    const pb_scope *scope = NULL;
    char inner[256];
    tw__otlp_proto_status st = TW__OTLP_PROTO_OK;
    if (scope_data) {
        scope = (const pb_scope *)tw__pb_unpack(
            &opentelemetry__proto__common__v1__instrumentation_scope__descriptor, &scope_arena,
            scope_data, scope_len, TW__OTLP_PROTO_MAX_DEPTH, offset_of(c, scope_data), inner,
            sizeof inner, &c->is_nomem, NULL);
        if (!scope) {
            tw__pb_arena_free(&scope_arena);
            if (c->is_nomem)
                return TW__OTLP_PROTO_NOMEM;
            snprintf(c->why, sizeof c->why, "scope: %s", inner);
            return reject(c, where, data, len);
        }
    }
    size_t pos = 0, k = 0;
    tw__pb_field f;
    const char *why;
    while (st == TW__OTLP_PROTO_OK &&
           tw__pb_next_field(data, len, &pos, &f, &why) == TW__PB_NEXT_FIELD) {
        if (f.number != SS_SPANS)
            continue;
        snprintf(where, sizeof where, "resource_spans[%zu].scope_spans[%zu].spans[%zu]", i, j, k++);
        if (f.wire_type != TW__PB_LEN) {
            snprintf(c->why, sizeof c->why, "byte %" PRIu64 ": wire type %u, not 2",
                     offset_of(c, data + f.offset), (unsigned)f.wire_type);
            st = reject(c, where, data + f.offset, pos - f.offset);
            continue;
        }
        tw__pb_arena_reset(&c->arena);
        size_t n_nul = 0;
        const pb_span *ps = (const pb_span *)tw__pb_unpack(
            &opentelemetry__proto__trace__v1__span__descriptor, &c->arena, f.data, f.len,
            TW__OTLP_PROTO_MAX_DEPTH, offset_of(c, f.data), inner, sizeof inner, &c->is_nomem,
            &n_nul);
        if (!ps) {
            if (c->is_nomem) {
                st = TW__OTLP_PROTO_NOMEM;
                break;
            }
            snprintf(c->why, sizeof c->why, "%s", inner);
            st = reject(c, where, f.data, f.len);
            continue;
        }
        bool is_end_before_start = false;
        tw__span_data *s = build_span(c, ps, scope, &is_end_before_start);
        if (!s) {
            st = c->is_nomem ? TW__OTLP_PROTO_NOMEM : reject(c, where, f.data, f.len);
            continue;
        }
        if (is_end_before_start && c->sink->warn)
            c->sink->warn(c->sink->arg, where, "end_time_unix_nano before start: duration 0");
        if (n_nul && c->sink->warn)
            c->sink->warn(c->sink->arg, where, "a string holds a NUL byte: its text ends there");
        if (!c->sink->span(c->sink->arg, s, process))
            st = TW__OTLP_PROTO_STOPPED;
    }
    tw__pb_arena_free(&scope_arena);
    return st;
}

tw__otlp_proto_status tw__otlp_proto_decode_resource_spans(const uint8_t *data, size_t len,
                                                           size_t index, uint64_t base_offset,
                                                           const tw__otlp_proto_sink *sink)
{
    ctx c;
    init_ctx(&c, sink, data, base_offset);
    char where[64];
    snprintf(where, sizeof where, "resource_spans[%zu]", index);
    tw__process process;
    tw__process_init(&process);
    const uint8_t *res;
    size_t res_len;
    tw__otlp_proto_status st = TW__OTLP_PROTO_OK;
    /* The whole message must be well-formed at its own level before any span goes. */
    size_t pos = 0;
    tw__pb_field f;
    const char *why;
    tw__pb_next next;
    while ((next = tw__pb_next_field(data, len, &pos, &f, &why)) == TW__PB_NEXT_FIELD) {
        if (f.number == RS_SCOPE_SPANS && f.wire_type != TW__PB_LEN) {
            why = "scope_spans does not have wire type 2";
            next = TW__PB_NEXT_BAD;
            pos = f.offset;
            break;
        }
    }
    if (next == TW__PB_NEXT_BAD) {
        snprintf(c.why, sizeof c.why, "byte %" PRIu64 ": %s", offset_of(&c, data + pos), why);
        st = reject(&c, where, data, len);
    } else if (!singular_field(&c, data, len, RS_RESOURCE, &res, &res_len) ||
               !read_resource(&c, res, res_len, &process)) {
        st = c.is_nomem ? TW__OTLP_PROTO_NOMEM : reject(&c, where, data, len);
    } else {
        size_t j = 0;
        pos = 0;
        while (st == TW__OTLP_PROTO_OK &&
               tw__pb_next_field(data, len, &pos, &f, &why) == TW__PB_NEXT_FIELD) {
            if (f.number == RS_SCOPE_SPANS)
                st = read_scope_spans(&c, f.data, f.len, index, j++, &process);
        }
    }
    tw__process_clear(&process);
    free_ctx(&c);
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
