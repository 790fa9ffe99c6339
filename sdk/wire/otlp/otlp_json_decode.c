/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/otlp/otlp_json_decode.c: `--from otlp-json`: OpenTelemetry
 * ExportTraceServiceRequest documents in the OTLP/JSON encoding (one
 * document, several concatenated, or one per line: NDJSON), as
 * `--to otlp-json` and the SDK's OTLP reporter (wire/otlp/otlp_json.h) write them
 * and as OTLP/HTTP receivers take them.
 *
 * Where it sits: the first stage of `tracewire convert` (bridge/convert.h).
 * The shared splitter (json_stream.c) cuts the input into documents without
 * loading it whole; Jansson parses one document at a time (memory: the
 * largest document, at most MAX_DOC_BYTES). Each span is emitted with the
 * process of its resource.
 *
 * Mapping (that of the OpenTelemetry Collector's
 * translator to Jaeger, so a span reads the same whichever way it came):
 *   resource.attributes  service.name -> process service (text of any
 *                        value); every other attribute -> a process tag, typed
 *   scope / instrumentationLibrary (old name, also instrumentationLibrarySpans)
 *                        name, version -> span tags otel.scope.name /
 *                        otel.scope.version (when not empty)
 *   traceId, spanId      hex (any case; 32/16 digits, shorter is left-padded),
 *                        or base64 of 16/8 bytes (proto3 JSON writers)
 *   parentSpanId         absent, "" or zero: root; else the parent, and a
 *                        CHILD_OF reference to it first in the references
 *   name                 operation
 *   kind                 number or name (SPAN_KIND_SERVER, SERVER):
 *                        SERVER/CLIENT/PRODUCER/CONSUMER -> tag span.kind;
 *                        INTERNAL and UNSPECIFIED -> no tag (the model's
 *                        kind-less span, which the encoder writes as INTERNAL)
 *   startTimeUnixNano, endTimeUnixNano  decimal string or number, ns -> µs
 *                        rounded; duration = end - start in µs, at least 1
 *                        when end > start, 0 when end is absent or earlier
 *                        (warning); start absent or 0: the span is rejected
 *   attributes           typed tags: stringValue, boolValue, intValue
 *                        (string or number), doubleValue (number, or
 *                        "NaN"/"Infinity"/"-Infinity"), bytesValue (base64)
 *                        -> binary; arrayValue / kvlistValue -> a string of
 *                        plain JSON ([1,"a"], {"k":true}); an empty value ""
 *   events               logs: timeUnixNano -> timestamp; name -> field
 *                        `event` (first, when not empty); attributes -> fields
 *   links                references: FOLLOWS_FROM, or CHILD_OF when the
 *                        attribute opentracing.ref_type is "child_of"
 *   status               code 2 (ERROR) -> tag error=true (bool), message ->
 *                        tag otel.status_description; code 1 (OK) -> tag
 *                        otel.status_code="OK"; 0 / absent: nothing
 *   traceState           tag w3c.tracestate (when not empty)
 *   flags                TW__FLAG_SAMPLED (exported spans were sampled)
 * Tags come in this order: attributes, span.kind, status tags, tracestate,
 * scope tags.
 *
 * Errors: a document that is not JSON or not a request is rejected whole
 * (its line, its bytes); a bad span alone ("resourceSpans[0].scopeSpans[1].
 * spans[2]: reason", raw = the span object as compact JSON). Single-threaded.
 */
#include "wire/core/error.h"
#include "wire/core/input.h"
#include "wire/core/json_stream.h"
#include "wire/formats.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "wire/core/json_common.h"

#define MAX_DOC_BYTES ((size_t)64 * 1024 * 1024)
#define MAX_VALUE_DEPTH 64

typedef struct ctx {
    tw__wire_input *in;
    size_t line;
    char path[96];
    char why[256];
    bool is_nomem;
    tw__time_unit unit; /* of the span being read: TW__TIME_NS but by magnitude */
} ctx;

static void fail(ctx *c, const char *fmt, ...) TW_PRINTF(2, 3);
static void fail(ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, sizeof c->why, fmt, ap);
    va_end(ap);
}

