/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/zipkin_text.c: the direct Zipkin v2 writer: appends to a buffer
 * exactly the bytes of tw__json_dump(tw__zipkin_span_json(span, process)),
 * without building a Jansson tree. Every rule is zipkin_json.h's (read
 * zipkin_json.c beside this file: the two follow the same steps in the
 * same order). The bridge's zipkin-v2-json writer uses it per span.
 *
 * Why it departs from DESIGN's "never hand-write JSON escaping": measured
 * with callgrind on `tracewire convert --from dapper --to zipkin-v2-json`
 * (5,000 realistic 900-byte lines), building and dumping the Jansson tree
 * cost about 120,000 instructions per span, a third of the whole run; the
 * issue's target is 500k spans/s on one core. This writer does the same in
 * about 7,800 (same file, same measure). The guard is the differential suite
 * tests/unit/wire/test_zipkin_text.c, which compares its bytes with the
 * Jansson path's for every span of a large random corpus (control
 * characters, invalid UTF-8, NUL bytes, repeated keys, every error rule).
 *
 * What it does not do itself: a span whose tag keys are not valid UTF-8 (or
 * hold NUL bytes), or with more than FAST_MAX_TAGS process and span tags
 * together, is written through the Jansson path (its key repair and hash
 * table); the result is the same bytes.
 *
 * Memory: a scratch buffer per call for stringified values. Locking: none.
 */
#include "wire/zipkin/zipkin_v2_json.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "wire/core/json_common.h"

#define FAST_MAX_TAGS 64

/* ---- an ordered map with Jansson's object semantics -------------------------------------- */

/* How a tags member's value is written. */
typedef enum { VALUE_TAG, VALUE_MESSAGE, VALUE_TRUE } value_mode;

typedef struct {
    const char *key;
    size_t key_len;
    const tw__tag *tag; /* the value (VALUE_TAG) or the message (VALUE_MESSAGE) */
    value_mode mode;
} member;

/* json_object_set_new on an existing key replaces the value in place (the
 * key keeps its position); json_object_del removes it, and a later set
 * appends it at the end. */
typedef struct {
    member m[FAST_MAX_TAGS];
    size_t n;
} tag_map;

static size_t map_find(const tag_map *map, const char *key, size_t key_len)
{
    for (size_t i = 0; i < map->n; i++) {
        if (map->m[i].key_len == key_len && memcmp(map->m[i].key, key, key_len) == 0)
            return i;
    }
    return SIZE_MAX;
}

static void map_set(tag_map *map, const char *key, size_t key_len, const tw__tag *tag,
                    value_mode mode)
{
    size_t i = map_find(map, key, key_len);
    if (i == SIZE_MAX) {
        i = map->n++; /* n <= FAST_MAX_TAGS: the caller bounds the tags */
        map->m[i].key = key;
        map->m[i].key_len = key_len;
    }
    map->m[i].tag = tag;
    map->m[i].mode = mode;
}

static void map_del(tag_map *map, const char *key)
{
    size_t i = map_find(map, key, strlen(key));
    if (i == SIZE_MAX)
        return;
    memmove(&map->m[i], &map->m[i + 1], (map->n - i - 1) * sizeof map->m[0]);
    map->n--;
}

/* ---- endpoints ------------------------------------------------------------------------------ */

/* An endpoint's members (serviceName, ipv4, ipv6, port: at most 4), with
 * the same replace-in-place rule as tag_map. */
typedef struct {
    const char *key;
    const char *text; /* serviceName (repaired when written), address text */
    size_t len;
    int64_t port;
    char buf[INET6_ADDRSTRLEN];
} ep_member;

typedef struct {
    ep_member m[4];
    size_t n;
} endpoint;

static ep_member *ep_slot(endpoint *ep, const char *key)
{
    for (size_t i = 0; i < ep->n; i++) {
        if (strcmp(ep->m[i].key, key) == 0)
            return &ep->m[i];
    }
    ep_member *m = &ep->m[ep->n++];
    m->key = key;
    return m;
}

static void ep_text(endpoint *ep, const char *key, const char *text, size_t len)
{
    ep_member *m = ep_slot(ep, key);
    m->text = text;
    m->len = len;
}

