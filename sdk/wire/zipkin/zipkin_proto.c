/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/zipkin/zipkin_proto.c: Zipkin v2 JSON span objects <-> proto3
 * (zipkin_proto.h), for `tracewire convert --to/--from zipkin-v2-proto`.
 * The Zipkin mapping itself is the one Zipkin v2 encoder's
 * (wire/zipkin/zipkin_v2_json.c); here only the syntax changes, in both
 * directions.
 *
 * Memory: encoding writes into the caller's buffer; decoding unpacks into
 * the caller's arena and builds one Jansson object. Locking: none.
 */
#include "wire/zipkin/zipkin_proto.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracewire/common.h"
#include "wire/core/pb_read.h"
#include "wire/core/pb_write.h"
#include "wire/core/json_common.h"
#include "wire/zipkin/zipkin_v2_json.h"
#include "zipkin/zipkin.pb-c.h"

/* Field numbers (zipkin.proto). */
enum {
    LIST_SPANS = 1,
    SPAN_TRACE_ID = 1,
    SPAN_PARENT_ID = 2,
    SPAN_ID = 3,
    SPAN_KIND = 4,
    SPAN_NAME = 5,
    SPAN_TIMESTAMP = 6,
    SPAN_DURATION = 7,
    SPAN_LOCAL = 8,
    SPAN_REMOTE = 9,
    SPAN_ANNOTATIONS = 10,
    SPAN_TAGS = 11,
    SPAN_DEBUG = 12,
    SPAN_SHARED = 13,
    EP_SERVICE = 1,
    EP_IPV4 = 2,
    EP_IPV6 = 3,
    EP_PORT = 4,
    ANN_TIMESTAMP = 1,
    ANN_VALUE = 2,
    ENTRY_KEY = 1,
    ENTRY_VALUE = 2
};

static const char *const kinds[5] = {NULL, "CLIENT", "SERVER", "PRODUCER", "CONSUMER"};

/* ---- encoding -------------------------------------------------------------------------------- */

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A lower-hex id of the JSON encoder (16 or 32 digits) as bytes. */
static bool put_hex_id(tw__buf *b, uint32_t number, const json_t *v)
{
    const char *s = json_string_value(v);
    size_t n = s ? json_string_length(v) : 0;
    uint8_t raw[16];
    if (n != 16 && n != 32)
        return false;
    for (size_t i = 0; i < n / 2; i++) {
        int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        raw[i] = (uint8_t)(hi << 4 | lo);
    }
    return tw__pb_bytes_field(b, number, raw, n / 2);
}

static bool put_json_string(tw__buf *b, uint32_t number, const json_t *v)
{
    return !json_is_string(v) ||
           tw__pb_string_field(b, number, json_string_value(v), json_string_length(v), false);
}

static bool put_endpoint(tw__buf *b, uint32_t number, const json_t *ep)
{
    if (!ep)
        return true;
    size_t at = tw__pb_begin(b, number);
    if (at == SIZE_MAX || !put_json_string(b, EP_SERVICE, json_object_get(ep, "serviceName")))
        return false;
    const char *v4 = json_string_value(json_object_get(ep, "ipv4"));
    const char *v6 = json_string_value(json_object_get(ep, "ipv6"));
    struct in_addr a4;
    struct in6_addr a6;
    if (v4 && inet_pton(AF_INET, v4, &a4) == 1 && !tw__pb_bytes_field(b, EP_IPV4, &a4, 4))
        return false;
    if (v6 && inet_pton(AF_INET6, v6, &a6) == 1 && !tw__pb_bytes_field(b, EP_IPV6, &a6, 16))
        return false;
    json_int_t port = json_integer_value(json_object_get(ep, "port"));
    if (port && !tw__pb_varint_field(b, EP_PORT, (uint64_t)(int64_t)(int32_t)port))
        return false;
    return tw__pb_end(b, at);
}

