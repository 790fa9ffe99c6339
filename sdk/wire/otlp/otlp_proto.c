/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/otlp/otlp_proto.c: span model -> OTLP protobuf (otlp_proto.h), the
 * encoder of the OTLP/HTTP protobuf reporter (report/http_formats.c) and of
 * `tracewire convert --to otlp-proto`. It writes the wire format directly
 * (wire/core/pb_write.h) from the plan of wire/otlp/otlp_map.h, in the
 * field order and with the omissions of protobuf-c's packer, which the
 * differential suite (tests/unit/wire/test_otlp_proto.c) holds it to.
 *
 * Why not protobuf-c structs: a Span as protobuf-c structs is a dozen
 * allocations (the span, each KeyValue and AnyValue, the pointer arrays),
 * plus a size pass and a pack pass; writing the bytes from the plan costs
 * one pass into a reused buffer (the measurement is in docs/DEPENDENCIES.md).
 *
 * Memory: the caller's buffer; a plan holds a heap array only for spans
 * with more than 16 tags. Locking: none.
 */
#include "wire/otlp/otlp_proto.h"

#include <string.h>

#include "tracewire/common.h"
#include "wire/core/pb_write.h"
#include "wire/otlp/otlp_map.h"
#include "wire/otlp/otlp_proto_fields.h"

/* Copies @len bytes of @text to @p eight bytes at a time while or-ing
 * them together; true when they are all ASCII. Only text that turns out
 * not to be ASCII (rare in span data) is written again by pb_write.h's
 * writer, which repairs it to valid UTF-8. Two passes (check, then memcpy)
 * cost twice as much on the short keys and values spans are made of
 * (inlined: a call's register saves cost as much as the copy). */
static inline __attribute__((always_inline)) bool copy_ascii(uint8_t *p, const char *text,
                                                             size_t len)
{
    uint64_t high = 0, w;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        memcpy(&w, text + i, 8);
        memcpy(p + i, &w, 8);
        high |= w;
    }
    if (len >= 8) {
        if (i < len) { /* the last eight bytes, overlapping */
            memcpy(&w, text + len - 8, 8);
            memcpy(p + len - 8, &w, 8);
            high |= w;
        }
    } else if (len >= 4) { /* 4..7 bytes: two overlapping words */
        uint32_t a, z;
        memcpy(&a, text, 4);
        memcpy(&z, text + len - 4, 4);
        memcpy(p, &a, 4);
        memcpy(p + len - 4, &z, 4);
        high |= a | z;
    } else if (len) { /* 1..3 bytes: the first, the middle and the last */
        uint8_t a = (uint8_t)text[0], m = (uint8_t)text[len / 2], z = (uint8_t)text[len - 1];
        p[0] = a;
        p[len / 2] = m;
        p[len - 1] = z;
        high |= a | m | z;
    }
    return !(high & 0x8080808080808080u);
}

/* A string field (proto3: written only when @is_always or not empty),
 * checked and copied in one pass (copy_ascii). */
static inline __attribute__((always_inline)) bool
put_string(tw__buf *b, uint32_t number, const char *text, size_t len, bool is_always)
{
    if (len == 0 && !is_always)
        return true;
    if (!tw__pb_reserve(b, 15 + len))
        return false;
    size_t before = b->len;
    tw__pb_raw_varint(b, TW__PB_TAG(number, TW__PB_LEN));
    tw__pb_raw_varint(b, len);
    if (!copy_ascii(b->data + b->len, text, len)) {
        b->len = before;
        return tw__pb_string_field(b, number, text, len, is_always);
    }
    b->len += len;
    return true;
}

/* One KeyValue field numbered @number, with @key (length @key_len), field
 * by field: nested messages begun and ended (pb_write.h). */
