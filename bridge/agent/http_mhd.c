/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/agent/http_mhd.c: the agent's HTTP servers on libmicrohttpd
 * (http_mhd.h). The request body is gathered into a buffer bounded by
 * --max-request-bytes (a Content-Length over it is answered 413 before the
 * body is read), inflated when gzip (bounded too), decoded through decode.h's
 * table and flushed to the pipeline; the answer follows the receiver's
 * protocol (OTLP/HTTP, Zipkin, the Jaeger collector).
 */
#include "agent/http_mhd.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <microhttpd.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "wire/jaeger/sampling_strategies.h"
#include "wire/core/pb_write.h"

atomic_bool twa_draining;

#define PROXY_CACHE_MAX 4096 /* services whose last proxied answer is kept */

/* Seconds a connection may stay idle before its request's headers are
 * complete (a client that opens connections and sends nothing, or half a
 * request, holds them no longer), and once they are (a body on its way, a
 * keep-alive connection between requests). */
#define HEADERS_TIMEOUT_S 10
#define IDLE_TIMEOUT_S 60
/* At most one warning about the limit, and one about requests cut at
 * --request-timeout-ms, per this many seconds. */
#define LIMIT_WARN_EVERY_S 10
/* How often the request deadline is checked: a connection is closed at most
 * this much after its deadline. */
#define DEADLINE_TICK_MS 200

/*
 * The request deadline (--request-timeout-ms). libmicrohttpd 0.9.75 only
 * has idle timeouts (MHD_OPTION_CONNECTION_TIMEOUT and the per-connection
 * MHD_CONNECTION_OPTION_TIMEOUT restart at every byte received), and the
 * handler is not called while the headers trickle in, so a client sending a
 * byte every few seconds would hold its connection, one of
 * --max-connections, for ever. A watchdog thread per server closes such
 * connections from outside, with shutdown(fd, SHUT_RDWR) (never close()):
 * libmicrohttpd's own thread then reads the end of the stream and closes the
 * connection through its usual path.
 *
 * Why it is free of races with libmicrohttpd closing the descriptor and the
 * kernel handing its number to a new connection (facts from libmicrohttpd
 * 0.9.75's source, src/microhttpd/daemon.c):
 * - The notify-connection callback (MHD_OPTION_NOTIFY_CONNECTION) is called
 *   with MHD_CONNECTION_NOTIFY_STARTED in internal_add_connection() once the
 *   connection is in the daemon's lists, with its socket open, before it is
 *   polled. A connection given up before STARTED (new_connection_close_())
 *   was never linked; internal_add_connection()'s failure path after
 *   STARTED (epoll_ctl failed) calls CLOSED first and closes after.
 * - It is called with MHD_CONNECTION_NOTIFY_CLOSED in
 *   MHD_cleanup_connections(), on the thread that polls the connection, and
 *   only after it returns does that thread close the socket
 *   (MHD_socket_close_chk_(pos->socket_fd)) and free the connection. No
 *   other path closes a connection's socket (upgraded connections are not
 *   used here); MHD_connection_close_() and MHD_connection_mark_closed_()
 *   (connection.c) only shutdown(SHUT_WR) it and leave it to the cleanup.
 * - STARTED links an entry holding the descriptor into this server's list
 *   under conn_lock; CLOSED unlinks it under conn_lock. The watchdog calls
 *   shutdown() only while it holds conn_lock, on an entry still linked. So
 *   CLOSED has not returned for that connection, its socket is not closed,
 *   and the number names that socket and no other. An entry is the
 *   connection's (not keyed by the number): a later connection given the
 *   same number gets its own entry, linked after the old one was unlinked.
 * - shutdown() of a socket another thread polls is safe: the poll (epoll,
 *   edge-triggered) reports the hang-up, recv() returns 0, and
 *   libmicrohttpd closes the connection as if the client had gone (the
 *   completion callback, when the handler saw the request, gets a code
 *   other than MHD_REQUEST_TERMINATED_COMPLETED_OK); its own later
 *   shutdown(SHUT_WR) fails harmlessly. The other MHD_socket_close_chk_()
 *   calls of daemon.c close sockets not yet made connections.
 * - twa_http_stop() stops the watchdog before MHD_stop_daemon().
 *
 * The clock of a request starts when its connection is accepted (STARTED)
 * or when the previous request on it is done (the completion callback,
 * which also sets the idle timeout back to HEADERS_TIMEOUT_S: waiting for
 * the next request's headers); it stops when the handler has the whole
 * request (the call after the body, or a GET's second call). A keep-alive
 * connection idle for HEADERS_TIMEOUT_S is closed by libmicrohttpd as idle,
 * uncounted; what reaches the deadline kept sending.
 */

typedef struct cached {
    char *service, *proto, *thrift;
} cached;

/* One open connection (the notify-connection callback's socket context),
 * linked in its server's list from STARTED to CLOSED. Fields under the
 * server's conn_lock. */
typedef struct conn {
    struct conn *prev, *next;
    int fd;
    int64_t since_ms; /* CLOCK_MONOTONIC: when the current request's clock started */
    bool receiving;   /* the request is not whole yet: its deadline runs */
    bool is_cut;      /* shut down at the deadline */
} conn;

