/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/zipkin/zipkin_v1_json_decode.c: `--from zipkin-v1-json`, Zipkin v1 span
 * JSON, in its two shapes found in real files:
 *
 *  - the Zipkin v1 API (zipkin-api.yaml): camelCase, hex string ids
 *    (traceId up to 32 digits, traceIdHigh), endpoint {serviceName, ipv4
 *    text, ipv6 text, port}, binaryAnnotations {key, value, endpoint} whose
 *    value is a string, `true` (ca/sa/ma), or a number with an old
 *    `"type": "I64"` (#1372); a "BYTES" value is base64;
 *  - the Go thrift struct marshalled with encoding/json (what Jaeger's and
 *    OTel's tests call Zipkin Thrift input): snake_case (trace_id,
 *    parent_id, trace_id_high, binary_annotations, annotation_type, host,
 *    service_name), ids as signed decimal JSON numbers (two's complement),
 *    ipv4 a signed i32, ipv6 and every binary annotation `value` base64,
 *    annotation_type a name ("I64") or a number (0..6).
 * Both fill a tw__zipkin_v1_span (wire/zipkin/zipkin_v1_thrift.h) that
 * wire/zipkin/zipkin_v1.c converts (one model span per host). Which shape a
 * binary annotation has is decided per annotation: `annotation_type`
 * present means the Thrift shape (base64 value), else the API shape.
 *
 * Typed values: a number, bool or string with a numeric type is encoded as
 * the Thrift bytes of that type (big-endian), so both shapes and the
 * Thrift reader give the same model (typed tags). Ids follow twb_parse_*
 * (--id-base; text in AUTO is hex unless it starts with '-'); a record with
 * a bad or missing id is rejected naming the field. Times are integer
 * microseconds (or --time-unit); a fractional number is rounded, with a
 * warning. A bad optional field (an endpoint port over 65535, an
 * unreadable ipv6, a non-string name) is dropped with a warning.
 *
 * Where it sits: first stage of the convert flow (bridge/convert.h); records
 * come from tw__json_stream (array, array of arrays, object, NDJSON).
 * Memory: one record (MAX_RECORD_BYTES) and its v1 span; the v1 span's
 * strings point into the record's Jansson value, freed after the emit.
 * Locking: none.
 */
#include "wire/core/error.h"
#include "wire/core/input.h"
#include "wire/core/json_stream.h"
#include "wire/formats.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "wire/zipkin/zipkin_v1.h"
#include "wire/core/json_common.h"

#define MAX_RECORD_BYTES ((size_t)16 * 1024 * 1024)

typedef struct record {
    tw__wire_input *in;
    size_t line_no;
    tw__id_base base;
    tw__zipkin_v1_span *span;
    bool is_nomem;
    char why[256]; /* reason of a reject */
} record;

/* The member @camel, else @snake (either may be NULL). */
static json_t *member(const json_t *obj, const char *camel, const char *snake)
{
    json_t *v = camel ? json_object_get(obj, camel) : NULL;
    if (!v && snake)
        v = json_object_get(obj, snake);
    return v;
}

/* ---- ids ------------------------------------------------------------------------------------ */

/* An id member: JSON string (twb_parse_*) or integer (its 64 bits). Absent
 * or null: *is_present false. False (rec->why set) when bad. @is_trace:
 * up to 128 bits. */
static bool read_id(record *rec, const json_t *v, const char *field, bool is_trace, bool allow_zero,
                    uint64_t *high, uint64_t *low, bool *is_present)
{
    *is_present = false;
    if (!v || json_is_null(v))
        return true;
    char why[160];
    *high = 0;
    if (json_is_integer(v)) {
        *low = (uint64_t)json_integer_value(v);
        if (*low == 0 && !allow_zero) {
            snprintf(rec->why, sizeof rec->why, "%s: the id is zero", field);
            return false;
        }
    } else if (json_is_string(v)) {
        bool ok = is_trace ? tw__parse_trace_id(json_string_value(v), json_string_length(v),
                                                rec->base, high, low, why, sizeof why)
                           : tw__parse_span_id(json_string_value(v), json_string_length(v),
                                               rec->base, allow_zero, low, why, sizeof why);
        if (!ok) {
            snprintf(rec->why, sizeof rec->why, "%s: %s", field, why);
            return false;
        }
    } else {
        snprintf(rec->why, sizeof rec->why, "%s: not a string or integer", field);
        return false;
    }
    *is_present = true;
    return true;
}

/* ---- times ---------------------------------------------------------------------------------- */

/* A time member as an integer (in the input's unit; emit converts). */
static bool read_time(record *rec, const json_t *v, const char *field, int64_t *out)
{
    if (!v || json_is_null(v))
        return false;
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return true;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (!isfinite(d) || fabs(d) > 9.2e18) {
            tw__wire_warn(rec->in, rec->line_no, "%s: %g out of range, ignored", field, d);
            return false;
        }
        *out = llround(d);
        if ((double)*out != d)
            tw__wire_warn(rec->in, rec->line_no, "%s: fractional %.17g rounded to %lld", field, d,
                          (long long)*out);
        return true;
    }
    tw__wire_warn(rec->in, rec->line_no, "%s: not a number, ignored", field);
    return false;
}

/* ---- endpoints ------------------------------------------------------------------------------ */

/* Base64 (standard or URL-safe, padding optional) of a JSON string into
 * the span's arena; NULL (with *len 0) when not base64. */
static uint8_t *base64_value(record *rec, const char *text, size_t len, size_t *out_len)
{
    uint8_t *out = tw__arena_alloc(&rec->span->arena, len / 4 * 3 + 3);
    if (!out) {
        rec->is_nomem = true;
        return NULL;
    }
    if (!tw__base64_decode_into(text, len, false, out, out_len)) {
        *out_len = 0;
        return NULL;
    }
    return out;
}

static void read_ipv6(record *rec, tw__zipkin_endpoint *e, const json_t *v)
{
    if (!v || json_is_null(v))
        return;
    const char *text = json_string_value(v);
    if (!text) {
        tw__wire_warn(rec->in, rec->line_no, "ipv6: not a string, left out");
        return;
    }
    if (!*text)
        return;
    if (inet_pton(AF_INET6, text, e->ipv6) == 1) {
        e->has_ipv6 = true;
        return;
    }
    size_t n = 0;
    uint8_t *bytes = base64_value(rec, text, json_string_length(v), &n);
    if (bytes && n == 16) {
        memcpy(e->ipv6, bytes, 16);
        e->has_ipv6 = true;
        return;
    }
    /* Seen in Jaeger's fixtures: base64 of the address TEXT. */
    char as_text[64];
    if (bytes && n > 0 && n < sizeof as_text) {
        memcpy(as_text, bytes, n);
        as_text[n] = '\0';
        if (inet_pton(AF_INET6, as_text, e->ipv6) == 1) {
            e->has_ipv6 = true;
            tw__wire_warn(rec->in, rec->line_no, "ipv6: base64 of the text \"%s\", read as text",
                          as_text);
            return;
        }
    }
    rec->span->bad_ipv6++;
}

/* An endpoint object (or NULL when absent, null or not an object). */
static const tw__zipkin_endpoint *read_endpoint(record *rec, const json_t *obj)
{
    if (!json_is_object(obj))
        return NULL;
    tw__zipkin_endpoint *e = tw__zipkin_v1_new_endpoint(rec->span);
    if (!e) {
        rec->is_nomem = true;
        return NULL;
    }
    const json_t *service = member(obj, "serviceName", "service_name");
    if (json_is_string(service)) {
        e->service_name = json_string_value(service);
        e->service_len = strlen(e->service_name); /* a NUL inside ends the name */
    } else if (service && !json_is_null(service)) {
        tw__wire_warn(rec->in, rec->line_no, "serviceName: not a string, left out");
    }
    const json_t *ipv4 = json_object_get(obj, "ipv4");
    if (json_is_integer(ipv4)) {
        e->ipv4 = (uint32_t)json_integer_value(ipv4); /* a signed i32 on the Thrift wire */
    } else if (json_is_string(ipv4) && json_string_length(ipv4)) {
        struct in_addr a;
        if (inet_pton(AF_INET, json_string_value(ipv4), &a) == 1)
            e->ipv4 = ntohl(a.s_addr);
        else
            tw__wire_warn(rec->in, rec->line_no, "ipv4: \"%.40s\" is not an IPv4 address, left out",
                          json_string_value(ipv4));
    }
    read_ipv6(rec, e, json_object_get(obj, "ipv6"));
    const json_t *port = json_object_get(obj, "port");
    if (json_is_integer(port)) {
        json_int_t p = json_integer_value(port);
        if (p < 0 && p >= INT16_MIN)
            p &= 0xffff; /* an i16 on the Thrift wire: unsigned in practice */
        if (p >= 0 && p <= 65535)
            e->port = (uint16_t)p;
        else
            tw__wire_warn(rec->in, rec->line_no, "port: %lld out of range, left out", (long long)p);
    }
    return e;
}

/* ---- annotations ---------------------------------------------------------------------------- */

static void read_annotations(record *rec, const json_t *list)
{
    if (!json_is_array(list)) {
        if (list && !json_is_null(list))
            tw__wire_warn(rec->in, rec->line_no, "annotations: not an array, ignored");
        return;
    }
    size_t i;
    const json_t *a;
    json_array_foreach(list, i, a)
    {
        int64_t ts = 0;
        const json_t *value = json_object_get(a, "value");
        read_time(rec, json_object_get(a, "timestamp"), "annotation timestamp", &ts);
        if (ts == 0 || !json_is_string(value) || json_string_length(value) == 0) {
            rec->span->dropped_annotations++;
            continue;
        }
        tw__zipkin_annotation *out = tw__zipkin_v1_add_annotation(rec->span);
        if (!out) {
            rec->is_nomem = true;
            return;
        }
        out->timestamp_us = ts;
        out->value = json_string_value(value);
        out->value_len = json_string_length(value);
        out->host = read_endpoint(rec, member(a, "endpoint", "host"));
    }
}

/* An annotation type: a name ("I64", any case) or a number; -1 if neither. */
static int read_type(const json_t *t)
{
    static const char *const names[] = {"BOOL", "BYTES", "I16", "I32", "I64", "DOUBLE", "STRING"};
    if (json_is_integer(t))
        return (int)(json_integer_value(t) & 0x7fffffff);
    if (json_is_string(t)) {
        for (int i = 0; i < 7; i++) {
            if (strcasecmp(json_string_value(t), names[i]) == 0)
                return i;
        }
    }
    return -1;
}

/* Writes @n bytes of @bits big-endian into the arena. */
static const uint8_t *be_bytes(record *rec, uint64_t bits, size_t n)
{
    uint8_t *out = tw__arena_alloc(&rec->span->arena, n);
    if (!out) {
        rec->is_nomem = true;
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = (uint8_t)(bits >> (8 * (n - 1 - i)));
    return out;
}

/* The API shape's value of a numeric or bool type from a JSON number, bool
 * or numeric string: the Thrift bytes of @type. False when it cannot be. */
static bool typed_value(record *rec, tw__zipkin_binary_annotation *b, const json_t *value, int type)
{
    double d = 0;
    long long i = 0;
    bool is_int = false;
    if (json_is_integer(value)) {
        i = json_integer_value(value);
        d = (double)i;
        is_int = true;
    } else if (json_is_real(value)) {
        d = json_real_value(value);
    } else if (json_is_boolean(value)) {
        i = json_is_true(value);
        d = (double)i;
        is_int = true;
    } else if (json_is_string(value)) {
        const char *text = json_string_value(value);
        char *end;
        if (type == TW__ZIPKIN_BOOL) {
            if (strcasecmp(text, "true") != 0 && strcasecmp(text, "false") != 0)
                return false;
            i = strcasecmp(text, "true") == 0;
            is_int = true;
        } else if (type == TW__ZIPKIN_DOUBLE) {
            d = strtod(text, &end);
            if (end == text || *end)
                return false;
        } else {
            errno = 0;
            i = strtoll(text, &end, 10);
            if (end == text || *end || errno)
                return false;
            is_int = true;
        }
    } else {
        return false;
    }
    uint64_t bits;
    size_t n;
    switch (type) {
    case TW__ZIPKIN_BOOL:
        bits = is_int ? (i != 0) : (d != 0);
        n = 1;
        break;
    case TW__ZIPKIN_I16:
    case TW__ZIPKIN_I32:
    case TW__ZIPKIN_I64:
        if (!is_int)
            return false;
        n = type == TW__ZIPKIN_I16 ? 2 : type == TW__ZIPKIN_I32 ? 4 : 8;
        if (n < 8 && (i < -(1LL << (n * 8 - 1)) || i >= (1LL << (n * 8 - 1)))) {
            n = 8; /* does not fit the declared width: keep the number */
            type = TW__ZIPKIN_I64;
        }
        bits = (uint64_t)i;
        break;
    default: /* DOUBLE */
        memcpy(&bits, &d, sizeof bits);
        n = 8;
        type = TW__ZIPKIN_DOUBLE;
        break;
    }
    b->value = be_bytes(rec, bits, n);
    b->value_len = n;
    b->type = type;
    return b->value != NULL;
}

static void read_binary_annotation(record *rec, const json_t *a)
{
    const json_t *key = json_object_get(a, "key");
    if (!json_is_string(key) || json_string_length(key) == 0) {
        rec->span->dropped_annotations++;
        return;
    }
    tw__zipkin_binary_annotation *b = tw__zipkin_v1_add_binary_annotation(rec->span);
    if (!b) {
        rec->is_nomem = true;
        return;
    }
    b->key = json_string_value(key);
    b->key_len = strlen(b->key);
    b->host = read_endpoint(rec, member(a, "endpoint", "host"));
    const json_t *value = json_object_get(a, "value");
    const json_t *thrift_type = json_object_get(a, "annotation_type");
    b->type = TW__ZIPKIN_STRING;
    b->value = (const uint8_t *)"";
    b->value_len = 0;
    if (thrift_type) {
        /* The Go thrift struct: value is base64 of the Thrift bytes. */
        int type = read_type(thrift_type);
        b->type = type < 0 ? TW__ZIPKIN_BYTES : type;
        if (type < 0)
            tw__wire_warn(rec->in, rec->line_no, "binary annotation '%s': unknown annotation_type",
                          b->key);
        if (json_is_string(value)) {
            size_t n = 0;
            const uint8_t *bytes =
                base64_value(rec, json_string_value(value), json_string_length(value), &n);
            if (bytes) {
                b->value = bytes;
                b->value_len = n;
            } else if (!rec->is_nomem) {
                tw__wire_warn(rec->in, rec->line_no,
                              "binary annotation '%s': value is not base64, kept as a string",
                              b->key);
                b->type = TW__ZIPKIN_STRING;
                b->value = (const uint8_t *)json_string_value(value);
                b->value_len = json_string_length(value);
            }
        }
        return;
    }
    int type = read_type(json_object_get(a, "type"));
    if (json_is_string(value) && (type < 0 || type == TW__ZIPKIN_STRING)) {
        b->value = (const uint8_t *)json_string_value(value);
        b->value_len = json_string_length(value);
        return;
    }
    if (json_is_string(value) && type == TW__ZIPKIN_BYTES) {
        size_t n = 0;
        const uint8_t *bytes =
            base64_value(rec, json_string_value(value), json_string_length(value), &n);
        if (bytes) {
            b->type = TW__ZIPKIN_BYTES;
            b->value = bytes;
            b->value_len = n;
            return;
        }
    }
    if (!value || json_is_null(value))
        return; /* an address (ca/sa/ma) or an empty string */
    if (type < 0 || type == TW__ZIPKIN_STRING || type == TW__ZIPKIN_BYTES)
        type = json_is_boolean(value)   ? TW__ZIPKIN_BOOL
               : json_is_integer(value) ? TW__ZIPKIN_I64
               : json_is_real(value)    ? TW__ZIPKIN_DOUBLE
                                        : -1;
    if (type >= 0 && typed_value(rec, b, value, type))
        return;
    if (rec->is_nomem)
        return;
    /* Anything else (an object, a bad number): its JSON text, as a string. */
    char *text = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!text) {
        rec->is_nomem = true;
        return;
    }
    size_t n = strlen(text);
    char *copy = tw__zipkin_v1_strdup(rec->span, text, n);
    free(text);
    if (!copy) {
        rec->is_nomem = true;
        return;
    }
    tw__wire_warn(rec->in, rec->line_no, "binary annotation '%s': value %s kept as a string",
                  b->key, copy);
    b->type = TW__ZIPKIN_STRING;
    b->value = (const uint8_t *)copy;
    b->value_len = n;
}

/* ---- one record ----------------------------------------------------------------------------- */

/* Fills rec->span from @obj; false with rec->why when the record is not a span. */
static bool read_span(record *rec, const json_t *obj)
{
    tw__zipkin_v1_span *s = rec->span;
    if (!json_is_object(obj)) {
        snprintf(rec->why, sizeof rec->why, "not a JSON object");
        return false;
    }
    uint64_t high = 0, unused;
    bool is_present;
    if (!read_id(rec, member(obj, "traceId", "trace_id"), "traceId", true, false, &high,
                 &s->trace_id, &is_present))
        return false;
    if (!is_present) {
        snprintf(rec->why, sizeof rec->why, "traceId: missing");
        return false;
    }
    s->trace_id_high = high;
    uint64_t explicit_high = 0;
    if (!read_id(rec, member(obj, "traceIdHigh", "trace_id_high"), "traceIdHigh", false, true,
                 &unused, &explicit_high, &is_present))
        return false;
    if (is_present && explicit_high)
        s->trace_id_high = explicit_high;
    if (!read_id(rec, json_object_get(obj, "id"), "id", false, false, &unused, &s->id, &is_present))
        return false;
    if (!is_present) {
        snprintf(rec->why, sizeof rec->why, "id: missing");
        return false;
    }
    if (!read_id(rec, member(obj, "parentId", "parent_id"), "parentId", false, true, &unused,
                 &s->parent_id, &s->has_parent_id))
        return false;
    if (s->has_parent_id && s->parent_id == 0)
        s->has_parent_id = false;

    const json_t *name = json_object_get(obj, "name");
    if (json_is_string(name)) {
        s->name = json_string_value(name);
        s->name_len = json_string_length(name);
    } else if (name && !json_is_null(name)) {
        tw__wire_warn(rec->in, rec->line_no, "name: not a string, taken as empty");
    }
    s->has_timestamp =
        read_time(rec, json_object_get(obj, "timestamp"), "timestamp", &s->timestamp_us) &&
        s->timestamp_us > 0;
    s->has_duration =
        read_time(rec, json_object_get(obj, "duration"), "duration", &s->duration_us) &&
        s->duration_us != 0;
    s->debug = json_is_true(json_object_get(obj, "debug"));

    read_annotations(rec, json_object_get(obj, "annotations"));
    const json_t *list = member(obj, "binaryAnnotations", "binary_annotations");
    if (json_is_array(list)) {
        size_t i;
        const json_t *a;
        json_array_foreach(list, i, a)
        {
            if (rec->is_nomem)
                break;
            read_binary_annotation(rec, a);
        }
    } else if (list && !json_is_null(list)) {
        tw__wire_warn(rec->in, rec->line_no, "binaryAnnotations: not an array, ignored");
    }
    return true;
}

/* One record (tw__json_record_fn): decoded into rec->span, then emitted. */
static tw_status read_record(void *arg, json_t *obj, const char *raw, size_t len, size_t line_no,
                             const json_error_t *parse_error, tw_error **err)
{
    (void)err;
    record *rec = arg;
    tw__wire_input *in = rec->in;
    rec->line_no = line_no;
    tw__zipkin_v1_span_clear(rec->span);
    rec->is_nomem = false;
    bool go_on;
    if (!obj) {
        go_on = tw__wire_reject(in, line_no, raw, len, "not valid JSON: %s", parse_error->text);
    } else if (!read_span(rec, obj)) {
        go_on = rec->is_nomem ? tw__wire_reject(in, line_no, raw, len, "out of memory")
                              : in->reject(in, line_no, raw, len, rec->why);
    } else if (rec->is_nomem) {
        go_on = tw__wire_reject(in, line_no, raw, len, "out of memory");
    } else {
        go_on = tw__zipkin_v1_emit(in, line_no, rec->span, raw, len);
    }
    return go_on ? TW_OK : TW_E_STATE;
}

static tw_status read_zipkin_v1_json(FILE *stream, tw__wire_input *in, tw_error **err)
{
    tw__zipkin_v1_span *span = malloc(sizeof *span);
    if (!span) {
        tw__set_error(err, TW_E_NOMEM, "%s: out of memory", in->name);
        return TW_E_NOMEM;
    }
    tw__zipkin_v1_span_init(span);
    record rec = {.in = in, .span = span, .base = TW__ID_AUTO};
    if (in->opts)
        rec.base = in->opts->id_base;
    tw_status status =
        tw__json_read_records(stream, in, MAX_RECORD_BYTES, 0, read_record, &rec, err);
    tw__zipkin_v1_span_clear(span);
    free(span);
    return status;
}

/* ---- detection ------------------------------------------------------------------------------ */

static bool contains(const uint8_t *head, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= len; i++) {
        if (head[i] == (uint8_t)needle[0] && memcmp(head + i, needle, n) == 0)
            return true;
    }
    return false;
}

