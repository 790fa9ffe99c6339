/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/sinks/send.c: `--send URL` (send.h): the bridge's spans to a
 * backend through the SDK's narrow transport (transport/sender.h: the
 * reporters' own HTTP sender, keyed by process, and the Jaeger agent UDP
 * sender), so batching on the exact encoded size, retries with backoff,
 * gzip, the split of refused batches, the Jaeger and OTLP rules for empty
 * services and the grouping of spans by process are the SDK's, tested
 * there and here. This file only picks the format from the URL and turns
 * the command's options into the transport's.
 *
 * Ownership and locking: see send.h. Single-threaded.
 */
#include "sinks/send.h"

#include <curl/curl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/sender.h"
#include "wire/core/redact.h"

#define DEFAULT_RETRY_TIME_MS 15000u
#define DEFAULT_CONNECT_TIMEOUT_MS 5000u
#define DEFAULT_TIMEOUT_MS 10000u
#define DEFAULT_BACKOFF_MS 100u
#define DEFAULT_MAX_RETRIES 3u

typedef enum send_kind {
    KIND_ZIPKIN,
    KIND_JAEGER_HTTP,
    KIND_OTLP,
    KIND_UDP,
    KIND_UDP_BINARY
} send_kind;

typedef struct send_format {
    const char *name;   /* --send-format value and twb_sender_format() */
    const char *suffix; /* URL path that selects it; NULL for UDP */
    send_kind kind;
    bool is_http;
    tw__transport_format transport;
} send_format;

static const send_format formats[] = {
    {"zipkin", "/api/v2/spans", KIND_ZIPKIN, true, TW__TRANSPORT_ZIPKIN},
    {"jaeger-http", "/api/traces", KIND_JAEGER_HTTP, true, TW__TRANSPORT_JAEGER_HTTP},
    {"otlp-http", "/v1/traces", KIND_OTLP, true, TW__TRANSPORT_OTLP_JSON},
    /* Never chosen from the URL (it is /v1/traces too): --send-format names it. */
    {"otlp-http-proto", NULL, KIND_OTLP, true, TW__TRANSPORT_OTLP_PROTO},
    {"jaeger-udp", NULL, KIND_UDP, false, TW__TRANSPORT_JAEGER_UDP_COMPACT},
    {"jaeger-udp-binary", NULL, KIND_UDP_BINARY, false, TW__TRANSPORT_JAEGER_UDP_BINARY},
};
#define N_FORMATS (sizeof formats / sizeof formats[0])

#define ACCEPTED_FORMS                                                                             \
    "http(s)://HOST:9411/api/v2/spans (Zipkin), http(s)://HOST:14268/api/traces (Jaeger "          \
    "collector), http(s)://HOST:4318/v1/traces (OTLP/HTTP), udp://HOST:6831 (Jaeger agent, "       \
    "compact) or udp://HOST:6832 (Jaeger agent, binary); or name the format with --send-format "   \
    "(zipkin, jaeger-http, otlp-http, otlp-http-proto, jaeger-udp, jaeger-udp-binary)"

/* A span given to the transport while on_undelivered is set: a reference
 * on it until the transport tells its fate (the cookie), in a list so that
 * twb_sender_abandon finds the ones still batched. */
typedef struct tracked {
    twb_span span;
    struct tracked *prev, *next;
} tracked;

struct twb_sender {
    const send_format *fmt;
    tw__transport *transport;
    void (*on_refused)(void *arg, const char *trace_hex, const char *span_hex, const char *why);
    void *refused_arg;
    void (*on_undelivered)(void *arg, const twb_span *span);
    void *undelivered_arg;
    tracked *pending; /* the spans whose fate is not known yet */
};

