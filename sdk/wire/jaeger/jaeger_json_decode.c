/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/jaeger/jaeger_json_decode.c: `--from jaeger-json`, the JSON of Jaeger's
 * query API and UI (docs/bridge.md). First stage of the
 * convert flow (bridge/convert.h): the JSON splitter (json_stream.c) hands
 * over one document at a time; each is one of
 *   {"data": [trace, ...], ...}   the query API response (GET /api/traces)
 *   {"data": {trace}, ...}        a jaeger-ui Redux state dump
 *   {traceID, spans, processes}   one trace
 *   {traceID, spanID, ..., process}  one span with its process embedded
 *                                 (a bare array of them is split by the
 *                                 splitter; the anonymizer writes these)
 * and NDJSON or arrays of any of these. Each span becomes one span-model
 * record and its process, handed to in->emit.
 *
 * Mapping (docs/bridge.md repeats it):
 *   traceID/spanID     hex of any case, left-padded; a span's missing traceID
 *                      is the trace's; a bad id rejects that span only
 *   references         all kept as refs, in input order (as the SDK's model
 *                      and the jaeger-thrift decoder keep them); parent_id
 *                      is the first CHILD_OF reference in the same trace,
 *                      else the first FOLLOWS_FROM in the same trace
 *                      ([JI-IDS]); a reference to another trace is never
 *                      the parent; an embedded `span` is never read
 *   parentSpanID       the parent when no reference gives one
 *   flags              as given; absent: TW__FLAG_SAMPLED
 *   startTime/duration µs (or --time-unit). A startTime absent or 0 is kept
 *                      (never a reject: the span is real) with a warning and
 *                      taken from the earliest log timestamp when there is
 *                      one; an absent duration is 0 with is_duration_unknown
 *   tags, process tags typed: string|bool|int64|float64|binary (any case);
 *                      an int64 as a decimal string is exact (Jaeger writes
 *                      integers beyond 2^53 so); a bool given as the string
 *                      "true"/"false" becomes a bool with a warning; a value
 *                      that does not fit its type is kept as a string with
 *                      a warning; binary is base64
 *   logs               {timestamp, fields[typed]}
 *   processID          the trace's processes map; else an embedded `process`
 * UI-derived members (depth, hasChildren, relativeStartTime, childSpanIds,
 * warnings, services, ...) are ignored.
 *
 * Memory: one document at a time, held as a Jansson tree (so a document is
 * limited to MAX_DOCUMENT_BYTES; a larger one is rejected: split it, e.g.
 * one trace per line). Nesting is bounded by Jansson's parser (depth 2048);
 * nothing here recurses. Locking: none.
 */
#include "wire/core/error.h"
#include "wire/core/input.h"
#include "wire/core/json_stream.h"
#include "wire/formats.h"
#include "wire/jaeger/jaeger_json.h"

#include "wire/core/json_common.h"

#include <errno.h>
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#define MAX_DOCUMENT_BYTES ((size_t)32 * 1024 * 1024)

typedef struct {
    tw__wire_input *in;
    size_t line_no;
    tw__time_unit unit;
    tw__id_base base;
    bool is_nomem;
    bool is_stopped; /* emit or reject asked to stop */
} doc_ctx;

/* Rejects the JSON value @v (its compact text is the raw record). */
static void reject_value(doc_ctx *dc, const json_t *v, const char *fmt, ...) TW_PRINTF(3, 4);
static void reject_value(doc_ctx *dc, const json_t *v, const char *fmt, ...)
{
    char why[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    char *raw = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
    if (!dc->in->reject(dc->in, dc->line_no, raw ? raw : "", raw ? strlen(raw) : 0, why))
        dc->is_stopped = true;
    free(raw);
}

static bool read_time(doc_ctx *dc, const json_t *v, const char *where, int64_t *us)
{
    if (json_is_integer(v) && tw__time_int_to_us(json_integer_value(v), dc->unit, us))
        return true;
    if (json_is_real(v) && tw__time_to_us(json_real_value(v), dc->unit, us)) {
        if (dc->unit == TW__TIME_US && json_real_value(v) != floor(json_real_value(v)))
            tw__wire_warn(dc->in, dc->line_no, "%s: fractional value rounded to %lld", where,
                          (long long)*us);
        return true;
    }
    tw__wire_warn(dc->in, dc->line_no, "%s: not a usable number, ignored", where);
    return false;
}

/* ---- typed values -------------------------------------------------------------------------- */

static bool parse_i64_text(const char *s, size_t len, int64_t *out)
{
    if (len == 0 || len > 20)
        return false;
    size_t i = s[0] == '-' ? 1 : 0;
    if (i == len || strspn(s + i, "0123456789") != len - i)
        return false;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno == ERANGE || end != s + len)
        return false;
    *out = v;
    return true;
}

