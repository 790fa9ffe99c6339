/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/dapper_log.c: encodes finished spans (model/span_data.h) as Dapper-style
 * span log records, one JSON object per line, and decodes such lines back
 * into the span model and its process. The file reporter (report/
 * file_sender.c) encodes on its reporter thread; the bridge decodes. The
 * record layout is tabled in wire/dapper_log.h and specified in
 * docs/dapper-log-format.md (version 1).
 *
 * Every byte of JSON goes through Jansson (the project's one JSON library,
 * docs/DEPENDENCIES.md): no hand-written escaping. Objects keep insertion
 * order (Jansson >= 2.8), so a span always encodes to the same bytes. The
 * process object is the same on every line of a tracer, so the encoder dumps
 * it once and splices the text in as the record's last member instead of
 * building and dumping it again per span (it is about half of a typical
 * line). Hex ids, base64, the UTF-8 repair of strings and the reading of
 * span.kind are the JSON encoders' shared helpers (wire/json_common.h), so
 * this log, Zipkin JSON and OTLP JSON agree on them.
 *
 * The decoder is the strict side of "tolerant reader, canonical writer": it
 * accepts what other writers plausibly produce (upper-case or short hex ids,
 * int64 as string or number, records without "kind" whose annotations say
 * it, a process "host"/"ip" without the matching tags) and rejects anything
 * that would be misread, with "line N: <json path> <reason>". A line is
 * first offered to the fast decoder (dapper_log_fast.c: no Jansson tree,
 * about a tenth of the cost), which decodes exactly as decode_record()
 * below or declines; everything it declines, every error included, is
 * decoded here, so the messages are this file's.
 *
 * Locking: none. An encoder is used by one thread at a time.
 */
#include "wire/dapper/dapper_log.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/core/error.h"
#include "wire/dapper/dapper_log_int.h"
#include "wire/core/json_common.h"

/* int64 values beyond this are written as strings: JSON readers that hold
 * numbers as doubles (JavaScript, jq) would round them (Jaeger's query JSON
 * does the same). */
#define MAX_SAFE_INTEGER INT64_C(9007199254740991)

#define DEFAULT_MAX_LINE ((size_t)16 << 20)

/* ---- ids ---------------------------------------------------------------------------------- */

/* 1..max_digits hex digits of either case, left-padded: the last 16 digits
 * are the low word (the one hex parser, wire/core/hex.h). */
bool tw__dapper_parse_hex_id(const char *s, size_t len, size_t max_digits, uint64_t *high,
                             uint64_t *low)
{
    return tw__parse_hex(s, len, max_digits, false, high, low, NULL) == TW__HEX_OK;
}

/* ---- kinds and RPC annotations ---------------------------------------------------------- */

/* Indexed by tw__span_kind (wire/json_common.h), whose first five values
 * are none, client, server, producer, consumer; "internal" has no RPC
 * annotations and is written as no kind, like an absent one. */
const char *const tw__dapper_kind_names[5] = {"", "client", "server", "producer", "consumer"};
#define KIND_NAMES tw__dapper_kind_names

/* Begin and end annotation of each kind (Zipkin v1 core annotations; WIRE-NOTES 2.2, 2.4.9):
 * the begin one at start_us, the end one at end_us. A consumer's begin is the wire receive
 * ("wr") and its end the message receive ("mr"), which is the one kept alone. */
static const char *const KIND_BEGIN[] = {"", "cs", "sr", "ms", "wr"};
static const char *const KIND_END[] = {"", "cr", "ss", "ws", "mr"};

static bool is_rpc_kind(tw__span_kind k)
{
    return k >= TW__KIND_CLIENT && k <= TW__KIND_CONSUMER;
}

/* The kind member's value: exactly one of the four lower-case names. */
tw__span_kind tw__dapper_kind_from_name(const char *s)
{
    for (int k = TW__KIND_CLIENT; k <= TW__KIND_CONSUMER; k++) {
        if (strcmp(KIND_NAMES[k], s) == 0)
            return (tw__span_kind)k;
    }
    return TW__KIND_NONE;
}

tw__span_kind tw__dapper_kind_of_annotation(const char *s)
{
    for (int k = TW__KIND_CLIENT; k <= TW__KIND_CONSUMER; k++) {
        if (strcmp(KIND_BEGIN[k], s) == 0 || strcmp(KIND_END[k], s) == 0)
            return (tw__span_kind)k;
    }
    return TW__KIND_NONE;
}

/* The span's RPC kind: that of its last span.kind tag, read as every JSON
 * encoder reads it (tw__span_kind_of: the four names in any case). */
static tw__span_kind rpc_kind_of(const tw__span_data *s)
{
    size_t index;
    tw__span_kind k = tw__span_kind_of(s, &index);
    return is_rpc_kind(k) ? k : TW__KIND_NONE;
}

static json_t *json_trace_id(uint64_t high, uint64_t low)
{
    char hex[33];
    if (high)
        tw__hex128(high, low, hex);
    else
        tw__hex64(low, hex); /* 64-bit trace ids stay 16 digits, as Jaeger prints them */
    return json_string(hex);
}

