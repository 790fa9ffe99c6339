/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/wire/otlp_proto_ref.h: the reference OTLP protobuf codec for
 * the differential checks of the direct writer and reader
 * (sdk/wire/otlp/otlp_proto.c, otlp_proto_decode.c), through protobuf-c and
 * the code it generated from opentelemetry-proto:
 *
 *   ref_request()         the message built as protobuf-c structs from the
 *                         same plan (wire/otlp/otlp_map.h), packed by
 *                         protobuf_c_message_pack();
 *   ref_decode_request()  protobuf_c_message_unpack(), then the same reading
 *                         rules (the builders of wire/otlp/otlp_map.h).
 *
 * Used by tests/unit/wire/test_otlp_proto.c, tests/fuzz/fuzz_otlp_proto.c
 * and tests/bench/bench_proto.c. Header-only; allocation failure aborts.
 * Only for well-formed input of bounded nesting (protobuf-c recurses per
 * level): the fuzz target feeds it our own encodings.
 *
 * protobuf-c's strings are C strings: a span whose text holds a NUL byte
 * cannot be built here (ref.has_nul tells; compare only when it is false).
 */
#ifndef TW_TESTS_WIRE_OTLP_PROTO_REF_H
#define TW_TESTS_WIRE_OTLP_PROTO_REF_H

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "opentelemetry/proto/collector/trace/v1/trace_service.pb-c.h"
#include "tracewire/common.h"
#include "wire/core/pb_write.h"
#include "wire/core/json_common.h"
#include "wire/otlp/otlp_map.h"

#define REF_CHECK(cond)                                                                            \
    do {                                                                                           \
        if (!(cond))                                                                               \
            abort();                                                                               \
    } while (0)

typedef Opentelemetry__Proto__Common__V1__KeyValue pb_kv;
typedef Opentelemetry__Proto__Common__V1__AnyValue pb_any;
typedef Opentelemetry__Proto__Trace__V1__Span pb_span;

/* ---- the reference: protobuf-c structs from the plan --------------------------------------- */

typedef struct ref {
    void **ptrs;
    size_t n, cap;
    bool has_nul; /* a string holds NUL: protobuf-c's C strings cannot carry it */
} ref;

static inline void *ref_alloc(ref *r, size_t size)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 64;
        r->ptrs = realloc(r->ptrs, r->cap * sizeof *r->ptrs);
        REF_CHECK(r->ptrs != NULL);
    }
    void *p = calloc(1, size ? size : 1);
    REF_CHECK(p != NULL);
    return r->ptrs[r->n++] = p;
}

static inline void ref_free(ref *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->ptrs[i]);
    free(r->ptrs);
    memset(r, 0, sizeof *r);
}

/* The text as the encoders write it: repaired UTF-8, a fresh C string. */
static inline char *ref_str(ref *r, const char *text, size_t len)
{
    bool is_valid;
    size_t out_len = tw__pb_utf8_len(text, len, &is_valid);
    tw__buf b;
    tw__buf_init(&b);
    REF_CHECK(tw__pb_string_field(&b, 1, text, len, true));
    char *s = ref_alloc(r, out_len + 1);
    memcpy(s, b.data + b.len - out_len, out_len);
    tw__buf_free(&b);
    if (memchr(s, 0, out_len))
        r->has_nul = true;
    return s;
}

static inline uint8_t *ref_id(ref *r, uint64_t high, uint64_t low, size_t n)
{
    uint8_t *p = ref_alloc(r, n);
    for (size_t i = 0; i < 8 && n == 16; i++)
        p[i] = (uint8_t)(high >> (56 - 8 * i));
    for (size_t i = 0; i < 8; i++)
        p[n - 8 + i] = (uint8_t)(low >> (56 - 8 * i));
    return p;
}