/*
 * Decodes one {key, type, value} item into @out. Memory the value points
 * into (stringified or decoded bytes) comes back in *owned (free it after
 * use). Returns false when the item is skipped (warned) or on allocation
 * failure (dc->is_nomem).
 */
static bool read_kv(doc_ctx *dc, const json_t *kv, const char *where, const char **key,
                    tw_value *out, void **owned)
{
    *owned = NULL;
    const json_t *k = json_object_get(kv, "key");
    const json_t *type = json_object_get(kv, "type");
    const json_t *v = json_object_get(kv, "value");
    if (!json_is_string(k)) {
        tw__wire_warn(dc->in, dc->line_no, "%s: no string key, dropped", where);
        return false;
    }
    *key = json_string_value(k);
    if (!v || json_is_null(v)) {
        tw__wire_warn(dc->in, dc->line_no, "%s (%.60s): no value, dropped", where, *key);
        return false;
    }
    const char *t = json_is_string(type) ? json_string_value(type) : NULL;
    if (!t) {
        /* Not Jaeger's form, but the JSON type says enough. */
        t = json_is_string(v)    ? "string"
            : json_is_boolean(v) ? "bool"
            : json_is_integer(v) ? "int64"
            : json_is_real(v)    ? "float64"
                                 : "string";
        tw__wire_warn(dc->in, dc->line_no, "%s (%.60s): no type, taken as %s", where, *key, t);
    }
    const char *s = json_is_string(v) ? json_string_value(v) : NULL;
    size_t slen = s ? json_string_length(v) : 0;
    if (strcasecmp(t, "string") == 0 && s) {
        *out = (tw_value){.type = TW_VALUE_STRING, .as.str = s, .len = slen};
        return true;
    }
    if (strcasecmp(t, "bool") == 0 || strcasecmp(t, "boolean") == 0) {
        if (json_is_boolean(v)) {
            *out = (tw_value){.type = TW_VALUE_BOOL, .as.boolean = json_is_true(v)};
            return true;
        }
        if (s && (strcasecmp(s, "true") == 0 || strcasecmp(s, "false") == 0)) {
            tw__wire_warn(dc->in, dc->line_no, "%s (%.60s): bool given as the string \"%s\"", where,
                          *key, s);
            *out = (tw_value){.type = TW_VALUE_BOOL, .as.boolean = strcasecmp(s, "true") == 0};
            return true;
        }
    } else if (strcasecmp(t, "int64") == 0) {
        int64_t i;
        if (json_is_integer(v)) {
            *out = (tw_value){.type = TW_VALUE_INT64, .as.i64 = json_integer_value(v)};
            return true;
        }
        if (s && parse_i64_text(s, slen, &i)) {
            /* Jaeger writes integers beyond +-(2^53-1) as strings. */
            *out = (tw_value){.type = TW_VALUE_INT64, .as.i64 = i};
            return true;
        }
        double d = json_is_real(v) ? json_real_value(v) : NAN;
        if (d == floor(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
            tw__wire_warn(dc->in, dc->line_no, "%s (%.60s): int64 given as a real number", where,
                          *key);
            *out = (tw_value){.type = TW_VALUE_INT64, .as.i64 = (int64_t)d};
            return true;
        }
    } else if (strcasecmp(t, "float64") == 0) {
        if (json_is_number(v)) {
            *out = (tw_value){.type = TW_VALUE_DOUBLE, .as.dbl = json_number_value(v)};
            return true;
        }
        /* The spellings of non-finite values (JavaScript, proto3 JSON). */
        if (s &&
            (strcmp(s, "NaN") == 0 || strcmp(s, "Infinity") == 0 || strcmp(s, "-Infinity") == 0)) {
            double d = s[0] == 'N' ? NAN : s[0] == '-' ? -INFINITY : INFINITY;
            *out = (tw_value){.type = TW_VALUE_DOUBLE, .as.dbl = d};
            return true;
        }
        char *end;
        double d = s && slen > 0 ? strtod(s, &end) : 0;
        if (s && slen > 0 && end == s + slen) {
            tw__wire_warn(dc->in, dc->line_no, "%s (%.60s): float64 given as a string", where,
                          *key);
            *out = (tw_value){.type = TW_VALUE_DOUBLE, .as.dbl = d};
            return true;
        }
    } else if (strcasecmp(t, "binary") == 0 && s) {
        size_t n = 0;
        uint8_t *bytes = NULL;
        tw__base64_decode(s, slen, true, &bytes, &n, &dc->is_nomem);
        if (dc->is_nomem)
            return false;
        if (bytes) {
            *owned = bytes;
            *out = (tw_value){.type = TW_VALUE_BINARY, .as.bin = bytes, .len = n};
            return true;
        }
    }
    /* The value does not fit its type: keep its text, say so. */
    size_t len;
    char *text = tw__json_value_text(v, &len);
    if (!text) {
        dc->is_nomem = true;
        return false;
    }
    tw__wire_warn(dc->in, dc->line_no,
                  "%s (%.60s): value does not fit type \"%.20s\", kept as a string", where, *key,
                  t);
    *owned = text;
    *out = (tw_value){.type = TW_VALUE_STRING, .as.str = text, .len = len};
    return true;
}

/* ---- processes ----------------------------------------------------------------------------- */

static bool read_process(doc_ctx *dc, const json_t *obj, const char *where, tw__process *p)
{
    tw__process_init(p);
    if (!json_is_object(obj)) {
        tw__wire_warn(dc->in, dc->line_no, "%s: not an object, empty process used", where);
        return true;
    }
    const json_t *service = json_object_get(obj, "serviceName");
    if (json_is_string(service)) {
        if (!tw__process_set_service(p, json_string_value(service)))
            goto nomem;
    } else {
        tw__wire_warn(dc->in, dc->line_no, "%s.serviceName: missing or not a string", where);
    }
    const json_t *tags = json_object_get(obj, "tags");
    if (tags && !json_is_null(tags) && !json_is_array(tags))
        tw__wire_warn(dc->in, dc->line_no, "%s.tags: not an array, ignored", where);
    size_t i;
    const json_t *kv;
    json_array_foreach(tags, i, kv)
    {
        char at[96];
        snprintf(at, sizeof at, "%s.tags[%zu]", where, i);
        const char *key;
        tw_value value;
        void *owned;
        if (!read_kv(dc, kv, at, &key, &value, &owned)) {
            if (dc->is_nomem)
                goto nomem;
            continue;
        }
        bool ok = tw__process_add_tag(p, key, &value);
        free(owned);
        if (!ok)
            goto nomem;
    }
    return true;
nomem:
    dc->is_nomem = true;
    tw__process_clear(p);
    return false;
}

/* A trace's processes map: key -> index into procs. */
typedef struct {
    GHashTable *index; /* borrowed key strings (the document's) -> index + 1 */
    tw__process *procs;
    size_t n;
} process_map;

static void process_map_free(process_map *m)
{
    for (size_t i = 0; i < m->n; i++)
        tw__process_clear(&m->procs[i]);
    free(m->procs);
    if (m->index)
        g_hash_table_destroy(m->index);
}

static bool process_map_read(doc_ctx *dc, const json_t *processes, process_map *m)
{
    memset(m, 0, sizeof *m);
    if (!processes || json_is_null(processes))
        return true;
    if (!json_is_object(processes)) {
        tw__wire_warn(dc->in, dc->line_no, "processes: not an object, ignored");
        return true;
    }
    m->index = g_hash_table_new(g_str_hash, g_str_equal);
    m->procs = calloc(json_object_size(processes) + 1, sizeof *m->procs);
    if (!m->procs) {
        dc->is_nomem = true;
        return false;
    }
    const char *key;
    const json_t *p;
    json_object_foreach((json_t *)processes, key, p)
    {
        char where[96];
        snprintf(where, sizeof where, "processes.%.60s", key);
        if (!read_process(dc, p, where, &m->procs[m->n]))
            return false;
        m->n++;
        g_hash_table_insert(m->index, (gpointer)key, GSIZE_TO_POINTER(m->n));
    }
    return true;
}

/* ---- spans --------------------------------------------------------------------------------- */

typedef struct {
    tw__ref_type type;
    uint64_t hi, lo, span_id;
} parsed_ref;

/* References -> refs and the parent (the rule in the file comment). */
static bool read_references(doc_ctx *dc, const json_t *list, tw__span_data *s)
{
    if (!list || json_is_null(list))
        return true;
    if (!json_is_array(list)) {
        tw__wire_warn(dc->in, dc->line_no, "references: not an array, ignored");
        return true;
    }
    size_t n = json_array_size(list);
    parsed_ref *refs = calloc(n + 1, sizeof *refs);
    if (!refs) {
        dc->is_nomem = true;
        return false;
    }
    size_t count = 0;
    size_t i;
    const json_t *r;
    json_array_foreach(list, i, r)
    {
        char why[160];
        const json_t *type = json_object_get(r, "refType");
        const json_t *tid = json_object_get(r, "traceID");
        const json_t *sid = json_object_get(r, "spanID");
        parsed_ref *p = &refs[count];
        if (!type || json_is_null(type) ||
            (json_is_string(type) && strcasecmp(json_string_value(type), "CHILD_OF") == 0)) {
            p->type = TW__REF_CHILD_OF; /* absent: CHILD_OF, the proto default */
        } else if (json_is_string(type) &&
                   strcasecmp(json_string_value(type), "FOLLOWS_FROM") == 0) {
            p->type = TW__REF_FOLLOWS_FROM;
        } else {
            tw__wire_warn(dc->in, dc->line_no,
                          "references[%zu].refType: unknown, reference dropped", i);
            continue;
        }
        if (!tid || json_is_null(tid)) {
            p->hi = s->trace_id_high;
            p->lo = s->trace_id_low;
        } else if (!json_is_string(tid) ||
                   !tw__parse_trace_id(json_string_value(tid), json_string_length(tid), dc->base,
                                       &p->hi, &p->lo, why, sizeof why)) {
            tw__wire_warn(dc->in, dc->line_no, "references[%zu].traceID: %s, reference dropped", i,
                          json_is_string(tid) ? why : "not a string");
            continue;
        }
        if (!json_is_string(sid) ||
            !tw__parse_span_id(json_string_value(sid), json_string_length(sid), dc->base, false,
                               &p->span_id, why, sizeof why)) {
            tw__wire_warn(dc->in, dc->line_no, "references[%zu].spanID: %s, reference dropped", i,
                          json_is_string(sid) ? why : "missing or not a string");
            continue;
        }
        count++;
    }
    size_t parent = SIZE_MAX;
    for (int pass = 0; pass < 2 && parent == SIZE_MAX; pass++) {
        tw__ref_type want = pass == 0 ? TW__REF_CHILD_OF : TW__REF_FOLLOWS_FROM;
        for (size_t k = 0; k < count && parent == SIZE_MAX; k++) {
            if (refs[k].type == want && refs[k].hi == s->trace_id_high &&
                refs[k].lo == s->trace_id_low && refs[k].span_id != s->span_id)
                parent = k;
        }
    }
    bool ok = true;
    if (parent != SIZE_MAX)
        s->parent_id = refs[parent].span_id;
    for (size_t k = 0; k < count && ok; k++)
        ok = tw__span_data_add_ref(s, refs[k].type, refs[k].hi, refs[k].lo, refs[k].span_id);
    free(refs);
    if (!ok)
        dc->is_nomem = true;
    return ok;
}

static bool read_tags(doc_ctx *dc, const json_t *tags, tw__span_data *s)
{
    if (tags && !json_is_null(tags) && !json_is_array(tags))
        tw__wire_warn(dc->in, dc->line_no, "tags: not an array, ignored");
    size_t i;
    const json_t *kv;
    json_array_foreach(tags, i, kv)
    {
        char at[32];
        snprintf(at, sizeof at, "tags[%zu]", i);
        const char *key;
        tw_value value;
        void *owned;
        if (!read_kv(dc, kv, at, &key, &value, &owned)) {
            if (dc->is_nomem)
                return false;
            continue;
        }
        bool ok = tw__span_data_add_tag(s, key, &value);
        free(owned);
        if (!ok) {
            dc->is_nomem = true;
            return false;
        }
    }
    return true;
}

static bool read_logs(doc_ctx *dc, const json_t *logs, tw__span_data *s)
{
    if (logs && !json_is_null(logs) && !json_is_array(logs))
        tw__wire_warn(dc->in, dc->line_no, "logs: not an array, ignored");
    size_t i;
    const json_t *log;
    json_array_foreach(logs, i, log)
    {
        char at[96];
        snprintf(at, sizeof at, "logs[%zu].timestamp", i);
        int64_t ts;
        const json_t *fields = json_object_get(log, "fields");
        if (!json_object_get(log, "timestamp")) {
            tw__wire_warn(dc->in, dc->line_no, "logs[%zu]: no timestamp, dropped", i);
            continue;
        }
        if (!read_time(dc, json_object_get(log, "timestamp"), at, &ts))
            continue;
        size_t n = json_is_array(fields) ? json_array_size(fields) : 0;
        if (fields && !json_is_null(fields) && !json_is_array(fields))
            tw__wire_warn(dc->in, dc->line_no, "logs[%zu].fields: not an array, ignored", i);
        tw__log *l = tw__span_data_push_log(s, n);
        if (!l) {
            dc->is_nomem = true;
            return false;
        }
        l->timestamp_us = ts;
        l->n_fields = 0;
        size_t f;
        const json_t *kv;
        json_array_foreach(fields, f, kv)
        {
            snprintf(at, sizeof at, "logs[%zu].fields[%zu]", i, f);
            const char *key;
            tw_value value;
            void *owned;
            if (!read_kv(dc, kv, at, &key, &value, &owned)) {
                if (dc->is_nomem)
                    return false;
                continue;
            }
            bool was_truncated = false;
            bool ok = tw__tag_set(&s->arena, &l->fields[l->n_fields], key, &value, SIZE_MAX,
                                  &was_truncated);
            free(owned);
            if (!ok) {
                dc->is_nomem = true;
                return false;
            }
            l->n_fields++;
        }
        s->n_logs++; /* commits the log (wire/model/span_data.h) */
    }
    return true;
}

static bool id_member(const json_t *obj, const char *key, const char **text, size_t *len)
{
    const json_t *v = json_object_get(obj, key);
    if (!json_is_string(v))
        return false;
    *text = json_string_value(v);
    *len = json_string_length(v);
    return true;
}

/* One span: emitted, or rejected with its reason. @map may be NULL;
 * @trace_id is the trace's traceID member (NULL when none). */
static void read_span(doc_ctx *dc, const json_t *obj, const process_map *map,
                      const json_t *trace_id)
{
    char why[160];
    const char *text;
    size_t len;
    uint64_t hi, lo, id;
    if (!json_is_object(obj)) {
        reject_value(dc, obj, "span: not a JSON object");
        return;
    }
    if (!id_member(obj, "traceID", &text, &len)) {
        if (!json_is_string(trace_id)) {
            reject_value(dc, obj, "traceID: missing or not a string");
            return;
        }
        text = json_string_value(trace_id);
        len = json_string_length(trace_id);
    }
    if (!tw__parse_trace_id(text, len, dc->base, &hi, &lo, why, sizeof why)) {
        reject_value(dc, obj, "traceID: %s", why);
        return;
    }
    if (!id_member(obj, "spanID", &text, &len)) {
        reject_value(dc, obj, "spanID: missing or not a string");
        return;
    }
    if (!tw__parse_span_id(text, len, dc->base, false, &id, why, sizeof why)) {
        reject_value(dc, obj, "spanID: %s", why);
        return;
    }
    const json_t *op = json_object_get(obj, "operationName");
    if (op && !json_is_null(op) && !json_is_string(op)) {
        reject_value(dc, obj, "operationName: not a string");
        return;
    }

    tw__process embedded;
    tw__process_init(&embedded);
    tw__span_data *s = tw__span_data_new();
    if (!s)
        goto nomem;
    s->trace_id_high = hi;
    s->trace_id_low = lo;
    s->span_id = id;
    s->flags = TW__FLAG_SAMPLED;
    const json_t *flags = json_object_get(obj, "flags");
    if (json_is_integer(flags) && json_integer_value(flags) >= 0 &&
        json_integer_value(flags) <= UINT32_MAX)
        s->flags = (uint32_t)json_integer_value(flags);
    else if (flags && !json_is_null(flags))
        tw__wire_warn(dc->in, dc->line_no,
                      "flags: not a 32-bit unsigned integer, taken as sampled");
    if (!tw__span_data_set_operation(s, json_is_string(op) ? json_string_value(op) : "",
                                     json_is_string(op) ? json_string_length(op) : 0) ||
        !read_references(dc, json_object_get(obj, "references"), s) ||
        !read_tags(dc, json_object_get(obj, "tags"), s) ||
        !read_logs(dc, json_object_get(obj, "logs"), s))
        goto nomem;
    const json_t *psid = json_object_get(obj, "parentSpanID");
    uint64_t parent = 0;
    if (s->parent_id == 0 && json_is_string(psid)) {
        if (tw__parse_span_id(json_string_value(psid), json_string_length(psid), dc->base, true,
                              &parent, why, sizeof why))
            s->parent_id = parent == id ? 0 : parent;
        else
            tw__wire_warn(dc->in, dc->line_no, "parentSpanID: %s, ignored", why);
    }

    int64_t us = 0;
    const json_t *start = json_object_get(obj, "startTime");
    if (start && !json_is_null(start) && read_time(dc, start, "startTime", &us) && us > 0)
        s->start_us = us;
    if (s->start_us <= 0) {
        s->start_us = 0;
        for (size_t i = 0; i < s->n_logs; i++) {
            int64_t t = s->logs[i].timestamp_us;
            if (t > 0 && (s->start_us == 0 || t < s->start_us))
                s->start_us = t;
        }
        if (s->start_us)
            tw__wire_warn(dc->in, dc->line_no,
                          "startTime: absent or 0, taken from the earliest log");
        else
            tw__wire_warn(dc->in, dc->line_no, "startTime: absent or 0, kept as unknown");
    }
    const json_t *dur = json_object_get(obj, "duration");
    s->is_duration_unknown = true;
    if (dur && !json_is_null(dur) && read_time(dc, dur, "duration", &us)) {
        s->is_duration_unknown = false;
        if (us >= 0)
            s->duration_us = us;
        else
            tw__wire_warn(dc->in, dc->line_no, "duration: negative (%lld), taken as 0",
                          (long long)us);
    }

    const tw__process *process = NULL;
    const json_t *pid = json_object_get(obj, "processID");
    if (map && map->index && json_is_string(pid)) {
        size_t k = GPOINTER_TO_SIZE(g_hash_table_lookup(map->index, json_string_value(pid)));
        if (k)
            process = &map->procs[k - 1];
    }
    if (!process) {
        const json_t *p = json_object_get(obj, "process");
        if (p) {
            if (!read_process(dc, p, "process", &embedded))
                goto nomem;
        } else {
            tw__wire_warn(dc->in, dc->line_no, "processID %s: no such process, empty process used",
                          json_is_string(pid) ? json_string_value(pid) : "(none)");
        }
        process = &embedded;
    }
    char range_why[320];
    if (!tw__wire_admit_span(dc->in, dc->line_no, s, range_why, sizeof range_why)) {
        tw__span_data_unref(s);
        reject_value(dc, obj, "%s", range_why);
    } else if (!dc->in->emit(dc->in, s, process)) {
        dc->is_stopped = true;
    }
    tw__process_clear(&embedded);
    return;

nomem:
    dc->is_nomem = true;
    tw__span_data_unref(s);
    tw__process_clear(&embedded);
}

static void read_trace(doc_ctx *dc, const json_t *trace)
{
    if (!json_is_object(trace)) {
        reject_value(dc, trace, "trace: not a JSON object");
        return;
    }
    const json_t *spans = json_object_get(trace, "spans");
    if (!json_is_array(spans)) {
        reject_value(dc, trace, "spans: missing or not an array");
        return;
    }
    process_map map;
    if (process_map_read(dc, json_object_get(trace, "processes"), &map)) {
        size_t i;
        const json_t *span;
        json_array_foreach(spans, i, span)
        {
            read_span(dc, span, &map, json_object_get(trace, "traceID"));
            if (dc->is_nomem || dc->is_stopped)
                break;
        }
    }
    process_map_free(&map);
}

/* One document: the envelope, a trace or a span. */
static void read_document(doc_ctx *dc, const json_t *doc, const char *raw, size_t raw_len)
{
    const json_t *data = json_object_get(doc, "data");
    if (json_is_array(data)) {
        size_t i;
        const json_t *trace;
        json_array_foreach(data, i, trace)
        {
            read_trace(dc, trace);
            if (dc->is_nomem || dc->is_stopped)
                return;
        }
    } else if (json_is_object(data)) {
        read_trace(dc, data);
    } else if (data && !json_is_null(data)) {
        if (!dc->in->reject(dc->in, dc->line_no, raw, raw_len,
                            "data: neither an array of traces nor a trace"))
            dc->is_stopped = true;
    } else if (json_object_get(doc, "spans")) {
        read_trace(dc, doc);
    } else if (json_object_get(doc, "spanID")) {
        read_span(dc, doc, NULL, NULL);
    } else if (!data) {
        if (!dc->in->reject(dc->in, dc->line_no, raw, raw_len,
                            "not a Jaeger document: no data, spans or spanID member"))
            dc->is_stopped = true;
    }
    /* "data": null is an empty query result: nothing to read. */
}

/* One document (tw__json_record_fn). */
static tw_status read_record(void *arg, json_t *doc, const char *rec, size_t len, size_t line_no,
                             const json_error_t *parse_error, tw_error **err)
{
    doc_ctx *dc = arg;
    dc->line_no = line_no;
    if (!doc)
        return tw__wire_reject(dc->in, line_no, rec, len, "not valid JSON: %s", parse_error->text)
                   ? TW_OK
                   : TW_E_STATE;
    read_document(dc, doc, rec, len);
    if (dc->is_nomem) {
        tw__set_error(err, TW_E_NOMEM, "%s:%zu: out of memory", dc->in->name, line_no);
        return TW_E_NOMEM;
    }
    return dc->is_stopped ? TW_E_STATE : TW_OK;
}

tw_status tw__jaeger_json_read_document(tw__wire_input *in, size_t line_no, const json_t *doc,
                                        const char *raw, size_t raw_len)
{
    doc_ctx dc = {.in = in, .line_no = line_no, .unit = TW__TIME_US, .base = TW__ID_HEX};
    read_document(&dc, doc, raw, raw_len);
    return dc.is_nomem ? TW_E_NOMEM : dc.is_stopped ? TW_E_STATE : TW_OK;
}

static tw_status read_jaeger_json(FILE *stream, tw__wire_input *in, tw_error **err)
{
    doc_ctx dc = {.in = in, .unit = TW__TIME_US, .base = TW__ID_HEX};
    if (in->opts && in->opts->time_unit != TW__TIME_AUTO)
        dc.unit = in->opts->time_unit;
    if (in->opts && in->opts->id_base != TW__ID_AUTO)
        dc.base = in->opts->id_base;
    return tw__json_read_records(stream, in, MAX_DOCUMENT_BYTES, JSON_ALLOW_NUL, read_record, &dc,
                                 err);
}

/* ---- detection ----------------------------------------------------------------------------- */

static bool contains(const uint8_t *head, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= len; i++) {
        if (memcmp(head + i, needle, n) == 0)
            return true;
    }
    return false;
}

static int sniff_jaeger_json(const uint8_t *head, size_t len)
{
    size_t i = 0;
    while (i < len && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n'))
        i++;
    if (i >= len || (head[i] != '[' && head[i] != '{'))
        return 0;
    /* Jaeger's Thrift-as-JSON and OTLP use other spellings (traceIdLow, spanId). */
    static const char *const marks[] = {"\"traceID\"", "\"spanID\"", "\"processes\"",
                                        "\"operationName\""};
    for (size_t k = 0; k < sizeof marks / sizeof marks[0]; k++) {
        if (contains(head, len, marks[k]))
            return 90;
    }
    return 0;
}

const tw__wire_decoder tw__jaeger_json_decoder = {
    .name = "jaeger-json",
    .summary = "Jaeger query API / UI JSON ({\"data\":[trace]}, a trace, or spans with an "
               "embedded process; NDJSON too)",
    .read = read_jaeger_json,
    .sniff = sniff_jaeger_json,
};
