/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/wire/oracle_otlp.c: the reference of the OTLP/JSON encoder's
 * differential suite (test_otlp_json.c): the encoder as first written, a
 * Jansson tree per span, following sdk/wire/otlp/otlp_json.h key by key.
 * Its times are computed as the direct encoder's (saturating, no signed
 * overflow). Never linked into the library or the command.
 */
#include "oracle.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tracewire/common.h"
#include "wire/core/json_common.h"

/* ---- values ------------------------------------------------------------------------------ */

static json_t *decimal_u64(uint64_t value)
{
    char text[24];
    snprintf(text, sizeof text, "%" PRIu64, value);
    return json_string(text);
}

static json_t *any_value(const tw__tag *t)
{
    json_t *value = json_object();
    if (!value)
        return NULL;
    bool ok = false;
    switch (t->type) {
    case TW_VALUE_STRING:
        ok = tw__json_put(value, "stringValue", tw__json_text(t->v.str, t->len));
        break;
    case TW_VALUE_BOOL:
        ok = tw__json_put(value, "boolValue", json_boolean(t->v.boolean));
        break;
    case TW_VALUE_INT64: {
        char text[24];
        snprintf(text, sizeof text, "%" PRId64, t->v.i64);
        ok = tw__json_put(value, "intValue", json_string(text));
        break;
    }
    case TW_VALUE_DOUBLE:
        if (isfinite(t->v.dbl)) {
            ok = tw__json_put(value, "doubleValue", json_real(t->v.dbl));
        } else {
            char text[32];
            tw__double_text(t->v.dbl, text, sizeof text);
            ok = tw__json_put(value, "doubleValue", json_string(text));
        }
        break;
    case TW_VALUE_BINARY: {
        char *b64 = tw__base64(t->v.bin, t->len);
        ok = b64 && tw__json_put(value, "bytesValue", json_string(b64));
        free(b64);
        break;
    }
    }
    if (!ok) {
        json_decref(value);
        return NULL;
    }
    return value;
}

/* Appends {key, value} for @t to @list, under @key (NULL: the tag's own). */
static bool push_attribute(json_t *list, const tw__tag *t, const char *key)
{
    json_t *kv = json_object();
    if (!tw__json_push(list, kv))
        return false;
    const char *k = key ? key : t->key;
    return tw__json_put(kv, "key", tw__json_text(k, key ? strlen(key) : t->key_len)) &&
           tw__json_put(kv, "value", any_value(t));
}

/* Appends the winning tags of @tags that @skip does not exclude (nullable).
 * False on allocation failure. */
static bool push_attributes(json_t *list, const tw__tag *tags, size_t n, const bool *skip)
{
    bool small[16];
    bool *is_winner = n <= 16 ? small : calloc(n, sizeof(bool));
    if (!is_winner || !tw__last_by_key(tags, n, is_winner)) {
        if (is_winner != small)
            free(is_winner);
        return false;
    }
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        if (is_winner[i] && !(skip && skip[i]))
            ok = push_attribute(list, &tags[i], NULL);
    }
    if (is_winner != small)
        free(is_winner);
    return ok;
}

/* Puts "attributes" on @object unless the list is empty. */
static bool put_attributes(json_t *object, json_t *list)
{
    if (!list)
        return false;
    if (json_array_size(list) == 0) {
        json_decref(list);
        return true;
    }
    return tw__json_put(object, "attributes", list);
}

/* ---- envelope ------------------------------------------------------------------------------ */

static json_t *resource_json(const tw__process *p)
{
    json_t *resource = json_object();
    json_t *attrs = json_array();
    if (!resource || !attrs)
        goto fail;
    if (p && p->service_name) {
        tw__tag service = {.key = "service.name",
                           .key_len = 12,
                           .type = TW_VALUE_STRING,
                           .v.str = p->service_name,
                           .len = strlen(p->service_name)};
        if (!push_attribute(attrs, &service, NULL))
            goto fail;
    }
    bool has_host_name = p && tw__process_find_tag(p, "host.name");
    bool small[16];
    size_t n = p ? p->n_tags : 0;
    bool *is_winner = n <= 16 ? small : calloc(n, sizeof(bool));
    if (!is_winner)
        goto fail;
    bool ok = tw__last_by_key(p ? p->tags : NULL, n, is_winner);
    for (size_t i = 0; i < n && ok; i++) {
        const tw__tag *t = &p->tags[i];
        if (!is_winner[i] || tw__tag_key_is(t, "service.name"))
            continue;
        bool is_renamed = !has_host_name && tw__tag_key_is(t, "hostname");
        ok = push_attribute(attrs, t, is_renamed ? "host.name" : NULL);
    }
    if (is_winner != small)
        free(is_winner);
    if (!ok)
        goto fail;
    if (!put_attributes(resource, attrs)) {
        json_decref(resource);
        return NULL;
    }
    return resource;
fail:
    json_decref(attrs);
    json_decref(resource);
    return NULL;
}