static inline pb_kv *ref_kv(ref *r, const char *key, size_t key_len, const tw__tag *t)
{
    pb_kv *kv = ref_alloc(r, sizeof *kv);
    opentelemetry__proto__common__v1__key_value__init(kv);
    pb_any *any = ref_alloc(r, sizeof *any);
    opentelemetry__proto__common__v1__any_value__init(any);
    kv->key = ref_str(r, key, key_len);
    kv->value = any;
    switch (t->type) {
    case TW_VALUE_STRING:
        any->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
        any->string_value = ref_str(r, t->v.str, t->len);
        break;
    case TW_VALUE_BOOL:
        any->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_BOOL_VALUE;
        any->bool_value = t->v.boolean;
        break;
    case TW_VALUE_INT64:
        any->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
        any->int_value = t->v.i64;
        break;
    case TW_VALUE_DOUBLE:
        any->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_DOUBLE_VALUE;
        any->double_value = t->v.dbl;
        break;
    case TW_VALUE_BINARY:
        any->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_BYTES_VALUE;
        any->bytes_value.data = ref_alloc(r, t->len);
        memcpy(any->bytes_value.data, t->v.bin, t->len);
        any->bytes_value.len = t->len;
        break;
    }
    return kv;
}

static inline pb_span *ref_span(ref *r, const tw__span_data *s)
{
    tw__otlp_span_plan plan;
    REF_CHECK(tw__otlp_plan_span(s, &plan));
    pb_span *ps = ref_alloc(r, sizeof *ps);
    opentelemetry__proto__trace__v1__span__init(ps);
    ps->trace_id = (ProtobufCBinaryData){16, ref_id(r, s->trace_id_high, s->trace_id_low, 16)};
    ps->span_id = (ProtobufCBinaryData){8, ref_id(r, 0, s->span_id, 8)};
    if (s->parent_id)
        ps->parent_span_id = (ProtobufCBinaryData){8, ref_id(r, 0, s->parent_id, 8)};
    ps->name = ref_str(r, s->operation, strlen(s->operation));
    ps->kind = (Opentelemetry__Proto__Trace__V1__Span__SpanKind)plan.kind;
    ps->start_time_unix_nano = plan.start_ns;
    ps->end_time_unix_nano = plan.end_ns;
    ps->attributes = ref_alloc(r, s->n_tags * sizeof(pb_kv *));
    for (size_t i = 0; i < s->n_tags; i++) {
        if (plan.is_attribute[i])
            ps->attributes[ps->n_attributes++] =
                ref_kv(r, s->tags[i].key, s->tags[i].key_len, &s->tags[i]);
    }
    ps->events = ref_alloc(r, s->n_logs * sizeof *ps->events);
    for (size_t i = 0; i < s->n_logs; i++) {
        const tw__log *log = &s->logs[i];
        tw__otlp_event_plan ep;
        REF_CHECK(tw__otlp_plan_event(log, &ep));
        Opentelemetry__Proto__Trace__V1__Span__Event *e = ref_alloc(r, sizeof *e);
        opentelemetry__proto__trace__v1__span__event__init(e);
        e->time_unix_nano = ep.time_ns;
        if (ep.name)
            e->name = ref_str(r, ep.name->v.str, ep.name->len);
        e->attributes = ref_alloc(r, log->n_fields * sizeof(pb_kv *));
        for (size_t f = 0; f < log->n_fields; f++) {
            if (ep.is_attribute[f])
                e->attributes[e->n_attributes++] =
                    ref_kv(r, log->fields[f].key, log->fields[f].key_len, &log->fields[f]);
        }
        tw__otlp_event_plan_clear(&ep);
        ps->events[ps->n_events++] = e;
    }
    ps->links = ref_alloc(r, s->n_refs * sizeof *ps->links);
    for (size_t i = 0; i < s->n_refs; i++) {
        if (i == plan.parent_ref)
            continue;
        const tw__ref *rf = &s->refs[i];
        Opentelemetry__Proto__Trace__V1__Span__Link *l = ref_alloc(r, sizeof *l);
        opentelemetry__proto__trace__v1__span__link__init(l);
        l->trace_id = (ProtobufCBinaryData){16, ref_id(r, rf->trace_id_high, rf->trace_id_low, 16)};
        l->span_id = (ProtobufCBinaryData){8, ref_id(r, 0, rf->span_id, 8)};
        const char *type = tw__otlp_ref_type_name(rf->type);
        tw__tag value = {.type = TW_VALUE_STRING, .v.str = type, .len = strlen(type)};
        l->attributes = ref_alloc(r, sizeof(pb_kv *));
        l->attributes[l->n_attributes++] = ref_kv(r, TW__OTLP_REF_TYPE_KEY, 20, &value);
        ps->links[ps->n_links++] = l;
    }
    if (plan.status_code) {
        Opentelemetry__Proto__Trace__V1__Status *st = ref_alloc(r, sizeof *st);
        opentelemetry__proto__trace__v1__status__init(st);
        st->code = (Opentelemetry__Proto__Trace__V1__Status__StatusCode)plan.status_code;
        if (plan.status_message)
            st->message = ref_str(r, plan.status_message->v.str, plan.status_message->len);
        ps->status = st;
    }
    tw__otlp_span_plan_clear(&plan);
    return ps;
}