bool twb_header_line_check(const char *line, size_t number, size_t *name_len, char *why,
                           size_t why_size)
{
    /* Never echo a header line: its value may be a credential
     * ("Authorization: Bearer ..."). The name, once it is a token, is
     * enough to find it. */
    const char *colon = strchr(line, ':');
    if (!colon || colon == line) {
        snprintf(why, why_size,
                 "--header number %zu: expected \"Name: value\" (the line is not shown: it may "
                 "hold a secret)",
                 number);
        return false;
    }
    *name_len = (size_t)(colon - line);
    char *name = strndup(line, *name_len);
    const char *value = colon + 1 + strspn(colon + 1, " \t");
    tw_reporter_options *probe = tw_reporter_options_new();
    tw_status st = name && probe ? tw_reporter_options_add_header(probe, name, value) : TW_E_NOMEM;
    tw_reporter_options_free(probe);
    free(name);
    if (st == TW_OK)
        return true;
    if (st == TW_E_NOMEM) {
        snprintf(why, why_size, "--header number %zu: out of memory", number);
        return false;
    }
    bool is_token = true;
    for (size_t k = 0; k < *name_len && is_token; k++)
        is_token = line[k] > 0x20 && line[k] < 0x7f;
    if (is_token && *name_len <= 64)
        snprintf(why, why_size,
                 "--header \"%.*s: ...\": not a valid header (a name must be an HTTP token "
                 "other than Content-Type, Content-Length, Host, Transfer-Encoding, Expect or "
                 "Connection; a value one line)",
                 (int)*name_len, line);
    else
        snprintf(why, why_size,
                 "--header number %zu: not a valid header (its name is not an HTTP token; the "
                 "line is not shown: it may hold a secret)",
                 number);
    return false;
}

void twb_send_options_init(twb_send_options *o)
{
    memset(o, 0, sizeof *o);
    o->max_retries = DEFAULT_MAX_RETRIES;
    o->give_up_rounds = TWB_SEND_DEFAULT_GIVE_UP;
    o->is_gzip = true;
}

/* ---- URL -> format ---------------------------------------------------------------------- */

static const send_format *format_named(const char *name)
{
    for (size_t i = 0; i < N_FORMATS; i++) {
        if (strcmp(formats[i].name, name) == 0)
            return &formats[i];
    }
    return NULL;
}

static bool has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The path of an http(s) URL (from the first '/' after the authority up to
 * '?' or '#'), without trailing slashes: *path, *len. */
static void url_path(const char *url, const char **path, size_t *len)
{
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    p += strcspn(p, "/?#");
    size_t n = *p == '/' ? strcspn(p, "?#") : 0;
    while (n > 0 && p[n - 1] == '/')
        n--;
    *path = p;
    *len = n;
}

static bool path_ends_with(const char *path, size_t len, const char *suffix)
{
    size_t n = strlen(suffix);
    return len >= n && memcmp(path + len - n, suffix, n) == 0;
}

/* ---- options ------------------------------------------------------------------------------ */

/* Sets a TW_E_CONFIG error; evaluates to TW_E_CONFIG. */
#define CONFIG_ERROR(err, ...) (tw__set_error((err), TW_E_CONFIG, __VA_ARGS__), TW_E_CONFIG)