/* ---- small parsers ------------------------------------------------------------------------- */

static uint64_t be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | p[i];
    return v;
}

/* An OTLP id: hex, else base64 of @bytes bytes. */
static bool parse_id(ctx *c, const char *what, json_t *value, size_t bytes, bool allow_zero,
                     uint64_t *high, uint64_t *low)
{
    if (!json_is_string(value)) {
        fail(c, "%s is %s", what, value ? "not a string" : "missing");
        return false;
    }
    const char *text = json_string_value(value);
    size_t len = json_string_length(value);
    char why[160];
    bool ok = bytes == 16
                  ? tw__parse_trace_id(text, len, TW__ID_HEX, high, low, why, sizeof why)
                  : tw__parse_span_id(text, len, TW__ID_HEX, allow_zero, low, why, sizeof why);
    if (ok)
        return true;
    uint8_t *raw = NULL;
    size_t raw_len = 0;
    if (len >= 8 && tw__base64_decode(text, len, false, &raw, &raw_len, &c->is_nomem) &&
        raw_len == bytes) {
        *high = bytes == 16 ? be64(raw) : 0;
        *low = be64(raw + bytes - 8);
        free(raw);
        if ((*high | *low) != 0 || allow_zero)
            return true;
        fail(c, "%s is all zeros", what);
        return false;
    }
    free(raw);
    fail(c, "%s: %s", what, why);
    return false;
}

/* A fixed64 / int64 written as a decimal string or a JSON integer. */
static bool parse_int(json_t *value, bool is_unsigned, int64_t *out)
{
    if (json_is_integer(value)) {
        json_int_t v = json_integer_value(value);
        if (is_unsigned && v < 0)
            return false;
        *out = (int64_t)v;
        return true;
    }
    if (json_is_real(value)) {
        double d = json_real_value(value);
        if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || d != floor(d))
            return false;
        if (is_unsigned && d < 0)
            return false;
        *out = (int64_t)d;
        return true;
    }
    if (!json_is_string(value))
        return false;
    const char *s = json_string_value(value);
    size_t len = json_string_length(value);
    bool neg = len > 0 && s[0] == '-';
    size_t i = neg ? 1 : 0;
    if (i == len || (neg && is_unsigned))
        return false;
    uint64_t v = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
        return false; /* fixed64 times past 2262 do not fit the model either */
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

/* A time in c->unit (ns unless the span's start said otherwise) to µs;
 * *has false when absent. */
static bool parse_time(ctx *c, json_t *obj, const char *key, bool *has, int64_t *us)
{
    json_t *v = json_object_get(obj, key);
    *has = v != NULL && !json_is_null(v);
    if (!*has)
        return true;
    int64_t ns;
    if (!parse_int(v, true, &ns) || !tw__time_int_to_us(ns, c->unit, us)) {
        fail(c, "%s is not a time in nanoseconds", key);
        return false;
    }
    return true;
}

/* ---- AnyValue ------------------------------------------------------------------------------ */

/* The plain JSON of an AnyValue (for arrayValue / kvlistValue texts). New
 * reference, NULL with c->why on a bad value. */