/* A whole request of @n spans of @p, packed by protobuf-c, into @out. */
static inline void ref_request(ref *r, tw__span_data *const *spans, size_t n, const tw__process *p,
                               tw__buf *out)
{
    Opentelemetry__Proto__Collector__Trace__V1__ExportTraceServiceRequest req;
    opentelemetry__proto__collector__trace__v1__export_trace_service_request__init(&req);
    Opentelemetry__Proto__Trace__V1__ResourceSpans rs;
    opentelemetry__proto__trace__v1__resource_spans__init(&rs);
    Opentelemetry__Proto__Resource__V1__Resource res;
    opentelemetry__proto__resource__v1__resource__init(&res);
    Opentelemetry__Proto__Trace__V1__ScopeSpans ss;
    opentelemetry__proto__trace__v1__scope_spans__init(&ss);
    Opentelemetry__Proto__Common__V1__InstrumentationScope scope;
    opentelemetry__proto__common__v1__instrumentation_scope__init(&scope);
    Opentelemetry__Proto__Trace__V1__ResourceSpans *rsp = &rs;
    Opentelemetry__Proto__Trace__V1__ScopeSpans *ssp = &ss;
    tw__otlp_resource_plan plan;
    REF_CHECK(tw__otlp_plan_resource(p, &plan));
    res.attributes = ref_alloc(r, plan.n_attrs * sizeof(pb_kv *));
    for (size_t i = 0; i < plan.n_attrs; i++)
        res.attributes[res.n_attributes++] =
            ref_kv(r, plan.attrs[i].key, plan.attrs[i].key_len, plan.attrs[i].value);
    tw__otlp_resource_plan_clear(&plan);
    scope.name = "tracewire";
    scope.version = (char *)tw_version();
    ss.scope = &scope;
    ss.spans = ref_alloc(r, n * sizeof(pb_span *));
    for (size_t i = 0; i < n; i++)
        ss.spans[ss.n_spans++] = ref_span(r, spans[i]);
    rs.resource = &res;
    rs.n_scope_spans = 1;
    rs.scope_spans = &ssp;
    req.n_resource_spans = 1;
    req.resource_spans = &rsp;
    size_t size = protobuf_c_message_get_packed_size(&req.base);
    tw__buf_reset(out);
    REF_CHECK(tw__buf_reserve(out, size + 1));
    out->len = protobuf_c_message_pack(&req.base, out->data);
    REF_CHECK(out->len == size);
}

/* ---- decoding -------------------------------------------------------------------------------- */

#define REF_ANY(x) OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_##x

static inline uint64_t ref_be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | p[i];
    return v;
}

static inline json_t *ref_plain_json(const pb_any *any)
{
    if (!any)
        return json_string("");
    switch (any->value_case) {
    case REF_ANY(STRING_VALUE):
        return tw__json_text(any->string_value, strlen(any->string_value));
    case REF_ANY(BOOL_VALUE):
        return json_boolean(any->bool_value);
    case REF_ANY(INT_VALUE):
        return json_integer(any->int_value);
    case REF_ANY(DOUBLE_VALUE): {
        if (isfinite(any->double_value))
            return json_real(any->double_value);
        char text[32];
        tw__double_text(any->double_value, text, sizeof text);
        return json_string(text);
    }
    case REF_ANY(BYTES_VALUE): {
        char *b64 = tw__base64(any->bytes_value.data, any->bytes_value.len);
        json_t *s = json_string(b64);
        free(b64);
        return s;
    }
    case REF_ANY(ARRAY_VALUE): {
        json_t *out = json_array();
        for (size_t i = 0; any->array_value && i < any->array_value->n_values; i++)
            REF_CHECK(tw__json_push(out, ref_plain_json(any->array_value->values[i])));
        return out;
    }
    case REF_ANY(KVLIST_VALUE): {
        json_t *out = json_object();
        for (size_t i = 0; any->kvlist_value && i < any->kvlist_value->n_values; i++) {
            const pb_kv *kv = any->kvlist_value->values[i];
            REF_CHECK(tw__json_set(out, kv->key, strlen(kv->key), ref_plain_json(kv->value)));
        }
        return out;
    }
    default:
        return json_string("");
    }
}