bool tw__zipkin_proto_encode_json(const json_t *js, tw__buf *out)
{
    size_t before = out->len;
    size_t at = tw__pb_begin(out, LIST_SPANS);
    const json_t *parent = json_object_get(js, "parentId");
    const char *kind = json_string_value(json_object_get(js, "kind"));
    const json_t *ts = json_object_get(js, "timestamp");
    const json_t *dur = json_object_get(js, "duration");
    uint64_t kind_number = 0;
    for (uint64_t k = 1; kind && k < 5; k++)
        kind_number = strcmp(kind, kinds[k]) == 0 ? k : kind_number;
    bool ok =
        at != SIZE_MAX && put_hex_id(out, SPAN_TRACE_ID, json_object_get(js, "traceId")) &&
        (!parent || put_hex_id(out, SPAN_PARENT_ID, parent)) &&
        put_hex_id(out, SPAN_ID, json_object_get(js, "id")) &&
        (!kind_number || tw__pb_varint_field(out, SPAN_KIND, kind_number)) &&
        put_json_string(out, SPAN_NAME, json_object_get(js, "name")) &&
        (!ts || tw__pb_fixed64_field(out, SPAN_TIMESTAMP, (uint64_t)json_integer_value(ts))) &&
        (!dur || tw__pb_varint_field(out, SPAN_DURATION, (uint64_t)json_integer_value(dur))) &&
        put_endpoint(out, SPAN_LOCAL, json_object_get(js, "localEndpoint")) &&
        put_endpoint(out, SPAN_REMOTE, json_object_get(js, "remoteEndpoint"));
    size_t i;
    const json_t *a;
    json_array_foreach(json_object_get(js, "annotations"), i, a)
    {
        if (!ok)
            break;
        size_t ann = tw__pb_begin(out, SPAN_ANNOTATIONS);
        json_int_t t = json_integer_value(json_object_get(a, "timestamp"));
        ok = ann != SIZE_MAX && (!t || tw__pb_fixed64_field(out, ANN_TIMESTAMP, (uint64_t)t)) &&
             put_json_string(out, ANN_VALUE, json_object_get(a, "value")) && tw__pb_end(out, ann);
    }
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)json_object_get(js, "tags"), key, value)
    {
        if (!ok)
            break;
        size_t entry = tw__pb_begin(out, SPAN_TAGS);
        ok = entry != SIZE_MAX && tw__pb_string_field(out, ENTRY_KEY, key, strlen(key), false) &&
             put_json_string(out, ENTRY_VALUE, value) && tw__pb_end(out, entry);
    }
    ok = ok &&
         (!json_is_true(json_object_get(js, "debug")) || tw__pb_varint_field(out, SPAN_DEBUG, 1)) &&
         (!json_is_true(json_object_get(js, "shared")) ||
          tw__pb_varint_field(out, SPAN_SHARED, 1)) &&
         tw__pb_end(out, at);
    if (!ok)
        out->len = before;
    return ok;
}

json_t *tw__zipkin_proto_span_object(const tw__span_data *span, const tw__process *process)
{
    tw__buf text;
    tw__buf_init(&text);
    json_t *js = NULL;
    /* The text holds a raw NUL only as \u0000 escapes, which Jansson keeps
     * with JSON_ALLOW_NUL (string values are counted, not terminated). */
    if (tw__zipkin_encode_span(span, process, &text))
        js = json_loadb((const char *)text.data, text.len, JSON_ALLOW_NUL, NULL);
    tw__buf_free(&text);
    return js;
}

bool tw__zipkin_proto_encode_span(const tw__span_data *span, const tw__process *process,
                                  tw__buf *out)
{
    json_t *js = tw__zipkin_proto_span_object(span, process);
    bool ok = js && tw__zipkin_proto_encode_json(js, out);
    json_decref(js);
    return ok;
}

/* ---- decoding -------------------------------------------------------------------------------- */

static void hex_of(const uint8_t *p, size_t n, char *out)
{
    static const char digit[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digit[p[i] >> 4];
        out[2 * i + 1] = digit[p[i] & 15];
    }
    out[2 * n] = '\0';
}

typedef struct dctx {
    tw__zipkin_proto_warn_fn warn;
    void *arg;
} dctx;

