/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/otlp/otlp_json.c: the project's one OTLP/JSON encoder (the field
 * table and mapping rules are in wire/otlp/otlp_json.h): span model ->
 * ExportTraceServiceRequest JSON, written straight into a byte buffer. The
 * SDK's OTLP HTTP reporter (on its reporter thread), `tracewire convert
 * --to otlp-json` and `--send` to OTLP/HTTP use it.
 *
 * Why not a Jansson tree: building and dumping one per span cost 117,000
 * instructions per span on the reporter thread (callgrind,
 * tests/bench/bench_encode.c). The guard is the differential suite
 * tests/unit/wire/test_otlp_json.c: on a large random corpus the output,
 * parsed with Jansson, equals the tree the reference Jansson encoder
 * (tests/unit/wire/oracle_otlp.c) builds, key order included; and
 * tests/interop/ decodes it with the protobufjs classes generated from
 * opentelemetry-proto.
 *
 * What is written is decided by the OTLP mapping shared with the protobuf
 * encoder (wire/otlp/otlp_map.h); this file only spells it in JSON.
 *
 * Memory: the plans' flag arrays (heap for spans with more than 16 tags or
 * fields). Locking: none; pure functions.
 */
#include "wire/otlp/otlp_json.h"

#include <stdlib.h>
#include <string.h>

#include "tracewire/common.h"
#include "wire/core/base64.h"
#include "wire/core/hex.h"
#include "wire/core/json_write.h"
#include "wire/otlp/otlp_map.h"

#define PUT_LIT(out, lit) tw__buf_put((out), (lit), sizeof(lit) - 1)

/* ---- values ------------------------------------------------------------------------------ */

/* {"stringValue":...} and the other AnyValue forms. */
static bool put_any_value(tw__buf *out, const tw__tag *t)
{
    switch (t->type) {
    case TW_VALUE_STRING:
        return PUT_LIT(out, "{\"stringValue\":") && tw__json_append_text(out, t->v.str, t->len) &&
               tw__buf_put_byte(out, '}');
    case TW_VALUE_BOOL:
        return t->v.boolean ? PUT_LIT(out, "{\"boolValue\":true}")
                            : PUT_LIT(out, "{\"boolValue\":false}");
    case TW_VALUE_INT64:
        return PUT_LIT(out, "{\"intValue\":") && tw__json_put_quoted_int(out, t->v.i64) &&
               tw__buf_put_byte(out, '}');
    case TW_VALUE_DOUBLE:
        /* Non-finite values as the strings proto3 JSON spells them. */
        return PUT_LIT(out, "{\"doubleValue\":") && tw__json_put_double(out, t->v.dbl) &&
               tw__buf_put_byte(out, '}');
    case TW_VALUE_BINARY:
        return PUT_LIT(out, "{\"bytesValue\":\"") && tw__base64_append(out, t->v.bin, t->len) &&
               PUT_LIT(out, "\"}");
    }
    return false;
}

/* {"key":K,"value":V}: @key of @key_len bytes (cut at a NUL byte, as
 * JSON object keys of the reference encoder are). */
static bool put_attribute(tw__buf *out, const char *key, size_t key_len, const tw__tag *t)
{
    /* A string, bool or int64 attribute in one reserved write (the room
     * for a string's text is reserved with the key's). */
    key_len = strnlen(key, key_len);
    size_t text_len = t->type == TW_VALUE_STRING ? t->len : 0;
    if (text_len > SIZE_MAX / 8 || !tw__json_room(out, key_len + text_len, 64))
        return false;
    uint8_t *o = out->data + out->len;
    memcpy(o, "{\"key\":", 7);
    o = tw__json_write_text(o + 7, key, key_len);
#define PUT_RAW(lit) (memcpy(o, (lit), sizeof(lit) - 1), o += sizeof(lit) - 1)
    switch (t->type) {
    case TW_VALUE_STRING:
        PUT_RAW(",\"value\":{\"stringValue\":");
        o = tw__json_write_text(o, t->v.str, t->len);
        PUT_RAW("}}");
        break;
    case TW_VALUE_BOOL:
        if (t->v.boolean)
            PUT_RAW(",\"value\":{\"boolValue\":true}}");
        else
            PUT_RAW(",\"value\":{\"boolValue\":false}}");
        break;
    case TW_VALUE_INT64:
        PUT_RAW(",\"value\":{\"intValue\":\"");
        o = tw__json_write_int(o, t->v.i64);
        PUT_RAW("\"}}");
        break;
    case TW_VALUE_DOUBLE:
    case TW_VALUE_BINARY:
    default:
        out->len = (size_t)(o - out->data);
        return PUT_LIT(out, ",\"value\":") && put_any_value(out, t) && tw__buf_put_byte(out, '}');
    }
#undef PUT_RAW
    out->len = (size_t)(o - out->data);
    return true;
}

/* ,"attributes":[...] of the tags of @tags that @is_attribute (a plan's
 * flags) selects; nothing when none is. */
static bool put_attributes(tw__buf *out, const tw__tag *tags, size_t n, const bool *is_attribute)
{
    bool ok = true;
    size_t written = 0;
    for (size_t i = 0; i < n && ok; i++) {
        if (!is_attribute[i])
            continue;
        ok = (written++ ? tw__buf_put_byte(out, ',') : PUT_LIT(out, ",\"attributes\":[")) &&
             put_attribute(out, tags[i].key, tags[i].key_len, &tags[i]);
    }
    return ok && (!written || tw__buf_put_byte(out, ']'));
}

/* ---- the envelope ------------------------------------------------------------------------ */

/* {"attributes":[...]} of the resource plan of @p (wire/otlp/otlp_map.h). */
static bool put_resource(tw__buf *out, const tw__process *p)
{
    tw__otlp_resource_plan plan;
    if (!tw__otlp_plan_resource(p, &plan))
        return false;
    bool ok = tw__buf_put_byte(out, '{');
    for (size_t i = 0; i < plan.n_attrs && ok; i++) {
        const tw__otlp_attr *a = &plan.attrs[i];
        ok = (i ? tw__buf_put_byte(out, ',') : PUT_LIT(out, "\"attributes\":[")) &&
             put_attribute(out, a->key, a->key_len, a->value);
    }
    if (ok && plan.n_attrs)
        ok = tw__buf_put_byte(out, ']');
    tw__otlp_resource_plan_clear(&plan);
    return ok && tw__buf_put_byte(out, '}');
}

bool tw__otlp_encode_resource_begin(const tw__process *process, tw__buf *out)
{
    size_t before = out->len;
    const char *version = tw_version();
    bool ok = PUT_LIT(out, "{\"resource\":") && put_resource(out, process) &&
              PUT_LIT(out, ",\"scopeSpans\":[{\"scope\":{\"name\":\"tracewire\",\"version\":") &&
              tw__json_append_text(out, version, strlen(version)) && PUT_LIT(out, "},\"spans\":[");
    if (!ok)
        out->len = before;
    return ok;
}

bool tw__otlp_encode_resource_end(tw__buf *out)
{
    return PUT_LIT(out, "]}]}");
}

bool tw__otlp_encode_request_begin(const tw__process *process, tw__buf *out)
{
    size_t before = out->len;
    bool ok = PUT_LIT(out, "{\"resourceSpans\":[") && tw__otlp_encode_resource_begin(process, out);
    if (!ok)
        out->len = before;
    return ok;
}

bool tw__otlp_encode_request_end(tw__buf *out)
{
    return PUT_LIT(out, "]}]}]}");
}

/* ---- spans --------------------------------------------------------------------------------- */

static bool put_events(tw__buf *out, const tw__span_data *s)
{
    if (s->n_logs == 0)
        return true;
    bool ok = PUT_LIT(out, ",\"events\":[");
    for (size_t i = 0; i < s->n_logs && ok; i++) {
        const tw__log *log = &s->logs[i];
        tw__otlp_event_plan plan;
        if (!tw__otlp_plan_event(log, &plan))
            return false;
        ok = (i == 0 || tw__buf_put_byte(out, ',')) && PUT_LIT(out, "{\"timeUnixNano\":") &&
             tw__json_put_quoted_uint(out, plan.time_ns) &&
             (!plan.name || (PUT_LIT(out, ",\"name\":") &&
                             tw__json_append_text(out, plan.name->v.str, plan.name->len))) &&
             put_attributes(out, log->fields, log->n_fields, plan.is_attribute) &&
             tw__buf_put_byte(out, '}');
        tw__otlp_event_plan_clear(&plan);
    }
    return ok && tw__buf_put_byte(out, ']');
}

static bool put_links(tw__buf *out, const tw__span_data *s, const tw__otlp_span_plan *plan)
{
    bool ok = true;
    size_t written = 0;
    for (size_t i = 0; i < s->n_refs && ok; i++) {
        const tw__ref *ref = &s->refs[i];
        if (i == plan->parent_ref)
            continue; /* it is parentSpanId */
        const char *type = tw__otlp_ref_type_name(ref->type);
        ok = (written++ ? tw__buf_put_byte(out, ',') : PUT_LIT(out, ",\"links\":[")) &&
             PUT_LIT(out, "{\"traceId\":") &&
             tw__json_put_hex128(out, ref->trace_id_high, ref->trace_id_low) &&
             PUT_LIT(out, ",\"spanId\":") && tw__json_put_hex64(out, ref->span_id) &&
             PUT_LIT(out, ",\"attributes\":[{\"key\":\"" TW__OTLP_REF_TYPE_KEY "\",\"value\":"
                          "{\"stringValue\":\"") &&
             tw__buf_put(out, type, strlen(type)) && PUT_LIT(out, "\"}}]}");
    }
    return ok && (!written || tw__buf_put_byte(out, ']'));
}

static bool put_span(tw__buf *out, const tw__span_data *s, const tw__otlp_span_plan *plan)
{
    const char *op = s->operation ? s->operation : "";
    bool ok = PUT_LIT(out, "{\"traceId\":") &&
              tw__json_put_hex128(out, s->trace_id_high, s->trace_id_low) &&
              PUT_LIT(out, ",\"spanId\":") && tw__json_put_hex64(out, s->span_id);
    if (ok && s->parent_id)
        ok = PUT_LIT(out, ",\"parentSpanId\":") && tw__json_put_hex64(out, s->parent_id);
    ok = ok && PUT_LIT(out, ",\"name\":") && tw__json_append_text(out, op, strlen(op)) &&
         PUT_LIT(out, ",\"kind\":") && tw__json_put_int(out, plan->kind) &&
         PUT_LIT(out, ",\"startTimeUnixNano\":") && tw__json_put_quoted_uint(out, plan->start_ns) &&
         PUT_LIT(out, ",\"endTimeUnixNano\":") && tw__json_put_quoted_uint(out, plan->end_ns) &&
         put_attributes(out, s->tags, s->n_tags, plan->is_attribute) && put_events(out, s) &&
         put_links(out, s, plan);
    if (ok && plan->status_code != TW__OTLP_STATUS_UNSET) {
        const tw__tag *message = plan->status_message;
        ok = PUT_LIT(out, ",\"status\":{\"code\":") && tw__json_put_int(out, plan->status_code) &&
             (!message || (PUT_LIT(out, ",\"message\":") &&
                           tw__json_append_text(out, message->v.str, message->len))) &&
             tw__buf_put_byte(out, '}');
    }
    return ok && tw__buf_put_byte(out, '}');
}

bool tw__otlp_encode_span(const tw__span_data *s, tw__buf *out)
{
    if (!s || !out)
        return false;
    size_t before = out->len;
    tw__otlp_span_plan plan;
    if (!tw__otlp_plan_span(s, &plan))
        return false;
    bool ok = put_span(out, s, &plan);
    tw__otlp_span_plan_clear(&plan);
    if (!ok)
        out->len = before;
    return ok;
}

bool tw__otlp_encode_request(tw__span_data *const *spans, size_t n, const tw__process *process,
                             tw__buf *out)
{
    if (!out || (n && !spans))
        return false;
    size_t before = out->len;
    bool ok = tw__otlp_encode_request_begin(process, out);
    for (size_t i = 0; i < n && ok; i++)
        ok = (i == 0 || tw__buf_put_byte(out, ',')) && tw__otlp_encode_span(spans[i], out);
    ok = ok && tw__otlp_encode_request_end(out);
    if (!ok)
        out->len = before;
    return ok;
}
