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
 * Memory: small flag arrays on the stack (heap for spans with more than 64
 * tags or fields). Locking: none; pure functions.
 */
#include "wire/otlp/otlp_json.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tracewire/common.h"
#include "wire/core/base64.h"
#include "wire/core/hex.h"
#include "wire/core/json_write.h"
#include "wire/model/conventions.h"

#define PUT_LIT(out, lit) tw__buf_put((out), (lit), sizeof(lit) - 1)

/* Flags for @n items: on the stack up to 64, else on the heap. */
typedef struct {
    bool small[64];
    bool *v;
} flags;

static bool flags_init(flags *f, size_t n)
{
    f->v = n <= 64 ? f->small : malloc(n * sizeof(bool));
    if (f->v)
        memset(f->v, 0, (n ? n : 1) * sizeof(bool));
    return f->v != NULL;
}

static void flags_free(flags *f)
{
    if (f->v != f->small)
        free(f->v);
}

/* ---- values ------------------------------------------------------------------------------ */

/* Nanoseconds since the epoch of @us as fixed64: 0 for a time at or before
 * the epoch, saturated at the largest fixed64 (the model's time range,
 * TW__MAX_TIME_US, keeps real values far below). */
static uint64_t unix_nano(int64_t us)
{
    if (us <= 0)
        return 0;
    return (uint64_t)us > UINT64_MAX / 1000u ? UINT64_MAX : (uint64_t)us * 1000u;
}

/* The end of a span in µs, computed without overflow (start > 0). */
static int64_t end_us(int64_t start, int64_t duration)
{
    if (duration <= 0)
        return start;
    return duration > INT64_MAX - start ? INT64_MAX : start + duration;
}

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

/* {"key":K,"value":V}; @key NULL: the tag's own. */
static bool put_attribute(tw__buf *out, const tw__tag *t, const char *key)
{
    const char *k = key ? key : t->key;
    size_t len = key ? strlen(key) : strnlen(t->key, t->key_len);
    return PUT_LIT(out, "{\"key\":") && tw__json_append_text(out, k, len) &&
           PUT_LIT(out, ",\"value\":") && put_any_value(out, t) && tw__buf_put_byte(out, '}');
}

/* ,"attributes":[...] of the winning tags of @tags that @skip does not
 * exclude (nullable); nothing when none is left. @comma: a ',' first. */
static bool put_attributes(tw__buf *out, const tw__tag *tags, size_t n, const bool *skip,
                           bool comma)
{
    flags winner;
    if (!flags_init(&winner, n))
        return false;
    bool ok = tw__last_by_key(tags, n, winner.v);
    size_t written = 0;
    for (size_t i = 0; i < n && ok; i++) {
        if (!winner.v[i] || (skip && skip[i]))
            continue;
        if (written++ == 0)
            ok = comma ? PUT_LIT(out, ",\"attributes\":[") : PUT_LIT(out, "\"attributes\":[");
        else
            ok = tw__buf_put_byte(out, ',');
        ok = ok && put_attribute(out, &tags[i], NULL);
    }
    if (ok && written)
        ok = tw__buf_put_byte(out, ']');
    flags_free(&winner);
    return ok;
}

/* ---- the envelope ------------------------------------------------------------------------ */

