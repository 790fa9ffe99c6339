/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/wire/oracle_dapper.c: the reference of the Dapper log
 * encoder's differential suite (test_dapper_log.c): the encoder as first
 * written (a Jansson tree per record, the process dumped once per encoder),
 * following docs/dapper-log-format.md. Never linked into the library or the
 * command.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "wire/dapper/dapper_log.h"
#include "wire/dapper/dapper_log_int.h"

#define MAX_SAFE_INTEGER INT64_C(9007199254740991)

/* ---- kinds and RPC annotations ---------------------------------------------------------- */

/* Indexed by tw__span_kind (wire/model/conventions.h), whose first five values
 * are none, client, server, producer, consumer; "internal" has no RPC
 * annotations and is written as no kind, like an absent one. */
#define KIND_NAMES tw__dapper_kind_names

/* Begin and end annotation of each kind (Zipkin v1 core annotations):
 * the begin one at start_us, the end one at end_us. A consumer's begin is the wire receive
 * ("wr") and its end the message receive ("mr"), which is the one kept alone. */
#define KIND_BEGIN tw__dapper_kind_begin
#define KIND_END tw__dapper_kind_end

static bool is_rpc_kind(tw__span_kind k)
{
    return k >= TW__KIND_CLIENT && k <= TW__KIND_CONSUMER;
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

struct oracle_dapper_encoder {
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

/* The RPC annotations of Zipkin's V2SpanConverter: the
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

oracle_dapper_encoder *oracle_dapper_encoder_new(const tw__process *process)
{
    if (!process)
        return NULL;
    oracle_dapper_encoder *enc = calloc(1, sizeof(*enc));
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

void oracle_dapper_encoder_free(oracle_dapper_encoder *enc)
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

bool oracle_dapper_encode_span(oracle_dapper_encoder *enc, const tw__span_data *span, tw__buf *out)
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