json_t *oracle_otlp_request_json(const tw__process *process, json_t **spans)
{
    /* Each value is attached to its parent as soon as it is made (the put
     * and push helpers take it over, also when they fail), so one decref of
     * the request releases whatever was built. */
    json_t *request = json_object();
    if (!request)
        return NULL;
    json_t *resource_spans = json_array();
    if (!tw__json_put(request, "resourceSpans", resource_spans))
        goto fail;
    json_t *rs = json_object();
    if (!tw__json_push(resource_spans, rs) || !tw__json_put(rs, "resource", resource_json(process)))
        goto fail;
    json_t *scope_spans = json_array();
    if (!tw__json_put(rs, "scopeSpans", scope_spans))
        goto fail;
    json_t *ss = json_object();
    if (!tw__json_push(scope_spans, ss))
        goto fail;
    json_t *scope = json_object();
    if (!tw__json_put(ss, "scope", scope) ||
        !tw__json_put(scope, "name", json_string("tracewire")) ||
        !tw__json_put(scope, "version", json_string(tw_version())))
        goto fail;
    json_t *list = json_array();
    if (!tw__json_put(ss, "spans", list))
        goto fail;
    *spans = list;
    return request;
fail:
    json_decref(request);
    return NULL;
}

/* ---- spans ---------------------------------------------------------------------------------- */

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

static uint64_t unix_nano(int64_t us)
{
    if (us <= 0)
        return 0;
    return (uint64_t)us > UINT64_MAX / 1000u ? UINT64_MAX : (uint64_t)us * 1000u;
}

static int64_t end_us(int64_t start, int64_t duration)
{
    if (duration <= 0)
        return start;
    return duration > INT64_MAX - start ? INT64_MAX : start + duration;
}

static bool put_hex64(json_t *object, const char *key, uint64_t id)
{
    char hex[17];
    tw__hex64(id, hex);
    return tw__json_put(object, key, json_string(hex));
}

static bool put_trace_id(json_t *object, uint64_t high, uint64_t low)
{
    char hex[33];
    tw__hex128(high, low, hex);
    return tw__json_put(object, "traceId", json_string(hex));
}

/* The status object (or NULL for UNSET in *status), marking in @skip the tags
 * it consumed. False on allocation failure. */
static bool status_json(const tw__span_data *s, bool *skip, json_t **status)
{
    *status = NULL;
    size_t error_index = SIZE_MAX, code_index = SIZE_MAX, description_index = SIZE_MAX;
    for (size_t i = 0; i < s->n_tags; i++) {
        if (tw__tag_key_is(&s->tags[i], "error"))
            error_index = i;
        else if (tw__tag_key_is(&s->tags[i], "otel.status_code"))
            code_index = i;
        else if (tw__tag_key_is(&s->tags[i], "otel.status_description"))
            description_index = i;
    }
    int code = 0;
    const tw__tag *message = NULL;
    if (error_index != SIZE_MAX) {
        const tw__tag *error = &s->tags[error_index];
        int truth = tw__error_truth(error);
        if (truth >= 0)
            code = 2;
        message = truth > 0 ? tw__error_message(s) : truth == 0 ? error : NULL;
        /* With no error log, a status description (what the OTLP reader and
         * the Collector's translators write) is the message. */
        if (truth > 0 && !message && description_index != SIZE_MAX &&
            s->tags[description_index].type == TW_VALUE_STRING) {
            message = &s->tags[description_index];
            skip[description_index] = true;
        }
        for (size_t i = 0; i < s->n_tags; i++)
            skip[i] = skip[i] || tw__tag_key_is(&s->tags[i], "error");
    } else if (code_index != SIZE_MAX) {
        const char *value = tw__tag_str(&s->tags[code_index]);
        if (value && strcasecmp(value, "ok") == 0)
            code = 1;
        else if (value && strcasecmp(value, "error") == 0)
            code = 2;
        else if (!value || strcasecmp(value, "unset") != 0)
            return true; /* not a status code: stays an attribute */
        if (code == 2 && description_index != SIZE_MAX &&
            s->tags[description_index].type == TW_VALUE_STRING)
            message = &s->tags[description_index];
        for (size_t i = 0; i < s->n_tags; i++) {
            skip[i] = skip[i] || tw__tag_key_is(&s->tags[i], "otel.status_code") ||
                      tw__tag_key_is(&s->tags[i], "otel.status_description");
        }
    }
    if (code == 0)
        return true;
    json_t *st = json_object();
    if (!tw__json_put(st, "code", json_integer(code)) ||
        (message && message->type == TW_VALUE_STRING &&
         !tw__json_put(st, "message", tw__json_text(message->v.str, message->len)))) {
        json_decref(st);
        return false;
    }
    *status = st;
    return true;
}