static bool put_key_value_general(tw__buf *b, uint32_t number, const char *key, size_t key_len,
                                  const tw__tag *t)
{
    size_t kv = tw__pb_begin(b, number);
    if (kv == SIZE_MAX || !put_string(b, KV_KEY, key, key_len, false))
        return false;
    size_t any = tw__pb_begin(b, KV_VALUE);
    bool ok = any != SIZE_MAX;
    switch (t->type) {
    case TW_VALUE_STRING:
        ok = ok && put_string(b, ANY_STRING, t->v.str, t->len, true);
        break;
    case TW_VALUE_BOOL:
        ok = ok && tw__pb_varint_field(b, ANY_BOOL, t->v.boolean ? 1 : 0);
        break;
    case TW_VALUE_INT64:
        ok = ok && tw__pb_varint_field(b, ANY_INT, (uint64_t)t->v.i64);
        break;
    case TW_VALUE_DOUBLE:
        ok = ok && tw__pb_double_field(b, ANY_DOUBLE, t->v.dbl);
        break;
    case TW_VALUE_BINARY:
        ok = ok && tw__pb_bytes_field(b, ANY_BYTES, t->v.bin, t->len);
        break;
    }
    return ok && tw__pb_end(b, any) && tw__pb_end(b, kv);
}

/* One KeyValue field. Most attributes are short: when the whole KeyValue
 * is under 128 bytes, every length is one byte and known before a byte is
 * written, so the message is written in one pass with one room check (the
 * field by field writer's begins, ends and checks cost twice the bytes).
 * The same bytes as put_key_value_general, which writes everything else
 * and text that is not ASCII (tests/unit/wire/test_otlp_proto.c compares
 * the encoder with protobuf-c's packer on spans of every shape). */
static inline __attribute__((always_inline)) bool
put_key_value_inline(tw__buf *b, uint32_t number, const char *key, size_t key_len, const tw__tag *t)
{
    _Static_assert(RESOURCE_ATTRIBUTES < 16 && SPAN_ATTRIBUTES < 16 && EVENT_ATTRIBUTES < 16 &&
                       LINK_ATTRIBUTES < 16 && KV_VALUE < 16 && ANY_BYTES < 16,
                   "one-byte field tags");
    size_t any_len; /* the AnyValue message's bytes */
    switch (t->type) {
    case TW_VALUE_STRING:
    case TW_VALUE_BINARY:
        any_len = t->len < 126 ? 2 + t->len : 128;
        break;
    case TW_VALUE_BOOL:
        any_len = 2;
        break;
    case TW_VALUE_INT64:
        any_len = 1 + tw__pb_varint_size((uint64_t)t->v.i64);
        break;
    case TW_VALUE_DOUBLE:
        any_len = 1 + 8;
        break;
    default:
        any_len = 128;
        break;
    }
    size_t kv_len = (key_len ? 2 + key_len : 0) + 2 + any_len;
    if (number >= 16 || key_len >= 128 || kv_len >= 128)
        return put_key_value_general(b, number, key, key_len, t);
    if (!tw__pb_reserve(b, 2 + kv_len))
        return false;
    uint8_t *p = b->data + b->len;
    *p++ = (uint8_t)TW__PB_TAG(number, TW__PB_LEN);
    *p++ = (uint8_t)kv_len;
    bool is_ascii = true;
    if (key_len) { /* proto3: an empty key is not written */
        *p++ = (uint8_t)TW__PB_TAG(KV_KEY, TW__PB_LEN);
        *p++ = (uint8_t)key_len;
        is_ascii = copy_ascii(p, key, key_len);
        p += key_len;
    }
    *p++ = (uint8_t)TW__PB_TAG(KV_VALUE, TW__PB_LEN);
    *p++ = (uint8_t)any_len;
    switch (t->type) {
    case TW_VALUE_STRING:
        *p++ = (uint8_t)TW__PB_TAG(ANY_STRING, TW__PB_LEN);
        *p++ = (uint8_t)t->len;
        is_ascii = copy_ascii(p, t->v.str, t->len) && is_ascii;
        p += t->len;
        break;
    case TW_VALUE_BINARY:
        *p++ = (uint8_t)TW__PB_TAG(ANY_BYTES, TW__PB_LEN);
        *p++ = (uint8_t)t->len;
        if (t->len)
            memcpy(p, t->v.bin, t->len);
        p += t->len;
        break;
    case TW_VALUE_BOOL:
        *p++ = (uint8_t)TW__PB_TAG(ANY_BOOL, TW__PB_VARINT);
        *p++ = t->v.boolean ? 1 : 0;
        break;
    case TW_VALUE_INT64: {
        *p++ = (uint8_t)TW__PB_TAG(ANY_INT, TW__PB_VARINT);
        uint64_t v = (uint64_t)t->v.i64;
        while (v >= 0x80) {
            *p++ = (uint8_t)(v | 0x80);
            v >>= 7;
        }
        *p++ = (uint8_t)v;
        break;
    }
    case TW_VALUE_DOUBLE: {
        *p++ = (uint8_t)TW__PB_TAG(ANY_DOUBLE, TW__PB_I64);
        uint64_t bits;
        memcpy(&bits, &t->v.dbl, sizeof bits);
        tw__pb__store_le64(p, bits);
        p += 8;
        break;
    }
    }
    if (!is_ascii) /* nothing committed: b->len is where it was */
        return put_key_value_general(b, number, key, key_len, t);
    b->len = (size_t)(p - b->data);
    return true;
}

