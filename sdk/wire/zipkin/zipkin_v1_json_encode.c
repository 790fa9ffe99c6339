/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/zipkin/zipkin_v1_json_encode.c: the Zipkin v1 JSON encoder
 * (`--to zipkin-v1-json`), Zipkin's v1 JSON
 * (zipkin-api.yaml definitions Span, Annotation, BinaryAnnotation,
 * Endpoint). Last stage of the convert flow
 * (bridge/convert.h): one JSON array, the body of POST /api/v1/spans,
 * streamed span by span ("[" at the first span, "," between, "]" at
 * finish; no span gives "[]").
 *
 * There is one Zipkin encoder in the project (wire/zipkin/zipkin_v2_json.c, v2): each
 * span is encoded by it first, so ids, endpoints, tag stringification, the
 * annotation text of logs and the error rule are the same as for
 * zipkin-v2-json; this file then applies Zipkin's own V2 -> V1 conversion
 * (V2SpanConverter) to that JSON:
 *   - traceId, parentId, id, debug as in v2; name "" when absent
 *   - timestamp/duration as in v2, but none on a shared span
 *   - kind + timing -> core annotations with the local endpoint: CLIENT
 *     cs/cr, SERVER sr/ss, PRODUCER ms/ws, CONSUMER wr/mr (mr alone when the
 *     span has no end); an end annotation only when the duration is known;
 *     core annotations already present count (and are not repeated)
 *   - v2 annotations -> annotations with the local endpoint
 *   - tags -> binaryAnnotations (string values) with the local endpoint;
 *     a `component` tag on a span without kind is written as `lc`
 *   - remoteEndpoint -> address annotation sa (CLIENT, or no kind), ca
 *     (SERVER), ma (PRODUCER/CONSUMER) with value true
 *   - no annotation and no tag but a local endpoint: lc = "" so that the
 *     span stays findable by service
 *   - Endpoint.serviceName is required in v1: "" when unknown
 * Jansson writes every byte. Memory: one span at a time. Single-threaded.
 */
#include "wire/formats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wire/core/json_common.h"
#include "wire/zipkin/zipkin_v2_json.h"

/* A v1 Endpoint from a v2 one: the same members, serviceName required. */
static json_t *v1_endpoint(const json_t *v2)
{
    if (!json_is_object(v2))
        return NULL;
    json_t *ep = json_deep_copy(v2);
    if (ep && !json_object_get(ep, "serviceName") &&
        json_object_set_new(ep, "serviceName", json_string("")) != 0) {
        json_decref(ep);
        return NULL;
    }
    return ep;
}

/* What V2SpanConverter's metadata pass finds: the core annotation names
 * and times, and the address annotation key. */
typedef struct {
    json_int_t start_ts, end_ts;
    const char *begin, *end, *addr;
} v1_metadata;

