/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/wire/oracle_zipkin_v2.c: the reference of the Zipkin v2 JSON
 * encoder's differential suite (test_zipkin_text.c): the encoder as it was
 * first written, building a Jansson tree per span that Jansson dumps. The
 * rules are those of sdk/wire/zipkin/zipkin_v2_json.h, followed key by key;
 * the direct encoder must write the same bytes. Never linked into the
 * library or the command.
 */
#include "oracle.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "wire/core/json_common.h"

/* Per-call state: the tags that are written, and a scratch text buffer. */
typedef struct {
    bool *is_winner; /* last tag of its key */
    bool *is_mapped; /* consumed by kind / remoteEndpoint */
    bool small[2][16];
    tw__buf text;
} span_scratch;

static bool scratch_init(span_scratch *sc, size_t n_tags)
{
    tw__buf_init(&sc->text);
    if (n_tags <= 16) {
        sc->is_winner = sc->small[0];
        sc->is_mapped = sc->small[1];
    } else {
        sc->is_winner = calloc(n_tags, sizeof(bool));
        sc->is_mapped = calloc(n_tags, sizeof(bool));
        if (!sc->is_winner || !sc->is_mapped)
            return false;
    }
    memset(sc->is_mapped, 0, n_tags * sizeof(bool));
    return true;
}

static void scratch_free(span_scratch *sc)
{
    if (sc->is_winner != sc->small[0]) {
        free(sc->is_winner);
        free(sc->is_mapped);
    }
    tw__buf_free(&sc->text);
}

/* A JSON string of the text of a typed value. */
static json_t *value_json(const tw__tag *t, tw__buf *text)
{
    if (t->type == TW_VALUE_STRING)
        return tw__json_text(t->v.str, t->len);
    tw__buf_reset(text);
    if (!tw__value_text(t, text))
        return NULL;
    return tw__json_text((const char *)text->data, text->len);
}

/* ---- endpoints ------------------------------------------------------------------------- */

/* Sets ipv4 or ipv6 of @endpoint from an address tag: IPv4/IPv6 text, a
 * packed big-endian IPv4 int64, or 16 raw IPv6 bytes. False when the value
 * is none of these (or on allocation failure, which the caller notices
 * through the object not growing: an address is then merely left out). */
static bool set_address(json_t *endpoint, const tw__tag *t)
{
    char text[INET6_ADDRSTRLEN];
    struct in_addr v4;
    struct in6_addr v6;
    if (t->type == TW_VALUE_STRING) {
        if (inet_pton(AF_INET, t->v.str, &v4) == 1)
            return tw__json_put(endpoint, "ipv4", json_string(t->v.str));
        if (inet_pton(AF_INET6, t->v.str, &v6) == 1 && inet_ntop(AF_INET6, &v6, text, sizeof text))
            return tw__json_put(endpoint, "ipv6", json_string(text));
        return false;
    }
    if (t->type == TW_VALUE_INT64 && t->v.i64 >= INT32_MIN && t->v.i64 <= (int64_t)UINT32_MAX) {
        /* Jaeger's Java client writes the process ip as a signed packed int. */
        v4.s_addr = htonl((uint32_t)t->v.i64);
        return inet_ntop(AF_INET, &v4, text, sizeof text) &&
               tw__json_put(endpoint, "ipv4", json_string(text));
    }
    if (t->type == TW_VALUE_BINARY && t->len == 16) {
        memcpy(&v6, t->v.bin, 16);
        return inet_ntop(AF_INET6, &v6, text, sizeof text) &&
               tw__json_put(endpoint, "ipv6", json_string(text));
    }
    return false;
}

static bool set_port(json_t *endpoint, const tw__tag *t)
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
    return tw__json_put(endpoint, "port", json_integer(port));
}

/* The process tags that make up the localEndpoint (and are therefore not
 * repeated as tags): `ip` (IPv4 or IPv6 text, or a packed IPv4 int64),
 * `ipv6` (when a process has both, as Zipkin endpoints can) and `port`. */
enum { LOCAL_IP, LOCAL_IPV6, LOCAL_PORT, N_LOCAL };

/* localEndpoint: the service and the process's address tags. used[] names
 * the process tags that went into it (SIZE_MAX for none). Returns false on
 * allocation failure; *out is NULL when the endpoint would be empty. */