static void ep_copy(endpoint *ep, const char *key, const char *text)
{
    ep_member *m = ep_slot(ep, key);
    size_t len = strlen(text);
    memcpy(m->buf, text, len + 1);
    m->text = m->buf;
    m->len = len;
}

/* zipkin_json.c set_address(), writing into @ep. */
static bool ep_address(endpoint *ep, const tw__tag *t)
{
    char text[INET6_ADDRSTRLEN];
    struct in_addr v4;
    struct in6_addr v6;
    if (t->type == TW_VALUE_STRING) {
        if (inet_pton(AF_INET, t->v.str, &v4) == 1) {
            ep_text(ep, "ipv4", t->v.str, strlen(t->v.str));
            return true;
        }
        if (inet_pton(AF_INET6, t->v.str, &v6) == 1 &&
            inet_ntop(AF_INET6, &v6, text, sizeof text)) {
            ep_copy(ep, "ipv6", text);
            return true;
        }
        return false;
    }
    if (t->type == TW_VALUE_INT64 && t->v.i64 >= INT32_MIN && t->v.i64 <= (int64_t)UINT32_MAX) {
        v4.s_addr = htonl((uint32_t)t->v.i64);
        if (!inet_ntop(AF_INET, &v4, text, sizeof text))
            return false;
        ep_copy(ep, "ipv4", text);
        return true;
    }
    if (t->type == TW_VALUE_BINARY && t->len == 16) {
        memcpy(&v6, t->v.bin, 16);
        if (!inet_ntop(AF_INET6, &v6, text, sizeof text))
            return false;
        ep_copy(ep, "ipv6", text);
        return true;
    }
    return false;
}

/* zipkin_json.c set_port(). */
static bool ep_port(endpoint *ep, const tw__tag *t)
{
    int64_t port = -1;
    if (t->type == TW_VALUE_INT64) {
        port = t->v.i64;
    } else if (t->type == TW_VALUE_STRING && t->len > 0 && t->len <= 5 &&
               strspn(t->v.str, "0123456789") == t->len) {
        port = strtol(t->v.str, NULL, 10);
    }
    if (port < 1 || port > 65535)
        return false;
    ep_slot(ep, "port")->port = port;
    return true;
}

/* ---- output ------------------------------------------------------------------------------- */

/* Appends; the common case (room left: encode() reserves ahead) inline. */
static inline bool put(tw__buf *out, const char *s, size_t len)
{
    if (out->cap - out->len < len)
        return tw__buf_append(out, s, len);
    memcpy(out->data + out->len, s, len);
    out->len += len;
    return true;
}

#define PUT_LIT(out, lit) put((out), (lit), sizeof(lit) - 1)

/* A json_integer as Jansson dumps it ("%lld"). */
static bool put_int(tw__buf *out, int64_t v)
{
    static const char pairs[] =
        "00010203040506070809101112131415161718192021222324252627282930313233"
        "34353637383940414243444546474849505152535455565758596061626364656667"
        "6869707172737475767778798081828384858687888990919293949596979899";
    char digits[24];
    char *p = digits + sizeof digits;
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    while (mag >= 100) { /* two digits per division */
        unsigned r = (unsigned)(mag % 100);
        mag /= 100;
        p -= 2;
        memcpy(p, pairs + 2 * r, 2);
    }
    if (mag >= 10) {
        p -= 2;
        memcpy(p, pairs + 2 * mag, 2);
    } else {
        *--p = (char)('0' + mag);
    }
    if (v < 0)
        *--p = '-';
    return put(out, p, (size_t)(digits + sizeof digits - p));
}

static bool put_endpoint(tw__buf *out, const endpoint *ep)
{
    for (size_t i = 0; i < ep->n; i++) {
        const ep_member *m = &ep->m[i];
        if (!put(out, i ? ",\"" : "{\"", 2) || !put(out, m->key, strlen(m->key)) ||
            !PUT_LIT(out, "\":"))
            return false;
        bool ok = strcmp(m->key, "port") == 0 ? put_int(out, m->port)
                                              : tw__json_append_text(out, m->text, m->len);
        if (!ok)
            return false;
    }
    return PUT_LIT(out, "}");
}