static json_t *plain_json(ctx *c, json_t *any, int depth)
{
    if (depth > MAX_VALUE_DEPTH) {
        fail(c, "attribute value nested deeper than %d levels", MAX_VALUE_DEPTH);
        return NULL;
    }
    if (!json_is_object(any)) {
        fail(c, "an AnyValue is not an object");
        return NULL;
    }
    json_t *v;
    if ((v = json_object_get(any, "stringValue")))
        return json_is_string(v) ? json_incref(v) : (fail(c, "stringValue is not a string"), NULL);
    if ((v = json_object_get(any, "boolValue")))
        return json_is_boolean(v) ? json_incref(v) : (fail(c, "boolValue is not a bool"), NULL);
    if ((v = json_object_get(any, "intValue"))) {
        int64_t i;
        if (!parse_int(v, false, &i)) {
            fail(c, "intValue is not a 64-bit integer");
            return NULL;
        }
        return json_integer(i);
    }
    if ((v = json_object_get(any, "doubleValue"))) {
        if (json_is_number(v) || json_is_string(v))
            return json_incref(v);
        fail(c, "doubleValue is not a number");
        return NULL;
    }
    if ((v = json_object_get(any, "bytesValue")))
        return json_is_string(v) ? json_incref(v) : (fail(c, "bytesValue is not a string"), NULL);
    if ((v = json_object_get(any, "arrayValue"))) {
        json_t *values = json_object_get(v, "values");
        json_t *out = json_array();
        if (!out)
            return NULL;
        size_t i;
        json_t *item;
        json_array_foreach(values, i, item)
        {
            json_t *x = plain_json(c, item, depth + 1);
            if (!x || json_array_append_new(out, x) != 0) {
                json_decref(out);
                return NULL;
            }
        }
        return out;
    }
    if ((v = json_object_get(any, "kvlistValue"))) {
        json_t *values = json_object_get(v, "values");
        json_t *out = json_object();
        if (!out)
            return NULL;
        size_t i;
        json_t *kv;
        json_array_foreach(values, i, kv)
        {
            json_t *key = json_object_get(kv, "key");
            json_t *x = key && json_is_string(key)
                            ? plain_json(c, json_object_get(kv, "value"), depth + 1)
                            : (fail(c, "a kvlist entry has no key"), NULL);
            if (!x || json_object_set_new(out, json_string_value(key), x) != 0) {
                json_decref(out);
                return NULL;
            }
        }
        return out;
    }
    return json_string(""); /* an empty AnyValue */
}

/* Converts an AnyValue to a typed value. Owned bytes (decoded base64,
 * dumped JSON) go to *owned, freed by the caller after use. */