struct twa_http {
    twa_http_options o;
    char *name;
    const char **routes;
    struct MHD_Daemon *mhd;
    int fd;
    twa_recv_stats *stats;
    atomic_int_fast64_t last_limit_warn_s; /* CLOCK_MONOTONIC seconds; 0: never */
    int64_t last_timeout_warn_s;           /* the watchdog's; 0: never */
    /* The request deadline: the open connections and the watchdog. */
    pthread_mutex_t conn_lock;
    pthread_cond_t wake;
    conn *conns;
    bool stop_watchdog; /* under conn_lock */
    bool has_watchdog;
    pthread_t watchdog;
    /* sampling */
    pthread_mutex_t lock;
    tw__strategies *strategies;
    char *strategies_file, *proxy_url;
    cached *cache;
    size_t n_cache;
};

typedef struct request {
    tw__buf body;
    bool is_too_large;
    bool answered;
    size_t discarded; /* bytes of a too large body read and dropped */
} request;

/* A too large body is read and dropped up to this (a client that sends the
 * whole body before it reads the answer then reads the 413); a body
 * announced larger is answered at once. */
#define DISCARD_MAX ((size_t)64 << 20)

static void log_mhd(void *arg, const char *fmt, va_list ap)
{
    (void)arg;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && msg[n - 1] == '\n')
        msg[--n] = '\0';
    twa_log(TWA_DEBUG, "libmicrohttpd: %s", msg);
}

static enum MHD_Result answer_bytes(struct MHD_Connection *c, unsigned int status, const char *type,
                                    const void *body, size_t len, const char *retry_after);

static enum MHD_Result answer(struct MHD_Connection *c, unsigned int status, const char *type,
                              const char *body, const char *retry_after)
{
    return answer_bytes(c, status, type, body, strlen(body), retry_after);
}

/* Bytes as the answer (protobuf bodies hold NUL bytes: no strlen). */
static enum MHD_Result answer_bytes(struct MHD_Connection *c, unsigned int status, const char *type,
                                    const void *body, size_t len, const char *retry_after)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (retry_after)
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, retry_after);
    enum MHD_Result rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

/* OTLP/HTTP answers in the request's encoding (the specification: "MUST
 * respond with the same Content-Type"): true when the request is protobuf. */
static bool is_protobuf_request(struct MHD_Connection *c)
{
    const char *type = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    return type && g_ascii_strncasecmp(type, "application/x-protobuf", 22) == 0;
}

/* An OTLP protobuf message of two fields, a varint (field 1) and a string
 * (field 2), optionally nested as field 1 of an outer message: google.rpc.Status
 * {code, message} and ExportTraceServiceResponse {partial_success:
 * {rejected_spans, error_message}} have that shape. False when out of memory. */
static bool protobuf_pair(tw__buf *b, bool is_nested, uint64_t number, const char *text)
{
    size_t at = is_nested ? tw__pb_begin(b, 1) : 0;
    return at != SIZE_MAX && tw__pb_varint_field(b, 1, number) &&
           tw__pb_string_field(b, 2, text, strlen(text), false) &&
           (!is_nested || tw__pb_end(b, at));
}

static enum MHD_Result answer_protobuf(struct MHD_Connection *c, unsigned int status,
                                       bool is_nested, uint64_t number, const char *text,
                                       const char *retry_after)
{
    tw__buf b;
    tw__buf_init(&b);
    enum MHD_Result rc =
        protobuf_pair(&b, is_nested, number, text)
            ? answer_bytes(c, status, "application/x-protobuf", b.data, b.len, retry_after)
            : MHD_NO;
    tw__buf_free(&b);
    return rc;
}

/* An error answer's body in the receiver's dialect: OTLP gets a
 * google.rpc.Status (protobuf or JSON, as the request), the others plain
 * text. Sets *@type; false when out of memory. */
static bool error_body(twa_http *h, struct MHD_Connection *c, unsigned int status, const char *why,
                       const char **type, tw__buf *out)
{
    int code = status == 400 || status == 413 || status == 415 ? 3 : 14;
    if (strcmp(h->name, "otlp") == 0 && is_protobuf_request(c)) {
        *type = "application/x-protobuf";
        return protobuf_pair(out, false, (uint64_t)code, why);
    }
    if (strcmp(h->name, "otlp") == 0) {
        *type = "application/json";
        json_t *st = json_pack("{s:i, s:s}", "code", code, "message", why);
        char *text = st ? json_dumps(st, JSON_COMPACT) : NULL;
        json_decref(st);
        bool ok = tw__buf_append(out, text ? text : "{}", strlen(text ? text : "{}"));
        free(text);
        return ok;
    }
    *type = "text/plain; charset=utf-8";
    return tw__buf_append(out, why, strlen(why)) && tw__buf_append(out, "\n", 1);
}

static enum MHD_Result error_answer(twa_http *h, struct MHD_Connection *c, unsigned int status,
                                    const char *why, const char *retry_after)
{
    tw__buf b;
    tw__buf_init(&b);
    const char *type = NULL;
    enum MHD_Result rc = error_body(h, c, status, why, &type, &b)
                             ? answer_bytes(c, status, type, b.data, b.len, retry_after)
                             : MHD_NO;
    tw__buf_free(&b);
    return rc;
}

