/* SPDX-License-Identifier: Apache-2.0 */
/*
 * transport/sender.c: the transport of sender.h over the SDK's senders.
 *
 * HTTP: one SDK HTTP sender (report/http_sender.c, so one connection and
 * its TLS session) whose batcher is keyed by process
 * (tw__http_sender_append_for): up to max_open_processes batches open,
 * their bodies together under two max bodies. UDP: the SDK's UDP sender
 * is opened for one process and batches by datagram size itself, so there
 * is one per process, at most max_open_processes at once (the least
 * recently used is flushed and freed first).
 *
 * Renamed processes (an empty service: "empty-service-name" for Jaeger,
 * "unknown_service" for OTLP) are copies kept in a table for the life of
 * the transport, so that a batch's process stays valid until it is sent;
 * only processes without a service name are copied (a shallow copy: the
 * tags stay the caller's).
 *
 * Locking: none (sender.h).
 */
#include "transport/sender.h"

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "report/http.h"
#include "report/report.h"
#include "wire/jaeger/jaeger_view.h"

#define DEFAULT_MAX_OPEN 64u

/* A UDP sender and the process it was opened with. */
typedef struct udp_slot {
    const tw__process *process; /* the key: the caller's, or NULL */
    tw__sender *sender;         /* NULL: open failed; its spans count as failed */
    uint64_t last_use;
} udp_slot;

struct tw__transport {
    tw__transport_format format;
    tw_reporter_options *ropts; /* a copy, with the URL as endpoint or agent */
    tw__report_counters counters;
    tw__sender *http; /* HTTP formats */
    udp_slot **slots; /* UDP formats: max_open of them */
    size_t n_slots, max_open;
    udp_slot *last;
    uint64_t tick;
    uint64_t failed_extra; /* spans failed here (no sender), not by the SDK */
    int udp_errno;         /* the last send error a UDP sender logged (one line per error) */
    tw__jaeger_view view;
    tw__process empty; /* stands for a NULL process (Jaeger and OTLP need one) */
    GHashTable *named; /* const tw__process * (or &empty) -> tw__process * (renamed copy) */
    void (*on_refused)(void *arg, uint64_t trace_id_high, uint64_t trace_id_low, uint64_t span_id,
                       const char *reason);
    void *refused_arg;
    void (*on_fate)(void *arg, void *cookie, bool is_delivered);
    void *fate_arg;
};

bool tw__transport_format_is_http(tw__transport_format f)
{
    return f != TW__TRANSPORT_JAEGER_UDP_COMPACT && f != TW__TRANSPORT_JAEGER_UDP_BINARY;
}

static bool is_jaeger(tw__transport_format f)
{
    return f == TW__TRANSPORT_JAEGER_HTTP || !tw__transport_format_is_http(f);
}

void tw__transport_options_init(tw__transport_options *o)
{
    memset(o, 0, sizeof *o);
}

/* ---- options ------------------------------------------------------------------------------ */

static bool dup_str(char **dst, const char *src)
{
    *dst = src ? strdup(src) : NULL;
    return !src || *dst;
}

/* A deep copy of @src (NULL: defaults). NULL when out of memory. */
static tw_reporter_options *copy_options(const tw_reporter_options *src)
{
    tw_reporter_options *o = tw_reporter_options_new();
    if (!o || !src)
        return o;
    struct tw__http_options *keep_http = o->http;
    char *keep_host = o->agent_host, *keep_path = o->file_path;
    *o = *src; /* scalars; the owned pointers are replaced below */
    o->http = keep_http;
    o->agent_host = keep_host;
    o->file_path = keep_path;
    bool ok = true;
    if (src->agent_host) {
        free(o->agent_host);
        ok = dup_str(&o->agent_host, src->agent_host);
    }
    if (ok && src->http) {
        tw__http_options *h = malloc(sizeof *h);
        ok = h != NULL;
        if (ok) {
            *h = *src->http;
            h->endpoint = h->user = h->password = h->bearer_token = NULL;
            h->ca_file = h->cert_file = h->key_file = NULL;
            h->headers = NULL;
            h->n_headers = 0;
            tw__http_options_free(o->http);
            o->http = h;
            ok = dup_str(&h->endpoint, src->http->endpoint) && dup_str(&h->user, src->http->user) &&
                 dup_str(&h->password, src->http->password) &&
                 dup_str(&h->bearer_token, src->http->bearer_token) &&
                 dup_str(&h->ca_file, src->http->ca_file) &&
                 dup_str(&h->cert_file, src->http->cert_file) &&
                 dup_str(&h->key_file, src->http->key_file);
            if (ok && src->http->n_headers) {
                h->headers = calloc(src->http->n_headers, sizeof *h->headers);
                ok = h->headers != NULL;
                for (size_t i = 0; ok && i < src->http->n_headers; i++) {
                    ok = dup_str(&h->headers[i], src->http->headers[i]);
                    h->n_headers += ok;
                }
            }
        }
    }
    if (!ok) {
        tw_reporter_options_free(o);
        return NULL;
    }
    return o;
}