static bool any_value(ctx *c, json_t *any, tw_value *out, char **owned)
{
    *owned = NULL;
    if (!any || json_is_null(any)) {
        *out = (tw_value){.type = TW_VALUE_STRING, .len = 0, .as.str = ""};
        return true;
    }
    if (!json_is_object(any)) {
        fail(c, "value is not an AnyValue object");
        return false;
    }
    json_t *v;
    if ((v = json_object_get(any, "stringValue"))) {
        if (!json_is_string(v)) {
            fail(c, "stringValue is not a string");
            return false;
        }
        *out = (tw_value){
            .type = TW_VALUE_STRING, .len = json_string_length(v), .as.str = json_string_value(v)};
        return true;
    }
    if ((v = json_object_get(any, "boolValue"))) {
        if (!json_is_boolean(v)) {
            fail(c, "boolValue is not a bool");
            return false;
        }
        *out = (tw_value){.type = TW_VALUE_BOOL, .as.boolean = json_is_true(v)};
        return true;
    }
    if ((v = json_object_get(any, "intValue"))) {
        int64_t i;
        if (!parse_int(v, false, &i)) {
            fail(c, "intValue is not a 64-bit integer");
            return false;
        }
        *out = (tw_value){.type = TW_VALUE_INT64, .as.i64 = i};
        return true;
    }
    if ((v = json_object_get(any, "doubleValue"))) {
        double d;
        const char *s = json_string_value(v);
        if (json_is_number(v))
            d = json_number_value(v);
        else if (s && strcmp(s, "NaN") == 0)
            d = NAN;
        else if (s && strcmp(s, "Infinity") == 0)
            d = INFINITY;
        else if (s && strcmp(s, "-Infinity") == 0)
            d = -INFINITY;
        else {
            fail(c, "doubleValue is not a number");
            return false;
        }
        *out = (tw_value){.type = TW_VALUE_DOUBLE, .as.dbl = d};
        return true;
    }
    if ((v = json_object_get(any, "bytesValue"))) {
        uint8_t *bytes = NULL;
        size_t n = 0;
        if (!json_is_string(v) || !tw__base64_decode(json_string_value(v), json_string_length(v),
                                                     false, &bytes, &n, &c->is_nomem)) {
            if (!c->is_nomem)
                fail(c, "bytesValue is not base64");
            return false;
        }
        *owned = (char *)bytes;
        *out = (tw_value){.type = TW_VALUE_BINARY, .len = n, .as.bin = bytes};
        return true;
    }
    if (!json_object_get(any, "arrayValue") && !json_object_get(any, "kvlistValue")) {
        *out = (tw_value){.type = TW_VALUE_STRING, .len = 0, .as.str = ""}; /* empty */
        return true;
    }
    json_t *plain = plain_json(c, any, 0);
    if (!plain)
        return false;
    char *text = json_dumps(plain, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
    json_decref(plain);
    if (!text) {
        c->is_nomem = true;
        return false;
    }
    *owned = text;
    *out = (tw_value){.type = TW_VALUE_STRING, .len = strlen(text), .as.str = text};
    return true;
}

/* Calls @add for each KeyValue of @list. */
typedef bool (*add_fn)(void *target, const char *key, const tw_value *value);

static bool add_span_tag(void *target, const char *key, const tw_value *value)
{
    return tw__span_data_add_tag(target, key, value);
}

static bool add_process_tag(void *target, const char *key, const tw_value *value)
{
    return tw__process_add_tag(target, key, value);
}

static bool each_attribute(ctx *c, json_t *list, const char *where, add_fn add, void *target,
                           const char *skip_key)
{
    if (list && !json_is_null(list) && !json_is_array(list)) {
        fail(c, "%s is not an array", where);
        return false;
    }
    size_t i;
    json_t *kv;
    json_array_foreach(list, i, kv)
    {
        json_t *key = json_object_get(kv, "key");
        if (!json_is_string(key)) {
            fail(c, "%s[%zu] has no key", where, i);
            return false;
        }
        const char *k = json_string_value(key);
        if (skip_key && strcmp(k, skip_key) == 0)
            continue;
        tw_value value;
        char *owned;
        if (!any_value(c, json_object_get(kv, "value"), &value, &owned)) {
            if (!c->is_nomem) {
                char inner[sizeof c->why];
                memcpy(inner, c->why, sizeof inner);
                fail(c, "%s \"%.64s\": %s", where, k, inner);
            }
            return false;
        }
        bool ok = add(target, k, &value);
        free(owned);
        if (!ok) {
            c->is_nomem = true;
            return false;
        }
    }
    return true;
}

/* ---- the span ------------------------------------------------------------------------------ */

static const char *kind_name(json_t *kind)
{
    static const char *const by_number[6] = {NULL,     NULL,       "server",
                                             "client", "producer", "consumer"};
    if (json_is_integer(kind)) {
        json_int_t k = json_integer_value(kind);
        return k >= 0 && k < 6 ? by_number[k] : NULL;
    }
    const char *s = json_string_value(kind);
    if (!s)
        return NULL;
    if (strncasecmp(s, "SPAN_KIND_", 10) == 0)
        s += 10;
    static const char *const names[4] = {"server", "client", "producer", "consumer"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(s, names[i]) == 0)
            return names[i];
    }
    return NULL;
}

static bool kind_is_valid(json_t *kind)
{
    if (!kind || json_is_null(kind))
        return true;
    if (json_is_integer(kind))
        return json_integer_value(kind) >= 0 && json_integer_value(kind) <= 5;
    const char *s = json_string_value(kind);
    if (!s)
        return false;
    if (strncasecmp(s, "SPAN_KIND_", 10) == 0)
        s += 10;
    return kind_name(kind) || strcasecmp(s, "INTERNAL") == 0 || strcasecmp(s, "UNSPECIFIED") == 0;
}