static void parse_metadata(const json_t *v2, v1_metadata *md)
{
    memset(md, 0, sizeof *md);
    const json_t *ts = json_object_get(v2, "timestamp");
    const json_t *dur = json_object_get(v2, "duration");
    md->start_ts = json_is_integer(ts) ? json_integer_value(ts) : 0;
    json_int_t d = json_is_integer(dur) ? json_integer_value(dur) : 0;
    /* An end beyond int64 has no v1 form: no end then (never an overflow,
     * which wrote an end before the start). */
    md->end_ts = md->start_ts > 0 && d > 0 && d <= INT64_MAX - md->start_ts ? md->start_ts + d : 0;
    const json_t *kind_json = json_object_get(v2, "kind");
    const char *kind = json_is_string(kind_json) ? json_string_value(kind_json) : NULL;
    json_int_t ms = 0, ws = 0, wr = 0, mr = 0;
    size_t i;
    const json_t *a;
    json_array_foreach(json_object_get(v2, "annotations"), i, a)
    {
        const char *value = json_string_value(json_object_get(a, "value"));
        json_int_t t = json_integer_value(json_object_get(a, "timestamp"));
        if (!value || strlen(value) != 2)
            continue;
        if (strcmp(value, "cs") == 0 || strcmp(value, "sr") == 0) {
            kind = value[0] == 'c' ? "CLIENT" : "SERVER";
            if (t < md->start_ts)
                md->start_ts = t;
        } else if (strcmp(value, "cr") == 0 || strcmp(value, "ss") == 0) {
            kind = value[0] == 'c' ? "CLIENT" : "SERVER";
            if (t > md->end_ts)
                md->end_ts = t;
        } else if (strcmp(value, "ms") == 0) {
            kind = "PRODUCER";
            ms = t;
        } else if (strcmp(value, "mr") == 0) {
            kind = "CONSUMER";
            mr = t;
        } else if (strcmp(value, "ws") == 0) {
            ws = t;
        } else if (strcmp(value, "wr") == 0) {
            wr = t;
        }
    }
    bool has_remote = json_object_get(v2, "remoteEndpoint") != NULL;
    md->addr = has_remote ? "sa" : NULL; /* the default, also for a span without kind */
    if (!kind)
        return;
    if (strcmp(kind, "CLIENT") == 0) {
        md->addr = "sa";
        md->begin = "cs";
        md->end = "cr";
    } else if (strcmp(kind, "SERVER") == 0) {
        md->addr = "ca";
        md->begin = "sr";
        md->end = "ss";
    } else if (strcmp(kind, "PRODUCER") == 0) {
        md->addr = "ma";
        md->begin = "ms";
        md->end = "ws";
        if (md->start_ts == 0 || (ms != 0 && ms < md->start_ts))
            md->start_ts = ms;
        if (md->end_ts == 0 || (ws != 0 && ws > md->end_ts))
            md->end_ts = ws;
    } else if (strcmp(kind, "CONSUMER") == 0) {
        md->addr = "ma";
        if (md->start_ts == 0 || (wr != 0 && wr < md->start_ts))
            md->start_ts = wr;
        if (md->end_ts == 0 || (mr != 0 && mr > md->end_ts))
            md->end_ts = mr;
        if (md->end_ts != 0 || wr != 0) {
            md->begin = "wr";
            md->end = "mr";
        } else {
            md->begin = "mr";
        }
    }
    if (!has_remote)
        md->addr = NULL;
}

/* Appends {timestamp, value, endpoint} to @list. */
static bool add_annotation(json_t *list, json_int_t ts, json_t *value, const json_t *ep)
{
    json_t *a = json_object();
    return tw__json_push(list, a) && tw__json_put(a, "timestamp", json_integer(ts)) &&
           tw__json_put(a, "value", value) &&
           (!ep || tw__json_put(a, "endpoint", json_deep_copy(ep)));
}

static bool add_binary(json_t *list, const char *key, json_t *value, const json_t *ep)
{
    json_t *b = json_object();
    return tw__json_push(list, b) && tw__json_put(b, "key", json_string(key)) &&
           tw__json_put(b, "value", value) &&
           (!ep || tw__json_put(b, "endpoint", json_deep_copy(ep)));
}

/* A v1 span from the v2 JSON of @s (the rules in the file comment). New
 * reference; NULL on allocation failure. */