static bool local_endpoint(const tw__process *p, json_t **out, size_t used[N_LOCAL])
{
    *out = NULL;
    for (int k = 0; k < N_LOCAL; k++)
        used[k] = SIZE_MAX;
    if (!p)
        return true;
    json_t *endpoint = json_object();
    if (!endpoint)
        return false;
    if (p->service_name && *p->service_name &&
        !tw__json_put(endpoint, "serviceName",
                      tw__json_text(p->service_name, strlen(p->service_name)))) {
        json_decref(endpoint);
        return false;
    }
    static const char *const keys[N_LOCAL] = {"ip", "ipv6", "port"};
    for (int k = 0; k < N_LOCAL; k++) {
        for (size_t i = p->n_tags; i > 0; i--) {
            const tw__tag *t = &p->tags[i - 1];
            if (!tw__tag_key_is(t, keys[k]))
                continue;
            bool is_used = k == LOCAL_PORT ? set_port(endpoint, t) : set_address(endpoint, t);
            if (is_used)
                used[k] = i - 1;
            break; /* the last tag of a key is the one that counts */
        }
    }
    if (json_object_size(endpoint) == 0)
        json_decref(endpoint);
    else
        *out = endpoint;
    return true;
}

/* remoteEndpoint from the winning peer.* tags; marks the ones it used. */
static bool remote_endpoint(const tw__span_data *s, span_scratch *sc, json_t **out)
{
    *out = NULL;
    json_t *endpoint = json_object();
    if (!endpoint)
        return false;
    for (size_t i = 0; i < s->n_tags; i++) {
        const tw__tag *t = &s->tags[i];
        if (!sc->is_winner[i] || strncmp(t->key, "peer.", 5) != 0)
            continue;
        bool is_used = false;
        if (tw__tag_key_is(t, "peer.service")) {
            is_used = t->type == TW_VALUE_STRING && t->len > 0 &&
                      tw__json_put(endpoint, "serviceName", tw__json_text(t->v.str, t->len));
        } else if (tw__tag_key_is(t, "peer.ipv4")) {
            /* Only an IPv4 value: text that is IPv6 stays a tag. */
            struct in_addr v4;
            is_used = (t->type == TW_VALUE_INT64 ||
                       (t->type == TW_VALUE_STRING && inet_pton(AF_INET, t->v.str, &v4) == 1)) &&
                      set_address(endpoint, t);
        } else if (tw__tag_key_is(t, "peer.ipv6")) {
            struct in6_addr v6;
            is_used = ((t->type == TW_VALUE_BINARY && t->len == 16) ||
                       (t->type == TW_VALUE_STRING && inet_pton(AF_INET6, t->v.str, &v6) == 1)) &&
                      set_address(endpoint, t);
        } else if (tw__tag_key_is(t, "peer.port")) {
            is_used = set_port(endpoint, t);
        }
        sc->is_mapped[i] = is_used;
    }
    if (json_object_size(endpoint) == 0)
        json_decref(endpoint);
    else
        *out = endpoint;
    return true;
}

/* ---- annotations and tags ---------------------------------------------------------------- */

/* The annotation value of a log (zipkin_json.h); an empty text means none. */
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

static bool add_annotations(json_t *span, const tw__span_data *s, tw__buf *text)
{
    json_t *list = NULL;
    for (size_t i = 0; i < s->n_logs; i++) {
        const tw__log *log = &s->logs[i];
        if (!annotation_text(log, text))
            goto fail;
        if (text->len == 0)
            continue;
        if (!list) {
            list = json_array();
            if (!list)
                return false;
        }
        json_t *a = json_object();
        if (!tw__json_push(list, a) ||
            !tw__json_put(a, "timestamp", json_integer(log->timestamp_us)) ||
            !tw__json_put(a, "value", tw__json_text((const char *)text->data, text->len)))
            goto fail;
    }
    return !list || tw__json_put(span, "annotations", list);
fail:
    json_decref(list);
    return false;
}