static bool route_served(const twa_http *h, const char *url)
{
    for (size_t i = 0; h->routes && h->routes[i]; i++) {
        if (strcmp(h->routes[i], url) == 0)
            return true;
    }
    return false;
}

/* ---- receivers ---------------------------------------------------------------------------------
 */

static void too_large_why(twa_http *h, char *why, size_t why_size)
{
    snprintf(why, why_size, "the body is larger than %zu bytes (--max-request-bytes)",
             h->o.max_request_bytes);
}

static enum MHD_Result too_large(twa_http *h, struct MHD_Connection *c, request *rq)
{
    rq->answered = true;
    twa_add(&h->stats->requests, 1);
    twa_add(&h->stats->bad_requests, 1);
    char why[128];
    too_large_why(h, why, sizeof why);
    return error_answer(h, c, 413u, why, NULL);
}

/*
 * A body of unannounced length (chunked) past DISCARD_MAX: libmicrohttpd
 * takes no answer while a body is being received (MHD_queue_response fails
 * in that state), and closing would leave the client without a status line.
 * So the 413 is written to the socket here, whole and marked
 * "Connection: close", and the caller returns MHD_NO: libmicrohttpd then
 * closes the connection without writing anything of its own. The socket
 * has nothing else queued (no answer to this request was started); a short
 * write is the end of it too.
 */