static json_t *json_span_id(uint64_t id)
{
    char hex[17];
    tw__hex64(id, hex);
    return json_string(hex);
}

static json_t *json_base64(const uint8_t *b, size_t len)
{
    char *text = tw__base64(b, len);
    json_t *j = text ? json_string(text) : NULL;
    free(text);
    return j;
}

/* ---- encoder ------------------------------------------------------------------------------ */

struct tw__dapper_log_encoder {
    char *process_json; /* `,"process":{...}}\n`: the tail of every line */
    size_t process_len;
};

static json_t *json_int64(int64_t v)
{
    if (v >= -MAX_SAFE_INTEGER && v <= MAX_SAFE_INTEGER)
        return json_integer((json_int_t)v);
    char dec[24];
    snprintf(dec, sizeof dec, "%" PRId64, v);
    return json_string(dec);
}

static json_t *json_float64(double d)
{
    if (isnan(d))
        return json_string("NaN");
    if (isinf(d))
        return json_string(d > 0 ? "Infinity" : "-Infinity");
    return json_real(d);
}

/* {"key": k, "type": t, "value": v} */
static json_t *json_tag(const tw__tag *t)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_t *value = NULL;
    const char *type = NULL;
    switch (t->type) {
    case TW_VALUE_STRING:
        type = "string";
        value = tw__json_text(t->v.str, t->len);
        break;
    case TW_VALUE_BOOL:
        type = "bool";
        value = json_boolean(t->v.boolean);
        break;
    case TW_VALUE_INT64:
        type = "int64";
        value = json_int64(t->v.i64);
        break;
    case TW_VALUE_DOUBLE:
        type = "float64";
        value = json_float64(t->v.dbl);
        break;
    case TW_VALUE_BINARY:
        type = "binary";
        value = json_base64(t->v.bin, t->len);
        break;
    }
    bool ok = type && tw__json_put(o, "key", tw__json_text(t->key, t->key_len)) &&
              tw__json_put(o, "type", json_string(type));
    if (ok)
        ok = tw__json_put(o, "value", value); /* takes value, also on failure */
    else
        json_decref(value);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *json_tags(const tw__tag *tags, size_t n)
{
    json_t *a = json_array();
    if (!a)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (!tw__json_push(a, json_tag(&tags[i]))) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *json_annotation(int64_t ts_us, const char *value)
{
    json_t *o = json_object();
    if (o && tw__json_put(o, "ts_us", json_integer(ts_us)) &&
        tw__json_put(o, "value", json_string(value)))
        return o;
    json_decref(o);
    return NULL;
}

/* The RPC annotations of WIRE-NOTES 2.4.9 (Zipkin's V2SpanConverter): the
 * begin annotation at the start, the end one at the end when the span lasted
 * (a zero duration is "unknown" in Zipkin, so only the begin is written; a
 * consumer then writes "mr" alone, at the start). */
static json_t *json_annotations(tw__span_kind kind, int64_t start_us, int64_t end_us)
{
    json_t *a = json_array();
    if (!a)
        return NULL;
    bool ok;
    if (end_us > start_us)
        ok = tw__json_push(a, json_annotation(start_us, KIND_BEGIN[kind])) &&
             tw__json_push(a, json_annotation(end_us, KIND_END[kind]));
    else
        ok = tw__json_push(a,
                           json_annotation(start_us, kind == TW__KIND_CONSUMER ? KIND_END[kind]
                                                                               : KIND_BEGIN[kind]));
    if (!ok) {
        json_decref(a);
        return NULL;
    }
    return a;
}

static json_t *json_logs(const tw__log *logs, size_t n)
{
    json_t *a = json_array();
    if (!a)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();
        if (!o || !tw__json_put(o, "ts_us", json_integer(logs[i].timestamp_us)) ||
            !tw__json_put(o, "fields", json_tags(logs[i].fields, logs[i].n_fields)) ||
            json_array_append_new(a, o) != 0) {
            json_decref(o);
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *json_refs(const tw__ref *refs, size_t n)
{
    json_t *a = json_array();
    if (!a)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();
        const char *type = refs[i].type == TW__REF_FOLLOWS_FROM ? "follows_from" : "child_of";
        if (!o || !tw__json_put(o, "type", json_string(type)) ||
            !tw__json_put(o, "trace_id",
                          json_trace_id(refs[i].trace_id_high, refs[i].trace_id_low)) ||
            !tw__json_put(o, "span_id", json_span_id(refs[i].span_id)) ||
            json_array_append_new(a, o) != 0) {
            json_decref(o);
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static int dump_to_buf(const char *buffer, size_t size, void *data)
{
    return tw__buf_append(data, buffer, size) ? 0 : -1;
}

#define DUMP_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17))

static json_t *json_process(const tw__process *p)
{
    json_t *o = json_object();
    if (!o || !tw__json_put(o, "service", tw__json_text(p->service_name, strlen(p->service_name))))
        goto fail;
    const tw__tag *host = tw__process_find_tag(p, "hostname");
    if (host && host->type == TW_VALUE_STRING &&
        !tw__json_put(o, "host", tw__json_text(host->v.str, host->len)))
        goto fail;
    const tw__tag *ip = tw__process_find_tag(p, "ip");
    if (ip && ip->type == TW_VALUE_STRING &&
        !tw__json_put(o, "ip", tw__json_text(ip->v.str, ip->len)))
        goto fail;
    if (p->n_tags && !tw__json_put(o, "tags", json_tags(p->tags, p->n_tags)))
        goto fail;
    return o;
fail:
    json_decref(o);
    return NULL;
}

tw__dapper_log_encoder *tw__dapper_log_encoder_new(const tw__process *process)
{
    if (!process)
        return NULL;
    tw__dapper_log_encoder *enc = calloc(1, sizeof(*enc));
    if (!enc)
        return NULL;
    tw__buf tail;
    tw__buf_init(&tail);
    json_t *p = json_process(process);
    bool ok = p && tw__buf_append(&tail, ",\"process\":", 11) &&
              json_dump_callback(p, dump_to_buf, &tail, DUMP_FLAGS) == 0 &&
              tw__buf_append(&tail, "}\n", 2);
    json_decref(p);
    if (!ok) {
        tw__buf_free(&tail);
        free(enc);
        return NULL;
    }
    enc->process_json = (char *)tail.data; /* the buffer's memory moves to the encoder */
    enc->process_len = tail.len;
    return enc;
}

void tw__dapper_log_encoder_free(tw__dapper_log_encoder *enc)
{
    if (!enc)
        return;
    free(enc->process_json);
    free(enc);
}

/* The record without its process, as a Jansson object; NULL on failure. */
static json_t *json_span(const tw__span_data *s, int64_t end_us)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    tw__span_kind kind = rpc_kind_of(s);
    bool ok = tw__json_put(o, "v", json_integer(TW__DAPPER_LOG_VERSION)) &&
              tw__json_put(o, "trace_id", json_trace_id(s->trace_id_high, s->trace_id_low)) &&
              tw__json_put(o, "span_id", json_span_id(s->span_id)) &&
              (!s->parent_id || tw__json_put(o, "parent_id", json_span_id(s->parent_id))) &&
              tw__json_put(o, "name", tw__json_text(s->operation, strlen(s->operation))) &&
              (kind == TW__KIND_NONE || tw__json_put(o, "kind", json_string(KIND_NAMES[kind]))) &&
              tw__json_put(o, "start_us", json_integer(s->start_us)) &&
              tw__json_put(o, "end_us", json_integer(end_us)) &&
              tw__json_put(o, "flags", json_integer((json_int_t)s->flags)) &&
              (!s->shared || tw__json_put(o, "shared", json_true())) &&
              (!s->is_duration_unknown || tw__json_put(o, "duration_unknown", json_true())) &&
              (kind == TW__KIND_NONE ||
               tw__json_put(o, "annotations", json_annotations(kind, s->start_us, end_us))) &&
              (!s->n_tags || tw__json_put(o, "tags", json_tags(s->tags, s->n_tags))) &&
              (!s->n_logs || tw__json_put(o, "logs", json_logs(s->logs, s->n_logs))) &&
              (!s->n_refs || tw__json_put(o, "refs", json_refs(s->refs, s->n_refs)));
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

bool tw__dapper_log_encode_span(tw__dapper_log_encoder *enc, const tw__span_data *span,
                                tw__buf *out)
{
    if (!enc || !span || !out || span->duration_us < 0 ||
        span->start_us > INT64_MAX - span->duration_us)
        return false;
    json_t *o = json_span(span, span->start_us + span->duration_us);
    if (!o)
        return false;
    size_t before = out->len;
    /* The object dumps as {...}; its closing brace is replaced by the
     * process member, which ends the line. */
    bool ok = json_dump_callback(o, dump_to_buf, out, DUMP_FLAGS) == 0 && out->len > before &&
              out->data[out->len - 1] == '}';
    json_decref(o);
    if (ok) {
        out->len--;
        ok = tw__buf_append(out, enc->process_json, enc->process_len);
    }
    if (!ok)
        out->len = before;
    return ok;
}

/* ---- decoder ------------------------------------------------------------------------------ */

typedef struct decoder {
    size_t line_no;
    tw_error **err;
    tw_status status; /* of the first failure */
    tw__span_data *span;
    tw__process *process;
} decoder;

static bool fail(decoder *d, const char *fmt, ...) TW_PRINTF(2, 3);

/* Records the first failure ("line N: ..."); always returns false. */
static bool fail(decoder *d, const char *fmt, ...)
{
    if (d->status != TW_OK)
        return false;
    char reason[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    d->status = TW_E_MALFORMED;
    tw__set_error(d->err, TW_E_MALFORMED, "line %zu: %s", d->line_no, reason);
    return false;
}

static bool fail_nomem(decoder *d)
{
    if (d->status == TW_OK) {
        d->status = TW_E_NOMEM;
        tw__set_error(d->err, TW_E_NOMEM, "line %zu: out of memory", d->line_no);
    }
    return false;
}

/* A string member without NUL bytes (names and keys are C strings in the model). */
static bool get_cstr(decoder *d, const json_t *v, const char *path, const char **out)
{
    if (!v)
        return fail(d, "%s is missing", path);
    if (!json_is_string(v))
        return fail(d, "%s is not a string", path);
    const char *s = json_string_value(v);
    if (strlen(s) != json_string_length(v))
        return fail(d, "%s contains a NUL character", path);
    *out = s;
    return true;
}

static bool get_int(decoder *d, const json_t *v, const char *path, int64_t *out)
{
    if (!v)
        return fail(d, "%s is missing", path);
    if (!json_is_integer(v))
        return fail(d, "%s is not an integer", path);
    *out = (int64_t)json_integer_value(v);
    return true;
}

/* The int64 of a tag: a JSON integer, or a decimal string (how the encoder
 * writes values beyond 2^53). */
static bool get_int64_value(decoder *d, const json_t *v, const char *path, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return true;
    }
    if (json_is_string(v) &&
        tw__dapper_int64_text(json_string_value(v), json_string_length(v), out))
        return true;
    return fail(d, "%s is not an int64 (an integer or a decimal string)", path);
}

bool tw__dapper_int64_text(const char *s, size_t len, int64_t *out)
{
    size_t digits = s[0] == '-' ? 1 : 0;
    bool is_decimal = len > digits && len < 22 && strspn(s + digits, "0123456789") == len - digits;
    if (is_decimal) {
        errno = 0;
        long long x = strtoll(s, NULL, 10);
        if (errno == 0) {
            *out = (int64_t)x;
            return true;
        }
    }
    return false;
}

static bool get_float64_value(decoder *d, const json_t *v, const char *path, double *out)
{
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return true;
    }
    if (json_is_string(v) && tw__dapper_float64_text(json_string_value(v), out))
        return true;
    return fail(d, "%s is not a float64 (a number, \"NaN\", \"Infinity\" or \"-Infinity\")", path);
}

bool tw__dapper_float64_text(const char *s, double *out)
{
    if (strcmp(s, "NaN") == 0) {
        *out = NAN;
        return true;
    }
    if (strcmp(s, "Infinity") == 0) {
        *out = INFINITY;
        return true;
    }
    if (strcmp(s, "-Infinity") == 0) {
        *out = -INFINITY;
        return true;
    }
    return false;
}

/* A decoded tag or field: the key and value point into the JSON tree (and
 * into @bin for binary values, which the caller frees after storing). */
typedef struct decoded_tag {
    const char *key;
    tw_value value;
    uint8_t *bin;
} decoded_tag;

/* Reads {"key", "type", "value"} at @path. Unknown members are ignored here
 * as everywhere, so that version 1 can grow optional members. */
static bool decode_tag(decoder *d, const json_t *o, const char *path, decoded_tag *out)
{
    char sub[96];
    out->bin = NULL;
    if (!json_is_object(o))
        return fail(d, "%s is not an object", path);
    snprintf(sub, sizeof sub, "%s.key", path);
    /* An empty key is kept: the SDK and Jaeger accept one, and a reader that
     * refused it would lose lines its own writer produced. */
    if (!get_cstr(d, json_object_get(o, "key"), sub, &out->key))
        return false;
    const char *type = json_string_value(json_object_get(o, "type"));
    if (!type) {
        snprintf(sub, sizeof sub, "%s.type", path);
        return fail(d, "%s is missing or not a string", sub);
    }
    const json_t *value = json_object_get(o, "value");
    snprintf(sub, sizeof sub, "%s.value", path);
    if (!value)
        return fail(d, "%s is missing", sub);
    tw_value *v = &out->value;
    memset(v, 0, sizeof(*v));
    if (strcmp(type, "string") == 0) {
        if (!json_is_string(value))
            return fail(d, "%s is not a string", sub);
        v->type = TW_VALUE_STRING;
        v->as.str = json_string_value(value);
        v->len = json_string_length(value);
    } else if (strcmp(type, "bool") == 0) {
        if (!json_is_boolean(value))
            return fail(d, "%s is not a bool", sub);
        v->type = TW_VALUE_BOOL;
        v->as.boolean = json_is_true(value);
    } else if (strcmp(type, "int64") == 0) {
        v->type = TW_VALUE_INT64;
        return get_int64_value(d, value, sub, &v->as.i64);
    } else if (strcmp(type, "float64") == 0) {
        v->type = TW_VALUE_DOUBLE;
        return get_float64_value(d, value, sub, &v->as.dbl);
    } else if (strcmp(type, "binary") == 0) {
        bool is_nomem = false;
        if (!json_is_string(value) ||
            !tw__base64_decode(json_string_value(value), json_string_length(value), true, &out->bin,
                               &v->len, &is_nomem))
            return is_nomem ? fail_nomem(d) : fail(d, "%s is not base64", sub);
        v->type = TW_VALUE_BINARY;
        v->as.bin = out->bin;
    } else {
        snprintf(sub, sizeof sub, "%s.type", path);
        return fail(d, "%s is not one of string, bool, int64, float64, binary", sub);
    }
    return true;
}

/* Decodes a tag at @path into @slot (in @arena); the caller commits it. */
static bool decode_tag_into(decoder *d, tw__arena *arena, const json_t *o, const char *path,
                            tw__tag *slot)
{
    decoded_tag t;
    if (!decode_tag(d, o, path, &t)) {
        free(t.bin);
        return false;
    }
    bool was_truncated = false;
    bool ok = tw__tag_set(arena, slot, t.key, &t.value, SIZE_MAX, &was_truncated);
    free(t.bin);
    return ok || fail_nomem(d);
}

/* An optional array member: NULL when absent, false (failed) when not an array. */
static bool get_array(decoder *d, const json_t *o, const char *key, const char *path,
                      const json_t **out)
{
    *out = json_object_get(o, key);
    if (*out && !json_is_array(*out))
        return fail(d, "%s is not an array", path);
    return true;
}

static bool decode_span_tags(decoder *d, const json_t *tags)
{
    for (size_t i = 0; tags && i < json_array_size(tags); i++) {
        char path[48];
        snprintf(path, sizeof path, "tags[%zu]", i);
        tw__tag *slot = tw__span_data_push_tag(d->span);
        if (!slot)
            return fail_nomem(d);
        if (!decode_tag_into(d, &d->span->arena, json_array_get(tags, i), path, slot))
            return false;
        d->span->n_tags++;
    }
    return true;
}

static bool decode_logs(decoder *d, const json_t *logs)
{
    for (size_t i = 0; logs && i < json_array_size(logs); i++) {
        char path[64];
        const json_t *o = json_array_get(logs, i);
        snprintf(path, sizeof path, "logs[%zu]", i);
        if (!json_is_object(o))
            return fail(d, "%s is not an object", path);
        int64_t ts = 0;
        snprintf(path, sizeof path, "logs[%zu].ts_us", i);
        if (!get_int(d, json_object_get(o, "ts_us"), path, &ts))
            return false;
        const json_t *fields;
        snprintf(path, sizeof path, "logs[%zu].fields", i);
        if (!get_array(d, o, "fields", path, &fields))
            return false;
        size_t n = json_array_size(fields);
        tw__log *log = tw__span_data_push_log(d->span, n);
        if (!log)
            return fail_nomem(d);
        log->timestamp_us = ts;
        for (size_t k = 0; k < n; k++) {
            snprintf(path, sizeof path, "logs[%zu].fields[%zu]", i, k);
            if (!decode_tag_into(d, &d->span->arena, json_array_get(fields, k), path,
                                 &log->fields[k]))
                return false;
            log->n_fields++;
        }
        d->span->n_logs++;
    }
    return true;
}

/* Annotations: core RPC ones (cs cr sr ss ms ws wr mr) give the kind;
 * any other value becomes a log {event: value} at its timestamp (as Jaeger's
 * Zipkin converter does), so records of other writers lose nothing. */
static bool decode_annotations(decoder *d, const json_t *annotations, tw__span_kind *kind)
{
    *kind = TW__KIND_NONE;
    for (size_t i = 0; annotations && i < json_array_size(annotations); i++) {
        char path[48];
        const json_t *o = json_array_get(annotations, i);
        snprintf(path, sizeof path, "annotations[%zu]", i);
        if (!json_is_object(o))
            return fail(d, "%s is not an object", path);
        int64_t ts = 0;
        snprintf(path, sizeof path, "annotations[%zu].ts_us", i);
        if (!get_int(d, json_object_get(o, "ts_us"), path, &ts))
            return false;
        const char *value;
        snprintf(path, sizeof path, "annotations[%zu].value", i);
        if (!get_cstr(d, json_object_get(o, "value"), path, &value))
            return false;
        tw__span_kind k = tw__dapper_kind_of_annotation(value);
        if (k != TW__KIND_NONE) {
            if (*kind != TW__KIND_NONE && *kind != k)
                return fail(d,
                            "%s \"%s\" belongs to a %s span but an earlier annotation to a %s "
                            "span: log each half of an RPC as its own record",
                            path, value, KIND_NAMES[k], KIND_NAMES[*kind]);
            *kind = k;
            continue;
        }
        tw__log *log = tw__span_data_push_log(d->span, 1);
        if (!log)
            return fail_nomem(d);
        log->timestamp_us = ts;
        tw_value v = {.type = TW_VALUE_STRING, .as.str = value, .len = strlen(value)};
        bool was_truncated = false;
        if (!tw__tag_set(&d->span->arena, &log->fields[0], "event", &v, SIZE_MAX, &was_truncated))
            return fail_nomem(d);
        log->n_fields = 1;
        d->span->n_logs++;
    }
    return true;
}

static bool add_span_str_tag(decoder *d, const char *key, const char *value)
{
    tw__tag *slot = tw__span_data_push_tag(d->span);
    tw_value v = {.type = TW_VALUE_STRING, .as.str = value, .len = strlen(value)};
    bool was_truncated = false;
    if (!slot || !tw__tag_set(&d->span->arena, slot, key, &v, SIZE_MAX, &was_truncated))
        return fail_nomem(d);
    d->span->n_tags++;
    return true;
}

/* The kind member, the span.kind tag and the annotations must agree; a
 * kind known only from the member or the annotations becomes a span.kind
 * tag, so the model carries it as the SDK's spans do. */
static bool reconcile_kind(decoder *d, const json_t *kind_member, tw__span_kind from_annotations)
{
    tw__span_kind kind = TW__KIND_NONE;
    if (kind_member) {
        const char *name;
        if (!get_cstr(d, kind_member, "kind", &name))
            return false;
        kind = tw__dapper_kind_from_name(name);
        if (kind == TW__KIND_NONE)
            return fail(d, "kind is not one of client, server, producer, consumer");
    }
    if (from_annotations != TW__KIND_NONE) {
        if (kind != TW__KIND_NONE && kind != from_annotations)
            return fail(d, "the annotations are those of a %s span but kind is %s",
                        KIND_NAMES[from_annotations], KIND_NAMES[kind]);
        kind = from_annotations;
    }
    if (kind == TW__KIND_NONE)
        return true;
    size_t index;
    tw__span_kind tagged = tw__span_kind_of(d->span, &index);
    if (index == SIZE_MAX)
        return add_span_str_tag(d, "span.kind", KIND_NAMES[kind]);
    if (tagged != kind)
        return fail(d, "kind %s contradicts the span.kind tag", KIND_NAMES[kind]);
    return true;
}

static bool decode_id_member(decoder *d, const json_t *o, const char *key, const char *path,
                             size_t max_digits, bool is_required, uint64_t *high, uint64_t *low)
{
    const json_t *v = json_object_get(o, key);
    *high = 0;
    *low = 0;
    if (!v) {
        if (is_required)
            return fail(d, "%s is missing", path);
        return true;
    }
    if (!json_is_string(v) || !tw__dapper_parse_hex_id(json_string_value(v), json_string_length(v),
                                                       max_digits, high, low))
        return fail(d, "%s is not 1 to %zu hex digits", path, max_digits);
    return true;
}

static bool decode_refs(decoder *d, const json_t *refs)
{
    for (size_t i = 0; refs && i < json_array_size(refs); i++) {
        char path[48];
        const json_t *o = json_array_get(refs, i);
        snprintf(path, sizeof path, "refs[%zu]", i);
        if (!json_is_object(o))
            return fail(d, "%s is not an object", path);
        const char *type;
        snprintf(path, sizeof path, "refs[%zu].type", i);
        if (!get_cstr(d, json_object_get(o, "type"), path, &type))
            return false;
        tw__ref_type rt;
        if (strcmp(type, "child_of") == 0)
            rt = TW__REF_CHILD_OF;
        else if (strcmp(type, "follows_from") == 0)
            rt = TW__REF_FOLLOWS_FROM;
        else
            return fail(d, "%s is neither child_of nor follows_from", path);
        uint64_t th, tl, sh, sl;
        snprintf(path, sizeof path, "refs[%zu].trace_id", i);
        if (!decode_id_member(d, o, "trace_id", path, 32, true, &th, &tl))
            return false;
        snprintf(path, sizeof path, "refs[%zu].span_id", i);
        if (!decode_id_member(d, o, "span_id", path, 16, true, &sh, &sl))
            return false;
        if (!tw__span_data_add_ref(d->span, rt, th, tl, sl))
            return fail_nomem(d);
    }
    return true;
}

static bool add_process_str_tag(decoder *d, const char *key, const json_t *member, const char *path)
{
    if (!member || tw__process_find_tag(d->process, key))
        return true;
    if (!json_is_string(member))
        return fail(d, "%s is not a string", path);
    tw_value v = {.type = TW_VALUE_STRING,
                  .as.str = json_string_value(member),
                  .len = json_string_length(member)};
    return tw__process_add_tag(d->process, key, &v) || fail_nomem(d);
}

static bool decode_process(decoder *d, const json_t *o)
{
    if (!o)
        return fail(d, "process is missing");
    if (!json_is_object(o))
        return fail(d, "process is not an object");
    const char *service;
    if (!get_cstr(d, json_object_get(o, "service"), "process.service", &service))
        return false;
    if (!tw__process_set_service(d->process, service))
        return fail_nomem(d);
    const json_t *tags;
    if (!get_array(d, o, "tags", "process.tags", &tags))
        return false;
    for (size_t i = 0; tags && i < json_array_size(tags); i++) {
        char path[48];
        snprintf(path, sizeof path, "process.tags[%zu]", i);
        decoded_tag t;
        bool ok = decode_tag(d, json_array_get(tags, i), path, &t);
        if (ok && !tw__process_add_tag(d->process, t.key, &t.value))
            ok = fail_nomem(d);
        free(t.bin);
        if (!ok)
            return false;
    }
    /* "host" and "ip" repeat the hostname/ip tags for readers that want them
     * at a fixed place; a writer that sent only them still gets the tags. */
    return add_process_str_tag(d, "hostname", json_object_get(o, "host"), "process.host") &&
           add_process_str_tag(d, "ip", json_object_get(o, "ip"), "process.ip");
}

static bool decode_record(decoder *d, const json_t *o)
{
    if (!json_is_object(o))
        return fail(d, "the record is not a JSON object");
    int64_t version = 0;
    const json_t *v = json_object_get(o, "v");
    if (!v)
        return fail(d, "v (the format version) is missing");
    if (!get_int(d, v, "v", &version))
        return false;
    if (version < 1 || version > TW__DAPPER_LOG_VERSION)
        return fail(d, "format version %" PRId64 " is not supported (this reader knows 1 to %d)",
                    version, TW__DAPPER_LOG_VERSION);
    tw__span_data *s = d->span;
    uint64_t unused_high;
    if (!decode_id_member(d, o, "trace_id", "trace_id", 32, true, &s->trace_id_high,
                          &s->trace_id_low) ||
        !decode_id_member(d, o, "span_id", "span_id", 16, true, &unused_high, &s->span_id) ||
        !decode_id_member(d, o, "parent_id", "parent_id", 16, false, &unused_high, &s->parent_id))
        return false;
    if (!s->trace_id_high && !s->trace_id_low)
        return fail(d, "trace_id is all zeros");
    if (!s->span_id)
        return fail(d, "span_id is all zeros");
    if (s->parent_id == s->span_id)
        return fail(d, "parent_id equals span_id");
    const char *name;
    if (!get_cstr(d, json_object_get(o, "name"), "name", &name))
        return false;
    if (!tw__span_data_set_operation(s, name, strlen(name)))
        return fail_nomem(d);
    int64_t start_us = 0, end_us = 0;
    if (!get_int(d, json_object_get(o, "start_us"), "start_us", &start_us) ||
        !get_int(d, json_object_get(o, "end_us"), "end_us", &end_us))
        return false;
    if (start_us < 0)
        return fail(d, "start_us is negative");
    if (end_us < start_us)
        return fail(d, "end_us is before start_us");
    s->start_us = start_us;
    s->duration_us = end_us - start_us;
    const json_t *flags = json_object_get(o, "flags");
    s->flags = TW__FLAG_SAMPLED; /* a logged span was sampled */
    if (flags) {
        int64_t f = 0;
        if (!get_int(d, flags, "flags", &f))
            return false;
        if (f < 0 || f > (int64_t)UINT32_MAX)
            return fail(d, "flags is not between 0 and 4294967295");
        s->flags = (uint32_t)f;
    }
    /* Optional flags of spans the bridge read from Zipkin (format 1 readers
     * that do not know them skip them). */
    const json_t *shared = json_object_get(o, "shared");
    const json_t *unknown = json_object_get(o, "duration_unknown");
    if ((shared && !json_is_boolean(shared)) || (unknown && !json_is_boolean(unknown)))
        return fail(d, "shared and duration_unknown must be true or false");
    s->shared = json_is_true(shared);
    s->is_duration_unknown = json_is_true(unknown);
    const json_t *tags, *logs, *annotations, *refs;
    tw__span_kind annotated = TW__KIND_NONE;
    return get_array(d, o, "tags", "tags", &tags) && decode_span_tags(d, tags) &&
           get_array(d, o, "logs", "logs", &logs) && decode_logs(d, logs) &&
           get_array(d, o, "annotations", "annotations", &annotations) &&
           decode_annotations(d, annotations, &annotated) &&
           reconcile_kind(d, json_object_get(o, "kind"), annotated) &&
           get_array(d, o, "refs", "refs", &refs) && decode_refs(d, refs) &&
           decode_process(d, json_object_get(o, "process"));
}

tw_status tw__dapper_log_decode(const char *line, size_t len, size_t line_no,
                                tw__span_data **span_out, tw__process *process_out, tw_error **err)
{
    decoder d = {.line_no = line_no, .err = err, .status = TW_OK};
    if (!line || !span_out || !process_out) {
        fail(&d, "no input");
        return d.status;
    }
    if (len && line[len - 1] == '\n')
        len--;
    if (len && line[len - 1] == '\r')
        len--;
    /* Jansson skips a raw NUL byte between tokens; it is no JSON text. */
    if (memchr(line, '\0', len)) {
        fail(&d, "not a JSON object: a NUL byte at column %zu",
             (size_t)((const char *)memchr(line, '\0', len) - line) + 1);
        return d.status;
    }
    /* Most lines are the SDK's own: the scanner-based decoder reads them
     * without a Jansson tree (dapper_log_fast.c); it declines every line it
     * cannot prove it reads as the code below does, errors included. */
    if (tw__dapper_log_decode_fast(line, len, span_out, process_out))
        return TW_OK;
    return tw__dapper_log_decode_jansson(line, len, line_no, span_out, process_out, err);
}

tw_status tw__dapper_log_decode_jansson(const char *line, size_t len, size_t line_no,
                                        tw__span_data **span_out, tw__process *process_out,
                                        tw_error **err)
{
    decoder d = {.line_no = line_no, .err = err, .status = TW_OK};
    json_error_t jerr;
    /* JSON_ALLOW_NUL: string values may hold U+0000 (the model keeps their
     * length). Duplicate members would make the record ambiguous. */
    json_t *root = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
    if (!root) {
        fail(&d, "not a JSON object: %s (column %d)", jerr.text, jerr.column);
        return d.status;
    }
    d.span = tw__span_data_new();
    tw__process_init(process_out);
    d.process = process_out;
    if (!d.span)
        fail_nomem(&d);
    else
        decode_record(&d, root);
    json_decref(root);
    if (d.status != TW_OK) {
        tw__span_data_unref(d.span);
        tw__process_clear(process_out);
        return d.status;
    }
    *span_out = d.span;
    return TW_OK;
}

/* ---- reader ------------------------------------------------------------------------------- */

struct tw__dapper_log_reader {
    FILE *stream;
    size_t max_line;
    size_t line_no;
    tw__buf line;
    size_t pos, end; /* unread bytes: in[pos, end) */
    bool is_eof;
    char in[65536];
};

tw__dapper_log_reader *tw__dapper_log_reader_new(FILE *stream, size_t max_line_bytes)
{
    if (!stream)
        return NULL;
    tw__dapper_log_reader *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->stream = stream;
    r->max_line = max_line_bytes ? max_line_bytes : DEFAULT_MAX_LINE;
    tw__buf_init(&r->line);
    return r;
}

void tw__dapper_log_reader_free(tw__dapper_log_reader *r)
{
    if (!r)
        return;
    tw__buf_free(&r->line);
    free(r);
}

size_t tw__dapper_log_reader_line(const tw__dapper_log_reader *r)
{
    return r ? r->line_no : 0;
}

/* Reads one line into r->line (without its "\n"). fread and memchr rather
 * than fgets, so a NUL byte in the input stays in the line (and fails its
 * decoding) instead of silently cutting it. Returns 1 for a line, 0 at the
 * end, -1 for a line over the limit (consumed and skipped), -2 on a read
 * error, -3 when out of memory. */
static int read_line(tw__dapper_log_reader *r)
{
    tw__buf_reset(&r->line);
    bool is_over = false, has_any = false;
    for (;;) {
        if (r->pos == r->end) {
            if (r->is_eof)
                break;
            r->pos = 0;
            r->end = fread(r->in, 1, sizeof r->in, r->stream);
            if (r->end == 0) {
                if (ferror(r->stream))
                    return -2;
                r->is_eof = true;
                break; /* a last line without "\n" still counts */
            }
        }
        has_any = true;
        const char *start = r->in + r->pos;
        size_t avail = r->end - r->pos;
        const char *nl = memchr(start, '\n', avail);
        size_t n = nl ? (size_t)(nl - start) : avail;
        r->pos += nl ? n + 1 : n;
        if (!is_over) {
            if (r->line.len + n > r->max_line) {
                is_over = true;
                tw__buf_reset(&r->line);
            } else if (!tw__buf_append(&r->line, start, n)) {
                return -3;
            }
        }
        if (nl)
            break;
    }
    if (!has_any)
        return 0;
    r->line_no++;
    return is_over ? -1 : 1;
}

const char *tw__dapper_log_reader_raw(const tw__dapper_log_reader *r, size_t *len)
{
    size_t n = r->line.len;
    while (n > 0 && (r->line.data[n - 1] == '\n' || r->line.data[n - 1] == '\r'))
        n--;
    *len = n;
    return n ? (const char *)r->line.data : "";
}

tw_status tw__dapper_log_reader_next(tw__dapper_log_reader *r, tw__span_data **span_out,
                                     tw__process *process_out, tw_error **err)
{
    if (!r) {
        tw__set_error(err, TW_E_INVALID_ARG, "dapper log reader: NULL reader");
        return TW_E_INVALID_ARG;
    }
    for (;;) {
        int rc = read_line(r);
        if (rc == 0)
            return TW_E_NOT_FOUND;
        if (rc == -2) {
            tw__set_error(err, TW_E_IO, "line %zu: read error: %s", r->line_no + 1,
                          strerror(errno));
            return TW_E_IO;
        }
        if (rc == -3) {
            tw__set_error(err, TW_E_NOMEM, "line %zu: out of memory", r->line_no + 1);
            return TW_E_NOMEM;
        }
        if (rc == -1) {
            tw__set_error(err, TW_E_MALFORMED, "line %zu: longer than %zu bytes: skipped",
                          r->line_no, r->max_line);
            return TW_E_MALFORMED;
        }
        const char *p = (const char *)r->line.data;
        size_t len = r->line.len;
        size_t blank = 0;
        while (blank < len && (p[blank] == ' ' || p[blank] == '\t' || p[blank] == '\r'))
            blank++;
        if (blank == len)
            continue; /* blank lines separate nothing: skipped */
        return tw__dapper_log_decode(p, len, r->line_no, span_out, process_out, err);
    }
}