/* An AnyValue as a typed value (*owned: text to free after use). */
static inline tw_value ref_value(const pb_any *any, char **owned)
{
    *owned = NULL;
    tw_value v = {.type = TW_VALUE_STRING, .len = 0, .as.str = ""};
    if (!any)
        return v;
    switch (any->value_case) {
    case REF_ANY(STRING_VALUE):
        v.as.str = any->string_value;
        v.len = strlen(any->string_value);
        break;
    case REF_ANY(BOOL_VALUE):
        v = (tw_value){.type = TW_VALUE_BOOL, .as.boolean = any->bool_value != 0};
        break;
    case REF_ANY(INT_VALUE):
        v = (tw_value){.type = TW_VALUE_INT64, .as.i64 = any->int_value};
        break;
    case REF_ANY(DOUBLE_VALUE):
        v = (tw_value){.type = TW_VALUE_DOUBLE, .as.dbl = any->double_value};
        break;
    case REF_ANY(BYTES_VALUE):
        v = (tw_value){
            .type = TW_VALUE_BINARY, .len = any->bytes_value.len, .as.bin = any->bytes_value.data};
        break;
    case REF_ANY(ARRAY_VALUE):
    case REF_ANY(KVLIST_VALUE): {
        json_t *plain = ref_plain_json(any);
        *owned = json_dumps(plain, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
        json_decref(plain);
        REF_CHECK(*owned != NULL);
        v.as.str = *owned;
        v.len = strlen(*owned);
        break;
    }
    default:
        break;
    }
    return v;
}

/* One protobuf-c Span through the reading rules; NULL when the rules refuse it. */
static inline tw__span_data *ref_span_model(const pb_span *ps, const char *scope_name,
                                            const char *scope_version)
{
    tw__otlp_span_fields f;
    memset(&f, 0, sizeof f);
    if ((ps->trace_id.len != 16 && ps->trace_id.len != 8) || ps->span_id.len != 8 ||
        (ps->parent_span_id.len != 0 && ps->parent_span_id.len != 8) || (int)ps->kind < 0 ||
        (int)ps->kind > 5 || ps->start_time_unix_nano > INT64_MAX ||
        ps->end_time_unix_nano > INT64_MAX)
        return NULL;
    f.trace_id_high = ps->trace_id.len == 16 ? ref_be64(ps->trace_id.data) : 0;
    f.trace_id_low = ref_be64(ps->trace_id.data + ps->trace_id.len - 8);
    f.span_id = ref_be64(ps->span_id.data);
    f.parent_id = ps->parent_span_id.len ? ref_be64(ps->parent_span_id.data) : 0;
    if ((f.trace_id_high | f.trace_id_low) == 0 || f.span_id == 0)
        return NULL;
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
    bool warn;
    if (tw__otlp_span_new(&f, &s, &warn) != TW__OTLP_BUILD_OK)
        return NULL;
    for (size_t i = 0; i < ps->n_links; i++) {
        const Opentelemetry__Proto__Trace__V1__Span__Link *l = ps->links[i];
        if ((l->trace_id.len != 16 && l->trace_id.len != 8) || l->span_id.len != 8) {
            tw__span_data_unref(s);
            return NULL;
        }
        uint64_t hi = l->trace_id.len == 16 ? ref_be64(l->trace_id.data) : 0;
        uint64_t lo = ref_be64(l->trace_id.data + l->trace_id.len - 8);
        uint64_t sid = ref_be64(l->span_id.data);
        if ((hi | lo) == 0 || sid == 0) {
            tw__span_data_unref(s);
            return NULL;
        }
        bool is_child_of = false;
        for (size_t k = 0; k < l->n_attributes; k++) {
            const pb_kv *kv = l->attributes[k];
            if (kv->value && kv->value->value_case == REF_ANY(STRING_VALUE) &&
                tw__otlp_link_attribute_is_child_of(kv->key, kv->value->string_value,
                                                    strlen(kv->value->string_value)))
                is_child_of = true;
        }
        REF_CHECK(tw__otlp_span_add_link(s, hi, lo, sid, is_child_of));
    }
    for (size_t i = 0; i < ps->n_attributes; i++) {
        char *owned;
        tw_value v = ref_value(ps->attributes[i]->value, &owned);
        REF_CHECK(tw__otlp_span_add_attribute(s, ps->attributes[i]->key, &v));
        free(owned);
    }
    REF_CHECK(tw__otlp_span_add_field_tags(s, &f, scope_name, strlen(scope_name), scope_version,
                                           strlen(scope_version)));
    for (size_t i = 0; i < ps->n_events; i++) {
        const Opentelemetry__Proto__Trace__V1__Span__Event *e = ps->events[i];
        if (e->time_unix_nano > INT64_MAX) {
            tw__span_data_unref(s);
            return NULL;
        }
        tw__log *log = tw__otlp_span_add_event(s, (int64_t)e->time_unix_nano, e->name,
                                               strlen(e->name), e->n_attributes);
        REF_CHECK(log != NULL);
        for (size_t k = 0; k < e->n_attributes; k++) {
            char *owned;
            tw_value v = ref_value(e->attributes[k]->value, &owned);
            REF_CHECK(tw__otlp_event_add_attribute(s, log, e->attributes[k]->key, &v));
            free(owned);
        }
    }
    return s;
}

/* What ref_decode_request read: each span (NULL where the rules refused it)
 * with its process. */
typedef struct ref_decoded {
    tw__span_data *spans[4096];
    tw__process procs[64];
    size_t span_proc[4096];
    size_t n_spans, n_procs;
} ref_decoded;

/* protobuf-c's unpack of a whole request, then the reading rules. False when
 * protobuf-c refuses the bytes. */
static inline bool ref_decode_request(const uint8_t *data, size_t len, ref_decoded *out)
{
    memset(out, 0, sizeof *out);
    Opentelemetry__Proto__Collector__Trace__V1__ExportTraceServiceRequest *req =
        opentelemetry__proto__collector__trace__v1__export_trace_service_request__unpack(NULL, len,
                                                                                         data);
    if (!req)
        return false;
    for (size_t r = 0; r < req->n_resource_spans && out->n_procs < 64; r++) {
        const Opentelemetry__Proto__Trace__V1__ResourceSpans *rs = req->resource_spans[r];
        tw__process *p = &out->procs[out->n_procs++];
        tw__process_init(p);
        REF_CHECK(tw__process_set_service(p, ""));
        for (size_t i = 0; rs->resource && i < rs->resource->n_attributes; i++) {
            const pb_kv *kv = rs->resource->attributes[i];
            char *owned;
            tw_value v = ref_value(kv->value, &owned);
            REF_CHECK(tw__otlp_is_service_key(kv->key) ? tw__otlp_process_set_service(p, &v)
                                                       : tw__process_add_tag(p, kv->key, &v));
            free(owned);
        }
        for (size_t j = 0; j < rs->n_scope_spans; j++) {
            const Opentelemetry__Proto__Trace__V1__ScopeSpans *ss = rs->scope_spans[j];
            const char *name = ss->scope ? ss->scope->name : "";
            const char *version = ss->scope ? ss->scope->version : "";
            for (size_t k = 0; k < ss->n_spans && out->n_spans < 4096; k++) {
                out->span_proc[out->n_spans] = out->n_procs - 1;
                out->spans[out->n_spans++] = ref_span_model(ss->spans[k], name, version);
            }
        }
    }
    opentelemetry__proto__collector__trace__v1__export_trace_service_request__free_unpacked(req,
                                                                                            NULL);
    return true;
}

static inline void ref_decoded_free(ref_decoded *d)
{
    for (size_t i = 0; i < d->n_spans; i++)
        tw__span_data_unref(d->spans[i]);
    for (size_t i = 0; i < d->n_procs; i++)
        tw__process_clear(&d->procs[i]);
}

#endif /* TW_TESTS_WIRE_OTLP_PROTO_REF_H */
