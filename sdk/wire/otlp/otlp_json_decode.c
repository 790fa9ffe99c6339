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
 * Mapping: the reading rules of wire/otlp/otlp_map.h, shared with the
 * OTLP protobuf reader; this file parses the JSON forms into the plain
 * fields those builders take:
 *   resource.attributes, scope / instrumentationLibrary (old name, also
 *   instrumentationLibrarySpans) name and version
 *   traceId, spanId      hex (any case; 32/16 digits, shorter is left-padded),
 *                        or base64 of 16/8 bytes (proto3 JSON writers)
 *   parentSpanId         absent, "" or zero: root
 *   kind                 number or name (SPAN_KIND_SERVER, SERVER)
 *   startTimeUnixNano, endTimeUnixNano  decimal string or number, ns (a
 *                        start that is a date only in µs, ms or s is read in
 *                        that unit, with a warning: wire/core/input.h)
 *   attributes           stringValue, boolValue, intValue (string or number),
 *                        doubleValue (number, or "NaN"/"Infinity"/
 *                        "-Infinity"), bytesValue (base64) -> binary;
 *                        arrayValue / kvlistValue -> a string of plain JSON
 *                        ([1,"a"], {"k":true}); an empty value ""
 *   status.code          number or name (STATUS_CODE_ERROR)
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
#include "wire/otlp/otlp_map.h"

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

/* A time in ns; *has false when absent. The value is in c->unit: ns unless
 * the span's start said otherwise (read_span). */