static json_t *v1_span(const json_t *v2, const tw__span_data *s)
{
    v1_metadata md;
    parse_metadata(v2, &md);
    json_t *out = json_object();
    json_t *ep = v1_endpoint(json_object_get(v2, "localEndpoint"));
    json_t *annotations = json_array(), *binary = json_array();
    if (!out || !annotations || !binary || (json_object_get(v2, "localEndpoint") && !ep))
        goto fail;
    static const char *const copied[] = {"traceId", "parentId", "id"};
    for (size_t i = 0; i < 3; i++) {
        json_t *v = json_object_get(v2, copied[i]);
        if (v && !tw__json_put(out, copied[i], json_incref(v)))
            goto fail;
    }
    json_t *name = json_object_get(v2, "name");
    if (!tw__json_put(out, "name", name ? json_incref(name) : json_string("")))
        goto fail;
    if (!s->shared) {
        static const char *const timing[] = {"timestamp", "duration"};
        for (size_t i = 0; i < 2; i++) {
            json_t *v = json_object_get(v2, timing[i]);
            if (v && !tw__json_put(out, timing[i], json_incref(v)))
                goto fail;
        }
    }

    bool has_begin = md.start_ts != 0 && md.begin;
    bool has_end = md.end_ts != 0 && md.end;
    if (has_begin && !add_annotation(annotations, md.start_ts, json_string(md.begin), ep))
        goto fail;
    size_t i;
    const json_t *a;
    json_array_foreach(json_object_get(v2, "annotations"), i, a)
    {
        const char *value = json_string_value(json_object_get(a, "value"));
        if (!value || (has_begin && strcmp(value, md.begin) == 0) ||
            (has_end && strcmp(value, md.end) == 0))
            continue;
        if (!add_annotation(annotations, json_integer_value(json_object_get(a, "timestamp")),
                            json_incref(json_object_get(a, "value")), ep))
            goto fail;
    }
    if (has_end && !add_annotation(annotations, md.end_ts, json_string(md.end), ep))
        goto fail;

    const json_t *tags = json_object_get(v2, "tags");
    bool has_kind = json_object_get(v2, "kind") != NULL;
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)tags, key, value)
    {
        const char *v1_key = !has_kind && strcmp(key, "component") == 0 ? "lc" : key;
        if (!add_binary(binary, v1_key, json_incref(value), ep))
            goto fail;
    }
    if (json_array_size(annotations) == 0 && json_object_size(tags) == 0 && ep &&
        !add_binary(binary, "lc", json_string(""), ep))
        goto fail;
    if (md.addr) {
        json_t *remote = v1_endpoint(json_object_get(v2, "remoteEndpoint"));
        bool ok = remote && add_binary(binary, md.addr, json_true(), remote);
        json_decref(remote);
        if (!ok)
            goto fail;
    }
    if ((json_array_size(annotations) &&
         !tw__json_put(out, "annotations", json_incref(annotations))) ||
        (json_array_size(binary) && !tw__json_put(out, "binaryAnnotations", json_incref(binary))))
        goto fail;
    json_t *debug = json_object_get(v2, "debug");
    if (debug && !tw__json_put(out, "debug", json_incref(debug)))
        goto fail;
    json_decref(annotations);
    json_decref(binary);
    json_decref(ep);
    return out;
fail:
    json_decref(annotations);
    json_decref(binary);
    json_decref(ep);
    json_decref(out);
    return NULL;
}

/* ---- the document ------------------------------------------------------------------------- */

struct tw__doc_encoder {
    size_t n_written;
    tw__buf v2; /* one span's v2 text */
};

static tw__doc_encoder *doc_create(const tw__wire_options *opts, tw__span_reject_fn reject,
                                   void *reject_data)
{
    (void)opts;
    (void)reject; /* every span the model holds has a Zipkin v1 JSON form */
    (void)reject_data;
    return calloc(1, sizeof(tw__doc_encoder));
}

static void doc_destroy(tw__doc_encoder *e)
{
    if (!e)
        return;
    tw__buf_free(&e->v2);
    free(e);
}

static bool doc_encode(tw__doc_encoder *e, const tw__wire_span *spans, size_t n, tw__buf *out)
{
    for (size_t i = 0; i < n; i++) {
        /* The v2 JSON of the one Zipkin encoder, read back as a tree. */
        tw__buf_reset(&e->v2);
        json_t *v2 = NULL;
        if (tw__zipkin_encode_span(spans[i].data, spans[i].process, &e->v2))
            v2 = json_loadb((const char *)e->v2.data, e->v2.len, JSON_ALLOW_NUL, NULL);
        json_t *v1 = v2 ? v1_span(v2, spans[i].data) : NULL;
        json_decref(v2);
        tw__buf_reset(&e->v2);
        bool ok = v1 && tw__json_dump(v1, &e->v2);
        json_decref(v1);
        ok = ok && tw__buf_append(out, e->n_written++ ? "," : "[", 1) &&
             tw__buf_append(out, e->v2.data, e->v2.len);
        if (!ok)
            return false;
    }
    return true;
}

static bool doc_finish(tw__doc_encoder *e, tw__buf *out)
{
    const char *end = e->n_written ? "]\n" : "[]\n";
    return tw__buf_append(out, end, strlen(end));
}

const tw__wire_encoder tw__zipkin_v1_json_encoder = {
    .name = "zipkin-v1-json",
    .summary = "Zipkin v1 JSON: one array of spans with annotations and binaryAnnotations "
               "(the body of POST /api/v1/spans)",
    .create = doc_create,
    .encode = doc_encode,
    .finish = doc_finish,
    .destroy = doc_destroy,
};