/* udp://HOST[:PORT][/]: HOST a name, an IPv4 literal or [IPv6]; PORT 1..65535
 * (default 6831). *host is a new string. */
bool tw__transport_parse_udp_url(const char *url, char **host, unsigned int *port)
{
    if (strncmp(url, "udp://", 6) != 0)
        return false;
    const char *p = url + 6;
    const char *h = p, *h_end;
    if (*p == '[') {
        h = p + 1;
        h_end = strchr(h, ']');
        if (!h_end)
            return false;
        p = h_end + 1;
    } else {
        p += strcspn(p, ":/");
        h_end = p;
    }
    *port = 6831;
    if (*p == ':') {
        char *end;
        unsigned long v = strtoul(p + 1, &end, 10);
        if (end == p + 1 || v == 0 || v > 65535 || (*end && strcmp(end, "/") != 0))
            return false;
        *port = (unsigned int)v;
    } else if (*p && strcmp(p, "/") != 0) {
        return false;
    }
    if (h_end == h)
        return false;
    *host = strndup(h, (size_t)(h_end - h));
    return *host != NULL;
}

/* ---- processes ---------------------------------------------------------------------------- */

/* What the encoder sees for @p: itself, or a renamed copy kept until free.
 * NULL only when out of memory. */
static const tw__process *process_for(tw__transport *t, const tw__process *p)
{
    if (t->format == TW__TRANSPORT_ZIPKIN)
        return p; /* no process: no localEndpoint */
    if (!p)
        p = &t->empty;
    if (p->service_name && *p->service_name)
        return p;
    tw__process *named = g_hash_table_lookup(t->named, p);
    if (named)
        return named;
    named = malloc(sizeof *named);
    if (!named)
        return NULL;
    tw__process scratch;
    const tw__process *r = is_jaeger(t->format)
                               ? tw__jaeger_process(p, &scratch)
                               : tw__process_named(p, TW__OTLP_EMPTY_SERVICE, &scratch);
    *named = *r;
    g_hash_table_insert(t->named, (gpointer)p, named);
    return named;
}

/* ---- UDP slots ---------------------------------------------------------------------------- */

static tw__sender *new_udp(const tw__transport *t, tw_error **err)
{
    return t->format == TW__TRANSPORT_JAEGER_UDP_BINARY ? tw__udp_sender_new_binary(t->ropts, err)
                                                        : tw__udp_sender_new(t->ropts, err);
}

static void free_slot(udp_slot *sl)
{
    if (sl->sender)
        sl->sender->vtable->free(sl->sender);
    free(sl);
}

/* Opens a UDP sender for @process. A process the SDK cannot open (larger
 * than a datagram) gives a slot without sender, logged here. NULL with *st
 * and @err when no sender can be made at all. */
static udp_slot *open_slot(tw__transport *t, const tw__process *process, tw_status *st,
                           tw_error **err)
{
    udp_slot *sl = calloc(1, sizeof *sl);
    tw_error *e = NULL;
    if (!sl || !(sl->sender = new_udp(t, &e))) {
        *st = e ? tw_error_status(e) : TW_E_NOMEM;
        tw__set_error(err, *st, "%s", e ? tw_error_message(e) : "out of memory");
        tw_error_free(e);
        free(sl);
        return NULL;
    }
    sl->process = process;
    sl->sender->counters = &t->counters;
    tw__udp_sender_share_errors(sl->sender, &t->udp_errno);
    const tw__process *p = process_for(t, process);
    if (!p || sl->sender->vtable->open(sl->sender, p, &e) != TW_OK) {
        char line[1024];
        snprintf(line, sizeof line, "spans of service \"%s\" cannot be sent: %s",
                 p && p->service_name ? p->service_name : "",
                 e ? tw_error_message(e) : "out of memory");
        /* The service name comes from the input: the log escapes it. */
        tw__log_msg(TW_LOG_WARN, "%s", line);
        tw_error_free(e);
        sl->sender->vtable->free(sl->sender);
        sl->sender = NULL;
    }
    return sl;
}

