/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/agent/dest.c: one forwarding destination of `tracewire agent`
 * (agent.h, docs/agent.md "Forwarding" and "Durability"): a bounded queue
 * filled by the receivers, and a thread that batches (batch.h), encodes,
 * sends, retries, spools and replays.
 *
 * Queue: a ring of twa_item bounded by spans and by an estimate of the bytes
 * the records hold; a receiver that finds it full drops the spans and counts
 * them (queue_full), follow mode waits instead. One mutex and two condition
 * variables (work, room).
 *
 * Sending a batch (the destination thread):
 *   1. With a spool that is not empty, or while the destination is known to
 *      be down, the batch goes to the spool (order is kept: the spool is
 *      replayed oldest first, and nothing overtakes it).
 *   2. Else one attempt. 2xx: acknowledged. 400/413: the batch is split in
 *      halves and each half sent again, recursively (at most 64 extra
 *      requests), so that only the spans refused on their own are dropped
 *      (refused). The statuses the destination's retry rule retries
 *      (transport/http_head.h, the SDK's rule too: OTLP 429, 502, 503, 504;
 *      Zipkin and the Jaeger collector those and 500), network errors and
 *      timeouts are "not now": with a spool the batch is written to it at once
 *      (well under the one second the documentation promises) and the
 *      destination is marked down; without one it is retried with exponential
 *      backoff (initial_backoff_ms doubling to max_backoff_ms, jittered,
 *      at least the server's Retry-After) up to max_retries times, then dropped
 *      (send_failed). Spans read by follow mode are never dropped this way:
 *      their batch is retried until it goes or the agent stops, since the log
 *      file is their spool and the checkpoint must not pass them. Every other
 *      status (501, an OTLP 500, ...) is final: the batch is dropped at once
 *      (send_failed, logged), never retried or spooled, follow mode's
 *      included (dropped for good: the checkpoint passes them). 401, 403,
 *      404 and 407 refuse the agent, not the spans: without a spool or
 *      follow mode they are final too; with a spool the batch is spooled
 *      (replayed after the backoff, so mended credentials and a restart
 *      deliver it), follow mode's batch is tried again as "not now".
 *   3. Replay: while the spool holds batches and the backoff allows, the
 *      oldest is sent; 2xx deletes it, "not now" doubles the backoff, 400/413
 *      drops it (a spooled body is not split again) and counts it refused, a
 *      final status drops it and counts it send_failed (401, 403, 404, 407
 *      keep it, as "not now").
 *
 * Every outcome is reported per batch: counters, and each span's follow-mode
 * chunk is told it is done (twa_chunk_done), so the checkpoint advances only
 * over spans that were acknowledged, spooled or dropped for good.
 *
 * Stop: twa_dest_stop sets a deadline; the thread takes everything queued,
 * flushes every batch, and sends or spools them; what is left at the
 * deadline is spooled (spool) or dropped as `shutdown`.
 */
#include "agent/agent.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "agent/batch.h"
#include "agent/spool.h"
#include "sinks/send.h"
#include "transport/http_head.h"
#include "tracewire/version.h"
#include "wire/core/redact.h"

#define MAX_OPEN_BATCHES 64
#define RESPONSE_SNIPPET 200
#define MAX_SPLIT_DEPTH 64
/* Spans the destination thread takes from its queue at once. */
#define TAKE_MAX 512

/* FINAL: an answer no retry cures (transport/http_head.h): dropped at once.
 * DENIED: a final answer that refuses the agent rather than the spans (401,
 * 403, 404, 407: credentials, path, proxy): final too, except that a spool or
 * follow mode keeps the spans for when the configuration is mended. */
typedef enum attempt_result { SENT, REFUSED, NOT_NOW, FINAL, DENIED } attempt_result;

typedef enum dest_kind { DEST_HTTP, DEST_UDP, DEST_FILE } dest_kind;

struct twa_dest {
    twa_dest_options o; /* strings below are owned copies */
    char *url;
    char *shown_url; /* the URL redacted (make_label) */
    char *label;     /* shown_url, numbered when another destination shows the same */
    char *identity;  /* URL, format, file format (make_key) */
    char *key;       /* identity and twin rank: what names the spool; secret */
    char **headers;
    dest_kind kind;
    twa_framing_kind frame_kind;
    twa_dest_stats st;

    /* the queue */
    pthread_mutex_t lock;
    pthread_cond_t work, room;
    twa_item *ring;
    size_t ring_cap; /* slots allocated (grows to cap) */
    size_t cap, head, count;
    tw__span_data *ids_only; /* the batcher's view of an early-encoded span: its ids */
    size_t bytes;
    /* Room promised to all-or-nothing pushers (twa_dest_reserve) that have
     * not pushed yet: other pushers see it as taken. */
    size_t reserved_spans, reserved_bytes;
    bool stopping;
    int64_t deadline_ns; /* when stopping */
    pthread_t thread;
    bool has_thread;

    /* the thread's own state */
    twa_framing *framing;
    twa_batcher *batcher;
    twa_spool *spool;
    char *spool_dir; /* opened by twa_dest_start */
    tw__buf body, gz, spooled;
    z_stream z;
    bool has_z;
    CURL *curl;
    struct curl_slist *curl_headers;
    char errbuf[CURL_ERROR_SIZE];
    char snippet[RESPONSE_SNIPPET + 1];
    size_t snippet_len;
    unsigned int retry_after_ms;
    /* The answer in flight: its last status line, whether that block of
     * headers ended (a final answer), when, and the body bytes since. A
     * 2xx whose headers ended took the batch, whatever its body does. */
    tw__http_head answer; /* the answer's status line and headers */
    int64_t head_done_ns;
    size_t answer_bytes;
    char last_cut[CURL_ERROR_SIZE + 64];
    bool is_cut_at_deadline; /* the attempt was ended by the stop deadline (on_progress) */
    char *user, *password;
    int udp_fd;
    int file_fd; /* file: destinations, O_APPEND */
    bool is_down;
    int64_t replay_at_ns;
    unsigned int backoff_ms;
    uint64_t rng;
    /* What failed in the last attempt (set by attempt: a libcurl code and
     * errno, an HTTP status, a write errno), and the last failure logged,
     * both by identity: the text of one failure varies between attempts
     * (libcurl's "after N ms"), so it is not what log_change compares. */
    char fail_id[64];
    char last_error[64];
};

static bool grow_ring(twa_dest *d);

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void twa_dest_options_init(twa_dest_options *o)
{
    memset(o, 0, sizeof *o);
    o->max_retries = 3;
    o->timeout_ms = 10000;
    o->initial_backoff_ms = 100;
    o->max_backoff_ms = 30000;
    o->is_gzip = true;
    o->flush_ms = 1000;
    o->queue_max_spans = 65536;
    o->queue_max_bytes = (size_t)12 << 20; /* peak RSS <= 32 MiB while overloaded (docs/agent.md) */
    o->max_split_requests = 64;
}

const char *twa_dest_label(const twa_dest *d)
{
    return d->label;
}

twa_dest_stats *twa_dest_get_stats(twa_dest *d)
{
    return &d->st;
}

/* Which answers this destination retries: OTLP/HTTP's rule or the
 * collectors' (transport/http_head.h, the same as the SDK's sender). */
static tw__http_retry_rule retry_rule(const twa_dest *d)
{
    return d->frame_kind == TWA_FRAME_OTLP_JSON || d->frame_kind == TWA_FRAME_OTLP_PROTO
               ? TW__HTTP_RETRY_OTLP
               : TW__HTTP_RETRY_COLLECTOR;
}

bool twa_dest_is_jaeger(const twa_dest *d)
{
    return d->frame_kind == TWA_FRAME_JAEGER_HTTP || d->frame_kind == TWA_FRAME_UDP_COMPACT ||
           d->frame_kind == TWA_FRAME_UDP_BINARY;
}

/* ---- configuration ------------------------------------------------------------------------ */

static bool has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* The URL path without query and trailing slashes ends with @suffix. */
static bool path_ends_with(const char *url, const char *suffix)
{
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    p += strcspn(p, "/?#");
    size_t n = *p == '/' ? strcspn(p, "?#") : 0;
    while (n > 0 && p[n - 1] == '/')
        n--;
    size_t k = strlen(suffix);
    return n >= k && memcmp(p + n - k, suffix, k) == 0;
}

static const struct {
    const char *name;
    twa_framing_kind kind;
} send_formats[] = {
    {"zipkin", TWA_FRAME_ZIPKIN},
    {"jaeger-http", TWA_FRAME_JAEGER_HTTP},
    {"otlp-http", TWA_FRAME_OTLP_JSON},
    {"otlp-http-json", TWA_FRAME_OTLP_JSON},
    {"otlp-http-proto", TWA_FRAME_OTLP_PROTO}, /* the name convert and the library use */
    {"otlp-http-protobuf", TWA_FRAME_OTLP_PROTO},
    {"jaeger-udp", TWA_FRAME_UDP_COMPACT},
    {"jaeger-udp-binary", TWA_FRAME_UDP_BINARY},
};

#define ACCEPTED                                                                                   \
    "http(s)://HOST:9411/api/v2/spans (Zipkin), http(s)://HOST:14268/api/traces (Jaeger "          \
    "collector), http(s)://HOST:4318/v1/traces (OTLP/HTTP JSON), udp://HOST:6831 (Jaeger agent, "  \
    "compact; port 6832: binary), file:PATH (--file-format, default dapper); or --send-format "    \
    "zipkin|jaeger-http|otlp-http|otlp-http-proto|jaeger-udp|jaeger-udp-binary"

/* Where the URL came from, for messages: --send or an environment variable. */
static const char *from(const twa_dest *d)
{
    return d->o.url_from ? d->o.url_from : "--send";
}

/* What logs, metrics and the summary call the destination: the URL under
 * the project's redaction (wire/core/redact.h: user:password and query
 * values as ***, query keys kept), so that two destinations that differ
 * only there stay told apart where possible. A file: path is not a URL:
 * it is shown whole (control bytes escaped). */
static char *make_label(const char *url)
{
    size_t size = 4 * strlen(url) + 16; /* room for every \xNN and *** */
    char *out = malloc(size);
    if (!out)
        return NULL;
    if (has_prefix(url, "file:") && !strstr(url, "://"))
        tw__redact_text(url, out, size);
    else
        tw__redact_url(url, out, size);
    return out;
}

/* What an error shows for --send: the label when the value is a valid URL
 * (or a file: path), else no part of it: a value that is not a URL cannot
 * be told apart into host and credentials, so none of it is shown. */
static const char *shown_send(const twa_dest *d)
{
    if (has_prefix(d->url, "file:") && !strstr(d->url, "://"))
        return d->label;
    return tw__url_parses(d->url) ? d->label : TW__URL_NOT_SHOWN;
}

/* The name a destination's format goes by in its identity (below). */
static const char *frame_name(twa_framing_kind kind)
{
    for (size_t i = 0; i < sizeof send_formats / sizeof send_formats[0]; i++) {
        if (send_formats[i].kind == kind)
            return send_formats[i].name;
    }
    return "file";
}

/* The label, made unique among the destinations made before this one: two
 * that redact the same (?tenant=a and ?tenant=b both show ?tenant=***) get
 * " #2", " #3" in the order given, so that metrics never hold two series
 * with the same labels and logs tell them apart (docs/agent.md). */
static char *unique_label(const char *base, const twa_dest_options *o)
{
    char *label = strdup(base);
    for (unsigned int k = 2; label; k++) {
        bool is_taken = false;
        for (size_t i = 0; i < o->n_earlier && !is_taken; i++)
            is_taken = strcmp(o->earlier[i]->label, label) == 0;
        if (!is_taken)
            return label;
        free(label);
        if (asprintf(&label, "%s #%u", base, k) < 0)
            label = NULL;
    }
    return NULL;
}

/* What names the destination's spool (spool.c hashes it, keyed, into the
 * directory's name): everything that makes the destination what it is (the
 * whole URL with its query and user:password, the format, the file format),
 * so that destinations that differ anywhere get their own spool, the same
 * destination finds its spool again after a restart, and no secret of the
 * URL shows in the name. Destinations given twice alike are told apart by
 * their rank among their twins. Holds secrets: never logged. */
static char *make_key(twa_dest *d, const twa_dest_options *o)
{
    d->identity =
        g_strdup_printf("%s\n%s\n%s", o->url, frame_name(d->frame_kind),
                        d->kind == DEST_FILE && o->file_writer ? o->file_writer->name : "");
    unsigned int twins = 0;
    for (size_t i = 0; i < o->n_earlier; i++)
        twins += strcmp(o->earlier[i]->identity, d->identity) == 0;
    return twins ? g_strdup_printf("%s\n#%u", d->identity, twins + 1) : g_strdup(d->identity);
}

static bool parse_host_port(const char *hp, char **host, char **port, const char *default_port)
{
    const char *h = hp, *h_end;
    if (*hp == '[') {
        h = hp + 1;
        h_end = strchr(h, ']');
        if (!h_end)
            return false;
        hp = h_end + 1;
    } else {
        h_end = hp + strcspn(hp, ":/");
        hp = h_end;
    }
    if (h_end == h)
        return false;
    const char *p = default_port;
    size_t plen = strlen(default_port);
    if (*hp == ':') {
        p = hp + 1;
        plen = strcspn(p, "/");
        if (plen == 0 || plen > 5 || strspn(p, "0123456789") < plen)
            return false;
    }
    *host = strndup(h, (size_t)(h_end - h));
    *port = strndup(p, plen);
    return *host && *port;
}

/* A udp:// URL's HOST:PORT, checked when the destination is made (a usage
 * error); resolved and connected when it starts (twa_dest_start): a name
 * that does not resolve is a start failure, as a port in use is. */
static bool udp_url_ok(twa_dest *d, char *why, size_t why_size)
{
    char *host = NULL, *port = NULL;
    bool ok = parse_host_port(d->url + strlen("udp://"), &host, &port, "6831");
    if (!ok)
        snprintf(why, why_size, "%s %s: expected udp://HOST:PORT", from(d), shown_send(d));
    free(host);
    free(port);
    return ok;
}

static bool open_udp(twa_dest *d, char *why, size_t why_size)
{
    char *host = NULL, *port = NULL;
    if (!parse_host_port(d->url + strlen("udp://"), &host, &port, "6831")) {
        snprintf(why, why_size, "%s %s: expected udp://HOST:PORT", from(d), d->label);
        free(host);
        free(port);
        return false;
    }
    struct addrinfo hints = {.ai_socktype = SOCK_DGRAM}, *res = NULL;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        snprintf(why, why_size, "%s %s: %s", from(d), d->label, gai_strerror(rc));
        free(host);
        free(port);
        return false;
    }
    d->udp_fd = socket(res->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    bool ok = d->udp_fd >= 0 && connect(d->udp_fd, res->ai_addr, res->ai_addrlen) == 0;
    if (!ok)
        snprintf(why, why_size, "%s %s: %s", from(d), d->label, strerror(errno));
    freeaddrinfo(res);
    free(host);
    free(port);
    return ok;
}

static bool dup_str(char **dst, const char *src)
{
    *dst = src ? strdup(src) : NULL;
    return !src || *dst;
}

twa_dest *twa_dest_new(const twa_dest_options *o, unsigned int index, char *why, size_t why_size)
{
    (void)index;
    twa_dest *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    d->o = *o;
    /* Borrowed pointers of the caller are not kept: copies below. */
    d->o.ca_file = d->o.cert_file = d->o.key_file = NULL;
    d->o.headers = NULL;
    d->o.n_headers = 0;
    d->o.user = NULL;
    d->o.format = d->o.file_format = d->o.spool_dir = NULL;
    d->udp_fd = -1;
    d->file_fd = -1;
    pthread_mutex_init(&d->lock, NULL);
    pthread_cond_init(&d->work, NULL);
    pthread_cond_init(&d->room, NULL);
    atomic_init(&d->st.up, -1); /* unknown until the first attempt ends */
    tw__buf_init(&d->body);
    tw__buf_init(&d->gz);
    tw__buf_init(&d->spooled);
    d->rng = (uint64_t)now_ns() ^ (uintptr_t)d ^ 0x9e3779b97f4a7c15ull;
    if (!dup_str(&d->url, o->url) || !(d->shown_url = make_label(o->url)) ||
        !(d->label = unique_label(d->shown_url, o))) {
        snprintf(why, why_size, "out of memory");
        goto fail;
    }
    d->o.url = d->url;
    d->o.earlier = NULL;
    d->o.n_earlier = 0;

    bool is_http = has_prefix(o->url, "http://") || has_prefix(o->url, "https://");
    bool is_udp = has_prefix(o->url, "udp://");
    bool is_file = has_prefix(o->url, "file:");
    bool found = false;
    if (o->format && !is_file) {
        for (size_t i = 0; i < sizeof send_formats / sizeof send_formats[0]; i++) {
            if (strcmp(send_formats[i].name, o->format) == 0) {
                d->frame_kind = send_formats[i].kind;
                found = true;
            }
        }
        bool wants_udp = found && (d->frame_kind == TWA_FRAME_UDP_COMPACT ||
                                   d->frame_kind == TWA_FRAME_UDP_BINARY);
        if (!found || (wants_udp ? !is_udp : !is_http)) {
            if (o->format_from)
                snprintf(why, why_size, "the format %s (%s) does not go with %s %s; accepted: %s",
                         o->format, o->format_from, from(d), shown_send(d), ACCEPTED);
            else
                snprintf(why, why_size, "--send-format %s does not go with %s %s; accepted: %s",
                         o->format, from(d), shown_send(d), ACCEPTED);
            goto fail;
        }
    } else if (is_http) {
        if (path_ends_with(o->url, "/api/v2/spans"))
            d->frame_kind = TWA_FRAME_ZIPKIN, found = true;
        else if (path_ends_with(o->url, "/api/traces"))
            d->frame_kind = TWA_FRAME_JAEGER_HTTP, found = true;
        else if (path_ends_with(o->url, "/v1/traces"))
            d->frame_kind = TWA_FRAME_OTLP_JSON, found = true;
    } else if (is_udp) {
        const char *colon = strrchr(o->url, ':');
        d->frame_kind =
            colon && strcmp(colon, ":6832") == 0 ? TWA_FRAME_UDP_BINARY : TWA_FRAME_UDP_COMPACT;
        found = true;
    } else if (is_file) {
        d->frame_kind = TWA_FRAME_FILE;
        found = o->file_writer != NULL;
        if (!found) {
            snprintf(why, why_size, "%s %s: no output format for the file", from(d), d->label);
            goto fail;
        }
    }
    if (!found) {
        snprintf(why, why_size, "%s %s: cannot tell the backend; accepted: %s", from(d),
                 shown_send(d), ACCEPTED);
        goto fail;
    }
    d->kind = is_http ? DEST_HTTP : is_udp ? DEST_UDP : DEST_FILE;
    /* Never gzip to a Jaeger collector: its /api/traces handler reads the
     * body as it comes (jaeger-collector 1.x before its HTTP server moved to
     * the OpenTelemetry Collector's, which inflates), and answers 400. */
    if (d->frame_kind == TWA_FRAME_JAEGER_HTTP)
        d->o.is_gzip = false;
    if (!(d->key = make_key(d, o))) {
        snprintf(why, why_size, "out of memory");
        goto fail;
    }
    d->framing = twa_framing_new(d->frame_kind, o->file_writer, why, why_size);
    if (!d->framing)
        goto fail;
    if (!d->o.max_body_bytes)
        d->o.max_body_bytes = d->kind == DEST_UDP
                                  ? (o->max_packet_bytes ? o->max_packet_bytes : 65000)
                                  : (size_t)1 << 20;
    if (d->kind == DEST_UDP) {
        if (d->o.max_body_bytes > 65507)
            d->o.max_body_bytes = 65507;
        if (!udp_url_ok(d, why, why_size))
            goto fail;
    } else if (d->kind == DEST_FILE) {
        /* opened by twa_dest_start */
    } else {
        CURLU *u = curl_url();
        bool ok = u && curl_url_set(u, CURLUPART_URL, o->url, 0) == CURLUE_OK;
        curl_url_cleanup(u);
        if (!ok) {
            snprintf(why, why_size,
                     "%s: not a valid URL (the value is not shown: it may hold a secret)", from(d));
            goto fail;
        }
        char line[128];
        snprintf(line, sizeof line, "Content-Type: %s", twa_framing_content_type(d->framing));
        d->curl_headers = curl_slist_append(d->curl_headers, line);
        d->curl_headers = curl_slist_append(d->curl_headers, "Expect:");
        if (d->o.is_gzip)
            d->curl_headers = curl_slist_append(d->curl_headers, "Content-Encoding: gzip");
        for (size_t i = 0; i < o->n_headers; i++) {
            /* convert's rules (one line, a token name, not a header the
             * agent sets); the message never shows the value. */
            size_t name_len;
            if (!twb_header_line_check(o->headers[i], i + 1, &name_len, why, why_size))
                goto fail;
            d->curl_headers = curl_slist_append(d->curl_headers, o->headers[i]);
        }
        if (o->user) {
            const char *colon = strchr(o->user, ':');
            d->user = colon ? strndup(o->user, (size_t)(colon - o->user)) : strdup(o->user);
            d->password = strdup(colon ? colon + 1 : "");
        }
        const char *files[] = {o->ca_file, o->cert_file, o->key_file};
        for (size_t i = 0; i < 3; i++) {
            if (files[i] && access(files[i], R_OK) != 0) {
                snprintf(why, why_size, "%s %s: %s cannot be read: %s", from(d), d->label, files[i],
                         strerror(errno));
                goto fail;
            }
        }
    }
    if (!dup_str((char **)&d->o.ca_file, o->ca_file) ||
        !dup_str((char **)&d->o.cert_file, o->cert_file) ||
        !dup_str((char **)&d->o.key_file, o->key_file)) {
        snprintf(why, why_size, "out of memory");
        goto fail;
    }
    d->cap = d->o.queue_max_spans ? d->o.queue_max_spans : 65536;
    d->ids_only = tw__span_data_new();
    d->batcher = twa_batcher_new(d->framing, d->o.max_body_bytes, MAX_OPEN_BATCHES, d->o.flush_ms,
                                 NULL, d); /* emit set below */
    if (!grow_ring(d) || !d->ids_only || !d->batcher) {
        snprintf(why, why_size, "out of memory");
        goto fail;
    }
    if (!dup_str(&d->spool_dir, o->spool_dir)) {
        snprintf(why, why_size, "out of memory");
        goto fail;
    }
    d->backoff_ms = d->o.initial_backoff_ms;
    return d;
fail:
    twa_dest_free(d);
    return NULL;
}

/* ---- the queue ------------------------------------------------------------------------------- */

/* What a record holds in memory, roughly: the record, its inline arena and
 * its extra arena blocks. */
static size_t item_bytes(const tw__span_data *s)
{
    size_t n = sizeof *s + TW__SPAN_INLINE_ARENA;
    for (const tw__arena_block *b = s->arena.extra; b; b = b->next)
        n += sizeof *b + b->size;
    return n;
}

/* What a queue slot holds: the record or, when encoded early, its item. */
static size_t slot_bytes(const twa_item *it)
{
    return it->data ? item_bytes(it->data) : twa_early_item_bytes(it->encoded_size);
}

/* The ring grows on demand up to d->cap (queue_max_spans), so that its
 * memory follows the longest queue seen, not the bound (lock held). */
#define RING_FIRST 1024

static bool grow_ring(twa_dest *d)
{
    if (d->ring_cap >= d->cap)
        return false;
    size_t cap = d->ring_cap ? d->ring_cap * 2 : RING_FIRST;
    if (cap > d->cap)
        cap = d->cap;
    twa_item *ring = malloc(cap * sizeof *ring);
    if (!ring)
        return false;
    for (size_t i = 0; i < d->count; i++)
        ring[i] = d->ring[(d->head + i) % d->ring_cap];
    free(d->ring);
    d->ring = ring;
    d->ring_cap = cap;
    d->head = 0;
    return true;
}

/* Releases a queue slot's references and its early item. */
static void slot_release(twa_dest *d, twa_item *it)
{
    if (it->encoded) { /* rare: an early item no batch took */
        twa_framing_free_item(d->framing, it->encoded);
        it->encoded = NULL;
        it->encoded_size = 0;
    }
    twa_item_release(it);
}

size_t twa_items_bytes(const twa_item *items, size_t n)
{
    size_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += item_bytes(items[i].data);
    return sum;
}

size_t twa_dest_capacity_spans(const twa_dest *d)
{
    return d->cap;
}

twa_admit twa_dest_reserve(twa_dest *d, size_t n, size_t bytes)
{
    /* A request whose records are more than the whole queue's bytes still
     * goes into an empty queue, as one large span does in push(): the queue
     * then holds it alone (docs/agent.md, "HTTP answers"). */
    if (n > d->cap)
        return TWA_ADMIT_TOO_LARGE;
    pthread_mutex_lock(&d->lock);
    size_t spans = d->count + d->reserved_spans;
    bool fits = !d->stopping && spans + n <= d->cap &&
                (d->bytes + d->reserved_bytes + bytes <= d->o.queue_max_bytes || spans == 0);
    if (fits) {
        d->reserved_spans += n;
        d->reserved_bytes += bytes;
    }
    pthread_mutex_unlock(&d->lock);
    return fits ? TWA_ADMIT_OK : TWA_ADMIT_FULL;
}

void twa_dest_unreserve(twa_dest *d, size_t n, size_t bytes)
{
    pthread_mutex_lock(&d->lock);
    d->reserved_spans -= n;
    d->reserved_bytes -= bytes;
    pthread_mutex_unlock(&d->lock);
}

/* Queues what fits of @items (encoded[i].encoded, when given, is item i
 * encoded early: the slot owns it). @is_move: a slot takes its item's
 * references instead of adding its own (the caller keeps only those of the
 * items not taken). @reserved: the room twa_dest_reserve promised for these
 * (@n spans, @reserved bytes), taken back here; every item then fits (an
 * item encoded early may count a little more than its record did). */
static size_t push(twa_dest *d, const twa_item *items, size_t n, bool can_wait, twa_item *encoded,
                   bool is_move, size_t reserved)
{
    size_t taken = 0;
    bool interrupted = false;
    pthread_mutex_lock(&d->lock);
    if (reserved) {
        d->reserved_spans -= n;
        d->reserved_bytes -= reserved;
    }
    while (taken < n && !d->stopping) {
        size_t size = encoded && encoded[taken].encoded
                          ? twa_early_item_bytes(encoded[taken].encoded_size)
                          : item_bytes(items[taken].data);
        size_t spans = d->count + d->reserved_spans;
        bool fits = reserved ||
                    (spans < d->cap &&
                     (d->bytes + d->reserved_bytes + size <= d->o.queue_max_bytes || spans == 0));
        if (!fits) {
            interrupted = can_wait && atomic_load(&twa_stopping);
            if (!can_wait || interrupted)
                break;
            pthread_cond_signal(&d->work);
            pthread_cond_wait(&d->room, &d->lock);
            continue;
        }
        if (d->count == d->ring_cap && !grow_ring(d))
            break; /* out of memory: counted as queue_full */
        twa_item *slot = &d->ring[(d->head + d->count) % d->ring_cap];
        const tw__span_data *span = items[taken].data;
        *slot = (twa_item){.proc = is_move ? items[taken].proc : twa_proc_ref(items[taken].proc),
                           .chunk = items[taken].chunk};
        if (encoded && encoded[taken].encoded) { /* a moved record is released below */
            slot->encoded = encoded[taken].encoded;
            slot->encoded_size = encoded[taken].encoded_size;
            slot->trace_id_high = span->trace_id_high;
            slot->trace_id_low = span->trace_id_low;
            slot->span_id = span->span_id;
        } else {
            slot->data = is_move ? items[taken].data : tw__span_data_ref(items[taken].data);
        }
        d->count++;
        d->bytes += size;
        taken++;
    }
    atomic_store_explicit(&d->st.queue_spans, (int64_t)d->count, memory_order_relaxed);
    atomic_store_explicit(&d->st.queue_bytes, (int64_t)d->bytes, memory_order_relaxed);
    if (taken)
        pthread_cond_signal(&d->work);
    pthread_mutex_unlock(&d->lock);
    twa_add(&d->st.enqueued, taken);
    /* Follow mode interrupted by the stop: not dropped, the lines are read
     * again at the next start. */
    if (taken < n && !(can_wait && (interrupted || d->stopping)))
        twa_add(&d->st.dropped[TWA_DROP_QUEUE_FULL], n - taken);
    for (size_t i = 0; encoded && is_move && i < taken; i++) {
        if (encoded[i].encoded) /* the slot holds the encoding, not the record */
            tw__span_data_unref(items[i].data);
    }
    for (size_t i = taken; encoded && i < n; i++)
        twa_framing_free_item(d->framing, encoded[i].encoded);
    return taken;
}

size_t twa_dest_push(twa_dest *d, const twa_item *items, size_t n, bool can_wait)
{
    return push(d, items, n, can_wait, NULL, false, 0);
}

size_t twa_dest_push_early(twa_dest *d, const twa_item *items, size_t n, bool can_wait,
                           twa_early **early, bool is_move, size_t reserved)
{
    if (!early)
        return push(d, items, n, can_wait, NULL, is_move, reserved);
    /* Only while the destination thread is behind (more queued than it
     * takes at once), and when the whole call fits the queue now (an
     * estimate; the push decides): spans about to be dropped as queue_full
     * are not encoded. */
    int64_t queued = atomic_load_explicit(&d->st.queue_spans, memory_order_relaxed);
    int64_t queued_bytes = atomic_load_explicit(&d->st.queue_bytes, memory_order_relaxed);
    if (n == 0 || queued < TAKE_MAX || !twa_framing_encodes_early(d->framing) ||
        queued + (int64_t)n > (int64_t)d->cap ||
        queued_bytes + (int64_t)(n * (sizeof(tw__span_data) + TW__SPAN_INLINE_ARENA)) >
            (int64_t)d->o.queue_max_bytes)
        return push(d, items, n, can_wait, NULL, is_move, reserved);
    twa_item *encoded = malloc(n * sizeof *encoded);
    if (!encoded)
        return push(d, items, n, can_wait, NULL, is_move, reserved);
    uint64_t n_encoded = 0;
    for (size_t i = 0; i < n; i++) {
        encoded[i].encoded_size = 0;
        encoded[i].encoded =
            twa_early_encode(d->framing, early, &items[i], &encoded[i].encoded_size);
        if (!encoded[i].encoded)
            encoded[i].encoded_size = 0;
        else
            n_encoded++;
    }
    twa_add(&d->st.encoded_early, n_encoded);
    size_t taken = push(d, items, n, can_wait, encoded, is_move, reserved);
    free(encoded);
    return taken;
}

void twa_dest_early_free(twa_early *early)
{
    twa_early_free(early);
}

double twa_dest_fill(twa_dest *d)
{
    pthread_mutex_lock(&d->lock);
    double a = (double)d->count / (double)d->cap;
    double b = (double)d->bytes / (double)d->o.queue_max_bytes;
    pthread_mutex_unlock(&d->lock);
    return a > b ? a : b;
}

/* ---- outcomes -------------------------------------------------------------------------------- */

/* Reports the outcome of spans [lo, lo + n) of @b. */
static void finish(twa_dest *d, twa_batch *b, size_t lo, size_t n, twa_outcome o,
                   twa_drop_reason why)
{
    if (o == TWA_ACKED)
        twa_add(&d->st.forwarded, n);
    else if (o == TWA_DROPPED && why < TWA_N_DROP) /* TWA_N_DROP: counted already */
        twa_add(&d->st.dropped[why], n);
    /* TWA_SPOOLED is counted by the spool (spooled_spans). A followed line
     * whose span is dropped at shutdown stays not done: the checkpoint stays
     * before it and the next start reads it again. */
    bool has_chunks = false;
    bool keep_lines = o == TWA_DROPPED && why == TWA_DROP_SHUTDOWN;
    for (size_t i = lo; i < lo + n && !keep_lines;) {
        twa_chunk *c = twa_batch_chunk(b, i);
        size_t k = i + 1;
        while (k < lo + n && twa_batch_chunk(b, k) == c)
            k++;
        twa_chunk_done(c, (long)(k - i));
        has_chunks = has_chunks || c;
        i = k;
    }
    twa_gauge_add(&d->st.batching_spans, -(int64_t)n);
    if (has_chunks && d->o.on_delivery)
        d->o.on_delivery(d->o.delivery_arg, o, n);
}

/* Logs failure @what unless it is the one logged last: the same when
 * @id (what kind of failure: a libcurl code and errno, an HTTP status, a
 * write errno) is, whatever the text says besides. */
static void log_change(twa_dest *d, twa_level level, const char *id, const char *what)
{
    if (strcmp(d->last_error, id) == 0)
        return;
    snprintf(d->last_error, sizeof d->last_error, "%s", id);
    twa_log(level, "%s: %s (not repeated until it changes)", d->label, what);
}

/* ---- transports --------------------------------------------------------------------------------
 */

/* Once the status line and headers say 2xx the batch is accepted; the
 * rest of the body is read for at most this long and this many bytes
 * (to keep the connection), then dropped: logged, never a resend. */
#define ACCEPTED_BODY_MAX_MS 1000
#define ACCEPTED_BODY_MAX_BYTES ((size_t)64 << 10)

static bool is_accepted(const twa_dest *d)
{
    return tw__http_head_is_accepted(&d->answer);
}

/* Ends a transfer whose 2xx answer's body takes too long, and any transfer
 * still running at the stop deadline: the attempt's timeout was set when it
 * started, before a SIGTERM may have come (libcurl's progress callback runs
 * about once a second and on every read). */
static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    (void)dltotal;
    (void)dlnow;
    (void)ultotal;
    (void)ulnow;
    twa_dest *d = arg;
    int64_t now = now_ns();
    if (is_accepted(d) && now - d->head_done_ns > (int64_t)ACCEPTED_BODY_MAX_MS * 1000000)
        return 1;
    pthread_mutex_lock(&d->lock);
    d->is_cut_at_deadline = d->stopping && now >= d->deadline_ns;
    pthread_mutex_unlock(&d->lock);
    return d->is_cut_at_deadline;
}

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
    twa_dest *d = arg;
    size_t len = size * n, room = RESPONSE_SNIPPET - d->snippet_len;
    d->answer_bytes += len;
    if (is_accepted(d) && d->answer_bytes > ACCEPTED_BODY_MAX_BYTES)
        return 0; /* accepted already: the rest is not worth reading */
    size_t take = len < room ? len : room;
    for (size_t i = 0; i < take; i++) {
        unsigned char c = (unsigned char)data[i];
        d->snippet[d->snippet_len + i] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
    }
    d->snippet_len += take;
    d->snippet[d->snippet_len] = '\0';
    return len;
}