static tw_status set_http_options(tw_reporter_options *r, const char *url,
                                  const twb_send_options *o, bool may_gzip, tw_error **err)
{
    unsigned int timeout = o->timeout_ms ? o->timeout_ms : DEFAULT_TIMEOUT_MS;
    unsigned int connect =
        timeout < DEFAULT_CONNECT_TIMEOUT_MS ? timeout : DEFAULT_CONNECT_TIMEOUT_MS;
    unsigned int backoff = o->initial_backoff_ms ? o->initial_backoff_ms : DEFAULT_BACKOFF_MS;
    /* Every attempt may use its whole timeout: the retry window allows it. */
    uint64_t window = (uint64_t)timeout * (o->max_retries + 1u);
    unsigned int retry_time = window > DEFAULT_RETRY_TIME_MS
                                  ? (window > 3600000u ? 3600000u : (unsigned int)window)
                                  : DEFAULT_RETRY_TIME_MS;
    if (tw_reporter_options_set_endpoint(r, url) != TW_OK)
        return CONFIG_ERROR(err, "--send: bad URL (the value is not shown: it may hold a secret)");
    if (o->max_body_bytes && tw_reporter_options_set_max_body_size(r, o->max_body_bytes) != TW_OK)
        return CONFIG_ERROR(err, "--send: the body size limit must be 512..1073741824 bytes");
    if (tw_reporter_options_set_max_retries(r, o->max_retries) != TW_OK)
        return CONFIG_ERROR(err, "--send: retries must be 0..100");
    if (tw_reporter_options_set_http_timeouts_ms(r, connect, timeout) != TW_OK ||
        tw_reporter_options_set_retry_backoff_ms(r, backoff, retry_time) != TW_OK)
        return CONFIG_ERROR(err, "--send: bad timeout or backoff");
    for (size_t i = 0; i < o->n_headers; i++) {
        const char *line = o->headers[i];
        char why[256];
        size_t name_len;
        if (!twb_header_line_check(line, i + 1, &name_len, why, sizeof why))
            return CONFIG_ERROR(err, "%s", why);
        char *name = strndup(line, name_len);
        const char *value = line + name_len + 1 + strspn(line + name_len + 1, " \t");
        tw_status st = name ? tw_reporter_options_add_header(r, name, value) : TW_E_NOMEM;
        free(name);
        if (st != TW_OK)
            return CONFIG_ERROR(err, "--header number %zu: out of memory or too many headers",
                                i + 1);
    }
    if (o->user) {
        const char *colon = strchr(o->user, ':');
        char *name = colon ? strndup(o->user, (size_t)(colon - o->user)) : strdup(o->user);
        tw_status st =
            name ? tw_reporter_options_set_basic_auth(r, name, colon ? colon + 1 : "") : TW_E_NOMEM;
        free(name);
        if (st != TW_OK)
            return CONFIG_ERROR(err, "--user: expected \"name:password\"");
    }
    if (tw_reporter_options_set_gzip(r, o->is_gzip && may_gzip) != TW_OK)
        return CONFIG_ERROR(err, "--send: out of memory");
    return TW_OK;
}

/* ---- refusals --------------------------------------------------------------------------- */

static void hex_id(char *out, size_t size, uint64_t high, uint64_t low)
{
    if (high)
        snprintf(out, size, "%016" PRIx64 "%016" PRIx64, high, low);
    else
        snprintf(out, size, "%016" PRIx64, low);
}

static void on_transport_refused(void *arg, uint64_t trace_high, uint64_t trace_low,
                                 uint64_t span_id, const char *reason)
{
    twb_sender *s = arg;
    char trace[33], span[17];
    hex_id(trace, sizeof trace, trace_high, trace_low);
    hex_id(span, sizeof span, 0, span_id);
    if (s->on_refused) {
        s->on_refused(s->refused_arg, trace, span, reason);
    } else {
        char clean[1024]; /* the backend's answer: escaped, one line */
        tw__redact_text(reason, clean, sizeof clean);
        fprintf(stderr, "tracewire convert: --send (%s): span %s/%s refused: %s\n", s->fmt->name,
                trace, span, clean);
    }
}

/* ---- delivery ------------------------------------------------------------------------------ */

static tracked *track(twb_sender *s, const twb_span *span)
{
    tracked *t = malloc(sizeof *t);
    if (!t)
        return NULL;
    t->span.data = tw__span_data_ref(span->data);
    t->span.process = span->process;
    t->prev = NULL;
    t->next = s->pending;
    if (s->pending)
        s->pending->prev = t;
    s->pending = t;
    return t;
}

/* The fate of @t is known: an undelivered span goes to on_undelivered. */
static void untrack(twb_sender *s, tracked *t, bool is_delivered)
{
    if (t->prev)
        t->prev->next = t->next;
    else
        s->pending = t->next;
    if (t->next)
        t->next->prev = t->prev;
    if (!is_delivered)
        s->on_undelivered(s->undelivered_arg, &t->span);
    tw__span_data_unref(t->span.data);
    free(t);
}

static void on_transport_fate(void *arg, void *cookie, bool is_delivered)
{
    if (cookie)
        untrack(arg, cookie, is_delivered);
}