static bool add_tags(json_t *span, const tw__span_data *s, const tw__process *p,
                     const size_t local_used[N_LOCAL], span_scratch *sc)
{
    json_t *tags = json_object();
    if (!tags)
        return false;
    bool uses_description = false;
    for (size_t i = 0; p && i < p->n_tags; i++) {
        const tw__tag *t = &p->tags[i];
        if (i == local_used[LOCAL_IP] || i == local_used[LOCAL_IPV6] || i == local_used[LOCAL_PORT])
            continue;
        if (!tw__json_set(tags, t->key, t->key_len, value_json(t, &sc->text)))
            goto fail;
    }
    for (size_t i = 0; i < s->n_tags; i++) {
        const tw__tag *t = &s->tags[i];
        if (!sc->is_winner[i] || sc->is_mapped[i])
            continue;
        json_t *value;
        if (tw__tag_key_is(t, "error")) {
            int truth = tw__error_truth(t);
            if (truth < 0) {
                /* Zipkin reads any error tag as a failure: a false one must go. */
                json_object_del(tags, "error");
                continue;
            }
            const tw__tag *message = truth > 0 ? tw__error_message(s) : NULL;
            if (truth > 0 && !message) {
                /* OTLP's status message, as the OTLP reader and the
                 * Collector's translators keep it: it is the message. */
                const tw__tag *d = tw__span_data_find_tag(s, "otel.status_description");
                if (d && d->type == TW_VALUE_STRING) {
                    message = d;
                    uses_description = true;
                }
            }
            if (message)
                value = tw__json_text(message->v.str, message->len);
            else if (truth > 0)
                value = json_string("true");
            else
                value = value_json(t, &sc->text);
        } else {
            value = value_json(t, &sc->text);
        }
        if (!tw__json_set(tags, t->key, t->key_len, value))
            goto fail;
    }
    if (uses_description)
        json_object_del(tags, "otel.status_description");
    if (json_object_size(tags) == 0) {
        json_decref(tags);
        return true;
    }
    return tw__json_put(span, "tags", tags);
fail:
    json_decref(tags);
    return false;
}

/* ---- spans ---------------------------------------------------------------------------- */

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

json_t *oracle_zipkin_span_json(const tw__span_data *s, const tw__process *p)
{
    if (!s)
        return NULL;
    span_scratch sc;
    json_t *span = json_object();
    if (!scratch_init(&sc, s->n_tags) || !span ||
        !tw__last_by_key(s->tags, s->n_tags, sc.is_winner))
        goto fail;

    char hex[33];
    if (s->trace_id_high)
        tw__hex128(s->trace_id_high, s->trace_id_low, hex);
    else
        tw__hex64(s->trace_id_low, hex);
    if (!tw__json_put(span, "traceId", json_string(hex)))
        goto fail;
    if (s->parent_id && s->parent_id != s->span_id) {
        tw__hex64(s->parent_id, hex);
        if (!tw__json_put(span, "parentId", json_string(hex)))
            goto fail;
    }
    tw__hex64(s->span_id, hex);
    if (!tw__json_put(span, "id", json_string(hex)))
        goto fail;

    size_t kind_index;
    const char *kind = kind_name(tw__span_kind_of(s, &kind_index));
    if (kind) {
        /* Every span.kind tag goes: the kind field says it. */
        for (size_t i = 0; i < s->n_tags; i++)
            sc.is_mapped[i] = sc.is_mapped[i] || tw__tag_key_is(&s->tags[i], "span.kind");
        if (!tw__json_put(span, "kind", json_string(kind)))
            goto fail;
    }
    if (s->operation && *s->operation &&
        !tw__json_put(span, "name", tw__json_text(s->operation, strlen(s->operation))))
        goto fail;
    if (s->start_us > 0) {
        if (!tw__json_put(span, "timestamp", json_integer(s->start_us)) ||
            (!s->is_duration_unknown &&
             !tw__json_put(span, "duration",
                           json_integer(s->duration_us > 0 ? s->duration_us : 1))))
            goto fail;
    } else if (s->duration_us > 0 && !s->is_duration_unknown &&
               !tw__json_put(span, "duration", json_integer(s->duration_us))) {
        goto fail;
    }
    if ((s->flags & TW__FLAG_DEBUG) && !tw__json_put(span, "debug", json_true()))
        goto fail;
    /* Zipkin's model clears `shared` on a CLIENT span only. */
    if (s->shared && !(kind && strcmp(kind, "CLIENT") == 0) &&
        !tw__json_put(span, "shared", json_true()))
        goto fail;

    json_t *local, *remote;
    size_t local_used[N_LOCAL];
    if (!local_endpoint(p, &local, local_used) ||
        (local && !tw__json_put(span, "localEndpoint", local)))
        goto fail;
    /* remote_endpoint marks the peer.* tags it uses, so it runs before the tags. */
    if (!remote_endpoint(s, &sc, &remote) ||
        (remote && !tw__json_put(span, "remoteEndpoint", remote)))
        goto fail;
    if (!add_annotations(span, s, &sc.text) || !add_tags(span, s, p, local_used, &sc))
        goto fail;
    scratch_free(&sc);
    return span;

fail:
    scratch_free(&sc);
    json_decref(span);
    return NULL;
}

json_t *oracle_zipkin_spans_json(tw__span_data *const *spans, size_t n, const tw__process *process)
{
    json_t *list = json_array();
    if (!list)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (!tw__json_push(list, oracle_zipkin_span_json(spans[i], process))) {
            json_decref(list);
            return NULL;
        }
    }
    return list;
}
