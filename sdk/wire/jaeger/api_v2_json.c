/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/jaeger/api_v2_json.c: Jaeger api_v2 protobuf-JSON -> Jaeger
 * query-API JSON (api_v2_json.h), the first half of `tracewire convert
 * --from jaeger-api-v2-json`; the jaeger-json reader does the rest with its
 * rules. Every conversion here is of syntax only: base64 ids to hex, RFC 3339
 * and durations to µs, v_type numbers or names to the type names, values to
 * the JSON types the query API uses.
 *
 * Memory: the rewritten document. Locking: none.
 */
#include "wire/jaeger/api_v2_json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tracewire/common.h"
#include "wire/core/json_common.h"

typedef struct ctx {
    const tw__api_v2_sink *sink;
    char where[96];
    bool is_nomem;
} ctx;

static void warn(ctx *c, const char *fmt, ...) TW_PRINTF(2, 3);
static void warn(ctx *c, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (c->sink->warn)
        c->sink->warn(c->sink->arg, c->where, why);
}

/* A member by its .proto name or its lowerCamelCase JSON name. */
static json_t *member(const json_t *obj, const char *snake, const char *camel)
{
    json_t *v = json_object_get(obj, snake);
    return v ? v : camel ? json_object_get(obj, camel) : NULL;
}

/* ---- times --------------------------------------------------------------------------------- */

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil algorithm). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static bool digits(const char *s, size_t n, unsigned *out)
{
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    *out = v;
    return true;
}

bool tw__rfc3339_to_ns(const char *s, size_t len, int64_t *ns)
{
    unsigned year, month, day, hour, min, sec;
    if (len < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' ||
        s[16] != ':' || !digits(s, 4, &year) || !digits(s + 5, 2, &month) ||
        !digits(s + 8, 2, &day) || !digits(s + 11, 2, &hour) || !digits(s + 14, 2, &min) ||
        !digits(s + 17, 2, &sec))
        return false;
    static const unsigned mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool is_leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (month < 1 || month > 12 || day < 1 || day > mdays[month - 1] ||
        (month == 2 && day == 29 && !is_leap) || hour > 23 || min > 59 || sec > 60)
        return false;
    size_t i = 19;
    int64_t frac_ns = 0;
    if (i < len && s[i] == '.') {
        size_t n = 0;
        int64_t scale = 100000000;
        for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, n++) {
            frac_ns += (s[i] - '0') * scale;
            scale /= 10; /* digits past nanoseconds count for nothing */
        }
        if (n == 0)
            return false;
    }
    int64_t offset_s = 0;
    if (i < len && (s[i] == 'Z' || s[i] == 'z')) {
        i++;
    } else if (i + 6 == len && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
        unsigned oh, om;
        if (!digits(s + i + 1, 2, &oh) || !digits(s + i + 4, 2, &om) || oh > 23 || om > 59)
            return false;
        offset_s = (int64_t)(oh * 3600 + om * 60) * (s[i] == '-' ? -1 : 1);
        i += 6;
    } else {
        return false;
    }
    if (i != len)
        return false;
    int64_t days = days_from_civil(year, month, day);
    int64_t secs = days * 86400 + hour * 3600 + min * 60 + (sec == 60 ? 59 : sec) - offset_s;
    if (secs > INT64_MAX / 1000000000 - 1 || secs < INT64_MIN / 1000000000 + 1)
        return false;
    *ns = secs * 1000000000 + frac_ns;
    return true;
}

static int64_t ns_to_us(int64_t ns)
{
    int64_t q = ns / 1000, r = ns % 1000;
    return r >= 500 ? q + 1 : r <= -500 ? q - 1 : q;
}

/* A duration: "1.5s" (proto3 JSON), integer ns (gogo's time.Duration), or
 * ns as a decimal string. */
static bool duration_ns(const json_t *v, int64_t *ns)
{
    if (json_is_integer(v)) {
        *ns = json_integer_value(v);
        return true;
    }
    const char *s = json_string_value(v);
    size_t len = s ? json_string_length(v) : 0;
    if (!s || len == 0)
        return false;
    if (s[len - 1] != 's') {
        char *end;
        long long n = strtoll(s, &end, 10);
        if (end != s + len)
            return false;
        *ns = n;
        return true;
    }
    /* [-]seconds[.fraction]s */
    size_t i = s[0] == '-' ? 1 : 0;
    int64_t secs = 0, frac = 0, scale = 100000000;
    size_t n_int = 0;
    for (; i < len - 1 && s[i] >= '0' && s[i] <= '9'; i++, n_int++) {
        if (secs > INT64_MAX / 10 / 1000000000)
            return false;
        secs = secs * 10 + (s[i] - '0');
    }
    if (i < len - 1 && s[i] == '.') {
        for (i++; i < len - 1 && s[i] >= '0' && s[i] <= '9'; i++) {
            frac += (s[i] - '0') * scale;
            scale /= 10;
        }
    }
    if (n_int == 0 || i != len - 1)
        return false;
    *ns = (secs * 1000000000 + frac) * (s[0] == '-' ? -1 : 1);
    return true;
}