/* Retry-After: delay-seconds or an HTTP-date (RFC 9110 10.2.3). */
static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
    twa_dest *d = arg;
    size_t len = size * n;
    if (tw__http_head_line(&d->answer, data, len))
        d->head_done_ns = now_ns();
    if (len > 12 && g_ascii_strncasecmp(data, "Retry-After:", 12) == 0) {
        char value[128];
        size_t k = len - 12 < sizeof value - 1 ? len - 12 : sizeof value - 1;
        memcpy(value, data + 12, k);
        value[k] = '\0';
        g_strstrip(value);
        long long secs = -1;
        if (value[0] && strspn(value, "0123456789") == strlen(value)) {
            secs = strtoll(value, NULL, 10);
        } else {
            time_t when = curl_getdate(value, NULL);
            if (when != (time_t)-1)
                secs = (long long)(when - time(NULL));
            if (when != (time_t)-1 && secs < 0)
                secs = 0;
        }
        if (secs >= 0)
            d->retry_after_ms = secs > 3600 ? 3600000u : (unsigned int)secs * 1000u;
    }
    return len;
}

static bool make_curl(twa_dest *d)
{
    CURL *c = curl_easy_init();
    if (!c)
        return false;
    curl_easy_setopt(c, CURLOPT_URL, d->url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, d->errbuf);
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, d->curl_headers);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "tracewire-agent/" TW_VERSION_STRING);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, d);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, d);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, d);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    if (d->user) {
        curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        curl_easy_setopt(c, CURLOPT_USERNAME, d->user);
        curl_easy_setopt(c, CURLOPT_PASSWORD, d->password);
    }
    if (d->o.ca_file)
        curl_easy_setopt(c, CURLOPT_CAINFO, d->o.ca_file);
    if (d->o.cert_file)
        curl_easy_setopt(c, CURLOPT_SSLCERT, d->o.cert_file);
    if (d->o.key_file)
        curl_easy_setopt(c, CURLOPT_SSLKEY, d->o.key_file);
    d->curl = c;
    return true;
}