static bool is_jaeger(const twb_sender *s)
{
    return s->fmt->kind == KIND_JAEGER_HTTP || s->fmt->kind == KIND_UDP ||
           s->fmt->kind == KIND_UDP_BINARY;
}

/* ---- the public side ---------------------------------------------------------------------- */

twb_sender *twb_sender_new(const char *url, const twb_send_options *o, tw_error **err)
{
    twb_send_options defaults;
    if (!o) {
        twb_send_options_init(&defaults);
        o = &defaults;
    }
    if (!url || !*url) {
        tw__set_error(err, TW_E_CONFIG, "--send: no URL; accepted: %s", ACCEPTED_FORMS);
        return NULL;
    }
    char shown[512]; /* the URL for messages: never its credentials */
    tw__show_url(url, shown, sizeof shown);
    bool is_udp = has_prefix(url, "udp://");
    bool is_http = has_prefix(url, "http://") || has_prefix(url, "https://");
    char *host = NULL;
    unsigned int port = 0;
    if (is_udp && !tw__transport_parse_udp_url(url, &host, &port)) {
        tw__set_error(err, TW_E_CONFIG,
                      "--send %s: expected udp://HOST:PORT (HOST a name, an IPv4 address or "
                      "[IPv6]; PORT 1..65535)",
                      shown);
        return NULL;
    }
    const send_format *fmt = NULL;
    if (o->format) {
        fmt = format_named(o->format);
        if (!fmt || (fmt->is_http ? !is_http : !is_udp)) {
            tw__set_error(err, TW_E_CONFIG,
                          fmt ? "--send-format %s does not go with the URL %s: accepted: %s"
                              : "--send-format \"%s\" is unknown (URL %s); accepted: %s",
                          o->format, shown, ACCEPTED_FORMS);
            free(host);
            return NULL;
        }
    } else if (is_udp) {
        fmt = format_named(port == 6832 ? "jaeger-udp-binary" : "jaeger-udp");
    } else if (is_http) {
        const char *path;
        size_t len;
        url_path(url, &path, &len);
        for (size_t i = 0; i < N_FORMATS && !fmt; i++) {
            if (formats[i].suffix && path_ends_with(path, len, formats[i].suffix))
                fmt = &formats[i];
        }
    }
    if (!fmt) {
        tw__set_error(err, TW_E_CONFIG, "--send %s: cannot tell the backend; accepted: %s", shown,
                      ACCEPTED_FORMS);
        free(host);
        return NULL;
    }
    if (o->on_undelivered && !fmt->is_http) {
        tw__set_error(err, TW_E_CONFIG,
                      "--undelivered needs an HTTP --send: a Jaeger agent (%s) does not answer, so "
                      "what it received is not known",
                      shown);
        free(host);
        return NULL;
    }

    free(host); /* the transport parses the URL again */
    twb_sender *s = calloc(1, sizeof *s);
    tw_reporter_options *r = tw_reporter_options_new();
    if (!s || !r) {
        free(s);
        tw_reporter_options_free(r);
        tw__set_error(err, TW_E_NOMEM, "--send: out of memory");
        return NULL;
    }
    s->fmt = fmt;
    s->on_refused = o->on_refused;
    s->refused_arg = o->refused_arg;
    s->on_undelivered = o->on_undelivered;
    s->undelivered_arg = o->undelivered_arg;
    tw_status st = TW_OK;
    if (fmt->is_http) {
        /* A Jaeger collector's /api/traces handler reads the body as it
         * comes (jaeger-collector 1.x before its HTTP server moved to the
         * OpenTelemetry Collector's, which inflates): a gzipped body is a
         * 400 there, so Jaeger bodies are never gzipped (docs/bridge.md). */
        st = set_http_options(r, url, o, fmt->kind != KIND_JAEGER_HTTP, err);
    } else {
        size_t packet = o->max_packet_bytes ? o->max_packet_bytes : TWB_SEND_DEFAULT_MAX_PACKET;
        if (tw_reporter_options_set_max_packet_size(r, packet) != TW_OK)
            st = CONFIG_ERROR(err, "--send: the datagram size limit must be 512..65507 bytes");
    }
    if (st == TW_OK) {
        /* Checks the URL (and that a socket can be made) now, so a bad
         * --send fails before any input is read. */
        tw__transport_options to;
        tw__transport_options_init(&to);
        to.format = fmt->transport;
        to.url = url;
        to.reporter = r;
        to.on_refused = on_transport_refused;
        to.refused_arg = s;
        /* A batch tool waits for the backend rather than lose batches to
         * the reporters' cool-down. */
        to.give_up_rounds = o->give_up_rounds ? o->give_up_rounds : 1u;
        if (s->on_undelivered) {
            to.on_fate = on_transport_fate;
            to.fate_arg = s;
        }
        tw_error *e = NULL;
        s->transport = tw__transport_new(&to, &e);
        if (!s->transport) {
            st = e ? tw_error_status(e) : TW_E_NOMEM;
            tw__set_error(err, st, "--send: %s", e ? tw_error_message(e) : "out of memory");
            tw_error_free(e);
        }
    }
    tw_reporter_options_free(r);
    if (st != TW_OK) {
        twb_sender_free(s);
        return NULL;
    }
    return s;
}