/* ---- ids ----------------------------------------------------------------------------------- */

/* Base64 of @bytes bytes (a trace id also of 8) -> lower hex in @hex. */
static bool id_hex(const json_t *v, size_t bytes, char hex[33])
{
    const char *s = json_string_value(v);
    uint8_t raw[24];
    size_t n = 0;
    if (!s || json_string_length(v) > 32 ||
        !tw__base64_decode_into(s, json_string_length(v), false, raw, &n) ||
        !(n == bytes || (bytes == 16 && n == 8)))
        return false;
    static const char digit[] = "0123456789abcdef";
    bool is_zero = true;
    for (size_t i = 0; i < n; i++) {
        hex[2 * i] = digit[raw[i] >> 4];
        hex[2 * i + 1] = digit[raw[i] & 15];
        is_zero = is_zero && raw[i] == 0;
    }
    hex[2 * n] = '\0';
    return !is_zero;
}

/* ---- values -------------------------------------------------------------------------------- */

static const char *const type_names[5] = {"string", "bool", "int64", "float64", "binary"};

/* v_type as a number or a name; absent: STRING. -1 when unknown. */
static int value_type(const json_t *v)
{
    if (!v || json_is_null(v))
        return 0;
    if (json_is_integer(v))
        return json_integer_value(v) >= 0 && json_integer_value(v) <= 4 ? (int)json_integer_value(v)
                                                                        : -1;
    static const char *const names[5] = {"STRING", "BOOL", "INT64", "FLOAT64", "BINARY"};
    for (int i = 0; json_is_string(v) && i < 5; i++) {
        if (strcasecmp(json_string_value(v), names[i]) == 0)
            return i;
    }
    return -1;
}

/* One KeyValue as {key, type, value}; NULL (warned) when it cannot be read,
 * or on allocation failure (c->is_nomem). */
static json_t *key_value(ctx *c, const json_t *kv, const char *what)
{
    json_t *key = json_object_get(kv, "key");
    if (!json_is_string(key)) {
        warn(c, "%s: no string key, dropped", what);
        return NULL;
    }
    int type = value_type(member(kv, "v_type", "vType"));
    if (type < 0) {
        warn(c, "%s (%.60s): unknown v_type, dropped", what, json_string_value(key));
        return NULL;
    }
    json_t *value = NULL;
    switch (type) {
    case 0: {
        json_t *v = member(kv, "v_str", "vStr");
        value = v ? json_incref(v) : json_string("");
        break;
    }
    case 1: {
        json_t *v = member(kv, "v_bool", "vBool");
        value = v ? json_incref(v) : json_false();
        break;
    }
    case 2: {
        json_t *v = member(kv, "v_int64", "vInt64");
        value = v ? json_incref(v) : json_integer(0);
        break;
    }
    case 3: {
        json_t *v = member(kv, "v_float64", "vFloat64");
        value = v ? json_incref(v) : json_real(0);
        break;
    }
    case 4: {
        /* proto3 JSON bytes: standard or URL-safe base64, padded or not;
         * the query API wants standard padded base64. */
        json_t *v = member(kv, "v_binary", "vBinary");
        uint8_t *bytes = NULL;
        size_t n = 0;
        if (v &&
            (!json_is_string(v) || !tw__base64_decode(json_string_value(v), json_string_length(v),
                                                      false, &bytes, &n, &c->is_nomem))) {
            if (!c->is_nomem)
                warn(c, "%s (%.60s): v_binary is not base64, dropped", what,
                     json_string_value(key));
            return NULL;
        }
        char *b64 = tw__base64(bytes, n);
        free(bytes);
        value = b64 ? json_string(b64) : NULL;
        free(b64);
        break;
    }
    }
    json_t *out = json_object();
    if (!value || !out || !tw__json_put(out, "key", json_incref(key)) ||
        !tw__json_put(out, "type", json_string(type_names[type])) ||
        !tw__json_put(out, "value", value)) {
        if (!out)
            json_decref(value);
        json_decref(out);
        c->is_nomem = true;
        return NULL;
    }
    return out;
}