static enum MHD_Result too_large_now(twa_http *h, struct MHD_Connection *c, request *rq)
{
    rq->answered = true;
    twa_add(&h->stats->requests, 1);
    twa_add(&h->stats->bad_requests, 1);
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    char why[128];
    too_large_why(h, why, sizeof why);
    tw__buf body;
    tw__buf_init(&body);
    const char *type = NULL;
    if (ci && error_body(h, c, 413u, why, &type, &body)) {
        char head[256];
        int n = snprintf(head, sizeof head,
                         "HTTP/1.1 413 Content Too Large\r\nContent-Type: %s\r\n"
                         "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                         type, body.len);
        if (send(ci->connect_fd, head, (size_t)n, MSG_NOSIGNAL) == n)
            (void)send(ci->connect_fd, body.data, body.len, MSG_NOSIGNAL);
    }
    tw__buf_free(&body);
    twa_log(TWA_DEBUG, "%s: a body of unannounced length passed %zu bytes: 413, closed", h->name,
            DISCARD_MAX);
    return MHD_NO;
}

static enum MHD_Result receive(twa_http *h, struct MHD_Connection *c, const char *url, request *rq)
{
    twa_add(&h->stats->requests, 1);
    twa_add(&h->stats->bytes, rq->body.len);
    const char *type = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    bool known_route;
    const twa_body_format *fmt = twa_body_format_find(url, type, &known_route);
    char why[512];
    if (!fmt) {
        char accepted[256];
        twa_body_formats_of(url, accepted, sizeof accepted);
        snprintf(why, sizeof why, "Content-Type \"%s\" is not accepted on %s; accepted: %s",
                 type ? type : "", url, accepted);
        twa_add(&h->stats->bad_requests, 1);
        return error_answer(h, c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, why, NULL);
    }
    if (!fmt->decode) {
        twa_add(&h->stats->bad_requests, 1);
        return error_answer(h, c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, fmt->missing, NULL);
    }
    const uint8_t *data = rq->body.data;
    size_t len = rq->body.len;
    tw__buf inflated;
    tw__buf_init(&inflated);
    const char *enc = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Encoding");
    if (enc && *enc && g_ascii_strcasecmp(enc, "identity") != 0) {
        if (g_ascii_strcasecmp(enc, "gzip") != 0 && g_ascii_strcasecmp(enc, "deflate") != 0) {
            snprintf(why, sizeof why,
                     "Content-Encoding \"%s\" is not supported; accepted: gzip, deflate, identity",
                     enc);
            twa_add(&h->stats->bad_requests, 1);
            return error_answer(h, c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, why, NULL);
        }
        twa_decode_result r =
            g_ascii_strcasecmp(enc, "deflate") == 0
                ? twa_inflate_deflate(data, len, h->o.max_request_bytes, &inflated, why, sizeof why)
                : twa_inflate(data, len, h->o.max_request_bytes, &inflated, why, sizeof why);
        if (r != TWA_DECODE_OK) {
            tw__buf_free(&inflated);
            twa_add(&h->stats->bad_requests, 1);
            return error_answer(h, c,
                                r == TWA_DECODE_TOO_LARGE ? 413u
                                : r == TWA_DECODE_NOMEM   ? MHD_HTTP_SERVICE_UNAVAILABLE
                                                          : MHD_HTTP_BAD_REQUEST,
                                why, NULL);
        }
        data = inflated.data;
        len = inflated.len;
    }
    twa_spanbuf sb;
    twa_spanbuf_init(&sb, h->o.pipeline, h->stats);
    sb.is_whole = true; /* a request is answered for all its spans: queued all or none */
    twa_decode_result r = fmt->decode(data, len, &sb, why, sizeof why);
    tw__buf_free(&inflated);
    if (r != TWA_DECODE_OK) {
        /* Refused whole: a request, not spans (as a refused datagram). */
        twa_add(&h->stats->bad_requests, 1);
        twa_spanbuf_clear(&sb);
        twa_log(TWA_DEBUG, "%s: %s refused: %s", h->name, url, why);
        return error_answer(
            h, c, r == TWA_DECODE_NOMEM ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_BAD_REQUEST, why,
            r == TWA_DECODE_NOMEM ? "1" : NULL);
    }
    size_t rejected = sb.n_rejected;
    char first[256];
    snprintf(first, sizeof first, "%s", sb.first_reject);
    twa_spanbuf_flush(&sb);
    twa_admit admit = sb.admit;
    snprintf(why, sizeof why, "%s", sb.refusal);
    twa_spanbuf_clear(&sb);
    if (admit != TWA_ADMIT_OK) {
        /* Nothing of it was queued: the client keeps the whole request, and
         * retries it (503, retryable for OTLP/HTTP and Zipkin reporters) or
         * splits it (413). */
        twa_add(&h->stats->bad_requests, 1);
        twa_log(TWA_DEBUG, "%s: %s refused: %s", h->name, url, why);
        return admit == TWA_ADMIT_FULL ? error_answer(h, c, MHD_HTTP_SERVICE_UNAVAILABLE, why, "1")
                                       : error_answer(h, c, 413u, why, NULL);
    }
    if (strcmp(h->name, "otlp") == 0) {
        bool is_protobuf = is_protobuf_request(c);
        if (!rejected)
            return is_protobuf ? answer_bytes(c, MHD_HTTP_OK, "application/x-protobuf", "", 0, NULL)
                               : answer(c, MHD_HTTP_OK, "application/json", "{}", NULL);
        char msg[400];
        snprintf(msg, sizeof msg, "%zu span%s rejected; the first: %s", rejected,
                 rejected == 1 ? "" : "s", first);
        if (is_protobuf)
            return answer_protobuf(c, MHD_HTTP_OK, true, rejected, msg, NULL);
        json_t *resp = json_pack("{s:{s:I, s:s}}", "partialSuccess", "rejectedSpans",
                                 (json_int_t)rejected, "errorMessage", msg);
        char *text = resp ? json_dumps(resp, JSON_COMPACT) : NULL;
        json_decref(resp);
        enum MHD_Result rc = answer(c, MHD_HTTP_OK, "application/json", text ? text : "{}", NULL);
        free(text);
        return rc;
    }
    if (rejected)
        twa_log(TWA_DEBUG, "%s: %zu spans rejected in one request; the first: %s", h->name,
                rejected, first);
    return answer(c, MHD_HTTP_ACCEPTED, "text/plain", "", NULL);
}

/* ---- sampling
 * ------------------------------------------------------------------------------------ */

static bool load_strategies(twa_http *h, char *why, size_t why_size)
{
    char *text = NULL;
    size_t len = 0;
    int err_no;
    char ferr[160];
    if (!tw__cli_read_file(h->strategies_file, TW_CLI_MAX_CONFIG_BYTES, &text, &len, &err_no, ferr,
                           sizeof ferr)) {
        snprintf(why, why_size, "--sampling-strategies %s: %s", h->strategies_file, ferr);
        return false;
    }
    tw_error *e = NULL;
    tw__strategies *s = tw__strategies_parse(text, len, &e);
    free(text);
    if (!s) {
        snprintf(why, why_size, "--sampling-strategies %s: %s", h->strategies_file,
                 tw_error_message(e));
        tw_error_free(e);
        return false;
    }
    pthread_mutex_lock(&h->lock);
    tw__strategies *old = h->strategies;
    h->strategies = s;
    pthread_mutex_unlock(&h->lock);
    tw__strategies_free(old);
    twa_log(TWA_INFO, "sampling: %zu service strategies from %s", tw__strategies_count(s),
            h->strategies_file);
    return true;
}

static size_t on_proxy_body(char *data, size_t size, size_t n, void *arg)
{
    GString *s = arg;
    size_t len = size * n;
    if (s->len + len > 1024 * 1024)
        return 0; /* larger than any strategy: refused */
    g_string_append_len(s, data, (gssize)len);
    return len;
}

/* Asks the collector; the answer converted to both dialects. False with @why. */
static bool proxy_fetch(twa_http *h, const char *service, char **proto, char **thrift, char *why,
                        size_t why_size)
{
    CURL *c = curl_easy_init();
    if (!c) {
        snprintf(why, why_size, "out of memory");
        return false;
    }
    char *escaped = curl_easy_escape(c, service, 0);
    GString *url = g_string_new(h->proxy_url);
    g_string_append(url, strchr(h->proxy_url, '?') ? "&service=" : "?service=");
    g_string_append(url, escaped ? escaped : "");
    curl_free(escaped);
    GString *body = g_string_new(NULL);
    curl_easy_setopt(c, CURLOPT_URL, url->str);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_proxy_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(c);
    g_string_free(url, TRUE);
    bool ok = false;
    if (rc != CURLE_OK) {
        snprintf(why, why_size, "the collector did not answer: %s", curl_easy_strerror(rc));
    } else if (status != 200) {
        snprintf(why, why_size, "the collector answered HTTP %ld", status);
    } else {
        tw_error *e = NULL;
        if (!tw__strategy_answer_check(body->str, body->len, &e)) {
            snprintf(why, why_size, "the collector's answer is not a strategy: %s",
                     tw_error_message(e));
            tw_error_free(e);
        } else {
            /* Both dialects: strategyType as the collector wrote it, and the
             * other form. */
            json_t *root = json_loadb(body->str, body->len, 0, NULL);
            json_t *t = json_object_get(root, "strategyType");
            int kind = json_is_integer(t) ? (int)json_integer_value(t)
                       : json_is_string(t) && strcmp(json_string_value(t), "RATE_LIMITING") == 0
                           ? 1
                           : 0;
            json_object_set_new(root, "strategyType",
                                json_string(kind ? "RATE_LIMITING" : "PROBABILISTIC"));
            *proto = json_dumps(root, JSON_COMPACT);
            json_object_set_new(root, "strategyType", json_integer(kind));
            *thrift = json_dumps(root, JSON_COMPACT);
            json_decref(root);
            ok = *proto && *thrift;
            if (!ok) {
                free(*proto);
                free(*thrift);
                snprintf(why, why_size, "out of memory");
            }
        }
    }
    g_string_free(body, TRUE);
    return ok;
}

static enum MHD_Result count_service(void *arg, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
    (void)kind;
    (void)value;
    if (key && strcmp(key, "service") == 0)
        (*(unsigned int *)arg)++;
    return MHD_YES;
}

static enum MHD_Result sampling(twa_http *h, struct MHD_Connection *c, const char *url)
{
    twa_add(&h->stats->requests, 1);
    if (strcmp(url, "/sampling") != 0 && strcmp(url, "/") != 0)
        return answer(c, MHD_HTTP_NOT_FOUND, "text/plain", "not found: /sampling?service=NAME\n",
                      NULL);
    const char *service = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "service");
    unsigned int n_service = 0;
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, count_service, &n_service);
    if (n_service > 1) { /* which one was meant is not ours to guess */
        twa_add(&h->stats->bad_requests, 1);
        char why[128];
        snprintf(why, sizeof why,
                 "'service' parameter must be provided once; it was given %u times\n", n_service);
        return answer(c, MHD_HTTP_BAD_REQUEST, "text/plain", why, NULL);
    }
    if (!service || !*service) {
        twa_add(&h->stats->bad_requests, 1);
        return answer(c, MHD_HTTP_BAD_REQUEST, "text/plain",
                      "'service' parameter must be provided once\n", NULL);
    }
    bool numeric = strcmp(url, "/") == 0; /* jaeger-agent's legacy endpoint */
    char *text = NULL;
    size_t len = 0;
    if (h->strategies_file) {
        pthread_mutex_lock(&h->lock);
        text = tw__strategies_answer(h->strategies, service, numeric, &len);
        pthread_mutex_unlock(&h->lock);
    } else {
        char *proto = NULL, *thrift = NULL, why[300];
        bool fresh = proxy_fetch(h, service, &proto, &thrift, why, sizeof why);
        pthread_mutex_lock(&h->lock);
        cached *hit = NULL;
        for (size_t i = 0; i < h->n_cache && !hit; i++) {
            if (strcmp(h->cache[i].service, service) == 0)
                hit = &h->cache[i];
        }
        if (fresh) {
            if (!hit && h->n_cache < PROXY_CACHE_MAX) {
                hit = &h->cache[h->n_cache];
                hit->service = strdup(service);
                if (hit->service)
                    h->n_cache++;
                else
                    hit = NULL;
            }
            if (hit) {
                free(hit->proto);
                free(hit->thrift);
                hit->proto = proto;
                hit->thrift = thrift;
                proto = thrift = NULL;
            }
            text = strdup(numeric ? (hit ? hit->thrift : thrift) : (hit ? hit->proto : proto));
        } else if (hit) {
            twa_log(TWA_DEBUG, "sampling proxy: %s; serving the last answer for %s", why, service);
            text = strdup(numeric ? hit->thrift : hit->proto);
        }
        pthread_mutex_unlock(&h->lock);
        free(proto);
        free(thrift);
        if (!fresh && !text) {
            twa_log(TWA_WARN, "sampling proxy: %s", why);
            twa_add(&h->stats->bad_requests, 1);
            return answer(c, MHD_HTTP_BAD_GATEWAY, "text/plain", why, NULL);
        }
        len = text ? strlen(text) : 0;
    }
    if (!text)
        return answer(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", "out of memory\n", "1");
    struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    enum MHD_Result rc = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return rc;
}

