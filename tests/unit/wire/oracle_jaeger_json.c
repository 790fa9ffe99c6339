/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/wire/oracle_jaeger_json.c: the reference of the Jaeger JSON
 * encoder's differential suite (test_jaeger_json_encode.c): the encoder as
 * first written (bridge/sinks/jaeger_json.c), one Jansson tree per trace,
 * following the rules of sdk/wire/jaeger/jaeger_json.h. Never linked into
 * the library or the command.
 */
#include "oracle.h"
#include "wire/jaeger/jaeger_view.h"

#include <errno.h>
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wire/core/json_common.h"

/* +-(2^53 - 1): the integers a JavaScript number holds exactly. */
#define JS_MAX_SAFE_INTEGER ((int64_t)9007199254740991)

/* ---- values -------------------------------------------------------------------------------- */

static json_t *kv_json(const tw__tag *t)
{
    json_t *kv = json_object();
    json_t *value = NULL;
    const char *type = "string";
    char text[40];
    switch (t->type) {
    case TW_VALUE_STRING:
        value = tw__json_text(t->v.str, t->len);
        break;
    case TW_VALUE_BOOL:
        type = "bool";
        value = json_boolean(t->v.boolean);
        break;
    case TW_VALUE_INT64:
        type = "int64";
        if (t->v.i64 > JS_MAX_SAFE_INTEGER || t->v.i64 < -JS_MAX_SAFE_INTEGER) {
            snprintf(text, sizeof text, "%lld", (long long)t->v.i64);
            value = json_string(text);
        } else {
            value = json_integer(t->v.i64);
        }
        break;
    case TW_VALUE_DOUBLE:
        type = "float64";
        if (isfinite(t->v.dbl)) {
            value = json_real(t->v.dbl);
        } else {
            tw__double_text(t->v.dbl, text, sizeof text);
            value = json_string(text);
        }
        break;
    case TW_VALUE_BINARY: {
        type = "binary";
        char *b64 = tw__base64(t->v.bin, t->len);
        value = b64 ? json_string(b64) : NULL;
        free(b64);
        break;
    }
    }
    if (!kv) {
        json_decref(value);
        return NULL;
    }
    bool ok = tw__json_put(kv, "key", tw__json_text(t->key, t->key_len)) &&
              tw__json_put(kv, "type", json_string(type));
    if (!ok)
        json_decref(value); /* not stolen yet */
    if (!ok || !tw__json_put(kv, "value", value)) {
        json_decref(kv);
        return NULL;
    }
    return kv;
}

static json_t *kv_list(const tw__tag *tags, size_t n)
{
    json_t *list = json_array();
    for (size_t i = 0; list && i < n; i++) {
        if (!tw__json_push(list, kv_json(&tags[i]))) {
            json_decref(list);
            return NULL;
        }
    }
    return list;
}

/* ---- spans --------------------------------------------------------------------------------- */

static void trace_hex(uint64_t hi, uint64_t lo, char out[33])
{
    if (hi)
        tw__hex128(hi, lo, out);
    else
        tw__hex64(lo, out);
}

static bool add_ref(json_t *list, tw__ref_type type, uint64_t hi, uint64_t lo, uint64_t span_id)
{
    char hex[33];
    json_t *r = json_object();
    if (!tw__json_push(list, r) ||
        !tw__json_put(r, "refType",
                      json_string(type == TW__REF_FOLLOWS_FROM ? "FOLLOWS_FROM" : "CHILD_OF")))
        return false;
    trace_hex(hi, lo, hex);
    if (!tw__json_put(r, "traceID", json_string(hex)))
        return false;
    tw__hex64(span_id, hex);
    return tw__json_put(r, "spanID", json_string(hex));
}

static json_t *references_json(const tw__span_data *s)
{
    json_t *list = json_array();
    if (!list)
        return NULL;
    /* The reference that names the parent: a CHILD_OF one first, else any. */
    size_t parent_ref = SIZE_MAX;
    for (int pass = 0; pass < 2 && s->parent_id && parent_ref == SIZE_MAX; pass++) {
        for (size_t i = 0; i < s->n_refs && parent_ref == SIZE_MAX; i++) {
            const tw__ref *r = &s->refs[i];
            if ((pass == 1 || r->type == TW__REF_CHILD_OF) && r->span_id == s->parent_id &&
                r->trace_id_high == s->trace_id_high && r->trace_id_low == s->trace_id_low)
                parent_ref = i;
        }
    }
    bool ok = true;
    if (parent_ref != SIZE_MAX) {
        const tw__ref *r = &s->refs[parent_ref];
        ok = add_ref(list, r->type, r->trace_id_high, r->trace_id_low, r->span_id);
    } else if (s->parent_id) {
        ok = add_ref(list, TW__REF_CHILD_OF, s->trace_id_high, s->trace_id_low, s->parent_id);
    }
    for (size_t i = 0; ok && i < s->n_refs; i++) {
        const tw__ref *r = &s->refs[i];
        if (i != parent_ref)
            ok = add_ref(list, r->type, r->trace_id_high, r->trace_id_low, r->span_id);
    }
    if (!ok) {
        json_decref(list);
        return NULL;
    }
    return list;
}

