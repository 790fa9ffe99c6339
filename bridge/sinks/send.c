/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/sinks/send.c: `--send URL` (send.h): the bridge's spans to a
 * backend through the SDK's own senders (report/http_sender.c with the
 * body formats of report/http_formats.c; report/udp_sender.c), so batching
 * on the exact encoded size, retries with backoff, gzip and the split of
 * refused batches are the SDK's, tested there and here.
 *
 * Processes: an SDK sender is opened with one process (a Jaeger Batch and
 * an OTLP resource carry it once per body), and the bridge's spans come
 * from many. So there is one SDK sender per distinct (interned) process,
 * made on first use. To bound memory and sockets with many processes:
 *   - at most TWB_SEND_MAX_SENDERS senders live at once; a new process past
 *     that flushes and frees the least recently used one;
 *   - the pending (unsent) HTTP bodies of all senders together stay under
 *     2 x max_body_bytes: past that, the sender holding the most is flushed.
 * Zipkin is the exception: each Zipkin span carries its own localEndpoint,
 * so spans of every process share one sender and fill the same bodies
 * (fewer, fuller requests, and no per-process partial bodies at the end).
 * The SDK's Zipkin format reads the process only when it encodes a span
 * (open() stores the pointer), so the one sender is re-opened whenever the
 * process changes between spans; test_send checks each span's
 * localEndpoint in mixed bodies.
 *
 * Jaeger targets get what the jaeger-thrift writer gets (wire/jaeger/jaeger_view.h):
 * the error tag normalised and an empty service named. The SDK senders
 * consume a reference per span and keep only its encoding, so a view (a
 * shallow copy) is handed over with one reference added to its copied count,
 * which the sender drops again: the view is never freed by it.
 *
 * Ownership and locking: see send.h. Single-threaded.
 */
#include "sinks/send.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/http.h"
#include "report/report.h"
#include "wire/jaeger/jaeger_view.h"

#define TWB_SEND_MAX_SENDERS 64
#define DEFAULT_RETRY_TIME_MS 15000u
#define DEFAULT_CONNECT_TIMEOUT_MS 5000u

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
    const tw__http_format_vtable *http; /* NULL for UDP */
} send_format;

static const send_format formats[] = {
    {"zipkin", "/api/v2/spans", KIND_ZIPKIN, &tw__http_zipkin_format},
    {"jaeger-http", "/api/traces", KIND_JAEGER_HTTP, &tw__http_jaeger_format},
    {"otlp-http", "/v1/traces", KIND_OTLP, &tw__http_otlp_format},
    /* Never chosen from the URL (it is /v1/traces too): --send-format names it. */
    {"otlp-http-proto", NULL, KIND_OTLP, &tw__http_otlp_proto_format},
    {"jaeger-udp", NULL, KIND_UDP, NULL},
    {"jaeger-udp-binary", NULL, KIND_UDP_BINARY, NULL},
};
#define N_FORMATS (sizeof formats / sizeof formats[0])

#define ACCEPTED_FORMS                                                                             \
    "http(s)://HOST:9411/api/v2/spans (Zipkin), http(s)://HOST:14268/api/traces (Jaeger "          \
    "collector), http(s)://HOST:4318/v1/traces (OTLP/HTTP), udp://HOST:6831 (Jaeger agent, "       \
    "compact) or udp://HOST:6832 (Jaeger agent, binary); or name the format with --send-format "   \
    "(zipkin, jaeger-http, otlp-http, otlp-http-proto, jaeger-udp, jaeger-udp-binary)"

/* One SDK sender and the process it was opened with. */
typedef struct slot {
    const tw__process *process; /* the key: interned, or NULL (no process) */
    tw__process named;          /* tw__jaeger_process's scratch for this process */
    tw__sender *sender;         /* NULL: open failed; its spans count as failed */
    size_t pending;             /* HTTP: bytes of the body its next flush sends */
    uint64_t last_use;
} slot;