/* A JSON string of the text of a typed value (zipkin_json.c value_json). */
static bool put_value(tw__buf *out, const tw__tag *t, tw__buf *text)
{
    if (t->type == TW_VALUE_STRING)
        return tw__json_append_text(out, t->v.str, t->len);
    if (t->type == TW_VALUE_INT64) /* decimal digits need no escaping */
        return PUT_LIT(out, "\"") && put_int(out, t->v.i64) && PUT_LIT(out, "\"");
    tw__buf_reset(text);
    return tw__value_text(t, text) &&
           tw__json_append_text(out, (const char *)text->data, text->len);
}

/* zipkin_json.c annotation_text(). */
static bool annotation_text(const tw__log *log, tw__buf *text)
{
    tw__buf_reset(text);
    const tw__tag *event = NULL;
    for (size_t f = 0; f < log->n_fields && !event; f++) {
        if (tw__tag_key_is(&log->fields[f], "event") && log->fields[f].type == TW_VALUE_STRING)
            event = &log->fields[f];
    }
    if (event && !tw__buf_append(text, event->v.str, event->len))
        return false;
    for (size_t f = 0; f < log->n_fields; f++) {
        const tw__tag *field = &log->fields[f];
        if (field == event)
            continue;
        if ((text->len > 0 && !tw__buf_append(text, " ", 1)) ||
            !tw__buf_append(text, field->key, field->key_len) || !tw__buf_append(text, "=", 1) ||
            !tw__value_text(field, text))
            return false;
    }
    return true;
}

/* Whether a tag key can go into tag_map as it is: valid UTF-8 without NUL
 * (Jansson would repair or cut it; the Jansson path handles those). */
static bool is_plain_key(const tw__tag *t)
{
    const unsigned char *k = (const unsigned char *)t->key;
    for (size_t i = 0; i < t->key_len;) {
        if (k[i] == 0)
            return false;
        if (k[i] < 0x80) {
            i++;
            continue;
        }
        size_t n = tw__utf8_sequence(k + i, t->key_len - i);
        if (n == 0)
            return false;
        i += n;
    }
    return true;
}

static const char *kind_name(tw__span_kind kind)
{
    switch (kind) {
    case TW__KIND_CLIENT:
        return "CLIENT";
    case TW__KIND_SERVER:
        return "SERVER";
    case TW__KIND_PRODUCER:
        return "PRODUCER";
    case TW__KIND_CONSUMER:
        return "CONSUMER";
    case TW__KIND_NONE:
    case TW__KIND_INTERNAL:
        break;
    }
    return NULL;
}

/* The Jansson path, appended. */
static bool append_via_jansson(const tw__span_data *s, const tw__process *p, tw__buf *out)
{
    json_t *json = tw__zipkin_span_json(s, p);
    size_t size = tw__json_size(json);
    bool ok = size > 0 && tw__buf_reserve(out, out->len + size) &&
              json_dumpb(json, (char *)out->data + out->len, size, TW__JSON_FLAGS) == size;
    json_decref(json);
    if (ok)
        out->len += size;
    return ok;
}

/* The body of tw__zipkin_encode_span_text once the span is known to suit
 * the direct path; @text is scratch. */