/* ---- metrics and health
 * -------------------------------------------------------------------------- */

static enum MHD_Result metrics(twa_http *h, struct MHD_Connection *c, const char *url)
{
    if (strcmp(url, "/metrics") == 0) {
        size_t len;
        char *text = twa_metrics_text(h->o.dests, h->o.n_dests, &len);
        if (!text)
            return MHD_NO;
        struct MHD_Response *r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
        if (!r) {
            g_free(text);
            return MHD_NO;
        }
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                                "text/plain; version=0.0.4; charset=utf-8");
        enum MHD_Result rc = MHD_queue_response(c, MHD_HTTP_OK, r);
        MHD_destroy_response(r);
        return rc;
    }
    if (strcmp(url, "/healthz") == 0) {
        bool draining = atomic_load(&twa_draining);
        GString *s = g_string_new(NULL);
        g_string_append_printf(s, "{\"status\":\"%s\",\"destinations\":[",
                               draining ? "draining" : "ok");
        for (size_t i = 0; i < h->o.n_dests; i++) {
            json_t *label = json_string(twa_dest_label(h->o.dests[i]));
            char *l = json_dumps(label, JSON_ENCODE_ANY);
            twa_dest_stats *st = twa_dest_get_stats(h->o.dests[i]);
            int up = atomic_load(&st->up);
            const char *up_text = up < 0 ? "null"
                                  : up   ? "true"
                                         : "false"; /* null: no attempt yet */
            g_string_append_printf(s,
                                   "%s{\"destination\":%s,\"up\":%s,\"queue_spans\":%" PRId64
                                   ",\"spooled_bytes\":%" PRId64 "}",
                                   i ? "," : "", l ? l : "\"\"", up_text,
                                   (int64_t)atomic_load(&st->queue_spans),
                                   (int64_t)atomic_load(&st->spool_bytes));
            free(l);
            json_decref(label);
        }
        g_string_append(s, "]}\n");
        enum MHD_Result rc = answer(c, draining ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_OK,
                                    "application/json", s->str, NULL);
        g_string_free(s, TRUE);
        return rc;
    }
    return answer(c, MHD_HTTP_NOT_FOUND, "text/plain", "not found: /metrics or /healthz\n", NULL);
}