static udp_slot *slot_for(tw__transport *t, const tw__process *process, tw_status *st,
                          tw_error **err)
{
    if (t->last && t->last->process == process)
        return t->last;
    for (size_t i = 0; i < t->n_slots; i++) {
        if (t->slots[i]->process == process)
            return t->last = t->slots[i];
    }
    if (t->n_slots == t->max_open) {
        size_t lru = 0;
        for (size_t i = 1; i < t->n_slots; i++) {
            if (t->slots[i]->last_use < t->slots[lru]->last_use)
                lru = i;
        }
        udp_slot *old = t->slots[lru];
        if (old->sender)
            old->sender->vtable->flush(old->sender);
        free_slot(old);
        t->slots[lru] = t->slots[--t->n_slots]; /* keeps slots[] dense */
        t->last = NULL;
    }
    udp_slot *sl = open_slot(t, process, st, err);
    if (!sl)
        return NULL;
    t->slots[t->n_slots++] = sl;
    return t->last = sl;
}

/* ---- the interface ------------------------------------------------------------------------- */

static void on_refused(void *arg, uint64_t trace_high, uint64_t trace_low, uint64_t span_id,
                       const char *reason)
{
    tw__transport *t = arg;
    if (t->on_refused)
        t->on_refused(t->refused_arg, trace_high, trace_low, span_id, reason);
}

static const tw__http_format_vtable *http_format(tw__transport_format f)
{
    switch (f) {
    case TW__TRANSPORT_ZIPKIN:
        return &tw__http_zipkin_format;
    case TW__TRANSPORT_JAEGER_HTTP:
        return &tw__http_jaeger_format;
    case TW__TRANSPORT_OTLP_JSON:
        return &tw__http_otlp_format;
    case TW__TRANSPORT_OTLP_PROTO:
        return &tw__http_otlp_proto_format;
    default:
        return NULL;
    }
}

tw__transport *tw__transport_new(const tw__transport_options *o, tw_error **err)
{
    if (!o || (unsigned int)o->format > TW__TRANSPORT_JAEGER_UDP_BINARY || !o->url) {
        tw__set_error(err, TW_E_CONFIG, "transport: no format or URL");
        return NULL;
    }
    char shown[512]; /* the URL for messages: never its credentials */
    tw__redact_url(o->url, shown, sizeof shown);
    tw__transport *t = calloc(1, sizeof *t);
    if (!t || !(t->ropts = copy_options(o->reporter)) ||
        !(t->named = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, free))) {
        tw__transport_free(t);
        tw__set_error(err, TW_E_NOMEM, "out of memory");
        return NULL;
    }
    t->format = o->format;
    t->max_open = o->max_open_processes ? o->max_open_processes : DEFAULT_MAX_OPEN;
    t->on_refused = o->on_refused;
    t->refused_arg = o->refused_arg;
    t->on_fate = o->on_fate;
    t->fate_arg = o->fate_arg;
    tw__process_init(&t->empty);
    tw__jaeger_view_init(&t->view);
    tw_status st = TW_OK;
    if (tw__transport_format_is_http(o->format)) {
        if (tw_reporter_options_set_endpoint(t->ropts, o->url) != TW_OK) {
            st = TW_E_CONFIG;
            tw__set_error(err, st, "bad URL \"%s\"", shown);
        } else if (!(t->http = tw__http_sender_new(http_format(o->format), t->ropts, err))) {
            st = TW_E_CONFIG;
        } else {
            t->http->counters = &t->counters;
            tw__http_sender_set_refused_fn(t->http, on_refused, t);
            tw__http_sender_set_fate_fn(t->http, o->on_fate, o->fate_arg);
            tw__http_sender_set_patience(t->http, o->give_up_rounds);
            /* Opened once for its checks; batches are per process. */
            if (!tw__http_sender_set_batching(t->http, t->max_open, o->flush_ms)) {
                st = TW_E_NOMEM;
                tw__set_error(err, st, "out of memory");
            } else {
                st = t->http->vtable->open(t->http, process_for(t, NULL), err);
            }
        }
    } else if (o->on_fate) {
        st = TW_E_CONFIG;
        tw__set_error(err, st,
                      "\"%s\": a Jaeger agent (UDP) does not answer: what it received is not known",
                      shown);
    } else {
        char *host = NULL;
        unsigned int port = 0;
        if (!tw__transport_parse_udp_url(o->url, &host, &port)) {
            st = TW_E_CONFIG;
            tw__set_error(err, st,
                          "\"%s\": expected udp://HOST:PORT (HOST a name, an IPv4 address or "
                          "[IPv6]; PORT 1..65535)",
                          shown);
        } else if (tw_reporter_options_set_agent(t->ropts, host, port) != TW_OK) {
            st = TW_E_CONFIG;
            tw__set_error(err, st, "bad agent address \"%s\"", shown);
        } else if (!(t->slots = calloc(t->max_open, sizeof *t->slots))) {
            st = TW_E_NOMEM;
            tw__set_error(err, st, "out of memory");
        } else {
            /* Checks the address (and that a socket can be made) now. */
            tw__sender *probe = new_udp(t, err);
            if (!probe)
                st = TW_E_CONFIG;
            else
                probe->vtable->free(probe);
        }
        free(host);
    }
    if (st != TW_OK) {
        tw__transport_free(t);
        return NULL;
    }
    return t;
}