static bool add_events(ctx *c, tw__span_data *s, json_t *events)
{
    if (events && !json_is_null(events) && !json_is_array(events)) {
        fail(c, "events is not an array");
        return false;
    }
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev)
    {
        bool has;
        int64_t ts = 0;
        char where[32];
        snprintf(where, sizeof where, "events[%zu]", i);
        if (!json_is_object(ev)) {
            fail(c, "%s is not an object", where);
            return false;
        }
        if (!parse_time(c, ev, "timeUnixNano", &has, &ts))
            return false;
        json_t *attrs = json_object_get(ev, "attributes");
        const char *name = json_string_value(json_object_get(ev, "name"));
        size_t n_fields = (name && name[0] ? 1 : 0) + json_array_size(attrs);
        tw__log *log = tw__span_data_push_log(s, n_fields);
        if (!log) {
            c->is_nomem = true;
            return false;
        }
        log->timestamp_us = ts;
        s->n_logs++;
        bool cut = false;
        if (name && name[0]) {
            tw_value v = {.type = TW_VALUE_STRING,
                          .len = json_string_length(json_object_get(ev, "name")),
                          .as.str = name};
            if (!tw__tag_set(&s->arena, &log->fields[0], "event", &v, SIZE_MAX, &cut)) {
                c->is_nomem = true;
                return false;
            }
            log->n_fields = 1;
        }
        if (attrs && !json_is_array(attrs)) {
            fail(c, "%s.attributes is not an array", where);
            return false;
        }
        size_t k;
        json_t *kv;
        json_array_foreach(attrs, k, kv)
        {
            json_t *key = json_object_get(kv, "key");
            if (!json_is_string(key)) {
                fail(c, "%s.attributes[%zu] has no key", where, k);
                return false;
            }
            tw_value value;
            char *owned;
            if (!any_value(c, json_object_get(kv, "value"), &value, &owned))
                return false;
            bool ok = tw__tag_set(&s->arena, &log->fields[log->n_fields], json_string_value(key),
                                  &value, SIZE_MAX, &cut);
            free(owned);
            if (!ok) {
                c->is_nomem = true;
                return false;
            }
            log->n_fields++;
        }
    }
    return true;
}

static bool add_links(ctx *c, tw__span_data *s, json_t *links)
{
    if (links && !json_is_null(links) && !json_is_array(links)) {
        fail(c, "links is not an array");
        return false;
    }
    size_t i;
    json_t *link;
    json_array_foreach(links, i, link)
    {
        uint64_t hi = 0, lo = 0, sid = 0, unused = 0;
        char what[64];
        snprintf(what, sizeof what, "links[%zu].traceId", i);
        if (!parse_id(c, what, json_object_get(link, "traceId"), 16, false, &hi, &lo))
            return false;
        snprintf(what, sizeof what, "links[%zu].spanId", i);
        if (!parse_id(c, what, json_object_get(link, "spanId"), 8, false, &unused, &sid))
            return false;
        tw__ref_type type = TW__REF_FOLLOWS_FROM;
        size_t k;
        json_t *kv;
        json_array_foreach(json_object_get(link, "attributes"), k, kv)
        {
            const char *key = json_string_value(json_object_get(kv, "key"));
            const char *val =
                json_string_value(json_object_get(json_object_get(kv, "value"), "stringValue"));
            if (key && val && strcmp(key, "opentracing.ref_type") == 0 &&
                strcasecmp(val, "child_of") == 0)
                type = TW__REF_CHILD_OF;
        }
        if (!tw__span_data_add_ref(s, type, hi, lo, sid)) {
            c->is_nomem = true;
            return false;
        }
    }
    return true;
}

typedef struct scope_info {
    const char *name, *version;
    size_t name_len, version_len;
} scope_info;