/* {"attributes":[service.name, then the process tags...]} */
static bool put_resource(tw__buf *out, const tw__process *p)
{
    if (!PUT_LIT(out, "{"))
        return false;
    size_t written = 0;
    bool ok = true;
    if (p && p->service_name) {
        tw__tag service = {.key = "service.name",
                           .key_len = 12,
                           .type = TW_VALUE_STRING,
                           .v.str = p->service_name,
                           .len = strlen(p->service_name)};
        ok = PUT_LIT(out, "\"attributes\":[") && put_attribute(out, &service, NULL);
        written++;
    }
    size_t n = p ? p->n_tags : 0;
    flags winner;
    if (!ok || !flags_init(&winner, n))
        return false;
    ok = tw__last_by_key(p ? p->tags : NULL, n, winner.v);
    bool has_host_name = p && tw__process_find_tag(p, "host.name");
    for (size_t i = 0; i < n && ok; i++) {
        const tw__tag *t = &p->tags[i];
        if (!winner.v[i] || tw__tag_key_is(t, "service.name"))
            continue;
        bool is_renamed = !has_host_name && tw__tag_key_is(t, "hostname");
        ok = (written++ ? tw__buf_put_byte(out, ',') : PUT_LIT(out, "\"attributes\":[")) &&
             put_attribute(out, t, is_renamed ? "host.name" : NULL);
    }
    flags_free(&winner);
    if (ok && written)
        ok = tw__buf_put_byte(out, ']');
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

static int kind_number(tw__span_kind kind)
{
    switch (kind) {
    case TW__KIND_SERVER:
        return 2;
    case TW__KIND_CLIENT:
        return 3;
    case TW__KIND_PRODUCER:
        return 4;
    case TW__KIND_CONSUMER:
        return 5;
    case TW__KIND_INTERNAL:
    case TW__KIND_NONE:
        break;
    }
    return 1;
}

/* The status (code 0: UNSET, nothing written), marking in @skip the tags it
 * consumed. */
static void status_of(const tw__span_data *s, bool *skip, int *code, const tw__tag **message)
{
    *code = 0;
    *message = NULL;
    size_t error_index = SIZE_MAX, code_index = SIZE_MAX, description_index = SIZE_MAX;
    for (size_t i = 0; i < s->n_tags; i++) {
        if (tw__tag_key_is(&s->tags[i], "error"))
            error_index = i;
        else if (tw__tag_key_is(&s->tags[i], "otel.status_code"))
            code_index = i;
        else if (tw__tag_key_is(&s->tags[i], "otel.status_description"))
            description_index = i;
    }
    if (error_index != SIZE_MAX) {
        const tw__tag *error = &s->tags[error_index];
        int truth = tw__error_truth(error);
        if (truth >= 0)
            *code = 2;
        *message = truth > 0 ? tw__error_message(s) : truth == 0 ? error : NULL;
        /* With no error log, a status description (what the OTLP reader and
         * the Collector's translators write) is the message. */
        if (truth > 0 && !*message && description_index != SIZE_MAX &&
            s->tags[description_index].type == TW_VALUE_STRING) {
            *message = &s->tags[description_index];
            skip[description_index] = true;
        }
        for (size_t i = 0; i < s->n_tags; i++)
            skip[i] = skip[i] || tw__tag_key_is(&s->tags[i], "error");
    } else if (code_index != SIZE_MAX) {
        const char *value = tw__tag_str(&s->tags[code_index]);
        if (value && strcasecmp(value, "ok") == 0)
            *code = 1;
        else if (value && strcasecmp(value, "error") == 0)
            *code = 2;
        else if (!value || strcasecmp(value, "unset") != 0)
            return; /* not a status code: stays an attribute */
        if (*code == 2 && description_index != SIZE_MAX &&
            s->tags[description_index].type == TW_VALUE_STRING)
            *message = &s->tags[description_index];
        for (size_t i = 0; i < s->n_tags; i++) {
            skip[i] = skip[i] || tw__tag_key_is(&s->tags[i], "otel.status_code") ||
                      tw__tag_key_is(&s->tags[i], "otel.status_description");
        }
    }
}

static bool put_events(tw__buf *out, const tw__span_data *s)
{
    if (s->n_logs == 0)
        return true;
    bool ok = PUT_LIT(out, ",\"events\":[");
    for (size_t i = 0; i < s->n_logs && ok; i++) {
        const tw__log *log = &s->logs[i];
        ok = (i == 0 || tw__buf_put_byte(out, ',')) && PUT_LIT(out, "{\"timeUnixNano\":") &&
             tw__json_put_quoted_uint(out, unix_nano(log->timestamp_us));
        flags skip;
        if (!ok || !flags_init(&skip, log->n_fields))
            return false;
        for (size_t f = 0; f < log->n_fields && ok; f++) {
            const tw__tag *field = &log->fields[f];
            if (tw__tag_key_is(field, "event") && field->type == TW_VALUE_STRING) {
                ok = PUT_LIT(out, ",\"name\":") &&
                     tw__json_append_text(out, field->v.str, field->len);
                /* Every string event field goes: the name says it. */
                for (size_t g = f; g < log->n_fields; g++) {
                    skip.v[g] = tw__tag_key_is(&log->fields[g], "event") &&
                                log->fields[g].type == TW_VALUE_STRING;
                }
                break;
            }
        }
        ok = ok && put_attributes(out, log->fields, log->n_fields, skip.v, true) &&
             tw__buf_put_byte(out, '}');
        flags_free(&skip);
    }
    return ok && tw__buf_put_byte(out, ']');
}

static bool put_links(tw__buf *out, const tw__span_data *s)
{
    bool has_skipped_parent = false, ok = true;
    size_t written = 0;
    for (size_t i = 0; i < s->n_refs && ok; i++) {
        const tw__ref *ref = &s->refs[i];
        if (!has_skipped_parent && s->parent_id && ref->span_id == s->parent_id &&
            ref->trace_id_high == s->trace_id_high && ref->trace_id_low == s->trace_id_low) {
            has_skipped_parent = true; /* it is parentSpanId */
            continue;
        }
        ok = (written++ ? tw__buf_put_byte(out, ',') : PUT_LIT(out, ",\"links\":[")) &&
             PUT_LIT(out, "{\"traceId\":") &&
             tw__json_put_hex128(out, ref->trace_id_high, ref->trace_id_low) &&
             PUT_LIT(out, ",\"spanId\":") && tw__json_put_hex64(out, ref->span_id) &&
             PUT_LIT(out, ",\"attributes\":[{\"key\":\"opentracing.ref_type\",\"value\":"
                          "{\"stringValue\":\"") &&
             (ref->type == TW__REF_FOLLOWS_FROM ? PUT_LIT(out, "follows_from")
                                                : PUT_LIT(out, "child_of")) &&
             PUT_LIT(out, "\"}}]}");
    }
    return ok && (!written || tw__buf_put_byte(out, ']'));
}

static bool put_span(tw__buf *out, const tw__span_data *s, bool *skip)
{
    size_t kind_index;
    tw__span_kind kind = tw__span_kind_of(s, &kind_index);
    if (kind != TW__KIND_NONE) {
        for (size_t i = 0; i < s->n_tags; i++)
            skip[i] = tw__tag_key_is(&s->tags[i], "span.kind");
    }
    int code;
    const tw__tag *message;
    status_of(s, skip, &code, &message);
    const char *op = s->operation ? s->operation : "";
    bool ok = PUT_LIT(out, "{\"traceId\":") &&
              tw__json_put_hex128(out, s->trace_id_high, s->trace_id_low) &&
              PUT_LIT(out, ",\"spanId\":") && tw__json_put_hex64(out, s->span_id);
    if (ok && s->parent_id)
        ok = PUT_LIT(out, ",\"parentSpanId\":") && tw__json_put_hex64(out, s->parent_id);
    ok = ok && PUT_LIT(out, ",\"name\":") && tw__json_append_text(out, op, strlen(op)) &&
         PUT_LIT(out, ",\"kind\":") && tw__json_put_int(out, kind_number(kind)) &&
         PUT_LIT(out, ",\"startTimeUnixNano\":") &&
         tw__json_put_quoted_uint(out, unix_nano(s->start_us)) &&
         PUT_LIT(out, ",\"endTimeUnixNano\":") &&
         tw__json_put_quoted_uint(
             out, unix_nano(s->start_us > 0 ? end_us(s->start_us, s->duration_us) : 0)) &&
         put_attributes(out, s->tags, s->n_tags, skip, true) && put_events(out, s) &&
         put_links(out, s);
    if (ok && code != 0) {
        ok = PUT_LIT(out, ",\"status\":{\"code\":") && tw__json_put_int(out, code);
        if (ok && message && message->type == TW_VALUE_STRING)
            ok = PUT_LIT(out, ",\"message\":") &&
                 tw__json_append_text(out, message->v.str, message->len);
        ok = ok && tw__buf_put_byte(out, '}');
    }
    return ok && tw__buf_put_byte(out, '}');
}

bool tw__otlp_encode_span(const tw__span_data *s, tw__buf *out)
{
    if (!s || !out)
        return false;
    size_t before = out->len;
    flags skip;
    bool ok = flags_init(&skip, s->n_tags) && put_span(out, s, skip.v);
    flags_free(&skip);
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