static bool put_key_value(tw__buf *b, uint32_t number, const char *key, size_t key_len,
                          const tw__tag *t)
{
    return put_key_value_inline(b, number, key, key_len, t);
}

static bool put_tag(tw__buf *b, uint32_t number, const tw__tag *t)
{
    return put_key_value(b, number, t->key, t->key_len, t);
}

static bool put_trace_id(tw__buf *b, uint32_t number, uint64_t high, uint64_t low)
{
    return tw__pb_id_field(b, number, high, low, true);
}

static bool put_events(tw__buf *b, const tw__span_data *s)
{
    for (size_t i = 0; i < s->n_logs; i++) {
        const tw__log *log = &s->logs[i];
        tw__otlp_event_plan plan;
        if (!tw__otlp_plan_event(log, &plan))
            return false;
        size_t ev = tw__pb_begin(b, SPAN_EVENTS);
        bool ok =
            ev != SIZE_MAX &&
            (plan.time_ns == 0 || tw__pb_fixed64_field(b, EVENT_TIME, plan.time_ns)) &&
            (!plan.name || put_string(b, EVENT_NAME, plan.name->v.str, plan.name->len, false));
        for (size_t f = 0; ok && f < log->n_fields; f++) {
            if (plan.is_attribute[f])
                ok = put_tag(b, EVENT_ATTRIBUTES, &log->fields[f]);
        }
        tw__otlp_event_plan_clear(&plan);
        if (!ok || !tw__pb_end(b, ev))
            return false;
    }
    return true;
}

static bool put_links(tw__buf *b, const tw__span_data *s, const tw__otlp_span_plan *plan)
{
    for (size_t i = 0; i < s->n_refs; i++) {
        if (i == plan->parent_ref)
            continue; /* it is parent_span_id */
        const tw__ref *ref = &s->refs[i];
        const char *type = tw__otlp_ref_type_name(ref->type);
        tw__tag value = {.type = TW_VALUE_STRING, .v.str = type, .len = strlen(type)};
        size_t link = tw__pb_begin(b, SPAN_LINKS);
        if (link == SIZE_MAX ||
            !put_trace_id(b, LINK_TRACE_ID, ref->trace_id_high, ref->trace_id_low) ||
            !tw__pb_id_field(b, LINK_SPAN_ID, 0, ref->span_id, false) ||
            !put_key_value(b, LINK_ATTRIBUTES, TW__OTLP_REF_TYPE_KEY, strlen(TW__OTLP_REF_TYPE_KEY),
                           &value) ||
            !tw__pb_end(b, link))
            return false;
    }
    return true;
}