struct twb_sender {
    const send_format *fmt;
    tw_reporter_options *ropts;
    tw__report_counters counters; /* shared by every SDK sender below */
    slot *slots[TWB_SEND_MAX_SENDERS];
    size_t n_slots;
    slot *last; /* the slot of the previous span: runs of one process skip the search */
    const tw__process *zipkin_open; /* Zipkin: the process the one sender is opened with */
    size_t pending_total, pending_budget;
    uint64_t tick;
    uint64_t failed_extra;         /* spans failed here (no sender), not by the SDK */
    tw__http_sender_stats retired; /* stats of senders freed already */
    tw__jaeger_view view;
    tw__process empty; /* stands for a NULL process (Jaeger and OTLP need one) */
    void (*on_refused)(void *arg, const char *trace_hex, const char *span_hex, const char *why);
    void *refused_arg;
};

void twb_send_options_init(twb_send_options *o)
{
    memset(o, 0, sizeof *o);
    o->max_retries = TW__HTTP_DEFAULT_MAX_RETRIES;
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

/* udp://HOST[:PORT][/]: HOST a name, an IPv4 literal or [IPv6]; PORT 1..65535
 * (default 6831). *host is a new string. */
static bool parse_udp(const char *url, char **host, unsigned int *port)
{
    const char *p = url + strlen("udp://");
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

/* ---- options ------------------------------------------------------------------------------ */

/* Sets a TW_E_CONFIG error; evaluates to TW_E_CONFIG. */
#define CONFIG_ERROR(err, ...) (tw__set_error((err), TW_E_CONFIG, __VA_ARGS__), TW_E_CONFIG)

static tw_status set_http_options(tw_reporter_options *r, const char *url,
                                  const twb_send_options *o, tw_error **err)
{
    unsigned int timeout = o->timeout_ms ? o->timeout_ms : TW__HTTP_DEFAULT_TIMEOUT_MS;
    unsigned int connect =
        timeout < DEFAULT_CONNECT_TIMEOUT_MS ? timeout : DEFAULT_CONNECT_TIMEOUT_MS;
    unsigned int backoff =
        o->initial_backoff_ms ? o->initial_backoff_ms : TW__HTTP_DEFAULT_INITIAL_BACKOFF_MS;
    /* Every attempt may use its whole timeout: the retry window allows it. */
    uint64_t window = (uint64_t)timeout * (o->max_retries + 1u);
    unsigned int retry_time = window > DEFAULT_RETRY_TIME_MS
                                  ? (window > 3600000u ? 3600000u : (unsigned int)window)
                                  : DEFAULT_RETRY_TIME_MS;
    char shown[512]; /* never the credentials */
    tw__redact_url(url, shown, sizeof shown);
    if (tw_reporter_options_set_endpoint(r, url) != TW_OK)
        return CONFIG_ERROR(err, "--send: bad URL \"%s\"", shown);
    if (o->max_body_bytes && tw_reporter_options_set_max_body_size(r, o->max_body_bytes) != TW_OK)
        return CONFIG_ERROR(err, "--send: the body size limit must be 512..1073741824 bytes");
    if (tw_reporter_options_set_max_retries(r, o->max_retries) != TW_OK)
        return CONFIG_ERROR(err, "--send: retries must be 0..100");
    if (tw_reporter_options_set_http_timeouts_ms(r, connect, timeout) != TW_OK ||
        tw_reporter_options_set_retry_backoff_ms(r, backoff, retry_time) != TW_OK)
        return CONFIG_ERROR(err, "--send: bad timeout or backoff");
    for (size_t i = 0; i < o->n_headers; i++) {
        const char *line = o->headers[i];
        const char *colon = strchr(line, ':');
        /* Never echo a header line: its value may be a credential
         * ("Authorization: Bearer ..."). The name, when there is one, is
         * enough to find it. */
        if (!colon || colon == line)
            return CONFIG_ERROR(err,
                                "--header number %zu: expected \"Name: value\" (the line is not "
                                "shown: it may hold a secret)",
                                i + 1);
        char *name = strndup(line, (size_t)(colon - line));
        const char *value = colon + 1 + strspn(colon + 1, " \t");
        tw_status st = name ? tw_reporter_options_add_header(r, name, value) : TW_E_NOMEM;
        free(name);
        if (st != TW_OK)
            return CONFIG_ERROR(err,
                                "--header \"%.*s: ...\": not a valid header (a name must be an "
                                "HTTP token other than Content-Type, Content-Length, Host, "
                                "Transfer-Encoding, Expect or Connection; a value one line)",
                                (int)(colon - line), line);
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
    r->http->is_gzip = o->is_gzip;
    return TW_OK;
}

/* ---- senders per process ---------------------------------------------------------------- */

static void hex_id(char *out, size_t size, uint64_t high, uint64_t low)
{
    if (high)
        snprintf(out, size, "%016" PRIx64 "%016" PRIx64, high, low);
    else
        snprintf(out, size, "%016" PRIx64, low);
}

static void on_sdk_refused(void *arg, uint64_t trace_high, uint64_t trace_low, uint64_t span_id,
                           const char *reason)
{
    twb_sender *s = arg;
    char trace[33], span[17];
    hex_id(trace, sizeof trace, trace_high, trace_low);
    hex_id(span, sizeof span, 0, span_id);
    if (s->on_refused) {
        s->on_refused(s->refused_arg, trace, span, reason);
    } else {
        char clean[1024]; /* the backend's answer: escaped, one line */
        tw__log_sanitize(reason, clean, sizeof clean);
        fprintf(stderr, "tracewire convert: --send (%s): span %s/%s refused: %s\n", s->fmt->name,
                trace, span, clean);
    }
}

static tw__sender *new_sdk_sender(const twb_sender *s, tw_error **err)
{
    switch (s->fmt->kind) {
    case KIND_UDP:
        return tw__udp_sender_new(s->ropts, err);
    case KIND_UDP_BINARY:
        return tw__udp_sender_new_binary(s->ropts, err);
    default:
        return tw__http_sender_new(s->fmt->http, s->ropts, err);
    }
}

static bool is_jaeger(const twb_sender *s)
{
    return s->fmt->kind == KIND_JAEGER_HTTP || s->fmt->kind == KIND_UDP ||
           s->fmt->kind == KIND_UDP_BINARY;
}

static void retire_stats(twb_sender *s, const tw__sender *sender)
{
    tw__http_sender_stats st;
    tw__http_sender_get_stats(sender, &st);
    s->retired.retries += st.retries;
    s->retired.split_requests += st.split_requests;
    s->retired.refused += st.refused;
    s->retired.body_bytes += st.body_bytes;
}

static void flush_slot(twb_sender *s, slot *sl)
{
    if (sl->sender)
        sl->sender->vtable->flush(sl->sender);
    s->pending_total -= sl->pending;
    sl->pending = 0;
}

static void free_slot(twb_sender *s, slot *sl)
{
    if (sl->sender) {
        retire_stats(s, sl->sender);
        sl->sender->vtable->free(sl->sender);
    }
    free(sl);
}

/* Opens a sender for @process (which stays the caller's). A process the
 * SDK cannot open (e.g. a Jaeger agent process larger than a datagram)
 * gives a slot without sender, reported once here. NULL with *st and @err
 * set when no sender can be made (out of memory, no socket). */
static slot *open_slot(twb_sender *s, const tw__process *process, tw_status *st, tw_error **err)
{
    slot *sl = calloc(1, sizeof *sl);
    tw_error *e = NULL;
    if (!sl || !(sl->sender = new_sdk_sender(s, &e))) {
        *st = e ? tw_error_status(e) : TW_E_NOMEM;
        tw__set_error(err, *st, "--send: %s", e ? tw_error_message(e) : "out of memory");
        tw_error_free(e);
        free(sl);
        return NULL;
    }
    sl->process = process;
    sl->sender->counters = &s->counters;
    tw__http_sender_set_refused_fn(sl->sender, on_sdk_refused, s);
    /* Zipkin: a NULL process is no localEndpoint; the others need one. */
    const tw__process *p = process || s->fmt->kind == KIND_ZIPKIN ? process : &s->empty;
    if (is_jaeger(s))
        p = tw__jaeger_process(p, &sl->named);
    else if (s->fmt->kind == KIND_OTLP)
        p = tw__process_named(p, TW__OTLP_EMPTY_SERVICE, &sl->named);
    if (sl->sender->vtable->open(sl->sender, p, &e) != TW_OK) {
        char clean[1024]; /* quotes a service name read from the input: escaped */
        snprintf(clean, sizeof clean, "--send (%s): spans of service \"%s\" cannot be sent: %s",
                 s->fmt->name, p && p->service_name ? p->service_name : "", tw_error_message(e));
        char shown[1100];
        tw__log_sanitize(clean, shown, sizeof shown);
        fprintf(stderr, "tracewire convert: %s\n", shown);
        tw_error_free(e);
        sl->sender->vtable->free(sl->sender);
        sl->sender = NULL;
    }
    return sl;
}

/* The slot for @process: the cached one, a live one, or a new one (the
 * least recently used is flushed and freed when all are taken). */
static slot *slot_for(twb_sender *s, const tw__process *process, tw_status *st, tw_error **err)
{
    if (s->fmt->kind == KIND_ZIPKIN)
        process = NULL; /* one sender for every process (see the top comment) */
    if (s->last && s->last->process == process)
        return s->last;
    slot *found = NULL;
    for (size_t i = 0; i < s->n_slots && !found; i++) {
        if (s->slots[i]->process == process)
            found = s->slots[i];
    }
    if (!found) {
        size_t at = s->n_slots;
        if (at == TWB_SEND_MAX_SENDERS) {
            at = 0;
            for (size_t i = 1; i < s->n_slots; i++) {
                if (s->slots[i]->last_use < s->slots[at]->last_use)
                    at = i;
            }
            flush_slot(s, s->slots[at]);
            free_slot(s, s->slots[at]);
            s->slots[at] = s->slots[--s->n_slots]; /* keeps slots[] dense */
            s->last = NULL;
            at = s->n_slots;
        }
        found = open_slot(s, process, st, err);
        if (!found)
            return NULL;
        s->slots[at] = found;
        s->n_slots++;
    }
    s->last = found;
    return found;
}

/* Keeps the unsent bodies of all senders under the budget after @sl grew. */
static void bound_pending(twb_sender *s, slot *sl)
{
    size_t now = tw__http_sender_pending_bytes(sl->sender);
    s->pending_total = s->pending_total - sl->pending + now;
    sl->pending = now;
    while (s->pending_total > s->pending_budget) {
        slot *largest = NULL;
        for (size_t i = 0; i < s->n_slots; i++) {
            if (!largest || s->slots[i]->pending > largest->pending)
                largest = s->slots[i];
        }
        if (!largest || largest->pending == 0)
            break;
        flush_slot(s, largest);
    }
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
    tw__redact_url(url, shown, sizeof shown);
    bool is_udp = has_prefix(url, "udp://");
    bool is_http = has_prefix(url, "http://") || has_prefix(url, "https://");
    char *host = NULL;
    unsigned int port = 0;
    if (is_udp && !parse_udp(url, &host, &port)) {
        tw__set_error(err, TW_E_CONFIG,
                      "--send \"%s\": expected udp://HOST:PORT (HOST a name, an IPv4 address or "
                      "[IPv6]; PORT 1..65535)",
                      shown);
        return NULL;
    }
    const send_format *fmt = NULL;
    if (o->format) {
        fmt = format_named(o->format);
        if (!fmt || (fmt->http ? !is_http : !is_udp)) {
            tw__set_error(err, TW_E_CONFIG,
                          fmt ? "--send-format %s does not go with the URL \"%s\": accepted: %s"
                              : "--send-format \"%s\" is unknown (URL \"%s\"); accepted: %s",
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
        tw__set_error(err, TW_E_CONFIG, "--send \"%s\": cannot tell the backend; accepted: %s",
                      shown, ACCEPTED_FORMS);
        free(host);
        return NULL;
    }

    twb_sender *s = calloc(1, sizeof *s);
    if (!s || !(s->ropts = tw_reporter_options_new())) {
        free(s);
        free(host);
        tw__set_error(err, TW_E_NOMEM, "--send: out of memory");
        return NULL;
    }
    s->fmt = fmt;
    s->on_refused = o->on_refused;
    s->refused_arg = o->refused_arg;
    tw__process_init(&s->empty);
    tw__jaeger_view_init(&s->view);
    tw_status st = TW_OK;
    if (fmt->http) {
        st = set_http_options(s->ropts, url, o, err);
    } else {
        size_t packet = o->max_packet_bytes ? o->max_packet_bytes : TWB_SEND_DEFAULT_MAX_PACKET;
        if (tw_reporter_options_set_agent(s->ropts, host, port) != TW_OK)
            st = CONFIG_ERROR(err, "--send: bad agent address \"%s\"", shown);
        else if (tw_reporter_options_set_max_packet_size(s->ropts, packet) != TW_OK)
            st = CONFIG_ERROR(err, "--send: the datagram size limit must be 512..65507 bytes");
    }
    free(host);
    if (st == TW_OK) {
        size_t body = fmt->http ? s->ropts->http->max_body_bytes : 0;
        s->pending_budget = 2 * body;
        /* Checks the URL (and that a socket can be made) now, so a bad
         * --send fails before any input is read. */
        tw__sender *probe = new_sdk_sender(s, err);
        if (!probe)
            st = TW_E_CONFIG;
        else
            probe->vtable->free(probe);
    }
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
    for (size_t i = 0; i < n; i++) {
        tw_status st = TW_OK;
        slot *sl = slot_for(s, spans[i].process, &st, err);
        if (!sl)
            return st;
        sl->last_use = ++s->tick;
        if (!sl->sender) {
            s->failed_extra++;
            continue;
        }
        const tw__span_data *data = spans[i].data;
        if (is_jaeger(s)) {
            data = tw__jaeger_view_of(&s->view, data);
            if (!data) {
                tw__set_error(err, TW_E_NOMEM, "--send: out of memory");
                return TW_E_NOMEM;
            }
        }
        if (s->fmt->kind == KIND_ZIPKIN && s->zipkin_open != spans[i].process) {
            /* Cannot fail: the Zipkin format only keeps the pointer. */
            sl->sender->vtable->open(sl->sender, spans[i].process, NULL);
            s->zipkin_open = spans[i].process;
        }
        /* The sender consumes a reference; a view's copied count makes this
         * +1 -1 on the view, never a free (see the top comment). */
        sl->sender->vtable->append(sl->sender, tw__span_data_ref((tw__span_data *)data));
        if (s->fmt->http)
            bound_pending(s, sl);
    }
    return TW_OK;
}

tw_status twb_sender_finish(twb_sender *s, tw_error **err)
{
    (void)err;
    for (size_t i = 0; i < s->n_slots; i++)
        flush_slot(s, s->slots[i]);
    return TW_OK;
}

void twb_sender_stats(const twb_sender *s, twb_send_stats *st)
{
    memset(st, 0, sizeof *st);
    if (!s)
        return;
    tw__http_sender_stats h = s->retired;
    for (size_t i = 0; i < s->n_slots; i++) {
        tw__http_sender_stats one;
        tw__http_sender_get_stats(s->slots[i]->sender, &one);
        h.retries += one.retries;
        h.split_requests += one.split_requests;
        h.refused += one.refused;
    }
    st->sent = tw__read(&s->counters.sent);
    st->failed = tw__read(&s->counters.failed) + s->failed_extra;
    st->too_large = tw__read(&s->counters.too_large);
    st->batches = tw__read(&s->counters.batches);
    st->bytes = tw__read(&s->counters.bytes);
    st->retries = h.retries;
    st->split_requests = h.split_requests;
    st->refused = h.refused;
}

void twb_sender_free(twb_sender *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_slots; i++)
        free_slot(s, s->slots[i]);
    tw__jaeger_view_clear(&s->view);
    tw__process_clear(&s->empty);
    tw_reporter_options_free(s->ropts);
    free(s);
}