static void dwarn(const dctx *d, const char *fmt, ...) TW_PRINTF(2, 3);
static void dwarn(const dctx *d, const char *fmt, ...)
{
    if (!d->warn)
        return;
    char why[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    d->warn(d->arg, why);
}

/* An Endpoint as JSON; NULL when it has nothing (or on allocation failure:
 * *is_nomem). */
static json_t *endpoint_json(const dctx *d, const Zipkin__Proto3__Endpoint *ep, const char *name,
                             bool *is_nomem)
{
    if (!ep)
        return NULL;
    json_t *o = json_object();
    bool ok = o != NULL;
    if (ok && ep->service_name[0])
        ok = tw__json_put(o, "serviceName",
                          tw__json_text(ep->service_name, strlen(ep->service_name)));
    char text[INET6_ADDRSTRLEN];
    if (ok && ep->ipv4.len == 4) {
        ok = inet_ntop(AF_INET, ep->ipv4.data, text, sizeof text) &&
             tw__json_put(o, "ipv4", json_string(text));
    } else if (ep->ipv4.len) {
        dwarn(d, "%s.ipv4: %zu bytes, not 4: ignored", name, ep->ipv4.len);
    }
    if (ok && ep->ipv6.len == 16) {
        ok = inet_ntop(AF_INET6, ep->ipv6.data, text, sizeof text) &&
             tw__json_put(o, "ipv6", json_string(text));
    } else if (ep->ipv6.len) {
        dwarn(d, "%s.ipv6: %zu bytes, not 16: ignored", name, ep->ipv6.len);
    }
    if (ok && ep->port)
        ok = tw__json_put(o, "port", json_integer(ep->port));
    if (!ok) {
        json_decref(o);
        *is_nomem = true;
        return NULL;
    }
    if (json_object_size(o) == 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* A time field of a proto span (µs, unsigned): a JSON integer, or NULL
 * (absent) when 0 or beyond int64. */
static json_t *time_json(const dctx *d, uint64_t us, const char *name)
{
    if (us == 0)
        return NULL;
    if (us > INT64_MAX) {
        dwarn(d, "%s: %" PRIu64 " is past any representable time: ignored", name, us);
        return NULL;
    }
    return json_integer((json_int_t)us);
}

static bool put_opt(json_t *o, const char *key, json_t *v)
{
    return !v || tw__json_put(o, key, v);
}

json_t *tw__zipkin_proto_span_json(const uint8_t *data, size_t len, uint64_t base_offset,
                                   struct tw__pb_arena *arena, tw__zipkin_proto_warn_fn warn,
                                   void *warn_arg, char *why, size_t why_size, bool *is_nomem)
{
    dctx d = {warn, warn_arg};
    size_t n_nul = 0;
    const Zipkin__Proto3__Span *s = (const Zipkin__Proto3__Span *)tw__pb_unpack(
        &zipkin__proto3__span__descriptor, arena, data, len, 8, base_offset, why, why_size,
        is_nomem, &n_nul);
    if (!s)
        return NULL;
    if (n_nul)
        dwarn(&d, "a string holds a NUL byte: its text ends there");
    if (s->trace_id.len != 8 && s->trace_id.len != 16) {
        snprintf(why, why_size, "trace_id is %zu bytes, not 8 or 16", s->trace_id.len);
        return NULL;
    }
    if (s->id.len != 8) {
        snprintf(why, why_size, "id is %zu bytes, not 8", s->id.len);
        return NULL;
    }
    if (s->parent_id.len != 0 && s->parent_id.len != 8) {
        snprintf(why, why_size, "parent_id is %zu bytes, not 8", s->parent_id.len);
        return NULL;
    }
    char hex[33];
    json_t *o = json_object();
    if (!o)
        goto nomem;
    hex_of(s->trace_id.data, s->trace_id.len, hex);
    if (!tw__json_put(o, "traceId", json_string(hex)))
        goto nomem;
    if (s->parent_id.len) {
        hex_of(s->parent_id.data, 8, hex);
        if (!tw__json_put(o, "parentId", json_string(hex)))
            goto nomem;
    }
    hex_of(s->id.data, 8, hex);
    if (!tw__json_put(o, "id", json_string(hex)))
        goto nomem;
    if (s->kind != 0) {
        /* protobuf-c keeps an enum number it does not know as it came; the
         * wire holds any int32, so compare as unsigned and write the
         * number for the JSON reader to name in its warning. */
        uint32_t kind = (uint32_t)s->kind;
        char other[24];
        snprintf(other, sizeof other, "%" PRId32, (int32_t)kind);
        if (!tw__json_put(o, "kind", json_string(kind < 5 ? kinds[kind] : other)))
            goto nomem;
    }
    if (s->name[0] && !tw__json_put(o, "name", tw__json_text(s->name, strlen(s->name))))
        goto nomem;
    json_t *ts = time_json(&d, s->timestamp, "timestamp");
    json_t *dur = time_json(&d, s->duration, "duration");
    if (!put_opt(o, "timestamp", ts) || !put_opt(o, "duration", dur) ||
        (s->debug && !tw__json_put(o, "debug", json_true())) ||
        (s->shared && !tw__json_put(o, "shared", json_true())))
        goto nomem;
    json_t *local = endpoint_json(&d, s->local_endpoint, "local_endpoint", is_nomem);
    json_t *remote = endpoint_json(&d, s->remote_endpoint, "remote_endpoint", is_nomem);
    if (*is_nomem || !put_opt(o, "localEndpoint", local) || !put_opt(o, "remoteEndpoint", remote))
        goto nomem;
    if (s->n_annotations) {
        json_t *list = json_array();
        if (!tw__json_put(o, "annotations", list))
            goto nomem;
        for (size_t i = 0; i < s->n_annotations; i++) {
            const Zipkin__Proto3__Annotation *a = s->annotations[i];
            json_t *ann = json_object();
            char name[48];
            snprintf(name, sizeof name, "annotations[%zu].timestamp", i);
            json_t *at = time_json(&d, a->timestamp, name);
            if (!tw__json_push(list, ann) ||
                !tw__json_put(ann, "timestamp", at ? at : json_integer(0)) ||
                !tw__json_put(ann, "value", tw__json_text(a->value, strlen(a->value))))
                goto nomem;
        }
    }
    if (s->n_tags) {
        json_t *tags = json_object();
        if (!tw__json_put(o, "tags", tags))
            goto nomem;
        for (size_t i = 0; i < s->n_tags; i++) {
            const Zipkin__Proto3__Span__TagsEntry *t = s->tags[i];
            if (!tw__json_set(tags, t->key, strlen(t->key),
                              tw__json_text(t->value, strlen(t->value))))
                goto nomem;
        }
    }
    return o;
nomem:
    *is_nomem = true;
    json_decref(o);
    return NULL;
}

/* ---- detection ------------------------------------------------------------------------------ */

int tw__zipkin_proto_sniff(const uint8_t *head, size_t len)
{
    size_t pos = 0;
    uint64_t tag, n, id_len;
    /* ListOfSpans.spans, then Span.trace_id of 8 or 16 bytes... */
    if (!tw__pb_read_varint(head, len, &pos, &tag) || tag != TW__PB_TAG(LIST_SPANS, TW__PB_LEN) ||
        !tw__pb_read_varint(head, len, &pos, &n) || n < 12 ||
        !tw__pb_read_varint(head, len, &pos, &tag) ||
        tag != TW__PB_TAG(SPAN_TRACE_ID, TW__PB_LEN) ||
        !tw__pb_read_varint(head, len, &pos, &id_len) || (id_len != 8 && id_len != 16))
        return 0;
    pos += (size_t)id_len;
    if (pos + 2 > len)
        return 50; /* the head ends inside the id */
    /* ...followed by parent_id or id, 8 bytes. */
    if ((head[pos] == TW__PB_TAG(SPAN_PARENT_ID, TW__PB_LEN) ||
         head[pos] == TW__PB_TAG(SPAN_ID, TW__PB_LEN)) &&
        head[pos + 1] == 8)
        return 90;
    return 0;
}