static bool parse_time(ctx *c, json_t *obj, const char *key, bool *has, int64_t *ns)
{
    json_t *v = json_object_get(obj, key);
    *has = v != NULL && !json_is_null(v);
    if (!*has)
        return true;
    if (!parse_int(v, true, ns)) {
        fail(c, "%s is not a time in nanoseconds", key);
        return false;
    }
    int64_t scale = c->unit == TW__TIME_S    ? 1000000000
                    : c->unit == TW__TIME_MS ? 1000000
                    : c->unit == TW__TIME_US ? 1000
                                             : 1;
    if (*ns > INT64_MAX / scale) {
        fail(c, "%s is beyond the year 2262 once read in the span's unit", key);
        return false;
    }
    *ns *= scale;
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
    return tw__otlp_span_add_attribute(target, key, value);
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

/* The SpanKind number of a kind given as a number or a name (any case,
 * with or without SPAN_KIND_); -1 for anything else. Absent: 0. */
static int64_t kind_number(json_t *kind)
{
    if (!kind || json_is_null(kind))
        return 0;
    if (json_is_integer(kind)) {
        json_int_t k = json_integer_value(kind);
        return k >= 0 && k <= 5 ? k : -1;
    }
    const char *s = json_string_value(kind);
    if (!s)
        return -1;
    if (strncasecmp(s, "SPAN_KIND_", 10) == 0)
        s += 10;
    static const char *const names[6] = {"UNSPECIFIED", "INTERNAL", "SERVER",
                                         "CLIENT",      "PRODUCER", "CONSUMER"};
    for (int64_t i = 0; i < 6; i++) {
        if (strcasecmp(s, names[i]) == 0)
            return i;
    }
    return -1;
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
        if (attrs && !json_is_null(attrs) && !json_is_array(attrs)) {
            fail(c, "%s.attributes is not an array", where);
            return false;
        }
        json_t *name = json_object_get(ev, "name");
        tw__log *log = tw__otlp_span_add_event(s, ts, json_string_value(name),
                                               json_is_string(name) ? json_string_length(name) : 0,
                                               json_array_size(attrs));
        if (!log) {
            c->is_nomem = true;
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
            bool ok = tw__otlp_event_add_attribute(s, log, json_string_value(key), &value);
            free(owned);
            if (!ok) {
                c->is_nomem = true;
                return false;
            }
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
        bool is_child_of = false;
        size_t k;
        json_t *kv;
        json_array_foreach(json_object_get(link, "attributes"), k, kv)
        {
            json_t *val = json_object_get(json_object_get(kv, "value"), "stringValue");
            if (json_is_string(val) && tw__otlp_link_attribute_is_child_of(
                                           json_string_value(json_object_get(kv, "key")),
                                           json_string_value(val), json_string_length(val)))
                is_child_of = true;
        }
        if (!tw__otlp_span_add_link(s, hi, lo, sid, is_child_of)) {
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
    tw__otlp_span_fields f;
    memset(&f, 0, sizeof f);
    uint64_t unused = 0;
    json_t *parent = json_object_get(js, "parentSpanId");
    json_t *name = json_object_get(js, "name");
    json_t *kind = json_object_get(js, "kind");
    if (!parse_id(c, "traceId", json_object_get(js, "traceId"), 16, false, &f.trace_id_high,
                  &f.trace_id_low) ||
        !parse_id(c, "spanId", json_object_get(js, "spanId"), 8, false, &unused, &f.span_id))
        return NULL;
    if (parent && !json_is_null(parent) &&
        !(json_is_string(parent) && json_string_length(parent) == 0) &&
        !parse_id(c, "parentSpanId", parent, 8, true, &unused, &f.parent_id))
        return NULL;
    if (name && !json_is_null(name) && !json_is_string(name)) {
        fail(c, "name is not a string");
        return NULL;
    }
    f.kind = kind_number(kind);
    if (f.kind < 0) {
        fail(c, "kind is not a SpanKind");
        return NULL;
    }
    /* The unit of this span's times, by the magnitude of its start: µs
     * written into the ns fields are read as µs, with a warning. */
    int64_t raw_start = 0;
    c->unit = TW__TIME_NS;
    if (parse_int(json_object_get(js, "startTimeUnixNano"), true, &raw_start))
        c->unit = tw__wire_time_unit(c->in, c->line, raw_start, TW__TIME_NS);
    if (!parse_time(c, js, "startTimeUnixNano", &f.has_start, &f.start_ns) ||
        !parse_time(c, js, "endTimeUnixNano", &f.has_end, &f.end_ns))
        return NULL;
    if (json_is_string(name)) {
        f.name = json_string_value(name);
        f.name_len = json_string_length(name);
    }
    json_t *status = json_object_get(js, "status");
    if (status && !json_is_null(status)) {
        json_t *code = json_object_get(status, "code");
        const char *code_name = json_string_value(code);
        f.status_code = json_is_integer(code) ? json_integer_value(code) : 0;
        if (code_name) /* the proto3 JSON enum name */
            f.status_code = strcasecmp(code_name, "STATUS_CODE_ERROR") == 0 ? 2
                            : strcasecmp(code_name, "STATUS_CODE_OK") == 0  ? 1
                                                                            : 0;
        json_t *msg = json_object_get(status, "message");
        if (json_is_string(msg)) {
            f.status_message = json_string_value(msg);
            f.status_message_len = json_string_length(msg);
        }
    }
    json_t *state = json_object_get(js, "traceState");
    if (json_is_string(state)) {
        f.trace_state = json_string_value(state);
        f.trace_state_len = json_string_length(state);
    }
    tw__span_data *s;
    tw__otlp_build built = tw__otlp_span_new(&f, &s, warn_duration);
    if (built == TW__OTLP_BUILD_NO_START) {
        fail(c, "startTimeUnixNano is missing or 0");
        return NULL;
    }
    if (built != TW__OTLP_BUILD_OK) {
        c->is_nomem = true;
        return NULL;
    }
    if (!add_links(c, s, json_object_get(js, "links")))
        goto fail;
    if (!each_attribute(c, json_object_get(js, "attributes"), "attributes", add_span_tag, s, NULL))
        goto fail;
    if (!tw__otlp_span_add_field_tags(s, &f, scope->name, scope->name_len, scope->version,
                                      scope->version_len)) {
        c->is_nomem = true;
        goto fail;
    }
    if (!add_events(c, s, json_object_get(js, "events")))
        goto fail;
    if (!tw__wire_admit_span(c->in, c->line, s, c->why, sizeof c->why))
        goto fail; /* rejected alone */
    return s;
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
    /* Omitted (or null) is the empty list in proto3 JSON: `{}` is an empty
     * request. An object with other members and no resourceSpans is taken
     * for another format (Jaeger's {"data": ...}) rather than read as empty. */
    if ((!all || json_is_null(all)) && json_object_size(doc) == (all ? 1u : 0u))
        return TW_OK;
    if (!json_is_array(all)) {
        fail(c, all ? "resourceSpans is not an array"
                    : "no resourceSpans array: not an OTLP ExportTraceServiceRequest");
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
        bool ok = tw__process_set_service(&process, "");
        size_t i;
        json_t *kv;
        json_array_foreach(attrs, i, kv)
        {
            tw_value v;
            char *owned;
            if (ok && tw__otlp_is_service_key(json_string_value(json_object_get(kv, "key"))) &&
                any_value(c, json_object_get(kv, "value"), &v, &owned)) {
                ok = tw__otlp_process_set_service(&process, &v);
                free(owned);
            }
        }
        c->is_nomem = c->is_nomem || !ok;
        ok = ok && each_attribute(c, attrs, where, add_process_tag, &process, "service.name");
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