/* ---- the request deadline (see the comment at the top)
 * ----------------------------------------------------------- */

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static conn *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* The handler has the whole request: its clock stops. */
static void request_whole(twa_http *h, struct MHD_Connection *c)
{
    conn *k = conn_of(c);
    if (!k)
        return;
    pthread_mutex_lock(&h->conn_lock);
    k->receiving = false;
    pthread_mutex_unlock(&h->conn_lock);
}

/* The watchdog: every DEADLINE_TICK_MS, shuts down the connections whose
 * request is past its deadline (each once), counts them and warns at most
 * once per LIMIT_WARN_EVERY_S. */
static void *watchdog_run(void *arg)
{
    twa_http *h = arg;
    const int64_t limit = h->o.request_timeout_ms;
    pthread_mutex_lock(&h->conn_lock);
    while (!h->stop_watchdog) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += (long)DEADLINE_TICK_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&h->wake, &h->conn_lock, &until);
        if (h->stop_watchdog)
            break;
        const int64_t now = now_ms();
        uint64_t n_cut = 0;
        for (conn *k = h->conns; k; k = k->next) {
            if (!k->receiving || k->is_cut || now - k->since_ms < limit)
                continue;
            /* Linked, so libmicrohttpd has not closed k->fd: it is this
             * connection's socket. */
            (void)shutdown(k->fd, SHUT_RDWR);
            k->is_cut = true;
            n_cut++;
        }
        if (!n_cut)
            continue;
        pthread_mutex_unlock(&h->conn_lock);
        twa_add(&h->stats->request_timeouts, n_cut);
        int64_t now_s = now / 1000 + 1;
        if (h->last_timeout_warn_s == 0 || now_s - h->last_timeout_warn_s >= LIMIT_WARN_EVERY_S) {
            h->last_timeout_warn_s = now_s;
            twa_log(TWA_WARN,
                    "%s: closed %" PRIu64 " connection%s whose request was not received whole "
                    "within %u ms (--request-timeout-ms; %" PRIu64 " so far)",
                    h->name, n_cut, n_cut == 1 ? "" : "s", h->o.request_timeout_ms,
                    twa_get(&h->stats->request_timeouts));
        }
        pthread_mutex_lock(&h->conn_lock);
    }
    pthread_mutex_unlock(&h->conn_lock);
    return NULL;
}

static bool watchdog_start(twa_http *h, char *why, size_t why_size)
{
    int rc = pthread_create(&h->watchdog, NULL, watchdog_run, h);
    if (rc != 0) {
        snprintf(why, why_size, "cannot start a thread: %s", strerror(rc));
        return false;
    }
    h->has_watchdog = true;
    return true;
}

static void watchdog_stop(twa_http *h)
{
    if (!h->has_watchdog)
        return;
    pthread_mutex_lock(&h->conn_lock);
    h->stop_watchdog = true;
    pthread_cond_signal(&h->wake);
    pthread_mutex_unlock(&h->conn_lock);
    pthread_join(h->watchdog, NULL);
    h->has_watchdog = false;
}