unsigned int twb_sender_target_flags(const twb_sender *s)
{
    return s && is_jaeger(s) ? TWB_TARGET_JAEGER_IDS : 0u;
}

const char *twb_sender_format(const twb_sender *s)
{
    return s ? s->fmt->name : NULL;
}

tw_status twb_sender_send(twb_sender *s, const twb_span *spans, size_t n, tw_error **err)
{
    /* Runs of one process go to the transport together. */
    for (size_t i = 0; i < n;) {
        size_t k = i + 1;
        while (k < n && spans[k].process == spans[i].process)
            k++;
        const tw__span_data *batch[64];
        void *cookies[64];
        for (size_t at = i; at < k;) {
            size_t m = 0;
            tw_status st = TW_OK;
            for (; at < k && m < sizeof batch / sizeof batch[0]; at++) {
                if (s->on_undelivered && !(cookies[m] = track(s, &spans[at]))) {
                    st = TW_E_NOMEM;
                    break;
                }
                batch[m++] = spans[at].data;
            }
            if (st != TW_OK) { /* none of them was given: none is delivered */
                for (size_t j = 0; j < m; j++)
                    untrack(s, cookies[j], false);
                tw__set_error(err, st, "--send: out of memory");
                return st;
            }
            tw_error *e = NULL;
            st = tw__transport_send_tracked(s->transport, spans[i].process, batch,
                                            s->on_undelivered ? cookies : NULL, m, &e);
            if (st != TW_OK) {
                tw__set_error(err, st, "--send: %s", e ? tw_error_message(e) : "out of memory");
                tw_error_free(e);
                return st;
            }
        }
        i = k;
    }
    return TW_OK;
}

tw_status twb_sender_finish(twb_sender *s, tw_error **err)
{
    (void)err;
    tw__transport_flush(s->transport);
    return TW_OK;
}

void twb_sender_stats(const twb_sender *s, twb_send_stats *st)
{
    memset(st, 0, sizeof *st);
    if (!s)
        return;
    tw__transport_stats t;
    tw__transport_get_stats(s->transport, &t);
    st->sent = t.sent;
    st->failed = t.failed;
    st->too_large = t.too_large;
    st->batches = t.batches;
    st->bytes = t.bytes;
    st->retries = t.retries;
    st->split_requests = t.split_requests;
    st->refused = t.refused;
    st->requests = t.requests;
    st->refused_requests = t.refused_requests;
    st->unattempted = t.unattempted;
    st->has_given_up = t.has_given_up;
}

void twb_sender_abandon(twb_sender *s)
{
    while (s && s->pending)
        untrack(s, s->pending, false);
}

void twb_sender_free(twb_sender *s)
{
    if (!s)
        return;
    tw__transport_free(s->transport);
    while (s->pending) { /* not abandoned: dropped without a word (see send.h) */
        tracked *t = s->pending;
        s->pending = t->next;
        tw__span_data_unref(t->span.data);
        free(t);
    }
    free(s);
}
