/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/otlp_json.c: span model -> OTLP/JSON ExportTraceServiceRequest
 * (Jansson values). The field table and mapping rules are in otlp_json.h.
 * Used by the OTLP HTTP reporter on its reporter thread and by the bridge.
 *
 * Memory: values are built straight from the record; binary values pass
 * through one base64 allocation each. On allocation failure everything built
 * so far is released and NULL is returned.
 *
 * Locking: none (pure functions).
 */
#include "wire/otlp_json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tracewire/common.h"
#include "wire/json_common.h"
#include "wire/otlp/otlp_map.h"

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

/* Appends the tags of @tags that @is_attribute selects (a plan's flags).
 * False on allocation failure. */
static bool push_attributes(json_t *list, const tw__tag *tags, size_t n, const bool *is_attribute)
{
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        if (is_attribute[i])
            ok = push_attribute(list, &tags[i], NULL);
    }
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
    tw__otlp_resource_plan plan;
    if (!resource || !attrs || !tw__otlp_plan_resource(p, &plan))
        goto fail;
    bool ok = true;
    for (size_t i = 0; i < plan.n_attrs && ok; i++) {
        const tw__otlp_attr *a = &plan.attrs[i];
        ok = push_attribute(attrs, a->value, a->key == a->value->key ? NULL : a->key);
    }
    tw__otlp_resource_plan_clear(&plan);
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

json_t *tw__otlp_request_json(const tw__process *process, json_t **spans)
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

/* The status object of @plan, or NULL for UNSET in *status. False on
 * allocation failure. */
static bool status_json(const tw__otlp_span_plan *plan, json_t **status)
{
    *status = NULL;
    if (plan->status_code == TW__OTLP_STATUS_UNSET)
        return true;
    const tw__tag *message = plan->status_message;
    json_t *st = json_object();
    if (!tw__json_put(st, "code", json_integer(plan->status_code)) ||
        (message && !tw__json_put(st, "message", tw__json_text(message->v.str, message->len)))) {
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
        tw__otlp_event_plan plan;
        json_t *event = json_object();
        if (!tw__json_push(events, event) || !tw__otlp_plan_event(log, &plan))
            return false;
        json_t *attrs = NULL;
        bool ok = tw__json_put(event, "timeUnixNano", decimal_u64(plan.time_ns)) &&
                  (!plan.name ||
                   tw__json_put(event, "name", tw__json_text(plan.name->v.str, plan.name->len))) &&
                  (attrs = json_array()) != NULL &&
                  push_attributes(attrs, log->fields, log->n_fields, plan.is_attribute);
        tw__otlp_event_plan_clear(&plan);
        if (!ok) {
            json_decref(attrs);
            return false;
        }
        if (!put_attributes(event, attrs))
            return false;
    }
    return true;
}

static bool add_links(json_t *span, const tw__span_data *s, const tw__otlp_span_plan *plan)
{
    json_t *links = NULL;
    for (size_t i = 0; i < s->n_refs; i++) {
        const tw__ref *ref = &s->refs[i];
        if (i == plan->parent_ref)
            continue; /* it is parentSpanId */
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
            !tw__json_put(kv, "key", json_string(TW__OTLP_REF_TYPE_KEY)))
            return false;
        json_t *value = json_object();
        if (!tw__json_put(kv, "value", value) ||
            !tw__json_put(value, "stringValue", json_string(tw__otlp_ref_type_name(ref->type))))
            return false;
    }
    return true;
}

json_t *tw__otlp_span_json(const tw__span_data *s)
{
    if (!s)
        return NULL;
    tw__otlp_span_plan plan;
    if (!tw__otlp_plan_span(s, &plan))
        return NULL;
    json_t *span = json_object();
    json_t *attrs = NULL;
    json_t *status = NULL;
    if (!span || !status_json(&plan, &status))
        goto fail;
    if (!put_trace_id(span, s->trace_id_high, s->trace_id_low) ||
        !put_hex64(span, "spanId", s->span_id) ||
        (s->parent_id && !put_hex64(span, "parentSpanId", s->parent_id)) ||
        !tw__json_put(span, "name",
                      tw__json_text(s->operation ? s->operation : "",
                                    s->operation ? strlen(s->operation) : 0)) ||
        !tw__json_put(span, "kind", json_integer(plan.kind)) ||
        !tw__json_put(span, "startTimeUnixNano", decimal_u64(plan.start_ns)) ||
        !tw__json_put(span, "endTimeUnixNano", decimal_u64(plan.end_ns)))
        goto fail;
    attrs = json_array();
    if (!attrs || !push_attributes(attrs, s->tags, s->n_tags, plan.is_attribute))
        goto fail;
    bool ok = put_attributes(span, attrs);
    attrs = NULL;
    if (!ok || !add_events(span, s) || !add_links(span, s, &plan))
        goto fail;
    if (status) {
        ok = tw__json_put(span, "status", status);
        status = NULL;
        if (!ok)
            goto fail;
    }
    tw__otlp_span_plan_clear(&plan);
    return span;

fail:
    tw__otlp_span_plan_clear(&plan);
    json_decref(attrs);
    json_decref(status);
    json_decref(span);
    return NULL;
}

bool tw__otlp_encode_request(tw__span_data *const *spans, size_t n, const tw__process *process,
                             tw__buf *out)
{
    json_t *list;
    json_t *request = tw__otlp_request_json(process, &list);
    bool ok = request != NULL;
    for (size_t i = 0; i < n && ok; i++)
        ok = tw__json_push(list, tw__otlp_span_json(spans[i]));
    ok = ok && tw__json_dump(request, out);
    json_decref(request);
    return ok;
}