/* The Span message's fields (no tag or length of its own). */
static bool put_span_body(tw__buf *b, const tw__span_data *s, const tw__otlp_span_plan *plan)
{
    const char *name = s->operation ? s->operation : "";
    /* The record knows the name's length up to its first NUL (span_data.h). */
    size_t name_len = s->operation_len < UINT32_MAX ? s->operation_len : strlen(name);
    if (!put_trace_id(b, SPAN_TRACE_ID, s->trace_id_high, s->trace_id_low) ||
        !tw__pb_id_field(b, SPAN_SPAN_ID, 0, s->span_id, false) ||
        (s->parent_id && !tw__pb_id_field(b, SPAN_PARENT_SPAN_ID, 0, s->parent_id, false)) ||
        !put_string(b, SPAN_NAME, name, name_len, false) ||
        !tw__pb_varint_field(b, SPAN_KIND, plan->kind) ||
        (plan->start_ns && !tw__pb_fixed64_field(b, SPAN_START, plan->start_ns)) ||
        (plan->end_ns && !tw__pb_fixed64_field(b, SPAN_END, plan->end_ns)))
        return false;
    /* The span's attributes, most of its bytes: the writer inline (a call
     * per attribute cost a fifth of it in register saves). */
    for (size_t i = 0; i < s->n_tags; i++) {
        const tw__tag *t = &s->tags[i];
        if (plan->is_attribute[i] &&
            !put_key_value_inline(b, SPAN_ATTRIBUTES, t->key, t->key_len, t))
            return false;
    }
    if (!put_events(b, s) || !put_links(b, s, plan))
        return false;
    if (plan->status_code != TW__OTLP_STATUS_UNSET) {
        const tw__tag *m = plan->status_message;
        size_t st = tw__pb_begin(b, SPAN_STATUS);
        if (st == SIZE_MAX || (m && !put_string(b, STATUS_MESSAGE, m->v.str, m->len, false)) ||
            !tw__pb_varint_field(b, STATUS_CODE, plan->status_code) || !tw__pb_end(b, st))
            return false;
    }
    return true;
}

/* A Span is usually 128 bytes to 16 KiB long: its length takes two bytes.
 * begin_span leaves room for two, so that end_span writes them in place;
 * pb_write.h's tw__pb_begin leaves one, and its tw__pb_end would then move
 * the whole span up by a byte. Returns the offset of the length. */
static size_t begin_span(tw__buf *b)
{
    if (!tw__pb_reserve(b, 3))
        return SIZE_MAX;
    b->data[b->len++] = (uint8_t)TW__PB_TAG(SS_SPANS, TW__PB_LEN);
    b->len += 2;
    return b->len - 2;
}

/* Writes the length of the span begun at @at as a minimal varint (the bytes
 * protobuf-c writes), moving the span only when it needs other than two. */
static bool end_span(tw__buf *b, size_t at)
{
    size_t len = b->len - at - 2;
    size_t width = tw__pb_varint_size(len);
    if (width > 2 && !tw__pb_reserve(b, width - 2))
        return false;
    if (width != 2)
        memmove(b->data + at + width, b->data + at + 2, len);
    size_t end = at + width + len;
    b->len = at;
    tw__pb_raw_varint(b, len);
    b->len = end;
    return true;
}

bool tw__otlp_proto_encode_span(const tw__span_data *s, tw__buf *out)
{
    if (!s || !out)
        return false;
    tw__otlp_span_plan plan;
    if (!tw__otlp_plan_span(s, &plan))
        return false;
    size_t before = out->len;
    size_t span = begin_span(out);
    bool ok = span != SIZE_MAX && put_span_body(out, s, &plan) && end_span(out, span);
    tw__otlp_span_plan_clear(&plan);
    if (!ok)
        out->len = before;
    return ok;
}