/* ---- the handler
 * ---------------------------------------------------------------------------------- */

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    (void)version;
    twa_http *h = cls;
    if (!*con_cls) /* the headers are complete: the longer idle timeout from now on */
        MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, (unsigned int)IDLE_TIMEOUT_S);
    if (h->o.kind != TWA_HTTP_RECEIVER) {
        if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
            return answer(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "use GET\n", NULL);
        if (!*con_cls) { /* the headers; no body expected */
            *con_cls = h;
            return MHD_YES;
        }
        request_whole(h, c);
        return h->o.kind == TWA_HTTP_SAMPLING ? sampling(h, c, url) : metrics(h, c, url);
    }
    request *rq = *con_cls;
    if (!rq) {
        if (!route_served(h, url))
            return answer(c, MHD_HTTP_NOT_FOUND, "text/plain", "not found\n", NULL);
        if (strcmp(method, "POST") != 0)
            return answer(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "use POST\n", NULL);
        rq = calloc(1, sizeof *rq);
        if (!rq)
            return MHD_NO;
        tw__buf_init(&rq->body);
        *con_cls = rq;
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        unsigned long long announced = cl ? strtoull(cl, NULL, 10) : 0;
        if (announced > h->o.max_request_bytes) {
            rq->is_too_large = true;
            /* A client that waits for 100 Continue gets the 413 before it
             * sends the body; so does one announcing more than would be
             * read and dropped (libmicrohttpd then reads none of it and
             * closes after the answer). */
            const char *expect = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Expect");
            if ((expect && g_ascii_strcasecmp(expect, "100-continue") == 0) ||
                announced > DISCARD_MAX)
                return too_large(h, c, rq);
        }
        return MHD_YES;
    }
    if (*upload_size) {
        if (!rq->is_too_large && (rq->body.len + *upload_size > h->o.max_request_bytes ||
                                  !tw__buf_append(&rq->body, upload, *upload_size))) {
            rq->is_too_large = true;
            tw__buf_free(&rq->body);
        }
        if (rq->is_too_large) {
            /* The body is read and dropped, so that the client reads the 413
             * (a client still sending when the server closes sees a reset).
             * Only a body of unannounced length gets past DISCARD_MAX (an
             * announced one was answered with its headers): the answer goes
             * at once and the connection closes. */
            rq->discarded += *upload_size;
            if (rq->discarded > DISCARD_MAX && !rq->answered) {
                *upload_size = 0;
                return too_large_now(h, c, rq);
            }
        }
        *upload_size = 0;
        return MHD_YES;
    }
    request_whole(h, c);
    if (rq->answered)
        return MHD_YES;
    if (rq->is_too_large)
        return too_large(h, c, rq);
    rq->answered = true;
    if (twa_pipeline_fill(h->o.pipeline) >= 1.0) {
        twa_add(&h->stats->requests, 1);
        twa_add(&h->stats->bad_requests, 1);
        return error_answer(h, c, MHD_HTTP_SERVICE_UNAVAILABLE,
                            "the agent's queues are full; retry later", "1");
    }
    return receive(h, c, url, rq);
}

/* Counts the open connections; reaching the limit is logged (at most once
 * per LIMIT_WARN_EVERY_S) and counted: past it a client waits with no
 * answer, which only the log and the metrics can tell. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    twa_http *h = cls;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        conn *k = *socket_context;
        if (k) { /* unlinked before libmicrohttpd closes the socket */
            pthread_mutex_lock(&h->conn_lock);
            if (k->prev)
                k->prev->next = k->next;
            else
                h->conns = k->next;
            if (k->next)
                k->next->prev = k->prev;
            pthread_mutex_unlock(&h->conn_lock);
            free(k);
            *socket_context = NULL;
        }
        twa_gauge_add(&h->stats->connections, -1);
        return;
    }
    const union MHD_ConnectionInfo *ci =
        h->o.request_timeout_ms ? MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD)
                                : NULL;
    conn *k = ci ? calloc(1, sizeof *k) : NULL;
    if (k) {
        k->fd = ci->connect_fd;
        k->since_ms = now_ms();
        k->receiving = true;
        pthread_mutex_lock(&h->conn_lock);
        k->next = h->conns;
        if (h->conns)
            h->conns->prev = k;
        h->conns = k;
        pthread_mutex_unlock(&h->conn_lock);
    } else if (h->o.request_timeout_ms) {
        twa_log(TWA_DEBUG, "%s: out of memory: a connection without a request deadline", h->name);
    }
    *socket_context = k;
    int64_t open = atomic_fetch_add(&h->stats->connections, 1) + 1;
    if (open < (int64_t)h->o.max_connections)
        return;
    twa_add(&h->stats->connection_limit_hits, 1);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t now = (int64_t)ts.tv_sec + 1, last = atomic_load(&h->last_limit_warn_s);
    if ((last == 0 || now - last >= LIMIT_WARN_EVERY_S) &&
        atomic_compare_exchange_strong(&h->last_limit_warn_s, &last, now))
        twa_log(TWA_WARN,
                "%s: %" PRId64 " connections open, the limit (%u, --max-connections): new "
                "connections wait until one closes (a connection idle %d s before its headers "
                "are complete, or %d s after, or whose request is not whole within %u ms "
                "(--request-timeout-ms, 0: no limit), is closed)",
                h->name, open, h->o.max_connections, HEADERS_TIMEOUT_S, IDLE_TIMEOUT_S,
                h->o.request_timeout_ms);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode code)
{
    twa_http *h = cls;
    conn *k = code == MHD_REQUEST_TERMINATED_COMPLETED_OK ? conn_of(c) : NULL;
    if (k) {
        /* The next request's clock starts now, and it waits for its headers:
         * the headers' idle timeout again. (Other codes: the connection is
         * being closed.) */
        pthread_mutex_lock(&h->conn_lock);
        k->since_ms = now_ms();
        k->receiving = true;
        pthread_mutex_unlock(&h->conn_lock);
        MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT,
                                  (unsigned int)HEADERS_TIMEOUT_S);
    }
    if (h->o.kind == TWA_HTTP_RECEIVER && *con_cls) {
        request *rq = *con_cls;
        tw__buf_free(&rq->body);
        free(rq);
    }
    *con_cls = NULL;
}