/* Reports spans[from, n) as not delivered (they were not batched). */
static void fail_rest(const tw__transport *t, void *const *cookies, size_t from, size_t n)
{
    for (size_t i = from; t->on_fate && i < n; i++)
        t->on_fate(t->fate_arg, cookies ? cookies[i] : NULL, false);
}

tw_status tw__transport_send(tw__transport *t, const tw__process *process,
                             const tw__span_data *const *spans, size_t n, tw_error **err)
{
    return tw__transport_send_tracked(t, process, spans, NULL, n, err);
}

tw_status tw__transport_send_tracked(tw__transport *t, const tw__process *process,
                                     const tw__span_data *const *spans, void *const *cookies,
                                     size_t n, tw_error **err)
{
    const tw__process *p = NULL;
    udp_slot *sl = NULL;
    if (t->http) {
        p = process_for(t, process);
        if (!p && (process || t->format != TW__TRANSPORT_ZIPKIN)) {
            fail_rest(t, cookies, 0, n);
            tw__set_error(err, TW_E_NOMEM, "out of memory");
            return TW_E_NOMEM;
        }
    } else {
        tw_status st = TW_OK;
        sl = slot_for(t, process, &st, err);
        if (!sl)
            return st;
        sl->last_use = ++t->tick;
        if (!sl->sender) {
            t->failed_extra += n;
            return TW_OK;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const tw__span_data *data = spans[i];
        if (is_jaeger(t->format)) {
            data = tw__jaeger_view_of(&t->view, data);
            if (!data) {
                fail_rest(t, cookies, i, n);
                tw__set_error(err, TW_E_NOMEM, "out of memory");
                return TW_E_NOMEM;
            }
        }
        /* The sender consumes a reference and keeps only the encoding; a
         * view's copied count makes this +1 -1 on the view, never a free. */
        tw__span_data *ref = tw__span_data_ref((tw__span_data *)data);
        if (t->http)
            tw__http_sender_append_tracked(t->http, p, ref, cookies ? cookies[i] : NULL);
        else
            sl->sender->vtable->append(sl->sender, ref);
    }
    return TW_OK;
}

void tw__transport_poll(tw__transport *t)
{
    if (t->http)
        tw__http_sender_tick(t->http, tw__mono_ns());
}

void tw__transport_flush(tw__transport *t)
{
    if (t->http)
        t->http->vtable->flush(t->http);
    for (size_t i = 0; i < t->n_slots; i++) {
        if (t->slots[i]->sender)
            t->slots[i]->sender->vtable->flush(t->slots[i]->sender);
    }
}

tw_status tw__transport_close(tw__transport *t, unsigned int deadline_ms)
{
    int64_t at = tw__mono_ns() + (int64_t)deadline_ms * 1000000;
    if (at == 0)
        at = 1; /* 0 means "not closing" */
    if (t->http)
        atomic_store(&t->http->give_up_at_ns, at);
    for (size_t i = 0; i < t->n_slots; i++) {
        if (t->slots[i]->sender)
            atomic_store(&t->slots[i]->sender->give_up_at_ns, at);
    }
    tw__transport_flush(t);
    return tw__mono_ns() >= at ? TW_E_TIMEOUT : TW_OK;
}

void tw__transport_get_stats(const tw__transport *t, tw__transport_stats *st)
{
    memset(st, 0, sizeof *st);
    if (!t)
        return;
    tw__http_sender_stats h;
    tw__http_sender_get_stats(t->http, &h);
    st->sent = tw__read(&t->counters.sent);
    st->failed = tw__read(&t->counters.failed) + t->failed_extra;
    st->too_large = tw__read(&t->counters.too_large);
    st->batches = tw__read(&t->counters.batches);
    st->bytes = tw__read(&t->counters.bytes);
    st->body_bytes = h.body_bytes;
    st->retries = h.retries;
    st->split_requests = h.split_requests;
    st->refused = h.refused;
    st->requests = h.requests;
    st->refused_requests = h.refused_requests;
    st->unattempted = h.unattempted;
    st->has_given_up = h.has_given_up;
}

void tw__transport_free(tw__transport *t)
{
    if (!t)
        return;
    if (t->http)
        t->http->vtable->free(t->http);
    for (size_t i = 0; i < t->n_slots; i++)
        free_slot(t->slots[i]);
    free(t->slots);
    if (t->named)
        g_hash_table_destroy(t->named);
    tw__jaeger_view_clear(&t->view);
    tw__process_clear(&t->empty);
    tw_reporter_options_free(t->ropts);
    free(t);
}