static bool gzip_into(twa_dest *d, const tw__buf *in, tw__buf *out)
{
    if (!d->has_z) {
        memset(&d->z, 0, sizeof d->z);
        if (deflateInit2(&d->z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            return false;
        d->has_z = true;
    } else if (deflateReset(&d->z) != Z_OK) {
        return false;
    }
    uLong bound = deflateBound(&d->z, (uLong)in->len);
    tw__buf_reset(out);
    if (!tw__buf_reserve(out, (size_t)bound))
        return false;
    d->z.next_in = in->data;
    d->z.avail_in = (uInt)in->len;
    d->z.next_out = out->data;
    d->z.avail_out = (uInt)out->cap;
    if (deflate(&d->z, Z_FINISH) != Z_STREAM_END)
        return false;
    out->len = out->cap - d->z.avail_out;
    return true;
}

/* Milliseconds an attempt may take now (the stop deadline cuts it). */
static long attempt_timeout_ms(twa_dest *d)
{
    long t = (long)d->o.timeout_ms;
    pthread_mutex_lock(&d->lock);
    bool stopping = d->stopping;
    int64_t deadline = d->deadline_ns;
    pthread_mutex_unlock(&d->lock);
    if (stopping) {
        long left = (long)((deadline - now_ns()) / 1000000);
        if (left < t)
            t = left < 1 ? 1 : left;
    }
    return t;
}

/* Appends a batch to a file: destination. Written with write(2), not
 * stdio, so that no buffer keeps part of a failed batch for the next one;
 * and a batch that fails part way (a full disk, a file size limit) is
 * removed again (the file cut back to its size before it), so that the
 * next batch does not continue a cut line: the file stays whole lines and
 * holds exactly the spans counted forwarded. */
static attempt_result write_file(twa_dest *d, const uint8_t *data, size_t len, char *what,
                                 size_t what_size)
{
    struct stat sb;
    bool is_regular = fstat(d->file_fd, &sb) == 0 && S_ISREG(sb.st_mode);
    const uint8_t *p = data;
    size_t left = len;
    while (left) {
        ssize_t w = write(d->file_fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO; /* not for a regular file; never loop on it */
            break;
        }
        p += w;
        left -= (size_t)w;
    }
    /* Synced when it is a regular file: a pipe or a terminal (file:/dev/stdout
     * piped on) cannot be, and fdatasync fails there (EINVAL) after the
     * batch was written whole. */
    if (left == 0 && (!is_regular || fdatasync(d->file_fd) == 0)) {
        twa_add(&d->st.bytes, len);
        return SENT;
    }
    snprintf(d->fail_id, sizeof d->fail_id, "write %d", errno);
    snprintf(what, what_size, "write: %s", strerror(errno));
    if (is_regular && ftruncate(d->file_fd, sb.st_size) != 0)
        twa_log(TWA_ERROR,
                "%s: cannot remove the part of a failed batch already written (%s): the file "
                "may hold a cut line",
                d->label, strerror(errno));
    return NOT_NOW;
}

/* One attempt with the wire bytes @data. @what gets a reason on failure. */
static attempt_result attempt(twa_dest *d, const uint8_t *data, size_t len, char *what,
                              size_t what_size)
{
    d->retry_after_ms = 0;
    twa_add(&d->st.requests, 1);
    if (d->kind == DEST_UDP) {
        ssize_t rc = send(d->udp_fd, data, len, 0);
        if (rc == (ssize_t)len) {
            twa_add(&d->st.bytes, len);
            return SENT;
        }
        snprintf(d->fail_id, sizeof d->fail_id, "send %d", rc < 0 ? errno : 0);
        snprintf(what, what_size, "send: %s", rc < 0 ? strerror(errno) : "short datagram");
        return rc < 0 && errno == EMSGSIZE ? REFUSED : NOT_NOW;
    }
    if (d->kind == DEST_FILE)
        return write_file(d, data, len, what, what_size);
    if (!d->curl && !make_curl(d)) {
        snprintf(d->fail_id, sizeof d->fail_id, "no handle");
        snprintf(what, what_size, "cannot create a libcurl handle");
        return NOT_NOW;
    }
    d->errbuf[0] = '\0';
    d->snippet_len = 0;
    d->snippet[0] = '\0';
    tw__http_head_reset(&d->answer);
    d->answer_bytes = 0;
    d->is_cut_at_deadline = false;
    curl_easy_setopt(d->curl, CURLOPT_POSTFIELDS, (const char *)data);
    curl_easy_setopt(d->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    long timeout = attempt_timeout_ms(d);
    curl_easy_setopt(d->curl, CURLOPT_TIMEOUT_MS, timeout);
    curl_easy_setopt(d->curl, CURLOPT_CONNECTTIMEOUT_MS, timeout < 5000 ? timeout : 5000L);
    CURLcode rc = curl_easy_perform(d->curl);
    if (is_accepted(d)) {
        /* The status line decides: the batch was taken, so a body that is
         * slow, cut or too long is logged (once per cause), never resent. */
        if (rc != CURLE_OK) {
            char cut[sizeof d->last_cut];
            snprintf(cut, sizeof cut, "HTTP %ld, then its body: %s", d->answer.status,
                     rc == CURLE_WRITE_ERROR || rc == CURLE_ABORTED_BY_CALLBACK
                         ? "too long or too slow to read"
                         : (d->errbuf[0] ? d->errbuf : curl_easy_strerror(rc)));
            if (strcmp(cut, d->last_cut) != 0) {
                snprintf(d->last_cut, sizeof d->last_cut, "%s", cut);
                twa_log(TWA_INFO,
                        "%s: %s; the batch was accepted and is not sent again (not repeated "
                        "until it changes)",
                        d->label, cut);
            }
        }
        twa_add(&d->st.bytes, len);
        return SENT;
    }
    if (rc != CURLE_OK && d->is_cut_at_deadline) {
        /* Not the backend's fault: what the batch becomes (spooled, or
         * dropped as shutdown) is said by the caller. */
        snprintf(d->fail_id, sizeof d->fail_id, "cut");
        snprintf(what, what_size, "the attempt was cut at the --drain-ms deadline");
        return NOT_NOW;
    }
    if (rc != CURLE_OK && !d->answer.is_done) {
        long os_errno = 0;
        curl_easy_getinfo(d->curl, CURLINFO_OS_ERRNO, &os_errno);
        snprintf(d->fail_id, sizeof d->fail_id, "curl %d %ld", (int)rc, os_errno);
        snprintf(what, what_size, "%s", d->errbuf[0] ? d->errbuf : curl_easy_strerror(rc));
        return NOT_NOW;
    }
    long status = d->answer.status; /* a final answer (its body may have failed) */
    tw__http_verdict verdict = tw__http_status_verdict(status, retry_rule(d));
    bool is_denied = verdict == TW__HTTP_FINAL &&
                     (status == 401 || status == 403 || status == 404 || status == 407);
    snprintf(d->fail_id, sizeof d->fail_id, "http %ld", status);
    snprintf(what, what_size, "HTTP status %ld%s%s%s", status,
             is_denied ? " (the destination refuses the agent: check its URL and credentials)"
             : verdict == TW__HTTP_FINAL ? " (not retried)"
                                         : "",
             d->snippet_len ? ": " : "", d->snippet);
    if (!tw__http_status_has_retry_after(status))
        d->retry_after_ms = 0; /* only 429 and 503 carry a Retry-After worth waiting */
    switch (verdict) {
    case TW__HTTP_REFUSED:
        return REFUSED;
    case TW__HTTP_RETRY:
        return NOT_NOW;
    default: /* a 2xx whose headers did not end is a failed transfer: final too */
        return is_denied ? DENIED : FINAL;
    }
}

/* The wire bytes of @body for this destination (gzip when asked). */
static bool wire_bytes(twa_dest *d, tw__buf *body, const uint8_t **data, size_t *len,
                       uint32_t *flags)
{
    *flags = 0;
    if (d->kind == DEST_HTTP && d->o.is_gzip) {
        if (!gzip_into(d, body, &d->gz))
            return false;
        *data = d->gz.data;
        *len = d->gz.len;
        *flags = TWA_SPOOL_GZIP;
        return true;
    }
    *data = body->data;
    *len = body->len;
    return true;
}

/* Sleeps @ms, waking early when the stop deadline comes. False when the
 * deadline has passed (stop retrying). */
static bool backoff_sleep(twa_dest *d, unsigned int ms)
{
    int64_t until = now_ns() + (int64_t)ms * 1000000;
    pthread_mutex_lock(&d->lock);
    for (;;) {
        int64_t limit = d->stopping && d->deadline_ns < until ? d->deadline_ns : until;
        int64_t now = now_ns();
        if (now >= limit)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t abs_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + (limit - now);
        ts.tv_sec = (time_t)(abs_ns / 1000000000);
        ts.tv_nsec = (long)(abs_ns % 1000000000);
        pthread_cond_timedwait(&d->room, &d->lock, &ts); /* woken by stop's broadcast */
    }
    bool past = d->stopping && now_ns() >= d->deadline_ns;
    pthread_mutex_unlock(&d->lock);
    return !past;
}

static unsigned int jittered(twa_dest *d, unsigned int backoff)
{
    d->rng ^= d->rng << 13;
    d->rng ^= d->rng >> 7;
    d->rng ^= d->rng << 17;
    unsigned int delay = backoff / 2 + (unsigned int)(d->rng % (backoff / 2 + 1));
    return delay < d->retry_after_ms ? d->retry_after_ms : delay;
}

static bool has_chunks(const twa_batch *b, size_t lo, size_t n)
{
    for (size_t i = lo; i < lo + n; i++) {
        if (twa_batch_chunk(b, i))
            return true;
    }
    return false;
}

static bool is_stopping_past_deadline(twa_dest *d)
{
    pthread_mutex_lock(&d->lock);
    bool past = d->stopping && now_ns() >= d->deadline_ns;
    pthread_mutex_unlock(&d->lock);
    return past;
}

static void mark(twa_dest *d, bool up)
{
    atomic_store(&d->st.up, up ? 1 : 0); /* known from the first attempt on */
    if (d->is_down == !up)
        return;
    d->is_down = !up;
    if (up) {
        twa_log(TWA_INFO, "%s: accepting again", d->label);
        d->last_error[0] = '\0';
    }
}

/* Spools @n spans of @b whose body is in d->body; reports the outcome. */
static void spool_range(twa_dest *d, twa_batch *b, size_t lo, size_t n)
{
    const uint8_t *data;
    size_t len;
    uint32_t flags;
    if (!wire_bytes(d, &d->body, &data, &len, &flags)) {
        finish(d, b, lo, n, TWA_DROPPED, TWA_DROP_ENCODE);
        return;
    }
    if (!twa_spool_append(d->spool, data, len, (uint32_t)n, flags)) {
        finish(d, b, lo, n, TWA_DROPPED, TWA_N_DROP); /* the spool counted it */
        return;
    }
    finish(d, b, lo, n, TWA_SPOOLED, TWA_DROP_SPOOL_ERROR);
}

/* Sends spans [lo, lo + n) of @b (see the top comment). */
static void send_range(twa_dest *d, twa_batch *b, size_t lo, size_t n, unsigned int depth,
                       unsigned int *budget)
{
    if (!twa_batch_body(d->framing, b, lo, n, &d->body)) {
        log_change(d, TWA_WARN, "encode", "cannot build a body (out of memory)");
        finish(d, b, lo, n, TWA_DROPPED, TWA_DROP_ENCODE);
        return;
    }
    if (d->spool && (d->is_down || !twa_spool_is_empty(d->spool))) {
        spool_range(d, b, lo, n);
        return;
    }
    const uint8_t *data;
    size_t len;
    uint32_t flags;
    if (!wire_bytes(d, &d->body, &data, &len, &flags)) {
        finish(d, b, lo, n, TWA_DROPPED, TWA_DROP_ENCODE);
        return;
    }
    unsigned int backoff = d->o.initial_backoff_ms;
    bool precious = has_chunks(b, lo, n);
    for (unsigned int tries = 0;; tries++) {
        char what[512];
        attempt_result r = attempt(d, data, len, what, sizeof what);
        if (r == SENT) {
            mark(d, true);
            finish(d, b, lo, n, TWA_ACKED, 0);
            return;
        }
        if (r == REFUSED) {
            mark(d, true); /* it answers: only this content is refused */
            if (n == 1 || depth == 0 || *budget < 2) {
                log_change(d, TWA_WARN, d->fail_id, what);
                finish(d, b, lo, n, TWA_DROPPED, TWA_DROP_REFUSED);
                return;
            }
            *budget -= 2;
            twa_add(&d->st.split_requests, 2);
            size_t half = n / 2;
            send_range(d, b, lo, half, depth - 1, budget);
            send_range(d, b, lo + half, n - half, depth - 1, budget);
            return;
        }
        if (r == DENIED && !d->spool && !precious)
            r = FINAL; /* nowhere to keep the spans until the configuration is mended */
        if (r == FINAL) {
            mark(d, true); /* it answers: this request can never work */
            log_change(d, TWA_WARN, d->fail_id, what);
            finish(d, b, lo, n, TWA_DROPPED, TWA_DROP_SEND_FAILED);
            return;
        }
        /* "Not now", or DENIED with a spool or follow mode: kept, and tried
         * again after the backoff (a spool's replay, follow mode's retries). */
        log_change(d, TWA_WARN, d->fail_id, what);
        if (d->spool) {
            mark(d, false);
            d->replay_at_ns = now_ns() + (int64_t)jittered(d, d->backoff_ms) * 1000000;
            spool_range(d, b, lo, n);
            return;
        }
        mark(d, false);
        if ((!precious && tries >= d->o.max_retries) || is_stopping_past_deadline(d)) {
            finish(d, b, lo, n, TWA_DROPPED,
                   is_stopping_past_deadline(d) ? TWA_DROP_SHUTDOWN : TWA_DROP_SEND_FAILED);
            return;
        }
        twa_add(&d->st.retries, 1);
        if (!backoff_sleep(d, jittered(d, backoff))) {
            finish(d, b, lo, n, TWA_DROPPED, TWA_DROP_SHUTDOWN);
            return;
        }
        backoff = backoff >= d->o.max_backoff_ms / 2 ? d->o.max_backoff_ms : backoff * 2;
    }
}

static void on_batch(void *arg, twa_batch *b)
{
    twa_dest *d = arg;
    unsigned int budget = d->o.max_split_requests;
    send_range(d, b, 0, b->n, MAX_SPLIT_DEPTH, &budget);
}

/* Sends the oldest spooled batch if the backoff allows; true when it went. */
static bool replay_one(twa_dest *d)
{
    uint32_t n_spans, flags;
    if (!twa_spool_peek(d->spool, &d->spooled, &n_spans, &flags))
        return false;
    char what[512];
    attempt_result r = attempt(d, d->spooled.data, d->spooled.len, what, sizeof what);
    if (r == SENT) {
        twa_spool_pop(d->spool);
        twa_add(&d->st.forwarded, n_spans);
        twa_add(&d->st.replayed_spans, n_spans);
        d->backoff_ms = d->o.initial_backoff_ms;
        mark(d, true);
        return true;
    }
    if (r == REFUSED || r == FINAL) { /* it answers: this body never goes */
        log_change(d, TWA_WARN, d->fail_id, what);
        twa_spool_pop(d->spool);
        twa_add(&d->st.dropped[r == REFUSED ? TWA_DROP_REFUSED : TWA_DROP_SEND_FAILED], n_spans);
        mark(d, true);
        return true;
    }
    log_change(d, TWA_WARN, d->fail_id, what);
    mark(d, false);
    twa_add(&d->st.retries, 1);
    d->replay_at_ns = now_ns() + (int64_t)jittered(d, d->backoff_ms) * 1000000;
    d->backoff_ms =
        d->backoff_ms >= d->o.max_backoff_ms / 2 ? d->o.max_backoff_ms : d->backoff_ms * 2;
    return false;
}

/* ---- the thread ---------------------------------------------------------------------------- */

static void add_items(twa_dest *d, twa_item *items, size_t n)
{
    int64_t now = now_ns();
    for (size_t i = 0; i < n; i++) {
        if (!items[i].data) { /* encoded early: the batcher reads the ids only */
            d->ids_only->trace_id_high = items[i].trace_id_high;
            d->ids_only->trace_id_low = items[i].trace_id_low;
            d->ids_only->span_id = items[i].span_id;
            items[i].data = d->ids_only;
        }
        twa_add_result r = twa_batcher_add(d->batcher, &items[i], now);
        if (items[i].data == d->ids_only)
            items[i].data = NULL;
        if (r != TWA_ADD_OK) {
            twa_add(&d->st.dropped[r == TWA_ADD_TOO_LARGE ? TWA_DROP_TOO_LARGE : TWA_DROP_ENCODE],
                    1);
            twa_gauge_add(&d->st.batching_spans, -1);
            twa_chunk_done(items[i].chunk, 1);
        }
        slot_release(d, &items[i]); /* frees the early item when no batch took it */
    }
}

static void *run(void *arg)
{
    twa_dest *d = arg;
    pthread_setname_np(pthread_self(), "tw-agent-dest"); /* top -H, perf */
    twa_item *take = malloc(TAKE_MAX * sizeof *take);
    if (!take) {
        twa_log(TWA_ERROR, "%s: out of memory: destination stopped", d->label);
        return NULL;
    }
    for (;;) {
        pthread_mutex_lock(&d->lock);
        int64_t due = twa_batcher_deadline(d->batcher);
        bool can_replay = d->spool && !twa_spool_is_empty(d->spool) && !d->stopping;
        if (can_replay && d->replay_at_ns < due)
            due = d->replay_at_ns;
        while (d->count == 0 && !d->stopping && now_ns() < due) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            int64_t wait = due == INT64_MAX ? 1000000000 : due - now_ns();
            if (wait > 1000000000)
                wait = 1000000000;
            int64_t abs_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + (wait > 0 ? wait : 0);
            ts.tv_sec = (time_t)(abs_ns / 1000000000);
            ts.tv_nsec = (long)(abs_ns % 1000000000);
            pthread_cond_timedwait(&d->work, &d->lock, &ts);
        }
        size_t n = 0;
        while (n < TAKE_MAX && d->count) {
            twa_item *slot = &d->ring[d->head];
            take[n++] = *slot;
            d->bytes -= slot_bytes(slot);
            if (++d->head == d->ring_cap) /* no division per span */
                d->head = 0;
            d->count--;
        }
        bool stopping = d->stopping;
        bool past = stopping && now_ns() >= d->deadline_ns;
        atomic_store_explicit(&d->st.queue_spans, (int64_t)d->count, memory_order_relaxed);
        atomic_store_explicit(&d->st.queue_bytes, (int64_t)d->bytes, memory_order_relaxed);
        if (n)
            pthread_cond_broadcast(&d->room);
        bool empty = d->count == 0;
        pthread_mutex_unlock(&d->lock);

        twa_gauge_add(&d->st.batching_spans, (int64_t)n);
        if (past && !d->spool) {
            for (size_t i = 0; i < n; i++) {
                /* A followed line stays not done (see finish). */
                twa_add(&d->st.dropped[TWA_DROP_SHUTDOWN], 1);
                twa_gauge_add(&d->st.batching_spans, -1);
                slot_release(d, &take[i]);
            }
        } else {
            add_items(d, take, n);
        }
        if (stopping && empty) {
            if (past && d->spool)
                mark(d, false); /* what is left goes to the spool */
            twa_batcher_flush(d->batcher);
            pthread_mutex_lock(&d->lock);
            bool done = d->count == 0;
            pthread_mutex_unlock(&d->lock);
            if (done)
                break;
            continue;
        }
        twa_batcher_tick(d->batcher, now_ns());
        if (d->spool && !stopping) {
            /* Replay while it works and the queue leaves time for it. */
            for (int k = 0; k < 8 && !twa_spool_is_empty(d->spool) && now_ns() >= d->replay_at_ns;
                 k++) {
                if (!replay_one(d))
                    break;
            }
            if (twa_spool_is_empty(d->spool) && d->is_down && now_ns() >= d->replay_at_ns)
                mark(d, true); /* try live again */
        }
    }
    free(take);
    return NULL;
}

/* The files the destination writes, its file: and its spool: a failure
 * here is the system's (a directory that is a file, no permission), not the
 * options', so it happens in twa_dest_start. */
static bool open_outputs(twa_dest *d, char *why, size_t why_size)
{
    if (d->kind == DEST_UDP && d->udp_fd < 0 && !open_udp(d, why, why_size))
        return false;
    if (d->kind == DEST_FILE && d->file_fd < 0) {
        const char *path = d->url + strlen("file:");
        if (has_prefix(path, "//"))
            path += 2;
        d->file_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
        if (d->file_fd < 0) {
            snprintf(why, why_size, "%s %s: %s", from(d), d->label, strerror(errno));
            return false;
        }
    }
    if (d->spool_dir && !d->spool) {
        d->spool = twa_spool_open(d->spool_dir, d->key, d->shown_url, d->label,
                                  d->o.spool_max_bytes, &d->st, why, why_size);
        if (!d->spool)
            return false;
    }
    return true;
}

bool twa_dest_start(twa_dest *d, char *why, size_t why_size)
{
    if (!open_outputs(d, why, why_size))
        return false;
    /* The batcher's emit callback (set here: it needs the final address). */
    twa_batcher_free(d->batcher);
    d->batcher = twa_batcher_new(d->framing, d->o.max_body_bytes, MAX_OPEN_BATCHES, d->o.flush_ms,
                                 on_batch, d);
    if (!d->batcher) {
        snprintf(why, why_size, "out of memory");
        return false;
    }
    if (d->spool && !twa_spool_is_empty(d->spool))
        d->replay_at_ns = now_ns();
    int rc = pthread_create(&d->thread, NULL, run, d);
    if (rc != 0) {
        snprintf(why, why_size, "cannot start a thread: %s", strerror(rc));
        return false;
    }
    d->has_thread = true;
    return true;
}

void twa_dest_interrupt(twa_dest *d)
{
    pthread_mutex_lock(&d->lock);
    pthread_cond_broadcast(&d->room);
    pthread_mutex_unlock(&d->lock);
}

void twa_dest_stop(twa_dest *d, unsigned int deadline_ms)
{
    pthread_mutex_lock(&d->lock);
    if (!d->stopping) {
        d->stopping = true;
        d->deadline_ns = now_ns() + (int64_t)deadline_ms * 1000000;
    }
    pthread_cond_broadcast(&d->work);
    pthread_cond_broadcast(&d->room);
    pthread_mutex_unlock(&d->lock);
}

void twa_dest_join(twa_dest *d)
{
    if (d && d->has_thread) {
        pthread_join(d->thread, NULL);
        d->has_thread = false;
    }
}

void twa_dest_free(twa_dest *d)
{
    if (!d)
        return;
    if (d->has_thread) {
        twa_dest_stop(d, 0);
        twa_dest_join(d);
    }
    for (size_t i = 0; i < d->count; i++) /* followed lines stay not done (see finish) */
        slot_release(d, &d->ring[(d->head + i) % d->ring_cap]);
    free(d->ring);
    tw__span_data_unref(d->ids_only);
    twa_batcher_free(d->batcher);
    twa_framing_free(d->framing);
    twa_spool_close(d->spool);
    free(d->spool_dir);
    tw__buf_free(&d->body);
    tw__buf_free(&d->gz);
    tw__buf_free(&d->spooled);
    if (d->has_z)
        deflateEnd(&d->z);
    if (d->curl)
        curl_easy_cleanup(d->curl);
    curl_slist_free_all(d->curl_headers);
    if (d->udp_fd >= 0)
        close(d->udp_fd);
    if (d->file_fd >= 0)
        close(d->file_fd);
    free((char *)d->o.ca_file);
    free((char *)d->o.cert_file);
    free((char *)d->o.key_file);
    free(d->user);
    free(d->password);
    free(d->url);
    free(d->shown_url);
    free(d->label);
    g_free(d->identity);
    g_free(d->key);
    pthread_cond_destroy(&d->work);
    pthread_cond_destroy(&d->room);
    pthread_mutex_destroy(&d->lock);
    free(d);
}