static bool encode(const tw__span_data *s, const tw__process *p, tw__buf *out, tw__buf *text)
{
    bool is_winner[FAST_MAX_TAGS], is_mapped[FAST_MAX_TAGS];
    memset(is_mapped, 0, sizeof is_mapped);
    /* Room for a typical span, so that put() rarely has to grow. */
    if (out->cap - out->len < 2048 &&
        !tw__buf_reserve(out, out->len + (out->cap > 2048 ? out->cap : 2048)))
        return false;
    if (!tw__last_by_key(s->tags, s->n_tags, is_winner))
        return false;

    char hex[33];
    if (s->trace_id_high)
        tw__hex128(s->trace_id_high, s->trace_id_low, hex);
    else
        tw__hex64(s->trace_id_low, hex);
    if (!PUT_LIT(out, "{\"traceId\":\"") || !put(out, hex, strlen(hex)) || !PUT_LIT(out, "\""))
        return false;
    if (s->parent_id && s->parent_id != s->span_id) {
        tw__hex64(s->parent_id, hex);
        if (!PUT_LIT(out, ",\"parentId\":\"") || !put(out, hex, 16) || !PUT_LIT(out, "\""))
            return false;
    }
    tw__hex64(s->span_id, hex);
    if (!PUT_LIT(out, ",\"id\":\"") || !put(out, hex, 16) || !PUT_LIT(out, "\""))
        return false;

    size_t kind_index;
    const char *kind = kind_name(tw__span_kind_of(s, &kind_index));
    if (kind) {
        for (size_t i = 0; i < s->n_tags; i++)
            is_mapped[i] = is_mapped[i] || tw__tag_key_is(&s->tags[i], "span.kind");
        if (!PUT_LIT(out, ",\"kind\":\"") || !put(out, kind, strlen(kind)) || !PUT_LIT(out, "\""))
            return false;
    }
    if (s->operation && *s->operation &&
        (!PUT_LIT(out, ",\"name\":") ||
         !tw__json_append_text(out, s->operation, strlen(s->operation))))
        return false;
    if (s->start_us > 0) {
        if (!PUT_LIT(out, ",\"timestamp\":") || !put_int(out, s->start_us))
            return false;
        if (!s->is_duration_unknown && (!PUT_LIT(out, ",\"duration\":") ||
                                        !put_int(out, s->duration_us > 0 ? s->duration_us : 1)))
            return false;
    } else if (s->duration_us > 0 && !s->is_duration_unknown &&
               (!PUT_LIT(out, ",\"duration\":") || !put_int(out, s->duration_us))) {
        return false;
    }
    if ((s->flags & TW__FLAG_DEBUG) && !PUT_LIT(out, ",\"debug\":true"))
        return false;
    if (s->shared && kind && strcmp(kind, "SERVER") == 0 && !PUT_LIT(out, ",\"shared\":true"))
        return false;

    /* localEndpoint (zipkin_json.c local_endpoint). */
    enum { LOCAL_IP, LOCAL_IPV6, LOCAL_PORT, N_LOCAL };
    size_t local_used[N_LOCAL] = {SIZE_MAX, SIZE_MAX, SIZE_MAX};
    if (p) {
        endpoint local = {.n = 0};
        if (p->service_name && *p->service_name)
            ep_text(&local, "serviceName", p->service_name, strlen(p->service_name));
        static const char *const keys[N_LOCAL] = {"ip", "ipv6", "port"};
        for (int k = 0; k < N_LOCAL; k++) {
            for (size_t i = p->n_tags; i > 0; i--) {
                const tw__tag *t = &p->tags[i - 1];
                if (!tw__tag_key_is(t, keys[k]))
                    continue;
                if (k == LOCAL_PORT ? ep_port(&local, t) : ep_address(&local, t))
                    local_used[k] = i - 1;
                break;
            }
        }
        if (local.n && (!PUT_LIT(out, ",\"localEndpoint\":") || !put_endpoint(out, &local)))
            return false;
    }

    /* remoteEndpoint (zipkin_json.c remote_endpoint). */
    endpoint remote = {.n = 0};
    for (size_t i = 0; i < s->n_tags; i++) {
        const tw__tag *t = &s->tags[i];
        if (!is_winner[i] || strncmp(t->key, "peer.", 5) != 0)
            continue;
        bool is_used = false;
        if (tw__tag_key_is(t, "peer.service")) {
            is_used = t->type == TW_VALUE_STRING && t->len > 0;
            if (is_used)
                ep_text(&remote, "serviceName", t->v.str, t->len);
        } else if (tw__tag_key_is(t, "peer.ipv4")) {
            struct in_addr v4;
            is_used = (t->type == TW_VALUE_INT64 ||
                       (t->type == TW_VALUE_STRING && inet_pton(AF_INET, t->v.str, &v4) == 1)) &&
                      ep_address(&remote, t);
        } else if (tw__tag_key_is(t, "peer.ipv6")) {
            struct in6_addr v6;
            is_used = ((t->type == TW_VALUE_BINARY && t->len == 16) ||
                       (t->type == TW_VALUE_STRING && inet_pton(AF_INET6, t->v.str, &v6) == 1)) &&
                      ep_address(&remote, t);
        } else if (tw__tag_key_is(t, "peer.port")) {
            is_used = ep_port(&remote, t);
        }
        is_mapped[i] = is_used;
    }
    if (remote.n && (!PUT_LIT(out, ",\"remoteEndpoint\":") || !put_endpoint(out, &remote)))
        return false;

    /* annotations (zipkin_json.c add_annotations). */
    bool has_annotations = false;
    for (size_t i = 0; i < s->n_logs; i++) {
        const tw__log *log = &s->logs[i];
        if (!annotation_text(log, text))
            return false;
        if (text->len == 0)
            continue;
        if (!put(out, has_annotations ? ",{\"timestamp\":" : ",\"annotations\":[{\"timestamp\":",
                 has_annotations ? 14 : 29) ||
            !put_int(out, log->timestamp_us) || !PUT_LIT(out, ",\"value\":") ||
            !tw__json_append_text(out, (const char *)text->data, text->len) || !PUT_LIT(out, "}"))
            return false;
        has_annotations = true;
    }
    if (has_annotations && !PUT_LIT(out, "]"))
        return false;

    /* tags (zipkin_json.c add_tags). */
    tag_map tags;
    tags.n = 0;
    bool uses_description = false;
    for (size_t i = 0; p && i < p->n_tags; i++) {
        const tw__tag *t = &p->tags[i];
        if (i == local_used[LOCAL_IP] || i == local_used[LOCAL_IPV6] || i == local_used[LOCAL_PORT])
            continue;
        map_set(&tags, t->key, t->key_len, t, VALUE_TAG);
    }
    for (size_t i = 0; i < s->n_tags; i++) {
        const tw__tag *t = &s->tags[i];
        if (!is_winner[i] || is_mapped[i])
            continue;
        if (!tw__tag_key_is(t, "error")) {
            map_set(&tags, t->key, t->key_len, t, VALUE_TAG);
            continue;
        }
        int truth = tw__error_truth(t);
        if (truth < 0) {
            map_del(&tags, "error");
            continue;
        }
        const tw__tag *message = truth > 0 ? tw__error_message(s) : NULL;
        if (truth > 0 && !message) {
            const tw__tag *d = tw__span_data_find_tag(s, "otel.status_description");
            if (d && d->type == TW_VALUE_STRING) {
                message = d;
                uses_description = true;
            }
        }
        if (message)
            map_set(&tags, t->key, t->key_len, message, VALUE_MESSAGE);
        else if (truth > 0)
            map_set(&tags, t->key, t->key_len, NULL, VALUE_TRUE);
        else
            map_set(&tags, t->key, t->key_len, t, VALUE_TAG);
    }
    if (uses_description)
        map_del(&tags, "otel.status_description");
    for (size_t i = 0; i < tags.n; i++) {
        const member *m = &tags.m[i];
        bool ok = put(out, i ? "," : ",\"tags\":{", i ? 1 : 9) &&
                  tw__json_append_text(out, m->key, m->key_len) && PUT_LIT(out, ":");
        if (ok) {
            if (m->mode == VALUE_TRUE)
                ok = PUT_LIT(out, "\"true\"");
            else if (m->mode == VALUE_MESSAGE)
                ok = tw__json_append_text(out, m->tag->v.str, m->tag->len);
            else
                ok = put_value(out, m->tag, text);
        }
        if (!ok)
            return false;
    }
    if (tags.n && !PUT_LIT(out, "}"))
        return false;
    return PUT_LIT(out, "}");
}

bool tw__zipkin_encode_span_text(const tw__span_data *s, const tw__process *p, tw__buf *out)
{
    if (!s || !out)
        return false;
    size_t n_proc = p ? p->n_tags : 0;
    bool is_direct = s->n_tags <= FAST_MAX_TAGS && n_proc <= FAST_MAX_TAGS - s->n_tags;
    for (size_t i = 0; is_direct && i < n_proc; i++)
        is_direct = is_plain_key(&p->tags[i]);
    for (size_t i = 0; is_direct && i < s->n_tags; i++)
        is_direct = is_plain_key(&s->tags[i]);
    if (!is_direct)
        return append_via_jansson(s, p, out);
    size_t before = out->len;
    tw__buf text;
    tw__buf_init(&text);
    bool ok = encode(s, p, out, &text);
    tw__buf_free(&text);
    if (!ok)
        out->len = before;
    return ok;
}