static json_t *logs_json(const tw__span_data *s)
{
    json_t *list = json_array();
    for (size_t i = 0; list && i < s->n_logs; i++) {
        json_t *log = json_object();
        if (!tw__json_push(list, log) ||
            !tw__json_put(log, "timestamp", json_integer(s->logs[i].timestamp_us)) ||
            !tw__json_put(log, "fields", kv_list(s->logs[i].fields, s->logs[i].n_fields))) {
            json_decref(list);
            return NULL;
        }
    }
    return list;
}

/* The span object. @fallback_start: the trace's earliest start (0: none). */
static json_t *span_json(tw__jaeger_view *view, const tw__span_data *record, const char *process_id,
                         int64_t fallback_start)
{
    const tw__span_data *s = tw__jaeger_view_of(view, record);
    if (!s)
        return NULL;
    char hex[33];
    json_t *span = json_object();
    if (!span)
        return NULL;
    int64_t start = s->start_us;
    const char *warning = NULL;
    if (start <= 0) {
        start = 0;
        for (size_t i = 0; i < s->n_logs; i++) {
            if (s->logs[i].timestamp_us > 0 && (!start || s->logs[i].timestamp_us < start))
                start = s->logs[i].timestamp_us;
        }
        warning = "tracewire: the span had no start time; its earliest log time is used";
        if (!start) {
            start = fallback_start > 0 ? fallback_start : 1;
            warning = fallback_start > 0
                          ? "tracewire: the span had no start time; its trace's start is used"
                          : "tracewire: the span had no start time; 1 microsecond is used";
        }
    }
    trace_hex(s->trace_id_high, s->trace_id_low, hex);
    bool ok = tw__json_put(span, "traceID", json_string(hex));
    tw__hex64(s->span_id, hex);
    json_t *warnings = json_null();
    if (warning) {
        json_decref(warnings);
        warnings = json_array();
        ok = ok && tw__json_push(warnings, json_string(warning));
    }
    ok = ok && tw__json_put(span, "spanID", json_string(hex)) &&
         tw__json_put(span, "flags", json_integer(s->flags)) &&
         tw__json_put(span, "operationName",
                      tw__json_text(s->operation ? s->operation : "",
                                    s->operation ? strlen(s->operation) : 0)) &&
         tw__json_put(span, "references", references_json(s)) &&
         tw__json_put(span, "startTime", json_integer(start)) &&
         tw__json_put(span, "duration", json_integer(s->duration_us > 0 ? s->duration_us : 0)) &&
         tw__json_put(span, "tags", kv_list(s->tags, s->n_tags)) &&
         tw__json_put(span, "logs", logs_json(s)) &&
         tw__json_put(span, "processID", json_string(process_id)) &&
         tw__json_put(span, "warnings", json_incref(warnings));
    json_decref(warnings);
    if (!ok) {
        json_decref(span);
        return NULL;
    }
    return span;
}

static json_t *process_json(const tw__process *p)
{
    tw__process scratch;
    const tw__process *shown = tw__jaeger_process(p, &scratch);
    json_t *obj = json_object();
    if (!obj ||
        !tw__json_put(obj, "serviceName",
                      tw__json_text(shown->service_name, strlen(shown->service_name))) ||
        !tw__json_put(obj, "tags", kv_list(shown->tags, shown->n_tags))) {
        json_decref(obj);
        return NULL;
    }
    return obj;
}

/* One trace object from the spans @idx[0..n) of @spans (one trace id). */
json_t *oracle_jaeger_trace_json(tw__jaeger_view *view, const tw__wire_span *spans,
                                 const size_t *idx, size_t n)
{
    json_t *trace = json_object(), *list = json_array(), *processes = json_object();
    GHashTable *keys = g_hash_table_new(g_direct_hash, g_direct_equal); /* process -> n */
    bool ok = trace && list && processes;
    int64_t earliest = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t t = spans[idx[i]].data->start_us;
        if (t > 0 && (!earliest || t < earliest))
            earliest = t;
    }
    char hex[33];
    const tw__span_data *first = spans[idx[0]].data;
    trace_hex(first->trace_id_high, first->trace_id_low, hex);
    ok = ok && tw__json_put(trace, "traceID", json_string(hex));
    for (size_t i = 0; ok && i < n; i++) {
        const tw__wire_span *sp = &spans[idx[i]];
        size_t k = GPOINTER_TO_SIZE(g_hash_table_lookup(keys, sp->process));
        char pid[32];
        if (!k) {
            k = g_hash_table_size(keys) + 1;
            g_hash_table_insert(keys, (gpointer)sp->process, GSIZE_TO_POINTER(k));
            snprintf(pid, sizeof pid, "p%zu", k);
            ok = tw__json_put(processes, pid, process_json(sp->process));
        }
        snprintf(pid, sizeof pid, "p%zu", k);
        ok = ok && tw__json_push(list, span_json(view, sp->data, pid, earliest));
    }
    g_hash_table_destroy(keys);
    ok = ok && tw__json_put(trace, "spans", json_incref(list)) &&
         tw__json_put(trace, "processes", json_incref(processes)) &&
         tw__json_put(trace, "warnings", json_null());
    json_decref(list);
    json_decref(processes);
    if (!ok) {
        json_decref(trace);
        return NULL;
    }
    return trace;
}