/* A list of KeyValues; NULL only on allocation failure. */
static json_t *key_values(ctx *c, const json_t *list, const char *what)
{
    json_t *out = json_array();
    if (!out) {
        c->is_nomem = true;
        return NULL;
    }
    if (list && !json_is_null(list) && !json_is_array(list))
        warn(c, "%s: not an array, ignored", what);
    size_t i;
    const json_t *kv;
    json_array_foreach(list, i, kv)
    {
        char at[64];
        snprintf(at, sizeof at, "%s[%zu]", what, i);
        json_t *item = key_value(c, kv, at);
        if (item && !tw__json_push(out, item))
            c->is_nomem = true;
        if (c->is_nomem) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
}

static json_t *process_json(ctx *c, const json_t *p)
{
    json_t *out = json_object();
    if (!out) {
        c->is_nomem = true;
        return NULL;
    }
    json_t *service = member(p, "service_name", "serviceName");
    if (json_is_string(service) && !tw__json_put(out, "serviceName", json_incref(service))) {
        json_decref(out);
        c->is_nomem = true;
        return NULL;
    }
    json_t *tags = key_values(c, member(p, "tags", NULL), "process.tags");
    if (!tags || !tw__json_put(out, "tags", tags)) {
        json_decref(out);
        c->is_nomem = true;
        return NULL;
    }
    return out;
}

/* ---- spans --------------------------------------------------------------------------------- */

/* One span in the query-API form; NULL with a reason in @why when it must
 * be refused (c->is_nomem on allocation failure). */
static json_t *span_json(ctx *c, const json_t *sp, const json_t *process, char *why,
                         size_t why_size)
{
    char trace[33], id[33];
    if (!json_is_object(sp)) {
        snprintf(why, why_size, "not a JSON object");
        return NULL;
    }
    if (!id_hex(member(sp, "trace_id", "traceId"), 16, trace)) {
        snprintf(why, why_size, "trace_id: missing, zero, or not base64 of 16 (or 8) bytes");
        return NULL;
    }
    if (!id_hex(member(sp, "span_id", "spanId"), 8, id)) {
        snprintf(why, why_size, "span_id: missing, zero, or not base64 of 8 bytes");
        return NULL;
    }
    json_t *out = json_object();
    if (!out) {
        c->is_nomem = true;
        return NULL;
    }
    json_t *refs = json_array();
    if (!tw__json_put(out, "references", refs) ||
        !tw__json_put(out, "traceID", json_string(trace)) ||
        !tw__json_put(out, "spanID", json_string(id)))
        goto nomem;
    json_t *op = member(sp, "operation_name", "operationName");
    if (op && !json_is_null(op) && !tw__json_put(out, "operationName", json_incref(op)))
        goto nomem;
    json_t *flags = member(sp, "flags", NULL);
    if (flags && !json_is_null(flags) && !tw__json_put(out, "flags", json_incref(flags)))
        goto nomem;
    size_t i;
    const json_t *r;
    json_t *list = member(sp, "references", NULL);
    if (list && !json_is_null(list) && !json_is_array(list))
        warn(c, "references: not an array, ignored");
    json_array_foreach(list, i, r)
    {
        char rt[33], rs[33];
        json_t *type = member(r, "ref_type", "refType");
        bool is_follows =
            (json_is_integer(type) && json_integer_value(type) == 1) ||
            (json_is_string(type) && strcasecmp(json_string_value(type), "FOLLOWS_FROM") == 0);
        bool is_child =
            !type || json_is_null(type) ||
            (json_is_integer(type) && json_integer_value(type) == 0) ||
            (json_is_string(type) && strcasecmp(json_string_value(type), "CHILD_OF") == 0);
        if (!is_follows && !is_child) {
            warn(c, "references[%zu].ref_type: unknown, reference dropped", i);
            continue;
        }
        if (!id_hex(member(r, "trace_id", "traceId"), 16, rt) ||
            !id_hex(member(r, "span_id", "spanId"), 8, rs)) {
            warn(c, "references[%zu]: ids are not base64 of 16 and 8 bytes, reference dropped", i);
            continue;
        }
        json_t *ref = json_object();
        if (!tw__json_push(refs, ref) ||
            !tw__json_put(ref, "refType", json_string(is_follows ? "FOLLOWS_FROM" : "CHILD_OF")) ||
            !tw__json_put(ref, "traceID", json_string(rt)) ||
            !tw__json_put(ref, "spanID", json_string(rs)))
            goto nomem;
    }
    int64_t ns;
    json_t *start = member(sp, "start_time", "startTime");
    if (start && !json_is_null(start)) {
        if (json_is_string(start) &&
            tw__rfc3339_to_ns(json_string_value(start), json_string_length(start), &ns)) {
            if (!tw__json_put(out, "startTime", json_integer(ns_to_us(ns))))
                goto nomem;
        } else {
            warn(c, "start_time: not an RFC 3339 time, ignored");
        }
    }
    json_t *dur = member(sp, "duration", NULL);
    if (dur && !json_is_null(dur)) {
        if (duration_ns(dur, &ns)) {
            if (!tw__json_put(out, "duration", json_integer(ns_to_us(ns))))
                goto nomem;
        } else {
            warn(c, "duration: not a duration (\"1.5s\" or nanoseconds), ignored");
        }
    }
    json_t *tags = key_values(c, member(sp, "tags", NULL), "tags");
    if (!tags || !tw__json_put(out, "tags", tags))
        goto nomem;
    json_t *logs = json_array();
    if (!tw__json_put(out, "logs", logs))
        goto nomem;
    const json_t *log;
    list = member(sp, "logs", NULL);
    if (list && !json_is_null(list) && !json_is_array(list))
        warn(c, "logs: not an array, ignored");
    json_array_foreach(list, i, log)
    {
        json_t *ts = member(log, "timestamp", NULL);
        if (!json_is_string(ts) ||
            !tw__rfc3339_to_ns(json_string_value(ts), json_string_length(ts), &ns)) {
            warn(c, "logs[%zu].timestamp: not an RFC 3339 time, log dropped", i);
            continue;
        }
        char what[48];
        snprintf(what, sizeof what, "logs[%zu].fields", i);
        json_t *l = json_object();
        json_t *fields = key_values(c, member(log, "fields", NULL), what);
        if (!tw__json_push(logs, l) || !tw__json_put(l, "timestamp", json_integer(ns_to_us(ns))) ||
            !tw__json_put(l, "fields", fields))
            goto nomem;
    }
    json_t *p = member(sp, "process", NULL);
    json_t *pj = process_json(c, p ? p : process);
    if (!pj || !tw__json_put(out, "process", pj))
        goto nomem;
    return out;
nomem:
    c->is_nomem = true;
    json_decref(out);
    return NULL;
}

tw__api_v2_status tw__jaeger_api_v2_to_query_json(const json_t *doc, const tw__api_v2_sink *sink,
                                                  json_t **out, char *why, size_t why_size)
{
    *out = NULL;
    ctx c = {.sink = sink};
    const json_t *batch = json_object_get(doc, "batch");
    if (!batch)
        batch = doc;
    json_t *spans_in = json_object_get(batch, "spans");
    json_t *single = NULL;
    if (json_is_object(doc) && !spans_in && member(doc, "span_id", "spanId")) {
        /* One span on its own (an array of spans is split into them). */
        single = json_array();
        if (!single || json_array_append(single, (json_t *)doc) != 0) {
            json_decref(single);
            return TW__API_V2_NOMEM;
        }
        spans_in = single;
    }
    if (!json_is_object(doc) || !json_is_array(spans_in)) {
        snprintf(why, why_size, "not a Jaeger api_v2 document: no batch, spans array or span");
        return TW__API_V2_NOT_API_V2;
    }
    const json_t *process = json_object_get(batch, "process");
    tw__api_v2_status st = TW__API_V2_OK;
    json_t *result = json_object();
    json_t *spans = json_array();
    if (!tw__json_put(result, "spans", spans))
        st = TW__API_V2_NOMEM;
    size_t i;
    const json_t *sp;
    json_array_foreach(spans_in, i, sp)
    {
        if (st != TW__API_V2_OK)
            break;
        char reason[200];
        snprintf(c.where, sizeof c.where, "spans[%zu]", i);
        json_t *one = span_json(&c, sp, process, reason, sizeof reason);
        if (c.is_nomem)
            st = TW__API_V2_NOMEM;
        else if (!one && sink->reject && !sink->reject(sink->arg, sp, c.where, reason))
            st = TW__API_V2_STOPPED;
        else if (one && !tw__json_push(spans, one))
            st = TW__API_V2_NOMEM;
    }
    json_decref(single);
    if (st != TW__API_V2_OK) {
        json_decref(result);
        return st;
    }
    *out = result;
    return TW__API_V2_OK;
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

int tw__jaeger_api_v2_sniff(const uint8_t *head, size_t len)
{
    size_t i = 0;
    while (i < len && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n'))
        i++;
    if (i >= len || (head[i] != '{' && head[i] != '['))
        return 0;
    bool has_trace = contains(head, len, "\"trace_id\"") || contains(head, len, "\"traceId\"");
    bool has_span = contains(head, len, "\"span_id\"") || contains(head, len, "\"spanId\"");
    bool has_op =
        contains(head, len, "\"operation_name\"") || contains(head, len, "\"operationName\"");
    /* OTLP/JSON has traceId and spanId, Jaeger's query JSON operationName with
     * traceID and spanID: only api_v2 has all three spellings at once. */
    if (has_trace && has_span && has_op)
        return 95;
    if (contains(head, len, "\"batch\"") && contains(head, len, "\"spans\"") &&
        (contains(head, len, "\"service_name\"") || contains(head, len, "\"serviceName\"")))
        return 92;
    return 0;
}