static bool add_events(json_t *span, const tw__span_data *s)
{
    if (s->n_logs == 0)
        return true;
    json_t *events = json_array();
    if (!tw__json_put(span, "events", events))
        return false;
    for (size_t i = 0; i < s->n_logs; i++) {
        const tw__log *log = &s->logs[i];
        json_t *event = json_object();
        if (!tw__json_push(events, event) ||
            !tw__json_put(event, "timeUnixNano", decimal_u64(unix_nano(log->timestamp_us))))
            return false;
        bool small[16];
        bool *skip = log->n_fields <= 16 ? small : calloc(log->n_fields, sizeof(bool));
        if (!skip)
            return false;
        memset(skip, 0, log->n_fields * sizeof(bool));
        bool ok = true;
        for (size_t f = 0; f < log->n_fields; f++) {
            const tw__tag *field = &log->fields[f];
            if (tw__tag_key_is(field, "event") && field->type == TW_VALUE_STRING) {
                ok = tw__json_put(event, "name", tw__json_text(field->v.str, field->len));
                /* Every string event field goes: the name says it. */
                for (size_t g = f; g < log->n_fields; g++) {
                    skip[g] = tw__tag_key_is(&log->fields[g], "event") &&
                              log->fields[g].type == TW_VALUE_STRING;
                }
                break;
            }
        }
        json_t *attrs = ok ? json_array() : NULL;
        ok = ok && attrs && push_attributes(attrs, log->fields, log->n_fields, skip);
        if (skip != small)
            free(skip);
        if (!ok) {
            json_decref(attrs);
            return false;
        }
        if (!put_attributes(event, attrs))
            return false;
    }
    return true;
}

static bool add_links(json_t *span, const tw__span_data *s)
{
    json_t *links = NULL;
    bool has_skipped_parent = false;
    for (size_t i = 0; i < s->n_refs; i++) {
        const tw__ref *ref = &s->refs[i];
        if (!has_skipped_parent && s->parent_id && ref->span_id == s->parent_id &&
            ref->trace_id_high == s->trace_id_high && ref->trace_id_low == s->trace_id_low) {
            has_skipped_parent = true; /* it is parentSpanId */
            continue;
        }
        if (!links) {
            links = json_array();
            if (!tw__json_put(span, "links", links))
                return false;
        }
        /* Attached as soon as made: the span's decref frees everything. */
        json_t *link = json_object();
        if (!tw__json_push(links, link) ||
            !put_trace_id(link, ref->trace_id_high, ref->trace_id_low) ||
            !put_hex64(link, "spanId", ref->span_id))
            return false;
        json_t *attrs = json_array();
        if (!tw__json_put(link, "attributes", attrs))
            return false;
        json_t *kv = json_object();
        if (!tw__json_push(attrs, kv) ||
            !tw__json_put(kv, "key", json_string("opentracing.ref_type")))
            return false;
        json_t *value = json_object();
        const char *type = ref->type == TW__REF_FOLLOWS_FROM ? "follows_from" : "child_of";
        if (!tw__json_put(kv, "value", value) ||
            !tw__json_put(value, "stringValue", json_string(type)))
            return false;
    }
    return true;
}

json_t *oracle_otlp_span_json(const tw__span_data *s)
{
    if (!s)
        return NULL;
    json_t *span = json_object();
    bool small[16];
    bool *skip = s->n_tags <= 16 ? small : calloc(s->n_tags, sizeof(bool));
    json_t *attrs = NULL;
    json_t *status = NULL;
    if (!span || !skip)
        goto fail;
    memset(skip, 0, s->n_tags * sizeof(bool));

    size_t kind_index;
    tw__span_kind kind = tw__span_kind_of(s, &kind_index);
    if (kind != TW__KIND_NONE) {
        for (size_t i = 0; i < s->n_tags; i++)
            skip[i] = tw__tag_key_is(&s->tags[i], "span.kind");
    }
    if (!status_json(s, skip, &status))
        goto fail;
    if (!put_trace_id(span, s->trace_id_high, s->trace_id_low) ||
        !put_hex64(span, "spanId", s->span_id) ||
        (s->parent_id && !put_hex64(span, "parentSpanId", s->parent_id)) ||
        !tw__json_put(span, "name",
                      tw__json_text(s->operation ? s->operation : "",
                                    s->operation ? strlen(s->operation) : 0)) ||
        !tw__json_put(span, "kind", json_integer(kind_number(kind))) ||
        !tw__json_put(span, "startTimeUnixNano", decimal_u64(unix_nano(s->start_us))) ||
        !tw__json_put(
            span, "endTimeUnixNano",
            decimal_u64(unix_nano(s->start_us > 0 ? end_us(s->start_us, s->duration_us) : 0))))
        goto fail;
    attrs = json_array();
    if (!attrs || !push_attributes(attrs, s->tags, s->n_tags, skip))
        goto fail;
    bool ok = put_attributes(span, attrs);
    attrs = NULL;
    if (!ok || !add_events(span, s) || !add_links(span, s))
        goto fail;
    if (status) {
        ok = tw__json_put(span, "status", status);
        status = NULL;
        if (!ok)
            goto fail;
    }
    if (skip != small)
        free(skip);
    return span;

fail:
    if (skip != small)
        free(skip);
    json_decref(attrs);
    json_decref(status);
    json_decref(span);
    return NULL;
}