/* One span; NULL with c->why (or c->is_nomem). */
static tw__span_data *read_span(ctx *c, json_t *js, const scope_info *scope, bool *warn_duration)
{
    if (!json_is_object(js)) {
        fail(c, "a span is not an object");
        return NULL;
    }
    tw__span_data *s = tw__span_data_new();
    if (!s) {
        c->is_nomem = true;
        return NULL;
    }
    uint64_t unused = 0;
    int64_t start = 0, end = 0;
    bool has_start, has_end;
    json_t *parent = json_object_get(js, "parentSpanId");
    json_t *name = json_object_get(js, "name");
    json_t *kind = json_object_get(js, "kind");
    if (!parse_id(c, "traceId", json_object_get(js, "traceId"), 16, false, &s->trace_id_high,
                  &s->trace_id_low) ||
        !parse_id(c, "spanId", json_object_get(js, "spanId"), 8, false, &unused, &s->span_id))
        goto fail;
    if (parent && !json_is_null(parent) &&
        !(json_is_string(parent) && json_string_length(parent) == 0) &&
        !parse_id(c, "parentSpanId", parent, 8, true, &unused, &s->parent_id))
        goto fail;
    if (s->parent_id == s->span_id)
        s->parent_id = 0;
    if (name && !json_is_null(name) && !json_is_string(name)) {
        fail(c, "name is not a string");
        goto fail;
    }
    if (!kind_is_valid(kind)) {
        fail(c, "kind is not a SpanKind");
        goto fail;
    }
    /* The unit of this span's times, by the magnitude of its start: µs
     * written into the ns fields are read as µs, with a warning. */
    int64_t raw_start = 0;
    c->unit = TW__TIME_NS;
    if (parse_int(json_object_get(js, "startTimeUnixNano"), true, &raw_start))
        c->unit = tw__wire_time_unit(c->in, c->line, raw_start, TW__TIME_NS);
    if (!parse_time(c, js, "startTimeUnixNano", &has_start, &start) ||
        !parse_time(c, js, "endTimeUnixNano", &has_end, &end))
        goto fail;
    if (!has_start || start == 0) {
        fail(c, "startTimeUnixNano is missing or 0");
        goto fail;
    }
    s->start_us = start;
    *warn_duration = has_end && end < start;
    s->duration_us = has_end && end > start ? end - start : 0;
    if (s->duration_us == 0 && has_end && end >= start) {
        /* end > start by less than 0.5 µs rounds to 0: keep it positive. */
        int64_t start_ns = 0, end_ns = 0;
        parse_int(json_object_get(js, "startTimeUnixNano"), true, &start_ns);
        parse_int(json_object_get(js, "endTimeUnixNano"), true, &end_ns);
        if (end_ns > start_ns)
            s->duration_us = 1;
    }
    s->flags = TW__FLAG_SAMPLED;
    if (name && json_is_string(name) &&
        !tw__span_data_set_operation(s, json_string_value(name), json_string_length(name)))
        goto nomem;
    if (s->parent_id && !tw__span_data_add_ref(s, TW__REF_CHILD_OF, s->trace_id_high,
                                               s->trace_id_low, s->parent_id))
        goto nomem;
    if (!add_links(c, s, json_object_get(js, "links")))
        goto fail;
    if (!each_attribute(c, json_object_get(js, "attributes"), "attributes", add_span_tag, s, NULL))
        goto fail;
    const char *k = kind_name(kind);
    if (k && !tw__span_data_add_str_tag(s, "span.kind", k, strlen(k)))
        goto nomem;
    json_t *status = json_object_get(js, "status");
    if (status && !json_is_null(status)) {
        json_t *code = json_object_get(status, "code");
        const char *code_name = json_string_value(code);
        json_int_t n = json_is_integer(code) ? json_integer_value(code) : 0;
        if (code_name) /* the proto3 JSON enum name */
            n = strcasecmp(code_name, "STATUS_CODE_ERROR") == 0 ? 2
                : strcasecmp(code_name, "STATUS_CODE_OK") == 0  ? 1
                                                                : 0;
        json_t *msg = json_object_get(status, "message");
        if (n == 2) {
            tw_value yes = {.type = TW_VALUE_BOOL, .as.boolean = true};
            if (!tw__span_data_add_tag(s, "error", &yes))
                goto nomem;
            if (json_is_string(msg) && json_string_length(msg) > 0 &&
                !tw__span_data_add_str_tag(s, "otel.status_description", json_string_value(msg),
                                           json_string_length(msg)))
                goto nomem;
        } else if (n == 1 && !tw__span_data_add_str_tag(s, "otel.status_code", "OK", 2)) {
            goto nomem;
        }
    }
    json_t *state = json_object_get(js, "traceState");
    if (json_is_string(state) && json_string_length(state) > 0 &&
        !tw__span_data_add_str_tag(s, "w3c.tracestate", json_string_value(state),
                                   json_string_length(state)))
        goto nomem;
    /* The scope "tracewire" is the one our own encoder writes (wire/otlp/otlp_json.h):
     * it names this library, not the instrumentation that made the span, so
     * it is not kept (an OTLP -> X -> OTLP trip then adds nothing). */
    bool is_ours = scope->name_len == strlen("tracewire") &&
                   memcmp(scope->name, "tracewire", scope->name_len) == 0;
    if (!is_ours && scope->name_len &&
        !tw__span_data_add_str_tag(s, "otel.scope.name", scope->name, scope->name_len))
        goto nomem;
    if (!is_ours && scope->version_len &&
        !tw__span_data_add_str_tag(s, "otel.scope.version", scope->version, scope->version_len))
        goto nomem;
    if (!add_events(c, s, json_object_get(js, "events")))
        goto fail;
    if (!tw__wire_admit_span(c->in, c->line, s, c->why, sizeof c->why))
        goto fail; /* rejected alone */
    return s;
nomem:
    c->is_nomem = true;
fail:
    tw__span_data_unref(s);
    return NULL;
}

