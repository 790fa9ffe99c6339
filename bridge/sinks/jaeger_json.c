/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/sinks/jaeger_json.c: `--to jaeger-json`, the JSON of Jaeger's query
 * API (GET /api/traces; WIRE-NOTES Part B 2.8 [J-UIM]), which Jaeger UI's
 * "JSON file" upload loads. Last stage of the convert flow
 * (bridge/convert.h); target flag TWB_TARGET_JAEGER_IDS, so the assembler has
 * given shared server spans their own ids before they come here.
 *
 * Framing, streamed: {"data":[ at the first trace, traces separated by ",",
 * and ],"total":0,"limit":0,"offset":0,"errors":null} at finish (the
 * members the API writes; no trace gives {"data":[],...}). Each write()
 * call's spans are grouped by trace id (in order of first appearance); each
 * group is one trace object
 *   {traceID, spans, processes: {"p1": {serviceName, tags}, ...}, warnings}
 * with process keys p1..pN in order of first appearance of each distinct
 * (interned, so pointer-equal) process in that trace. A trace whose spans
 * come in several write() calls gives several trace objects with the same
 * traceID (the assembly window decides; Jaeger UI shows each).
 *
 * Span: {traceID, spanID, flags, operationName, references, startTime,
 * duration, tags, logs, processID, warnings}, ids lower-case hex (a trace id
 * is 16 digits when its high half is 0, else 32). References: the parent
 * first (jaeger-ui's tree takes references[0] as the parent): the reference
 * in refs that names the parent (a CHILD_OF one, else any) moves first,
 * keeping its type; with none, a CHILD_OF reference is made; then the other
 * refs in their order. Tags and log
 * fields are typed {key, type, value}: string, bool, int64 (a JSON string
 * beyond +-(2^53-1), as Jaeger writes it), float64 (NaN and the infinities
 * as the strings "NaN", "Infinity", "-Infinity": JSON has no such numbers),
 * binary (standard base64). The Jaeger rules every Jaeger target shares come
 * from sinks/jaeger_view.h: the error tag becomes a bool (plus error.message
 * for a message) and an empty service is "empty-service-name".
 *
 * Never a start time of 0 (Jaeger UI drops such spans): a span without one
 * gets its earliest log timestamp, else the earliest start time of its
 * trace in the same group, else 1 µs, and a span warning that says so (the
 * UI shows span warnings).
 *
 * Jansson writes every byte. Memory: one write() group. Single-threaded.
 */
#include "convert.h"
#include "sinks/jaeger_view.h"

#include <errno.h>
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "wire/core/json_common.h"

/* +-(2^53 - 1): the integers a JavaScript number holds exactly. */
#define JS_MAX_SAFE_INTEGER ((int64_t)9007199254740991)

struct twb_writer {
    FILE *out;
    size_t n_traces;
    tw__buf buf;
    twb_jaeger_view view;
};

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
static json_t *span_json(twb_writer *w, const tw__span_data *record, const char *process_id,
                         int64_t fallback_start)
{
    const tw__span_data *s = twb_jaeger_view_of(&w->view, record);
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
    const tw__process *shown = twb_jaeger_process(p, &scratch);
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
static json_t *trace_json(twb_writer *w, const twb_span *spans, const size_t *idx, size_t n)
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
        const twb_span *sp = &spans[idx[i]];
        size_t k = GPOINTER_TO_SIZE(g_hash_table_lookup(keys, sp->process));
        char pid[32];
        if (!k) {
            k = g_hash_table_size(keys) + 1;
            g_hash_table_insert(keys, (gpointer)sp->process, GSIZE_TO_POINTER(k));
            snprintf(pid, sizeof pid, "p%zu", k);
            ok = tw__json_put(processes, pid, process_json(sp->process));
        }
        snprintf(pid, sizeof pid, "p%zu", k);
        ok = ok && tw__json_push(list, span_json(w, sp->data, pid, earliest));
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

/* ---- grouping by trace --------------------------------------------------------------------- */

typedef struct {
    const twb_span *spans;
} sort_ctx;

static int by_trace_then_position(const void *a, const void *b, void *user)
{
    const twb_span *spans = ((const sort_ctx *)user)->spans;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const tw__span_data *x = spans[i].data, *y = spans[j].data;
    if (x->trace_id_high != y->trace_id_high)
        return x->trace_id_high < y->trace_id_high ? -1 : 1;
    if (x->trace_id_low != y->trace_id_low)
        return x->trace_id_low < y->trace_id_low ? -1 : 1;
    return i < j ? -1 : i > j;
}

typedef struct {
    size_t start, len; /* a run in the sorted index */
} group;

static int by_first_position(const void *a, const void *b, void *user)
{
    const size_t *idx = user;
    size_t x = idx[((const group *)a)->start], y = idx[((const group *)b)->start];
    return x < y ? -1 : x > y;
}

/* ---- the writer ---------------------------------------------------------------------------- */

static twb_writer *jj_new(FILE *out, const twb_options *opts, tw_error **err)
{
    (void)opts;
    twb_writer *w = calloc(1, sizeof *w);
    if (!w) {
        tw__set_error(err, TW_E_NOMEM, "out of memory");
        return NULL;
    }
    w->out = out;
    tw__buf_init(&w->buf);
    twb_jaeger_view_init(&w->view);
    return w;
}

static void jj_free(twb_writer *w)
{
    if (!w)
        return;
    tw__buf_free(&w->buf);
    twb_jaeger_view_clear(&w->view);
    free(w);
}

static tw_status put(twb_writer *w, const void *data, size_t len, tw_error **err)
{
    return twb_write_out(w->out, data, len, err);
}

static tw_status jj_write(twb_writer *w, const twb_span *spans, size_t n, tw_error **err)
{
    if (n == 0)
        return TW_OK;
    size_t *idx = malloc(n * sizeof *idx);
    group *groups = malloc(n * sizeof *groups);
    if (!idx || !groups) {
        free(idx);
        free(groups);
        tw__set_error(err, TW_E_NOMEM, "out of memory");
        return TW_E_NOMEM;
    }
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    sort_ctx sc = {spans};
    qsort_r(idx, n, sizeof *idx, by_trace_then_position, &sc);
    size_t n_groups = 0;
    for (size_t i = 0; i < n; i++) {
        const tw__span_data *s = spans[idx[i]].data;
        const tw__span_data *prev = i ? spans[idx[i - 1]].data : NULL;
        if (!prev || prev->trace_id_high != s->trace_id_high ||
            prev->trace_id_low != s->trace_id_low)
            groups[n_groups++] = (group){i, 0};
        groups[n_groups - 1].len++;
    }
    qsort_r(groups, n_groups, sizeof *groups, by_first_position, idx);

    tw_status st = TW_OK;
    for (size_t g = 0; g < n_groups && st == TW_OK; g++) {
        json_t *trace = trace_json(w, spans, idx + groups[g].start, groups[g].len);
        tw__buf_reset(&w->buf);
        bool ok = trace && tw__json_dump(trace, &w->buf);
        json_decref(trace);
        if (!ok) {
            tw__set_error(err, TW_E_NOMEM, "out of memory while encoding");
            st = TW_E_NOMEM;
            break;
        }
        st = put(w, w->n_traces ? "," : "{\"data\":[", w->n_traces ? 1 : 9, err);
        w->n_traces++;
        if (st == TW_OK)
            st = put(w, w->buf.data, w->buf.len, err);
    }
    free(idx);
    free(groups);
    return st;
}

static tw_status jj_finish(twb_writer *w, tw_error **err)
{
    static const char tail[] = "],\"total\":0,\"limit\":0,\"offset\":0,\"errors\":null}\n";
    tw_status st = w->n_traces ? TW_OK : put(w, "{\"data\":[", 9, err);
    if (st == TW_OK)
        st = put(w, tail, sizeof tail - 1, err);
    return st == TW_OK ? twb_flush_out(w->out, err) : st;
}

const twb_writer_vtable twb_writer_jaeger_json = {
    .name = "jaeger-json",
    .summary = "Jaeger query-API JSON {\"data\":[trace...]} (loads in Jaeger UI's JSON upload)",
    .target_flags = TWB_TARGET_JAEGER_IDS,
    .new_writer = jj_new,
    .write = jj_write,
    .finish = jj_finish,
    .free_writer = jj_free,
};