/* ---- envelope -------------------------------------------------------------------------------- */

bool tw__otlp_proto_envelope_init(tw__otlp_proto_envelope *e, const tw__process *process)
{
    tw__buf_init(&e->resource);
    tw__buf_init(&e->scope);
    tw__otlp_resource_plan plan;
    if (!tw__otlp_plan_resource(process, &plan))
        return false;
    size_t res = tw__pb_begin(&e->resource, RS_RESOURCE);
    bool ok = res != SIZE_MAX;
    for (size_t i = 0; ok && i < plan.n_attrs; i++) {
        const tw__otlp_attr *a = &plan.attrs[i];
        ok = put_key_value(&e->resource, RESOURCE_ATTRIBUTES, a->key, a->key_len, a->value);
    }
    tw__otlp_resource_plan_clear(&plan);
    const char *version = tw_version();
    size_t scope = tw__pb_begin(&e->scope, SS_SCOPE);
    return ok && tw__pb_end(&e->resource, res) && scope != SIZE_MAX &&
           tw__pb_string_field(&e->scope, SCOPE_NAME, TW__OTLP_SCOPE_NAME,
                               strlen(TW__OTLP_SCOPE_NAME), false) &&
           tw__pb_string_field(&e->scope, SCOPE_VERSION, version, strlen(version), false) &&
           tw__pb_end(&e->scope, scope);
}

void tw__otlp_proto_envelope_clear(tw__otlp_proto_envelope *e)
{
    tw__buf_free(&e->resource);
    tw__buf_free(&e->scope);
}

/* Bytes of a length-delimited field of a one-byte tag holding @len bytes. */
static size_t field_size(size_t len)
{
    return 1 + tw__pb_varint_size(len) + len;
}

size_t tw__otlp_proto_resource_spans_size(const tw__otlp_proto_envelope *e, size_t spans_bytes)
{
    size_t scope_spans = e->scope.len + spans_bytes;
    size_t resource_spans = e->resource.len + field_size(scope_spans);
    return field_size(resource_spans);
}

bool tw__otlp_proto_put_resource_spans_head(const tw__otlp_proto_envelope *e, size_t spans_bytes,
                                            tw__buf *out)
{
    size_t scope_spans = e->scope.len + spans_bytes;
    size_t resource_spans = e->resource.len + field_size(scope_spans);
    if (!tw__pb_reserve(out, 2 * 11 + e->resource.len + e->scope.len))
        return false;
    tw__pb_raw_varint(out, TW__PB_TAG(REQUEST_RESOURCE_SPANS, TW__PB_LEN));
    tw__pb_raw_varint(out, resource_spans);
    memcpy(out->data + out->len, e->resource.data, e->resource.len);
    out->len += e->resource.len;
    tw__pb_raw_varint(out, TW__PB_TAG(RS_SCOPE_SPANS, TW__PB_LEN));
    tw__pb_raw_varint(out, scope_spans);
    memcpy(out->data + out->len, e->scope.data, e->scope.len);
    out->len += e->scope.len;
    return true;
}

bool tw__otlp_proto_encode_request(tw__span_data *const *spans, size_t n,
                                   const tw__process *process, tw__buf *out)
{
    tw__otlp_proto_envelope e;
    tw__buf items, body;
    tw__buf_init(&items);
    tw__buf_init(&body);
    bool ok = tw__otlp_proto_envelope_init(&e, process);
    for (size_t i = 0; ok && i < n; i++)
        ok = tw__otlp_proto_encode_span(spans[i], &items);
    ok = ok && tw__otlp_proto_put_resource_spans_head(&e, items.len, &body) &&
         tw__buf_append(&body, items.data, items.len);
    if (ok) {
        tw__buf old = *out;
        *out = body;
        body = old;
    }
    tw__buf_free(&body);
    tw__buf_free(&items);
    tw__otlp_proto_envelope_clear(&e);
    return ok;
}