static int sniff_zipkin_v1_json(const uint8_t *head, size_t len)
{
    size_t i = 0;
    while (i < len && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n'))
        i++;
    if (i >= len || (head[i] != '[' && head[i] != '{'))
        return 0;
    if (contains(head, len, "\"binaryAnnotations\"") ||
        contains(head, len, "\"binary_annotations\""))
        return 95;
    /* Zipkin v2, Jaeger JSON and the Dapper log (start_us) rule it out. */
    if (contains(head, len, "\"localEndpoint\"") || contains(head, len, "\"traceID\"") ||
        contains(head, len, "\"start_us\""))
        return 0;
    if (contains(head, len, "\"annotations\"") &&
        (contains(head, len, "\"endpoint\"") || contains(head, len, "\"host\"")))
        return 90;
    if (contains(head, len, "\"trace_id\"") && contains(head, len, "\"annotations\""))
        return 60;
    return 0;
}

const tw__wire_decoder tw__zipkin_v1_json_decoder = {
    .name = "zipkin-v1-json",
    .summary = "Zipkin v1 JSON spans (/api/v1/spans body, or the Thrift struct as JSON); "
               "split per host as Zipkin does",
    .read = read_zipkin_v1_json,
    .sniff = sniff_zipkin_v1_json,
};