/* ---- the document -------------------------------------------------------------------------- */

/* Rejects span @js of the document. False when the run must stop. */
static bool reject_span(ctx *c, json_t *js, const char *where)
{
    char *raw = json_dumps(js, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
    bool go_on = tw__wire_reject(c->in, c->line, raw ? raw : "", raw ? strlen(raw) : 0, "%s: %s",
                                 where, c->why);
    free(raw);
    return go_on;
}

/* Returns TW_OK, TW_E_STATE (stop), TW_E_NOMEM or TW_E_MALFORMED (c->why). */
static tw_status read_document(ctx *c, json_t *doc)
{
    if (!json_is_object(doc)) {
        fail(c, "not a JSON object");
        return TW_E_MALFORMED;
    }
    json_t *all = json_object_get(doc, "resourceSpans");
    if (!json_is_array(all)) {
        fail(c, "no resourceSpans array: not an OTLP ExportTraceServiceRequest");
        return TW_E_MALFORMED;
    }
    size_t r;
    json_t *rs;
    json_array_foreach(all, r, rs)
    {
        tw__process process;
        tw__process_init(&process);
        json_t *attrs = json_object_get(json_object_get(rs, "resource"), "attributes");
        char where[192];
        snprintf(where, sizeof where, "resourceSpans[%zu].resource.attributes", r);
        const char *service = "";
        char *owned_service = NULL;
        size_t i;
        json_t *kv;
        json_array_foreach(attrs, i, kv)
        {
            const char *key = json_string_value(json_object_get(kv, "key"));
            if (key && strcmp(key, "service.name") == 0) {
                tw_value v;
                char *owned;
                free(owned_service);
                owned_service = NULL;
                if (any_value(c, json_object_get(kv, "value"), &v, &owned)) {
                    tw__buf text;
                    tw__buf_init(&text);
                    tw__tag t = {.key = "", .type = v.type, .len = v.len};
                    memcpy(&t.v, &v.as, sizeof t.v);
                    static const char nul = 0;
                    if (!tw__value_text(&t, &text) || !tw__buf_append(&text, &nul, 1)) {
                        c->is_nomem = true;
                    } else {
                        owned_service = (char *)text.data;
                        service = owned_service;
                    }
                    free(owned);
                }
            }
        }
        bool ok = !c->is_nomem && tw__process_set_service(&process, service) &&
                  each_attribute(c, attrs, where, add_process_tag, &process, "service.name");
        free(owned_service);
        if (!ok) {
            tw__process_clear(&process);
            if (c->is_nomem)
                return TW_E_NOMEM;
            return TW_E_MALFORMED;
        }
        json_t *scopes = json_object_get(rs, "scopeSpans");
        const char *scope_key = "scope";
        if (!scopes) {
            scopes = json_object_get(rs, "instrumentationLibrarySpans");
            scope_key = "instrumentationLibrary";
        }
        size_t sc;
        json_t *ss;
        json_array_foreach(scopes, sc, ss)
        {
            json_t *scope = json_object_get(ss, scope_key);
            json_t *sn = json_object_get(scope, "name"), *sv = json_object_get(scope, "version");
            scope_info info = {json_string_value(sn), json_string_value(sv),
                               json_is_string(sn) ? json_string_length(sn) : 0,
                               json_is_string(sv) ? json_string_length(sv) : 0};
            size_t k;
            json_t *js;
            json_array_foreach(json_object_get(ss, "spans"), k, js)
            {
                bool warn_duration = false;
                tw__span_data *span = read_span(c, js, &info, &warn_duration);
                snprintf(where, sizeof where, "resourceSpans[%zu].%s[%zu].spans[%zu]", r,
                         scope_key[0] == 's' ? "scopeSpans" : "instrumentationLibrarySpans", sc, k);
                bool go_on;
                if (!span && c->is_nomem) {
                    tw__process_clear(&process);
                    return TW_E_NOMEM;
                }
                if (!span) {
                    go_on = reject_span(c, js, where);
                } else {
                    if (warn_duration)
                        tw__wire_warn(c->in, c->line,
                                      "%s: endTimeUnixNano before start: duration 0", where);
                    go_on = c->in->emit(c->in, span, &process);
                }
                if (!go_on) {
                    tw__process_clear(&process);
                    return TW_E_STATE;
                }
            }
        }
        tw__process_clear(&process);
    }
    return TW_OK;
}

/* One document (tw__json_record_fn). */
static tw_status read_record(void *arg, json_t *doc, const char *rec, size_t len, size_t line_no,
                             const json_error_t *parse_error, tw_error **err)
{
    ctx *c = arg;
    c->line = line_no;
    c->is_nomem = false;
    c->why[0] = '\0';
    tw_status st;
    if (!doc) {
        fail(c, "invalid JSON: %s (line %d of the document)", parse_error->text, parse_error->line);
        st = TW_E_MALFORMED;
    } else {
        st = read_document(c, doc);
    }
    if (st == TW_E_MALFORMED)
        return tw__wire_reject(c->in, line_no, rec, len, "%s", c->why) ? TW_OK : TW_E_STATE;
    if (st == TW_E_NOMEM)
        tw__set_error(err, TW_E_NOMEM, "%s: out of memory", c->in->name);
    return st;
}

static tw_status read_otlp_json(FILE *stream, tw__wire_input *in, tw_error **err)
{
    ctx c = {.in = in, .unit = TW__TIME_NS};
    return tw__json_read_records(stream, in, MAX_DOC_BYTES, JSON_ALLOW_NUL, read_record, &c, err);
}

/* "resourceSpans" near the start (after an optional '[' and whitespace). */
static int sniff_otlp_json(const uint8_t *head, size_t len)
{
    size_t i = 0;
    while (i < len && (isspace(head[i]) || head[i] == '['))
        i++;
    if (i >= len || head[i] != '{')
        return 0;
    static const char key[] = "\"resourceSpans\"";
    size_t n = sizeof key - 1;
    for (size_t k = i; k + n <= len && k < i + 4096; k++) {
        if (memcmp(head + k, key, n) == 0)
            return 95;
    }
    return 0;
}

const tw__wire_decoder tw__otlp_json_decoder = {
    .name = "otlp-json",
    .summary = "OTLP/JSON ExportTraceServiceRequest documents (one, or one per line)",
    .read = read_otlp_json,
    .sniff = sniff_otlp_json,
};