twa_http *twa_http_start(const twa_http_options *o, const struct sockaddr_storage *addr,
                         socklen_t len, char *why, size_t why_size)
{
    twa_http *h = calloc(1, sizeof *h);
    if (!h) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    h->o = *o;
    h->fd = -1;
    pthread_mutex_init(&h->lock, NULL);
    pthread_mutex_init(&h->conn_lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&h->wake, &ca);
    pthread_condattr_destroy(&ca);
    h->name = strdup(o->name);
    size_t n_routes = 0;
    while (o->routes && o->routes[n_routes])
        n_routes++;
    h->routes = calloc(n_routes + 1, sizeof *h->routes);
    if (!h->name || !h->routes) {
        snprintf(why, why_size, "out of memory");
        goto fail;
    }
    if (n_routes)
        memcpy(h->routes, o->routes, n_routes * sizeof *h->routes);
    static twa_recv_stats unlisted = {.name = "metrics"}; /* /metrics is not a span receiver */
    h->stats = o->kind == TWA_HTTP_METRICS ? &unlisted : twa_stats_receiver(h->name);
    if (o->kind != TWA_HTTP_METRICS)
        atomic_store(&h->stats->is_http, true);
    if (o->kind == TWA_HTTP_SAMPLING) {
        if (o->strategies_file) {
            h->strategies_file = strdup(o->strategies_file);
            if (!h->strategies_file || !load_strategies(h, why, why_size))
                goto fail;
        } else if (o->proxy_url) {
            h->proxy_url = strdup(o->proxy_url);
            h->cache = calloc(PROXY_CACHE_MAX, sizeof *h->cache);
            if (!h->proxy_url || !h->cache) {
                snprintf(why, why_size, "out of memory");
                goto fail;
            }
        } else {
            snprintf(why, why_size,
                     "--sampling needs --sampling-strategies=FILE or --sampling-proxy=URL");
            goto fail;
        }
    }
    h->fd = twa_bind(addr, len, SOCK_STREAM, why, why_size);
    if (h->fd < 0)
        goto fail;
    if (listen(h->fd, 128) != 0) {
        snprintf(why, why_size, "listen: %s", strerror(errno));
        goto fail;
    }
    unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
    if (addr->ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    /* The logger first: libmicrohttpd prints what the options before it
     * say with its own logger (on stderr, past --log-file and --syslog). */
    h->mhd = MHD_start_daemon(flags, 0, NULL, NULL, handle, h, MHD_OPTION_EXTERNAL_LOGGER, log_mhd,
                              NULL, MHD_OPTION_LISTEN_SOCKET, h->fd, MHD_OPTION_NOTIFY_COMPLETED,
                              completed, h, MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)2,
                              MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HEADERS_TIMEOUT_S,
                              MHD_OPTION_CONNECTION_LIMIT, h->o.max_connections,
                              MHD_OPTION_NOTIFY_CONNECTION, on_connection, h, MHD_OPTION_END);
    if (!h->mhd) {
        snprintf(why, why_size, "libmicrohttpd could not start a server");
        goto fail;
    }
    if (h->o.request_timeout_ms && !watchdog_start(h, why, why_size))
        goto fail;
    char at[96];
    twa_http_address(h, at, sizeof at);
    twa_log(TWA_INFO, "listening: %s http %s", h->name, at);
    return h;
fail:
    twa_http_stop(h);
    return NULL;
}

void twa_http_address(const twa_http *h, char *out, size_t size)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (h->fd >= 0 && getsockname(h->fd, (struct sockaddr *)&ss, &len) == 0)
        twa_addr_text((struct sockaddr *)&ss, out, size);
    else
        snprintf(out, size, "?");
}

bool twa_http_reload(twa_http *h, char *why, size_t why_size)
{
    if (h->o.kind != TWA_HTTP_SAMPLING || !h->strategies_file)
        return true;
    return load_strategies(h, why, why_size);
}

void twa_http_stop(twa_http *h)
{
    if (!h)
        return;
    watchdog_stop(h); /* first: it may shut down sockets of the daemon's connections */
    if (h->mhd)
        MHD_stop_daemon(h->mhd); /* closes the listening socket too */
    else if (h->fd >= 0)
        close(h->fd);
    tw__strategies_free(h->strategies);
    for (size_t i = 0; i < h->n_cache; i++) {
        free(h->cache[i].service);
        free(h->cache[i].proto);
        free(h->cache[i].thrift);
    }
    free(h->cache);
    free(h->strategies_file);
    free(h->proxy_url);
    free(h->routes);
    free(h->name);
    pthread_mutex_destroy(&h->lock);
    pthread_mutex_destroy(&h->conn_lock);
    pthread_cond_destroy(&h->wake);
    free(h);
}
